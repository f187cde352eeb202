#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest helpers of NVMe over RDMA, sourced after lib.sh by ulp.sh (two
# ports of one host) and hosts.sh (two hosts): an nvmet-rdma target on a
# brd ramdisk of RD_MB MiB set up through configfs at NVME_T:4420, the
# nvme-rdma host connecting from NVME_H through nvme-cli, fio jobs with
# crc32c verification.  T holds the tools' outputs; K is the factor of the
# time limits (3 on the debug kernel).

CFS=/sys/kernel/config/nvmet
NQN=nqn.2026-12.io.vhca:ulp
HOSTNQN=nqn.2026-12.io.vhca:ulp-host
NVME_T=${NVME_T:-10.0.0.1}
NVME_H=${NVME_H:-10.0.0.2}

# unload MODULE...: those loaded removed, in this order, by one rmmod
# (again for 10 s while one is still in use).
unload() {
	_ul_n=100
	while :; do
		_ul=
		for _m; do
			[ -d /sys/module/$_m ] && _ul="$_ul $_m"
		done
		[ -n "$_ul" ] || return 0
		if [ $_ul_n = 0 ]; then
			rmmod $_ul
			return 1
		fi
		rmmod $_ul 2>/dev/null && return 0
		sleep 0.1
		_ul_n=$((_ul_n - 1))
	done
}

# now: NOW, the seconds since boot.
now() {
	read -r NOW _ </proc/uptime
	NOW=${NOW%.*}
}

# nvmet_up: brd's /dev/ram0 as namespace 1 of subsystem NQN, any host
# allowed, on port 1: RDMA, NVME_T:4420 (what an earlier scenario left
# removed first).
nvmet_up() {
	[ -d $CFS ] && nvmet_down
	modprobe -a nvmet nvmet-rdma nvme-rdma &&
		modprobe brd rd_nr=1 rd_size=$((RD_MB * 1024)) || return 1
	[ -d $CFS ] || mount -t configfs none /sys/kernel/config || return 1
	_s=$CFS/subsystems/$NQN
	_p=$CFS/ports/1
	mkdir $_s $_s/namespaces/1 $_p || return 1
	echo 1 >$_s/attr_allow_any_host &&
		echo /dev/ram0 >$_s/namespaces/1/device_path &&
		echo 1 >$_s/namespaces/1/enable &&
		echo rdma >$_p/addr_trtype &&
		echo ipv4 >$_p/addr_adrfam &&
		echo $NVME_T >$_p/addr_traddr &&
		echo 4420 >$_p/addr_trsvcid &&
		ln -s $_s $_p/subsystems/$NQN
}

# nvmet_down: the configuration undone (what of it exists), the modules
# of NVMe over RDMA and brd removed.
nvmet_down() {
	_s=$CFS/subsystems/$NQN
	_p=$CFS/ports/1
	_rd=
	[ -L $_p/subsystems/$NQN ] && { rm $_p/subsystems/$NQN || return 1; }
	[ -d $_p ] && _rd=$_p
	if [ -d $_s/namespaces/1 ]; then
		echo 0 >$_s/namespaces/1/enable || return 1
		_rd="$_rd $_s/namespaces/1"
	fi
	[ -d $_s ] && _rd="$_rd $_s"
	[ -z "$_rd" ] || rmdir $_rd || return 1
	unload nvme_rdma nvmet_rdma nvmet nvme_fabrics brd
}

# nvmet_target_gone DEV: the target's RDMA device DEV deleted (rdma link
# delete) before nvmet_down.  Its listener then goes with the device,
# outside nvmet's configuration lock; removed by nvmet_down instead, the
# listener is destroyed under nvmet_config_sem, which takes its cm_id's
# handler_mutex: lockdep reports that as a cycle with an I/O queue's
# connect, which nvmet-rdma (6.12) may execute from its CM handler under
# the queue's handler_mutex, taking nvmet_config_sem (a capsule that came
# before the connection's ESTABLISHED event:
# nvmet_rdma_queue_established()).
nvmet_target_gone() {
	check "rdma link delete $1 (nvmet's listener goes with the device)" \
		rdma link delete $1
	check "nvmet configuration removed, NVMe and brd modules unloaded" nvmet_down
}

