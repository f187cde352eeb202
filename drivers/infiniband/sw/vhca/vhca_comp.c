// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC completer (softirq, on ACKs, NAKs, READ responses and atomic
 * ACKs): completes send WQEs in order, places READ data and the values
 * atomics found, rewinds on a sequence NAK
 * (go-back-N), waits out RNR NAKs, and completes in error when the peer
 * refuses or the retries run out.
 */
#include <linux/skbuff.h>

#include "vhca_engine.h"

/*
 * The local operations (executed when fetched, vhca_req_local()) that
 * the WQE just completed held back: they complete with it.  Those an ACK
 * covers complete by their PSN; this is for the ones after a READ.
 */
static void vhca_comp_local_ops(struct vhca_qp *qp)
{
	u8 op;

	while (qp->sq_tail != qp->req.next) {
		op = vhca_qp_swqe(qp, qp->sq_tail)->hdr.opcode;
		if (op != VHCA_WR_REG_MR && op != VHCA_WR_LOCAL_INV &&
		    op != VHCA_WR_BIND_MW)
			break;
		vhca_comp_wqe(qp, IB_WC_SUCCESS);
	}
}

/*
 * The delay an RNR NAK's timer field asks for, in microseconds: the IBTA's
 * table (10 us for 1, then 20, 30, 40, 60, 80 ... doubling every second
 * code up to 491.52 ms for 31; 655.36 ms for 0).
 */
static u32 vhca_rnr_delay_us(u8 timer)
{
	if (!timer)
		return 655360;
	if (timer == 1)
		return 10;
	return (timer & 1 ? 30 : 20) << ((timer - 2) / 2);
}

static u8 vhca_nak_status(u8 syndrome)
{
	switch (syndrome & VHCA_AETH_VALUE_MASK) {
	case VHCA_NAK_REM_ACCESS_ERR:
		return IB_WC_REM_ACCESS_ERR;
	case VHCA_NAK_REM_OP_ERR:
		return IB_WC_REM_OP_ERR;
	default:
		return IB_WC_REM_INV_REQ_ERR;
	}
}

/*
 * A response's payload: a packet's (skb at off), or a local responder's
 * run of npkts READ responses (src: direct placement, no skb), whose fate
 * goes back in run (enum vhca_rd_run).
 */
struct vhca_comp_in {
	struct sk_buff *skb;
	u32 off;
	struct vhca_src *src;
	u32 npkts;
	int run;
};

/*
 * What handling one response leaves to do: the outcome of each step.
 * A step that returns false ends the response without restarting the
 * timer (the QP fails, or nothing it held was outstanding).
 */
struct vhca_comp_result {
	bool acked;			/* WQEs completed or the window moved */
	bool kick;			/* the requester has work */
	u8 fatal;			/* IB_WC_SUCCESS, or the QP fails */
};

/*
 * A READ response or an atomic ACK acknowledges the requests before its
 * READ or atomic: complete the WQEs before the oldest outstanding one
 * (check_ack).  False when the response is for nothing outstanding.
 */
static bool vhca_comp_ack_before_read(struct vhca_qp *qp, u32 psn,
				      struct vhca_comp_result *res)
{
	struct vhca_swqe *wqe;

	while (qp->sq_tail != qp->req.next) {
		wqe = vhca_qp_swqe(qp, qp->sq_tail);
		if (vhca_wr_rd_atomic(wqe->hdr.opcode))
			break;
		if (!vhca_psn_before(wqe->last_psn, psn))
			return false;
		vhca_comp_wqe(qp, IB_WC_SUCCESS);
		res->acked = true;
	}
	return qp->sq_tail != qp->req.next;
}

/*
 * check_psn of a READ response: true when it is the one expected next.
 * A response after comp.psn means the one at comp.psn was lost: the READ
 * is asked again at once, as rxe's completer does, not after a
 * retransmit timeout; once, as the rest of the lost one's burst comes
 * out of order too.  Earlier ones are duplicates.
 */
static bool vhca_comp_check_read_psn(struct vhca_qp *qp,
				     const struct vhca_swqe *wqe, u32 psn,
				     struct vhca_comp_result *res)
{
	/* Outside the READ: none of its responses came yet. */
	if (vhca_psn_before(qp->comp.psn, wqe->first_psn) ||
	    vhca_psn_after(qp->comp.psn, wqe->last_psn))
		qp->comp.psn = wqe->first_psn;
	if (vhca_psn_after(psn, wqe->last_psn))
		return false;
	if (vhca_psn_after(psn, qp->comp.psn) && !qp->comp.read_retried) {
		qp->comp.read_retried = true;
		vhca_req_rewind(qp, qp->comp.psn);
		res->kick = true;
	}
	return psn == qp->comp.psn;
}

