#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: the network-side fuzzers (tests/progs/vhca_fuzz_net.c).  vhca0
# (10.0.0.1) is the victim port, vhca1 (10.0.0.2) in the namespace peer
# its QPs' real peer; the injector runs in peer and sends crafted RoCEv2
# to 10.0.0.1:4791 from 10.0.0.2 and from random sources.
#
#   packets        crafted packets: every opcode to every QP state,
#                  truncation at every length, PSNs around and outside the
#                  window, unsolicited responses, RETH lengths up to 4 GiB,
#                  bad pad counts, TVer, P_Keys and ICRCs, duplicate storms
#   replay         real traffic captured on veth1, replayed with bit
#                  flips, truncations and duplications
#   netem-corrupt  netem corruption on vhca1's end under verified traffic:
#                  vhca0's rx_icrc_errors above 0 and at most the corrupted
#                  frames that reached veth0, every placed byte right
#   boundary       every opcode with each length, offset and count field at
#                  0, 1, PMTU-1, PMTU, PMTU+1, 2^31, 2^32-1 to an RC, a UC
#                  and a UD QP, and how each was taken
#   mismatch       the victim's requests (SEND, WRITE, READ, atomics)
#                  answered only wrongly (kind, length, PSN): none may
#                  complete with success
#
# FUZZ_SECS (the fuzzing time of each scenario) and FUZZ_SEED (the
# injector's seed, random and printed unless set: "# seed=N"; the same
# seed sends the same input sequence, but where it lands depends on the
# PSNs learnt from live traffic, which timing decides).  Defaults: 8 s
# each on the stock kernel, 10 s on the debug kernel, where packets'
# systematic part (about 3000 packets, always sent whole) takes some 20 s
# (with 15 s, the three scenarios took 138 s there).  The verdict, besides the kernel's checkers: the victim's
# protected QPs (sent only what no correct QP acts on) carry verified
# traffic throughout and after, no byte outside an MR or in a remote
# read-only MR changed, a fresh QP pair works, and vhca0's coherent
# buffers are back to their count before the victim.
. "$VHCA_TOP/tests/lib/guest.sh"

export RDMAV_DRIVERS=$VHCA_PROVIDER
PROG=$VHCA_TOP/build/tests/vhca_fuzz_net
T=/tmp/inject-test
mkdir -p $T

# The classes' time beyond the boundary sweep's first pass (always whole):
# 3 s in make check, FUZZ_SECS under make fuzz.
CLASS_SECS=${FUZZ_SECS:-3}
if [ -z "${FUZZ_SECS:-}" ]; then
	FUZZ_SECS=8
	[ "${VHCA_KERNEL:-stock}" = debug ] && FUZZ_SECS=10
fi
[ -n "${FUZZ_SEED:-}" ] || FUZZ_SEED=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
export FUZZ_SEED
# A completion the victim waits for (a hang, not slowness).
VHCA_FUZZ_WAIT=$(tmo 10)
export VHCA_FUZZ_WAIT

# coh FIELD: a line of vhca0's debugfs coherent file.
coh() {
	_cd=$(readlink -f /sys/class/infiniband/vhca0/device)
	sed -n "s/^$1 //p" "/sys/kernel/debug/vhca/${_cd##*/}/coherent"
}

coh_is() {
	[ "$(coh outstanding)" = "$1" ]
}

# storm [replay]: the victim here, the injector in peer for FUZZ_SECS.
storm() {
	ports_two_ns
	echo "# seed=$FUZZ_SEED (FUZZ_SEED=$FUZZ_SEED replays the input sequence)"
	c0=$(coh outstanding)
	i0=$(counter vhca0 rx_icrc_errors)
	rm -f $T/info $T/stop
	timeout "$(tmo $((FUZZ_SECS + 60)))" $PROG victim vhca0 "$G0" vhca1 "$G1" \
		$T/info $T/stop $(($(tmo $FUZZ_SECS) + 120)) >$T/victim.out 2>&1 &
	vp=$!
	check "the victim is ready" wait_for "$(tmo 30)" test -e $T/info
	timeout "$(tmo $((FUZZ_SECS + 30)))" ip netns exec peer $PROG inject \
		--seed "$FUZZ_SEED" --secs "$FUZZ_SECS" $T/info veth1 10.0.0.1 10.0.0.2 \
		${1:-} >$T/inject.out 2>&1
	ic=$?
	relay injector $T/inject.out
	check "the injector exits 0 (exit status $ic)" test $ic = 0
	sleep 1
	: >$T/stop
	wait $vp
	vc=$?
	relay victim $T/victim.out
	check "the victim exits 0 (exit status $vc)" test $vc = 0
	rdma statistic show link vhca0/1
	check "vhca0 counted packets with a wrong ICRC" \
		test "$(counter vhca0 rx_icrc_errors)" -gt "$i0"
	check "vhca0's coherent buffers back to their count before the victim ($c0)" \
		wait_for 10 coh_is "$c0"
}

