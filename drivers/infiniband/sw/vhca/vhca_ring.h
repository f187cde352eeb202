/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rings (SQ, RQ, SRQ, CQ) and doorbell/status records of vhca objects.
 * A ring is a power-of-two array of fixed-size slots in DMA-coherent
 * memory; user objects' rings are mapped into the owning process, kernel
 * objects' are not.  Indices are free-running u32 counters (head: producer,
 * tail: consumer); a slot is index & (count - 1).
 */
#ifndef VHCA_RING_H
#define VHCA_RING_H

#include <linux/atomic.h>
#include <linux/types.h>
#include <rdma/vhca-abi.h>

struct ib_udata;
struct vhca_dev;
struct vhca_mmap;
struct vhca_ucontext;

struct vhca_ring {
	void *buf;
	dma_addr_t dma;
	size_t size;		/* bytes allocated: count * stride */
	u32 count;		/* slots, a power of two (0: no ring) */
	u32 stride;		/* bytes per slot, a power of two */
	struct vhca_mmap *mmap;	/* user rings: owns buf; NULL for kernel */
};

/*
 * The doorbell and status record of one object: slots of its user
 * context's areas, or (kernel objects) a pair of its own.
 */
struct vhca_recs {
	struct vhca_db_rec *db;
	struct vhca_status_rec *st;
	u32 index;		/* user: db_index; kernel: 0 */
	dma_addr_t dma;		/* kernel: the pair's buffer */
	struct vhca_uctx_area *area;	/* user: the areas holding it */
};

/* A user context's pair of areas of records (struct vhca_ucontext). */
struct vhca_uctx_area {
	struct vhca_mmap *db;		/* doorbell records, user read-write */
	struct vhca_mmap *status;	/* status records, user read-only */
};

int vhca_ring_alloc(struct vhca_dev *vdev, struct vhca_ucontext *uctx,
		    struct vhca_ring *ring, u32 count, u32 stride,
		    bool writable);
void vhca_ring_free(struct vhca_dev *vdev, struct vhca_ring *ring);
void vhca_rings_release(struct vhca_dev *vdev, atomic_t *count,
			struct vhca_ring *ring, struct vhca_ring *ring2);

int vhca_recs_alloc(struct vhca_dev *vdev, struct vhca_ucontext *uctx,
		    struct vhca_recs *recs, u32 reach);
u32 vhca_recs_reach(struct ib_udata *udata, size_t resp_end);
/* The records a user verb whose create response is a resp_type may get. */
#define VHCA_RECS_REACH(udata, resp_type) \
	vhca_recs_reach(udata, offsetofend(resp_type, status_area_offset))
void vhca_recs_offsets(const struct vhca_recs *recs, u64 *db_offset,
		       u64 *status_offset);
void vhca_recs_free(struct vhca_dev *vdev, struct vhca_ucontext *uctx,
		    struct vhca_recs *recs);

/*
 * A queue of one ring and its records (a CQ or an SRQ): both, or neither
 * and the error of the one that failed.
 */
static inline int vhca_queue_alloc(struct vhca_dev *vdev,
				   struct vhca_ucontext *uctx,
				   struct vhca_ring *ring,
				   struct vhca_recs *recs, u32 reach,
				   u32 count, u32 stride, bool writable)
{
	int err;

	err = vhca_ring_alloc(vdev, uctx, ring, count, stride, writable);
	if (err)
		return err;
	err = vhca_recs_alloc(vdev, uctx, recs, reach);
	if (err)
		vhca_ring_free(vdev, ring);
	return err;
}

static inline void vhca_queue_free(struct vhca_dev *vdev,
				   struct vhca_ucontext *uctx,
				   struct vhca_ring *ring,
				   struct vhca_recs *recs)
{
	vhca_recs_free(vdev, uctx, recs);
	vhca_ring_free(vdev, ring);
}

static inline void *vhca_ring_slot(const struct vhca_ring *ring, u32 index)
{
	return ring->buf + (size_t)(index & (ring->count - 1)) * ring->stride;
}

/* Entries between tail and head, or U32_MAX when head is not within count. */
static inline u32 vhca_ring_used(const struct vhca_ring *ring, u32 head,
				 u32 tail)
{
	u32 used = head - tail;

	return used <= ring->count ? used : U32_MAX;
}

#endif /* VHCA_RING_H */
