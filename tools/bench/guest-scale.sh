#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: make bench's scale section (Documentation/bench.md, "Scale").  For
# vhca, then, vhca unloaded (6.12's rdma_rxe binds UDP 4791 in the initial
# namespace when it loads), for rdma_rxe: two ports on the two ends of a
# veth pair in the initial namespace, 10.0.0.1 <-> 10.0.0.2 routed over it
# (local_pair, wire_routes), and on them
#   - ib_write_bw of 64 KiB and of 64 B (the message rate) over 1, 4, 16
#     and 64 QPs (perftest's -q), each for a time (-D);
#   - build/tests/vhca_scale (tools/bench/vhca_scale.c): QP create and
#     destroy, MR register and deregister per second and the kernel memory
#     each object holds; RDMA CM connect+disconnect per second, one at a
#     time and 64 at once; the QPs one process gets and the time its exit
#     takes holding them.
# Writes the table to $VHCA_OUT/scale.txt.  Every run has a time limit; a
# figure a run could not produce is "-" in the table and its reason is
# printed below it.  Fails only when a vhca run fails (rdma_rxe's failures
# and hangs are reported as skipped results), never because of a figure.
. "$VHCA_TOP/tests/lib/guest.sh"
. "$VHCA_TOP/tests/lib/perftest.sh"

export RDMAV_DRIVERS=$VHCA_TOP/build/provider/libvhca
SCALE=$VHCA_TOP/build/tests/vhca_scale
T=/tmp/scale
R=$T/results
N=$T/notes
mkdir -p $T "$VHCA_OUT/perftest"
: >$R
: >$N
# usage: guest-scale.sh [SECONDS [NQP [QP_CAP]]]: how long each perftest
# run writes (perftest's -D; its first and last second are not measured),
# the QPs of the create and destroy rates, and the most QPs the limit run
# creates.
SECS=${1:-4}
NQP=${2:-1000}
QP_CAP=${3:-16400}
# 4 KiB MRs held at once; RDMA CM cycles one at a time and rounds of 64.
NMR=8192
CM_CYCLES=100
CM_ROUNDS=4
QPS="1 4 16 64"

# outcome CONFIG WHAT STATUS LIMIT: the result of a run that ended with
# STATUS under a time limit of LIMIT seconds; "$REASON" says why it gave
# no figure.  A run of rxe that fails is a skipped result: rxe's own
# trouble (its hang with 64 QPs of 64-byte writes) is not make bench's.
outcome() {
	case $3 in
	0) REASON= ;;
	124) REASON="stopped after $4 s" ;;
	nofig) REASON="no figure" ;;
	*) REASON="exit $3" ;;
	esac
	if [ -z "$REASON" ]; then
		pass "$1: $2"
	elif [ "$1" = rxe ]; then
		skip "$1: $2" "$REASON"
	else
		fail "$1: $2 ($REASON)"
	fi
}

# scale CONFIG LIMIT NAME ARGS...: vhca_scale ARGS within LIMIT seconds;
# its "name value" lines go into $R as "CONFIG name value".
scale() {
	_sc=$1 _sl=$2 _sn=$3
	shift 3
	timeout "$_sl" "$SCALE" "$@" >$T/$_sc-$_sn.out 2>&1
	_sr=$?
	cp $T/$_sc-$_sn.out "$VHCA_OUT/"
	sed -n "s/^\([a-z0-9_]*\) \([^ ]*\)\$/$_sc \1 \2/p" $T/$_sc-$_sn.out >>$R
	outcome $_sc "vhca_scale $*" $_sr "$_sl"
	if [ -n "$REASON" ]; then
		echo "$_sc $_sn: vhca_scale $*: $REASON: $(tail -n 1 $T/$_sc-$_sn.out)" >>$N
		tail -n 5 $T/$_sc-$_sn.out
	fi
}

