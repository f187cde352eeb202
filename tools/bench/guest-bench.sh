#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: make bench.  perftest between two vhca ports in one namespace
# (local pair), between two namespaces over a veth pair (the wire), then,
# with vhca unloaded (6.12's rdma_rxe binds UDP 4791 in the initial
# namespace when it loads), between two rdma_rxe ports on a veth pair in the
# initial namespace; and the guest's memcpy bandwidth, in userspace and in
# the kernel.  Writes the table to $VHCA_OUT/bench.txt, perftest's outputs
# to $VHCA_OUT/perftest/.  Fails only when a tool fails to run or prints no
# figure, never because of a figure.
. "$VHCA_TOP/tests/lib/guest.sh"
. "$VHCA_TOP/tests/lib/perftest.sh"

export RDMAV_DRIVERS=$VHCA_TOP/build/provider/libvhca
T=/tmp/bench
R=$T/results
C=$T/costs
mkdir -p $T "$VHCA_OUT/perftest"
: >$R
: >$C
# usage: bench.sh [BW_ITERS [LAT_ITERS]]: iterations of the 64 KiB
# bandwidth tests (the 64-byte message rate test runs 20 times as many) and
# of the latency tests.
BW_ITERS=${1:-1000}
LAT_ITERS=${2:-2000}

# The tests: NAME TOOL ARGS COLUMN (of perftest's result table).
TESTS="write_bw:ib_write_bw:-s 65536 -n $BW_ITERS:BW_average
send_bw:ib_send_bw:-s 65536 -n $BW_ITERS:BW_average
read_bw:ib_read_bw:-s 65536 -n $BW_ITERS:BW_average
write_rate:ib_write_bw:-s 64 -n $((BW_ITERS * 20)):MsgRate
write_lat:ib_write_lat:-s 2 -n $LAT_ITERS:t_typical
send_lat:ib_send_lat:-s 2 -n $LAT_ITERS:t_typical
read_lat:ib_read_lat:-s 2 -n $LAT_ITERS:t_typical"

# Repeated runs, over the whole bench: a bound on its duration.
RETRIES=6

# busy: the jiffies (USER_HZ) all CPUs spent outside idle and iowait.
busy() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9; exit }' /proc/stat
}

# db_syscalls CONFIG: the doorbell system calls of both vhca ports so far
# (0 for rxe, which has no such counter).
db_syscalls() {
	case $1 in
	local) total doorbell_syscalls ;;
	wire*) VHCA1_NS=peer total doorbell_syscalls ;;
	*) echo 0 ;;
	esac
}

# cost CONFIG NAME ARGS J0 D0: records "CONFIG NAME CPU_S_PER_GIB
# SYSCALLS_PER_ITER" in $C for the attempt that started at busy J0 and
# doorbell system calls D0: guest CPU seconds (both ends, the whole run) per
# GiB of messages, for the bandwidth tests, and doorbell system calls per
# iteration (vhca only).
cost() {
	_n=$(echo "$3" | sed -n 's/.*-n \([0-9]*\).*/\1/p')
	_sz=$(echo "$3" | sed -n 's/.*-s \([0-9]*\).*/\1/p')
	awk -v j=$(($(busy) - $4)) -v hz="$(getconf CLK_TCK)" -v n="$_n" \
		-v sz="$_sz" -v d=$(($(db_syscalls $1) - $5)) -v c="$1" -v t="$2" \
		'BEGIN {
			g = sz >= 65536 ? sprintf("%.1f", j / hz / (n * sz / 2^30)) : "-"
			s = c ~ /^rxe/ ? "-" : sprintf("%.3f", d / n)
			print c, t, g, s
		}' >>$C
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
			_j0=$(busy) _d0=$(db_syscalls $1)
			run_pt $_f "$2" "$3" "$4" "$5" "$6" $_tool "$_args"
			cost $1 $_name "$_args" $_j0 $_d0
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
			# A latency's minimum too: the engine's floor, which
			# the host's slow phases (bench.md) do not reach.
			_m=
			[ "$_col" = t_typical ] && _m=$(pt_column $_f.cli t_min)
			[ -z "$_m" ] || echo "$1 ${_name}_min $_m$_bad" >>$R
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
# The stack's own round trip over this wire, without RDMA: the floor under
# the wire's ib_read_lat, whose request and response each cross it once.
if $VHCA_TOP/build/tests/vhca_udp_rtt peer 10.0.0.1 10.0.0.2 $LAT_ITERS \
	>$T/udp_rtt.out 2>&1; then
	pass "UDP round trip over the wire"
	sed -n 's/^udp_rtt_median_us /wire udp_rtt /p; s/^udp_rtt_min_us /wire udp_rtt_min /p' \
		$T/udp_rtt.out >>$R
