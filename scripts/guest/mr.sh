#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: protection domains and memory regions from the kernel's side.  The
# MAD layer allocates its PD with ib_alloc_pd() when a device registers,
# which needs get_dma_mr (local_dma_lkey); removal deregisters it again.
. "$VHCA_TOP/scripts/guest/lib.sh"

check "insmod vhca.ko (with its dependencies)" load_vhca
ip link add veth0 type veth peer name veth1
ip link set veth0 up
ip link set veth1 up

mark_dmesg
check "rdma link add vhca0 netdev veth0" rdma link add vhca0 type vhca netdev veth0
refuse "ib_mad allocated its PD (no 'Couldn't create ib_mad PD')" \
	dmesg_has "Couldn't create ib_mad PD"
echo "MAD messages (errors past the PD are expected until CQ/QP exist):"
dmesg | tail -n +$((_mark + 1)) | grep -i mad || true

check "rdma link delete vhca0" rdma link delete vhca0
check "rmmod vhca" rmmod vhca
finish
