// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca: the verbs that go through the kernel (PD and parent domain, MR,
 * CQ, QP, AH, and the imports of PDs and MRs; SRQs and XRC domains are in
 * vhca_srq.c).
 *
 * The kernel validates every argument and answers with the real sizes; the
 * provider maps the rings the create responses describe and checks that
 * each response is self-consistent before trusting it (EPROTO otherwise,
 * with the kernel object destroyed again).  Functions returning a pointer
 * set errno on failure; the others return 0 or a positive errno value.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>

#include "vhca.h"

static bool is_pow2(uint32_t n)
{
	return n && !(n & (n - 1));
}

/*
 * Maps @size bytes of a ring at @offset of the context's command fd.  The
 * offset must be page-aligned and the size non-zero.
 */
static void *vhca_map_ring(struct ibv_context *ibctx, uint64_t offset,
			   uint32_t size, int prot)
{
	uint64_t page_mask = (uint64_t)sysconf(_SC_PAGESIZE) - 1;

	if (!size || (offset & page_mask)) {
		errno = EPROTO;
		return MAP_FAILED;
	}
	return mmap(NULL, size, prot, MAP_SHARED, ibctx->cmd_fd, offset);
}

int vhca_recs(struct ibv_context *ibctx, uint32_t index, uint64_t db_offset,
	      uint64_t status_offset, struct vhca_db_rec **db,
	      const struct vhca_status_rec **st)
{
	struct vhca_context *ctx = to_vctx(ibctx);
	uint32_t n = index / ctx->area_recs, slot = index % ctx->area_recs;
	struct vhca_area *area;
	int err = 0;

	if (!index || n >= VHCA_UCTX_MAX_AREAS)
		return EPROTO;
	area = &ctx->areas[n];
	pthread_mutex_lock(&ctx->areas_lock);
	if (!area->db)
		err = vhca_map_area(ctx, area, db_offset, status_offset);
	else if (n && (area->db_offset != db_offset ||
		       area->status_offset != status_offset))
		err = EPROTO;
	pthread_mutex_unlock(&ctx->areas_lock);
	if (err)
		return err;
	*db = &area->db[slot];
	*st = &area->status[slot];
	return 0;
}

/* ---- PD, parent domains, object memory ---- */

struct ibv_pd *vhca_alloc_pd(struct ibv_context *ibctx)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	struct vhca_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	err = ibv_cmd_alloc_pd(ibctx, &pd->ibv_pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	return &pd->ibv_pd;
}

/* A PD or parent domain still in use (see struct vhca_pd) stays: EBUSY. */
int vhca_dealloc_pd(struct ibv_pd *ibpd)
{
	struct vhca_pd *pd = to_vpd(ibpd);
	int err;

	if (atomic_load(&pd->users))
		return EBUSY;
	if (pd->parent) {
		atomic_fetch_sub(&pd->parent->users, 1);
		free(pd);
		return 0;
	}
	err = ibv_cmd_dealloc_pd(ibpd);
	if (!err)
		free(pd);
	return err;
}

/*
 * ibv_alloc_parent_domain: a PD of this context (not a parent domain), no
 * thread domain (vhca has none: ibv_alloc_td fails), and optionally the
 * allocator pair and its pd_context.  Other comp_mask bits: EOPNOTSUPP.
 */
struct ibv_pd *vhca_alloc_parent_domain(struct ibv_context *ibctx,
					struct ibv_parent_domain_init_attr *attr)
{
	uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			 IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct vhca_pd *pd, *dom;

	if (attr->comp_mask & ~known) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr->pd || attr->pd->context != ibctx || attr->td ||
	    to_vpd(attr->pd)->parent ||
	    ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	     (!attr->alloc || !attr->free))) {
		errno = EINVAL;
		return NULL;
	}
	pd = to_vpd(attr->pd);
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return NULL;
	dom->ibv_pd.context = ibctx;
	dom->ibv_pd.handle = pd->ibv_pd.handle;
	dom->parent = pd;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		dom->alloc = attr->alloc;
		dom->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		dom->pd_context = attr->pd_context;
	atomic_fetch_add(&pd->users, 1);
	return &dom->ibv_pd;
}

