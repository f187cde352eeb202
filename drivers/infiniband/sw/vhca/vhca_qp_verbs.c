// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pair verbs of vhca: RC, UC, UD, GSI (QP1) and XRC: an XRC_INI QP
 * is an RC requester without receive queue, an XRC_TGT QP an RC responder
 * without send queue whose receives land in the XRC SRQs of its domain.
 * Work requests live in the QP's rings: the provider writes user QPs' rings
 * directly, kernel QPs are posted here.  The heads of both kinds are in the
 * QP's doorbell record, so the device reads them one way.  The engine's
 * part of a QP's life (vhca_engine.c) is set up and torn down from here.
 */
#include <linux/random.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "vhca_engine.h"

#define VHCA_QPN_FIRST	2	/* 0 is reserved, 1 is the GSI QP */
/*
 * Random QP numbers tried before giving up: VHCA_MAX_QP QPs and
 * VHCA_LINGER_MAX lingering ones hold at most 1/800 of the 2^24 numbers.
 */
#define VHCA_QPN_TRIES	16

/*
 * The provider's kick: a post_send system call (process context) after
 * it found NEEDS_WAKEUP set.  The requester runs in the system call,
 * VHCA_REQ_PASSES passes at most, so what the process posted leaves
 * without waiting for a worker thread to be woken and scheduled beside
 * busy-polling processes; the work item does the rest.
 */
static void vhca_engine_doorbell(struct vhca_qp *qp)
{
	if (!vhca_qp_connected(qp))
		vhca_ud_send(qp);
	else if (vhca_req_drain(qp))
		vhca_engine_kick(qp);
}

/*
 * QP1 for GSI; else a random number, so that no peer can guess it (the
 * receive path finds a QP by number: vhca_engine_rx()), that neither a
 * QP nor a lingering QP has.
 */
static int vhca_qp_alloc_qpn(struct vhca_dev *vdev, struct vhca_qp *qp,
			     enum ib_qp_type type)
{
	gfp_t gfp = qp->uctx ? GFP_KERNEL_ACCOUNT : GFP_KERNEL;
	int tries, err = -EBUSY;
	u32 qpn = 1;

	qp->handle = vhca_handle_alloc(qp, gfp);
	if (!qp->handle)
		return -ENOMEM;
	if (type == IB_QPT_GSI) {
		err = xa_insert_irq(&vdev->qp_xa, qpn, qp->handle, GFP_KERNEL);
		if (err == -EBUSY)
			err = -EEXIST;
	}
	for (tries = 0; type != IB_QPT_GSI && tries < VHCA_QPN_TRIES &&
	     err == -EBUSY; tries++) {
		/* Not IB_MULTICAST_QPN (IB_QPN_MASK): multicast's. */
		qpn = get_random_u32_inclusive(VHCA_QPN_FIRST, IB_QPN_MASK - 1);
		if (xa_load(&vdev->linger_xa, qpn))
			continue;
		err = xa_insert_irq(&vdev->qp_xa, qpn, qp->handle, GFP_KERNEL);
	}
	if (err) {
		vhca_handle_free(qp->handle);
		return err == -EBUSY ? -ENOMEM : err;
	}
	qp->ibqp.qp_num = qpn;
	return 0;
}

/* What create_qp refuses before any work: type, flags, request data, caps. */
static int vhca_qp_check_create(struct vhca_dev *vdev,
				struct ib_qp_init_attr *init,
				struct ib_udata *udata,
				struct vhca_qp_geometry *geo)
{
	int err;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		if (udata || init->port_num != VHCA_PORT)
			return -EINVAL;
		break;
	case IB_QPT_XRC_TGT:
		/*
		 * The core creates it without udata (it outlives the process
		 * in its XRC domain): no rings, nothing to map.
		 */
		if (!init->xrcd)
			return -EINVAL;
		init->cap = (struct ib_qp_cap){};
		break;
	case IB_QPT_XRC_INI:
		/* User QPs only: a kernel WR has no XRC SRQ number. */
		if (!udata) {
			ibdev_dbg(&vdev->ibdev, "create_qp: kernel XRC QP\n");
			return -EOPNOTSUPP;
		}
		init->cap.max_recv_wr = 0;
		init->cap.max_recv_sge = 0;
		break;
	default:
		ibdev_dbg(&vdev->ibdev, "create_qp: type %d unsupported\n",
			  init->qp_type);
		return -EOPNOTSUPP;
	}
	if (init->create_flags) {
		ibdev_dbg(&vdev->ibdev, "create_qp: flags %#x unsupported\n",
			  init->create_flags);
		return -EOPNOTSUPP;
	}
	if (vhca_udata_check(&vdev->ibdev, udata, "create_qp"))
		return -EINVAL;
	/* XRC QPs have no receive queue, as a QP on an SRQ. */
	err = vhca_qp_size_caps(&init->cap,
				init->srq || vhca_qp_type_xrc(init->qp_type),
				geo);
	if (err)
		ibdev_dbg(&vdev->ibdev, "create_qp: caps past the limits\n");
	return err;
}

