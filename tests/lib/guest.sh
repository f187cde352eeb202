# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Helpers of the guest scripts (run as root inside the test VM, sourced).
#
# Results are KTAP (Documentation/dev-tools/ktap.rst in the kernel): one
# "ok N what" or "not ok N what # why" line per check.  A script declares
# its scenarios (scenario NAME FUNCTION [SECONDS]) and ends with
# run_scenarios, which runs each selected one (VHCA_T, tests/runner/select.sh)
# as a subtest in a process and session of its own: a fresh guest (no vhca,
# no veth, no namespace, no qdisc), the scenario, then teardown, whatever
# the scenario left behind or however it ended.  A kernel checker report
# during a scenario, or a coherent buffer outstanding or refused at any
# removal in it or its teardown, fails that scenario.  Scripts without scenarios
# (bench) end with finish.

. "$VHCA_TOP/tests/runner/select.sh"

VHCA_KO=$VHCA_BUILD/drivers/infiniband/sw/vhca/vhca.ko
# The provider for the guest's rdma-core (RDMAV_DRIVERS): vm-run.sh says
# which; the host's build by default.
VHCA_PROVIDER=${VHCA_PROVIDER:-$VHCA_TOP/build/provider/libvhca}
# This level's indentation (two spaces a level) and its results so far.
KTAP_IND=${KTAP_IND:-}
KTAP_N=0
NFAIL=0
# In a pair of guests (vm-run.sh -2), each names its checks "a: ..." or
# "b: ...".
KTAP_WHO=${VHCA_ROLE:+$VHCA_ROLE: }

# ktap_line RESULT WHAT [DIAGNOSTIC]: one result line; a "#" in WHAT
# would start the diagnostic, so it becomes "no.".
ktap_line() {
	KTAP_N=$((KTAP_N + 1))
	case "$2" in
	*"#"*) set -- "$1" "$(printf '%s' "$2" | sed 's/#/no./g')" "${3:-}" ;;
	esac
	echo "$KTAP_IND$1 $KTAP_N $2${3:+ # $3}"
}

pass() {
	ktap_line ok "$KTAP_WHO$*"
}

fail() {
	ktap_line "not ok" "$KTAP_WHO$*"
	NFAIL=$((NFAIL + 1))
}

# skip WHAT REASON: a check that cannot run here.
skip() {
	ktap_line ok "$KTAP_WHO$1" "SKIP $2"
}

# check DESCRIPTION COMMAND...: the command must succeed.
check() {
	_d=$1
	shift
	if "$@"; then pass "$_d"; else ktap_line "not ok" "$KTAP_WHO$_d" "rc=$?"; NFAIL=$((NFAIL + 1)); fi
}

# must DESCRIPTION COMMAND...: check, false when it failed: the steps
# after it, which could only fail too, are not taken.
must() {
	_mf=$NFAIL
	check "$@"
	[ $NFAIL = $_mf ]
}

# refuse DESCRIPTION COMMAND...: the command must fail.
refuse() {
	_d=$1
	shift
	if "$@"; then ktap_line "not ok" "$KTAP_WHO$_d" "succeeded"; NFAIL=$((NFAIL + 1)); else pass "$_d"; fi
}

# tmo SECONDS: a time limit of a test program, three times as long on
# the debug kernel.  A limit catches a hang, not slowness, and the debug
# kernel's boots run beside the stock kernel's, niced (check.sh).
tmo() {
	if [ "${VHCA_KERNEL:-stock}" = debug ]; then
		echo $(($1 * 3))
	else
		echo "$1"
	fi
}

# wait_for SECONDS COMMAND...: poll until the command succeeds, for
# SECONDS by the clock (three times as long on the debug kernel, as tmo),
# not by a count of polls: each poll forks a sleep, which costs most of a
# second on the debug kernel under TCG, where 600 polls of a wait_for 60
# took 8 minutes.  (The variables of callers of wait_for and listening
# stay untouched.)
wait_for() {
	_wf_s=$1
	shift
	[ "${VHCA_KERNEL:-stock}" = debug ] && _wf_s=$((_wf_s * 3))
	read -r _wf_t _ </proc/uptime
	_wf_end=$((${_wf_t%.*} + _wf_s))
	while :; do
		"$@" && return 0
		read -r _wf_t _ </proc/uptime
		[ "${_wf_t%.*}" -lt $_wf_end ] || return 1
		sleep 0.1
	done
}

# hugepages N: N huge pages of 2 MiB in the pool (vm.nr_hugepages of that
# size), for programs that map them (MAP_HUGETLB); 0 empties the pool.
# Status 2 when the kernel has no 2 MiB huge pages, 1 when it could not
# find N.
HUGEPAGES_2M=/sys/kernel/mm/hugepages/hugepages-2048kB
hugepages() {
	[ -e $HUGEPAGES_2M/nr_hugepages ] || return 2
	echo "$1" >$HUGEPAGES_2M/nr_hugepages 2>/dev/null
	[ "$(cat $HUGEPAGES_2M/nr_hugepages)" = "$1" ]
}

