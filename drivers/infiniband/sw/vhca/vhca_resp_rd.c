// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC responder's resources (rq_lock): max_dest_rd_atomic of them,
 * shared by READs and atomics.  A READ request takes one and is answered
 * from its MR by the QP's work item, a bounded pass at a time; a duplicate
 * READ is answered again only within the READ a resource holds.  An
 * atomic executes once, at its request, its result kept in a resource for
 * the duplicates, which get the same answer.
 */
#include <linux/err.h>
#include <linux/skbuff.h>

#include "vhca_engine.h"

/*
 * The PD a READ is checked against: the QP's, or an XRC_TGT QP's, that of
 * the XRC SRQ its request named, looked up again each time (NULL once it
 * is destroyed: the rest of the READ is refused).  That SRQ, which holds
 * the PD, is in *srq, referenced until vhca_xsrq_put(*srq).
 */
static const struct ib_pd *vhca_rd_pd(struct vhca_qp *qp, u32 xrc_srqn,
				      struct vhca_srq **srq)
{
	*srq = NULL;
	if (qp->ibqp.qp_type != IB_QPT_XRC_TGT)
		return qp->ibqp.pd;
	*srq = vhca_xsrq_get(to_vdev(qp->ibqp.device), xrc_srqn, qp->xrcd);
	return *srq ? (*srq)->ibsrq.pd : NULL;
}

/*
 * The MR a READ names, referenced and checked for remote read through
 * the XRC SRQ xrc_srqn's PD or the QP's, or NULL.
 */
static struct vhca_mr *vhca_resp_read_mr(struct vhca_qp *qp,
					 const struct vhca_pkt *pkt,
					 u32 xrc_srqn)
{
	const struct ib_pd *pd;
	struct vhca_srq *srq;
	struct vhca_mr *mr;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_READ))
		return NULL;
	mr = vhca_mr_get(to_vdev(qp->ibqp.device), pkt->reth_rkey);
	if (!mr)
		return NULL;
	pd = vhca_rd_pd(qp, xrc_srqn, &srq);
	if (vhca_mr_check_remote_pd(mr, pkt->reth_rkey, pd, qp->ibqp.qp_num,
				    pkt->reth_va, pkt->reth_len,
				    IB_ACCESS_REMOTE_READ)) {
		vhca_mr_put(mr);
		mr = NULL;
	}
	vhca_xsrq_put(srq);
	return mr;
}

/* The READ request pkt (its first or a duplicate) is what res answers. */
static void vhca_rd_reply_set(struct vhca_rd_res *res,
			      const struct vhca_pkt *pkt, u32 npkts)
{
	res->reply = (struct vhca_rd_reply){
		.psn = pkt->psn,
		.npkts = npkts,
		.va = pkt->reth_va,
		.len = pkt->reth_len,
	};
}

static bool vhca_rd_busy(const struct vhca_rd_res *res)
{
	return res->reply.sent < res->reply.npkts;
}

/* The busy READ resource whose reply comes first, or NULL. */
struct vhca_rd_res *vhca_resp_rd_oldest(struct vhca_qp *qp)
{
	struct vhca_rd_res *res, *oldest = NULL;
	u32 i;

	for (i = 0; i < qp->attr.max_dest_rd_atomic; i++) {
		res = &qp->resp.rd[i];
		if (vhca_rd_busy(res) &&
		    (!oldest ||
		     vhca_psn_before(res->reply.psn, oldest->reply.psn)))
			oldest = res;
	}
	return oldest;
}

/*
 * READ responses are to go, or requests wait behind them, or a work item
 * runs one that waited; rq_lock.
 */
bool vhca_resp_holding(struct vhca_qp *qp)
{
	return vhca_resp_rd_oldest(qp) || qp->resp.draining ||
	       !skb_queue_empty(&qp->resp.backlog);
}

/*
 * A responder resource for a new READ or atomic: the next one in turn that
 * is not sending READ responses (an atomic's is never busy: its result is
 * kept until the slot's turn comes again, for the duplicates), or NULL
 * when all max_dest_rd_atomic are (the requester broke its limit).
 */
