// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The dispatch test's fake kernel and fake system (fake_uverbs.h): the
 * uverbs commands and mmap rules of the kernel as vhca's provider meets
 * them, and a mount namespace in which libibverbs finds the devices.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <endian.h>
#include <linux/netlink.h>

#include <infiniband/verbs.h>

#include "fake_uverbs.h"
#include "harness.h"

#define FAKESYS		"/dev/.fake-sysfs"
#define RING_OFFSETS	(64 * PAGE)	/* where ring offsets start */

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

/* ---- the fake kernel ---- */

struct fake_kernel fk = {
	.uresp = {
		.db_mmap_offset = DB_OFFSET, .db_size = AREA_SIZE,
		.status_mmap_offset = STATUS_OFFSET, .status_size = AREA_SIZE,
	},
};

static bool is_uverbs_fd(int fd)
{
	static const char prefix[] = "/dev/infiniband/uverbs";
	char link[64], target[PATH_MAX];
	ssize_t n;

	if (fd < 0)
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = 0;
	return !strncmp(target, prefix, sizeof(prefix) - 1);
}

static size_t page_up(size_t n)
{
	return (n + PAGE - 1) & ~(size_t)(PAGE - 1);
}

static struct region *region_find(off_t offset)
{
	unsigned int i;

	for (i = 0; i < fk.nregions; i++)
		if (fk.regions[i].live && fk.regions[i].offset == offset)
			return &fk.regions[i];
	return NULL;
}

/* The kernel forgets an entry; existing mappings stay valid. */
static void region_del(struct region *r)
{
	if (!r || !r->live)
		return;
	r->live = false;
	NEXT(munmap)(r->kview, page_up(r->size));
	close(r->memfd);
}

/* A new entry of @size bytes at @offset (0: the next free offset). */
static struct region *region_new(off_t offset, size_t size, bool writable)
{
	struct region *r;
	void *p;
	int fd;

	region_del(region_find(offset));
	if (!size || fk.nregions == ARRAY_SIZE(fk.regions))
		return NULL;
	if (!offset) {
		if (!fk.next_offset)
			fk.next_offset = RING_OFFSETS;
		offset = fk.next_offset;
		fk.next_offset += page_up(size) + PAGE;
	}
	fd = memfd_create("fake-ring", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, page_up(size)))
		return NULL;
	p = NEXT(mmap)(NULL, page_up(size), PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	r = &fk.regions[fk.nregions++];
	*r = (struct region){ offset, size, writable, true, fd, p };
	return r;
}

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* A fresh record pair, zeroed as the kernel does at create. */
static uint32_t new_rec(void)
{
	uint32_t index = ++fk.next_rec;

	memset(&fk.dbk[index], 0, sizeof(fk.dbk[index]));
	memset(&fk.stk[index], 0, sizeof(fk.stk[index]));
	return index;
}

/* Writes the core response and the driver's after it. */
static int respond(void *resp, size_t resp_len, const void *core,
		   size_t core_len, const void *drv, size_t drv_len)
{
	if (resp_len < core_len + drv_len)
		return EINVAL;
	memcpy(resp, core, core_len);
	if (drv_len)
		memcpy((char *)resp + core_len, drv, drv_len);
	return 0;
}

static void fill_device_resp(struct ib_uverbs_query_device_resp *r)
{
	memset(r, 0, sizeof(*r));
	r->node_guid = htobe64(FAKE_NODE_GUID);
	r->vendor_part_id = FAKE_PART_ID;
	r->max_qp = FAKE_MAX_QP;
	r->max_cqe = FAKE_MAX_CQE;
	r->phys_port_cnt = 1;
}