# zram_swap SIZE: swap of SIZE bytes (64M, ...) on zram0, for programs that
# swap pages out (MADV_PAGEOUT); 0 turns it off and resets the device.
# Status 2 when the kernel has no zram (a module of the stock kernel,
# built into the debug one).
zram_swap() {
	if [ "$1" = 0 ]; then
		swapoff /dev/zram0 2>/dev/null
		[ ! -e /sys/block/zram0/reset ] || echo 1 >/sys/block/zram0/reset
		return 0
	fi
	[ -e /sys/block/zram0 ] || modprobe zram 2>/dev/null
	[ -e /sys/block/zram0 ] || return 2
	echo "$1" >/sys/block/zram0/disksize &&
		mkswap /dev/zram0 >/dev/null && swapon /dev/zram0
}

# listening PORT...: a TCP socket listens on one of them, here or in the
# namespace peer.  (Read from /proc: ss would load the sock_diag modules,
# whose text patching once crashed a TCG guest.)
listening() {
	for _lp_p; do
		_lp_x=$(printf ':%04X [0-9A-F]*:0000 0A' "$_lp_p")
		grep -q "$_lp_x" /proc/net/tcp /proc/net/tcp6 && return 0
		[ -e /run/netns/peer ] &&
			ip netns exec peer grep -q "$_lp_x" /proc/net/tcp /proc/net/tcp6 &&
			return 0
	done
	return 1
}

# roce_frames_py: $T/roce_frames.py, for the capture scripts written to $T:
# sniffer(IFNAME, TIMEOUT) is an AF_PACKET socket with PACKET_VNET_HDR,
# and frames(SOCKET) reads one packet from it and gives the Ethernet frames
# it stands for.  vhca sends consecutive packets of one length as one UDP
# GSO packet (vhca_net_gso() in vhca_net.c), which a tap sees whole: it is
# cut by gso_size as segmentation cuts it, each piece with its own IP and
# UDP lengths and, over IPv4, the ID one above the one before.
roce_frames_py() {
	cat >$T/roce_frames.py <<'EOF'
import socket, struct
SOL_PACKET, PACKET_VNET_HDR, VIRTIO_NET_HDR_GSO_UDP_L4 = 263, 15, 5
def sniffer(ifname, timeout):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
    s.setsockopt(SOL_PACKET, PACKET_VNET_HDR, 1)
    s.bind((ifname, 0))
    s.settimeout(timeout)
    return s
def frames(s):
    d = s.recv(1 << 17)
    gso, size, f = d[1], struct.unpack("<H", d[4:6])[0], d[10:]
    et = struct.unpack("!H", f[12:14])[0]
    if gso != VIRTIO_NET_HDR_GSO_UDP_L4 or et not in (0x0800, 0x86dd):
        return [f]
    hl = 14 + (20 if et == 0x0800 else 40) + 8
    out = []
    for i, o in enumerate(range(hl, len(f), size)):
        p, h = f[o:o + size], bytearray(f[:hl])
        if et == 0x0800:
            ident = (struct.unpack("!H", f[18:20])[0] + i) & 0xffff
            struct.pack_into("!HH", h, 16, hl - 14 + len(p), ident)
        else:
            struct.pack_into("!H", h, 18, 8 + len(p))
        struct.pack_into("!H", h, hl - 4, 8 + len(p))
        out.append(bytes(h) + p)
    return out
EOF
}

# Load vhca.ko with the modules it depends on (VHCA_DEPS, read once by
# run_scenarios), and ib_uverbs, which udev (absent here) loads on a real
# host when an RDMA device appears; modprobe only when one is not loaded.
load_vhca() {
	[ -n "${VHCA_DEPS:-}" ] || VHCA_DEPS=$(modinfo -F depends "$VHCA_KO" | tr ',' ' ')
	for _lv in $VHCA_DEPS ib_uverbs; do
		[ -d "/sys/module/$_lv" ] && continue
		modprobe -a $VHCA_DEPS ib_uverbs || return 1
		break
	done
	insmod "$VHCA_KO"
}

# dmesg_has PATTERN: the kernel log since the last mark_dmesg matches.
mark_dmesg() {
	_mark=$(dmesg | wc -l)
}

dmesg_has() {
	dmesg | tail -n +$((_mark + 1)) | grep -Eq "$1"
}

# The GID helpers and counter read sysfs with the shell's read, not a
# process per file: on the debug kernel under TCG a process costs most of
# a second (fork and exec of /bin/true: 0.8 s there, 0.12 s on the stock
# kernel), and a GID table has 32 entries.  Processes are where the guest
# scripts' time goes: every helper here starts as few as it can.

# gid_entry DEV INDEX: GE, the RoCE v2 GID at INDEX of DEV's port 1.
gid_entry() {
	read -r GE <"/sys/class/infiniband/$1/ports/1/gids/$2" 2>/dev/null &&
		read -r _ge_t <"/sys/class/infiniband/$1/ports/1/gid_attrs/types/$2" 2>/dev/null &&
		[ "$_ge_t" = "RoCE v2" ]
}

