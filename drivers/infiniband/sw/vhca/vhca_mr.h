/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Protection domains, memory regions and address handles of vhca.
 */
#ifndef VHCA_MR_H
#define VHCA_MR_H

#include <rdma/ib_verbs.h>

struct vhca_dev;

struct vhca_pd {
	struct ib_pd ibpd;
};

static inline struct vhca_pd *to_vpd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct vhca_pd, ibpd);
}

/*
 * A memory region: user memory pinned by ib_umem, or (DMA MR, umem NULL)
 * all of kernel memory.  Found by key in vdev->mr_xa; lkey and rkey are
 * (index << 8) | key byte, the byte changing on every registration.
 */
struct vhca_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	u64 iova;
	u64 length;
	int access;		/* IB_ACCESS_* */
	u32 index;
	refcount_t ref;		/* the xarray's, plus one per engine user */
	struct completion released;
};

static inline struct vhca_mr *to_vmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct vhca_mr, ibmr);
}

/* A UD address handle: resolved RoCEv2 destination. Found by index. */
struct vhca_ah {
	struct ib_ah ibah;
	struct rdma_ah_attr attr;
	u32 index;
};

static inline struct vhca_ah *to_vah(struct ib_ah *ibah)
{
	return container_of(ibah, struct vhca_ah, ibah);
}

int vhca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int vhca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

struct ib_mr *vhca_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *vhca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata);
int vhca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);

/*
 * For the engine: the MR with this lkey/rkey, referenced (NULL if none),
 * and whether [iova, iova + len) lies inside it with all of access granted
 * within pd.
 */
struct vhca_mr *vhca_mr_get(struct vhca_dev *vdev, u32 key);
void vhca_mr_put(struct vhca_mr *mr);
int vhca_mr_check(const struct vhca_mr *mr, const struct ib_pd *pd, u64 iova,
		  u64 len, int access);

int vhca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata);
int vhca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *ah_attr);
int vhca_destroy_ah(struct ib_ah *ibah, u32 flags);

#endif /* VHCA_MR_H */
