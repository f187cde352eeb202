// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Dispatch test: libibverbs loads the uninstalled provider and every verb
 * reaches the right op, without a kernel.
 *
 * usage: dispatch_test TAG PROVIDER [RELEASE]
 *   PROVIDER: /abs/path/libvhca; RELEASE: the rdma-core release it was
 *   built for, when not this test's (VHCA_RDMA_CORE): one built for 36 to
 *   43 has no ATOMIC WRITE and must refuse it.
 *
 * The test enters a private mount namespace (root only) holding a fake
 * /dev/infiniband and a fake sysfs tree (SYSFS_PATH), and plays the kernel
 * itself: it interposes on the libc calls libibverbs and the provider make
 * (this binary is linked -rdynamic, so its definitions come first) and
 * answers those made on a uverbs fd.  Everything else is passed on.
 * Prints KTAP (ktap.h): one result per check, "TAG: dispatch: what".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
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
#include <rdma/ib_user_verbs.h>
#include <rdma/vhca-abi.h>

#include "ktap.h"

#define FAKESYS		"/dev/.fake-sysfs"
#define PAGE		4096u
#define DB_OFFSET	(3 * PAGE)
#define STATUS_OFFSET	(7 * PAGE)
#define AREA_SIZE	(1024 * 16u)	/* VHCA_UCTX_RECS records */
#define RING_OFFSETS	(64 * PAGE)	/* where ring offsets start */

/* Distinctive answers of the fake kernel. */
#define FAKE_NODE_GUID	0x0002c9030000cafeULL
#define FAKE_MAX_QP	1234
#define FAKE_MAX_CQE	56789
#define FAKE_PART_ID	0x7ca1
#define FAKE_CLOCK_KHZ	98765
#define FAKE_CAP_FLAGS	0x2a5a0000u
#define FAKE_GID_TBL	77
#define FAKE_PD_HANDLE	0x51
#define FAKE_MR_HANDLE	0x61
#define FAKE_LKEY	0x1234abcdu
#define FAKE_RKEY	0x5678ef01u
#define FAKE_MW_HANDLE	0x65
#define FAKE_MW_RKEY	0x4321ab07u
#define FAKE_CQ_HANDLE	0x71
#define FAKE_QP_HANDLE	0x81
#define FAKE_QPN	0x4242
#define FAKE_SRQ_HANDLE	0x91
#define FAKE_SRQN	0x777
#define FAKE_SRQ_LIMIT	13
#define FAKE_XRCD_HANDLE 0xb1
#define FAKE_XSRQN	0x5a5a5
#define FAKE_AH_HANDLE	0xa1
#define FAKE_AH_INDEX	0x5eed
#define FAKE_DEST_QPN	0xabcde

/* ---- the fake kernel ---- */

struct fake_map {
	void *addr;
	size_t len;
	int prot;
	int flags;
	off_t offset;
	bool mapped;
};

/* An mmap entry of the fake kernel: a memfd and the kernel's view of it. */
struct region {
	off_t offset;
	size_t size;
	bool writable;		/* may be mapped PROT_WRITE */
	bool live;		/* may be mapped */
	int memfd;
	void *kview;
};

struct fake_cq {
	bool live;
	uint32_t handle, count, db_index;
	struct region *ring;
};

struct fake_wq {
	uint32_t count, stride;
	struct region *ring;
};

struct fake_qp {
	bool live;
	uint32_t handle, qpn, db_index, state, type;
	struct fake_cq *scq, *rcq;
	struct fake_wq sq, rq;
};

struct fake_srq {
	bool live;
	uint32_t handle, db_index;
	struct fake_wq rq;
};

static struct {
	struct vhca_alloc_ucontext_resp uresp;	/* GET_CONTEXT's answer */
	int get_context_err;	/* inject: GET_CONTEXT fails */
	int status_mmap_err;	/* inject: the status mmap fails */
	unsigned int fail_cmd;	/* inject: this command fails once ... */
	int fail_err;		/* ... with this error */
	bool bad_qp_resp;	/* inject: CREATE_QP answers an odd SQ count */
	unsigned int get_context, query_device, ex_query_device, query_port;
	unsigned int other_cmds, bad_cmds, ioctls, netlink_refused;
	unsigned int writes;	/* every write() on a uverbs fd */
	unsigned int cmds[64];	/* per IB_USER_VERBS_CMD_* */
	struct fake_map maps[64];
	unsigned int nmaps;
	struct region regions[64];
	unsigned int nregions;
	off_t next_offset;
	uint32_t next_rec, next_handle;
	struct vhca_db_rec *dbk;	/* the kernel's view of the areas */
	struct vhca_status_rec *stk;
	struct fake_cq cqs[8];
	struct fake_qp qps[8];
	struct fake_srq srqs[4];
	/* What the last commands carried. */
	struct ib_uverbs_reg_mr reg_mr;
	struct ib_uverbs_create_cq create_cq;
	struct ib_uverbs_resize_cq resize_cq;
	struct ib_uverbs_req_notify_cq notify;
	struct ib_uverbs_create_qp create_qp;
	struct ib_uverbs_modify_qp modify_qp;
	struct ib_uverbs_post_send post_send;
	struct ib_uverbs_create_srq create_srq;
	struct ib_uverbs_create_xsrq create_xsrq;
	struct ib_uverbs_open_xrcd open_xrcd;
	struct ib_uverbs_open_qp open_qp;
	struct ib_uverbs_modify_srq modify_srq;
	struct ib_uverbs_create_ah create_ah;
	struct ib_uverbs_rereg_mr rereg_mr;
	uint32_t destroyed;	/* handle of the last destroy/dealloc/dereg */
} fk;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

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

static struct fake_cq *find_cq(uint32_t handle)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fk.cqs); i++)
		if (fk.cqs[i].live && fk.cqs[i].handle == handle)
			return &fk.cqs[i];
	return NULL;
}

static struct fake_qp *find_qp(uint32_t handle)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fk.qps); i++)
		if (fk.qps[i].live && fk.qps[i].handle == handle)
			return &fk.qps[i];
	return NULL;
}

static struct fake_srq *find_srq(uint32_t handle)
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

/* The device writes a CQE at the CQ's producer index and publishes it. */
static void push_cqe(struct fake_cq *cq, const struct vhca_cqe *cqe)
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
	ktap_result(false, "dispatch setup", "%s: %s", what, strerror(errno));
	exit(1);
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
static void enter_fake_system(const char *provider)
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

/* ---- the checks ---- */

static const char *tag;
/* The rdma-core release the provider under test was built for. */
static int provider_release = VHCA_RDMA_CORE;

static void check(bool ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void check(bool ok, const char *name, const char *fmt, ...)
{
	char full[320];
	va_list ap;

	snprintf(full, sizeof(full), "%s: dispatch: %s", tag, name);
	va_start(ap, fmt);
	ktap_vresult(ok, full, fmt, ap);
	va_end(ap);
}

/* Open fds whose link target starts with @prefix. */
static int count_fds(const char *prefix)
{
	char target[PATH_MAX];
	struct dirent *d;
	int n = 0;
	ssize_t len;
	DIR *dir;

	dir = opendir("/proc/self/fd");
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		len = readlinkat(dirfd(dir), d->d_name, target,
				 sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = 0;
		n += !strncmp(target, prefix, strlen(prefix));
	}
	closedir(dir);
	return n;
}

static unsigned int live_maps(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < fk.nmaps; i++)
		n += fk.maps[i].mapped;
	return n;
}

static const struct fake_map *map_at(unsigned int from, off_t offset)
{
	unsigned int i;

	for (i = from; i < fk.nmaps; i++)
		if (fk.maps[i].offset == offset)
			return &fk.maps[i];
	return NULL;
}

/* Nothing of a context is left: no uverbs or async fd, no mapping. */
static void check_released(const char *name)
{
	int uverbs = count_fds("/dev/infiniband/uverbs");
	int events = count_fds("anon_inode:[eventfd]");

	check(!uverbs && !events && !live_maps(), name,
	      "%d uverbs fds, %d async fds, %u mappings left", uverbs, events,
	      live_maps());
}

static struct ibv_device **list_devices(int *num, char *err, size_t err_len)
{
	struct ibv_device **list;
	int saved, memfd;
	ssize_t n;

	/* libibverbs warns on stderr: capture it. */
	memfd = memfd_create("stderr", 0);
	saved = dup(2);
	if (memfd < 0 || saved < 0 || dup2(memfd, 2) < 0)
		die("capture stderr");
	list = ibv_get_device_list(num);
	dup2(saved, 2);
	close(saved);
	n = pread(memfd, err, err_len - 1, 0);
	err[n > 0 ? n : 0] = 0;
	close(memfd);
	return list;
}

static struct ibv_device *find(struct ibv_device **list, const char *name)
{
	for (; list && *list; list++)
		if (!strcmp(ibv_get_device_name(*list), name))
			return *list;
	return NULL;
}

static void test_list(struct ibv_device **list, int num, const char *err)
{
	char warning[128];

	check(fk.netlink_refused > 0, "RDMA netlink refused, sysfs used",
	      "libibverbs never tried netlink");
	check(list && num == 2, "two devices listed", "%d listed", num);
	check(find(list, "vhca0"), "vhca0 listed (modalias platform:vhca)",
	      "missing");
	check(find(list, "foo0"), "renamed device foo0 listed", "missing");
	check(!find(list, "vhca1"), "ABI mismatch hides vhca1", "listed");
	snprintf(warning, sizeof(warning),
		 "vhca does not support the kernel ABI of %d "
		 "(supports %d to %d)",
		 VHCA_UVERBS_ABI_VERSION + 1, VHCA_UVERBS_ABI_VERSION,
		 VHCA_UVERBS_ABI_VERSION);
	check(strstr(err, warning) && strstr(err, "vhca1"),
	      "ABI mismatch warned by libibverbs", "stderr was \"%s\"", err);
	check(!find(list, "vhca2"), "pci modalias not claimed (vhca2)",
	      "listed");
}

static void test_open(struct ibv_device *dev)
{
	struct ibv_device_attr_ex attr_ex;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	const struct fake_map *db, *st;
	unsigned int first = fk.nmaps;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mw *mw;
	int ret;

	ctx = ibv_open_device(dev);
	check(ctx, "open vhca0", "errno %d", errno);
	if (!ctx)
		return;
	check(fk.get_context == 1 && fk.ioctls > 0,
	      "open: GET_CONTEXT by write() after ioctl() ENOTTY",
	      "%u GET_CONTEXT, %u ioctls", fk.get_context, fk.ioctls);

	db = map_at(first, DB_OFFSET);
	st = map_at(first, STATUS_OFFSET);
	check(db && db->mapped && db->len == AREA_SIZE &&
	      db->prot == (PROT_READ | PROT_WRITE) &&
	      (db->flags & MAP_TYPE) == MAP_SHARED,
	      "open: doorbell area (16 KiB) mapped shared, read-write", "%s",
	      db ? "wrong length, prot or flags" : "not mapped");
	check(st && st->mapped && st->len == AREA_SIZE &&
	      st->prot == PROT_READ && (st->flags & MAP_TYPE) == MAP_SHARED,
	      "open: status area (16 KiB) mapped shared, read-only", "%s",
	      st ? "wrong length, prot or flags" : "not mapped");

	memset(&attr, 0, sizeof(attr));
	ret = ibv_query_device(ctx, &attr);
	check(!ret && fk.query_device == 1 && attr.max_qp == FAKE_MAX_QP &&
	      attr.max_cqe == FAKE_MAX_CQE &&
	      attr.vendor_part_id == FAKE_PART_ID &&
	      attr.node_guid == htobe64(FAKE_NODE_GUID) &&
	      attr.phys_port_cnt == 1,
	      "ibv_query_device reaches QUERY_DEVICE",
	      "ret %d, %u commands, max_qp %d", ret, fk.query_device,
	      attr.max_qp);

	ret = ibv_query_device_ex(ctx, NULL, &attr_ex);
	check(!ret && fk.ex_query_device == 1 &&
	      attr_ex.orig_attr.max_qp == FAKE_MAX_QP &&
	      attr_ex.hca_core_clock == FAKE_CLOCK_KHZ,
	      "ibv_query_device_ex reaches EX_QUERY_DEVICE",
	      "ret %d, %u commands, clock %lu", ret, fk.ex_query_device,
	      (unsigned long)attr_ex.hca_core_clock);

	ret = ibv_query_port(ctx, 1, &port);
	check(!ret && fk.query_port == 1 && port.state == IBV_PORT_ACTIVE &&
	      port.port_cap_flags == FAKE_CAP_FLAGS &&
	      port.gid_tbl_len == FAKE_GID_TBL &&
	      port.active_mtu == IBV_MTU_1024 &&
	      port.link_layer == IBV_LINK_LAYER_ETHERNET,
	      "ibv_query_port reaches QUERY_PORT",
	      "ret %d, %u commands, cap_flags %#x", ret, fk.query_port,
	      port.port_cap_flags);
	ret = ibv_query_port(ctx, 2, &port);
	check(ret == EINVAL, "ibv_query_port passes the kernel's error",
	      "ret %d", ret);

	pd = ibv_alloc_pd(ctx);
	mw = pd ? ibv_alloc_mw(pd, IBV_MW_TYPE_2) : NULL;
	check(mw && fk.cmds[IB_USER_VERBS_CMD_ALLOC_MW] == 1 &&
	      mw->rkey == FAKE_MW_RKEY && mw->handle == FAKE_MW_HANDLE &&
	      mw->type == IBV_MW_TYPE_2 && mw->pd == pd,
	      "ibv_alloc_mw reaches ALLOC_MW", "pd %p, mw %p, errno %d",
	      (void *)pd, (void *)mw, errno);
	if (mw)
		check(!ibv_dealloc_mw(mw) && fk.destroyed == FAKE_MW_HANDLE,
		      "ibv_dealloc_mw reaches DEALLOC_MW", "destroyed %#x",
		      fk.destroyed);
	if (pd)
		ibv_dealloc_pd(pd);
	check(!fk.other_cmds && !fk.bad_cmds,
	      "no unexpected or malformed command", "%u unexpected, %u bad",
	      fk.other_cmds, fk.bad_cmds);

	check(!ibv_close_device(ctx), "close vhca0", "failed");
	check(!db->mapped && !st->mapped, "close: both areas unmapped",
	      "doorbell %s, status %s", db->mapped ? "mapped" : "unmapped",
	      st->mapped ? "mapped" : "unmapped");
	check_released("close: nothing left");
}

