#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Fetch one of Debian's stock kernels (the insmod targets) and its build
# files, unpack them into the cache, never install them:
#   6.12 (the default, Debian 12's newer kernel): linux-image-<v>-amd64-unsigned,
#     linux-headers-<v>-amd64, linux-headers-<v>-common, linux-kbuild-<v>
#     (<v> = 6.12.N+deb12)
#   6.1 (Debian 12's default kernel): linux-image-<v>-amd64-unsigned,
#     linux-headers-<v>-amd64, linux-headers-<v>-common, linux-kbuild-6.1
#     (<v> = 6.1.0-N, the ABI)
#   7.2 (Debian sid's): linux-binary-<v>-amd64, linux-modules-<v>-amd64,
#     linux-base-<v>-amd64 (the image's parts, in /usr/lib/modules),
#     fetched through the sid root (distro-root.sh), whose installed
#     linux-headers-<v>-amd64 it is built against, inside that root
#     (<v> = 7.2.N+deb14)
# The version is scripts/pins' for the series, unless VHCA_STOCK_VERSION
# names another (e.g. 6.12.117+deb12, 6.1.0-57).  A pinned version the
# registry no longer has is reported, with exit status 77.
# Result:
#   $VHCA_CACHE/stock-<v>/root/       the unpacked packages (depmod'ed)
#   $VHCA_CACHE/stock-<v>/headers     -> the headers tree to build against
#   $VHCA_CACHE/stock-<v>/kernel.release
#   $VHCA_CACHE/stock-<v>/chroot      (7.2) the root to build inside, where
#                                     headers is /usr/src/linux-headers-<r>
# Prints that folder.
#
# usage: stock-kernel.sh [6.12|6.1|7.2]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SERIES=${1:-6.12}
case "$SERIES" in
6.12 | 6.1 | 7.2) ;;
*) die "usage: stock-kernel.sh [6.12|6.1|7.2]" ;;
esac
V=${VHCA_STOCK_VERSION:-$(pin kernel "$SERIES")}
OUT=$VHCA_CACHE/stock-$V
if [ -e "$OUT/.done" ]; then
	echo "$OUT"
	exit 0
fi
ROOT=
APT=()
if [ "$SERIES" = 7.2 ]; then
	ROOT=$("$VHCA_TOP/scripts/distro-root.sh" sid) || [ $? = 77 ] ||
		die "no sid root for the 7.2 kernel"
	APT=(chroot "$ROOT")
fi

have_pkg() {
	"${APT[@]}" apt-cache show "$1" >/dev/null 2>&1
}

# The packages of version $1: image, headers, common headers, kbuild (named
# per version on 6.12, per series on 6.1); on 7.2 the image's parts (the
# sid root has the rest installed).
pkgs() {
	local kb=$1
	[ "$SERIES" = 6.1 ] && kb=6.1
	if [ "$SERIES" = 7.2 ]; then
		echo "linux-binary-$1-amd64 linux-modules-$1-amd64 linux-base-$1-amd64"
	else
		echo "linux-image-$1-amd64-unsigned linux-headers-$1-amd64 linux-headers-$1-common linux-kbuild-$kb"
	fi
}

complete_set() {
	local p
	for p in $(pkgs "$1"); do
		have_pkg "$p" || return 1
	done
}

if ! complete_set "$V"; then
	log "the registry has no complete package set for linux $V ($(pkgs "$V")): the pin in scripts/pins is gone; 'make matrix-update' moves it"
	exit 77
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
mkdir -p "$OUT/root"
DL=$OUT/debs
[ -n "$ROOT" ] && DL=$ROOT/tmp/vhca-stock-$V
rm -rf "$DL"
mkdir -p "$DL"
chmod 777 "$DL"
# shellcheck disable=SC2046
(cd "$DL" && "${APT[@]}" sh -c "cd ${DL#"$ROOT"} && apt-get download -q $(pkgs "$V")" >/dev/null 2>&1) &
progress "downloading linux $V" $! "echo \$(du -sm '$DL' | cut -f1) MB" ||
	die "apt-get download of the $V kernel packages failed"
for deb in "$DL"/*.deb; do
	dpkg-deb -x "$deb" "$OUT/root"
done
rm -rf "$DL"

KVER=$V-amd64
if [ -n "$ROOT" ]; then
	# A merged /usr, the image beside its modules: the paths of the others.
	ln -s usr/lib "$OUT/root/lib"
	mkdir -p "$OUT/root/boot"
	ln -s "../usr/lib/modules/$KVER/vmlinuz" "$OUT/root/boot/vmlinuz-$KVER"
fi
[ -e "$OUT/root/boot/vmlinuz-$KVER" ] || die "unpacked image has no /boot/vmlinuz-$KVER"
if [ -n "$ROOT" ]; then
	# Built inside the root (kbuild.sh), against its installed headers.
	HDR=$ROOT/usr/src/linux-headers-$KVER
	[ -d "$HDR" ] || die "the sid root has no $HDR (distro-root.sh installs the pinned kernel's)"
	echo "$ROOT" >"$OUT/chroot"
else
	HDR=$OUT/root/usr/src/linux-headers-$KVER
	[ -d "$HDR" ] || die "unpacked headers have no $HDR"
	# The -amd64 headers include the -common ones by absolute path, and
	# point at kbuild's scripts/tools by absolute links: aim all of them
	# into the cache.
	sed -i "s|/usr/src/linux-headers-$V-common|$OUT/root/usr/src/linux-headers-$V-common|g" "$HDR/Makefile"
	for l in $(find "$OUT/root/usr/src" -maxdepth 2 -type l); do
		t=$(readlink "$l")
		case "$t" in
		/*) ln -sfn "$OUT/root$t" "$l" ;;
		esac
	done
fi

depmod -b "$OUT/root" "$KVER"
ln -sfn "$HDR" "$OUT/headers"
echo "$KVER" >"$OUT/kernel.release"
touch "$OUT/.done"
log "stock kernel $KVER ready in $OUT"
echo "$OUT"
