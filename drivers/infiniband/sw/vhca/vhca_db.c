// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The send doorbell: while requests are in flight the engine watches the
 * head the provider writes, and for poll_budget us after they all
 * completed; then it sets VHCA_STATUS_NEEDS_WAKEUP and the provider's next
 * post_send enters the kernel (the io_uring SQPOLL handshake).
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

/*
 * End the poll window of an idle doorbell: a last look, then sleep.  With
 * answer, the responder took a message: the process is likely to answer
 * it with a post_send of its own (a ping-pong), which then kicks at once
 * instead of waiting for db_timer; and the next window is skipped, whether
 * this message ended one or came with none open (requests in flight, or
 * the doorbell asleep): in a ping-pong each message comes after the ACK
 * that would open this side's window, and that window would only arm
 * db_timer, whose interrupt and softirq land on the CPU of a process
 * polling for the answer.  A stream that only sends gets no
 * messages and keeps its windows: its posts need no system call.
 */
void vhca_db_expire(struct vhca_qp *qp, bool answer)
{
	unsigned long flags;
	bool run;

	spin_lock_irqsave(&qp->sq_lock, flags);
	run = qp->db.state == VHCA_DB_GRACE;
	if (run)
		qp->db.state = VHCA_DB_EXPIRED;
	if (answer) {
		qp->db.answer = true;
		/*
		 * Under sq_lock, so no window opened since can lose its
		 * timer; a callback already running finds EXPIRED and
		 * leaves.
		 */
		if (run)
			hrtimer_try_to_cancel(&qp->db.timer);
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (run)
		vhca_req_run(qp);
}

enum hrtimer_restart vhca_db_timer(struct hrtimer *t)
{
	vhca_db_expire(container_of(t, struct vhca_qp, db.timer), false);
	return HRTIMER_NORESTART;
}