static void test_renamed(struct ibv_device *dev)
{
	struct ibv_port_attr port;
	struct ibv_context *ctx;

	if (!dev)
		return;
	ctx = ibv_open_device(dev);
	check(ctx && !ibv_query_port(ctx, 1, &port) &&
	      port.gid_tbl_len == FAKE_GID_TBL,
	      "renamed foo0 opens and answers", "errno %d", errno);
	if (ctx)
		ibv_close_device(ctx);
	check_released("foo0 closed: nothing left");
}

/* Opening fails with @err and leaves nothing behind. */
static void expect_open_fails(struct ibv_device *dev, int err,
			      const char *name)
{
	struct ibv_context *ctx;
	char what[128];

	errno = 0;
	ctx = ibv_open_device(dev);
	check(!ctx && errno == err, name, "ctx %p, errno %d", (void *)ctx,
	      errno);
	if (ctx)
		ibv_close_device(ctx);
	snprintf(what, sizeof(what), "%s: nothing left", name);
	check_released(what);
}

static void test_open_failures(struct ibv_device *dev)
{
	const struct vhca_alloc_ucontext_resp good = fk.uresp;

	fk.get_context_err = ENOMEM;
	expect_open_fails(dev, ENOMEM, "GET_CONTEXT fails: open fails");
	fk.get_context_err = 0;

	fk.uresp.db_size = 0;
	expect_open_fails(dev, EPROTO, "empty doorbell area refused");
	fk.uresp = good;
	fk.uresp.status_size = AREA_SIZE - 8;
	expect_open_fails(dev, EPROTO, "partial status record refused");
	fk.uresp = good;
	fk.uresp.db_size = sizeof(struct vhca_db_rec);
	expect_open_fails(dev, EPROTO, "area without object records refused");
	fk.uresp = good;
	fk.uresp.status_mmap_offset = STATUS_OFFSET + 64;
	expect_open_fails(dev, EPROTO, "unaligned status offset refused");
	fk.uresp = good;

	fk.status_mmap_err = ENOMEM;
	expect_open_fails(dev, ENOMEM, "status mmap fails: open fails");
	fk.status_mmap_err = 0;
}

/* ---- the verbs objects and the fast path ---- */

static unsigned int syscalls(void)
{
	return fk.writes + fk.ioctls;
}

/* The newest mapping of @r, if any. */
static const struct fake_map *map_of(const struct region *r)
{
	unsigned int i;

	for (i = fk.nmaps; r && i-- > 0;)
		if (fk.maps[i].offset == r->offset)
			return &fk.maps[i];
	return NULL;
}

/* @r is mapped shared, whole, with exactly @prot. */
static bool mapped_as(const struct region *r, int prot)
{
	const struct fake_map *m = map_of(r);

	return m && m->mapped && m->len == r->size && m->prot == prot &&
	       (m->flags & MAP_TYPE) == MAP_SHARED;
}

static bool unmapped(const struct region *r)
{
	const struct fake_map *m = map_of(r);

	return m && !m->mapped;
}

/* Everything one test context holds. */
struct objs {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct fake_cq *fcq;
	struct ibv_qp *qp;
	struct fake_qp *fqp;
	struct ibv_qp_init_attr qp_attr;
	char buf[256];
};

static void test_pd_mr(struct objs *o)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ;

	o->pd = ibv_alloc_pd(o->ctx);
	check(o->pd && o->pd->handle == FAKE_PD_HANDLE &&
	      fk.cmds[IB_USER_VERBS_CMD_ALLOC_PD] == 1,
	      "ibv_alloc_pd reaches ALLOC_PD", "pd %p, errno %d",
	      (void *)o->pd, errno);
	if (!o->pd)
		return;
	o->mr = ibv_reg_mr(o->pd, o->buf, sizeof(o->buf), access);
	check(o->mr && fk.reg_mr.start == (uintptr_t)o->buf &&
	      fk.reg_mr.length == sizeof(o->buf) &&
	      fk.reg_mr.hca_va == (uintptr_t)o->buf &&
	      fk.reg_mr.pd_handle == FAKE_PD_HANDLE &&
	      fk.reg_mr.access_flags == (uint32_t)access &&
	      o->mr->lkey == FAKE_LKEY && o->mr->rkey == FAKE_RKEY &&
	      o->mr->handle == FAKE_MR_HANDLE,
	      "ibv_reg_mr reaches REG_MR (addr, length, access through; keys "
	      "back)", "mr %p, errno %d", (void *)o->mr, errno);
}

static void test_cq(struct objs *o)
{
	o->cq = ibv_create_cq(o->ctx, 100, NULL, NULL, 0);
	o->fcq = o->cq ? find_cq(o->cq->handle) : NULL;
	check(o->cq && o->fcq && fk.create_cq.cqe == 100 &&
	      fk.create_cq.comp_channel == -1 && o->cq->cqe == 127,
	      "ibv_create_cq reaches CREATE_CQ (cqe 100 in, 127 back)",
	      "cq %p, errno %d", (void *)o->cq, errno);
	if (!o->fcq)
		return;
	check(mapped_as(o->fcq->ring, PROT_READ),
	      "create_cq: CQE ring mapped shared, read-only, ring_size bytes",
	      "not so");
	check(!ibv_req_notify_cq(o->cq, 1) &&
	      fk.cmds[IB_USER_VERBS_CMD_REQ_NOTIFY_CQ] == 1 &&
	      fk.notify.cq_handle == o->cq->handle &&
	      fk.notify.solicited_only == 1,
	      "ibv_req_notify_cq reaches REQ_NOTIFY_CQ (a system call)",
	      "%u commands, solicited %u",
	      fk.cmds[IB_USER_VERBS_CMD_REQ_NOTIFY_CQ],
	      fk.notify.solicited_only);
}

static bool modify_state(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr = { .qp_state = state };

	return !ibv_modify_qp(qp, &attr, IBV_QP_STATE);
}

static void test_qp(struct objs *o)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	int ret;

	o->qp_attr = (struct ibv_qp_init_attr){
		.send_cq = o->cq, .recv_cq = o->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 10, .max_recv_wr = 20,
			 .max_send_sge = 3, .max_recv_sge = 6,
			 .max_inline_data = 40 },
	};
	o->qp = ibv_create_qp(o->pd, &o->qp_attr);
	o->fqp = o->qp ? find_qp(o->qp->handle) : NULL;
	check(o->qp && o->fqp && fk.create_qp.max_send_wr == 10 &&
	      fk.create_qp.max_recv_sge == 6 &&
	      fk.create_qp.qp_type == IBV_QPT_RC &&
	      o->qp->qp_num == o->fqp->qpn && o->qp->state == IBV_QPS_RESET,
	      "ibv_create_qp reaches CREATE_QP", "qp %p, errno %d",
	      (void *)o->qp, errno);
	if (!o->fqp)
		return;
	check(o->qp_attr.cap.max_send_wr == 16 &&
	      o->qp_attr.cap.max_recv_wr == 32 &&
	      o->qp_attr.cap.max_inline_data == 64 &&
	      o->qp_attr.cap.max_send_sge == 3 &&
	      o->qp_attr.cap.max_recv_sge == 6,
	      "create_qp: the kernel's caps reported in attr->cap",
	      "wr %u/%u, inline %u", o->qp_attr.cap.max_send_wr,
	      o->qp_attr.cap.max_recv_wr, o->qp_attr.cap.max_inline_data);
	check(mapped_as(o->fqp->sq.ring, PROT_READ | PROT_WRITE) &&
	      mapped_as(o->fqp->rq.ring, PROT_READ | PROT_WRITE),
	      "create_qp: SQ and RQ rings mapped shared, read-write",
	      "not so");

	ret = ibv_modify_qp(o->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	check(!ret && fk.modify_qp.qp_handle == o->qp->handle &&
	      fk.modify_qp.qp_state == IBV_QPS_INIT &&
	      fk.modify_qp.port_num == 1 &&
	      fk.modify_qp.qp_access_flags == IBV_ACCESS_REMOTE_WRITE &&
	      fk.modify_qp.attr_mask == (IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) &&
	      o->qp->state == IBV_QPS_INIT,
	      "ibv_modify_qp reaches MODIFY_QP", "ret %d, mask %#x", ret,
	      fk.modify_qp.attr_mask);

	memset(&attr, 0, sizeof(attr));
	ret = ibv_query_qp(o->qp, &attr, IBV_QP_STATE | IBV_QP_PATH_MTU |
			   IBV_QP_DEST_QPN, &init);
	check(!ret && fk.cmds[IB_USER_VERBS_CMD_QUERY_QP] == 1 &&
	      attr.qp_state == IBV_QPS_INIT &&
	      attr.path_mtu == IBV_MTU_2048 &&
	      attr.dest_qp_num == FAKE_DEST_QPN,
	      "ibv_query_qp reaches QUERY_QP", "ret %d, dest_qp %#x", ret,
	      attr.dest_qp_num);
}

static const struct vhca_recv_wqe *rq_slot(const struct fake_wq *wq,
					   uint32_t index)
{
	return (const void *)((char *)wq->ring->kview +
			      (index & (wq->count - 1)) * wq->stride);
}

static const struct vhca_sge *wqe_sges(const void *wqe, size_t hdr)
{
	return (const void *)((const char *)wqe + hdr);
}

