#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: the kernel's RDMA consumers over two ports of one host, the
# target's or server's port T (10.0.0.1 on veth0) and the host's or
# client's port H (10.0.0.2 on veth1).  NVMe over RDMA: an nvmet-rdma
# target on a brd ramdisk set up through configfs, the nvme-rdma host
# through nvme-cli, fio with crc32c verification; over local delivery, and
# with force_wire and netem loss and reordering on the veth pair; and
# rdma link delete of the target's port under fio.  NFS over RDMA: knfsd
# (svcrdma, port 20049) exporting a tmpfs, the xprtrdma client, files
# written and read back and compared; in one namespace, and with nfsd in a
# second namespace over the veth wire.
#
# usage: ulp.sh [rxe] [SCENARIO ARGS]: "rxe" runs the same scenarios on
# two rdma_rxe ports instead (ULP_DEV=rxe; the force_wire scenario then
# has the netem wire only); "ulp.sh bench" is make bench's NVMe part
# (bench_nvme below).
. "$VHCA_TOP/scripts/guest/lib.sh"
. "$VHCA_TOP/scripts/guest/nvme-lib.sh"

case "${1:-}" in
rxe)
	export ULP_DEV=rxe
	shift
	;;
esac
ULP_DEV=${ULP_DEV:-vhca}
T=/tmp/ulp-test
mkdir -p $T
FW=/sys/module/vhca/parameters/force_wire
NETEM="loss 0.5% delay 1ms reorder 2%"
# Sizes (MiB): of each verified fio job, of the ramdisk, of NFS's file.
# The debug kernel's checkers see every path of a job (FRWR registration
# and invalidation, RDMA READ and WRITE of whole 128 KiB commands, the
# completions) in its first megabytes: 2 MiB a job there (512 commands of
# 4 KiB, 16 of 128 KiB), 2 for NFS.
# K: lib.sh's tmo factor of time limits (3 on the debug kernel), without
# a process.
FIO_MB=8 RD_MB=32 NFS_MB=4 K=1
[ "$VHCA_KERNEL" = debug ] && FIO_MB=2 NFS_MB=2 K=3

# ---- the two ports

# ports: the two ports in this namespace, PT (10.0.0.1) and PH (10.0.0.2):
# vhca0 and vhca1, or rxe0 and rxe1 (ULP_DEV=rxe).
ports() {
	if [ "$ULP_DEV" = rxe ]; then
		check "modprobe rdma_rxe" modprobe rdma_rxe
		PT=rxe0 PH=rxe1
	else
		check "insmod vhca.ko" load_vhca
		PT=vhca0 PH=vhca1
	fi
	local_pair
	check "10.0.0.1 <-> 10.0.0.2 routed over the veth pair" wire_routes
	check "rdma link add $PT, $PH" rdma -b - <<EOF
link add $PT type $ULP_DEV netdev veth0
link add $PH type $ULP_DEV netdev veth1
EOF
	check "$PT's and $PH's GID tables hold 10.0.0.1 and 10.0.0.2" \
		wait_for 10 gids_there
}

gids_there() {
	gid_find $PT 10.0.0.1 && gid_find $PH 10.0.0.2
}

# wire_lossy: force_wire (vhca) and netem on both ends of the veth pair.
wire_lossy() {
	if [ "$ULP_DEV" = vhca ]; then
		check "echo 1 > force_wire" sh -c "echo 1 >$FW"
	fi
	check "netem on veth0 and veth1: $NETEM" tc -b - <<EOF
qdisc add dev veth0 root netem $NETEM
qdisc add dev veth1 root netem $NETEM
EOF
}

# wire_used: force_wire's packets crossed veth1 (its receive counter).
wire_used() {
	read -r _wu </sys/class/net/veth1/statistics/rx_packets
	echo "# veth1 received $_wu packets"
	[ "$_wu" -gt 1000 ]
}

# ports_gone: rdma link delete of both ports, then their module removed:
# nothing of the consumers holds them.
ports_gone() {
	check "rdma link delete $PT, $PH" rdma -b - <<EOF
link delete $PT
link delete $PH
EOF
	port_module_gone
}

# nvme_ports_gone: the target's port deleted first (nvmet_target_gone),
# then the host's, then their module.
nvme_ports_gone() {
	nvmet_target_gone $PT
	check "rdma link delete $PH" rdma link delete $PH
	port_module_gone
}

# port_module_gone: the ports' module removed, the rules reset.
port_module_gone() {
	if [ "$ULP_DEV" = vhca ]; then
		check "rmmod vhca" unload vhca
	else
		check "rmmod rdma_rxe" unload rdma_rxe
	fi
	routes_reset
}

# ---- NVMe over RDMA

