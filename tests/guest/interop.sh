#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: RC interoperability of vhca with the kernel's rdma_rxe over a veth
# pair.  rxe0 on veth0 (10.0.0.1) in the initial namespace, where 6.12's
# rxe works and binds UDP 4791 as soon as its module loads; vhca1 on veth1
# (10.0.0.2) in the namespace "peer", a second host with a socket of its
# own.  In both directions (rxe the server and vhca the client, then the
# reverse): ibv_rc_pingpong, ib_write_bw, ib_read_bw, ib_send_bw and
# vhca_rdma, which verifies every byte.  A raw capture on the wire checks
# what each side sends: ICRC, IPv4 and UDP header fields, BTH fields.
# Each direction's tool groups are scenarios of their own
# (DIRECTION-wire, -verbs, -rdma, -cm), with the lossy runs of vhca_rdma
# (both directions) in between.
. "$VHCA_TOP/tests/lib/guest.sh"

export RDMAV_DRIVERS=$VHCA_PROVIDER
PROG=$VHCA_TOP/build/tests/vhca_rdma
PEER="ip netns exec peer"
T=/tmp/interop-test
mkdir -p $T

PAIR_TMO=300

# The debug kernel (KASAN, TCG) moves data about 4 times slower; its
# checkers see every path of either side in the first hundred messages:
# ibv_ud_pingpong -n 100 there instead of 500.  (Its other volume runs are
# the stock kernel's only: the scenarios marked stock.)
S64="-s 65536" N_PP=1000 NBW=300 N_UD=500
[ "$VHCA_KERNEL" = debug ] && N_UD=100

# bw NAME: the average bandwidth (MB/s) a perftest client reported.
bw() {
	awk '/^ *#bytes/ { getline; print $4; exit }' $T/$1.cli
}

# hosts: rdma_rxe and vhca loaded, the namespace peer, rxe0 on veth0 here
# and vhca1 on veth1 there; GR and GV their GID indices of 10.0.0.1 and
# 10.0.0.2.
hosts() {
	check "modprobe rdma_rxe" modprobe rdma_rxe
	check "insmod vhca.ko" load_vhca
	peer_host
	check "rdma link add rxe0 type rxe netdev veth0 (initial namespace)" \
		rdma link add rxe0 type rxe netdev veth0
	check "ip netns exec peer rdma link add vhca1 type vhca netdev veth1" \
		$PEER rdma link add vhca1 type vhca netdev veth1
	check "rxe0's GID table holds 10.0.0.1 (RoCE v2)" wait_for 10 gid_index rxe0 10.0.0.1
	check "vhca1's GID table holds 10.0.0.2 (RoCE v2)" wait_for 10 gid_index vhca1 10.0.0.2
	GR=$(gid_index rxe0 10.0.0.1)
	GV=$(gid_index vhca1 10.0.0.2)
	echo "# GID index: rxe0 $GR, vhca1 $GV"
	ibv_devinfo -d rxe0 | grep -E 'active_mtu|state'
	$PEER ibv_devinfo -d vhca1 | grep -E 'active_mtu|state'
}

# rdma_run NAME TEST...: vhca_rdma, the server on $SD, the client on $CD;
# both must exit 0 within 600 s.
rdma_run() {
	_rn=$1
	shift
	_t0=$(date +%s)
	timeout "$(tmo 600)" $SP $PROG server $SD "$SG" 18600 >$T/$_rn.srv 2>&1 &
	_p=$!
	wait_for 30 listening 18600
	timeout "$(tmo 600)" $CP $PROG client $CD "$CG" $A 18600 "$@" >$T/$_rn.cli 2>&1
	_c=$?
	wait $_p
	_s=$?
	relay "$_rn vhca_rdma client" $T/$_rn.cli
	relay "$_rn vhca_rdma server" $T/$_rn.srv
	echo "# $_rn vhca_rdma: $(($(date +%s) - _t0)) s"
	check "$_rn: vhca_rdma client exits 0 (exit status $_c)" test $_c = 0
	check "$_rn: vhca_rdma server exits 0 (exit status $_s)" test $_s = 0
}