static void test_post_recv(struct objs *o)
{
	struct vhca_db_rec *db = &fk.dbk[o->fqp->db_index];
	struct vhca_status_rec *st = &fk.stk[o->fqp->db_index];
	uint32_t max_sge = o->qp_attr.cap.max_recv_sge;
	uint32_t count = o->fqp->rq.count, i;
	struct ibv_sge sge[8];
	struct ibv_recv_wr wr = { .wr_id = 0xfeed0001, .sg_list = sge,
				  .num_sge = max_sge };
	struct ibv_recv_wr wr2 = wr, *bad = NULL;
	const struct vhca_recv_wqe *wqe;
	const struct vhca_sge *s;
	unsigned int calls = syscalls();
	bool ok;
	int ret;

	for (i = 0; i < ARRAY_SIZE(sge); i++)
		sge[i] = (struct ibv_sge){ 0x10000 * (i + 1), 100 + i,
					   FAKE_LKEY + i };

	ret = ibv_post_recv(o->qp, &wr, &bad);
	wqe = rq_slot(&o->fqp->rq, 0);
	s = wqe_sges(wqe, sizeof(*wqe));
	ok = !ret && db->head[1] == 1 && db->head[0] == 0 &&
	     wqe->wr_id == wr.wr_id && wqe->num_sge == max_sge;
	for (i = 0; ok && i < max_sge; i++)
		ok = s[i].addr == sge[i].addr && s[i].length == sge[i].length &&
		     s[i].lkey == sge[i].lkey;
	check(ok, "post_recv: max_recv_sge SGEs land in the RQ slot, head[1] "
	      "published", "ret %d, head %u", ret, db->head[1]);

	wr2.num_sge = max_sge + 1;
	wr.next = &wr2;
	wr.wr_id = 0xfeed0002;
	ret = ibv_post_recv(o->qp, &wr, &bad);
	check(ret == EINVAL && bad == &wr2 && db->head[1] == 2 &&
	      rq_slot(&o->fqp->rq, 1)->wr_id == 0xfeed0002,
	      "post_recv: past max_recv_sge EINVAL, *bad_wr at it, the WR "
	      "before it posted", "ret %d, head %u", ret, db->head[1]);
	wr.next = NULL;

	wr.num_sge = 1;
	for (i = 2, ret = 0; i < count && !ret; i++) {
		wr.wr_id = 0xfeed0000 + i;
		ret = ibv_post_recv(o->qp, &wr, &bad);
	}
	bad = NULL;
	wr.wr_id = 0xfeedffff;
	ret = ret ? ret : ibv_post_recv(o->qp, &wr, &bad);
	check(ret == ENOMEM && bad == &wr && db->head[1] == count,
	      "post_recv: ENOMEM when head - tail[1] == count", "ret %d, "
	      "head %u", ret, db->head[1]);

	__atomic_store_n(&st->tail[1], 1, __ATOMIC_RELEASE);
	ret = ibv_post_recv(o->qp, &wr, &bad);
	check(!ret && db->head[1] == count + 1 &&
	      rq_slot(&o->fqp->rq, count)->wr_id == 0xfeedffff,
	      "post_recv: the slot the device released is reused",
	      "ret %d, head %u", ret, db->head[1]);
	check(syscalls() == calls, "post_recv: no system call",
	      "%u system calls", syscalls() - calls);
}

static const struct vhca_send_wqe *sq_slot(const struct fake_qp *qp,
					   uint32_t index)
{
	return (const void *)((char *)qp->sq.ring->kview +
			      (index & (qp->sq.count - 1)) * qp->sq.stride);
}

static void test_post_send(struct objs *o)
{
	struct vhca_db_rec *db = &fk.dbk[o->fqp->db_index];
	struct vhca_status_rec *st = &fk.stk[o->fqp->db_index];
	struct ibv_sge sge[4] = {
		{ 0x1000, 11, 0x21 }, { 0x2000, 22, 0x22 },
		{ 0x3000, 33, 0x23 }, { 0x4000, 44, 0x24 },
	};
	char data[100];
	struct ibv_sge inl[2] = {
		{ (uintptr_t)data, 30, 0 }, { (uintptr_t)data + 30, 34, 0 },
	};
	struct ibv_send_wr wr[4], *bad = NULL, bogus;
	const struct vhca_send_wqe *w;
	unsigned int kicks, calls;
	uint32_t i;
	int ret;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 7 + 1);

	memset(&bogus, 0, sizeof(bogus));
	bogus.opcode = IBV_WR_SEND;
	kicks = fk.cmds[IB_USER_VERBS_CMD_POST_SEND];
	ret = ibv_post_send(o->qp, &bogus, &bad);
	check(ret == EINVAL && bad == &bogus &&
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks,
	      "post_send before RTS: EINVAL, no kick", "ret %d", ret);

	check(modify_state(o->qp, IBV_QPS_RTR) &&
	      modify_state(o->qp, IBV_QPS_RTS) && o->qp->state == IBV_QPS_RTS,
	      "modify_qp to RTR and RTS", "errno %d", errno);

	memset(wr, 0, sizeof(wr));
	wr[0] = (struct ibv_send_wr){
		.wr_id = 0xabc0, .next = &wr[1], .sg_list = sge, .num_sge = 3,
		.opcode = IBV_WR_SEND_WITH_IMM, .imm_data = htobe32(0x01020304),
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED,
	};
	wr[1] = (struct ibv_send_wr){
		.wr_id = 0xabc1, .next = &wr[2], .sg_list = sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .imm_data = htobe32(7),
		.wr.rdma = { 0x7000000012345678ULL, 0x99887766 },
	};
	wr[2] = (struct ibv_send_wr){
		.wr_id = 0xabc2, .next = &wr[3], .sg_list = sge + 1,
		.num_sge = 2, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_FENCE | IBV_SEND_SIGNALED,
		.wr.rdma = { 0x5000, 0x4444 },
	};
	wr[3] = (struct ibv_send_wr){
		.wr_id = 0xabc3, .sg_list = inl, .num_sge = 2,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_INLINE,
		.wr.rdma = { 0x6000, 0x5555 },
	};
	kicks = fk.cmds[IB_USER_VERBS_CMD_POST_SEND];
	ret = ibv_post_send(o->qp, wr, &bad);
	check(!ret && db->head[0] == 4,
	      "post_send: four WRs, head[0] published", "ret %d, head %u",
	      ret, db->head[0]);

	w = sq_slot(o->fqp, 0);
	check(w->wr_id == 0xabc0 && w->opcode == VHCA_WR_SEND_WITH_IMM &&
	      w->flags == (VHCA_WQE_SIGNALED | VHCA_WQE_SOLICITED) &&
	      w->num_sge == 3 && w->imm_data == htobe32(0x01020304) &&
	      w->inline_len == 0 && !w->rdma.remote_addr &&
	      wqe_sges(w, sizeof(*w))[2].addr == 0x3000 &&
	      wqe_sges(w, sizeof(*w))[2].lkey == 0x23,
	      "post_send: SEND_WITH_IMM WQE (flags, imm, SGEs)", "flags %#x, "
	      "opcode %u", w->flags, w->opcode);
	w = sq_slot(o->fqp, 1);
	check(w->opcode == VHCA_WR_RDMA_WRITE_WITH_IMM && w->flags == 0 &&
	      w->rdma.remote_addr == 0x7000000012345678ULL &&
	      w->rdma.rkey == 0x99887766 && w->imm_data == htobe32(7),
	      "post_send: RDMA_WRITE_WITH_IMM WQE (unsignaled, remote addr, "
	      "rkey)", "flags %#x", w->flags);
	w = sq_slot(o->fqp, 2);
	check(w->opcode == VHCA_WR_RDMA_READ &&
	      w->flags == (VHCA_WQE_FENCE | VHCA_WQE_SIGNALED) &&
	      w->num_sge == 2 && w->rdma.rkey == 0x4444 &&
	      wqe_sges(w, sizeof(*w))[0].addr == 0x2000,
	      "post_send: RDMA_READ WQE (fence)", "flags %#x", w->flags);
	w = sq_slot(o->fqp, 3);
	check(w->opcode == VHCA_WR_RDMA_WRITE && w->flags == VHCA_WQE_INLINE &&
	      w->num_sge == 0 && w->inline_len == 64 &&
	      !memcmp(w + 1, data, 64),
	      "post_send: inline WQE, data copied after the header",
	      "flags %#x, len %u", w->flags, w->inline_len);
	check(fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks + 1 &&
	      fk.post_send.qp_handle == o->qp->handle &&
	      fk.post_send.wr_count == 0 && fk.post_send.sge_count == 0,
	      "post_send with NEEDS_WAKEUP: one kick, POST_SEND with no "
	      "work requests", "%u kicks, wr_count %u",
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] - kicks,
	      fk.post_send.wr_count);

	/* The engine watches the doorbell: the head alone announces. */
	st->flags &= ~VHCA_STATUS_NEEDS_WAKEUP;
	kicks = fk.cmds[IB_USER_VERBS_CMD_POST_SEND];
	calls = syscalls();
	wr[3].next = NULL;
	ret = ibv_post_send(o->qp, &wr[3], &bad);
	check(!ret && db->head[0] == 5 && syscalls() == calls &&
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks,
	      "post_send without NEEDS_WAKEUP: head published, no system call",
	      "ret %d, head %u, %u system calls", ret, db->head[0],
	      syscalls() - calls);
	st->flags |= VHCA_STATUS_NEEDS_WAKEUP;
	ret = ibv_post_send(o->qp, &wr[3], &bad);
	check(!ret && db->head[0] == 6 &&
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks + 1,
	      "post_send with NEEDS_WAKEUP set again: one kick",
	      "ret %d, %u kicks", ret,
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] - kicks);

	kicks = fk.cmds[IB_USER_VERBS_CMD_POST_SEND];
	wr[0] = (struct ibv_send_wr){ .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				      .sg_list = sge, .num_sge = 1,
				      .send_flags = IBV_SEND_INLINE };
	ret = ibv_post_send(o->qp, wr, &bad);
	check(ret == EINVAL && bad == wr, "post_send: inline atomic EINVAL",
	      "ret %d", ret);
	wr[0] = (struct ibv_send_wr){ .opcode = IBV_WR_SEND, .sg_list = sge,
				      .num_sge = 4 };
	ret = ibv_post_send(o->qp, wr, &bad);
	check(ret == EINVAL && bad == wr,
	      "post_send: past max_send_sge EINVAL", "ret %d", ret);
	inl[1].length = 35;
	wr[0] = (struct ibv_send_wr){ .opcode = IBV_WR_SEND, .sg_list = inl,
				      .num_sge = 2,
				      .send_flags = IBV_SEND_INLINE };
	ret = ibv_post_send(o->qp, wr, &bad);
	check(ret == EINVAL && bad == wr,
	      "post_send: inline past max_inline EINVAL", "ret %d", ret);
	wr[0] = (struct ibv_send_wr){ .opcode = IBV_WR_SEND,
				      .send_flags = IBV_SEND_IP_CSUM };
	ret = ibv_post_send(o->qp, wr, &bad);
	check(ret == EINVAL && bad == wr,
	      "post_send: unsupported send flag EINVAL", "ret %d", ret);
	check(db->head[0] == 6 &&
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks,
	      "post_send: refused WRs leave head alone and do not kick",
	      "head %u, %u kicks", db->head[0],
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] - kicks);
}

/*
 * Memory windows on the ring: ibv_bind_mw (type 1) writes a BIND_MW WQE
 * with the window's next rkey and keeps it; IBV_WR_BIND_MW takes type 2
 * windows only; LOCAL_INV and SEND_WITH_INV carry the rkey.
 */
static void test_post_mw(struct objs *o)
{
	struct vhca_db_rec *db = &fk.dbk[o->fqp->db_index];
	struct ibv_mr mr = { .lkey = 0x3344, .pd = o->pd, .context = o->ctx };
	struct ibv_mw mw1 = { .context = o->ctx, .pd = o->pd,
			      .rkey = 0x1200ff, .type = IBV_MW_TYPE_1 };
	struct ibv_mw mw2 = { .context = o->ctx, .pd = o->pd,
			      .rkey = 0x340011, .type = IBV_MW_TYPE_2 };
	struct ibv_mw_bind mb = {
		.wr_id = 0xb1, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = &mr, .addr = 0x9000, .length = 0x800,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};
	struct ibv_send_wr wr, *bad = NULL;
	uint32_t head = db->head[0];
	const struct vhca_send_wqe *w;
	int ret;

	ret = ibv_bind_mw(o->qp, &mw1, &mb);
	w = sq_slot(o->fqp, head);
	check(!ret && db->head[0] == head + 1 && w->wr_id == 0xb1 &&
	      w->opcode == VHCA_WR_BIND_MW && w->flags == VHCA_WQE_SIGNALED &&
	      w->num_sge == 0 && w->bind.mw_rkey == 0x1200ff &&
	      w->bind.new_rkey == 0x120000 && mw1.rkey == 0x120000 &&
	      w->bind.mr_lkey == 0x3344 && w->bind.addr == 0x9000 &&
	      w->bind.length == 0x800 &&
	      w->bind.access == IBV_ACCESS_REMOTE_WRITE,
	      "ibv_bind_mw: a BIND_MW WQE, the next rkey kept in the window",
	      "ret %d, opcode %u, new_rkey %#x, mw rkey %#x", ret, w->opcode,
	      w->bind.new_rkey, mw1.rkey);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xb2;
	wr.opcode = IBV_WR_BIND_MW;
	wr.bind_mw.mw = &mw1;
	wr.bind_mw.rkey = 0x120001;
	wr.bind_mw.bind_info = mb.bind_info;
	ret = ibv_post_send(o->qp, &wr, &bad);
	check(ret == EINVAL && bad == &wr && db->head[0] == head + 1,
	      "post_send: IBV_WR_BIND_MW of a type 1 window EINVAL", "ret %d",
	      ret);
	wr.bind_mw.mw = &mw2;
	wr.bind_mw.rkey = 0x340012;
	ret = ibv_post_send(o->qp, &wr, &bad);
	w = sq_slot(o->fqp, head + 1);
	check(!ret && w->opcode == VHCA_WR_BIND_MW &&
	      w->bind.mw_rkey == 0x340011 && w->bind.new_rkey == 0x340012 &&
	      mw2.rkey == 0x340011 && w->bind.mr_lkey == 0x3344,
	      "post_send: IBV_WR_BIND_MW of a type 2 window, the consumer's key",
	      "ret %d, new_rkey %#x", ret, w->bind.new_rkey);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.invalidate_rkey = 0x340012;
	ret = ibv_post_send(o->qp, &wr, &bad);
	w = sq_slot(o->fqp, head + 2);
	check(!ret && w->opcode == VHCA_WR_LOCAL_INV &&
	      w->invalidate_rkey == 0x340012 && w->num_sge == 0,
	      "post_send: LOCAL_INV carries the rkey", "ret %d", ret);
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.invalidate_rkey = 0x77;
	ret = ibv_post_send(o->qp, &wr, &bad);
	w = sq_slot(o->fqp, head + 3);
	check(!ret && w->opcode == VHCA_WR_SEND_WITH_INV &&
	      w->invalidate_rkey == 0x77 && db->head[0] == head + 4,
	      "post_send: SEND_WITH_INV carries the rkey", "ret %d", ret);
}

