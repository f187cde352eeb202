#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make deb: the Debian packages vhca-dkms (arch all) and
# ibverbs-provider-vhca, built by dpkg-buildpackage from a copy of the
# files they are made of (build/deb/vhca-<version>/, so that its
# outputs land in build/deb/ and nothing of the checkout is written), then
# checked by lintian, whose complaints fail the build.
#
# usage: pkg-deb.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"

for t in dpkg-buildpackage dh dh_dkms lintian fakeroot; do
	command -v $t >/dev/null || die "$t missing: run 'make deps'"
done
cd "$VHCA_TOP"
V=$(dpkg-parsechangelog -S Version)
dv=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)
[ "$dv" = "$V" ] || die "dkms.conf's PACKAGE_VERSION $dv is not debian/changelog's version $V"
grep -qx "Kbuild usr/src/vhca-$V/" debian/vhca-dkms.install ||
	die "debian/vhca-dkms.install does not install into usr/src/vhca-$V/"

OUT=$VHCA_TOP/build/deb
SRC=$OUT/vhca-$V
rm -rf "$OUT"
mkdir -p "$SRC/providers" "$SRC/Documentation"
cp -a debian dkms.conf Kbuild drivers include packaging "$SRC/"
cp -a providers/vhca "$SRC/providers/"
cp -a Documentation/man "$SRC/Documentation/"

log "dpkg-buildpackage in $SRC"
(cd "$SRC" && dpkg-buildpackage -b -us -uc) >"$OUT/build.log" 2>&1 || {
	tail -30 "$OUT/build.log" >&2
	die "dpkg-buildpackage failed (log: $OUT/build.log)"
}
changes=$(ls "$OUT"/vhca_"$V"_*.changes)
ls "$OUT"/*.deb
# lintian's exit status: 0 without errors; warnings fail here too.
log "lintian $changes"
if ! lintian --fail-on error,warning --info "$changes" >"$OUT/lintian.txt" 2>&1; then
	cat "$OUT/lintian.txt" >&2
	die "lintian complained (above)"
fi
cat "$OUT/lintian.txt"
log "lintian: clean ($(wc -l <"$OUT/lintian.txt") lines of output)"