# gid_full_index DEV GID: the index of GID (written out in full, as the
# table's files show it), a RoCE v2 entry of port 1's GID table.  Builtins
# only: a fork per entry costs half a second on the debug kernel, and the
# table has 32.
gid_full_index() {
	for _f in /sys/class/infiniband/$1/ports/1/gids/*; do
		gid_entry "$1" "${_f##*/}" && [ "$GE" = "$2" ] &&
			{ echo "${_f##*/}"; return 0; }
	done
	return 1
}

# has_gid DEV GID: port 1's GID table holds GID as a RoCE v2 entry.
has_gid() {
	gid_full_index "$1" "$2" >/dev/null
}

# no_gid DEV GID: the contrary, for wait_for.
no_gid() {
	! has_gid "$@"
}

# gid_find DEV IPV4: GI, the index of the RoCE v2 GID of an IPv4 address
# (IPv4-mapped: its last 32 bits are the address).
gid_find() {
	for _f in /sys/class/infiniband/$1/ports/1/gids/*; do
		gid_entry "$1" "${_f##*/}" || continue
		case "$GE" in
		0000:0000:0000:0000:0000:ffff:*) ;;
		*) continue ;;
		esac
		_gf_lo=${GE##*:}
		_gf_hi=${GE%:*}
		_gf_hi=${_gf_hi##*:}
		[ "$((0x$_gf_hi >> 8)).$((0x$_gf_hi & 255)).$((0x$_gf_lo >> 8)).$((0x$_gf_lo & 255))" = "$2" ] ||
			continue
		GI=${_f##*/}
		return 0
	done
	return 1
}

# gid_index DEV IPV4: gid_find's index, printed.
gid_index() {
	gid_find "$@" && echo "$GI"
}

# ndevs: how many vhca devices there are (of every namespace).
ndevs() {
	_nd=0
	for _f in /sys/class/infiniband/vhca*; do
		[ -e "$_f" ] && _nd=$((_nd + 1))
	done
	echo $_nd
}

# no_vhca_left: no vhca RDMA device and no vhca platform device.
no_vhca_left() {
	for _f in /sys/class/infiniband/vhca* /sys/bus/platform/devices/vhca.*; do
		[ -e "$_f" ] && return 1
	done
	return 0
}

# veth_pair A B IPV4_A IPV4_B [NS]: a veth pair, addressed (/24) and up (one
# ip process, its commands in a batch), in the network namespace NS if given.
veth_pair() {
	ip ${5:+-n $5} -b - <<EOF
link add $1 type veth peer name $2
addr add $3/24 dev $1
addr add $4/24 dev $2
link set $1 up
link set $2 up
EOF
}

# local_pair: veth0 (10.0.0.1) and veth1 (10.0.0.2) in this namespace, set
# up for two RDMA ports on one host (the core resolves the peer's MAC by
# route and neighbour lookup: accept_local=1 and rp_filter=0 are needed).
local_pair() {
	veth_pair veth0 veth1 10.0.0.1 10.0.0.2 || return 1
	for _i in all default veth0 veth1; do
		echo 1 >/proc/sys/net/ipv4/conf/$_i/accept_local &&
			echo 0 >/proc/sys/net/ipv4/conf/$_i/rp_filter || return 1
	done
}

# ns_host NS A B IPV4_A IPV4_B: a second host, the new network namespace
# NS: veth A here (IPV4_A, /24), its end B there (IPV4_B), both up, and
# NS's lo.
ns_host() {
	ip netns add "$1" || return 1
	ip -b - <<EOF || return 1
link add $2 type veth peer name $3 netns $1
addr add $4/24 dev $2
link set $2 up
EOF
	ip -n "$1" -b - <<EOF
addr add $5/24 dev $3
link set lo up
link set $3 up
EOF
}

# peer_host: a second host, the network namespace "peer": veth0 (10.0.0.1)
# here, its end veth1 (10.0.0.2) there.
peer_host() {
	ns_host peer veth0 veth1 10.0.0.1 10.0.0.2
}

# netem_both ARGS: a netem qdisc on both ends of the two namespaces'
# wire, after static neighbours on both: modify_qp to RTR resolves the
# peer's MAC with a 1-s timeout (the core's rdma_addr_find_l2_eth_by_grh),
# which an ARP request or reply lost under netem misses, and a process
# that sets up QPs without a TCP exchange first has no neighbour yet.
netem_both() {
	check "static neighbours, then netem on veth0 and veth1: $1" sh -c \
		"ip neigh replace 10.0.0.2 lladdr \$(ip netns exec peer cat /sys/class/net/veth1/address) dev veth0 nud permanent &&
		 ip -n peer neigh replace 10.0.0.1 lladdr \$(cat /sys/class/net/veth0/address) dev veth1 nud permanent &&
		 tc qdisc add dev veth0 root netem $1 && ip netns exec peer tc qdisc add dev veth1 root netem $1"
}

# port_gids: G0 and G1, the RoCE v2 GID indices of 10.0.0.1 on vhca0 and
# of 10.0.0.2 on vhca1, once the core has added them.
port_gids() {
	wait_for 10 gid_find vhca1 10.0.0.2
	G0= G1=
	gid_find vhca1 10.0.0.2 && G1=$GI
	gid_find vhca0 10.0.0.1 && G0=$GI
}

# links_add: vhca0 on veth0 and vhca1 on veth1, both here (one rdma
# process, a batch).
links_add() {
	rdma -b - <<EOF
link add vhca0 type vhca netdev veth0
link add vhca1 type vhca netdev veth1
EOF
}

# links_two_ns: vhca0 on veth0 here, vhca1 on veth1 in the namespace peer.
links_two_ns() {
	rdma link add vhca0 type vhca netdev veth0 &&
		ip netns exec peer rdma link add vhca1 type vhca netdev veth1
}

# ports_one_ns: vhca.ko loaded, vhca0 on veth0 and vhca1 on veth1, both
# here (local_pair), and their GIDs (port_gids).
ports_one_ns() {
	check "insmod vhca.ko" load_vhca
	local_pair
	check "rdma link add vhca0, vhca1" links_add
	port_gids
}

# ports_two_ns: vhca.ko loaded, vhca0 here and vhca1 in the namespace
# peer, a second host (peer_host), their GIDs; total counts vhca1 there.
ports_two_ns() {
	check "insmod vhca.ko" load_vhca
	peer_host
	check "rdma link add vhca0, and vhca1 in the peer namespace" links_two_ns
	port_gids
	VHCA1_NS=peer
}

# counter DEV NAME [NETNS]: a hardware counter of DEV's port 1, as rdma
# statistic shows it: read from sysfs, which shows every RDMA device in
# every namespace (the core's shared mode), else from rdma statistic in
# namespace NETNS if given.
counter() {
	if read -r _c_v <"/sys/class/infiniband/$1/ports/1/hw_counters/$2" 2>/dev/null; then
		echo "$_c_v"
		return
	fi
	${3:+ip netns exec $3} rdma statistic show link "$1/1" |
		awk -v c="$2" '{ for (i = 1; i < NF; i++) if ($i == c) print $(i + 1) }'
}

# counter_is DEV NAME VALUE: counter NAME of DEV's port 1 reads VALUE, for
# wait_for (which must call it each time: a "$(counter ...)" among its
# arguments is read once, before the wait).
counter_is() {
	[ "$(counter "$1" "$2")" = "$3" ]
}

# total NAME: counter NAME of vhca0 plus vhca1's, vhca1 looked up in the
# namespace $VHCA1_NS when that is set.
total() {
	echo $(($(counter vhca0 "$1") + $(counter vhca1 "$1" $VHCA1_NS)))
}

# atomic_run NAME DEV_A GID_A DEV_B GID_B: vhca_atomic, two QPs of DEV_B
# adding N_ATOMIC (150 unless set) times each to one counter of DEV_A;
# every value of the counter is returned once (tests/progs/vhca_atomic.c).
atomic_run() {
	_an=$1
	shift
	timeout "$(tmo 300)" $VHCA_TOP/build/tests/vhca_atomic "$@" 2 ${N_ATOMIC:-150} \
		>$T/$_an 2>&1
	_ar=$?
	relay "$_an" $T/$_an
	check "$_an: vhca_atomic exits 0 (exit status $_ar)" test $_ar = 0
}

# uc_run NAME [--data-only] DEV_A GID_A DEV_B GID_B [LOSSY_N]: vhca_uc
# between a UC QP of DEV_A and one of DEV_B (tests/progs/vhca_uc.c).
uc_run() {
	_un=$1
	shift
	timeout "$(tmo 120)" $VHCA_TOP/build/tests/vhca_uc "$@" >$T/$_un 2>&1
	_ur=$?
	relay "$_un" $T/$_un
	check "$_un: vhca_uc exits 0 (exit status $_ur)" test $_ur = 0
}

# pair NAME SERVER_CMD CLIENT_CMD: both must succeed within PAIR_TMO
# seconds (120 unless set; tmo); their output goes to $T/NAME.srv and
# $T/NAME.cli, whose ends are shown (more of them on failure) with the time
# taken.  The client starts once the server listens: on TCP port
# PAIR_PORT when set; for ibv_*_pingpong and perftest, on their port 18515;
# the RDMA CM tools listen on no socket, so a client of theirs that fails
# while its server still waits is started again, five times at most.
pair() {
	_pn=$1
	_t0=$(date +%s)
	_p_tmo=$(tmo "${PAIR_TMO:-120}")
	timeout "$_p_tmo" sh -c "$2" >$T/$_pn.srv 2>&1 &
	_pp=$!
	if [ -n "${PAIR_PORT:-}" ]; then
		wait_for 60 listening "$PAIR_PORT"
	else
		case "$2" in
		*pingpong* | *ib_*) wait_for 60 listening 18515 ;;
		*) sleep 1 ;;
		esac
	fi
	_try=1
	while :; do
		timeout "$_p_tmo" sh -c "$3" >$T/$_pn.cli 2>&1
		_pc=$?
		if [ $_pc = 0 ] || [ $_try = 5 ] || ! kill -0 $_pp 2>/dev/null; then
			break
		fi
		echo "pair $_pn: client attempt $_try failed ($_pc), the server still waits"
		_try=$((_try + 1))
		sleep 1
	done
	wait $_pp
	_ps=$?
	if [ $_pc = 0 ] && [ $_ps = 0 ]; then
		tail -n 3 $T/$_pn.srv $T/$_pn.cli
	else
		tail -n 30 $T/$_pn.srv $T/$_pn.cli
	fi
	echo "$_pn: $(($(date +%s) - _t0)) s, server exit $_ps, client exit $_pc"
	[ $_pc = 0 ] && [ $_ps = 0 ]
}

