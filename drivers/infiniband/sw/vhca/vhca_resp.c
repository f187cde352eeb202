// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC responder (softirq, rq_lock): checks the PSN (duplicates are
 * acknowledged again, READs answered again within a READ it holds; a gap
 * is NAKed once), places SEND payload into receive WQEs and WRITE payload
 * into the MR its rkey names (looked up per packet) after checking PD,
 * bounds and remote access, and acknowledges the last packet of every
 * message and every packet that asks; a SEND with Invalidate invalidates
 * the fast-registration MR its IETH names at its last packet.  An atomic
 * executes once, its result kept in a responder resource for the
 * duplicates, which get the same answer.  READs are answered from the MR by
 * the QP's work item (process context), a bounded pass at a time, with
 * the requests that come meanwhile held behind their responses.
 */
#include <linux/err.h>
#include <linux/skbuff.h>

#include "vhca_engine.h"

/*
 * A request's payload: a packet's (skb at off), or a local requester's
 * (src from src_off: direct placement, npkts packets' worth, no skb; its
 * answer, an ACK or NAK, goes in *ack instead of a packet).
 */
struct vhca_resp_in {
	struct sk_buff *skb;
	u32 off;
	struct vhca_src *src;
	u32 src_off;
	u32 npkts;
	struct vhca_pkt *ack;
};

/*
 * The responder's ACK, NAK or RNR NAK of a request (under rq_lock: the
 * AETH carries the MSN): a packet onto list, or for a local requester's
 * run the same fields in *in->ack, which it hands to its completer.
 */
static void vhca_resp_answer(struct vhca_qp *qp, const struct vhca_resp_in *in,
			     u8 syndrome, u32 psn, struct sk_buff_head *list)
{
	if (!in->ack) {
		vhca_tx_queue_ack(qp, syndrome, psn, list);
		return;
	}
	*in->ack = (struct vhca_pkt){
		.opcode = IB_OPCODE_RC_ACKNOWLEDGE,
		.dqpn = qp->attr.dest_qp_num,
		.psn = psn,
		.aeth_syndrome = syndrome,
		.aeth_msn = qp->resp.msn,
	};
}

/* The message ends; a receive WQE it did not complete stays (UC). */
void vhca_rmsg_close(struct vhca_rmsg *msg)
{
	if (msg->wqe) {
		msg->active = false;
		msg->send = false;
		msg->offset = 0;
		msg->rkey = 0;
		msg->va = 0;
		msg->left = 0;
	} else {
		memset(msg, 0, sizeof(*msg));
	}
}

/*
 * The receive WQE of the message: the one a dropped UC message left, or
 * the next of the RQ or SRQ.  False when there is none.
 */
static bool vhca_resp_recv_wqe(struct vhca_qp *qp, struct vhca_rmsg *msg,
			       bool *bad)
{
	*bad = false;
	if (!msg->wqe)
		msg->wqe = vhca_wqe_take_recv(qp, msg, bad);
	return msg->wqe;
}

static void vhca_resp_complete(struct vhca_qp *qp, struct vhca_rmsg *msg,
			       const struct vhca_pkt *pkt, u8 status,
			       enum ib_wc_opcode opcode)
{
	struct vhca_cqe cqe = {
		.wr_id = msg->rwqe.wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = msg->offset,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = qp->attr.dest_qp_num,
	};

	msg->wqe = false;

	if (pkt->opcode == IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE ||
	    pkt->opcode == IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE ||
	    pkt->opcode == IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE ||
	    pkt->opcode == IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE) {
		cqe.flags |= VHCA_CQE_WITH_IMM;
		cqe.imm_data = pkt->imm;
	}
	if (status == IB_WC_SUCCESS &&
	    (pkt->opcode == IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE ||
	     pkt->opcode == IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE)) {
		cqe.flags |= VHCA_CQE_WITH_INV;
		cqe.invalidate_rkey = pkt->ieth_rkey;
	}
	/* XRC_TGT: the XRC SRQ's CQ (the request's: vhca_resp_xrc_srq()). */
	vhca_cq_post(to_vcq(qp->resp.xsrq ? qp->resp.xsrq->ibsrq.ext.cq :
				qp->ibqp.recv_cq), &cqe, pkt->se);
}

