#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# usage: rdma-core-libibverbs.sh GIT_DIR RELEASE OUT
#
# Builds libibverbs of rdma-core RELEASE (tag vRELEASE.0 of the clone
# GIT_DIR) with its own CMake and ninja, only that library and what it
# needs (no providers, man pages, pyverbs or static libraries): OUT/lib has
# libibverbs.so.1, to run a test program built against another libibverbs
# with LD_LIBRARY_PATH=OUT/lib (the public ABI is compatible).  OUT/.done
# marks a complete build; OUT/build.log has the output.
set -euo pipefail
git_dir=$1 release=$2 out=$3

if [ -e "$out/.done" ]; then
	exit 0
fi
rm -rf "$out"
mkdir -p "$out/src"
git -C "$git_dir" archive "v$release.0" | tar -x -C "$out/src"
{
	cmake -S "$out/src" -B "$out/build" -G Ninja -DNO_MAN_PAGES=1 \
		-DNO_PYVERBS=1 -DENABLE_STATIC=0 -DCMAKE_BUILD_TYPE=Release
	ninja -C "$out/build" ibverbs
} >"$out/build.log" 2>&1
mkdir -p "$out/lib"
cp -a "$out/build/lib"/libibverbs.so* "$out/lib/"
rm -rf "$out/src" "$out/build"
touch "$out/.done"
