#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Build the module's sources (Kbuild, drivers/, include/), copied into OUT,
# with kbuild against a stock kernel's headers: on this host where its
# toolchain builds that kernel's modules, else inside the kernel's own
# userland root (stock-kernel.sh's chroot file: 7.2, whose kbuild and gcc
# are sid's), copying the results back into OUT.
#
# usage: kbuild.sh SERIES OUT [MAKE-ARGUMENT...]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 2 ] || die "usage: kbuild.sh SERIES OUT [MAKE-ARGUMENT...]"
SERIES=$1 OUT=$2
shift 2
S=$("$VHCA_TOP/scripts/stock-kernel.sh" "$SERIES")
SRC=(Kbuild drivers include)
log "building against stock kernel $(cat "$S/kernel.release")"
cd "$VHCA_TOP"
if [ ! -e "$S/chroot" ]; then
	mkdir -p "$OUT"
	cp -a "${SRC[@]}" "$OUT/"
	exec make -C "$S/headers" M="$OUT" "$@"
fi
ROOT=$(cat "$S/chroot")
W=$(mktemp -d "$ROOT/tmp/vhca-kbuild-XXXXXX")
W=${W#"$ROOT"}
cp -a "${SRC[@]}" "$ROOT$W/"
rc=0
in_root "$ROOT" make -C "/usr/src/linux-headers-$(cat "$S/kernel.release")" \
	M="$W" "$@" || rc=$?
rm -rf "$OUT"
mkdir -p "$OUT"
cp -a "$ROOT$W/." "$OUT/"
as_root rm -rf "$ROOT$W"
exit $rc