# direction D: the server (device SD, GID index SG, command prefix SP), the
# client (CD, CG, CP) and the server's address A of direction D.
direction() {
	D=$1
	if [ $1 = rxe-server ]; then
		SD=rxe0 SG=$GR SP= CD=vhca1 CG=$GV CP=$PEER A=10.0.0.1
	else
		SD=vhca1 SG=$GV SP=$PEER CD=rxe0 CG=$GR CP= A=10.0.0.2
	fi
	echo "# $D: server $SD, client $CD"
}

show_counters() {
	rdma statistic show link rxe0/1
	$PEER rdma statistic show link vhca1/1
	# Receive backlog drops (second column) per CPU, both namespaces.
	cut -d' ' -f1-2 /proc/net/softnet_stat | tr '\n' ' '
	echo
	# The performance management agents (sysfs counters/, data in 4-octet
	# units) side by side: vhca's, and rxe's where its kernel has one (7.2).
	for _d in rxe0 vhca1; do
		_c=/sys/class/infiniband/$_d/ports/1/counters
		if [ -r $_c/port_xmit_data ]; then
			echo "# $_d PMA: PortXmitData $(cat $_c/port_xmit_data)" \
				"PortRcvData $(cat $_c/port_rcv_data)" \
				"PortXmitPkts $(cat $_c/port_xmit_packets)" \
				"PortRcvPkts $(cat $_c/port_rcv_packets)"
		else
			echo "# $_d PMA: none (no counters/ in sysfs)"
		fi
	done
}

# What each side puts on the wire: every RoCEv2 frame on an interface,
# summed up per source address until SIGTERM.  ICRC recomputed per the
# RoCEv2 annex (masked IP/UDP/BTH fields, 8 bytes of ones in front).
write_wire_py() {
cat >$T/wire.py <<'EOF'
import signal, socket, struct, sys, zlib
from roce_frames import sniffer, frames
ifname, out = sys.argv[1], sys.argv[2]
s = sniffer(ifname, 0.5)
stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
open(out + ".ready", "w").close()
st = {}
def add(src, key, val):
    st.setdefault(src, {}).setdefault(key, set()).add(val)
def count(src, key):
    d = st.setdefault(src, {})
    d[key] = d.get(key, 0) + 1
def frame(f):
    if struct.unpack("!H", f[12:14])[0] != 0x0800:
        return
    ip = f[14:]
    if ip[9] != 17 or ip[0] != 0x45:
        return
    tot = struct.unpack("!H", ip[2:4])[0]
    udp = ip[20:tot]
    if struct.unpack("!H", udp[2:4])[0] != 4791:
        return
    src = socket.inet_ntoa(ip[12:16])
    nh = bytearray(ip[:20]); nh[1] = 0xff; nh[8] = 0xff; nh[10:12] = b"\xff\xff"
    uh = bytearray(udp[:8]); uh[6:8] = b"\xff\xff"
    ib = bytearray(udp[8:]); ib[4] = 0xff
    icrc = zlib.crc32(b"\xff" * 8 + bytes(nh) + bytes(uh) + bytes(ib[:-4]))
    count(src, "frames")
    if icrc != struct.unpack("<I", bytes(udp[-4:]))[0]:
        count(src, "bad_icrc")
    flags = struct.unpack("!H", ip[6:8])[0]
    add(src, "ip_tos", ip[1])
    add(src, "ip_ttl", ip[8])
    add(src, "ip_df", flags >> 14 & 1)
    add(src, "ip_frag", flags & 0x3fff)
    sport, ulen, ucsum = struct.unpack("!HxxHH", udp[:8])
    add(src, "udp_len_ok", ulen == len(udp))
    add(src, "udp_csum", ucsum)
    add(src, "udp_sport_c000", sport >= 0xc000)
    op, bf, pkey = udp[8], udp[9], struct.unpack("!H", udp[10:12])[0]
    add(src, "opcode", "0x%02x" % op)
    add(src, "bth_tver", bf & 15)
    add(src, "bth_mig", bf >> 6 & 1)
    add(src, "bth_pkey", "0x%04x" % pkey)
    add(src, "bth_fb_resv", udp[12])
    add(src, "bth_resv7", udp[16] & 0x7f)
    add(src, "pad_ok", (len(udp) - 8) % 4 == 0)
    if op in (0x0d, 0x0f, 0x10, 0x11):
        syn = udp[20]
        add(src, "aeth_syndrome", "0x%02x" % syn)
        if op == 0x11:
            count(src, "acks_with_msn" if udp[21:24] != b"\0\0\0" else "acks_msn_0")
while not stop:
    try:
        fs = frames(s)
    except socket.timeout:
        continue
    if len(fs) > 1:
        count(socket.inet_ntoa(fs[0][26:30]), "gso_packets")
    for f in fs:
        frame(f)
with open(out, "w") as o:
    for src in sorted(st):
        for k in sorted(st[src]):
            v = st[src][k]
            o.write("%s %s %s\n" % (src, k, v if isinstance(v, int) else
                                     ",".join(str(x) for x in sorted(v))))
EOF
}

