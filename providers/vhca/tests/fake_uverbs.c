// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The dispatch test's fake kernel (fake_uverbs.h): the uverbs commands and
 * mmap rules of the kernel as vhca's provider meets them, the context, the
 * device and the objects without rings here, the CQs, QPs and SRQs in
 * fake_uverbs_queues.c.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <endian.h>
#include <linux/netlink.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "fake_uverbs.h"
#include "harness.h"

#define RING_OFFSETS	(64 * PAGE)	/* where ring offsets start */

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

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

size_t page_up(size_t n)
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
void region_del(struct region *r)
{
	if (!r || !r->live)
		return;
	r->live = false;
	NEXT(munmap)(r->kview, page_up(r->size));
	close(r->memfd);
}

/* A new entry of @size bytes at @offset (0: the next free offset). */
struct region *region_new(off_t offset, size_t size, bool writable)
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

uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

struct vhca_db_rec *fk_db(uint32_t index)
{
	struct vhca_db_rec *db = fk.area_db[index / AREA_RECS]->kview;

	return &db[index % AREA_RECS];
}

struct vhca_status_rec *fk_st(uint32_t index)
{
	struct vhca_status_rec *st = fk.area_st[index / AREA_RECS]->kview;

	return &st[index % AREA_RECS];
}

/*
 * A fresh record pair, zeroed as the kernel does at create; its pair of
 * areas made when it is the first record of that pair.  0 when there is
 * no room.
 */
uint32_t new_rec(void)
{
	uint32_t index = ++fk.next_rec, n = index / AREA_RECS;

	if (n >= ARRAY_SIZE(fk.area_db))
		return 0;
	if (!fk.area_db[n]) {
		fk.area_db[n] = region_new(0, AREA_SIZE, true);
		fk.area_st[n] = region_new(0, AREA_SIZE, false);
		if (!fk.area_db[n] || !fk.area_st[n])
			return 0;
	}
	memset(fk_db(index), 0, sizeof(struct vhca_db_rec));
	memset(fk_st(index), 0, sizeof(struct vhca_status_rec));
	return index;
}

void rec_offsets(uint32_t index, __u64 *db, __u64 *st)
{
	if (fk.zero_offsets)
		return;
	*db = fk.area_db[index / AREA_RECS]->offset;
	*st = fk.area_st[index / AREA_RECS]->offset;
}