/* How a request fails: what its receive WQE says, and the NAK. */
enum vhca_resp_error {
	VHCA_RESP_BAD_WQE,		/* LOC_LEN_ERR, invalid request */
	VHCA_RESP_LEN_ERR,		/* LOC_LEN_ERR, invalid request */
	VHCA_RESP_PROT_ERR,		/* LOC_PROT_ERR, remote operational */
	VHCA_RESP_INVALID,		/* invalid request */
	VHCA_RESP_ACCESS,		/* remote access */
	VHCA_RESP_INV_ERR,		/* REM_INV_REQ_ERR, invalid request */
};

/*
 * UC: what the peer got wrong (a message longer than the receive buffer,
 * an rkey, access or bounds error of a WRITE) drops the message, its
 * receive WQE kept for the next one: -ECANCELED.  The receive WQE's own
 * errors (malformed, an SGE it may not write) complete it in error and
 * fail the QP: VHCA_NAK_REM_OP_ERR, for which no NAK is sent.
 */
static int vhca_resp_uc_fail(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			     enum vhca_resp_error error)
{
	struct vhca_rmsg *msg = &qp->resp.msg;

	if (error == VHCA_RESP_BAD_WQE || error == VHCA_RESP_PROT_ERR) {
		vhca_resp_complete(qp, msg, pkt, error == VHCA_RESP_BAD_WQE ?
				   IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR,
				   IB_WC_RECV);
		vhca_rmsg_close(msg);
		return VHCA_NAK_REM_OP_ERR;
	}
	vhca_rmsg_close(msg);
	return -ECANCELED;
}

/*
 * End the message in progress with error; returns the NAK code (UC: see
 * vhca_resp_uc_fail()).
 */
static int vhca_resp_fail(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			  enum vhca_resp_error error)
{
	struct vhca_rmsg *msg = &qp->resp.msg;
	int nak = VHCA_NAK_INVALID_REQ;

	if (qp->ibqp.qp_type == IB_QPT_UC)
		return vhca_resp_uc_fail(qp, pkt, error);
	switch (error) {
	case VHCA_RESP_BAD_WQE:
	case VHCA_RESP_LEN_ERR:
		vhca_resp_complete(qp, msg, pkt, IB_WC_LOC_LEN_ERR, IB_WC_RECV);
		break;
	case VHCA_RESP_PROT_ERR:
		vhca_resp_complete(qp, msg, pkt, IB_WC_LOC_PROT_ERR, IB_WC_RECV);
		nak = VHCA_NAK_REM_OP_ERR;
		break;
	case VHCA_RESP_INVALID:
		break;
	case VHCA_RESP_ACCESS:
		nak = VHCA_NAK_REM_ACCESS_ERR;
		break;
	case VHCA_RESP_INV_ERR:
		vhca_resp_complete(qp, msg, pkt, IB_WC_REM_INV_REQ_ERR,
				   IB_WC_RECV);
		break;
	}
	vhca_rmsg_close(msg);
	return nak;
}

/*
 * The FIRST or ONLY packet of a SEND or WRITE: a SEND takes its receive
 * WQE, a WRITE checks the QP's and the MR's remote-write access, PD and
 * bounds.  0, -EAGAIN (no receive WQE: RNR) or a NAK code.
 */
static int vhca_resp_begin(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			   bool send)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	struct vhca_rmsg *msg = &qp->resp.msg;
	struct vhca_mr *mr;
	bool bad;

	msg->active = true;
	msg->send = send;
	if (send) {
		if (!vhca_resp_recv_wqe(qp, msg, &bad)) {
			vhca_rmsg_close(msg);
			return -EAGAIN;
		}
		return bad ? vhca_resp_fail(qp, pkt, VHCA_RESP_BAD_WQE) : 0;
	}
	if (pkt->reth_len > VHCA_MAX_MSG_SIZE)
		return vhca_resp_fail(qp, pkt, VHCA_RESP_INVALID);
	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_WRITE))
		return vhca_resp_fail(qp, pkt, VHCA_RESP_ACCESS);
	if (pkt->reth_len) {
		mr = vhca_mr_get(vdev, pkt->reth_rkey);
		if (!mr)
			return vhca_resp_fail(qp, pkt, VHCA_RESP_ACCESS);
		bad = vhca_mr_check_remote_pd(mr, pkt->reth_rkey,
					      vhca_resp_pd(qp), qp->ibqp.qp_num,
					      pkt->reth_va, pkt->reth_len,
					      IB_ACCESS_REMOTE_WRITE);
		vhca_mr_put(mr);
		if (bad)
			return vhca_resp_fail(qp, pkt, VHCA_RESP_ACCESS);
	}
	msg->rkey = pkt->reth_rkey;
	msg->va = pkt->reth_va;
	msg->left = pkt->reth_len;
	return 0;
}

