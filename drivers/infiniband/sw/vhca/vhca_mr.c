// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Protection domains and memory regions of vhca: registration pins user
 * memory (ib_umem), records its pages for O(1) translation and publishes
 * the MR under its key in vdev->mr_xa, where the engine finds it lock-free;
 * deregistration waits for the engine to let go of it.  Fast-registration
 * MRs (alloc_mr, map_mr_sg) are registered and invalidated by the engine's
 * local operations, under the MR's lock.  Memory windows (vhca_mw.c) are
 * MRs of another kind in the same key space; the engine moves payload
 * between packets and MRs with the copies of vhca_mr_copy.c.
 */
#include <linux/random.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "vhca.h"

int vhca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibpd->device);

	return vhca_create_prologue(&vdev->ibdev, udata, &vdev->n_pd,
				    VHCA_MAX_PD + VHCA_MAD_OBJECTS, "alloc_pd");
}

int vhca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_vdev(ibpd->device)->n_pd);
	return 0;
}

int vhca_mr_check_reg_access(int access)
{
	if (access & ~IB_ACCESS_SUPPORTED)
		return -EINVAL;
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	/* No memory of an MR is persistent: FLUSH is to global visibility. */
	if (access & (IB_ACCESS_MW_BIND | IB_ACCESS_ON_DEMAND |
		      IB_ACCESS_FLUSH_PERSISTENT))
		return -EOPNOTSUPP;
	return 0;
}

/* The bounds part of vhca_mr_check(). */
bool vhca_mr_in_bounds(const struct vhca_mr *mr, u64 iova, u64 len)
{
	u64 off;

	if (!len)
		return true;
	if (iova + (len - 1) < iova)
		return false;
	if (mr->dma)
		return true;
	if (iova < mr->iova)
		return false;
	off = iova - mr->iova;
	return off < mr->length && len <= mr->length - off;
}

/* vhca_mr_check(), a fast MR's lock held. */
static int vhca_mr_check_locked(const struct vhca_mr *mr, u32 key,
				const struct ib_pd *pd, u64 iova, u64 len,
				int access)
{
	if (vhca_mr_is_mw(mr))
		return -EACCES;
	if (mr->fast && (mr->state != VHCA_MR_VALID || mr->key != key))
		return -EACCES;
	if (mr->pd != pd)
		return -EACCES;
	if (access & ~(mr->access & VHCA_MR_CHECK_ACCESS))
		return -EACCES;
	return vhca_mr_in_bounds(mr, iova, len) ? 0 : -EINVAL;
}

int vhca_mr_check(struct vhca_mr *mr, u32 key, const struct ib_pd *pd,
		  u64 iova, u64 len, int access)
{
	unsigned long flags;
	int err;

	if (!mr->fast)
		return vhca_mr_check_locked(mr, key, pd, iova, len, access);
	spin_lock_irqsave(&mr->lock, flags);
	err = vhca_mr_check_locked(mr, key, pd, iova, len, access);
	spin_unlock_irqrestore(&mr->lock, flags);
	return err;
}

/* A new MR, counted against VHCA_MAX_MR; NULL beyond it or without memory. */
struct vhca_mr *vhca_mr_alloc(struct vhca_dev *vdev, struct ib_pd *ibpd,
			      int access)
{
	/* A process's MR or window: charged to its memory cgroup. */
	gfp_t gfp = ibpd->uobject ? GFP_KERNEL_ACCOUNT : GFP_KERNEL;
	struct vhca_mr *mr;

	if (vhca_object_get(&vdev->ibdev, &vdev->n_mr, VHCA_MAX_MR, "MR"))
		return NULL;
	mr = kzalloc(sizeof(*mr), gfp);
	if (!mr)
		goto err_count;
	mr->pd = ibpd;
	mr->access = access;
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	return mr;

err_count:
	atomic_dec(&vdev->n_mr);
	return NULL;
}

void vhca_mr_free(struct vhca_dev *vdev, struct vhca_mr *mr)
{
	/*
	 * First: an ODP MR's notifier clears pages[] until it is gone; an
	 * implicit MR's children go before the umem they are children of.
	 */
	if (mr->odp_implicit)
		vhca_odp_release(mr);
	ib_umem_release(mr->umem);
	kfree(mr->fr_pages);
	kfree(mr->fr_map);
	kvfree(mr->pages);
	kfree_rcu(mr, rcu);
	atomic_dec(&vdev->n_mr);
}

