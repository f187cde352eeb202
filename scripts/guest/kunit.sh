#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: load the KUnit test module (its suites run at load) and print the
# KTAP they wrote to the kernel log, one level in (the suites are this
# script's subtests: kunit/SUITE/CASE).  A kunit/SUITE[/CASE] pattern in
# VHCA_T becomes KUnit's filter_glob (SUITE.CASE).
. "$VHCA_TOP/scripts/guest/lib.sh"

KO=$VHCA_BUILD/kunit/vhca_kunit.ko
glob=
set -f
for p in ${VHCA_T:-}; do
	case "$p" in
	kunit/*) glob=$(echo "${p#kunit/}" | tr / .) ;;
	esac
done
set +f
# Without a newline: a charp parameter keeps what it is given, and the
# glob "SUITE\n" matches no suite.
[ -z "$glob" ] || printf '%s' "$glob" >/sys/module/kunit/parameters/filter_glob
t0=$(cut -d' ' -f1 /proc/uptime)
if ! insmod "$KO"; then
	echo "${KTAP_IND}KTAP version 1"
	echo "${KTAP_IND}1..1"
	fail "insmod vhca_kunit.ko"
	exit 1
fi
# The kernel log from the suites' version line on, without timestamps.
# "# Subtest: kunit" names the level the suites are in.
dmesg_since "$t0" | sed 's/^\[[^]]*\] //' | sed -n '/^KTAP version 1$/,$p' |
	sed '1a # Subtest: kunit' | sed "s/^/$KTAP_IND/" | tee /tmp/kunit.ktap
rmmod vhca_kunit
[ -s /tmp/kunit.ktap ] ||
	echo "$KTAP_IND# no KUnit output: no suite matched filter_glob '$glob'?"
# The module's own verdict: every top-level suite result ok.
! grep -q "^${KTAP_IND}not ok " /tmp/kunit.ktap && grep -q "^${KTAP_IND}ok " /tmp/kunit.ktap
