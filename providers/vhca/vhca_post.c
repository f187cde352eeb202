// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca: the fast path on the mapped rings.
 *
 * Posting writes WQEs into the ring slots at the provider's head and then
 * publishes the new head in the doorbell record with a release store, so
 * the device, which reads the head with acquire semantics, sees whole
 * WQEs.  Before reusing a slot the provider reads the device's tail from
 * the status record with acquire semantics.  poll_cq mirrors this on the
 * CQ ring.  post_recv, post_srq_recv and poll_cq make no system call; a
 * post_send enters the kernel only when vhca_kick_needed() says so.
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "vhca.h"

void *vhca_wq_slot(const struct vhca_wq *wq, uint32_t index)
{
	return (char *)wq->buf + (size_t)(index & (wq->count - 1)) * wq->stride;
}

/* The ring has no free slot: the device has not consumed count WQEs. */
bool vhca_wq_full(const struct vhca_wq *wq)
{
	uint32_t tail = __atomic_load_n(wq->st_tail, __ATOMIC_ACQUIRE);

	return wq->head - tail >= wq->count;
}

void vhca_wq_publish(struct vhca_wq *wq)
{
	__atomic_store_n(wq->db_head, wq->head, __ATOMIC_RELEASE);
}

void vhca_copy_sges(struct vhca_sge *dst, const struct ibv_sge *src,
		    int num_sge)
{
	int i;

	for (i = 0; i < num_sge; i++)
		dst[i] = (struct vhca_sge){
			.addr = src[i].addr,
			.length = src[i].length,
			.lkey = src[i].lkey,
		};
}

/*
 * Status flags of a QP as seen after everything this thread posted.  The
 * head was published with a release store (the WQE is written before the
 * head); the full fence here orders that store before the flag load (a
 * store followed by a load to another location may be reordered on x86:
 * the store buffer), and the device orders its flag store before its head
 * load the same way (smp_mb), so either the device sees the new head or
 * the provider sees the flag and kicks: no wakeup is lost.  A compiler
 * barrier (udma_to_device_barrier() on x86) is not enough.
 */
static uint32_t vhca_qp_flags(const struct vhca_qp *qp)
{
	atomic_thread_fence(memory_order_seq_cst);
	return __atomic_load_n(&qp->st->flags, __ATOMIC_RELAXED);
}

/*
 * Whether a post_send must enter the kernel.  The one place deciding it:
 * only when the engine stopped watching the doorbell
 * (VHCA_STATUS_NEEDS_WAKEUP; it keeps watching while sends are in flight
 * and for the module's poll_budget after) or the QP is in the error state
 * (VHCA_STATUS_QP_ERROR: the flushes happen on a kick).
 */
static bool vhca_kick_needed(const struct vhca_qp *qp)
{
	return vhca_qp_flags(qp) &
	       (VHCA_STATUS_NEEDS_WAKEUP | VHCA_STATUS_QP_ERROR);
}

/* The kick: a post_send system call with no work requests. */
static int vhca_kick(struct vhca_qp *qp)
{
	struct ibv_send_wr *bad = NULL;

	return ibv_cmd_post_send(&qp->vqp.qp, NULL, &bad);
}

/* ---- receive ---- */

static int vhca_post_one_recv(struct vhca_wq *wq, const struct ibv_recv_wr *wr)
{
	struct vhca_recv_wqe hdr = {};
	void *slot;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > wq->max_sge)
		return EINVAL;
	if (vhca_wq_full(wq))
		return ENOMEM;

	slot = vhca_wq_slot(wq, wq->head);
	hdr.wr_id = wr->wr_id;
	hdr.num_sge = wr->num_sge;
	memcpy(slot, &hdr, sizeof(hdr));
	vhca_copy_sges((struct vhca_sge *)((char *)slot + sizeof(hdr)),
		       wr->sg_list, wr->num_sge);
	wq->head++;
	return 0;
}

/* Posts @wr's chain on @wq; returns how many were posted. */
static unsigned int vhca_post_recv_list(struct vhca_wq *wq,
					struct ibv_recv_wr *wr,
					struct ibv_recv_wr **bad_wr, int *err)
{
	unsigned int posted = 0;

