// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Protection domains and memory regions of vhca. (STUB: to be implemented)
 */
#include "vhca.h"

int vhca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

int vhca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

struct ib_mr *vhca_get_dma_mr(struct ib_pd *ibpd, int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

struct ib_mr *vhca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length, u64 iova, int access, struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

int vhca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

struct vhca_mr *vhca_mr_get(struct vhca_dev *vdev, u32 key)
{
	return NULL;
}

void vhca_mr_put(struct vhca_mr *mr)
{
}

int vhca_mr_check(const struct vhca_mr *mr, const struct ib_pd *pd, u64 iova, u64 len, int access)
{
	return -EOPNOTSUPP;
}