static int fake_get_context(size_t len, void *resp, size_t resp_len)
{
	struct {
		struct ib_uverbs_get_context_resp core;
		struct vhca_alloc_ucontext_resp drv;
	} r = {};
	struct region *db, *st;
	int efd;

	fk.get_context++;
	/* The contract: no driver data in, vhca's response after the core. */
	if (len != sizeof(struct ib_uverbs_cmd_hdr) +
		   sizeof(struct ib_uverbs_get_context) ||
	    resp_len < sizeof(r))
		return EINVAL;
	if (fk.get_context_err)
		return fk.get_context_err;
	db = region_new(fk.uresp.db_mmap_offset, fk.uresp.db_size, true);
	st = region_new(fk.uresp.status_mmap_offset, fk.uresp.status_size,
			false);
	fk.dbk = db ? db->kview : NULL;
	fk.stk = st ? st->kview : NULL;
	fk.next_rec = 0;
	memset(fk.cqs, 0, sizeof(fk.cqs));
	memset(fk.qps, 0, sizeof(fk.qps));
	memset(fk.srqs, 0, sizeof(fk.srqs));
	efd = eventfd(0, EFD_CLOEXEC);	/* stands in for the async fd */
	if (efd < 0)
		return errno;
	r.core.async_fd = efd;
	r.core.num_comp_vectors = 1;
	r.drv = fk.uresp;
	memcpy(resp, &r, sizeof(r));
	return 0;
}

static int fake_query_port(const struct ib_uverbs_query_port *cmd,
			   void *resp, size_t resp_len)
{
	struct ib_uverbs_query_port_resp r = {};

	fk.query_port++;
	if (resp_len < sizeof(r) || cmd->port_num != 1)
		return EINVAL;
	r.state = IBV_PORT_ACTIVE;
	r.max_mtu = IBV_MTU_4096;
	r.active_mtu = IBV_MTU_1024;
	r.gid_tbl_len = FAKE_GID_TBL;
	r.port_cap_flags = FAKE_CAP_FLAGS;
	r.max_msg_sz = 1u << 30;
	r.pkey_tbl_len = 1;
	r.link_layer = IBV_LINK_LAYER_ETHERNET;
	r.phys_state = 5;
	memcpy(resp, &r, sizeof(r));
	return 0;
}

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

void push_cqe(struct fake_cq *cq, const struct vhca_cqe *cqe)
{
	uint32_t *tail = &fk.stk[cq->db_index].tail[0];
	struct vhca_cqe *ring = cq->ring->kview;

	ring[*tail & (cq->count - 1)] = *cqe;
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
}

static int fake_create_cq(const void *req, void *resp, size_t resp_len)
{
	struct ib_uverbs_create_cq_resp core = {};
	struct vhca_create_cq_resp drv = {};
	struct fake_cq *cq = FREE_SLOT(fk.cqs);

	fk.create_cq = *(const struct ib_uverbs_create_cq *)req;
	if (!cq || !fk.create_cq.cqe)
		return EINVAL;
	cq->count = pow2_at_least(fk.create_cq.cqe + 1);
	cq->ring = region_new(0, page_up(cq->count * sizeof(struct vhca_cqe)),
			      false);
	if (!cq->ring)
		return ENOMEM;
	cq->handle = FAKE_CQ_HANDLE + fk.next_handle++;
	cq->db_index = new_rec();
	cq->live = true;
	core.cq_handle = cq->handle;
	core.cqe = cq->count - 1;
	drv.mmap_offset = cq->ring->offset;
	drv.ring_size = cq->ring->size;
	drv.cqe_count = cq->count;
	drv.db_index = cq->db_index;
	return respond(resp, resp_len, &core, sizeof(core), &drv, sizeof(drv));
}

/* A new ring holding the unconsumed CQEs at the same indices. */
static int fake_resize_cq(const void *req, void *resp, size_t resp_len)
{
	struct ib_uverbs_resize_cq_resp core = {};
	struct vhca_resize_cq_resp drv = {};
	struct vhca_cqe *old, *new;
	struct region *ring;
	struct fake_cq *cq;
	uint32_t i, count, ci, tail;

	fk.resize_cq = *(const struct ib_uverbs_resize_cq *)req;
	cq = find_cq(fk.resize_cq.cq_handle);
	if (!cq)
		return EINVAL;
	count = pow2_at_least(fk.resize_cq.cqe + 1);
	ring = region_new(0, page_up(count * sizeof(struct vhca_cqe)), false);
	if (!ring)
		return ENOMEM;
	old = cq->ring->kview;
	new = ring->kview;
	ci = fk.dbk[cq->db_index].head[0];
	tail = fk.stk[cq->db_index].tail[0];
	for (i = ci; i != tail; i++)
		new[i & (count - 1)] = old[i & (cq->count - 1)];
	region_del(cq->ring);
	cq->ring = ring;
	cq->count = count;
	core.cqe = count - 1;
	drv.mmap_offset = ring->offset;
	drv.ring_size = ring->size;
	drv.cqe_count = count;
	return respond(resp, resp_len, &core, sizeof(core), &drv, sizeof(drv));
}

