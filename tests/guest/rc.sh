#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: the RC data path between two vhca ports.  ibv_rc_pingpong and
# perftest over a veth pair, in one namespace and across two (the second as
# a second host); across two with netem reordering (recovered by sequence
# NAKs, not timeouts), and with loss, reordering and duplication on both
# ends, which must make the ports retransmit.
. "$VHCA_TOP/tests/lib/guest.sh"

export RDMAV_DRIVERS=$VHCA_PROVIDER
T=/tmp/rc-test
mkdir -p $T
NETEM="loss 5% reorder 5% duplicate 1% delay 1ms"
NETEM_REORDER="reorder 5% delay 1ms"
# Iterations of the long runs: 1 MiB messages, many small ones, the run
# with reordering and the lossy runs.  The debug kernel (KASAN, lockdep,
# kmemleak; VHCA_KERNEL=debug) runs the data path 3 to 35 times slower
# than the stock kernel under TCG, and is there for its checkers, which
# see every path of the engine in the first few hundred messages (multi-
# packet messages, sequence NAKs, retransmission, duplicates, lingering
# QPs); the volume is the stock kernel's to carry.  There: 150 instead of 2000
# round trips under loss, 30 instead of 500 perftest messages (16 KiB:
# 16 packets each, about 25 lost), 60 instead of 200 in each perftest run,
# and no latency tools (doorbell/budget-zero runs ib_send_lat there).
N_MIB=100 N_MANY=10000 N_REORDER=2000 N_LOSSY_PP=2000 N_LOSSY=500 N_PERF=200
N_ATOMIC=500 PERF_LAT="ib_write_lat ib_send_lat"
[ "$VHCA_KERNEL" = debug ] && N_LOSSY_PP=150 N_LOSSY=30 N_PERF=60 N_ATOMIC=150 PERF_LAT=

# ibv_rc_pingpong over two ports of one namespace.  1 MiB messages: not
# the default 1000 iterations, which take about 130 s on the stock kernel
# under TCG (16 MB/s each way).  These runs may last 600 s (a loaded host).
pingpong() {
	ports_one_ns
	PAIR_TMO=600
	for args in "" "-e" "-s 1" "-s 65536" "-s 1048576 -n $N_MIB" "-n $N_MANY"; do
		check "ibv_rc_pingpong $args (one namespace)" pair "pp$(echo "$args" | tr -d ' -')" \
			"ibv_rc_pingpong -d vhca0 -g $G0 $args" \
			"ibv_rc_pingpong -d vhca1 -g $G1 $args 10.0.0.1"
	done
	# -t: completions read through ibv_cq_ex with their timestamps.
	check "ibv_rc_pingpong -t -n 200 (one namespace, completion timestamps)" \
		pair ppts "ibv_rc_pingpong -d vhca0 -g $G0 -t -n 200" \
		"ibv_rc_pingpong -d vhca1 -g $G1 -t -n 200 10.0.0.1"
	check "ibv_rc_pingpong -t reports its receive completions' clock cycles" \
		grep -q "Average receive completion clock cycles" $T/ppts.cli
}
# Stock kernel only: its variants (event mode, 1 byte to 1 MiB, 10000
# round trips, completion timestamps) run the paths of perftest, lossy
# (multi-packet messages) and rmmod-busy (-e).
scenario pingpong pingpong 900 stock

perftest() {
	ports_one_ns
	for t in ib_write_bw ib_read_bw ib_send_bw $PERF_LAT; do
		check "$t (one namespace)" pair "$t" \
			"$t -F -d vhca0 -x $G0 -n $N_PERF" \
			"$t -F -d vhca1 -x $G1 -n $N_PERF 10.0.0.1"
	done
	rdma statistic show link vhca0/1
	rdma statistic show link vhca1/1
	check "rdma link delete vhca0, vhca1" sh -c 'rdma link delete vhca0 && rdma link delete vhca1'
}
scenario perftest perftest

two_hosts() {
	ports_two_ns
	for args in "" "-s 4096 -n 2000"; do
		check "ibv_rc_pingpong $args (two namespaces)" pair "ns$(echo "$args" | tr -d ' -')" \
			"ibv_rc_pingpong -d vhca0 -g $G0 $args" \
			"ip netns exec peer ibv_rc_pingpong -d vhca1 -g $G1 $args 10.0.0.1"
	done
	check "ib_write_bw (two namespaces)" pair nswbw \
		"ib_write_bw -F -d vhca0 -x $G0 -n 200" \
		"ip netns exec peer ib_write_bw -F -d vhca1 -x $G1 -n 200 10.0.0.1"
	rdma statistic show link vhca0/1
}
# Stock kernel only: the wire path between namespaces, which lossy,
# lost-ack and delete-busy run.
scenario two-hosts two_hosts 600 stock