static void test_poll_cq(struct objs *o)
{
	struct vhca_cqe c1 = {
		.wr_id = 0x1122334455667788ULL, .status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_RECV,
		.flags = VHCA_CQE_WITH_IMM | VHCA_CQE_GRH,
		.sl = 5, .qp_num = o->fqp->qpn, .byte_len = 4000,
		.imm_data = htobe32(0xdeadbeef), .src_qp = 0x333,
		.pkey_index = 7,
	};
	struct vhca_cqe c2 = {
		.wr_id = 2, .status = IBV_WC_LOC_PROT_ERR,
		.opcode = IBV_WC_RDMA_WRITE, .qp_num = o->fqp->qpn,
		.vendor_err = 0x42,
	};
	struct vhca_db_rec *db = &fk.dbk[o->fcq->db_index];
	unsigned int calls;
	struct ibv_wc wc[4];
	int n, m, z;

	push_cqe(o->fcq, &c1);
	push_cqe(o->fcq, &c2);
	memset(wc, 0xff, sizeof(wc));
	calls = syscalls();
	n = ibv_poll_cq(o->cq, 1, wc);
	check(n == 1 && wc[0].wr_id == c1.wr_id &&
	      wc[0].status == IBV_WC_SUCCESS && wc[0].opcode == IBV_WC_RECV &&
	      wc[0].byte_len == 4000 && wc[0].imm_data == htobe32(0xdeadbeef) &&
	      wc[0].wc_flags == (IBV_WC_WITH_IMM | IBV_WC_GRH) &&
	      wc[0].qp_num == o->fqp->qpn && wc[0].src_qp == 0x333 &&
	      wc[0].pkey_index == 7 && wc[0].sl == 5 && wc[0].slid == 0 &&
	      wc[0].dlid_path_bits == 0 && wc[0].vendor_err == 0 &&
	      db->head[0] == 1,
	      "poll_cq: CQE converted to ibv_wc, consumer index published",
	      "n %d, status %d, flags %#x, head %u", n, wc[0].status,
	      wc[0].wc_flags, db->head[0]);
	m = ibv_poll_cq(o->cq, 4, wc + 1);
	z = ibv_poll_cq(o->cq, 4, wc + 2);
	check(m == 1 && z == 0 && wc[1].wr_id == 2 &&
	      wc[1].status == IBV_WC_LOC_PROT_ERR &&
	      wc[1].opcode == IBV_WC_RDMA_WRITE && wc[1].vendor_err == 0x42 &&
	      wc[1].wc_flags == 0 && db->head[0] == 2,
	      "poll_cq: an error CQE, then an empty CQ", "m %d, z %d", m, z);
	check(syscalls() == calls, "poll_cq: no system call",
	      "%u system calls", syscalls() - calls);
}

static void test_resize_cq(struct objs *o)
{
	struct vhca_cqe c = { .wr_id = 0xcafe, .opcode = IBV_WC_SEND };
	struct region *old = o->fcq->ring;
	off_t old_offset = old->offset;
	struct ibv_wc wc;
	int ret, n;

	push_cqe(o->fcq, &c);
	ret = ibv_resize_cq(o->cq, 300);
	check(!ret && fk.resize_cq.cq_handle == o->cq->handle &&
	      fk.resize_cq.cqe == 300 && o->cq->cqe == 511 &&
	      o->fcq->ring->offset != old_offset &&
	      mapped_as(o->fcq->ring, PROT_READ),
	      "ibv_resize_cq reaches RESIZE_CQ, new ring mapped read-only",
	      "ret %d, cqe %d", ret, o->cq->cqe);
	check(unmapped(old), "resize_cq: old ring unmapped", "still mapped");
	n = ibv_poll_cq(o->cq, 1, &wc);
	check(n == 1 && wc.wr_id == 0xcafe,
	      "resize_cq: the unconsumed CQE polled from the new ring",
	      "n %d", n);
}

static void test_srq(struct objs *o)
{
	struct ibv_srq_init_attr init = {
		.attr = { .max_wr = 10, .max_sge = 3, .srq_limit = 0 },
	};
	struct ibv_sge sge[3] = { { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } };
	struct ibv_recv_wr wr = { .wr_id = 0x5a, .sg_list = sge,
				  .num_sge = 3 }, *bad;
	struct ibv_srq_attr attr = { .srq_limit = 5 };
	struct ibv_qp_init_attr qpa = {
		.send_cq = o->cq, .recv_cq = o->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2, .max_send_sge = 1 },
	};
	const struct vhca_recv_wqe *w;
	struct fake_srq *fsrq;
	struct fake_qp *fqp;
	struct ibv_srq *srq;
	struct region *ring;
	struct ibv_qp *qp;
	unsigned int calls, maps;
	int ret;

	srq = ibv_create_srq(o->pd, &init);
	fsrq = srq ? find_srq(srq->handle) : NULL;
	check(fsrq && fk.create_srq.max_wr == 10 &&
	      fk.create_srq.max_sge == 3 && init.attr.max_wr == 16 &&
	      mapped_as(fsrq->rq.ring, PROT_READ | PROT_WRITE),
	      "ibv_create_srq reaches CREATE_SRQ, ring mapped read-write",
	      "srq %p, errno %d", (void *)srq, errno);
	if (!fsrq)
		return;
	ring = fsrq->rq.ring;

	calls = syscalls();
	ret = ibv_post_srq_recv(srq, &wr, &bad);
	w = rq_slot(&fsrq->rq, 0);
	check(!ret && w->wr_id == 0x5a && w->num_sge == 3 &&
	      wqe_sges(w, sizeof(*w))[2].lkey == 9 &&
	      fk.dbk[fsrq->db_index].head[0] == 1 && syscalls() == calls,
	      "post_srq_recv: WQE in the SRQ ring, head[0], no system call",
	      "ret %d", ret);
	wr.num_sge = 4;
	ret = ibv_post_srq_recv(srq, &wr, &bad);
	check(ret == EINVAL && bad == &wr, "post_srq_recv: past max_sge EINVAL",
	      "ret %d", ret);

	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT);
	check(!ret && fk.modify_srq.srq_handle == srq->handle &&
	      fk.modify_srq.attr_mask == IBV_SRQ_LIMIT &&
	      fk.modify_srq.srq_limit == 5,
	      "ibv_modify_srq reaches MODIFY_SRQ", "ret %d", ret);
	memset(&attr, 0, sizeof(attr));
	ret = ibv_query_srq(srq, &attr);
	check(!ret && attr.srq_limit == FAKE_SRQ_LIMIT && attr.max_wr == 16 &&
	      attr.max_sge == 3, "ibv_query_srq reaches QUERY_SRQ",
	      "ret %d, limit %u", ret, attr.srq_limit);

	qpa.srq = srq;
	maps = fk.nmaps;
	qp = ibv_create_qp(o->pd, &qpa);
	fqp = qp ? find_qp(qp->handle) : NULL;
	check(fqp && fk.create_qp.is_srq && fk.create_qp.srq_handle ==
	      srq->handle && !fqp->rq.ring && fk.nmaps == maps + 1,
	      "create_qp on an SRQ: only the SQ ring mapped", "qp %p, %u maps",
	      (void *)qp, fk.nmaps - maps);
	if (qp) {
		modify_state(qp, IBV_QPS_INIT);
		wr.num_sge = 1;
		ret = ibv_post_recv(qp, &wr, &bad);
		check(ret == EINVAL && bad == &wr,
		      "post_recv on an SRQ's QP: EINVAL", "ret %d", ret);
		check(!ibv_destroy_qp(qp), "destroy the SRQ's QP", "failed");
	}

	ret = ibv_destroy_srq(srq);
	check(!ret && fk.destroyed == fsrq->handle && unmapped(ring),
	      "ibv_destroy_srq reaches DESTROY_SRQ, ring unmapped", "ret %d",
	      ret);
}

/* An XRC SRQ of xrcd on the objects' PD and CQ. */
static struct ibv_srq *xrc_srq(struct objs *o, struct ibv_xrcd *xrcd,
			       struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = o->pd, .xrcd = xrcd, .cq = cq,
	};

	return ibv_create_srq_ex(o->ctx, &sa);
}

/* The XRC_SEND QP: the SRQ numbers in its WQEs; no receives, no local ops. */
static void test_xrc_send(struct objs *o)
{
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_SEND, .send_cq = o->cq,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = o->pd, .send_ops_flags = IBV_QP_EX_WITH_SEND,
	};
	struct ibv_sge sge = { 0x8000, 64, FAKE_LKEY };
	struct ibv_send_wr swr = {
		.wr_id = 0x33, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .qp_type.xrc.remote_srqn = 0x123456,
	}, *sbad;
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	unsigned int maps = fk.nmaps;
	struct ibv_qp_ex *qpx;
	struct fake_qp *fqp;
	struct ibv_qp *qp;
	int ret;

	qp = ibv_create_qp_ex(o->ctx, &qa);
	fqp = qp ? find_qp(qp->handle) : NULL;
	check(fqp && fk.create_qp.qp_type == IBV_QPT_XRC_SEND &&
	      fk.create_qp.pd_handle == FAKE_PD_HANDLE && fqp->sq.ring &&
	      !fqp->rq.ring && fk.nmaps == maps + 1,
	      "create_qp_ex XRC_SEND: CREATE_QP, only the SQ ring mapped",
	      "qp %p, errno %d", (void *)qp, errno);
	if (!fqp)
		return;
	check(modify_state(qp, IBV_QPS_INIT) && modify_state(qp, IBV_QPS_RTR) &&
	      modify_state(qp, IBV_QPS_RTS), "XRC_SEND QP to RTS", "failed");
	ret = ibv_post_send(qp, &swr, &sbad);
	check(!ret && sq_slot(fqp, 0)->xrc_srqn == 0x123456 &&
	      sq_slot(fqp, 0)->opcode == VHCA_WR_SEND,
	      "post_send on XRC_SEND: remote_srqn in the WQE's xrc_srqn",
	      "ret %d, xrc_srqn %#x", ret, sq_slot(fqp, 0)->xrc_srqn);
	qpx = ibv_qp_to_qp_ex(qp);
	ibv_wr_start(qpx);
	qpx->wr_id = 0x34;
	ibv_wr_send(qpx);
	ibv_wr_set_xrc_srqn(qpx, 0xabcdef);
	ibv_wr_set_sge(qpx, FAKE_LKEY, 0x8000, 64);
	ret = ibv_wr_complete(qpx);
	check(!ret && sq_slot(fqp, 1)->xrc_srqn == 0xabcdef &&
	      sq_slot(fqp, 1)->wr_id == 0x34,
	      "ibv_wr_set_xrc_srqn: the number in the WQE's xrc_srqn",
	      "ret %d, xrc_srqn %#x", ret, sq_slot(fqp, 1)->xrc_srqn);
	swr.opcode = IBV_WR_RDMA_READ;
	swr.wr.rdma.remote_addr = 0x9000;
	swr.wr.rdma.rkey = 0x1234;
	ret = ibv_post_send(qp, &swr, &sbad);
	check(!ret && sq_slot(fqp, 2)->opcode == VHCA_WR_RDMA_READ &&
	      sq_slot(fqp, 2)->xrc_srqn == 0x123456,
	      "post_send READ on XRC_SEND: a READ WQE with the SRQ number",
	      "ret %d, opcode %u", ret, sq_slot(fqp, 2)->opcode);
	swr.opcode = IBV_WR_LOCAL_INV;
	ret = ibv_post_send(qp, &swr, &sbad);
	check(ret == EINVAL && sbad == &swr,
	      "post_send LOCAL_INV on XRC_SEND: EINVAL", "ret %d", ret);
	ret = ibv_post_recv(qp, &rwr, &rbad);
	check(ret == EINVAL && rbad == &rwr, "post_recv on XRC_SEND: EINVAL",
	      "ret %d", ret);
	check(!ibv_destroy_qp(qp) && fk.destroyed == fqp->handle,
	      "destroy the XRC_SEND QP", "failed");
}