# Debug kernel only, as fuzz.sh's: a fuzzer is there for the checkers.
packets() {
	storm
}
scenario packets packets $((FUZZ_SECS + 100)) debug

replay() {
	storm replay
}
scenario replay replay $((FUZZ_SECS + 100)) debug

# klass boundary|mismatch: the victim keeps the class's QPs (on vhca0, to
# fake peers at vhca1's address) in service, the injector in peer aims at
# them alone for CLASS_SECS; the victim's verdict adds the class's own
# (no byte past the packets' reach changed; mismatch: no WQE answered
# wrongly completed with success) to the storm's.
klass() {
	ports_two_ns
	echo "# seed=$FUZZ_SEED (FUZZ_SEED=$FUZZ_SEED replays the input sequence)"
	c0=$(coh outstanding)
	rm -f $T/info $T/info.shm $T/stop
	timeout "$(tmo $((CLASS_SECS + 120)))" $PROG victim vhca0 "$G0" vhca1 "$G1" \
		$T/info $T/stop $(($(tmo $CLASS_SECS) + 180)) "$1" >$T/victim.out 2>&1 &
	vp=$!
	check "the victim is ready" wait_for "$(tmo 30)" test -e $T/info
	timeout "$(tmo $((CLASS_SECS + 90)))" ip netns exec peer $PROG inject \
		--seed "$FUZZ_SEED" --secs "$CLASS_SECS" $T/info veth1 10.0.0.1 10.0.0.2 \
		"$1" >$T/inject.out 2>&1
	ic=$?
	relay injector $T/inject.out
	check "the injector exits 0 (exit status $ic)" test $ic = 0
	: >$T/stop
	wait $vp
	vc=$?
	relay victim $T/victim.out
	check "the victim exits 0 (exit status $vc)" test $vc = 0
	rdma statistic show link vhca0/1
	check "vhca0's coherent buffers back to their count before the victim ($c0)" \
		wait_for 10 coh_is "$c0"
}

boundary() {
	klass boundary
}
scenario boundary boundary $((CLASS_SECS + 100)) debug

mismatch() {
	klass mismatch
}
scenario mismatch mismatch $((CLASS_SECS + 100)) debug

# netem corrupts one bit of the linear part of a packet (Ethernet, IP,
# UDP headers and payload: vhca sends UDP checksum 0, so nothing but the
# ICRC catches it).  Counted on veth0, the corrupted RoCEv2 frames that
# arrived bound vhca0's rx_icrc_errors from above; netem's own count of
# packets sent bounds them again.
NETEM_CORRUPT=3%
netem_corrupt() {
	ports_two_ns
	check "netem corrupt $NETEM_CORRUPT on veth1 (vhca1's end)" \
		ip netns exec peer tc qdisc add dev veth1 root netem corrupt $NETEM_CORRUPT
	i0=$(counter vhca0 rx_icrc_errors)
	timeout "$(tmo $((FUZZ_SECS + 60)))" $PROG netem vhca0 "$G0" vhca1 "$G1" \
		"$FUZZ_SECS" veth0 >$T/netem.out 2>&1
	rc=$?
	relay netem $T/netem.out
	check "the traffic exits 0 (exit status $rc)" test $rc = 0
	ip netns exec peer tc -s qdisc show dev veth1 | tee $T/qdisc
	rdma statistic show link vhca0/1
	bad=$(sed -n 's/^# corrupted=//p' $T/netem.out)
	sentp=$(sed -n 's/^ Sent [0-9]* bytes \([0-9]*\) pkt.*/\1/p' $T/qdisc)
	icrc=$(($(counter vhca0 rx_icrc_errors) - i0))
	echo "# rx_icrc_errors $icrc, corrupted RoCEv2 frames on veth0 ${bad:-?}, netem sent ${sentp:-?}"
	check "vhca0's rx_icrc_errors grew ($icrc)" test "$icrc" -gt 0
	check "... by at most the corrupted frames that arrived (${bad:-?})" \
		test "$icrc" -le "${bad:--1}"
	check "... and at most the packets netem sent (${sentp:-?})" \
		test "$icrc" -le "${sentp:--1}"
}
scenario netem-corrupt netem_corrupt $((FUZZ_SECS + 100)) debug

run_scenarios "$@"