static struct vhca_rd_res *vhca_resp_rd_take(struct vhca_qp *qp)
{
	u32 slots = qp->attr.max_dest_rd_atomic, i;
	struct vhca_rd_res *res;

	for (i = 0; i < slots; i++) {
		res = &qp->resp.rd[qp->resp.rd_next++ % slots];
		if (!vhca_rd_busy(res))
			return res;
	}
	return NULL;
}

/*
 * A new READ request: its MR checked, a READ resource that is not busy
 * taken (all max_dest_rd_atomic are: the requester broke its limit),
 * counted before its responses (which carry the MSN), answered by the
 * QP's work item (vhca_resp_run()).  0 or a NAK code.
 */
int vhca_resp_read(struct vhca_qp *qp, const struct vhca_pkt *pkt,
		   u32 npsn)
{
	struct vhca_mr *mr = vhca_resp_read_mr(qp, pkt, pkt->xrc_srqn);
	struct vhca_rd_res *res;

	if (!mr)
		return VHCA_NAK_REM_ACCESS_ERR;
	vhca_mr_put(mr);
	res = vhca_resp_rd_take(qp);
	if (!res)
		return VHCA_NAK_INVALID_REQ;
	qp->resp.msn = vhca_pkt_msn_next(qp->resp.msn, pkt->opcode);
	*res = (struct vhca_rd_res){
		.psn = pkt->psn,
		.npsn = npsn,
		.va = pkt->reth_va,
		.len = pkt->reth_len,
		.rkey = pkt->reth_rkey,
		.msn = qp->resp.msn,
		.xrc_srqn = pkt->xrc_srqn,
	};
	vhca_rd_reply_set(res, pkt, npsn);
	return 0;
}

/* The held READ whose responses took psn, or NULL. */
static struct vhca_rd_res *vhca_resp_rd_find(struct vhca_qp *qp, u32 psn)
{
	struct vhca_rd_res *res;
	u32 i;

	for (i = 0; i < qp->attr.max_dest_rd_atomic; i++) {
		res = &qp->resp.rd[i];
		if (!res->atomic && !vhca_psn_before(psn, res->psn) &&
		    vhca_psn_before(psn, vhca_psn_add(res->psn, res->npsn)))
			return res;
	}
	return NULL;
}

/*
 * A duplicate READ request is answered again only from the held READ whose
 * PSNs it falls in, and only for (a part of) what that READ asked: the same
 * rkey, within its range and its PSNs.  Its reply replaces the one the
 * resource was sending.  Anything else is dropped (a class D error),
 * never executed afresh.
 */
void vhca_resp_read_again(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			  u32 npsn)
{
	struct vhca_rd_res *res = vhca_resp_rd_find(qp, pkt->psn);
	struct vhca_mr *mr;

	if (!res || pkt->reth_rkey != res->rkey ||
	    pkt->xrc_srqn != res->xrc_srqn || pkt->reth_va < res->va ||
	    pkt->reth_len > res->len ||
	    pkt->reth_va - res->va > res->len - pkt->reth_len ||
	    vhca_psn_after(vhca_psn_add(pkt->psn, npsn),
			   vhca_psn_add(res->psn, res->npsn)))
		return;
	mr = vhca_resp_read_mr(qp, pkt, res->xrc_srqn);
	if (!mr)
		return;
	vhca_mr_put(mr);
	vhca_rd_reply_set(res, pkt, npsn);
}

/* A run of READ responses, for vhca_net_direct() to hand over. */
struct vhca_rd_run_arg {
	struct vhca_qp *qp;
	struct vhca_pkt rsp;		/* the run as one response */
	u32 npkts;			/* the responses it stands for */
	u32 bytes;			/* theirs, BTH through ICRC */
	struct vhca_src src;
	int run;			/* enum vhca_rd_run */
};

