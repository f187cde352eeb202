// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What drives an RC or UC QP's sender: its passes (the requester's
 * vhca_req_pass() between taking and dropping sq_lock), the runs they
 * place directly in a local peer's memory, the work item that runs the
 * requester and then the responder's READ responses, and the timers
 * (retransmit, the end of an RNR NAK's delay, the end of the doorbell's
 * poll window).  The completer and the responder only schedule it (the
 * work item, or a note for the pass under way).
 */
#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/sched.h>
#include <linux/skbuff.h>
#include <linux/smp.h>
#include <linux/timer.h>

#include "vhca_engine.h"

/* A run, for vhca_net_direct() to hand to vhca_req_place(). */
struct vhca_req_run_arg {
	struct vhca_qp *qp;
	struct vhca_req_seg *seg;
	bool nak;		/* the peer answered with a NAK or RNR NAK */
};

/*
 * Place run seg of qp in device dst's memory, through the responder of
 * its peer QP there (BHs off, RCU): only a connected RC QP of that number
 * whose peer is qp takes it, as only it takes the run's packets
 * (vhca_engine_rx()).  Its answer goes to qp's completer at once, as the
 * answer's packet would (it passes qp's receive checks: it comes from
 * qp's peer).  Both count as their packets would, delivered in the
 * kernel, and in direct_packets.
 */
static bool vhca_req_place(struct vhca_dev *dst, void *arg)
{
	struct vhca_req_run_arg *run = arg;
	struct vhca_qp *qp = run->qp, *peer;
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	struct vhca_req_seg *seg = run->seg;
	struct vhca_swqe *wqe = seg->wqe;
	struct vhca_src src = {
		.vdev = vdev,
		.pd = qp->ibqp.pd,
		.sge = wqe->sge,
		.num_sge = wqe->hdr.num_sge,
		.data = wqe->hdr.flags & VHCA_WQE_INLINE ? wqe->data : NULL,
	};
	struct vhca_pkt ack = { .opcode = IB_OPCODE_RC_SEND_FIRST };
	bool placed;

	peer = vhca_handle_get(&dst->qp_xa, seg->pkt.dqpn);
	if (!peer)
		return false;
	placed = !READ_ONCE(peer->dying) && peer->ibqp.qp_type == IB_QPT_RC &&
		 vhca_net_direct_from(&qp->attr.ah_attr.grh, qp->ibqp.qp_num,
				      &peer->attr.ah_attr.grh,
				      peer->attr.dest_qp_num) &&
		 vhca_resp_local(peer, &seg->pkt, seg->npkts, &src, seg->off,
				 &ack);
	vhca_handle_put(peer->handle);
	if (!placed)
		return false;
	/* BTH through ICRC of each packet: one RETH, ImmDt or IETH each. */
	vhca_tx_count_direct(vdev, dst, seg->npkts,
			     vhca_pkt_opinfo(seg->pkt.opcode)->hdr_len +
			     (seg->npkts - 1) * IB_BTH_BYTES +
			     seg->pkt.paylen + vhca_pkt_pad(seg->pkt.paylen) +
			     seg->npkts * IB_ICRC_BYTES);
	if (ack.opcode == IB_OPCODE_RC_ACKNOWLEDGE) {
		run->nak = (ack.aeth_syndrome & VHCA_AETH_TYPE_MASK) !=
			   VHCA_AETH_ACK;
		vhca_tx_count_direct(dst, vdev, 1,
				     vhca_pkt_opinfo(ack.opcode)->hdr_len +
				     IB_ICRC_BYTES);
		vhca_comp_rx(qp, &ack, NULL, 0);
	}
	return true;
}

/* What became of the runs of a pass (vhca_req_deliver_segs()). */
enum vhca_req_delivery {
	VHCA_RUNS_PLACED,	/* the peer took them all */
	VHCA_RUNS_NAKED,	/* it took one and NAKed it */
	VHCA_RUNS_REFUSED,	/* it did not take one */
	VHCA_RUNS_REMOTE,	/* the peer is not local (vhca_net_direct()) */
};

/*
 * The runs a pass built, in order, after it dropped sq_lock (the peer's
 * ACK comes back to qp's completer).  When the peer took one and NAKed it
 * (an RNR NAK, say), the completer has gone back to its PSN already, and
 * those after it, which would arrive out of sequence, are dropped.  When
 * it did not take one (REFUSED, or REMOTE: the packets would take the
 * wire), that one is in *refused, and those after it are not placed
 * either.
 */