/* Writes the core response and the driver's after it. */
int respond(void *resp, size_t resp_len, const void *core,
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
	memset(fk.area_db, 0, sizeof(fk.area_db));
	memset(fk.area_st, 0, sizeof(fk.area_st));
	fk.area_db[0] = db;
	fk.area_st[0] = st;
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
		if ((hdr->command & ~IB_USER_VERBS_CMD_FLAG_EXTENDED) ==
		    IB_USER_VERBS_EX_CMD_CREATE_CQ) {
			if (hdr->in_words * 8u <
			    sizeof(struct ib_uverbs_ex_create_cq))
				goto bad;
			return fake_ex_create_cq(ex + 1, resp, resp_len);
		}
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
		r.hca_core_clock = fk.clock_khz ? fk.clock_khz : FAKE_CLOCK_KHZ;
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

/* The attribute attr_id of an ioctl, or NULL. */
static struct ib_uverbs_attr *ioctl_attr(struct ib_uverbs_ioctl_hdr *hdr,
					 uint16_t attr_id)
{
	unsigned int i;

	for (i = 0; i < hdr->num_attrs; i++)
		if (hdr->attrs[i].attr_id == attr_id)
			return &hdr->attrs[i];
	return NULL;
}

/* An attribute the kernel reads in place: exactly len bytes of value. */
static bool ioctl_in(struct ib_uverbs_ioctl_hdr *hdr, uint16_t attr_id,
		     uint16_t len, uint64_t *value)
{
	struct ib_uverbs_attr *a = ioctl_attr(hdr, attr_id);

	if (!a || a->len != len)
		return false;
	*value = a->data;
	return true;
}

/* An object handle: no length, the handle in data. */
static struct ib_uverbs_attr *ioctl_obj(struct ib_uverbs_ioctl_hdr *hdr,
					uint16_t attr_id)
{
	struct ib_uverbs_attr *a = ioctl_attr(hdr, attr_id);

	return a && !a->len ? a : NULL;
}

/* An output of exactly len bytes, written with value. */
static bool ioctl_out(struct ib_uverbs_ioctl_hdr *hdr, uint16_t attr_id,
		      const void *value, uint16_t len)
{
	struct ib_uverbs_attr *a = ioctl_attr(hdr, attr_id);

	if (!a || a->len != len)
		return false;
	memcpy((void *)(uintptr_t)a->data, value, len);
	return true;
}

/* DM_ALLOC, DM_FREE and DM_MR_REG as the core and vhca.ko answer them. */
static int fake_dm_ioctl(struct ib_uverbs_ioctl_hdr *hdr)
{
	struct ib_uverbs_attr *handle, *mmap_attr;
	uint64_t length, align, v;

	switch (hdr->object_id << 16 | hdr->method_id) {
	case UVERBS_OBJECT_DM << 16 | UVERBS_METHOD_DM_ALLOC:
		handle = ioctl_obj(hdr, UVERBS_ATTR_ALLOC_DM_HANDLE);
		mmap_attr = ioctl_attr(hdr,
				       VHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET);
		if (hdr->num_attrs != 4 || !handle || !mmap_attr ||
		    !(mmap_attr->flags & UVERBS_ATTR_F_MANDATORY) ||
		    !ioctl_in(hdr, UVERBS_ATTR_ALLOC_DM_LENGTH, 8, &length) ||
		    !ioctl_in(hdr, UVERBS_ATTR_ALLOC_DM_ALIGNMENT, 4, &align) ||
		    fk.dm)
			return EPROTO;
		fk.dm = region_new(0, length, true);
		if (!fk.dm)
			return ENOMEM;
		v = fk.dm->offset;
		if (!ioctl_out(hdr, VHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET, &v,
			       sizeof(v)))
			return EPROTO;
		handle->data = FAKE_DM_HANDLE;
		fk.dm_align = align;
		fk.dm_allocs++;
		return 0;
	case UVERBS_OBJECT_DM << 16 | UVERBS_METHOD_DM_FREE:
		handle = ioctl_obj(hdr, UVERBS_ATTR_FREE_DM_HANDLE);
		if (hdr->num_attrs != 1 || !handle ||
		    handle->data != FAKE_DM_HANDLE || !fk.dm)
			return EPROTO;
		region_del(fk.dm);
		fk.dm = NULL;
		fk.dm_frees++;
		return 0;
	case UVERBS_OBJECT_MR << 16 | UVERBS_METHOD_DM_MR_REG: {
		uint32_t lkey = FAKE_DM_LKEY, rkey = FAKE_DM_RKEY;
		struct ib_uverbs_attr *pd, *dm;

		handle = ioctl_obj(hdr, UVERBS_ATTR_REG_DM_MR_HANDLE);
		pd = ioctl_obj(hdr, UVERBS_ATTR_REG_DM_MR_PD_HANDLE);
		dm = ioctl_obj(hdr, UVERBS_ATTR_REG_DM_MR_DM_HANDLE);
		if (hdr->num_attrs != 8 || !handle || !pd || !dm ||
		    !ioctl_in(hdr, UVERBS_ATTR_REG_DM_MR_OFFSET, 8,
			      &fk.dm_mr.offset) ||
		    !ioctl_in(hdr, UVERBS_ATTR_REG_DM_MR_LENGTH, 8,
			      &fk.dm_mr.length) ||
		    !ioctl_in(hdr, UVERBS_ATTR_REG_DM_MR_ACCESS_FLAGS, 4, &v) ||
		    !ioctl_out(hdr, UVERBS_ATTR_REG_DM_MR_RESP_LKEY, &lkey,
			       sizeof(lkey)) ||
		    !ioctl_out(hdr, UVERBS_ATTR_REG_DM_MR_RESP_RKEY, &rkey,
			       sizeof(rkey)))
			return EPROTO;
		fk.dm_mr.pd = pd->data;
		fk.dm_mr.dm = dm->data;
		fk.dm_mr.access = v;
		handle->data = FAKE_DM_MR_HANDLE;
		fk.dm_mr_regs++;
		return 0;
	}
	}
	return ENOTTY;
}

/*
 * No ioctl() framework: libibverbs falls back to write().  The device
 * memory methods, which have no write() form, are answered.
 */
int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;
	int err;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!is_uverbs_fd(fd))
		return NEXT(ioctl)(fd, request, arg);
	fk.ioctls++;
	err = request == RDMA_VERBS_IOCTL ? fake_dm_ioctl(arg) : ENOTTY;
	if (!err)
		return 0;
	if (err == EPROTO)
		fk.bad_cmds++;
	errno = err;
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