/*
 * The memory a request's payload goes to is ODP memory not resident (a
 * fault runs): an RNR NAK, the message left as it was for the packet sent
 * again (one this FIRST or ONLY packet began is undone; a receive WQE it
 * took stays in msg for it).
 */
static int vhca_resp_not_resident(struct vhca_qp *qp, u16 opflags)
{
	if (opflags & VHCA_PKT_FIRST)
		vhca_rmsg_close(&qp->resp.msg);
	return -EAGAIN;
}

/*
 * A request's payload into the receive WQE or the MR.  0 or a NAK code,
 * -EAGAIN for RNR (vhca_resp_not_resident()), or -EREMOTEIO when a local
 * requester's memory could not be read (its error: the message stays as
 * it was, for its packets).
 */
static int vhca_resp_place(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			   u16 opflags, const struct vhca_resp_in *in)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	struct vhca_rmsg *msg = &qp->resp.msg;
	struct vhca_mr *mr;
	int err;

	if (msg->send) {
		/* msg->offset counts no further than the largest message. */
		if ((u64)msg->offset + pkt->paylen > VHCA_MAX_MSG_SIZE)
			return vhca_resp_fail(qp, pkt, VHCA_RESP_LEN_ERR);
		if (in->src)
			err = vhca_sge_copy_src(vdev, vhca_resp_pd(qp),
						msg->sge, msg->rwqe.num_sge,
						msg->offset, in->src,
						in->src_off, pkt->paylen,
						IB_ACCESS_LOCAL_WRITE);
		else
			err = vhca_sge_copy_skb(vdev, vhca_resp_pd(qp),
						msg->sge, msg->rwqe.num_sge,
						msg->offset, in->skb, in->off,
						pkt->paylen, VHCA_COPY_TO_MR,
						IB_ACCESS_LOCAL_WRITE);
		if (err && in->src && in->src->failed)
			return -EREMOTEIO;
		if (err == -EAGAIN)
			return vhca_resp_not_resident(qp, opflags);
		if (err)
			return vhca_resp_fail(qp, pkt, err == -EINVAL ?
					      VHCA_RESP_LEN_ERR :
					      VHCA_RESP_PROT_ERR);
	} else if (pkt->paylen) {
		if (pkt->paylen > msg->left)
			return vhca_resp_fail(qp, pkt, VHCA_RESP_INVALID);
		/*
		 * Looked up per packet, not held across the message: a peer
		 * that stops mid-message cannot keep the MR from being
		 * deregistered, and one deregistered since refuses the rest.
		 */
		mr = vhca_mr_get(vdev, msg->rkey);
		if (!mr)
			return vhca_resp_fail(qp, pkt, VHCA_RESP_ACCESS);
		err = vhca_mr_check_remote_pd(mr, msg->rkey, vhca_resp_pd(qp),
					      qp->ibqp.qp_num, msg->va,
					      pkt->paylen,
					      IB_ACCESS_REMOTE_WRITE);
		if (!err && in->src)
			err = vhca_mr_copy_src(mr, msg->rkey, msg->va, in->src,
					       in->src_off, pkt->paylen);
		else if (!err)
			err = vhca_mr_copy_skb(mr, msg->rkey, msg->va, in->skb,
					       in->off, pkt->paylen,
					       VHCA_COPY_TO_MR);
		vhca_mr_put(mr);
		if (err && in->src && in->src->failed)
			return -EREMOTEIO;
		if (err == -EAGAIN)
			return vhca_resp_not_resident(qp, opflags);
		if (err)
			return vhca_resp_fail(qp, pkt, VHCA_RESP_ACCESS);
		msg->va += pkt->paylen;
		msg->left -= pkt->paylen;
	}
	msg->offset += pkt->paylen;
	return 0;
}