/*
 * Reserve an index for mr in vdev->mr_xa and give it fresh keys.  The
 * reserved slot reads as empty until vhca_mr_publish().  The xarray lock
 * also serializes the key byte.
 */
static int vhca_mr_alloc_key(struct vhca_dev *vdev, struct vhca_mr *mr)
{
	u32 index;
	u8 key;
	int err;

	xa_lock(&vdev->mr_xa);
	err = __xa_alloc(&vdev->mr_xa, &index, NULL,
			 XA_LIMIT(1, VHCA_MR_INDEX_MAX), GFP_KERNEL);
	/*
	 * A random step of 1 to 255: the key byte cannot be guessed and is
	 * not the previous registration's.
	 */
	vdev->mr_key += 1 + get_random_u32_below(255);
	key = vdev->mr_key;
	xa_unlock(&vdev->mr_xa);
	if (err)
		return err == -EBUSY ? -ENOMEM : err;

	mr->index = index;
	mr->key = vhca_mr_key(index, key);
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	return 0;
}

/* Make a complete MR visible to vhca_mr_get(). */
static int vhca_mr_publish(struct vhca_dev *vdev, struct vhca_mr *mr)
{
	return xa_err(xa_store(&vdev->mr_xa, mr->index, mr, GFP_KERNEL));
}

struct vhca_mr *vhca_mr_get(struct vhca_dev *vdev, u32 key)
{
	struct vhca_mr *mr;

