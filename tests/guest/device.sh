#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: the device as libibverbs programs see it.  ibv_devices and
# ibv_devinfo -v through the uninstalled provider, attributes against the
# driver's limits, the GID table following address changes, port events
# seen by ibv_asyncwatch, the mmap rules of user contexts, and processes
# holding contexts across `rdma link delete` (DEVICE_FATAL, no crash), and
# the port's performance management agent against rdma statistic.
. "$VHCA_TOP/tests/lib/guest.sh"

export RDMAV_DRIVERS=$VHCA_PROVIDER
CTX=$VHCA_TOP/build/tests/vhca_ctx
IB=/sys/class/infiniband
HDR=$VHCA_TOP/drivers/infiniband/sw/vhca/vhca_param.h
T=/tmp/device-test
mkdir -p $T

# limit NAME: a VHCA_* constant of the driver, as ibv_devinfo prints it.
limit() {
	v=$(sed -n "s/^#define VHCA_$1[[:space:]]\{1,\}\([0-9]*\)$/\1/p" "$HDR")
	[ -n "$v" ] || echo "no VHCA_$1 in $HDR" >&2
	echo "$v"
}

# devinfo_is FIELD VALUE: ibv_devinfo -v -d vhca0 prints FIELD with VALUE.
devinfo_is() {
	grep -Eq "^[[:space:]]*$1:[[:space:]]+$2\$" $T/devinfo
}

# wait_line FILE PATTERN: FILE gets a line matching PATTERN within 10 s.
wait_line() {
	wait_for 10 grep -q "$2" "$1"
}

# uverbs_of DEV: the uverbs class device of an ib device.
uverbs_of() {
	grep -lx "$1" /sys/class/infiniband_verbs/uverbs*/ibdev | xargs -r dirname
}

# two_ports: vhca0 on veth0 (10.0.0.1), vhca1 on veth1 (10.0.0.2).
two_ports() {
	check "insmod vhca.ko" load_vhca
	veth_pair veth0 veth1 10.0.0.1 10.0.0.2
	check "rdma link add vhca0, vhca1" links_add
}

# The uverbs devices, ibv_devices and ibv_devinfo -v against the driver's
# limits and sysfs; active_mtu following the netdev's MTU.
devinfo() {
	two_ports
	check "uverbs devices exist for both" sh -c "[ -n '$(uverbs_of vhca0)' ] && [ -n '$(uverbs_of vhca1)' ]"
	check "abi_version is the driver's" test "$(cat "$(uverbs_of vhca0)/abi_version")" = \
		"$(sed -n 's/^#define VHCA_UVERBS_ABI_VERSION \([0-9]*\)$/\1/p' "$VHCA_TOP/include/uapi/rdma/vhca-abi.h")"
	ibv_devices >$T/devices 2>&1
	cat $T/devices
	check "ibv_devices lists vhca0 with its GUID" \
		grep -q "vhca0[[:space:]]*$(tr -d : <$IB/vhca0/node_guid)" $T/devices
	check "ibv_devices lists vhca1 with its GUID" \
		grep -q "vhca1[[:space:]]*$(tr -d : <$IB/vhca1/node_guid)" $T/devices
	# The GID of 10.0.0.1 checked below is added by the core after the
	# device is registered.
	wait_for 10 has_gid vhca0 0000:0000:0000:0000:0000:ffff:0a00:0001
	check "ibv_devinfo -v -d vhca0" sh -c "ibv_devinfo -v -d vhca0 >$T/devinfo 2>&1"
	cat $T/devinfo
	for f in "max_qp MAX_QP" "max_qp_wr MAX_QP_WR" "max_sge MAX_SGE" \
		"max_sge_rd MAX_SGE" "max_cq MAX_CQ" "max_cqe MAX_CQE" "max_mr MAX_MR" \
		"max_pd MAX_PD" "max_qp_rd_atom MAX_QP_RD_ATOM" \
		"max_qp_init_rd_atom MAX_QP_INIT_RD_ATOM" "max_srq MAX_SRQ" \
		"max_srq_wr MAX_SRQ_WR" "max_srq_sge MAX_SGE" "max_ah MAX_AH" \
		"local_ca_ack_delay LOCAL_ACK_DELAY"; do
		set -- $f
		check "ibv_devinfo $1 is the driver's VHCA_$2" devinfo_is "$1" "$(limit "$2")"
	done
	check "ibv_devinfo vendor_id is set (0xffffff, none: software HCA)" devinfo_is vendor_id 0xffffff
	check "ibv_devinfo max_mr_size is 2^40" devinfo_is max_mr_size 0x10000000000
	check "ibv_devinfo max_msg_sz is 2^31" devinfo_is max_msg_sz 0x80000000
	check "ibv_devinfo max_dm_size is the driver's VHCA_MAX_DM_SIZE" \
		devinfo_is "maximum available device memory" "$(limit MAX_DM_SIZE)Bytes"
	check "ibv_devinfo transport is InfiniBand (RoCE)" devinfo_is transport "InfiniBand \(0\)"
	check "ibv_devinfo atomic_cap is ATOMIC_HCA" devinfo_is atomic_cap "ATOMIC_HCA \(1\)"
	check "ibv_devinfo node_guid matches sysfs" devinfo_is node_guid "$(cat $IB/vhca0/node_guid)"
	check "ibv_devinfo phys_port_cnt 1" devinfo_is phys_port_cnt 1
	check "ibv_devinfo port state PORT_ACTIVE" devinfo_is state "PORT_ACTIVE \(4\)"
	check "ibv_devinfo link_layer Ethernet" devinfo_is link_layer Ethernet
	check "ibv_devinfo active_mtu 1024 for a 1500-byte netdev" devinfo_is active_mtu "1024 \(3\)"
	check "ibv_devinfo max_mtu 4096" devinfo_is max_mtu "4096 \(5\)"
	check "ibv_devinfo completion timestamp_mask: all 64 bits" \
		devinfo_is "completion timestamp_mask" 0xffffffffffffffff
	check "ibv_devinfo hca_core_clock 1000000 kHz (a nanosecond clock)" \
		devinfo_is hca_core_clock 1000000kHZ
	check "ibv_devinfo lists the RoCE v2 GID of 10.0.0.1" grep -q "GID\[.*\]:.*::ffff:10.0.0.1, RoCE v2" $T/devinfo
	ip link set veth0 mtu 9000
	ip link set veth1 mtu 9000
	check "active_mtu follows the netdev MTU (9000 -> 4096)" \
		sh -c 'ibv_devinfo -d vhca0 | grep -q "active_mtu:.*4096"'
}
# Stock kernel only: the attributes ibv_devinfo reports: the query paths
# every scenario opens a device through.
scenario devinfo devinfo 60 stock