# capture_start / capture_stop NAME: the wire summary of what ran between.
capture_start() {
	roce_frames_py
	write_wire_py
	rm -f $T/wire.out.ready
	$PEER /usr/bin/python3 $T/wire.py veth1 $T/wire.out &
	CAP=$!
	wait_for 10 test -e $T/wire.out.ready
}

capture_stop() {
	kill -TERM $CAP
	wait $CAP
	mv $T/wire.out $T/$1.wire
	sed "s/^/# $1: /" $T/$1.wire
}

# wire NAME SRC KEY=VALUE...: what SRC sent had, for each KEY, only VALUE.
wire() {
	_f=$T/$1.wire
	_src=$2
	shift 2
	for _kv in "$@"; do
		grep -qx "$_src ${_kv%%=*} ${_kv#*=}" $_f || return 1
	done
}

# What each side sends, seen on the wire: SEND FIRST/MIDDLE/LAST, ACKs,
# READ requests and responses.
wire_checks() {
	hosts
	direction $1
	capture_start
	pair "$D-wire-pp" "$SP ibv_rc_pingpong -d $SD -g $SG -s 5000 -n 50" \
		"$CP ibv_rc_pingpong -d $CD -g $CG -s 5000 -n 50 $A"
	pair "$D-wire-rd" "$SP ib_read_bw -F -d $SD -x $SG -s 5000 -n 20" \
		"$CP ib_read_bw -F -d $CD -x $CG -s 5000 -n 20 $A"
	capture_stop $D-wire
	for src in 10.0.0.1 10.0.0.2; do
		[ $src = 10.0.0.1 ] && who=rxe || who=vhca
		check "$D wire: $who sent frames" grep -q "^$src frames " $T/$D-wire.wire
		check "$D wire: every ICRC $who sent is right" \
			sh -c "! grep -q '^$src bad_icrc ' $T/$D-wire.wire"
		[ $who = vhca ] &&
			check "$D wire: vhca sends runs of packets as UDP GSO packets (cut back by the capture)" \
				grep -q "^$src gso_packets " $T/$D-wire.wire
		check "$D wire: $who sends IPv4 with DF, offset 0, TOS 0, TTL 64" \
			wire $D-wire $src ip_df=1 ip_frag=0 ip_tos=0 ip_ttl=64
		check "$D wire: $who sends UDP checksum 0, source port >= 0xc000, the right UDP length" \
			wire $D-wire $src udp_csum=0 udp_sport_c000=True udp_len_ok=True
		check "$D wire: $who sends BTH TVer 0, M 0, P_Key 0xffff, reserved bits 0" \
			wire $D-wire $src bth_tver=0 bth_mig=0 bth_pkey=0xffff bth_fb_resv=0 bth_resv7=0 pad_ok=True
		check "$D wire: $who sends AETH syndrome 0x1f (ACK, no credit count) only" \
			wire $D-wire $src aeth_syndrome=0x1f
		check "$D wire: $who counts messages in the MSN of its ACKs" \
			sh -c "grep -q '^$src acks_with_msn ' $T/$D-wire.wire && ! grep -q '^$src acks_msn_0 ' $T/$D-wire.wire"
	done
}

# ibv_rc_pingpong (64 KiB: 1000 round trips on the stock kernel, 50 on the
# debug kernel, where they take 4 to 8 times as long), then perftest,
# 64 KiB, with perftest's default options.  Each side's QP gets the other's
# responder resources as its initiator depth (max_rd_atomic): rxe's 128,
# which vhca's initiator depth (VHCA_MAX_QP_INIT_RD_ATOM) takes.
verbs() {
	hosts
	direction $1
	for args in "" "$S64" "-n $N_PP"; do
		n=$D-pp$(echo "$args" | tr -d ' -')
		check "$D: ibv_rc_pingpong $args" pair $n \
			"$SP ibv_rc_pingpong -d $SD -g $SG $args" \
			"$CP ibv_rc_pingpong -d $CD -g $CG $args $A"
		grep -h 'bytes in' $T/$n.cli
	done
	for t in ib_write_bw ib_read_bw ib_send_bw; do
		n=$D-${t%% *}
		check "$D: $t -s 65536 -n $NBW" pair $n \
			"$SP $t -F -d $SD -x $SG -s 65536 -n $NBW" \
			"$CP $t -F -d $CD -x $CG -s 65536 -n $NBW $A"
		echo "# $D: $t 64 KiB: BW average $(bw $n) MB/s"
	done
	show_counters
}