	*err = 0;
	for (; wr; wr = wr->next, posted++) {
		*err = vhca_post_one_recv(wq, wr);
		if (*err) {
			*bad_wr = wr;
			break;
		}
	}
	if (posted)
		vhca_wq_publish(wq);
	return posted;
}

/*
 * No system call, except while the QP is in the error state: then the
 * kernel flushes what was posted when kicked (VHCA_STATUS_QP_ERROR).
 */
int vhca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr)
{
	struct vhca_qp *qp = to_vqp(ibqp);
	unsigned int posted;
	int err, kick_err;

	if (!qp->rq.buf || ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->rq.lock);
	posted = vhca_post_recv_list(&qp->rq, wr, bad_wr, &err);
	pthread_spin_unlock(&qp->rq.lock);

	if (posted && (vhca_qp_flags(qp) & VHCA_STATUS_QP_ERROR)) {
		kick_err = vhca_kick(qp);
		if (!err)
			err = kick_err;
	}
	return err;
}

int vhca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct vhca_srq *srq = to_vsrq(ibsrq);
	int err;

	pthread_spin_lock(&srq->rq.lock);
	vhca_post_recv_list(&srq->rq, wr, bad_wr, &err);
	pthread_spin_unlock(&srq->rq.lock);
	return err;
}

/* ---- send ---- */

static const int vhca_wr_opcode[] = {
	[IBV_WR_RDMA_WRITE] = VHCA_WR_RDMA_WRITE,
	[IBV_WR_RDMA_WRITE_WITH_IMM] = VHCA_WR_RDMA_WRITE_WITH_IMM,
	[IBV_WR_SEND] = VHCA_WR_SEND,
	[IBV_WR_SEND_WITH_IMM] = VHCA_WR_SEND_WITH_IMM,
	[IBV_WR_RDMA_READ] = VHCA_WR_RDMA_READ,
	[IBV_WR_ATOMIC_CMP_AND_SWP] = VHCA_WR_ATOMIC_CMP_AND_SWP,
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = VHCA_WR_ATOMIC_FETCH_AND_ADD,
#if VHCA_RDMA_CORE >= 44
	[IBV_WR_ATOMIC_WRITE] = VHCA_WR_ATOMIC_WRITE,
#endif
	[IBV_WR_LOCAL_INV] = VHCA_WR_LOCAL_INV,
	[IBV_WR_BIND_MW] = VHCA_WR_BIND_MW,
	[IBV_WR_SEND_WITH_INV] = VHCA_WR_SEND_WITH_INV,
};

#define VHCA_SEND_FLAGS (IBV_SEND_FENCE | IBV_SEND_SIGNALED | \
			 IBV_SEND_SOLICITED | IBV_SEND_INLINE)

/*
 * The VHCA_WR_* opcode of @wr on @qp, or -1 when it has none there.  A
 * BIND_MW work request binds a type 2 window (ibv_bind_mw the type 1
 * ones: @type1 set); LOCAL_INV and SEND_WITH_INV name a window's rkey
 * (a user process has no MR to invalidate).
 */
static int vhca_send_opcode(const struct vhca_qp *qp,
			    const struct ibv_send_wr *wr, bool type1)
{
	enum ibv_qp_type type = qp->vqp.qp.qp_type;

	switch (wr->opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return vhca_wr_opcode[wr->opcode];
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return type == IBV_QPT_UD ? -1 : vhca_wr_opcode[wr->opcode];
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
#if VHCA_RDMA_CORE >= 44
	case IBV_WR_ATOMIC_WRITE:	/* its 8 bytes: its one SGE's */
#endif
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_RDMA_READ:
		return type == IBV_QPT_RC || type == IBV_QPT_XRC_SEND ?
		       vhca_wr_opcode[wr->opcode] : -1;
	case IBV_WR_LOCAL_INV:
		return type == IBV_QPT_RC ? vhca_wr_opcode[wr->opcode] : -1;
	case IBV_WR_BIND_MW:
		if (type != IBV_QPT_RC || !wr->bind_mw.mw ||
		    wr->bind_mw.mw->type !=
		    (type1 ? IBV_MW_TYPE_1 : IBV_MW_TYPE_2))
			return -1;
		return VHCA_WR_BIND_MW;
	default:
		return -1;
	}
}

