/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Queue pairs of vhca: RC, UC, UD and GSI (QP1).
 */
#ifndef VHCA_QP_H
#define VHCA_QP_H

#include <linux/hrtimer.h>
#include <linux/mutex.h>
#include <linux/skbuff.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>

#include "vhca_handle.h"
#include "vhca_param.h"
#include "vhca_pkt.h"
#include "vhca_ring.h"

/*
 * The engine's own copy of a send WQE it executes: read once from the ring,
 * validated, kept until the WQE completes (retransmissions use it).  What
 * the requester and the completer look at on every pass comes first, then
 * the WQE's header, then its SGEs or its inline data: room for the QP's
 * max_send_sge SGEs or max_inline bytes, whichever is larger, and no more
 * (vhca_swqe_stride()).  hdr.num_sge and hdr.inline_len count what the
 * copy holds, within those caps: not what the ring said.
 */
struct vhca_swqe {
	u32 len;			/* message bytes */
	u32 first_psn;			/* PSNs the message uses ... */
	u32 last_psn;			/* ... (READ: its responses') */
	u8 wc_status;			/* IB_WC_SUCCESS unless refused */
	bool fetched;
	struct vhca_send_wqe hdr;
	union {
		DECLARE_FLEX_ARRAY(struct vhca_sge, sge);
		DECLARE_FLEX_ARRAY(u8, data);
	};
};

/*
 * Bytes from one send WQE copy to the next for a QP of these caps (at most
 * VHCA_MAX_SGE and VHCA_MAX_INLINE, vhca_qp_size_caps()).
 */
static inline u32 vhca_swqe_stride(u32 max_send_sge, u32 max_inline)
{
	u32 room = max_t(u32, max_send_sge * sizeof(struct vhca_sge),
			 max_inline);

	return ALIGN(sizeof(struct vhca_swqe) + room,
		     __alignof__(struct vhca_swqe));
}

/*
 * Whether the engine watches a QP's send doorbell (the head the provider
 * writes): while requests are in flight it does, and for poll_budget us
 * after they all completed; then it sets VHCA_STATUS_NEEDS_WAKEUP and the
 * provider's next post_send enters the kernel.
 */
enum vhca_db_state {
	VHCA_DB_AWAKE,			/* busy, or asleep with the flag set */
	VHCA_DB_GRACE,			/* idle, db_timer pending */
	VHCA_DB_EXPIRED,		/* idle past the window: sleep now */
};

/* The responder's state of the message in progress. */
struct vhca_rmsg {
	bool active;			/* a SEND or WRITE message is open */
	bool send;			/* SEND: rwqe holds its receive WQE */
	/*
	 * rwqe holds a receive WQE taken and not completed: the SEND's or
	 * the WRITE with immediate's, or, on UC, one a dropped message had
	 * taken, kept for the next message that needs one.
	 */
	bool wqe;
	struct vhca_recv_wqe rwqe;
	struct vhca_sge sge[VHCA_MAX_SGE];
	u32 offset;			/* bytes placed so far */
	u32 rkey;			/* WRITE: the target, looked up per packet */
	u64 va;				/* WRITE: where the next byte goes */
	u32 left;			/* WRITE: bytes the RETH announced */
	u32 xrc_srqn;			/* XRC_TGT: the message's XRC SRQ */
};

/*
 * Direct placement (vhca_req.c): a run of an RC WQE's packets for a local
 * peer, built by a pass and placed by the peer's responder after it.
 */
struct vhca_req_seg {
	struct vhca_pkt pkt;		/* the run as one packet */
	u32 npkts;			/* the packets it stands for */
	u32 off;			/* its payload's offset in the message */
	/* The payload's WQE: stable while the pass that built it runs. */
	struct vhca_swqe *wqe;
};

