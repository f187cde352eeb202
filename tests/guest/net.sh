#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: the RoCEv2 UDP sockets of vhca.  One listener on port 4791 per
# network namespace with vhca devices, opened by the first device and
# closed by the last, by rmmod and by namespace removal; `rdma link add`
# refused with EADDRINUSE where rdma_rxe holds the port; received packets
# counted on the device owning their destination address.  On the debug
# test build, whose debugfs has the net_xmit hook: RoCEv2 ACKs sent over
# IPv4 and IPv6 between namespaces, to another port of the same namespace
# and to the port's own address, counted on both ends, ICRC checked on the
# wire.  On the stock kernel: RC over IPv6 between namespaces, each frame's
# ICRC checked on the wire.
. "$VHCA_TOP/tests/lib/guest.sh"
export RDMAV_DRIVERS=$VHCA_PROVIDER

IB=/sys/class/infiniband
T=/tmp/net-test
mkdir -p $T

# listeners [NS]: UDP sockets bound to port 4791 (0x12B7) and unconnected
# in a namespace, read from /proc (not with ss: lib.sh's listening).
listeners() {
	${1:+ip netns exec $1} cat /proc/net/udp /proc/net/udp6 |
		grep -c ':12B7 [0-9A-F]*:0000 07'
}

# udp_send ADDRESS BYTES: one datagram of BYTES bytes to ADDRESS:4791.
udp_send() {
	head -c "$2" /dev/zero | bash -c "cat >/dev/udp/$1/4791"
}

# udp_in NS: the UDP datagrams received in namespace NS (Udp InDatagrams,
# which counts a datagram once the encap_rcv of vhca's socket returned).
udp_in() {
	ip netns exec "$1" cat /proc/net/snmp | awk '$1 == "Udp:" && $2 ~ /^[0-9]+$/ { print $2 }'
}

udp_in_above() {
	[ "$(udp_in "$1")" -gt "$2" ]
}

# udp_send_peer ADDRESS BYTES: udp_send to an address of the namespace
# peer, returning once vhca's socket there has taken the datagram.
udp_send_peer() {
	_us=$(udp_in peer)
	udp_send "$1" "$2"
	wait_for 5 udp_in_above peer "$_us" ||
		echo "# udp_send_peer $1 $2: not received in 5 s"
}

# xmit DEV SGID_INDEX ADDRESS: send an RC ACK through the debugfs hook.
xmit() {
	echo "$2 $3" >"/sys/kernel/debug/vhca/$(basename "$(readlink -f $IB/$1/device)")/net_xmit"
}

# ip6_full ADDRESS: an IPv6 address written out in full, eight groups of
# four digits, as the GID table's files show it.
ip6_full() {
	awk -v a="$1" 'BEGIN {
		n = split(tolower(a), g, ":")
		k = 0
		at = -1
		for (i = 1; i <= n; i++) {
			if (g[i] == "") {
				if (at < 0)
					at = k
				continue
			}
			p[++k] = g[i]
		}
		s = ""
		for (i = 1; i <= k + 1; i++) {
			if (i - 1 == at)
				for (z = k; z < 8; z++)
					s = s ":0000"
			if (i <= k)
				s = s ":" substr("0000", 1, 4 - length(p[i])) p[i]
		}
		print substr(s, 2)
	}'
}

# gid6_index DEV ADDRESS: the index of the RoCE v2 GID of an IPv6 address.
gid6_index() {
	gid_full_index "$1" "$(ip6_full "$2")"
}

