#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest, in a pair (vm-run.sh -2): two hosts, two kernels with nothing
# shared but a wire, their eth0s joined by a QEMU datagram backend.  Guest
# a (10.1.0.1) runs the servers, guest b (10.1.0.2) the clients:
# ibv_rc_pingpong, ib_write_bw, rping -v and NVMe over RDMA between vhca
# in a and vhca in b, and ibv_rc_pingpong and ib_write_bw between vhca in
# a and rdma_rxe in b.  Both guests
# run the same scenarios in the same order; a client retries while its
# server, in the other guest, is not listening yet (it may still be
# booting or setting up), and each side checks its own end.
. "$VHCA_TOP/tests/lib/guest.sh"
. "$VHCA_TOP/tests/lib/nvme.sh"

export RDMAV_DRIVERS=$VHCA_PROVIDER
T=/tmp/hosts-test
mkdir -p $T
case "${VHCA_ROLE:-}" in
a) ME=10.1.0.1 PEER=10.1.0.2 ;;
b) ME=10.1.0.2 PEER=10.1.0.1 ;;
*)
	echo "hosts.sh runs in a pair of guests: vm-run.sh -2" >&2
	exit 1
	;;
esac
# How long a server waits for its client, and a client for its server.
WAIT=240
# NVMe over RDMA (nvme-lib.sh): the ramdisk's and each fio job's MiB, the
# time limits' factor.
RD_MB=32 FIO_MB=4 K=1

# wire: eth0 addressed and up, the other host answering.
wire() {
	[ -d /sys/class/net/eth0 ] || modprobe virtio_net
	wait_for 10 test -d /sys/class/net/eth0 &&
		ip addr replace "$ME/24" dev eth0 && ip link set eth0 up &&
		wait_for $WAIT busybox ping -c 1 -W 1 "$PEER" >/dev/null
}

# port DRIVER: insmod vhca.ko (vhca) or modprobe rdma_rxe (rxe), a device
# DEV on eth0 and G, its RoCE v2 GID index of this host's address.
port() {
	check "eth0 up, $PEER answers" wire
	if [ "$1" = rxe ]; then
		DEV=rxe0
		check "modprobe rdma_rxe" modprobe rdma_rxe
	else
		DEV=vhca0
		check "insmod vhca.ko" load_vhca
	fi
	check "rdma link add $DEV type $1 netdev eth0" rdma link add $DEV type "$1" netdev eth0
	wait_for 10 gid_index $DEV "$ME" >/dev/null
	G=$(gid_index $DEV "$ME")
	check "$DEV has a RoCE v2 GID for $ME ($G)" test -n "$G"
}

# client NAME COMMAND: run the client until it gets past connecting to its
# server (which the other guest may not have started yet), WAIT s at most.
client() {
	_cl_end=$(($(cut -d. -f1 /proc/uptime) + WAIT))
	while :; do
		timeout 120 sh -c "$2" >$T/$1.cli 2>&1
		_cl_rc=$?
		[ $_cl_rc = 0 ] && break
		grep -Eqi "couldn't connect|unable to init the socket|connection refused|rdma_connect|event RDMA_CM_EVENT_REJECTED|RDMA_CM_EVENT_UNREACHABLE|wait for CONNECTED" \
			$T/$1.cli || break
		[ "$(cut -d. -f1 /proc/uptime)" -lt $_cl_end ] || break
		sleep 1
	done
	tail -n 5 $T/$1.cli
	return $_cl_rc
}

# server NAME COMMAND: run the server, which waits for its one client.
server() {
	timeout $WAIT sh -c "$2" >$T/$1.srv 2>&1
	_sv_rc=$?
	tail -n 5 $T/$1.srv
	return $_sv_rc
}

# both NAME SERVER CLIENT: this host's end of a pair run; its output in
# $T/$F.srv or $T/$F.cli.
both() {
	F=$(echo "$1" | tr -c 'a-z0-9\n' '-')
	if [ "$VHCA_ROLE" = a ]; then
		check "$1: server exits 0" server "$F" "$2"
	else
		check "$1: client exits 0" client "$F" "$3"
	fi
}

