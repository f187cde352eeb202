#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: verbs objects.  vhca_objects creates, modifies and destroys every
# object type in a loop and checks the errnos of bad arguments; then the
# kernel's view: rdma resource and rdma statistic, the MAD layer's GSI QP,
# and coherent memory back to where it started (no growth over the cycles);
# rings of destroyed objects kept mapped, and the memory cgroup's charge;
# QPs, SRQs and XRC SRQs destroyed with traffic to them in flight; a
# context's records past its first pair of areas, and one process at the
# device's max_qp.
. "$VHCA_TOP/tests/lib/guest.sh"

export RDMAV_DRIVERS=$VHCA_PROVIDER
OBJ=$VHCA_TOP/build/tests/vhca_objects
CTX=$VHCA_TOP/build/tests/vhca_ctx
CHURN=$VHCA_TOP/build/tests/vhca_churn
QPLIMIT=$VHCA_TOP/build/tests/vhca_qplimit
# Cycles of vhca_objects, each creating, modifying and destroying every
# object type: 500 on the stock kernel (about 25 s under TCG; more would
# repeat what the first cycles show: an object or buffer lost per cycle
# shows in the counts below after one, and the QP numbers are allocated
# cyclically far below their space).
# The debug kernel (KASAN, lockdep, kmemleak; VHCA_KERNEL=debug) runs them
# 3 to 35 times slower and is there for its checkers: they see every
# create, modify and destroy path in the first cycle, and a buffer or
# object lost per cycle still shows in kmemleak after 200.
if [ "$VHCA_KERNEL" = debug ]; then
	CYCLES=${VHCA_OBJECT_CYCLES:-200}
else
	CYCLES=${VHCA_OBJECT_CYCLES:-500}
fi
T=/tmp/objects-test
mkdir -p $T

# debugfs N FIELD: a line of /sys/kernel/debug/vhca/vhca.N/coherent.
coherent() {
	sed -n "s/^$2 //p" /sys/kernel/debug/vhca/vhca.$1/coherent
}

# one_port: vhca0 on veth0 (10.0.0.1).
one_port() {
	check "insmod vhca.ko" load_vhca
	local_pair
	check "rdma link add vhca0" rdma link add vhca0 type vhca netdev veth0
}

# The kernel's view of a new device: the MAD layer's GSI QP, its counters.
gsi() {
	one_port
	check "the MAD layer attached: no port open failure" no_dmesg "vhca0: Couldn.t"
	check "rdma resource lists the GSI QP of vhca0" sh -c \
		'rdma resource show qp link vhca0/1 | grep -q "lqpn 1 .*type GSI"'
	check "rdma statistic shows vhca0's counters" sh -c \
		'rdma statistic show link vhca0/1 | grep -q doorbell_syscalls'
	rdma statistic show link vhca0/1
}
scenario gsi gsi 60

# vhca_objects' cycles and refusals, then coherent memory and the object
# counts back to where they were, and a clean removal.
cycles() {
	one_port
	wait_for 10 gid_index vhca0 10.0.0.1 >/dev/null
	G=$(gid_index vhca0 10.0.0.1)
	check "vhca0 has a RoCE v2 GID for 10.0.0.1 ($G)" test -n "$G"
	out0=$(coherent 0 outstanding)
	bytes0=$(coherent 0 outstanding_bytes)
	echo "# coherent before: $out0 buffers, $bytes0 bytes"
	$OBJ vhca0 "$G" "$CYCLES" >$T/objects 2>&1
	rc=$?
	relay objects $T/objects
	check "vhca_objects exits 0" test $rc = 0
	echo "# coherent after: $(coherent 0 outstanding) buffers, $(coherent 0 outstanding_bytes) bytes"
	check "coherent buffers back to the count before ($out0)" test "$(coherent 0 outstanding)" = "$out0"
	check "coherent bytes back to the count before ($bytes0)" test "$(coherent 0 outstanding_bytes)" = "$bytes0"
	check "no refused coherent free" test "$(coherent 0 bad_frees)" = 0
	cat /sys/kernel/debug/vhca/vhca.0/objects
	check "only the MAD layer's objects are left" sh -c \
		'grep -q "^qp 1$" /sys/kernel/debug/vhca/vhca.0/objects && grep -q "^mr 1$" /sys/kernel/debug/vhca/vhca.0/objects'
	rdma statistic show link vhca0/1
	check "rdma link delete vhca0" rdma link delete vhca0
	check "rmmod vhca" rmmod vhca
	check "no coherent buffer outstanding at removal" no_dmesg "outstanding at removal"
}
scenario cycles cycles 300

