#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: rdma-core's own test suite, as the installed python3-pyverbs ships
# it (/usr/share/doc/rdma-core/tests, some files gzipped: a gunzipped copy
# runs), on one port talking to itself: on vhca0 (every test must pass or
# skip), and on rdma_rxe's rxe0 over the same kernel and suite, the
# reference (its own failures are reported, not counted).  PYVERBS_TESTS
# names another copy of the suite.  Each run prints its pass, skip and
# fail counts and every skip with its reason.
. "$VHCA_TOP/tests/lib/guest.sh"

export RDMAV_DRIVERS=$VHCA_PROVIDER
SUITE=${PYVERBS_TESTS:-/usr/share/doc/rdma-core/tests}
T=${VHCA_OUT:-/tmp}/pyverbs
TESTS=/tmp/pyverbs-tests
mkdir -p $T

# suite_copy: the suite, gunzipped, in $TESTS.
suite_copy() {
	rm -rf $TESTS
	cp -r "$SUITE" $TESTS && gunzip -f $TESTS/*.gz 2>/dev/null
	test -f $TESTS/run_tests.py
}

# suite_run DEV G LOG [MODULE...]: run_tests.py on DEV with GID index G,
# the whole suite or the named modules; its output in LOG.  Adds to _ran,
# _skip and _bad what it counts.  A run that ends without a unittest
# summary (the interpreter died) is counted from its result lines, its
# last test goes to _died and that test's module to _dead.
suite_run() {
	_sd=$1 _sg=$2 _sl=$3 _dead=
	shift 3
	(cd $TESTS && timeout "$(tmo 1500)" /usr/bin/python3 run_tests.py \
		--dev "$_sd" --gid "$_sg" -v "$@") >"$_sl" 2>&1
	_src=$?
	_sr=$(grep -E '^(OK|FAILED)( \(.*\))?$' "$_sl" | tail -n 1)
	_sn=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in .*/\1/p' "$_sl")
	if [ -z "$_sr" ] || [ -z "$_sn" ]; then
		_ps=$(grep -cE ' \.\.\. skipped' "$_sl")
		_pb=$(grep -cE ' \.\.\. (FAIL|ERROR)$' "$_sl")
		_ran=$((_ran + $(grep -cE ' \.\.\. ok$' "$_sl") + _ps + _pb))
		_skip=$((_skip + _ps)) _bad=$((_bad + _pb))
		_lt=$(grep -E '^test[^ ]* \(' "$_sl" | tail -n 1)
		_died="$_died ${_lt%% *}(exit $_src)"
		_dead=$(echo "$_lt" | sed -n 's/^[^ ]* (tests\.\([^.]*\)\..*/\1/p')
		return
	fi
	_ran=$((_ran + _sn))
	_skip=$((_skip + $(echo "$_sr" | sed -n 's/.*skipped=\([0-9]*\).*/\1/p;t;s/.*/0/p')))
	_bad=$((_bad + $(echo "$_sr" | sed -n 's/.*failures=\([0-9]*\).*/\1/p;t;s/.*/0/p') +
		$(echo "$_sr" | sed -n 's/.*errors=\([0-9]*\).*/\1/p;t;s/.*/0/p')))
}

# pyverbs DEV STRICT SENT: the whole suite on DEV (its GID of 10.0.0.1);
# its log in $T/DEV.log.  When the interpreter dies in it, the modules
# after the one it died in run again, in one process ($T/DEV-N.log), and
# so on: one crash costs the rest of its module.  STRICT 1: any failure,
# error or death fails; 0 (the reference): the counts are reported, not
# judged.  SENT: DEV's counter of packets sent, which the suite must move.
pyverbs() {
	_dev=$1
	_strict=$2
	_sent=$3
	_g=$(gid_index "$_dev" 10.0.0.1)
	check "$_dev: a RoCE v2 GID of 10.0.0.1 (index $_g)" test -n "$_g"
	_tx=$(counter "$_dev" "$_sent")
	_t0=$(date +%s)
	_ran=0 _skip=0 _bad=0 _died= _n=0
	suite_run "$_dev" "$_g" $T/$_dev.log
	while [ -n "$_dead" ]; do
		_n=$((_n + 1))
		echo "# $_dev: the suite died in$_died; the modules after $_dead again"
		_rest=$(cd $TESTS && ls test_*.py | sed 's/\.py$//' | sort |
			sed -n "/^$_dead\$/,\$p" | tail -n +2)
		[ -n "$_rest" ] || break
		# shellcheck disable=SC2086 # the modules, as arguments
		suite_run "$_dev" "$_g" "$T/$_dev-$_n.log" $_rest
		cat "$T/$_dev-$_n.log" >>$T/$_dev.log
	done
	echo "# $_dev: $(($(date +%s) - _t0)) s; $_dev sent" \
		"$(($(counter "$_dev" "$_sent") - _tx)) packets"
	echo "# $_dev: ran $_ran: $((_ran - _skip - _bad)) passed, $_skip skipped," \
		"$_bad failed${_died:+; died in:$_died}"
	# One line per skip: the test (the line before a docstring) and why.
	awk '/^test[^ ]* \(/ { t = $1 }
	     / \.\.\. skipped / { sub(/.* \.\.\. skipped /, ""); print "#   skipped: " t ": " $0 }' \
		$T/$_dev.log
	grep -E '^(FAIL|ERROR): ' $T/$_dev.log | sed 's/^/#   /'
	if [ $_ran = 0 ]; then
		fail "$_dev: no test ran${_died:+ (died in:$_died)}"
	elif [ "$_strict" = 0 ]; then
		pass "$_dev (reference): $_ran tests, $_bad failed, $_skip skipped${_died:+, died in:$_died}"
	elif [ $_bad = 0 ] && [ -z "$_died" ]; then
		pass "$_dev: $_ran tests, none failed ($((_ran - _skip)) passed, $_skip skipped)"
	else
		fail "$_dev: $_ran tests, $_bad failed${_died:+, died in:$_died}"
	fi
	check "$_dev: the suite's traffic went over it" \
		test "$(counter "$_dev" "$_sent")" -gt "$_tx"
}

# port_up DEV TYPE: the suite copied, DEV (a TYPE link) on veth0, 10.0.0.1.
port_up() {
	check "the suite ($SUITE)" suite_copy
	local_pair
	check "rdma link add $1 (veth0)" rdma link add "$1" type "$2" netdev veth0
	wait_for 10 gid_index "$1" 10.0.0.1 >/dev/null
}

on_vhca() {
	check "insmod vhca.ko" load_vhca
	port_up vhca0 vhca
	pyverbs vhca0 1 tx_packets
	check "rdma link delete vhca0" rdma link delete vhca0
	check "rmmod vhca" rmmod vhca
	check "no coherent buffer outstanding at removal" no_dmesg "outstanding at removal"
}
scenario vhca on_vhca 1500 stock

on_rxe() {
	check "modprobe rdma_rxe" modprobe rdma_rxe
	port_up rxe0 rxe
	pyverbs rxe0 0 sent_pkts
	check "rdma link delete rxe0" rdma link delete rxe0
	check "rmmod rdma_rxe" rmmod rdma_rxe
}
scenario rxe on_rxe 1500 stock

run_scenarios "$@"