/* What the objects' structures need: that of malloc(). */
#define VHCA_OBJ_ALIGN _Alignof(max_align_t)

void *vhca_obj_alloc(struct ibv_pd *ibpd, size_t size, uint64_t type,
		     struct vhca_obj *obj)
{
	struct vhca_pd *dom = ibpd && to_vpd(ibpd)->parent ? to_vpd(ibpd) :
			      NULL;
	void *p = IBV_ALLOCATOR_USE_DEFAULT;

	if (dom && dom->alloc)
		p = dom->alloc(ibpd, dom->pd_context, size, VHCA_OBJ_ALIGN,
			       type);
	*obj = (struct vhca_obj){ .domain = dom, .type = type,
				  .custom = p != IBV_ALLOCATOR_USE_DEFAULT };
	if (!obj->custom)
		p = malloc(size);
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	if (dom)
		atomic_fetch_add(&dom->users, 1);
	if ((uintptr_t)p % VHCA_OBJ_ALIGN) {
		vhca_obj_free(p, obj);
		errno = EINVAL;
		return NULL;
	}
	memset(p, 0, size);
	return p;
}

void vhca_obj_free(void *p, const struct vhca_obj *objp)
{
	struct vhca_obj obj = *objp;	/* p may hold it */

	if (obj.custom)
		obj.domain->free(&obj.domain->ibv_pd, obj.domain->pd_context,
				 p, obj.type);
	else
		free(p);
	if (obj.domain)
		atomic_fetch_sub(&obj.domain->users, 1);
}

/*
 * The kernel answers whether the handle names a PD of the context (the
 * driver's VHCA_IB_METHOD_PD_QUERY): a wrong handle fails here, not at
 * the first verb on it.
 */
struct ibv_pd *vhca_import_pd(struct ibv_context *ibctx, uint32_t pd_handle)
{
	struct ib_uverbs_attr attr =
		vhca_attr_obj(VHCA_IB_ATTR_QUERY_PD_HANDLE, pd_handle);
	struct vhca_pd *pd;
	int err;

	err = vhca_ioctl(ibctx, UVERBS_OBJECT_PD, VHCA_IB_METHOD_PD_QUERY,
			 &attr, 1);
	if (err) {
		errno = err;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	pd->ibv_pd.context = ibctx;
	pd->ibv_pd.handle = pd_handle;
	return &pd->ibv_pd;
}

/*
 * Forgets a PD, which stays in the kernel.  A parent domain, or a PD with
 * parent domains over it, cannot be forgotten (this returns nothing to
 * say so): it stays, and ibv_dealloc_pd() still works on it.
 */
void vhca_unimport_pd(struct ibv_pd *ibpd)
{
	struct vhca_pd *pd = to_vpd(ibpd);

	if (!pd->parent && !atomic_load(&pd->users))
		free(pd);
}

struct ibv_mr *vhca_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			   uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	err = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * The kernel checks flags and arguments; an MR keeps its keys (the kernel
 * answers the ones the MR has, libibverbs stores them in vmr).
 */
int vhca_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		  void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;
	int err;

	err = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
			       access, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err)
		errno = err;
	return err;
}

/*
 * The core's QUERY_MR: keys and length; the address is the creating
 * process's, so NULL here, as libibverbs' own import does.
 */
struct ibv_mr *vhca_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	uint32_t lkey = 0, rkey = 0;
	uint64_t length = 0;
	struct ib_uverbs_attr attrs[] = {
		vhca_attr_obj(UVERBS_ATTR_QUERY_MR_HANDLE, mr_handle),
		vhca_attr_out(UVERBS_ATTR_QUERY_MR_RESP_LKEY, &lkey,
			      sizeof(lkey)),
		vhca_attr_out(UVERBS_ATTR_QUERY_MR_RESP_RKEY, &rkey,
			      sizeof(rkey)),
		vhca_attr_out(UVERBS_ATTR_QUERY_MR_RESP_LENGTH, &length,
			      sizeof(length)),
	};
	struct verbs_mr *vmr;
	int err;

	err = vhca_ioctl(pd->context, UVERBS_OBJECT_MR, UVERBS_METHOD_QUERY_MR,
			 attrs, sizeof(attrs) / sizeof(attrs[0]));
	if (!err && length > SIZE_MAX)
		err = EPROTO;
	if (err) {
		errno = err;
		return NULL;
	}
	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	vmr->ibv_mr.context = pd->context;
	vmr->ibv_mr.pd = pd;
	vmr->ibv_mr.handle = mr_handle;
	vmr->ibv_mr.lkey = lkey;
	vmr->ibv_mr.rkey = rkey;
	vmr->ibv_mr.length = length;
	vmr->mr_type = IBV_MR_TYPE_IMPORTED_MR;
	return &vmr->ibv_mr;
}

