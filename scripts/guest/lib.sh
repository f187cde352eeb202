# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Helpers of the guest scripts (run as root inside the test VM, sourced).
# Each check prints "PASS: what" or "FAIL: what"; finish prints the counts
# and returns non-zero when anything failed.

NPASS=0
NFAIL=0
VHCA_KO=$VHCA_BUILD/drivers/infiniband/sw/vhca/vhca.ko

pass() {
	echo "PASS: $*"
	NPASS=$((NPASS + 1))
}

fail() {
	echo "FAIL: $*"
	NFAIL=$((NFAIL + 1))
}

# check DESCRIPTION COMMAND...: the command must succeed.
check() {
	_d=$1
	shift
	if "$@"; then pass "$_d"; else fail "$_d (rc=$?)"; fi
}

# refuse DESCRIPTION COMMAND...: the command must fail.
refuse() {
	_d=$1
	shift
	if "$@"; then fail "$_d (succeeded)"; else pass "$_d"; fi
}

# wait_for SECONDS COMMAND...: poll until the command succeeds (the
# variables of callers of wait_for and listening stay untouched).
wait_for() {
	_wf_n=$(($1 * 10))
	shift
	while [ $_wf_n -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		_wf_n=$((_wf_n - 1))
	done
	return 1
}

# listening PORT...: a TCP socket listens on one of them, here or in the
# namespace peer.  (Read from /proc: ss would load the sock_diag modules,
# whose text patching once crashed a TCG guest.)
listening() {
	for _lp_p; do
		_lp_x=$(printf ':%04X [0-9A-F]*:0000 0A' "$_lp_p")
		{
			cat /proc/net/tcp /proc/net/tcp6
			[ -e /run/netns/peer ] &&
				ip netns exec peer cat /proc/net/tcp /proc/net/tcp6
		} | grep -q "$_lp_x" && return 0
	done
	return 1
}

# Load vhca.ko with the modules it depends on, and ib_uverbs, which udev
# (absent here) loads on a real host when an RDMA device appears.
load_vhca() {
	_deps=$(modinfo -F depends "$VHCA_KO" | tr ',' ' ')
	modprobe -a $_deps ib_uverbs || return 1
	insmod "$VHCA_KO"
}

# dmesg_has PATTERN: the kernel log since the last mark_dmesg matches.
mark_dmesg() {
	_mark=$(dmesg | wc -l)
}

dmesg_has() {
	dmesg | tail -n +$((_mark + 1)) | grep -Eq "$1"
}

# has_gid DEV GID: port 1's GID table holds GID as a RoCE v2 entry.
has_gid() {
	for _f in /sys/class/infiniband/$1/ports/1/gids/*; do
		[ "$(cat "$_f" 2>/dev/null)" = "$2" ] || continue
		[ "$(cat /sys/class/infiniband/$1/ports/1/gid_attrs/types/${_f##*/})" = "RoCE v2" ] &&
			return 0
	done
	return 1
}

# gid_index DEV IPV4: the index of the RoCE v2 GID of an IPv4 address.
gid_index() {
	_want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' $(echo "$2" | tr . ' '))
	for _f in /sys/class/infiniband/$1/ports/1/gids/*; do
		[ "$(cat "$_f" 2>/dev/null)" = "$_want" ] || continue
		[ "$(cat /sys/class/infiniband/$1/ports/1/gid_attrs/types/${_f##*/})" = "RoCE v2" ] &&
			{ echo "${_f##*/}"; return 0; }
	done
	return 1
}

# veth_pair A B IPV4_A IPV4_B: a veth pair, addressed (/24) and up.
veth_pair() {
	ip link add "$1" type veth peer name "$2" &&
		ip addr add "$3/24" dev "$1" && ip addr add "$4/24" dev "$2" &&
		ip link set "$1" up && ip link set "$2" up
}

# local_pair: veth0 (10.0.0.1) and veth1 (10.0.0.2) in this namespace, set
# up for two RDMA ports on one host (the core resolves the peer's MAC by
# route and neighbour lookup: accept_local=1 and rp_filter=0 are needed).
local_pair() {
	veth_pair veth0 veth1 10.0.0.1 10.0.0.2 || return 1
	for _i in all default veth0 veth1; do
		sysctl -qw net.ipv4.conf.$_i.accept_local=1 \
			net.ipv4.conf.$_i.rp_filter=0 || return 1
	done
}

# peer_host: a second host, the network namespace "peer": veth0 (10.0.0.1)
# here, its end veth1 (10.0.0.2) there.
peer_host() {
	ip netns add peer &&
		ip link add veth0 type veth peer name veth1 &&
		ip link set veth1 netns peer &&
		ip addr add 10.0.0.1/24 dev veth0 && ip link set veth0 up &&
		ip netns exec peer ip addr add 10.0.0.2/24 dev veth1 &&
		ip netns exec peer ip link set lo up &&
		ip netns exec peer ip link set veth1 up
}

# port_gids: G0 and G1, the RoCE v2 GID indices of 10.0.0.1 on vhca0 and
# of 10.0.0.2 on vhca1, once the core has added them.
port_gids() {
	wait_for 10 gid_index vhca1 10.0.0.2 >/dev/null
	G0=$(gid_index vhca0 10.0.0.1)
	G1=$(gid_index vhca1 10.0.0.2)
}

# counter DEV NAME [NETNS]: a hardware counter of DEV's port 1, as rdma
# statistic shows it (in namespace NETNS if given).
counter() {
	${3:+ip netns exec $3} rdma statistic show link "$1/1" |
		awk -v c="$2" '{ for (i = 1; i < NF; i++) if ($i == c) print $(i + 1) }'
}

# total NAME: counter NAME of vhca0 plus vhca1's, vhca1 looked up in the
# namespace $VHCA1_NS when that is set.
total() {
	echo $(($(counter vhca0 "$1") + $(counter vhca1 "$1" $VHCA1_NS)))
}

# pair NAME SERVER_CMD CLIENT_CMD: both must succeed within PAIR_TMO
# seconds (120 unless set); their output goes to $T/NAME.srv and
# $T/NAME.cli, whose ends are shown (more of them on failure) with the time
# taken.  The client starts once the server listens: for ibv_*_pingpong and
# perftest, a TCP listener on their port 18515; the RDMA CM tools listen on
# no socket, so a client of theirs that fails while its server still waits
# is started again, five times at most.
pair() {
	_pn=$1
	_t0=$(date +%s)
	timeout "${PAIR_TMO:-120}" sh -c "$2" >$T/$_pn.srv 2>&1 &
	_pp=$!
	case "$2" in
	*pingpong* | *ib_*) wait_for 60 listening 18515 ;;
	*) sleep 1 ;;
	esac
	_try=1
	while :; do
		timeout "${PAIR_TMO:-120}" sh -c "$3" >$T/$_pn.cli 2>&1
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

# relay PREFIX FILE: count the PASS/FAIL lines a test program wrote.
relay() {
	while IFS= read -r _l; do
		case "$_l" in
		PASS:*) pass "$1: ${_l#PASS: }" ;;
		FAIL:*) fail "$1: ${_l#FAIL: }" ;;
		*) echo "$_l" ;;
		esac
	done <"$2"
}

finish() {
	echo "GUEST-SUMMARY: $NPASS passed, $NFAIL failed"
	[ $NFAIL = 0 ]
}
