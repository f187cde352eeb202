// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca: rdma-core provider for the vhca virtual RDMA HCA.
 *
 * Device discovery, user contexts (opened, or imported on an existing
 * command fd), the ops table and the ioctl helper.  The verbs that go
 * through the kernel are in vhca_verbs.c, the fast path in vhca_post.c,
 * vhca_qpex.c (the ibv_qp_ex API) and vhca_cqex.c (the ibv_cq_ex API);
 * verbs in none of them are answered by libibverbs with EOPNOTSUPP.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>

#include <rdma/vhca-abi.h>

#include "vhca.h"

struct vhca_get_context_resp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct vhca_alloc_ucontext_resp drv;
};

int vhca_ioctl(struct ibv_context *ibctx, uint16_t object, uint16_t method,
	       struct ib_uverbs_attr *attrs, uint16_t n)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attrs[VHCA_IOCTL_ATTRS];
	} cmd = {
		.hdr = {
			.length = sizeof(cmd.hdr) + n * sizeof(*attrs),
			.object_id = object,
			.method_id = method,
			.num_attrs = n,
		},
	};

	if (n > VHCA_IOCTL_ATTRS)
		return EINVAL;
	memcpy(cmd.attrs, attrs, n * sizeof(*attrs));
	if (ioctl(ibctx->cmd_fd, RDMA_VERBS_IOCTL, &cmd.hdr))
		return errno;
	memcpy(attrs, cmd.attrs, n * sizeof(*attrs));
	return 0;
}

static int vhca_query_device_ex(struct ibv_context *ibctx,
				const struct ibv_query_device_ex_input *input,
				struct ibv_device_attr_ex *attr,
				size_t attr_size)
{
	return ibv_cmd_query_device_any(ibctx, input, attr, attr_size,
					NULL, NULL);
}