# busy NAME SERVER_CMD CLIENT_CMD: a long server and client pair in the
# background (pids BUSY_S, BUSY_C; output in $T/NAME.srv and .cli), the
# client started once the server listens on 18515.  busy_end CLIENT_WHAT
# SERVER_WHAT: each must end, not be stopped by its timeout.
busy() {
	timeout "$(tmo 120)" sh -c "$2" >$T/$1.srv 2>&1 &
	BUSY_S=$!
	wait_for 30 listening 18515
	timeout "$(tmo 120)" sh -c "$3" >$T/$1.cli 2>&1 &
	BUSY_C=$!
}

busy_end() {
	wait $BUSY_C
	check "$1" test $? -ne 124
	wait $BUSY_S
	check "$2" test $? -ne 124
}

# relay PREFIX FILE: the results a test program wrote (KTAP, through
# tests/lib/ktap.h), renumbered into this level and named
# "PREFIX: what", its diagnostics indented to this level; its other lines
# are shown as they are.
relay() {
	while IFS= read -r _l; do
		case "$_l" in
		"ok "[0-9]*) _rl_r=ok _l=${_l#ok } ;;
		"not ok "[0-9]*) _rl_r="not ok" _l=${_l#not ok } ;;
		"KTAP version "*) continue ;;
		"#"*)
			echo "$KTAP_IND$_l"
			continue
			;;
		*)
			echo "$_l"
			continue
			;;
		esac
		_l=${_l#* }
		_rl_d=
		case "$_l" in
		*" # "*) _rl_d=${_l#* # } _l=${_l%% # *} ;;
		esac
		ktap_line "$_rl_r" "$KTAP_WHO$1: $_l" "$_rl_d"
		[ "$_rl_r" = ok ] || NFAIL=$((NFAIL + 1))
	done <"$2"
}

