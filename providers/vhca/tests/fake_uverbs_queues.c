// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The dispatch test's fake kernel (fake_uverbs.h), its queues: the CQ, QP
 * and SRQ commands, their rings and doorbell records, and the device's
 * side of a CQ.
 */
#include <errno.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "fake_uverbs.h"

struct fake_cq *find_cq(uint32_t handle)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fk.cqs); i++)
		if (fk.cqs[i].live && fk.cqs[i].handle == handle)
			return &fk.cqs[i];
	return NULL;
}

struct fake_qp *find_qp(uint32_t handle)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fk.qps); i++)
		if (fk.qps[i].live && fk.qps[i].handle == handle)
			return &fk.qps[i];
	return NULL;
}

struct fake_srq *find_srq(uint32_t handle)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fk.srqs); i++)
		if (fk.srqs[i].live && fk.srqs[i].handle == handle)
			return &fk.srqs[i];
	return NULL;
}

/* A free entry of one of the fake kernel's object arrays. */
#define FREE_SLOT(arr) ({						\
	__typeof__(&(arr)[0]) _o = NULL;				\
	for (unsigned int _i = 0; _i < ARRAY_SIZE(arr) && !_o; _i++)	\
		if (!(arr)[_i].live)					\
			_o = &(arr)[_i];				\
	_o; })

static void *cqe_slot(const struct fake_cq *cq, struct region *ring,
		      uint32_t count, uint32_t index)
{
	return (char *)ring->kview + (size_t)(index & (count - 1)) *
	       cq->cqe_size;
}

void push_cqe_ts(struct fake_cq *cq, const struct vhca_cqe *cqe,
		 uint64_t core_clock, uint64_t wallclock_ns)
{
	uint32_t *tail = &fk_st(cq->db_index)->tail[0];
	struct vhca_cqe_ts *slot = cqe_slot(cq, cq->ring, cq->count, *tail);

	slot->cqe = *cqe;
	if (cq->cqe_size == sizeof(*slot)) {
		slot->core_clock = core_clock;
		slot->wallclock_ns = wallclock_ns;
	}
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
}

void push_cqe(struct fake_cq *cq, const struct vhca_cqe *cqe)
{
	push_cqe_ts(cq, cqe, 0, 0);
}

/*
 * A CQ of at least @cqe entries, of @cqe_size bytes each, into the core
 * response @core (its handle and cqe) and the driver's @drv.
 */
static int new_cq(uint32_t cqe, uint32_t cqe_size,
		  struct ib_uverbs_create_cq_resp *core,
		  struct vhca_create_cq_resp *drv)
{
	struct fake_cq *cq = FREE_SLOT(fk.cqs);

	if (!cq || !cqe)
		return EINVAL;
	cq->count = pow2_at_least(cqe + 1);
	cq->cqe_size = cqe_size;
	cq->ring = region_new(0, page_up(cq->count * cqe_size), false);
	if (!cq->ring)
		return ENOMEM;
	cq->handle = FAKE_CQ_HANDLE + fk.next_handle++;
	cq->db_index = new_rec();
	cq->live = true;
	core->cq_handle = cq->handle;
	core->cqe = cq->count - 1;
	drv->mmap_offset = cq->ring->offset;
	drv->ring_size = cq->ring->size;
	drv->cqe_count = cq->count;
	drv->db_index = cq->db_index;
	rec_offsets(cq->db_index, &drv->db_area_offset,
		    &drv->status_area_offset);
	drv->cqe_size = fk.cqe_size_resp ? fk.cqe_size_resp : cqe_size;
	return 0;
}

/* As a kernel before timestamps: the response's cqe_size is 0. */
int fake_create_cq(const void *req, void *resp, size_t resp_len)
{
	struct ib_uverbs_create_cq_resp core = {};
	struct vhca_create_cq_resp drv = {};
	int err;

	fk.create_cq = *(const struct ib_uverbs_create_cq *)req;
	err = new_cq(fk.create_cq.cqe, sizeof(struct vhca_cqe), &core, &drv);
	if (err)
		return err;
	if (!fk.cqe_size_resp)
		drv.cqe_size = 0;
	return respond(resp, resp_len, &core, sizeof(core), &drv, sizeof(drv));
}