# Atomics in one namespace: vhca_atomic, then perftest's ib_atomic_bw and
# ib_atomic_lat (both operations; they check no data, and take a minute on
# the debug kernel, whose checkers see the same paths in vhca_atomic).
atomics() {
	ports_one_ns
	atomic_run atomic vhca0 "$G0" vhca1 "$G1"
	[ "$VHCA_KERNEL" = debug ] && return
	for t in ib_atomic_bw ib_atomic_lat; do
		for op in FETCH_AND_ADD CMP_AND_SWAP; do
			check "$t -A $op (one namespace)" pair "$t-$op" \
				"$t -F -d vhca0 -x $G0 -A $op -n $N_PERF" \
				"$t -F -d vhca1 -x $G1 -A $op -n $N_PERF 10.0.0.1"
		done
	done
}
scenario atomics atomics

# Atomics across two namespaces with netem duplicating and losing packets
# on both ends of the wire: a duplicated atomic request is answered from
# the result the responder kept, never executed again, or the counter
# would end high and return a value twice.  One process drives both
# devices (vhca1 in the namespace peer, as RDMA devices are seen from
# every namespace).
atomics_dup() {
	ports_two_ns
	netem_both "duplicate 20% loss 2% delay 1ms"
	d0=$(total duplicate_requests)
	atomic_run atomic-dup vhca0 "$G0" vhca1 "$G1"
	d=$(($(total duplicate_requests) - d0))
	echo "# atomics under duplication: duplicate_requests $d (both ports)"
	check "the responders saw duplicated requests ($d)" test "$d" -gt 0
}
scenario atomics-dup atomics_dup

# Two hosts with reordering and delay, nothing lost: a sequence NAK brings
# every packet that came too early again, without a retransmit timeout.
# ibv_rc_pingpong's send queue has one slot, which is in flight when the
# NAK comes.  4000-byte messages: their first three packets, of one length,
# cross as one UDP GSO packet and the shorter last one alone, so netem has
# two to reorder per message.  A timeout is allowed per 100 iterations for a response held
# up longer than 67 ms on a loaded host.
reorder() {
	ports_two_ns
	netem_both "$NETEM_REORDER"
	t0=$(total timeouts) n0=$(total seq_naks)
	check "ibv_rc_pingpong -s 4000 -n $N_REORDER (two namespaces, reordering)" pair reorder \
		"ibv_rc_pingpong -d vhca0 -g $G0 -s 4000 -n $N_REORDER" \
		"ip netns exec peer ibv_rc_pingpong -d vhca1 -g $G1 -s 4000 -n $N_REORDER 10.0.0.1"
	t=$(($(total timeouts) - t0)) n=$(($(total seq_naks) - n0))
	echo "# reordering: seq_naks $n, timeouts $t (both ports)"
	check "reordering: the receivers asked again ($n sequence NAKs)" test "$n" -gt 0
	check "reordering: $t retransmit timeouts, at most $((N_REORDER / 100))" \
		test "$t" -le $((N_REORDER / 100))
}
# Stock kernel only: sequence NAKs and go-back-N, which lossy's reordering
# brings (and KUnit's engine suites drive packet by packet).
scenario reorder reorder 900 stock

