#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make deb: the Debian packages vhca-dkms (arch all) and
# ibverbs-provider-vhca, built by dpkg-buildpackage from a copy of the
# files they are made of (OUT/vhca-<version>/, so that its outputs land in
# OUT and nothing of the checkout is written), then checked by lintian,
# whose complaints fail the build.  Without SUITE they are this host's
# release's (Debian 12: rdma-core 44), in build/deb/; with trixie or sid
# that release's, built and checked inside its root (distro-root.sh) by
# its own debhelper, dh-dkms, libibverbs-dev and lintian, in
# build/deb-SUITE/.  The provider package depends on the libibverbs1 it
# was built with (debian/rules).
#
# usage: pkg-deb.sh [trixie|sid]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SUITE=${1:-}
case "$SUITE" in
"" | trixie | sid) ;;
*) die "usage: pkg-deb.sh [trixie|sid]" ;;
esac
cd "$VHCA_TOP"
V=$(sed -n '1s/^vhca (\([^)]*\)).*/\1/p' debian/changelog)
dv=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)
[ "$dv" = "$V" ] || die "dkms.conf's PACKAGE_VERSION $dv is not debian/changelog's version $V"
grep -qx "Kbuild usr/src/vhca-$V/" debian/vhca-dkms.install ||
	die "debian/vhca-dkms.install does not install into usr/src/vhca-$V/"

# run COMMAND...: on this host, or inside the suite's root.
if [ -z "$SUITE" ]; then
	for t in dpkg-buildpackage dh dh_dkms lintian fakeroot; do
		command -v $t >/dev/null || die "$t missing: run 'make deps'"
	done
	OUT=$VHCA_TOP/build/deb
	W=$OUT
	run() { "$@"; }
else
	ROOT=$("$VHCA_TOP/scripts/distro-root.sh" "$SUITE") || [ $? = 77 ] ||
		die "no $SUITE root (scripts/distro-root.sh $SUITE)"
	OUT=$VHCA_TOP/build/deb-$SUITE
	# The build's folder inside the root, removed at the end.
	TMPW=$(mktemp -d "$ROOT/tmp/vhca-deb-XXXXXX")
	trap 'rm -rf "$TMPW"' EXIT
	W=${TMPW#"$ROOT"}
	run() { in_root "$ROOT" "$@"; }
fi
SRC=$W/vhca-$V
rm -rf "$OUT"
mkdir -p "$OUT" "${ROOT:-}$SRC/providers" "${ROOT:-}$SRC/Documentation"
cp -a debian dkms.conf Kbuild drivers include packaging "${ROOT:-}$SRC/"
cp -a providers/vhca "${ROOT:-}$SRC/providers/"
cp -a Documentation/man "${ROOT:-}$SRC/Documentation/"

log "dpkg-buildpackage in ${ROOT:-}$SRC"
run sh -c 'cd "$1" && exec dpkg-buildpackage -b -us -uc' sh "$SRC" >"$OUT/build.log" 2>&1 || {
	tail -30 "$OUT/build.log" >&2
	die "dpkg-buildpackage failed (log: $OUT/build.log)"
}
changes=$(cd "${ROOT:-}$W" && ls vhca_"$V"_*.changes)
# lintian's exit status: 0 without errors; warnings fail here too.
log "lintian $changes"
lrc=0
run lintian --fail-on error,warning --info "$W/$changes" >"$OUT/lintian.txt" 2>&1 || lrc=$?
if [ -n "$SUITE" ]; then
	(cd "$ROOT$W" && cp -a ./*.deb ./*.changes ./*.buildinfo "$OUT/")
fi
ls "$OUT"/*.deb
if [ $lrc != 0 ]; then
	cat "$OUT/lintian.txt" >&2
	die "lintian complained (above)"
fi
cat "$OUT/lintian.txt"
log "lintian: clean ($(wc -l <"$OUT/lintian.txt") lines of output)"
for d in "$OUT"/*.deb; do
	log "$(basename "$d"): $(dpkg-deb -f "$d" Depends)"
done
