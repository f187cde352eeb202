// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Lingering QPs: a destroyed RC QP whose responder received anything
 * stays for qp_linger_ms as a ghost that acknowledges its peer's
 * retransmissions of requests it had received (TCP's TIME-WAIT for RC).
 */
#include <linux/err.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>

#include "vhca_engine.h"

/*
 * A destroyed RC QP lingers for qp_linger_ms as what its responder last
 * knew: the peer of an application that closes once it has all it waited
 * for may still be waiting for the ACK of its last request, and when that
 * ACK was lost, it sends the request again (it cannot tell a lost ACK from
 * a lost request).  A QP that is gone would leave it to fail with a retry
 * error; the ghost acknowledges it again, as TCP's TIME-WAIT does for a
 * last ACK.  Only such duplicates, from the QP's own peer, are answered: a
 * request the QP never received, a READ or anything else is dropped as for
 * any unknown QP number (QP numbers are random among 16M, and a new QP
 * never takes a lingering one's).
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

static unsigned int qp_linger_ms = VHCA_QP_LINGER_MS;
module_param(qp_linger_ms, uint, 0644);
MODULE_PARM_DESC(qp_linger_ms,
		 "Milliseconds a destroyed RC QP still acknowledges its peer's retransmissions of requests it received (0: not at all; default 5000)");

bool vhca_ghost_rx(struct vhca_dev *vdev, const struct vhca_pkt *pkt,
		   struct sk_buff *skb)
{
	struct vhca_ghost *ghost;
	struct vhca_pkt ack = {
		.opcode = IB_OPCODE_RC_ACKNOWLEDGE,
		.aeth_syndrome = vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID),
	};
	struct ib_global_route grh;
	struct sk_buff *out;
	void *payload;

	ghost = xa_load(&vdev->ghost_xa, pkt->dqpn);
	if (!ghost || time_after(jiffies, ghost->expires))
		return false;
	grh = ghost->grh;
	grh.sgid_attr = rdma_get_gid_attr(&vdev->ibdev, VHCA_PORT,
					  grh.sgid_index);
	if (IS_ERR(grh.sgid_attr))
		return true;
	if (!vhca_net_rx_from(skb, &grh, ghost->dest_qpn)) {
		atomic64_inc(&vdev->counters[VHCA_CNT_RX_WRONG_PEER]);
		goto out;
	}
	/* SEND and WRITE requests only (RC opcodes below READ's, IETH's). */
	if ((pkt->opcode >= IB_OPCODE_RC_RDMA_READ_REQUEST &&
	     pkt->opcode != IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE &&
	     pkt->opcode != IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE) ||
	    vhca_psn_diff(pkt->psn, ghost->resp_psn) >= 0)
		goto out;
	ack.dqpn = ghost->dest_qpn;
	ack.psn = vhca_psn_add(ghost->resp_psn, -1);
	ack.aeth_msn = ghost->resp_msn;
	out = vhca_tx_build(vdev, &ack, &payload);
	if (!IS_ERR(out)) {
		atomic64_inc(&vdev->counters[VHCA_CNT_DUP_REQUESTS]);
		vhca_net_cb(out)->src_qpn = pkt->dqpn;
		vhca_net_xmit(vdev, &grh, ghost->sport, NULL, out);
	}
out:
	rdma_put_gid_attr(grh.sgid_attr);
	return true;
}

void vhca_ghost_free(struct vhca_dev *vdev, unsigned long qpn)
{
	struct vhca_ghost *ghost = xa_erase(&vdev->ghost_xa, qpn);

	if (ghost) {
		kfree_rcu(ghost, rcu);
		atomic_dec(&vdev->n_ghosts);
	}
}

void vhca_ghost_gc(struct work_struct *work)
{
	struct vhca_dev *vdev = container_of(to_delayed_work(work),
					     struct vhca_dev, ghost_gc);
	unsigned long qpn, next = 0;
	struct vhca_ghost *ghost;

	xa_for_each(&vdev->ghost_xa, qpn, ghost) {
		if (time_after(jiffies, ghost->expires))
			vhca_ghost_free(vdev, qpn);
		else if (!next || time_before(ghost->expires, next))
			next = ghost->expires;
	}
	if (next)
		queue_delayed_work(system_wq, &vdev->ghost_gc,
				   time_after(next, jiffies) ?
				   next - jiffies + 1 : 1);
}

/*
 * The QP is being destroyed, its engine stopped: leave a ghost when its
 * responder received anything.  A user QP's ghost is charged to the
 * destroying process's memory cgroup.
 */
void vhca_engine_qp_linger(struct vhca_qp *qp)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	unsigned long linger = msecs_to_jiffies(READ_ONCE(qp_linger_ms));
	gfp_t gfp = qp->uctx ? GFP_KERNEL_ACCOUNT : GFP_KERNEL;
	struct vhca_ghost *ghost, *old;
	unsigned long flags;

	if (!linger || qp->ibqp.qp_type != IB_QPT_RC)
		return;
	/* Counted before it exists, so that no burst passes the cap. */
	if (atomic_inc_return(&vdev->n_ghosts) > VHCA_GHOSTS_MAX)
		goto out;
	ghost = kzalloc(sizeof(*ghost), gfp);
	if (!ghost)
		goto out;
	spin_lock_irqsave(&qp->rq_lock, flags);
	if ((qp->state == IB_QPS_RTR || qp->state == IB_QPS_RTS ||
	     qp->state == IB_QPS_SQD) && qp->resp.psn != qp->attr.rq_psn) {
		ghost->grh = qp->attr.ah_attr.grh;
		ghost->grh.sgid_attr = NULL;
		ghost->dest_qpn = qp->attr.dest_qp_num;
		ghost->resp_psn = qp->resp.psn;
		ghost->resp_msn = qp->resp.msn;
		ghost->sport = vhca_qp_sport(qp);
		ghost->expires = jiffies + linger;
	}
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	if (!ghost->expires) {
		kfree(ghost);
		goto out;
	}
	old = xa_store(&vdev->ghost_xa, qp->ibqp.qp_num, ghost, gfp);
	if (xa_is_err(old)) {
		kfree(ghost);
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
