// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues and XRC domains of vhca.  The producer
 * (post_srq_recv for a kernel SRQ, the provider for a user SRQ, through its
 * writable mapping of the ring) writes receive WQEs and publishes its index
 * in the SRQ's doorbell record (head[0]); the engine takes them with
 * vhca_srq_take and publishes its consumer index in the status record
 * (tail[0]).  Every slot is usable: the SRQ holds ring.count WQEs.  An XRC
 * SRQ belongs to an XRC domain and has a CQ of its own; it has a random
 * 24-bit number that XRC requests name in their XRCETH: xsrq_xa holds
 * its handle (vhca_handle.h), and the responder of an XRC_TGT QP of the
 * same domain takes a reference for each request (vhca_xsrq_get()).
 */
#include <linux/log2.h>
#include <linux/random.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "vhca.h"

/* Bytes per WQE slot for max_sge SGEs. */
static u32 vhca_srq_stride(u32 max_sge)
{
	return roundup_pow_of_two(sizeof(struct vhca_recv_wqe) +
				  max_sge * sizeof(struct vhca_sge));
}

/* SGEs a slot of stride bytes holds, up to the device limit. */
static u32 vhca_srq_max_sge(u32 stride)
{
	return min_t(u32, (stride - sizeof(struct vhca_recv_wqe)) /
			  sizeof(struct vhca_sge), VHCA_MAX_SGE);
}

static int vhca_srq_check_init(struct ib_device *ibdev,
			       const struct ib_srq_init_attr *init)
{
	const struct ib_srq_attr *attr = &init->attr;

	if (init->srq_type != IB_SRQT_BASIC && init->srq_type != IB_SRQT_XRC) {
		ibdev_dbg(ibdev, "create_srq: unsupported type %d\n",
			  init->srq_type);
		return -EOPNOTSUPP;
	}
	if (init->srq_type == IB_SRQT_XRC &&
	    (!init->ext.cq || !init->ext.xrc.xrcd)) {
		ibdev_dbg(ibdev, "create_srq: XRC SRQ without CQ or XRCD\n");
		return -EINVAL;
	}
	if (attr->max_wr < 1 || attr->max_wr > VHCA_MAX_SRQ_WR) {
		ibdev_dbg(ibdev, "create_srq: max_wr %u not in 1..%u\n",
			  attr->max_wr, VHCA_MAX_SRQ_WR);
		return -EINVAL;
	}
	if (attr->max_sge < 1 || attr->max_sge > VHCA_MAX_SGE) {
		ibdev_dbg(ibdev, "create_srq: max_sge %u not in 1..%u\n",
			  attr->max_sge, VHCA_MAX_SGE);
		return -EINVAL;
	}
	if (attr->srq_limit >= attr->max_wr) {
		ibdev_dbg(ibdev, "create_srq: srq_limit %u not below max_wr %u\n",
			  attr->srq_limit, attr->max_wr);
		return -EINVAL;
	}
	return 0;
}

int vhca_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibxrcd->device);

	return vhca_create_prologue(&vdev->ibdev, udata, &vdev->n_xrcd,
				    VHCA_MAX_XRCD, "alloc_xrcd");
}

/* The core calls this only once no SRQ or QP uses the domain any more. */
int vhca_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	atomic_dec(&to_vdev(ibxrcd->device)->n_xrcd);
	return 0;
}

/* A random XRC SRQ number no other XRC SRQ has (a peer cannot guess it). */
static int vhca_xsrq_alloc_num(struct vhca_dev *vdev, struct vhca_srq *srq)
{
	int tries, err = -EBUSY;
	u32 srqn = 0;

	srq->handle = vhca_handle_alloc(srq, srq->uctx ? GFP_KERNEL_ACCOUNT :
							 GFP_KERNEL);
	if (!srq->handle)
		return -ENOMEM;
	for (tries = 0; tries < VHCA_XSRQN_TRIES && err == -EBUSY; tries++) {
		srqn = get_random_u32_inclusive(1, IB_QPN_MASK);
		err = xa_insert_irq(&vdev->xsrq_xa, srqn, srq->handle,
				    GFP_KERNEL);
	}
	if (err) {
		vhca_handle_free(srq->handle);
		srq->handle = NULL;
		return err == -EBUSY ? -ENOMEM : err;
	}
	srq->xrc_srqn = srqn;
	srq->ibsrq.ext.xrc.srq_num = srqn;
	return 0;
}