# vhca_rdma: every byte verified; all its tests (RC only) but the two whose
# expected outcome is vhca's local choice where rxe makes another (no wire
# involved in either): a receive buffer too small is a malformed WQE for
# rxe (LOC_QP_OP_ERR, NAK remote operational error, which vhca reports as
# REM_OP_ERR), and rxe completes a SEND from a bad lkey as WR_FLUSH_ERR
# (seen with 6.12).  Then atomics: vhca_atomic, each value of the
# server's counter returned once to the client's two QPs, and
# ib_atomic_bw; then UC (vhca_uc, ibv_uc_pingpong).
rdma_tests() {
	hosts
	direction $1
	if [ $D = rxe-server ]; then
		tests=$($PROG list | grep -vx err-len)
	else
		tests=$($PROG list | grep -vx err-lkey)
	fi
	rdma_run $D $tests
	# Atomics: the client's QPs add to a counter of the server's device;
	# perftest's (no data checked) on the stock kernel.
	atomic_run $D-atomic $SD "$SG" $CD "$CG"
	[ "$VHCA_KERNEL" = debug ] ||
		check "$D: ib_atomic_bw" pair $D-atomic-bw \
			"$SP ib_atomic_bw -F -d $SD -x $SG -n 100" \
			"$CP ib_atomic_bw -F -d $CD -x $CG -n 100 $A"
	# UC, the client's QP sending: vhca_uc's data tests (rxe's own
	# post_send refusals left out when it sends), and ibv_uc_pingpong
	# checking its bytes on the stock kernel.
	_ucd=
	[ $CD = rxe0 ] && _ucd=--data-only
	uc_run $D-uc $_ucd $CD "$CG" $SD "$SG"
	[ "$VHCA_KERNEL" = debug ] ||
		check "$D: ibv_uc_pingpong -s 4096 -m 1024 -n 20 -c" pair $D-uc-pp \
			"$SP ibv_uc_pingpong -d $SD -g $SG -s 4096 -m 1024 -n 20 -c" \
			"$CP ibv_uc_pingpong -d $CD -g $CG -s 4096 -m 1024 -n 20 -c $A"
	show_counters
}

# UD and the GSI QP: ibv_ud_pingpong, and the RDMA CM (CM MADs on QP1
# between rxe and vhca) with rping -v and udaddy.
ud_cm() {
	hosts
	modprobe rdma_ucm
	direction $1
	for args in "-s 1024 -n $N_UD" "-s 1 -n $N_UD"; do
		n=$D-ud$(echo "$args" | tr -d ' -')
		check "$D: ibv_ud_pingpong $args" pair $n \
			"$SP ibv_ud_pingpong -d $SD -g $SG $args" \
			"$CP ibv_ud_pingpong -d $CD -g $CG $args $A"
	done
	check "$D: rping -v -V -C 50" pair $D-rping \
		"$SP rping -s -a $A -v -V -C 50" "$CP rping -c -a $A -v -V -C 50"
	check "$D: rping verified its data" grep -q "rdma-ping-49:" $T/$D-rping.cli
	check "$D: udaddy" pair $D-udaddy "$SP udaddy" "$CP udaddy -s $A"
	show_counters
}

# The devices and modules go, in the order of the old linear script's end.
removal() {
	check "rdma link delete vhca1" $PEER rdma link delete vhca1
	check "rdma link delete rxe0" rdma link delete rxe0
	check "rmmod vhca" rmmod vhca
	check "rmmod rdma_rxe" rmmod rdma_rxe
	check "no coherent buffer outstanding at removal" no_dmesg "outstanding at removal"
}

