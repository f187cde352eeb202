#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: make profile.  Where a vhca data path spends the guest's CPU: perf
# record -e cpu-clock (TCG has no PMU: the timer samples), system-wide,
# while an ib_write_bw or ib_send_bw of 64 KiB messages runs between two
# vhca ports in one namespace (local delivery) and between two namespaces
# over a veth pair (the wire), there also with jumbo frames (veth MTU 9000,
# path MTU 4096).  For each, $VHCA_OUT/profile-NAME.txt holds
# perf report's hottest symbols (kernel and user, self time) and the
# figure perftest printed.  Fails only when a tool fails; the profile
# itself is a reading, never a verdict.
. "$VHCA_TOP/tests/lib/guest.sh"

export RDMAV_DRIVERS=$VHCA_TOP/build/provider/libvhca
T=/tmp/profile
mkdir -p $T
ITERS=${1:-2000}
PORT=18515
# The hottest symbols shown per profile.
TOP=40

# profile NAME TOOL SERVER_DEV SERVER_GID CLIENT_PREFIX CLIENT_DEV
# CLIENT_GID [ARGS]: TOOL -s 65536 -n ITERS ARGS, perf recording the whole
# guest for as long as the client runs.
profile() {
	_pn=$1 _pt=$2 _pa=${8:-}
	timeout 300 $_pt -F -p $PORT -d "$3" -x "$4" -s 65536 -n $ITERS $_pa \
		>$T/$_pn.srv 2>&1 &
	_ps=$!
	wait_for 20 listening $PORT
	perf record -q -e cpu-clock -F 999 -a -o $T/$_pn.data -- \
		timeout 300 $5 $_pt -F -p $PORT -d "$6" -x "$7" -s 65536 \
		-n $ITERS $_pa 10.0.0.1 >$T/$_pn.cli 2>$T/$_pn.perf
	_pc=$?
	wait $_ps
	_pw=$?
	must "$_pn: $_pt under perf record (client $_pc, server $_pw)" \
		test $_pc = 0 -a $_pw = 0 || {
		tail -n 5 $T/$_pn.cli $T/$_pn.srv $T/$_pn.perf
		return
	}
	{
		echo "== $_pn: $_pt -s 65536 -n $ITERS${_pa:+ $_pa}"
		awk '/^ *#bytes/ { print; getline; print; exit }' $T/$_pn.cli
		perf report -i $T/$_pn.data --stdio --no-children \
			--sort dso,sym --percent-limit 0.5 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -n $TOP
	} >$T/$_pn.txt
	check "$_pn: perf report has samples" grep -q '%' $T/$_pn.txt
	cp $T/$_pn.txt "$VHCA_OUT/profile-$_pn.txt"
	cat $T/$_pn.txt
}

echo 0 >/proc/sys/kernel/kptr_restrict
echo -1 >/proc/sys/kernel/perf_event_paranoid
check "insmod vhca.ko" load_vhca
one_ns() { local_pair && links_add; }
check "vhca0 and vhca1 in one namespace" one_ns
port_gids
profile local-write ib_write_bw vhca0 "$G0" "" vhca1 "$G1"
profile local-send ib_send_bw vhca0 "$G0" "" vhca1 "$G1"
check "rdma link delete vhca0, vhca1" sh -c 'rdma link delete vhca0 && rdma link delete vhca1'
ip link del veth0

two_ns() {
	peer_host && rdma link add vhca0 type vhca netdev veth0 &&
		ip netns exec peer rdma link add vhca1 type vhca netdev veth1
}
check "vhca0 here, vhca1 in the namespace peer" two_ns
port_gids
profile wire-write ib_write_bw vhca0 "$G0" "ip netns exec peer" vhca1 "$G1"
check "veth MTU 9000 at both ends" sh -c \
	'ip link set veth0 mtu 9000 && ip -n peer link set veth1 mtu 9000'
profile wire-write-4096 ib_write_bw vhca0 "$G0" "ip netns exec peer" vhca1 \
	"$G1" "-m 4096"
check "rdma link delete vhca0, vhca1" sh -c \
	'rdma link delete vhca0 && ip netns exec peer rdma link delete vhca1'
ip netns del peer
check "rmmod vhca" rmmod vhca
finish