/*
 * Place a run of qp's READ responses in device dst's memory, through the
 * completer of its peer QP there (BHs off, RCU): only a connected RC QP
 * of that number whose peer is qp takes it, as only it takes the
 * responses (vhca_engine_rx()).  Counted as the responses would be,
 * delivered in the kernel, and in direct_packets.
 */
static bool vhca_resp_rd_place(struct vhca_dev *dst, void *arg)
{
	struct vhca_rd_run_arg *run = arg;
	struct vhca_qp *qp = run->qp, *peer;
	bool peer_ok;

	peer = vhca_handle_get(&dst->qp_xa, run->rsp.dqpn);
	if (!peer)
		return false;
	peer_ok = !READ_ONCE(peer->dying) &&
		  peer->ibqp.qp_type == IB_QPT_RC &&
		  vhca_net_direct_from(&qp->attr.ah_attr.grh, qp->ibqp.qp_num,
				       &peer->attr.ah_attr.grh,
				       peer->attr.dest_qp_num);
	if (peer_ok)
		run->run = vhca_comp_local_read(peer, &run->rsp, run->npkts,
						&run->src);
	vhca_handle_put(peer->handle);
	if (peer_ok)
		vhca_tx_count_direct(to_vdev(qp->ibqp.device), dst,
				     run->npkts, run->bytes);
	return peer_ok;
}

/*
 * Direct placement: responses i to i + n - 1 of reply, at most a run's
 * worth (VHCA_REQ_SEG_BYTES) of them, copied at once from mr (NULL for a
 * READ of no byte), checked through pd for at's rkey, into a local
 * requester's SGEs by its completer (vhca_comp_local_read()), without
 * packets.  Returns the responses it accounts for (placed, or came
 * already), 0 when the pass ends here (ODP memory not resident: without
 * may_fault the work item goes on, with it once faulted in already),
 * -ENODEV when the requester takes no run (packets from here),
 * -ECANCELED when it dropped the run as it would drop its packets (those
 * after it would come out of order: lost with it, the requester asks
 * again), or -EACCES.
 */
static int vhca_resp_read_run(struct vhca_qp *qp,
			      const struct vhca_rd_reply *reply,
			      const struct vhca_rd_res *at, struct vhca_mr *mr,
			      const struct ib_pd *pd, u32 i, u32 n,
			      bool may_fault)
{
	u32 mtu = vhca_qp_mtu(qp), index = reply->sent + i, count, aeths;
	struct vhca_rd_run_arg run = { .qp = qp };
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	u64 va = reply->va + (u64)index * mtu;
	bool first, last, faulted = false;

	count = min_t(u32, n, max_t(u32, 1, VHCA_REQ_SEG_BYTES / mtu));
	first = !index;
	last = index + count == reply->npkts;
	run.npkts = count;
	run.rsp = (struct vhca_pkt){
		.opcode = first ? (last ? IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY :
				   IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST) :
			  last ? IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST :
			  IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE,
		.dqpn = qp->attr.dest_qp_num,
		.psn = vhca_psn_add(reply->psn, index),
		.paylen = min_t(u64, reply->len - (u64)index * mtu,
				(u64)count * mtu),
		.aeth_syndrome = vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID),
		.aeth_msn = at->msn,
	};
	if (mr && vhca_mr_check_remote_pd(mr, at->rkey, pd, qp->ibqp.qp_num,
					  va, run.rsp.paylen,
					  IB_ACCESS_REMOTE_READ))
		return -EACCES;
	/* An AETH in the reply's first and last response (one if ONLY). */
	aeths = first + (last && reply->npkts > 1);
	run.bytes = count * (IB_BTH_BYTES + IB_ICRC_BYTES) +
		    aeths * sizeof(struct vhca_aeth) + run.rsp.paylen +
		    vhca_pkt_pad(run.rsp.paylen);
	for (;;) {
		run.src = (struct vhca_src){
			.vdev = vdev, .pd = pd, .mr = mr, .key = at->rkey,
			.va = va,
		};
		run.run = VHCA_RD_RUN_DROPPED;
		if (vhca_net_direct(vdev, &qp->attr.ah_attr.grh,
				    vhca_resp_rd_place, &run) <= 0)
			return -ENODEV;
		switch (run.run) {
		case VHCA_RD_RUN_PLACED:
		case VHCA_RD_RUN_DUP:
			return count;
		case VHCA_RD_RUN_DROPPED:
			return -ECANCELED;
		case VHCA_RD_RUN_SRC_AGAIN:
			/* A fault that fails refuses the rest. */
			if (!may_fault || faulted)
				return 0;
			if (vhca_odp_fault(mr, va, run.rsp.paylen, true))
				return -EACCES;
			faulted = true;
			break;
		default:
			return -EACCES;
		}
	}
}