static bool vhca_resp_write_imm_last(u8 opcode)
{
	return opcode == IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE ||
	       opcode == IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
}

/*
 * The receive WQE of a WRITE with immediate, taken before its last
 * payload lands: without one, the RNR NAK leaves the message as it was
 * (one begun by this ONLY packet undone), for the packet sent again.  A
 * malformed one completes in error, as a SEND's does.  0, -EAGAIN or a
 * NAK code.
 */
static int vhca_resp_take_imm_wqe(struct vhca_qp *qp,
				  const struct vhca_pkt *pkt, u16 opflags)
{
	struct vhca_rmsg *msg = &qp->resp.msg;
	bool bad;

	if (vhca_resp_recv_wqe(qp, msg, &bad))
		return bad ? vhca_resp_fail(qp, pkt, VHCA_RESP_BAD_WQE) : 0;
	if (opflags & VHCA_PKT_FIRST)
		vhca_rmsg_close(msg);
	return -EAGAIN;
}

/*
 * The LAST or ONLY packet: a WRITE's length check, a SEND with
 * Invalidate's invalidation, the receive completion, and the MSN counts
 * the message.  The R_Key is the
 * peer's word: only a VALID fast-registration MR of this QP's PD, under
 * that key, is invalidated; anything else fails the receive WQE with
 * REM_INV_REQ_ERR, as rxe's responder does, and is NAKed as an invalid
 * request.  0 or a NAK code.
 */
static int vhca_resp_end(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			 u16 opflags)
{
	struct vhca_rmsg *msg = &qp->resp.msg;
	u8 op = pkt->opcode;

	/*
	 * A WRITE ends with its RETH's length placed, no byte short: a
	 * shorter one is an invalid request, its receive WQE (of a WRITE
	 * with immediate) completed in error, as rxe does.
	 */
	if (!msg->send && msg->left)
		return vhca_resp_fail(qp, pkt, msg->wqe ? VHCA_RESP_INV_ERR :
						      VHCA_RESP_INVALID);
	if ((opflags & VHCA_PKT_IETH) &&
	    vhca_mr_invalidate(to_vdev(qp->ibqp.device), vhca_resp_pd(qp),
			       pkt->ieth_rkey, &qp->ibqp))
		return vhca_resp_fail(qp, pkt, VHCA_RESP_INV_ERR);
	if (msg->send)
		vhca_resp_complete(qp, msg, pkt, IB_WC_SUCCESS, IB_WC_RECV);
	else if (vhca_resp_write_imm_last(op))
		vhca_resp_complete(qp, msg, pkt, IB_WC_SUCCESS,
				   IB_WC_RECV_RDMA_WITH_IMM);
	qp->resp.msn = vhca_pkt_msn_next(qp->resp.msn, op);
	vhca_rmsg_close(msg);
	return 0;
}

/*
 * Execute one in-order request (a packet, or a local requester's run of
 * them).  Returns 0, or -EAGAIN for RNR (no receive WQE, or ODP memory
 * not resident), -EREMOTEIO (see
 * vhca_resp_place()), or a positive NAK code.
 */
static int vhca_resp_exec(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			  u16 opflags, const struct vhca_resp_in *in, u32 npsn,
			  struct sk_buff_head *list)
{
	struct vhca_rmsg *msg = &qp->resp.msg;
	bool send = pkt->opcode <= IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE ||
		    (opflags & VHCA_PKT_IETH);
	int ret;

	/* No message is longer than the IBTA's 2^31 bytes (nor its PSNs). */
	if (pkt->opcode == IB_OPCODE_RC_RDMA_READ_REQUEST)
		return msg->active || pkt->reth_len > VHCA_MAX_MSG_SIZE ?
		       VHCA_NAK_INVALID_REQ : vhca_resp_read(qp, pkt, npsn);
	if (opflags & VHCA_PKT_ATMETH)
		return msg->active ? VHCA_NAK_INVALID_REQ :
				     vhca_resp_atomic_eth(qp, pkt, list);
	if (pkt->opcode == IB_OPCODE_RC_ATOMIC_WRITE)
		return msg->active || !VHCA_ATOMIC_WRITE_CAP ?
		       VHCA_NAK_INVALID_REQ :
		       vhca_resp_atomic_write(qp, pkt, in->skb, in->off, list);
	if (pkt->opcode == IB_OPCODE_RC_FLUSH)
		return msg->active || !VHCA_FLUSH_CAP ?
		       VHCA_NAK_INVALID_REQ : vhca_resp_flush(qp, pkt, list);

