#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: the RDMA middleware of Debian 12 over two ports of one namespace,
# on veth0 (10.0.0.1, the servers) and veth1 (10.0.0.2, the clients),
# routed over the veth pair (wire_routes): first vhca0 and vhca1, then,
# the reference, rdma_rxe's rxe0 and rxe1 in the same boot (guest.sh's
# versus_ports, on, judge and figures).
#
# qperf: rc_bw, rc_lat, rc_rdma_write_bw, rc_rdma_read_bw and the atomics'
# message rates, and its ver_rc_compare_swap and ver_rc_fetch_add, which
# check every value an atomic returns; fabric: libfabric 1.17's
# fi_pingpong over the verbs provider, msg, rdm (verbs;ofi_rxm) and dgram
# endpoints, every message's bytes checked (-c); rsockets: rcopy of a file,
# compared byte for byte, and NetPIPE under librspreload.so, its integrity
# check, then its bandwidth; mpi: Open MPI 4.1 between two hosts (vhca1 in
# the namespace peer) over pml ucx and over pml cm with mtl ofi, NetPIPE's
# integrity check and an allreduce whose sums every rank checks, and
# rxe's allreduces with both ranks on one host; wire: vhca0 here and
# vhca1 in the namespace peer, nothing else on their veth wire,
# ib_write_bw and NetPIPE over rsockets, and every counter of vhca's of
# loss and reordering against the kernel's counters of drops (vhca only).
#
# The stock kernel's only but rsockets (shortened there): the debug
# kernel's checkers see the RDMA CM, RC and UD paths the others take in
# cm.sh (rping, pingpong, vhca-ud, vhca-cm) and rc.sh.
. "$VHCA_TOP/tests/lib/guest.sh"

export RDMAV_DRIVERS=$VHCA_PROVIDER
T=/tmp/middleware-test
mkdir -p $T
RSPRELOAD=/usr/lib/x86_64-linux-gnu/rsocket/librspreload.so

# received_over_b: B received the traffic (its counter RX above 1000).
received_over_b() {
	test "$(counter $D1 $RX)" -gt 1000
}

# ---- qperf

QPERF_TESTS="rc_bw rc_lat rc_rdma_write_bw rc_rdma_read_bw rc_compare_swap_mr
	rc_fetch_add_mr ver_rc_compare_swap ver_rc_fetch_add"

# qperf_run: its server on 10.0.0.1, every test from 10.0.0.2 through the
# RDMA CM (-cm1: without it qperf addresses by LID, without a GRH), 2 s
# each, then quit.
qperf_run() {
	qperf >$T/qperf-$KIND.srv 2>&1 &
	_qs=$!
	wait_for 30 listening 19765
	timeout "$(tmo 120)" qperf 10.0.0.1 -cm1 -t 2 $QPERF_TESTS >$T/qperf-$KIND 2>&1
	_qr=$?
	timeout 10 qperf 10.0.0.1 quit >/dev/null 2>&1
	kill $_qs 2>/dev/null
	wait $_qs
	[ $_qr = 0 ] || sed "s/^/$KTAP_IND# $KIND: /" $T/qperf-$KIND
	judge "qperf -cm1 -t 2 every test exits 0 (exit status $_qr)" test $_qr = 0
	for _q in $QPERF_TESTS; do
		_v=$(awk -v t="$_q:" '$1 == t { getline; print $3 " " $4; exit }' $T/qperf-$KIND)
		fig "qperf $_q" "$_v"
		judge "qperf $_q: ${_v:-no figure}" test -n "$_v"
	done
	judge "the traffic went through $D1 ($RX $(counter $D1 $RX))" received_over_b
}

qperf_both() {
	for k in vhca rxe; do
		on $k && qperf_run
	done
	figures
}
scenario qperf qperf_both 200 stock

# ---- libfabric