struct vhca_srq *vhca_xsrq_get(struct vhca_dev *vdev, u32 srqn,
			       const struct ib_xrcd *xrcd)
{
	struct vhca_srq *srq;

	rcu_read_lock();
	srq = vhca_handle_get(&vdev->xsrq_xa, srqn);
	rcu_read_unlock();
	if (srq && (!xrcd || srq->ibsrq.ext.xrc.xrcd != xrcd)) {
		vhca_xsrq_put(srq);
		return NULL;
	}
	return srq;
}

void vhca_xsrq_put(struct vhca_srq *srq)
{
	if (srq)
		vhca_handle_put(srq->handle);
}

/* Out of xsrq_xa, and held by no receiver any more. */
static void vhca_xsrq_remove(struct vhca_dev *vdev, struct vhca_srq *srq)
{
	vhca_handle_remove(&vdev->ibdev, "XRC SRQ", &vdev->xsrq_xa,
			   srq->xrc_srqn, srq->handle);
}

/*
 * The limit given at creation is only checked: as the verbs specify, only
 * modify_srq(IB_SRQ_LIMIT) arms the limit event.
 */
int vhca_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibsrq->device);
	struct vhca_srq *srq = to_vsrq(ibsrq);
	struct vhca_create_srq_resp resp = {};
	u32 count, stride;
	int err;

	err = vhca_srq_check_init(ibsrq->device, init);
	if (err)
		return err;
	err = vhca_create_prologue(ibsrq->device, udata, &vdev->n_srq,
				   VHCA_MAX_SRQ, "create_srq");
	if (err)
		return err;

	spin_lock_init(&srq->lock);
	srq->uctx = vhca_uctx_of(udata);
	count = roundup_pow_of_two(init->attr.max_wr);
	stride = vhca_srq_stride(init->attr.max_sge);
	err = vhca_queue_alloc(vdev, srq->uctx, &srq->ring, &srq->recs,
			       VHCA_RECS_REACH(udata, struct vhca_create_srq_resp),
			       count, stride, true);
	if (err)
		goto err_count;
	srq->max_sge = vhca_srq_max_sge(stride);
	if (init->srq_type == IB_SRQT_XRC) {
		err = vhca_xsrq_alloc_num(vdev, srq);
		if (err)
			goto err_queue;
	}

	if (srq->uctx) {
		resp.mmap_offset = rdma_user_mmap_get_offset(&srq->ring.mmap->rdma);
		resp.size = srq->ring.size;
		resp.count = count;
		resp.stride = stride;
		resp.db_index = srq->recs.index;
		vhca_recs_offsets(&srq->recs, &resp.db_area_offset,
				  &resp.status_area_offset);
		err = vhca_copy_resp(udata, &resp, sizeof(resp));
		if (err)
			goto err_num;
	}
	init->attr.max_wr = count;
	init->attr.max_sge = srq->max_sge;
	return 0;

err_num:
	if (srq->xrc_srqn)
		vhca_xsrq_remove(vdev, srq);
err_queue:
	vhca_queue_free(vdev, srq->uctx, &srq->ring, &srq->recs);
err_count:
	atomic_dec(&vdev->n_srq);
	return err;
}

/*
 * IB_SRQ_LIMIT arms the limit event (0 disarms it); the event fires when
 * a WQE taken leaves fewer WQEs posted than the limit.  Resizing
 * (IB_SRQ_MAX_WR) is not supported.
 */
int vhca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct vhca_srq *srq = to_vsrq(ibsrq);
	unsigned long flags;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT)) {
		ibdev_dbg(ibsrq->device, "modify_srq: unknown mask %#x\n", mask);
		return -EINVAL;
	}
	if (mask & IB_SRQ_MAX_WR) {
		ibdev_dbg(ibsrq->device, "modify_srq: resizing is not supported\n");
		return -EOPNOTSUPP;
	}
	if (vhca_udata_check(ibsrq->device, udata, "modify_srq"))
		return -EINVAL;
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit >= srq->ring.count) {
			ibdev_dbg(ibsrq->device,
				  "modify_srq: srq_limit %u not below max_wr %u\n",
				  attr->srq_limit, srq->ring.count);
			return -EINVAL;
		}
		spin_lock_irqsave(&srq->lock, flags);
		srq->limit = attr->srq_limit;
		spin_unlock_irqrestore(&srq->lock, flags);
	}
	return 0;
}

