#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: local delivery.  Two vhca ports in one namespace exchange their
# packets inside the kernel: the local_tx_packets/local_rx_packets counters
# grow with tx_packets, and the UDP socket and the interfaces see nothing of
# them.  With the module parameter force_wire the same runs take the IP
# stack, and across two namespaces the wire is taken regardless.  Then
# device removal and rmmod while packets are being delivered locally.
. "$VHCA_TOP/tests/lib/guest.sh"

export RDMAV_DRIVERS=$VHCA_PROVIDER
PROG=$VHCA_TOP/build/tests/vhca_rdma
T=/tmp/local-test
mkdir -p $T
FW=/sys/module/vhca/parameters/force_wire

PAIR_TMO=300
PEER= VHCA1_NS=
PORT=18600
# 64 KiB messages of the local runs: 500 round trips of ibv_rc_pingpong and
# 500 of ib_write_bw; on the debug kernel, whose checkers see the local
# delivery paths in the first messages, 50 and 60; and there 200 round
# trips of ibv_rc_pingpong's 4 KiB default, not its 1000 (26 s).
N_LOCAL=500 N_BW=500 PP=
[ "$VHCA_KERNEL" = debug ] && N_LOCAL=50 N_BW=60 PP="-n 200"

# udp_in [PREFIX]: UDP datagrams received in a namespace (IPv4 and IPv6);
# here read with the shell's read, no process.
udp_in() {
	if [ -n "$1" ]; then
		_a=$($1 cat /proc/net/snmp | awk '/^Udp: [0-9]/ { print $2 }')
		_b=$($1 cat /proc/net/snmp6 | awk '$1 == "Udp6InDatagrams" { print $2 }')
	else
		_a= _b=
		while read -r _k _v _; do
			case "$_k $_v" in
			"Udp: "[0-9]*) _a=$_v ;;
			esac
		done </proc/net/snmp
		while read -r _k _v; do
			[ "$_k" = Udp6InDatagrams ] && _b=$_v
		done </proc/net/snmp6
	fi
	echo $((_a + ${_b:-0}))
}

