// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The engine of vhca, the HCA model, as the QP verbs see it: its part of
 * a QP's creation, destruction and state changes, and the doorbell kick.
 * The units are listed in vhca_engine.h.
 */
#include <linux/hrtimer.h>
#include <linux/slab.h>
#include <linux/timer.h>

#include "vhca_engine.h"

/*
 * The provider's kick: a post_send system call (process context) after
 * it found NEEDS_WAKEUP set.  The requester runs in the system call, one
 * pass, so a lone request leaves without waiting for a worker thread
 * (which busy-polling processes may starve); the work item does the rest.
 */
void vhca_engine_doorbell(struct vhca_qp *qp)
{
	if (qp->ibqp.qp_type == IB_QPT_RC)
		vhca_req_run(qp);
	else
		vhca_ud_send(qp);
}

int vhca_engine_qp_init(struct vhca_qp *qp)
{
	INIT_WORK(&qp->tx_work, qp->ibqp.qp_type == IB_QPT_RC ?
		  vhca_req_work : vhca_ud_work);
	timer_setup(&qp->req.rexmit_timer, vhca_req_rexmit_timer, 0);
	hrtimer_init(&qp->db.timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	qp->db.timer.function = vhca_db_timer;
	if (qp->ibqp.qp_type != IB_QPT_RC || !qp->sq.count)
		return 0;
	qp->req.swqe = kvcalloc(qp->sq.count, sizeof(*qp->req.swqe), GFP_KERNEL);
	return qp->req.swqe ? 0 : -ENOMEM;
}

/* Stop the engine for a QP about to be freed (not findable any more). */
void vhca_engine_qp_fini(struct vhca_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	WRITE_ONCE(qp->dying, true);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	/* Receives run under RCU: none is left in the QP after this. */
	synchronize_net();
	cancel_work_sync(&qp->tx_work);
	timer_shutdown_sync(&qp->req.rexmit_timer);
	hrtimer_cancel(&qp->db.timer);
	spin_lock_irqsave(&qp->rq_lock, flags);
	vhca_rmsg_close(&qp->resp.msg);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	kvfree(qp->req.swqe);
}

/*
 * State changes as they concern the engine; under both queue locks with
 * the state already set.
 */
void vhca_engine_qp_state(struct vhca_qp *qp)
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
		break;
	case IB_QPS_RTS:
		qp->req.psn = qp->attr.sq_psn;
		if (!qp->req.swqe)
			break;
		qp->comp.psn = qp->attr.sq_psn;
		qp->comp.read_retried = false;
		qp->comp.acked_psn = qp->attr.sq_psn;
		qp->req.retry_left = qp->attr.retry_cnt;
		qp->req.rnr_left = qp->attr.rnr_retry;
		break;
	case IB_QPS_ERR:
	case IB_QPS_RESET:
		del_timer(&qp->req.rexmit_timer);
		vhca_rmsg_close(&qp->resp.msg);
		qp->req.next = qp->sq_tail;
		qp->req.pkt = 0;
		qp->db.seen = qp->sq_tail;
		for (i = 0; qp->req.swqe && i < qp->sq.count; i++)
			qp->req.swqe[i].fetched = false;
		break;
	default:
		break;
	}
}
