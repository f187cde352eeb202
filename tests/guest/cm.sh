#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: UD QPs, the GSI QP and the RDMA CM between two vhca ports, the
# second in a namespace of its own (a second host), then both in one.
. "$VHCA_TOP/tests/lib/guest.sh"

export RDMAV_DRIVERS=$VHCA_PROVIDER
T=/tmp/cm-test
mkdir -p $T
P="ip netns exec peer"

# two_ns: vhca0 here, vhca1 in the namespace peer, a second host, and
# the RDMA CM's user interface.
two_ns() {
	modprobe rdma_ucm 2>/dev/null
	ports_two_ns
}

# one_ns: vhca0 on veth0 and vhca1 on veth1, both here (the core needs
# accept_local, rp_filter 0: local_pair).
one_ns() {
	local_pair
	check "rdma link add vhca0, vhca1 (one namespace)" links_add
	port_gids
}

# vhca_ud, the project's UD program, its results relayed.
ud_prog() {
	timeout "$(tmo 120)" $VHCA_TOP/build/tests/vhca_ud vhca0 $G0 vhca1 $G1 >$T/ud.out 2>&1
	_r=$?
	relay "vhca_ud$1" $T/ud.out
	check "vhca_ud$1 exits 0" test $_r = 0
}

# The project's librdmacm program: every byte checked on both sides.
cm_prog() {
	timeout "$(tmo 150)" $VHCA_TOP/build/tests/vhca_cm server 10.0.0.1 >$T/cm.srv 2>&1 &
	_p=$!
	wait_for 10 grep -q listening $T/cm.srv
	timeout "$(tmo 150)" $1 $VHCA_TOP/build/tests/vhca_cm client 10.0.0.1 >$T/cm.cli 2>&1
	_c=$?
	wait $_p
	_s=$?
	relay "vhca_cm$2" $T/cm.srv
	relay "vhca_cm$2" $T/cm.cli
	check "vhca_cm$2: server and client exit 0" test "$_s$_c" = 00
}

# The rdma-core examples between two hosts: ibv_ud_pingpong, ibv_srq_pingpong.
# Their round trips: 1000 (2000 of 1 byte), 200 ibv_srq_pingpong's; on the
# debug kernel, 20 ms each there, 200 (and 100), whose checkers see the UD
# and SRQ paths in the first ones: the volume is the stock kernel's.
N_UD=1000 N_UD1=2000 N_SRQ=200
[ "$VHCA_KERNEL" = debug ] && N_UD=200 N_UD1=200 N_SRQ=100
pingpong() {
	two_ns
	for args in "-s 1024 -n $N_UD" "-s 1 -n $N_UD1" "-e -s 512 -n $N_UD"; do
		check "ibv_ud_pingpong $args" pair "ud$(echo "$args" | tr -d ' -')" \
			"ibv_ud_pingpong -d vhca0 -g $G0 $args" \
			"$P ibv_ud_pingpong -d vhca1 -g $G1 $args 10.0.0.1"
	done
	check "ibv_srq_pingpong -q 4" pair srq \
		"ibv_srq_pingpong -d vhca0 -g $G0 -q 4 -n $N_SRQ" \
		"$P ibv_srq_pingpong -d vhca1 -g $G1 -q 4 -n $N_SRQ 10.0.0.1"
}
scenario pingpong pingpong 90

# vhca_ud between two hosts; its datagram with a wrong Q_Key is dropped.
vhca_ud() {
	two_ns
	ud_prog ""
	check "the datagram with the wrong Q_Key was counted as dropped" \
		test "$(counter vhca1 ud_drops peer)" = 1
}
scenario vhca-ud vhca_ud 60

# Ports on netdevs of MTU 300, too small for any IB MTU: the active MTU is
# 256, and UD SENDs longer than that fail at the sender, one whose SGEs
# sum to almost 2^32 too.
ud_oversize() {
	two_ns
	check "veth0 and veth1 at MTU 300" sh -c \
		'ip link set veth0 mtu 300 && ip -n peer link set veth1 mtu 300'
	timeout "$(tmo 60)" $VHCA_TOP/build/tests/vhca_ud --oversize vhca0 $G0 vhca1 $G1 >$T/ud-big.out 2>&1
	_r=$?
	relay "vhca_ud --oversize" $T/ud-big.out
	check "vhca_ud --oversize exits 0" test $_r = 0
}
scenario ud-oversize ud_oversize 60

# rping between two hosts, then between two ports of one namespace, where
# it must need no retransmission.
rping_pairs() {
	two_ns
	check "rping -v -V" pair rping \
		"rping -s -a 10.0.0.1 -v -V -C 20" \
		"$P rping -c -a 10.0.0.1 -v -V -C 20"
	check "rdma link delete vhca0, vhca1" sh -c "rdma link delete vhca0 && $P rdma link delete vhca1"
	ip netns del peer
	ip link del veth0 2>/dev/null
	one_ns
	check "rping -v -V (one namespace)" pair rping1 \
		"rping -s -a 10.0.0.1 -v -V -C 20" \
		"rping -c -a 10.0.0.1 -I 10.0.0.2 -v -V -C 20"
	# rping's READ follows SENDs and WRITEs the peer acknowledged: its
	# response must be taken as it comes, not after a retransmit timeout.
	check "rping on a lossless link needed no retransmission" \
		test "$(counter vhca0 retransmits)$(counter vhca1 retransmits)" = 00
	rdma statistic show link vhca0/1
}
# Stock kernel only: the RDMA CM with RC SEND, READ and WRITE, as vhca-cm
# runs them with every byte checked; its no-retransmission count is
# timing.
scenario rping rping_pairs 60 stock

