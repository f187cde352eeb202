// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The engine for UD QPs and the GSI QP (QP1): datagrams of one packet
 * each, SEND and SEND with immediate to an address handle.
 *
 * Sender (process context: the QP's work item, or a user QP's kick system
 * call): reads each send WQE once
 * from the ring, checks it, resolves its AH (only the QP's PD's), builds
 * one UD SEND packet with a DETH and transmits it; the WQE completes as
 * soon as its payload is in the packet.  Local errors complete the WQE in
 * error and move the QP to the error state.
 *
 * Receiver (softirq): checks the Q_Key, takes the next receive WQE (none:
 * the datagram is dropped, as UD allows) and places the 40-byte network
 * header RoCEv2 defines (IPv4: 20 zero bytes, then the IPv4 header; IPv6:
 * the IPv6 header) followed by the payload.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>

#include "vhca_engine.h"

/* The network header in front of a UD receive buffer's payload. */
#define VHCA_UD_GRH_LEN		40

/* A send WQE as read once from the ring. */
struct vhca_ud_wqe {
	struct vhca_send_wqe hdr;
	struct vhca_sge sge[VHCA_MAX_SGE];
	const u8 *inline_data;	/* in the ring slot, read when copied */
	u32 len;
};

/* The largest UD payload: the port's active MTU. */
static u32 vhca_ud_mtu(struct vhca_dev *vdev)
{
	return ib_mtu_enum_to_int(vhca_port_mtu(vdev));
}

/* Copy the WQE at sq_tail out of the ring and check it; a wc status. */
static u8 vhca_ud_fetch(struct vhca_qp *qp, struct vhca_ud_wqe *wqe)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	const struct vhca_send_wqe *slot = vhca_ring_slot(&qp->sq, qp->sq_tail);
	const struct vhca_sge *sge = vhca_wqe_read_send(qp, slot, &wqe->hdr);
	u64 len;

	wqe->hdr.ud.ah = READ_ONCE(slot->ud.ah);
	wqe->hdr.ud.remote_qpn = READ_ONCE(slot->ud.remote_qpn);
	wqe->hdr.ud.remote_qkey = READ_ONCE(slot->ud.remote_qkey);
	wqe->len = 0;

	if (wqe->hdr.opcode != VHCA_WR_SEND &&
	    wqe->hdr.opcode != VHCA_WR_SEND_WITH_IMM)
		return IB_WC_LOC_QP_OP_ERR;
	if (wqe->hdr.ud.remote_qpn & ~VHCA_PKT_QPN_MASK)
		return IB_WC_LOC_QP_OP_ERR;
	if (wqe->hdr.flags & VHCA_WQE_INLINE) {
		if (wqe->hdr.inline_len > qp->max_inline)
			return IB_WC_LOC_LEN_ERR;
		wqe->inline_data = (const u8 *)sge;
		len = wqe->hdr.inline_len;
	} else {
		if (wqe->hdr.num_sge > qp->max_send_sge)
			return IB_WC_LOC_LEN_ERR;
		len = vhca_wqe_read_sges(wqe->sge, sge, wqe->hdr.num_sge);
	}
	if (len > vhca_ud_mtu(vdev)) {
		ibdev_dbg(&vdev->ibdev, "UD QP %u: %llu bytes exceed the MTU\n",
			  qp->ibqp.qp_num, len);
		return IB_WC_LOC_LEN_ERR;
	}
	wqe->len = len;
	return IB_WC_SUCCESS;
}

/*
 * The packet of WQE wqe to av into *skbp (NULL if none could be allocated:
 * the datagram is lost, as on a congested wire).  Returns a wc status, or
 * -EAGAIN when its ODP memory is not resident (no packet, psn unchanged).
 */
static int vhca_ud_build(struct vhca_qp *qp, const struct vhca_ud_wqe *wqe,
			 struct sk_buff **skbp)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	u32 qkey = wqe->hdr.ud.remote_qkey;
	struct vhca_pkt pkt = {
		.opcode = wqe->hdr.opcode == VHCA_WR_SEND_WITH_IMM ?
			  IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE : IB_OPCODE_UD_SEND_ONLY,
		.dqpn = wqe->hdr.ud.remote_qpn,
		.psn = qp->req.psn,
		.paylen = wqe->len,
		.se = wqe->hdr.flags & VHCA_WQE_SOLICITED,
		.imm = wqe->hdr.imm_data,
		.deth_sqpn = qp->ibqp.qp_num,
	};
	struct sk_buff *skb;
	void *payload;
	int err;

	/* A Q_Key with its high bit set means the QP's own (IBA 10.2.5). */
	pkt.deth_qkey = qkey & BIT(31) ? qp->attr.qkey : qkey;
	qp->req.psn = vhca_psn_add(qp->req.psn, 1);

	*skbp = NULL;
	skb = vhca_tx_build(vdev, &pkt, &payload);
	if (PTR_ERR_OR_ZERO(skb) == -ENOMEM)
		return IB_WC_SUCCESS;
	if (IS_ERR(skb))
		return IB_WC_LOC_QP_OP_ERR;
	if (wqe->hdr.flags & VHCA_WQE_INLINE) {
		memcpy(payload, wqe->inline_data, pkt.paylen);
	} else if (pkt.paylen) {
		err = vhca_sge_copy(vdev, qp->ibqp.pd, wqe->sge, wqe->hdr.num_sge,
				    0, payload, pkt.paylen, VHCA_COPY_FROM_MR,
				    0);
		if (err == -EAGAIN) {
			kfree_skb(skb);
			qp->req.psn = vhca_psn_add(qp->req.psn, -1);
			return -EAGAIN;
		}
		if (err) {
			kfree_skb(skb);
			return err == -EINVAL ? IB_WC_LOC_LEN_ERR :
						IB_WC_LOC_PROT_ERR;
		}
	}
	*skbp = skb;
	return IB_WC_SUCCESS;
}

