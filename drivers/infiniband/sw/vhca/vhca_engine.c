// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The engine of vhca: executes RC send queues as RoCEv2 packets and
 * answers them.
 *
 * Requester (process context, a work item per QP): copies each send WQE
 * once from the ring into the QP's private array, validates the copy,
 * gives it its PSNs and sends its packets, gathering the payload from the
 * local MRs.  Completer (softirq, on ACKs and READ responses): completes
 * WQEs in order, places READ data, rewinds on a sequence NAK or a timeout
 * (go-back-N from the oldest unacknowledged WQE), waits out RNR NAKs, and
 * completes in error when the peer refuses or the retries run out.
 * Responder (softirq): checks the PSN (duplicates are acknowledged again,
 * READs re-executed; a gap is NAKed once), places SEND payload into
 * receive WQEs and WRITE payload into the MR its rkey names after checking
 * PD, bounds and remote access, answers READs from the MR, and acknowledges
 * the last packet of every message and every packet that asks.
 *
 * Receive runs in softirq, or, for a packet delivered locally by
 * vhca_net_xmit(), inside the sender with BHs off ("softirq" below means
 * either).  Packets are built under the QP's locks and sent after they are
 * dropped: transmission must not run with interrupts disabled, and a local
 * delivery may come back to the sending QP.
 */
#include <linux/skbuff.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "vhca.h"
#include "vhca_pkt.h"

/* Packets one requester pass sends before it yields. */
#define VHCA_REQ_BUDGET		64
/* Packets in flight unacknowledged at most; ACKs are asked every so often. */
#define VHCA_REQ_WINDOW		256
#define VHCA_REQ_ACK_EVERY	64
/* Retransmit timeout when the QP's is 0 ("infinite"), and its floor. */
#define VHCA_TIMEOUT_DEFAULT_MS	500
#define VHCA_TIMEOUT_MIN_MS	10

static u32 vhca_qp_mtu(const struct vhca_qp *qp)
{
	return ib_mtu_enum_to_int(qp->attr.path_mtu);
}

static u16 vhca_qp_sport(const struct vhca_qp *qp)
{
	return rdma_get_udp_sport(qp->attr.ah_attr.grh.flow_label,
				  qp->ibqp.qp_num, qp->attr.dest_qp_num);
}

/*
 * The retransmit timeout: 4.096 us * 2^timeout, doubled for each timeout
 * in a row without a response making progress (retry_cnt - retry_left):
 * a responder slower than the timeout (rxe on a slow host needs more than
 * 8 * 67 ms to acknowledge a 64-packet message) gets the time it needs
 * instead of ever more retransmissions.
 */
static unsigned long vhca_qp_timeout(const struct vhca_qp *qp)
{
	u8 backoff = qp->attr.retry_cnt > qp->retry_left ?
		     qp->attr.retry_cnt - qp->retry_left : 0;
	unsigned long j;
	u64 us;

	if (!qp->attr.timeout) {
		j = msecs_to_jiffies(VHCA_TIMEOUT_DEFAULT_MS);
	} else {
		us = (4096ULL << qp->attr.timeout) / 1000;
		j = max(usecs_to_jiffies(us),
			msecs_to_jiffies(VHCA_TIMEOUT_MIN_MS));
	}
	return j << min_t(u8, backoff, 7);
}

/* The RNR delay a peer asked for, roughly as the IB table has it. */
static unsigned long vhca_rnr_delay(u8 timer)
{
	return msecs_to_jiffies(timer ? max(1U, 1U << (timer / 4)) : 655);
}

static struct sk_buff *vhca_build(struct vhca_dev *vdev,
				  const struct vhca_pkt *pkt, void **payload)
{
	const struct vhca_pkt_opinfo *info = vhca_pkt_opinfo(pkt->opcode);
	u32 pad = vhca_pkt_pad(pkt->paylen);
	struct sk_buff *skb;
	void *hdr;

	skb = vhca_net_alloc_skb(vdev, info->hdr_len + pkt->paylen + pad,
				 GFP_ATOMIC);
	if (!skb)
		return NULL;
	hdr = skb_put(skb, info->hdr_len);
	if (vhca_pkt_build(hdr, info->hdr_len, pkt) < 0) {
		kfree_skb(skb);
		return NULL;
	}
	*payload = skb_put(skb, pkt->paylen);
	skb_put_zero(skb, pad);
	return skb;
}

static void vhca_xmit_list(struct vhca_qp *qp, struct sk_buff_head *list)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(list)))
		vhca_net_xmit(vdev, &qp->attr.ah_attr.grh, vhca_qp_sport(qp),
			      skb);
}

/* An ACK or NAK for psn, onto list. */
static void vhca_queue_ack(struct vhca_qp *qp, u8 syndrome, u32 psn,
			   struct sk_buff_head *list)
{
	struct vhca_pkt pkt = {
		.opcode = VHCA_OP_RC_ACKNOWLEDGE,
		.dqpn = qp->attr.dest_qp_num,
		.psn = psn,
		.aeth_syndrome = syndrome,
		.aeth_msn = qp->resp_msn,
	};
	struct sk_buff *skb;
	void *payload;

	skb = vhca_build(to_vdev(qp->ibqp.device), &pkt, &payload);
	if (skb)
		__skb_queue_tail(list, skb);
}

static unsigned int poll_budget = 20;
module_param(poll_budget, uint, 0644);
MODULE_PARM_DESC(poll_budget,
		 "Microseconds the engine keeps watching an idle send doorbell before it asks for a system call (0: every post_send makes one; default 20)");

void vhca_engine_kick(struct vhca_qp *qp)
{
	if (!READ_ONCE(qp->dying))
		queue_work(system_unbound_wq, &qp->tx_work);
}

/* ---- completions ---- */

/*
 * Complete the WQE at sq_tail; under sq_lock.  The slot is released before
 * the CQE appears: a process that polled the CQE may post into it at once.
 */