# icrc_py: $T/icrc.py, which prints the ICRC of every RoCEv2 frame seen on
# an interface, recomputed per the RoCEv2 annex (masked IP/UDP/BTH fields,
# 8 bytes of ones in front), "gso" after those cut from a GSO packet.
icrc_py() {
	roce_frames_py
	cat >$T/icrc.py <<-'EOF'
	import socket, struct, sys, zlib
	from roce_frames import sniffer, frames
	ifname, count, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
	s = sniffer(ifname, 30)
	open(out, "w").write("ready\n")
	seen, fs = 0, []
	while seen < count:
	    if not fs:
	        fs = frames(s)
	        gso = " gso" if len(fs) > 1 else ""
	    f = fs.pop(0)
	    et, ip = struct.unpack("!H", f[12:14])[0], f[14:]
	    if et == 0x0800 and ip[9] == 17:
	        nh = bytearray(ip[:20]); nh[1] = 0xff; nh[8] = 0xff; nh[10:12] = b"\xff\xff"
	        tot = struct.unpack("!H", ip[2:4])[0]
	        udp, ver = ip[20:tot], 4
	    elif et == 0x86dd and ip[6] == 17:
	        nh = bytearray(ip[:40]); nh[0:4] = b"\x6f\xff\xff\xff"; nh[7] = 0xff
	        udp, ver = ip[40:40 + struct.unpack("!H", ip[4:6])[0]], 6
	    else:
	        continue
	    if struct.unpack("!H", udp[2:4])[0] != 4791:
	        continue
	    uh = bytearray(udp[:8]); uh[6:8] = b"\xff\xff"
	    ib = bytearray(udp[8:]); ib[4] = 0xff
	    icrc = zlib.crc32(b"\xff" * 8 + bytes(nh) + bytes(uh) + bytes(ib[:-4]))
	    ok = icrc == struct.unpack("<I", bytes(ib[-4:]))[0]
	    with open(out, "a") as o:
	        o.write("v%d opcode 0x%02x sport %d icrc %s%s\n" %
	                (ver, ib[0], struct.unpack("!H", udp[0:2])[0], "ok" if ok else "BAD", gso))
	    seen += 1
	EOF
}

# peer_ns: the namespace peer, a second host: veth2 (10.0.1.1) here, its end
# veth3 (10.0.1.2) there.
peer_ns() {
	ip netns add peer
	ip link add veth2 type veth peer name veth3
	ip link set veth3 netns peer
	ip addr add 10.0.1.1/24 dev veth2
	ip link set veth2 up
	ip netns exec peer ip addr add 10.0.1.2/24 dev veth3
	ip netns exec peer ip link set lo up
	ip netns exec peer ip link set veth3 up
}

# vhca2_peer: vhca2 on veth3 in the namespace peer.
vhca2_peer() {
	check "ip netns exec peer rdma link add vhca2 netdev veth3" \
		ip netns exec peer rdma link add vhca2 type vhca netdev veth3
}

# One socket per namespace, shared by its devices, closed by the last.
sockets() {
	check "insmod vhca.ko (with its dependencies)" load_vhca
	check "no listener on 4791 before any device" test "$(listeners)" = 0
	veth_pair veth0 veth1 10.0.0.1 10.0.0.2
	peer_ns
	check "rdma link add vhca0 netdev veth0" rdma link add vhca0 type vhca netdev veth0
	check "one listener on 4791 with one device" test "$(listeners)" = 1
	check "rdma link add vhca1 netdev veth1" rdma link add vhca1 type vhca netdev veth1
	grep -h ':12B7 ' /proc/net/udp /proc/net/udp6
	check "still one listener with two devices in the namespace" test "$(listeners)" = 1
	check "no listener in the second namespace yet" test "$(listeners peer)" = 0
	vhca2_peer
	check "one listener in the second namespace" test "$(listeners peer)" = 1
	check "still one listener in the initial namespace" test "$(listeners)" = 1
	check "rdma link delete vhca0" rdma link delete vhca0
	check "the socket stays while vhca1 uses it" test "$(listeners)" = 1
	check "rdma link delete vhca1" rdma link delete vhca1
	check "removing the last device of the namespace closes its socket" test "$(listeners)" = 0
	check "the second namespace keeps its socket" test "$(listeners peer)" = 1
}
scenario sockets sockets 60

# Receive from the wire: a datagram counted on the device owning its
# destination address, too short or unowned ones dropped.
rdma_wire() {
	check "insmod vhca.ko (with its dependencies)" load_vhca
	peer_ns
	vhca2_peer
	check "GID table of vhca2 holds 10.0.1.2" \
		wait_for 5 has_gid vhca2 0000:0000:0000:0000:0000:ffff:0a00:0102
	rx0=$(counter vhca2 rx_packets)
	udp_send 10.0.1.2 20
	check "a 20-byte datagram to 10.0.1.2:4791 counts as one packet on vhca2" \
		wait_for 5 counter_is vhca2 rx_packets $((rx0 + 1))
	check "... and 20 bytes" test "$(counter vhca2 rx_bytes)" = 20
	udp_send_peer 10.0.1.2 15
	check "a datagram shorter than BTH + ICRC is dropped" test "$(counter vhca2 rx_packets)" = $((rx0 + 1))
	ip link add veth4 type veth peer name veth5
	ip link set veth5 netns peer
	ip addr add 10.0.2.1/24 dev veth4
	ip link set veth4 up
	ip netns exec peer ip addr add 10.0.2.2/24 dev veth5
	ip netns exec peer ip link set veth5 up
	udp_send_peer 10.0.2.2 20
	check "a datagram to an address no vhca device owns is dropped" \
		test "$(counter vhca2 rx_packets)" = $((rx0 + 1))
}
scenario rdma-wire rdma_wire 60