	/* A message starts with FIRST/ONLY and goes on with its own kind. */
	if (!!(opflags & VHCA_PKT_FIRST) == msg->active ||
	    (msg->active && msg->send != send))
		return VHCA_NAK_INVALID_REQ;
	if (opflags & VHCA_PKT_FIRST) {
		ret = vhca_resp_begin(qp, pkt, send);
		if (ret)
			return ret;
	}
	if (vhca_resp_write_imm_last(pkt->opcode)) {
		ret = vhca_resp_take_imm_wqe(qp, pkt, opflags);
		if (ret)
			return ret;
	}
	ret = vhca_resp_place(qp, pkt, opflags, in);
	if (ret)
		return ret;
	return opflags & VHCA_PKT_LAST ? vhca_resp_end(qp, pkt, opflags) : 0;
}

/*
 * XRC_TGT: the request names an XRC SRQ of the QP's domain (the receive
 * WQE, the CQ and the PD of its memory accesses), the same for every
 * packet of a message.  A READ keeps the number: its responses, built
 * later, look the SRQ up again (vhca_resp_rd.c).  0 with qp->resp.xsrq
 * set and referenced for this request, or a NAK code.  Under rq_lock.
 */
static int vhca_resp_xrc_srq(struct vhca_qp *qp, const struct vhca_pkt *pkt)
{
	struct vhca_rmsg *msg = &qp->resp.msg;

	if (msg->active && msg->xrc_srqn != pkt->xrc_srqn)
		return VHCA_NAK_INVALID_REQ;
	qp->resp.xsrq = vhca_xsrq_get(to_vdev(qp->ibqp.device),
				      pkt->xrc_srqn, qp->xrcd);
	if (!qp->resp.xsrq)
		return VHCA_NAK_INVALID_REQ;
	msg->xrc_srqn = pkt->xrc_srqn;
	return 0;
}

/*
 * check_psn: true for the request expected next.  A gap is NAKed once
 * (for what is missing); a duplicate is acknowledged again, a READ
 * answered again.
 */
static bool vhca_resp_check_psn(struct vhca_qp *qp, const struct vhca_pkt *pkt,
				u32 npsn, struct sk_buff_head *list)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	s32 diff = vhca_psn_diff(pkt->psn, qp->resp.psn);

	if (diff > 0) {
		atomic64_inc(&vdev->counters[VHCA_CNT_RX_OUT_OF_WINDOW]);
		if (!qp->resp.nak_sent) {
			qp->resp.nak_sent = true;
			vhca_tx_queue_ack(qp,
					  vhca_aeth_nak(VHCA_NAK_PSN_SEQ_ERR),
					  qp->resp.psn, list);
		}
		return false;
	}
	if (diff < 0) {
		atomic64_inc(&vdev->counters[VHCA_CNT_DUP_REQUESTS]);
		if (pkt->opcode == IB_OPCODE_RC_RDMA_READ_REQUEST)
			vhca_resp_read_again(qp, pkt, npsn);
		else if ((vhca_pkt_opinfo(pkt->opcode)->flags &
			  VHCA_PKT_ATMETH) ||
			 pkt->opcode == IB_OPCODE_RC_ATOMIC_WRITE ||
			 pkt->opcode == IB_OPCODE_RC_FLUSH)
			vhca_resp_atomic_again(qp, pkt, list);
		else
			vhca_tx_queue_ack(qp,
					  vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID),
					  vhca_psn_add(qp->resp.psn, -1), list);
		return false;
	}
	return true;
}

/*
 * The IBTA's payload lengths of a SEND or WRITE request packet, or of a
 * local requester's run of npkts of them: FIRST and MIDDLE a full path MTU
 * each; LAST one byte at least and ONLY none at least, neither more than
 * the path MTU (a run: all of its packets full but the last).  A WRITE's
 * total, its RETH's length, is checked as it lands (vhca_resp_place(),
 * vhca_resp_end()).
 */