static void vhca_req_complete(struct vhca_qp *qp, u8 status)
{
	struct vhca_swqe *w = &qp->swqe[qp->sq_tail & (qp->sq.count - 1)];
	bool unsent = qp->sq_next == qp->sq_tail;
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
		qp->sq_next = qp->sq_tail;
		qp->sq_pkt = 0;
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
static void vhca_qp_fatal(struct vhca_qp *qp, u8 status)
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
	    qp->swqe[qp->sq_tail & (qp->sq.count - 1)].fetched) {
		vhca_req_complete(qp, status);
		done = true;
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	vhca_qp_to_error(qp);
	if (!done && qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/* ---- requester ---- */

/*
 * Copy the WQE at index from the ring and check it.  A WQE the device
 * cannot execute keeps a failed wc_status and is completed in error when
 * its turn comes.  Under sq_lock.
 */
static void vhca_req_fetch(struct vhca_qp *qp, u32 index)
{
	struct vhca_swqe *w = &qp->swqe[index & (qp->sq.count - 1)];
	const struct vhca_send_wqe *slot = vhca_ring_slot(&qp->sq, index);
	const struct vhca_sge *sge = (const struct vhca_sge *)(slot + 1);
	u32 mtu = vhca_qp_mtu(qp), npsn, i;
	u64 len = 0;

	w->hdr.wr_id = READ_ONCE(slot->wr_id);
	w->hdr.opcode = READ_ONCE(slot->opcode);
	w->hdr.flags = READ_ONCE(slot->flags) | (qp->sig_all ?
						 VHCA_WQE_SIGNALED : 0);
	w->hdr.num_sge = READ_ONCE(slot->num_sge);
	w->hdr.inline_len = READ_ONCE(slot->inline_len);
	w->hdr.imm_data = READ_ONCE(slot->imm_data);
	w->hdr.rdma.remote_addr = READ_ONCE(slot->rdma.remote_addr);
	w->hdr.rdma.rkey = READ_ONCE(slot->rdma.rkey);
	w->wc_status = IB_WC_SUCCESS;
	w->fetched = true;

	if (w->hdr.opcode > VHCA_WR_RDMA_READ) {
		w->wc_status = IB_WC_LOC_QP_OP_ERR;
	} else if (w->hdr.flags & VHCA_WQE_INLINE) {
		if (w->hdr.inline_len > qp->max_inline ||
		    w->hdr.opcode == VHCA_WR_RDMA_READ)
			w->wc_status = IB_WC_LOC_LEN_ERR;
		else
			memcpy(w->data, sge, w->hdr.inline_len);
		len = w->hdr.inline_len;
	} else if (w->hdr.num_sge > qp->max_send_sge) {
		w->wc_status = IB_WC_LOC_LEN_ERR;
	} else {
		for (i = 0; i < w->hdr.num_sge; i++) {
			w->sge[i].addr = READ_ONCE(sge[i].addr);
			w->sge[i].length = READ_ONCE(sge[i].length);
			w->sge[i].lkey = READ_ONCE(sge[i].lkey);
			len += w->sge[i].length;
		}
	}
	if (len > VHCA_MAX_MSG_SIZE)
		w->wc_status = IB_WC_LOC_LEN_ERR;
	w->len = w->wc_status == IB_WC_SUCCESS ? len : 0;

	npsn = vhca_pkt_npkts(w->len, mtu);
	w->first_psn = qp->req_psn;
	w->last_psn = vhca_psn_add(qp->req_psn, npsn - 1);
	if (w->wc_status == IB_WC_SUCCESS)
		qp->req_psn = vhca_psn_add(qp->req_psn, npsn);
}

static u8 vhca_req_opcode(u8 wr, bool first, bool last)
{
	static const u8 send[4] = { VHCA_OP_RC_SEND_MIDDLE,
		VHCA_OP_RC_SEND_FIRST, VHCA_OP_RC_SEND_LAST,
		VHCA_OP_RC_SEND_ONLY };
	static const u8 write[4] = { VHCA_OP_RC_RDMA_WRITE_MIDDLE,
		VHCA_OP_RC_RDMA_WRITE_FIRST, VHCA_OP_RC_RDMA_WRITE_LAST,
		VHCA_OP_RC_RDMA_WRITE_ONLY };
	int i = first | last << 1;

	switch (wr) {
	case VHCA_WR_SEND_WITH_IMM:
		if (last)
			return first ? VHCA_OP_RC_SEND_ONLY_WITH_IMM :
				       VHCA_OP_RC_SEND_LAST_WITH_IMM;
		fallthrough;
	case VHCA_WR_SEND:
		return send[i];
	case VHCA_WR_RDMA_WRITE_WITH_IMM:
		if (last)
			return first ? VHCA_OP_RC_RDMA_WRITE_ONLY_WITH_IMM :
				       VHCA_OP_RC_RDMA_WRITE_LAST_WITH_IMM;
		fallthrough;
	case VHCA_WR_RDMA_WRITE:
		return write[i];
	default:
		return VHCA_OP_RC_RDMA_READ_REQUEST;
	}
}

/*
 * Queue packet n of WQE w.  Returns 0, or the work completion status that
 * fails the WQE (its local memory could not be read).
 */
static int vhca_req_packet(struct vhca_qp *qp, struct vhca_swqe *w, u32 n,
			   struct sk_buff_head *list)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	bool read = w->hdr.opcode == VHCA_WR_RDMA_READ;
	u32 mtu = vhca_qp_mtu(qp), npkts = vhca_pkt_npkts(w->len, mtu);
	bool first = n == 0, last = read || n == npkts - 1;
	u32 done = 0;
	struct vhca_pkt pkt = {
		.opcode = vhca_req_opcode(w->hdr.opcode, first, last),
		.dqpn = qp->attr.dest_qp_num,
		.psn = vhca_psn_add(w->first_psn, n),
		.paylen = read ? 0 : vhca_pkt_seg_len(w->len, mtu, n),
		.ackreq = last || !((n + 1) % VHCA_REQ_ACK_EVERY),
		.se = last && (w->hdr.flags & VHCA_WQE_SOLICITED),
		.imm = w->hdr.imm_data,
		.reth_va = w->hdr.rdma.remote_addr,
		.reth_rkey = w->hdr.rdma.rkey,
		.reth_len = w->len,
	};
	struct sk_buff *skb;
	void *payload;
	int err = 0;

	/* A READ partly answered already asks only for the rest again. */
	if (read && w == &qp->swqe[qp->sq_tail & (qp->sq.count - 1)] &&
	    vhca_psn_after(qp->comp_psn, w->first_psn) &&
	    !vhca_psn_after(qp->comp_psn, w->last_psn)) {
		done = vhca_psn_diff(qp->comp_psn, w->first_psn) * mtu;
		pkt.psn = qp->comp_psn;
		pkt.reth_va += done;
		pkt.reth_len -= done;
	}

	skb = vhca_build(vdev, &pkt, &payload);
	if (!skb)
		return 0;	/* lost: the timer resends it */
	if (w->hdr.flags & VHCA_WQE_INLINE)
		memcpy(payload, w->data + n * mtu, pkt.paylen);
	else if (pkt.paylen)
		err = vhca_sge_copy(vdev, qp->ibqp.pd, w->sge, w->hdr.num_sge,
				    (u64)n * mtu, payload, pkt.paylen,
				    VHCA_COPY_FROM_MR, 0);
	if (err) {
		kfree_skb(skb);
		return err == -EINVAL ? IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR;
	}
	__skb_queue_tail(list, skb);
	return 0;
}

/* Packets are in flight: a WQE sent, or one being sent, is unacknowledged. */
static bool vhca_req_busy(const struct vhca_qp *qp)
{
	return qp->sq_tail != qp->sq_next || qp->sq_pkt;
}

/*
 * The PSN of the next packet the requester sends: in the WQE at sq_next
 * when that one was fetched (sent before a rewind), else a new one.  When
 * every slot of the ring is in flight, the slot at sq_next holds the
 * oldest WQE (sq_tail's), not the next one (ibv_rc_pingpong's queue has
 * one slot: read from that slot, a sequence NAK for the WQE in flight
 * looked like one for a packet not sent yet and waited for the timeout).
 */
static u32 vhca_req_next_psn(struct vhca_qp *qp)
{
	struct vhca_swqe *w = &qp->swqe[qp->sq_next & (qp->sq.count - 1)];

	if (qp->sq_next - qp->sq_tail == qp->sq.count || !w->fetched)
		return qp->req_psn;
	return vhca_psn_add(w->first_psn, qp->sq_pkt);
}

/* Fences: a WQE waits for every READ before it to complete. */
static bool vhca_req_reads_pending(struct vhca_qp *qp, u32 end)
{
	u32 i;

	for (i = qp->sq_tail; i != end; i++)
		if (qp->swqe[i & (qp->sq.count - 1)].hdr.opcode ==
		    VHCA_WR_RDMA_READ)
			return true;
	return false;
}

static u32 vhca_req_reads_in_flight(struct vhca_qp *qp)
{
	u32 i, n = 0;

	for (i = qp->sq_tail; i != qp->sq_next; i++)
		n += qp->swqe[i & (qp->sq.count - 1)].hdr.opcode ==
		     VHCA_WR_RDMA_READ;
	return n;
}

/*
 * Packets wait to be sent: WQEs past sq_next (new ones, or ones sent again
 * after a rewind, or held back by the window).  Under sq_lock.
 */
static bool vhca_req_pending(struct vhca_qp *qp)
{
	u32 head = READ_ONCE(qp->recs.db->head[0]);

	return head != qp->sq_next &&
	       vhca_ring_used(&qp->sq, head, qp->sq_tail) != U32_MAX;
}

/* Set or clear VHCA_STATUS_NEEDS_WAKEUP; under sq_lock. */
static void vhca_db_wakeup_flag(struct vhca_qp *qp, bool set)
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
static bool vhca_db_idle(struct vhca_qp *qp)
{
	unsigned int budget = READ_ONCE(poll_budget);
	u32 head;

	if (budget && vhca_req_busy(qp)) {
		qp->db_state = VHCA_DB_AWAKE;
		vhca_db_wakeup_flag(qp, false);
		return false;
	}
	if (budget && qp->db_state == VHCA_DB_AWAKE && !qp->db_answer) {
		qp->db_state = VHCA_DB_GRACE;
		hrtimer_start(&qp->db_timer,
			      ns_to_ktime((u64)budget * NSEC_PER_USEC),
			      HRTIMER_MODE_REL_SOFT);
		vhca_db_wakeup_flag(qp, false);
		return false;
	}
	if (qp->db_state == VHCA_DB_GRACE)
		return false;	/* db_timer ends the window */
	qp->db_state = VHCA_DB_AWAKE;
	qp->db_answer = false;
	vhca_db_wakeup_flag(qp, true);
	/* Orders the flag store before the head load; see above. */
	smp_mb();
	head = READ_ONCE(qp->recs.db->head[0]);
	if (head == qp->db_seen ||
	    vhca_ring_used(&qp->sq, head, qp->sq_tail) == U32_MAX)
		return false;
	if (budget)
		vhca_db_wakeup_flag(qp, false);
	return true;
}

/*
 * One requester pass: sends up to VHCA_REQ_BUDGET packets of the WQEs
 * the doorbell shows, onto list.  Under sq_lock, in the RTS state.
 * Returns true when the budget ran out with packets left to send; a WQE
 * that fails the QP leaves its status in *failed.
 */
static bool vhca_req_pass(struct vhca_qp *qp, struct sk_buff_head *list,
			  u8 *failed)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	u32 mtu, head, budget = VHCA_REQ_BUDGET;
	struct vhca_swqe *w;
	bool kicked = qp->db_kicked;
	int status;

	mtu = vhca_qp_mtu(qp);
	qp->db_kicked = false;
	/* Pairs with the producer's release: WQEs before head are written. */
	head = smp_load_acquire(&qp->recs.db->head[0]);
	if (vhca_ring_used(&qp->sq, head, qp->sq_tail) == U32_MAX)
		return false;	/* a head no producer could write: ignored */
	if (head != qp->db_seen) {
		/* New WQEs that no system call announced. */
		if (!kicked)
			atomic64_inc(&vdev->counters[VHCA_CNT_DB_RECORDS]);
		qp->db_seen = head;
	}

	while (qp->sq_next != head && budget) {
		w = &qp->swqe[qp->sq_next & (qp->sq.count - 1)];
		if (!w->fetched)
			vhca_req_fetch(qp, qp->sq_next);
		if (w->wc_status != IB_WC_SUCCESS) {
			/* It fails once everything before it completed. */
			if (qp->sq_next == qp->sq_tail)
				*failed = w->wc_status;
			break;
		}
		if (vhca_psn_diff(vhca_req_next_psn(qp), qp->acked_psn) >=
		    VHCA_REQ_WINDOW)
			break;
		if (!qp->sq_pkt && (w->hdr.flags & VHCA_WQE_FENCE) &&
		    vhca_req_reads_pending(qp, qp->sq_next))
			break;
		if (!qp->sq_pkt && w->hdr.opcode == VHCA_WR_RDMA_READ &&
		    vhca_req_reads_in_flight(qp) >= max_t(u8, 1,
							  qp->attr.max_rd_atomic))
			break;
		status = vhca_req_packet(qp, w, qp->sq_pkt, list);
		if (status) {
			if (qp->sq_next == qp->sq_tail)
				*failed = status;
			w->wc_status = status;
			break;
		}
		budget--;
		if (w->hdr.opcode == VHCA_WR_RDMA_READ ||
		    ++qp->sq_pkt == vhca_pkt_npkts(w->len, mtu)) {
			qp->sq_pkt = 0;
			qp->sq_next++;
		}
	}
	/* The timeout counts from the last packet sent. */
	if (budget != VHCA_REQ_BUDGET ||
	    (vhca_req_busy(qp) && !timer_pending(&qp->rexmit_timer)))
		mod_timer(&qp->rexmit_timer, jiffies + vhca_qp_timeout(qp));
	return !budget && qp->sq_next != head;
}