# The GID table follows the netdev's addresses.
gid_table() {
	two_ports
	ip addr add 10.0.0.3/24 dev veth0
	check "GID of an added IPv4 address appears" wait_for 5 has_gid vhca0 0000:0000:0000:0000:0000:ffff:0a00:0003
	check "ibv_devinfo -v shows it" sh -c 'ibv_devinfo -v -d vhca0 | grep -q "::ffff:10.0.0.3, RoCE v2"'
	ip addr del 10.0.0.3/24 dev veth0
	check "GID of a deleted IPv4 address goes" wait_for 5 no_gid vhca0 0000:0000:0000:0000:0000:ffff:0a00:0003
	ip -6 addr add fd00::1/64 dev veth0 nodad
	check "GID of an added IPv6 address appears" wait_for 5 has_gid vhca0 fd00:0000:0000:0000:0000:0000:0000:0001
	ip -6 addr del fd00::1/64 dev veth0
	check "GID of a deleted IPv6 address goes" wait_for 5 no_gid vhca0 fd00:0000:0000:0000:0000:0000:0000:0001
}
scenario gid-table gid_table 60

# asyncwatch: ibv_asyncwatch on vhca0, its events in $T/async.
asyncwatch() {
	stdbuf -oL ibv_asyncwatch -d vhca0 >$T/async 2>&1 &
	AW=$!
}

# Port events reach user contexts.
port_events() {
	two_ports
	asyncwatch
	check "ibv_asyncwatch opens vhca0" wait_line $T/async "async event FD"
	ip link set veth1 down
	check "ibv_asyncwatch sees IBV_EVENT_PORT_ERR" wait_line $T/async "IBV_EVENT_PORT_ERR"
	ip link set veth1 up
	check "ibv_asyncwatch sees IBV_EVENT_PORT_ACTIVE" wait_line $T/async "IBV_EVENT_PORT_ACTIVE"
}
scenario port-events port_events 60

# The mmap rules of a context's pages.
mmap_rules() {
	two_ports
	$CTX mmap vhca1 >$T/mmap 2>&1
	relay mmap $T/mmap
}
scenario mmap mmap_rules 60

