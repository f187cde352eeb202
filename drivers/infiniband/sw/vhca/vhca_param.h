/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Every tunable of vhca in one place: the device limits that query_device
 * reports and the verbs enforce, and the engine's budgets, windows and
 * timeouts.  The defaults of module parameters are here too; the
 * parameters themselves are declared where they are used.
 */
#ifndef VHCA_PARAM_H
#define VHCA_PARAM_H

#include <linux/bits.h>
#include <linux/math.h>

/* Device limits: what query_device reports is what the verbs enforce. */
#define VHCA_MAX_QP		16384
#define VHCA_MAX_QP_WR		4096
#define VHCA_MAX_SGE		16
#define VHCA_MAX_INLINE		256
#define VHCA_MAX_CQ		16384
#define VHCA_MAX_CQE		32768
#define VHCA_MAX_MR		65536
#define VHCA_MAX_MR_SIZE	BIT_ULL(40)
#define VHCA_MAX_PD		65536
/*
 * The MAD layer's own objects on the port (QP1, and the CQ and PD it
 * uses), which the device counts beyond VHCA_MAX_QP, VHCA_MAX_CQ and
 * VHCA_MAX_PD, so that users reach those maxima exactly.
 */
#define VHCA_MAD_OBJECTS	1
/*
 * Responder resources (max_dest_rd_atomic): READs a QP holds for its peer,
 * a fixed array in each QP.  Initiator depth (max_rd_atomic): READs a QP
 * has outstanding, a count only; as deep as rxe's, since perftest and
 * rdma_cm peers hand a QP the other side's responder resources as its
 * initiator depth.
 */
#define VHCA_MAX_QP_RD_ATOM	16
#define VHCA_MAX_QP_INIT_RD_ATOM	128
#define VHCA_MAX_SRQ		4096
#define VHCA_MAX_XRCD		1024
/* Random XRC SRQ numbers tried before create_srq gives up. */
#define VHCA_XSRQN_TRIES	16
#define VHCA_MAX_SRQ_WR		4096
#define VHCA_MAX_AH		65536
#define VHCA_MAX_MSG_SIZE	BIT(31)
/* The largest payload of one packet: the largest path MTU (IB_MTU_4096). */
#define VHCA_MAX_PKT_PAYLOAD	4096
#define VHCA_LOCAL_ACK_DELAY	15

/*
 * Records in each area of a user context, and in all its areas at most:
 * one per object the device may hold and the context's own.
 */
#define VHCA_UCTX_RECS		1024
#define VHCA_UCTX_MAX_RECS	(VHCA_MAX_QP + VHCA_MAX_CQ + VHCA_MAX_SRQ + 1)

/*
 * Coherent memory a process maps (rings, doorbell and status areas),
 * charged to its memory cgroup and bounded twice: per user context and
 * per device.  Buffers: a context holds at most one record per live
 * object, so two rings per record (a QP's SQ and RQ) and the two buffers
 * of each pair of areas let every live object keep its rings; rings of
 * destroyed objects that are still mapped count until the process unmaps
 * them, so they share that room and cannot pile up.  Bytes:
 * uctx_coherent_mb's default, 256 MiB, holds VHCA_MAX_QP QPs of a typical
 * size (64 send and 64 receive WRs of one SGE: 12 KiB of rings) with a CQ
 * per 64 of them and all the areas, or a context's largest objects many
 * times over (a QP at VHCA_MAX_QP_WR with VHCA_MAX_SGE SGEs maps 4 MiB, a
 * CQ at VHCA_MAX_CQE 1 MiB, 2 MiB with timestamps); it is a quarter of
 * dev_coherent_mb's default (1 GiB), so that no one context takes the
 * device's budget.
 */
#define VHCA_UCTX_BUFS		(2 * VHCA_UCTX_MAX_RECS + \
				 2 * DIV_ROUND_UP(VHCA_UCTX_MAX_RECS, VHCA_UCTX_RECS))
#define VHCA_UCTX_COHERENT_MB	256
#define VHCA_DEV_COHERENT_MB	1024

/*
 * One allocation of device memory (max_dm_size, 1 MiB): one contiguous
 * coherent buffer, charged as the rings are, so a quarter of the page
 * allocator's largest piece (4 MiB on x86_64), which a fragmented system
 * still finds.
 */
#define VHCA_MAX_DM_SIZE	1048576

