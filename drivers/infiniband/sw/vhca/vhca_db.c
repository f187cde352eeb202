// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The send doorbell: while requests are in flight the engine watches the
 * head the provider writes, and for poll_budget us after they all
 * completed; then it sets VHCA_STATUS_NEEDS_WAKEUP and the provider's next
 * post_send enters the kernel (the io_uring SQPOLL handshake).  The
 * window's end, which runs a pass (vhca_db_expire(), db_timer), is in
 * vhca_send.c.
 */
#include <linux/hrtimer.h>
#include <linux/moduleparam.h>

#include "vhca_engine.h"

static unsigned int poll_budget = VHCA_POLL_BUDGET_US;
module_param(poll_budget, uint, 0644);
MODULE_PARM_DESC(poll_budget,
		 "Microseconds the engine keeps watching an idle send doorbell before it asks for a system call (0: every post_send makes one; default 20)");

/* Set or clear VHCA_STATUS_NEEDS_WAKEUP; under sq_lock. */
void vhca_db_wakeup_flag(struct vhca_qp *qp, bool set)
{
	u32 flags = READ_ONCE(qp->recs.st->flags);

	if (set)
		flags |= VHCA_STATUS_NEEDS_WAKEUP;
	else
		flags &= ~VHCA_STATUS_NEEDS_WAKEUP;
	WRITE_ONCE(qp->recs.st->flags, flags);
}

/*
 * The doorbell after a pass or an acknowledgment left nothing to send;
 * under sq_lock.  While requests are in flight an ACK or the retransmit
 * timer brings the next pass, so the doorbell is watched without a flag;
 * once they all completed, for poll_budget us more (db_timer: a WQE posted
 * in the window leaves when it ends, with the ones posted after it, so a
 * streaming producer is served in batches without system calls); then the
 * engine sets NEEDS_WAKEUP and reads the head once more: the provider
 * stores its head before it reads the flag, the engine stores the flag
 * before it reads the head, each with a full barrier between, so one of
 * them sees the other's store and no WQE waits for nothing.  Returns true
 * when WQEs came in the meantime: the caller runs a pass.
 */
bool vhca_db_idle(struct vhca_qp *qp)
{
	unsigned int budget = READ_ONCE(poll_budget);
	u32 head;

	if (budget && vhca_req_busy(qp)) {
		qp->db.state = VHCA_DB_AWAKE;
		vhca_db_wakeup_flag(qp, false);
		return false;
	}
	if (budget && qp->db.state == VHCA_DB_AWAKE) {
		if (!qp->db.answer) {
			qp->db.state = VHCA_DB_GRACE;
			hrtimer_start(&qp->db.timer,
				      ns_to_ktime((u64)budget * NSEC_PER_USEC),
				      HRTIMER_MODE_REL_SOFT);
			vhca_db_wakeup_flag(qp, false);
			return false;
		}
		/* An answer is likely: this window is skipped. */
		qp->db.answer = false;
	}
	if (qp->db.state == VHCA_DB_GRACE)
		return false;	/* db_timer ends the window */
	qp->db.state = VHCA_DB_AWAKE;
	vhca_db_wakeup_flag(qp, true);
	/* Orders the flag store before the head load; see above. */
	smp_mb();
	head = READ_ONCE(qp->recs.db->head[0]);
	if (head == qp->db.seen ||
	    vhca_ring_used(&qp->sq, head, qp->sq_tail) == U32_MAX)
		return false;
	if (budget)
		vhca_db_wakeup_flag(qp, false);
	return true;
}