/*
 * The oldest WQE, a READ or an atomic, has all its responses: it
 * completes, with the local operations it held back; the completer waits
 * for the next WQE's responses from its first PSN.
 */
static void vhca_comp_rd_atomic_done(struct vhca_qp *qp,
				     struct vhca_comp_result *res)
{
	vhca_comp_wqe(qp, IB_WC_SUCCESS);
	vhca_comp_local_ops(qp);
	if (qp->sq_tail != qp->req.next)
		qp->comp.psn = vhca_qp_swqe(qp, qp->sq_tail)->first_psn;
	res->kick = true;
}

/* The one response (of PSN psn) of the oldest WQE, an atomic, came. */
static bool vhca_comp_one_response(struct vhca_qp *qp, u32 psn,
				   struct vhca_comp_result *res)
{
	qp->comp.psn = vhca_psn_add(psn, 1);
	qp->comp.acked_psn = qp->comp.psn;
	vhca_comp_rd_atomic_done(qp, res);
	res->acked = true;
	return true;
}

/*
 * The response of the oldest outstanding WQE, an ATOMIC WRITE or a FLUSH:
 * a READ response ONLY without payload, an ACK (the store or the flush is
 * done).  Another PSN (a duplicate answer) or a payload is dropped.  False
 * when the response ends without the timer's restart.
 */
static bool vhca_comp_no_value_ack(struct vhca_qp *qp,
				   const struct vhca_swqe *wqe,
				   const struct vhca_pkt *pkt,
				   struct vhca_comp_result *res)
{
	if (pkt->opcode != IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY ||
	    pkt->paylen || pkt->psn != wqe->first_psn ||
	    (pkt->aeth_syndrome & VHCA_AETH_TYPE_MASK) != VHCA_AETH_ACK)
		return false;
	return vhca_comp_one_response(qp, pkt->psn, res);
}

/*
 * Whether READ responses index to index + npkts - 1 of the READ wqe (one
 * packet, or a local responder's run of them), of opcode, carrying
 * paylen bytes, fit it: every response carries its PSN's share of the
 * READ (a full path MTU but the last), the READ's last ends its responses
 * (LAST or ONLY) and no other does, and only its first or the first of a
 * READ asked again from there (vhca_comp_check_read_psn()) begins them
 * (FIRST or ONLY; begun is false for a run's rest, trimmed of responses
 * that came already).  Anything else would complete the READ with bytes
 * never written.
 */
static bool vhca_comp_read_shape_ok(const struct vhca_swqe *wqe, u8 opcode,
				    bool begun, u32 index, u32 npkts, u32 mtu,
				    u32 paylen)
{
	u32 last = vhca_pkt_npkts(wqe->len, mtu) - 1;
	bool first = begun && (opcode == IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST ||
			       opcode == IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY);
	bool end = opcode == IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST ||
		   opcode == IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY;
	u64 bytes;

	if (!npkts || index > last || npkts - 1 > last - index ||
	    end != (index + npkts - 1 == last) || (!index && !first))
		return false;
	bytes = min_t(u64, wqe->len - (u64)index * mtu, (u64)npkts * mtu);
	return paylen == bytes;
}

/*
 * A local responder's run of READ responses from PSN *psn, npkts of them
 * in *npkts: the part that did not come already (responses before
 * comp.psn, from a reply asked again from before them), its payload from
 * *skip bytes on.  False when all of it came: a duplicate.
 */
static bool vhca_comp_run_rest(struct vhca_qp *qp, const struct vhca_swqe *wqe,
			       u32 *psn, u32 *npkts, u32 *skip)
{
	u32 mtu = vhca_qp_mtu(qp), came;

	*skip = 0;
	if (vhca_psn_before(qp->comp.psn, wqe->first_psn) ||
	    vhca_psn_after(qp->comp.psn, wqe->last_psn) ||
	    !vhca_psn_before(*psn, qp->comp.psn))
		return true;
	came = vhca_psn_diff(qp->comp.psn, *psn);
	if (came >= *npkts)
		return false;
	*psn = qp->comp.psn;
	*npkts -= came;
	*skip = came * mtu;
	return true;
}

/*
 * do_read: READ responses for the oldest outstanding READ (a packet, or a
 * local responder's run), their payload placed into the local SGEs at
 * their offset, in order (or the answer of an ATOMIC WRITE or a FLUSH).
 * False when the response ends without the timer's restart.
 */