static bool vhca_resp_len_ok(const struct vhca_pkt *pkt, u16 opflags,
			     u32 mtu, u32 npkts)
{
	u64 full = (u64)mtu * npkts;

	if (!(opflags & VHCA_PKT_PAYLOAD))
		return true;
	if (!(opflags & VHCA_PKT_LAST))
		return pkt->paylen == full;
	if ((opflags & VHCA_PKT_FIRST) && npkts == 1)
		return pkt->paylen <= mtu;
	return pkt->paylen <= full && pkt->paylen + (u64)mtu > full;
}

/* Whether READ responses are to go or requests wait behind them. */
static bool vhca_resp_more(struct vhca_qp *qp)
{
	unsigned long flags;
	bool more;

	spin_lock_irqsave(&qp->rq_lock, flags);
	more = vhca_resp_holding(qp);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	return more;
}

/*
 * A request for the responder of qp: a packet, as it arrived (held: from
 * the backlog, its turn come), or a local requester's run of packets (in
 * src set: direct placement).  While READ responses are to go, later
 * requests wait behind them, in order: their ACKs and NAKs must not pass
 * the responses.  A local run is taken only by a QP that takes requests,
 * holds none, and expects its first PSN, and only if the requester's
 * memory could be read: false otherwise, with nothing changed, and the
 * requester sends those packets instead, which meet every other case
 * (duplicates, gaps, the backlog) as packets do.
 */
static bool vhca_resp_handle(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			     u16 opflags, const struct vhca_resp_in *in,
			     bool held)
{
	u32 mtu = vhca_qp_mtu(qp), npsn = in->npkts;
	struct sk_buff_head list;
	unsigned long flags;
	bool fatal = false;
	bool taken = true;
	bool reply;
	int ret;

	/*
	 * The end of a SEND or WRITE message: the send doorbell sleeps
	 * before the process can see the message (vhca_db_expire()).
	 */
	if ((pkt->opcode < IB_OPCODE_RC_RDMA_READ_REQUEST ||
	     (opflags & VHCA_PKT_IETH)) &&
	    (opflags & VHCA_PKT_LAST) && qp->sq.count)
		vhca_db_expire(qp, true);

	__skb_queue_head_init(&list);
	spin_lock_irqsave(&qp->rq_lock, flags);
	if (in->src && (!vhca_qp_receives(qp) || vhca_resp_holding(qp) ||
			pkt->psn != qp->resp.psn)) {
		taken = false;
		goto out;
	}
	if (!vhca_qp_receives(qp))
		goto out;
	if (!held && vhca_resp_holding(qp)) {
		if (skb_queue_len(&qp->resp.backlog) < VHCA_RESP_BACKLOG)
			__skb_queue_tail(&qp->resp.backlog, skb_get(in->skb));
		goto out;
	}
	if (pkt->opcode == IB_OPCODE_RC_RDMA_READ_REQUEST)
		npsn = vhca_pkt_npkts(pkt->reth_len, mtu);
	if (!vhca_resp_len_ok(pkt, opflags, mtu, in->npkts)) {
		/* Malformed: dropped, as if lost. */
		atomic64_inc(&to_vdev(qp->ibqp.device)->counters[VHCA_CNT_RX_MALFORMED]);
		goto out;
	}

	if (!vhca_resp_check_psn(qp, pkt, npsn, &list))
		goto out;

	ret = qp->ibqp.qp_type == IB_QPT_XRC_TGT ?
	      vhca_resp_xrc_srq(qp, pkt) : 0;
	if (!ret)
		ret = vhca_resp_exec(qp, pkt, opflags, in, npsn, &list);
	/* The XRC SRQ is held for this request only. */
	vhca_xsrq_put(qp->resp.xsrq);
	qp->resp.xsrq = NULL;
	if (ret == -EREMOTEIO) {
		/* A message this run began is not begun. */
		if (opflags & VHCA_PKT_FIRST)
			vhca_rmsg_close(&qp->resp.msg);
		taken = false;
		goto out;
	}
	if (ret == -EAGAIN) {
		vhca_resp_answer(qp, in,
				 vhca_aeth_rnr_nak(qp->attr.min_rnr_timer),
				 pkt->psn, &list);
		goto out;
	}
	if (ret > 0) {
		vhca_resp_answer(qp, in, vhca_aeth_nak(ret), pkt->psn, &list);
		fatal = true;
		goto out;
	}
	qp->resp.nak_sent = false;
	qp->resp.psn = vhca_psn_add(pkt->psn, npsn);
	/* READs, atomics and FLUSHes are answered with their responses. */
	if (pkt->ackreq && pkt->opcode != IB_OPCODE_RC_RDMA_READ_REQUEST &&
	    pkt->opcode != IB_OPCODE_RC_ATOMIC_WRITE &&
	    pkt->opcode != IB_OPCODE_RC_FLUSH &&
	    !(opflags & VHCA_PKT_ATMETH))
		vhca_resp_answer(qp, in,
				 vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID),
				 vhca_psn_add(pkt->psn, npsn - 1), &list);
