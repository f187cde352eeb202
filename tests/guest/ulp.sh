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
# second namespace over the veth wire.  SRP: LIO's ib_srpt target on a
# ramdisk set up through configfs, the ib_srp initiator logged in over the
# RDMA CM, the same fio jobs on its SCSI disk (stock kernel only).  iSER:
# LIO's iSCSI target with iSER on its portal (ib_isert) on a ramdisk set
# up through configfs, open-iscsi's iscsid and iscsiadm logged in over
# the iser interface (ib_iser), the same fio jobs on its SCSI disk, over
# the veth wire (force_wire), then the same on two rdma_rxe ports, their
# figures side by side (stock kernel only).
#
# usage: ulp.sh [rxe] [SCENARIO ARGS]: "rxe" runs the same scenarios on
# two rdma_rxe ports instead (ULP_DEV=rxe; the force_wire scenario then
# has the netem wire only); "ulp.sh bench" is make bench's NVMe part
# (bench_nvme below).
. "$VHCA_TOP/tests/lib/guest.sh"
. "$VHCA_TOP/tests/lib/nvme.sh"

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
# state to reclaim, which skips the grace period in which it would refuse
# the client's OPENs; where nfsd starts one all the same (the debug
# kernel's in another namespace does), it lasts 10 s, not 90.  Each daemon runs in the foreground in a
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

# cld_ready PID: nfsdcld (PID) watches for its upcall pipe (its inotify
# descriptor is open; the pipe appears when nfsd starts).  nfsd waits only
# a second for nfsdcld to open the pipe; one started before nfsdcld is
# ready tracks clients through the usermode helper instead and keeps its
# 90-second grace period, which a mount's first write then waits out (seen
# once beside a kernel build).
cld_ready() {
	ls -l /proc/$1/fd 2>/dev/null | grep -q 'anon_inode:inotify'
}