/* The rings of a new QP; its records were allocated before. */
static int vhca_qp_alloc_rings(struct vhca_dev *vdev, struct vhca_qp *qp,
			       const struct vhca_qp_geometry *geo)
{
	int err;

	if (geo->sq_count) {
		err = vhca_ring_alloc(vdev, qp->uctx, &qp->sq, geo->sq_count,
				      geo->sq_stride, true);
		if (err)
			return err;
	}
	if (geo->rq_count) {
		err = vhca_ring_alloc(vdev, qp->uctx, &qp->rq, geo->rq_count,
				      geo->rq_stride, true);
		if (err) {
			if (qp->sq.count)
				vhca_ring_free(vdev, &qp->sq);
			return err;
		}
	}
	return 0;
}

static void vhca_qp_free_rings(struct vhca_dev *vdev, struct vhca_qp *qp)
{
	if (qp->rq.count)
		vhca_ring_free(vdev, &qp->rq);
	if (qp->sq.count)
		vhca_ring_free(vdev, &qp->sq);
}

/* The create response of a user QP: where its rings are and their shape. */
static int vhca_qp_create_resp(struct vhca_qp *qp, struct ib_udata *udata)
{
	struct vhca_create_qp_resp resp = {};

	if (qp->sq.mmap)
		resp.sq_mmap_offset = rdma_user_mmap_get_offset(&qp->sq.mmap->rdma);
	if (qp->rq.mmap)
		resp.rq_mmap_offset = rdma_user_mmap_get_offset(&qp->rq.mmap->rdma);
	resp.sq_size = qp->sq.size;
	resp.rq_size = qp->rq.size;
	resp.sq_count = qp->sq.count;
	resp.rq_count = qp->rq.count;
	resp.sq_stride = qp->sq.stride;
	resp.rq_stride = qp->rq.stride;
	resp.db_index = qp->recs.index;
	resp.max_inline = qp->max_inline;
	vhca_recs_offsets(&qp->recs, &resp.db_area_offset,
			  &resp.status_area_offset);
	return vhca_copy_resp(udata, &resp, sizeof(resp));
}

int vhca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibqp->device);
	struct vhca_qp *qp = to_vqp(ibqp);
	struct vhca_qp_geometry geo;
	int err;

	err = vhca_qp_check_create(vdev, init, udata, &geo);
	if (err)
		return err;
	err = vhca_object_get(&vdev->ibdev, &vdev->n_qp,
			      VHCA_MAX_QP + VHCA_MAD_OBJECTS,
			      "create_qp");
	if (err)
		return err;

	qp->uctx = vhca_uctx_of(udata);
	mutex_init(&qp->mutex);
	mutex_init(&qp->tx_mutex);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	qp->state = IB_QPS_RESET;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->max_send_sge = geo.max_send_sge;
	qp->max_recv_sge = geo.max_recv_sge;
	qp->max_inline = geo.max_inline;
	if (init->qp_type == IB_QPT_XRC_TGT)
		qp->xrcd = init->xrcd;

	err = vhca_recs_alloc(vdev, qp->uctx, &qp->recs,
			      VHCA_RECS_REACH(udata, struct vhca_create_qp_resp));
	if (err)
		goto err_count;
	err = vhca_qp_alloc_rings(vdev, qp, &geo);
	if (err)
		goto err_recs;
	err = vhca_engine_qp_init(qp);
	if (err)
		goto err_rings;
	err = vhca_qp_alloc_qpn(vdev, qp, init->qp_type);
	if (err)
		goto err_engine;
	if (udata) {
		err = vhca_qp_create_resp(qp, udata);
		if (err)
			goto err_qpn;
	}
	return 0;