# Rings of destroyed CQs that the process keeps mapped (vhca_ctx rings):
# until unmapped they count as CQs and against the context's coherent
# quota, lowered to 1 MiB here (about 250 one-page rings, under a second
# on the stock kernel), so that creation is refused (ENOMEM) at the quota
# rather than never; unmapped, they go and creation works again.  rdma
# statistic names the limit: limit_ctx_coherent, one refusal.
rings() {
	one_port
	P=/sys/module/vhca/parameters/uctx_coherent_mb
	old=$(cat $P)
	c0=$(counter vhca0 limit_ctx_coherent)
	d0=$(counter vhca0 limit_dev_coherent)
	echo 1 >$P
	timeout "$(tmo 60)" "$CTX" rings vhca0 /sys/kernel/debug/vhca/vhca.0 \
		>$T/rings 2>&1
	rc=$?
	echo "$old" >$P
	relay rings $T/rings
	check "vhca_ctx rings exits 0" test $rc = 0
	check "limit_ctx_coherent counts the refusal" \
		test "$(counter vhca0 limit_ctx_coherent)" = $((c0 + 1))
	check "limit_dev_coherent does not" \
		test "$(counter vhca0 limit_dev_coherent)" = "$d0"
	check "no user buffer left" test "$(coherent 0 user_bufs)" = 0
	check "rdma link delete vhca0" rdma link delete vhca0
	check "rmmod vhca" rmmod vhca
	check "no coherent buffer outstanding at removal" no_dmesg "outstanding at removal"
}
scenario rings rings 60

# A context's doorbell records as a provider of one pair of areas sees
# them (vhca_ctx records: create responses that end before the areas'
# offsets): its 1024th CQ is refused (ENOMEM), and rdma statistic names
# the limit, limit_ctx_records, one refusal, and no other.
records() {
	one_port
	r0=$(counter vhca0 limit_ctx_records)
	c0=$(counter vhca0 limit_ctx_coherent)
	o0=$(counter vhca0 limit_objects)
	timeout "$(tmo 60)" "$CTX" records vhca0 >$T/records 2>&1
	rc=$?
	relay records $T/records
	check "vhca_ctx records exits 0" test $rc = 0
	check "limit_ctx_records counts the refusal" \
		test "$(counter vhca0 limit_ctx_records)" = $((r0 + 1))
	check "limit_ctx_coherent and limit_objects do not" \
		test "$(counter vhca0 limit_ctx_coherent)/$(counter vhca0 limit_objects)" = "$c0/$o0"
	check "rdma link delete vhca0" rdma link delete vhca0
	check "rmmod vhca" rmmod vhca
}
scenario records records 60

# Records past a context's first pair of areas (vhca_ctx areas: 2100 CQs,
# three pairs), no limit counted.
areas() {
	one_port
	r0=$(counter vhca0 limit_ctx_records)
	o0=$(counter vhca0 limit_objects)
	timeout "$(tmo 60)" "$CTX" areas vhca0 >$T/areas 2>&1
	rc=$?
	relay areas $T/areas
	check "vhca_ctx areas exits 0" test $rc = 0
	check "limit_ctx_records and limit_objects count nothing" \
		test "$(counter vhca0 limit_ctx_records)/$(counter vhca0 limit_objects)" = "$r0/$o0"
	check "rdma link delete vhca0" rdma link delete vhca0
	check "rmmod vhca" rmmod vhca
}
scenario areas areas 60