# The ACK of a last request lost: ibv_rc_pingpong -n 1, with every ACK
# vhca0 sends dropped (a u32 filter on the BTH opcode, 0x11, 28 bytes into
# the IPv4 packet) until its server has exited.  The client's SEND was
# received, its ACK was not: the client sends it again to a QP that is
# gone, whose lingering QP (qp_linger_ms) must acknowledge it.  With
# qp_linger_ms=0 nothing does, and the client fails with a retry error
# (about 17 s of retransmissions).
drop_acks() {
	tc qdisc add dev veth0 root handle 1: prio &&
		tc filter add dev veth0 parent 1: protocol ip u32 \
			match ip protocol 17 0xff match ip dport 4791 0xffff \
			match u8 0x11 0xff at 28 action drop
}
last_ack() {
	drop_acks || return 1
	timeout "$(tmo 60)" ibv_rc_pingpong -d vhca0 -g $G0 -n 1 >$T/$1.srv 2>&1 &
	_la_s=$!
	wait_for 30 listening 18515
	timeout "$(tmo 60)" ip netns exec peer ibv_rc_pingpong -d vhca1 -g $G1 -n 1 10.0.0.1 \
		>$T/$1.cli 2>&1 &
	_la_c=$!
	wait $_la_s
	_la_ss=$?
	_la_drops=$(tc -s filter show dev veth0 | awk '/Sent/ { print $4; exit }')
	tc qdisc del dev veth0 root
	wait $_la_c
	_la_cs=$?
	tail -n 5 $T/$1.srv $T/$1.cli
	echo "# $1: server exit $_la_ss, client exit $_la_cs, ACKs dropped: $_la_drops"
	[ "$_la_ss" = 0 ] && [ "${_la_drops:-0}" -gt 0 ] && [ "$_la_cs" = 0 ]
}
lost_ack() {
	ports_two_ns
	# The client resends after 67 ms, doubled each time (17 s in all); the
	# lingering QP must outlive the server's exit and the filter's removal,
	# which take seconds on the debug kernel: 5 s (the default) is too short
	# there, where it lingers 30 s.
	[ "$VHCA_KERNEL" = debug ] && echo 30000 >/sys/module/vhca/parameters/qp_linger_ms
	d0=$(counter vhca0 duplicate_requests)
	check "the last ACK lost: the closed QP acknowledges the SEND again" \
		last_ack lastack
	check "the last ACK lost: vhca0 answered a duplicate" \
		test "$(counter vhca0 duplicate_requests)" -gt "$d0"
}
scenario lost-ack lost_ack

lost_ack_no_linger() {
	ports_two_ns
	echo 0 >/sys/module/vhca/parameters/qp_linger_ms
	refuse "the last ACK lost, qp_linger_ms=0: the client fails" \
		last_ack lastack0
	check "the last ACK lost, qp_linger_ms=0: with a retry error" \
		grep -q "retry counter exceeded" $T/lastack0.cli
}
scenario lost-ack-no-linger lost_ack_no_linger

# Loss, reordering, duplication and delay on both ends of the wire: the
# ports must retransmit and still complete: ibv_rc_pingpong (whose ends
# close as soon as they have what they waited for, so that a last ACK lost
# is answered by a lingering QP) and perftest.  Each lost packet at the end
# of a message costs a retransmit timeout (67 ms asked by both), and TCP
# has its own losses to recover from.
lossy() {
	ports_two_ns
	netem_both "$NETEM"
	r0=$(total retransmits) n0=$(total seq_naks) d0=$(total duplicate_requests)
	t0=$(total timeouts)
	PAIR_TMO=600
	check "ibv_rc_pingpong -n $N_LOSSY_PP (two namespaces, netem)" pair lossy \
		"ibv_rc_pingpong -d vhca0 -g $G0 -n $N_LOSSY_PP" \
		"ip netns exec peer ibv_rc_pingpong -d vhca1 -g $G1 -n $N_LOSSY_PP 10.0.0.1"
	for t in ib_send_bw ib_write_bw ib_read_bw; do
		check "$t -s 16384 -n $N_LOSSY (two namespaces, netem)" pair "lossy-$t" \
			"$t -F -d vhca0 -x $G0 -s 16384 -n $N_LOSSY" \
			"ip netns exec peer $t -F -d vhca1 -x $G1 -s 16384 -n $N_LOSSY 10.0.0.1"
	done
	rdma statistic show link vhca0/1
	ip netns exec peer rdma statistic show link vhca1/1
	r=$(($(total retransmits) - r0)) n=$(($(total seq_naks) - n0))
	d=$(($(total duplicate_requests) - d0)) t=$(($(total timeouts) - t0))
	echo "# lossy run: retransmits $r (timeouts $t), seq_naks $n, duplicate_requests $d (both ports)"
	check "lossy: the ports retransmitted ($r)" test "$r" -gt 0
	check "lossy: the receivers saw duplicates ($d)" test "$d" -gt 0
}
scenario lossy lossy 1200

# rdma link delete under ib_write_bw traffic: the processes see errors,
# the kernel stays clean.
delete_busy() {
	ports_two_ns
	p0=$(counter vhca1 tx_packets peer)
	busy del "ib_write_bw -F -d vhca0 -x $G0 -D 30" \
		"ip netns exec peer ib_write_bw -F -d vhca1 -x $G1 -D 30 10.0.0.1"
	# Traffic is flowing once vhca1 sent its first WRITEs (perftest's own
	# output is buffered until it exits).
	flowing() {
		[ $(($(counter vhca1 tx_packets peer) - p0)) -gt 1000 ]
	}
	check "ib_write_bw traffic on vhca1" wait_for 60 flowing
	check "rdma link delete vhca1 under traffic" rdma link delete vhca1
	busy_end "the client on the deleted device ends" "its peer ends too"
	check "vhca1 is gone" test ! -e /sys/class/infiniband/vhca1
	check "rdma link add vhca1 again" ip netns exec peer rdma link add vhca1 type vhca netdev veth1
}
scenario delete-busy delete_busy