rxe_server_wire() { wire_checks rxe-server; }
# Stock kernel only: what each side puts on the wire is the stock kernel's
# to check; the paths, rxe's packets taken and answered, are
# rxe-server-rdma's.
scenario rxe-server-wire rxe_server_wire 60 stock
rxe_server_verbs() { verbs rxe-server; }
# Stock kernel only: the rdma-core and perftest runs repeat the operations
# that rxe-server-rdma runs with every byte checked.
scenario rxe-server-verbs rxe_server_verbs 120 stock
rxe_server_rdma() { rdma_tests rxe-server; }
scenario rxe-server-rdma rxe_server_rdma 60
vhca_server_wire() { wire_checks vhca-server; }
# Stock kernel only: as rxe-server-wire: the paths are vhca-server-rdma's.
scenario vhca-server-wire vhca_server_wire 90 stock
vhca_server_verbs() { verbs vhca-server; }
# Stock kernel only: as rxe-server-verbs: vhca-server-rdma runs the
# operations.
scenario vhca-server-verbs vhca_server_verbs 120 stock
vhca_server_rdma() { rdma_tests vhca-server; }
scenario vhca-server-rdma vhca_server_rdma 60

# The data tests of vhca_rdma again, with loss, reordering, duplication and
# delay on both ends: each side's retransmission (go-back-N on timeout or
# sequence NAK), duplicate handling and READ retry against the other's.
lossy() {
	hosts
	NETEM="loss 5% reorder 5% 50% duplicate 1% delay 1ms"
	netem_both "$NETEM"
	r0=$(counter vhca1 retransmits peer)
	d0=$(counter vhca1 duplicate_requests peer)
	n0=$(counter vhca1 seq_naks peer)
	x0=$(counter rxe0 duplicate_request)
	y0=$(counter rxe0 rcvd_seq_err)
	for dir in rxe-server vhca-server; do
		direction $dir
		rdma_run lossy-$D $($PROG list | grep -v '^err-')
	done
	show_counters
	r=$(($(counter vhca1 retransmits peer) - r0))
	d=$(($(counter vhca1 duplicate_requests peer) - d0))
	n=$(($(counter vhca1 seq_naks peer) - n0))
	x=$(($(counter rxe0 duplicate_request) - x0))
	y=$(($(counter rxe0 rcvd_seq_err) - y0))
	echo "# lossy: vhca1 retransmits $r, duplicate_requests $d, seq_naks $n; rxe0 duplicate_request $x, rcvd_seq_err $y"
	check "lossy: vhca retransmitted ($r) and saw duplicates ($d)" test $r -gt 0 -a $d -gt 0
	check "lossy: rxe saw duplicates ($x)" test $x -gt 0
}
# Stock kernel only: retransmission against rxe: the paths of rc/lossy,
# and of rxe-server-rdma and vhca-server-rdma.
scenario lossy lossy 90 stock

rxe_server_cm() { ud_cm rxe-server; }
# Stock kernel only: the CM and UD paths of vhca with rxe as the peer are
# vhca-server-cm's.
scenario rxe-server-cm rxe_server_cm 60 stock
vhca_server_cm() { ud_cm vhca-server; removal; }
scenario vhca-server-cm vhca_server_cm 100

# UD multicast through the RDMA CM (IPv4 groups, DQPN 0xFFFFFF) between
# rxe and vhca, each direction: mckey's receiver, 10 datagrams of 100
# bytes.  rxe's sender is vhca_mcast's, which waits for its sends: with
# mckey's, rxe sends 1 of 10 (vhca_mcast.c's top comment).
mcast() {
	hosts
	modprobe rdma_ucm
	check "mckey rxe0 -> vhca1 (vhca_mcast's sender)" mckey_pair mck-rv \
		"$PEER stdbuf -oL mckey -m 239.2.2.1 -b 10.0.0.2 -C 10" \
		"$VHCA_TOP/build/tests/vhca_mcast send rxe0 $GR 239.2.2.1 10"
	check "mckey vhca1 -> rxe0" mckey_pair mck-vr \
		"stdbuf -oL mckey -m 239.2.2.2 -b 10.0.0.1 -C 10" \
		"$PEER stdbuf -oL mckey -m 239.2.2.2 -b 10.0.0.2 -s -C 10"
	show_counters
}
# Stock kernel only: the multicast paths are cm/mcast's, on both kernels.
scenario mcast mcast 60 stock

run_scenarios "$@"
