#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: the RC data path between two vhca ports.  ibv_rc_pingpong over a
# veth pair, in one namespace and across two (the second as a second host).
. "$VHCA_TOP/scripts/guest/lib.sh"

export RDMAV_DRIVERS=$VHCA_TOP/build/provider/libvhca
T=/tmp/rc-test
mkdir -p $T

no_vhca_left() {
	! ls /sys/class/infiniband 2>/dev/null | grep -q '^vhca'
}

# listening: a TCP socket listens on port 18515 (not ss, whose diag
# modules loading in the guest can crash TCG's text patching).
listening() {
	grep -q ':4853 [0-9A-F]*:0000 0A' /proc/net/tcp /proc/net/tcp6
}

# pair NAME SERVER_CMD CLIENT_CMD: both must succeed within 120 s.  The
# client starts once the server listens (a loaded VM may take seconds).
pair() {
	_pn=$1
	timeout 120 sh -c "$2" >$T/$_pn.srv 2>&1 &
	_p=$!
	wait_for 30 listening
	timeout 120 sh -c "$3" >$T/$_pn.cli 2>&1
	_c=$?
	wait $_p
	_s=$?
	tail -n 2 $T/$_pn.srv $T/$_pn.cli
	[ $_c = 0 ] && [ $_s = 0 ]
}

check "insmod vhca.ko" load_vhca

# ---- two ports in one namespace (the core needs accept_local, rp_filter 0)
local_pair
check "rdma link add vhca0, vhca1" sh -c \
	'rdma link add vhca0 type vhca netdev veth0 && rdma link add vhca1 type vhca netdev veth1'
port_gids
for args in "" "-e" "-s 1" "-s 65536" "-n 2000"; do
	check "ibv_rc_pingpong $args (one namespace)" pair "pp$(echo "$args" | tr -d ' -')" \
		"ibv_rc_pingpong -d vhca0 -g $G0 $args" \
		"ibv_rc_pingpong -d vhca1 -g $G1 $args 10.0.0.1"
done
for t in ib_write_bw ib_read_bw ib_send_bw ib_write_lat ib_send_lat; do
	check "$t (one namespace)" pair "$t" \
		"$t -F -d vhca0 -x $G0 -n 200" \
		"$t -F -d vhca1 -x $G1 -n 200 10.0.0.1"
done
rdma statistic show link vhca0/1
rdma statistic show link vhca1/1
check "rdma link delete vhca0, vhca1" sh -c 'rdma link delete vhca0 && rdma link delete vhca1'
ip link del veth0

# ---- two hosts: the second port in a namespace of its own
peer_host
check "rdma link add vhca0, and vhca1 in the peer namespace" sh -c \
	'rdma link add vhca0 type vhca netdev veth0 && ip netns exec peer rdma link add vhca1 type vhca netdev veth1'
port_gids
for args in "" "-s 4096 -n 2000"; do
	check "ibv_rc_pingpong $args (two namespaces)" pair "ns$(echo "$args" | tr -d ' -')" \
		"ibv_rc_pingpong -d vhca0 -g $G0 $args" \
		"ip netns exec peer ibv_rc_pingpong -d vhca1 -g $G1 $args 10.0.0.1"
done
check "ib_write_bw (two namespaces)" pair nswbw \
	"ib_write_bw -F -d vhca0 -x $G0 -n 200" \
	"ip netns exec peer ib_write_bw -F -d vhca1 -x $G1 -n 200 10.0.0.1"
rdma statistic show link vhca0/1

# ---- removal under traffic: the processes see errors, the kernel stays clean
timeout 120 ib_write_bw -F -d vhca0 -x $G0 -D 30 >$T/del.srv 2>&1 &
S1=$!
sleep 1
timeout 120 ip netns exec peer ib_write_bw -F -d vhca1 -x $G1 -D 30 10.0.0.1 >$T/del.cli 2>&1 &
C1=$!
wait_for 30 grep -q "#bytes" $T/del.cli
check "rdma link delete vhca1 under traffic" rdma link delete vhca1
wait $C1
check "the client on the deleted device ends" test $? -ne 124
wait $S1
check "its peer ends too" test $? -ne 124
check "vhca1 is gone" test ! -e /sys/class/infiniband/vhca1
check "rdma link add vhca1 again" ip netns exec peer rdma link add vhca1 type vhca netdev veth1
port_gids
timeout 120 ibv_rc_pingpong -e -d vhca0 -g $G0 -n 100000 >$T/rm.srv 2>&1 &
S2=$!
sleep 1
timeout 120 ip netns exec peer ibv_rc_pingpong -e -d vhca1 -g $G1 -n 100000 10.0.0.1 >$T/rm.cli 2>&1 &
C2=$!
sleep 5
check "rmmod vhca with ibv_rc_pingpong -e running" rmmod vhca
wait $S2
check "the pingpong server ends" test $? -ne 124
wait $C2
check "the pingpong client ends" test $? -ne 124
check "no vhca device is left" no_vhca_left
check "no coherent buffer outstanding at removal" sh -c '! dmesg | grep -q "outstanding at removal"'
ip netns del peer
finish
