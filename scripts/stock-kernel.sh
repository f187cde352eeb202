#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Fetch one of Debian 12's stock kernels (the insmod targets) and its build
# files, unpack them into the cache, never install them:
#   6.12 (the default): linux-image-<v>-amd64-unsigned,
#     linux-headers-<v>-amd64, linux-headers-<v>-common, linux-kbuild-<v>
#     (<v> = 6.12.N+deb12)
#   6.1 (Debian 12's default kernel): linux-image-<v>-amd64-unsigned,
#     linux-headers-<v>-amd64, linux-headers-<v>-common, linux-kbuild-6.1
#     (<v> = 6.1.0-N, the ABI)
# The newest <v> of the series for which all four packages exist is taken,
# unless VHCA_STOCK_VERSION names one (e.g. 6.12.117+deb12, 6.1.0-57).
# Result:
#   $VHCA_CACHE/stock-<v>/root/       the unpacked packages (depmod'ed)
#   $VHCA_CACHE/stock-<v>/headers     -> the headers tree to build against
#   $VHCA_CACHE/stock-<v>/kernel.release
# Prints that folder.
#
# usage: stock-kernel.sh [6.12|6.1]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SERIES=${1:-6.12}
case "$SERIES" in
6.12) PAT='6\.12\.[0-9]+\+deb12' ;;
6.1) PAT='6\.1\.0-[0-9]+' ;;
*) die "usage: stock-kernel.sh [6.12|6.1]" ;;
esac

have_pkg() {
	apt-cache show "$1" >/dev/null 2>&1
}

# The packages of version $1: image, headers, common headers, kbuild (named
# per version on 6.12, per series on 6.1).
pkgs() {
	local kb=$1
	[ "$SERIES" = 6.1 ] && kb=6.1
	echo "linux-image-$1-amd64-unsigned linux-headers-$1-amd64 linux-headers-$1-common linux-kbuild-$kb"
}

complete_set() {
	local p
	for p in $(pkgs "$1"); do
		have_pkg "$p" || return 1
	done
}

if [ -n "${VHCA_STOCK_VERSION:-}" ]; then
	V=$VHCA_STOCK_VERSION
	if [ ! -e "$VHCA_CACHE/stock-$V/.done" ] && ! complete_set "$V"; then
		die "VHCA_STOCK_VERSION=$V: the archive has no complete package set for it ($(pkgs "$V")); 'apt-get update' may help"
	fi
else
	V=
	for cand in $(apt-cache search --names-only "^linux-image-$PAT-amd64-unsigned\$" |
		sed -En "s/^linux-image-($PAT)-amd64-unsigned .*/\1/p" | sort -rV); do
		if complete_set "$cand"; then
			V=$cand
			break
		fi
	done
	[ -n "$V" ] || die "no complete linux $SERIES package set (image, headers, common headers, kbuild) in the apt archive; run 'apt-get update' or set VHCA_STOCK_VERSION"
fi

OUT=$VHCA_CACHE/stock-$V
if [ -e "$OUT/.done" ]; then
	echo "$OUT"
	exit 0
fi

mkdir -p "$VHCA_CACHE"
exec 9>"$VHCA_CACHE/.stock-kernel.lock"
flock 9
if [ -e "$OUT/.done" ]; then
	echo "$OUT"
	exit 0
fi

log "fetching stock kernel $V"
rm -rf "$OUT"
mkdir -p "$OUT/debs" "$OUT/root"
# shellcheck disable=SC2046
(cd "$OUT/debs" && apt-get download -q $(pkgs "$V") >/dev/null 2>&1) ||
	die "apt-get download of the $V kernel packages failed"
for deb in "$OUT"/debs/*.deb; do
	dpkg-deb -x "$deb" "$OUT/root"
done
rm -rf "$OUT/debs"

KVER=$V-amd64
HDR=$OUT/root/usr/src/linux-headers-$KVER
[ -e "$OUT/root/boot/vmlinuz-$KVER" ] || die "unpacked image has no /boot/vmlinuz-$KVER"
[ -d "$HDR" ] || die "unpacked headers have no $HDR"

# The -amd64 headers include the -common ones by absolute path, and point at
# kbuild's scripts/tools by absolute links: aim all of them into the cache.
sed -i "s|/usr/src/linux-headers-$V-common|$OUT/root/usr/src/linux-headers-$V-common|g" "$HDR/Makefile"
for l in $(find "$OUT/root/usr/src" -maxdepth 2 -type l); do
	t=$(readlink "$l")
	case "$t" in
	/*) ln -sfn "$OUT/root$t" "$l" ;;
	esac
done

depmod -b "$OUT/root" "$KVER"
ln -sfn "$HDR" "$OUT/headers"
echo "$KVER" >"$OUT/kernel.release"
touch "$OUT/.done"
log "stock kernel $KVER ready in $OUT"
echo "$OUT"