# fab NAME PROVIDER EP SERVER_DOMAIN CLIENT_DOMAIN: fi_pingpong's server on
# A, its client on B, 3 messages each way of every size from 0 B to
# 6 MiB (-S all, up to the endpoint's largest), each checked (-c); the
# figure: the bandwidth of the largest size.
# FI_VERBS_IFACE names the interface whose address a msg endpoint takes,
# FI_VERBS_GID_IDX the GID of a dgram one (the IPv4 one);
# FI_UNIVERSE_SIZE=8 keeps ofi_rxm's CQ within the device's max_cqe.
fab() {
	_fo="-p '$2' -e $3 -S all -I 3 -c"
	PAIR_PORT=47592 judge "fi_pingpong $_fo ($1)" pair "fi-$1-$KIND" \
		"FI_VERBS_IFACE=veth0 FI_VERBS_GID_IDX=$G0 FI_UNIVERSE_SIZE=8 fi_pingpong $_fo -d $4" \
		"FI_VERBS_IFACE=veth1 FI_VERBS_GID_IDX=$G1 FI_UNIVERSE_SIZE=8 fi_pingpong $_fo -d $5 10.0.0.1"
	_c=$T/fi-$1-$KIND.cli
	judge "fi_pingpong $1: no message failed its check" \
		sh -c "! grep -q 'Error at iteration' $_c $T/fi-$1-$KIND.srv"
	fig "fi_pingpong $1" \
		"$(awk '$1 ~ /^[0-9]/ { s = $1; b = $6 } END { if (s != "") print b " MB/s at " s }' $_c)"
}

fabric() {
	for k in vhca rxe; do
		on $k || continue
		fab msg verbs msg $D0 $D1
		fab rdm "verbs;ofi_rxm" rdm $D0 $D1
		fab dgram verbs dgram $D0-dgram $D1-dgram
		judge "the traffic went through $D1 ($RX $(counter $D1 $RX))" received_over_b
	done
	figures
}
scenario fabric fabric 200 stock

# ---- rsockets

# Sizes: rcopy's file (MiB), NetPIPE's largest message and its round
# trips a size, the packets its integrity check makes at least; on the
# debug kernel, whose checkers see rsockets' path (the RDMA CM, RC SENDs
# and WRITEs with immediate data) in their first packets, 1 MiB and
# 128 KiB once each, on vhca only (the figures are the stock kernel's).
RS_MB=8 NP_U=1048576 NP_N=3 NP_MIN=1000 RS_KINDS="vhca rxe"
[ "$VHCA_KERNEL" = debug ] && RS_MB=1 NP_U=131072 NP_N=1 NP_MIN=200 RS_KINDS=vhca

# rcopy_file: rcopy's server on 10.0.0.1, a file of RS_MB MiB copied to it
# from 10.0.0.2 (a client that fails while the server is not listening
# yet is started again, five times at most), then compared with the
# original.
rcopy_file() {
	rm -f $T/copy
	rcopy -p 7427 >$T/rcopy-$KIND.srv 2>&1 &
	_rs=$!
	_rt=1
	while :; do
		sleep 1
		timeout "$(tmo 60)" rcopy $T/file 10.0.0.1:$T/copy -p 7427 >$T/rcopy-$KIND.cli 2>&1
		_rr=$?
		[ $_rr != 0 ] && [ $_rt -lt 5 ] || break
		_rt=$((_rt + 1))
	done
	kill $_rs 2>/dev/null
	wait $_rs
	cat $T/rcopy-$KIND.cli
	[ $_rr = 0 ] && cmp $T/file $T/copy
}

# NetPIPE over TCP, its sockets made rsockets by librspreload.so: the
# integrity check (every message's bytes compared, 1 B to NP_U, each size
# NP_N times), then, on the stock kernel, the bandwidth of the same sizes
# without perturbations.
np() {
	pair "np$1-$KIND" \
		"LD_PRELOAD=$RSPRELOAD NPtcp -P 5102 $2 -u $NP_U -n $NP_N" \
		"LD_PRELOAD=$RSPRELOAD NPtcp -h 10.0.0.1 -P 5102 $2 -u $NP_U -n $NP_N -o $T/np$1-$KIND.out"
}

rsockets() {
	head -c $((RS_MB << 20)) /dev/urandom >$T/file
	for k in $RS_KINDS; do
		on $k || continue
		judge "rcopy of $RS_MB MiB from 10.0.0.2 to 10.0.0.1, the copy identical" rcopy_file
		fig "rcopy $RS_MB MiB" "$(sed -n 's/.* = \(.*\)/\1/p' $T/rcopy-$KIND.cli)"
		_n0=$(counter $D1 $RX)
		judge "NPtcp -i under librspreload exits 0" np i -i
		judge "NetPIPE's integrity check passed at every size" sh -c \
			"grep -q 'Integrity check passed' $T/npi-$KIND.cli &&
			! grep -q 'Integrity check failed' $T/npi-$KIND.cli $T/npi-$KIND.srv"
		judge "NetPIPE's rsockets went through $D1 ($RX +$(($(counter $D1 $RX) - _n0)))" \
			test $(($(counter $D1 $RX) - _n0)) -gt $NP_MIN
		[ "$VHCA_KERNEL" = debug ] && continue
		judge "NPtcp -p 0 under librspreload exits 0" np bw "-p 0"
		fig "NetPIPE rsockets peak" \
			"$(awk '$2 > m { m = $2; s = $1 } END { if (m) printf "%.0f Mb/s at %d\n", m, s }' $T/npbw-$KIND.out)"
	done
	figures
}
scenario rsockets rsockets 200