err_qpn:
	vhca_handle_remove(&vdev->ibdev, "QP", &vdev->qp_xa, ibqp->qp_num,
			   qp->handle);
err_engine:
	vhca_engine_qp_fini(qp);
err_rings:
	vhca_qp_free_rings(vdev, qp);
err_recs:
	vhca_recs_free(vdev, qp->uctx, &qp->recs);
err_count:
	atomic_dec(&vdev->n_qp);
	return err;
}

/* Store the attributes of a validated modify in qp->attr. */
static void vhca_qp_store_attr(struct vhca_qp *qp,
			       const struct ib_qp_attr *attr, int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_AV) {
		a->ah_attr = attr->ah_attr;
		/* Routes the new path on the next send (any CPU's entry). */
		dst_cache_reset(&qp->route);
	}
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
}

int vhca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	struct vhca_qp *qp = to_vqp(ibqp);
	enum ib_qp_state cur, next;
	int err;

	if (vhca_udata_check(ibqp->device, udata, "modify_qp"))
		return -EINVAL;

	mutex_lock(&qp->mutex);
	cur = READ_ONCE(qp->state);
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		err = -EINVAL;
		goto out;
	}
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	err = vhca_qp_check_modify(ibqp->qp_type, cur, next, attr, mask);
	if (err) {
		ibdev_dbg(ibqp->device,
			  "modify_qp %u: %d -> %d with mask %#x refused: %d\n",
			  ibqp->qp_num, cur, next, mask, err);
		goto out;
	}
	vhca_qp_store_attr(qp, attr, mask);
	if (mask & IB_QP_STATE)
		vhca_qp_set_state(qp, next);
out:
	mutex_unlock(&qp->mutex);
	return err;
}

int vhca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init)
{
	struct vhca_qp *qp = to_vqp(ibqp);

	mutex_lock(&qp->mutex);
	*attr = qp->attr;
	attr->qp_state = READ_ONCE(qp->state);
	attr->cur_qp_state = attr->qp_state;
	attr->cap.max_send_wr = qp->sq.count;
	attr->cap.max_recv_wr = qp->rq.count;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_recv_sge = qp->max_recv_sge;
	attr->cap.max_inline_data = qp->max_inline;
	mutex_unlock(&qp->mutex);

	memset(init, 0, sizeof(*init));
	init->qp_type = ibqp->qp_type;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->port_num = VHCA_PORT;
	return 0;
}

int vhca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibqp->device);
	struct vhca_qp *qp = to_vqp(ibqp);

	vhca_handle_remove(&vdev->ibdev, "QP", &vdev->qp_xa, ibqp->qp_num,
			   qp->handle);
	vhca_engine_qp_fini(qp);
	vhca_engine_qp_linger(qp);
	vhca_recs_free(vdev, qp->uctx, &qp->recs);
	mutex_destroy(&qp->tx_mutex);
	mutex_destroy(&qp->mutex);
	vhca_rings_release(vdev, &vdev->n_qp, &qp->sq, &qp->rq);
	return 0;
}

static int vhca_wr_opcode(enum ib_qp_type type, enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_SEND:
		return VHCA_WR_SEND;
	case IB_WR_SEND_WITH_IMM:
		return VHCA_WR_SEND_WITH_IMM;
	case IB_WR_RDMA_WRITE:
		return type == IB_QPT_RC || type == IB_QPT_UC ?
		       VHCA_WR_RDMA_WRITE : -EINVAL;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return type == IB_QPT_RC || type == IB_QPT_UC ?
		       VHCA_WR_RDMA_WRITE_WITH_IMM : -EINVAL;
	case IB_WR_RDMA_READ:
		return type == IB_QPT_RC ? VHCA_WR_RDMA_READ : -EINVAL;
	case IB_WR_SEND_WITH_INV:
		return type == IB_QPT_RC ? VHCA_WR_SEND_WITH_INV : -EINVAL;
	case IB_WR_LOCAL_INV:
		return type == IB_QPT_RC ? VHCA_WR_LOCAL_INV : -EINVAL;
	case IB_WR_REG_MR:
		return type == IB_QPT_RC ? VHCA_WR_REG_MR : -EINVAL;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return type == IB_QPT_RC ? VHCA_WR_ATOMIC_CMP_AND_SWP : -EINVAL;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return type == IB_QPT_RC ? VHCA_WR_ATOMIC_FETCH_AND_ADD :
					   -EINVAL;
#ifdef VHCA_HAVE_IB_ATOMIC_WRITE
	case IB_WR_ATOMIC_WRITE:
		return type == IB_QPT_RC ? VHCA_WR_ATOMIC_WRITE : -EINVAL;
#endif
	default:
		return -EINVAL;
	}
}

