// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC requester: copies each send WQE once from the ring into the QP's
 * private array, validates the copy, gives it its PSNs and builds its
 * packets, gathering the payload from the local MRs; keeps the window of
 * packets in flight, fences and the limit of READs and atomics; executes the local
 * operations (REG_MR, LOCAL_INV) in send-queue order; rewinds (go-back-N from a
 * PSN) for the completer and the retransmit timer.  Under sq_lock, in the
 * passes that vhca_send.c runs (the work item per QP, the kick system
 * call, the doorbell's timer).
 *
 * The UC requester is the same without what acknowledgements drive: SEND
 * and WRITE only, no window, no retransmit timer; a WQE completes as soon
 * as its last packet is built (its payload copied into the packets).
 */
#include <linux/err.h>
#include <linux/skbuff.h>

#include "vhca_engine.h"

/*
 * The retransmit timeout: 4.096 us * 2^timeout, doubled for each timeout
 * in a row without a response making progress (retry_cnt - retry_left):
 * a responder slower than the timeout gets the time it needs instead of
 * ever more retransmissions.
 */
unsigned long vhca_req_timeout(const struct vhca_qp *qp)
{
	u8 backoff = qp->attr.retry_cnt > qp->req.retry_left ?
		     qp->attr.retry_cnt - qp->req.retry_left : 0;
	unsigned long j;
	u64 us;

	if (!qp->attr.timeout) {
		j = msecs_to_jiffies(VHCA_TIMEOUT_DEFAULT_MS);
	} else {
		us = (4096ULL << qp->attr.timeout) / 1000;
		j = max(usecs_to_jiffies(us),
			msecs_to_jiffies(VHCA_TIMEOUT_MIN_MS));
	}
	return j << min_t(u8, backoff, VHCA_TIMEOUT_BACKOFF_MAX);
}

/* Fences: a WQE waits for every READ and atomic before it to complete. */
static bool vhca_req_reads_pending(struct vhca_qp *qp, u32 end)
{
	u32 i;

	for (i = qp->sq_tail; i != end; i++)
		if (vhca_wr_rd_atomic(vhca_qp_swqe(qp, i)->hdr.opcode))
			return true;
	return false;
}

/*
 * A bind of a memory window, any QP's: read from the ring once, executed
 * once.  A failed bind completes with MW_BIND_ERR (and fails the QP).
 */
static int vhca_req_bind_mw(struct vhca_qp *qp, struct vhca_swqe *wqe,
			    const struct vhca_send_wqe *slot)
{
	struct vhca_mw_bind bind = {
		.mw_rkey = READ_ONCE(slot->bind.mw_rkey),
		.new_rkey = READ_ONCE(slot->bind.new_rkey),
		.mr_lkey = READ_ONCE(slot->bind.mr_lkey),
		.access = READ_ONCE(slot->bind.access),
		.addr = READ_ONCE(slot->bind.addr),
		.length = READ_ONCE(slot->bind.length),
	};
	int err;

	wqe->hdr.bind.mw_rkey = bind.mw_rkey;
	err = vhca_mw_bind(to_vdev(qp->ibqp.device), &qp->ibqp, &bind);
	wqe->wc_status = err ? IB_WC_MW_BIND_ERR : IB_WC_SUCCESS;
	return err;
}

/*
 * A local operation, executed once, when fetched: REG_MR, LOCAL_INV and
 * BIND_MW take effect in send-queue order, for the WQEs after them.  A
 * user QP's REG_MR fails (fetched as any unknown opcode) and its LOCAL_INV
 * takes a window's key only: user processes have no fast MRs.  A LOCAL_INV waits
 * until every WQE before it completed (the IBTA's local invalidate fence,
 * mandatory here as in rxe: a WQE sent before it may have to gather its
 * payload again, a READ still scatters into its MR); with
 * IB_SEND_FENCE, a REG_MR waits for the READs before it.  The WQE takes
 * no PSN (last_psn is the one before its first), so an ACK of what
 * precedes it completes it too.  False while it waits (not fetched:
 * read again from the ring then).
 */
static bool vhca_req_local(struct vhca_qp *qp, u32 index,
			   const struct vhca_send_wqe *slot)
{
	struct vhca_swqe *wqe = vhca_qp_swqe(qp, index);
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	const struct ib_pd *pd = qp->ibqp.pd;
	int err;

	if (wqe->hdr.opcode == VHCA_WR_LOCAL_INV ? index != qp->sq_tail :
	    (wqe->hdr.flags & VHCA_WQE_FENCE) &&
	    vhca_req_reads_pending(qp, index))
		return false;
	wqe->fetched = true;
	wqe->len = 0;
	wqe->first_psn = qp->req.psn;
	wqe->last_psn = vhca_psn_add(qp->req.psn, -1);
	if (wqe->hdr.opcode == VHCA_WR_BIND_MW) {
		err = vhca_req_bind_mw(qp, wqe, slot);
		if (err)
			ibdev_dbg(&vdev->ibdev,
				  "QP %u: BIND_MW of key %#x refused: %d\n",
				  qp->ibqp.qp_num, wqe->hdr.bind.mw_rkey, err);
		return true;
	}
	if (wqe->hdr.opcode == VHCA_WR_REG_MR) {
		wqe->hdr.reg.key = READ_ONCE(slot->reg.key);
		wqe->hdr.reg.access = READ_ONCE(slot->reg.access);
		err = vhca_mr_fast_reg(vdev, pd, wqe->hdr.reg.key,
				       wqe->hdr.reg.access);
		wqe->wc_status = err ? IB_WC_MW_BIND_ERR : IB_WC_SUCCESS;
	} else if (qp->uctx) {
		err = vhca_mw_invalidate(vdev, pd, wqe->hdr.invalidate_rkey);
		wqe->wc_status = err ? IB_WC_LOC_QP_OP_ERR : IB_WC_SUCCESS;
	} else {
		err = vhca_mr_invalidate(vdev, pd, wqe->hdr.invalidate_rkey,
					 NULL);
		wqe->wc_status = err ? IB_WC_LOC_QP_OP_ERR : IB_WC_SUCCESS;
	}
	if (err)
		ibdev_dbg(&vdev->ibdev, "QP %u: %s of key %#x refused: %d\n",
			  qp->ibqp.qp_num,
			  wqe->hdr.opcode == VHCA_WR_REG_MR ? "REG_MR" :
			  "LOCAL_INV",
			  wqe->hdr.opcode == VHCA_WR_REG_MR ?
			  wqe->hdr.reg.key : wqe->hdr.invalidate_rkey, err);
	return true;
}

static bool vhca_req_is_local(u8 opcode)
{
	return opcode == VHCA_WR_REG_MR || opcode == VHCA_WR_LOCAL_INV ||
	       opcode == VHCA_WR_BIND_MW;
}

/*
 * An opcode the QP's transport has: UC has SEND and WRITE only, RC ATOMIC
 * WRITE and FLUSH only where the kernel's verbs have them (vhca_compat.h).
 */
static bool vhca_req_opcode_ok(const struct vhca_qp *qp, u8 opcode)
{
	if (qp->ibqp.qp_type == IB_QPT_UC)
		return opcode == VHCA_WR_SEND || opcode == VHCA_WR_SEND_WITH_IMM ||
		       opcode == VHCA_WR_RDMA_WRITE ||
		       opcode == VHCA_WR_RDMA_WRITE_WITH_IMM;
	if (opcode == VHCA_WR_ATOMIC_WRITE)
		return VHCA_ATOMIC_WRITE_CAP;
	if (opcode == VHCA_WR_FLUSH)
		return VHCA_FLUSH_CAP;
	return opcode <= VHCA_WR_SEND_WITH_INV || vhca_wr_rd_atomic(opcode);
}

/*
 * Copy the WQE at index from the ring and check it.  A WQE the device
 * cannot execute keeps a failed wc_status and is completed in error when
 * its turn comes.  The copy takes the SGEs or inline bytes of a WQE that
 * the QP's caps allow, which its slot has room for (vhca_swqe_stride()),
 * and nothing of one they do not.  False when it is a local operation
 * that waits (see vhca_req_local()).  Under sq_lock.
 */
static bool vhca_req_fetch(struct vhca_qp *qp, u32 index)
{
	struct vhca_swqe *wqe = vhca_qp_swqe(qp, index);
	const struct vhca_send_wqe *slot = vhca_ring_slot(&qp->sq, index);
	const struct vhca_sge *sge = vhca_wqe_read_send(qp, slot, &wqe->hdr);
	u32 mtu = vhca_qp_mtu(qp), npsn, inline_len = wqe->hdr.inline_len;
	u8 num_sge = wqe->hdr.num_sge;
	u64 len = 0;

	/* Set below once the copy holds them. */
	wqe->hdr.num_sge = 0;
	wqe->hdr.inline_len = 0;
	if (vhca_req_is_local(wqe->hdr.opcode) &&
	    qp->ibqp.qp_type == IB_QPT_RC &&
	    (!qp->uctx || wqe->hdr.opcode != VHCA_WR_REG_MR))
		return vhca_req_local(qp, index, slot);
	wqe->hdr.rdma.remote_addr = READ_ONCE(slot->rdma.remote_addr);
	wqe->hdr.rdma.rkey = READ_ONCE(slot->rdma.rkey);
	if (vhca_wr_atomic(wqe->hdr.opcode) ||
	    wqe->hdr.opcode == VHCA_WR_ATOMIC_WRITE) {
		wqe->hdr.atomic.compare_add = READ_ONCE(slot->atomic.compare_add);
		wqe->hdr.atomic.swap = READ_ONCE(slot->atomic.swap);
	}
	if (wqe->hdr.opcode == VHCA_WR_FLUSH) {
		wqe->hdr.flush.type = READ_ONCE(slot->flush.type);
		wqe->hdr.flush.level = READ_ONCE(slot->flush.level);
		wqe->hdr.flush.length = READ_ONCE(slot->flush.length);
	}
	wqe->wc_status = IB_WC_SUCCESS;
	wqe->fetched = true;
	wqe->hdr.xrc_srqn = qp->ibqp.qp_type == IB_QPT_XRC_INI ?
			    READ_ONCE(slot->xrc_srqn) : 0;

	if (!vhca_req_opcode_ok(qp, wqe->hdr.opcode) ||
	    wqe->hdr.xrc_srqn & ~VHCA_PKT_QPN_MASK) {
		wqe->wc_status = IB_WC_LOC_QP_OP_ERR;
	} else if (wqe->hdr.opcode == VHCA_WR_ATOMIC_WRITE) {
		/* Its 8 bytes are atomic.swap: no SGEs, no inline data. */
		if (num_sge || (wqe->hdr.flags & VHCA_WQE_INLINE))
			wqe->wc_status = IB_WC_LOC_LEN_ERR;
		len = sizeof(u64);
	} else if (wqe->hdr.opcode == VHCA_WR_FLUSH) {
		/* Nothing moves: its range is in the request, not in SGEs. */
		if (num_sge || (wqe->hdr.flags & VHCA_WQE_INLINE) ||
		    wqe->hdr.flush.length > VHCA_MAX_MSG_SIZE)
			wqe->wc_status = IB_WC_LOC_LEN_ERR;
		else if (!wqe->hdr.flush.type ||
			 wqe->hdr.flush.type & ~(IB_FLUSH_GLOBAL |
						 IB_FLUSH_PERSISTENT) ||
			 wqe->hdr.flush.level > IB_FLUSH_MR)
			wqe->wc_status = IB_WC_LOC_QP_OP_ERR;
	} else if (wqe->hdr.flags & VHCA_WQE_INLINE) {
		if (inline_len > qp->max_inline ||
		    vhca_wr_no_payload(wqe->hdr.opcode)) {
			wqe->wc_status = IB_WC_LOC_LEN_ERR;
		} else {
			memcpy(wqe->data, sge, inline_len);
			wqe->hdr.inline_len = inline_len;
			len = inline_len;
		}
	} else if (num_sge > qp->max_send_sge) {
		wqe->wc_status = IB_WC_LOC_LEN_ERR;
	} else {
		len = vhca_wqe_read_sges(wqe->sge, sge, num_sge);
		wqe->hdr.num_sge = num_sge;
	}
	/* An atomic's SGEs take the 8 bytes it finds, no more, no less. */
	if (wqe->wc_status == IB_WC_SUCCESS &&
	    (len > VHCA_MAX_MSG_SIZE ||
	     (vhca_wr_atomic(wqe->hdr.opcode) && len != sizeof(u64))))
		wqe->wc_status = IB_WC_LOC_LEN_ERR;
	if (wqe->wc_status != IB_WC_SUCCESS)
		vhca_wqe_malformed(qp);
	wqe->len = wqe->wc_status == IB_WC_SUCCESS ? len : 0;

	npsn = vhca_pkt_npkts(wqe->len, mtu);
	wqe->first_psn = qp->req.psn;
	wqe->last_psn = vhca_psn_add(qp->req.psn, npsn - 1);
	if (wqe->wc_status == IB_WC_SUCCESS)
		qp->req.psn = vhca_psn_add(qp->req.psn, npsn);
	return true;
}

static u8 vhca_req_opcode(u8 wr, bool first, bool last)
{
	static const u8 send[4] = { IB_OPCODE_RC_SEND_MIDDLE,
		IB_OPCODE_RC_SEND_FIRST, IB_OPCODE_RC_SEND_LAST,
		IB_OPCODE_RC_SEND_ONLY };
	static const u8 write[4] = { IB_OPCODE_RC_RDMA_WRITE_MIDDLE,
		IB_OPCODE_RC_RDMA_WRITE_FIRST, IB_OPCODE_RC_RDMA_WRITE_LAST,
		IB_OPCODE_RC_RDMA_WRITE_ONLY };
	int i = first | last << 1;

	switch (wr) {
	case VHCA_WR_SEND_WITH_INV:
		if (last)
			return first ? IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE :
				       IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE;
		return send[i];
	case VHCA_WR_SEND_WITH_IMM:
		if (last)
			return first ? IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE :
				       IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE;
		fallthrough;
	case VHCA_WR_SEND:
		return send[i];
	case VHCA_WR_RDMA_WRITE_WITH_IMM:
		if (last)
			return first ? IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
				       IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE;
		fallthrough;
	case VHCA_WR_RDMA_WRITE:
		return write[i];
	case VHCA_WR_ATOMIC_CMP_AND_SWP:
		return IB_OPCODE_RC_COMPARE_SWAP;
	case VHCA_WR_ATOMIC_FETCH_AND_ADD:
		return IB_OPCODE_RC_FETCH_ADD;
	case VHCA_WR_ATOMIC_WRITE:
		return IB_OPCODE_RC_ATOMIC_WRITE;
	case VHCA_WR_FLUSH:
		return IB_OPCODE_RC_FLUSH;
	default:
		return IB_OPCODE_RC_RDMA_READ_REQUEST;
	}
}

/*
 * The fields of packets n to n + count - 1 of WQE wqe, as one packet: the
 * opcode of the run (FIRST, MIDDLE, LAST or ONLY: that of packet n alone
 * when count is 1), the first one's PSN, all of their payload; ackreq when
 * one of them asks: every VHCA_REQ_ACK_EVERY packets (the pass asks for
 * one on its last packet too, vhca_req_pass()).
 */
static void vhca_req_fill(struct vhca_qp *qp, const struct vhca_swqe *wqe,
			  u32 n, u32 count, struct vhca_pkt *pkt)
{
	bool rd_atomic = vhca_wr_rd_atomic(wqe->hdr.opcode);
	u32 mtu = vhca_qp_mtu(qp), npkts = vhca_pkt_npkts(wqe->len, mtu);
	bool first = n == 0, last = rd_atomic || n + count == npkts;
	bool uc = qp->ibqp.qp_type == IB_QPT_UC;

	*pkt = (struct vhca_pkt){
		/* UC's and XRC's opcodes: RC's, their own transport. */
		.opcode = vhca_req_opcode(wqe->hdr.opcode, first, last) |
			  vhca_qp_transport(qp),
		.xrc_srqn = wqe->hdr.xrc_srqn,
		.dqpn = qp->attr.dest_qp_num,
		.psn = vhca_psn_add(wqe->first_psn, n),
		.paylen = vhca_wr_no_payload(wqe->hdr.opcode) ? 0 :
			  min_t(u64, wqe->len - (u64)n * mtu, (u64)count * mtu),
		/* Nothing acknowledges UC. */
		.ackreq = !uc && (n + count) / VHCA_REQ_ACK_EVERY !=
				 n / VHCA_REQ_ACK_EVERY,
		.se = last && (wqe->hdr.flags & VHCA_WQE_SOLICITED),
		.imm = wqe->hdr.imm_data,
		.ieth_rkey = wqe->hdr.invalidate_rkey,
		.reth_va = wqe->hdr.rdma.remote_addr,
		.reth_rkey = wqe->hdr.rdma.rkey,
		/* A FLUSH's RETH names its range; it moves no payload. */
		.reth_len = wqe->hdr.opcode == VHCA_WR_FLUSH ?
			    wqe->hdr.flush.length : wqe->len,
		.feth_type = wqe->hdr.flush.type,
		.feth_level = wqe->hdr.flush.level,
		.atm_swap_add = wqe->hdr.opcode == VHCA_WR_ATOMIC_CMP_AND_SWP ?
				wqe->hdr.atomic.swap :
				wqe->hdr.atomic.compare_add,
		.atm_compare = wqe->hdr.atomic.compare_add,
	};
}

/* A READ partly answered already asks only for the rest again. */
static void vhca_req_read_rest(struct vhca_qp *qp, const struct vhca_swqe *wqe,
			       struct vhca_pkt *pkt)
{
	u32 done;

	if (wqe->hdr.opcode != VHCA_WR_RDMA_READ ||
	    wqe != vhca_qp_swqe(qp, qp->sq_tail) ||
	    !vhca_psn_after(qp->comp.psn, wqe->first_psn) ||
	    vhca_psn_after(qp->comp.psn, wqe->last_psn))
		return;
	done = vhca_psn_diff(qp->comp.psn, wqe->first_psn) * vhca_qp_mtu(qp);
	pkt->psn = qp->comp.psn;
	pkt->reth_va += done;
	pkt->reth_len -= done;
}

/*
 * Queue packet n of WQE wqe.  Returns 0, -EAGAIN when its local ODP
 * memory is not resident (nothing queued: a fault runs), or the work
 * completion status that fails the WQE (its local memory could not be
 * read).
 */
static int vhca_req_packet(struct vhca_qp *qp, struct vhca_swqe *wqe, u32 n,
			   struct sk_buff_head *list)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	u32 mtu = vhca_qp_mtu(qp);
	struct vhca_pkt pkt;
	struct sk_buff *skb;
	void *payload;
	int err = 0;

	vhca_req_fill(qp, wqe, n, 1, &pkt);
	vhca_req_read_rest(qp, wqe, &pkt);
	skb = vhca_tx_build(vdev, &pkt, &payload);
	if (IS_ERR(skb))
		return 0;	/* lost: the timer resends it */
	if (wqe->hdr.opcode == VHCA_WR_ATOMIC_WRITE)
		memcpy(payload, &wqe->hdr.atomic.swap, pkt.paylen);
	else if (wqe->hdr.flags & VHCA_WQE_INLINE)
		memcpy(payload, wqe->data + n * mtu, pkt.paylen);
	else if (pkt.paylen)
		err = vhca_sge_copy(vdev, qp->ibqp.pd, wqe->sge, wqe->hdr.num_sge,
				    (u64)n * mtu, payload, pkt.paylen,
				    VHCA_COPY_FROM_MR, 0);
	if (err) {
		kfree_skb(skb);
		return err == -EAGAIN ? -EAGAIN : err == -EINVAL ?
		       IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR;
	}
	__skb_queue_tail(list, skb);
	return 0;
}

