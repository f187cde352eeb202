#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: the process-side fuzzers (tests/progs/vhca_fuzz.c), two ports in
# one namespace.  ring: a process writes what it likes into its own mapped
# rings and doorbell records while a victim process's RC traffic is checked
# byte by byte; ring-race: a second thread flips num_sge, SGE lengths and
# addresses, inline lengths and producer indices of the WQEs in flight
# while the first posts valid traffic and polls (shared memory is read
# once: KASAN would see a field read twice); verbs: two processes run
# random verb sequences over every object and QP type beside the same
# victim; srq-race: ring-race's racer on the SRQ's WQEs alone; modify:
# modify_qp from two threads against the engine's error paths; mtu: the
# netdev's MTU moved under traffic; mmap: rings and doorbell pages kept
# mapped past their objects and contexts.  Afterwards every device's
# objects and coherent buffers are back to their count before, and the
# ring fuzzer's refused WQEs show in rdma statistic (malformed_wqes).
# link-netns: rdma link add and delete racing namespace deletion, with a
# process holding an RC pair and mapped rings on the links.
#
# FUZZ_SECS: how long each fuzzer runs (default: 45 s on the debug kernel,
# the fuzzers' share of make check, 25 s for ring-race, 8 s for
# srq-race, modify, mtu and mmap; 10 s on the stock kernel); link-netns
# runs a round per 20 s of it, 3 at least.
# FUZZ_SEED: the seed (default: a random one); each scenario prints the
# seed it used and the command that replays it, in the guest
# (`make fuzz SECS=N SEED=N` on the host).  A seed replays the sequence of
# choices, not the timing (Documentation/testing.md).
. "$VHCA_TOP/tests/lib/guest.sh"

export RDMAV_DRIVERS=$VHCA_PROVIDER
FUZZ=$VHCA_TOP/build/tests/vhca_fuzz
T=/tmp/fuzz-test
mkdir -p $T
RACE_SECS=${FUZZ_SECS:-25}
# srq-race, modify, mtu and mmap run FUZZ_SECS if set, else 8 s each (their
# share of make check); link-netns a round per 20 s of FUZZ_SECS, 3 at
# least.
CLASS_SECS=${FUZZ_SECS:-8}
NETNS_ROUNDS=$((${FUZZ_SECS:-0} / 20))
[ $NETNS_ROUNDS -ge 3 ] || NETNS_ROUNDS=3
if [ "${VHCA_KERNEL:-stock}" = debug ]; then
	FUZZ_SECS=${FUZZ_SECS:-45}
else
	FUZZ_SECS=${FUZZ_SECS:-10}
fi
# The scenarios' limit (lib.sh triples it on the debug kernel): the
# fuzzing, the victim's last round and the teardown.
FUZZ_LIMIT=$((FUZZ_SECS + 60))

# state: S, every vhca device's object counts and coherent buffers (debugfs).
state() {
	S=
	for _st_d in /sys/kernel/debug/vhca/vhca.*; do
		[ -d "$_st_d" ] || continue
		S="$S ${_st_d##*/}:"
		while read -r _st_k _st_v; do
			S="$S $_st_k=$_st_v"
		done <"$_st_d/objects"
		while read -r _st_k _st_v; do
			case $_st_k in
			outstanding | outstanding_bytes | bad_frees) S="$S $_st_k=$_st_v" ;;
			esac
		done <"$_st_d/coherent"
	done
}

# state_is BASELINE: the state is BASELINE again.
state_is() {
	state
	[ "$S" = "$1" ]
}

