#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: kernel CQs of vhca at device registration (the MAD layer's
# ib_alloc_cq), then device removal and rmmod.  Optional arguments: a
# kernel module that exercises kernel CQ verbs as an ib_client and logs
# "vhca_cqtest: DEV: N passed, M failed", and a user program that drives
# user CQs through uverbs (given the uverbs device node).
. "$VHCA_TOP/scripts/guest/lib.sh"

KMOD=$1
UPROG=$2

uverbs_of() {
	for d in /sys/class/infiniband_verbs/uverbs*; do
		[ "$(cat "$d/ibdev")" = "$1" ] && echo "/dev/infiniband/${d##*/}"
	done
}

check "insmod vhca.ko (with its dependencies)" load_vhca
ip link add veth0 type veth peer name veth1
ip link set veth0 up
ip link set veth1 up
mark_dmesg
check "rdma link add vhca0" rdma link add vhca0 type vhca netdev veth0
refuse "no ib_mad CQ error at registration" dmesg_has "Couldn't create ib_mad CQ"
dmesg | tail -n +$((_mark + 1))

if [ -n "$KMOD" ]; then
	mark_dmesg
	check "insmod $(basename "$KMOD")" insmod "$KMOD"
	dmesg | tail -n +$((_mark + 1)) | grep vhca_cqtest
	check "kernel CQ verbs on vhca0" dmesg_has "vhca_cqtest: vhca0: [0-9]+ passed, 0 failed"
	check "rmmod $(basename "$KMOD" .ko)" rmmod "$(basename "$KMOD" .ko)"
fi
if [ -n "$UPROG" ]; then
	# udev is absent: make the device node by hand.
	dev=$(uverbs_of vhca0)
	if [ ! -e "$dev" ]; then
		mkdir -p /dev/infiniband
		mknod "$dev" c $(tr ':' ' ' <"/sys/class/infiniband_verbs/${dev##*/}/dev")
	fi
	check "user CQs on vhca0 ($dev)" "$UPROG" "$dev"
fi

check "rdma link delete vhca0" rdma link delete vhca0
check "rdma link add vhca0 again" rdma link add vhca0 type vhca netdev veth0
check "rmmod vhca with a live device" rmmod vhca
ip link del veth0
finish
