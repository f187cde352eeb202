/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* vhca provider: per-device and per-context state. */
#ifndef VHCA_H
#define VHCA_H

#include <stddef.h>

#include "vhca_pabi.h"

struct vhca_device {
	struct verbs_device ibv_dev;
};

/*
 * A user context and the two pages the kernel gave it (see
 * struct vhca_alloc_ucontext_resp): the doorbell page the provider writes
 * and the status page only the device writes.
 */
struct vhca_context {
	struct verbs_context ibv_ctx;
	void *db;
	size_t db_size;
	const void *status;
	size_t status_size;
};

#define vhca_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

static inline struct vhca_device *to_vdev(struct ibv_device *ibdev)
{
	return vhca_container_of(ibdev, struct vhca_device, ibv_dev.device);
}

static inline struct vhca_context *to_vctx(struct ibv_context *ibctx)
{
	return vhca_container_of(ibctx, struct vhca_context, ibv_ctx.context);
}

#endif /* VHCA_H */