/* Copies the data of @wr's SGEs after the header; 0 or EINVAL. */
static int vhca_copy_inline(const struct vhca_qp *qp, void *data,
			    const struct ibv_send_wr *wr, uint32_t *len)
{
	size_t total = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		size_t n = wr->sg_list[i].length;

		if (n > qp->max_inline - total)
			return EINVAL;
		memcpy((char *)data + total,
		       (const void *)(uintptr_t)wr->sg_list[i].addr, n);
		total += n;
	}
	*len = total;
	return 0;
}

void vhca_wqe_set_bind(struct vhca_send_wqe *wqe, const struct ibv_mw *mw,
		       uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	wqe->bind.mw_rkey = mw->rkey;
	wqe->bind.new_rkey = rkey;
	wqe->bind.mr_lkey = info->mr ? info->mr->lkey : 0;
	wqe->bind.addr = info->addr;
	wqe->bind.length = info->length;
	wqe->bind.access = info->mw_access_flags;
}

/* A send WR's checks before it takes a slot: EINVAL, or ENOMEM (full). */
static int vhca_send_wr_check(const struct vhca_qp *qp,
			      const struct ibv_send_wr *wr, int opcode)
{
	if (opcode < 0 || (wr->send_flags & ~VHCA_SEND_FLAGS) ||
	    wr->num_sge < 0)
		return EINVAL;
#if VHCA_RDMA_CORE >= 44
	if (opcode == VHCA_WR_ATOMIC_WRITE) {
		/* Its 8 bytes, of one SGE (or inline), go in the WQE (RC). */
		if (wr->num_sge != 1 || wr->sg_list[0].length != sizeof(uint64_t))
			return EINVAL;
		return vhca_wq_full(&qp->sq) ? ENOMEM : 0;
	}
#endif
	if (wr->send_flags & IBV_SEND_INLINE) {
		if (opcode == VHCA_WR_RDMA_READ ||
		    opcode == VHCA_WR_ATOMIC_CMP_AND_SWP ||
		    opcode == VHCA_WR_ATOMIC_FETCH_AND_ADD ||
		    opcode == VHCA_WR_LOCAL_INV || opcode == VHCA_WR_BIND_MW)
			return EINVAL;
	} else if ((uint32_t)wr->num_sge > qp->sq.max_sge) {
		return EINVAL;
	}
	if (qp->vqp.qp.qp_type == IBV_QPT_UD && !wr->wr.ud.ah)
		return EINVAL;
	return vhca_wq_full(&qp->sq) ? ENOMEM : 0;
}

/*
 * The data of @wr for a WQE of @opcode at @slot, whose header @hdr is being
 * built: its SGEs or inline data after the header, or ATOMIC WRITE's 8
 * bytes in it.  0 or EINVAL (inline data too long).
 */
static int vhca_send_data(const struct vhca_qp *qp,
			  const struct ibv_send_wr *wr, int opcode, char *slot,
			  struct vhca_send_wqe *hdr)
{
	switch (opcode) {
#if VHCA_RDMA_CORE >= 44
	case VHCA_WR_ATOMIC_WRITE:
		memcpy(&hdr->atomic.swap,
		       (const void *)(uintptr_t)wr->sg_list[0].addr,
		       sizeof(hdr->atomic.swap));
		return 0;
#endif
	case VHCA_WR_LOCAL_INV:
	case VHCA_WR_BIND_MW:
		/* No data: the SGEs, if any, are not the operation's. */
		return 0;
	}
	if (wr->send_flags & IBV_SEND_INLINE) {
		hdr->flags |= VHCA_WQE_INLINE;
		return vhca_copy_inline(qp, slot + sizeof(*hdr), wr,
					&hdr->inline_len);
	}
	vhca_copy_sges((struct vhca_sge *)(slot + sizeof(*hdr)), wr->sg_list,
		       wr->num_sge);
	hdr->num_sge = wr->num_sge;
	return 0;
}