# ---- drops on an unloaded veth wire

# drop_counters: "NAME VALUE" lines, NAME its kind and its name: vhca's
# counters of loss and reordering (total: vhca0's plus vhca1's in the
# namespace peer), and every kernel counter of a packet dropped between
# vhca's sender and its receiver in either namespace: UDP's receive errors
# (/proc/net/snmp), the veth ends' drops, their qdiscs', and the per-CPU
# backlogs' (/proc/net/softnet_stat: its second column; its third, the
# times the receive softirq ran out of budget, is shown, not a drop).
drop_counters() {
	for _dc in retransmits timeouts seq_naks rx_out_of_window duplicate_requests rnr_naks; do
		echo "vhca $_dc $(total $_dc)"
	done
	for _dc in here peer; do
		_dx=
		[ $_dc = peer ] && _dx="ip netns exec peer"
		$_dx awk -v ns=$_dc '$1 == "Udp:" {
			if (!n) { n = split($0, h); next }
			for (i = 2; i <= n; i++)
				if (h[i] ~ /^(InErrors|RcvbufErrors|SndbufErrors)$/)
					print "kernel " ns "_udp_" h[i], $i
		}' /proc/net/snmp
		_dv=veth0
		[ $_dc = peer ] && _dv=veth1
		echo "kernel ${_dv}_rx_dropped $($_dx cat /sys/class/net/$_dv/statistics/rx_dropped)"
		echo "kernel ${_dv}_tx_dropped $($_dx cat /sys/class/net/$_dv/statistics/tx_dropped)"
		echo "kernel ${_dv}_qdisc_dropped $($_dx tc -s qdisc show dev $_dv |
			awk '{ for (i = 1; i < NF; i++) if ($i == "(dropped") d += $(i + 1) } END { print d + 0 }')"
	done
	_dd=0 _ds=0
	while read -r _ _dc_d _dc_s _; do
		_dd=$((_dd + 0x$_dc_d)) _ds=$((_ds + 0x$_dc_s))
	done </proc/net/softnet_stat
	echo "kernel backlog_dropped $_dd"
	echo "info backlog_time_squeeze $_ds"
}

# drops_owned BEFORE AFTER: each counter's change printed; vhca's own
# drops none: no retransmission (retransmits: go-back-N after a NAK or a
# timeout), no gap in a QP's packets found by its responder (seq_naks) and
# no packet taken out of order (rx_out_of_window), or the kernel counted
# drops and each gap and each timeout is matched by one of them.
drops_owned() {
	awk 'NR == FNR { b[$1 " " $2] = $3; next }
	{
		d = $3 - b[$1 " " $2]
		printf "# %-6s %-28s %8d -> %8d  %+d\n", $1, $2, b[$1 " " $2], $3, d
		c[$1 " " $2] = d
		if ($1 == "kernel") k += d
	}
	END {
		g = c["vhca seq_naks"]; o = c["vhca rx_out_of_window"]
		r = c["vhca retransmits"]; t = c["vhca timeouts"]
		printf "# vhca: %d retransmissions, %d gaps, %d packets out of order, %d timeouts; kernel: %d drops\n",
			r, g, o, t, k
		exit !(r + g + o == 0 || (k > 0 && g + t <= k))
	}' "$1" "$2"
}

