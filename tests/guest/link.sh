#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: device lifecycle.  vhca devices created with `rdma link add` on a
# veth pair (both ends here, then one end in a namespace of its own), their
# sysfs view, port state following the netdev, refusals of bad input, and
# removal by `rdma link delete`, by netdev removal and by rmmod.
. "$VHCA_TOP/tests/lib/guest.sh"

IB=/sys/class/infiniband

# port_is DEV STATE: port 1 of DEV is in STATE (ACTIVE, DOWN).
port_is() {
	read -r _pi_n _pi_s <"$IB/$1/ports/1/state" && [ "$_pi_s" = "$2" ]
}

# The EUI-64 node GUID made from a netdev's MAC, as sysfs prints it.
guid_of() {
	set -- $(tr ':' ' ' <"/sys/class/net/$1/address")
	printf '%02x%s:%sff:fe%s:%s%s\n' $((0x$1 ^ 2)) "$2" "$3" "$4" "$5" "$6"
}

# two_ports: vhca0 on veth0 (10.0.0.1) and vhca1 on veth1 (10.0.0.2), here.
two_ports() {
	check "insmod vhca.ko (with its dependencies)" load_vhca
	veth_pair veth0 veth1 10.0.0.1 10.0.0.2
	check "rdma link add vhca0 netdev veth0" rdma link add vhca0 type vhca netdev veth0
	check "rdma link add vhca1 netdev veth1" rdma link add vhca1 type vhca netdev veth1
}

# Two ports on a veth pair in this namespace: rdma link show, the sysfs
# view, the GID tables.
veth_pair_ports() {
	two_ports
	rdma link show
	check "rdma link show lists vhca0 on veth0" sh -c 'rdma link show | grep -q "^link vhca0/1 .*netdev veth0"'
	check "rdma link show lists vhca1 on veth1" sh -c 'rdma link show | grep -q "^link vhca1/1 .*netdev veth1"'
	check "sysfs has $IB/vhca0 and vhca1" test -d $IB/vhca0 -a -d $IB/vhca1
	check "parent of vhca0 is a platform device vhca.N" \
		sh -c "readlink -f $IB/vhca0/device | grep -q '/platform/vhca\.[0-9]*$'"
	check "parent modalias is platform:vhca" test "$(cat $IB/vhca0/device/modalias)" = platform:vhca
	check "vhca0 and vhca1 have distinct parents" \
		test "$(readlink -f $IB/vhca0/device)" != "$(readlink -f $IB/vhca1/device)"
	check "node_type is CA" sh -c "grep -q '^1: CA' $IB/vhca0/node_type"
	check "node_guid is the EUI-64 of veth0's MAC" test "$(cat $IB/vhca0/node_guid)" = "$(guid_of veth0)"
	check "link layer is Ethernet" test "$(cat $IB/vhca0/ports/1/link_layer)" = Ethernet
	check "port 1 of vhca0 is ACTIVE" port_is vhca0 ACTIVE
	check "GID table of vhca0 holds 10.0.0.1 as RoCE v2" \
		wait_for 5 has_gid vhca0 0000:0000:0000:0000:0000:ffff:0a00:0001
	check "GID table of vhca1 holds 10.0.0.2 as RoCE v2" \
		wait_for 5 has_gid vhca1 0000:0000:0000:0000:0000:ffff:0a00:0002
}
scenario veth-pair veth_pair_ports 60

# Port state following the netdev's and its peer's carrier.
carrier() {
	two_ports
	check "port 1 of vhca0 is ACTIVE" port_is vhca0 ACTIVE
	ip link set veth1 down
	check "vhca1 goes DOWN with veth1 down" port_is vhca1 DOWN
	check "vhca0 goes DOWN when its peer loses carrier" wait_for 5 port_is vhca0 DOWN
	ip link set veth1 up
	check "vhca0 is ACTIVE again" wait_for 5 port_is vhca0 ACTIVE
	check "vhca1 is ACTIVE again" wait_for 5 port_is vhca1 ACTIVE
}
scenario carrier carrier 60