int vhca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct vhca_srq *srq = to_vsrq(ibsrq);

	attr->max_wr = srq->ring.count;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

/* The core calls this only once no QP uses the SRQ any more. */
int vhca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibsrq->device);
	struct vhca_srq *srq = to_vsrq(ibsrq);

	if (srq->xrc_srqn)
		vhca_xsrq_remove(vdev, srq);
	vhca_recs_free(vdev, srq->uctx, &srq->recs);
	vhca_rings_release(vdev, &vdev->n_srq, &srq->ring, NULL);
	return 0;
}

int vhca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	struct vhca_srq *srq = to_vsrq(ibsrq);
	unsigned long flags;
	int err = 0;

	/* A user SRQ is the provider's to post to. */
	if (srq->uctx) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}

	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || wr->num_sge > srq->max_sge) {
			ibdev_dbg(ibsrq->device,
				  "post_srq_recv: num_sge %d above max_sge %u\n",
				  wr->num_sge, srq->max_sge);
			err = -EINVAL;
			break;
		}
		if (srq->head - srq->tail >= srq->ring.count) {
			ibdev_dbg(ibsrq->device, "post_srq_recv: SRQ full\n");
			err = -ENOMEM;
			break;
		}
		vhca_write_recv_wqe(vhca_ring_slot(&srq->ring, srq->head), wr);
		srq->head++;
	}
	/* The WQEs are complete before the engine sees the new index. */
	smp_store_release(&srq->recs.db->head[0], srq->head);
	spin_unlock_irqrestore(&srq->lock, flags);

	if (err)
		*bad_wr = wr;
	return err;
}

static void vhca_srq_limit_event(struct vhca_srq *srq)
{
	struct ib_srq *ibsrq = &srq->ibsrq;
	struct ib_event ev = {
		.device = ibsrq->device,
		.element.srq = ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (ibsrq->event_handler)
		ibsrq->event_handler(&ev, ibsrq->srq_context);
}

/*
 * The producer index is read once; one that does not fit the ring (a
 * hostile provider) makes the SRQ look empty.  The WQE is read field by
 * field, once each, into the caller's copy.
 */
int vhca_srq_take(struct vhca_srq *srq, struct vhca_recv_wqe *wqe,
		  struct vhca_sge *sge)
{
	const struct vhca_sge *src;
	const struct vhca_recv_wqe *slot;
	bool limit_event = false;
	unsigned long flags;
	u32 head, used, i;
	u8 num_sge;
	int err = 0;

	spin_lock_irqsave(&srq->lock, flags);
	/* Pairs with the producer's release: WQEs before head are written. */
	head = smp_load_acquire(&srq->recs.db->head[0]);
	used = vhca_ring_used(&srq->ring, head, srq->tail);
	if (!used || used == U32_MAX) {
		spin_unlock_irqrestore(&srq->lock, flags);
		return -ENOENT;
	}

	slot = vhca_ring_slot(&srq->ring, srq->tail);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = READ_ONCE(slot->wr_id);
	num_sge = READ_ONCE(slot->num_sge);
	if (num_sge > srq->max_sge) {
		err = -EINVAL;
	} else {
		src = (const struct vhca_sge *)(slot + 1);
		for (i = 0; i < num_sge; i++) {
			sge[i].addr = READ_ONCE(src[i].addr);
			sge[i].length = READ_ONCE(src[i].length);
			sge[i].lkey = READ_ONCE(src[i].lkey);
		}
		wqe->num_sge = num_sge;
	}
	srq->tail++;
	/* The slot is read before the producer may reuse it. */
	smp_store_release(&srq->recs.st->tail[0], srq->tail);
	if (srq->limit && used - 1 < srq->limit) {
		srq->limit = 0;
		limit_event = true;
	}
	spin_unlock_irqrestore(&srq->lock, flags);

	if (limit_event)
		vhca_srq_limit_event(srq);
	return err;
}