void vhca_req_odp_wait(struct vhca_qp *qp)
{
	qp->req.rnr_wait = true;
	timer_delete(&qp->req.rexmit_timer);
	hrtimer_start(&qp->req.rnr_timer,
		      ns_to_ktime(VHCA_ODP_RETRY_US * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_SOFT);
}

/* Packets are in flight: a WQE sent, or one being sent, is unacknowledged. */
bool vhca_req_busy(const struct vhca_qp *qp)
{
	return qp->sq_tail != qp->req.next || qp->req.pkt;
}

/*
 * The PSN of the next packet the requester sends: in the WQE at sq_next
 * when that one was fetched (sent before a rewind), else a new one.  When
 * every slot of the ring is in flight, the slot at sq_next holds the
 * oldest WQE (sq_tail's), not the next one: the next PSN is then req.psn.
 */
u32 vhca_req_next_psn(struct vhca_qp *qp)
{
	struct vhca_swqe *wqe = vhca_qp_swqe(qp, qp->req.next);

	if (qp->req.next - qp->sq_tail == qp->sq.count || !wqe->fetched)
		return qp->req.psn;
	return vhca_psn_add(wqe->first_psn, qp->req.pkt);
}

/* READs and atomics in flight, which max_rd_atomic limits together. */
static u32 vhca_req_reads_in_flight(struct vhca_qp *qp)
{
	u32 i, n = 0;

	for (i = qp->sq_tail; i != qp->req.next; i++)
		n += vhca_wr_rd_atomic(vhca_qp_swqe(qp, i)->hdr.opcode);
	return n;
}

/*
 * Packets wait to be sent: WQEs past sq_next (new ones, or ones sent again
 * after a rewind, or held back by the window).  Under sq_lock.
 */
bool vhca_req_pending(struct vhca_qp *qp)
{
	u32 head = READ_ONCE(qp->recs.db->head[0]);

	return head != qp->req.next &&
	       vhca_ring_used(&qp->sq, head, qp->sq_tail) != U32_MAX;
}

/*
 * Direct placement: whether the requester may build a run of WQE wqe's
 * packets for the peer's responder to place from its memory, without
 * packets: an RC SEND or WRITE, or a READ's request (whose responses the
 * responder places likewise; atomics, ATOMIC WRITE and FLUSH go as
 * packets), with no packet in flight that a run could overtake (until
 * the peer acknowledged wire_end), to a peer not found remote.  Whether
 * the peer is local, the delivery finds out (vhca_req_deliver_segs()).
 */
static bool vhca_req_direct(struct vhca_qp *qp, const struct vhca_swqe *wqe)
{
	if (qp->ibqp.qp_type != IB_QPT_RC || qp->req.remote ||
	    (wqe->hdr.opcode != VHCA_WR_RDMA_READ &&
	     vhca_wr_rd_atomic(wqe->hdr.opcode)))
		return false;
	if (qp->req.wire &&
	    !vhca_psn_before(qp->comp.acked_psn, qp->req.wire_end))
		qp->req.wire = false;
	return !qp->req.wire;
}

/*
 * A run of WQE wqe's packets from req.pkt on, budget at most, for after the
 * pass (vhca_req_deliver_segs()): as many as the window and VHCA_REQ_SEG_BYTES
 * allow (one at least); a READ's is its one request (for what is not
 * answered yet).  Returns the packets it covers, 0 when the pass has built
 * as many runs as it can hold.
 */
static u32 vhca_req_seg(struct vhca_qp *qp, struct vhca_swqe *wqe, u32 budget)
{
	u32 mtu = vhca_qp_mtu(qp), n = qp->req.pkt, count = 1;
	struct vhca_req_seg *seg;

	if (qp->req.nsegs == VHCA_REQ_SEGS)
		return 0;
	if (wqe->hdr.opcode != VHCA_WR_RDMA_READ) {
		count = min3(vhca_pkt_npkts(wqe->len, mtu) - n, budget,
			     max_t(u32, 1, VHCA_REQ_SEG_BYTES / mtu));
		count = min_t(u32, count, VHCA_REQ_WINDOW -
			      vhca_psn_diff(vhca_req_next_psn(qp),
					    qp->comp.acked_psn));
	}
	seg = &qp->req.segs[qp->req.nsegs++];
	vhca_req_fill(qp, wqe, n, count, &seg->pkt);
	vhca_req_read_rest(qp, wqe, &seg->pkt);
	seg->npkts = count;
	seg->off = n * mtu;
	seg->wqe = wqe;
	return count;
}

/*
 * One requester pass: sends up to VHCA_REQ_BUDGET packets of the WQEs
 * the doorbell shows, onto list.  Under sq_lock, in the RTS state.
 * Returns true when the budget ran out with packets left to send; a WQE
 * that fails the QP leaves its status in *failed.
 */
bool vhca_req_pass(struct vhca_qp *qp, struct sk_buff_head *list,
		   u8 *failed)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	u32 mtu, head, used, budget = VHCA_REQ_BUDGET;
	bool uc = qp->ibqp.qp_type == IB_QPT_UC;
	struct vhca_swqe *wqe;
	bool kicked = qp->db.kicked;
	u32 sent;
	int status;

	mtu = vhca_qp_mtu(qp);
	qp->db.kicked = false;
	/* Pairs with the producer's release: WQEs before head are written. */
	head = smp_load_acquire(&qp->recs.db->head[0]);
	used = vhca_ring_used(&qp->sq, head, qp->sq_tail);
	if (used == U32_MAX)
		return false;	/* a head no producer could write: ignored */
	if (used < qp->db.seen - qp->sq_tail) {
		/*
		 * The head moved back over WQEs already announced (the
		 * engine may have sent them): no producer does that, and
		 * the requester would walk the ring's whole index space to
		 * meet the head again.  An error of the QP.
		 */
		vhca_wqe_malformed(qp);
		*failed = IB_WC_LOC_QP_OP_ERR;
		return false;
	}
	if (head != qp->db.seen) {
		/* New WQEs that no system call announced. */
		if (!kicked)
			atomic64_inc(&vdev->counters[VHCA_CNT_DB_RECORDS]);
		qp->db.seen = head;
	}

	while (qp->req.next != head && budget) {
		wqe = vhca_qp_swqe(qp, qp->req.next);
		if (!wqe->fetched && !vhca_req_fetch(qp, qp->req.next))
			break;
		if (wqe->wc_status != IB_WC_SUCCESS) {
			/* It fails once everything before it completed. */
			if (qp->req.next == qp->sq_tail)
				*failed = wqe->wc_status;
			break;
		}
		/* Executed: completes once everything before it did. */
		if (vhca_req_is_local(wqe->hdr.opcode)) {
			if (qp->req.next == qp->sq_tail)
				vhca_comp_wqe(qp, IB_WC_SUCCESS);
			else
				qp->req.next++;
			continue;
		}
		if (!uc &&
		    vhca_psn_diff(vhca_req_next_psn(qp), qp->comp.acked_psn) >=
		    VHCA_REQ_WINDOW)
			break;
		if (!qp->req.pkt && (wqe->hdr.flags & VHCA_WQE_FENCE) &&
		    vhca_req_reads_pending(qp, qp->req.next))
			break;
		if (!qp->req.pkt && vhca_wr_rd_atomic(wqe->hdr.opcode) &&
		    vhca_req_reads_in_flight(qp) >= max_t(u8, 1,
							  qp->attr.max_rd_atomic))
			break;
		/*
		 * Runs are placed before the pass's packets leave: none comes
		 * after a packet of this pass, which it would overtake.  The
		 * wire rule does not see that after a rewind below what the
		 * peer acknowledged (a READ's request sent again, a message
		 * after it acknowledged already).
		 */
		if (skb_queue_empty(list) && vhca_req_direct(qp, wqe)) {
			sent = vhca_req_seg(qp, wqe, budget);
			if (!sent)
				break;
		} else {
			status = vhca_req_packet(qp, wqe, qp->req.pkt, list);
			if (status == -EAGAIN) {
				vhca_req_odp_wait(qp);
				break;
			}
			if (status) {
				if (qp->req.next == qp->sq_tail)
					*failed = status;
				wqe->wc_status = status;
				break;
			}
			sent = 1;
			/* No run may overtake it until it is acknowledged. */
			qp->req.wire = true;
			qp->req.wire_end = vhca_psn_add(vhca_req_next_psn(qp), 1);
		}
		budget -= sent;
		qp->req.pkt += sent;
		if (vhca_wr_rd_atomic(wqe->hdr.opcode) ||
		    qp->req.pkt == vhca_pkt_npkts(wqe->len, mtu)) {
			qp->req.pkt = 0;
			/*
			 * UC: done once its last packet is built (its payload
			 * copied); no ACK will come.
			 */
			if (uc)
				vhca_comp_wqe(qp, IB_WC_SUCCESS);
			else
				qp->req.next++;
		}
	}
	/* The timeout counts from the last packet sent (RC). */
	if (uc)
		return !budget && qp->req.next != head;
	/*
	 * The last packet of the pass asks for an ACK (and those every
	 * VHCA_REQ_ACK_EVERY packets): one ACK completes the messages of a
	 * pass, not one each (a stream of small messages sends as many
	 * ACKs as requests otherwise).  Runs come before packets.
	 */
	if (!skb_queue_empty(list))
		vhca_pkt_set_ackreq(skb_peek_tail(list)->data);
	else if (qp->req.nsegs)
		qp->req.segs[qp->req.nsegs - 1].pkt.ackreq = true;
	if (budget != VHCA_REQ_BUDGET ||
	    (vhca_req_busy(qp) && !timer_pending(&qp->req.rexmit_timer)))
		mod_timer(&qp->req.rexmit_timer, jiffies + vhca_req_timeout(qp));
	return !budget && qp->req.next != head;
}

