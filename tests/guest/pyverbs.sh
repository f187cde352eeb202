#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: rdma-core's own test suite, as the installed python3-pyverbs ships
# it (/usr/share/doc/rdma-core/tests, some files gzipped: a gunzipped copy
# runs), on one port talking to itself: on vhca0 (every test must pass or
# skip), and on rdma_rxe's rxe0 over the same kernel and suite, the
# reference (its own failures are reported, not counted).  PYVERBS_TESTS
# names another copy of the suite.  Each run prints its pass, skip and
# fail counts and every skip with its reason.  The suite's huge-page tests
# (MAP_HUGETLB, IBV_ACCESS_HUGETLB) take 2 MiB huge pages from a pool that
# huge_pool fills for the run.
. "$VHCA_TOP/tests/lib/guest.sh"

export RDMAV_DRIVERS=$VHCA_PROVIDER
SUITE=${PYVERBS_TESTS:-/usr/share/doc/rdma-core/tests}
T=${VHCA_OUT:-/tmp}/pyverbs
TESTS=/tmp/pyverbs-tests
NS=
mkdir -p $T

# suite_copy: the suite, gunzipped, in $TESTS, and $SITE's
# sitecustomize.py.  The suite's multi-process tests hand pyverbs objects
# to their children, as only the fork start method can (base.py asks for
# fork itself); Python 3.14 (sid) starts children with forkserver by
# default, which pickles them, and pyverbs' objects do not pickle.
SITE=/tmp/pyverbs-site
suite_copy() {
	rm -rf $TESTS $SITE
	mkdir -p $SITE
	printf '%s\n' 'import multiprocessing' \
		"multiprocessing.set_start_method('fork')" >$SITE/sitecustomize.py
	cp -r "$SUITE" $TESTS && gunzip -f $TESTS/*.gz 2>/dev/null
	test -f $TESTS/run_tests.py
}

# suite_run DEV G LOG [MODULE...]: run_tests.py on DEV with GID index G
# (in the network namespace $NS, when set),
# the whole suite or the named modules; its output in LOG.  Adds to _ran,
# _skip and _bad what it counts.  A run that ends without a unittest
# summary (the interpreter died) is counted from its result lines, its
# last test goes to _died and that test's module to _dead.
suite_run() {
	_sd=$1 _sg=$2 _sl=$3 _dead=
	shift 3
	(cd $TESTS && timeout "$(tmo 1500)" ${NS:+ip netns exec $NS} env PYTHONPATH=$SITE /usr/bin/python3 run_tests.py \
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

# suite DEV IP SENT: the whole suite on DEV (its GID of IP), its log in
# $T/DEV.log.  When the interpreter dies in it, the modules after the one
# it died in run again, in one process ($T/DEV-N.log), and so on: one
# crash costs the rest of its module.  SENT: DEV's counter of packets
# sent, which the suite must move.  What it counted goes to $T/DEV.res,
# for judge.
suite() {
	_dev=$1
	_g=$(gid_index "$_dev" "$2")
	_tx=$(counter "$_dev" "$3")
	_t0=$(date +%s)
	_ran=0 _skip=0 _bad=0 _died= _dead= _n=0
	[ -z "$_g" ] || suite_run "$_dev" "$_g" $T/$_dev.log
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
	cat >>$T/$_dev.res <<EOF
_g='$_g' _ran=$_ran _skip=$_skip _bad=$_bad _died='$_died'
_secs=$(($(date +%s) - _t0)) _moved=$(($(counter "$_dev" "$3") - _tx))
EOF
}

# judge DEV STRICT: the checks on DEV's suite ($T/DEV.res).  STRICT 1:
# any failure, error or death fails; 0 (the reference): the counts are
# reported, not judged.
judge() {
	_dev=$1
	_g= _ran=0 _skip=0 _bad=0 _died= _secs=0 _moved=0 _setup=
	. $T/$_dev.res
	[ -z "$_setup" ] || fail "$_dev: $_setup"
	check "$_dev: a RoCE v2 GID (index $_g)" test -n "$_g"
	echo "# $_dev: $_secs s; $_dev sent $_moved packets"
	echo "# $_dev: ran $_ran: $((_ran - _skip - _bad)) passed, $_skip skipped," \
		"$_bad failed${_died:+; died in:$_died}"
	if [ -e $T/$_dev.log ]; then
		# One line per skip: the test (the line before a docstring) and why.
		awk '/^test[^ ]* \(/ { t = $1 }
		     / \.\.\. skipped / { sub(/.* \.\.\. skipped /, ""); print "#   skipped: " t ": " $0 }' \
			$T/$_dev.log
		grep -E '^(FAIL|ERROR): ' $T/$_dev.log | sed 's/^/#   /'
	fi
	if [ $_ran = 0 ]; then
		fail "$_dev: no test ran${_died:+ (died in:$_died)}"
	elif [ "$2" = 0 ]; then
		pass "$_dev (reference): $_ran tests, $_bad failed, $_skip skipped${_died:+, died in:$_died}"
	elif [ $_bad = 0 ] && [ -z "$_died" ]; then
		pass "$_dev: $_ran tests, none failed ($((_ran - _skip)) passed, $_skip skipped)"
	else
		fail "$_dev: $_ran tests, $_bad failed${_died:+, died in:$_died}"
	fi
	check "$_dev: the suite's traffic went over it" test "$_moved" -gt 0
}

# port_up DEV TYPE VETH PEER NET: DEV (a TYPE link) on VETH, NET.1, whose
# peer PEER is NET.2 (set up as local_pair's), in the network namespace
# $NS when set.
port_up() {
	if [ -n "$NS" ]; then
		ip netns add "$NS" && ip -n "$NS" link set lo up || return 1
	fi
	veth_pair "$3" "$4" "$5.1" "$5.2" $NS || return 1
	# shellcheck disable=SC2016 # expanded by that shell
	${NS:+ip netns exec $NS} sh -c 'for i in all default "$0" "$1"; do
		echo 1 >/proc/sys/net/ipv4/conf/$i/accept_local &&
			echo 0 >/proc/sys/net/ipv4/conf/$i/rp_filter || exit 1
	done' "$3" "$4" || return 1
	${NS:+ip netns exec $NS} rdma link add "$1" type "$2" netdev "$3" || return 1
	wait_for 10 gid_index "$1" "$5.1" >/dev/null
}

# huge_pool N: N huge pages of 2 MiB for the suites (each of the tests
# that map them takes one or two, and two suites may run at once), 32 MiB
# of the guest's 2 GiB for 16; 0 gives them back.  A kernel without 2 MiB
# huge pages skips the check, and the suite those tests.
huge_pool() {
	hugepages "$1"
	case $? in
	0) pass "huge pages of 2 MiB in the pool: $1" ;;
	2) skip "huge pages of 2 MiB in the pool: $1" "the kernel has none" ;;
	*) fail "huge pages of 2 MiB in the pool: $1 (has $(cat $HUGEPAGES_2M/nr_hugepages))" ;;
	esac
}

# rxe_suite: rdma_rxe's rxe0 on veth2 (10.0.1.1), the suite on it, and its
# removal; what failed on the way goes to $T/rxe0.res (_setup), for judge.
rxe_suite() {
	rm -f $T/rxe0.res $T/rxe0.log
	if ! modprobe rdma_rxe; then
		echo "_setup='modprobe rdma_rxe failed'" >$T/rxe0.res
	elif ! port_up rxe0 rxe veth2 veth3 10.0.1; then
		echo "_setup='rdma link add rxe0 (veth2) failed'" >$T/rxe0.res
	else
		suite rxe0 10.0.1.1 sent_pkts
	fi
	rdma link delete rxe0 2>/dev/null
	rmmod rdma_rxe ||
		echo "_setup='rmmod rdma_rxe failed after the suite'" >>$T/rxe0.res
}

# The suite on vhca0 (veth0, 10.0.0.1).  When rxe's scenario runs in this
# boot too, its suite runs beside vhca's, on the guest's other CPU (each
# suite is one busy process), and rxe's scenario judges what it counted;
# vhca0 is then in a network namespace of its own, as rdma_rxe before
# Linux 7.1 holds UDP port 4791 of the initial one.
on_vhca() {
	check "the suite ($SUITE)" suite_copy
	huge_pool 16
	_bg=
	if t_selected "${VHCA_KERNEL:-stock}/pyverbs/rxe"; then
		rxe_suite >$T/rxe0.out 2>&1 &
		_bg=$!
		NS=pyverbs
	fi
	check "insmod vhca.ko" load_vhca
	check "rdma link add vhca0 (veth0)" port_up vhca0 vhca veth0 veth1 10.0.0
	rm -f $T/vhca0.res
	suite vhca0 10.0.0.1 tx_packets
	judge vhca0 1
	check "rdma link delete vhca0" ${NS:+ip netns exec $NS} rdma link delete vhca0
	check "rmmod vhca" rmmod vhca
	check "no coherent buffer outstanding at removal" no_dmesg "outstanding at removal"
	[ -z "$_bg" ] || wait $_bg
	huge_pool 0
}
scenario vhca on_vhca 2500 stock

# rxe's reference: judged from its run beside vhca's, or run here.
on_rxe() {
	if [ ! -e $T/rxe0.res ]; then
		check "the suite ($SUITE)" suite_copy
		huge_pool 16
		rxe_suite >$T/rxe0.out 2>&1
		huge_pool 0
	fi
	cat $T/rxe0.out
	judge rxe0 0
	rm -f $T/rxe0.res
}
scenario rxe on_rxe 1500 stock

run_scenarios "$@"