/*
 * Run the requester: one pass, its packets sent after the lock is
 * dropped, then the doorbell's state.  Any context: the work item, the
 * kick system call, db_timer (softirq).  Passes never overlap, so packets
 * leave in PSN order: a caller that finds one under way leaves a note
 * (req_again), on which that one queues the work item when it ends.
 */
static void vhca_req_run(struct vhca_qp *qp)
{
	struct sk_buff_head list;
	u8 failed = IB_WC_SUCCESS;
	unsigned long flags;
	bool again = false;

	__skb_queue_head_init(&list);
	spin_lock_irqsave(&qp->sq_lock, flags);
	if (qp->dying || qp->state != IB_QPS_RTS || !qp->sq.count) {
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		return;
	}
	if (qp->req_running) {
		qp->req_again = true;
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		return;
	}
	qp->req_running = true;
	qp->req_again = false;
	if (vhca_req_pass(qp, &list, &failed))
		again = true;
	else if (failed == IB_WC_SUCCESS)
		again = vhca_db_idle(qp);
	spin_unlock_irqrestore(&qp->sq_lock, flags);

	vhca_xmit_list(qp, &list);
	if (failed != IB_WC_SUCCESS)
		vhca_qp_fatal(qp, failed);

	spin_lock_irqsave(&qp->sq_lock, flags);
	qp->req_running = false;
	again |= qp->req_again;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (again)
		vhca_engine_kick(qp);
}