	rcu_read_lock();
	mr = xa_load(&vdev->mr_xa, vhca_mr_key_index(key));
	/*
	 * A fast MR's and a window's key change: vhca_mr_check() checks it,
	 * locked.
	 */
	if (mr && ((!mr->fast && !vhca_mr_is_mw(mr) && mr->ibmr.lkey != key) ||
		   !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

void vhca_mr_put(struct vhca_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
}

/* Give a filled-in MR its keys and make it findable; frees it on failure. */
struct ib_mr *vhca_mr_register(struct vhca_dev *vdev, struct vhca_mr *mr)
{
	int err;

	err = vhca_mr_alloc_key(vdev, mr);
	if (err)
		goto err_free;
	err = vhca_mr_publish(vdev, mr);
	if (err)
		goto err_key;
	return &mr->ibmr;

err_key:
	xa_erase(&vdev->mr_xa, mr->index);
err_free:
	vhca_mr_free(vdev, mr);
	return ERR_PTR(err);
}

/*
 * No new lookup finds mr after this; returns when the last user is gone.
 * An MR that rereg_user_mr replaced left its index to its successor.
 */
void vhca_mr_unpublish(struct vhca_dev *vdev, struct vhca_mr *mr)
{
	xa_cmpxchg(&vdev->mr_xa, mr->index, mr, NULL, 0);
	vhca_mr_put(mr);
	wait_for_completion(&mr->released);
}

bool vhca_mr_published(struct vhca_dev *vdev, const struct vhca_mr *mr)
{
	return xa_load(&vdev->mr_xa, mr->index) == mr;
}

struct ib_mr *vhca_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct vhca_dev *vdev = to_vdev(ibpd->device);
	struct vhca_mr *mr;
	int err;

	/* Kernel virtual addresses are not zero-based. */
	err = vhca_mr_check_reg_access(access) ?:
	      (access & IB_ZERO_BASED ? -EOPNOTSUPP : 0);
	if (err) {
		ibdev_dbg(&vdev->ibdev, "get_dma_mr: access %#x refused: %d\n",
			  access, err);
		return ERR_PTR(err);
	}
	mr = vhca_mr_alloc(vdev, ibpd, access);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->dma = true;
	return vhca_mr_register(vdev, mr);
}

/*
 * Record the pinned pages of mr->umem in mr->pages, in order, so that the
 * engine translates an iova without walking the scatterlist.  With virtual
 * DMA the scatterlist's pages are the user pages themselves.
 */
static int vhca_mr_map_pages(struct vhca_dev *vdev, struct vhca_mr *mr)
{
	struct ib_umem *umem = mr->umem;
	size_t n = ib_umem_num_pages(umem), i = 0;
	struct sg_page_iter piter;

	/* The length is the user's: fail quietly, as -ENOMEM. */
	mr->pages = kvcalloc(n, sizeof(*mr->pages),
			     GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!mr->pages) {
		ibdev_dbg(&vdev->ibdev, "reg_mr: no memory for %zu pages\n", n);
		return -ENOMEM;
	}
	for_each_sgtable_page(&umem->sgt_append.sgt, &piter, 0) {
		if (i == n)
			break;
		mr->pages[i++] = sg_page_iter_page(&piter);
	}
	if (i != n) {
		ibdev_err(&vdev->ibdev, "reg_mr: umem has %zu pages, not %zu\n",
			  i, n);
		return -EFAULT;
	}
	mr->npages = n;
	mr->page_offset = ib_umem_offset(umem);
	return 0;
}

/*
 * A new user MR over [start, start + length) at iova (at 0 if zero-based),
 * pinned and translated but not yet findable; what reg_user_mr and
 * rereg_user_mr check of their arguments, with the verb's name for the log.
 * ON_DEMAND at start 0 with length U64_MAX (SIZE_MAX) is implicit ODP:
 * the process's address space, at iova 0.
 */
static struct vhca_mr *vhca_mr_pin(struct vhca_dev *vdev, const char *verb,
				   struct ib_pd *ibpd, u64 start, u64 length,
				   u64 iova, int access, struct ib_udata *udata)
{
	bool odp = VHCA_ODP && (access & IB_ACCESS_ON_DEMAND);
	bool implicit = odp && !start && length == U64_MAX;
	struct vhca_mr *mr;
	int err;

	/*
	 * Windows bind to user MRs: MW_BIND is for these only, and not for
	 * ODP MRs, the only MRs that take ON_DEMAND.
	 */
	if (odp && (access & IB_ACCESS_MW_BIND))
		err = -EOPNOTSUPP;
	else
		err = vhca_mr_check_reg_access(access & ~IB_ACCESS_MW_BIND &
					       ~(odp ? IB_ACCESS_ON_DEMAND : 0));
	if (err) {
		ibdev_dbg(&vdev->ibdev, "%s: access %#x refused: %d\n", verb,
			  access, err);
		return ERR_PTR(err);
	}
	if (implicit ? iova : (!length || length > VHCA_MAX_MR_SIZE)) {
		ibdev_dbg(&vdev->ibdev, "%s: length %llu at %#llx refused\n",
			  verb, length, iova);
		return ERR_PTR(-EINVAL);
	}
	if (iova + (length - 1) < iova) {
		ibdev_dbg(&vdev->ibdev, "%s: iova %#llx + length %llu wraps\n",
			  verb, iova, length);
		return ERR_PTR(-EINVAL);
	}
	if (vhca_udata_check(&vdev->ibdev, udata, verb))
		return ERR_PTR(-EINVAL);

	mr = vhca_mr_alloc(vdev, ibpd, access);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->iova = access & IB_ZERO_BASED ? 0 : iova;
	mr->length = length;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	if (implicit) {
		err = vhca_odp_init_implicit(vdev, mr, access);
		if (err) {
			ibdev_dbg(&vdev->ibdev, "%s: no implicit ODP: %d\n",
				  verb, err);
			goto err_free;
		}
		return mr;
	}
	if (odp) {
		err = vhca_odp_init(vdev, mr, start, length, access);
		if (err) {
			ibdev_dbg(&vdev->ibdev, "%s: no ODP for %#llx+%llu: %d\n",
				  verb, start, length, err);
			goto err_free;
		}
		return mr;
	}
	mr->umem = ib_umem_get_va(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		ibdev_dbg(&vdev->ibdev, "%s: cannot pin %#llx+%llu: %d\n", verb,
			  start, length, err);
		mr->umem = NULL;
		goto err_free;
	}
	err = vhca_mr_map_pages(vdev, mr);
	if (err)
		goto err_free;
	return mr;

err_free:
	vhca_mr_free(vdev, mr);
	return ERR_PTR(err);
}

struct ib_mr *vhca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_dmah *dmah,
			       struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibpd->device);
	struct vhca_mr *mr;

	if (dmah) {
		ibdev_dbg(&vdev->ibdev, "reg_mr: DMA handles are not supported\n");
		return ERR_PTR(-EOPNOTSUPP);
	}
	mr = vhca_mr_pin(vdev, "reg_mr", ibpd, start, length, iova, access,
			 udata);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	return vhca_mr_register(vdev, mr);
}

/*
 * The core has checked the range against the DM's length and that the MR
 * is zero-based; both are checked again here, against the buffer itself,
 * which is what the engine will touch.
 */
