// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC responder (softirq, rq_lock): checks the PSN (duplicates are
 * acknowledged again, READs answered again within a READ it holds; a gap
 * is NAKed once), places SEND payload into receive WQEs and WRITE payload
 * into the MR its rkey names after checking PD, bounds and remote access,
 * answers READs from the MR, and acknowledges the last packet of every
 * message and every packet that asks.
 */
#include <linux/err.h>
#include <linux/skbuff.h>

#include "vhca_engine.h"

void vhca_rmsg_close(struct vhca_rmsg *msg)
{
	if (msg->mr)
		vhca_mr_put(msg->mr);
	memset(msg, 0, sizeof(*msg));
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

	if (pkt->opcode == IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE ||
	    pkt->opcode == IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE ||
	    pkt->opcode == IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE ||
	    pkt->opcode == IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE) {
		cqe.flags |= VHCA_CQE_WITH_IMM;
		cqe.imm_data = pkt->imm;
	}
	vhca_cq_post(to_vcq(qp->ibqp.recv_cq), &cqe, pkt->se);
}

/* The MR a READ names, referenced and checked for remote read, or NULL. */
static struct vhca_mr *vhca_resp_read_mr(struct vhca_qp *qp,
					 const struct vhca_pkt *pkt)
{
	struct vhca_mr *mr;

	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_READ))
		return NULL;
	mr = vhca_mr_get(to_vdev(qp->ibqp.device), pkt->reth_rkey);
	if (mr && vhca_mr_check(mr, qp->ibqp.pd, pkt->reth_va, pkt->reth_len,
				IB_ACCESS_REMOTE_READ)) {
		vhca_mr_put(mr);
		return NULL;
	}
	return mr;
}

/*
 * The responses to a READ from mr (whose reference this drops), from the
 * request's PSN on, onto list.  0 or a NAK code.
 */
static int vhca_resp_read_reply(struct vhca_qp *qp, const struct vhca_pkt *pkt,
				struct vhca_mr *mr, struct sk_buff_head *list)
{
	u32 mtu = vhca_qp_mtu(qp), npkts = vhca_pkt_npkts(pkt->reth_len, mtu);
	struct sk_buff *skb;
	void *payload;
	u32 i;
	int err = 0;

	for (i = 0; i < npkts; i++) {
		struct vhca_pkt rsp = {
			.dqpn = qp->attr.dest_qp_num,
			.psn = vhca_psn_add(pkt->psn, i),
			.paylen = vhca_pkt_seg_len(pkt->reth_len, mtu, i),
			.aeth_syndrome = vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID),
			.aeth_msn = qp->resp.msn,
		};