nfsd_up() {
	NFS_NS=${1:-}
	modprobe -a nfsd rpcrdma nfsv4 || return 1
	mkdir -p $EXP /var/lib/nfs/v4recovery /var/lib/nfs/nfsdcld &&
		mount -t tmpfs -o size=$((NFS_MB * 4))m ulp $EXP || return 1
	nfs_daemon 'nfsdcld -F' >$T/nfsdcld.log 2>&1 &
	DAEMONS=$!
	wait_for 20 cld_ready $DAEMONS || return 1
	nfs_in "exportfs -o rw,fsid=0,no_root_squash,insecure,no_subtree_check \
		10.0.0.0/24:$EXP" || return 1
	nfs_daemon 'rpc.mountd -F -N 2 -N 3 --no-udp' >$T/mountd.log 2>&1 &
	DAEMONS="$DAEMONS $!"
	nfs_in 'echo 10 >/proc/fs/nfsd/nfsv4gracetime && rpc.nfsd -N 3 -U 4 &&
		echo "rdma 20049" >/proc/fs/nfsd/portlist && cat /proc/fs/nfsd/portlist'
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

# ---- SRP: the ib_srpt target (LIO) and the ib_srp initiator

LIO=/sys/kernel/config/target
SRP_PORT=5555

# gid0_hex DEV: GH, port 1's GID 0 of DEV as 32 hex digits: srpt names
# the target port by it ("0x" and the digits), and ib_srp's initiator
# port ID is an extension of 0 and its lower half (the interface ID).
gid0_hex() {
	read -r _gh 2>/dev/null </sys/class/infiniband/$1/ports/1/gids/0 || return 1
	_gh_ifs=$IFS
	IFS=:
	# shellcheck disable=SC2086 # split at the colons
	set -- $_gh
	IFS=$_gh_ifs
	GH=$1$2$3$4$5$6$7$8
	[ ${#GH} = 32 ]
}

# srpt_up: LIO's SRP target on PT through configfs: a ramdisk (rd_mcp) of
# RD_MB MiB as LUN 0 of the port named by PT's GID 0, which only the
# initiator port ID of PH may log in to (an ACL mapping LUN 0), the RDMA
# CM listening on port SRP_PORT.  SID: srpt's service GUID, the target
# port ID's two halves.
srpt_up() {
	modprobe -a target_core_mod ib_srpt || return 1
	[ -d $LIO ] || mount -t configfs none /sys/kernel/config || return 1
	gid0_hex $PH || return 1
	_acl=0x0000000000000000${GH#????????????????}
	gid0_hex $PT || return 1
	_rd=$LIO/core/rd_mcp_0/srp
	_tpg=$LIO/srpt/0x$GH/tpgt_1
	mkdir -p $_rd &&
		echo rd_pages=$((RD_MB * 256)) >$_rd/control &&
		echo 1 >$_rd/enable &&
		mkdir -p $_tpg/lun/lun_0 $_tpg/acls/$_acl/lun_0 &&
		ln -s $_rd $_tpg/lun/lun_0/srp &&
		ln -s $_tpg/lun/lun_0 $_tpg/acls/$_acl/lun_0/lun_0 &&
		echo 1 >$_tpg/enable &&
		echo $SRP_PORT >$LIO/srpt/discovery_auth/rdma_cm_port &&
		read -r SID </sys/module/ib_srpt/parameters/srpt_service_guid &&
		echo "# target port 0x$GH, ACL $_acl, service GUID $SID"
}

# srpt_down: the configuration undone (what of it exists), in the reverse
# order.
srpt_down() {
	for _sd_t in $LIO/srpt/0x*/tpgt_1; do
		[ -d "$_sd_t" ] || continue
		echo 0 >$_sd_t/enable || return 1
		for _sd in $_sd_t/acls/*/lun_0/lun_0 $_sd_t/lun/lun_0/srp; do
			[ -L "$_sd" ] && { rm "$_sd" || return 1; }
		done
		for _sd in $_sd_t/acls/*/lun_0 $_sd_t/acls/* $_sd_t/lun/lun_0 \
			$_sd_t ${_sd_t%/*}; do
			[ -d "$_sd" ] && { rmdir "$_sd" || return 1; }
		done
	done
	for _sd in $LIO/srpt $LIO/core/rd_mcp_0/srp $LIO/core/rd_mcp_0; do
		[ -d "$_sd" ] && { rmdir "$_sd" || return 1; }
	done
	return 0
}

# srp_disk: NS, the SCSI disk (/dev/sdX) of the SRP remote port RPORT
# (/sys/class/srp_remote_ports/port-N:1, N its SCSI host).
srp_disk() {
	for RPORT in /sys/class/srp_remote_ports/port-*; do
		[ -e "$RPORT" ] || return 1
		_sk=${RPORT##*/port-}
		_sk=${_sk%%:*}
		for _sk in /sys/class/scsi_host/host$_sk/device/target*/*/block/sd*; do
			[ -e "$_sk" ] || continue
			NS=/dev/${_sk##*/}
			[ -b "$NS" ] && return 0
		done
	done
	return 1
}

# srp_login: ib_srp on PH logs in to the target over the RDMA CM, from
# 10.0.0.2 to 10.0.0.1 (add_target returns once the login succeeded or
# failed; a hung one is interrupted); NS and RPORT once the disk is there.
srp_login() {
	modprobe -a ib_srp sd_mod || return 1
	timeout $((60 * K)) sh -c "echo id_ext=${SID#0x},ioc_guid=${SID#0x},dest=10.0.0.1:$SRP_PORT,src=10.0.0.2 \
		>/sys/class/infiniband_srp/srp-$PH-1/add_target" &&
		wait_for 30 srp_disk
}

# srp_size_is MIB: NS holds MIB MiB (its size in sectors).
srp_size_is() {
	read -r _ss <"/sys/block/${NS#/dev/}/size" && [ "$_ss" = $(($1 * 2048)) ]
}

# srp_gone: neither the remote port nor its disk is there.
srp_gone() {
	[ ! -e "$RPORT" ] && [ ! -e "$NS" ]
}

# srp_logout: the remote port deleted, its SCSI host, disk and channels
# with it.
srp_logout() {
	echo 1 >"$RPORT/delete" && wait_for 30 srp_gone
}

# mods_new: MODS, the modules loaded now that were not in BASE_MODS,
# newest first as /proc/modules lists them (each before those it uses).
mods_new() {
	MODS=
	while read -r _mn _; do
		case " $BASE_MODS " in
		*" $_mn "*) ;;
		*) MODS="$MODS $_mn" ;;
		esac
	done </proc/modules
}