struct ib_mr *vhca_mr_reg_dm(struct vhca_dev *vdev, struct ib_pd *ibpd,
			     void *buf, size_t size, u64 offset, u64 length,
			     int access)
{
	struct vhca_mr *mr;
	int err;

	/* Windows bind to DM MRs as to user MRs. */
	err = vhca_mr_check_reg_access(access & ~IB_ACCESS_MW_BIND);
	if (!err && (!(access & IB_ZERO_BASED) || offset > size ||
		     length > size - offset))
		err = -EINVAL;
	if (err) {
		ibdev_dbg(&vdev->ibdev,
			  "reg_dm_mr: access %#x, offset %llu, length %llu refused: %d\n",
			  access, offset, length, err);
		return ERR_PTR(err);
	}
	mr = vhca_mr_alloc(vdev, ibpd, access);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->kaddr = buf + offset;
	mr->length = length;
	mr->ibmr.length = length;
	return vhca_mr_register(vdev, mr);
}

#ifndef VHCA_HAVE_REG_USER_MR_DMAH
struct ib_mr *vhca_reg_user_mr_op(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 iova, int access, struct ib_udata *udata)
{
	return vhca_reg_user_mr(ibpd, start, length, iova, access, NULL, udata);
}
#endif

/*
 * A new MR with the old one's attributes except those flags change (pd is
 * the MR's own without IB_MR_REREG_PD), and the old one's index and keys:
 * a remote peer's rkey stays valid.  It replaces the old MR in mr_xa, so
 * lookups find it from now on; the core then deregisters the old MR, which
 * waits for the engine users still holding it and leaves the index alone
 * (vhca_mr_unpublish()).
 */
struct ib_mr *vhca_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 iova, int access,
				 struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibmr->device);
	struct vhca_mr *old = to_vmr(ibmr), *mr;
	int err;

	/*
	 * The core refused flags beyond IB_MR_REREG_SUPPORTED (-EOPNOTSUPP)
	 * and no flags (-EINVAL); none left means it cleared IB_MR_REREG_PD
	 * for the MR's own PD: nothing changes.
	 */
	if (!flags)
		return NULL;
	/* The windows bound to it would stay with the old MR: as dereg_mr. */
	if (atomic_read(&old->mw_bound)) {
		ibdev_dbg(&vdev->ibdev, "rereg_mr: windows are bound to it\n");
		return ERR_PTR(-EINVAL);
	}
	if (!(flags & IB_MR_REREG_TRANS) && old->odp_implicit) {
		start = 0;
		length = U64_MAX;
		iova = 0;
	} else if (!(flags & IB_MR_REREG_TRANS)) {
		start = old->umem->address;
		length = old->length;
		iova = old->ibmr.iova;
	}
	if (!(flags & IB_MR_REREG_ACCESS))
		access = old->access;

	mr = vhca_mr_pin(vdev, "rereg_mr", ibpd, start, length, iova, access,
			 udata);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->index = old->index;
	mr->ibmr.lkey = old->ibmr.lkey;
	mr->ibmr.rkey = old->ibmr.rkey;
	err = vhca_mr_publish(vdev, mr);
	if (err) {
		ibdev_dbg(&vdev->ibdev, "rereg_mr: cannot publish: %d\n", err);
		vhca_mr_free(vdev, mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

struct ib_mr *vhca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg)
{
	struct vhca_dev *vdev = to_vdev(ibpd->device);
	struct vhca_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG) {
		ibdev_dbg(&vdev->ibdev, "alloc_mr: type %d not supported\n",
			  type);
		return ERR_PTR(-EOPNOTSUPP);
	}
	if (!max_num_sg || max_num_sg > VHCA_MAX_FAST_REG_PAGES) {
		ibdev_dbg(&vdev->ibdev, "alloc_mr: %u pages refused\n",
			  max_num_sg);
		return ERR_PTR(-EINVAL);
	}
	mr = vhca_mr_alloc(vdev, ibpd, 0);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->fast = true;
	spin_lock_init(&mr->lock);
	mr->state = VHCA_MR_INVALID;
	mr->fr_max = max_num_sg;
	mr->fr_pages = kcalloc(max_num_sg, sizeof(*mr->fr_pages), GFP_KERNEL);
	mr->fr_map = kcalloc(max_num_sg, sizeof(*mr->fr_map), GFP_KERNEL);
	if (!mr->fr_pages || !mr->fr_map) {
		vhca_mr_free(vdev, mr);
		return ERR_PTR(-ENOMEM);
	}
	return vhca_mr_register(vdev, mr);
}

/* ib_sg_to_pages()'s callback: one page of the map; the MR's lock held. */
static int vhca_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct vhca_mr *mr = to_vmr(ibmr);

	if (mr->fr_nmap == mr->fr_max)
		return -ENOMEM;
	mr->fr_map[mr->fr_nmap++] = addr;
	return 0;
}

