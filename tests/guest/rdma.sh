#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: RC data, every byte verified (vhca_rdma server and client): SGE
# lists, immediate data, 1 MiB messages, WRITE, READ and the access errors.
# Two ports in one namespace; across two namespaces (the tests in reverse
# order); and across two namespaces with netem loss, reordering and
# duplication on both sides, which must make the ports retransmit.
. "$VHCA_TOP/tests/lib/guest.sh"

export RDMAV_DRIVERS=$VHCA_PROVIDER
PROG=$VHCA_TOP/build/tests/vhca_rdma
T=/tmp/rdma-test
mkdir -p $T
NETEM="loss 5% reorder 5% 50% duplicate 1% delay 1ms"

# run NAME TCP_PORT PEER_PREFIX [TEST...]: the server on vhca0, the client
# on vhca1 (run under PEER_PREFIX, e.g. "ip netns exec peer"); both must
# exit 0 within 300 s.
run() {
	_n=$1
	_port=$2
	_pre=$3
	shift 3
	_t0=$(date +%s)
	timeout "$(tmo 300)" $PROG server vhca0 "$G0" "$_port" >$T/$_n.srv 2>&1 &
	_p=$!
	wait_for 30 listening "$_port"
	timeout "$(tmo 300)" $_pre $PROG client vhca1 "$G1" 10.0.0.1 "$_port" "$@" \
		>$T/$_n.cli 2>&1
	_c=$?
	wait $_p
	_s=$?
	relay "$_n client" $T/$_n.cli
	relay "$_n server" $T/$_n.srv
	echo "# $_n: $(($(date +%s) - _t0)) s"
	check "$_n: the client exits 0 (exit status $_c)" test $_c = 0
	check "$_n: the server exits 0 (exit status $_s)" test $_s = 0
}

# Two ports in one namespace (the core needs accept_local, rp_filter 0).
one_namespace() {
	ports_one_ns
	run one-ns 18515 ""
	rdma statistic show link vhca0/1
	rdma statistic show link vhca1/1
	check "rdma link delete vhca0, vhca1" sh -c 'rdma link delete vhca0 && rdma link delete vhca1'
}
scenario one-ns one_namespace 60

# Two hosts: the second port in a namespace of its own, the tests in
# reverse order.
two_namespaces() {
	ports_two_ns
	run two-ns 18516 "ip netns exec peer" $($PROG list | sed -n '1!G;h;$p')
	rdma statistic show link vhca0/1
	ip netns exec peer rdma statistic show link vhca1/1
}
# Stock kernel only: the wire path of lossy, without the loss.
scenario two-ns two_namespaces 60 stock

# The same with loss, reordering, duplication and delay both ways: the
# data tests (an error test's NAK may be lost, and the retried request then
# finds the responder in the error state: RETRY_EXC_ERR, a legal outcome),
# all of them in one client and server, three times: netem drops whole
# skbs, and a pass of up to 64 KiB leaves as one UDP GSO packet, so one
# round may lose too few for a sequence NAK, which needs a run of packets
# lost with a later one of the same pass arriving (one round saw none on
# the stock kernel, 0 of 1040 packets of the 1 MiB SEND retransmitted).
# Then rmmod with the namespace still there.
lossy() {
	ports_two_ns
	netem_both "$NETEM"
	r=0 n=0 d=0 port=18517
	sets=$($PROG list | grep -v '^err-' | tr '\n' , | sed 's/,$//')
	sets="$sets $sets $sets"
	k=0
	for t in $sets; do
		k=$((k + 1))
		p0=$(total tx_packets) r0=$(total retransmits) n0=$(total seq_naks)
		d0=$(total duplicate_requests)
		# shellcheck disable=SC2046 # the tests of the set, as arguments
		name=$t
		[ "${t%%,*}" = "$t" ] || name=all$k
		run "lossy-$name" $port "ip netns exec peer" $(echo "$t" | tr , ' ')
		p1=$(($(total tx_packets) - p0)) r1=$(($(total retransmits) - r0))
		n1=$(($(total seq_naks) - n0)) d1=$(($(total duplicate_requests) - d0))
		echo "# lossy-$name: tx_packets $p1, retransmits $r1, seq_naks $n1, duplicate_requests $d1 (both ports)"
		r=$((r + r1)) n=$((n + n1)) d=$((d + d1)) port=$((port + 1))
	done
	rdma statistic show link vhca0/1
	ip netns exec peer rdma statistic show link vhca1/1
	echo "# lossy runs: retransmits $r, seq_naks $n, duplicate_requests $d (both ports)"
	check "lossy: the ports retransmitted ($r)" test "$r" -gt 0
	check "lossy: sequence NAKs were sent ($n)" test "$n" -gt 0
	check "lossy: duplicate requests were seen ($d)" test "$d" -gt 0
	tc qdisc del dev veth0 root
	check "rmmod vhca" rmmod vhca
	check "no coherent buffer outstanding at removal" no_dmesg "outstanding at removal"
}
scenario lossy lossy 200

# Extended CQs: vhca_cq_ex between two ports in one namespace, one process
# (ibv_create_cq_ex's refusals, RC SEND, SEND_WITH_IMM and
# RDMA_WRITE_WITH_IMM and a UD SEND_WITH_IMM read back through the
# ibv_start_poll API, every field and byte checked).
cq_ex() {
	ports_one_ns
	_t0=$(date +%s)
	timeout "$(tmo 60)" $VHCA_TOP/build/tests/vhca_cq_ex vhca0 "$G0" vhca1 "$G1" \
		>$T/cq-ex.out 2>&1
	_r=$?
	relay vhca_cq_ex $T/cq-ex.out
	echo "# cq-ex: $(($(date +%s) - _t0)) s"
	check "vhca_cq_ex exits 0 (exit status $_r)" test $_r = 0
}
scenario cq-ex cq_ex 60