# Bad input: a clear error and one kernel log line, nothing created.
bad_input() {
	two_ports
	veth_pair veth2 veth3 10.0.1.1 10.0.1.2
	refuse "rdma link add on a missing netdev fails" rdma link add vhcax type vhca netdev nosuchdev
	mark_dmesg
	refuse "rdma link add on a netdev already bound fails" rdma link add vhca2 type vhca netdev veth0
	check "... and the kernel log says the netdev is bound" dmesg_has 'vhca2: netdev veth0 is already bound'
	mark_dmesg
	refuse "rdma link add with a name in use fails" rdma link add vhca0 type vhca netdev veth2
	check "... and the kernel log says the name exists" dmesg_has 'vhca0: an RDMA device of that name exists'
	mark_dmesg
	refuse "rdma link add on a non-Ethernet netdev fails" rdma link add vhcalo type vhca netdev lo
	check "... and the kernel log says it is not Ethernet" dmesg_has 'vhcalo: netdev lo is not an Ethernet device'
	check "bad input created no device" test "$(ndevs)" = 2
	check "veth2 can still be bound" rdma link add vhca2 type vhca netdev veth2
	check "rdma link delete vhca2" rdma link delete vhca2
}
scenario bad-input bad_input 60

# Removal by rdma link delete and by deleting the netdev.
removal() {
	two_ports
	check "rdma link delete vhca1" rdma link delete vhca1
	check "vhca1 is gone from sysfs" test ! -e $IB/vhca1
	check "one platform device is left" test "$(ls /sys/bus/platform/devices | grep -c '^vhca\.')" = 1
	check "veth1 can be bound again after delete" rdma link add vhca1 type vhca netdev veth1
	ip link del veth0
	check "deleting the veth pair removes vhca0 and vhca1" wait_for 20 no_vhca_left
}
scenario removal removal 60

# A second host: one veth end in a namespace of its own.
namespace() {
	check "insmod vhca.ko (with its dependencies)" load_vhca
	peer_host
	check "rdma link add vhca0 in the initial namespace" rdma link add vhca0 type vhca netdev veth0
	check "ip netns exec peer rdma link add vhca1" ip netns exec peer rdma link add vhca1 type vhca netdev veth1
	refuse "veth1 is not visible from the initial namespace" rdma link add vhcay type vhca netdev veth1
	check "both devices are listed" test "$(ndevs)" = 2
	check "vhca1 is ACTIVE" wait_for 5 port_is vhca1 ACTIVE
	check "GID table of vhca1 holds the namespace's 10.0.0.2" \
		wait_for 5 has_gid vhca1 0000:0000:0000:0000:0000:ffff:0a00:0002
	ip netns del peer
	check "deleting the namespace removes both devices" wait_for 30 no_vhca_left
}
scenario namespace namespace 60

# rmmod with live devices, then load/unload cycles; the kernel log of the
# whole boot has no buffer left over at a removal.
rmmod_cycles() {
	check "insmod vhca.ko (with its dependencies)" load_vhca
	veth_pair veth0 veth1 10.0.0.1 10.0.0.2
	check "rdma link add before rmmod" links_add
	check "rmmod vhca with two live devices" rmmod vhca
	check "rmmod left nothing behind" no_vhca_left
	i=0
	cycles_ok=1
	while [ $i -lt 5 ]; do
		{ load_vhca && links_add && rdma link delete vhca0 && rmmod vhca &&
			no_vhca_left; } || cycles_ok=0
		i=$((i + 1))
	done
	check "5 load/add/delete/rmmod cycles" test $cycles_ok = 1
	check "no coherent buffer outstanding at any removal" \
		no_dmesg "outstanding at removal"
	check "no refused coherent free" no_dmesg "refused free"
}
scenario rmmod rmmod_cycles 60

run_scenarios "$@"