# mods_unload: every module loaded since BASE_MODS removed (LIO loads its
# backends, pscsi the SCSI core) and none left.
mods_unload() {
	mods_new
	echo "# unloading$MODS"
	[ -n "$MODS" ] && unload $MODS && mods_new && [ -z "$MODS" ]
}

# objs: OBJ, every vhca device's objects but its CQs (debugfs): the CQs
# that srpt's channels take from the core's pool (ib_cq_pool_get) stay
# until the device goes, with their rings (whose return the scenario
# runner checks at rmmod).
objs() {
	OBJ=
	for _ob_d in /sys/kernel/debug/vhca/vhca.*; do
		[ -d "$_ob_d" ] || continue
		OBJ="$OBJ ${_ob_d##*/}:"
		while read -r _ob_k _ob_v; do
			[ "$_ob_k" = cq ] || OBJ="$OBJ $_ob_k=$_ob_v"
		done <"$_ob_d/objects"
	done
}

objs_are() {
	objs
	[ "$OBJ" = "$1" ]
}

# core_cqs_only: every CQ left is the core's (the MAD layer's, the pool's).
core_cqs_only() {
	rdma resource show cq >$T/cqs || return 1
	sed 's/^/# /' $T/cqs
	! grep -v 'comm \[ib_core\]' $T/cqs | grep -q .
}

# srp: the target on PT, the initiator on PH; LUN 0 appears as a SCSI
# disk of the ramdisk's size, the verified fio jobs of the NVMe scenarios
# run on it (nvme_jobs); logout, the target's configuration and every
# module SRP loaded removed; vhca's objects (debugfs) back to what they
# were before.
srp() {
	ports
	# configfs stays, mounted (as the NVMe scenarios leave it).
	BASE_MODS=configfs
	mods_new
	BASE_MODS="$BASE_MODS$MODS"
	objs
	_base=$OBJ
	must "srpt target: a $RD_MB MiB ramdisk on ${PT}'s port, RDMA CM port $SRP_PORT" srpt_up &&
		must "ib_srp on $PH logs in to 10.0.0.1:$SRP_PORT" srp_login || return
	echo "# $RPORT: $NS"
	if [ "$ULP_DEV" = vhca ]; then
		objs
		echo "# objects logged in:$OBJ"
	fi
	check "the SRP disk, $NS, holds $RD_MB MiB" srp_size_is $RD_MB
	nvme_jobs $FIO_MB
	[ "$ULP_DEV" = vhca ] && check "vhca1 delivered them locally" local_used
	check "SRP logout: the remote port and its disk deleted" srp_logout
	check "srpt configuration removed" srpt_down
	check "the modules SRP loaded unloaded" mods_unload
	if [ "$ULP_DEV" = vhca ]; then
		wait_for 15 objs_are "$_base"
		echo "# objects before:$_base; after:$OBJ"
		check "vhca's PDs, MRs, AHs, SRQs and QPs back to those before SRP" \
			test "$OBJ" = "$_base"
		check "every CQ left is the core's" core_cqs_only
	fi
	ports_gone
}
# Stock kernel only: the debug kernel (kunit/debug-kernel.config) has no
# SCSI, LIO or SRP.  Its checkers see the verbs SRP uses (FRWR
# registration and local invalidation, RDMA READ and WRITE, the RDMA CM)
# in nvme and nfs, and srpt's zero-length WRITE with rkey 0 in KUnit's
# engine_write_zero_length.
scenario srp srp 120 stock

# ---- iSER: LIO's iSCSI target with ib_isert, open-iscsi's initiator

ISCSI_IQN=iqn.2026-12.org.vhca:iser
ISCSI_PORTAL=10.0.0.1:3260

# isert_up: LIO's iSCSI target through configfs, a ramdisk (rd_mcp) of
# RD_MB MiB as LUN 0 of target ISCSI_IQN, iSER on its portal ISCSI_PORTAL
# (the portal's TCP listener is made first, iSER's beside it), any
# initiator admitted (ACLs made on login, no authentication, writable).
isert_up() {
	modprobe -a target_core_mod iscsi_target_mod ib_isert || return 1
	[ -d $LIO ] || mount -t configfs none /sys/kernel/config || return 1
	_rd=$LIO/core/rd_mcp_0/iser
	_tpg=$LIO/iscsi/$ISCSI_IQN/tpgt_1
	mkdir -p $_rd &&
		echo rd_pages=$((RD_MB * 256)) >$_rd/control &&
		echo 1 >$_rd/enable &&
		mkdir -p $_tpg/lun/lun_0 $_tpg/np/$ISCSI_PORTAL &&
		ln -s $_rd $_tpg/lun/lun_0/iser &&
		echo 1 >$_tpg/np/$ISCSI_PORTAL/iser &&
		echo 0 >$_tpg/attrib/authentication &&
		echo 1 >$_tpg/attrib/generate_node_acls &&
		echo 0 >$_tpg/attrib/demo_mode_write_protect &&
		echo 1 >$_tpg/enable
}