# nvme_target_host: the target, and the host connected to it.
nvme_target_host() {
	must "nvmet-rdma target: /dev/ram0 on 10.0.0.1:4420" nvmet_up &&
		must "nvme connect -t rdma -a 10.0.0.1 -w 10.0.0.2" nvme_up &&
		echo "# $CTRL: $NS"
}

# local_used: vhca1 delivered thousands of packets in the kernel.
local_used() {
	_lu=$(counter vhca1 local_tx_packets)
	echo "# vhca1 delivered $_lu packets locally"
	[ "${_lu:-0}" -gt 1000 ]
}

nvme_local() {
	ports
	nvme_target_host || return
	nvme_jobs $FIO_MB
	[ "$ULP_DEV" = vhca ] && check "vhca1 delivered them locally" local_used
	check "nvme disconnect" nvme_down
	nvme_ports_gone
}
scenario nvme nvme_local 200

# The same over the veth pair, with loss and reordering on both ends.
nvme_wire() {
	ports
	wire_lossy
	nvme_target_host || return
	nvme_jobs $FIO_MB
	check "the traffic crossed the veth pair" wire_used
	[ "$ULP_DEV" = vhca ] && rdma statistic show link vhca0/1
	check "nvme disconnect" nvme_down
	nvme_ports_gone
}
scenario nvme-wire nvme_wire 300

# writes_done: the namespace has written more than 1 MiB since it
# appeared (field 7 of its stat: sectors written).
writes_done() {
	read -r _ _ _ _ _ _ _wd _ <"/sys/block/${NS#/dev/}/stat" 2>/dev/null &&
		[ "$_wd" -gt 2048 ]
}

# ctrl_is STATE: the host's controller CTRL is in STATE (live,
# connecting, resetting, deleting).
ctrl_is() {
	read -r _cs 2>/dev/null </sys/class/nvme/$CTRL/state && [ "$_cs" = "$1" ]
}

# nvmet_relink: the target's port disabled and enabled again (its
# subsystem's link removed and made): a port whose RDMA device went away
# has lost its listener, and nvmet-rdma does not listen again by itself.
nvmet_relink() {
	rm $CFS/ports/1/subsystems/$NQN &&
		ln -s $CFS/subsystems/$NQN $CFS/ports/1/subsystems/$NQN
}

# rdma link delete of the target's port under fio's random writes: the
# host's controller goes into error recovery and tries to reconnect while
# the I/O waits; the port added again and the target's listener with it,
# the host reconnects, fio ends by itself, verified I/O works; then
# everything is removed.  (Without the port back, each attempt waits out
# the CM's REQ retries, over a minute: a lost peer is not a refusal.)
nvme_delete() {
	ports
	CTRL_LOSS=$((30 * K))
	nvme_target_host || return
	mark_dmesg
	timeout $((150 * K)) fio --name=busy --filename=$NS --thread \
		--ioengine=libaio --direct=1 --rw=randwrite --bs=4k \
		--iodepth=16 --size=${RD_MB}M --time_based --runtime=8 \
		>$T/busy.fio 2>&1 &
	_fio=$!
	check "fio is writing" wait_for 60 writes_done
	check "rdma link delete $PT (the target's port) under fio" rdma link delete $PT
	check "the host's controller tries to reconnect" wait_for 60 ctrl_is connecting
	check "rdma link add $PT again" rdma link add $PT type $ULP_DEV netdev veth0
	check "$PT's GID table holds 10.0.0.1" wait_for 10 gid_find $PT 10.0.0.1
	check "the target's port enabled again" nvmet_relink
	check "the host reconnects" wait_for 120 ctrl_is live
	wait $_fio
	_rc=$?
	tail -n 6 $T/busy.fio
	check "the writer ends by itself (exit $_rc)" test $_rc != 124
	dmesg | tail -n +$((_mark + 1)) | grep -E 'nvme|nvmet' | grep -v requeuing | head -20
	check "the kernel says it reconnected" dmesg_has "$CTRL: Successfully reconnected"
	check "fio after the reconnect: 4 KiB random writes, 1 MiB, crc32c verified" \
		fio_verify after 1 --rw=randwrite --bs=4k --iodepth=16
	check "nvme disconnect" nvme_down
	nvme_ports_gone
}
# On both kernels: the teardown deletes the target's port before nvmet's
# configuration (nvmet_target_gone), so nvmet-rdma never destroys a
# listener under nvmet_config_sem (lockdep's cycle with an I/O queue's
# connect, in nvme-lib.sh).
scenario nvme-delete nvme_delete 200

# ---- NFS over RDMA

EXP=/srv/ulp
MNT=/mnt/ulp

