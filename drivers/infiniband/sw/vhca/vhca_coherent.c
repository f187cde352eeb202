// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DMA-coherent buffer helpers of vhca; see vhca_coherent.h for the contract.
 */
#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/dmapool.h>
#include <linux/log2.h>
#include <linux/mmzone.h>
#include <linux/slab.h>

#include "vhca_coherent.h"
#include "vhca_compat.h"

/* Largest buffer: what the page allocator can give in one contiguous piece. */
#define VHCA_COHERENT_MAX	(PAGE_SIZE << MAX_PAGE_ORDER)

/* One live buffer; bucket < 0 means it came from dma_alloc_coherent(). */
struct vhca_coherent_buf {
	struct hlist_node node;
	void *cpu_addr;
	dma_addr_t dma;
	size_t size;
	int bucket;
	bool user;			/* charged to vc->user */
	struct vhca_coherent_quota *quota;	/* and to this one, if any */
};

void vhca_coherent_quota_init(struct vhca_coherent_quota *quota,
			      unsigned long max_bufs, size_t max_bytes)
{
	quota->bufs = 0;
	quota->bytes = 0;
	quota->max_bufs = max_bufs;
	quota->max_bytes = max_bytes;
}

static bool vhca_quota_fits(const struct vhca_coherent_quota *quota,
			    size_t bytes)
{
	return !quota || (quota->bufs < quota->max_bufs &&
			  bytes <= quota->max_bytes - quota->bytes);
}

static void vhca_quota_charge(struct vhca_coherent_quota *quota,
			      size_t bytes)
{
	if (quota) {
		quota->bufs++;
		quota->bytes += bytes;
	}
}

static void vhca_quota_uncharge(struct vhca_coherent_quota *quota,
				size_t bytes)
{
	if (quota) {
		quota->bufs--;
		quota->bytes -= bytes;
	}
}

/*
 * Charge a user buffer of bytes (page-rounded) to the device's quota and
 * to quota, both or neither; a refusal is counted against the device's
 * quota if it does not fit, else against quota.  Under vc->lock.
 */
static bool vhca_user_charge(struct vhca_coherent *vc,
			     struct vhca_coherent_quota *quota, size_t bytes)
{
	if (!vhca_quota_fits(&vc->user, bytes)) {
		vc->stats.dev_quota_refusals++;
		return false;
	}
	if (!vhca_quota_fits(quota, bytes)) {
		vc->stats.ctx_quota_refusals++;
		return false;
	}
	vhca_quota_charge(&vc->user, bytes);
	vhca_quota_charge(quota, bytes);
	return true;
}

static void vhca_user_uncharge(struct vhca_coherent *vc,
			       struct vhca_coherent_buf *buf)
{
	if (buf->user) {
		vhca_quota_uncharge(&vc->user, PAGE_ALIGN(buf->size));
		vhca_quota_uncharge(buf->quota, PAGE_ALIGN(buf->size));
	}
}

static int vhca_bucket(size_t size)
{
	if (size > VHCA_POOL_MAX)
		return -1;
	if (size <= (1UL << VHCA_POOL_MIN_SHIFT))
		return 0;
	return order_base_2(size) - VHCA_POOL_MIN_SHIFT;
}

int vhca_coherent_init(struct vhca_coherent *vc, struct device *dev)
{
	char name[32];
	int i;

	vc->dev = dev;
	spin_lock_init(&vc->lock);
	hash_init(vc->live);
	memset(&vc->stats, 0, sizeof(vc->stats));
	vhca_coherent_quota_init(&vc->user, ULONG_MAX, SIZE_MAX);

	for (i = 0; i < VHCA_POOL_BUCKETS; i++) {
		size_t bsize = 1UL << (VHCA_POOL_MIN_SHIFT + i);

		snprintf(name, sizeof(name), "vhca-%zu", bsize);
		vc->pool[i] = dma_pool_create(name, dev, bsize, bsize, 0);
		if (!vc->pool[i])
			goto err_pool;
	}
	return 0;

err_pool:
	while (--i >= 0) {
		dma_pool_destroy(vc->pool[i]);
		vc->pool[i] = NULL;
	}
	return -ENOMEM;
}