# fuzz MODE: vhca_fuzz MODE on vhca0 and vhca1 for FUZZ_SECS, its results
# relayed; then the state back to the baseline (destroyed RC QPs linger
# for qp_linger_ms: 5 s), malformed_wqes printed.  SECS:
# FUZZ_SECS unless given.
fuzz() {
	_secs=${2:-$FUZZ_SECS}
	ports_one_ns
	check "GIDs of vhca0 ($G0) and vhca1 ($G1)" test -n "$G0" -a -n "$G1"
	_seed=${FUZZ_SEED:-$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')}
	echo "# fuzz $1: seed=$_seed secs=$_secs (FUZZ_SEED=$_seed replays it)"
	state
	_base=$S
	echo "# before:$_base"
	_m0=$(counter vhca0 malformed_wqes)
	timeout "$(tmo $((_secs + 60)))" $FUZZ "$1" vhca0 "$G0" vhca1 "$G1" \
		--seed "$_seed" --secs "$_secs" >$T/$1 2>&1
	_rc=$?
	relay "$1" $T/$1
	check "vhca_fuzz $1 exits 0 (exit status $_rc; seed=$_seed)" test $_rc = 0
	# A second between looks: wait_for's tenth would start 300 sleeps,
	# minutes on the debug kernel, when the state does not come back.
	_n=30
	while ! state_is "$_base" && [ $_n -gt 0 ]; do
		sleep 1
		_n=$((_n - 1))
	done
	echo "# after:$S"
	check "objects and coherent buffers back to their count before (seed=$_seed)" \
		test "$S" = "$_base"
	MALFORMED=$(($(counter vhca0 malformed_wqes) - _m0))
	echo "# malformed_wqes of vhca0: $MALFORMED"
}

ring() {
	fuzz ring
	check "rdma statistic counts the malformed WQEs ($MALFORMED)" test "$MALFORMED" -gt 0
}
# The debug kernel's only: its checkers are what a fuzzer needs.
scenario ring ring $FUZZ_LIMIT debug

# A second thread of the process rewrites what the engine reads from the
# rings while it reads it; the scenario runner fails any checker report,
# this names the seed with it.
ring_race() {
	fuzz ring-race "$RACE_SECS"
	check "no KASAN, UBSAN, WARN or BUG report while the racer ran (seed=$_seed)" \
		no_dmesg 'KASAN\|UBSAN\|WARNING:\|BUG:'
}
scenario ring-race ring_race $((RACE_SECS + 60)) debug

verbs() {
	fuzz verbs
}
scenario verbs verbs $FUZZ_LIMIT debug

# The SRQ's num_sge raced: ring-race with the racer on the SRQ's WQEs
# alone (num_sge, SGE lengths and addresses) while the partners' SENDs
# consume them; KASAN sees a count read twice.
srq_race() {
	fuzz srq-race "$CLASS_SECS"
	check "no KASAN, UBSAN, WARN or BUG report while num_sge of SRQ WQEs was raced (seed=$_seed)" \
		no_dmesg 'KASAN\|UBSAN\|WARNING:\|BUG:'
}
scenario srq-race srq_race $((CLASS_SECS + 60)) debug

# modify_qp from two threads against QPs whose traffic fails (bad rkey,
# RNR with rnr_retry 0, retries toward a QPN nobody has, receives too
# short on RC, UC and UD) and works: every WR completes once and in
# order, no failing one with SUCCESS, all of them after ERR.
modify() {
	fuzz modify "$CLASS_SECS"
}
scenario modify modify $((CLASS_SECS + 60)) debug

# The MTU of vhca0's netdev moved from 68 to 9000 under RC traffic, half
# of it over the wire (force_wire): active_mtu truthful, UD SENDs longer
# than it fail, RC bytes exact or an error completion.
mtu() {
	fuzz mtu "$CLASS_SECS"
}
scenario mtu mtu $((CLASS_SECS + 60)) debug

# Rings and doorbell pages kept mapped while their QP, CQ or context
# goes, then touched, inherited by no fork, unmapped: valid or SIGBUS,
# never a checker's report.
mmap_uaf() {
	fuzz mmap "$CLASS_SECS"
}
scenario mmap mmap_uaf $((CLASS_SECS + 60)) debug

# rdma link add and delete racing network namespace teardown: each round
# a namespace with a veth end moved into it, vhcaA on the end here and
# vhcaB on the one there, a process with an RC pair between them and
# rings kept mapped (vhca_fuzz hold), then rdma link delete of one or
# both racing ip netns del; afterwards no vhca device, every holder
# exited 0, and no coherent buffer outstanding (the scenario runner's
# checks).
link_netns() {
	check "insmod vhca.ko" load_vhca
	_seed=${FUZZ_SEED:-$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')}
	echo "# fuzz link-netns: seed=$_seed rounds=$NETNS_ROUNDS (FUZZ_SEED=$_seed replays it)"
	_r=0 _bad=0 _left=0
	# The PRNG's state: the seed's last 9 digits (the shell's arithmetic
	# is signed 64-bit, a seed is not).
	_x=$_seed
	[ ${#_seed} -le 9 ] || _x=$((1${_seed#"${_seed%?????????}"} % 1000000000))
	while [ $_r -lt "$NETNS_ROUNDS" ]; do
		# The round's choices from the seed: what is deleted besides
		# the namespace (0: nothing, 1: vhcaB's link, 2: both links),
		# whether after the holder is set up (else while it sets up),
		# and how long after (tenths of a second).
		_x=$(((_x * 1103515245 + 12345) % 2147483648))
		_way=$((_x % 3))
		_ready=$((_x / 3 % 4))
		_wait=$((_x / 12 % 20))
		ns_host fz fza fzb 10.9.0.1 10.9.0.2 || break
		rdma link add vhcaA type vhca netdev fza
		ip netns exec fz rdma link add vhcaB type vhca netdev fzb
		GI=
		wait_for 10 gid_find vhcaB 10.9.0.2
		_gb=${GI:-0}
		GI=
		gid_find vhcaA 10.9.0.1
		timeout "$(tmo 60)" $FUZZ hold vhcaA "${GI:-0}" vhcaB "$_gb" \
			--seed "$_x" --secs 10 >$T/hold.$_r 2>&1 &
		_h=$!
		[ $_ready = 0 ] || wait_for 30 grep -q '^# ready' $T/hold.$_r
		sleep "$((_wait / 10)).$((_wait % 10))"
		case $_way in
		1) rdma link delete vhcaB 2>/dev/null & ;;
		2)
			rdma link delete vhcaB 2>/dev/null &
			rdma link delete vhcaA 2>/dev/null &
			;;
		esac
		ip netns del fz
		wait $_h
		_rc=$?
		wait
		relay "hold, round $_r (way $_way, ready $_ready, after ${_wait}00 ms)" $T/hold.$_r
		if [ $_rc != 0 ]; then
			echo "# round $_r: the holder's exit status $_rc"
			_bad=$((_bad + 1))
		fi
		wait_for 30 no_vhca_left || _left=$((_left + 1))
		_r=$((_r + 1))
	done
	echo "# fuzz link-netns: seed=$_seed: $_r rounds, $_bad holders failed, $_left rounds left a device"
	check "$NETNS_ROUNDS rounds of link add, holder, link delete and namespace deletion (seed=$_seed)" \
		test $_r = "$NETNS_ROUNDS"
	check "every holder exited 0 (seed=$_seed)" test $_bad = 0
	check "no vhca device left after any round (seed=$_seed)" test $_left = 0
	state
	check "no vhca device left in debugfs" test -z "$S"
}
scenario link-netns link_netns 120 debug

run_scenarios "$@"