/* Forgets an MR, which stays in the kernel. */
void vhca_unimport_mr(struct ibv_mr *mr)
{
	free(vhca_container_of(mr, struct verbs_mr, ibv_mr));
}

int vhca_dereg_mr(struct verbs_mr *vmr)
{
	int err = ibv_cmd_dereg_mr(vmr);

	if (!err)
		free(vmr);
	return err;
}

/* ---- MW ---- */

struct ibv_mw *vhca_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int err;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	err = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		free(mw);
		errno = err;
		return NULL;
	}
	return mw;
}

int vhca_dealloc_mw(struct ibv_mw *mw)
{
	int err = ibv_cmd_dealloc_mw(mw);

	if (!err)
		free(mw);
	return err;
}

/* ---- CQ ---- */

struct vhca_create_cq_resp_all {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct vhca_create_cq_resp drv;
};

struct vhca_create_cq_ex_resp_all {
	struct ib_uverbs_ex_create_cq_resp ibv_resp;
	struct vhca_create_cq_resp drv;
};

struct vhca_resize_cq_resp_all {
	struct ib_uverbs_resize_cq_resp ibv_resp;
	struct vhca_resize_cq_resp drv;
};

/* A CQE ring of @count entries of @cqe_size bytes fits in @size bytes. */
static bool vhca_cq_ring_ok(uint32_t count, uint32_t cqe_size, uint32_t size)
{
	return is_pow2(count) && (uint64_t)count * cqe_size <= size;
}

/*
 * The CQE size of a CQ created with or without timestamps, if the
 * kernel's answer @resp_size is that; 0 if not.
 */
static uint32_t vhca_cqe_size(bool timestamps, uint32_t resp_size)
{
	if (timestamps)
		return resp_size == sizeof(struct vhca_cqe_ts) ? resp_size : 0;
	return !resp_size || resp_size == sizeof(struct vhca_cqe) ?
	       sizeof(struct vhca_cqe) : 0;
}

/*
 * A CQ not yet created (in parent domain @pd, or none), with its lock;
 * NULL (errno set) on failure.
 */
static struct vhca_cq *vhca_cq_alloc(struct ibv_pd *pd)
{
	struct vhca_obj obj;
	struct vhca_cq *cq;
	int err;

	cq = vhca_obj_alloc(pd, sizeof(*cq), VHCA_RES_TYPE_CQ, &obj);
	if (!cq)
		return NULL;
	cq->obj = obj;
	err = pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (err) {
		vhca_obj_free(cq, &cq->obj);
		errno = err;
		return NULL;
	}
	return cq;
}

static void vhca_cq_free(struct vhca_cq *cq)
{
	pthread_spin_destroy(&cq->lock);
	vhca_obj_free(cq, &cq->obj);
}

/*
 * After a successful create command: maps the ring @drv describes, of
 * CQEs with or without @timestamps.  On failure destroys the kernel CQ,
 * frees cq and returns false, errno set.
 */
static bool vhca_cq_created(struct vhca_cq *cq,
			    const struct vhca_create_cq_resp *drv,
			    bool timestamps)
{
	struct ibv_context *ibctx = cq->vcq.cq.context;
	uint32_t cqe_size = vhca_cqe_size(timestamps, drv->cqe_size);
	void *ring;
	int err;

	err = EPROTO;
	if (!cqe_size ||
	    !vhca_cq_ring_ok(drv->cqe_count, cqe_size, drv->ring_size))
		goto err_destroy;
	err = vhca_recs(ibctx, drv->db_index, drv->db_area_offset,
			drv->status_area_offset, &cq->db, &cq->st);
	if (err)
		goto err_destroy;
	ring = vhca_map_ring(ibctx, drv->mmap_offset, drv->ring_size,
			     PROT_READ);
	if (ring == MAP_FAILED) {
		err = errno;
		goto err_destroy;
	}
	cq->ring = ring;
	cq->ring_size = drv->ring_size;
	cq->count = drv->cqe_count;
	cq->cqe_size = cqe_size;
	__atomic_store_n(&cq->db->head[0], 0, __ATOMIC_RELEASE);
	return true;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
	vhca_cq_free(cq);
	errno = err;
	return false;
}