/* The data of a kernel send WR: inline, or its SGEs. */
static int vhca_write_send_data(struct vhca_qp *qp,
				struct vhca_send_wqe *wqe,
				const struct ib_send_wr *wr)
{
	struct vhca_sge *sge = (struct vhca_sge *)(wqe + 1);
	u32 len = 0;
	int i;

	if (wr->send_flags & IB_SEND_INLINE) {
		u8 *data = (u8 *)(wqe + 1);

		if (wqe->opcode == VHCA_WR_RDMA_READ)
			return -EINVAL;
		for (i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length > qp->max_inline - len)
				return -EINVAL;
			memcpy(data + len,
			       (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		wqe->flags |= VHCA_WQE_INLINE;
		wqe->inline_len = len;
		return 0;
	}
	if (wr->num_sge > qp->max_send_sge)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	wqe->num_sge = wr->num_sge;
	return 0;
}

/* Write one kernel send WR into the slot at the head. */
static int vhca_write_send_wqe(struct vhca_qp *qp, const struct ib_send_wr *wr)
{
	struct vhca_send_wqe *wqe = vhca_ring_slot(&qp->sq, qp->sq_head);
	int op;

	op = vhca_wr_opcode(qp->ibqp.qp_type, wr->opcode);
	if (op < 0 || wr->num_sge < 0)
		return -EINVAL;
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr->wr_id;
	wqe->opcode = op;
	if (qp->sig_all || (wr->send_flags & IB_SEND_SIGNALED))
		wqe->flags |= VHCA_WQE_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		wqe->flags |= VHCA_WQE_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		wqe->flags |= VHCA_WQE_FENCE;
	if (op == VHCA_WR_SEND_WITH_IMM || op == VHCA_WR_RDMA_WRITE_WITH_IMM)
		wqe->imm_data = wr->ex.imm_data;
	if (op == VHCA_WR_SEND_WITH_INV || op == VHCA_WR_LOCAL_INV)
		wqe->invalidate_rkey = wr->ex.invalidate_rkey;
	if (op == VHCA_WR_LOCAL_INV)
		return 0;
	if (op == VHCA_WR_ATOMIC_CMP_AND_SWP ||
	    op == VHCA_WR_ATOMIC_FETCH_AND_ADD) {
		wqe->atomic.remote_addr = atomic_wr(wr)->remote_addr;
		wqe->atomic.rkey = atomic_wr(wr)->rkey;
		wqe->atomic.compare_add = atomic_wr(wr)->compare_add;
		wqe->atomic.swap = atomic_wr(wr)->swap;
	}
	if (op == VHCA_WR_REG_MR) {
		const struct ib_reg_wr *reg = reg_wr(wr);

		/*
		 * The engine finds the MR by the key's index: a key of
		 * another MR's index is no key of this one (index 0: none).
		 */
		wqe->reg.key = vhca_mr_key_index(reg->key) ==
			       to_vmr(reg->mr)->index ? reg->key : 0;
		wqe->reg.access = reg->access;
		return 0;
	}
	if (op == VHCA_WR_RDMA_WRITE || op == VHCA_WR_RDMA_WRITE_WITH_IMM ||
	    op == VHCA_WR_RDMA_READ || op == VHCA_WR_ATOMIC_WRITE) {
		wqe->rdma.remote_addr = rdma_wr(wr)->remote_addr;
		wqe->rdma.rkey = rdma_wr(wr)->rkey;
	}
	/*
	 * An ATOMIC WRITE (an ib_rdma_wr) stores the 8 bytes of its one
	 * SGE, read now, as inline data is (rdma-core's ibv_wr_atomic_write
	 * takes them from a pointer too); the WQE carries them.
	 */
	if (op == VHCA_WR_ATOMIC_WRITE) {
		if (wr->num_sge != 1 || wr->sg_list[0].length != sizeof(u64))
			return -EINVAL;
		memcpy(&wqe->atomic.swap,
		       (void *)(uintptr_t)wr->sg_list[0].addr, sizeof(u64));
		return 0;
	}
	if (!vhca_qp_connected(qp)) {
		if (!ud_wr(wr)->ah)
			return -EINVAL;
		wqe->ud.ah = to_vah(ud_wr(wr)->ah)->index;
		wqe->ud.remote_qpn = ud_wr(wr)->remote_qpn;
		wqe->ud.remote_qkey = ud_wr(wr)->remote_qkey;
	}

	return vhca_write_send_data(qp, wqe, wr);
}

/*
 * Kernel QPs post here.  A user QP's post_send system call carries no work
 * requests: it is the provider's kick, after it wrote WQEs into the ring
 * and found VHCA_STATUS_NEEDS_WAKEUP set; the requester runs at once, in
 * the system call.
 */
int vhca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct vhca_dev *vdev = to_vdev(ibqp->device);
	struct vhca_qp *qp = to_vqp(ibqp);
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&qp->sq_lock, flags);
	if (qp->uctx) {
		atomic64_inc(&vdev->counters[VHCA_CNT_DB_SYSCALLS]);
		if (qp->state == IB_QPS_ERR) {
			vhca_qp_flush_sq(qp);
			spin_lock(&qp->rq_lock);
			vhca_qp_flush_rq(qp);
			spin_unlock(&qp->rq_lock);
			goto out;
		}
		qp->db.kicked = true;
		spin_unlock_irqrestore(&qp->sq_lock, flags);
		/* From uverbs, in process context: the engine runs here. */
		vhca_engine_doorbell(qp);
		return 0;
	}
	if (qp->state < IB_QPS_RTS && qp->state != IB_QPS_ERR) {
		err = -EINVAL;
		goto out_bad;
	}
	for (; wr; wr = wr->next) {
		if (qp->sq_head - qp->sq_tail >= qp->sq.count) {
			err = -ENOMEM;
			goto out_bad;
		}
		err = vhca_write_send_wqe(qp, wr);
		if (err)
			goto out_bad;
		qp->sq_head++;
		/* The device reads the WQE only after this head. */
		smp_store_release(&qp->recs.db->head[0], qp->sq_head);
	}
	qp->db.kicked = true;
	if (qp->state == IB_QPS_ERR)
		vhca_qp_flush_sq(qp);
	else
		vhca_engine_kick(qp);
	goto out;

out_bad:
	*bad_wr = wr;
	ibdev_dbg(ibqp->device, "post_send on QP %u refused: %d\n",
		  ibqp->qp_num, err);
out:
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	return err;
}