/*
 * Build n responses of reply, from its next one on, from the MR of at's
 * rkey, checked through at's PD (both looked up again: an MR deregistered
 * or an XRC SRQ destroyed since the request refuses the rest), with at's
 * MSN, onto list; to a local requester of an RC QP, placed in runs
 * instead (vhca_resp_read_run()).  Returns how many were built or placed
 * (fewer when memory ran short: the requester reads again; or, at ODP
 * memory not resident, the next pass goes on: with may_fault, this one
 * faults it in first; all that are left when the requester dropped a
 * run), or -EACCES.
 */
static int vhca_resp_read_build(struct vhca_qp *qp,
				const struct vhca_rd_reply *reply,
				const struct vhca_rd_res *at, u32 n,
				bool may_fault, struct sk_buff_head *list)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	u32 mtu = vhca_qp_mtu(qp), rkey = at->rkey, i = 0, index;
	bool direct = qp->ibqp.qp_type == IB_QPT_RC;
	struct vhca_srq *srq = NULL;
	const struct ib_pd *pd = NULL;
	struct vhca_mr *mr = NULL;
	struct sk_buff *skb;
	void *payload;
	int err = 0;

	if (reply->len) {
		mr = vhca_mr_get(vdev, rkey);
		if (!mr)
			return -EACCES;
	}
	if (mr)
		pd = vhca_rd_pd(qp, at->xrc_srqn, &srq);
	while (i < n && !err) {
		struct vhca_pkt rsp = {
			.dqpn = qp->attr.dest_qp_num,
			.aeth_syndrome = vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID),
			.aeth_msn = at->msn,
		};
		u64 va;

		if (direct) {
			err = vhca_resp_read_run(qp, reply, at, mr, pd, i,
						 n - i, may_fault);
			if (err > 0) {
				i += err;
				err = 0;
				continue;
			}
			if (err == -ECANCELED) {
				i = reply->npkts - reply->sent;
				err = 0;
			}
			if (err != -ENODEV)
				break;
			direct = false;
			err = 0;
		}
		index = reply->sent + i;
		va = reply->va + (u64)index * mtu;
		rsp.psn = vhca_psn_add(reply->psn, index);
		rsp.paylen = vhca_pkt_seg_len(reply->len, mtu, index);
		rsp.opcode = reply->npkts == 1 ?
			     IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY :
			     !index ? IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST :
			     index == reply->npkts - 1 ?
			     IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST :
			     IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE;
		rsp.opcode |= vhca_qp_transport(qp);
		if (mr && vhca_mr_check_remote_pd(mr, rkey, pd,
						  qp->ibqp.qp_num, va,
						  rsp.paylen,
						  IB_ACCESS_REMOTE_READ)) {
			err = -EACCES;
			break;
		}
		skb = vhca_tx_build(vdev, &rsp, &payload);
		if (IS_ERR(skb))
			break;
		if (mr)
			err = vhca_mr_copy(mr, rkey, va, payload, rsp.paylen,
					   VHCA_COPY_FROM_MR);
		/* A fault that fails refuses the rest, as an access error. */
		if (err == -EAGAIN && may_fault) {
			err = vhca_odp_fault(mr, va, rsp.paylen, true);
			if (!err)
				err = vhca_mr_copy(mr, rkey, va, payload,
						   rsp.paylen, VHCA_COPY_FROM_MR);
		}
		if (err)
			kfree_skb(skb);
		else
			__skb_queue_tail(list, skb);
		if (err == -EAGAIN) {
			err = 0;
			break;
		}
		i++;
	}
	vhca_xsrq_put(srq);
	if (mr)
		vhca_mr_put(mr);
	return err < 0 ? -EACCES : i;
}