struct ibv_cq *vhca_create_cq(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector)
{
	struct vhca_create_cq_resp_all resp = {};
	struct ibv_create_cq cmd;
	struct vhca_cq *cq;
	int err;

	cq = vhca_cq_alloc(NULL);
	if (!cq)
		return NULL;
	err = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (err) {
		vhca_cq_free(cq);
		errno = err;
		return NULL;
	}
	return vhca_cq_created(cq, &resp.drv, false) ? &cq->vcq.cq : NULL;
}

/*
 * ibv_create_cq_ex: of what vhca_cqex_check() lets through, libibverbs
 * asks the kernel for IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION when a
 * timestamp is asked for (CQEs of struct vhca_cqe_ts); otherwise the
 * kernel CQ is the one create_cq makes (IBV_CREATE_CQ_ATTR_SINGLE_THREADED
 * is the provider's alone).
 */
struct ibv_cq_ex *vhca_create_cq_ex(struct ibv_context *ibctx,
				    struct ibv_cq_init_attr_ex *attr)
{
	struct vhca_create_cq_ex_resp_all resp = {};
	struct ibv_create_cq_ex cmd;
	struct vhca_cq *cq;
	int err;

	err = vhca_cqex_check(ibctx, attr);
	if (err) {
		errno = err;
		return NULL;
	}
	cq = vhca_cq_alloc(attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD ?
			   attr->parent_domain : NULL);
	if (!cq)
		return NULL;
	err = vhca_cmd_create_cq_ex(ibctx, attr, &cq->vcq, &cmd, sizeof(cmd),
				    &resp.ibv_resp, sizeof(resp), 0);
	if (err) {
		vhca_cq_free(cq);
		errno = err;
		return NULL;
	}
	if (!vhca_cq_created(cq, &resp.drv,
			     vhca_cqex_timestamps(attr->wc_flags)))
		return NULL;
	vhca_cqex_init(cq, attr);
	return &cq->vcq.cq_ex;
}

/*
 * The kernel replaces the ring and copies the unconsumed CQEs (from the
 * consumer index in the doorbell record to its producer index) into the
 * new one at the same free-running indices; the provider switches rings
 * under the CQ's lock, so no poll sees the swap half done.  If the new ring
 * cannot be mapped, the CQ is left without a ring: poll_cq fails.
 */
int vhca_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct vhca_resize_cq_resp_all resp = {};
	struct vhca_cq *cq = to_vcq(ibcq);
	struct ibv_resize_cq cmd;
	void *ring;
	int err;

	pthread_spin_lock(&cq->lock);
	err = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (err)
		goto out;

	if (!vhca_cq_ring_ok(resp.drv.cqe_count, cq->cqe_size,
			     resp.drv.ring_size)) {
		ring = MAP_FAILED;
		errno = EPROTO;
	} else {
		ring = vhca_map_ring(ibcq->context, resp.drv.mmap_offset,
				     resp.drv.ring_size, PROT_READ);
	}
	err = ring == MAP_FAILED ? errno : 0;
	if (cq->ring)
		munmap((void *)cq->ring, cq->ring_size);
	cq->ring = NULL;
	cq->count = 0;
	if (!err) {
		cq->ring = ring;
		cq->ring_size = resp.drv.ring_size;
		cq->count = resp.drv.cqe_count;
	}
out:
	pthread_spin_unlock(&cq->lock);
	return err;
}

int vhca_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	return ibv_cmd_req_notify_cq(ibcq, solicited_only);
}

int vhca_destroy_cq(struct ibv_cq *ibcq)
{
	struct vhca_cq *cq = to_vcq(ibcq);
	int err;

	err = ibv_cmd_destroy_cq(ibcq);
	if (err)
		return err;
	if (cq->ring)
		munmap((void *)cq->ring, cq->ring_size);
	vhca_cq_free(cq);
	return 0;
}