# Memory windows: vhca_mw between two ports in one namespace (binds and
# their errors, WRITE and READ through windows byte by byte, access
# outside a window, invalidation, dealloc and dereg in both orders, two
# processes exiting with a window bound), no MR left after it; then
# rdma link delete of a port while a process holds a window bound to an
# MR, the MR created first (vhca1) and last (vhca0).
mw() {
	ports_one_ns
	_t0=$(date +%s)
	_m0=$(rdma resource show mr | wc -l)
	timeout "$(tmo 60)" $VHCA_TOP/build/tests/vhca_mw vhca0 "$G0" vhca1 "$G1" \
		>$T/mw.out 2>&1
	_r=$?
	relay vhca_mw $T/mw.out
	check "vhca_mw exits 0 (exit status $_r)" test $_r = 0
	check "no MR left after vhca_mw" test "$(rdma resource show mr | wc -l)" = "$_m0"
	for _o in vhca1:$G1:mr-first vhca0:$G0:mw-first; do
		_d=${_o%%:*} _g=${_o#*:} _g=${_g%%:*}
		$VHCA_TOP/build/tests/vhca_mw hold "$_d" "$_g" "${_o##*:}" \
			>$T/mw-hold.out 2>&1 &
		_p=$!
		wait_for 30 grep -q "hold: window" $T/mw-hold.out
		check "rdma link delete $_d, a window bound (${_o##*:})" rdma link delete "$_d"
		kill $_p
		wait $_p
		relay "vhca_mw hold ${_o##*:}" $T/mw-hold.out
	done
	echo "# mw: $(($(date +%s) - _t0)) s"
}
scenario mw mw 90

# Device memory: vhca_dm between two ports in one namespace (RDMA WRITE,
# READ, SEND into and from it and FETCH_AND_ADD on a DM MR, every byte of
# the allocation checked after each; the refusals; a WRITE past the MR
# placing nothing); then the context's coherent quota lowered to 4 MiB:
# three allocations of max_dm_size (1 MiB) fit beside the context's two
# 16 KiB areas, the fourth is ENOMEM, and freeing gives the room back.
dm() {
	ports_one_ns
	_t0=$(date +%s)
	timeout "$(tmo 60)" $VHCA_TOP/build/tests/vhca_dm vhca0 "$G0" vhca1 "$G1" \
		>$T/dm.out 2>&1
	_r=$?
	relay vhca_dm $T/dm.out
	check "vhca_dm exits 0 (exit status $_r)" test $_r = 0
	_p=/sys/module/vhca/parameters/uctx_coherent_mb
	_old=$(cat $_p)
	echo 4 >$_p
	timeout "$(tmo 60)" $VHCA_TOP/build/tests/vhca_dm quota vhca0 3 \
		>$T/dm-quota.out 2>&1
	_r=$?
	echo "$_old" >$_p
	relay "vhca_dm quota" $T/dm-quota.out
	check "vhca_dm quota exits 0 (exit status $_r)" test $_r = 0
	echo "# dm: $(($(date +%s) - _t0)) s"
}
scenario dm dm 60

# Parent domains and imports: vhca_import on vhca0 (a counting allocator's
# CQ and QPs in a parent domain moving a page, its frees balanced; a
# forked child importing the context, PD and MR by handle and using the
# MR by rkey and lkey from QPs of its own, the parent finding the bytes).
import() {
	ports_one_ns
	_t0=$(date +%s)
	timeout "$(tmo 60)" $VHCA_TOP/build/tests/vhca_import vhca0 "$G0" \
		>$T/import.out 2>&1
	_r=$?
	relay vhca_import $T/import.out
	check "vhca_import exits 0 (exit status $_r)" test $_r = 0
	echo "# import: $(($(date +%s) - _t0)) s"
}
scenario import import 60

# On-demand paging: vhca_odp between two ports in one namespace, ODP MRs
# on both sides (SEND, RDMA WRITE, READ and atomics with memory not
# resident when they start: never touched, or dropped with MADV_DONTNEED;
# every byte checked; a prefetch; munmap racing READs and WRITEs in
# flight, which must fail with a remote access error, never succeed with
# wrong bytes); READ, WRITE, atomics and SEND through pages swapped out
# to zram; a WRITE and a READ across two huge pages; then the same through
# implicit ODP MRs (the whole address space), one mapping across 4 GiB.
# A kernel without ODP (none advertised) skips it.
odp() {
	ports_one_ns
	check "64 MiB of swap on zram" zram_swap 64M
	check "two huge pages of 2 MiB in the pool" hugepages 2
	_t0=$(date +%s)
	timeout "$(tmo 120)" $VHCA_TOP/build/tests/vhca_odp vhca0 "$G0" vhca1 "$G1" \
		>$T/odp.out 2>&1
	_r=$?
	relay vhca_odp $T/odp.out
	check "vhca_odp exits 0 (exit status $_r)" test $_r = 0
	echo "# odp: $(($(date +%s) - _t0)) s"
	zram_swap 0
	hugepages 0
}
scenario odp odp 60

run_scenarios "$@"
