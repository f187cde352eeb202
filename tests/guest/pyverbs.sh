#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: rdma-core's pyverbs tests (tests/ at tag v44.0, which match
# Debian's pyverbs 44) on one vhca port, talking to itself: test_qpex,
# test_mr and test_cq.CQTest.test_resize_cq, or with "all" the whole
# suite.  The suite is not part of this repository; its folder is the
# first argument (default: the vhca cache's pyverbs-v44/tests).
#
# usage: pyverbs.sh [TESTS_DIR [all]]  Each module's unittest result becomes check lines:
# any failure or error fails; skips are listed with their reasons.
# test_resize_cq posts 7 signaled UD sends and at once expects a resize
# below 7 entries to fail (EINVAL): UD sends run inside the kick system
# call, so the completions are there when post_send returns (8 of 8 runs
# on the stock kernel; while they ran from a work item only, 5 of 15).
. "$VHCA_TOP/tests/lib/guest.sh"

TESTS=${1:-${HOME:-/root}/.cache/vhca/pyverbs-v44/tests}
export RDMAV_DRIVERS=$VHCA_TOP/build/provider/libvhca
# The logs are kept with the VM's results when there are any.
T=${VHCA_OUT:-/tmp}/pyverbs
mkdir -p $T

# pyverbs NAME [TEST...]: run_tests.py on vhca0 for TEST... (none: the
# whole suite); its log in $T/NAME.log.
pyverbs() {
	_n=$1
	shift
	_tx=$(counter vhca0 tx_packets)
	_t0=$(date +%s)
	_tmo=900
	[ "$_n" = all ] && _tmo=2700
	(cd "$TESTS" && timeout $_tmo /usr/bin/python3 run_tests.py \
		--dev vhca0 --gid "$G" -v "$@") >$T/$_n.log 2>&1
	_rc=$?
	echo "$_n: run_tests.py exited $_rc after $(($(date +%s) - _t0)) s;" \
		"vhca0 sent $(($(counter vhca0 tx_packets) - _tx)) packets"
	_ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' $T/$_n.log)
	_res=$(grep -E '^(OK|FAILED)( \(.*\))?$' $T/$_n.log | tail -n 1)
	_skip=$(echo "$_res" | sed -n 's/.*skipped=\([0-9]*\).*/\1/p')
	_bad=$(echo "$_res" | grep -oE '(failures|errors|unexpected successes)=[0-9]+' | tr '\n' ' ')
	echo "$_n: ran ${_ran:-?}, skipped ${_skip:-0}${_bad:+, $_bad}"
	# One line per skip: the test (the line before a docstring) and why.
	awk '/^test[^ ]* \(/ { t = $1 }
	     / \.\.\. skipped / { sub(/.* \.\.\. skipped /, ""); print "  skipped: " t ": " $0 }' \
		$T/$_n.log
	if [ -n "$_ran" ] && [ "${_res%% *}" = OK ] && [ $_rc = 0 ]; then
		pass "$_n: $_ran tests, none failed ($((_ran - ${_skip:-0})) passed, ${_skip:-0} skipped)"
	else
		fail "$_n: ${_res:-no unittest summary} (exit $_rc)"
		grep -E '^(FAIL|ERROR): ' $T/$_n.log | sed 's/^/  /'
		tail -n 40 $T/$_n.log
	fi
}

if [ ! -f "$TESTS/run_tests.py" ]; then
	fail "pyverbs tests not found in $TESTS"
	finish
	exit
fi
check "insmod vhca.ko" load_vhca
local_pair
check "rdma link add vhca0 (veth0)" rdma link add vhca0 type vhca netdev veth0
wait_for 10 gid_index vhca0 10.0.0.1 >/dev/null
G=$(gid_index vhca0 10.0.0.1)
check "RoCE v2 GID of 10.0.0.1 on vhca0 (index $G)" test -n "$G"

if [ "${2:-}" = all ]; then
	pyverbs all
else
	pyverbs test_qpex test_qpex
	pyverbs test_mr test_mr
	pyverbs test_resize_cq test_cq.CQTest.test_resize_cq
fi
check "the tests' traffic went over vhca0" test "$(counter vhca0 tx_packets)" -gt 0
rdma statistic show link vhca0/1

check "rdma link delete vhca0" rdma link delete vhca0
check "rmmod vhca" rmmod vhca
check "no coherent buffer outstanding at removal" no_dmesg "outstanding at removal"
finish