# Contexts held across rdma link delete: DEVICE_FATAL to each, no crash.
fatal() {
	two_ports
	asyncwatch
	wait_line $T/async "async event FD"
	$CTX fatal vhca0 >$T/fatal 2>&1 &
	F1=$!
	$CTX fatal-raw vhca0 >$T/fatal-raw 2>&1 &
	F2=$!
	check "a libibverbs context is open on vhca0" wait_line $T/fatal READY
	check "a raw context with mapped pages is open on vhca0" wait_line $T/fatal-raw READY
	check "rdma link delete vhca0 with open contexts" rdma link delete vhca0
	check "ibv_asyncwatch sees IBV_EVENT_DEVICE_FATAL" wait_line $T/async "IBV_EVENT_DEVICE_FATAL"
	check "the libibverbs holder exits cleanly" wait $F1
	check "the raw holder exits cleanly" wait $F2
	relay fatal $T/fatal
	relay fatal-raw $T/fatal-raw
	# ibv_asyncwatch reads events until killed, DEVICE_FATAL included.
	kill $AW 2>/dev/null
	check "vhca0 is gone" test ! -e $IB/vhca0
	check "ibv_devices still lists vhca1 only" sh -c 'ibv_devices | grep -q vhca1 && ! ibv_devices | grep -q vhca0'
}
scenario fatal fatal 60

# net_link DEV NETDEV: DEV's parent lists exactly NETDEV in its net/
# directory (where rdma-core's tests look for a device's netdev), a link
# to that netdev.
net_link() {
	[ "$(ls /sys/class/infiniband/$1/device/net)" = "$2" ] &&
		[ "$(readlink -f /sys/class/infiniband/$1/device/net/$2)" = \
			"$(readlink -f /sys/class/net/$2)" ]
}

# Renamed devices are still matched (by modalias, not by name); the
# parent's net/ link follows a renamed netdev.
rename() {
	two_ports
	check "vhca0's parent lists veth0 in net/" net_link vhca0 veth0
	check "vhca1's parent lists veth1 in net/" net_link vhca1 veth1
	check "rdma dev set vhca1 name foo0" rdma dev set vhca1 name foo0
	check "ibv_devinfo -d foo0 opens the renamed device" sh -c 'ibv_devinfo -d foo0 | grep -q PORT_ACTIVE'
	check "ip link set veth1 name wire1" sh -c 'ip link set veth1 down && ip link set veth1 name wire1 && ip link set wire1 up'
	check "foo0's parent lists wire1 in net/, not veth1" net_link foo0 wire1
	check "rmmod vhca with a renamed device" rmmod vhca
	check "no coherent buffer outstanding at any removal" no_dmesg "outstanding at removal"
}
scenario rename rename 60