static bool vhca_comp_read_response(struct vhca_qp *qp,
				    const struct vhca_pkt *pkt,
				    struct vhca_comp_in *in,
				    struct vhca_comp_result *res)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	u32 mtu = vhca_qp_mtu(qp), psn = pkt->psn, npkts = in->npkts;
	u32 skip = 0, index;
	struct vhca_swqe *wqe;
	int err;

	if (!vhca_comp_ack_before_read(qp, psn, res))
		return false;
	wqe = vhca_qp_swqe(qp, qp->sq_tail);
	if (wqe->hdr.opcode == VHCA_WR_ATOMIC_WRITE ||
	    wqe->hdr.opcode == VHCA_WR_FLUSH)
		return !in->src && vhca_comp_no_value_ack(qp, wqe, pkt, res);
	if (wqe->hdr.opcode != VHCA_WR_RDMA_READ)
		return false;	/* not what the oldest asked for */
	if (in->src && !vhca_comp_run_rest(qp, wqe, &psn, &npkts, &skip)) {
		in->run = VHCA_RD_RUN_DUP;
		return true;
	}
	if (!vhca_comp_check_read_psn(qp, wqe, psn, res))
		return true;
	index = vhca_psn_diff(psn, wqe->first_psn);
	if (!vhca_comp_read_shape_ok(wqe, pkt->opcode, !skip, index, npkts,
				     mtu, pkt->paylen - skip)) {
		/* Malformed: dropped, as if lost; the READ stays pending. */
		atomic64_inc(&vdev->counters[VHCA_CNT_RX_MALFORMED]);
		return false;
	}
	if (in->src)
		err = vhca_sge_copy_src(vdev, qp->ibqp.pd, wqe->sge,
					wqe->hdr.num_sge, (u64)index * mtu,
					in->src, skip, pkt->paylen - skip,
					IB_ACCESS_LOCAL_WRITE);
	else
		err = vhca_sge_copy_skb(vdev, qp->ibqp.pd, wqe->sge,
					wqe->hdr.num_sge, (u64)index * mtu,
					in->skb, in->off, pkt->paylen,
					VHCA_COPY_TO_MR, IB_ACCESS_LOCAL_WRITE);
	if (err && in->src && in->src->failed) {
		/* The responder's memory: its to answer, nothing completes. */
		in->run = in->src->err == -EAGAIN ? VHCA_RD_RUN_SRC_AGAIN :
						    VHCA_RD_RUN_SRC_ERR;
		return false;
	}
	if (err == -EAGAIN) {
		/* Not resident: asked again from here after the fault. */
		vhca_req_go_back(qp, psn);
		vhca_req_odp_wait(qp);
		return false;
	}
	if (err) {
		res->fatal = err == -EINVAL ? IB_WC_LOC_LEN_ERR :
					      IB_WC_LOC_PROT_ERR;
		return false;
	}
	qp->comp.psn = vhca_psn_add(psn, npkts);
	qp->comp.acked_psn = qp->comp.psn;
	qp->comp.read_retried = false;
	in->run = VHCA_RD_RUN_PLACED;
	if (vhca_psn_add(psn, npkts - 1) == wqe->last_psn)
		vhca_comp_rd_atomic_done(qp, res);
	res->acked = true;
	return true;
}

/*
 * The atomic ACK of the oldest outstanding WQE, an atomic: the value the
 * responder found lands in its SGEs (in host order, as for every HCA).
 * Another PSN (a duplicate answer) is dropped.  False when the ACK ends
 * without the timer's restart.
 */
static bool vhca_comp_atomic_ack(struct vhca_qp *qp, const struct vhca_pkt *pkt,
				 struct vhca_comp_result *res)
{
	u64 orig = pkt->atm_orig;
	struct vhca_swqe *wqe;
	int err;

	if ((pkt->aeth_syndrome & VHCA_AETH_TYPE_MASK) != VHCA_AETH_ACK ||
	    !vhca_comp_ack_before_read(qp, pkt->psn, res))
		return false;
	wqe = vhca_qp_swqe(qp, qp->sq_tail);
	if (!vhca_wr_atomic(wqe->hdr.opcode) || pkt->psn != wqe->first_psn)
		return false;
	err = vhca_sge_copy(to_vdev(qp->ibqp.device), qp->ibqp.pd, wqe->sge,
			    wqe->hdr.num_sge, 0, &orig, sizeof(orig),
			    VHCA_COPY_TO_MR, IB_ACCESS_LOCAL_WRITE);
	if (err == -EAGAIN) {
		/* Asked again: the responder answers from the value kept. */
		vhca_req_go_back(qp, pkt->psn);
		vhca_req_odp_wait(qp);
		return false;
	}
	if (err) {
		res->fatal = err == -EINVAL ? IB_WC_LOC_LEN_ERR :
					      IB_WC_LOC_PROT_ERR;
		return false;
	}
	return vhca_comp_one_response(qp, pkt->psn, res);
}