/*
 * One pass of READ responses: at most VHCA_RESP_READ_BUDGET of the busy
 * READ resource whose reply comes first, built without the QP's locks and
 * sent in order.  A reply that a duplicate replaced meanwhile starts
 * again; a refused one NAKs and fails the QP.  One pass at a time: the
 * receive path's first pass (vhca_resp_handle()) and the work item's
 * would otherwise both build the same responses from reply.sent, each
 * sending every packet of the READ, and interleave them.  False when
 * another pass runs: its caller kicks the work item once it is done.
 */
bool vhca_resp_read_pass(struct vhca_qp *qp, bool may_fault)
{
	struct sk_buff_head list;
	struct vhca_rd_reply reply;
	struct vhca_rd_res *res, at;
	unsigned long flags;
	bool fatal = false;
	int built;

	__skb_queue_head_init(&list);
	spin_lock_irqsave(&qp->rq_lock, flags);
	if (qp->resp.rd_pass) {
		spin_unlock_irqrestore(&qp->rq_lock, flags);
		return false;
	}
	res = vhca_resp_rd_oldest(qp);
	if (!res) {
		spin_unlock_irqrestore(&qp->rq_lock, flags);
		return true;
	}
	qp->resp.rd_pass = true;
	reply = res->reply;
	at = *res;
	spin_unlock_irqrestore(&qp->rq_lock, flags);

	built = vhca_resp_read_build(qp, &reply, &at,
				     min_t(u32, reply.npkts - reply.sent,
					   VHCA_RESP_READ_BUDGET), may_fault,
				     &list);

	spin_lock_irqsave(&qp->rq_lock, flags);
	if (res->reply.psn == reply.psn && res->reply.sent == reply.sent &&
	    res->reply.npkts == reply.npkts) {
		if (built < 0) {
			res->reply.sent = res->reply.npkts;
			vhca_tx_queue_ack(qp,
					  vhca_aeth_nak(VHCA_NAK_REM_ACCESS_ERR),
					  vhca_psn_add(reply.psn, reply.sent),
					  &list);
			fatal = true;
		} else {
			res->reply.sent += built;
		}
	}
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	vhca_tx_list(qp, &list);
	/* Sent before the next pass builds: responses leave in order. */
	spin_lock_irqsave(&qp->rq_lock, flags);
	qp->resp.rd_pass = false;
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	if (fatal)
		vhca_qp_fatal(qp, IB_WC_SUCCESS);
	return true;
}

/* The atomic whose request took psn, its result kept, or NULL. */
static struct vhca_rd_res *vhca_resp_atomic_find(struct vhca_qp *qp, u32 psn)
{
	struct vhca_rd_res *res;
	u32 i;

	for (i = 0; i < qp->attr.max_dest_rd_atomic; i++) {
		res = &qp->resp.rd[i];
		if (res->atomic && res->psn == psn)
			return res;
	}
	return NULL;
}

/*
 * The answer of the atomic that res holds, onto list: an ATOMIC
 * ACKNOWLEDGE with the value found, or for an ATOMIC WRITE or a FLUSH a
 * READ response without payload.
 */