# finish: the end of a script without scenarios: its plan, and a status.
finish() {
	echo "${KTAP_IND}1..$KTAP_N"
	[ $NFAIL = 0 ]
}

# ---- scenarios

SCENARIOS=
# scenario NAME FUNCTION [SECONDS [stock|debug]]: declare one (at the top
# level of the script, one per line: check.sh reads these lines to select
# boots).  The limit (default 600 s, 120 s at least) is tripled on the
# debug kernel.  "stock": the stock kernel's only, skipped on the debug
# kernel, whose checkers see its paths in other scenarios (the comment
# above it names them): the volume and the variants are the stock
# kernel's to carry.  "debug": the debug kernel's only, skipped on the
# stock kernel: a scenario that is there for the checkers (the fuzzers).
scenario() {
	SCENARIOS="$SCENARIOS $1:$2:${3:-600}:${4:-}"
}

. "$VHCA_TOP/tests/runner/vm/checkers.sh"

# mckey_pair NAME RECEIVER SENDER: mckey's receiver joined and waiting
# (its output line-buffered: stdbuf in RECEIVER) before its sender sends
# (a datagram sent earlier is lost, as UD allows, and the receiver waits
# for all of them); both must exit 0, the receiver once it has all -C
# datagrams (cm.sh and interop.sh).
mckey_pair() {
	timeout "$(tmo 60)" sh -c "$2" >$T/$1.rcv 2>&1 &
	_mk_p=$!
	wait_for 30 grep -q "receiving data transfers" $T/$1.rcv
	timeout "$(tmo 60)" sh -c "$3" >$T/$1.snd 2>&1
	_mk_s=$?
	wait $_mk_p
	_mk_r=$?
	tail -n 3 $T/$1.rcv $T/$1.snd
	[ "$_mk_r$_mk_s" = 00 ]
}

# wire_routes: 10.0.0.1 <-> 10.0.0.2 over the veth pair, not lo (policy
# routing and static neighbours: two addresses of one namespace are
# otherwise local to each other), so that the RDMA CM binds each end to
# the port of its address, also where a consumer gives no source address
# (NFS's client), and force_wire's packets cross veth0 and veth1.
# Also for two rdma_rxe ports on one host: without it their traffic goes
# through lo, where there is no rxe device.  routes_reset: the rules back
# to the kernel's (reset_guest does it too; the routes go with the veth
# pair).
# The file WIRE_ROUTES says 1 while wire_routes' rules may be in place, so
# that routes_reset (every reset_guest, twice a scenario) starts no process
# where they never were.
WIRE_ROUTES=/tmp/vhca-wire-routes
routes_reset() {
	read -r _rr 2>/dev/null <$WIRE_ROUTES && [ "$_rr" = 1 ] || return 0
	ip -force -b - 2>/dev/null <<EOF
rule add pref 0 lookup local
rule del pref 10
rule del pref 11
rule del pref 20
rule del pref 21
rule del pref 1000
EOF
	echo 0 >$WIRE_ROUTES
	return 0
}

