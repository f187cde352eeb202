#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# usage: check.sh BUILD_DIR LAYOUT_FILE
# Runs the host tests of each build under BUILD_DIR (plain/, san/), the
# layout test against LAYOUT_FILE (the layout recorded for the release
# built), and prints one KTAP stream (Documentation/dev-tools/ktap.rst in
# the kernel), also kept in BUILD_DIR/check.log: each test binary is a
# subtest (its own results, indented: the layout test's checks, the
# dispatch test's tests, each a subtest of its checks), then its result,
# "ok K TAG/NAME" or "not ok K TAG/NAME # exit N".  A binary that exits
# non-zero (a failed check, a crash, a sanitizer report) fails even if it
# printed nothing; its stderr is shown then.  A summary diagnostic ends the
# stream; the exit status is non-zero if anything failed.
build=$1 layout=$2
log=$build/check.log
TAGS=(plain san)
NAMES=(layout dispatch)

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# indent: a test binary's KTAP as a subtest: its version line (the subtest
# header has it already) dropped, the rest two spaces in, line by line.
indent() {
	local l v=
	while IFS= read -r l || [ -n "$l" ]; do
		if [ -z "$v" ] && [ "$l" = "KTAP version 1" ]; then
			v=1
			continue
		fi
		printf '  %s\n' "$l"
	done
}

# run K TAG NAME CMD...: subtest K, the test binary CMD.
run() {
	local k=$1 tag=$2 name=$3 out rc why= l results skips
	shift 3
	out=$build/$tag-$name.out
	echo "  KTAP version 1"
	echo "  # Subtest: $tag/$name"
	"$@" 2>"$build/$tag-$name.stderr" | indent | tee "$out"
	rc=${PIPESTATUS[0]}
	results=$(grep -Ec '^  (not )?ok [0-9]+' "$out")
	skips=$(grep -Ec '^  ok [0-9]+ [^#]*# SKIP' "$out")
	if [ "$rc" -ne 0 ]; then
		why="exit $rc"
	elif grep -q '^  not ok [0-9]' "$out"; then
		why="a check failed, yet exit 0"
	elif [ "$results" -eq 0 ]; then
		why="no results"
	elif [ "$skips" -eq "$results" ]; then
		echo "ok $k $tag/$name # SKIP"	# every result skipped
		return
	else
		echo "ok $k $tag/$name"
		return
	fi
	if [ "$rc" -ne 0 ] && [ -s "$build/$tag-$name.stderr" ]; then
		echo "# $tag/$name: stderr:"
		while IFS= read -r l || [ -n "$l" ]; do
			printf '# %s\n' "$l"
		done <"$build/$tag-$name.stderr"
	fi
	echo "not ok $k $tag/$name # $why"
}

{
	echo "KTAP version 1"
	echo "1..$((${#TAGS[@]} * ${#NAMES[@]}))"
	k=0
	for tag in "${TAGS[@]}"; do
		for name in "${NAMES[@]}"; do
			k=$((k + 1))
			case $name in
			layout)
				run $k $tag $name "$build/$tag/tests/layout_test" \
					$tag "$layout"
				;;
			dispatch)
				run $k $tag $name \
					"$build/$tag/tests/dispatch_test" $tag \
					"$build/$tag/libvhca"
				;;
			esac
		done
	done
} | tee "$log"

# The counts: the results as make check counts them (the checks, and a
# test or a binary that failed with none of its checks failed), then the
# test binaries.
counts=$(awk -f "$(dirname "$0")/../../../tests/runner/ktap.awk" "$log" |
	cut -f1)
pass=$(grep -c '^pass$' <<<"$counts")
fail=$(grep -c '^fail$' <<<"$counts")
skip=$(grep -c '^skip$' <<<"$counts")
bad=$(grep -Ec '^not ok [0-9]+ ' "$log")
echo "# provider: $pass passed, $fail failed, $skip skipped;" \
	"$bad of $((${#TAGS[@]} * ${#NAMES[@]})) test binaries failed" |
	tee -a "$log"
[ "$bad" -eq 0 ] && [ "$fail" -eq 0 ]