static void vhca_req_work(struct work_struct *work)
{
	vhca_req_run(container_of(work, struct vhca_qp, tx_work));
}

/*
 * End the poll window of an idle doorbell: a last look, then sleep.  With
 * answer, the responder took a message: the process is likely to answer
 * it with a post_send of its own (a ping-pong), which then kicks at once
 * instead of waiting for db_timer (under TCG a soft hrtimer fires up to a
 * millisecond late); a window not open yet (requests in flight) is
 * skipped.  A stream that only sends gets no messages and keeps its
 * window: its posts need no system call.
 */
static void vhca_db_expire(struct vhca_qp *qp, bool answer)
{
	unsigned long flags;
	bool run;

	spin_lock_irqsave(&qp->sq_lock, flags);
	run = qp->db_state == VHCA_DB_GRACE;
	if (run)
		qp->db_state = VHCA_DB_EXPIRED;
	else if (answer && vhca_req_busy(qp))
		qp->db_answer = true;
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (run)
		vhca_req_run(qp);
}

static enum hrtimer_restart vhca_db_timer(struct hrtimer *t)
{
	vhca_db_expire(container_of(t, struct vhca_qp, db_timer), false);
	return HRTIMER_NORESTART;
}

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

/*
 * Send again from psn on: the WQE holding it and all after it (a READ from
 * its request).  Under sq_lock, with WQEs outstanding.
 */
static void vhca_req_rewind(struct vhca_qp *qp, u32 psn)
{
	u32 i, end = qp->sq_next + !!qp->sq_pkt, mtu = vhca_qp_mtu(qp);
	struct vhca_swqe *w;
	s32 pkt;

	for (i = qp->sq_tail; i != end; i++) {
		w = &qp->swqe[i & (qp->sq.count - 1)];
		if (!vhca_psn_before(w->last_psn, psn))
			break;
	}
	if (i == end)
		return;		/* nothing sent from psn on */
	w = &qp->swqe[i & (qp->sq.count - 1)];
	pkt = vhca_psn_diff(psn, w->first_psn);
	qp->sq_next = i;
	qp->sq_pkt = w->hdr.opcode == VHCA_WR_RDMA_READ || pkt < 0 ? 0 :
		     min_t(u32, pkt, vhca_pkt_npkts(w->len, mtu) - 1);
	w = &qp->swqe[qp->sq_tail & (qp->sq.count - 1)];
	if (w->hdr.opcode != VHCA_WR_RDMA_READ ||
	    vhca_psn_before(qp->comp_psn, w->first_psn) ||
	    vhca_psn_after(qp->comp_psn, w->last_psn))
		qp->comp_psn = w->first_psn;
	atomic64_inc(&to_vdev(qp->ibqp.device)->counters[VHCA_CNT_RETRANSMITS]);
}

/* Send again from the oldest unacknowledged WQE. */
static void vhca_req_rewind_all(struct vhca_qp *qp)
{
	vhca_req_rewind(qp, qp->swqe[qp->sq_tail & (qp->sq.count - 1)].first_psn);
}