/* Requester (vhca_req.c): WQEs to packets; under sq_lock. */
struct vhca_qp_req {
	void *swqe;			/* one copy per SQ slot (RC, UC) ... */
	u32 swqe_stride;		/* ... this many bytes apart */
	u32 next;			/* next WQE to (re)send */
	u32 pkt;			/* packets of it sent already */
	u32 psn;			/* PSN of the next new packet */
	/*
	 * Direct placement: runs the pass built, for after it drops the
	 * lock; packets (no runs) until the peer acknowledged wire_end,
	 * the PSN after the last packet sent (wire), and for good once the
	 * peer was found not local (remote, until the next RTR).
	 */
	struct vhca_req_seg segs[VHCA_REQ_SEGS];
	u32 nsegs;
	bool wire;
	bool remote;
	u32 wire_end;
	u8 retry_left;
	u8 rnr_left;
	bool rnr_wait;			/* an RNR NAK's delay is on rnr_timer */
	bool running;			/* a requester pass is under way ... */
	bool again;			/* ... and another was asked for */
	/*
	 * The CPU that sent the last packets that took the wire, -1 for
	 * none: passes run there while any is unacknowledged
	 * (vhca_req_run()).  Read without the lock by vhca_engine_kick().
	 */
	int tx_cpu;
	struct timer_list rexmit_timer;
	struct hrtimer rnr_timer;
};

/* Completer (vhca_comp.c): ACKs and READ responses; under sq_lock. */
struct vhca_qp_comp {
	u32 psn;			/* next READ response expected */
	bool read_retried;		/* psn's READ asked again once */
	u32 acked_psn;			/* the peer has all PSNs before it */
};

/* Doorbell (vhca_db.c): the send doorbell's poll window; under sq_lock. */
struct vhca_qp_db {
	bool kicked;			/* a post_send came since the last pass */
	u8 state;			/* enum vhca_db_state */
	bool answer;			/* a message came in: no poll window */
	u32 seen;			/* the SQ head the last pass read */
	struct hrtimer timer;		/* ends the poll window */
};

/*
 * What a READ resource answers: the request (the first one or a
 * duplicate) whose responses the QP's work item is sending.
 */
struct vhca_rd_reply {
	u32 psn;			/* the PSN of its first response */
	u32 npkts;			/* responses it asks for */
	u32 sent;			/* responses built so far */
	u64 va;
	u32 len;
};

/*
 * A READ request the responder accepted (one of max_dest_rd_atomic
 * resources): held to answer its duplicates, and busy while responses to
 * it are still to go.
 */
struct vhca_rd_res {
	u32 psn;			/* the PSN of its first response */
	u32 npsn;			/* PSNs its responses take; 0: free */
	u64 va;
	u32 len;
	u32 rkey;
	u32 msn;			/* the MSN its responses carry */
	u32 xrc_srqn;			/* XRC_TGT: the SRQ its request named */
	struct vhca_rd_reply reply;
	bool atomic;			/* an atomic's: its result, kept */
	bool no_value;			/* ... an ATOMIC WRITE's or a FLUSH's */
	u64 orig;			/* the value the atomic found */
};

/* Responder (vhca_resp.c): requests from the peer; under rq_lock. */
struct vhca_qp_resp {
	u32 psn;			/* next request PSN expected */
	u32 msn;			/* MSN: requests completed, in AETHs */
	bool nak_sent;			/* a PSN sequence NAK is pending */
	bool uc_drop;			/* UC: dropping up to a FIRST or ONLY */
	struct vhca_rmsg msg;		/* also UD's receive WQE */
	/*
	 * XRC_TGT: the XRC SRQ of the request being executed, referenced
	 * for it (vhca_resp.c); NULL otherwise.
	 */
	struct vhca_srq *xsrq;
	struct vhca_rd_res rd[VHCA_MAX_QP_RD_ATOM];
	u32 rd_next;			/* the slot the next READ takes */
	bool rd_pass;			/* a pass of READ responses runs */
	/*
	 * Requests held, in order, while READ responses are to go, or
	 * while a work item runs one taken from them (draining).
	 */
	struct sk_buff_head backlog;
	bool draining;
};