# wire_drops: vhca0 here and vhca1 in the namespace peer, nothing else
# on their wire (no netem, no RPS: a veth delivers into the receive
# backlog of the CPU that sends, and vhca sends a QP's packets from one
# CPU while any is unacknowledged, Documentation/engine.md): ib_write_bw
# of 5000 64 KiB messages from vhca0 to vhca1, then NetPIPE over rsockets
# from 10.0.0.1 to 10.0.0.2 (1 B to 1 MiB, its perturbations, 3 round
# trips a size); every counter of loss before and after each.
# ib_write_bw's QP timeout is about 1 s (-u 18): its default, 67 ms, is
# shorter than an acknowledgement can take in a TCG guest beside another
# guest, and a retransmission after a late acknowledgement is not a drop
# but fails this check all the same.
wire_drops() {
	ports_two_ns
	_wb="ib_write_bw -F -p 18515 -s 65536 -n 5000 -u 18"
	drop_counters >$T/drops.0
	check "ib_write_bw -s 65536 -n 5000, vhca0 to vhca1 in the namespace peer" \
		pair wire-bw "ip netns exec peer $_wb -d vhca1 -x $G1" \
		"$_wb -d vhca0 -x $G0 10.0.0.2"
	echo "# ib_write_bw: $(awk '/^ *#bytes/ { h = 1; next }
		h && $1 ~ /^[0-9]+$/ { print $4 " MB/s"; exit }' $T/wire-bw.cli)"
	drop_counters >$T/drops.1
	check "NPtcp under librspreload, 10.0.0.1 to 10.0.0.2 in the namespace peer" \
		pair wire-np \
		"ip netns exec peer env LD_PRELOAD=$RSPRELOAD NPtcp -P 5102 -u 1048576 -n 3" \
		"LD_PRELOAD=$RSPRELOAD NPtcp -h 10.0.0.2 -P 5102 -u 1048576 -n 3 -o $T/wire-np.out"
	echo "# NetPIPE: $(awk '$2 > m { m = $2; s = $1 }
		END { if (m) printf "%.0f Mb/s at %d\n", m, s }' $T/wire-np.out)"
	drop_counters >$T/drops.2
	check "ib_write_bw: no drop of vhca's own" drops_owned $T/drops.0 $T/drops.1
	check "NetPIPE: no drop of vhca's own" drops_owned $T/drops.1 $T/drops.2
	_wr=$(counter vhca1 rx_packets peer)
	check "the traffic went through vhca1 (rx_packets $_wr)" test "$_wr" -gt 10000
}
scenario wire wire_drops 200 stock

# ---- Open MPI

# rank_sh: $T/rank.sh, which mpirun starts in place of the program: rank 0
# takes port D0 (GID G0, veth0), rank 1 port D1 (G1, veth1).
rank_sh() {
	cat >$T/rank.sh <<EOF
#!/bin/sh
if [ "\$OMPI_COMM_WORLD_RANK" = 0 ]; then
	export UCX_NET_DEVICES=$D0:1 UCX_IB_GID_INDEX=$G0 FI_VERBS_IFACE=veth0
else
	export UCX_NET_DEVICES=$D1:1 UCX_IB_GID_INDEX=$G1 FI_VERBS_IFACE=veth1
fi
exec "\$@"
EOF
	chmod +x $T/rank.sh
}

# two_hosts: the namespace peer a second host (ports_two_ns: vhca0 here,
# vhca1 there) for mpirun --host 10.0.0.1,10.0.0.2 (MPI_HOSTS): the
# daemon of 10.0.0.2 is started by $T/netns-rsh, mpirun's ssh, in the
# namespace peer and in a UTS namespace of its own, named vhca-peer (Open
# MPI names its session directory after the host).
two_hosts() {
	KIND=vhca D0=vhca0 D1=vhca1 RX=rx_packets
	ports_two_ns
	cat >$T/netns-rsh <<'EOF'
#!/bin/sh
shift
exec ip netns exec peer unshare --uts sh -c "hostname vhca-peer && $*"
EOF
	chmod +x $T/netns-rsh
	MPI_HOSTS="--host 10.0.0.1,10.0.0.2 --map-by node --mca plm_rsh_agent $T/netns-rsh
		--mca oob_tcp_if_include 10.0.0.0/24"
	rank_sh
}

# allreduce_py: $T/allreduce.py, an MPI program through Open MPI's
# libmpi.so.40 (Debian's openmpi-bin has no mpi.h: no compiler wrapper
# works without libopenmpi-dev): MPI_Allreduce of 64 Ki 64-bit integers,
# rank r contributing (r + 1) * (i + round) at index i, three rounds, every
# element of the sum checked on every rank; the figure: the fastest round
# (the first one sets up the connections).  Open MPI's handles
# (MPI_COMM_WORLD, MPI_LONG_LONG, MPI_SUM) are the addresses of its
# predefined objects, as its mpi.h defines them.
allreduce_py() {
	cat >$T/allreduce.py <<'EOF'
import ctypes, sys
mpi = ctypes.CDLL("libmpi.so.40", mode=ctypes.RTLD_GLOBAL)
mpi.MPI_Wtime.restype = ctypes.c_double
def handle(name):
    return ctypes.c_void_p(ctypes.addressof(ctypes.c_char.in_dll(mpi, name)))
world = handle("ompi_mpi_comm_world")
i64 = handle("ompi_mpi_long_long_int")
op_sum = handle("ompi_mpi_op_sum")
if mpi.MPI_Init(None, None) != 0:
    sys.exit(2)
rank, size = ctypes.c_int(), ctypes.c_int()
mpi.MPI_Comm_rank(world, ctypes.byref(rank))
mpi.MPI_Comm_size(world, ctypes.byref(size))
r, s, n, bad, best = rank.value, size.value, 1 << 16, 0, 1e9
k = s * (s + 1) // 2
for it in range(3):
    send = (ctypes.c_longlong * n)(*[(r + 1) * (i + it) for i in range(n)])
    recv = (ctypes.c_longlong * n)()
    t = mpi.MPI_Wtime()
    rc = mpi.MPI_Allreduce(send, recv, n, i64, op_sum, world)
    best = min(best, mpi.MPI_Wtime() - t)
    bad += (rc != 0) + sum(1 for i in range(n) if recv[i] != k * (i + it))
print("rank %d of %d: 3 allreduces of %d bytes, %d wrong, the fastest %.1f ms"
      % (r, s, n * 8, bad, best * 1000))
mpi.MPI_Finalize()
sys.exit(1 if bad else 0)
EOF
}