static int vhca_post_one_send(struct vhca_qp *qp, const struct ibv_send_wr *wr,
			      bool type1)
{
	struct vhca_send_wqe hdr = {};
	struct vhca_wq *sq = &qp->sq;
	int opcode = vhca_send_opcode(qp, wr, type1);
	char *slot;
	int err;

	err = vhca_send_wr_check(qp, wr, opcode);
	if (err)
		return err;
	slot = vhca_wq_slot(sq, sq->head);
	err = vhca_send_data(qp, wr, opcode, slot, &hdr);
	if (err)
		return err;

	hdr.wr_id = wr->wr_id;
	hdr.opcode = opcode;
	if ((wr->send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		hdr.flags |= VHCA_WQE_SIGNALED;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		hdr.flags |= VHCA_WQE_SOLICITED;
	if (wr->send_flags & IBV_SEND_FENCE)
		hdr.flags |= VHCA_WQE_FENCE;
	if (opcode == VHCA_WR_SEND_WITH_IMM ||
	    opcode == VHCA_WR_RDMA_WRITE_WITH_IMM)
		hdr.imm_data = wr->imm_data;
	if (opcode == VHCA_WR_SEND_WITH_INV || opcode == VHCA_WR_LOCAL_INV)
		hdr.invalidate_rkey = wr->invalidate_rkey;
	if (opcode == VHCA_WR_BIND_MW) {
		vhca_wqe_set_bind(&hdr, wr->bind_mw.mw, wr->bind_mw.rkey,
				  &wr->bind_mw.bind_info);
	} else if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
		hdr.ud.ah = to_vah(wr->wr.ud.ah)->ah_index;
		hdr.ud.remote_qpn = wr->wr.ud.remote_qpn;
		hdr.ud.remote_qkey = wr->wr.ud.remote_qkey;
	} else if (opcode == VHCA_WR_ATOMIC_CMP_AND_SWP ||
		   opcode == VHCA_WR_ATOMIC_FETCH_AND_ADD) {
		hdr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		hdr.atomic.rkey = wr->wr.atomic.rkey;
		hdr.atomic.compare_add = wr->wr.atomic.compare_add;
		hdr.atomic.swap = wr->wr.atomic.swap;
	} else if (opcode != VHCA_WR_SEND && opcode != VHCA_WR_SEND_WITH_IMM &&
		   opcode != VHCA_WR_SEND_WITH_INV &&
		   opcode != VHCA_WR_LOCAL_INV) {
		hdr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		hdr.rdma.rkey = wr->wr.rdma.rkey;
	}
	if (qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND)
		hdr.xrc_srqn = wr->qp_type.xrc.remote_srqn;
	memcpy(slot, &hdr, sizeof(hdr));
	sq->head++;
	return 0;
}

/*
 * Sends are refused before RTS (as rxe does); in the error state they are
 * queued and flushed by the kernel on the kick.  If the kick fails after
 * work requests were queued, its error is returned with *bad_wr NULL: the
 * work requests stay queued.
 */
static int vhca_post_send_list(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			       struct ibv_send_wr **bad_wr, bool type1)
{
	struct vhca_qp *qp = to_vqp(ibqp);
	unsigned int posted = 0;
	int err = 0, kick_err;

	if (!qp->sq.buf || ibqp->state < IBV_QPS_RTS) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&qp->sq.lock);
	for (; wr; wr = wr->next, posted++) {
		err = vhca_post_one_send(qp, wr, type1);
		if (err) {
			*bad_wr = wr;
			break;
		}
	}
	if (posted)
		vhca_wq_publish(&qp->sq);
	pthread_spin_unlock(&qp->sq.lock);

	if (posted && vhca_kick_needed(qp)) {
		kick_err = vhca_kick(qp);
		if (!err && kick_err) {
			*bad_wr = NULL;
			err = kick_err;
		}
	}
	return err;
}

int vhca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	return vhca_post_send_list(ibqp, wr, bad_wr, false);
}

int vhca_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {
		.wr_id = mw_bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = mw_bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = mw_bind->bind_info,
		},
	};
	struct ibv_send_wr *bad = NULL;
	int err;

	err = vhca_post_send_list(ibqp, &wr, &bad, true);
	/* Queued (a failed kick leaves it queued): the key is the new one. */
	if (!err || !bad)
		mw->rkey = wr.bind_mw.rkey;
	return err;
}