static void vhca_rexmit_timer(struct timer_list *t)
{
	struct vhca_qp *qp = from_timer(qp, t, rexmit_timer);
	unsigned long flags;
	bool fatal = false;

	spin_lock_irqsave(&qp->sq_lock, flags);
	if (qp->dying || qp->state != IB_QPS_RTS || !vhca_req_busy(qp)) {
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		return;
	}
	atomic64_inc(&to_vdev(qp->ibqp.device)->counters[VHCA_CNT_TIMEOUTS]);
	if (!qp->retry_left) {
		fatal = true;
	} else {
		qp->retry_left--;
		qp->read_retried = false;
		vhca_req_rewind_all(qp);
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	if (fatal)
		vhca_qp_fatal(qp, IB_WC_RETRY_EXC_ERR);
	else
		vhca_engine_kick(qp);
}

/* ---- completer ---- */

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
static void vhca_comp_rx(struct vhca_qp *qp, const struct vhca_pkt *pkt,
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
		while (qp->sq_tail != qp->sq_next) {
			w = &qp->swqe[qp->sq_tail & (qp->sq.count - 1)];
			if (w->hdr.opcode == VHCA_WR_RDMA_READ)
				break;
			/* A READ response acknowledges what precedes it. */
			if (!vhca_psn_before(w->last_psn, psn))
				goto out;
			vhca_req_complete(qp, IB_WC_SUCCESS);
			acked = true;
		}
		if (qp->sq_tail == qp->sq_next)
			goto out;
		w = &qp->swqe[qp->sq_tail & (qp->sq.count - 1)];
		/* Outside the READ: none of its responses came yet. */
		if (vhca_psn_before(qp->comp_psn, w->first_psn) ||
		    vhca_psn_after(qp->comp_psn, w->last_psn))
			qp->comp_psn = w->first_psn;
		if (vhca_psn_after(psn, w->last_psn))
			goto done;
		/*
		 * A response after comp_psn: the one at comp_psn was lost.
		 * The READ is asked again at once, as rxe's completer does,
		 * not after a retransmit timeout; once, as the rest of the
		 * lost one's burst comes out of order too.  Earlier ones are
		 * duplicates.
		 */
		if (vhca_psn_after(psn, qp->comp_psn) && !qp->read_retried) {
			qp->read_retried = true;
			vhca_req_rewind(qp, qp->comp_psn);
			kick = true;
		}
		if (psn != qp->comp_psn)
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
		qp->comp_psn = vhca_psn_add(psn, 1);
		qp->acked_psn = qp->comp_psn;
		qp->read_retried = false;
		if (psn == w->last_psn) {
			vhca_req_complete(qp, IB_WC_SUCCESS);
			if (qp->sq_tail != qp->sq_next)
				qp->comp_psn = qp->swqe[qp->sq_tail &
					       (qp->sq.count - 1)].first_psn;
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
				   psn, qp->acked_psn)) {
			qp->acked_psn = type == VHCA_AETH_ACK ?
					vhca_psn_add(psn, 1) : psn;
			acked = true;
		}
		while (qp->sq_tail != qp->sq_next) {
			w = &qp->swqe[qp->sq_tail & (qp->sq.count - 1)];
			if (w->hdr.opcode == VHCA_WR_RDMA_READ)
				break;	/* only its responses complete it */
			if (type == VHCA_AETH_ACK ?
			    vhca_psn_after(w->last_psn, psn) :
			    !vhca_psn_before(w->last_psn, psn))
				break;
			vhca_req_complete(qp, IB_WC_SUCCESS);
			acked = true;
		}
		if (type == VHCA_AETH_RNR_NAK) {
			if (!qp->rnr_left) {
				fatal = IB_WC_RNR_RETRY_EXC_ERR;
				goto out;
			}
			if (qp->rnr_left != 7)
				qp->rnr_left--;
			atomic64_inc(&vdev->counters[VHCA_CNT_RNR_NAKS]);
			if (vhca_req_busy(qp))
				vhca_req_rewind(qp, psn);
			mod_timer(&qp->rexmit_timer, jiffies +
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
		qp->retry_left = qp->attr.retry_cnt;
		qp->rnr_left = qp->attr.rnr_retry;
		kick = true;
	}
	/*
	 * Any response restarts the timer, as rxe's does: a slow responder
	 * still answering retransmitted packets (with duplicate ACKs or READ
	 * responses) is neither counted against retry_cnt nor sent another
	 * round of them, which would only delay the progress it is making.
	 */
	if (!vhca_req_busy(qp))
		del_timer(&qp->rexmit_timer);
	else
		mod_timer(&qp->rexmit_timer, jiffies + vhca_qp_timeout(qp));
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

/* ---- responder ---- */

static void vhca_rmsg_close(struct vhca_rmsg *m)
{
	if (m->mr)
		vhca_mr_put(m->mr);
	memset(m, 0, sizeof(*m));
}

/* The next receive WQE (RQ or SRQ) into m; false when there is none. */
bool vhca_resp_take_rwqe(struct vhca_qp *qp, struct vhca_rmsg *m, bool *bad)
{
	const struct vhca_recv_wqe *slot;
	const struct vhca_sge *sge;
	u32 head, used, i;

	*bad = false;
	if (qp->ibqp.srq) {
		int err = vhca_srq_take(to_vsrq(qp->ibqp.srq), &m->rwqe, m->sge);

		*bad = err == -EINVAL;
		return err != -ENOENT;
	}
	if (!qp->rq.count)
		return false;
	/* Pairs with the producer's release: WQEs before head are written. */
	head = smp_load_acquire(&qp->recs.db->head[1]);
	used = vhca_ring_used(&qp->rq, head, qp->rq_tail);
	if (!used || used == U32_MAX)
		return false;
	slot = vhca_ring_slot(&qp->rq, qp->rq_tail);
	sge = (const struct vhca_sge *)(slot + 1);
	m->rwqe.wr_id = READ_ONCE(slot->wr_id);
	m->rwqe.num_sge = READ_ONCE(slot->num_sge);
	if (m->rwqe.num_sge > qp->max_recv_sge) {
		*bad = true;
		m->rwqe.num_sge = 0;
	}
	for (i = 0; i < m->rwqe.num_sge; i++) {
		m->sge[i].addr = READ_ONCE(sge[i].addr);
		m->sge[i].length = READ_ONCE(sge[i].length);
		m->sge[i].lkey = READ_ONCE(sge[i].lkey);
	}
	qp->rq_tail++;
	/* The slot is read before the provider may reuse it. */
	smp_store_release(&qp->recs.st->tail[1], qp->rq_tail);
	return true;
}

static void vhca_resp_complete(struct vhca_qp *qp, struct vhca_rmsg *m,
			       const struct vhca_pkt *pkt, u8 status,
			       enum ib_wc_opcode opcode)
{
	struct vhca_cqe cqe = {
		.wr_id = m->rwqe.wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = m->offset,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = qp->attr.dest_qp_num,
	};

	if (pkt->opcode == VHCA_OP_RC_SEND_LAST_WITH_IMM ||
	    pkt->opcode == VHCA_OP_RC_SEND_ONLY_WITH_IMM ||
	    pkt->opcode == VHCA_OP_RC_RDMA_WRITE_LAST_WITH_IMM ||
	    pkt->opcode == VHCA_OP_RC_RDMA_WRITE_ONLY_WITH_IMM) {
		cqe.flags |= VHCA_CQE_WITH_IMM;
		cqe.imm_data = pkt->imm;
	}
	vhca_cq_post(to_vcq(qp->ibqp.recv_cq), &cqe, pkt->se);
}

/* Answer a READ request from the MR; responses onto list.  0 or a NAK code. */
static int vhca_resp_read(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			  struct sk_buff_head *list)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	u32 mtu = vhca_qp_mtu(qp), npkts = vhca_pkt_npkts(pkt->reth_len, mtu);
	struct vhca_mr *mr;
	struct sk_buff *skb;
	void *payload;
	u32 i;
	int err = 0;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_READ))
		return VHCA_NAK_REM_ACCESS_ERR;
	mr = vhca_mr_get(vdev, pkt->reth_rkey);
	if (!mr || vhca_mr_check(mr, qp->ibqp.pd, pkt->reth_va, pkt->reth_len,
				 IB_ACCESS_REMOTE_READ)) {
		if (mr)
			vhca_mr_put(mr);
		return VHCA_NAK_REM_ACCESS_ERR;
	}
	/* A new READ (not a duplicate) counts before its responses. */
	if (pkt->psn == qp->resp_psn)
		qp->resp_msn = vhca_pkt_msn_next(qp->resp_msn, pkt->opcode);
	for (i = 0; i < npkts; i++) {
		struct vhca_pkt rsp = {
			.dqpn = qp->attr.dest_qp_num,
			.psn = vhca_psn_add(pkt->psn, i),
			.paylen = vhca_pkt_seg_len(pkt->reth_len, mtu, i),
			.aeth_syndrome = vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID),
			.aeth_msn = qp->resp_msn,
		};

		rsp.opcode = npkts == 1 ? VHCA_OP_RC_RDMA_READ_RESPONSE_ONLY :
			     !i ? VHCA_OP_RC_RDMA_READ_RESPONSE_FIRST :
			     i == npkts - 1 ? VHCA_OP_RC_RDMA_READ_RESPONSE_LAST :
			     VHCA_OP_RC_RDMA_READ_RESPONSE_MIDDLE;
		skb = vhca_build(to_vdev(qp->ibqp.device), &rsp, &payload);
		if (!skb)
			break;	/* the requester reads again */
		err = vhca_mr_copy(mr, pkt->reth_va + (u64)i * mtu, payload,
				   rsp.paylen, VHCA_COPY_FROM_MR);
		if (err) {
			kfree_skb(skb);
			break;
		}
		__skb_queue_tail(list, skb);
	}
	vhca_mr_put(mr);
	return err ? VHCA_NAK_REM_ACCESS_ERR : 0;
}

