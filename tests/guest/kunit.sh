#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: load the KUnit test module (its suites run at load) and print the
# KTAP they wrote to the kernel log, one level in (the suites are this
# script's subtests: kunit/SUITE/CASE).  A kunit/SUITE[/CASE] pattern in
# VHCA_T becomes KUnit's filter_glob (SUITE.CASE).
. "$VHCA_TOP/tests/lib/guest.sh"

KO=$VHCA_BUILD/drivers/infiniband/sw/vhca/tests/vhca_kunit.ko
# The filter globs, one per kunit/SUITE[/CASE] pattern in VHCA_T; none (a
# single run of every suite) without such a pattern or with "kunit".
globs=
set -f
for p in ${VHCA_T:-}; do
	case "$p" in
	kunit) globs=-; break ;;
	kunit/*) globs="$globs $(printf '%s' "${p#kunit/}" | tr / .)" ;;
	esac
done
[ -n "$globs" ] || globs=-
# insmod resolves no dependencies: the modules the test module needs (the
# crypto API's hash layer, a module on the debug kernel) first.
deps=$(modinfo -F depends "$KO" | tr ',' ' ')
[ -z "$deps" ] || modprobe -a $deps
# One load of the module per glob (its suites run at load), the suites of
# each run collected from the kernel log without timestamps.
: >/tmp/kunit.suites
for g in $globs; do
	# Without a newline: a charp parameter keeps what it is given, and
	# the glob "SUITE\n" matches no suite.
	[ "$g" = - ] || printf '%s' "$g" >/sys/module/kunit/parameters/filter_glob
	read -r t0 _ </proc/uptime
	if ! insmod "$KO"; then
		echo "${KTAP_IND}KTAP version 1"
		echo "${KTAP_IND}1..1"
		fail "insmod vhca_kunit.ko"
		exit 1
	fi
	dmesg_since "$t0" | sed 's/^\[[^]]*\] //' | sed -n '/^KTAP version 1$/,$p' |
		sed '1,2d' >/tmp/kunit.run
	[ -s /tmp/kunit.run ] ||
		echo "$KTAP_IND# no KUnit output: no suite matched filter_glob '$g'"
	cat /tmp/kunit.run >>/tmp/kunit.suites
	rmmod vhca_kunit
done
set +f
# One level, "# Subtest: kunit", the suites of every run renumbered in it.
n=$(grep -cE '^(not )?ok [0-9]+ ' /tmp/kunit.suites)
{
	echo "KTAP version 1"
	echo "# Subtest: kunit"
	echo "1..$n"
	awk '/^(not )?ok [0-9]+ / { sub(/[0-9]+/, ++n) } { print }' /tmp/kunit.suites
} | sed "s/^/$KTAP_IND/" | tee /tmp/kunit.ktap
# The module's own verdict: every top-level suite result ok.
! grep -q "^${KTAP_IND}not ok " /tmp/kunit.ktap && grep -q "^${KTAP_IND}ok " /tmp/kunit.ktap