/*
 * XRC: open_xrcd, create_srq_ex of an XRC SRQ and its number, XRC_RECV
 * QPs created and opened (no rings), close_xrcd.
 */
static void test_xrc(struct objs *o)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	unsigned int maps, cmds;
	struct ibv_qp *tgt, *opened;
	struct fake_srq *fsrq;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	uint32_t srqn = 0;
	int ret;

	xrcd = ibv_open_xrcd(o->ctx, &xa);
	check(xrcd && fk.open_xrcd.fd == (uint32_t)-1 &&
	      fk.open_xrcd.oflags == O_CREAT,
	      "ibv_open_xrcd reaches OPEN_XRCD", "xrcd %p, errno %d",
	      (void *)xrcd, errno);
	if (!xrcd)
		return;
	srq = xrc_srq(o, xrcd, o->cq);
	fsrq = srq ? find_srq(srq->handle) : NULL;
	check(fsrq && fk.create_xsrq.srq_type == IBV_SRQT_XRC &&
	      fk.create_xsrq.xrcd_handle == FAKE_XRCD_HANDLE &&
	      fk.create_xsrq.cq_handle == o->cq->handle &&
	      fk.create_xsrq.pd_handle == FAKE_PD_HANDLE &&
	      mapped_as(fsrq->rq.ring, PROT_READ | PROT_WRITE),
	      "ibv_create_srq_ex XRC reaches CREATE_XSRQ, ring mapped",
	      "srq %p, errno %d", (void *)srq, errno);
	ret = srq ? ibv_get_srq_num(srq, &srqn) : -1;
	check(!ret && srqn == FAKE_XSRQN, "ibv_get_srq_num: the kernel's number",
	      "ret %d, srqn %#x", ret, srqn);
	cmds = fk.writes;
	check(!xrc_srq(o, xrcd, NULL) && errno == EINVAL && fk.writes == cmds,
	      "create_srq_ex XRC without CQ: EINVAL, no command", "errno %d",
	      errno);

	maps = fk.nmaps;
	qa.xrcd = xrcd;
	tgt = ibv_create_qp_ex(o->ctx, &qa);
	check(tgt && fk.create_qp.qp_type == IBV_QPT_XRC_RECV &&
	      fk.create_qp.pd_handle == FAKE_XRCD_HANDLE && fk.nmaps == maps,
	      "create_qp_ex XRC_RECV: CREATE_QP in the XRCD, nothing mapped",
	      "qp %p, errno %d", (void *)tgt, errno);
	if (tgt) {
		oa.qp_num = tgt->qp_num;
		oa.xrcd = xrcd;
		opened = ibv_open_qp(o->ctx, &oa);
		check(opened && fk.open_qp.qpn == tgt->qp_num &&
		      fk.open_qp.pd_handle == FAKE_XRCD_HANDLE &&
		      opened->qp_num == tgt->qp_num,
		      "ibv_open_qp reaches OPEN_QP", "qp %p, errno %d",
		      (void *)opened, errno);
		if (opened)
			check(!ibv_destroy_qp(opened), "destroy the opened QP",
			      "failed");
		check(!ibv_destroy_qp(tgt), "destroy the XRC_RECV QP",
		      "failed");
	}
	test_xrc_send(o);
	if (srq)
		check(!ibv_destroy_srq(srq) && unmapped(fsrq->rq.ring),
		      "destroy the XRC SRQ, ring unmapped", "failed");
	ret = ibv_close_xrcd(xrcd);
	check(!ret && fk.destroyed == FAKE_XRCD_HANDLE,
	      "ibv_close_xrcd reaches CLOSE_XRCD", "ret %d", ret);
}

/* UD: AH index in the WQE, sq_sig_all, and the flush on the kick in ERR. */
static void test_ud(struct objs *o)
{
	struct ibv_ah_attr ah_attr = { .dlid = 0x1234, .sl = 3, .port_num = 1 };
	struct ibv_qp_init_attr qpa = {
		.send_cq = o->cq, .recv_cq = o->cq, .qp_type = IBV_QPT_UD,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_sge sge = { 0x8000, 64, FAKE_LKEY };
	struct ibv_send_wr swr = { .wr_id = 0x11, .sg_list = &sge,
				   .num_sge = 1, .opcode = IBV_WR_SEND }, *sbad;
	struct ibv_recv_wr rwr = { .wr_id = 0x22, .sg_list = &sge,
				   .num_sge = 1 }, *rbad;
	const struct vhca_send_wqe *w;
	struct ibv_wc wc[4];
	struct fake_qp *fqp;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	unsigned int calls;
	int ret, n;

	ah = ibv_create_ah(o->pd, &ah_attr);
	check(ah && ah->handle == FAKE_AH_HANDLE &&
	      fk.create_ah.pd_handle == FAKE_PD_HANDLE &&
	      fk.create_ah.attr.dlid == 0x1234 && fk.create_ah.attr.sl == 3,
	      "ibv_create_ah reaches CREATE_AH", "ah %p, errno %d",
	      (void *)ah, errno);
	qp = ibv_create_qp(o->pd, &qpa);
	fqp = qp ? find_qp(qp->handle) : NULL;
	if (!ah || !fqp) {
		check(false, "UD QP created", "errno %d", errno);
		return;
	}
	modify_state(qp, IBV_QPS_INIT);
	modify_state(qp, IBV_QPS_RTR);
	modify_state(qp, IBV_QPS_RTS);

	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = 0x654321;
	swr.wr.ud.remote_qkey = 0x11111111;
	ret = ibv_post_send(qp, &swr, &sbad);
	w = sq_slot(fqp, 0);
	check(!ret && w->opcode == VHCA_WR_SEND &&
	      w->flags == VHCA_WQE_SIGNALED && w->ud.ah == FAKE_AH_INDEX &&
	      w->ud.remote_qpn == 0x654321 && w->ud.remote_qkey == 0x11111111,
	      "post_send UD: ah_index, remote QPN and Q_Key; sq_sig_all "
	      "signals", "ret %d, ah %#x, flags %#x", ret, w->ud.ah, w->flags);
	swr.opcode = IBV_WR_RDMA_WRITE;
	ret = ibv_post_send(qp, &swr, &sbad);
	check(ret == EINVAL && sbad == &swr, "post_send UD: RDMA WRITE EINVAL",
	      "ret %d", ret);
	swr.opcode = IBV_WR_SEND;

	check(modify_state(qp, IBV_QPS_ERR) &&
	      (fk.stk[fqp->db_index].flags & VHCA_STATUS_QP_ERROR),
	      "modify_qp to ERR (the fake raises VHCA_STATUS_QP_ERROR)",
	      "errno %d", errno);
	calls = fk.cmds[IB_USER_VERBS_CMD_POST_SEND];
	ret = ibv_post_recv(qp, &rwr, &rbad);
	n = ibv_poll_cq(o->cq, 4, wc);
	check(!ret && fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == calls + 1 &&
	      n == 2 && wc[0].wr_id == 0x11 && wc[1].wr_id == 0x22 &&
	      wc[0].status == IBV_WC_WR_FLUSH_ERR &&
	      wc[1].status == IBV_WC_WR_FLUSH_ERR,
	      "post_recv in ERR kicks; the flushed WRs complete with "
	      "WR_FLUSH_ERR", "ret %d, n %d, %u kicks", ret, n,
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] - calls);
	swr.wr_id = 0x33;
	ret = ibv_post_send(qp, &swr, &sbad);
	n = ibv_poll_cq(o->cq, 4, wc);
	check(!ret && n == 1 && wc[0].wr_id == 0x33 &&
	      wc[0].status == IBV_WC_WR_FLUSH_ERR,
	      "post_send in ERR: flushed on the kick", "ret %d, n %d", ret, n);

	check(modify_state(qp, IBV_QPS_RESET), "modify_qp ERR -> RESET",
	      "errno %d", errno);
	calls = syscalls();
	ret = ibv_post_recv(qp, &rwr, &rbad);
	check(ret == EINVAL && syscalls() == calls,
	      "post_recv in RESET: EINVAL, no system call", "ret %d", ret);
	modify_state(qp, IBV_QPS_INIT);
	ret = ibv_post_recv(qp, &rwr, &rbad);
	check(!ret && syscalls() == calls + 1,
	      "post_recv after the error flag cleared: no kick",
	      "ret %d, %u system calls", ret, syscalls() - calls - 1);

	check(!ibv_destroy_qp(qp) && fk.destroyed == fqp->handle &&
	      unmapped(fqp->sq.ring) && unmapped(fqp->rq.ring),
	      "ibv_destroy_qp reaches DESTROY_QP, rings unmapped", "failed");
	check(!ibv_destroy_ah(ah) && fk.destroyed == FAKE_AH_HANDLE,
	      "ibv_destroy_ah reaches DESTROY_AH", "failed");
}

/* ibv_rereg_mr: the command's fields, the kernel's keys, its errors. */
static void test_rereg_mr(struct objs *o)
{
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_pd pd2 = { .context = o->ctx, .handle = FAKE_PD_HANDLE + 1 };
	char other[64];
	int ret;

	ret = ibv_rereg_mr(o->mr, IBV_REREG_MR_CHANGE_TRANSLATION |
			   IBV_REREG_MR_CHANGE_ACCESS, NULL, other,
			   sizeof(other), access);
	check(!ret && fk.rereg_mr.mr_handle == FAKE_MR_HANDLE &&
	      fk.rereg_mr.flags == (IBV_REREG_MR_CHANGE_TRANSLATION |
				    IBV_REREG_MR_CHANGE_ACCESS) &&
	      fk.rereg_mr.start == (uintptr_t)other &&
	      fk.rereg_mr.hca_va == (uintptr_t)other &&
	      fk.rereg_mr.length == sizeof(other) &&
	      fk.rereg_mr.access_flags == (uint32_t)access &&
	      o->mr->lkey == FAKE_LKEY + 0x100 &&
	      o->mr->rkey == FAKE_RKEY + 0x100 &&
	      o->mr->addr == other && o->mr->length == sizeof(other),
	      "ibv_rereg_mr reaches REREG_MR (address, length, access "
	      "through; keys back)", "ret %d, errno %d", ret, errno);
	ret = ibv_rereg_mr(o->mr, IBV_REREG_MR_CHANGE_PD, &pd2, NULL, 0, 0);
	check(!ret && fk.rereg_mr.flags == IBV_REREG_MR_CHANGE_PD &&
	      fk.rereg_mr.pd_handle == pd2.handle && o->mr->pd == &pd2,
	      "ibv_rereg_mr CHANGE_PD carries the new PD's handle", "ret %d",
	      ret);
	fk.fail_cmd = IB_USER_VERBS_CMD_REREG_MR;
	fk.fail_err = EOPNOTSUPP;
	errno = 0;
	ret = ibv_rereg_mr(o->mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE);
	check(ret == IBV_REREG_MR_ERR_CMD && errno == EOPNOTSUPP &&
	      o->mr->lkey == FAKE_LKEY + 0x100,
	      "ibv_rereg_mr refused by the kernel: its errno, keys kept",
	      "ret %d, errno %d", ret, errno);
	ret = ibv_rereg_mr(o->mr, IBV_REREG_MR_CHANGE_PD, o->pd, NULL, 0, 0);
	check(!ret && o->mr->pd == o->pd, "ibv_rereg_mr back to the MR's PD",
	      "ret %d", ret);
}

#define QPEX_RC_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
		     IBV_QP_EX_WITH_RDMA_WRITE | \
		     IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
		     IBV_QP_EX_WITH_RDMA_READ)