static enum vhca_req_delivery vhca_req_deliver_segs(struct vhca_qp *qp,
						    u32 nsegs, u32 *refused)
{
	struct vhca_req_run_arg run = { .qp = qp };
	int taken;
	u32 i;

	for (i = 0; i < nsegs; i++) {
		run.seg = &qp->req.segs[i];
		taken = vhca_net_direct(to_vdev(qp->ibqp.device),
					&qp->attr.ah_attr.grh, vhca_req_place,
					&run);
		if (taken <= 0) {
			*refused = i;
			return taken == -ENODEV ? VHCA_RUNS_REMOTE :
						  VHCA_RUNS_REFUSED;
		}
		if (run.nak)
			return VHCA_RUNS_NAKED;
	}
	return VHCA_RUNS_PLACED;
}

/*
 * Whether a pass may not run on this CPU: packets the QP sent to the wire
 * from another (online) CPU are unacknowledged.  A veth hands each packet
 * to the receive backlog of the CPU that sends it, and a multiqueue NIC
 * takes it on that CPU's transmit queue: packets sent from a second CPU
 * while the first CPU's are still waiting (a backlog left to ksoftirqd)
 * would overtake them, and the responder would NAK the gap and drop what
 * follows it.
 * Once all are acknowledged, none is left on the way, and the QP may send
 * from any CPU.  sq_lock held, migration off.
 */
static bool vhca_req_elsewhere(const struct vhca_qp *qp)
{
	int cpu = qp->req.tx_cpu;

	return cpu >= 0 && cpu != smp_processor_id() && cpu_online(cpu) &&
	       vhca_req_busy(qp);
}

/*
 * One requester pass, its runs placed and its packets sent after the lock
 * is dropped, then the doorbell's state.  Passes never overlap, so packets
 * leave in PSN order: a caller that finds one under way leaves a note
 * (req_again) for it.  When the peer does not take a run, the requester
 * goes back to its first PSN and sends packets from there at once, in
 * another pass (the packets that followed the runs are dropped: they would
 * arrive out of order), and until the peer acknowledged them; a peer that
 * is not local gets packets from then on, until the next RTR.
 * While packets it sent to the wire are unacknowledged, the pass runs on
 * the CPU that sent them, or not at all (vhca_req_elsewhere()).
 * Returns true when work is left: the budget ran out, WQEs came in the
 * doorbell's last look, or another caller left its note.
 */
static bool vhca_req_run_pass(struct vhca_qp *qp)
{
	enum vhca_req_delivery runs;
	struct vhca_req_seg *seg;
	struct sk_buff_head list;
	u8 failed = IB_WC_SUCCESS;
	unsigned long flags;
	bool again = false;
	u32 nsegs, refused;
	bool wire;
	int cpu;

	__skb_queue_head_init(&list);
	/* Its packets leave from the CPU it was let run on. */
	migrate_disable();
	spin_lock_irqsave(&qp->sq_lock, flags);
	if (qp->dying || qp->state != IB_QPS_RTS || !qp->sq.count ||
	    qp->req.rnr_wait) {
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		migrate_enable();
		return false;
	}
	if (qp->req.running) {
		qp->req.again = true;
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		migrate_enable();
		return false;
	}
	if (vhca_req_elsewhere(qp)) {
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		migrate_enable();
		vhca_engine_kick(qp);
		return false;
	}
	qp->req.running = true;
	qp->req.again = false;
	for (;;) {
		qp->req.nsegs = 0;
		again = vhca_req_pass(qp, &list, &failed);
		if (!again && failed == IB_WC_SUCCESS)
			again = vhca_db_idle(qp);
		nsegs = qp->req.nsegs;
		spin_unlock_irqrestore(&qp->sq_lock, flags);

		runs = nsegs ? vhca_req_deliver_segs(qp, nsegs, &refused) :
			       VHCA_RUNS_PLACED;
		/* After a NAKed run, the packets too are out of order. */
		if (runs == VHCA_RUNS_NAKED)
			__skb_queue_purge(&list);
		if (runs == VHCA_RUNS_PLACED || runs == VHCA_RUNS_NAKED)
			break;
		/* The runs come first: a failed WQE would have none before. */
		__skb_queue_purge(&list);
		seg = &qp->req.segs[refused];
		spin_lock_irqsave(&qp->sq_lock, flags);
		if (runs == VHCA_RUNS_REMOTE)
			qp->req.remote = true;
		qp->req.wire = true;
		qp->req.wire_end = vhca_psn_add(seg->pkt.psn, seg->npkts);
		/*
		 * A run the peer acknowledged already (a rewind to before
		 * what it acknowledged: the retransmit timer's, to the
		 * oldest WQE's first PSN) would end wire at once, and the
		 * next pass would build the same refused run again, for
		 * ever: its packets go, until the peer acknowledges more.
		 */
		if (!vhca_psn_before(qp->comp.acked_psn, qp->req.wire_end))
			qp->req.wire_end = vhca_psn_add(qp->comp.acked_psn, 1);
		if (qp->dying || qp->state != IB_QPS_RTS || qp->req.rnr_wait ||
		    !vhca_req_busy(qp)) {
			spin_unlock_irqrestore(&qp->sq_lock, flags);
			break;
		}
		vhca_req_go_back(qp, seg->pkt.psn);
	}

	wire = vhca_tx_list(qp, &list);
	cpu = smp_processor_id();
	migrate_enable();
	if (failed != IB_WC_SUCCESS)
		vhca_qp_fatal(qp, failed);

	spin_lock_irqsave(&qp->sq_lock, flags);
	qp->req.running = false;
	if (wire)
		WRITE_ONCE(qp->req.tx_cpu, cpu);
	again |= qp->req.again;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	return again;
}

