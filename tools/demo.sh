#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make demo: install what is missing, build vhca.ko, the provider and the
# example, boot Debian's stock kernel in QEMU and run tests/guest/demo.sh
# there: vhca loaded, two ports bound to a veth pair, the verbs tools,
# ibv_rc_pingpong, examples/rdma_ep_write and ib_write_bw against rdma_rxe.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$VHCA_TOP"
t0=$(date +%s)
make -s deps
make -s module provider examples >/dev/null
OUT=$VHCA_TOP/build/vm/demo
rm -rf "$OUT"
mkdir -p "$OUT"
rc=0
# The console from the guest script's start to its exit status, without
# KTAP's headers (the firmware's and the kernel's lines, and the headers,
# are in console.log).
tests/runner/vm-run.sh -k stock -t 300 -v -o "$OUT" tests/guest/demo.sh |
	sed -u -n -e 's/\r//g' -e 's/.*\(VHCA-VM: guest script start\)/\1/' \
		-e '/^ *KTAP version /d' -e '/^ *# Subtest: /d' -e '/^ *1\.\.[0-9]*$/d' \
		-e '/^VHCA-VM: guest script start/,/^VHCA-VM: EXIT=/p' || rc=$?
echo "make demo: $(($(date +%s) - t0)) s, exit status $rc (console: build/vm/demo/console.log)"
exit $rc
