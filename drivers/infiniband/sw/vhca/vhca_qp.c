// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The state of a queue pair as the device changes it: state changes with
 * their side effects on the rings and the engine, the flush of both
 * queues in the error state, the QP's failure as the engine's roles find
 * it, and the drop of the requests its responder held.  Any context; the
 * verbs are in vhca_qp_verbs.c.
 */
#include "vhca_engine.h"

static void vhca_flush_cqe(struct vhca_qp *qp, struct ib_cq *ibcq, u64 wr_id,
			   enum ib_wc_opcode opcode)
{
	struct vhca_cqe cqe = {
		.wr_id = wr_id,
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = opcode,
		.qp_num = qp->ibqp.qp_num,
	};

	vhca_cq_post(to_vcq(ibcq), &cqe, false);
}

/*
 * Complete every posted WQE of the send (send) or the receive queue with a
 * flush error.  The head comes from the doorbell record: for a user QP it
 * is untrusted, and a head that is not within the ring's count of the tail
 * is taken as "nothing posted".  A send WQE the requester fetched already
 * is flushed from its copy, never read from the ring again.
 */
static void vhca_qp_flush(struct vhca_qp *qp, bool send)
{
	struct vhca_ring *ring = send ? &qp->sq : &qp->rq;
	u32 *tail = send ? &qp->sq_tail : &qp->rq_tail;
	unsigned int queue = send ? 0 : 1;
	const struct vhca_send_wqe *wqe;
	enum ib_wc_opcode opcode;
	struct vhca_swqe *swqe;
	u32 head, pending;
	u64 wr_id;

	if (!ring->count)
		return;
	head = READ_ONCE(qp->recs.db->head[queue]);
	pending = vhca_ring_used(ring, head, *tail);
	if (pending == U32_MAX)
		pending = 0;
	/* The WQEs are read only after the head that published them. */
	smp_rmb();
	while (pending--) {
		swqe = send && qp->req.swqe ? vhca_qp_swqe(qp, *tail) : NULL;
		if (swqe && swqe->fetched) {
			swqe->fetched = false;
			wr_id = swqe->hdr.wr_id;
			opcode = vhca_wc_opcode(swqe->hdr.opcode);
		} else {
			/* A receive WQE starts with its wr_id too. */
			wqe = vhca_ring_slot(ring, *tail);
			wr_id = READ_ONCE(wqe->wr_id);
			opcode = send ? vhca_wc_opcode(READ_ONCE(wqe->opcode)) :
					IB_WC_RECV;
		}
		(*tail)++;
		/* The slot is free before its CQE appears. */
		smp_store_release(&qp->recs.st->tail[queue], *tail);
		vhca_flush_cqe(qp, send ? qp->ibqp.send_cq : qp->ibqp.recv_cq,
			       wr_id, opcode);
	}
}

/* Flush the send queue; under sq_lock. */
void vhca_qp_flush_sq(struct vhca_qp *qp)
{
	lockdep_assert_held(&qp->sq_lock);
	vhca_qp_flush(qp, true);
}

/*
 * The receive WQE the responder took and did not complete (of a message in
 * progress, or kept from a dropped UC message): taken before those still
 * in the RQ, it is flushed before them.  Under rq_lock.
 */
static void vhca_qp_flush_msg(struct vhca_qp *qp)
{
	struct vhca_rmsg *msg = &qp->resp.msg;
	struct vhca_srq *srq;

	if (!msg->wqe)
		return;
	msg->wqe = false;
	if (qp->ibqp.qp_type != IB_QPT_XRC_TGT) {
		vhca_flush_cqe(qp, qp->ibqp.recv_cq, msg->rwqe.wr_id,
			       IB_WC_RECV);
		return;
	}
	/* XRC_TGT: to the CQ of the XRC SRQ, unless it is gone. */
	srq = vhca_xsrq_get(to_vdev(qp->ibqp.device), msg->xrc_srqn, qp->xrcd);
	if (srq)
		vhca_flush_cqe(qp, srq->ibsrq.ext.cq, msg->rwqe.wr_id,
			       IB_WC_RECV);
	vhca_xsrq_put(srq);
}

/* Flush the receive queue; under rq_lock. */
void vhca_qp_flush_rq(struct vhca_qp *qp)
{
	lockdep_assert_held(&qp->rq_lock);
	vhca_qp_flush(qp, false);
}

/*
 * State changes as they concern the engine; under both queue locks with
 * the state already set.  Only RTR to RTS starts the requester's PSNs:
 * an RTS to RTS modify (min_rnr_timer, access flags) keeps them, or the
 * peer would take the next request for a duplicate.
 */