static int vhca_query_port(struct ibv_context *ibctx, uint8_t port,
			   struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

static void vhca_unmap_areas(struct vhca_context *ctx)
{
	struct vhca_area *area;

	for (area = ctx->areas; area < ctx->areas + VHCA_UCTX_MAX_AREAS;
	     area++) {
		if (!area->db)
			continue;
		munmap((void *)area->status, ctx->status_size);
		munmap(area->db, ctx->db_size);
	}
}

static void vhca_free_context(struct ibv_context *ibctx)
{
	struct vhca_context *ctx = to_vctx(ibctx);

	vhca_unmap_areas(ctx);
	pthread_mutex_destroy(&ctx->areas_lock);
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static const struct verbs_context_ops vhca_ctx_ops = {
	/* ODP prefetch: the kernel's, for the MRs it registered. */
	.advise_mr = ibv_cmd_advise_mr,
	.alloc_dm = vhca_alloc_dm,
	.alloc_mw = vhca_alloc_mw,
	.alloc_parent_domain = vhca_alloc_parent_domain,
	.alloc_pd = vhca_alloc_pd,
	.attach_mcast = ibv_cmd_attach_mcast,
	.bind_mw = vhca_bind_mw,
	.close_xrcd = vhca_close_xrcd,
	.create_ah = vhca_create_ah,
	.create_cq = vhca_create_cq,
	.create_cq_ex = vhca_create_cq_ex,
	.create_qp = vhca_create_qp,
	.create_qp_ex = vhca_create_qp_ex,
	.create_srq = vhca_create_srq,
	.create_srq_ex = vhca_create_srq_ex,
	.dealloc_mw = vhca_dealloc_mw,
	.dealloc_pd = vhca_dealloc_pd,
	.dereg_mr = vhca_dereg_mr,
	.destroy_ah = vhca_destroy_ah,
	.destroy_cq = vhca_destroy_cq,
	.destroy_qp = vhca_destroy_qp,
	.destroy_srq = vhca_destroy_srq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = vhca_free_context,
	.free_dm = vhca_free_dm,
	.get_srq_num = vhca_get_srq_num,
	.import_dm = vhca_import_dm,
	.import_mr = vhca_import_mr,
	.import_pd = vhca_import_pd,
	.modify_qp = vhca_modify_qp,
	.modify_srq = vhca_modify_srq,
	.open_qp = vhca_open_qp,
	.open_xrcd = vhca_open_xrcd,
	.poll_cq = vhca_poll_cq,
	.post_recv = vhca_post_recv,
	.post_send = vhca_post_send,
	.post_srq_recv = vhca_post_srq_recv,
	.query_device_ex = vhca_query_device_ex,
	.query_port = vhca_query_port,
	.query_qp = vhca_query_qp,
	.query_rt_values = vhca_query_rt_values,
	.query_srq = vhca_query_srq,
	.reg_dm_mr = vhca_reg_dm_mr,
	.reg_mr = vhca_reg_mr,
	.req_notify_cq = vhca_req_notify_cq,
	.rereg_mr = vhca_rereg_mr,
	.resize_cq = vhca_resize_cq,
	.unimport_dm = vhca_unimport_dm,
	.unimport_mr = vhca_unimport_mr,
	.unimport_pd = vhca_unimport_pd,
};

/* An area's offset: page-aligned, as mmap requires. */
static bool vhca_area_offset_ok(uint64_t offset)
{
	return !(offset & ((uint64_t)sysconf(_SC_PAGESIZE) - 1));
}

int vhca_map_area(struct vhca_context *ctx, struct vhca_area *area,
		  uint64_t db_offset, uint64_t status_offset)
{
	int fd = ctx->ibv_ctx.context.cmd_fd;
	void *db, *status;
	int err;

	if (!vhca_area_offset_ok(db_offset) ||
	    !vhca_area_offset_ok(status_offset))
		return EPROTO;
	db = mmap(NULL, ctx->db_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		  db_offset);
	if (db == MAP_FAILED)
		return errno;
	status = mmap(NULL, ctx->status_size, PROT_READ, MAP_SHARED, fd,
		      status_offset);
	if (status == MAP_FAILED) {
		err = errno;
		munmap(db, ctx->db_size);
		return err;
	}
	area->db = db;
	area->status = status;
	area->db_offset = db_offset;
	area->status_offset = status_offset;
	return 0;
}

/*
 * The sizes of the areas @resp describes: whole records, as many in both,
 * and at least one beyond the context's own record 0; then the first pair
 * mapped.
 */
static int vhca_map_areas(struct vhca_context *ctx,
			  const struct vhca_alloc_ucontext_resp *resp)
{
	size_t db_recs = resp->db_size / sizeof(struct vhca_db_rec);
	size_t st_recs = resp->status_size / sizeof(struct vhca_status_rec);

	if (resp->db_size % sizeof(struct vhca_db_rec) ||
	    resp->status_size % sizeof(struct vhca_status_rec) ||
	    db_recs != st_recs || db_recs < 2)
		return EPROTO;
	ctx->db_size = resp->db_size;
	ctx->status_size = resp->status_size;
	ctx->area_recs = db_recs;
	return vhca_map_area(ctx, &ctx->areas[0], resp->db_mmap_offset,
			     resp->status_mmap_offset);
}

static struct vhca_context *vhca_context_new(struct ibv_device *ibdev,
					     int cmd_fd)
{
	return _verbs_init_and_alloc_context(ibdev, cmd_fd,
		sizeof(struct vhca_context),
		(struct verbs_context *)offsetof(struct vhca_context, ibv_ctx),
		RDMA_DRIVER_UNKNOWN);
}

/*
 * The end of a context's setup, with what the kernel said (err 0) about
 * its areas, @resp: on success the mapped context, else NULL with errno
 * set and nothing left behind (the command fd closed).
 */
static struct verbs_context *
vhca_context_done(struct vhca_context *ctx, int err,
		  const struct vhca_alloc_ucontext_resp *resp)
{
	if (!err)
		err = vhca_map_areas(ctx, resp);
	if (err) {
		verbs_uninit_context(&ctx->ibv_ctx);
		free(ctx);
		errno = err;
		return NULL;
	}
	pthread_mutex_init(&ctx->areas_lock, NULL);
	verbs_set_ops(&ctx->ibv_ctx, &vhca_ctx_ops);
	return &ctx->ibv_ctx;
}

/*
 * A user context: GET_CONTEXT, then the context's first pair of areas.
 * Owns cmd_fd; on failure returns NULL with errno set and leaves nothing
 * behind.
 */
static struct verbs_context *
vhca_alloc_context(struct ibv_device *ibdev, int cmd_fd,
		   void *private_data __attribute__((unused)))
{
	struct vhca_get_context_resp resp = {};
	struct ibv_get_context cmd = {};
	struct vhca_context *ctx;

	ctx = vhca_context_new(ibdev, cmd_fd);
	if (!ctx)
		return NULL;
	return vhca_context_done(ctx,
				 vhca_cmd_get_context(&ctx->ibv_ctx, &cmd,
						      sizeof(cmd),
						      &resp.ibv_resp,
						      sizeof(resp)),
				 &resp.drv);
}

/*
 * ibv_import_device: a context on a command fd whose user context exists
 * (another process's, or this one's through a duplicate fd).
 * QUERY_CONTEXT answers what GET_CONTEXT did; this context maps the same
 * first pair of areas, and the others as its own objects' create
 * responses place them.  Owns cmd_fd as vhca_alloc_context() does.
 */
static struct verbs_context *vhca_import_context(struct ibv_device *ibdev,
						 int cmd_fd)
{
	struct vhca_alloc_ucontext_resp resp = {};
	uint64_t core_support = 0;
	uint32_t num_comp = 0;
	struct ib_uverbs_attr attrs[] = {
		vhca_attr_out(UVERBS_ATTR_QUERY_CONTEXT_NUM_COMP_VECTORS,
			      &num_comp, sizeof(num_comp)),
		vhca_attr_out(UVERBS_ATTR_QUERY_CONTEXT_CORE_SUPPORT,
			      &core_support, sizeof(core_support)),
		vhca_attr_out(VHCA_IB_ATTR_QUERY_CONTEXT_RESP_UCTX, &resp,
			      sizeof(resp)),
	};
	struct vhca_context *ctx;
	int err;

	ctx = vhca_context_new(ibdev, cmd_fd);
	if (!ctx)
		return NULL;
	err = vhca_ioctl(&ctx->ibv_ctx.context, UVERBS_OBJECT_DEVICE,
			 UVERBS_METHOD_QUERY_CONTEXT, attrs,
			 sizeof(attrs) / sizeof(attrs[0]));
	if (!err) {
		ctx->ibv_ctx.context.num_comp_vectors = num_comp;
		to_vdev(ibdev)->ibv_dev.core_support = core_support;
	}
	return vhca_context_done(ctx, err, &resp);
}

static struct verbs_device *
vhca_alloc_device(struct verbs_sysfs_dev *sysfs __attribute__((unused)))
{
	struct vhca_device *dev = calloc(1, sizeof(*dev));

	return dev ? &dev->ibv_dev : NULL;
}

static void vhca_uninit_device(struct verbs_device *vdev)
{
	free(to_vdev(&vdev->device));
}

/*
 * The kernel driver gives every ib_device a parent platform device named
 * "vhca"; match on its modalias, never on the (renameable) device name.
 */
static const struct verbs_match_ent vhca_match_table[] = {
	{ .u.modalias = "platform:vhca", .kind = VERBS_MATCH_MODALIAS },
	{}
};

static const struct verbs_device_ops vhca_dev_ops = {
	.name = "vhca",
	.match_min_abi_version = VHCA_UVERBS_ABI_VERSION,
	.match_max_abi_version = VHCA_UVERBS_ABI_VERSION,
	.match_table = vhca_match_table,
	.alloc_device = vhca_alloc_device,
	.uninit_device = vhca_uninit_device,
	.alloc_context = vhca_alloc_context,
	.import_context = vhca_import_context,
};

PROVIDER_DRIVER(vhca, vhca_dev_ops);
