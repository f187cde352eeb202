#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# usage: rdma-core-headers.sh SOURCE RELEASE OUT
#
# What building the provider for rdma-core RELEASE (a major version) needs
# on a host that has another libibverbs-dev, extracted and generated into
# OUT, from SOURCE: an rdma-core clone (tag vRELEASE.0, e.g. v57.0) or an
# unpacked source tree of that release (a release tarball, as Debian's
# source package has it: tests/debian-rdma-core.sh), whose CMakeLists.txt
# must say PACKAGE_VERSION RELEASE.x:
#
#   OUT/pub/     the headers that release's libibverbs-dev installs
#                (infiniband/verbs.h and the other published ones,
#                infiniband/ib_user_ioctl_verbs.h) and its kernel-headers/rdma
#   OUT/full/    for an in-tree style build against the real
#                <infiniband/driver.h>: all of libibverbs/*.h as
#                infiniband/*.h, ccan/, util/, kernel-abi/ib_user_verbs.h (made
#                by the release's own buildlib/make_abi_structs.py from its
#                kernel-headers, as its build does) and config.h
#   OUT/stub/    libibverbs.so: a link-time stand-in exporting every symbol of
#                the release's IBVERBS_PRIVATE_<PABI> version, so that the
#                provider's imports carry that version (its functions are
#                empty: it is never loaded)
#   OUT/pabi     the release's IBVERBS_PABI_VERSION
#
# config.h is the release's buildlib/config.h.in as its CMake would fill it
# for a default build, reduced to what needs no configure step: PABI from
# its CMakeLists.txt, IOCTL_MODE both (3), SIZEOF_LONG 8 (x86_64), every
# #cmakedefine off, every path empty.  driver.h's layouts use none of the
# values but IBVERBS_PABI_VERSION.  OUT/.done marks a complete extraction
# and names its source: another SOURCE extracts again.
set -euo pipefail
source=$1 release=$2 out=$3
tag=v$release.0
# What a build needs of the source.
PATHS=(CMakeLists.txt libibverbs ccan util kernel-headers buildlib/config.h.in
       buildlib/make_abi_structs.py)

if git -C "$source" rev-parse -q --verify "refs/tags/$tag" >/dev/null 2>&1
then
	from="git $source $tag"
elif [ -f "$source/CMakeLists.txt" ]; then
	from="tree $(cd "$source" && pwd)"
else
	echo "rdma-core-headers.sh: $source is neither a clone with tag $tag" \
		"nor an rdma-core source tree" >&2
	exit 1
fi
if [ "$(cat "$out/.done" 2>/dev/null)" = "$from" ]; then
	exit 0
fi
rm -rf "$out"
mkdir -p "$out/src" "$out/pub/infiniband" "$out/pub/rdma" \
	"$out/full/infiniband" "$out/full/kernel-abi" "$out/stub"
src=$out/src
if [ "${from%% *}" = tree ]; then
	tar -C "$source" -c "${PATHS[@]}" | tar -x -C "$src"
	version=$(sed -n 's/^set(PACKAGE_VERSION "\([0-9]*\)\..*")$/\1/p' \
		"$src/CMakeLists.txt")
	if [ "$version" != "$release" ]; then
		echo "rdma-core-headers.sh: $source is rdma-core" \
			"${version:-of no version}, not $release" >&2
		exit 1
	fi
else
	git -C "$source" archive "$tag" "${PATHS[@]}" | tar -x -C "$src"
fi

pabi=$(sed -n 's/^set(IBVERBS_PABI_VERSION "\([0-9]*\)")$/\1/p' \
	"$src/CMakeLists.txt")
if [ -z "$pabi" ]; then
	echo "rdma-core-headers.sh: ${from#* }: no IBVERBS_PABI_VERSION" >&2
	exit 1
fi

# The published headers: the list in libibverbs/CMakeLists.txt.
pub=$(sed -n '/^publish_headers(infiniband/,/)/p' \
	"$src/libibverbs/CMakeLists.txt" | grep -o '[a-z_-]*\.h')
for h in $pub; do
	cp "$src/libibverbs/$h" "$out/pub/infiniband/"
done
cp "$src/kernel-headers/rdma/ib_user_ioctl_verbs.h" "$out/pub/infiniband/"
cp "$src"/kernel-headers/rdma/*.h "$out/pub/rdma/"

cp "$src"/libibverbs/*.h "$out/full/infiniband/"
cp -r "$src/ccan" "$src/util" "$out/full/"
python3 "$src/buildlib/make_abi_structs.py" \
	"$src/kernel-headers/rdma/ib_user_verbs.h" \
	"$out/full/kernel-abi/ib_user_verbs.h"
sed -e "s/@IBVERBS_PABI_VERSION@/$pabi/" \
	-e 's/@IOCTL_MODE_NUM@/3/' \
	-e 's/@SIZEOF_LONG_CODE@/#define SIZEOF_LONG 8/' \
	-e 's|^#cmakedefine \([A-Za-z0-9_]*\).*|/* #undef \1 */|' \
	-e 's/@[A-Za-z0-9_]*@//g' \
	"$src/buildlib/config.h.in" >"$out/full/config.h"

# The stub: the names of the private stanza of libibverbs.map.in.
sed -n '/^IBVERBS_PRIVATE_/,/^};/p' "$src/libibverbs/libibverbs.map.in" |
	sed -e 's|/\*.*\*/||' -e "s/@IBVERBS_PABI_VERSION@/$pabi/g" |
	sed -n 's/^[[:space:]]*\([A-Za-z_][A-Za-z0-9_]*\);$/\1/p' \
	>"$out/stub/symbols"
if ! grep -qx "verbs_register_driver_$pabi" "$out/stub/symbols"; then
	echo "rdma-core-headers.sh: ${from#* }: no verbs_register_driver_$pabi" >&2
	exit 1
fi
sed 's/.*/void &(void) {}/' "$out/stub/symbols" >"$out/stub/stub.c"
{
	echo "IBVERBS_PRIVATE_$pabi {"
	echo "	global:"
	sed 's/.*/		&;/' "$out/stub/symbols"
	echo "	local: *;"
	echo "};"
} >"$out/stub/stub.map"
${CC:-gcc} -shared -fPIC -fno-builtin -w -Wl,-soname,libibverbs.so.1 \
	-Wl,--version-script="$out/stub/stub.map" \
	-o "$out/stub/libibverbs.so" "$out/stub/stub.c"

echo "$pabi" >"$out/pabi"
rm -rf "$src"
echo "$from" >"$out/.done"
