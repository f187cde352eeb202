// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rings and doorbell/status records of vhca objects; see vhca_ring.h.
 */
#include <linux/log2.h>

#include "vhca.h"

/*
 * Allocate a ring of count slots of stride bytes (both powers of two).
 * For a user object (uctx set) the ring is offered to that context through
 * mmap, writable or read-only; its memory goes once the object has freed
 * the ring and the last mapping is gone.
 */
int vhca_ring_alloc(struct vhca_dev *vdev, struct vhca_ucontext *uctx,
		    struct vhca_ring *ring, u32 count, u32 stride,
		    bool writable)
{
	struct vhca_mmap *m;

	if (!is_power_of_2(count) || !is_power_of_2(stride))
		return -EINVAL;

	ring->count = count;
	ring->stride = stride;
	ring->size = (size_t)count * stride;
	if (uctx) {
		m = vhca_mmap_create(uctx, ring->size, writable);
		if (IS_ERR(m))
			return PTR_ERR(m);
		ring->mmap = m;
		ring->buf = m->cpu_addr;
		ring->dma = m->dma;
		return 0;
	}
	ring->mmap = NULL;
	ring->buf = vhca_alloc_coherent(&vdev->coh, ring->size, GFP_KERNEL,
					&ring->dma);
	return ring->buf ? 0 : -ENOMEM;
}

void vhca_ring_free(struct vhca_dev *vdev, struct vhca_ring *ring)
{
	if (ring->mmap)
		rdma_user_mmap_entry_remove(&ring->mmap->rdma);
	else
		vhca_free_coherent(&vdev->coh, ring->size, ring->buf,
				   ring->dma);
	memset(ring, 0, sizeof(*ring));
}

/*
 * A destroyed object gives back its place in count, its kind's count in
 * the device, once its rings are gone: now for a kernel object, at the
 * last of its rings' mmap_free for a user object, whose process may map
 * them for as long as it likes.  ring2 may be NULL; either ring may have
 * no slots (count 0).  The rings are freed either way.
 */
void vhca_rings_release(struct vhca_dev *vdev, atomic_t *count,
			struct vhca_ring *ring, struct vhca_ring *ring2)
{
	struct vhca_mmap *owner = ring->mmap ?: (ring2 ? ring2->mmap : NULL);

	if (owner) {
		owner->count = count;
		if (ring->mmap && ring2 && ring2->mmap) {
			ring2->mmap->owner = owner;
			refcount_inc(&owner->holds);
		}
	}
	if (ring->count)
		vhca_ring_free(vdev, ring);
	if (ring2 && ring2->count)
		vhca_ring_free(vdev, ring2);
	if (!owner)
		atomic_dec(count);
}

/*
 * The pair of areas holding record index of uctx, made when its first
 * record is handed out.
 */
static int vhca_area_get(struct vhca_ucontext *uctx, u32 index,
			 struct vhca_uctx_area **areap)
{
	struct vhca_uctx_area *area = &uctx->areas[index / VHCA_UCTX_RECS];
	struct vhca_mmap *db, *st;
	int err = 0;

	mutex_lock(&uctx->areas_lock);
	if (area->db)
		goto out;
	db = vhca_mmap_create(uctx, VHCA_UCTX_AREA, true);
	if (IS_ERR(db)) {
		err = PTR_ERR(db);
		goto out;
	}
	st = vhca_mmap_create(uctx, VHCA_UCTX_AREA, false);
	if (IS_ERR(st)) {
		rdma_user_mmap_entry_remove(&db->rdma);
		err = PTR_ERR(st);
		goto out;
	}
	area->db = db;
	area->status = st;
out:
	mutex_unlock(&uctx->areas_lock);
	if (!err)
		*areap = area;
	return err;
}

/*
 * The records of a new object: a free slot of the user context's areas,
 * among the first reach records (those its caller's create response can
 * place: vhca_recs_reach()), or a zeroed pair of the object's own for a
 * kernel object.
 */
int vhca_recs_alloc(struct vhca_dev *vdev, struct vhca_ucontext *uctx,
		    struct vhca_recs *recs, u32 reach)
{
	struct vhca_uctx_area *area;
	struct vhca_db_rec *db;
	u32 slot;
	int index, err;

	if (uctx) {
		index = ida_alloc_range(&uctx->recs, 1,
					min(reach, VHCA_UCTX_MAX_RECS) - 1,
					GFP_KERNEL);
		if (index == -ENOSPC) {
			atomic64_inc(&vdev->counters[VHCA_CNT_LIMIT_CTX_RECORDS]);
			return -ENOMEM;
		}
		if (index < 0)
			return index;
		err = vhca_area_get(uctx, index, &area);
		if (err) {
			ida_free(&uctx->recs, index);
			return err;
		}
		slot = index % VHCA_UCTX_RECS;
		recs->index = index;
		recs->area = area;
		recs->db = (struct vhca_db_rec *)area->db->cpu_addr + slot;
		recs->st = (struct vhca_status_rec *)area->status->cpu_addr +
			   slot;
		/* A record may have served an earlier object. */
		memset(recs->db, 0, sizeof(*recs->db));
		memset(recs->st, 0, sizeof(*recs->st));
		return 0;
	}
	db = vhca_alloc_coherent(&vdev->coh,
				 sizeof(*recs->db) + sizeof(*recs->st),
				 GFP_KERNEL, &recs->dma);
	if (!db)
		return -ENOMEM;
	recs->index = 0;
	recs->db = db;
	recs->st = (struct vhca_status_rec *)(db + 1);
	return 0;
}

/*
 * The records a user verb may be given: all of them when its create
 * response reaches the areas' offsets (resp_end: the end of the response's
 * status_area_offset), else those of the first pair of areas.
 */
u32 vhca_recs_reach(struct ib_udata *udata, size_t resp_end)
{
	return udata && udata->outlen >= resp_end ? VHCA_UCTX_MAX_RECS :
						    VHCA_UCTX_RECS;
}

/* The mmap offsets of the areas holding a user object's records. */
void vhca_recs_offsets(const struct vhca_recs *recs, u64 *db_offset,
		       u64 *status_offset)
{
	*db_offset = rdma_user_mmap_get_offset(&recs->area->db->rdma);
	*status_offset = rdma_user_mmap_get_offset(&recs->area->status->rdma);
}

void vhca_recs_free(struct vhca_dev *vdev, struct vhca_ucontext *uctx,
		    struct vhca_recs *recs)
{
	if (uctx)
		ida_free(&uctx->recs, recs->index);
	else
		vhca_free_coherent(&vdev->coh,
				   sizeof(*recs->db) + sizeof(*recs->st),
				   recs->db, recs->dma);
	memset(recs, 0, sizeof(*recs));
}