out:
	reply = vhca_resp_rd_oldest(qp);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	vhca_tx_list(qp, &list);
	if (fatal) {
		vhca_qp_fatal(qp, IB_WC_SUCCESS);
	} else if (reply && !held) {
		/*
		 * A READ request pays for the first pass at once: a READ of
		 * up to VHCA_RESP_READ_BUDGET packets needs no worker (which
		 * busy-polling processes may keep waiting past a short
		 * retransmit timeout, and whose wakeup would take the CPU
		 * from the process waiting for the responses); the rest goes
		 * to the work item.  A pass that could not run because
		 * another runs is left to that one's caller, which looks for
		 * work once it is done.
		 */
		if (pkt->opcode != IB_OPCODE_RC_RDMA_READ_REQUEST ||
		    (vhca_resp_read_pass(qp, false) && vhca_resp_more(qp)))
			vhca_engine_kick(qp);
	}
	return taken;
}

void vhca_resp_rx(struct vhca_qp *qp, const struct vhca_pkt *pkt,
		  u16 opflags, struct sk_buff *skb, u32 off)
{
	struct vhca_resp_in in = { .skb = skb, .off = off, .npkts = 1 };

	vhca_resp_handle(qp, pkt, opflags, &in, false);
}

bool vhca_resp_local(struct vhca_qp *qp, const struct vhca_pkt *pkt,
		     u32 npkts, struct vhca_src *src, u32 src_off,
		     struct vhca_pkt *ack)
{
	struct vhca_resp_in in = {
		.src = src, .src_off = src_off, .npkts = npkts, .ack = ack,
	};

	return vhca_resp_handle(qp, pkt, vhca_pkt_opinfo(pkt->opcode)->flags,
				&in, false);
}

/*
 * UC: the message in progress is dropped, and what follows up to the next
 * FIRST or ONLY; a receive WQE it took stays for the next message.
 */
static void vhca_resp_uc_drop(struct vhca_qp *qp)
{
	/* Counted once a message, at its first packet dropped. */
	if (!qp->resp.uc_drop)
		atomic64_inc(&to_vdev(qp->ibqp.device)->counters[VHCA_CNT_UC_DROPS]);
	vhca_rmsg_close(&qp->resp.msg);
	qp->resp.uc_drop = true;
}