# pt_scale CONFIG LIMIT SERVER_DEV SERVER_GID CLIENT_DEV CLIENT_GID:
# ib_write_bw of 64 KiB (BW_average) and of 64 B (MsgRate) over each
# number of QPs, each process stopped after LIMIT seconds.  A run without
# a figure, or whose clock calibration failed, is repeated once unless it
# was stopped; a figure that still comes with the warning is marked "?".
pt_scale() {
	PT_TMO=$2
	for _q in $QPS; do
		for _k in bw rate; do
			if [ $_k = bw ]; then
				_a="-s 65536 -D $SECS -f 1 -q $_q" _col=BW_average
			else
				_a="-s 64 -D $SECS -f 1 -q $_q" _col=MsgRate
			fi
			_n=write_${_k}_q$_q
			_f=$T/$1-$_n
			_try=1
			while :; do
				run_pt $_f "$3" "$4" "" "$5" "$6" ib_write_bw "$_a"
				_v=$(pt_column $_f.cli $_col)
				_bad=
				grep -Eq "$CALIB" $_f.cli && _bad="?"
				[ $_c = 124 ] || [ $_s = 124 ] || [ $_try = 2 ] && break
				[ $_c = 0 ] && [ $_s = 0 ] && [ -n "$_v" ] && [ -z "$_bad" ] &&
					awk "BEGIN { exit !($_v > 0) }" && break
				_try=2
			done
			cp $_f.cli "$VHCA_OUT/perftest/$1-$_n.cli"
			cp $_f.srv "$VHCA_OUT/perftest/$1-$_n.srv"
			if [ $_c != 0 ]; then
				_st=$_c
			elif [ $_s != 0 ]; then
				_st=$_s
			elif [ -n "$_v" ] && awk "BEGIN { exit !($_v > 0) }"; then
				_st=0
			else
				_st=nofig
			fi
			outcome $1 "ib_write_bw $_a${_v:+: $_v$_bad}" $_st $2
			if [ -z "$REASON" ]; then
				echo "$1 $_n $_v$_bad" >>$R
			else
				echo "$1 $_n: ib_write_bw $_a: $REASON" >>$N
				tail -n 5 $_f.srv $_f.cli
			fi
		done
	done
}

# measure CONFIG DEV0 GID0 DEV1 GID1 LIMIT: everything on one pair of
# ports, each run stopped after LIMIT seconds (the QP limit's after 10
# times as long): the objects first, while the guest's memory is as the
# boot left it; perftest last, where rxe may hang.
measure() {
	scale $1 $6 objects objects "$4" $NQP $NMR
	scale $1 $6 cm cm 10.0.0.1 10.0.0.2 $CM_CYCLES $CM_ROUNDS
	scale $1 $(($6 * 10)) limit limit "$2" $QP_CAP
	pt_scale $1 $6 "$2" "$3" "$4" "$5"
}

# ---- vhca
check "insmod vhca.ko" load_vhca
local_pair
check "10.0.0.1 <-> 10.0.0.2 routed over the veth pair" wire_routes
check "rdma link add vhca0, vhca1" links_add
port_gids
measure vhca vhca0 "$G0" vhca1 "$G1" 60
check "rdma link delete vhca0, vhca1" sh -c 'rdma link delete vhca0 && rdma link delete vhca1'
ip link del veth0
routes_reset
check "rmmod vhca" wait_for 30 rmmod vhca

# ---- rdma_rxe
rxe_pair() {
	modprobe rdma_rxe && local_pair && wire_routes && rxe_links
}
check "rdma_rxe: rxe0 on veth0, rxe1 on veth1" rxe_pair
measure rxe rxe0 "$X0" rxe1 "$X1" 60

