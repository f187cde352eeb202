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
# victim; modify: modify_qp from two threads against the engine's error
# paths; mtu: the netdev's MTU moved under traffic.  Afterwards every
# device's objects and coherent buffers are back to their count before,
# and the ring fuzzer's refused WQEs show in rdma statistic
# (malformed_wqes).
#
# FUZZ_SECS: how long each fuzzer runs (default: 45 s on the debug kernel,
# the fuzzers' share of make check, 25 s for ring-race, 8 s for
# modify and mtu; 10 s on the stock kernel).
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
# modify and mtu run FUZZ_SECS if set, else 8 s each (their share of
# make check).
CLASS_SECS=${FUZZ_SECS:-8}
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
# as ghosts for qp_linger_ms: 5 s), malformed_wqes printed.  SECS:
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

# modify_qp from two threads against QPs whose traffic fails (bad rkey,
# RNR with rnr_retry 0, retries toward a QPN nobody has, receives too
# short on RC, UC and UD) and works: every WR completes once and in
# order, no failing one with SUCCESS, all of them after ERR.
modify() {
	fuzz modify "$CLASS_SECS"
}
scenario modify modify $((CLASS_SECS + 60)) debug

# The MTU of vhca0's netdev moved from 68 to 9000 under RC traffic:
# active_mtu truthful, UD SENDs longer than it fail, RC bytes exact or an
# error completion.
mtu() {
	fuzz mtu "$CLASS_SECS"
}
scenario mtu mtu $((CLASS_SECS + 60)) debug

run_scenarios "$@"
