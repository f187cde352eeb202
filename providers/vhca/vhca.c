// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca: rdma-core provider for the vhca virtual RDMA HCA.
 *
 * Device discovery, user contexts and the commands that go through the
 * kernel.  Verbs not implemented here are answered by libibverbs with
 * EOPNOTSUPP.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/vhca-abi.h>

#include "vhca.h"

struct vhca_get_context_resp {
	struct ib_uverbs_get_context_resp ibv_resp;
	struct vhca_alloc_ucontext_resp drv;
};

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

static void vhca_free_context(struct ibv_context *ibctx)
{
	struct vhca_context *ctx = to_vctx(ibctx);

	munmap((void *)ctx->status, ctx->status_size);
	munmap(ctx->db, ctx->db_size);
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static const struct verbs_context_ops vhca_ctx_ops = {
	.free_context = vhca_free_context,
	.query_device_ex = vhca_query_device_ex,
	.query_port = vhca_query_port,
};

/* A page mapping must be non-empty and start and end on page boundaries. */
static bool vhca_page_range_ok(uint64_t offset, uint32_t size)
{
	uint64_t page_mask = (uint64_t)sysconf(_SC_PAGESIZE) - 1;

	return size && !(size & page_mask) && !(offset & page_mask);
}

/* Maps the pages @resp describes; undoes itself on failure. */
static int vhca_map_pages(struct vhca_context *ctx,
			  const struct vhca_alloc_ucontext_resp *resp)
{
	int fd = ctx->ibv_ctx.context.cmd_fd;
	void *p;

	if (!vhca_page_range_ok(resp->db_mmap_offset, resp->db_size) ||
	    !vhca_page_range_ok(resp->status_mmap_offset, resp->status_size))
		return EPROTO;

	p = mmap(NULL, resp->db_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 resp->db_mmap_offset);
	if (p == MAP_FAILED)
		return errno;
	ctx->db = p;
	ctx->db_size = resp->db_size;

	p = mmap(NULL, resp->status_size, PROT_READ, MAP_SHARED, fd,
		 resp->status_mmap_offset);
	if (p == MAP_FAILED) {
		int err = errno;

		munmap(ctx->db, ctx->db_size);
		return err;
	}
	ctx->status = p;
	ctx->status_size = resp->status_size;
	return 0;
}

/*
 * A user context: GET_CONTEXT, then the context's two pages.  Owns cmd_fd;
 * on failure returns NULL with errno set and leaves nothing behind.
 */
static struct verbs_context *
vhca_alloc_context(struct ibv_device *ibdev, int cmd_fd,
		   void *private_data __attribute__((unused)))
{
	struct vhca_get_context_resp resp = {};
	struct ibv_get_context cmd = {};
	struct vhca_context *ctx;
	int err;

	ctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*ctx),
		(struct verbs_context *)offsetof(struct vhca_context, ibv_ctx),
		RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	err = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (err)
		goto err_ctx;

	err = vhca_map_pages(ctx, &resp.drv);
	if (err)
		goto err_ctx;

	verbs_set_ops(&ctx->ibv_ctx, &vhca_ctx_ops);
	return &ctx->ibv_ctx;

err_ctx:
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	errno = err;
	return NULL;
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
};

static void __attribute__((constructor)) vhca_register_driver(void)
{
	verbs_register_driver_34(&vhca_dev_ops);
}