int fake_ex_create_cq(const void *req, void *resp, size_t resp_len)
{
	struct ib_uverbs_ex_create_cq_resp core = {};
	struct vhca_create_cq_resp drv = {};
	const struct ib_uverbs_ex_create_cq *c = req;
	int err;

	fk.ex_create_cq = *c;
	if (c->comp_mask ||
	    (c->flags & ~(uint32_t)IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION))
		return EOPNOTSUPP;
	err = new_cq(c->cqe, c->flags ? sizeof(struct vhca_cqe_ts) :
		     sizeof(struct vhca_cqe), &core.base, &drv);
	if (err)
		return err;
	core.response_length = sizeof(core);
	return respond(resp, resp_len, &core, sizeof(core), &drv, sizeof(drv));
}

/* A new ring holding the unconsumed CQEs at the same indices. */
int fake_resize_cq(const void *req, void *resp, size_t resp_len)
{
	struct ib_uverbs_resize_cq_resp core = {};
	struct vhca_resize_cq_resp drv = {};
	struct region *ring;
	struct fake_cq *cq;
	uint32_t i, count, ci, tail;

	fk.resize_cq = *(const struct ib_uverbs_resize_cq *)req;
	cq = find_cq(fk.resize_cq.cq_handle);
	if (!cq)
		return EINVAL;
	count = pow2_at_least(fk.resize_cq.cqe + 1);
	ring = region_new(0, page_up(count * cq->cqe_size), false);
	if (!ring)
		return ENOMEM;
	ci = fk_db(cq->db_index)[0].head[0];
	tail = fk_st(cq->db_index)[0].tail[0];
	for (i = ci; i != tail; i++)
		memcpy(cqe_slot(cq, ring, count, i),
		       cqe_slot(cq, cq->ring, cq->count, i), cq->cqe_size);
	region_del(cq->ring);
	cq->ring = ring;
	cq->count = count;
	core.cqe = count - 1;
	drv.mmap_offset = ring->offset;
	drv.ring_size = ring->size;
	drv.cqe_count = count;
	return respond(resp, resp_len, &core, sizeof(core), &drv, sizeof(drv));
}

int fake_destroy_cq(uint32_t handle, void *resp, size_t resp_len)
{
	struct ib_uverbs_destroy_cq_resp core = {};
	struct fake_cq *cq = find_cq(handle);

	if (!cq)
		return EINVAL;
	fk.destroyed = handle;
	region_del(cq->ring);
	cq->live = false;
	return respond(resp, resp_len, &core, sizeof(core), NULL, 0);
}

/* A work ring of at least @wr slots holding @wqe_bytes each. */
static int new_wq(struct fake_wq *wq, uint32_t wr, size_t wqe_bytes)
{
	if (!wr)
		return 0;
	wq->count = pow2_at_least(wr);
	wq->stride = pow2_at_least(wqe_bytes);
	wq->ring = region_new(0, page_up(wq->count * wq->stride), true);
	return wq->ring ? 0 : ENOMEM;
}

/*
 * An XRC_TGT QP, as the kernel creates it: in the XRC domain the PD
 * handle names, no CQ, no rings, no driver data in the response.
 */
static int fake_create_xrc_tgt(struct fake_qp *qp,
			       const struct ib_uverbs_create_qp *c,
			       void *resp, size_t resp_len)
{
	struct ib_uverbs_create_qp_resp core = {};

	if (c->pd_handle != FAKE_XRCD_HANDLE || c->is_srq)
		return EINVAL;
	qp->handle = FAKE_QP_HANDLE + fk.next_handle++;
	qp->qpn = FAKE_QPN + fk.next_handle;
	qp->type = c->qp_type;
	qp->live = true;
	core.qp_handle = qp->handle;
	core.qpn = qp->qpn;
	return respond(resp, resp_len, &core, sizeof(core), NULL, 0);
}