# qps_left N: vhca0 has N QPs (rdma resource lists one a line).
qps_left() {
	test "$(rdma resource show qp link vhca0/1 | grep -c lqpn)" = "$1"
}

# One process's QPs (vhca_qplimit): max_qp of them, then ENOMEM counted
# in limit_objects once; a SEND both ways through the context's last pair
# of areas; then the process exits holding them all, and every QP but the
# GSI QP and every coherent buffer it had go.
qplimit() {
	one_port
	wait_for 10 gid_index vhca0 10.0.0.1 >/dev/null
	G=$(gid_index vhca0 10.0.0.1)
	check "vhca0 has a RoCE v2 GID for 10.0.0.1 ($G)" test -n "$G"
	out0=$(coherent 0 outstanding)
	o0=$(counter vhca0 limit_objects)
	timeout "$(tmo 240)" "$QPLIMIT" vhca0 "$G" >$T/qplimit 2>&1
	rc=$?
	relay qplimit $T/qplimit
	check "vhca_qplimit exits 0" test $rc = 0
	check "it exited holding its QPs" grep -q "^HOLDING" $T/qplimit
	check "limit_objects counts its one refusal" \
		test "$(counter vhca0 limit_objects)" = $((o0 + 1))
	check "its QPs gone after its exit: the GSI QP left" wait_for 60 qps_left 1
	check "its coherent buffers gone" \
		wait_for 30 sh -c "test \"\$(sed -n 's/^outstanding //p' /sys/kernel/debug/vhca/vhca.0/coherent)\" = $out0"
	check "rdma link delete vhca0" rdma link delete vhca0
	check "rmmod vhca" rmmod vhca
}
scenario qplimit qplimit 300 stock

# A user ring is charged to the memory cgroup of its process (vhca_ctx
# charge: a 1 MiB CQ ring in memory.current).
charge() {
	one_port
	CG=/sys/fs/cgroup
	mountpoint -q $CG || mount -t cgroup2 none $CG
	check "the memory controller is enabled below the root" sh -c \
		"echo +memory >$CG/cgroup.subtree_control"
	mkdir -p $CG/vhca-charge
	timeout "$(tmo 60)" sh -c "echo \$\$ >$CG/vhca-charge/cgroup.procs &&
		exec '$CTX' charge vhca0 $CG/vhca-charge" >$T/charge 2>&1
	rc=$?
	relay charge $T/charge
	check "vhca_ctx charge exits 0" test $rc = 0
	rmdir $CG/vhca-charge
}
scenario charge charge 60

# QPs, SRQs and XRC SRQs destroyed while traffic to them is in flight
# (vhca_churn), delivered in the kernel, then through the IP stack
# (force_wire): each round 5 QPs, an SRQ and an XRC SRQ, so 500 rounds
# destroy 2500 QPs a pass (100 on the debug kernel, whose KASAN is what
# sees a receiver, timer or work item left in a QP, SRQ or XRC SRQ
# freed).  The destroys per second are a figure.
churn() {
	one_port
	wait_for 10 gid_index vhca0 10.0.0.1 >/dev/null
	G=$(gid_index vhca0 10.0.0.1)
	if [ "$VHCA_KERNEL" = debug ]; then
		rounds=${VHCA_CHURN_ROUNDS:-100}
	else
		rounds=${VHCA_CHURN_ROUNDS:-500}
	fi
	FW=/sys/module/vhca/parameters/force_wire
	for path in local wire; do
		[ $path = wire ] && echo 1 >$FW
		timeout "$(tmo 120)" "$CHURN" vhca0 "$G" "$rounds" \
			>$T/churn-$path 2>&1
		rc=$?
		relay "churn $path" $T/churn-$path
		check "vhca_churn over the $path path exits 0" test $rc = 0
	done
	echo 0 >$FW
	check "only the MAD layer's QP is left" \
		grep -q "^qp 1$" /sys/kernel/debug/vhca/vhca.0/objects
	check "rdma link delete vhca0" rdma link delete vhca0
	check "rmmod vhca" rmmod vhca
}
scenario churn churn 240

run_scenarios "$@"