# nfsd_up [NETNS]: knfsd in this namespace or in NETNS, NFSv4 only,
# exporting the tmpfs EXP as the NFSv4 root (fsid=0), listening for RDMA
# on port 20049.  nfsdcld (started first) tells nfsd that no client has
# state to reclaim, which skips the grace period (90 s) in which it would
# refuse the client's OPENs.  Each daemon runs in the foreground in a
# mount namespace of its own (ip netns exec, or unshare here) with the
# nfsd and rpc_pipefs filesystems of its network namespace mounted
# (nfs_in; nfs_daemon, in the background, execs into it: its pid is the
# daemon's); their pids are DAEMONS.
NFSD_MNT='mount -t nfsd nfsd /proc/fs/nfsd && mkdir -p /run/rpc_pipefs &&
	mount -t rpc_pipefs sunrpc /run/rpc_pipefs'
nfs_in() {
	if [ -n "$NFS_NS" ]; then
		ip netns exec $NFS_NS sh -c "$NFSD_MNT && $1"
	else
		unshare -m sh -c "$NFSD_MNT && $1"
	fi
}

nfs_daemon() {
	if [ -n "$NFS_NS" ]; then
		exec ip netns exec $NFS_NS sh -c "$NFSD_MNT && exec $1"
	else
		exec unshare -m sh -c "$NFSD_MNT && exec $1"
	fi
}

nfsd_up() {
	NFS_NS=${1:-}
	modprobe -a nfsd rpcrdma nfsv4 || return 1
	mkdir -p $EXP /var/lib/nfs/v4recovery /var/lib/nfs/nfsdcld &&
		mount -t tmpfs -o size=$((NFS_MB * 4))m ulp $EXP || return 1
	nfs_daemon 'nfsdcld -F' >$T/nfsdcld.log 2>&1 &
	DAEMONS=$!
	nfs_in "exportfs -o rw,fsid=0,no_root_squash,insecure,no_subtree_check \
		10.0.0.0/24:$EXP" || return 1
	nfs_daemon 'rpc.mountd -F -N 2 -N 3 --no-udp' >$T/mountd.log 2>&1 &
	DAEMONS="$DAEMONS $!"
	nfs_in 'rpc.nfsd -N 3 -U 4 && echo "rdma 20049" >/proc/fs/nfsd/portlist &&
		cat /proc/fs/nfsd/portlist'
}

# nfsd_down: nfsd stopped (rpc.nfsd 0), the daemons ended, the export
# withdrawn, the tmpfs unmounted, the modules removed.
nfsd_down() {
	nfs_in 'rpc.nfsd 0 && exportfs -ua' || return 1
	kill $DAEMONS && wait $DAEMONS
	umount $EXP || return 1
	unload nfsv4 nfs rpcrdma nfsd
}

# nfs_files SERVER: the client mounts SERVER's export over RDMA, writes a
# file of random bytes and a small one, which arrive unchanged in the
# export; its cache dropped, it reads them back unchanged; umount.
nfs_files() {
	mkdir -p $MNT
	check "mount -t nfs4 -o proto=rdma,port=20049 $1:/" timeout $((60 * K)) \
		mount -t nfs4 -o proto=rdma,port=20049 "$1:/" $MNT
	grep " $MNT " /proc/mounts
	must "$MNT is NFS over RDMA" grep -q " $MNT nfs4 .*proto=rdma" /proc/mounts || return
	head -c $((NFS_MB << 20)) /dev/urandom >$T/big
	echo "NFS over RDMA on $ULP_DEV" >$T/small
	check "write a $NFS_MB MiB file and a small one" \
		timeout $((60 * K)) sh -c "cp $T/big $T/small $MNT/ && sync"
	md5sum $T/big $T/small $EXP/big $EXP/small | sed 's/^/# /'
	check "the export holds what was written" sh -c \
		"cmp $T/big $EXP/big && cmp $T/small $EXP/small"
	echo 3 >/proc/sys/vm/drop_caches
	check "read back through the mount, the same bytes" timeout $((60 * K)) \
		sh -c "md5sum $MNT/big $MNT/small | sed 's,$MNT,$T,' | md5sum -c"
	check "umount" timeout $((60 * K)) umount $MNT
}

# nfs_one_ns: server and client in this namespace, the client on PH.
nfs_one_ns() {
	ports
	must "nfsd on 10.0.0.1: NFSv4, rdma 20049" nfsd_up || return
	nfs_files 10.0.0.1
	check "nfsd stopped, the modules unloaded" nfsd_down
	ports_gone
}
scenario nfs nfs_one_ns 200