# isert_down: the target's configuration undone (what of it exists), in
# the reverse order.
isert_down() {
	_tpg=$LIO/iscsi/$ISCSI_IQN/tpgt_1
	if [ -d $_tpg ]; then
		echo 0 >$_tpg/enable || return 1
		[ -L $_tpg/lun/lun_0/iser ] && { rm $_tpg/lun/lun_0/iser || return 1; }
		for _id in $_tpg/lun/lun_0 $_tpg/np/$ISCSI_PORTAL $_tpg; do
			[ -d $_id ] && { rmdir $_id || return 1; }
		done
	fi
	# The fabric's directory holds iscsi_target_mod.
	for _id in $LIO/iscsi/$ISCSI_IQN $LIO/iscsi $LIO/core/rd_mcp_0/iser \
		$LIO/core/rd_mcp_0; do
		[ -d $_id ] && { rmdir $_id || return 1; }
	done
	return 0
}

# iscsid_ready: iscsid listens for iscsiadm (its abstract socket).
iscsid_ready() {
	grep -q '@ISCSIADM_ABSTRACT_NAMESPACE' /proc/net/unix
}

# iser_disk: NS, the SCSI disk of the iSCSI session.
iser_disk() {
	for _ik in /sys/class/iscsi_session/session*/device/target*/*/block/sd*; do
		[ -e "$_ik" ] || return 1
		NS=/dev/${_ik##*/}
		[ -b "$NS" ] && return 0
	done
	return 1
}

# iser_login: iscsid in the foreground (an initiator name of its own, no
# service; ISCSID), a node record of the target on the iser interface
# (iscsiadm's built-in "iser": transport ib_iser), the login, over the
# RDMA CM from 10.0.0.2 (wire_routes) to 10.0.0.1; NS once the disk is
# there.
iser_login() {
	modprobe -a ib_iser sd_mod || return 1
	mkdir -p /run/lock/iscsi $T/iscsi &&
		echo "InitiatorName=iqn.2026-12.org.vhca:initiator" >$T/iscsi/name || return 1
	# A session of its own: iscsid, ending on SIGTERM, signals its whole
	# process group.
	setsid iscsid -f -i $T/iscsi/name >$T/iscsid.log 2>&1 &
	ISCSID=$!
	wait_for 20 iscsid_ready || return 1
	iscsiadm -m node -o new -T $ISCSI_IQN -p $ISCSI_PORTAL -I iser >/dev/null &&
		timeout $((60 * K)) iscsiadm -m node -T $ISCSI_IQN -p $ISCSI_PORTAL -I iser --login &&
		wait_for 30 iser_disk
}

