#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The kernel's checkpatch.pl --strict over every kernel source of vhca
# (driver and KUnit suites), taken from Debian's linux-source-6.12.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SRC_TAR=/usr/src/linux-source-6.12.tar.xz
[ -r "$SRC_TAR" ] || die "$SRC_TAR missing: run 'make deps'"
SRCVER=$(dpkg-query -W -f='${Version}' linux-source-6.12)
CP=$VHCA_CACHE/checkpatch-$SRCVER
if [ ! -e "$CP/.done" ]; then
	rm -rf "$CP"
	mkdir -p "$CP"
	tar -C "$CP" --strip-components=1 -xf "$SRC_TAR" \
		linux-source-6.12/scripts/checkpatch.pl \
		linux-source-6.12/scripts/spelling.txt \
		linux-source-6.12/scripts/const_structs.checkpatch
	touch "$CP/.done"
fi

cd "$VHCA_TOP"
files=$(git ls-files -co --exclude-standard drivers kunit include | grep -E '\.[ch]$|Kconfig|Makefile|Kbuild')
perl "$CP/scripts/checkpatch.pl" --strict --no-tree --show-types -f $files