/*
 * complete_ack: an ACK acknowledges everything through its PSN, an RNR
 * NAK or a sequence NAK everything before it; the WQEs it covers
 * complete, up to the first READ (only its responses complete it).
 */
static void vhca_comp_complete_ack(struct vhca_qp *qp, u8 type, u32 psn,
				   struct vhca_comp_result *res)
{
	u32 acked = type == VHCA_AETH_ACK ? vhca_psn_add(psn, 1) : psn;
	struct vhca_swqe *wqe;

	if (vhca_psn_after(acked, qp->comp.acked_psn)) {
		qp->comp.acked_psn = acked;
		res->acked = true;
	}
	while (qp->sq_tail != qp->req.next) {
		wqe = vhca_qp_swqe(qp, qp->sq_tail);
		if (vhca_wr_rd_atomic(wqe->hdr.opcode))
			break;
		if (type == VHCA_AETH_ACK ?
		    vhca_psn_after(wqe->last_psn, psn) :
		    !vhca_psn_before(wqe->last_psn, psn))
			break;
		vhca_comp_wqe(qp, IB_WC_SUCCESS);
		res->acked = true;
	}
}

/*
 * An RNR NAK: wait its delay (on rnr_timer, to the microsecond: a tick of
 * a timer_list would stretch the common 0.64 ms to several) and send again
 * from its PSN, rnr_retry times (VHCA_RNR_RETRY_INFINITE: for ever).  The
 * retransmit timer waits meanwhile (vhca_req_rexmit_timer()).
 */
static void vhca_comp_rnr_nak(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			      struct vhca_comp_result *res)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	u64 delay;

	if (!qp->req.rnr_left) {
		res->fatal = IB_WC_RNR_RETRY_EXC_ERR;
		return;
	}
	if (qp->req.rnr_left != VHCA_RNR_RETRY_INFINITE)
		qp->req.rnr_left--;
	atomic64_inc(&vdev->counters[VHCA_CNT_RNR_NAKS]);
	vhca_req_rewind(qp, pkt->psn);
	qp->req.rnr_wait = true;
	timer_delete(&qp->req.rexmit_timer);
	delay = vhca_rnr_delay_us(pkt->aeth_syndrome & VHCA_AETH_VALUE_MASK);
	hrtimer_start(&qp->req.rnr_timer, ns_to_ktime(delay * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_SOFT);
}

/*
 * A PSN sequence NAK: go back to its PSN, unless that PSN was not sent
 * again yet since the last rewind, which answers it already.
 */
static void vhca_comp_seq_nak(struct vhca_qp *qp, u32 psn,
			      struct vhca_comp_result *res)
{
	atomic64_inc(&to_vdev(qp->ibqp.device)->counters[VHCA_CNT_SEQ_NAKS]);
	if (vhca_req_busy(qp) && vhca_psn_before(psn, vhca_req_next_psn(qp)))
		vhca_req_rewind(qp, psn);
	res->kick = true;
}

/*
 * An ACK or NAK.  False when it ends without the timer's restart: an RNR
 * NAK (its delay is on the timer) or a NAK that fails the QP.
 */
static bool vhca_comp_aeth(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			   struct vhca_comp_result *res)
{
	u8 type = pkt->aeth_syndrome & VHCA_AETH_TYPE_MASK;
	bool seq_nak = type == VHCA_AETH_NAK &&
		       (pkt->aeth_syndrome & VHCA_AETH_VALUE_MASK) ==
		       VHCA_NAK_PSN_SEQ_ERR;

	/* A NAK is for a request not yet acknowledged, or stale. */
	if (type != VHCA_AETH_ACK &&
	    vhca_psn_before(pkt->psn, qp->comp.acked_psn))
		return false;
	if (type != VHCA_AETH_ACK && type != VHCA_AETH_RNR_NAK && !seq_nak) {
		/* The peer refused the oldest request outright. */
		if (vhca_req_busy(qp))
			res->fatal = vhca_nak_status(pkt->aeth_syndrome);
		return false;
	}
	vhca_comp_complete_ack(qp, type, pkt->psn, res);
	if (type == VHCA_AETH_RNR_NAK) {
		vhca_comp_rnr_nak(qp, pkt, res);
		return false;
	}
	if (seq_nak)
		vhca_comp_seq_nak(qp, pkt->psn, res);
	return true;
}

