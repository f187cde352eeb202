#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: UCX 1.13 and Open MPI 4.1 (pml ucx) over two ports of one
# namespace, on veth0 (10.0.0.1) and veth1 (10.0.0.2), routed over the
# veth pair (wire_routes): first vhca0 and vhca1, then, the reference,
# rdma_rxe's rxe0 and rxe1 in the same boot (guest.sh's versus_ports, on,
# judge and figures).  ucx_perftest at the UCT level (ud_verbs active
# messages, rc_verbs atomics; its server takes the client's -d, so both
# ends open the first port) and at the UCP level (each end its own port
# through UCX_NET_DEVICES), and NetPIPE's integrity check over mpirun
# --mca pml ucx, every byte compared.
#
# UCX before 1.19 drops every UD datagram from a port that is not a
# Mellanox one, vhca's and rdma_rxe's alike, where the GID is an IPv4 one:
# its destination-GID filter (UCX_UD_VERBS_ETH_DGID_CHECK, on by default
# over Ethernet) takes the CQE's SL for mlx5's RoCE packet type, reads an
# SL of 0 as "IPv6", and compares the IPv4 header in the receive buffer's
# first 40 bytes with its GIDs.  UD also carries the wireup of UCP's RC
# lanes, so rc_v and Open MPI's pml ucx stall too.  Every run here sets
# UCX_UD_VERBS_ETH_DGID_CHECK=n (Documentation/admin-guide.md).
#
# On the debug kernel, rc only, on vhca only, 100 iterations a test: its
# checkers see UCX's UD wireup, its RC lanes and the atomics there; ud's
# and mpi's paths are cm.sh's (pingpong, vhca-ud) and rc.sh's.
. "$VHCA_TOP/tests/lib/guest.sh"

export RDMAV_DRIVERS=$VHCA_PROVIDER
export UCX_UD_VERBS_ETH_DGID_CHECK=n
T=/tmp/ucx-test
mkdir -p $T
N=1000 KINDS="vhca rxe"
[ "$VHCA_KERNEL" = debug ] && N=100 KINDS=vhca

# perf NAME SERVER_ENV CLIENT_ENV ARGS: ucx_perftest's server (on port
# 13337) and its client, each with its environment, ARGS the client's;
# the figure of its last line ("Final:"): the overall latency of a
# latency test (its name ends in _lat; the atomics' too), the overall
# bandwidth of a bandwidth test.
perf() {
	judge "ucx_perftest $4" pair "$1-$KIND" "env $2 ucx_perftest" \
		"env $3 ucx_perftest 10.0.0.1 $4"
	_pb=0
	case "$4" in
	*_bw*) _pb=1 ;;
	esac
	_pf=$(awk -v bw=$_pb '$1 == "Final:" {
		if (bw) printf "%.1f MB/s\n", $7; else printf "%.2f us\n", $5 }' $T/$1-$KIND.cli)
	fig "$1" "$_pf"
}

# UD at the UCT level (one port, both ends) and UCP over ud_v alone.
ud() {
	for k in $KINDS; do
		on $k || continue
		perf uct-ud-am_lat "UCX_IB_GID_INDEX=$G0" "UCX_IB_GID_INDEX=$G0" \
			"-d $D0:1 -x ud_verbs -t am_lat -n $N"
		perf uct-ud-am_bw-bcopy "UCX_IB_GID_INDEX=$G0" "UCX_IB_GID_INDEX=$G0" \
			"-d $D0:1 -x ud_verbs -t am_bw -D bcopy -s 1000 -n $N"
		perf ucp-ud-tag_lat "UCX_TLS=ud_v,self UCX_NET_DEVICES=$D0:1 UCX_IB_GID_INDEX=$G0" \
			"UCX_TLS=ud_v,self UCX_NET_DEVICES=$D1:1 UCX_IB_GID_INDEX=$G1" \
			"-t tag_lat -n $N"
	done
	figures
}
scenario ud ud 240 stock

# UCP over rc_v (UD for its wireup), and UCT's atomics on RC, which UCX
# 1.13 enables on a device whose atomic_cap is ATOMIC_HCA only (vhca's,
# device.sh checks it; rxe's).
rc() {
	for k in $KINDS; do
		on $k || continue
		for args in "-t tag_lat -n $N" "-t tag_bw -s 65536 -n $N"; do
			perf "ucp-rc-$(echo "$args" | cut -d' ' -f2)" \
				"UCX_TLS=rc_v,self UCX_NET_DEVICES=$D0:1 UCX_IB_GID_INDEX=$G0" \
				"UCX_TLS=rc_v,self UCX_NET_DEVICES=$D1:1 UCX_IB_GID_INDEX=$G1" \
				"$args"
		done
		perf uct-rc-fadd "UCX_IB_GID_INDEX=$G0" "UCX_IB_GID_INDEX=$G0" \
			"-d $D0:1 -x rc_verbs -t fadd -n $N"
	done
	figures
}
scenario rc rc 240

# received_over_d1: D1 received the ranks' traffic (its counter of
# received packets above 1000).
received_over_d1() {
	if [ "$KIND" = rxe ]; then
		_rd=$(counter $D1 rcvd_pkts)
	else
		_rd=$(counter $D1 rx_packets)
	fi
	echo "# $D1 received $_rd packets"
	test "$_rd" -gt 1000
}

# mpirun_np: NetPIPE's integrity check over pml ucx, up to 128 KiB.
mpirun_np() {
	timeout "$(tmo 300)" mpirun --allow-run-as-root -np 2 --mca pml ucx \
		--mca btl self --mca osc ^ucx -x UCX_TLS=rc_v,self \
		-x UCX_UD_VERBS_ETH_DGID_CHECK -x RDMAV_DRIVERS \
		$T/rank.sh NPopenmpi -i -u 131072 >$T/mpi-$KIND.out 2>&1
	_r=$?
	tail -n 5 $T/mpi-$KIND.out
	return $_r
}

# Open MPI's default path, pml ucx, over rc_v: rank 0 on the first port,
# rank 1 on the second (the wrapper gives each its port), NetPIPE's
# integrity check (every message's bytes compared) up to 128 KiB; the
# figure, the seconds it took.  mpirun needs a host name it can parse:
# the guest has none.
mpi() {
	hostname vhca-guest
	for k in $KINDS; do
		on $k || continue
		cat >$T/rank.sh <<EOF
#!/bin/sh
if [ "\$OMPI_COMM_WORLD_RANK" = 0 ]; then
	export UCX_NET_DEVICES=$D0:1 UCX_IB_GID_INDEX=$G0
else
	export UCX_NET_DEVICES=$D1:1 UCX_IB_GID_INDEX=$G1
fi
exec "\$@"
EOF
		chmod +x $T/rank.sh
		read -r _t0 _ </proc/uptime
		judge "mpirun --mca pml ucx NPopenmpi -i exits 0" mpirun_np
		read -r _t1 _ </proc/uptime
		fig "mpirun pml ucx NPopenmpi -i" "$((${_t1%.*} - ${_t0%.*})) s"
		judge "NetPIPE's integrity check passed at every size" \
			sh -c "grep -q 'Integrity check passed' $T/mpi-$KIND.out &&
				! grep -q 'Integrity check failed' $T/mpi-$KIND.out"
		judge "the ranks' traffic went through $D1" received_over_d1
	done
	figures
}
scenario mpi mpi 300 stock

run_scenarios "$@"