/* max_inline_data 40: the fake kernel grants 64 (a multiple of 32). */
static struct ibv_qp *create_qp_ex(struct objs *o, enum ibv_qp_type type,
				   uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex attr = {
		.send_cq = o->cq, .recv_cq = o->cq, .qp_type = type,
		.cap = { .max_send_wr = 10, .max_recv_wr = 4,
			 .max_send_sge = 3, .max_recv_sge = 1,
			 .max_inline_data = 40 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = o->pd, .send_ops_flags = send_ops,
	};

	return ibv_create_qp_ex(o->ctx, &attr);
}

/* Send operations vhca does not execute: refused before the kernel. */
static void test_qpex_refused(struct objs *o)
{
	static const struct { uint64_t ops; const char *what; } bad[] = {
		{ IBV_QP_EX_WITH_TSO, "TSO" },
	};
	unsigned int creates = fk.cmds[IB_USER_VERBS_CMD_CREATE_QP];
	char name[96];
	struct ibv_qp *qp;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		errno = 0;
		qp = create_qp_ex(o, IBV_QPT_RC, IBV_QP_EX_WITH_SEND |
				  bad[i].ops);
		snprintf(name, sizeof(name), "create_qp_ex with %s: EOPNOTSUPP",
			 bad[i].what);
		check(!qp && errno == EOPNOTSUPP, name, "qp %p, errno %d",
		      (void *)qp, errno);
	}
	errno = 0;
	qp = create_qp_ex(o, IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_WRITE);
	check(!qp && errno == EOPNOTSUPP,
	      "create_qp_ex: RDMA WRITE on a UD QP EOPNOTSUPP", "errno %d",
	      errno);
	errno = 0;
	qp = create_qp_ex(o, IBV_QPT_UD, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);
	check(!qp && errno == EOPNOTSUPP,
	      "create_qp_ex: an atomic on a UD QP EOPNOTSUPP", "errno %d",
	      errno);
#if VHCA_RDMA_CORE >= 44
	errno = 0;
	qp = create_qp_ex(o, IBV_QPT_UD, IBV_QP_EX_WITH_ATOMIC_WRITE);
	check(!qp && errno == EOPNOTSUPP,
	      "create_qp_ex: an ATOMIC WRITE on a UD QP EOPNOTSUPP",
	      "errno %d", errno);
#endif
	errno = 0;
	qp = create_qp_ex(o, IBV_QPT_UC, IBV_QP_EX_WITH_RDMA_READ);
	check(!qp && errno == EOPNOTSUPP,
	      "create_qp_ex: RDMA READ on a UC QP EOPNOTSUPP", "errno %d",
	      errno);
	errno = 0;
	qp = create_qp_ex(o, IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP);
	check(!qp && errno == EOPNOTSUPP,
	      "create_qp_ex: an atomic on a UC QP EOPNOTSUPP", "errno %d",
	      errno);
	check(fk.cmds[IB_USER_VERBS_CMD_CREATE_QP] == creates,
	      "create_qp_ex refusals never reach the kernel", "%u creates",
	      fk.cmds[IB_USER_VERBS_CMD_CREATE_QP] - creates);
	qp = create_qp_ex(o, IBV_QPT_UC, IBV_QP_EX_WITH_SEND |
			  IBV_QP_EX_WITH_SEND_WITH_IMM |
			  IBV_QP_EX_WITH_RDMA_WRITE |
			  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);
	check(qp && fk.create_qp.qp_type == IBV_QPT_UC,
	      "create_qp_ex: SEND and RDMA WRITE (with immediate) on UC",
	      "qp %p, errno %d", (void *)qp, errno);
	if (qp)
		ibv_destroy_qp(qp);
}

static struct ibv_qp_ex *qpex_batch_start(struct ibv_qp_ex *qpx,
					  uint64_t wr_id, unsigned int flags)
{
	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = flags;
	return qpx;
}

/* RC: every operation, abort, and the errors wr_complete reports. */
static void test_qpex_rc(struct objs *o)
{
	char data[100], big[80];
	const struct ibv_data_buf bufs[2] = { { data, 10 }, { data + 10, 20 } };
	const struct ibv_sge sge[3] = {
		{ 0x1000, 11, 0x21 }, { 0x2000, 22, 0x22 }, { 0x3000, 33, 0x23 },
	};
	const struct ibv_sge four[4] = { sge[0], sge[1], sge[2], sge[0] };
	const struct vhca_send_wqe *w;
	struct vhca_db_rec *db;
	struct vhca_status_rec *st;
	unsigned int calls, kicks;
	struct ibv_qp_ex *qpx;
	struct fake_qp *fqp;
	struct ibv_qp *qp;
	uint32_t count, i;
	int ret;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 5 + 3);
	memset(big, 'x', sizeof(big));
	qp = create_qp_ex(o, IBV_QPT_RC, QPEX_RC_OPS);
	fqp = qp ? find_qp(qp->handle) : NULL;
	qpx = qp ? ibv_qp_to_qp_ex(qp) : NULL;
	check(fqp && qpx && fk.create_qp.max_send_wr == 10 &&
	      fk.create_qp.max_inline_data == 40 &&
	      mapped_as(fqp->sq.ring, PROT_READ | PROT_WRITE),
	      "ibv_create_qp_ex reaches CREATE_QP, rings mapped, "
	      "ibv_qp_to_qp_ex answers", "qp %p, qpx %p, errno %d",
	      (void *)qp, (void *)qpx, errno);
	if (!fqp || !qpx)
		return;
	db = &fk.dbk[fqp->db_index];
	st = &fk.stk[fqp->db_index];
	count = fqp->sq.count;

	kicks = fk.cmds[IB_USER_VERBS_CMD_POST_SEND];
	qpex_batch_start(qpx, 1, IBV_SEND_SIGNALED);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 1, 2, 3);
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL && db->head[0] == 0 &&
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks,
	      "wr_complete before RTS: EINVAL, nothing posted, no kick",
	      "ret %d, head %u", ret, db->head[0]);
	modify_state(qp, IBV_QPS_INIT);
	modify_state(qp, IBV_QPS_RTR);
	modify_state(qp, IBV_QPS_RTS);

	calls = syscalls();
	qpex_batch_start(qpx, 0x100, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	ibv_wr_send_imm(qpx, htobe32(0x0a0b0c0d));
	ibv_wr_set_sge_list(qpx, 3, sge);
	qpx->wr_id = 0x101;
	qpx->wr_flags = 0;
	ibv_wr_rdma_write(qpx, 0x5555, 0x7000000000001000ULL);
	ibv_wr_set_inline_data_list(qpx, 2, bufs);
	qpx->wr_id = 0x102;
	ibv_wr_rdma_write_imm(qpx, 0x6666, 0x2000, htobe32(9));
	ibv_wr_set_sge(qpx, 0x31, 0x4000, 44);
	qpx->wr_id = 0x103;
	qpx->wr_flags = IBV_SEND_FENCE | IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(qpx, 0x7777, 0x3000);
	ibv_wr_set_sge_list(qpx, 2, sge + 1);
	qpx->wr_id = 0x104;
	qpx->wr_flags = 0;
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, data, 64);
	check(syscalls() == calls && db->head[0] == 0,
	      "wr_* builders: no system call, nothing published before "
	      "wr_complete", "%u system calls, head %u", syscalls() - calls,
	      db->head[0]);
	ret = ibv_wr_complete(qpx);
	check(!ret && db->head[0] == 5 &&
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks + 1 &&
	      fk.post_send.qp_handle == qp->handle &&
	      fk.post_send.wr_count == 0 && syscalls() == calls + 1,
	      "wr_complete: five WQEs published, one kick (the only system "
	      "call)", "ret %d, head %u, %u system calls", ret, db->head[0],
	      syscalls() - calls);

	w = sq_slot(fqp, 0);
	check(w->wr_id == 0x100 && w->opcode == VHCA_WR_SEND_WITH_IMM &&
	      w->flags == (VHCA_WQE_SIGNALED | VHCA_WQE_SOLICITED) &&
	      w->num_sge == 3 && w->inline_len == 0 &&
	      w->imm_data == htobe32(0x0a0b0c0d) && !w->rdma.remote_addr &&
	      !memcmp(wqe_sges(w, sizeof(*w)),
		      (struct vhca_sge[]){ { 0x1000, 11, 0x21 },
					   { 0x2000, 22, 0x22 },
					   { 0x3000, 33, 0x23 } },
		      3 * sizeof(struct vhca_sge)),
	      "wr_send_imm + wr_set_sge_list: WQE bytes", "flags %#x, "
	      "opcode %u, sges %u", w->flags, w->opcode, w->num_sge);
	w = sq_slot(fqp, 1);
	check(w->wr_id == 0x101 && w->opcode == VHCA_WR_RDMA_WRITE &&
	      w->flags == VHCA_WQE_INLINE && w->num_sge == 0 &&
	      w->inline_len == 30 && !w->imm_data &&
	      w->rdma.remote_addr == 0x7000000000001000ULL &&
	      w->rdma.rkey == 0x5555 && !memcmp(w + 1, data, 30),
	      "wr_rdma_write + wr_set_inline_data_list: WQE bytes, data "
	      "after the header", "flags %#x, len %u", w->flags,
	      w->inline_len);
	w = sq_slot(fqp, 2);
	check(w->wr_id == 0x102 && w->opcode == VHCA_WR_RDMA_WRITE_WITH_IMM &&
	      w->flags == 0 && w->num_sge == 1 && w->imm_data == htobe32(9) &&
	      w->rdma.remote_addr == 0x2000 && w->rdma.rkey == 0x6666 &&
	      wqe_sges(w, sizeof(*w))[0].addr == 0x4000 &&
	      wqe_sges(w, sizeof(*w))[0].length == 44 &&
	      wqe_sges(w, sizeof(*w))[0].lkey == 0x31,
	      "wr_rdma_write_imm + wr_set_sge: WQE bytes", "flags %#x",
	      w->flags);
	w = sq_slot(fqp, 3);
	check(w->wr_id == 0x103 && w->opcode == VHCA_WR_RDMA_READ &&
	      w->flags == (VHCA_WQE_FENCE | VHCA_WQE_SIGNALED) &&
	      w->num_sge == 2 && w->rdma.rkey == 0x7777 &&
	      w->rdma.remote_addr == 0x3000 &&
	      wqe_sges(w, sizeof(*w))[1].addr == 0x3000,
	      "wr_rdma_read (fence): WQE bytes", "flags %#x", w->flags);
	w = sq_slot(fqp, 4);
	check(w->wr_id == 0x104 && w->opcode == VHCA_WR_SEND &&
	      w->flags == VHCA_WQE_INLINE && w->inline_len == 64 &&
	      !memcmp(w + 1, data, 64),
	      "wr_send + wr_set_inline_data (max_inline, 64 bytes): WQE bytes",
	      "flags %#x, len %u", w->flags, w->inline_len);

	/* wr_abort: nothing published, the slot is reused. */
	calls = syscalls();
	qpex_batch_start(qpx, 0x200, 0);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 1, 2, 3);
	ibv_wr_abort(qpx);
	qpex_batch_start(qpx, 0x201, 0);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 4, 5, 6);
	ret = ibv_wr_complete(qpx);
	check(!ret && db->head[0] == 6 && sq_slot(fqp, 5)->wr_id == 0x201 &&
	      syscalls() == calls + 1,
	      "wr_abort discards the batch; the next one takes its slot",
	      "ret %d, head %u, wr_id %#llx", ret, db->head[0],
	      (unsigned long long)sq_slot(fqp, 5)->wr_id);

	/* Errors: reported by wr_complete, the whole batch discarded. */
	kicks = fk.cmds[IB_USER_VERBS_CMD_POST_SEND];
	qpex_batch_start(qpx, 0x300, 0);
	for (i = 0; i <= count - 6; i++) {
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, 1, 2, 3);
	}
	ret = ibv_wr_complete(qpx);
	check(ret == ENOMEM && db->head[0] == 6 &&
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks,
	      "a batch past the free slots: wr_complete ENOMEM, nothing "
	      "published, no kick", "ret %d, head %u", ret, db->head[0]);
	qpex_batch_start(qpx, 0x301, 0);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 1, 2, 3);
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, 4, four);
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL && db->head[0] == 6,
	      "past max_send_sge: wr_complete EINVAL, the batch discarded",
	      "ret %d, head %u", ret, db->head[0]);
	qpex_batch_start(qpx, 0x302, 0);
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, big, 65);
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL && db->head[0] == 6,
	      "inline past max_inline: wr_complete EINVAL", "ret %d", ret);
	qpex_batch_start(qpx, 0x303, 0);
	ibv_wr_rdma_read(qpx, 1, 2);
	ibv_wr_set_inline_data(qpx, big, 4);
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL, "inline RDMA READ: wr_complete EINVAL", "ret %d",
	      ret);
	qpex_batch_start(qpx, 0x304, IBV_SEND_IP_CSUM);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 1, 2, 3);
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL, "unsupported wr_flags: wr_complete EINVAL",
	      "ret %d", ret);
	check(db->head[0] == 6 && fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks,
	      "refused batches: head unchanged, no kick", "head %u, %u kicks",
	      db->head[0], fk.cmds[IB_USER_VERBS_CMD_POST_SEND] - kicks);

	/* The device released every slot: a full ring's worth fits. */
	__atomic_store_n(&st->tail[0], 6, __ATOMIC_RELEASE);
	qpex_batch_start(qpx, 0x400, 0);
	for (i = 0; i < count; i++) {
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, 1, 2, 3);
	}
	ret = ibv_wr_complete(qpx);
	check(!ret && db->head[0] == 6 + count,
	      "a batch of exactly the free slots is published", "ret %d, "
	      "head %u", ret, db->head[0]);
	check(!ibv_destroy_qp(qp) && unmapped(fqp->sq.ring),
	      "destroy the ibv_qp_ex QP", "failed");
}