static void vhca_release_buf(struct vhca_coherent *vc,
			     struct vhca_coherent_buf *buf)
{
	if (buf->bucket >= 0)
		dma_pool_free(vc->pool[buf->bucket], buf->cpu_addr, buf->dma);
	else
		dma_free_coherent(vc->dev, PAGE_ALIGN(buf->size), buf->cpu_addr,
				  buf->dma);
	kfree(buf);
}

/*
 * Tear down the helpers.  Buffers still live are a leak of the caller: each
 * is reported, then reclaimed so that the pools can go.  Returns how many
 * there were.
 */
unsigned long vhca_coherent_fini(struct vhca_coherent *vc)
{
	struct vhca_coherent_buf *buf;
	struct hlist_node *tmp;
	unsigned long leaked;
	size_t bytes;
	int bkt, i;

	spin_lock_irq(&vc->lock);
	leaked = vc->stats.outstanding;
	bytes = vc->stats.outstanding_bytes;
	spin_unlock_irq(&vc->lock);

	if (leaked)
		dev_err(vc->dev,
			"%lu coherent allocations (%zu bytes) outstanding at removal\n",
			leaked, bytes);

	hash_for_each_safe(vc->live, bkt, tmp, buf, node) {
		dev_err_ratelimited(vc->dev,
				    "outstanding coherent buffer: %zu bytes at dma %pad\n",
				    buf->size, &buf->dma);
		hash_del(&buf->node);
		vhca_release_buf(vc, buf);
	}
	vc->stats.outstanding = 0;
	vc->stats.outstanding_bytes = 0;
	/* The quotas of the leaked buffers' contexts may be gone: not these. */
	vc->user.bufs = 0;
	vc->user.bytes = 0;

	for (i = 0; i < VHCA_POOL_BUCKETS; i++) {
		dma_pool_destroy(vc->pool[i]);
		vc->pool[i] = NULL;
	}
	return leaked;
}

/*
 * user: a buffer for a process, charged to vc->user and to quota (if any)
 * before it is allocated, so that concurrent allocations cannot overrun
 * the quotas together.
 */
static void *vhca_alloc(struct vhca_coherent *vc, size_t size, gfp_t gfp,
			dma_addr_t *dma, bool user,
			struct vhca_coherent_quota *quota)
{
	struct vhca_coherent_buf *buf;
	unsigned long flags;
	bool charged;
	void *addr;

	if (!size || size > VHCA_COHERENT_MAX)
		return NULL;

	buf = kzalloc(sizeof(*buf), gfp);
	if (!buf)
		return NULL;

	buf->size = size;
	buf->user = user;
	buf->quota = quota;
	if (user) {
		spin_lock_irqsave(&vc->lock, flags);
		charged = vhca_user_charge(vc, quota, PAGE_ALIGN(size));
		spin_unlock_irqrestore(&vc->lock, flags);
		if (!charged) {
			kfree(buf);
			return NULL;
		}
	}
	buf->bucket = user ? -1 : vhca_bucket(size);
	if (buf->bucket >= 0)
		addr = dma_pool_zalloc(vc->pool[buf->bucket], gfp, &buf->dma);
	else
		addr = dma_alloc_coherent(vc->dev, PAGE_ALIGN(size), &buf->dma,
					  gfp);
	if (!addr) {
		spin_lock_irqsave(&vc->lock, flags);
		vhca_user_uncharge(vc, buf);
		spin_unlock_irqrestore(&vc->lock, flags);
		kfree(buf);
		return NULL;
	}
	buf->cpu_addr = addr;