/* ---- completions ---- */

unsigned int vhca_cqe_wc_flags(const struct vhca_cqe *cqe)
{
	unsigned int flags = 0;

	if (cqe->flags & VHCA_CQE_WITH_IMM)
		flags |= IBV_WC_WITH_IMM;
	if (cqe->flags & VHCA_CQE_GRH)
		flags |= IBV_WC_GRH;
	/* invalidated_rkey shares imm_data's place, in the CQE as in ibv_wc. */
	if (cqe->flags & VHCA_CQE_WITH_INV)
		flags |= IBV_WC_WITH_INV;
	return flags;
}

/*
 * Whether the CQE at the CQ's consumer index was discarded by its QP's
 * reset (vhca_verbs.c links the discards); drops the discards that ended.
 * Under the CQ's lock, with cq->discard not NULL.
 */
static bool vhca_cq_discarded(struct vhca_cq *cq, const struct vhca_cqe *cqe)
{
	struct vhca_cq_discard **p = &cq->discard, *d;

	while ((d = *p)) {
		if ((int32_t)(d->until - cq->ci) <= 0) {
			*p = d->next;
			d->linked = false;
			continue;
		}
		if (d->qpn == cqe->qp_num)
			return true;
		p = &d->next;
	}
	return false;
}

/*
 * The producer index is read (acquire: the CQEs before it are whole) only
 * when the consumer index has caught up with the value last read.  The
 * discard check runs at the CQE's own index, before it is consumed.
 */
bool vhca_cq_pop(struct vhca_cq *cq, struct vhca_cqe_ts *cqe)
{
	const char *ring = cq->ring;
	bool discarded;

	for (;;) {
		if (cq->ci == cq->tail) {
			cq->tail = __atomic_load_n(&cq->st->tail[0],
						   __ATOMIC_ACQUIRE);
			if (cq->ci == cq->tail)
				return false;
		}
		memcpy(cqe, ring + (size_t)(cq->ci & (cq->count - 1)) *
		       cq->cqe_size, cq->cqe_size);
		discarded = cq->discard && vhca_cq_discarded(cq, &cqe->cqe);
		cq->ci++;
		if (!discarded)
			return true;
	}
}

/* A store only when the index moved: an empty poll writes nothing. */
void vhca_cq_publish(struct vhca_cq *cq)
{
	if (__atomic_load_n(&cq->db->head[0], __ATOMIC_RELAXED) != cq->ci)
		__atomic_store_n(&cq->db->head[0], cq->ci, __ATOMIC_RELEASE);
}

static void vhca_cqe_to_wc(const struct vhca_cqe *cqe, struct ibv_wc *wc)
{
	*wc = (struct ibv_wc){
		.wr_id = cqe->wr_id,
		.status = cqe->status,
		.opcode = cqe->opcode,
		.vendor_err = cqe->vendor_err,
		.byte_len = cqe->byte_len,
		.imm_data = cqe->imm_data,
		.qp_num = cqe->qp_num,
		.src_qp = cqe->src_qp,
		.wc_flags = vhca_cqe_wc_flags(cqe),
		.pkey_index = cqe->pkey_index,
		.sl = cqe->sl,
	};
}

/* Returns the number of completions, or -1 if the CQ lost its ring. */
int vhca_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct vhca_cq *cq = to_vcq(ibcq);
	struct vhca_cqe_ts cqe;
	int n = 0;

	vhca_cq_lock(cq);
	if (!cq->ring) {
		vhca_cq_unlock(cq);
		return -1;
	}
	while (n < num_entries && vhca_cq_pop(cq, &cqe))
		vhca_cqe_to_wc(&cqe.cqe, &wc[n++]);
	vhca_cq_publish(cq);
	vhca_cq_unlock(cq);
	return n;
}

/* ---- for the ibv_qp_ex API (vhca_qpex.c) ---- */

int vhca_sq_kick(struct vhca_qp *qp)
{
	return vhca_kick_needed(qp) ? vhca_kick(qp) : 0;
}
