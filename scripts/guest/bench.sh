#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: make bench.  perftest between two vhca ports in one namespace
# (local pair), between two namespaces over a veth pair (the wire), then,
# with vhca unloaded (6.12's rdma_rxe binds UDP 4791 in the initial
# namespace when it loads), between two rdma_rxe ports on a veth pair in the
# initial namespace; and the guest's memcpy bandwidth.  Writes the table to
# $VHCA_OUT/bench.txt, perftest's outputs to $VHCA_OUT/perftest/.  Fails
# only when a tool fails to run or prints no figure, never because of a
# figure.
. "$VHCA_TOP/scripts/guest/lib.sh"

export RDMAV_DRIVERS=$VHCA_TOP/build/provider/libvhca
T=/tmp/bench
R=$T/results
mkdir -p $T "$VHCA_OUT/perftest"
: >$R
# usage: bench.sh [BW_ITERS [LAT_ITERS]]: iterations of the 64 KiB
# bandwidth tests (the 64-byte message rate test runs 20 times as many) and
# of the latency tests.
BW_ITERS=${1:-1000}
LAT_ITERS=${2:-2000}
PORT=18515

# The tests: NAME TOOL ARGS COLUMN (of perftest's result table).
TESTS="write_bw:ib_write_bw:-s 65536 -n $BW_ITERS:BW_average
send_bw:ib_send_bw:-s 65536 -n $BW_ITERS:BW_average
read_bw:ib_read_bw:-s 65536 -n $BW_ITERS:BW_average
write_rate:ib_write_bw:-s 64 -n $((BW_ITERS * 20)):MsgRate
write_lat:ib_write_lat:-s 2 -n $LAT_ITERS:t_typical
send_lat:ib_send_lat:-s 2 -n $LAT_ITERS:t_typical"

# perftest converts its time stamps with a CPU frequency it calibrates at
# start (rdtsc against gettimeofday).  On a loaded host the vCPU can be
# descheduled while it samples: it then says so on standard error and its
# figures are wrong (0.00 MB/s, inf or a latency many times too long).
CALIB='differs from nominal|Correlation coefficient|Conflicting CPU frequency'
# Repeated runs, over the whole bench: a bound on its duration.
RETRIES=6

# pt_column FILE NAME: the value in column NAME (BW_average, MsgRate,
# t_typical) of the first row of perftest's result table: the header starts
# with "#bytes"; names made of two words are joined first.
pt_column() {
	awk -v want="$2" '
	/^ *#bytes/ {
		h = $0
		gsub(/BW peak/, "BW_peak", h)
		gsub(/BW average/, "BW_average", h)
		gsub(/% percentile/, "%_percentile", h)
		n = split(h, f, " ")
		col = 0
		for (i = 1; i <= n; i++)
			if (index(f[i], want) == 1)
				col = i
		next
	}
	col && $1 ~ /^[0-9]+$/ && $col ~ /^[0-9.]+$/ { print $col; exit }' "$1"
}

# run_pt FILE SERVER_DEV SERVER_GID CLIENT_PREFIX CLIENT_DEV CLIENT_GID TOOL
# ARGS: one server and one client; FILE.srv and FILE.cli keep their output.
run_pt() {
	timeout 120 $7 -F -p $PORT -d "$2" -x "$3" $8 >$1.srv 2>&1 &
	_p=$!
	wait_for 20 listening $PORT
	timeout 120 $4 $7 -F -p $PORT -d "$5" -x "$6" $8 10.0.0.1 >$1.cli 2>&1
	_c=$?
	wait $_p
	_s=$?
}