void vhca_resp_uc_rx(struct vhca_qp *qp, const struct vhca_pkt *hdr,
		     u16 opflags, struct sk_buff *skb, u32 off)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	struct vhca_rmsg *msg = &qp->resp.msg;
	struct vhca_resp_in in = { .skb = skb, .off = off, .npkts = 1 };
	struct vhca_pkt pkt = *hdr;
	struct sk_buff_head list;
	unsigned long flags;
	bool fatal = false;
	bool send;
	s32 diff;
	int ret;

	/* RC's operation: what the responder's helpers go by. */
	pkt.opcode &= VHCA_PKT_OP_MASK;
	send = pkt.opcode <= IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE;
	/* See vhca_resp_handle(). */
	if ((opflags & VHCA_PKT_LAST) && qp->sq.count)
		vhca_db_expire(qp, true);

	__skb_queue_head_init(&list);
	spin_lock_irqsave(&qp->rq_lock, flags);
	if (!vhca_qp_receives(qp))
		goto out;
	diff = vhca_psn_diff(pkt.psn, qp->resp.psn);
	if (diff < 0) {
		/* From the past: this packet only is dropped. */
		atomic64_inc(&vdev->counters[VHCA_CNT_DUP_REQUESTS]);
		goto out;
	}
	if (diff > 0) {
		/* Packets were lost: the message they belonged to is too. */
		atomic64_inc(&vdev->counters[VHCA_CNT_RX_OUT_OF_WINDOW]);
		vhca_resp_uc_drop(qp);
	}
	qp->resp.psn = vhca_psn_add(pkt.psn, 1);
	if (opflags & VHCA_PKT_FIRST) {
		/* A new message; one still open lost its LAST. */
		vhca_rmsg_close(msg);
		qp->resp.uc_drop = false;
	} else if (qp->resp.uc_drop || !msg->active || msg->send != send) {
		vhca_resp_uc_drop(qp);
		goto out;
	}
	if (!vhca_resp_len_ok(&pkt, opflags, vhca_qp_mtu(qp), 1)) {
		atomic64_inc(&vdev->counters[VHCA_CNT_RX_MALFORMED]);
		vhca_resp_uc_drop(qp);
		goto out;
	}
	/* Only an atomic puts a packet on list: UC has none. */
	ret = vhca_resp_exec(qp, &pkt, opflags, &in, 1, &list);
	/* -EAGAIN: no receive WQE (no RNR on UC); -ECANCELED: refused. */
	if (ret < 0)
		vhca_resp_uc_drop(qp);
	else if (ret > 0)
		fatal = true;
out:
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	if (fatal)
		vhca_qp_fatal(qp, IB_WC_SUCCESS);
}

/* A request from the backlog, in the receive path's context. */
static void vhca_resp_handle_held(struct vhca_qp *qp, struct sk_buff *skb)
{
	struct vhca_resp_in in = { .skb = skb, .npkts = 1 };
	const struct vhca_pkt_opinfo *info;
	struct vhca_pkt pkt;

	/* It was parsed once already: the same bytes parse the same. */
	if (!vhca_pkt_parse(skb->data, skb->len, &pkt)) {
		info = vhca_pkt_opinfo(pkt.opcode);
		pkt.opcode = vhca_pkt_xrc_to_rc(pkt.opcode);
		in.off = info->hdr_len;
		local_bh_disable();
		rcu_read_lock();
		vhca_resp_handle(qp, &pkt, info->flags, &in, true);
		rcu_read_unlock();
		local_bh_enable();
	}
	kfree_skb(skb);
}

/**
 * vhca_resp_run() - the responder's part of an RC QP's work item
 * @qp: the QP
 *
 * Process context.  One pass of READ responses; once none are left to go,
 * the requests held behind them, in order, until one is a READ again or
 * VHCA_RESP_READ_BUDGET of them ran.  One work item at a time runs held
 * requests, and requests that come meanwhile are held too: none overtakes
 * the one running, which the responder would NAK as a gap.  A work item
 * that finds another running them leaves them to it.
 *
 * Return: true when work is left (the caller queues the work item again).
 */
bool vhca_resp_run(struct vhca_qp *qp)
{
	unsigned int budget = VHCA_RESP_READ_BUDGET;
	struct sk_buff *skb = NULL;
	unsigned long flags;
	bool more;

	/* Another pass runs: its caller kicks the work item after it. */
	if (!vhca_resp_read_pass(qp, true))
		return false;
	for (;;) {
		spin_lock_irqsave(&qp->rq_lock, flags);
		if (qp->resp.draining) {
			/* The other work item runs them, and looks again. */
			spin_unlock_irqrestore(&qp->rq_lock, flags);
			return false;
		}
		more = vhca_resp_holding(qp);
		if (budget && !vhca_resp_rd_oldest(qp))
			skb = __skb_dequeue(&qp->resp.backlog);
		qp->resp.draining = !!skb;
		spin_unlock_irqrestore(&qp->rq_lock, flags);
		if (!skb)
			return more;
		budget--;
		vhca_resp_handle_held(qp, skb);
		skb = NULL;
		spin_lock_irqsave(&qp->rq_lock, flags);
		qp->resp.draining = false;
		spin_unlock_irqrestore(&qp->rq_lock, flags);
	}
}