static void vhca_resp_atomic_ack(struct vhca_qp *qp,
				 const struct vhca_rd_res *res,
				 struct sk_buff_head *list)
{
	struct vhca_pkt pkt = {
		.opcode = (res->no_value ?
			   IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY :
			   IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE) |
			  vhca_qp_transport(qp),
		.dqpn = qp->attr.dest_qp_num,
		.psn = res->psn,
		.aeth_syndrome = vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID),
		.aeth_msn = res->msn,
		.atm_orig = res->orig,
	};
	struct sk_buff *skb;
	void *payload;

	skb = vhca_tx_build(to_vdev(qp->ibqp.device), &pkt, &payload);
	if (!IS_ERR(skb))
		__skb_queue_tail(list, skb);
}

/*
 * A new atomic request: the QP's and the MR's access (remote atomic, or
 * remote write for an ATOMIC WRITE), PD and bounds checked (a misaligned
 * address is an invalid request, as the IBTA has it), executed once, its
 * result kept in a responder resource (one of max_dest_rd_atomic, which
 * READs and atomics share) and answered.
 * 0 or a NAK code.
 */
static int vhca_resp_atomic(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			    struct vhca_atomic atomic, int access,
			    struct sk_buff_head *list)
{
	struct vhca_rd_res *res;
	struct vhca_mr *mr;
	int err;

	if (!IS_ALIGNED(pkt->reth_va, sizeof(u64)))
		return VHCA_NAK_INVALID_REQ;
	if (!(qp->attr.qp_access_flags & access))
		return VHCA_NAK_REM_ACCESS_ERR;
	mr = vhca_mr_get(to_vdev(qp->ibqp.device), pkt->reth_rkey);
	if (!mr)
		return VHCA_NAK_REM_ACCESS_ERR;
	err = vhca_mr_check_remote_pd(mr, pkt->reth_rkey, vhca_resp_pd(qp),
				      qp->ibqp.qp_num, pkt->reth_va,
				      sizeof(u64), access);
	res = err ? NULL : vhca_resp_rd_take(qp);
	if (res)
		err = vhca_mr_atomic(mr, pkt->reth_rkey, pkt->reth_va, &atomic);
	vhca_mr_put(mr);
	/* ODP memory not resident: RNR NAK, the request sent again. */
	if (err == -EAGAIN)
		return -EAGAIN;
	if (!err && !res)
		return VHCA_NAK_INVALID_REQ;
	/*
	 * After the check: -EINVAL is a word not aligned in memory (an iova
	 * aligned in an MR whose iova and address differ mod 8), an invalid
	 * request as for a misaligned address; -EACCES a fast MR invalidated
	 * meanwhile.
	 */
	if (err)
		return res && err == -EINVAL ? VHCA_NAK_INVALID_REQ :
		       VHCA_NAK_REM_ACCESS_ERR;
	qp->resp.msn = vhca_pkt_msn_next(qp->resp.msn, pkt->opcode);
	*res = (struct vhca_rd_res){
		.psn = pkt->psn,
		.npsn = 1,
		.msn = qp->resp.msn,
		.atomic = true,
		.no_value = atomic.op == VHCA_ATOMIC_WRITE,
		.orig = atomic.orig,
	};
	vhca_resp_atomic_ack(qp, res, list);
	return 0;
}

/* A new CMP_SWAP or FETCH_ADD request (vhca_resp_atomic()). */
int vhca_resp_atomic_eth(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			 struct sk_buff_head *list)
{
	bool cmp_swap = pkt->opcode == IB_OPCODE_RC_COMPARE_SWAP;
	struct vhca_atomic atomic = {
		.op = cmp_swap ? VHCA_ATOMIC_CMP_SWAP : VHCA_ATOMIC_FETCH_ADD,
		.compare_add = cmp_swap ? pkt->atm_compare : pkt->atm_swap_add,
		.swap = pkt->atm_swap_add,
	};

	return vhca_resp_atomic(qp, pkt, atomic, IB_ACCESS_REMOTE_ATOMIC, list);
}

/*
 * A new ATOMIC WRITE request: its RETH names exactly the 8 bytes its
 * payload carries (anything else is an invalid request), stored with
 * remote write access, as rxe has it (vhca_resp_atomic()).
 */
