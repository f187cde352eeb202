#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: the device as libibverbs programs see it.  ibv_devices and
# ibv_devinfo -v through the uninstalled provider, attributes against the
# driver's limits, the GID table following address changes, port events
# seen by ibv_asyncwatch, the mmap rules of user contexts, and processes
# holding contexts across `rdma link delete` (DEVICE_FATAL, no crash).
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

run_scenarios "$@"