wire_routes() {
	routes_reset
	read -r _wr0 </sys/class/net/veth0/address &&
		read -r _wr1 </sys/class/net/veth1/address || return 1
	echo 1 >$WIRE_ROUTES
	ip -b - <<EOF
rule add pref 1000 lookup local
rule del pref 0
rule add pref 10 iif veth0 lookup local
rule add pref 11 iif veth1 lookup local
route replace 10.0.0.2/32 dev veth0 src 10.0.0.1 table 100
route replace 10.0.0.1/32 dev veth1 src 10.0.0.2 table 101
rule add pref 20 to 10.0.0.2 lookup 100
rule add pref 21 to 10.0.0.1 lookup 101
neigh replace 10.0.0.2 lladdr $_wr1 dev veth0 nud permanent
neigh replace 10.0.0.1 lladdr $_wr0 dev veth1 nud permanent
EOF
}

# rxe_links: rdma_rxe's rxe0 on veth0 and rxe1 on veth1 (make bench's
# pair in the initial namespace, after wire_routes); X0 and X1 the GID
# indices of 10.0.0.1 and 10.0.0.2 on them.
rxe_links() {
	rdma link add rxe0 type rxe netdev veth0 &&
		rdma link add rxe1 type rxe netdev veth1 || return 1
	wait_for 10 gid_index rxe1 10.0.0.2 >/dev/null
	X0=$(gid_index rxe0 10.0.0.1)
	X1=$(gid_index rxe1 10.0.0.2)
}

# reset_guest: what no scenario may leave to the next: processes of the
# tools, RDMA links, modules, namespaces, veth and dummy interfaces and
# their qdiscs, local_pair's sysctls.
reset_guest() {
	# Every RDMA device of every namespace shows here (the core's shared
	# mode), and a device's link is named as the device.
	for _rg in /sys/class/infiniband/*; do
		[ -e "$_rg" ] && rdma link delete "${_rg##*/}" 2>/dev/null
	done
	for _rg in /run/netns/*; do
		[ -e "$_rg" ] && ip -all netns delete 2>/dev/null
		break
	done
	for _rg in /sys/class/net/*; do
		case "${_rg##*/}" in
		lo) ;;
		*) [ -e "$_rg" ] && ip link del "${_rg##*/}" 2>/dev/null ;;
		esac
	done
	for _rg in vhca rdma_rxe; do
		[ -d /sys/module/$_rg ] || continue
		wait_for 10 rmmod $_rg 2>/dev/null || echo "# teardown: rmmod $_rg failed"
	done
	routes_reset
	# local_pair's sysctls, back to the kernel's defaults.
	for _rg in all default; do
		echo 0 >/proc/sys/net/ipv4/conf/$_rg/accept_local
		echo 0 >/proc/sys/net/ipv4/conf/$_rg/rp_filter
	done
	return 0
}

# ---- vhca beside rdma_rxe: a scenario's checks on vhca's two ports, then
# the same on rxe's, the reference, in the same boot (rxe binds UDP 4791
# of the namespace when its module loads: vhca is unloaded by then).  A
# failure on vhca fails the check; rxe's are reported (a skip), not
# counted.  The figures of both, side by side, end the scenario.  The
# script sets T, its folder of files.

# versus_ports KIND: two ports of KIND (vhca or rxe) on veth0 and veth1,
# routed over the pair (wire_routes): D0 and D1 their devices, G0 and G1
# the indices of their IPv4 GIDs, RX the name of D1's counter of received
# packets.
versus_ports() {
	if [ "$1" = rxe ]; then
		modprobe rdma_rxe || return 1
		D0=rxe0 D1=rxe1 RX=rcvd_pkts
	else
		load_vhca || return 1
		D0=vhca0 D1=vhca1 RX=rx_packets
	fi
	modprobe rdma_ucm &&
		local_pair && wire_routes && rdma -b - <<EOF || return 1
link add $D0 type $1 netdev veth0
link add $D1 type $1 netdev veth1
EOF
	wait_for 10 gid_find $D1 10.0.0.2 && G1=$GI &&
		wait_for 10 gid_find $D0 10.0.0.1 && G0=$GI
}

# on KIND: versus_ports KIND, vhca's first in a scenario (the figures
# start there), rxe's after a reset_guest.
on() {
	KIND=$1
	if [ "$1" = vhca ]; then
		: >$T/figures
		must "vhca0 and vhca1 on veth0 and veth1, routed over the pair" versus_ports vhca
	else
		reset_guest
		judge "rxe0 and rxe1 on veth0 and veth1, routed over the pair" versus_ports rxe
	fi
}

