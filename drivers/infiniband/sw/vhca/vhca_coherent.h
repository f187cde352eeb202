/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * DMA-coherent buffers of a vhca device, in the usb_alloc_coherent() style:
 * small kernel-only buffers come from dma_pool buckets, everything else
 * (and all memory that will be mapped into a process) from page-rounded
 * dma_alloc_coherent().  Every buffer is recorded, so a free must hand back
 * exactly the size, address and handle that the allocation returned; any
 * other free is refused, logged and counted.
 */
#ifndef VHCA_COHERENT_H
#define VHCA_COHERENT_H

#include <linux/hashtable.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct device;
struct dma_pool;

#define VHCA_POOL_MIN_SHIFT	6	/* smallest bucket: 64 bytes */
#define VHCA_POOL_BUCKETS	6	/* 64, 128, 256, 512, 1024, 2048 */
#define VHCA_POOL_MAX		(1UL << (VHCA_POOL_MIN_SHIFT + VHCA_POOL_BUCKETS - 1))

struct vhca_coherent_stats {
	unsigned long outstanding;	/* live buffers */
	size_t outstanding_bytes;	/* their requested sizes, summed */
	unsigned long pool_allocs;	/* buffers ever taken from a pool */
	unsigned long coherent_allocs;	/* ... from dma_alloc_coherent() */
	unsigned long bad_frees;	/* refused frees */
	unsigned long user_bufs;	/* live user buffers (mappable) */
	size_t user_bytes;		/* their page-rounded sizes, summed */
	/* User allocations refused: past the device's quota, or a context's. */
	unsigned long dev_quota_refusals;
	unsigned long ctx_quota_refusals;
};

/*
 * A bound on user buffers (vhca_alloc_coherent_user()): how many may be
 * live and how many bytes (page-rounded) they may take.  Changed under
 * the lock of the vhca_coherent the buffers come from; a quota must
 * outlive the buffers charged to it.
 */
struct vhca_coherent_quota {
	unsigned long bufs, max_bufs;
	size_t bytes, max_bytes;
};

struct vhca_coherent {
	struct device *dev;
	struct dma_pool *pool[VHCA_POOL_BUCKETS];
	spinlock_t lock;		/* protects live and stats */
	DECLARE_HASHTABLE(live, 7);
	struct vhca_coherent_stats stats;
	struct vhca_coherent_quota user;	/* all user buffers */
};

int vhca_coherent_init(struct vhca_coherent *vc, struct device *dev);
void vhca_coherent_quota_init(struct vhca_coherent_quota *quota,
			      unsigned long max_bufs, size_t max_bytes);
unsigned long vhca_coherent_fini(struct vhca_coherent *vc);

void *vhca_alloc_coherent(struct vhca_coherent *vc, size_t size, gfp_t gfp,
			  dma_addr_t *dma);
void *vhca_alloc_coherent_user(struct vhca_coherent *vc, size_t size,
			       gfp_t gfp, dma_addr_t *dma,
			       struct vhca_coherent_quota *quota);
void vhca_free_coherent(struct vhca_coherent *vc, size_t size, void *cpu_addr,
			dma_addr_t dma);
void vhca_coherent_get_stats(struct vhca_coherent *vc,
			     struct vhca_coherent_stats *stats);

#endif /* VHCA_COHERENT_H */