/*
 * Creation flags: none is vhca's, so an empty set is taken (as pyverbs'
 * QP tests ask, the mask set and no flag) and any flag refused.
 */
static void test_qpex_create_flags(struct objs *o)
{
	struct ibv_qp_init_attr_ex attr = {
		.send_cq = o->cq, .recv_cq = o->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 10, .max_recv_wr = 4,
			 .max_send_sge = 3, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.pd = o->pd,
	};
	unsigned int creates = fk.cmds[IB_USER_VERBS_CMD_CREATE_QP];
	struct ibv_qp *qp;

	qp = ibv_create_qp_ex(o->ctx, &attr);
	check(qp && fk.cmds[IB_USER_VERBS_CMD_CREATE_QP] == creates + 1 &&
	      attr.cap.max_send_wr >= 10,
	      "create_qp_ex with the creation flags' mask and no flag",
	      "errno %d", errno);
	check(qp && !ibv_destroy_qp(qp), "destroy it", "failed");
	attr.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	errno = 0;
	qp = ibv_create_qp_ex(o->ctx, &attr);
	check(!qp && errno == EOPNOTSUPP &&
	      fk.cmds[IB_USER_VERBS_CMD_CREATE_QP] == creates + 1,
	      "create_qp_ex with a creation flag: EOPNOTSUPP, no command",
	      "qp %p, errno %d", (void *)qp, errno);
}

#if VHCA_RDMA_CORE >= 44
/*
 * A provider built for 36 to 43 (whose verbs.h has no ATOMIC WRITE) under
 * an application that has it: refused as the operations vhca does not
 * execute are, by create_qp_ex and by post_send, never reaching the kernel.
 */
static void test_atomic_write_refused(struct objs *o)
{
	uint64_t local = 0;
	struct ibv_sge sge = { (uintptr_t)&local, 8, 0x21 };
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_ATOMIC_WRITE, .sg_list = &sge, .num_sge = 1,
		.wr.rdma = { 0x9000, 0x4444 },
	}, *bad = NULL;
	unsigned int creates = fk.cmds[IB_USER_VERBS_CMD_CREATE_QP];
	unsigned int kicks = fk.cmds[IB_USER_VERBS_CMD_POST_SEND];
	struct ibv_qp *qp;
	int ret;

	errno = 0;
	qp = create_qp_ex(o, IBV_QPT_RC, IBV_QP_EX_WITH_ATOMIC_WRITE);
	check(!qp && errno == EOPNOTSUPP &&
	      fk.cmds[IB_USER_VERBS_CMD_CREATE_QP] == creates,
	      "create_qp_ex with ATOMIC WRITE (built for 36-43): EOPNOTSUPP",
	      "qp %p, errno %d", (void *)qp, errno);
	/* On the RC QP in RTS: EINVAL for the opcode, not the state. */
	ret = ibv_post_send(o->qp, &wr, &bad);
	check(ret == EINVAL && bad == &wr && o->qp->state == IBV_QPS_RTS &&
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks,
	      "post_send ATOMIC WRITE (built for 36-43): EINVAL, no kick",
	      "ret %d, state %d", ret, o->qp->state);
}

/*
 * ATOMIC WRITE, by ibv_wr_atomic_write and by post_send: the 8 bytes in
 * the WQE (atomic.swap), no SGEs; a setter after it, or a post_send whose
 * SGE is not 8 bytes, is refused.
 */
static void test_atomic_write(struct objs *o)
{
	const uint64_t value = 0x0102030405060708ULL;
	uint64_t local = 0x1112131415161718ULL;
	struct ibv_sge sge = { (uintptr_t)&local, 8, 0x21 };
	struct ibv_send_wr wr = {
		.wr_id = 0x502, .opcode = IBV_WR_ATOMIC_WRITE, .sg_list = &sge,
		.num_sge = 1, .wr.rdma = { 0x9000, 0x4444 },
	}, *bad;
	const struct vhca_send_wqe *w;
	struct vhca_db_rec *db;
	struct ibv_qp_ex *qpx;
	struct fake_qp *fqp;
	struct ibv_qp *qp;
	int ret;

	qp = create_qp_ex(o, IBV_QPT_RC, IBV_QP_EX_WITH_ATOMIC_WRITE);
	fqp = qp ? find_qp(qp->handle) : NULL;
	qpx = qp ? ibv_qp_to_qp_ex(qp) : NULL;
	check(fqp && qpx, "create_qp_ex with ATOMIC WRITE", "errno %d",
	      errno);
	if (!fqp || !qpx)
		return;
	db = &fk.dbk[fqp->db_index];
	modify_state(qp, IBV_QPS_INIT);
	modify_state(qp, IBV_QPS_RTR);
	modify_state(qp, IBV_QPS_RTS);

	qpex_batch_start(qpx, 0x500, IBV_SEND_SIGNALED);
	ibv_wr_atomic_write(qpx, 0x3333, 0x8000, &value);
	ret = ibv_wr_complete(qpx);
	w = sq_slot(fqp, 0);
	check(!ret && db->head[0] == 1 && w->wr_id == 0x500 &&
	      w->opcode == VHCA_WR_ATOMIC_WRITE &&
	      w->flags == VHCA_WQE_SIGNALED && !w->num_sge &&
	      !w->inline_len && w->atomic.remote_addr == 0x8000 &&
	      w->atomic.rkey == 0x3333 && w->atomic.swap == value,
	      "wr_atomic_write: WQE bytes, the value in atomic.swap",
	      "ret %d, opcode %u, swap %#llx", ret, w->opcode,
	      (unsigned long long)w->atomic.swap);
	qpex_batch_start(qpx, 0x501, 0);
	ibv_wr_atomic_write(qpx, 0x3333, 0x8000, &value);
	ibv_wr_set_sge(qpx, 1, 2, 8);
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL && db->head[0] == 1,
	      "wr_atomic_write then wr_set_sge: wr_complete EINVAL",
	      "ret %d, head %u", ret, db->head[0]);

	ret = ibv_post_send(qp, &wr, &bad);
	w = sq_slot(fqp, 1);
	check(!ret && db->head[0] == 2 && w->opcode == VHCA_WR_ATOMIC_WRITE &&
	      !w->num_sge && w->atomic.remote_addr == 0x9000 &&
	      w->atomic.rkey == 0x4444 && w->atomic.swap == local,
	      "post_send ATOMIC WRITE: its SGE's 8 bytes in the WQE",
	      "ret %d, swap %#llx", ret, (unsigned long long)w->atomic.swap);
	sge.length = 4;
	ret = ibv_post_send(qp, &wr, &bad);
	check(ret == EINVAL && bad == &wr && db->head[0] == 2,
	      "post_send ATOMIC WRITE of 4 bytes: EINVAL", "ret %d", ret);
	check(!ibv_destroy_qp(qp), "destroy the ATOMIC WRITE QP", "failed");
}
#endif

/* UD: the address of a datagram, and RDMA refused on it. */
static void test_qpex_ud(struct objs *o)
{
	struct ibv_ah_attr ah_attr = { .dlid = 1, .port_num = 1 };
	const struct vhca_send_wqe *w;
	struct ibv_qp_ex *qpx;
	struct fake_qp *fqp;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	int ret;

	ah = ibv_create_ah(o->pd, &ah_attr);
	qp = create_qp_ex(o, IBV_QPT_UD, IBV_QP_EX_WITH_SEND |
			  IBV_QP_EX_WITH_SEND_WITH_IMM);
	fqp = qp ? find_qp(qp->handle) : NULL;
	qpx = qp ? ibv_qp_to_qp_ex(qp) : NULL;
	check(ah && fqp && qpx && fk.create_qp.qp_type == IBV_QPT_UD,
	      "ibv_create_qp_ex UD with SEND and SEND_WITH_IMM", "errno %d",
	      errno);
	if (!ah || !fqp || !qpx)
		return;
	modify_state(qp, IBV_QPS_INIT);
	modify_state(qp, IBV_QPS_RTR);
	modify_state(qp, IBV_QPS_RTS);

	qpex_batch_start(qpx, 0x500, IBV_SEND_SIGNALED);
	ibv_wr_send_imm(qpx, htobe32(77));
	ibv_wr_set_ud_addr(qpx, ah, 0x123456, 0x11112222);
	ibv_wr_set_sge(qpx, 0x41, 0x9000, 0);
	ret = ibv_wr_complete(qpx);
	w = sq_slot(fqp, 0);
	check(!ret && w->opcode == VHCA_WR_SEND_WITH_IMM &&
	      w->flags == VHCA_WQE_SIGNALED && w->ud.ah == FAKE_AH_INDEX &&
	      w->ud.remote_qpn == 0x123456 &&
	      w->ud.remote_qkey == 0x11112222 && w->imm_data == htobe32(77) &&
	      w->num_sge == 1 && wqe_sges(w, sizeof(*w))[0].length == 0 &&
	      fk.dbk[fqp->db_index].head[0] == 1,
	      "UD wr_send_imm + wr_set_ud_addr (zero-length SGE): WQE bytes",
	      "ret %d, ah %#x", ret, w->ud.ah);
	qpex_batch_start(qpx, 0x501, 0);
	ibv_wr_rdma_write(qpx, 1, 2);
	ibv_wr_set_sge(qpx, 1, 2, 3);
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL && fk.dbk[fqp->db_index].head[0] == 1,
	      "UD wr_rdma_write: wr_complete EINVAL", "ret %d", ret);
	qpex_batch_start(qpx, 0x502, 0);
	ibv_wr_send(qpx);
	ibv_wr_set_ud_addr(qpx, NULL, 1, 2);
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL, "UD wr_set_ud_addr without an AH: EINVAL",
	      "ret %d", ret);
	check(!ibv_destroy_qp(qp) && !ibv_destroy_ah(ah),
	      "destroy the UD ibv_qp_ex QP and its AH", "failed");
}

/*
 * A reset removes the QP's completions from its CQ (the flushes of its
 * previous life), not another QP's, nor those the QP makes afterwards.
 */
static void test_reset_discards(struct objs *o)
{
	struct vhca_cqe mine = {
		.wr_id = 0xd1, .status = IBV_WC_WR_FLUSH_ERR,
		.opcode = IBV_WC_RECV, .qp_num = o->fqp->qpn,
	};
	struct vhca_cqe other = { .wr_id = 0xd2, .qp_num = o->fqp->qpn + 9 };
	unsigned int calls;
	struct ibv_wc wc[4];
	int n;

	while (ibv_poll_cq(o->cq, 4, wc) > 0)
		;
	push_cqe(o->fcq, &mine);
	push_cqe(o->fcq, &other);
	mine.wr_id = 0xd3;
	push_cqe(o->fcq, &mine);
	check(modify_state(o->qp, IBV_QPS_RESET), "modify_qp to RESET",
	      "errno %d", errno);
	mine.wr_id = 0xd4;
	mine.status = IBV_WC_SUCCESS;
	push_cqe(o->fcq, &mine);
	calls = syscalls();
	n = ibv_poll_cq(o->cq, 4, wc);
	check(n == 2 && wc[0].wr_id == 0xd2 && wc[1].wr_id == 0xd4 &&
	      syscalls() == calls,
	      "reset: the QP's earlier CQEs are not polled, the rest are",
	      "n %d, wr_id %#llx", n, (unsigned long long)wc[0].wr_id);
	mine.wr_id = 0xd5;
	push_cqe(o->fcq, &mine);
	n = ibv_poll_cq(o->cq, 4, wc);
	check(n == 1 && wc[0].wr_id == 0xd5,
	      "reset: the discard ends where the CQ stood", "n %d", n);
}