/* The XRC_TGT QP qpn opened again: another handle, nothing mapped. */
int fake_open_qp(const struct ib_uverbs_open_qp *c, void *resp,
		 size_t resp_len)
{
	struct ib_uverbs_create_qp_resp core = {};
	struct fake_qp *qp = FREE_SLOT(fk.qps);

	fk.open_qp = *c;
	if (!qp || c->pd_handle != FAKE_XRCD_HANDLE ||
	    c->qp_type != IBV_QPT_XRC_RECV)
		return EINVAL;
	memset(qp, 0, sizeof(*qp));
	qp->handle = FAKE_QP_HANDLE + fk.next_handle++;
	qp->qpn = c->qpn;
	qp->type = c->qp_type;
	qp->live = true;
	core.qp_handle = qp->handle;
	core.qpn = qp->qpn;
	return respond(resp, resp_len, &core, sizeof(core), NULL, 0);
}

int fake_create_qp(const void *req, void *resp, size_t resp_len)
{
	const struct ib_uverbs_create_qp *c = req;
	struct ib_uverbs_create_qp_resp core = {};
	struct vhca_create_qp_resp drv = {};
	struct fake_qp *qp = FREE_SLOT(fk.qps);
	uint32_t inl = (c->max_inline_data + 31) & ~31u;
	size_t send_bytes;
	int err;

	fk.create_qp = *c;
	if (!qp)
		return ENOMEM;
	memset(qp, 0, sizeof(*qp));
	if (c->qp_type == IBV_QPT_XRC_RECV)
		return fake_create_xrc_tgt(qp, c, resp, resp_len);
	qp->scq = find_cq(c->send_cq_handle);
	qp->rcq = find_cq(c->recv_cq_handle);
	/* XRC_INI: no receive CQ, no receive queue. */
	if (!qp->scq || (!qp->rcq && c->qp_type != IBV_QPT_XRC_SEND) ||
	    (c->is_srq && !find_srq(c->srq_handle)))
		return EINVAL;
	send_bytes = c->max_send_sge * sizeof(struct vhca_sge);
	if (send_bytes < inl)
		send_bytes = inl;
	err = new_wq(&qp->sq, c->max_send_wr,
		     sizeof(struct vhca_send_wqe) + send_bytes);
	if (!err && !c->is_srq && c->qp_type != IBV_QPT_XRC_SEND)
		err = new_wq(&qp->rq, c->max_recv_wr,
			     sizeof(struct vhca_recv_wqe) +
			     c->max_recv_sge * sizeof(struct vhca_sge));
	if (err)
		return err;
	qp->handle = FAKE_QP_HANDLE + fk.next_handle++;
	qp->qpn = FAKE_QPN + fk.next_handle;
	qp->type = c->qp_type;
	qp->db_index = new_rec();
	qp->live = true;

	core.qp_handle = qp->handle;
	core.qpn = qp->qpn;
	core.max_send_wr = qp->sq.count;
	core.max_recv_wr = qp->rq.count;
	core.max_send_sge = c->max_send_sge;
	core.max_recv_sge = c->max_recv_sge;
	core.max_inline_data = inl;
	if (qp->sq.ring) {
		drv.sq_mmap_offset = qp->sq.ring->offset;
		drv.sq_size = qp->sq.ring->size;
	}
	if (qp->rq.ring) {
		drv.rq_mmap_offset = qp->rq.ring->offset;
		drv.rq_size = qp->rq.ring->size;
	}
	drv.sq_count = qp->sq.count;
	drv.rq_count = qp->rq.count;
	drv.sq_stride = qp->sq.stride;
	drv.rq_stride = qp->rq.stride;
	drv.db_index = qp->db_index;
	rec_offsets(qp->db_index, &drv.db_area_offset, &drv.status_area_offset);
	drv.max_inline = inl;
	if (fk.bad_qp_resp)
		drv.sq_count = 3;
	return respond(resp, resp_len, &core, sizeof(core), &drv, sizeof(drv));
}

