// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive demux of the engine: a parsed packet goes to the RC completer
 * (responses), the RC responder (requests; XRC's run as RC's), the UC
 * responder, the UD receiver, the UD receivers of a multicast group's QPs
 * (the multicast QPN), or, for a QP number no QP has, to the lingering QPs.
 */
#include <linux/rculist.h>
#include <linux/skbuff.h>
#include <rdma/ib_addr.h>

#include "vhca_engine.h"

/*
 * A packet to the multicast QPN, its destination GID dgid: a copy to every
 * UD QP of vdev attached to that group (none: counted in ud_drops).
 */
static void vhca_rx_mcast(struct vhca_dev *vdev, const union ib_gid *dgid,
			  const struct vhca_pkt *pkt, struct sk_buff *skb,
			  u32 off)
{
	struct vhca_mcast_grp *grp = vhca_mcast_group(vdev, dgid);
	struct vhca_mcast_qp *mqp;

	if (!grp) {
		atomic64_inc(&vdev->counters[VHCA_CNT_UD_DROPS]);
		return;
	}
	/* At most VHCA_MAX_MCAST_QP_ATTACH copies. */
	list_for_each_entry_rcu(mqp, &grp->qps, node) {
		struct vhca_qp *qp;

		if (!vhca_handle_tryget(mqp->handle))
			continue;
		qp = mqp->handle->obj;
		if (!READ_ONCE(qp->dying))
			vhca_ud_rx(qp, pkt, skb, off);
		vhca_handle_put(mqp->handle);
	}
}

/*
 * A RoCEv2 packet for vdev, from the wire or delivered locally (the same
 * packet either way): linear, skb->data at the BTH, skb->len bytes through
 * the ICRC (already checked on the wire path); the IP and UDP headers
 * precede it (vhca_net_rx_gids()).  Consumes skb.  BHs off, under RCU.
 */
void vhca_engine_rx(struct vhca_dev *vdev, struct sk_buff *skb)
{
	const struct vhca_pkt_opinfo *info;
	enum vhca_counter drop = VHCA_CNT_RX_MALFORMED;
	union ib_gid sgid, dgid;
	struct vhca_pkt pkt;
	struct vhca_qp *qp;
	bool mcast, resp;

	if (vhca_pkt_parse(skb->data, skb->len, &pkt))
		goto drop;
	info = vhca_pkt_opinfo(pkt.opcode);
	/* The multicast QPN with a multicast destination only, and UD. */
	vhca_net_rx_gids(skb, &sgid, &dgid);
	mcast = rdma_is_multicast_addr((struct in6_addr *)dgid.raw);
	if (mcast || pkt.dqpn == IB_MULTICAST_QPN) {
		if (!mcast || pkt.dqpn != IB_MULTICAST_QPN ||
		    (pkt.opcode & VHCA_PKT_TRANSPORT_MASK) != IB_OPCODE_UD)
			goto drop;
		vhca_rx_mcast(vdev, &dgid, &pkt, skb, info->hdr_len);
		goto out;
	}
	qp = vhca_handle_get(&vdev->qp_xa, pkt.dqpn);
	if (!qp) {
		if (!vhca_linger_rx(vdev, &pkt, skb))
			atomic64_inc(&vdev->counters[VHCA_CNT_RX_NO_QP]);
		goto out;
	}
	if (READ_ONCE(qp->dying))
		goto put;
	if (!vhca_qp_connected(qp)) {
		vhca_ud_rx(qp, &pkt, skb, info->hdr_len);
		goto put;
	}
	/*
	 * The opcodes of the QP's own transport only; XRC's run as RC's,
	 * an XRC_INI QP taking responses only, an XRC_TGT QP requests only.
	 */
	if ((pkt.opcode & VHCA_PKT_TRANSPORT_MASK) != vhca_qp_transport(qp))
		goto drop_put;
	pkt.opcode = vhca_pkt_xrc_to_rc(pkt.opcode);
	resp = pkt.opcode >= IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST &&
	       pkt.opcode <= IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE;
	if ((qp->ibqp.qp_type == IB_QPT_XRC_INI && !resp) ||
	    (qp->ibqp.qp_type == IB_QPT_XRC_TGT && resp))
		goto drop_put;
	/* Its peer only: see vhca_net_rx_from(). */
	if (!vhca_net_rx_from(skb, &qp->attr.ah_attr.grh,
			      qp->attr.dest_qp_num)) {
		drop = VHCA_CNT_RX_WRONG_PEER;
		goto drop_put;
	}

	if (qp->ibqp.qp_type == IB_QPT_UC)
		vhca_resp_uc_rx(qp, &pkt, info->flags, skb, info->hdr_len);
	else if (resp)
		vhca_comp_rx(qp, &pkt, skb, info->hdr_len);
	else
		vhca_resp_rx(qp, &pkt, info->flags, skb, info->hdr_len);
put:
	vhca_handle_put(qp->handle);
	goto out;
drop_put:
	vhca_handle_put(qp->handle);
drop:
	atomic64_inc(&vdev->counters[drop]);
out:
	kfree_skb(skb);
}