# if_tx [PREFIX]: bytes sent by all interfaces of a namespace (bytes, not
# packets: a run of vhca's packets crosses an interface as one UDP GSO
# packet).
if_tx() {
	if [ -n "$1" ]; then
		$1 sh -c 'cat /sys/class/net/*/statistics/tx_bytes' |
			awk '{ n += $1 } END { print n }'
		return
	fi
	_n=0
	for _f in /sys/class/net/*/statistics/tx_bytes; do
		read -r _v <"$_f" && _n=$((_n + _v))
	done
	echo $_n
}

# both FUNCTION: its value here plus in the peer namespace, if in use.
both() {
	if [ -n "$PEER" ]; then
		echo $(($($1) + $($1 "$PEER")))
	else
		$1
	fi
}

# snap: the counters measure compares against.
snap() {
	L0=$(total local_tx_packets) R0=$(total local_rx_packets)
	P0=$(total tx_packets) U0=$(both udp_in) I0=$(both if_tx)
	D0=$(total direct_packets) B0=$(total tx_bytes)
}

# measure NAME: the growth since snap, printed; sets L R P U I D B.
measure() {
	L=$(($(total local_tx_packets) - L0)) R=$(($(total local_rx_packets) - R0))
	P=$(($(total tx_packets) - P0)) U=$(($(both udp_in) - U0))
	I=$(($(both if_tx) - I0)) D=$(($(total direct_packets) - D0))
	B=$(($(total tx_bytes) - B0))
	echo "# $1: tx_packets $P, tx_bytes $B, local_tx_packets $L, local_rx_packets $R, direct_packets $D, UDP datagrams received $U, interface bytes sent $I"
}

# is_local NAME: what the last run sent was all delivered in the kernel.
is_local() {
	measure "$1"
	check "$1: packets were sent ($P)" test "$P" -gt 100
	check "$1: all of them delivered locally ($L of $P)" test "$L" = "$P"
	check "$1: ... and received as such ($R)" test "$R" = "$P"
	check "$1: SENDs and WRITEs placed without packets ($D of $P)" \
		test "$((D * 4))" -gt "$P"
	check "$1: the UDP socket saw none of them ($U datagrams)" test "$U" -lt 10
	check "$1: the interfaces barely moved ($I bytes for $B)" test "$((I * 10))" -lt "$B"
}

# is_wire NAME: what the last run sent all took the IP stack.
is_wire() {
	measure "$1"
	check "$1: packets were sent ($P)" test "$P" -gt 100
	check "$1: none delivered locally ($L, $R, $D)" \
		test "$L" = 0 -a "$R" = 0 -a "$D" = 0
	check "$1: the UDP sockets received them ($U datagrams for $P)" test "$U" -ge "$P"
	check "$1: the interfaces carried them ($I bytes for $B)" test "$I" -ge "$B"
}

# runs MODE LABEL PREFIX ITERS: ibv_rc_pingpong (default, and 64 KiB x
# ITERS) and vhca_rdma between vhca0 and vhca1 (the client under PREFIX),
# each checked with is_MODE.
runs() {
	F=$(echo "$2" | tr -c 'a-z0-9\n' '-')
	for args in "$PP" "-s 65536 -n $4"; do
		_n="pp$(echo "$args" | tr -d ' -')-$F"
		snap
		check "ibv_rc_pingpong $args ($2)" pair "$_n" \
			"ibv_rc_pingpong -d vhca0 -g $G0 $args" \
			"$3 ibv_rc_pingpong -d vhca1 -g $G1 $args 10.0.0.1"
		is_$1 "ibv_rc_pingpong $args ($2)"
	done
	snap
	check "vhca_rdma ($2)" rdma_pair "rdma-$F" "$3"
	relay "vhca_rdma ($2) client" $T/rdma-$F.cli
	relay "vhca_rdma ($2) server" $T/rdma-$F.srv
	is_$1 "vhca_rdma ($2)"
	PORT=$((PORT + 1))
}

# rdma_pair NAME PREFIX: vhca_rdma, the server on vhca0, the client on
# vhca1 (under PREFIX) once the server listens on TCP port PORT; both must
# exit 0 within PAIR_TMO seconds.  (Not pair: its ends of the programs'
# output would put their KTAP lines at the wrong level.)
rdma_pair() {
	_rp_t0=$(date +%s)
	timeout "$(tmo $PAIR_TMO)" $PROG server vhca0 $G0 $PORT >$T/$1.srv 2>&1 &
	_rp_p=$!
	wait_for 30 listening $PORT
	timeout "$(tmo $PAIR_TMO)" $2 $PROG client vhca1 $G1 10.0.0.1 $PORT >$T/$1.cli 2>&1
	_rp_c=$?
	wait $_rp_p
	_rp_s=$?
	echo "# $1: $(($(date +%s) - _rp_t0)) s, server exit $_rp_s, client exit $_rp_c"
	[ $_rp_c = 0 ] && [ $_rp_s = 0 ]
}

# bw LABEL PREFIX: ib_write_bw 64 KiB x 500, its bandwidth printed.
bw() {
	check "ib_write_bw 64 KiB ($1)" pair "bw-$1" \
		"ib_write_bw -F -d vhca0 -x $G0 -s 65536 -n $N_BW" \
		"$2 ib_write_bw -F -d vhca1 -x $G1 -s 65536 -n $N_BW 10.0.0.1"
	echo "# ib_write_bw 64 KiB ($1): $(awk '$1 == 65536 { print $4 " MB/s" }' $T/bw-$1.cli)"
}

# Two ports in one namespace: delivered in the kernel.
local_runs() {
	check "insmod vhca.ko" load_vhca
	check "force_wire is off by default" test "$(cat $FW)" = N
	local_pair
	check "rdma link add vhca0, vhca1" links_add
	port_gids
	runs local "one namespace" "" $N_LOCAL
	bw local ""
	rdma statistic show link vhca0/1
	rdma statistic show link vhca1/1
}
scenario runs local_runs 100

# Two QPs of one port (vhca1 there too, unused).
self() {
	ports_one_ns
	snap
	check "ibv_rc_pingpong on one port (vhca0 to itself)" pair pp-self \
		"ibv_rc_pingpong -d vhca0 -g $G0 $PP" \
		"ibv_rc_pingpong -d vhca0 -g $G0 $PP 10.0.0.1"
	is_local "ibv_rc_pingpong on one port"
}
scenario self self 40

# The same with force_wire: through the IP stack and the socket.  The wire
# between two ports of one namespace is lo, where the debug kernel
# retransmits a lot: fewer 64 KiB messages there.
force_wire() {
	ports_one_ns
	check "echo 1 > force_wire" sh -c "echo 1 >$FW"
	runs wire "one namespace, force_wire" "" 100
	bw force_wire ""
	check "echo 0 > force_wire" sh -c "echo 0 >$FW"
}
# Stock kernel only: the wire path between two local ports is
# rc/perftest's and rc/lossy's.
scenario force-wire force_wire 100 stock

# rdma link delete while ib_write_bw is being delivered locally.
# local_grown: local deliveries since snap are in the thousands.
local_grown() {
	test $(($(total local_tx_packets) - L0)) -gt 2000
}
delete_busy() {
	ports_one_ns
	snap
	busy del "ib_write_bw -F -d vhca0 -x $G0 -D 30" \
		"ib_write_bw -F -d vhca1 -x $G1 -D 30 10.0.0.1"
	check "ib_write_bw -D 30 is delivering locally" wait_for 60 local_grown
	check "rdma link delete vhca1 under local traffic" rdma link delete vhca1
	busy_end "the client on the deleted device ends" "its peer ends too"
	cat $T/del.srv $T/del.cli
	check "rdma link delete vhca0" rdma link delete vhca0
}
scenario delete-busy delete_busy 60

# Two namespaces: the wire regardless.
two_ns() {
	ports_two_ns
	PEER="ip netns exec peer"
	runs wire "two namespaces" "ip netns exec peer" 100
	rdma statistic show link vhca0/1
	ip netns exec peer rdma statistic show link vhca1/1
	check "rdma link delete vhca0, vhca1" sh -c \
		'rdma link delete vhca0 && ip netns exec peer rdma link delete vhca1'
}
# Stock kernel only: ports in two namespaces take the wire path
# (rc/lossy); runs and self run local delivery.
scenario two-ns two_ns 90 stock

# rmmod while a pingpong on one port is being delivered locally.
rmmod_busy() {
	check "insmod vhca.ko" load_vhca
	local_pair
	check "rdma link add vhca0" rdma link add vhca0 type vhca netdev veth0
	wait_for 10 gid_index vhca0 10.0.0.1 >/dev/null
	G0=$(gid_index vhca0 10.0.0.1)
	l0=$(counter vhca0 local_tx_packets)
	busy rm "ibv_rc_pingpong -e -d vhca0 -g $G0 -n 100000" \
		"ibv_rc_pingpong -e -d vhca0 -g $G0 -n 100000 10.0.0.1"
	# Delivering once the two QPs exchanged their first hundred packets.
	flowing() {
		[ $(($(counter vhca0 local_tx_packets) - l0)) -gt 100 ]
	}
	check "ibv_rc_pingpong -e traffic on vhca0, delivered locally" wait_for 60 flowing
	check "rmmod vhca with ibv_rc_pingpong -e running on one port" rmmod vhca
	busy_end "the pingpong client ends" "the pingpong server ends"
	check "no coherent buffer outstanding at removal" no_dmesg "outstanding at removal"
}
scenario rmmod-busy rmmod_busy 30

run_scenarios "$@"
