#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The host half of the package checks (tests/guest/pkg.sh is the guest's):
#   1. make deb: both packages, lintian clean (scripts/pkg-deb.sh);
#   2. DKMS on the packaged source (vhca-dkms's /usr/src/vhca-<v>, unpacked
#      into build/deb/root): dkms add, build, install against the stock
#      kernel's headers, in trees of its own under build/deb/dkms (never
#      the host's /var/lib/dkms, /usr/src or /lib/modules), then mktarball
#      --binaries-only: build/deb/vhca-<v>-<kver>.dkms.tar.gz, the module
#      the guest installs with dkms ldtarball (it has no headers, and
#      compiling under TCG is slow); then dkms build and mktarball for
#      Debian 12's default kernel, 6.1 (its guest's package path), and
#      dkms build for a kernel outside the supported range
#      (the stock headers under another release), which DKMS must skip
#      with its BUILD_EXCLUSIVE notice and exit status 77, never fail;
#   3. systemd-analyze verify of vhca-links@eth0.service as the package
#      installs it, and man --warnings over both manual pages.
#
# usage: pkg-host.sh
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"

cd "$VHCA_TOP"
scripts/pkg-deb.sh
V=$(dpkg-parsechangelog -S Version)
OUT=$VHCA_TOP/build/deb
S=$(scripts/stock-kernel.sh)
KVER=$(cat "$S/kernel.release")

ROOT=$OUT/root
rm -rf "$ROOT" "$OUT/dkms"
dpkg-deb -x "$OUT/vhca-dkms_${V}_all.deb" "$ROOT"
mkdir -p "$OUT/dkms/tree" "$OUT/dkms/lib/modules/$KVER"
# No signing: the host has neither the stock kernel's sign-file nor a key
# to give it, and dkms would create one in /var/lib/dkms.
export sign_file=/nonexistent
dk() {
	dkms --dkmstree "$OUT/dkms/tree" --sourcetree "$ROOT/usr/src" \
		--installtree "$OUT/dkms/lib/modules" "$@"
}
log "dkms add, build, install vhca/$V for $KVER"
dk add -m vhca -v "$V" >"$OUT/dkms.log" 2>&1 &&
	dk build -m vhca -v "$V" -k "$KVER" --kernelsourcedir "$S/headers" >>"$OUT/dkms.log" 2>&1 &&
	dk install -m vhca -v "$V" -k "$KVER" --kernelsourcedir "$S/headers" --no-depmod >>"$OUT/dkms.log" 2>&1 || {
	cat "$OUT/dkms.log" "$OUT"/dkms/tree/vhca/"$V"/build/make.log 2>/dev/null | tail -30 >&2
	die "dkms failed (log: $OUT/dkms.log)"
}
ko=$(ls "$OUT/dkms/lib/modules/$KVER/updates/dkms/"vhca.ko*)
[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$KVER" ] ||
	die "dkms installed $ko, not built for $KVER"
dk status -m vhca | tee -a "$OUT/dkms.log" | grep -q "installed" ||
	die "dkms status does not say installed"
rm -f "$OUT"/dkms/tree/vhca/"$V"/tarball/*
dk mktarball -m vhca -v "$V" -k "$KVER" --binaries-only --kernelsourcedir "$S/headers" >>"$OUT/dkms.log" 2>&1 ||
	die "dkms mktarball failed (log: $OUT/dkms.log)"
mv "$OUT"/dkms/tree/vhca/"$V"/tarball/*.tar.gz "$OUT/vhca-$V-$KVER.dkms.tar.gz"
log "dkms: $(basename "$ko") for $KVER, $(basename "$OUT/vhca-$V-$KVER.dkms.tar.gz")"

S61=$(scripts/stock-kernel.sh 6.1)
K61=$(cat "$S61/kernel.release")
dk build -m vhca -v "$V" -k "$K61" --kernelsourcedir "$S61/headers" >>"$OUT/dkms.log" 2>&1 || {
	cat "$OUT"/dkms/tree/vhca/"$V"/build/make.log 2>/dev/null | tail -30 >&2
	die "dkms build for $K61 failed (log: $OUT/dkms.log)"
}
rm -f "$OUT"/dkms/tree/vhca/"$V"/tarball/*
dk mktarball -m vhca -v "$V" -k "$K61" --binaries-only --kernelsourcedir "$S61/headers" >>"$OUT/dkms.log" 2>&1 ||
	die "dkms mktarball for $K61 failed (log: $OUT/dkms.log)"
mv "$OUT"/dkms/tree/vhca/"$V"/tarball/*.tar.gz "$OUT/vhca-$V-$K61.dkms.tar.gz"
log "dkms: built for $K61, $(basename "$OUT/vhca-$V-$K61.dkms.tar.gz")"
# A release outside BUILD_EXCLUSIVE_KERNEL: skipped, with the reason.
OUTSIDE=7.99.0-vhca-outside-amd64
set +e
dk build -m vhca -v "$V" -k "$OUTSIDE" --kernelsourcedir "$S/headers" >"$OUT/dkms-outside.log" 2>&1
orc=$?
set -e
cat "$OUT/dkms-outside.log"
[ $orc = 77 ] && grep -q BUILD_EXCLUSIVE "$OUT/dkms-outside.log" ||
	die "dkms build for $OUTSIDE: exit $orc, not the BUILD_EXCLUSIVE skip (77)"
log "dkms: $OUTSIDE skipped (exit 77)"

# systemd-analyze verify checks the unit's commands and man page too: in a
# root holding the package's files and the host's own units.
VR=$OUT/verify
rm -rf "$VR"
mkdir -p "$VR"
cp -a "$ROOT/." "$VR/"
cp -a /lib/systemd/system/. "$VR/lib/systemd/system/"
ln -s vhca-links@.service "$VR/lib/systemd/system/vhca-links@eth0.service"
MANPATH=$VR/usr/share/man systemd-analyze verify --root="$VR" vhca-links@eth0.service ||
	die "systemd-analyze verify vhca-links@eth0.service failed"
log "systemd-analyze verify vhca-links@eth0.service: clean"
for m in Documentation/man/*.7; do
	w=$(MANWIDTH=80 man --warnings -l "$m" 2>&1 >/dev/null)
	[ -z "$w" ] || die "man --warnings $m: $w"
done
log "man --warnings: clean ($(ls Documentation/man/*.7 | wc -l) pages)"