# measure CONFIG SERVER_DEV SERVER_GID CLIENT_PREFIX CLIENT_DEV CLIENT_GID:
# every test, server first; records "CONFIG NAME VALUE" in $R, the value
# followed by "?" when perftest's clock calibration failed in the last
# attempt.  A run whose client has no positive figure, or whose calibration
# failed, is repeated: three attempts at most, RETRIES in all.
measure() {
	for _t in $(echo "$TESTS" | tr ' ' '#'); do
		_t=$(echo "$_t" | tr '#' ' ')
		_name=${_t%%:*}
		_rest=${_t#*:}
		_tool=${_rest%%:*}
		_rest=${_rest#*:}
		_args=${_rest%%:*}
		_col=${_rest#*:}
		_f=$T/$1-$_name
		_t0=$(date +%s)
		_try=1
		while :; do
			run_pt $_f "$2" "$3" "$4" "$5" "$6" $_tool "$_args"
			_v=$(pt_column $_f.cli "$_col")
			_bad=
			grep -Eq "$CALIB" $_f.cli && _bad="?"
			[ $_c = 0 ] && [ $_s = 0 ] || break
			[ -n "$_v" ] && awk "BEGIN { exit !($_v > 0) }" && [ -z "$_bad" ] && break
			echo "$1 $_name: attempt $_try: figure '$_v'; perftest said:"
			grep -Eh "$CALIB" $_f.cli $_f.srv | sort -u
			[ $_try = 3 ] || [ $RETRIES = 0 ] && break
			_try=$((_try + 1))
			RETRIES=$((RETRIES - 1))
		done
		cp $_f.cli "$VHCA_OUT/perftest/$1-$_name.cli"
		cp $_f.srv "$VHCA_OUT/perftest/$1-$_name.srv"
		echo "$1 $_name: $_tool $_args: $_v$_bad ($_col), $_try attempt(s), $(($(date +%s) - _t0)) s"
		if [ $_c = 0 ] && [ $_s = 0 ] && [ -n "$_v" ] && awk "BEGIN { exit !($_v > 0) }"; then
			pass "$1: $_tool $_args"
			echo "$1 $_name $_v$_bad" >>$R
		else
			fail "$1: $_tool $_args (client exit $_c, server exit $_s, figure '$_v')"
			tail -n 15 $_f.srv $_f.cli
		fi
	done
}

# ---- vhca, two ports in one namespace
check "insmod vhca.ko" load_vhca
local_pair
check "rdma link add vhca0, vhca1" sh -c \
	'rdma link add vhca0 type vhca netdev veth0 && rdma link add vhca1 type vhca netdev veth1'
port_gids
measure local vhca0 "$G0" "" vhca1 "$G1"
rdma statistic show link vhca0/1
rdma statistic show link vhca1/1
check "rdma link delete vhca0, vhca1" sh -c 'rdma link delete vhca0 && rdma link delete vhca1'
ip link del veth0

# ---- vhca, two namespaces over the veth wire
peer_host
check "rdma link add vhca0, and vhca1 in the peer namespace" sh -c \
	'rdma link add vhca0 type vhca netdev veth0 && ip netns exec peer rdma link add vhca1 type vhca netdev veth1'
port_gids
measure wire vhca0 "$G0" "ip netns exec peer" vhca1 "$G1"
rdma statistic show link vhca0/1
ip netns exec peer rdma statistic show link vhca1/1
check "rdma link delete vhca0, vhca1" sh -c \
	'rdma link delete vhca0 && ip netns exec peer rdma link delete vhca1'
ip netns del peer
check "rmmod vhca" rmmod vhca

# ---- rdma_rxe: one device per end of a veth pair in the initial namespace
# (6.12's rxe works there only).  Between two local addresses the route is
# lo, which has no rxe device: policy routing and static neighbours force
# 10.0.0.1 <-> 10.0.0.2 over the veth wire.
rxe_pair() {
	modprobe rdma_rxe || return 1
	local_pair && wire_routes &&
		rdma link add rxe0 type rxe netdev veth0 &&
		rdma link add rxe1 type rxe netdev veth1
}
check "rdma_rxe: rxe0 on veth0, rxe1 on veth1" rxe_pair
wait_for 10 gid_index rxe1 10.0.0.2 >/dev/null
X0=$(gid_index rxe0 10.0.0.1)
X1=$(gid_index rxe1 10.0.0.2)
measure rxe rxe0 "$X0" "" rxe1 "$X1"
rdma link delete rxe0
rdma link delete rxe1

# ---- memcpy
$VHCA_TOP/build/tests/vhca_memcpy 3 >$T/memcpy.out 2>&1
_c=$?
cat $T/memcpy.out
M=$(sed -n 's/^memcpy_bw_MBps \([0-9.]*\)$/\1/p' $T/memcpy.out)
if [ $_c = 0 ] && [ -n "$M" ]; then
	pass "memcpy bandwidth"
	echo "memcpy memcpy $M" >>$R
else
	fail "memcpy bandwidth (exit $_c)"
fi

# ---- the table: figures, ratios and DESIGN.md's targets (not asserted)
awk '
function get(c, t) { return ((c SUBSEP t) in v) ? v[c, t] : "" }
function fig(x) { return x == "" ? "-" : x }
function ratio(a, b,  q) {
	if (a == "" || b == "" || b + 0 == 0)
		return "-"
	q = (a ~ /\?$/ || b ~ /\?$/) ? "?" : ""
	return sprintf("%.2fx%s", a / b, q)
}
{ v[$1, $2] = $3 }
END {
	split("write_bw send_bw read_bw write_rate write_lat send_lat", order, " ")
	unit["write_bw"] = "MB/s"; unit["send_bw"] = "MB/s"; unit["read_bw"] = "MB/s"
	unit["write_rate"] = "Mpps"; unit["write_lat"] = "us"; unit["send_lat"] = "us"
	desc["write_bw"] = "ib_write_bw 64 KiB"; desc["send_bw"] = "ib_send_bw 64 KiB"
	desc["read_bw"] = "ib_read_bw 64 KiB"; desc["write_rate"] = "ib_write_bw 64 B rate"
	desc["write_lat"] = "ib_write_lat 2 B typ."; desc["send_lat"] = "ib_send_lat 2 B typ."
	tgt["write_bw"] = "local>=10x rxe, local>=0.50x memcpy, wire>=3x rxe"
	tgt["write_rate"] = "local, wire >=3x rxe"
	tgt["send_lat"] = "<=0.5x rxe"
	m = get("memcpy", "memcpy")
	printf "%-22s %-5s %10s %10s %10s %9s %9s %9s  %s\n", "test", "unit", "vhca-local", "vhca-wire", "rxe", "local/rxe", "wire/rxe", "loc/mcpy", "DESIGN.md target"
	for (i = 1; i <= 6; i++) {
		t = order[i]
		l = get("local", t); w = get("wire", t); r = get("rxe", t)
		mc = unit[t] == "MB/s" ? ratio(l, m) : "-"
		printf "%-22s %-5s %10s %10s %10s %9s %9s %9s  %s\n", desc[t], unit[t], fig(l), fig(w), fig(r), ratio(l, r), ratio(w, r), mc, (t in tgt) ? tgt[t] : "-"
	}
	printf "%-22s %-5s %10s\n", "guest memcpy 64 MiB", "MB/s", fig(m)
	print "MB = 2^20 bytes (perftest); latency ratios: lower is better."
	print "?: perftest warned that its clock calibration failed (a loaded host): unreliable."
}' $R >$T/table
echo "===== bench ====="
cat $T/table
cp $T/table "$VHCA_OUT/bench.txt"
finish