int vhca_resp_atomic_write(struct vhca_qp *qp,
			   const struct vhca_pkt *pkt,
			   struct sk_buff *skb, u32 off,
			   struct sk_buff_head *list)
{
	struct vhca_atomic atomic = { .op = VHCA_ATOMIC_WRITE };

	/* The payload's 8 bytes land as they came, in memory order. */
	if (pkt->reth_len != sizeof(u64) || pkt->paylen != sizeof(u64) ||
	    skb_copy_bits(skb, off, &atomic.swap, sizeof(u64)))
		return VHCA_NAK_INVALID_REQ;
	return vhca_resp_atomic(qp, pkt, atomic, IB_ACCESS_REMOTE_WRITE, list);
}

/*
 * A new FLUSH request: the QP's and the MR's FLUSH access for each
 * placement type it names (no MR grants persistent FLUSH: no memory vhca
 * places into is persistent), PD checked, and its range within the MR
 * (IB_FLUSH_RANGE; IB_FLUSH_MR names the whole MR).  Then a full barrier:
 * what earlier requests placed, the engine's own stores in order, is
 * visible to every CPU before the answer leaves.  Kept and answered as an
 * ATOMIC WRITE is, a READ response without payload; a duplicate gets the
 * same answer (vhca_resp_atomic_again()).  0 or a NAK code.
 */
int vhca_resp_flush(struct vhca_qp *qp, const struct vhca_pkt *pkt,
		    struct sk_buff_head *list)
{
	u32 len = pkt->feth_level == IB_FLUSH_RANGE ? pkt->reth_len : 0;
	struct vhca_rd_res *res;
	struct vhca_mr *mr;
	int access = 0;
	int err;

	if (!pkt->feth_type ||
	    pkt->feth_type & ~(IB_FLUSH_GLOBAL | IB_FLUSH_PERSISTENT) ||
	    pkt->feth_level > IB_FLUSH_MR || pkt->paylen)
		return VHCA_NAK_INVALID_REQ;
	if (pkt->feth_type & IB_FLUSH_GLOBAL)
		access |= IB_ACCESS_FLUSH_GLOBAL;
	if (pkt->feth_type & IB_FLUSH_PERSISTENT)
		access |= IB_ACCESS_FLUSH_PERSISTENT;
	if ((qp->attr.qp_access_flags & access) != access)
		return VHCA_NAK_REM_ACCESS_ERR;
	mr = vhca_mr_get(to_vdev(qp->ibqp.device), pkt->reth_rkey);
	if (!mr)
		return VHCA_NAK_REM_ACCESS_ERR;
	err = vhca_mr_check_remote_pd(mr, pkt->reth_rkey, vhca_resp_pd(qp),
				      qp->ibqp.qp_num, pkt->reth_va, len,
				      access);
	vhca_mr_put(mr);
	if (err)
		return VHCA_NAK_REM_ACCESS_ERR;
	res = vhca_resp_rd_take(qp);
	if (!res)
		return VHCA_NAK_INVALID_REQ;
	/* Placed before: visible to all before the answer says it is. */
	smp_mb();
	qp->resp.msn = vhca_pkt_msn_next(qp->resp.msn, pkt->opcode);
	*res = (struct vhca_rd_res){
		.psn = pkt->psn,
		.npsn = 1,
		.msn = qp->resp.msn,
		.atomic = true,
		.no_value = true,
	};
	vhca_resp_atomic_ack(qp, res, list);
	return 0;
}

/*
 * A duplicate atomic request gets the answer its first got, from the
 * responder resource that kept it, and is never executed again; one whose
 * result is no longer kept (max_dest_rd_atomic READs and atomics came
 * since) is dropped.
 */
void vhca_resp_atomic_again(struct vhca_qp *qp,
			    const struct vhca_pkt *pkt,
			    struct sk_buff_head *list)
{
	struct vhca_rd_res *res = vhca_resp_atomic_find(qp, pkt->psn);

	if (res)
		vhca_resp_atomic_ack(qp, res, list);
}
