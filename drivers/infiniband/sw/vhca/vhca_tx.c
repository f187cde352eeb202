// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Packet build and transmit, shared by the engine's senders: the RC
 * requester and responder, lingering QPs and UD.
 */
#include <linux/err.h>
#include <linux/skbuff.h>

#include "vhca_engine.h"

struct sk_buff *vhca_tx_build(struct vhca_dev *vdev,
			      const struct vhca_pkt *pkt, void **payload)
{
	const struct vhca_pkt_opinfo *info = vhca_pkt_opinfo(pkt->opcode);
	u32 pad = vhca_pkt_pad(pkt->paylen);
	struct sk_buff *skb;
	void *hdr;

	/* Bounded here, so no sum below can wrap: no caller's length passes. */
	if (pkt->paylen > VHCA_MAX_PKT_PAYLOAD)
		return ERR_PTR(-EINVAL);
	skb = vhca_net_alloc_skb(vdev, info->hdr_len + pkt->paylen + pad,
				 GFP_ATOMIC);
	if (!skb)
		return ERR_PTR(-ENOMEM);
	hdr = skb_put(skb, info->hdr_len);
	if (vhca_pkt_build(hdr, info->hdr_len, pkt) < 0) {
		kfree_skb(skb);
		return ERR_PTR(-EINVAL);
	}
	*payload = skb_put(skb, pkt->paylen);
	skb_put_zero(skb, pad);
	return skb;
}

bool vhca_tx_list(struct vhca_qp *qp, struct sk_buff_head *list)
{
	struct sk_buff *skb;

	skb_queue_walk(list, skb)
		vhca_net_cb(skb)->src_qpn = qp->ibqp.qp_num;
	return vhca_net_xmit_list(to_vdev(qp->ibqp.device), &qp->attr.ah_attr.grh,
			   vhca_qp_sport(qp), &qp->route, list);
}

void vhca_tx_count_direct(struct vhca_dev *src, struct vhca_dev *dst,
			  u32 npkts, u32 bytes)
{
	atomic64_add(npkts, &src->counters[VHCA_CNT_TX_PACKETS]);
	atomic64_add(bytes, &src->counters[VHCA_CNT_TX_BYTES]);
	atomic64_add(npkts, &src->counters[VHCA_CNT_LOCAL_TX_PACKETS]);
	atomic64_add(npkts, &src->counters[VHCA_CNT_DIRECT_PACKETS]);
	atomic64_add(npkts, &dst->counters[VHCA_CNT_RX_PACKETS]);
	atomic64_add(bytes, &dst->counters[VHCA_CNT_RX_BYTES]);
	atomic64_add(npkts, &dst->counters[VHCA_CNT_LOCAL_RX_PACKETS]);
}

void vhca_tx_queue_ack(struct vhca_qp *qp, u8 syndrome, u32 psn,
		       struct sk_buff_head *list)
{
	struct vhca_pkt pkt = {
		.opcode = IB_OPCODE_RC_ACKNOWLEDGE | vhca_qp_transport(qp),
		.dqpn = qp->attr.dest_qp_num,
		.psn = psn,
		.aeth_syndrome = syndrome,
		.aeth_msn = qp->resp.msn,
	};
	struct sk_buff *skb;
	void *payload;

	skb = vhca_tx_build(to_vdev(qp->ibqp.device), &pkt, &payload);
	if (!IS_ERR(skb))
		__skb_queue_tail(list, skb);
}
