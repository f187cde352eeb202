// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues of vhca.  The device (vhca_cq_post) produces CQEs into
 * a ring of struct vhca_cqe and publishes its producer index in the CQ's
 * status record (tail[0]).  A kernel CQ is consumed by vhca_poll_cq; a user
 * CQ by the provider, which maps the ring read-only and publishes its
 * consumer index in the CQ's doorbell record (head[0]).  That index is
 * untrusted: the device copies it once and treats any value that does not
 * fit the ring as a full ring.
 */
#include <linux/log2.h>
#include <linux/time_namespace.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "vhca.h"

/* Ring slots for a CQ of at least cqe entries: every slot is usable. */
static u32 vhca_cq_count(u32 cqe)
{
	return roundup_pow_of_two(cqe);
}

/* Room for one more CQE, given the consumer index (hostile for user CQs). */
static bool vhca_cq_has_room(const struct vhca_ring *ring, u32 head,
			     u32 consumer)
{
	return vhca_ring_used(ring, head, consumer) < ring->count;
}

/* The consumer index: the kernel's own, or the provider's (untrusted). */
static u32 vhca_cq_consumer(const struct vhca_cq *cq)
{
	return cq->uctx ? READ_ONCE(cq->recs.db->head[0]) : cq->tail;
}

/* The work completion of a CQE, except wc->qp. */
static void vhca_cqe_to_wc(const struct vhca_cqe *cqe, struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->src_qp = cqe->src_qp;
	wc->pkey_index = cqe->pkey_index;
	wc->sl = cqe->sl;
	wc->slid = 0;
	wc->port_num = VHCA_PORT;
	if (cqe->flags & VHCA_CQE_WITH_IMM) {
		wc->ex.imm_data = cqe->imm_data;
		wc->wc_flags |= IB_WC_WITH_IMM;
	}
	if (cqe->flags & VHCA_CQE_WITH_INV) {
		wc->ex.invalidate_rkey = cqe->invalidate_rkey;
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	}
	if (cqe->flags & VHCA_CQE_GRH)
		wc->wc_flags |= IB_WC_GRH;
	if (cqe->network_hdr_type) {
		wc->network_hdr_type = cqe->network_hdr_type;
		wc->wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
	}
}

/*
 * A user CQ may ask for completion timestamps, which only the provider
 * reads: struct ib_wc has no room for them.
 */
static int vhca_cq_check_attr(struct ib_device *ibdev,
			      const struct ib_cq_init_attr *attr, bool user)
{
	u32 flags_ok = user ? IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION : 0;

	if (attr->cqe < 1 || attr->cqe > VHCA_MAX_CQE) {
		ibdev_dbg(ibdev, "create_cq: cqe %u not in 1..%u\n", attr->cqe,
			  VHCA_MAX_CQE);
		return -EINVAL;
	}
	if (attr->flags & ~flags_ok) {
		ibdev_dbg(ibdev, "create_cq: unsupported flags %#x\n",
			  attr->flags);
		return -EOPNOTSUPP;
	}
	if (attr->comp_vector >= ibdev->num_comp_vectors) {
		ibdev_dbg(ibdev, "create_cq: comp_vector %u not below %d\n",
			  attr->comp_vector, ibdev->num_comp_vectors);
		return -EINVAL;
	}
	return 0;
}

/*
 * CLOCK_MONOTONIC_RAW of the calling process's time namespace, less the
 * kernel's: what VHCA_CORE_CLOCK_KHZ's clock adds to ktime_get_raw_ns().
 */
static s64 vhca_cq_clock_offset(void)
{
	struct timespec64 off = {};

	timens_add_monotonic(&off);
	return timespec64_to_ns(&off);
}

