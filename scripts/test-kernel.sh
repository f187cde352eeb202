#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Build (once per machine) the debug test kernel: Debian's linux-source-6.12
# on top of tinyconfig plus kunit/debug-kernel.config (KUnit, KASAN, lockdep,
# kmemleak, UBSAN, DMA API debugging, RDMA core, rxe as a module, 9p/overlay
# for the VM runner).  The result is cached outside the repository, keyed by
# the source package version and the hash of the fragment, in
#   $VHCA_CACHE/debug-<version>-<hash>/
# holding linux/ (the built tree, for out-of-tree modules and kunit.py),
# modroot/lib/modules/<kver>/ and a .done stamp.  Prints that folder.
#
# usage: test-kernel.sh [--print-dir]   (--print-dir: only print, never build)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# Bump when the build recipe below changes in a way the fragment does not show.
RECIPE=1
FRAG=$VHCA_TOP/kunit/debug-kernel.config
SRC_TAR=/usr/src/linux-source-6.12.tar.xz

[ -r "$SRC_TAR" ] || die "$SRC_TAR missing: run 'make deps' (package linux-source-6.12)"
SRCVER=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null) ||
	die "linux-source-6.12 is not installed: run 'make deps'"
HASH=$( (echo "recipe $RECIPE"; cat "$FRAG") | sha256sum | cut -c1-12)
OUT=$VHCA_CACHE/debug-$SRCVER-$HASH

if [ "${1:-}" = --print-dir ]; then
	echo "$OUT"
	exit 0
fi
if [ -e "$OUT/.done" ]; then
	echo "$OUT"
	exit 0
fi

mkdir -p "$VHCA_CACHE"
exec 9>"$VHCA_CACHE/.debug-kernel.lock"
flock 9
if [ -e "$OUT/.done" ]; then
	echo "$OUT"
	exit 0
fi

start=$(date +%s)
log "building the debug test kernel (linux-source $SRCVER, config $HASH) in $OUT"
rm -rf "$OUT"
mkdir -p "$OUT"
tar -C "$OUT" -xf "$SRC_TAR"
mv "$OUT/linux-source-6.12" "$OUT/linux"
K=$OUT/linux
MK=(make -C "$K" ARCH=x86_64 -j"$(nproc)")

"${MK[@]}" -s tinyconfig
"$K/scripts/kconfig/merge_config.sh" -m -O "$K" "$K/.config" "$FRAG" >/dev/null
"${MK[@]}" -s olddefconfig

# Every option the fragment asks for must have survived olddefconfig.
dropped=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*)
		sym=${line%%=*}
		want=${line#*=}
		;;
	"# CONFIG_"*" is not set")
		sym=${line#\# }
		sym=${sym%% *}
		want=n
		;;
	*) continue ;;
	esac
	got=$(grep -E "^$sym=" "$K/.config" | cut -d= -f2- || true)
	[ -n "$got" ] || got=n
	if [ "$got" != "$want" ]; then
		echo "vhca: test kernel: $sym requested $want, Kconfig gave $got" >&2
		dropped=1
	fi
done <"$FRAG"
[ $dropped = 0 ] || die "test kernel config: options above were refused (see $FRAG)"

"${MK[@]}" bzImage modules &
progress "building the debug test kernel" $! \
	"echo \$(find '$K' -name '*.o' | wc -l) objects built" ||
	die "the debug test kernel's build failed"
"${MK[@]}" -s INSTALL_MOD_PATH="$OUT/modroot" INSTALL_MOD_STRIP=1 modules_install
# The guest needs only modules; drop the build/source links into the tree.
KVER=$(cat "$K/include/config/kernel.release")
rm -f "$OUT/modroot/lib/modules/$KVER/build" "$OUT/modroot/lib/modules/$KVER/source"
echo "$KVER" >"$OUT/kernel.release"
touch "$OUT/.done"
log "debug test kernel $KVER built in $(($(date +%s) - start)) s"
echo "$OUT"
