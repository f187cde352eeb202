#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make demo: install what is missing, build vhca.ko, boot Debian's stock
# kernel in QEMU, load vhca, bind two ports to a veth pair and show them.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$VHCA_TOP"
make -s deps
make -s module >/dev/null
exec scripts/vm-run.sh -k stock -t 600 -v scripts/guest/demo.sh