# judge WHAT COMMAND...: on vhca, a check; on rxe, the reference, a
# failure is reported (a skip) and not counted.
judge() {
	if [ "$KIND" = vhca ]; then
		check "$@"
		return
	fi
	_j=$1
	shift
	if "$@"; then
		echo "$KTAP_IND# rxe: $_j"
	else
		skip "rxe: $_j" "rdma_rxe failed it (rc=$?), not counted"
		return 1
	fi
}

# fig NAME VALUE: a figure of this KIND, for figures.
fig() {
	printf '%s\t%s\t%s\n' "$KIND" "$1" "${2:--}" >>$T/figures
}

# figures: each figure of vhca beside rxe's.
figures() {
	awk -F'\t' -v ind="$KTAP_IND" '
	{ if (!(($2) in seen)) { seen[$2] = 1; order[++n] = $2 } v[$1, $2] = $3 }
	END {
		for (i = 1; i <= n; i++)
			printf "%s# %-36s vhca %-16s rxe %s\n", ind, order[i],
				(("vhca", order[i]) in v) ? v["vhca", order[i]] : "-",
				(("rxe", order[i]) in v) ? v["rxe", order[i]] : "-"
	}' $T/figures
	rm -f $T/figures
}

# providers_used: on the debug kernel, libibverbs' configuration lists
# only rxe's provider (vhca's comes from RDMAV_DRIVERS).  Every process
# that lists the devices loads each listed provider: Debian's 20 cost a
# verbs program 0.8 s there under TCG (ibv_devices 2.6 s with them, 1.8 s
# with rxe's alone), and a debug boot runs hundreds.  The
# stock kernel's guests keep Debian's full set, beside which vhca's
# provider must be found and the others must leave vhca's devices alone.
# The root is an overlay: the host's files stay as they are.
providers_used() {
	[ "${VHCA_KERNEL:-stock}" = debug ] || return 0
	_pu=
	for _pu_f in /etc/libibverbs.d/*.driver; do
		case "$_pu_f" in
		*/rxe.driver | "/etc/libibverbs.d/*.driver") ;;
		*) _pu="$_pu $_pu_f" ;;
		esac
	done
	[ -z "$_pu" ] || rm -f $_pu
}

# dmesg_since UPTIME: the kernel log from UPTIME (seconds since boot) on.
dmesg_since() {
	dmesg | awk -v t="$1" '{ s = $0; sub(/^\[ */, "", s); if (s + 0 >= t) print }'
}

# scenario_dmesg T0: the kernel log since T0 into /tmp/scenario-dmesg, and
# whether it has a checker's report (_rs_chk) and a coherent buffer
# outstanding at removal or a refused free (_rs_buf), each 0 or 1: two
# processes, which the scenario runner pays for each scenario.
scenario_dmesg() {
	dmesg | awk -v t="$1" -v pat="$CHECKERS" '
	BEGIN { printf "" >"/tmp/scenario-dmesg" }
	{
		s = $0
		sub(/^\[ */, "", s)
		if (s + 0 < t)
			next
		print >"/tmp/scenario-dmesg"
		if ($0 ~ pat)
			chk = 1
		if ($0 ~ /outstanding at removal|refused free/)
			buf = 1
	}
	END { print chk + 0, buf + 0 >"/tmp/scenario-flags" }'
	read -r _rs_chk _rs_buf </tmp/scenario-flags
}

# no_dmesg PATTERN: the kernel log of this scenario (all of it outside a
# scenario) has no line matching PATTERN (grep's basic regex): a boot also
# runs KUnit, whose suites provoke such lines on purpose.
no_dmesg() {
	! dmesg_since "${VHCA_SCEN_T0:-0}" | grep -q "$1"
}

# hang_dump: what a scenario that overran its limit left running, before
# it is killed, as KTAP comments: every task's state and stack (sysrq t)
# and, with lockdep, the locks held (sysrq d), from the kernel log (the
# console shows only errors and worse on the debug kernel).
hang_dump() {
	read -r _hd_t _ </proc/uptime
	echo t >/proc/sysrq-trigger
	[ "${VHCA_KERNEL:-stock}" != debug ] || echo d >/proc/sysrq-trigger
	dmesg_since "$_hd_t" | sed 's/^/# /'
}

# kill_session PID: end every process of the session PID leads.
session_gone() {
	! kill -0 -- -"$1" 2>/dev/null
}

kill_session() {
	kill -TERM -- -"$1" 2>/dev/null || return 0
	wait_for 5 session_gone "$1"
	kill -KILL -- -"$1" 2>/dev/null
	return 0
}

# forks: FORKS, the tasks forked in the guest since boot (processes, and
# the few threads and kernel threads started meanwhile), and BUSY, the
# guest's CPU time since boot in 1/100 s, all CPUs (/proc/stat).
forks() {
	while read -r _fk_k _fk_u _fk_n _fk_s _fk_i _fk_w _fk_q _fk_sq _; do
		case $_fk_k in
		cpu) BUSY=$((_fk_u + _fk_n + _fk_s + _fk_q + _fk_sq)) ;;
		processes)
			FORKS=$_fk_u
			return
			;;
		esac
	done </proc/stat
}