# nvme_ns: NS, the block device of subsystem NQN's namespace
# (/dev/nvmeXnY), and CTRL, its controller (nvmeX).
nvme_ns() {
	for _f in /sys/class/nvme/nvme*/subsysnqn; do
		read -r _n 2>/dev/null <"$_f" && [ "$_n" = "$NQN" ] || continue
		_c=${_f%/subsysnqn}
		# shellcheck disable=SC2034 # read by the scripts that source this
		CTRL=${_c##*/}
		for _b in /sys/block/nvme*n*; do
			[ -e "$_b" ] || continue
			case "${_b##*/}" in
			*c*) continue ;;
			esac
			NS=/dev/${_b##*/}
			[ -b "$NS" ] && return 0
		done
	done
	return 1
}

# nvme_up: nvme connect from NVME_H to the target, every failure bounded
# (reconnects every second, the controller given up after CTRL_LOSS s),
# two I/O queues of 32; NS and CTRL once its namespace is there.
CTRL_LOSS=5
nvme_up() {
	timeout $((60 * K)) nvme connect -t rdma -a $NVME_T -s 4420 -w $NVME_H \
		-n $NQN -q $HOSTNQN --ctrl-loss-tmo=$CTRL_LOSS --reconnect-delay=1 \
		--nr-io-queues=2 --queue-size=32 &&
		wait_for 30 nvme_ns
}

# ctrl_gone: no controller of subsystem NQN left.
ctrl_gone() {
	for _f in /sys/class/nvme/nvme*/subsysnqn; do
		read -r _n 2>/dev/null <"$_f" && [ "$_n" = "$NQN" ] && return 1
	done
	return 0
}

nvme_down() {
	timeout $((60 * K)) nvme disconnect -n $NQN && wait_for 30 ctrl_gone
}

# fio_verify NAME MIB FIO_ARGS...: a fio job on NS writing MIB MiB with
# crc32c in every block, then reading and verifying all of it: fio exits
# 0 and reports no error and MIB MiB written and verified (its terse
# output: field 5 the error, 6 KiB read, 47 KiB written).
fio_verify() {
	_fn=$1 _mb=$2
	shift 2
	timeout $((150 * K)) fio --name=$_fn --filename=$NS --thread --ioengine=libaio \
		--direct=1 --size=${_mb}M --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --timeout=$((120 * K)) --output-format=terse \
		--terse-version=3 "$@" >$T/$_fn.fio 2>&1
	_rc=$?
	_res=$(awk -F';' 'NF > 47 { print $5, $6, $47 }' $T/$_fn.fio)
	echo "# fio $_fn: exit $_rc; error, KiB verified, KiB written: $_res"
	[ $_rc = 0 ] && [ "$_res" = "0 $((_mb * 1024)) $((_mb * 1024))" ] && return 0
	cat $T/$_fn.fio
	return 1
}

# nvme_jobs MIB: the verified fio jobs of MIB MiB (4 KiB random writes at
# iodepth 16, 128 KiB sequential writes at iodepth 8), each timed.
nvme_jobs() {
	now
	_t0=$NOW
	check "fio: 4 KiB random writes, iodepth 16, $1 MiB, crc32c verified" \
		fio_verify rand4k $1 --rw=randwrite --bs=4k --iodepth=16
	now
	_t1=$NOW
	check "fio: 128 KiB sequential writes, iodepth 8, $1 MiB, crc32c verified" \
		fio_verify seq128k $1 --rw=write --bs=128k --iodepth=8
	now
	echo "# block I/O: 4 KiB $((_t1 - _t0)) s, 128 KiB $((NOW - _t1)) s"
}