/* Requester: packets one pass sends before it yields. */
#define VHCA_REQ_BUDGET		64
/*
 * Passes a kick, or a round of the work item, runs one after another,
 * rescheduling between them.  The work item runs rounds (the requester's
 * passes, then the responder's) while work is left, VHCA_REQ_WORK_ROUNDS
 * at most on the unbound workqueue and one on the per-CPU one, before it
 * queues itself again.  An unbound work item queued again while it runs
 * wakes a second worker, which finds it running and sleeps again (an
 * unbound pool has no concurrency management): a stream that queued its
 * work item every 16 passes paid a wakeup and a CPU's IPI for each.  A
 * per-CPU pool wakes none while its worker runs, and its work items share
 * the CPU one at a time, so there one round is their turn.
 */
#define VHCA_REQ_PASSES		16
#define VHCA_REQ_WORK_ROUNDS	16
/* Packets in flight unacknowledged at most; an ACK is asked every so often. */
#define VHCA_REQ_WINDOW		256
#define VHCA_REQ_ACK_EVERY	64
/* Retransmit timeout when the QP's is 0 ("infinite"), and its floor. */
#define VHCA_TIMEOUT_DEFAULT_MS	500
#define VHCA_TIMEOUT_MIN_MS	10
/* Doublings of the retransmit timeout at most. */
#define VHCA_TIMEOUT_BACKOFF_MAX 7
/*
 * The requester's wait for a fault of its local ODP memory (vhca_odp.c)
 * before it tries again, in microseconds, on the RNR timer.
 */
#define VHCA_ODP_RETRY_US	100

/* An ODP access's fault also brings in what follows it, up to this much. */
#define VHCA_ODP_AHEAD		BIT(18)	/* 256 KiB */

/*
 * Implicit ODP: the address space in chunks of 2^VHCA_ODP_CHUNK_SHIFT
 * bytes, each a child umem once an access touches it, and at most as
 * many children as cover the largest MR (VHCA_MAX_MR_SIZE): an implicit
 * MR costs no more than the largest explicit one.
 */
#define VHCA_ODP_CHUNK_SHIFT	26	/* 64 MiB */
#define VHCA_ODP_MAX_CHILDREN	(VHCA_MAX_MR_SIZE >> VHCA_ODP_CHUNK_SHIFT)

/*
 * Asynchronous prefetches (advise_mr without FLUSH) queued or running on
 * a device at most; one more is dropped, a hint, and counted
 * (odp_prefetch_drops).  Each holds the SGEs of one call, 4095 at most
 * (the core's attribute length): 96 KiB, and a reference on their MRs.
 */
#define VHCA_ODP_PREFETCH_MAX	64
/*
 * An asynchronous prefetch faults this much at a time and stops when its
 * MR is being deregistered: dereg_mr waits for one step at most.
 */
#define VHCA_ODP_PREFETCH_STEP	BIT(21)	/* 2 MiB */

/* Faults of a UD WQE's ODP memory the sender makes before it fails it. */
#define VHCA_UD_FAULT_TRIES	4

/* rnr_retry that means "retry for ever". */
#define VHCA_RNR_RETRY_INFINITE	7

/*
 * Responder: READ responses one pass of the QP's work item builds before
 * it yields, and request packets held, in order, while READ responses
 * are still to go (more are dropped: the requester sends them again).
 */
#define VHCA_RESP_READ_BUDGET	64
#define VHCA_RESP_BACKLOG	256

/*
 * Direct placement between local ports: runs one requester pass builds
 * at most, and the payload bytes of one (a path MTU at least), which the
 * peer's responder places under its rq_lock, interrupts off.
 */
#define VHCA_REQ_SEGS		8
#define VHCA_REQ_SEG_BYTES	16384

/*
 * Destroy of a QP or an XRC SRQ: seconds it waits for the receivers'
 * references (each held for one packet or one run) before it reports one
 * as leaked; it waits on.
 */
#define VHCA_HANDLE_WARN_SECS	10

/* Doorbell: poll_budget's default, microseconds of watching an idle ring. */
#define VHCA_POLL_BUDGET_US	20

/* UD and GSI sender: WQEs one pass executes before it yields. */
#define VHCA_UD_BUDGET		64

/* Lingering QPs: qp_linger_ms's default, and how many a device keeps. */
#define VHCA_QP_LINGER_MS	5000
#define VHCA_LINGER_MAX		4096

/* Local delivery: nested deliveries per CPU before a packet takes the wire. */
#define VHCA_NET_LOCAL_DEPTH	4

/* UD multicast: query_device's limits, which attach enforces. */
#define VHCA_MAX_MCAST_GRP		32
#define VHCA_MAX_MCAST_QP_ATTACH	16
#define VHCA_MAX_TOTAL_MCAST_QP_ATTACH	128

#endif /* VHCA_PARAM_H */