/*
 * One sender pass: up to VHCA_UD_BUDGET WQEs, in ring order.  Returns true
 * when the budget ran out first.  Under tx_mutex.
 */
static bool vhca_ud_pass(struct vhca_qp *qp)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	u32 head, used, budget = VHCA_UD_BUDGET;
	struct vhca_ud_wqe wqe;
	struct vhca_av *av;
	unsigned int tries = VHCA_UD_FAULT_TRIES;
	struct sk_buff *skb;
	unsigned long flags;
	u8 status;
	int ret;

	for (; budget; budget--) {
		av = NULL;
		skb = NULL;
		spin_lock_irqsave(&qp->sq_lock, flags);
		if (qp->state != IB_QPS_RTS || !qp->sq.count) {
			spin_unlock_irqrestore(&qp->sq_lock, flags);
			return false;
		}
		/* Pairs with the producer's release: WQEs before head are written. */
		head = smp_load_acquire(&qp->recs.db->head[0]);
		used = vhca_ring_used(&qp->sq, head, qp->sq_tail);
		if (!used || used == U32_MAX) {
			/* Empty, or a head no producer could write: ignored. */
			spin_unlock_irqrestore(&qp->sq_lock, flags);
			return false;
		}
		status = vhca_ud_fetch(qp, &wqe);
		if (status != IB_WC_SUCCESS)
			vhca_wqe_malformed(qp);
		if (status == IB_WC_SUCCESS) {
			av = vhca_av_get(vdev, wqe.hdr.ud.ah, qp->ibqp.pd);
			if (!av) {
				ibdev_dbg(&vdev->ibdev, "UD QP %u: no AH %u\n",
					  qp->ibqp.qp_num, wqe.hdr.ud.ah);
				status = IB_WC_LOC_QP_OP_ERR;
			}
		}
		if (status == IB_WC_SUCCESS) {
			ret = vhca_ud_build(qp, &wqe, &skb);
			if (ret == -EAGAIN && tries) {
				/*
				 * ODP memory not resident: faulted in here
				 * (process context), and the WQE, still at
				 * the ring's tail, fetched again; after a
				 * fault that failed, or a few that did not
				 * last, it fails.
				 */
				spin_unlock_irqrestore(&qp->sq_lock, flags);
				vhca_av_put(av);
				tries = vhca_sge_fault(vdev, qp->ibqp.pd,
						       wqe.sge, wqe.hdr.num_sge,
						       0, wqe.len) ? 0 :
					tries - 1;
				budget++;
				continue;
			}
			status = ret == -EAGAIN ? IB_WC_LOC_PROT_ERR : ret;
		}
		vhca_wqe_complete_send(qp, &wqe.hdr, IB_WC_SEND, wqe.len,
				       status);
		tries = VHCA_UD_FAULT_TRIES;
		spin_unlock_irqrestore(&qp->sq_lock, flags);

		if (skb)
			vhca_net_xmit(vdev, &av->attr.grh,
				      rdma_get_udp_sport(av->attr.grh.flow_label,
							 qp->ibqp.qp_num,
							 wqe.hdr.ud.remote_qpn),
				      NULL, skb);
		if (av)
			vhca_av_put(av);
		if (status != IB_WC_SUCCESS) {
			vhca_qp_to_error(qp);
			return false;
		}
	}
	return true;
}

/*
 * Send what the ring holds: from the work item, or at once in the kick
 * system call of a user QP (so its completions are there when post_send
 * returns).  Passes never overlap: datagrams leave in ring order.  Process
 * context.
 */
void vhca_ud_send(struct vhca_qp *qp)
{
	bool more;

	mutex_lock(&qp->tx_mutex);
	more = vhca_ud_pass(qp);
	mutex_unlock(&qp->tx_mutex);
	/* Budget spent: the rest in another pass. */
	if (more)
		vhca_engine_kick(qp);
}