static void vhca_qp_engine_state(struct vhca_qp *qp, enum ib_qp_state prev)
{
	u32 i;

	/* The requester is idle: the next post_send kicks. */
	qp->db.state = VHCA_DB_AWAKE;
	qp->db.answer = false;
	vhca_db_wakeup_flag(qp, true);
	switch (qp->state) {
	case IB_QPS_RTR:
		qp->resp.psn = qp->attr.rq_psn;
		qp->resp.msn = 0;
		qp->resp.nak_sent = false;
		qp->resp.uc_drop = false;
		memset(qp->resp.rd, 0, sizeof(qp->resp.rd));
		qp->resp.rd_next = 0;
		break;
	case IB_QPS_RTS:
		if (prev != IB_QPS_RTR)
			break;
		qp->req.psn = qp->attr.sq_psn;
		if (!qp->req.swqe)
			break;
		qp->comp.psn = qp->attr.sq_psn;
		qp->comp.read_retried = false;
		qp->comp.acked_psn = qp->attr.sq_psn;
		qp->req.retry_left = qp->attr.retry_cnt;
		qp->req.rnr_left = qp->attr.rnr_retry;
		qp->req.rnr_wait = false;
		qp->req.wire = false;
		qp->req.remote = false;
		WRITE_ONCE(qp->req.tx_cpu, -1);
		break;
	case IB_QPS_ERR:
	case IB_QPS_RESET:
		timer_delete(&qp->req.rexmit_timer);
		qp->req.rnr_wait = false;
		/* ERR: its receive WQE was flushed (vhca_qp_flush_msg()). */
		memset(&qp->resp.msg, 0, sizeof(qp->resp.msg));
		memset(qp->resp.rd, 0, sizeof(qp->resp.rd));
		qp->req.next = qp->sq_tail;
		qp->req.pkt = 0;
		qp->db.seen = qp->sq_tail;
		for (i = 0; qp->req.swqe && i < qp->sq.count; i++)
			vhca_qp_swqe(qp, i)->fetched = false;
		break;
	default:
		break;
	}
}

/*
 * Change state with both queues locked, with the state's side effects;
 * with keep_reset, not from RESET (false then).
 */
static bool vhca_qp_change_state(struct vhca_qp *qp, enum ib_qp_state state,
				 bool keep_reset)
{
	enum ib_qp_state prev;
	unsigned long flags;
	u32 flag;

	spin_lock_irqsave(&qp->sq_lock, flags);
	spin_lock(&qp->rq_lock);
	prev = qp->state;
	if (keep_reset && prev == IB_QPS_RESET) {
		spin_unlock(&qp->rq_lock);
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		return false;
	}
	qp->state = state;
	flag = READ_ONCE(qp->recs.st->flags) & ~VHCA_STATUS_QP_ERROR;
	switch (state) {
	case IB_QPS_ERR:
		WRITE_ONCE(qp->recs.st->flags, flag | VHCA_STATUS_QP_ERROR);
		vhca_qp_flush_sq(qp);
		vhca_qp_flush_msg(qp);
		vhca_qp_flush_rq(qp);
		break;
	case IB_QPS_RESET:
		/* Discard whatever is posted: both queues start empty. */
		WRITE_ONCE(qp->recs.st->flags, flag);
		qp->sq_tail = READ_ONCE(qp->recs.db->head[0]);
		qp->rq_tail = READ_ONCE(qp->recs.db->head[1]);
		qp->sq_head = qp->sq_tail;
		qp->rq_head = qp->rq_tail;
		/* Published like consumed WQEs: the slots are free. */
		smp_store_release(&qp->recs.st->tail[0], qp->sq_tail);
		/* Likewise for the receive queue. */
		smp_store_release(&qp->recs.st->tail[1], qp->rq_tail);
		break;
	default:
		WRITE_ONCE(qp->recs.st->flags, flag);
		break;
	}
	vhca_qp_engine_state(qp, prev);
	spin_unlock(&qp->rq_lock);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	/* Requests held behind READ responses go with those responses. */
	if (state == IB_QPS_ERR || state == IB_QPS_RESET)
		vhca_resp_drop_held(qp);
	return true;
}

void vhca_qp_set_state(struct vhca_qp *qp, enum ib_qp_state state)
{
	vhca_qp_change_state(qp, state, false);
}

/*
 * The device moves the QP to the error state (any context), unless a
 * modify_qp reset it meanwhile: the engine found the error before the
 * reset (it holds neither qp->mutex nor the queue locks while it decides),
 * and a reset QP starts anew.  True when the QP moved.
 */
bool vhca_qp_to_error(struct vhca_qp *qp)
{
	return vhca_qp_change_state(qp, IB_QPS_ERR, true);
}

/*
 * The QP fails: the oldest send WQE completes with status (unless that is
 * IB_WC_SUCCESS, for a failure of the responder), the QP moves to the
 * error state where the rest is flushed, and a failure no WQE reports
 * raises IB_EVENT_QP_FATAL.  Called without the QP's locks.
 */
void vhca_qp_fatal(struct vhca_qp *qp, u8 status)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = IB_EVENT_QP_FATAL,
	};
	unsigned long flags;
	bool done = false;

	spin_lock_irqsave(&qp->sq_lock, flags);
	if (qp->state != IB_QPS_ERR && status != IB_WC_SUCCESS &&
	    qp->req.swqe && vhca_qp_swqe(qp, qp->sq_tail)->fetched) {
		vhca_comp_wqe(qp, status);
		done = true;
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (!vhca_qp_to_error(qp))
		return;
	if (!done && qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/*
 * Drop the requests held (the QP left the states that take requests, or
 * is being destroyed); the caller holds no QP lock.
 */
void vhca_resp_drop_held(struct vhca_qp *qp)
{
	struct sk_buff_head held;
	unsigned long flags;

	__skb_queue_head_init(&held);
	spin_lock_irqsave(&qp->rq_lock, flags);
	skb_queue_splice_init(&qp->resp.backlog, &held);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	__skb_queue_purge(&held);
}