	spin_lock_irqsave(&vc->lock, flags);
	hash_add(vc->live, &buf->node, (unsigned long)addr);
	vc->stats.outstanding++;
	vc->stats.outstanding_bytes += size;
	if (buf->bucket >= 0)
		vc->stats.pool_allocs++;
	else
		vc->stats.coherent_allocs++;
	spin_unlock_irqrestore(&vc->lock, flags);

	*dma = buf->dma;
	return addr;
}

/*
 * Allocate a zeroed buffer for the kernel's own use: from a dma_pool bucket
 * (naturally aligned to the bucket size) when it fits one, else page-rounded
 * and page-aligned.  Returns NULL for size 0, sizes past the page
 * allocator's limit and allocation failures.
 */
void *vhca_alloc_coherent(struct vhca_coherent *vc, size_t size, gfp_t gfp,
			  dma_addr_t *dma)
{
	return vhca_alloc(vc, size, gfp, dma, false, NULL);
}

/*
 * Allocate a zeroed, page-rounded, page-aligned buffer that may be mapped
 * into a process: never from a pool, whose blocks share pages.  It counts
 * against the device's user quota and against quota (NULL: none) until it
 * is freed; NULL when either would be exceeded.  With __GFP_ACCOUNT in
 * gfp, the pages are charged to the caller's memory cgroup where
 * dma_alloc_coherent() takes them from the page allocator (dma-direct
 * without a CMA area, as on x86_64 distribution kernels); pages from CMA,
 * swiotlb or the atomic pools are not charged.
 */
void *vhca_alloc_coherent_user(struct vhca_coherent *vc, size_t size,
			       gfp_t gfp, dma_addr_t *dma,
			       struct vhca_coherent_quota *quota)
{
	return vhca_alloc(vc, size, gfp, dma, true, quota);
}

/*
 * Free what vhca_alloc_coherent{,_user}() returned: the same size, address
 * and handle.  NULL is a no-op.  Anything else is refused, logged and
 * counted, and the buffer (if any) stays allocated.  Buffers from
 * dma_alloc_coherent() must be freed with interrupts enabled.
 */
void vhca_free_coherent(struct vhca_coherent *vc, size_t size, void *cpu_addr,
			dma_addr_t dma)
{
	struct vhca_coherent_buf *buf, *found = NULL;
	dma_addr_t live_dma = 0;
	unsigned long flags;
	size_t live_size = 0;

	if (!cpu_addr)
		return;

	spin_lock_irqsave(&vc->lock, flags);
	hash_for_each_possible(vc->live, buf, node, (unsigned long)cpu_addr) {
		if (buf->cpu_addr == cpu_addr) {
			found = buf;
			live_size = buf->size;
			live_dma = buf->dma;
			break;
		}
	}
	if (!found || live_size != size || live_dma != dma) {
		vc->stats.bad_frees++;
		spin_unlock_irqrestore(&vc->lock, flags);
		if (found)
			dev_err_ratelimited(vc->dev,
					    "refused free of coherent buffer %p: %zu bytes at dma %pad given, allocated %zu bytes at dma %pad\n",
					    cpu_addr, size, &dma, live_size,
					    &live_dma);
		else
			dev_err_ratelimited(vc->dev,
					    "refused free of %p (%zu bytes): not a live coherent buffer\n",
					    cpu_addr, size);
		return;
	}
	hash_del(&found->node);
	vc->stats.outstanding--;
	vc->stats.outstanding_bytes -= size;
	vhca_user_uncharge(vc, found);
	spin_unlock_irqrestore(&vc->lock, flags);

	vhca_release_buf(vc, found);
}

void vhca_coherent_get_stats(struct vhca_coherent *vc,
			     struct vhca_coherent_stats *stats)
{
	unsigned long flags;

	spin_lock_irqsave(&vc->lock, flags);
	*stats = vc->stats;
	stats->user_bufs = vc->user.bufs;
	stats->user_bytes = vc->user.bytes;
	spin_unlock_irqrestore(&vc->lock, flags);
}