# Transmit (test build only): ACKs through the debugfs hook, between
# namespaces over IPv4 and IPv6, to another port of this namespace and to
# the port's own address.
xmit_acks() {
	check "insmod vhca.ko (with its dependencies)" load_vhca
	veth_pair veth0 veth1 10.0.0.1 10.0.0.2
	peer_ns
	vhca2_peer
	if ! ls /sys/kernel/debug/vhca/*/net_xmit >/dev/null 2>&1; then
		skip "transmit" "no net_xmit hook in this build (the debug build has it)"
		return
	fi
	check "rdma link add vhca0 netdev veth2" rdma link add vhca0 type vhca netdev veth2
	check "rdma link add vhca1 netdev veth0" rdma link add vhca1 type vhca netdev veth0
	ip addr add 2001:db8:1::1/64 dev veth2 nodad
	ip netns exec peer ip addr add 2001:db8:1::2/64 dev veth3 nodad
	check "GID table of vhca0 holds 10.0.1.1" \
		wait_for 5 has_gid vhca0 0000:0000:0000:0000:0000:ffff:0a00:0101
	check "GID table of vhca0 holds 2001:db8:1::1" wait_for 5 gid6_index vhca0 2001:db8:1::1
	check "GID table of vhca2 holds 2001:db8:1::2" wait_for 5 gid6_index vhca2 2001:db8:1::2
	check "GID table of vhca1 holds 10.0.0.1" \
		wait_for 5 has_gid vhca1 0000:0000:0000:0000:0000:ffff:0a00:0001
	i4=$(gid_index vhca0 10.0.1.1)
	i6=$(gid6_index vhca0 2001:db8:1::1)
	rx0=$(counter vhca2 rx_packets)
	rb0=$(counter vhca2 rx_bytes)
	icrc_py
	rm -f $T/icrc.out
	ip netns exec peer /usr/bin/python3 $T/icrc.py veth3 2 $T/icrc.out &
	wait_for 10 grep -qs ready $T/icrc.out
	check "net_xmit: an ACK from vhca0 to 10.0.1.2 (IPv4)" xmit vhca0 "$i4" 10.0.1.2
	check "net_xmit: an ACK from vhca0 to 2001:db8:1::2 (IPv6)" xmit vhca0 "$i6" 2001:db8:1::2
	wait
	cat $T/icrc.out
	check "both on the wire with a correct ICRC" \
		test "$(grep -c 'opcode 0x11 .* icrc ok' $T/icrc.out)" = 2
	check "... one IPv4 and one IPv6" sh -c "grep -q '^v4 ' $T/icrc.out && grep -q '^v6 ' $T/icrc.out"
	check "vhca0 counts 2 packets sent" test "$(counter vhca0 tx_packets)" = 2
	check "... of 20 bytes each (BTH, AETH, ICRC)" test "$(counter vhca0 tx_bytes)" = 40
	check "vhca2 in the peer namespace counts both received" \
		wait_for 5 counter_is vhca2 rx_packets $((rx0 + 2))
	check "... and their 40 bytes" test "$(counter vhca2 rx_bytes)" = $((rb0 + 40))
	# Two ports of one namespace on a veth pair: delivered in the kernel
	# (local.sh has the details; with force_wire, veth1 would have to
	# accept a local source).
	for k in all/rp_filter veth1/rp_filter; do echo 0 >/proc/sys/net/ipv4/conf/$k; done
	echo 1 >/proc/sys/net/ipv4/conf/veth1/accept_local
	check "rdma link add vhca3 netdev veth1" rdma link add vhca3 type vhca netdev veth1
	check "GID table of vhca3 holds 10.0.0.2" \
		wait_for 5 has_gid vhca3 0000:0000:0000:0000:0000:ffff:0a00:0002
	check "net_xmit: an ACK from vhca1 to 10.0.0.2, vhca3's address here" \
		xmit vhca1 "$(gid_index vhca1 10.0.0.1)" 10.0.0.2
	check "vhca3 receives it" wait_for 5 counter_is vhca3 rx_packets 1
	check "vhca1 counts it sent" test "$(counter vhca1 tx_packets)" = 1
	# The namespace's GID index (add_gid/del_gid) follows the addresses:
	# a GID added is delivered to in the kernel, a GID deleted no more.
	ip addr add 10.0.0.4/24 dev veth1
	check "GID table of vhca3 holds an added 10.0.0.4" \
		wait_for 5 has_gid vhca3 0000:0000:0000:0000:0000:ffff:0a00:0004
	check "net_xmit: an ACK from vhca1 to 10.0.0.4" \
		xmit vhca1 "$(gid_index vhca1 10.0.0.1)" 10.0.0.4
	check "vhca3 receives it, delivered in the kernel" \
		wait_for 5 counter_is vhca3 local_rx_packets 2
	ip addr del 10.0.0.4/24 dev veth1
	check "... until 10.0.0.4 leaves the GID table" \
		wait_for 5 no_gid vhca3 0000:0000:0000:0000:0000:ffff:0a00:0004
	xmit vhca1 "$(gid_index vhca1 10.0.0.1)" 10.0.0.4
	sleep 1
	check "then an ACK to 10.0.0.4 takes the wire (vhca1 delivered 2 in the kernel)" \
		test "$(counter vhca1 local_tx_packets)" = 2
	check "... and vhca3 receives nothing more" \
		test "$(counter vhca3 rx_packets)" = 2
	check "net_xmit: an ACK from vhca0 to its own 10.0.1.1" xmit vhca0 "$i4" 10.0.1.1
	check "vhca0 receives it" wait_for 5 counter_is vhca0 rx_packets 1
	refuse "net_xmit: IPv4 source to IPv6 destination is refused" \
		xmit vhca0 "$i4" 2001:db8:1::2
	check "the refused send is not counted" test "$(counter vhca0 tx_packets)" = 3
}
scenario xmit xmit_acks 90

# RC over IPv6 between namespaces (the GIDs' addresses; the pingpong's
# own exchange over IPv4): ibv_rc_pingpong of 5000-byte SENDs
# (five packets each way, the first four of one length: one UDP GSO
# packet), every frame on the wire cut back and its ICRC checked.
wire_v6() {
	check "insmod vhca.ko (with its dependencies)" load_vhca
	peer_ns
	check "rdma link add vhca0 netdev veth2" rdma link add vhca0 type vhca netdev veth2
	vhca2_peer
	ip addr add 2001:db8:1::1/64 dev veth2 nodad
	ip netns exec peer ip addr add 2001:db8:1::2/64 dev veth3 nodad
	check "GID table of vhca0 holds 2001:db8:1::1" wait_for 5 gid6_index vhca0 2001:db8:1::1
	check "GID table of vhca2 holds 2001:db8:1::2" wait_for 5 gid6_index vhca2 2001:db8:1::2
	icrc_py
	rm -f $T/icrc.out
	ip netns exec peer /usr/bin/python3 $T/icrc.py veth3 100 $T/icrc.out &
	_cap=$!
	wait_for 10 grep -qs ready $T/icrc.out
	check "ibv_rc_pingpong -s 5000 over IPv6" pair v6 \
		"ip netns exec peer ibv_rc_pingpong -d vhca2 -g $(gid6_index vhca2 2001:db8:1::2) -s 5000 -n 20" \
		"ibv_rc_pingpong -d vhca0 -g $(gid6_index vhca0 2001:db8:1::1) -s 5000 -n 20 10.0.1.2"
	wait $_cap
	check "100 frames captured, all IPv6 with a correct ICRC" \
		test "$(grep -c '^v6 .* icrc ok' $T/icrc.out)" = 100
	check "... SEND FIRST and MIDDLE among them, cut back from GSO packets" \
		sh -c "grep -q '^v6 opcode 0x00 .* gso$' $T/icrc.out && grep -q '^v6 opcode 0x01 .* gso$' $T/icrc.out"
}
scenario wire-v6 wire_v6 90 stock

# rmmod with a live device in a second namespace, then namespace removal
# with a live device.
rmmod_netns() {
	check "insmod vhca.ko (with its dependencies)" load_vhca
	peer_ns
	vhca2_peer
	check "rmmod vhca with a live device in the second namespace" rmmod vhca
	check "rmmod left no socket in the second namespace" test "$(listeners peer)" = 0
	check "rmmod left no socket in the initial namespace" test "$(listeners)" = 0
	check "rmmod left nothing behind" no_vhca_left
	check "insmod vhca.ko again" load_vhca
	check "rdma link add vhca2 in the second namespace again" \
		ip netns exec peer rdma link add vhca2 type vhca netdev veth3
	check "one listener there" test "$(listeners peer)" = 1
	ip netns del peer
	check "ip netns del with a live device removes it" wait_for 30 no_vhca_left
}
scenario rmmod rmmod_netns 60

# A netdev moved out of the namespace, the namespace deleted at once: the
# device's removal is still queued while the namespace goes.
netns_move() {
	check "insmod vhca.ko (with its dependencies)" load_vhca
	ip netns add mv
	ip link add veth2 type veth peer name veth3
	ip link set veth3 netns mv
	ip netns exec mv ip link set veth3 up
	check "rdma link add vhca3 in namespace mv" ip netns exec mv rdma link add vhca3 type vhca netdev veth3
	ip -n mv link set veth3 netns 1
	ip netns del mv
	check "moving the netdev out and deleting the namespace removes the device" \
		wait_for 30 no_vhca_left
	check "no listener left in the initial namespace" test "$(listeners)" = 0
}
scenario netns-move netns_move 60

# Port 4791 taken by rdma_rxe in the initial namespace: EADDRINUSE and one
# kernel log line there, a second namespace still works.  The kernel log
# of the whole boot has no buffer left over at a removal.
rxe_port() {
	check "insmod vhca.ko (with its dependencies)" load_vhca
	veth_pair veth0 veth1 10.0.0.1 10.0.0.2
	check "modprobe rdma_rxe" modprobe rdma_rxe
	check "rdma_rxe listens on 4791 in the initial namespace" test "$(listeners)" -ge 1
	mark_dmesg
	refuse "rdma link add vhca0 in the initial namespace fails" \
		sh -c 'rdma link add vhca0 type vhca netdev veth0 2>'$T/err
	cat $T/err
	check "... with EADDRINUSE" grep -q 'Address already in use' $T/err
	ns=$(readlink /proc/self/ns/net)
	dmesg | tail -n +$((_mark + 1)) >$T/log
	cat $T/log
	check "... with one kernel log line" test "$(grep -c vhca $T/log)" = 1
	check "... naming port 4791 and namespace $ns" \
		grep -qF "vhca0: UDP port 4791 is in use in network namespace $ns" $T/log
	check "... and nothing is left behind" no_vhca_left
	ip netns add peer
	ip link set veth1 netns peer
	ip netns exec peer ip link set veth1 up
	check "in a second namespace rdma link add works" \
		ip netns exec peer rdma link add vhca1 type vhca netdev veth1
	check "one vhca listener there" test "$(listeners peer)" = 1
	check "rdma link delete vhca1" rdma link delete vhca1
	check "rmmod vhca" rmmod vhca
	check "rmmod rdma_rxe" rmmod rdma_rxe
	check "no coherent buffer outstanding at any removal" \
		no_dmesg "outstanding at removal"
}
scenario rxe-port rxe_port 60

# Only an RC QP's peer may talk to it: vhca_peer attacks QP pairs
# between two ports of this namespace, with the real QPN, rkey and PSN,
# from an unprivileged UDP socket bound to the peer's address (its
# datagrams arrive on lo), the same bound to veth1 (leaving by veth1,
# arriving on veth0, the port's own netdev), from root in the namespace
# evil with the peer's address spoofed (arriving on vethe0, not the
# port's veth0; accept_local and rp_filter 0, local_pair's, let it
# through), and from another QP of the peer's port (local delivery).
# The victims' memory
# stays as it was, rx_wrong_peer counts the packets, the pairs still work.
wrong_peer() {
	export RDMAV_DRIVERS=$VHCA_PROVIDER
	ports_one_ns
	ns_host evil vethe0 vethe1 10.9.0.1 10.9.0.2
	ip -n evil route add 10.0.0.0/24 via 10.9.0.1
	timeout "$(tmo 60)" $VHCA_TOP/build/tests/vhca_peer vhca0 "$G0" vhca1 "$G1" \
		/run/netns/evil >$T/peer 2>&1
	rc=$?
	relay vhca_peer $T/peer
	check "vhca_peer exits 0" test $rc = 0
	check "rdma statistic shows rx_wrong_peer" sh -c \
		'rdma statistic show link vhca0/1 | grep -q rx_wrong_peer'
	rdma statistic show link vhca0/1
}
scenario wrong-peer wrong_peer 60

run_scenarios "$@"