/* RESET drops what was queued; ERR raises VHCA_STATUS_QP_ERROR. */
int fake_modify_qp(const void *req)
{
	const struct ib_uverbs_modify_qp *m = req;
	struct fake_qp *qp = find_qp(m->qp_handle);
	struct vhca_status_rec *st;

	fk.modify_qp = *m;
	if (!qp)
		return EINVAL;
	if (!(m->attr_mask & IBV_QP_STATE))
		return 0;
	st = fk_st(qp->db_index);
	qp->state = m->qp_state;
	/* As the kernel: the engine is idle after a state change. */
	st->flags |= VHCA_STATUS_NEEDS_WAKEUP;
	if (qp->state == IBV_QPS_ERR)
		st->flags |= VHCA_STATUS_QP_ERROR;
	else
		st->flags &= ~VHCA_STATUS_QP_ERROR;
	if (qp->state == IBV_QPS_RESET) {
		st->tail[0] = fk_db(qp->db_index)[0].head[0];
		st->tail[1] = fk_db(qp->db_index)[0].head[1];
	}
	return 0;
}

int fake_query_qp(const struct ib_uverbs_query_qp *q, void *resp,
		  size_t resp_len)
{
	struct ib_uverbs_query_qp_resp r = {};
	struct fake_qp *qp = find_qp(q->qp_handle);

	if (!qp)
		return EINVAL;
	r.qp_state = qp->state;
	r.path_mtu = IBV_MTU_2048;
	r.dest_qp_num = FAKE_DEST_QPN;
	r.max_send_wr = qp->sq.count;
	r.max_recv_wr = qp->rq.count;
	return respond(resp, resp_len, &r, sizeof(r), NULL, 0);
}

/* Flushes every WQE between the device's tail and the provider's head. */
static void flush_wq(struct fake_wq *wq, struct fake_cq *cq, uint32_t qpn,
		     uint32_t *tail, uint32_t head, int opcode)
{
	struct vhca_cqe cqe;
	uint64_t wr_id;

	for (; *tail != head; (*tail)++) {
		memcpy(&wr_id, (char *)wq->ring->kview +
		       (*tail & (wq->count - 1)) * wq->stride, sizeof(wr_id));
		cqe = (struct vhca_cqe){
			.wr_id = wr_id, .status = IBV_WC_WR_FLUSH_ERR,
			.opcode = opcode, .qp_num = qpn,
		};
		push_cqe(cq, &cqe);
	}
}

/* The kick: no work requests; a QP in the error state is flushed. */
int fake_post_send(const void *req, void *resp, size_t resp_len)
{
	struct ib_uverbs_post_send_resp r = {};
	struct fake_qp *qp;
	struct vhca_db_rec *db;
	struct vhca_status_rec *st;

	fk.post_send = *(const struct ib_uverbs_post_send *)req;
	qp = find_qp(fk.post_send.qp_handle);
	if (!qp || fk.post_send.wr_count)
		return EINVAL;
	db = fk_db(qp->db_index);
	st = fk_st(qp->db_index);
	if (qp->state == IBV_QPS_ERR) {
		if (qp->sq.ring)
			flush_wq(&qp->sq, qp->scq, qp->qpn, &st->tail[0],
				 db->head[0], IBV_WC_SEND);
		if (qp->rq.ring)
			flush_wq(&qp->rq, qp->rcq, qp->qpn, &st->tail[1],
				 db->head[1], IBV_WC_RECV);
	}
	return respond(resp, resp_len, &r, sizeof(r), NULL, 0);
}