int vhca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct vhca_qp *qp = to_vqp(ibqp);
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&qp->rq_lock, flags);
	/* XRC QPs have no receive queue (XRC_TGT's is in its SRQs). */
	if (qp->uctx || ibqp->srq || qp->state == IB_QPS_RESET ||
	    vhca_qp_type_xrc(ibqp->qp_type)) {
		err = -EINVAL;
		goto out_bad;
	}
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || wr->num_sge > qp->max_recv_sge) {
			err = -EINVAL;
			goto out_bad;
		}
		if (qp->rq_head - qp->rq_tail >= qp->rq.count) {
			err = -ENOMEM;
			goto out_bad;
		}
		vhca_write_recv_wqe(vhca_ring_slot(&qp->rq, qp->rq_head), wr);
		qp->rq_head++;
		/* The device reads the WQE only after this head. */
		smp_store_release(&qp->recs.db->head[1], qp->rq_head);
	}
	if (qp->state == IB_QPS_ERR)
		vhca_qp_flush_rq(qp);
	goto out;

out_bad:
	*bad_wr = wr;
	ibdev_dbg(ibqp->device, "post_recv on QP %u refused: %d\n",
		  ibqp->qp_num, err);
out:
	spin_unlock_irqrestore(&qp->rq_lock, flags);
	return err;
}