/* The work item of a UD or GSI QP. */
void vhca_ud_work(struct work_struct *work)
{
	vhca_ud_send(container_of(work, struct vhca_qp, tx_work));
}

/* The 40 bytes a UD receive buffer starts with, from skb's IP header. */
static u8 vhca_ud_grh(const struct sk_buff *skb, u8 *grh)
{
	const struct iphdr *ip4 = (const struct iphdr *)skb_network_header(skb);

	if (ip4->version == 4) {
		memset(grh, 0, VHCA_UD_GRH_LEN - sizeof(*ip4));
		memcpy(grh + VHCA_UD_GRH_LEN - sizeof(*ip4), ip4, sizeof(*ip4));
		return RDMA_NETWORK_IPV4;
	}
	memcpy(grh, ipv6_hdr(skb), sizeof(struct ipv6hdr));
	return RDMA_NETWORK_IPV6;
}

/*
 * A packet for UD or GSI QP qp; its payload at skb->data + off.  In
 * softirq, under RCU.
 */
void vhca_ud_rx(struct vhca_qp *qp, const struct vhca_pkt *pkt,
		struct sk_buff *skb, u32 off)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	u32 qkey = qp->ibqp.qp_type == IB_QPT_GSI ? IB_QP1_QKEY :
						     qp->attr.qkey;
	struct vhca_rmsg *msg = &qp->resp.msg;
	struct vhca_cqe cqe = {
		.opcode = IB_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
		.src_qp = pkt->deth_sqpn,
		.flags = VHCA_CQE_GRH,
	};
	u8 grh[VHCA_UD_GRH_LEN];
	unsigned long flags;
	bool bad;
	int err;

	if (pkt->opcode != IB_OPCODE_UD_SEND_ONLY &&
	    pkt->opcode != IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE)
		return;
	/*
	 * QP1 takes MADs only: the MAD layer's receive buffers hold one each
	 * and are not reposted after an error completion.
	 */
	if (qp->ibqp.qp_type == IB_QPT_GSI && pkt->paylen > IB_MGMT_MAD_SIZE) {
		atomic64_inc(&vdev->counters[VHCA_CNT_UD_DROPS]);
		return;
	}
	cqe.network_hdr_type = vhca_ud_grh(skb, grh);
	if (pkt->opcode == IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE) {
		cqe.flags |= VHCA_CQE_WITH_IMM;
		cqe.imm_data = pkt->imm;
	}

	spin_lock_irqsave(&qp->rq_lock, flags);
	if ((qp->state != IB_QPS_RTR && qp->state != IB_QPS_RTS &&
	     qp->state != IB_QPS_SQD) || pkt->deth_qkey != qkey) {
		atomic64_inc(&vdev->counters[VHCA_CNT_UD_DROPS]);
		goto out;
	}
	/* One a datagram took and could not use is still held (msg->wqe). */
	bad = false;
	if (!msg->wqe)
		msg->wqe = vhca_wqe_take_recv(qp, msg, &bad);
	if (!msg->wqe) {
		/* No receive WQE: the datagram is lost. */
		atomic64_inc(&vdev->counters[VHCA_CNT_UD_DROPS]);
		goto out;
	}
	cqe.wr_id = msg->rwqe.wr_id;
	if (bad) {
		cqe.status = IB_WC_LOC_LEN_ERR;
	} else {
		err = vhca_sge_copy(vdev, qp->ibqp.pd, msg->sge, msg->rwqe.num_sge,
				    0, grh, sizeof(grh), VHCA_COPY_TO_MR,
				    IB_ACCESS_LOCAL_WRITE);
		if (!err)
			err = vhca_sge_copy_skb(vdev, qp->ibqp.pd, msg->sge,
						msg->rwqe.num_sge, sizeof(grh),
						skb, off, pkt->paylen,
						VHCA_COPY_TO_MR,
						IB_ACCESS_LOCAL_WRITE);
		if (err == -EAGAIN) {
			/*
			 * ODP memory not resident (a fault runs): the
			 * datagram is lost, the receive WQE kept for the next.
			 */
			atomic64_inc(&vdev->counters[VHCA_CNT_UD_DROPS]);
			goto out;
		}
		cqe.status = !err ? IB_WC_SUCCESS :
			     err == -EINVAL ? IB_WC_LOC_LEN_ERR :
			     IB_WC_LOC_PROT_ERR;
		if (!err)
			cqe.byte_len = sizeof(grh) + pkt->paylen;
	}
	memset(msg, 0, sizeof(*msg));
	vhca_cq_post(to_vcq(qp->ibqp.recv_cq), &cqe, pkt->se);
out:
	spin_unlock_irqrestore(&qp->rq_lock, flags);
}