pingpong() {
	port vhca
	both "ibv_rc_pingpong" "ibv_rc_pingpong -d vhca0 -g $G" \
		"ibv_rc_pingpong -d vhca0 -g $G $PEER"
	both "ibv_rc_pingpong -s 65536 -n 200" "ibv_rc_pingpong -d vhca0 -g $G -s 65536 -n 200" \
		"ibv_rc_pingpong -d vhca0 -g $G -s 65536 -n 200 $PEER"
}
scenario pingpong pingpong 900

# moved: vhca0 sent and received more than 100 packets.
moved() {
	[ "$(counter vhca0 tx_packets)" -gt 100 ] && [ "$(counter vhca0 rx_packets)" -gt 100 ]
}

write_bw() {
	port vhca
	both "ib_write_bw" "ib_write_bw -F -d vhca0 -x $G -n 500" \
		"ib_write_bw -F -d vhca0 -x $G -n 500 $PEER"
	check "vhca0 sent and received over eth0" moved
}
scenario write-bw write_bw 600

# rping -v: the client verifies what comes back (-V) for 20 round trips.
rping_pair() {
	port vhca
	both "rping -v -V" "rping -s -v -V -a $ME -C 20 -S 1024" \
		"rping -c -v -V -a $PEER -C 20 -S 1024"
	check "rping -v -V: 20 pings printed" \
		test "$(cat $T/$F.* | grep -c 'ping data: ')" -ge 20
}
scenario rping rping_pair 600

# nvme_connected: nvme_up, tried every second while the target in a is
# not there yet (nvme connect is refused at once then), WAIT s at most.
nvme_connected() {
	_nc_end=$(($(cut -d. -f1 /proc/uptime) + WAIT))
	until nvme_up; do
		[ "$(cut -d. -f1 /proc/uptime)" -lt $_nc_end ] || return 1
		sleep 1
	done
}

# NVMe over RDMA between two kernels: the nvmet-rdma target in a on a
# ramdisk, the nvme-rdma host in b, fio's crc32c-verified jobs; then b
# tells a it is done (busybox nc, TCP port 4421) and a removes its target.
nvme_hosts() {
	port vhca
	if [ "$VHCA_ROLE" = a ]; then
		NVME_T=$ME NVME_H=$PEER
		must "nvmet-rdma target: /dev/ram0 on $ME:4420" nvmet_up || return
		check "the host in b says it is done" \
			test "$(timeout $WAIT busybox nc -l -p 4421)" = "done"
		nvmet_target_gone vhca0
		return
	fi
	NVME_T=$PEER NVME_H=$ME
	check "modprobe nvme-rdma" modprobe nvme-rdma
	if must "nvme connect -t rdma -a $NVME_T -w $ME" nvme_connected; then
		echo "# $CTRL: $NS"
		nvme_jobs $FIO_MB
		check "nvme disconnect" nvme_down
	fi
	check "a is told" wait_for 30 sh -c "echo done | busybox nc $NVME_T 4421"
	check "nvme-rdma unloaded" unload nvme_rdma nvme_fabrics
}
scenario nvme nvme_hosts 600

# vhca in a, rdma_rxe in b: two implementations on two kernels.
rxe() {
	if [ "$VHCA_ROLE" = a ]; then port vhca; else port rxe; fi
	both "ibv_rc_pingpong vhca-rxe" "ibv_rc_pingpong -d $DEV -g $G -n 500" \
		"ibv_rc_pingpong -d $DEV -g $G -n 500 $PEER"
	both "ib_write_bw vhca-rxe" "ib_write_bw -F -d $DEV -x $G -n 200" \
		"ib_write_bw -F -d $DEV -x $G -n 200 $PEER"
}
scenario rxe rxe 900

run_scenarios "$@"
