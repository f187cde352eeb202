#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# usage: check.sh TESTS_DIR BUILD_DIR
# Runs the host tests of each build under BUILD_DIR (plain/, san/), prints
# one PASS/FAIL/SKIP line per check and a summary; fails if anything failed.
tests=$1 build=$2
log=$build/check.log
: >"$log"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# run TAG NAME CMD...: a test binary that exits non-zero without saying why
# (a crash, a sanitizer report) is one more failure.
run() {
	local tag=$1 name=$2 out rc
	shift 2
	out=$("$@" 2>"$build/$tag-$name.stderr")
	rc=$?
	[ -n "$out" ] && echo "$out"
	if [ $rc -ne 0 ] && ! grep -q '^FAIL:' <<<"$out"; then
		echo "FAIL: $tag: $name exited with status $rc"
		cat "$build/$tag-$name.stderr"
	fi
}

for tag in plain san; do
	run $tag layout "$build/$tag/tests/layout_test" $tag \
		"$tests/pabi34-layout-rdma-core-44.txt"
	run $tag dispatch "$build/$tag/tests/dispatch_test" $tag \
		"$build/$tag/libvhca"
done | tee "$log"

pass=$(grep -c '^PASS:' "$log")
fail=$(grep -c '^FAIL:' "$log")
skip=$(grep -c '^SKIP:' "$log")
echo "provider: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
