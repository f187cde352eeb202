#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Build the provider inside a distro root (distro-root.sh) with its gcc
# against its own libibverbs-dev, for the private ABI of its rdma-core, into
# build/provider-SUITE/ (libvhca-rdmavN.so, vhca.driver): the provider a
# guest booted with that root as its root filesystem loads.
#
# usage: root-provider.sh trixie|sid
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SUITE=${1:-}
case "$SUITE" in
trixie | sid) ;;
*) die "usage: root-provider.sh trixie|sid" ;;
esac
ROOT=$("$VHCA_TOP/scripts/distro-root.sh" "$SUITE") || [ $? = 77 ] ||
	die "no $SUITE root"
OUT=$VHCA_TOP/build/provider-$SUITE
W=$(mktemp -d "$ROOT/tmp/vhca-provider-XXXXXX")
W=${W#"$ROOT"}
mkdir -p "$ROOT$W/providers"
cp -a "$VHCA_TOP/providers/vhca" "$ROOT$W/providers/"
cp -a "$VHCA_TOP/include" "$ROOT$W/"
rc=0
in_root "$ROOT" make -s -C "$W/providers/vhca" O="$W/build" || rc=$?
rm -rf "$OUT"
mkdir -p "$OUT"
cp -a "$ROOT$W/build/." "$OUT/" 2>/dev/null || true
as_root rm -rf "$ROOT$W"
[ $rc = 0 ] || exit $rc
log "provider for the $SUITE root: $(cd "$OUT" && ls libvhca-rdmav*.so)"