/* ibv_create_cq_ex requests the provider refuses before the kernel. */
static void test_cqex_refused(struct objs *o)
{
	static const struct {
		struct ibv_cq_init_attr_ex attr;
		int err;
		const char *what;
	} bad[] = {
		{ { .cqe = 8, .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP },
		  EOPNOTSUPP, "completion timestamp" },
		{ { .cqe = 8, .wc_flags = IBV_WC_EX_WITH_CVLAN }, EOPNOTSUPP,
		  "CVLAN" },
		{ { .cqe = 8, .wc_flags = IBV_WC_EX_WITH_FLOW_TAG },
		  EOPNOTSUPP, "flow tag" },
		{ { .cqe = 8, .comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		    .flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN }, EOPNOTSUPP,
		  "IGNORE_OVERRUN" },
		{ { .cqe = 8, .comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		    .flags = 1 << 7 }, EINVAL, "an unknown flag" },
		{ { .cqe = 8, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD },
		  EOPNOTSUPP, "a parent domain" },
		{ { .cqe = 8, .comp_mask = 1 << 5 }, EINVAL,
		  "an unknown comp_mask bit" },
	};
	unsigned int i, calls = syscalls();
	struct ibv_cq_init_attr_ex attr;
	struct ibv_cq_ex *cqx;
	char name[96];

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		attr = bad[i].attr;
		errno = 0;
		cqx = ibv_create_cq_ex(o->ctx, &attr);
		snprintf(name, sizeof(name), "create_cq_ex: %s refused (%s)",
			 bad[i].what, bad[i].err == EINVAL ? "EINVAL" :
			 "EOPNOTSUPP");
		check(!cqx && errno == bad[i].err, name, "cq %p, errno %d",
		      (void *)cqx, errno);
		if (cqx)
			ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
	}
	check(syscalls() == calls, "create_cq_ex: refused without a command",
	      "%u system calls", syscalls() - calls);
}

/* Polls @cqx empty through the ibv_cq_ex API. */
static void drain_cqex(struct ibv_cq_ex *cqx)
{
	struct ibv_poll_cq_attr pa = {};

	if (ibv_start_poll(cqx, &pa))
		return;
	while (!ibv_next_poll(cqx))
		;
	ibv_end_poll(cqx);
}

static void test_cqex(struct objs *o)
{
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 50, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
	};
	struct vhca_cqe c1 = {
		.wr_id = 0x0102030405060708ULL, .status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_RECV_RDMA_WITH_IMM, .flags = VHCA_CQE_WITH_IMM,
		.sl = 3, .qp_num = 0x77, .byte_len = 1234,
		.imm_data = htobe32(0xa5a5f00d), .src_qp = 0x99,
	};
	struct vhca_cqe c2 = {
		.wr_id = 9, .status = IBV_WC_REM_ACCESS_ERR,
		.opcode = IBV_WC_RDMA_WRITE, .qp_num = 0x78, .vendor_err = 0x21,
	};
	struct ibv_poll_cq_attr pa = {};
	struct fake_cq *fcq = NULL;
	struct ibv_cq_ex *cqx;
	struct vhca_db_rec *db;
	int r1, r2, r3, n;
	unsigned int calls;
	struct ibv_wc wc;

	test_cqex_refused(o);
	cqx = ibv_create_cq_ex(o->ctx, &attr);
	if (cqx)
		fcq = find_cq(cqx->handle);
	check(cqx && fcq && fk.create_cq.cqe == 50 && cqx->cqe == 63 &&
	      mapped_as(fcq->ring, PROT_READ),
	      "ibv_create_cq_ex reaches CREATE_CQ, ring mapped read-only",
	      "cq %p, errno %d", (void *)cqx, errno);
	if (!fcq)
		return;
	check(cqx->read_byte_len && cqx->read_imm_data && cqx->read_qp_num &&
	      cqx->read_src_qp && cqx->read_slid && cqx->read_sl &&
	      cqx->read_dlid_path_bits && !cqx->read_completion_ts &&
	      !cqx->read_cvlan && !cqx->read_flow_tag,
	      "create_cq_ex: accessors of the asked fields only", "not so");

	db = &fk.dbk[fcq->db_index];
	calls = syscalls();
	r1 = ibv_start_poll(cqx, &pa);
	check(r1 == ENOENT && db->head[0] == 0,
	      "start_poll on an empty CQ: ENOENT", "ret %d", r1);
	push_cqe(fcq, &c1);
	push_cqe(fcq, &c2);
	r1 = ibv_start_poll(cqx, &pa);
	check(!r1 && cqx->wr_id == c1.wr_id &&
	      cqx->status == IBV_WC_SUCCESS &&
	      ibv_wc_read_opcode(cqx) == IBV_WC_RECV_RDMA_WITH_IMM &&
	      ibv_wc_read_byte_len(cqx) == 1234 &&
	      ibv_wc_read_imm_data(cqx) == htobe32(0xa5a5f00d) &&
	      ibv_wc_read_wc_flags(cqx) == IBV_WC_WITH_IMM &&
	      ibv_wc_read_qp_num(cqx) == 0x77 &&
	      ibv_wc_read_src_qp(cqx) == 0x99 && ibv_wc_read_sl(cqx) == 3 &&
	      ibv_wc_read_slid(cqx) == 0 &&
	      ibv_wc_read_dlid_path_bits(cqx) == 0 &&
	      ibv_wc_read_vendor_err(cqx) == 0,
	      "start_poll: the first CQE through the accessors",
	      "ret %d, wr_id %#llx", r1, (unsigned long long)cqx->wr_id);
	if (r1)
		goto out;
	r2 = ibv_next_poll(cqx);
	check(!r2 && cqx->wr_id == 9 && cqx->status == IBV_WC_REM_ACCESS_ERR &&
	      ibv_wc_read_opcode(cqx) == IBV_WC_RDMA_WRITE &&
	      ibv_wc_read_vendor_err(cqx) == 0x21 &&
	      ibv_wc_read_wc_flags(cqx) == 0 && ibv_wc_read_qp_num(cqx) == 0x78,
	      "next_poll: the error CQE", "ret %d", r2);
	r3 = ibv_next_poll(cqx);
	check(r3 == ENOENT && db->head[0] == 0,
	      "next_poll past the last CQE: ENOENT, index not yet published",
	      "ret %d, head %u", r3, db->head[0]);
	ibv_end_poll(cqx);
	check(db->head[0] == 2 && syscalls() == calls,
	      "end_poll publishes the consumer index; no system call",
	      "head %u, %u system calls", db->head[0], syscalls() - calls);

	push_cqe(fcq, &c2);
	n = ibv_poll_cq(ibv_cq_ex_to_cq(cqx), 1, &wc);
	check(n == 1 && wc.wr_id == 9 && wc.vendor_err == 0x21 &&
	      db->head[0] == 3,
	      "ibv_poll_cq on ibv_cq_ex_to_cq() reads the same ring",
	      "n %d", n);
	check(!ibv_req_notify_cq(ibv_cq_ex_to_cq(cqx), 0) &&
	      fk.notify.cq_handle == cqx->handle,
	      "req_notify_cq on an extended CQ", "failed");
out:
	drain_cqex(cqx);
	check(!ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)) && unmapped(fcq->ring),
	      "destroy the extended CQ, ring unmapped", "failed");
}

/* Responses the provider must refuse, and destroys the kernel refuses. */
static void test_failures(struct objs *o)
{
	struct ibv_qp_init_attr qpa = o->qp_attr;
	unsigned int destroys = fk.cmds[IB_USER_VERBS_CMD_DESTROY_QP];
	unsigned int maps = fk.nmaps;
	struct ibv_qp *qp;
	int ret;

	fk.bad_qp_resp = true;
	errno = 0;
	qp = ibv_create_qp(o->pd, &qpa);
	fk.bad_qp_resp = false;
	check(!qp && errno == EPROTO &&
	      fk.cmds[IB_USER_VERBS_CMD_DESTROY_QP] == destroys + 1 &&
	      fk.nmaps == maps,
	      "create_qp: inconsistent response EPROTO, QP destroyed, nothing "
	      "mapped", "qp %p, errno %d", (void *)qp, errno);

	fk.fail_cmd = IB_USER_VERBS_CMD_DESTROY_CQ;
	fk.fail_err = EBUSY;
	ret = ibv_destroy_cq(o->cq);
	check(ret == EBUSY && mapped_as(o->fcq->ring, PROT_READ),
	      "destroy_cq refused by the kernel: EBUSY, ring kept",
	      "ret %d", ret);
}

static void test_verbs(struct ibv_device *dev)
{
	struct objs o = { 0 };
	struct region *cq_ring, *sq_ring, *rq_ring;
	unsigned int base = fk.nmaps;

	o.ctx = ibv_open_device(dev);
	check(o.ctx, "open vhca0 for the verbs", "errno %d", errno);
	if (!o.ctx)
		return;
	memset(fk.cmds, 0, sizeof(fk.cmds));
	test_pd_mr(&o);
	if (o.pd)
		test_cq(&o);
	if (o.fcq)
		test_qp(&o);
	if (o.fqp) {
		test_post_recv(&o);
		test_post_send(&o);
		test_post_mw(&o);
		test_poll_cq(&o);
		test_resize_cq(&o);
		test_srq(&o);
		test_xrc(&o);
		test_ud(&o);
		test_qpex_refused(&o);
		test_qpex_rc(&o);
#if VHCA_RDMA_CORE >= 44
		if (provider_release >= 44)
			test_atomic_write(&o);
		else
			test_atomic_write_refused(&o);
#endif
		test_qpex_create_flags(&o);
		test_qpex_ud(&o);
		test_rereg_mr(&o);
		test_reset_discards(&o);
		test_cqex(&o);
		test_failures(&o);

		sq_ring = o.fqp->sq.ring;
		rq_ring = o.fqp->rq.ring;
		check(!ibv_destroy_qp(o.qp) && unmapped(sq_ring) &&
		      unmapped(rq_ring), "destroy the RC QP, rings unmapped",
		      "failed");
	}
	if (o.fcq) {
		cq_ring = o.fcq->ring;
		check(!ibv_destroy_cq(o.cq) && fk.destroyed == o.fcq->handle &&
		      unmapped(cq_ring),
		      "ibv_destroy_cq reaches DESTROY_CQ, ring unmapped",
		      "failed");
	}
	if (o.mr)
		check(!ibv_dereg_mr(o.mr) && fk.destroyed == FAKE_MR_HANDLE &&
		      fk.cmds[IB_USER_VERBS_CMD_DEREG_MR] == 1,
		      "ibv_dereg_mr reaches DEREG_MR", "failed");
	if (o.pd)
		check(!ibv_dealloc_pd(o.pd) &&
		      fk.destroyed == FAKE_PD_HANDLE &&
		      fk.cmds[IB_USER_VERBS_CMD_DEALLOC_PD] == 1,
		      "ibv_dealloc_pd reaches DEALLOC_PD", "failed");
	check(!fk.other_cmds && !fk.bad_cmds,
	      "verbs: no unexpected or malformed command",
	      "%u unexpected, %u bad", fk.other_cmds, fk.bad_cmds);
	check(!ibv_close_device(o.ctx), "close vhca0 after the verbs",
	      "failed");
	check(fk.nmaps > base, "verbs: mappings were made", "none");
	check_released("verbs: nothing left");
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_device *vhca0;
	char err[4096];
	int num = 0;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s TAG /abs/path/libvhca [RELEASE]\n",
			argv[0]);
		return 2;
	}
	tag = argv[1];
	if (argc == 4)
		provider_release = atoi(argv[3]);
	if (geteuid()) {
		char name[320];

		snprintf(name, sizeof(name), "%s: dispatch", tag);
		ktap_skip(name, "needs root");
		return 0;
	}
	enter_fake_system(argv[2]);
	fk.uresp = (struct vhca_alloc_ucontext_resp){
		.db_mmap_offset = DB_OFFSET, .db_size = AREA_SIZE,
		.status_mmap_offset = STATUS_OFFSET, .status_size = AREA_SIZE,
	};

	list = list_devices(&num, err, sizeof(err));
	test_list(list, num, err);
	vhca0 = find(list, "vhca0");
	if (vhca0) {
		test_open(vhca0);
		test_open_failures(vhca0);
		test_verbs(vhca0);
	}
	test_renamed(find(list, "foo0"));
	if (list)
		ibv_free_device_list(list);
	return ktap_failures() ? 1 : 0;
}