int fake_destroy_qp(uint32_t handle, void *resp, size_t resp_len)
{
	struct ib_uverbs_destroy_qp_resp core = {};
	struct fake_qp *qp = find_qp(handle);

	if (!qp)
		return EINVAL;
	fk.destroyed = handle;
	region_del(qp->sq.ring);
	region_del(qp->rq.ring);
	qp->live = false;
	return respond(resp, resp_len, &core, sizeof(core), NULL, 0);
}

/* An SRQ of fk.create_srq's size, numbered srqn. */
static int fake_new_srq(uint32_t srqn, void *resp, size_t resp_len)
{
	struct ib_uverbs_create_srq_resp core = {};
	struct vhca_create_srq_resp drv = {};
	struct fake_srq *srq = FREE_SLOT(fk.srqs);
	int err;

	if (!srq)
		return ENOMEM;
	memset(srq, 0, sizeof(*srq));
	err = new_wq(&srq->rq, fk.create_srq.max_wr + 1,
		     sizeof(struct vhca_recv_wqe) +
		     fk.create_srq.max_sge * sizeof(struct vhca_sge));
	if (err)
		return err;
	srq->handle = FAKE_SRQ_HANDLE + fk.next_handle++;
	srq->db_index = new_rec();
	srq->live = true;
	core.srq_handle = srq->handle;
	core.max_wr = srq->rq.count;
	core.max_sge = fk.create_srq.max_sge;
	core.srqn = srqn;
	drv.mmap_offset = srq->rq.ring->offset;
	drv.size = srq->rq.ring->size;
	drv.count = srq->rq.count;
	drv.stride = srq->rq.stride;
	drv.db_index = srq->db_index;
	rec_offsets(srq->db_index, &drv.db_area_offset,
		    &drv.status_area_offset);
	return respond(resp, resp_len, &core, sizeof(core), &drv, sizeof(drv));
}

int fake_create_srq(const void *req, void *resp, size_t resp_len)
{
	fk.create_srq = *(const struct ib_uverbs_create_srq *)req;
	return fake_new_srq(FAKE_SRQN, resp, resp_len);
}

/* CREATE_XSRQ: an XRC SRQ needs the XRC domain and a CQ. */
int fake_create_xsrq(const void *req, void *resp, size_t resp_len)
{
	const struct ib_uverbs_create_xsrq *c = req;

	fk.create_xsrq = *c;
	fk.create_srq = (struct ib_uverbs_create_srq){
		.pd_handle = c->pd_handle, .max_wr = c->max_wr,
		.max_sge = c->max_sge, .srq_limit = c->srq_limit,
	};
	if (c->srq_type == IBV_SRQT_XRC &&
	    (c->xrcd_handle != FAKE_XRCD_HANDLE || !find_cq(c->cq_handle)))
		return EINVAL;
	return fake_new_srq(c->srq_type == IBV_SRQT_XRC ? FAKE_XSRQN :
			    FAKE_SRQN, resp, resp_len);
}

int fake_query_srq(const struct ib_uverbs_query_srq *q, void *resp,
		   size_t resp_len)
{
	struct ib_uverbs_query_srq_resp r = {};
	struct fake_srq *srq = find_srq(q->srq_handle);

	if (!srq)
		return EINVAL;
	r.max_wr = srq->rq.count;
	r.max_sge = fk.create_srq.max_sge;
	r.srq_limit = FAKE_SRQ_LIMIT;
	return respond(resp, resp_len, &r, sizeof(r), NULL, 0);
}

int fake_destroy_srq(uint32_t handle, void *resp, size_t resp_len)
{
	struct ib_uverbs_destroy_srq_resp core = {};
	struct fake_srq *srq = find_srq(handle);

	if (!srq)
		return EINVAL;
	fk.destroyed = handle;
	region_del(srq->rq.ring);
	srq->live = false;
	return respond(resp, resp_len, &core, sizeof(core), NULL, 0);
}