# mpi_run NAME PML_ARGS PROGRAM...: mpirun of two ranks (on MPI_HOSTS,
# else here), each on its port (rank.sh), only btl self (the ranks talk
# over the pml's transport alone), its output in $T/NAME.
mpi_run() {
	_mn=$1
	_mp=$2
	shift 2
	# shellcheck disable=SC2086 # the hosts' and the pml's arguments
	timeout "$(tmo 300)" mpirun --allow-run-as-root -np 2 $MPI_HOSTS \
		--mca btl self --mca osc ^ucx $_mp \
		-x UCX_TLS=rc_v,self -x UCX_UD_VERBS_ETH_DGID_CHECK=n \
		-x FI_PROVIDER="verbs;ofi_rxm" -x FI_UNIVERSE_SIZE=8 -x RDMAV_DRIVERS \
		$T/rank.sh "$@" >$T/$_mn 2>&1
	_mr=$?
	tail -n 4 $T/$_mn
	return $_mr
}

# mpi_np NAME PML_ARGS: NetPIPE's integrity check over one pml, every
# message's bytes compared, 1 B to 1 MiB.
mpi_np() {
	judge "$1: NPopenmpi -i exits 0" \
		mpi_run "np-$1-$KIND" "$2" NPopenmpi -i -u 1048576 -n 3
	judge "$1: NetPIPE's integrity check passed at every size" sh -c \
		"grep -q 'Integrity check passed' $T/np-$1-$KIND &&
		! grep -q 'Integrity check failed' $T/np-$1-$KIND"
}

# mpi_ar NAME PML_ARGS: the allreduce over one pml.
mpi_ar() {
	judge "$1: allreduce.py exits 0" \
		mpi_run "ar-$1-$KIND" "$2" python3 $T/allreduce.py
	judge "$1: both ranks found every element of the sums right" \
		test "$(grep -c ' 0 wrong' $T/ar-$1-$KIND)" = 2
	fig "Open MPI $1 allreduce 512 KiB" "$(sed -n 's/^rank 1 .* fastest //p' $T/ar-$1-$KIND)"
}

# Open MPI's default pml ucx (UCX_TLS=rc_v,self: no shared memory), and
# pml cm with libfabric's mtl ofi on verbs;ofi_rxm: between two hosts
# (vhca0 here, vhca1 in the namespace peer), NetPIPE's integrity check and
# the allreduce; then rdma_rxe's allreduces, with both ranks here (6.12's
# rxe works in the initial namespace only).
mpi() {
	: >$T/figures
	hostname vhca-guest
	allreduce_py
	two_hosts
	_c0=$(counter $D1 $RX peer)
	for pml in "ucx --mca pml ucx" "ofi --mca pml cm --mca mtl ofi"; do
		mpi_np ${pml%% *} "${pml#* }"
		mpi_ar ${pml%% *} "${pml#* }"
	done
	check "the ranks' traffic went through vhca1 ($RX +$(($(counter $D1 $RX peer) - _c0)))" \
		test $(($(counter $D1 $RX peer) - _c0)) -gt 1000
	MPI_HOSTS=
	if on rxe; then
		rank_sh
		for pml in "ucx --mca pml ucx" "ofi --mca pml cm --mca mtl ofi"; do
			mpi_ar ${pml%% *} "${pml#* }"
		done
		judge "the ranks' traffic went through $D1 ($RX $(counter $D1 $RX))" received_over_b
	fi
	figures
}
scenario mpi mpi 300 stock

run_scenarios "$@"