struct vhca_qp {
	struct ib_qp ibqp;
	struct mutex mutex;		/* modify, query: attr */
	struct mutex tx_mutex;		/* UD, GSI: one sender pass at a time */
	spinlock_t sq_lock;		/* send queue: posts and flush */
	spinlock_t rq_lock;		/* receive queue: posts and flush */
	enum ib_qp_state state;		/* written under both locks */
	struct vhca_ring sq;		/* send WQE slots */
	struct vhca_ring rq;		/* receive WQE slots (none with SRQ) */
	struct vhca_recs recs;
	struct vhca_ucontext *uctx;	/* NULL for a kernel QP */
	u32 sq_head;			/* kernel QP: producer indices */
	u32 rq_head;
	u32 sq_tail;			/* the device's consumer indices */
	u32 rq_tail;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_inline;
	bool sig_all;			/* IB_SIGNAL_ALL_WR */
	struct ib_xrcd *xrcd;		/* XRC_TGT: its domain */
	struct ib_qp_attr attr;		/* as set by modify_qp */
	struct dst_cache route;		/* connected: attr's path, routed */

	/* The engine. */
	struct vhca_handle *handle;	/* in qp_xa */
	bool dying;			/* destroy: no more work or timers */
	struct work_struct tx_work;	/* requester, or UD sender */
	struct work_struct wire_work;	/* requester, on req.tx_cpu */
	struct vhca_qp_req req;
	struct vhca_qp_comp comp;
	struct vhca_qp_db db;
	struct vhca_qp_resp resp;
};

/* Queue sizes of a QP, from its requested caps. */
struct vhca_qp_geometry {
	u32 sq_count, sq_stride, max_send_sge, max_inline;
	u32 rq_count, rq_stride, max_recv_sge;
};

int vhca_qp_check_modify(enum ib_qp_type type, enum ib_qp_state cur,
			 enum ib_qp_state next,
			 const struct ib_qp_attr *attr, int mask);
int vhca_qp_size_caps(struct ib_qp_cap *cap, bool has_srq,
		      struct vhca_qp_geometry *geo);

/* vhca_qp.c: state changes; the flushes under the queue's lock */
void vhca_qp_set_state(struct vhca_qp *qp, enum ib_qp_state state);
bool vhca_qp_to_error(struct vhca_qp *qp);
void vhca_qp_flush_sq(struct vhca_qp *qp);
void vhca_qp_flush_rq(struct vhca_qp *qp);

/* vhca_ud.c: the engine of UD and GSI QPs */
struct vhca_pkt;
void vhca_ud_work(struct work_struct *work);
void vhca_ud_send(struct vhca_qp *qp);
void vhca_ud_rx(struct vhca_qp *qp, const struct vhca_pkt *pkt,
		struct sk_buff *skb, u32 off);

static inline struct vhca_qp *to_vqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct vhca_qp, ibqp);
}

static inline bool vhca_qp_type_xrc(enum ib_qp_type type)
{
	return type == IB_QPT_XRC_INI || type == IB_QPT_XRC_TGT;
}

/*
 * RC, UC or XRC: a connected QP, whose sends the requester (vhca_req.c)
 * runs.  XRC QPs are RC QPs with another transport on the wire
 * (VHCA_OPCODE_XRC).
 */
static inline bool vhca_qp_connected(const struct vhca_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC || qp->ibqp.qp_type == IB_QPT_UC ||
	       vhca_qp_type_xrc(qp->ibqp.qp_type);
}

/* The transport bits of the QP's opcodes: 0 (RC) but for UC and XRC. */
static inline u8 vhca_qp_transport(const struct vhca_qp *qp)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_UC:
		return IB_OPCODE_UC;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		return VHCA_OPCODE_XRC;
	default:
		return IB_OPCODE_RC;
	}
}

/* RTR, RTS or SQD: a state in which the QP takes what it receives. */
static inline bool vhca_qp_receives(const struct vhca_qp *qp)
{
	return qp->state == IB_QPS_RTR || qp->state == IB_QPS_RTS ||
	       qp->state == IB_QPS_SQD;
}

int vhca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata);
int vhca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata);
int vhca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init);
int vhca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int vhca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr);
int vhca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr);

#endif /* VHCA_QP_H */
