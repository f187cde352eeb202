#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: several guest scripts in one boot (usage: suite.sh NAME...; NAME
# is tests/guest/NAME.sh), as one KTAP stream in which each script is a
# subtest "ok N NAME # time=Ns cpu=Ns" (cpu: the guest's CPU time, from
# guest.sh's forks()); every scenario of every script still gets a fresh
# guest (lib.sh's run_scenarios).  The exit status counts the
# scripts that failed.
. "$VHCA_TOP/tests/lib/guest.sh"

echo "KTAP version 1"
echo "1..$#"
bad=0
for s; do
	t0=$(cut -d' ' -f1 /proc/uptime)
	forks
	b0=$BUSY
	KTAP_IND="  " sh "$VHCA_TOP/tests/guest/$s.sh"
	rc=$?
	t=$(awk -v t="$t0" '{ printf "%d", $1 - t }' /proc/uptime)
	forks
	t="${t}s cpu=$(((BUSY - b0) / 100))"
	if [ $rc = 0 ]; then
		ktap_line ok "$s" "time=${t}s"
	else
		ktap_line "not ok" "$s" "exit $rc, time=${t}s"
		bad=$((bad + 1))
	fi
done
exit $bad