		rsp.opcode = npkts == 1 ? IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY :
			     !i ? IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST :
			     i == npkts - 1 ? IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST :
			     IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE;
		skb = vhca_tx_build(to_vdev(qp->ibqp.device), &rsp, &payload);
		if (IS_ERR(skb))
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
 * A new READ request: counted before its responses (which carry the MSN),
 * held for its duplicates, answered from the MR.  0 or a NAK code.
 */
static int vhca_resp_read(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			  u32 npsn, struct sk_buff_head *list)
{
	struct vhca_mr *mr = vhca_resp_read_mr(qp, pkt);
	u32 slots = qp->attr.max_dest_rd_atomic;
	struct vhca_rd_res *res;

	if (!mr)
		return VHCA_NAK_REM_ACCESS_ERR;
	qp->resp.msn = vhca_pkt_msn_next(qp->resp.msn, pkt->opcode);
	if (slots) {
		res = &qp->resp.rd[qp->resp.rd_next++ % slots];
		res->psn = pkt->psn;
		res->npsn = npsn;
		res->va = pkt->reth_va;
		res->len = pkt->reth_len;
		res->rkey = pkt->reth_rkey;
	}
	return vhca_resp_read_reply(qp, pkt, mr, list);
}

/* The held READ whose responses took psn, or NULL. */
static const struct vhca_rd_res *vhca_resp_rd_find(const struct vhca_qp *qp,
						   u32 psn)
{
	const struct vhca_rd_res *res;
	u32 i;

	for (i = 0; i < qp->attr.max_dest_rd_atomic; i++) {
		res = &qp->resp.rd[i];
		if (!vhca_psn_before(psn, res->psn) &&
		    vhca_psn_before(psn, vhca_psn_add(res->psn, res->npsn)))
			return res;
	}
	return NULL;
}

/*
 * A duplicate READ request is answered again only from the held READ whose
 * PSNs it falls in, and only for (a part of) what that READ asked: the same
 * rkey, within its range and its PSNs.  Anything else is dropped (a class D
 * error), never executed afresh.
 */
static void vhca_resp_read_again(struct vhca_qp *qp, const struct vhca_pkt *pkt,
				 u32 npsn, struct sk_buff_head *list)
{
	const struct vhca_rd_res *res = vhca_resp_rd_find(qp, pkt->psn);
	struct vhca_mr *mr;

	if (!res || pkt->reth_rkey != res->rkey || pkt->reth_va < res->va ||
	    pkt->reth_len > res->len ||
	    pkt->reth_va - res->va > res->len - pkt->reth_len ||
	    vhca_psn_after(vhca_psn_add(pkt->psn, npsn),
			   vhca_psn_add(res->psn, res->npsn)))
		return;
	mr = vhca_resp_read_mr(qp, pkt);
	if (mr)
		vhca_resp_read_reply(qp, pkt, mr, list);
}

/* How a request fails: what its receive WQE says, and the NAK. */
enum vhca_resp_error {
	VHCA_RESP_LEN_ERR,		/* LOC_LEN_ERR, invalid request */
	VHCA_RESP_PROT_ERR,		/* LOC_PROT_ERR, remote operational */
	VHCA_RESP_INVALID,		/* invalid request */
	VHCA_RESP_ACCESS,		/* remote access */
};

/* End the message in progress with error; returns the NAK code. */
static int vhca_resp_fail(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			  enum vhca_resp_error error)
{
	struct vhca_rmsg *msg = &qp->resp.msg;
	int nak = VHCA_NAK_INVALID_REQ;

	switch (error) {
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
	bool bad;

	msg->active = true;
	msg->send = send;
	if (send) {
		if (!vhca_wqe_take_recv(qp, msg, &bad)) {
			memset(msg, 0, sizeof(*msg));
			return -EAGAIN;
		}
		return bad ? vhca_resp_fail(qp, pkt, VHCA_RESP_LEN_ERR) : 0;
	}
	if (!(qp->attr.qp_access_flags & IB_ACCESS_REMOTE_WRITE))
		return vhca_resp_fail(qp, pkt, VHCA_RESP_ACCESS);
	msg->mr = pkt->reth_len ? vhca_mr_get(vdev, pkt->reth_rkey) : NULL;
	if (pkt->reth_len &&
	    (!msg->mr || vhca_mr_check(msg->mr, qp->ibqp.pd, pkt->reth_va,
				       pkt->reth_len, IB_ACCESS_REMOTE_WRITE)))
		return vhca_resp_fail(qp, pkt, VHCA_RESP_ACCESS);
	msg->va = pkt->reth_va;
	msg->left = pkt->reth_len;
	return 0;
}

/* A packet's payload into the receive WQE or the MR.  0 or a NAK code. */
static int vhca_resp_place(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			   struct sk_buff *skb, u32 off)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	struct vhca_rmsg *msg = &qp->resp.msg;
	int err;

	if (msg->send) {
		err = vhca_sge_copy_skb(vdev, qp->ibqp.pd, msg->sge,
					msg->rwqe.num_sge, msg->offset, skb,
					off, pkt->paylen, VHCA_COPY_TO_MR,
					IB_ACCESS_LOCAL_WRITE);
		if (err)
			return vhca_resp_fail(qp, pkt, err == -EINVAL ?
					      VHCA_RESP_LEN_ERR :
					      VHCA_RESP_PROT_ERR);
	} else if (pkt->paylen) {
		if (pkt->paylen > msg->left || !msg->mr)
			return vhca_resp_fail(qp, pkt, VHCA_RESP_INVALID);
		if (vhca_mr_copy_skb(msg->mr, msg->va, skb, off, pkt->paylen,
				     VHCA_COPY_TO_MR))
			return vhca_resp_fail(qp, pkt, VHCA_RESP_ACCESS);
		msg->va += pkt->paylen;
		msg->left -= pkt->paylen;
	}
	msg->offset += pkt->paylen;
	return 0;
}

/*
 * The LAST or ONLY packet: the receive completion (a WRITE with
 * immediate takes a receive WQE for it), and the MSN counts the message.
 * 0 or -EAGAIN.
 */
static int vhca_resp_end(struct vhca_qp *qp, const struct vhca_pkt *pkt)
{
	struct vhca_rmsg *msg = &qp->resp.msg;
	u8 op = pkt->opcode;
	bool bad;

	if (msg->send) {
		vhca_resp_complete(qp, msg, pkt, IB_WC_SUCCESS, IB_WC_RECV);
	} else if (op == IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE ||
		   op == IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE) {
		if (!vhca_wqe_take_recv(qp, msg, &bad)) {
			vhca_rmsg_close(msg);
			return -EAGAIN;
		}
		vhca_resp_complete(qp, msg, pkt, IB_WC_SUCCESS,
				   IB_WC_RECV_RDMA_WITH_IMM);
	}
	qp->resp.msn = vhca_pkt_msn_next(qp->resp.msn, op);
	vhca_rmsg_close(msg);
	return 0;
}

/*
 * Execute one in-order request packet.  Returns 0, or -EAGAIN for RNR
 * (no receive WQE), or a positive NAK code.
 */
static int vhca_resp_exec(struct vhca_qp *qp, const struct vhca_pkt *pkt,
			  u8 opflags, struct sk_buff *skb, u32 off, u32 npsn,
			  struct sk_buff_head *list)
{
	struct vhca_rmsg *msg = &qp->resp.msg;
	bool send = pkt->opcode <= IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE;
	int ret;