static int fake_destroy_cq(uint32_t handle, void *resp, size_t resp_len)
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
static int fake_open_qp(const struct ib_uverbs_open_qp *c, void *resp,
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

static int fake_create_qp(const void *req, void *resp, size_t resp_len)
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
	drv.max_inline = inl;
	if (fk.bad_qp_resp)
		drv.sq_count = 3;
	return respond(resp, resp_len, &core, sizeof(core), &drv, sizeof(drv));
}

/* RESET drops what was queued; ERR raises VHCA_STATUS_QP_ERROR. */
static int fake_modify_qp(const void *req)
{
	const struct ib_uverbs_modify_qp *m = req;
	struct fake_qp *qp = find_qp(m->qp_handle);
	struct vhca_status_rec *st;

	fk.modify_qp = *m;
	if (!qp)
		return EINVAL;
	if (!(m->attr_mask & IBV_QP_STATE))
		return 0;
	st = &fk.stk[qp->db_index];
	qp->state = m->qp_state;
	/* As the kernel: the engine is idle after a state change. */
	st->flags |= VHCA_STATUS_NEEDS_WAKEUP;
	if (qp->state == IBV_QPS_ERR)
		st->flags |= VHCA_STATUS_QP_ERROR;
	else
		st->flags &= ~VHCA_STATUS_QP_ERROR;
	if (qp->state == IBV_QPS_RESET) {
		st->tail[0] = fk.dbk[qp->db_index].head[0];
		st->tail[1] = fk.dbk[qp->db_index].head[1];
	}
	return 0;
}