/*
 * Send again from psn on: the WQE holding it and all after it (a READ from
 * its request).  Under sq_lock, with WQEs outstanding.  Returns false when
 * nothing was sent from psn on.
 */
bool vhca_req_go_back(struct vhca_qp *qp, u32 psn)
{
	u32 i, end = qp->req.next + !!qp->req.pkt, mtu = vhca_qp_mtu(qp);
	struct vhca_swqe *wqe;
	s32 pkt;

	for (i = qp->sq_tail; i != end; i++) {
		wqe = vhca_qp_swqe(qp, i);
		if (!vhca_psn_before(wqe->last_psn, psn))
			break;
	}
	if (i == end)
		return false;	/* nothing sent from psn on */
	wqe = vhca_qp_swqe(qp, i);
	pkt = vhca_psn_diff(psn, wqe->first_psn);
	qp->req.next = i;
	qp->req.pkt = vhca_wr_rd_atomic(wqe->hdr.opcode) || pkt < 0 ? 0 :
		     min_t(u32, pkt, vhca_pkt_npkts(wqe->len, mtu) - 1);
	wqe = vhca_qp_swqe(qp, qp->sq_tail);
	if (wqe->hdr.opcode != VHCA_WR_RDMA_READ ||
	    vhca_psn_before(qp->comp.psn, wqe->first_psn) ||
	    vhca_psn_after(qp->comp.psn, wqe->last_psn))
		qp->comp.psn = wqe->first_psn;
	return true;
}

void vhca_req_rewind(struct vhca_qp *qp, u32 psn)
{
	if (vhca_req_go_back(qp, psn))
		atomic64_inc(&to_vdev(qp->ibqp.device)->counters[VHCA_CNT_RETRANSMITS]);
}