/*
 * Execute one in-order request packet.  Returns 0, or -EAGAIN for RNR
 * (no receive WQE), or a positive NAK code.
 */
static int vhca_resp_exec(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			  u8 opflags, struct sk_buff *skb, u32 off,
			  struct sk_buff_head *list)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	struct vhca_rmsg *m = &qp->rmsg;
	u8 op = pkt->opcode;
	bool send = op <= VHCA_OP_RC_SEND_ONLY_WITH_IMM;
	bool imm_write = op == VHCA_OP_RC_RDMA_WRITE_LAST_WITH_IMM ||
			 op == VHCA_OP_RC_RDMA_WRITE_ONLY_WITH_IMM;
	bool bad;
	int err;

	if (op == VHCA_OP_RC_RDMA_READ_REQUEST)
		return m->active ? VHCA_NAK_INVALID_REQ :
				   vhca_resp_read(qp, pkt, list);

	/* A message starts with FIRST/ONLY and goes on with its own kind. */
	if (!!(opflags & VHCA_PKT_FIRST) == m->active ||
	    (m->active && m->send != send))
		return VHCA_NAK_INVALID_REQ;

	if (opflags & VHCA_PKT_FIRST) {
		m->active = true;
		m->send = send;
		if (send) {
			if (!vhca_resp_take_rwqe(qp, m, &bad)) {
				memset(m, 0, sizeof(*m));
				return -EAGAIN;
			}
			if (bad)
				goto err_len;
		} else {
			if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_WRITE))
				goto err_access;
			m->mr = pkt->reth_len ? vhca_mr_get(vdev, pkt->reth_rkey) :
						NULL;
			if (pkt->reth_len &&
			    (!m->mr || vhca_mr_check(m->mr, qp->ibqp.pd,
						     pkt->reth_va, pkt->reth_len,
						     IB_ACCESS_REMOTE_WRITE)))
				goto err_access;
			m->va = pkt->reth_va;
			m->left = pkt->reth_len;
		}
	}

	if (send) {
		err = vhca_sge_copy_skb(vdev, qp->ibqp.pd, m->sge,
					m->rwqe.num_sge, m->offset, skb, off,
					pkt->paylen, VHCA_COPY_TO_MR,
					IB_ACCESS_LOCAL_WRITE);
		if (err == -EINVAL)
			goto err_len;
		if (err)
			goto err_prot;
	} else if (pkt->paylen) {
		if (pkt->paylen > m->left || !m->mr)
			goto err_inval;
		if (vhca_mr_copy_skb(m->mr, m->va, skb, off, pkt->paylen,
				     VHCA_COPY_TO_MR))
			goto err_access;
		m->va += pkt->paylen;
		m->left -= pkt->paylen;
	}
	m->offset += pkt->paylen;

	if (opflags & VHCA_PKT_LAST) {
		if (send) {
			vhca_resp_complete(qp, m, pkt, IB_WC_SUCCESS, IB_WC_RECV);
		} else if (imm_write) {
			/* The immediate consumes a receive WQE. */
			if (!vhca_resp_take_rwqe(qp, m, &bad)) {
				vhca_rmsg_close(m);
				return -EAGAIN;
			}
			vhca_resp_complete(qp, m, pkt, IB_WC_SUCCESS,
					   IB_WC_RECV_RDMA_WITH_IMM);
		}
		qp->resp_msn = vhca_pkt_msn_next(qp->resp_msn, op);
		vhca_rmsg_close(m);
	}
	return 0;

err_len:
	vhca_resp_complete(qp, m, pkt, IB_WC_LOC_LEN_ERR, IB_WC_RECV);
	vhca_rmsg_close(m);
	return VHCA_NAK_INVALID_REQ;
err_prot:
	vhca_resp_complete(qp, m, pkt, IB_WC_LOC_PROT_ERR, IB_WC_RECV);
	vhca_rmsg_close(m);
	return VHCA_NAK_REM_OP_ERR;
err_inval:
	vhca_rmsg_close(m);
	return VHCA_NAK_INVALID_REQ;
err_access:
	vhca_rmsg_close(m);
	return VHCA_NAK_REM_ACCESS_ERR;
}

