#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: the demo (make demo, Documentation/examples.md).  Load vhca, bind
# two ports to a veth pair in one namespace, list them with the verbs
# tools, move data with ibv_rc_pingpong, the example program and
# ib_write_bw, then the same ib_write_bw between two rdma_rxe ports of the
# same VM, and the ratio.  Each step: a heading, a few lines, a result.
# One scenario (lib.sh's run_scenarios: a fresh guest, a time limit, the
# kernel's checkers watched), so that make check can run it too.
. "$VHCA_TOP/tests/lib/guest.sh"

# The provider, from the build tree: nothing is installed.
export RDMAV_DRIVERS=$VHCA_PROVIDER
T=/tmp/demo
mkdir -p $T
# ib_write_bw: 64 KiB messages, BW_ITERS of them (32 MiB); ibv_rc_pingpong:
# PP_ITERS round trips.  Small: a loaded host slows everything (under TCG
# the vCPUs are threads of the host).
BW_ITERS=500 PP_ITERS=500

step() {
	echo
	echo "== $*"
}

# server_client NAME SERVER_CMD CLIENT_CMD READY: the server in the
# background, the client once the command READY succeeds; output in $T/NAME.srv
# and .cli; both must exit 0.
server_client() {
	timeout 60 sh -c "$2" >$T/$1.srv 2>&1 &
	_sc_p=$!
	wait_for 20 eval "$4"
	timeout 60 sh -c "$3" >$T/$1.cli 2>&1
	_sc_c=$?
	wait $_sc_p
	_sc_s=$?
	[ $_sc_c = 0 ] && [ $_sc_s = 0 ] && return 0
	echo "$1: server exit $_sc_s, client exit $_sc_c; their last lines:"
	tail -n 8 $T/$1.srv $T/$1.cli
	return 1
}

# write_bw NAME SERVER_DEV SERVER_GID CLIENT_DEV CLIENT_GID: ib_write_bw
# from the client's device to the server's (10.0.0.1); BW, its "BW
# average" in MB/s (2^20 bytes/s), "?" appended when perftest warned that
# its clock calibration failed (a loaded host: the figure is unreliable).
write_bw() {
	_wb="ib_write_bw -F -p 18515 -s 65536 -n $BW_ITERS"
	server_client "$1" "$_wb -d $2 -x $3" "$_wb -d $4 -x $5 10.0.0.1" \
		"listening 18515" ||
		return 1
	# The first row of the result table after its header: #bytes
	# #iterations "BW peak" "BW average" MsgRate.
	BW=$(awk '/^ *#bytes/ { h = 1; next } h && $1 ~ /^[0-9]+$/ { print $4; exit }' $T/$1.cli)
	grep -Eq 'differs from nominal|Conflicting CPU frequency' $T/$1.cli && BW="$BW?"
	echo "$1: ib_write_bw -s 65536 -n $BW_ITERS: $BW MB/s"
	[ -n "$BW" ]
}

# pingpong: ibv_rc_pingpong (rdma-core's example of the verbs API).
pingpong() {
	server_client pingpong "ibv_rc_pingpong -c -n $PP_ITERS -d vhca0 -g $G0" \
		"ibv_rc_pingpong -c -n $PP_ITERS -d vhca1 -g $G1 10.0.0.1" \
		"listening 18515" &&
		grep -E 'bytes in|iters in' $T/pingpong.cli
}

# example: the project's example program, the client from 10.0.0.2
# (vhca1), so that each end has a port of its own.
example() {
	modprobe rdma_ucm || return 1
	server_client example "$VHCA_TOP/build/examples/rdma_ep_write server 10.0.0.1" \
		"$VHCA_TOP/build/examples/rdma_ep_write client 10.0.0.1 10.0.0.2" \
		"grep -q listening $T/example.srv" || return 1
	cat $T/example.srv $T/example.cli
}

