// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Lingering QPs: a destroyed RC QP whose responder received anything
 * stays for qp_linger_ms, acknowledging its peer's retransmissions of
 * requests it had received (TCP's TIME-WAIT for RC).
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
 * error; the lingering QP acknowledges it again, as TCP's TIME-WAIT does
 * for a last ACK.  Only such duplicates, from the QP's own peer, are
 * answered: a request the QP never received, a READ or anything else is
 * dropped as for any unknown QP number (QP numbers are random among 16M, and a new QP
 * never takes a lingering one's).
 */
struct vhca_linger {
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

bool vhca_linger_rx(struct vhca_dev *vdev, const struct vhca_pkt *pkt,
		    struct sk_buff *skb)
{
	struct vhca_linger *lqp;
	struct vhca_pkt ack = {
		.opcode = IB_OPCODE_RC_ACKNOWLEDGE,
		.aeth_syndrome = vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID),
	};
	struct ib_global_route grh;
	struct sk_buff *out;
	void *payload;

	lqp = xa_load(&vdev->linger_xa, pkt->dqpn);
	if (!lqp || time_after(jiffies, lqp->expires))
		return false;
	grh = lqp->grh;
	grh.sgid_attr = rdma_get_gid_attr(&vdev->ibdev, VHCA_PORT,
					  grh.sgid_index);
	if (IS_ERR(grh.sgid_attr))
		return true;
	if (!vhca_net_rx_from(skb, &grh, lqp->dest_qpn)) {
		atomic64_inc(&vdev->counters[VHCA_CNT_RX_WRONG_PEER]);
		goto out;
	}
	/* SEND and WRITE requests only (RC opcodes below READ's, IETH's). */
	if ((pkt->opcode >= IB_OPCODE_RC_RDMA_READ_REQUEST &&
	     pkt->opcode != IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE &&
	     pkt->opcode != IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE) ||
	    vhca_psn_diff(pkt->psn, lqp->resp_psn) >= 0)
		goto out;
	ack.dqpn = lqp->dest_qpn;
	ack.psn = vhca_psn_add(lqp->resp_psn, -1);
	ack.aeth_msn = lqp->resp_msn;
	out = vhca_tx_build(vdev, &ack, &payload);
	if (!IS_ERR(out)) {
		atomic64_inc(&vdev->counters[VHCA_CNT_DUP_REQUESTS]);
		vhca_net_cb(out)->src_qpn = pkt->dqpn;
		vhca_net_xmit(vdev, &grh, lqp->sport, NULL, out);
	}
out:
	rdma_put_gid_attr(grh.sgid_attr);
	return true;
}

void vhca_linger_free(struct vhca_dev *vdev, unsigned long qpn)
{
	struct vhca_linger *lqp = xa_erase(&vdev->linger_xa, qpn);

	if (lqp) {
		kfree_rcu(lqp, rcu);
		atomic_dec(&vdev->n_lingering);
	}
}

void vhca_linger_gc(struct work_struct *work)
{
	struct vhca_dev *vdev = container_of(to_delayed_work(work),
					     struct vhca_dev, linger_gc);
	unsigned long qpn, next = 0;
	struct vhca_linger *lqp;

	xa_for_each(&vdev->linger_xa, qpn, lqp) {
		if (time_after(jiffies, lqp->expires))
			vhca_linger_free(vdev, qpn);
		else if (!next || time_before(lqp->expires, next))
			next = lqp->expires;
	}
	if (next)
		queue_delayed_work(system_wq, &vdev->linger_gc,
				   time_after(next, jiffies) ?
				   next - jiffies + 1 : 1);
}

/*
 * The QP is being destroyed, its engine stopped: leave a lingering QP when
 * its responder received anything.  A user QP's lingering QP is charged to
 * the destroying process's memory cgroup.
 */
void vhca_engine_qp_linger(struct vhca_qp *qp)
{
	struct vhca_dev *vdev = to_vdev(qp->ibqp.device);
	unsigned long linger = msecs_to_jiffies(READ_ONCE(qp_linger_ms));
	gfp_t gfp = qp->uctx ? GFP_KERNEL_ACCOUNT : GFP_KERNEL;
	struct vhca_linger *lqp, *old;
	unsigned long flags;

	if (!linger || qp->ibqp.qp_type != IB_QPT_RC)
		return;
	/* Counted before it exists, so that no burst passes the cap. */
	if (atomic_inc_return(&vdev->n_lingering) > VHCA_LINGER_MAX)
		goto out;
	lqp = kzalloc(sizeof(*lqp), gfp);
	if (!lqp)
		goto out;
	spin_lock_irqsave(&qp->rq_lock, flags);
	if ((qp->state == IB_QPS_RTR || qp->state == IB_QPS_RTS ||
	     qp->state == IB_QPS_SQD) && qp->resp.psn != qp->attr.rq_psn) {
		lqp->grh = qp->attr.ah_attr.grh;
		lqp->grh.sgid_attr = NULL;
		lqp->dest_qpn = qp->attr.dest_qp_num;
		lqp->resp_psn = qp->resp.psn;
		lqp->resp_msn = qp->resp.msn;
		lqp->sport = vhca_qp_sport(qp);
		lqp->expires = jiffies + linger;
	}
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	if (!lqp->expires) {
		kfree(lqp);
		goto out;
	}
	old = xa_store(&vdev->linger_xa, qp->ibqp.qp_num, lqp, gfp);
	if (xa_is_err(old)) {
		kfree(lqp);
		goto out;
	}
	if (old) {
		kfree_rcu(old, rcu);
		atomic_dec(&vdev->n_lingering);
	}
	queue_delayed_work(system_wq, &vdev->linger_gc, linger + 1);
	return;
out:
	atomic_dec(&vdev->n_lingering);
}
