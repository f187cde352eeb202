#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: UCX 1.13 and Open MPI 4.1 (pml ucx) over two vhca ports of one
# namespace, vhca0 (10.0.0.1) and vhca1 (10.0.0.2).  ucx_perftest at the
# UCT level (ud_verbs active messages, rc_verbs atomics; its server takes
# the client's -d, so both ends open vhca0) and at the UCP level (each end
# its own port through UCX_NET_DEVICES), and NetPIPE's integrity check over
# mpirun --mca pml ucx, every byte compared.
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
# The stock kernel's only: the debug kernel's checkers see the UD and RC
# paths these take in cm.sh (pingpong, vhca-ud) and rc.sh.
. "$VHCA_TOP/tests/lib/guest.sh"

export RDMAV_DRIVERS=$VHCA_PROVIDER
export UCX_UD_VERBS_ETH_DGID_CHECK=n
T=/tmp/ucx-test
mkdir -p $T
N=1000

# ports: vhca0 and vhca1 here, their IPv4 GIDs G0 and G1, 10.0.0.1 and
# 10.0.0.2 routed over the veth pair.
ports() {
	ports_one_ns
	check "10.0.0.1 <-> 10.0.0.2 routed over the veth pair" wire_routes
}

# perf NAME SERVER_ENV CLIENT_ENV ARGS: ucx_perftest's server (on port
# 13337) and its client, each with its environment, ARGS the client's.
perf() {
	check "ucx_perftest $4" pair "$1" "env $2 ucx_perftest" \
		"env $3 ucx_perftest 10.0.0.1 $4"
}

# UD at the UCT level (one port, both ends) and UCP over ud_v alone.
ud() {
	ports
	perf uct-ud "UCX_IB_GID_INDEX=$G0" "UCX_IB_GID_INDEX=$G0" \
		"-d vhca0:1 -x ud_verbs -t am_lat -n $N"
	perf uct-ud-bcopy "UCX_IB_GID_INDEX=$G0" "UCX_IB_GID_INDEX=$G0" \
		"-d vhca0:1 -x ud_verbs -t am_bw -D bcopy -s 1000 -n $N"
	perf ucp-ud "UCX_TLS=ud_v,self UCX_NET_DEVICES=vhca0:1 UCX_IB_GID_INDEX=$G0" \
		"UCX_TLS=ud_v,self UCX_NET_DEVICES=vhca1:1 UCX_IB_GID_INDEX=$G1" \
		"-t tag_lat -n $N"
}
scenario ud ud 240 stock

# UCP over rc_v (UD for its wireup), and UCT's atomics on RC, which UCX
# 1.13 enables on a device whose atomic_cap is ATOMIC_HCA only (vhca's,
# device.sh checks it).
rc() {
	ports
	for args in "-t tag_lat -n $N" "-t tag_bw -s 65536 -n $N"; do
		perf "ucp-rc$(echo "$args" | tr -d ' -')" \
			"UCX_TLS=rc_v,self UCX_NET_DEVICES=vhca0:1 UCX_IB_GID_INDEX=$G0" \
			"UCX_TLS=rc_v,self UCX_NET_DEVICES=vhca1:1 UCX_IB_GID_INDEX=$G1" \
			"$args"
	done
	perf uct-fadd "UCX_IB_GID_INDEX=$G0" "UCX_IB_GID_INDEX=$G0" \
		"-d vhca0:1 -x rc_verbs -t fadd -n $N"
}
scenario rc rc 240 stock

# Open MPI's default path, pml ucx, over rc_v: rank 0 on vhca0, rank 1 on
# vhca1 (the wrapper gives each its port), NetPIPE's integrity check
# (every message's bytes compared) up to 128 KiB.  mpirun needs a host name
# it can parse: the guest has none.
mpi() {
	ports
	hostname vhca-guest
	cat >$T/rank.sh <<EOF
#!/bin/sh
if [ "\$OMPI_COMM_WORLD_RANK" = 0 ]; then
	export UCX_NET_DEVICES=vhca0:1 UCX_IB_GID_INDEX=$G0
else
	export UCX_NET_DEVICES=vhca1:1 UCX_IB_GID_INDEX=$G1
fi
exec "\$@"
EOF
	chmod +x $T/rank.sh
	timeout "$(tmo 300)" mpirun --allow-run-as-root -np 2 --mca pml ucx \
		--mca btl self --mca osc ^ucx -x UCX_TLS=rc_v,self \
		-x UCX_UD_VERBS_ETH_DGID_CHECK -x RDMAV_DRIVERS \
		$T/rank.sh NPopenmpi -i -u 131072 >$T/mpi.out 2>&1
	_r=$?
	tail -n 5 $T/mpi.out
	check "mpirun --mca pml ucx NPopenmpi -i exits 0 (exit status $_r)" test $_r = 0
	check "NetPIPE's integrity check passed at every size" \
		sh -c "grep -q 'Integrity check passed' $T/mpi.out &&
			! grep -q 'Integrity check failed' $T/mpi.out"
	check "the ranks' traffic went through vhca1 (rx_packets $(counter vhca1 rx_packets))" \
		test "$(counter vhca1 rx_packets)" -gt 1000
}
scenario mpi mpi 300 stock

run_scenarios "$@"