/* A request packet for the responder of qp; in softirq. */
static void vhca_resp_rx(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			 u8 opflags, struct sk_buff *skb, u32 off)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	u32 mtu = vhca_qp_mtu(qp), npsn = 1;
	struct sk_buff_head list;
	unsigned long flags;
	bool fatal = false;
	s32 diff;
	int ret;

	/*
	 * The end of a SEND or WRITE message: the send doorbell sleeps
	 * before the process can see the message (vhca_db_expire()).
	 */
	if (pkt->opcode < VHCA_OP_RC_RDMA_READ_REQUEST &&
	    (opflags & VHCA_PKT_LAST) && qp->sq.count)
		vhca_db_expire(qp, true);

	__skb_queue_head_init(&list);
	spin_lock_irqsave(&qp->rq_lock, flags);
	if (qp->state != IB_QPS_RTR && qp->state != IB_QPS_RTS &&
	    qp->state != IB_QPS_SQD)
		goto out;
	if (pkt->opcode == VHCA_OP_RC_RDMA_READ_REQUEST)
		npsn = vhca_pkt_npkts(pkt->reth_len, mtu);
	/* Payload of FIRST/MIDDLE packets is exactly one MTU. */
	if ((opflags & VHCA_PKT_PAYLOAD) && !(opflags & VHCA_PKT_LAST) &&
	    pkt->paylen != mtu)
		goto out;

	diff = vhca_psn_diff(pkt->psn, qp->resp_psn);
	if (diff > 0) {
		/* A gap: ask once for what is missing. */
		if (!qp->nak_sent) {
			qp->nak_sent = true;
			vhca_queue_ack(qp, vhca_aeth_nak(VHCA_NAK_PSN_SEQ_ERR),
				       qp->resp_psn, &list);
		}
		goto out;
	}
	if (diff < 0) {
		/* A duplicate: acknowledged again, READs answered again. */
		atomic64_inc(&vdev->counters[VHCA_CNT_DUP_REQUESTS]);
		if (pkt->opcode == VHCA_OP_RC_RDMA_READ_REQUEST)
			vhca_resp_read(qp, pkt, &list);
		else
			vhca_queue_ack(qp, vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID),
				       vhca_psn_add(qp->resp_psn, -1),
				       &list);
		goto out;
	}

	ret = vhca_resp_exec(qp, pkt, opflags, skb, off, &list);
	if (ret == -EAGAIN) {
		vhca_queue_ack(qp, vhca_aeth_rnr_nak(qp->attr.min_rnr_timer),
			       pkt->psn, &list);
		goto out;
	}
	if (ret > 0) {
		vhca_queue_ack(qp, vhca_aeth_nak(ret), pkt->psn, &list);
		fatal = true;
		goto out;
	}
	qp->nak_sent = false;
	qp->resp_psn = vhca_psn_add(pkt->psn, npsn);
	if (pkt->ackreq && pkt->opcode != VHCA_OP_RC_RDMA_READ_REQUEST)
		vhca_queue_ack(qp, vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID),
			       pkt->psn, &list);
out:
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	vhca_xmit_list(qp, &list);
	if (fatal)
		vhca_qp_fatal(qp, IB_WC_SUCCESS);
}

/* ---- lingering QPs ---- */

/*
 * A destroyed RC QP lingers for qp_linger_ms as what its responder last
 * knew: the peer of an application that closes once it has all it waited
 * for may still be waiting for the ACK of its last request, and when that
 * ACK was lost, it sends the request again (it cannot tell a lost ACK from
 * a lost request).  A QP that is gone would leave it to fail with a retry
 * error (ibv_rc_pingpong's end on a lossy link, on either side); the ghost
 * acknowledges it again, as TCP's TIME-WAIT does for a last ACK.  Only
 * such duplicates, from the QP's own peer, are answered: a request the QP
 * never received, a READ or anything else is dropped as for any unknown
 * QP number (QP numbers are allocated cyclically, 16M of them).
 */
struct vhca_ghost {
	struct rcu_head rcu;
	unsigned long expires;		/* jiffies */
	struct ib_global_route grh;	/* sgid_attr not held: sgid_index */
	u32 dest_qpn;
	u32 resp_psn;			/* the first PSN it did not receive */
	u32 resp_msn;
	u16 sport;
};

/* Ghosts per device at most, for a process churning through QPs. */
#define VHCA_GHOSTS_MAX		4096

static unsigned int qp_linger_ms = 5000;
module_param(qp_linger_ms, uint, 0644);
MODULE_PARM_DESC(qp_linger_ms,
		 "Milliseconds a destroyed RC QP still acknowledges its peer's retransmissions of requests it received (0: not at all; default 5000)");

/* Under RCU, BHs off: a request for a QP number no QP has. */
static void vhca_ghost_rx(struct vhca_dev *vdev, const struct vhca_pkt *pkt,
			  struct sk_buff *skb)
{
	struct vhca_ghost *g;
	struct vhca_pkt ack = {
		.opcode = VHCA_OP_RC_ACKNOWLEDGE,
		.aeth_syndrome = vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID),
	};
	struct ib_global_route grh;
	union ib_gid sgid, dgid;
	struct sk_buff *out;
	void *payload;

	/* SEND and WRITE requests only (RC opcodes below READ's). */
	if (pkt->opcode >= VHCA_OP_RC_RDMA_READ_REQUEST)
		return;
	g = xa_load(&vdev->ghost_xa, pkt->dqpn);
	if (!g || time_after(jiffies, g->expires) ||
	    vhca_psn_diff(pkt->psn, g->resp_psn) >= 0)
		return;
	vhca_net_rx_gids(skb, &sgid, &dgid);
	if (memcmp(&sgid, &g->grh.dgid, sizeof(sgid)))
		return;
	ack.dqpn = g->dest_qpn;
	ack.psn = vhca_psn_add(g->resp_psn, -1);
	ack.aeth_msn = g->resp_msn;
	grh = g->grh;
	grh.sgid_attr = rdma_get_gid_attr(&vdev->ibdev, VHCA_PORT,
					  grh.sgid_index);
	if (IS_ERR(grh.sgid_attr))
		return;
	out = vhca_build(vdev, &ack, &payload);
	if (out) {
		atomic64_inc(&vdev->counters[VHCA_CNT_DUP_REQUESTS]);
		vhca_net_xmit(vdev, &grh, g->sport, out);
	}
	rdma_put_gid_attr(grh.sgid_attr);
}

static void vhca_ghost_free(struct vhca_dev *vdev, unsigned long qpn)
{
	struct vhca_ghost *g = xa_erase(&vdev->ghost_xa, qpn);

	if (g) {
		kfree_rcu(g, rcu);
		atomic_dec(&vdev->n_ghosts);
	}
}

static void vhca_ghost_gc(struct work_struct *work)
{
	struct vhca_dev *vdev = container_of(to_delayed_work(work),
					     struct vhca_dev, ghost_gc);
	unsigned long qpn, next = 0;
	struct vhca_ghost *g;

	xa_for_each(&vdev->ghost_xa, qpn, g) {
		if (time_after(jiffies, g->expires))
			vhca_ghost_free(vdev, qpn);
		else if (!next || time_before(g->expires, next))
			next = g->expires;
	}
	if (next)
		queue_delayed_work(system_wq, &vdev->ghost_gc,
				   time_after(next, jiffies) ?
				   next - jiffies + 1 : 1);
}