static int fake_query_qp(const struct ib_uverbs_query_qp *q, void *resp,
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
static int fake_post_send(const void *req, void *resp, size_t resp_len)
{
	struct ib_uverbs_post_send_resp r = {};
	struct fake_qp *qp;
	struct vhca_db_rec *db;
	struct vhca_status_rec *st;

	fk.post_send = *(const struct ib_uverbs_post_send *)req;
	qp = find_qp(fk.post_send.qp_handle);
	if (!qp || fk.post_send.wr_count)
		return EINVAL;
	db = &fk.dbk[qp->db_index];
	st = &fk.stk[qp->db_index];
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

static int fake_destroy_qp(uint32_t handle, void *resp, size_t resp_len)
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
	return respond(resp, resp_len, &core, sizeof(core), &drv, sizeof(drv));
}

static int fake_create_srq(const void *req, void *resp, size_t resp_len)
{
	fk.create_srq = *(const struct ib_uverbs_create_srq *)req;
	return fake_new_srq(FAKE_SRQN, resp, resp_len);
}

/* CREATE_XSRQ: an XRC SRQ needs the XRC domain and a CQ. */
static int fake_create_xsrq(const void *req, void *resp, size_t resp_len)
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

static int fake_query_srq(const struct ib_uverbs_query_srq *q, void *resp,
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

static int fake_destroy_srq(uint32_t handle, void *resp, size_t resp_len)
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

/* Legacy (non-extended) commands: the request after the header. */
static int fake_legacy(unsigned int cmd, const void *req, size_t req_len,
		       size_t out_len)
{
	void *resp = NULL;

	/* Commands with a response start with its address. */
	switch (cmd) {
	case IB_USER_VERBS_CMD_DEALLOC_PD:
	case IB_USER_VERBS_CMD_DEREG_MR:
	case IB_USER_VERBS_CMD_DEALLOC_MW:
	case IB_USER_VERBS_CMD_DESTROY_AH:
	case IB_USER_VERBS_CMD_MODIFY_QP:
	case IB_USER_VERBS_CMD_MODIFY_SRQ:
	case IB_USER_VERBS_CMD_REQ_NOTIFY_CQ:
	case IB_USER_VERBS_CMD_CLOSE_XRCD:
		if (out_len || req_len < 4)
			goto bad;
		break;
	default:
		if (req_len < 8)
			goto bad;
		resp = (void *)(uintptr_t)*(const __u64 *)req;
	}

#define NEED(s) do { if (req_len < sizeof(struct s)) goto bad; } while (0)
	switch (cmd) {
	case IB_USER_VERBS_CMD_GET_CONTEXT:
		return fake_get_context(sizeof(struct ib_uverbs_cmd_hdr) +
					req_len, resp, out_len);
	case IB_USER_VERBS_CMD_QUERY_DEVICE:
		fk.query_device++;
		if (out_len < sizeof(struct ib_uverbs_query_device_resp))
			return EINVAL;
		fill_device_resp(resp);
		return 0;
	case IB_USER_VERBS_CMD_QUERY_PORT:
		NEED(ib_uverbs_query_port);
		return fake_query_port(req, resp, out_len);
	case IB_USER_VERBS_CMD_ALLOC_PD: {
		struct ib_uverbs_alloc_pd_resp r = { FAKE_PD_HANDLE };

		return respond(resp, out_len, &r, sizeof(r), NULL, 0);
	}
	case IB_USER_VERBS_CMD_ALLOC_MW: {
		struct ib_uverbs_alloc_mw_resp r = {
			FAKE_MW_HANDLE, FAKE_MW_RKEY
		};

		NEED(ib_uverbs_alloc_mw);
		if (((const struct ib_uverbs_alloc_mw *)req)->mw_type !=
		    IBV_MW_TYPE_2)
			goto bad;
		return respond(resp, out_len, &r, sizeof(r), NULL, 0);
	}
	case IB_USER_VERBS_CMD_DEALLOC_PD:
	case IB_USER_VERBS_CMD_DEREG_MR:
	case IB_USER_VERBS_CMD_DEALLOC_MW:
	case IB_USER_VERBS_CMD_DESTROY_AH:
		fk.destroyed = *(const __u32 *)req;
		return 0;
	case IB_USER_VERBS_CMD_REREG_MR: {
		struct ib_uverbs_rereg_mr_resp r = {
			FAKE_LKEY + 0x100, FAKE_RKEY + 0x100
		};

		NEED(ib_uverbs_rereg_mr);
		fk.rereg_mr = *(const struct ib_uverbs_rereg_mr *)req;
		return respond(resp, out_len, &r, sizeof(r), NULL, 0);
	}
	case IB_USER_VERBS_CMD_REG_MR: {
		struct ib_uverbs_reg_mr_resp r = {
			FAKE_MR_HANDLE, FAKE_LKEY, FAKE_RKEY
		};

		NEED(ib_uverbs_reg_mr);
		fk.reg_mr = *(const struct ib_uverbs_reg_mr *)req;
		return respond(resp, out_len, &r, sizeof(r), NULL, 0);
	}
	case IB_USER_VERBS_CMD_CREATE_CQ:
		if (req_len != sizeof(struct ib_uverbs_create_cq))
			goto bad;
		return fake_create_cq(req, resp, out_len);
	case IB_USER_VERBS_CMD_RESIZE_CQ:
		if (req_len != sizeof(struct ib_uverbs_resize_cq))
			goto bad;
		return fake_resize_cq(req, resp, out_len);
	case IB_USER_VERBS_CMD_DESTROY_CQ:
		NEED(ib_uverbs_destroy_cq);
		return fake_destroy_cq(
			((const struct ib_uverbs_destroy_cq *)req)->cq_handle,
			resp, out_len);
	case IB_USER_VERBS_CMD_REQ_NOTIFY_CQ:
		NEED(ib_uverbs_req_notify_cq);
		fk.notify = *(const struct ib_uverbs_req_notify_cq *)req;
		return find_cq(fk.notify.cq_handle) ? 0 : EINVAL;
	case IB_USER_VERBS_CMD_CREATE_QP:
		if (req_len != sizeof(struct ib_uverbs_create_qp))
			goto bad;
		return fake_create_qp(req, resp, out_len);
	case IB_USER_VERBS_CMD_MODIFY_QP:
		NEED(ib_uverbs_modify_qp);
		return fake_modify_qp(req);
	case IB_USER_VERBS_CMD_QUERY_QP:
		NEED(ib_uverbs_query_qp);
		return fake_query_qp(req, resp, out_len);
	case IB_USER_VERBS_CMD_POST_SEND:
		NEED(ib_uverbs_post_send);
		return fake_post_send(req, resp, out_len);
	case IB_USER_VERBS_CMD_DESTROY_QP:
		NEED(ib_uverbs_destroy_qp);
		return fake_destroy_qp(
			((const struct ib_uverbs_destroy_qp *)req)->qp_handle,
			resp, out_len);
	case IB_USER_VERBS_CMD_CREATE_SRQ:
		if (req_len != sizeof(struct ib_uverbs_create_srq))
			goto bad;
		return fake_create_srq(req, resp, out_len);
	case IB_USER_VERBS_CMD_MODIFY_SRQ:
		NEED(ib_uverbs_modify_srq);
		fk.modify_srq = *(const struct ib_uverbs_modify_srq *)req;
		return find_srq(fk.modify_srq.srq_handle) ? 0 : EINVAL;
	case IB_USER_VERBS_CMD_QUERY_SRQ:
		NEED(ib_uverbs_query_srq);
		return fake_query_srq(req, resp, out_len);
	case IB_USER_VERBS_CMD_DESTROY_SRQ:
		NEED(ib_uverbs_destroy_srq);
		return fake_destroy_srq(
			((const struct ib_uverbs_destroy_srq *)req)->srq_handle,
			resp, out_len);
	case IB_USER_VERBS_CMD_OPEN_XRCD: {
		struct ib_uverbs_open_xrcd_resp r = { FAKE_XRCD_HANDLE };

		NEED(ib_uverbs_open_xrcd);
		fk.open_xrcd = *(const struct ib_uverbs_open_xrcd *)req;
		return respond(resp, out_len, &r, sizeof(r), NULL, 0);
	}
	case IB_USER_VERBS_CMD_CLOSE_XRCD:
		fk.destroyed = *(const __u32 *)req;
		return fk.destroyed == FAKE_XRCD_HANDLE ? 0 : EINVAL;
	case IB_USER_VERBS_CMD_CREATE_XSRQ:
		if (req_len != sizeof(struct ib_uverbs_create_xsrq))
			goto bad;
		return fake_create_xsrq(req, resp, out_len);
	case IB_USER_VERBS_CMD_OPEN_QP:
		NEED(ib_uverbs_open_qp);
		return fake_open_qp(req, resp, out_len);
	case IB_USER_VERBS_CMD_CREATE_AH: {
		struct ib_uverbs_create_ah_resp core = { FAKE_AH_HANDLE };
		struct vhca_create_ah_resp drv = { FAKE_AH_INDEX, 0 };

		if (req_len != sizeof(struct ib_uverbs_create_ah))
			goto bad;
		fk.create_ah = *(const struct ib_uverbs_create_ah *)req;
		return respond(resp, out_len, &core, sizeof(core), &drv,
			       sizeof(drv));
	}
	default:
		fk.other_cmds++;
		return EOPNOTSUPP;
	}
#undef NEED
bad:
	fk.bad_cmds++;
	return EINVAL;
}

/* A write() on a uverbs fd: one command, checked like the kernel does. */
static int fake_command(const void *buf, size_t len)
{
	const struct ib_uverbs_cmd_hdr *hdr = buf;
	const struct ib_uverbs_ex_cmd_hdr *ex = (const void *)(hdr + 1);
	unsigned int cmd;
	size_t resp_len;
	void *resp;

	if (len < sizeof(*hdr))
		goto bad;
	if (hdr->command & IB_USER_VERBS_CMD_FLAG_EXTENDED) {
		struct ib_uverbs_ex_query_device_resp r;

		if (len < sizeof(*hdr) + sizeof(*ex) ||
		    len != sizeof(*hdr) + sizeof(*ex) +
			   (hdr->in_words + ex->provider_in_words) * 8u)
			goto bad;
		resp = (void *)(uintptr_t)ex->response;
		resp_len = (hdr->out_words + ex->provider_out_words) * 8u;
		if ((hdr->command & ~IB_USER_VERBS_CMD_FLAG_EXTENDED) !=
		    IB_USER_VERBS_EX_CMD_QUERY_DEVICE) {
			fk.other_cmds++;
			return EOPNOTSUPP;
		}
		fk.ex_query_device++;
		if (resp_len < sizeof(r.base) + 8)
			return EINVAL;
		memset(&r, 0, sizeof(r));
		fill_device_resp(&r.base);
		r.hca_core_clock = FAKE_CLOCK_KHZ;
		/* IB_UVERBS_DEVICE_ATOMIC_WRITE, from Linux 6.2 */
		if (!fk.before_6_2)
			r.device_cap_flags_ex = 1ULL << 40;
		if (resp_len > sizeof(r))
			resp_len = sizeof(r);
		r.response_length = resp_len;
		memcpy(resp, &r, resp_len);
		return 0;
	}

	if (len != hdr->in_words * 4u)
		goto bad;
	cmd = hdr->command;
	if (cmd < ARRAY_SIZE(fk.cmds))
		fk.cmds[cmd]++;
	if (fk.fail_cmd && cmd == fk.fail_cmd) {
		fk.fail_cmd = 0;
		return fk.fail_err;
	}
	return fake_legacy(cmd, hdr + 1, len - sizeof(*hdr),
			   hdr->out_words * 4u);
bad:
	fk.bad_cmds++;
	return EINVAL;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	int err;

	if (!is_uverbs_fd(fd))
		return NEXT(write)(fd, buf, len);
	fk.writes++;
	err = fake_command(buf, len);
	if (err) {
		errno = err;
		return -1;
	}
	return len;
}

/* No ioctl() framework: libibverbs falls back to write(). */
int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!is_uverbs_fd(fd))
		return NEXT(ioctl)(fd, request, arg);
	fk.ioctls++;
	errno = ENOTTY;
	return -1;
}