# ---- the table: figures and ratios, never checked; written before rxe's
# ports go, which a hung rxe QP could hold up.
awk -v notes="$N" '
function get(c, t) { return ((c SUBSEP t) in v) ? v[c, t] : "" }
function fig(x) { return x == "" ? "-" : x }
function ratio(a, b,  q) {
	if (a == "" || b == "" || a !~ /^[0-9.]+\??$/ || b !~ /^[0-9.]+\??$/ || b + 0 == 0)
		return "-"
	q = (a ~ /\?$/ || b ~ /\?$/) ? "?" : ""
	return sprintf("%.2fx%s", a / b, q)
}
function kib(x) { return x == "" ? "" : sprintf("%.1f", x / 1024) }
function row(d, u, a, b, better) {
	printf "%-34s %-6s %10s %10s %9s  %s\n", d, u, fig(a), fig(b), ratio(a, b), better
}
{ v[$1, $2] = $3 }
END {
	printf "%-34s %-6s %10s %10s %9s  %s\n", "test", "unit", "vhca", "rxe", "vhca/rxe", "better"
	split("1 4 16 64", q, " ")
	for (i = 1; i <= 4; i++)
		row(sprintf("ib_write_bw 64 KiB, %2d QP%s", q[i], q[i] == 1 ? "" : "s"), "MB/s",
		    get("vhca", "write_bw_q" q[i]), get("rxe", "write_bw_q" q[i]), "higher")
	for (i = 1; i <= 4; i++)
		row(sprintf("ib_write_bw 64 B rate, %2d QP%s", q[i], q[i] == 1 ? "" : "s"), "Mpps",
		    get("vhca", "write_rate_q" q[i]), get("rxe", "write_rate_q" q[i]), "higher")
	# Each engine against itself: does the rate grow with the QPs?
	printf "%-34s %-6s %10s %10s %9s  %s\n", "  64 B rate, 16 QPs / 1 QP", "", ratio(get("vhca", "write_rate_q16"), get("vhca", "write_rate_q1")), ratio(get("rxe", "write_rate_q16"), get("rxe", "write_rate_q1")), "", "higher"
	row("QP create (RC 128/128 WRs)", "1/s", get("vhca", "qp_create_per_s"), get("rxe", "qp_create_per_s"), "higher")
	row("QP destroy", "1/s", get("vhca", "qp_destroy_per_s"), get("rxe", "qp_destroy_per_s"), "higher")
	row("kernel memory per QP", "KiB", kib(get("vhca", "qp_kmem_bytes")), kib(get("rxe", "qp_kmem_bytes")), "lower")
	split("4k 1m 64m", m, " ")
	split("4 KiB,1 MiB,64 MiB", ms, ",")
	for (i = 1; i <= 3; i++) {
		row("MR register " ms[i], "1/s", get("vhca", "mr_reg_per_s_" m[i]), get("rxe", "mr_reg_per_s_" m[i]), "higher")
		row("MR deregister " ms[i], "1/s", get("vhca", "mr_dereg_per_s_" m[i]), get("rxe", "mr_dereg_per_s_" m[i]), "higher")
		row("kernel memory per MR " ms[i], "KiB", kib(get("vhca", "mr_kmem_bytes_" m[i])), kib(get("rxe", "mr_kmem_bytes_" m[i])), "lower")
	}
	row("RDMA CM connect+disconnect, seq.", "1/s", get("vhca", "cm_seq_per_s"), get("rxe", "cm_seq_per_s"), "higher")
	row("RDMA CM connect+disconnect, 64", "1/s", get("vhca", "cm_64_per_s"), get("rxe", "cm_64_per_s"), "higher")
	# A run that stopped at its cap gives a lower bound: no ratio.
	a = get("vhca", "qp_limit")
	b = get("rxe", "qp_limit")
	if (get("vhca", "qp_limit_stop") == "cap")
		a = a "+"
	if (get("rxe", "qp_limit_stop") == "cap")
		b = b "+"
	row("QPs one process gets (RC 64/64)", "QPs", a, b, "higher")
	printf "%-34s %-6s %10s %10s\n", "  stopped by", "", fig(get("vhca", "qp_limit_stop")), fig(get("rxe", "qp_limit_stop"))
	row("  time to create them", "s", get("vhca", "qp_limit_create_s"), get("rxe", "qp_limit_create_s"), "lower")
	row("  its exit holding them", "s", get("vhca", "qp_exit_s"), get("rxe", "qp_exit_s"), "lower")
	print "MB = 2^20 bytes (perftest); kernel memory: MemTotal - MemFree - Buffers - Cached -"
	print "AnonPages of /proc/meminfo, its change while one process holds the objects, per object."
	print "\"stopped by\": the errno of the refused create, or \"cap\" (the run makes no more)."
	print "?: perftest warned that its clock calibration failed (a loaded host): unreliable."
	while ((getline l < notes) > 0) {
		if (!nn++)
			print "-: no figure:"
		print "  " l
	}
}' $R >$T/table
echo "===== scale ====="
cat $T/table
cp $T/table "$VHCA_OUT/scale.txt"
timeout 60 sh -c 'rdma link delete rxe0 && rdma link delete rxe1'
outcome rxe "rdma link delete rxe0, rxe1" $? 60
finish
