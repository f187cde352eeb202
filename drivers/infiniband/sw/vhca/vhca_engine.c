// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The engine's workqueue and its setup: the module's workqueue, the kick
 * that queues a QP's work item on it, a device's lingering QPs, and the
 * engine's part of a QP's life (its work item, timers, route cache and
 * WQE copies), set up when the QP is created and stopped when it is
 * destroyed.  Process context but for the kick (any context).
 */
#include <linux/hrtimer.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <linux/workqueue.h>

#include "vhca_engine.h"

static struct workqueue_struct *vhca_engine_wq;
static struct workqueue_struct *vhca_engine_wire_wq;

/*
 * The engine's work items (requesters, READ responders, UD senders) run on
 * a workqueue of their own: unbound, so a QP's item runs wherever a CPU is
 * free; WQ_MEM_RECLAIM, since the kernel's storage consumers (NVMe and NFS
 * over RDMA) may need it to make progress when memory is short.  Its
 * workers run at the default priority, sharing the CPUs fairly with the
 * processes that post and poll: a busy-polling process cannot starve them,
 * and they cannot starve it.  Workers at high priority (nice -20) would
 * take every CPU from the process that feeds them whenever two or more QPs
 * have work at once, and 16 QPs would then move fewer small messages than
 * one.  A requester whose packets on the wire are not all acknowledged
 * runs on the CPU that sent them (req.tx_cpu), through a second, per-CPU
 * workqueue: a veth hands a packet to the receive backlog of the CPU that
 * sends it, and a multiqueue NIC to that CPU's transmit queue, so packets
 * of one QP sent from two CPUs can arrive out of order, and the responder
 * NAKs each such gap.
 */
int vhca_engine_init(void)
{
	vhca_engine_wq = alloc_workqueue("vhca_engine",
					 WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!vhca_engine_wq)
		return -ENOMEM;
	vhca_engine_wire_wq = alloc_workqueue("vhca_engine_wire",
					      WQ_PERCPU | WQ_MEM_RECLAIM, 0);
	if (vhca_engine_wire_wq)
		return 0;
	destroy_workqueue(vhca_engine_wq);
	return -ENOMEM;
}

/* After every QP is gone: each cancelled its work items when destroyed. */
void vhca_engine_exit(void)
{
	destroy_workqueue(vhca_engine_wire_wq);
	destroy_workqueue(vhca_engine_wq);
}

/*
 * Queue the QP's work item: the requester, or the UD sender; on req.tx_cpu
 * when the requester has one.
 */
void vhca_engine_kick(struct vhca_qp *qp)
{
	int cpu;

	if (READ_ONCE(qp->dying))
		return;
	cpu = READ_ONCE(qp->req.tx_cpu);
	if (cpu >= 0)
		queue_work_on(cpu, vhca_engine_wire_wq, &qp->wire_work);
	else
		queue_work(vhca_engine_wq, &qp->tx_work);
}

void vhca_engine_dev_init(struct vhca_dev *vdev)
{
	xa_init(&vdev->linger_xa);
	INIT_DELAYED_WORK(&vdev->linger_gc, vhca_linger_gc);
}

/* The device is going: no QP and no receive is left. */
void vhca_engine_dev_fini(struct vhca_dev *vdev)
{
	unsigned long qpn;
	struct vhca_linger *lqp;

	cancel_delayed_work_sync(&vdev->linger_gc);
	xa_for_each(&vdev->linger_xa, qpn, lqp)
		vhca_linger_free(vdev, qpn);
	xa_destroy(&vdev->linger_xa);
}

int vhca_engine_qp_init(struct vhca_qp *qp)
{
	gfp_t gfp = qp->uctx ? GFP_KERNEL_ACCOUNT : GFP_KERNEL;

	INIT_WORK(&qp->tx_work, vhca_qp_connected(qp) ?
		  vhca_req_work : vhca_ud_work);
	INIT_WORK(&qp->wire_work, vhca_req_wire_work);
	qp->req.tx_cpu = -1;
	timer_setup(&qp->req.rexmit_timer, vhca_req_rexmit_timer, 0);
	hrtimer_setup(&qp->req.rnr_timer, vhca_req_rnr_timer, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_SOFT);
	hrtimer_setup(&qp->db.timer, vhca_db_timer, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_SOFT);
	skb_queue_head_init(&qp->resp.backlog);
	if (!vhca_qp_connected(qp))
		return 0;
	if (dst_cache_init(&qp->route, gfp))
		return -ENOMEM;
	if (!qp->sq.count)
		return 0;
	qp->req.swqe_stride = vhca_swqe_stride(qp->max_send_sge,
					       qp->max_inline);
	qp->req.swqe = kvcalloc(qp->sq.count, qp->req.swqe_stride, gfp);
	if (qp->req.swqe)
		return 0;
	dst_cache_destroy(&qp->route);
	return -ENOMEM;
}

/*
 * Stop the engine for a QP about to be freed, which no receiver holds or
 * finds any more (vhca_handle_remove()).
 */
void vhca_engine_qp_fini(struct vhca_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->sq_lock, flags);
	WRITE_ONCE(qp->dying, true);
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	cancel_work_sync(&qp->tx_work);
	cancel_work_sync(&qp->wire_work);
	timer_shutdown_sync(&qp->req.rexmit_timer);
	hrtimer_cancel(&qp->req.rnr_timer);
	hrtimer_cancel(&qp->db.timer);
	/* The timers queue no work for a dying QP: none runs any more. */
	vhca_resp_drop_held(qp);
	spin_lock_irqsave(&qp->rq_lock, flags);
	memset(&qp->resp.msg, 0, sizeof(qp->resp.msg));
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	kvfree(qp->req.swqe);
	/* Nothing sends for the QP any more (a lingering one has its own). */
	dst_cache_destroy(&qp->route);
}
