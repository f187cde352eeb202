#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Host test: the module's Kbuild refuses to build for any kernel but
# x86_64, where vhca_mmap()'s PFN of coherent memory would be wrong.  Kbuild
# is read as kbuild reads it (make -f, with the SRCARCH and CONFIG_ a
# kernel's build sets), dry: no kernel tree of another architecture is
# needed.  KTAP on stdout; the exit status counts the failures.
cd "$(dirname "$0")/../.." || exit 1
MSG='vhca builds for x86_64 only'
n=0
nfail=0

# kbuild DESCRIPTION refused|accepted VAR=VALUE...
kbuild() {
	d=$1 want=$2
	shift 2
	n=$((n + 1))
	out=$(make -n -f Kbuild KBUILD_EXTMOD=. "$@" 2>&1)
	case "$out" in
	*"$MSG"*) got=refused ;;
	*) got=accepted ;;
	esac
	if [ $got = "$want" ]; then
		echo "ok $n $d"
	else
		printf "%s\n" "$out" | head -3 | sed "s|^|# $d: $got: |"
		echo "not ok $n $d"
		nfail=$((nfail + 1))
	fi
}

echo "KTAP version 1"
echo "1..5"
kbuild "x86_64 builds" accepted SRCARCH=x86 CONFIG_X86_64=y
kbuild "x86 clean (no kernel config read) is not refused" accepted SRCARCH=x86
kbuild "32-bit x86 is refused" refused SRCARCH=x86 CONFIG_X86_32=y
kbuild "arm64 is refused" refused SRCARCH=arm64 CONFIG_ARM64=y
kbuild "riscv is refused" refused SRCARCH=riscv CONFIG_RISCV=y
exit $nfail