int vhca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct uverbs_attr_bundle *attrs)
{
	struct ib_udata *udata = attrs ? &attrs->driver_udata : NULL;
	struct vhca_dev *vdev = to_vdev(ibcq->device);
	struct vhca_cq *cq = to_vcq(ibcq);
	struct vhca_create_cq_resp resp = {};
	u32 count;
	int err;

	BUILD_BUG_ON(!is_power_of_2(sizeof(struct vhca_cqe)));
	BUILD_BUG_ON(!is_power_of_2(sizeof(struct vhca_cqe_ts)));

	err = vhca_cq_check_attr(ibcq->device, attr, !!udata);
	if (err)
		return err;
	err = vhca_create_prologue(ibcq->device, udata, &vdev->n_cq,
				   VHCA_MAX_CQ + VHCA_MAD_OBJECTS, "create_cq");
	if (err)
		return err;

	spin_lock_init(&cq->lock);
	cq->uctx = vhca_uctx_of(udata);
	cq->timestamps = attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
	cq->cqe_size = sizeof(struct vhca_cqe);
	if (cq->timestamps) {
		cq->cqe_size = sizeof(struct vhca_cqe_ts);
		cq->clock_offset = vhca_cq_clock_offset();
	}
	count = vhca_cq_count(attr->cqe);
	err = vhca_queue_alloc(vdev, cq->uctx, &cq->ring, &cq->recs,
			       VHCA_RECS_REACH(udata, struct vhca_create_cq_resp),
			       count, cq->cqe_size, false);
	if (err)
		goto err_count;
	if (!cq->uctx) {
		cq->qps = kvcalloc(count, sizeof(*cq->qps), GFP_KERNEL);
		if (!cq->qps) {
			err = -ENOMEM;
			goto err_queue;
		}
	}
	ibcq->cqe = count;

	if (cq->uctx) {
		resp.mmap_offset = rdma_user_mmap_get_offset(&cq->ring.mmap->rdma);
		resp.ring_size = cq->ring.size;
		resp.cqe_count = count;
		resp.db_index = cq->recs.index;
		resp.cqe_size = cq->cqe_size;
		vhca_recs_offsets(&cq->recs, &resp.db_area_offset,
				  &resp.status_area_offset);
		err = vhca_copy_resp(udata, &resp, sizeof(resp));
		if (err)
			goto err_queue;
	}
	return 0;

err_queue:
	vhca_queue_free(vdev, cq->uctx, &cq->ring, &cq->recs);
err_count:
	atomic_dec(&vdev->n_cq);
	return err;
}

#ifndef VHCA_HAVE_CREATE_CQ_ATTRS
int vhca_create_cq_op(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		      struct ib_udata *udata)
{
	return vhca_create_cq(ibcq, attr, udata ?
			      container_of(udata, struct uverbs_attr_bundle,
					   driver_udata) : NULL);
}
#endif

/* The core calls this only once no QP or SRQ uses the CQ any more. */
int vhca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibcq->device);
	struct vhca_cq *cq = to_vcq(ibcq);

	kvfree(cq->qps);
	vhca_recs_free(vdev, cq->uctx, &cq->recs);
	vhca_rings_release(vdev, &vdev->n_cq, &cq->ring, NULL);
	return 0;
}

/*
 * Replace the ring with one of at least cqe entries, never fewer than the
 * CQEs outstanding (-EINVAL).  The outstanding CQEs move to the new ring at
 * the same free-running indices, so neither index changes: a kernel CQ
 * goes on polling at cq->tail, and the provider (which must not poll the
 * CQ during the call) maps the new ring, unmaps the old one and goes on at
 * its own consumer index.  For a user CQ, "outstanding" is measured from
 * that consumer index as read once under the lock; an index that does not
 * fit the old ring fails the call with -EINVAL and changes nothing.
 */
int vhca_resize_cq(struct ib_cq *ibcq, unsigned int cqe,
		   struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibcq->device);
	struct vhca_cq *cq = to_vcq(ibcq);
	struct vhca_resize_cq_resp resp = {};
	struct ib_qp **qps = NULL, **old_qps;
	struct vhca_ring ring, old;
	unsigned long flags;
	u32 count, used, i;
	int err;

	if (!cqe || cqe > VHCA_MAX_CQE) {
		ibdev_dbg(ibcq->device, "resize_cq: cqe %u not in 1..%u\n", cqe,
			  VHCA_MAX_CQE);
		return -EINVAL;
	}
	if (vhca_udata_check(ibcq->device, udata, "resize_cq"))
		return -EINVAL;

	count = vhca_cq_count(cqe);
	err = vhca_ring_alloc(vdev, cq->uctx, &ring, count, cq->cqe_size,
			      false);
	if (err)
		return err;
	if (!cq->uctx) {
		qps = kvcalloc(count, sizeof(*qps), GFP_KERNEL);
		if (!qps) {
			err = -ENOMEM;
			goto err_ring;
		}
	} else {
		/* Before the switch: a failed copy must leave the CQ as it was. */
		resp.mmap_offset = rdma_user_mmap_get_offset(&ring.mmap->rdma);
		resp.ring_size = ring.size;
		resp.cqe_count = count;
		err = vhca_copy_resp(udata, &resp, sizeof(resp));
		if (err)
			goto err_ring;
	}

	spin_lock_irqsave(&cq->lock, flags);
	used = vhca_ring_used(&cq->ring, cq->head, vhca_cq_consumer(cq));
	if (used > (u32)cqe) {
		spin_unlock_irqrestore(&cq->lock, flags);
		ibdev_dbg(ibcq->device,
			  "resize_cq: %d entries, but %u CQEs outstanding\n",
			  cqe, used);
		err = -EINVAL;
		goto err_qps;
	}
	for (i = cq->head - used; i != cq->head; i++) {
		memcpy(vhca_ring_slot(&ring, i), vhca_ring_slot(&cq->ring, i),
		       cq->cqe_size);
		if (qps)
			qps[i & (count - 1)] = cq->qps[i & (cq->ring.count - 1)];
	}
	old = cq->ring;
	old_qps = cq->qps;
	cq->ring = ring;
	cq->qps = qps;
	ibcq->cqe = count;
	spin_unlock_irqrestore(&cq->lock, flags);

	kvfree(old_qps);
	vhca_ring_free(vdev, &old);
	return 0;