else
	fail "UDP round trip over the wire"
	cat $T/udp_rtt.out
fi
rdma statistic show link vhca0/1
ip netns exec peer rdma statistic show link vhca1/1
check "rdma link delete vhca0, vhca1" sh -c \
	'rdma link delete vhca0 && ip netns exec peer rdma link delete vhca1'

# ---- jumbo frames: the bandwidth tests again with path MTU 4096 on a
# veth MTU of 9000, vhca over the wire here and rxe below.
JUMBO_TESTS=$(echo "$TESTS" | grep '^[a-z]*_bw:' | sed 's/:BW_average$/ -m 4096:BW_average/')
jumbo() {
	_saved=$TESTS
	TESTS=$JUMBO_TESTS
	measure "$@"
	TESTS=$_saved
}
check "veth MTU 9000; vhca0, and vhca1 in the peer namespace" sh -c \
	'ip link set veth0 mtu 9000 && ip -n peer link set veth1 mtu 9000 &&
	rdma link add vhca0 type vhca netdev veth0 &&
	ip netns exec peer rdma link add vhca1 type vhca netdev veth1'
port_gids
ibv_devinfo -d vhca0 | grep -E 'max_mtu|active_mtu'
jumbo wire9k vhca0 "$G0" "ip netns exec peer" vhca1 "$G1"
check "rdma link delete vhca0, vhca1" sh -c \
	'rdma link delete vhca0 && ip netns exec peer rdma link delete vhca1'
ip netns del peer
check "rmmod vhca" rmmod vhca

# ---- rdma_rxe: one device per end of a veth pair in the initial namespace
# (6.12's rxe works there only).  Between two local addresses the route is
# lo, which has no rxe device: policy routing and static neighbours force
# 10.0.0.1 <-> 10.0.0.2 over the veth wire.
rxe_pair() {
	modprobe rdma_rxe && local_pair && wire_routes && rxe_links
}
check "rdma_rxe: rxe0 on veth0, rxe1 on veth1" rxe_pair
measure rxe rxe0 "$X0" "" rxe1 "$X1"
rdma link delete rxe0
rdma link delete rxe1
rxe_jumbo() {
	ip link set veth0 mtu 9000 && ip link set veth1 mtu 9000 && rxe_links
}
check "veth MTU 9000; rxe0 on veth0, rxe1 on veth1" rxe_jumbo
jumbo rxe9k rxe0 "$X0" "" rxe1 "$X1"
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

# ---- the kernel's copy: dd reading a 64 MiB file of a tmpfs in 64 KiB
# blocks is copy_to_user from the page cache, the copy an in-kernel engine
# makes (under TCG it can be several times faster than glibc's memcpy in
# userspace); the best of three reads, in MB (2^20 bytes) per second.
kcopy() {
	mkdir -p $T/tmpfs && mount -t tmpfs -o size=80m none $T/tmpfs &&
		dd if=/dev/zero of=$T/tmpfs/f bs=1M count=64 2>/dev/null || return 1
	for _i in 1 2 3; do
		dd if=$T/tmpfs/f of=/dev/null bs=64k 2>&1 || return 1
	done >$T/kcopy.out
	umount $T/tmpfs
	K=$(awk '/ copied, / { for (i = 1; i < NF; i++) if ($(i + 1) == "s,") {
		v = $1 / $i / 1048576; if (v > best) best = v } }
		END { if (best) printf "%.0f", best }' $T/kcopy.out)
	[ -n "$K" ]
}
if kcopy; then
	pass "kernel copy bandwidth"
	echo "kernel copy $K MB/s (dd, tmpfs to /dev/null, 64 KiB blocks)"
	echo "kcopy kcopy $K" >>$R