# rmmod while ibv_rc_pingpong -e runs between the two hosts.
rmmod_busy() {
	ports_two_ns
	p0=$(counter vhca1 tx_packets peer)
	busy rm "ibv_rc_pingpong -e -d vhca0 -g $G0 -n 100000" \
		"ip netns exec peer ibv_rc_pingpong -e -d vhca1 -g $G1 -n 100000 10.0.0.1"
	flowing() {
		[ $(($(counter vhca1 tx_packets peer) - p0)) -gt 100 ]
	}
	check "ibv_rc_pingpong -e traffic on vhca1" wait_for 60 flowing
	check "rmmod vhca with ibv_rc_pingpong -e running" rmmod vhca
	busy_end "the pingpong client ends" "the pingpong server ends"
	check "no vhca device is left" no_vhca_left
	check "no coherent buffer outstanding at removal" no_dmesg "outstanding at removal"
}
scenario rmmod-busy rmmod_busy

# UC in one namespace: ibv_uc_pingpong checking the bytes (-c) with
# messages of 4 and of 98 packets (path MTU 1024); vhca_uc: a WRITE with
# immediate and a SEND of several packets landing byte by byte, a SEND
# without a receive WQE dropped, READ, atomics and RC's attributes refused.
# The debug kernel runs vhca_uc only (the pingpongs take 15 s each there;
# vhca_uc runs the same paths).
uc() {
	ports_one_ns
	_uc_sizes="4096 100000"
	[ "$VHCA_KERNEL" = debug ] && _uc_sizes=
	for s in $_uc_sizes; do
		check "ibv_uc_pingpong -s $s -m 1024 -n 20 -c (one namespace)" \
			pair "uc-pp$s" \
			"ibv_uc_pingpong -d vhca0 -g $G0 -s $s -m 1024 -n 20 -c" \
			"ibv_uc_pingpong -d vhca1 -g $G1 -s $s -m 1024 -n 20 -c 10.0.0.1"
	done
	uc_run uc vhca0 "$G0" vhca1 "$G1"
}
scenario uc uc

# UC across two namespaces with netem losing packets on both ends: of 200
# SENDs of 4 packets, what arrives is whole, in order, never a part of a
# message or of two (a dropped message's receive WQE takes the next one).
uc_lossy() {
	ports_two_ns
	netem_both "loss 5% delay 1ms"
	g0=$(total rx_out_of_window) u0=$(total uc_drops)
	uc_run uc-lossy vhca0 "$G0" vhca1 "$G1" 200
	g=$(($(total rx_out_of_window) - g0)) u=$(($(total uc_drops) - u0))
	echo "# lossy UC: rx_out_of_window $g, uc_drops $u (both ports)"
	check "lossy UC: the receiver saw PSN gaps ($g)" test "$g" -gt 0
	check "lossy UC: the messages dropped were counted ($u uc_drops)" \
		test "$u" -gt 0
}
# Stock kernel only: KUnit's vhca_engine_uc drives the gap paths on the
# debug kernel.
scenario uc-lossy uc_lossy 120 stock

# XRC between two ports of one namespace: vhca_xrc (an XRC_SEND QP of
# vhca0, an XRC_RECV QP of vhca1 with two XRC SRQs: SENDs and a WRITE with
# immediate landing byte by byte in the SRQ each names, an SRQ of another
# XRC domain and an unknown SRQ number refused with REM_INV_REQ_ERR, the
# verbs' refusals), then ibv_xsrq_pingpong (its server's XRC SRQ and
# XRC_RECV QP, its client's XRC_SEND QP; it checks no bytes).
xrc() {
	ports_one_ns
	timeout "$(tmo 120)" $VHCA_TOP/build/tests/vhca_xrc vhca0 "$G0" \
		vhca1 "$G1" >$T/xrc 2>&1
	_xr=$?
	relay xrc $T/xrc
	check "xrc: vhca_xrc exits 0 (exit status $_xr)" test $_xr = 0
	check "ibv_xsrq_pingpong (one namespace)" pair xsrq \
		"ibv_xsrq_pingpong -d vhca0 -g $G0 -m 1024 -n 20" \
		"ibv_xsrq_pingpong -d vhca1 -g $G1 -m 1024 -n 20 10.0.0.1"
}
scenario xrc xrc 300

run_scenarios "$@"
