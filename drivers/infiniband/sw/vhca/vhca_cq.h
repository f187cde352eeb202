/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Completion queues and shared receive queues of vhca.
 */
#ifndef VHCA_CQ_H
#define VHCA_CQ_H

#include <rdma/ib_verbs.h>

#include "vhca_handle.h"
#include "vhca_ring.h"

/*
 * A CQ holds ibcq.cqe == ring.count CQEs: with free-running indices every
 * slot is usable.  The lock covers everything below it, the kernel CQ's
 * consumer side (poll) included.
 */
struct vhca_cq {
	struct ib_cq ibcq;
	spinlock_t lock;		/* head, tail, notify, error, ring */
	struct vhca_ring ring;		/* CQEs of cqe_size bytes */
	struct ib_qp **qps;		/* kernel CQ: the QP of each slot */
	struct vhca_recs recs;
	struct vhca_ucontext *uctx;	/* NULL for a kernel CQ */
	u32 head;			/* the device's producer index */
	u32 tail;			/* kernel CQ: the consumer index */
	u8 notify;			/* armed IB_CQ_SOLICITED / _NEXT_COMP */
	bool error;			/* overflowed: no more CQEs */
	/* Set at creation: struct vhca_cqe_ts slots, and their clock's offset. */
	bool timestamps;
	u32 cqe_size;
	s64 clock_offset;
};

static inline struct vhca_cq *to_vcq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct vhca_cq, ibcq);
}

/*
 * An SRQ holds ring.count WQEs (every slot usable).  The lock serializes
 * the consumer (vhca_srq_take) and, for a kernel SRQ, the producer
 * (post_srq_recv); a user SRQ's producer index is recs.db->head[0].
 */
struct vhca_srq {
	struct ib_srq ibsrq;
	spinlock_t lock;		/* head, tail, limit, ring */
	struct vhca_ring ring;		/* struct vhca_recv_wqe slots */
	struct vhca_recs recs;
	struct vhca_ucontext *uctx;	/* NULL for a kernel SRQ */
	u32 max_sge;
	u32 head;			/* kernel SRQ: the producer index */
	u32 tail;			/* the device's consumer index */
	u32 limit;			/* armed SRQ limit, 0: not armed */
	u32 xrc_srqn;			/* XRC SRQ: its number; else 0 */
	struct vhca_handle *handle;	/* XRC SRQ: in xsrq_xa */
};

/* An XRC domain: XRC SRQs and XRC_TGT QPs share it; no state of its own. */
struct vhca_xrcd {
	struct ib_xrcd ibxrcd;
};

static inline struct vhca_srq *to_vsrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct vhca_srq, ibsrq);
}

int vhca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct uverbs_attr_bundle *attrs);
#ifdef VHCA_HAVE_CREATE_CQ_ATTRS
#define vhca_create_cq_op	vhca_create_cq
#else
/* create_cq before it took the bundle: the bundle's driver_udata. */
int vhca_create_cq_op(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct ib_udata *udata);
#endif
int vhca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int vhca_resize_cq(struct ib_cq *ibcq, unsigned int cqe,
		   struct ib_udata *udata);
#ifndef VHCA_HAVE_RESIZE_USER_CQ
/* resize_cq, as the op was named before it took an unsigned count. */
int vhca_resize_cq_op(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
#endif
int vhca_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int vhca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);

/*
 * Add one completion to cq, from any context.  Raises the completion event
 * when armed for it (solicited: the WQE asked for a solicited event).
 * Returns -EOVERFLOW when the ring was full: the CQE is lost, the CQ is in
 * error and IB_EVENT_CQ_ERR has been raised.
 */
int vhca_cq_post(struct vhca_cq *cq, const struct vhca_cqe *cqe,
		 bool solicited);

int vhca_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata);
int vhca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata);
int vhca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int vhca_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int vhca_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);

/*
 * For the receive path, from any context: the XRC SRQ numbered srqn if it
 * is of xrcd, referenced, else NULL.  Its destroy_srq waits for
 * vhca_xsrq_put() (NULL: nothing), so hold it for one request or one run
 * of responses, never longer.
 */
struct vhca_dev;
struct vhca_srq *vhca_xsrq_get(struct vhca_dev *vdev, u32 srqn,
			       const struct ib_xrcd *xrcd);
void vhca_xsrq_put(struct vhca_srq *srq);
int vhca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int vhca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);

/*
 * For the engine: take the next receive WQE of srq into *wqe and sge[]
 * (room for srq->max_sge), from any context.  Returns 0, -ENOENT when the
 * SRQ is empty, or -EINVAL for a malformed WQE (consumed, to be completed
 * in error).  Raises IB_EVENT_SRQ_LIMIT_REACHED when armed and the count
 * of posted WQEs falls below the limit.
 */
int vhca_srq_take(struct vhca_srq *srq, struct vhca_recv_wqe *wqe,
		  struct vhca_sge *sge);

/* A kernel consumer's receive work request into a ring slot (RQ or SRQ). */
static inline void vhca_write_recv_wqe(struct vhca_recv_wqe *wqe,
				       const struct ib_recv_wr *wr)
{
	struct vhca_sge *sge = (struct vhca_sge *)(wqe + 1);
	int i;

	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
}

#endif /* VHCA_CQ_H */