/*
 * The QP is being destroyed, its engine stopped: leave a ghost when its
 * responder received anything.
 */
void vhca_engine_qp_linger(struct vhca_qp *qp)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	unsigned long linger = msecs_to_jiffies(READ_ONCE(qp_linger_ms));
	struct vhca_ghost *g, *old;
	unsigned long flags;

	if (!linger || qp->ibqp.qp_type != IB_QPT_RC ||
	    atomic_inc_return(&vdev->n_ghosts) > VHCA_GHOSTS_MAX)
		goto out;
	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		goto out;
	spin_lock_irqsave(&qp->rq_lock, flags);
	if ((qp->state == IB_QPS_RTR || qp->state == IB_QPS_RTS ||
	     qp->state == IB_QPS_SQD) && qp->resp_psn != qp->attr.rq_psn) {
		g->grh = qp->attr.ah_attr.grh;
		g->grh.sgid_attr = NULL;
		g->dest_qpn = qp->attr.dest_qp_num;
		g->resp_psn = qp->resp_psn;
		g->resp_msn = qp->resp_msn;
		g->sport = vhca_qp_sport(qp);
		g->expires = jiffies + linger;
	}
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	if (!g->expires) {
		kfree(g);
		goto out;
	}
	old = xa_store(&vdev->ghost_xa, qp->ibqp.qp_num, g, GFP_KERNEL);
	if (xa_is_err(old)) {
		kfree(g);
		goto out;
	}
	if (old) {
		kfree_rcu(old, rcu);
		atomic_dec(&vdev->n_ghosts);
	}
	queue_delayed_work(system_wq, &vdev->ghost_gc, linger + 1);
	return;
out:
	atomic_dec(&vdev->n_ghosts);
}

void vhca_engine_dev_init(struct vhca_dev *vdev)
{
	xa_init(&vdev->ghost_xa);
	INIT_DELAYED_WORK(&vdev->ghost_gc, vhca_ghost_gc);
}

/* The device is going: no QP and no receive is left. */
void vhca_engine_dev_fini(struct vhca_dev *vdev)
{
	unsigned long qpn;
	struct vhca_ghost *g;

	cancel_delayed_work_sync(&vdev->ghost_gc);
	xa_for_each(&vdev->ghost_xa, qpn, g)
		vhca_ghost_free(vdev, qpn);
	xa_destroy(&vdev->ghost_xa);
}

/* ---- receive ---- */

/*
 * A RoCEv2 packet for vdev, from the wire or delivered locally (the same
 * packet either way): linear, skb->data at the BTH, skb->len bytes through
 * the ICRC (already checked on the wire path); the IP and UDP headers
 * precede it (vhca_net_rx_gids()).  Consumes skb.  BHs off, under RCU.
 */
void vhca_engine_rx(struct vhca_dev *vdev, struct sk_buff *skb)
{
	const struct vhca_pkt_opinfo *info;
	struct vhca_pkt pkt;
	struct vhca_qp *qp;

	if (vhca_pkt_parse(skb->data, skb->len, &pkt))
		goto drop;
	info = vhca_pkt_opinfo(pkt.opcode);
	qp = xa_load(&vdev->qp_xa, pkt.dqpn);
	if (!qp) {
		vhca_ghost_rx(vdev, &pkt, skb);
		goto drop;
	}
	if (READ_ONCE(qp->dying))
		goto drop;
	if (qp->ibqp.qp_type != IB_QPT_RC) {
		vhca_ud_rx(qp, &pkt, skb, info->hdr_len);
		goto drop;
	}
	/* RC opcodes only (transport 0), UD ones went to vhca_ud_rx(). */
	if (pkt.opcode > VHCA_OP_RC_ACKNOWLEDGE)
		goto drop;

	if (pkt.opcode >= VHCA_OP_RC_RDMA_READ_RESPONSE_FIRST &&
	    pkt.opcode <= VHCA_OP_RC_ACKNOWLEDGE)
		vhca_comp_rx(qp, &pkt, skb, info->hdr_len);
	else
		vhca_resp_rx(qp, &pkt, info->flags, skb, info->hdr_len);
drop:
	kfree_skb(skb);
}

/* ---- QP lifecycle ---- */

int vhca_engine_qp_init(struct vhca_qp *qp)
{
	INIT_WORK(&qp->tx_work, qp->ibqp.qp_type == IB_QPT_RC ?
		  vhca_req_work : vhca_ud_work);
	timer_setup(&qp->rexmit_timer, vhca_rexmit_timer, 0);
	hrtimer_init(&qp->db_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	qp->db_timer.function = vhca_db_timer;
	if (qp->ibqp.qp_type != IB_QPT_RC || !qp->sq.count)
		return 0;
	qp->swqe = kvcalloc(qp->sq.count, sizeof(*qp->swqe), GFP_KERNEL);
	return qp->swqe ? 0 : -ENOMEM;
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
	timer_shutdown_sync(&qp->rexmit_timer);
	hrtimer_cancel(&qp->db_timer);
	spin_lock_irqsave(&qp->rq_lock, flags);
	vhca_rmsg_close(&qp->rmsg);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	kvfree(qp->swqe);
}

/*
 * State changes as they concern the engine; under both queue locks with
 * the state already set.
 */
void vhca_engine_qp_state(struct vhca_qp *qp)
{
	u32 i;

	/* The requester is idle: the next post_send kicks. */
	qp->db_state = VHCA_DB_AWAKE;
	qp->db_answer = false;
	vhca_db_wakeup_flag(qp, true);
	switch (qp->state) {
	case IB_QPS_RTR:
		qp->resp_psn = qp->attr.rq_psn;
		qp->resp_msn = 0;
		qp->nak_sent = false;
		break;
	case IB_QPS_RTS:
		qp->req_psn = qp->attr.sq_psn;
		if (!qp->swqe)
			break;
		qp->comp_psn = qp->attr.sq_psn;
		qp->read_retried = false;
		qp->acked_psn = qp->attr.sq_psn;
		qp->retry_left = qp->attr.retry_cnt;
		qp->rnr_left = qp->attr.rnr_retry;
		break;
	case IB_QPS_ERR:
	case IB_QPS_RESET:
		del_timer(&qp->rexmit_timer);
		vhca_rmsg_close(&qp->rmsg);
		qp->sq_next = qp->sq_tail;
		qp->sq_pkt = 0;
		qp->db_seen = qp->sq_tail;
		for (i = 0; qp->swqe && i < qp->sq.count; i++)
			qp->swqe[i].fetched = false;
		break;
	default:
		break;
	}
}