/* ---- work rings (QP, SRQ) ---- */

int vhca_wq_map(struct ibv_context *ibctx, struct vhca_wq *wq,
		uint64_t offset, uint32_t size, uint32_t count,
		uint32_t stride, uint32_t slots_needed, uint64_t wqe_bytes)
{
	void *buf;

	if (!count)
		return size || slots_needed ? EPROTO : 0;
	if (!is_pow2(count) || count < slots_needed || stride < wqe_bytes ||
	    (uint64_t)count * stride > size)
		return EPROTO;
	buf = vhca_map_ring(ibctx, offset, size, PROT_READ | PROT_WRITE);
	if (buf == MAP_FAILED)
		return errno;
	wq->buf = buf;
	wq->size = size;
	wq->count = count;
	wq->stride = stride;
	return 0;
}

void vhca_wq_unmap(struct vhca_wq *wq)
{
	if (wq->buf)
		munmap(wq->buf, wq->size);
	wq->buf = NULL;
}

uint64_t vhca_recv_wqe_bytes(uint32_t max_sge)
{
	return sizeof(struct vhca_recv_wqe) +
	       (uint64_t)max_sge * sizeof(struct vhca_sge);
}

/* ---- QP ---- */

struct vhca_create_qp_resp_all {
	struct ib_uverbs_create_qp_resp ibv_resp;
	struct vhca_create_qp_resp drv;
};

/* Maps both rings of a new QP; @cap holds what the kernel granted. */
static int vhca_qp_map(struct vhca_qp *qp, const struct ibv_qp_cap *cap,
		       const struct vhca_create_qp_resp *drv)
{
	struct ibv_context *ibctx = qp->vqp.qp.context;
	struct vhca_db_rec *db;
	uint64_t send_bytes;
	int err;

	if (drv->max_inline != cap->max_inline_data ||
	    cap->max_send_sge > UINT8_MAX || cap->max_recv_sge > UINT8_MAX)
		return EPROTO;
	err = vhca_recs(ibctx, drv->db_index, drv->db_area_offset,
			drv->status_area_offset, &db, &qp->st);
	if (err)
		return err;

	send_bytes = (uint64_t)cap->max_send_sge * sizeof(struct vhca_sge);
	if (send_bytes < cap->max_inline_data)
		send_bytes = cap->max_inline_data;
	send_bytes += sizeof(struct vhca_send_wqe);
	err = vhca_wq_map(ibctx, &qp->sq, drv->sq_mmap_offset, drv->sq_size,
			  drv->sq_count, drv->sq_stride, cap->max_send_wr,
			  send_bytes);
	if (err)
		return err;
	err = vhca_wq_map(ibctx, &qp->rq, drv->rq_mmap_offset, drv->rq_size,
			  drv->rq_count, drv->rq_stride,
			  qp->vqp.qp.srq ? 0 : cap->max_recv_wr,
			  vhca_recv_wqe_bytes(cap->max_recv_sge));
	if (err) {
		vhca_wq_unmap(&qp->sq);
		return err;
	}

	qp->max_inline = cap->max_inline_data;
	qp->sq.max_sge = cap->max_send_sge;
	qp->sq.db_head = &db->head[0];
	qp->sq.st_tail = &qp->st->tail[0];
	qp->rq.max_sge = cap->max_recv_sge;
	qp->rq.db_head = &db->head[1];
	qp->rq.st_tail = &qp->st->tail[1];
	__atomic_store_n(qp->sq.db_head, 0, __ATOMIC_RELEASE);
	__atomic_store_n(qp->rq.db_head, 0, __ATOMIC_RELEASE);
	return 0;
}

/*
 * A QP not yet created (in @pd, which may be a parent domain, or none),
 * with its locks; NULL (errno set) without memory.
 */
static struct vhca_qp *vhca_qp_alloc(struct ibv_pd *pd)
{
	struct vhca_obj obj;
	struct vhca_qp *qp;
	int err;