# nfs_two_ns: nfsd on vhca1 (10.0.0.2) in the namespace peer, the client
# here on vhca0: over the veth wire.
nfs_two_ns() {
	if [ "$ULP_DEV" = rxe ]; then
		skip "nfsd in another namespace" "rdma_rxe of 6.12 works in the initial namespace only"
		return
	fi
	ports_two_ns
	PT=vhca0 PH=vhca1
	must "nfsd on 10.0.0.2 in the namespace peer: NFSv4, rdma 20049" nfsd_up peer || return
	nfs_files 10.0.0.2
	check "nfsd stopped, the modules unloaded" nfsd_down
	check "rdma link delete vhca0, vhca1 (peer)" sh -c \
		'rdma link delete vhca0 && ip netns exec peer rdma link delete vhca1'
	port_module_gone
}
scenario nfs-two-ns nfs_two_ns 200

# ---- make bench's NVMe part: ulp.sh bench [SECONDS]

# bench_job KIND NAME FIO_ARGS...: a fio job of SECONDS on NS; records
# "KIND NAME VALUE" in $R: FIELD of its terse output (7 read KiB/s, 48
# write KiB/s, 49 write IOPS), as MiB/s for bandwidths.
bench_job() {
	_bk=$1 _bn=$2 _bf=$3
	shift 3
	timeout $((BENCH_SECS * 3 + 60)) fio --name=$_bn --filename=$NS \
		--thread --ioengine=libaio --direct=1 --size=${RD_MB}M --time_based \
		--runtime=$BENCH_SECS --output-format=terse --terse-version=3 \
		"$@" >$T/$_bk-$_bn.fio 2>&1
	_rc=$?
	_v=$(awk -F';' -v f=$_bf 'NF > 49 && $5 == 0 {
		if (f == 49)
			printf "%d", $f
		else
			printf "%.1f", $f / 1024
	}' $T/$_bk-$_bn.fio)
	echo "# $_bk $_bn: fio $* for $BENCH_SECS s: exit $_rc, $_v"
	if [ $_rc = 0 ] && [ -n "$_v" ]; then
		pass "$_bk: fio $_bn"
		echo "$_bk $_bn $_v" >>$R
	else
		fail "$_bk: fio $_bn (exit $_rc)"
		cat $T/$_bk-$_bn.fio
	fi
}

# bench_kind KIND: NVMe over RDMA between two ports of KIND (vhca: local
# delivery), 128 KiB sequential writes and reads and 4 KiB random writes,
# iodepth 16 each.
bench_kind() {
	ULP_DEV=$1
	ports
	nvme_target_host || return
	bench_job $1 seq_write 48 --rw=write --bs=128k --iodepth=16
	bench_job $1 seq_read 7 --rw=read --bs=128k --iodepth=16
	bench_job $1 rand_write 49 --rw=randwrite --bs=4k --iodepth=16
	check "nvme disconnect" nvme_down
	nvme_ports_gone
}

# bench_nvme [SECONDS]: vhca, then rdma_rxe (which binds UDP 4791 in the
# initial namespace when it loads: vhca is unloaded by then); the table
# of figures and ratios goes to $VHCA_OUT/nvme-bench.txt.
bench_nvme() {
	BENCH_SECS=${1:-15}
	R=$T/results
	: >$R
	bench_kind vhca
	bench_kind rxe
	awk '
	function get(c, t) { return ((c SUBSEP t) in v) ? v[c, t] : "" }
	function fig(x) { return x == "" ? "-" : x }
	{ v[$1, $2] = $3 }
	END {
		split("seq_write seq_read rand_write", order, " ")
		desc["seq_write"] = "128 KiB seq. write qd16"; unit["seq_write"] = "MiB/s"
		desc["seq_read"] = "128 KiB seq. read qd16"; unit["seq_read"] = "MiB/s"
		desc["rand_write"] = "4 KiB rand. write qd16"; unit["rand_write"] = "IOPS"
		printf "%-26s %-5s %10s %10s %9s  %s\n", "fio over nvme-rdma", "unit", "vhca", "rxe", "vhca/rxe", "DESIGN.md target"
		for (i = 1; i <= 3; i++) {
			t = order[i]; a = get("vhca", t); b = get("rxe", t)
			q = (a != "" && b != "" && b + 0 > 0) ? sprintf("%.2fx", a / b) : "-"
			printf "%-26s %-5s %10s %10s %9s  %s\n", desc[t], unit[t], fig(a), fig(b), q, unit[t] == "MiB/s" ? ">=3x rxe" : "-"
		}
	}' $R >$T/table
	echo "===== nvme-rdma bench ====="
	cat $T/table
	cp $T/table "$VHCA_OUT/nvme-bench.txt"
}

if [ "${1:-}" = bench ]; then
	shift
	bench_nvme "$@"
	finish
	exit
fi
run_scenarios "$@"