# The librdmacm examples between two hosts.
cm_tools() {
	two_ns
	check "ucmatose" pair ucmatose "ucmatose" "$P ucmatose -s 10.0.0.1"
	check "udaddy" pair udaddy "udaddy" "$P udaddy -s 10.0.0.1"
	check "rdma_server/rdma_client" pair rdmasc "rdma_server" "$P rdma_client -s 10.0.0.1"
	check "rdma_xserver/rdma_xclient (RC)" pair rdmaxsc "rdma_xserver -c r" \
		"$P rdma_xclient -s 10.0.0.1 -c r"
}
# Stock kernel only: the librdmacm examples create and connect QPs as
# vhca-cm and vhca-ud do.
scenario cm-tools cm_tools 60 stock

# vhca_cm between two hosts.
vhca_cm() {
	two_ns
	cm_prog "$P" ""
	rdma statistic show link vhca0/1
	$P rdma statistic show link vhca1/1
	check "rdma link delete vhca0, vhca1" sh -c "rdma link delete vhca0 && $P rdma link delete vhca1"
}
scenario vhca-cm vhca_cm 60

# Both ports in one namespace: ibv_ud_pingpong, vhca_cm, vhca_ud, and a
# clean removal.
one_ns_progs() {
	check "insmod vhca.ko" load_vhca
	modprobe rdma_ucm 2>/dev/null
	one_ns
	check "ibv_ud_pingpong (one namespace)" pair ud1 \
		"ibv_ud_pingpong -d vhca0 -g $G0 -s 1024" \
		"ibv_ud_pingpong -d vhca1 -g $G1 -s 1024 10.0.0.1"
	cm_prog "" " (one namespace)"
	ud_prog " (one namespace)"
	rdma statistic show link vhca0/1
	rdma statistic show link vhca1/1
	check "rdma link delete vhca0, vhca1" sh -c 'rdma link delete vhca0 && rdma link delete vhca1'
	check "rmmod vhca" rmmod vhca
	check "no coherent buffer outstanding at removal" no_dmesg "outstanding at removal"
}
# Stock kernel only: local delivery (local/runs, local/self) under the CM
# (vhca-cm).
scenario one-ns one_ns_progs 60 stock

# mcast_runs SUFFIX [PREFIX]: mckey (the RDMA CM's joins, 10 datagrams
# each) from vhca0 to vhca1, then from vhca1 to vhca0 (PREFIX runs
# vhca1's side), when PREFIX is given; and the project's multicast
# program, which checks every byte; every group left.
mcast_runs() {
	if [ $# -gt 1 ]; then
		check "mckey vhca0 -> vhca1$1" mckey_pair mck01 \
			"$2 stdbuf -oL mckey -m 239.1.1.1 -b 10.0.0.2 -C 10" \
			"stdbuf -oL mckey -m 239.1.1.1 -b 10.0.0.1 -s -C 10"
		check "mckey vhca1 -> vhca0$1" mckey_pair mck10 \
			"stdbuf -oL mckey -m 239.1.1.2 -b 10.0.0.1 -C 10" \
			"$2 stdbuf -oL mckey -m 239.1.1.2 -b 10.0.0.2 -s -C 10"
	fi
	timeout "$(tmo 120)" $VHCA_TOP/build/tests/vhca_mcast vhca0 $G0 vhca1 $G1 >$T/mc.out 2>&1
	_r=$?
	relay "vhca_mcast$1" $T/mc.out
	check "vhca_mcast$1 exits 0" test $_r = 0
}

# UD multicast between two hosts (the wire: IP multicast over veth), then
# between two ports of one namespace (delivered in the kernel: vhca_mcast
# only, mckey's joins went through the CM above); a device removed while
# a process has a QP attached.
mcast() {
	two_ns
	mcast_runs "" "$P"
	check "rdma link delete vhca0, vhca1" sh -c "rdma link delete vhca0 && $P rdma link delete vhca1"
	ip netns del peer
	ip link del veth0 2>/dev/null
	one_ns
	mcast_runs " (one namespace)"
	stdbuf -oL mckey -m 239.1.1.3 -b 10.0.0.2 -C 10 >$T/mck-rm.rcv 2>&1 &
	_p=$!
	check "mckey joined on vhca1" wait_for 30 grep -q "receiving data transfers" $T/mck-rm.rcv
	check "rdma link delete vhca1 with a QP attached" rdma link delete vhca1
	kill $_p 2>/dev/null
	wait $_p
	check "rdma link delete vhca0" rdma link delete vhca0
	check "no group was left at removal" no_dmesg "QPs at removal"
}
scenario mcast mcast 120

run_scenarios "$@"