/*
 * After a response that made the requester's state move: retries start
 * again, the timer restarts, and a pass runs when there is something to
 * send.
 */
static void vhca_comp_progress(struct vhca_qp *qp,
			       struct vhca_comp_result *res)
{
	if (res->acked) {
		qp->req.retry_left = qp->attr.retry_cnt;
		qp->req.rnr_left = qp->attr.rnr_retry;
		res->kick = true;
	}
	/*
	 * Any response restarts the timer, as rxe's does: a slow responder
	 * still answering retransmitted packets (with duplicate ACKs or READ
	 * responses) is neither counted against retry_cnt nor sent another
	 * round of them, which would only delay the progress it is making.
	 */
	if (!vhca_req_busy(qp))
		timer_delete(&qp->req.rexmit_timer);
	else
		mod_timer(&qp->req.rexmit_timer,
			  jiffies + vhca_req_timeout(qp));
	if (res->kick && qp->state == IB_QPS_RTS && !vhca_req_pending(qp))
		res->kick = vhca_db_idle(qp);
}

/*
 * A response for the requester (a packet, or a local responder's run of
 * READ responses).  Softirq.  Takes sq_lock; transmits nothing (a pass it
 * asks for runs in the QP's work item).
 */
static void vhca_comp_handle(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			     struct vhca_comp_in *in)
{
	struct vhca_comp_result res = { .fatal = IB_WC_SUCCESS };
	unsigned long flags;
	bool progress;

	spin_lock_irqsave(&qp->sq_lock, flags);
	/*
	 * A response is for a request sent and not yet completed: with
	 * nothing outstanding (a QP without a send queue included), or for
	 * a PSN never sent, it is unsolicited and dropped.
	 */
	if ((qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD) ||
	    !vhca_req_busy(qp) || !vhca_psn_before(pkt->psn, qp->req.psn)) {
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		return;
	}
	if (pkt->opcode == IB_OPCODE_RC_ACKNOWLEDGE)
		progress = vhca_comp_aeth(qp, pkt, &res);
	else if (pkt->opcode == IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE)
		progress = vhca_comp_atomic_ack(qp, pkt, &res);
	else
		progress = vhca_comp_read_response(qp, pkt, in, &res);
	/*
	 * The answer to a lone READ or atomic is, to the doorbell, what a
	 * message received is to the responder's (vhca_db_expire()): the
	 * process is likely to post again on its completion (ib_read_lat),
	 * so the next window is skipped and that post kicks at once instead
	 * of waiting for db_timer.  A stream, with more in flight, keeps
	 * its windows (its posts need no system call).  The answer has
	 * completed its WQE by now: nothing is left in flight, nor posted.
	 */
	if (progress && !vhca_req_busy(qp) && !vhca_req_pending(qp) &&
	    (pkt->opcode == IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE ||
	     pkt->opcode == IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST ||
	     pkt->opcode == IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY))
		qp->db.answer = true;
	if (progress)
		vhca_comp_progress(qp, &res);
	else if (res.fatal == IB_WC_SUCCESS)
		res.kick = false;
	/*
	 * A pass under way (the response came back inside its transmit, or
	 * on another CPU) runs again when it ends, instead of a worker
	 * woken only to find the work item running.
	 */
	if (res.kick && qp->req.running) {
		qp->req.again = true;
		res.kick = false;
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (res.fatal != IB_WC_SUCCESS)
		vhca_qp_fatal(qp, res.fatal);
	else if (res.kick)
		vhca_engine_kick(qp);
}

/**
 * vhca_comp_rx() - an ACK, NAK, READ response or atomic ACK for the requester
 * @qp: the RC QP it is for
 * @pkt: the parsed packet
 * @skb: the packet, for a READ response's payload
 * @off: where the payload starts in @skb
 *
 * Softirq.  Takes sq_lock; transmits nothing (a pass it asks for runs in
 * the QP's work item).
 */
void vhca_comp_rx(struct vhca_qp *qp, const struct vhca_pkt *pkt,
		  struct sk_buff *skb, u32 off)
{
	struct vhca_comp_in in = { .skb = skb, .off = off, .npkts = 1 };

	vhca_comp_handle(qp, pkt, &in);
}

int vhca_comp_local_read(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			 u32 npkts, struct vhca_src *src)
{
	struct vhca_comp_in in = {
		.src = src, .npkts = npkts, .run = VHCA_RD_RUN_DROPPED,
	};

	vhca_comp_handle(qp, pkt, &in);
	return in.run;
}