	qp = vhca_obj_alloc(pd, sizeof(*qp), VHCA_RES_TYPE_QP, &obj);
	if (!qp)
		return NULL;
	qp->obj = obj;
	err = pthread_spin_init(&qp->sq.lock, PTHREAD_PROCESS_PRIVATE);
	if (err)
		goto err_free;
	err = pthread_spin_init(&qp->rq.lock, PTHREAD_PROCESS_PRIVATE);
	if (err)
		goto err_sq_lock;
	return qp;

err_sq_lock:
	pthread_spin_destroy(&qp->sq.lock);
err_free:
	vhca_obj_free(qp, &qp->obj);
	errno = err;
	return NULL;
}

static void vhca_qp_free(struct vhca_qp *qp)
{
	pthread_spin_destroy(&qp->rq.lock);
	pthread_spin_destroy(&qp->sq.lock);
	vhca_obj_free(qp, &qp->obj);
}

/*
 * After a successful create command: maps the rings.  On failure destroys
 * the kernel QP, frees qp and returns NULL with errno set.
 */
static struct ibv_qp *vhca_qp_created(struct vhca_qp *qp,
				      const struct ibv_qp_cap *cap,
				      const struct vhca_create_qp_resp *drv,
				      int sq_sig_all)
{
	int err;

	err = vhca_qp_map(qp, cap, drv);
	if (err) {
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		vhca_qp_free(qp);
		errno = err;
		return NULL;
	}
	qp->sq_sig_all = sq_sig_all;
	return &qp->vqp.qp;
}

/*
 * The plain create_qp command; libibverbs copies the kernel's answer
 * (the real caps) into attr->cap.
 */
struct ibv_qp *vhca_create_qp(struct ibv_pd *pd,
			      struct ibv_qp_init_attr *attr)
{
	struct vhca_create_qp_resp_all resp = {};
	struct ibv_create_qp cmd;
	struct vhca_qp *qp;
	int err;

	qp = vhca_qp_alloc(pd);
	if (!qp)
		return NULL;
	err = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (err) {
		vhca_qp_free(qp);
		errno = err;
		return NULL;
	}
	return vhca_qp_created(qp, &attr->cap, &resp.drv, attr->sq_sig_all);
}

/*
 * ibv_create_qp_ex: a PD (required; an XRC_RECV QP takes an XRC domain
 * instead) and, optionally, the send operations of the ibv_qp_ex API
 * (vhca_qpex.c) and creation flags (none: vhca has none of them).
 * Anything else, and operations vhca does not execute on a QP of that
 * type (memory windows, local invalidation, TSO, ...), is refused with
 * EOPNOTSUPP before the kernel is asked.
 */
struct ibv_qp *vhca_create_qp_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr)
{
	struct vhca_create_qp_resp_all resp = {};
	struct ibv_qp_init_attr_ex ex = *attr;
	uint64_t send_ops = 0;
	struct ibv_create_qp cmd;
	struct vhca_qp *qp;
	int err;

	if ((attr->comp_mask & ~(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD |
				 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
				 IBV_QP_INIT_ATTR_CREATE_FLAGS)) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* No flags: the command that has no room for them. */
	ex.comp_mask &= ~IBV_QP_INIT_ATTR_CREATE_FLAGS;
	if (attr->qp_type == IBV_QPT_XRC_RECV ?
	    !(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd :
	    !(attr->comp_mask & IBV_QP_INIT_ATTR_PD)) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		send_ops = attr->send_ops_flags;
		err = vhca_qpex_check_ops(ibctx, attr->qp_type, send_ops);
		if (err) {
			errno = err;
			return NULL;
		}
	}

	qp = vhca_qp_alloc(attr->comp_mask & IBV_QP_INIT_ATTR_PD ? attr->pd :
			   NULL);
	if (!qp)
		return NULL;
	err = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, &ex, &cmd, sizeof(cmd),
				   &resp.ibv_resp, sizeof(resp));
	if (err) {
		vhca_qp_free(qp);
		errno = err;
		return NULL;
	}
	attr->cap = ex.cap;
	/* The kernel creates an XRC_RECV QP without rings or driver data. */
	if (attr->qp_type == IBV_QPT_XRC_RECV)
		return &qp->vqp.qp;
	if (!vhca_qp_created(qp, &attr->cap, &resp.drv, attr->sq_sig_all))
		return NULL;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		vhca_qpex_init(qp, send_ops);
	return &qp->vqp.qp;
}