err_qps:
	kvfree(qps);
err_ring:
	vhca_ring_free(vdev, &ring);
	return err;
}

#ifndef VHCA_HAVE_RESIZE_USER_CQ
int vhca_resize_cq_op(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	return cqe < 0 ? -EINVAL : vhca_resize_cq(ibcq, cqe, udata);
}
#endif

int vhca_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct vhca_cq *cq = to_vcq(ibcq);
	unsigned long flags;
	u32 slot;
	int n;

	/* A user CQ is the provider's to poll; uverbs never polls it. */
	if (cq->uctx)
		return -EOPNOTSUPP;

	spin_lock_irqsave(&cq->lock, flags);
	for (n = 0; n < num_entries && cq->tail != cq->head; n++) {
		slot = cq->tail & (cq->ring.count - 1);
		vhca_cqe_to_wc(vhca_ring_slot(&cq->ring, cq->tail), &wc[n]);
		wc[n].qp = cq->qps[slot];
		cq->tail++;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

int vhca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct vhca_cq *cq = to_vcq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* An armed NEXT_COMP covers a later SOLICITED request. */
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    cq->head != vhca_cq_consumer(cq))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/*
 * The QP a kernel CQ's CQE belongs to, taken when the CQE is produced (the
 * engine is working on that QP, so it is alive): a QP number looked up at
 * poll time could name a QP destroyed since, or its successor.  qp_xa holds
 * the handles of struct vhca_qp, whose first member is ibqp; the QP is not
 * referenced: as with rxe, a ULP must not use wc->qp of a QP it has
 * destroyed.
 */
static struct ib_qp *vhca_cq_qp(struct vhca_cq *cq, u32 qp_num)
{
	struct vhca_handle *h;
	struct vhca_qp *qp;

	rcu_read_lock();
	h = xa_load(&to_vdev(cq->ibcq.device)->qp_xa, qp_num);
	qp = h ? h->obj : NULL;
	rcu_read_unlock();
	return qp ? &qp->ibqp : NULL;
}

static void vhca_cq_overflow_event(struct vhca_cq *cq)
{
	struct ib_cq *ibcq = &cq->ibcq;
	struct ib_event ev = {
		.device = ibcq->device,
		.element.cq = ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	ibdev_dbg(ibcq->device, "%s CQ overflowed: CQEs are lost\n",
		  cq->uctx ? "user" : "kernel");
	if (ibcq->event_handler)
		ibcq->event_handler(&ev, ibcq->cq_context);
}

/* A CQE's times (struct vhca_cqe_ts), under the CQ's lock. */
static void vhca_cqe_stamp(const struct vhca_cq *cq, struct vhca_cqe_ts *ts)
{
	ts->core_clock = ktime_get_raw_ns() + cq->clock_offset;
	ts->wallclock_ns = ktime_get_real_ns();
}

int vhca_cq_post(struct vhca_cq *cq, const struct vhca_cqe *cqe,
		 bool solicited)
{
	struct ib_cq *ibcq = &cq->ibcq;
	void (*handler)(struct ib_cq *cq, void *ctx);
	bool notify = false;
	unsigned long flags;
	void *dst;
	u32 slot;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->error) {
		spin_unlock_irqrestore(&cq->lock, flags);
		return -EOVERFLOW;
	}
	if (!vhca_cq_has_room(&cq->ring, cq->head, vhca_cq_consumer(cq))) {
		cq->error = true;
		WRITE_ONCE(cq->recs.st->flags,
			   cq->recs.st->flags | VHCA_STATUS_CQ_OVERFLOW);
		spin_unlock_irqrestore(&cq->lock, flags);
		vhca_cq_overflow_event(cq);
		return -EOVERFLOW;
	}

	slot = cq->head & (cq->ring.count - 1);
	dst = vhca_ring_slot(&cq->ring, cq->head);
	memcpy(dst, cqe, sizeof(*cqe));
	if (cq->timestamps)
		vhca_cqe_stamp(cq, dst);
	if (cq->qps)
		cq->qps[slot] = vhca_cq_qp(cq, cqe->qp_num);
	cq->head++;
	/* The CQE is complete before the provider sees the new index. */
	smp_store_release(&cq->recs.st->tail[0], cq->head);

	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED && solicited)) {
		cq->notify = 0;
		notify = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (notify) {
		/* ib_alloc_cq() sets the handler after create_cq. */
		handler = READ_ONCE(ibcq->comp_handler);
		if (handler)
			handler(ibcq, ibcq->cq_context);
	}
	return 0;
}