# iser_transport: NS's SCSI host is ib_iser's.
iser_transport() {
	_it=$(readlink /sys/block/${NS#/dev/}/device) || return 1
	_it=${_it##*/}
	read -r _it_n </sys/class/scsi_host/host${_it%%:*}/proc_name || return 1
	echo "# $NS: SCSI host ${_it%%:*}, $_it_n"
	[ "$_it_n" = iscsi_iser ]
}

# no_disk: NS is gone.
no_disk() {
	[ ! -e "$NS" ]
}

# iser_logout: logout (the disk goes), the node record deleted, iscsid
# ended (its status on SIGTERM aside).
iser_logout() {
	timeout $((60 * K)) iscsiadm -m node -T $ISCSI_IQN -p $ISCSI_PORTAL -I iser --logout &&
		iscsiadm -m node -o delete -T $ISCSI_IQN -p $ISCSI_PORTAL -I iser || return 1
	kill $ISCSID
	wait $ISCSID
	wait_for 10 no_disk
}

# iser_check WHAT COMMAND...: on vhca, a check; on rdma_rxe, the
# reference, a failure is reported (a skip) and not counted.
iser_check() {
	if [ "$ULP_DEV" = vhca ]; then
		must "$@"
		return
	fi
	_ic=$1
	shift
	if "$@"; then
		pass "rxe: $_ic"
	else
		skip "rxe: $_ic" "rdma_rxe failed it (rc=$?), not counted"
		return 1
	fi
}

# iser_fig JOB: JOB's figures (its fio terse output: field 49 the write
# IOPS, 48 the write KiB/s, 7 the read KiB/s of the verification) in
# $T/iser-figures, as "KIND JOB FIGURE".
iser_fig() {
	awk -F';' -v k=$ULP_DEV -v j=$1 'NF > 49 {
		printf "%s %s %d IOPS, write %.1f MiB/s, verify %.1f MiB/s\n",
			k, j, $49, $48 / 1024, $7 / 1024
	}' $T/$1.fio >>$T/iser-figures
}

# iser_run DEV: on two ports of DEV (rdma_rxe's, or vhca's with
# force_wire: both over the veth pair), LIO's target on PT, the initiator
# on PH; LUN 0 a SCSI disk of RD_MB MiB with ib_iser's SCSI host, the
# verified fio jobs of the NVMe scenarios on it, each one's figures;
# logout, the target's configuration and every module iSER loaded
# removed.
iser_run() {
	ULP_DEV=$1
	reset_guest
	ports
	[ "$ULP_DEV" = vhca ] && check "echo 1 > force_wire" sh -c "echo 1 >$FW"
	BASE_MODS=configfs
	mods_new
	BASE_MODS="$BASE_MODS$MODS"
	iser_check "iSCSI target: a $RD_MB MiB ramdisk, iSER on $ISCSI_PORTAL" isert_up &&
		iser_check "iscsiadm -I iser logs in to $ISCSI_PORTAL from 10.0.0.2" iser_login &&
		iser_check "the session's SCSI host is ib_iser's" iser_transport &&
		iser_check "the iSCSI disk, $NS, holds $RD_MB MiB" srp_size_is $RD_MB &&
		iser_check "fio: 4 KiB random writes, iodepth 16, $FIO_MB MiB, crc32c verified" \
			fio_verify rand4k $FIO_MB --rw=randwrite --bs=4k --iodepth=16 &&
		iser_fig rand4k &&
		iser_check "fio: 128 KiB sequential writes, iodepth 8, $FIO_MB MiB, crc32c verified" \
			fio_verify seq128k $FIO_MB --rw=write --bs=128k --iodepth=8 &&
		iser_fig seq128k &&
		iser_check "the traffic crossed the veth pair" wire_used
	[ -n "${ISCSID:-}" ] && iser_check "iscsiadm --logout: the disk deleted" iser_logout
	ISCSID=
	iser_check "the target's configuration removed" isert_down
	iser_check "the modules iSER loaded unloaded" mods_unload
	ports_gone
}

# iser: iSER on vhca, then on rdma_rxe in the same boot (its ports in the
# initial namespace: ib_isert and ib_iser make their RDMA CM IDs there
# only), each job's figures side by side.
iser() {
	: >$T/iser-figures
	iser_run vhca
	iser_run rxe
	awk '{ k = $1; j = $2; $1 = $2 = ""; sub(/^ +/, ""); v[k, j] = $0 }
	END {
		n = split("rand4k seq128k", o, " ")
		for (i = 1; i <= n; i++) {
			j = o[i]
			printf "# iSER %-8s vhca: %s\n", j, ((("vhca", j) in v) ? v["vhca", j] : "-")
			printf "# iSER %-8s rxe:  %s\n", j, ((("rxe", j) in v) ? v["rxe", j] : "-")
		}
	}' $T/iser-figures
}
# Stock kernel only: the debug kernel (kunit/debug-kernel.config) has no
# SCSI, LIO or iSER (it would need CONFIG_SCSI, CONFIG_BLK_DEV_SD,
# CONFIG_SCSI_ISCSI_ATTRS, CONFIG_INFINIBAND_ISER, CONFIG_TARGET_CORE,
# CONFIG_ISCSI_TARGET and CONFIG_INFINIBAND_ISERT).  Its checkers see the
# verbs iSER uses (FRWR registration and invalidation, SEND with
# invalidate, RDMA READ and WRITE, the RDMA CM) in nvme and nfs.
scenario iser iser 200 stock

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