/*
 * ibv_open_qp: another handle on an XRC_RECV QP of an XRC domain; no rings
 * (the QP has none), nothing for the driver.
 */
struct ibv_qp *vhca_open_qp(struct ibv_context *ibctx,
			    struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp;
	struct ibv_open_qp cmd;
	struct vhca_qp *qp;
	int err;

	qp = vhca_qp_alloc(NULL);
	if (!qp)
		return NULL;
	err = ibv_cmd_open_qp(ibctx, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
			      sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		vhca_qp_free(qp);
		errno = err;
		return NULL;
	}
	return &qp->vqp.qp;
}

/* The QP's CQEs that @cq holds now are never polled. */
static void vhca_cq_discard_qp(struct vhca_cq *cq, struct vhca_cq_discard *d,
			       uint32_t qpn)
{
	uint32_t tail;

	pthread_spin_lock(&cq->lock);
	tail = __atomic_load_n(&cq->st->tail[0], __ATOMIC_ACQUIRE);
	if (tail != cq->ci) {
		d->qpn = qpn;
		d->until = tail;
		if (!d->linked) {
			d->next = cq->discard;
			cq->discard = d;
			d->linked = true;
		}
	}
	pthread_spin_unlock(&cq->lock);
}

static void vhca_cq_undiscard_qp(struct vhca_cq *cq, struct vhca_cq_discard *d)
{
	struct vhca_cq_discard **p;

	pthread_spin_lock(&cq->lock);
	for (p = &cq->discard; d->linked && *p; p = &(*p)->next) {
		if (*p == d) {
			*p = d->next;
			d->linked = false;
			break;
		}
	}
	pthread_spin_unlock(&cq->lock);
}

/*
 * A QP reset also removes its completions from its CQs, as mlx5's provider
 * does: a QP taken back to RTS after an error must not poll the flush
 * completions of its previous life.  The kernel produces no CQE of the QP
 * after the reset.
 */
int vhca_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask)
{
	struct vhca_qp *qp = to_vqp(ibqp);
	struct ibv_modify_qp cmd;
	int err;

	err = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (err || !(attr_mask & IBV_QP_STATE) ||
	    attr->qp_state != IBV_QPS_RESET)
		return err;
	if (ibqp->send_cq)
		vhca_cq_discard_qp(to_vcq(ibqp->send_cq), &qp->discard[0],
				   ibqp->qp_num);
	if (ibqp->recv_cq && ibqp->recv_cq != ibqp->send_cq)
		vhca_cq_discard_qp(to_vcq(ibqp->recv_cq), &qp->discard[1],
				   ibqp->qp_num);
	return 0;
}

int vhca_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd;

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

int vhca_destroy_qp(struct ibv_qp *ibqp)
{
	struct vhca_qp *qp = to_vqp(ibqp);
	int err;

	err = ibv_cmd_destroy_qp(ibqp);
	if (err)
		return err;
	if (ibqp->send_cq)
		vhca_cq_undiscard_qp(to_vcq(ibqp->send_cq), &qp->discard[0]);
	if (ibqp->recv_cq && ibqp->recv_cq != ibqp->send_cq)
		vhca_cq_undiscard_qp(to_vcq(ibqp->recv_cq), &qp->discard[1]);
	vhca_wq_unmap(&qp->rq);
	vhca_wq_unmap(&qp->sq);
	vhca_qp_free(qp);
	return 0;
}

/* ---- AH ---- */

struct vhca_create_ah_resp_all {
	struct ib_uverbs_create_ah_resp ibv_resp;
	struct vhca_create_ah_resp drv;
};

struct ibv_ah *vhca_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct vhca_create_ah_resp_all resp = {};
	struct vhca_ah *ah;
	int err;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	err = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (err) {
		free(ah);
		errno = err;
		return NULL;
	}
	ah->ah_index = resp.drv.ah_index;
	return &ah->ibv_ah;
}

int vhca_destroy_ah(struct ibv_ah *ibah)
{
	int err = ibv_cmd_destroy_ah(ibah);

	if (!err)
		free(to_vah(ibah));
	return err;
}