int vhca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct vhca_mr *mr = to_vmr(ibmr);
	unsigned long flags;
	int n;

	if (!is_power_of_2(ibmr->page_size))
		return -EINVAL;
	spin_lock_irqsave(&mr->lock, flags);
	mr->fr_nmap = 0;
	n = ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, vhca_mr_set_page);
	mr->fr_map_shift = ilog2(ibmr->page_size);
	mr->fr_map_offset = ibmr->iova & (ibmr->page_size - 1);
	spin_unlock_irqrestore(&mr->lock, flags);
	return n;
}

/* The fast MR that key's index names, referenced, or NULL. */
static struct vhca_mr *vhca_mr_get_fast(struct vhca_dev *vdev, u32 key)
{
	struct vhca_mr *mr = vhca_mr_get(vdev, key);

	if (mr && !mr->fast) {
		vhca_mr_put(mr);
		return NULL;
	}
	return mr;
}

/* Whether the map holds length bytes from its offset; the lock held. */
static bool vhca_mr_map_holds(const struct vhca_mr *mr, u64 length)
{
	u64 total = (u64)mr->fr_nmap << mr->fr_map_shift;

	return length <= total && mr->fr_map_offset <= total - length;
}

int vhca_mr_fast_reg(struct vhca_dev *vdev, const struct ib_pd *pd, u32 key,
		     int access)
{
	struct vhca_mr *mr;
	unsigned long flags;
	u64 iova, length;
	int err = 0;

	/* The consumer chose the iova with map_mr_sg: it is not zero-based. */
	if (vhca_mr_check_reg_access(access) || (access & IB_ZERO_BASED))
		return -EINVAL;
	mr = vhca_mr_get_fast(vdev, key);
	if (!mr)
		return -EINVAL;
	spin_lock_irqsave(&mr->lock, flags);
	/* The consumer's, set by ib_sg_to_pages() (under the lock). */
	iova = READ_ONCE(mr->ibmr.iova);
	length = READ_ONCE(mr->ibmr.length);
	if (mr->pd != pd)
		err = -EACCES;
	else if (mr->state == VHCA_MR_VALID)
		err = -EBUSY;
	else if (!vhca_mr_map_holds(mr, length) ||
		 (length && iova + (length - 1) < iova))
		err = -EINVAL;
	if (!err) {
		/* The map becomes the page list in effect, */
		mr->fr_npages = mr->fr_nmap;
		mr->fr_offset = mr->fr_map_offset;
		mr->fr_shift = mr->fr_map_shift;
		memcpy(mr->fr_pages, mr->fr_map,
		       mr->fr_nmap * sizeof(*mr->fr_pages));
		/* under the registration the WQE asks for. */
		mr->iova = iova;
		mr->length = length;
		mr->access = access;
		mr->key = key;
		mr->state = VHCA_MR_VALID;
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	vhca_mr_put(mr);
	return err;
}

/* The invalidation of a fast MR (vhca_mr_invalidate()). */
int vhca_mr_invalidate_fast(struct vhca_mr *mr, const struct ib_pd *pd, u32 key,
			    bool remote)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&mr->lock, flags);
	if (mr->pd != pd)
		err = -EACCES;
	else if (mr->key != key)
		err = -EINVAL;
	/* Remotely: an R_Key in effect, of an MR with remote access. */
	else if (remote && (mr->state != VHCA_MR_VALID ||
			    !(mr->access & VHCA_MR_REMOTE_ACCESS)))
		err = -EINVAL;
	else
		mr->state = VHCA_MR_INVALID;
	spin_unlock_irqrestore(&mr->lock, flags);
	return err;
}

/*
 * An MR with windows bound to it is not deregistered (-EINVAL, as rxe
 * answers citing IBA 10.6.7.2.6; Documentation/engine.md says why): the
 * windows would otherwise grant access to memory no longer registered.
 * Process exit and rdma link delete destroy the windows in the same pass
 * or the next one (uverbs retries what failed while anything makes
 * progress).  mw_bound -1 from here on: no bind takes the MR.
 */
int vhca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibmr->device);
	struct vhca_mr *mr = to_vmr(ibmr);

	if (atomic_cmpxchg(&mr->mw_bound, 0, -1)) {
		ibdev_dbg(&vdev->ibdev, "dereg_mr: key %#x has windows bound\n",
			  mr->ibmr.lkey);
		return -EINVAL;
	}
	vhca_mr_unpublish(vdev, mr);
	vhca_mr_free(vdev, mr);
	return 0;
}