# rdma_rxe in 6.12 binds UDP port 4791 in the initial namespace when it
# loads, which vhca had (hence rmmod vhca first), and it needs policy
# routing for its two ports on one host: without it, 10.0.0.1 <-> 10.0.0.2
# goes through lo, where there is no rxe device.  Static neighbours force
# the veth wire.
rxe_pair() {
	modprobe rdma_rxe || return 1
	local_pair && wire_routes || return 1
	rdma link add rxe0 type rxe netdev veth0 && rdma link add rxe1 type rxe netdev veth1 &&
		wait_for 10 gid_find rxe1 10.0.0.2
}

# rxe_unpair: the rxe links gone, the rules back to the kernel's.
rxe_unpair() {
	rdma link delete rxe0 && rdma link delete rxe1 || return 1
	routes_reset
	ip rule show | grep -q '^0:.*lookup local'
}

demo() {
	step "1. load vhca.ko, bind vhca0 to veth0 (10.0.0.1) and vhca1 to veth1 (10.0.0.2)"
	check "insmod vhca.ko (after modprobe of ib_core, ib_uverbs, ...)" load_vhca
	local_pair
	check "rdma link add vhca0 type vhca netdev veth0; the same for vhca1" links_add
	port_gids
	rdma link show
	echo "RoCE v2 GID of 10.0.0.1 on vhca0: index $G0; of 10.0.0.2 on vhca1: index $G1"

	step "2. ibv_devices; ibv_devinfo -d vhca0 (the main lines)"
	check "ibv_devices lists vhca0 and vhca1" sh -c \
		"ibv_devices | tee $T/devices && grep -q vhca0 $T/devices && grep -q vhca1 $T/devices"
	check "ibv_devinfo -d vhca0: port 1 active, link layer Ethernet" sh -c \
		"ibv_devinfo -d vhca0 >$T/devinfo &&
		 grep -E 'hca_id|transport|fw_ver|node_guid|vendor_id|phys_port_cnt|state|active_mtu|link_layer' $T/devinfo &&
		 grep -q PORT_ACTIVE $T/devinfo && grep -q 'link_layer:.*Ethernet' $T/devinfo"

	step "3. ibv_rc_pingpong vhca1 -> vhca0: $PP_ITERS round trips of 4 KiB, buffers checked (-c)"
	check "ibv_rc_pingpong" pingpong

	step "4. examples/rdma_ep_write.c (librdmacm endpoint API): a 64 KiB RDMA WRITE and a SEND scattered over 3 SGEs"
	check "rdma_ep_write: every byte checked by the server" example

	step "5. ib_write_bw vhca1 -> vhca0, 64 KiB x $BW_ITERS; then the same between two rdma_rxe ports"
	check "ib_write_bw on vhca" write_bw vhca vhca0 "$G0" vhca1 "$G1"
	VHCA_BW=$BW
	check "rdma link delete vhca0, vhca1; rmmod vhca" sh -c \
		'rdma link delete vhca0 && rdma link delete vhca1 && rmmod vhca'
	ip link del veth0

	check "modprobe rdma_rxe; rxe0 on veth0, rxe1 on veth1" rxe_pair
	X0=$(gid_index rxe0 10.0.0.1)
	X1=$(gid_index rxe1 10.0.0.2)
	check "ib_write_bw on rdma_rxe" write_bw rxe rxe0 "$X0" rxe1 "$X1"
	RXE_BW=$BW
	check "rdma link delete rxe0, rxe1; the routing rules restored" rxe_unpair
	echo
	awk -v v="$VHCA_BW" -v r="$RXE_BW" 'BEGIN {
		q = (v ~ /\?/ || r ~ /\?/) ? " (? perftest clock calibration failed: unreliable)" : ""
		if (v + 0 > 0 && r + 0 > 0)
			printf "ib_write_bw 64 KiB: vhca %s MB/s, rdma_rxe %s MB/s: vhca/rxe = %.2fx%s\n", v, r, v / r, q
		else
			printf "ib_write_bw 64 KiB: vhca %s MB/s, rdma_rxe %s MB/s: no ratio\n", v, r
	}'
}
scenario demo demo 120 stock

run_scenarios "$@"