	if (pkt->opcode == IB_OPCODE_RC_RDMA_READ_REQUEST)
		return msg->active ? VHCA_NAK_INVALID_REQ :
				     vhca_resp_read(qp, pkt, npsn, list);

	/* A message starts with FIRST/ONLY and goes on with its own kind. */
	if (!!(opflags & VHCA_PKT_FIRST) == msg->active ||
	    (msg->active && msg->send != send))
		return VHCA_NAK_INVALID_REQ;
	if (opflags & VHCA_PKT_FIRST) {
		ret = vhca_resp_begin(qp, pkt, send);
		if (ret)
			return ret;
	}
	ret = vhca_resp_place(qp, pkt, skb, off);
	if (ret)
		return ret;
	return opflags & VHCA_PKT_LAST ? vhca_resp_end(qp, pkt) : 0;
}

/* A request packet for the responder of qp; in softirq. */
void vhca_resp_rx(struct vhca_qp *qp, const struct vhca_pkt *pkt,
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
	if (pkt->opcode < IB_OPCODE_RC_RDMA_READ_REQUEST &&
	    (opflags & VHCA_PKT_LAST) && qp->sq.count)
		vhca_db_expire(qp, true);

	__skb_queue_head_init(&list);
	spin_lock_irqsave(&qp->rq_lock, flags);
	if (qp->state != IB_QPS_RTR && qp->state != IB_QPS_RTS &&
	    qp->state != IB_QPS_SQD)
		goto out;
	if (pkt->opcode == IB_OPCODE_RC_RDMA_READ_REQUEST)
		npsn = vhca_pkt_npkts(pkt->reth_len, mtu);
	/* Payload of FIRST/MIDDLE packets is exactly one MTU. */
	if ((opflags & VHCA_PKT_PAYLOAD) && !(opflags & VHCA_PKT_LAST) &&
	    pkt->paylen != mtu)
		goto out;

	diff = vhca_psn_diff(pkt->psn, qp->resp.psn);
	if (diff > 0) {
		/* A gap: ask once for what is missing. */
		atomic64_inc(&vdev->counters[VHCA_CNT_RX_OUT_OF_WINDOW]);
		if (!qp->resp.nak_sent) {
			qp->resp.nak_sent = true;
			vhca_tx_queue_ack(qp,
					  vhca_aeth_nak(VHCA_NAK_PSN_SEQ_ERR),
					  qp->resp.psn, &list);
		}
		goto out;
	}
	if (diff < 0) {
		/* A duplicate: acknowledged again, READs answered again. */
		atomic64_inc(&vdev->counters[VHCA_CNT_DUP_REQUESTS]);
		if (pkt->opcode == IB_OPCODE_RC_RDMA_READ_REQUEST)
			vhca_resp_read_again(qp, pkt, npsn, &list);
		else
			vhca_tx_queue_ack(qp,
					  vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID),
					  vhca_psn_add(qp->resp.psn, -1),
					  &list);
		goto out;
	}

	ret = vhca_resp_exec(qp, pkt, opflags, skb, off, npsn, &list);
	if (ret == -EAGAIN) {
		vhca_tx_queue_ack(qp,
				  vhca_aeth_rnr_nak(qp->attr.min_rnr_timer),
				  pkt->psn, &list);
		goto out;
	}
	if (ret > 0) {
		vhca_tx_queue_ack(qp, vhca_aeth_nak(ret), pkt->psn, &list);
		fatal = true;
		goto out;
	}
	qp->resp.nak_sent = false;
	qp->resp.psn = vhca_psn_add(pkt->psn, npsn);
	if (pkt->ackreq && pkt->opcode != IB_OPCODE_RC_RDMA_READ_REQUEST)
		vhca_tx_queue_ack(qp, vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID),
				  pkt->psn, &list);
out:
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	vhca_tx_list(qp, &list);
	if (fatal)
		vhca_qp_fatal(qp, IB_WC_SUCCESS);
}