/* One pass; the work item takes what it leaves.  Any context. */
void vhca_req_run(struct vhca_qp *qp)
{
	if (vhca_req_run_pass(qp))
		vhca_engine_kick(qp);
}

/*
 * Passes while work is left, VHCA_REQ_PASSES at most.  Process context
 * (the work item, the kick system call): a stream moves on in the thread
 * already running instead of waking another for every pass (a wakeup per
 * message costs more than the pass), and a kick's process pays for what
 * it posted.
 */
bool vhca_req_drain(struct vhca_qp *qp)
{
	unsigned int passes = VHCA_REQ_PASSES;

	while (vhca_req_run_pass(qp)) {
		if (!--passes)
			return true;
		cond_resched();
	}
	return false;
}

/*
 * Rounds of the requester's passes and the responder's READ responses
 * while either has work left, at most rounds of them; then the work item
 * is queued again for the rest (see VHCA_REQ_WORK_ROUNDS).
 */
static void vhca_req_work_run(struct vhca_qp *qp, unsigned int rounds)
{
	bool more;

	for (;;) {
		more = vhca_req_drain(qp);
		more |= vhca_resp_run(qp);
		if (!more || !--rounds)
			break;
		cond_resched();
	}
	if (more)
		vhca_engine_kick(qp);
}

/* The work item of an RC QP: the requester, then the responder's READs. */
void vhca_req_work(struct work_struct *work)
{
	vhca_req_work_run(container_of(work, struct vhca_qp, tx_work),
			  VHCA_REQ_WORK_ROUNDS);
}

/* The same, queued on req.tx_cpu (vhca_engine_kick()). */
void vhca_req_wire_work(struct work_struct *work)
{
	vhca_req_work_run(container_of(work, struct vhca_qp, wire_work), 1);
}

/* Send again from the oldest unacknowledged WQE. */
static void vhca_req_rewind_all(struct vhca_qp *qp)
{
	vhca_req_rewind(qp, vhca_qp_swqe(qp, qp->sq_tail)->first_psn);
}

enum hrtimer_restart vhca_req_rnr_timer(struct hrtimer *t)
{
	struct vhca_qp *qp = container_of(t, struct vhca_qp, req.rnr_timer);
	unsigned long flags;
	bool resend;

	spin_lock_irqsave(&qp->sq_lock, flags);
	resend = !qp->dying && qp->state == IB_QPS_RTS && qp->req.rnr_wait;
	qp->req.rnr_wait = false;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (resend)
		vhca_engine_kick(qp);
	return HRTIMER_NORESTART;
}

void vhca_req_rexmit_timer(struct timer_list *t)
{
	struct vhca_qp *qp = timer_container_of(qp, t, req.rexmit_timer);
	unsigned long flags;
	bool fatal = false;

	spin_lock_irqsave(&qp->sq_lock, flags);
	/* No timeout during an RNR delay: rnr_timer ends it. */
	if (qp->dying || qp->state != IB_QPS_RTS || qp->req.rnr_wait ||
	    !vhca_req_busy(qp)) {
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		return;
	}
	atomic64_inc(&to_vdev(qp->ibqp.device)->counters[VHCA_CNT_TIMEOUTS]);
	if (!qp->req.retry_left) {
		fatal = true;
	} else {
		qp->req.retry_left--;
		qp->comp.read_retried = false;
		vhca_req_rewind_all(qp);
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (fatal)
		vhca_qp_fatal(qp, IB_WC_RETRY_EXC_ERR);
	else
		vhca_engine_kick(qp);
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