else
	fail "kernel copy bandwidth"
	cat $T/kcopy.out
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
# a - b: what a latency adds to the bare UDP round trip
function above(a, b,  q) {
	if (a == "" || b == "")
		return ""
	q = (a ~ /\?$/ || b ~ /\?$/) ? "?" : ""
	return sprintf("%.2f%s", a - b, q)
}
{ v[$1, $2] = $3 }
END {
	n = split("write_bw send_bw read_bw write_rate write_lat send_lat read_lat write_lat_min send_lat_min read_lat_min udp_rtt udp_rtt_min read_above read_above_min", order, " ")
	unit["write_bw"] = "MB/s"; unit["send_bw"] = "MB/s"; unit["read_bw"] = "MB/s"
	unit["write_rate"] = "Mpps"; unit["write_lat"] = "us"; unit["send_lat"] = "us"
	unit["read_lat"] = "us"; unit["write_lat_min"] = "us"; unit["send_lat_min"] = "us"
	unit["read_lat_min"] = "us"; unit["udp_rtt"] = "us"; unit["udp_rtt_min"] = "us"
	unit["read_above"] = "us"; unit["read_above_min"] = "us"
	desc["write_bw"] = "ib_write_bw 64 KiB"; desc["send_bw"] = "ib_send_bw 64 KiB"
	desc["read_bw"] = "ib_read_bw 64 KiB"; desc["write_rate"] = "ib_write_bw 64 B rate"
	desc["write_lat"] = "ib_write_lat 2 B typ."; desc["send_lat"] = "ib_send_lat 2 B typ."
	desc["read_lat"] = "ib_read_lat 2 B typ."
	desc["write_lat_min"] = "ib_write_lat 2 B min."; desc["send_lat_min"] = "ib_send_lat 2 B min."
	desc["read_lat_min"] = "ib_read_lat 2 B min."
	desc["udp_rtt"] = "UDP round trip median"; desc["udp_rtt_min"] = "UDP round trip min."
	desc["read_above"] = "read_lat - UDP rtt typ"; desc["read_above_min"] = "read_lat - UDP rtt min"
	tgt["read_above"] = "what the RDMA path adds to the bare UDP round trip"
	tgt["udp_rtt"] = "the stack alone: floor of wire read_lat"
	tgt["write_bw"] = "local>=10x rxe, local>=0.50x kcopy, wire>=3x rxe"
	tgt["write_rate"] = "local, wire >=3x rxe"
	tgt["send_bw"] = "local>=0.8x local write_bw"
	tgt["write_lat"] = "<=0.5x rxe"; tgt["send_lat"] = "<=0.5x rxe"
	tgt["read_lat"] = "<=0.5x rxe"
	m = get("memcpy", "memcpy"); k = get("kcopy", "kcopy")
	printf "%-22s %-5s %10s %10s %10s %9s %9s %9s %9s  %s\n", "test", "unit", "vhca-local", "vhca-wire", "rxe", "local/rxe", "wire/rxe", "loc/mcpy", "loc/kcpy", "target"
	for (i = 1; i <= n; i++) {
		t = order[i]
		l = get("local", t); w = get("wire", t); r = get("rxe", t)
		if (t ~ /^read_above/) {
			u = t == "read_above" ? "udp_rtt" : "udp_rtt_min"
			f = t == "read_above" ? "read_lat" : "read_lat_min"
			l = ""
			w = above(get("wire", f), get("wire", u))
			r = above(get("rxe", f), get("wire", u))
		}
		mc = unit[t] == "MB/s" ? ratio(l, m) : "-"
		kc = unit[t] == "MB/s" ? ratio(l, k) : "-"
		printf "%-22s %-5s %10s %10s %10s %9s %9s %9s %9s  %s\n", desc[t], unit[t], fig(l), fig(w), fig(r), ratio(l, r), ratio(w, r), mc, kc, (t in tgt) ? tgt[t] : "-"
	}
	printf "%-22s %-5s %10s %10s %10s %9s %9s\n", "jumbo (MTU 4096)", "", "", "vhca-wire", "rxe", "", "wire/rxe"
	for (i = 1; i <= 3; i++) {
		t = order[i]
		w = get("wire9k", t); r = get("rxe9k", t)
		printf "%-22s %-5s %10s %10s %10s %9s %9s\n", desc[t], unit[t], "", fig(w), fig(r), "", ratio(w, r)
	}
	printf "%-22s %-5s %10s\n", "guest memcpy 64 MiB", "MB/s", fig(m)
	printf "%-22s %-5s %10s\n", "guest kernel copy", "MB/s", fig(k)
	print "MB = 2^20 bytes (perftest); latency ratios: lower is better."
	print "?: perftest warned that its clock calibration failed (a loaded host): unreliable."
}' $R >$T/table
# The costs of each test's last attempt (cost).
awk '
function fig(x) { return x == "" ? "-" : x }
{ g[$1, $2] = $3; s[$1, $2] = $4 }
END {
	split("write_bw send_bw read_bw write_rate write_lat send_lat read_lat", order, " ")
	print ""
	print "costs: guest CPU s per GiB moved (both ends, whole run; 64 KiB tests),"
	print "vhca doorbell system calls per iteration (both ends)"
	printf "%-12s %12s %12s %12s %12s %12s\n", "test", "cpu-local", "cpu-wire", "cpu-rxe", "sysc-local", "sysc-wire"
	for (i = 1; i <= 7; i++) {
		t = order[i]
		printf "%-12s %12s %12s %12s %12s %12s\n", t, fig(g["local", t]), fig(g["wire", t]), fig(g["rxe", t]), fig(s["local", t]), fig(s["wire", t])
	}
}' $C >>$T/table
echo "===== bench ====="
cat $T/table
cp $T/table "$VHCA_OUT/bench.txt"
finish
