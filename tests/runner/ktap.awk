# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Flatten a KTAP stream (Documentation/dev-tools/ktap.rst) into one line per
# counted result, for check.sh.  Nesting is read from the indentation (two
# spaces a level from the guest scripts and the C programs, four from
# KUnit); "# Subtest: NAME" names a level, and a result's full name is the
# path of the levels above it, then its description, after the prefix
# given with -v prefix=NAME.  Kernel log timestamps and carriage returns
# are dropped; lines that are not KTAP are ignored.
#
# Output, tab-separated:
#   pass|fail|skip  NAME  DIAGNOSTIC   a leaf result; a parent "not ok"
#                                      with no failed result below it (a
#                                      scenario that timed out, a kernel
#                                      report) and a level whose plan was
#                                      not met (a crash) count as fail
#   time            NAME  SECONDS      a result carrying "# ... time=Ns"
#   cpu             NAME  SECONDS      and "cpu=Ns" (the guest's CPU time)

function path(upto, i, p) {
	p = prefix
	for (i = 1; i <= depth && ind[i] <= upto; i++)
		if (name[i] != "")
			p = p (p == "" ? "" : "/") name[i]
	return p
}

function out(kind, n, diag) {
	printf "%s\t%s\t%s\n", kind, n, diag
}

# close_level: the innermost level ends; a plan it did not meet fails.
# Returns the failures counted in it, which its parent inherits.
function close_level(f) {
	f = failed_below[depth]
	if (plan[depth] >= 0 && count[depth] != plan[depth]) {
		out("fail", path(ind[depth]), "plan " plan[depth] ", " count[depth] " results: ended early")
		f++
	}
	depth--
	if (depth > 0)
		failed_below[depth] += f
	return f
}

function open_level(at) {
	while (depth > 0 && ind[depth] > at)
		close_level()
	if (depth > 0 && ind[depth] == at)
		close_level()
	depth++
	ind[depth] = at
	name[depth] = ""
	plan[depth] = -1
	count[depth] = 0
	failed_below[depth] = 0
}

BEGIN {
	depth = 0
}

{
	line = $0
	sub(/\r$/, "", line)
	sub(/^\[ *[0-9]+\.[0-9]+\] /, "", line)
	match(line, /^ */)
	at = RLENGTH
	line = substr(line, at + 1)
}

line ~ /^K?TAP version [0-9]+$/ {
	open_level(at)
	next
}

line ~ /^# Subtest: / {
	if (depth == 0 || ind[depth] != at)
		open_level(at)
	name[depth] = substr(line, 12)
	next
}

line ~ /^1\.\.[0-9]+$/ {
	if (depth == 0 || ind[depth] != at)
		open_level(at)
	plan[depth] = substr(line, 4) + 0
	next
}

line ~ /^(not )?ok [0-9]+( |$)/ {
	ok = line !~ /^not /
	rest = line
	sub(/^(not )?ok [0-9]+ ?/, "", rest)
	desc = rest
	diag = ""
	if (index(rest, " # ")) {
		desc = substr(rest, 1, index(rest, " # ") - 1)
		diag = substr(rest, index(rest, " # ") + 3)
	} else if (rest ~ /^# /) {
		desc = ""
		diag = substr(rest, 3)
	}
	# A result closes the levels nested deeper than itself: it is their
	# parent's result.
	parent = 0
	fails = 0
	while (depth > 0 && ind[depth] > at) {
		fails += close_level()
		parent = 1
	}
	if (depth == 0 || ind[depth] != at)
		open_level(at)
	count[depth]++
	n = path(at)
	n = n (n == "" ? "" : "/") desc
	if (match(diag, /time=[0-9]+s/))
		out("time", n, substr(diag, RSTART + 5, RLENGTH - 6))
	if (match(diag, /cpu=[0-9]+s/))
		out("cpu", n, substr(diag, RSTART + 4, RLENGTH - 5))
	if (toupper(diag) ~ /^SKIP/) {
		out("skip", n, diag)
	} else if (!parent) {
		out(ok ? "pass" : "fail", n, diag)
		if (!ok)
			failed_below[depth]++
	} else if (!ok && fails == 0) {
		out("fail", n, diag)
		failed_below[depth]++
	}
	next
}

END {
	while (depth > 0)
		close_level()
}