# run_scenarios [--one FUNCTION]: the script's main.  Every selected
# scenario in order, as "# Subtest: NAME" with its checks one level in and
# "ok N NAME # time=Ns cpu=Ns forks=N" (cpu: the guest's CPU time over
# it, all CPUs, which the host spends emulating it; forks: the processes
# it started, nearly all; each costs most of a second on the debug kernel
# under TCG); the exit status counts the failed scenarios.
# --one runs a single scenario's function in this process (the runner's
# child).
run_scenarios() {
	if [ "${1:-}" = --one ]; then
		"$2"
		[ $NFAIL = 0 ]
		exit
	fi
	_rs_script=${0##*/}
	_rs_script=${_rs_script%.sh}
	providers_used
	VHCA_DEPS=$(modinfo -F depends "$VHCA_KO" | tr ',' ' ')
	export VHCA_DEPS
	_rs_run=
	for _rs in $SCENARIOS; do
		t_selected "${VHCA_KERNEL:-stock}/$_rs_script/${_rs%%:*}" && _rs_run="$_rs_run $_rs"
	done
	echo "${KTAP_IND}KTAP version 1"
	echo "$KTAP_IND# Subtest: $_rs_script"
	echo "${KTAP_IND}1..$(echo $_rs_run | wc -w)"
	_rs_bad=0
	for _rs in $_rs_run; do
		_rs_name=${_rs%%:*}
		_rs_fn=${_rs#*:}
		_rs_tmo=${_rs_fn#*:}
		_rs_fn=${_rs_fn%%:*}
		_rs_only=${_rs_tmo#*:}
		_rs_tmo=${_rs_tmo%%:*}
		if [ "$_rs_only" = stock ] && [ "${VHCA_KERNEL:-stock}" = debug ]; then
			ktap_line ok "$_rs_name" "SKIP the stock kernel's only"
			continue
		fi
		if [ "$_rs_only" = debug ] && [ "${VHCA_KERNEL:-stock}" != debug ]; then
			ktap_line ok "$_rs_name" "SKIP the debug kernel's only"
			continue
		fi
		# A limit catches a hang, not slowness: 120 s at least (a
		# loaded host), three times that on the debug kernel.
		[ "$_rs_tmo" -ge 120 ] || _rs_tmo=120
		[ "${VHCA_KERNEL:-stock}" = debug ] && _rs_tmo=$((_rs_tmo * 3))
		reset_guest
		echo "$KTAP_IND  KTAP version 1"
		echo "$KTAP_IND  # Subtest: $_rs_name"
		read -r _rs_t0 _ </proc/uptime
		forks
		_rs_f0=$FORKS _rs_b0=$BUSY
		VHCA_SCEN_T0=$_rs_t0 KTAP_IND="$KTAP_IND  " setsid sh "$0" --one "$_rs_fn" &
		_rs_pid=$!
		# A watchdog that fired fails the scenario, even when it ends
		# by itself during the dump.
		rm -f /tmp/scenario-timeout
		(sleep "$_rs_tmo" && : >/tmp/scenario-timeout &&
			echo "# $_rs_name: timed out after $_rs_tmo s" &&
			{ hang_dump; kill -TERM -- -$_rs_pid; }) 2>/dev/null &
		_rs_dog=$!
		wait $_rs_pid
		_rs_rc=$?
		kill $_rs_dog 2>/dev/null
		kill_session $_rs_pid
		reset_guest
		read -r _rs_t _ </proc/uptime
		forks
		_rs_t="time=$((${_rs_t%.*} - ${_rs_t0%.*}))s cpu=$(((BUSY - _rs_b0) / 100))s forks=$((FORKS - _rs_f0))"
		_rs_why=
		scenario_dmesg "$_rs_t0"
		if [ "$_rs_chk" != 0 ]; then
			grep -E -A20 "$CHECKERS" /tmp/scenario-dmesg | head -60 | sed 's/^/# /'
			# Its first line in the result too, which the run's
			# summary repeats.
			_rs_why="kernel checker report ($(grep -E -m1 "$CHECKERS" \
				/tmp/scenario-dmesg | sed 's/^\[[^]]*\] *//' | cut -c1-100)), "
		fi
		# Every removal, the teardown's rmmod included, gave back every
		# coherent buffer and refused no free.
		if [ "$_rs_buf" != 0 ]; then
			grep "outstanding at removal\|refused free" /tmp/scenario-dmesg | head -5 | sed 's/^/# /'
			_rs_why="${_rs_why}coherent buffers outstanding or refused, "
		fi
		[ ! -e /tmp/scenario-timeout ] || _rs_why="${_rs_why}timed out after $_rs_tmo s, "
		[ $_rs_rc = 0 ] || _rs_why="${_rs_why}exit $_rs_rc, "
		if [ -z "$_rs_why" ]; then
			ktap_line ok "$_rs_name" "$_rs_t"
		else
			ktap_line "not ok" "$_rs_name" "$_rs_why$_rs_t"
			_rs_bad=$((_rs_bad + 1))
		fi
	done
	[ $_rs_bad = 0 ]
}
