#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: the demo.  Load vhca, bind two ports to a veth pair, show them.
. "$VHCA_TOP/scripts/guest/lib.sh"

show() {
	echo
	echo "# $*"
	"$@"
}

check "insmod vhca.ko" load_vhca
veth_pair veth0 veth1 10.0.0.1 10.0.0.2
show rdma link add vhca0 type vhca netdev veth0
show rdma link add vhca1 type vhca netdev veth1
show rdma link show
show rdma dev show
show ls -l /sys/class/infiniband/
for d in vhca0 vhca1; do
	S=/sys/class/infiniband/$d
	echo
	echo "# $S"
	echo "node_type:  $(cat $S/node_type)"
	echo "node_guid:  $(cat $S/node_guid)"
	echo "parent:     $(readlink -f $S/device) ($(cat $S/device/modalias))"
	echo "port 1:     $(cat $S/ports/1/state), $(cat $S/ports/1/phys_state), $(cat $S/ports/1/rate), link layer $(cat $S/ports/1/link_layer)"
	for g in $S/ports/1/gids/*; do
		v=$(cat "$g" 2>/dev/null) || continue
		[ "$v" = 0000:0000:0000:0000:0000:0000:0000:0000 ] && continue
		echo "gid ${g##*/}:      $v ($(cat $S/ports/1/gid_attrs/types/${g##*/}))"
	done
done
show rdma link delete vhca1
show rdma link show
show rmmod vhca
show rdma link show
finish
