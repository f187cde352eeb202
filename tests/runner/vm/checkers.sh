# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What the kernel's checkers (and WARN, BUG, panics) print: any of it in a
# test VM's kernel log fails the run (vm-run.sh) and the scenario that was
# running (tests/lib/guest.sh).  Sourced, by bash and by sh.
# shellcheck disable=SC2034
CHECKERS='BUG:|WARNING:|KASAN|UBSAN|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|DMA-API: [^ :]+ [^ :]+: |Kernel panic|Oops|unreferenced object|kmemleak: [0-9]+ new suspected'