/*
 * The kernel's mmap rules: a live entry at exactly that offset, exactly its
 * length, shared, and read-only entries never writable (EPERM).
 */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
	struct fake_map *m;
	struct region *r;
	void *p;

	if (!is_uverbs_fd(fd))
		return NEXT(mmap)(addr, len, prot, flags, fd, offset);

	errno = EINVAL;
	r = region_find(offset);
	if ((flags & MAP_TYPE) != MAP_SHARED ||
	    fk.nmaps == ARRAY_SIZE(fk.maps) || !r || len != r->size)
		return MAP_FAILED;
	errno = EPERM;
	if ((prot & PROT_WRITE) && !r->writable)
		return MAP_FAILED;
	if (offset == (off_t)fk.uresp.status_mmap_offset) {
		errno = fk.status_mmap_err;
		if (errno)
			return MAP_FAILED;
	}
	p = NEXT(mmap)(addr, len, prot, flags, r->memfd, 0);
	if (p == MAP_FAILED)
		return p;
	m = &fk.maps[fk.nmaps++];
	*m = (struct fake_map){ p, len, prot, flags, offset, true };
	return p;
}

int munmap(void *addr, size_t len)
{
	unsigned int i;

	for (i = 0; i < fk.nmaps; i++)
		if (fk.maps[i].mapped && fk.maps[i].addr == addr &&
		    fk.maps[i].len == len)
			fk.maps[i].mapped = false;
	return NEXT(munmap)(addr, len);
}

