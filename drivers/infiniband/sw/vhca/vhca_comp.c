// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC completer (softirq, on ACKs, NAKs and READ responses): completes
 * send WQEs in order, places READ data, rewinds on a sequence NAK
 * (go-back-N), waits out RNR NAKs, and completes in error when the peer
 * refuses or the retries run out.
 */
#include <linux/skbuff.h>

#include "vhca_engine.h"

/*
 * Complete the WQE at sq_tail; under sq_lock.  The slot is released before
 * the CQE appears: a process that polled the CQE may post into it at once.
 */
void vhca_comp_wqe(struct vhca_qp *qp, u8 status)
{
	struct vhca_swqe *w = vhca_qp_swqe(qp, qp->sq_tail);
	bool unsent = qp->req.next == qp->sq_tail;
	struct vhca_cqe cqe = {
		.wr_id = w->hdr.wr_id,
		.status = status,
		.opcode = vhca_wc_opcode(w->hdr.opcode),
		.byte_len = w->len,
		.qp_num = qp->ibqp.qp_num,
	};
	bool signaled = status != IB_WC_SUCCESS ||
			(w->hdr.flags & VHCA_WQE_SIGNALED);

	w->fetched = false;
	qp->sq_tail++;
	if (unsent) {
		qp->req.next = qp->sq_tail;
		qp->req.pkt = 0;
	}
	/* The provider may reuse the slot once it sees the tail. */
	smp_store_release(&qp->recs.st->tail[0], qp->sq_tail);
	if (signaled)
		vhca_cq_post(to_vcq(qp->ibqp.send_cq), &cqe, false);
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
	    vhca_qp_swqe(qp, qp->sq_tail)->fetched) {
		vhca_comp_wqe(qp, status);
		done = true;
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	vhca_qp_to_error(qp);
	if (!done && qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/* The RNR delay a peer asked for, roughly as the IB table has it. */
static unsigned long vhca_rnr_delay(u8 timer)
{
	return msecs_to_jiffies(timer ? max(1U, 1U << (timer / 4)) : VHCA_RNR_DELAY_MAX_MS);
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

/* An ACK, NAK or READ response for the requester of qp; in softirq. */
void vhca_comp_rx(struct vhca_qp *qp, const struct vhca_pkt *pkt,
		  struct sk_buff *skb, u32 off)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	u8 type = pkt->aeth_syndrome & VHCA_AETH_TYPE_MASK;
	bool acked = false, kick = false;
	u8 fatal = IB_WC_SUCCESS;
	struct vhca_swqe *w;
	unsigned long flags;
	u32 mtu, psn = pkt->psn;
	int err;

	spin_lock_irqsave(&qp->sq_lock, flags);
	if (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD)
		goto out;
	mtu = vhca_qp_mtu(qp);

	/* READ response data for the oldest outstanding READ. */
	if (pkt->opcode != VHCA_OP_RC_ACKNOWLEDGE) {
		while (qp->sq_tail != qp->req.next) {
			w = vhca_qp_swqe(qp, qp->sq_tail);
			if (w->hdr.opcode == VHCA_WR_RDMA_READ)
				break;
			/* A READ response acknowledges what precedes it. */
			if (!vhca_psn_before(w->last_psn, psn))
				goto out;
			vhca_comp_wqe(qp, IB_WC_SUCCESS);
			acked = true;
		}
		if (qp->sq_tail == qp->req.next)
			goto out;
		w = vhca_qp_swqe(qp, qp->sq_tail);
		/* Outside the READ: none of its responses came yet. */
		if (vhca_psn_before(qp->comp.psn, w->first_psn) ||
		    vhca_psn_after(qp->comp.psn, w->last_psn))
			qp->comp.psn = w->first_psn;
		if (vhca_psn_after(psn, w->last_psn))
			goto done;
		/*
		 * A response after comp_psn: the one at comp_psn was lost.
		 * The READ is asked again at once, as rxe's completer does,
		 * not after a retransmit timeout; once, as the rest of the
		 * lost one's burst comes out of order too.  Earlier ones are
		 * duplicates.
		 */
		if (vhca_psn_after(psn, qp->comp.psn) && !qp->comp.read_retried) {
			qp->comp.read_retried = true;
			vhca_req_rewind(qp, qp->comp.psn);
			kick = true;
		}
		if (psn != qp->comp.psn)
			goto done;
		err = vhca_sge_copy_skb(vdev, qp->ibqp.pd, w->sge,
					w->hdr.num_sge,
					(u64)vhca_psn_diff(psn, w->first_psn) * mtu,
					skb, off, pkt->paylen, VHCA_COPY_TO_MR,
					IB_ACCESS_LOCAL_WRITE);
		if (err) {
			fatal = err == -EINVAL ? IB_WC_LOC_LEN_ERR :
						 IB_WC_LOC_PROT_ERR;
			goto out;
		}
		qp->comp.psn = vhca_psn_add(psn, 1);
		qp->comp.acked_psn = qp->comp.psn;
		qp->comp.read_retried = false;
		if (psn == w->last_psn) {
			vhca_comp_wqe(qp, IB_WC_SUCCESS);
			if (qp->sq_tail != qp->req.next)
				qp->comp.psn = vhca_qp_swqe(qp, qp->sq_tail)->first_psn;
			kick = true;
		}
		acked = true;
		goto done;
	}

	if (type == VHCA_AETH_ACK || type == VHCA_AETH_RNR_NAK ||
	    (type == VHCA_AETH_NAK &&
	     (pkt->aeth_syndrome & VHCA_AETH_VALUE_MASK) == VHCA_NAK_PSN_SEQ_ERR)) {
		/* Everything before psn (an ACK: through psn) is done. */
		if (vhca_psn_after(type == VHCA_AETH_ACK ? vhca_psn_add(psn, 1) :
				   psn, qp->comp.acked_psn)) {
			qp->comp.acked_psn = type == VHCA_AETH_ACK ?
					vhca_psn_add(psn, 1) : psn;
			acked = true;
		}
		while (qp->sq_tail != qp->req.next) {
			w = vhca_qp_swqe(qp, qp->sq_tail);
			if (w->hdr.opcode == VHCA_WR_RDMA_READ)
				break;	/* only its responses complete it */
			if (type == VHCA_AETH_ACK ?
			    vhca_psn_after(w->last_psn, psn) :
			    !vhca_psn_before(w->last_psn, psn))
				break;
			vhca_comp_wqe(qp, IB_WC_SUCCESS);
			acked = true;
		}
		if (type == VHCA_AETH_RNR_NAK) {
			if (!qp->req.rnr_left) {
				fatal = IB_WC_RNR_RETRY_EXC_ERR;
				goto out;
			}
			if (qp->req.rnr_left != VHCA_RNR_RETRY_INFINITE)
				qp->req.rnr_left--;
			atomic64_inc(&vdev->counters[VHCA_CNT_RNR_NAKS]);
			if (vhca_req_busy(qp))
				vhca_req_rewind(qp, psn);
			mod_timer(&qp->req.rexmit_timer, jiffies +
				  vhca_rnr_delay(pkt->aeth_syndrome &
						 VHCA_AETH_VALUE_MASK));
			goto out;
		}
		if (type == VHCA_AETH_NAK) {
			atomic64_inc(&vdev->counters[VHCA_CNT_SEQ_NAKS]);
			/*
			 * A NAK for a PSN not sent again yet since the last
			 * rewind is answered by that rewind already.
			 */
			if (vhca_req_busy(qp) &&
			    vhca_psn_before(psn, vhca_req_next_psn(qp)))
				vhca_req_rewind(qp, psn);
			kick = true;
		}
		goto done;
	}

	/* The peer refused the oldest request outright. */
	if (vhca_req_busy(qp))
		fatal = vhca_nak_status(pkt->aeth_syndrome);
	goto out;

done:
	if (acked) {
		qp->req.retry_left = qp->attr.retry_cnt;
		qp->req.rnr_left = qp->attr.rnr_retry;
		kick = true;
	}
	/*
	 * Any response restarts the timer, as rxe's does: a slow responder
	 * still answering retransmitted packets (with duplicate ACKs or READ
	 * responses) is neither counted against retry_cnt nor sent another
	 * round of them, which would only delay the progress it is making.
	 */
	if (!vhca_req_busy(qp))
		del_timer(&qp->req.rexmit_timer);
	else
		mod_timer(&qp->req.rexmit_timer, jiffies + vhca_req_timeout(qp));
	/* A pass only when there is something to send. */
	if (kick && qp->state == IB_QPS_RTS && !vhca_req_pending(qp))
		kick = vhca_db_idle(qp);
out:
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (fatal != IB_WC_SUCCESS)
		vhca_qp_fatal(qp, fatal);
	else if (kick)
		vhca_engine_kick(qp);
}