# pma_sysfs DEV WHEN: DEV's PMA through the core's sysfs counters/ (a Get
# of PortCountersExtended through process_mad, vhca_mad.c) read between
# two reads of rdma statistic's counters, each within those two (data in
# units of 4 octets: tx_bytes / 4); PortRcvErrors is rx_icrc_errors.
pma_sysfs() {
	_ps=0
	for _m in port_xmit_data:tx_bytes:4 port_rcv_data:rx_bytes:4 \
		port_xmit_packets:tx_packets:1 port_rcv_packets:rx_packets:1 \
		port_rcv_errors:rx_icrc_errors:1; do
		_f=${_m%%:*} _r=${_m#*:}
		_c=${_r%:*} _u=${_r#*:}
		_lo=$(($(counter $1 $_c) / _u))
		_v=$(cat $IB/$1/ports/1/counters/$_f)
		# Past the core's 10 ms cache of hw_counters.
		sleep 0.05
		_hi=$(($(counter $1 $_c) / _u))
		echo "# $1 $2: counters/$_f $_v, rdma statistic $_c / $_u: $_lo..$_hi"
		[ "$_lo" -le "$_v" ] && [ "$_v" -le "$_hi" ] || _ps=1
	done
	return $_ps
}

# pma_gids: both ports' IPv6 GIDs are in their tables.
pma_gids() {
	has_gid vhca0 fd00:0000:0000:0000:0000:0000:0000:0001 &&
		has_gid vhca1 fd00:0000:0000:0000:0000:0000:0000:0002
}

# pma_field NAME: a figure vhca_pma printed ("# pcx PortXmitData N").
pma_field() {
	sed -n "s/^# $1 \([0-9a-fx]*\)$/\1/p" $T/pma
}

# pma_within FIELD LO HI: vhca_pma's FIELD is within LO..HI.
pma_within() {
	_pw=$(pma_field "$1")
	echo "# vhca_pma $1 $_pw, rdma statistic: $2..$3"
	[ -n "$_pw" ] && [ "$2" -le "$_pw" ] && [ "$_pw" -le "$3" ]
}

# The port's performance management agent against rdma statistic, before
# and after ibv_rc_pingpong between vhca0 and vhca1: the core's sysfs
# counters/, and vhca_pma's Gets from vhca0 over the GSI QPs to vhca1's
# agent (tests/progs/vhca_pma.c, IPv6 GIDs), each figure within rdma statistic's
# before and after it; the reset (Set) refused.  perfquery is tried: it
# cannot reach a RoCE port (it registers an SMP agent, which needs QP0).
# Stock kernel only: the debug kernel sees process_mad pass every CM MAD
# on (cm.sh) and the agent's answers in the KUnit suite vhca_mad.
pma() {
	ports_one_ns
	check "modprobe ib_umad" modprobe ib_umad
	_t0=$(date +%s)
	check "counters/ of vhca0 and vhca1 exist (process_mad)" \
		test -r $IB/vhca0/ports/1/counters/port_xmit_data -a \
		-r $IB/vhca1/ports/1/counters/port_xmit_data
	check "no unicast/multicast counters claimed (CapMask bit 9 clear)" \
		test ! -e $IB/vhca0/ports/1/counters/unicast_xmit_packets
	check "vhca0's counters/ is rdma statistic's (idle)" pma_sysfs vhca0 idle
	check "vhca1's counters/ is rdma statistic's (idle)" pma_sysfs vhca1 idle
	_x0=$(cat $IB/vhca1/ports/1/counters/port_xmit_data)
	check "ibv_rc_pingpong 500 x 4 KiB, vhca0 to vhca1" pair pma-pp \
		"ibv_rc_pingpong -e -d vhca0 -g $G0 -n 500 -s 4096" \
		"ibv_rc_pingpong -e -d vhca1 -g $G1 -n 500 -s 4096 10.0.0.1"
	check "vhca0's counters/ is rdma statistic's (after)" pma_sysfs vhca0 after
	check "vhca1's counters/ is rdma statistic's (after)" pma_sysfs vhca1 after
	_x1=$(cat $IB/vhca1/ports/1/counters/port_xmit_data)
	check "vhca1's PortXmitData grew by the 2 MB sent ($_x0 to $_x1)" \
		test $((_x1 - _x0)) -ge $((500 * 4096 / 4))

	# IPv6 GIDs: with IPv4 ones the MAD layer cannot match an answer to
	# its request (it takes the GRH's DGID where an IPv4 header is).
	ip -6 addr add fd00::1/64 dev veth0 nodad
	ip -6 addr add fd00::2/64 dev veth1 nodad
	check "vhca0 and vhca1 have the GIDs of fd00::1 and fd00::2" \
		wait_for 5 pma_gids
	_s6=$(gid_full_index vhca0 fd00:0000:0000:0000:0000:0000:0000:0001)
	_lo_tb=$(counter vhca1 tx_bytes) _lo_rb=$(counter vhca1 rx_bytes)
	_lo_tp=$(counter vhca1 tx_packets) _lo_rp=$(counter vhca1 rx_packets)
	timeout "$(tmo 60)" $VHCA_TOP/build/tests/vhca_pma vhca0 "$_s6" \
		fd00::2 >$T/pma 2>&1
	_pr=$?
	relay "vhca_pma vhca0 to vhca1" $T/pma
	check "vhca_pma exits 0 (exit status $_pr)" test $_pr = 0
	_hi_tb=$(counter vhca1 tx_bytes) _hi_rb=$(counter vhca1 rx_bytes)
	_hi_tp=$(counter vhca1 tx_packets) _hi_rp=$(counter vhca1 rx_packets)
	check "ClassPortInfo: AllPortSelect, extended counters (no IETF ones)" \
		test "$(pma_field 'cpi CapMask')" = 0x0500
	for _k in pc pcx; do
		check "$_k PortXmitData is vhca1's tx_bytes / 4" pma_within \
			"$_k PortXmitData" $((_lo_tb / 4)) $((_hi_tb / 4))
		check "$_k PortRcvData is vhca1's rx_bytes / 4" pma_within \
			"$_k PortRcvData" $((_lo_rb / 4)) $((_hi_rb / 4))
		check "$_k PortXmitPkts is vhca1's tx_packets" pma_within \
			"$_k PortXmitPkts" $_lo_tp $_hi_tp
		check "$_k PortRcvPkts is vhca1's rx_packets" pma_within \
			"$_k PortRcvPkts" $_lo_rp $_hi_rp
	done
	check "Set PortCounters (a reset) is refused: unsupported (0x000c)" \
		test "$(pma_field 'set status')" = 0x000c
	check "no counter was reset" test "$(counter vhca1 tx_bytes)" -ge $_hi_tb

	perfquery -x -C vhca0 -P 1 >$T/perfquery 2>&1
	_pq=$?
	cat $T/perfquery
	if [ $_pq != 0 ] && grep -q "client_register for mgmt 1 failed" $T/perfquery; then
		skip "perfquery -x -C vhca0" "perfquery registers an SMP agent: RoCE ports have no QP0"
	else
		check "perfquery -x -C vhca0 answers (exit status $_pq)" test $_pq = 0
	fi
	echo "# pma: $(($(date +%s) - _t0)) s after the set-up"
}
scenario pma pma 60 stock

run_scenarios "$@"