/* RDMA netlink refused: libibverbs must take its sysfs path. */
int socket(int domain, int type, int protocol)
{
	if (domain == AF_NETLINK && protocol == NETLINK_RDMA) {
		fk.netlink_refused++;
		errno = EPROTONOSUPPORT;
		return -1;
	}
	return NEXT(socket)(domain, type, protocol);
}

/* ---- the fake system ---- */

static void die(const char *what)
{
	harness_fatal("%s: %s", what, strerror(errno));
}

static void mkdirs(const char *path)
{
	char buf[PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			die(buf);
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		die(buf);
}

static void put(const char *dir, const char *name, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	FILE *f;

	mkdirs(dir);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		die(path);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

/*
 * uverbsN for ib device @ibdev with uverbs ABI @abi, its parent device
 * being @parent (under FAKESYS/devices/) with modalias @modalias.  Like the
 * kernel, both class entries link to the parent.
 */
static void fake_device(int n, const char *ibdev, int abi,
			const char *parent, const char *modalias)
{
	char uv[PATH_MAX], ib[PATH_MAX], dev[PATH_MAX], link[PATH_MAX];

	snprintf(uv, sizeof(uv), FAKESYS "/class/infiniband_verbs/uverbs%d", n);
	snprintf(ib, sizeof(ib), FAKESYS "/class/infiniband/%s", ibdev);
	snprintf(dev, sizeof(dev), FAKESYS "/devices/%s", parent);
	snprintf(link, sizeof(link), "../../../devices/%s", parent);

	put(dev, "modalias", "%s", modalias);
	put(uv, "ibdev", "%s", ibdev);
	put(uv, "abi_version", "%d", abi);
	put(uv, "dev", "1:3");
	put(ib, "node_type", "1: CA");
	put(ib, "node_guid", "0002:c903:0000:cafe");
	if (symlink(link, strcat(uv, "/device")) ||
	    symlink(link, strcat(ib, "/device")))
		die("symlink");

	snprintf(uv, sizeof(uv), "/dev/infiniband/uverbs%d", n);
	if (mknod(uv, S_IFCHR | 0666, makedev(1, 3)))
		die(uv);
}

/*
 * A private mount namespace with a tmpfs /dev holding the usual nodes, the
 * uverbs nodes and the fake sysfs, and with no installed provider config.
 */
void enter_fake_system(const char *provider)
{
	static const struct { const char *name; int minor; } nodes[] = {
		{ "null", 3 }, { "zero", 5 }, { "full", 7 },
		{ "random", 8 }, { "urandom", 9 },
	};
	char path[64];
	size_t i;

	if (unshare(CLONE_NEWNS))
		die("unshare");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("fakedev", "/dev", "tmpfs", 0, "mode=755"))
		die("mount /dev");
	umask(0);
	for (i = 0; i < ARRAY_SIZE(nodes); i++) {
		snprintf(path, sizeof(path), "/dev/%s", nodes[i].name);
		if (mknod(path, S_IFCHR | 0666, makedev(1, nodes[i].minor)))
			die(path);
	}
	if (!access("/etc/libibverbs.d", F_OK) &&
	    mount("noconf", "/etc/libibverbs.d", "tmpfs", 0, "mode=755"))
		die("mount /etc/libibverbs.d");
	mkdirs("/dev/infiniband");

	put(FAKESYS "/class/infiniband_verbs", "abi_version", "6");
	fake_device(0, "vhca0", VHCA_UVERBS_ABI_VERSION, "platform/vhca.0",
		    "platform:vhca");
	fake_device(1, "vhca1", VHCA_UVERBS_ABI_VERSION + 1, "platform/vhca.0",
		    "platform:vhca");
	fake_device(2, "vhca2", VHCA_UVERBS_ABI_VERSION,
		    "pci0000:00/0000:00:03.0",
		    "pci:v00008086d00001572sv00008086sd00000000bc02sc00i00");
	fake_device(3, "foo0", VHCA_UVERBS_ABI_VERSION, "platform/vhca.0",
		    "platform:vhca");

	if (setenv("SYSFS_PATH", FAKESYS, 1) ||
	    setenv("RDMAV_DRIVERS", provider, 1))
		die("setenv");
	unsetenv("IBV_DRIVERS");
	unsetenv("VERBS_LOG_LEVEL");
}
