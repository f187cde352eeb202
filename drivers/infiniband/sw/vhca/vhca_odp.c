// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * On-demand paging of vhca: an ODP MR is the core's ib_umem_odp, which
 * pins nothing.  A fault maps a range with ib_umem_odp_map_dma_and_lock()
 * (hmm_range_fault() under the hood) and records its pages in the MR's
 * pages[] under the MR's lock; the MMU notifier's invalidation clears them
 * under the same lock before ib_umem_odp_unmap_dma_pages() lets the pages
 * go.  The engine copies under the lock and never sleeps: an access that
 * finds a page missing queues a fault and tells its caller to try again
 * (vhca_odp_resident()).
 *
 * An implicit ODP MR covers the address space with the core's implicit
 * umem, which maps nothing itself: each chunk an access touches gets a
 * child umem (ib_umem_odp_alloc_child()) from the first fault there, with
 * its own interval notifier and pages[], which fault and invalidation
 * treat as an explicit MR's.  The engine finds a chunk's child with
 * xa_load() under the MR's lock; a chunk without one is not resident.
 */
#include <linux/hmm.h>
#include <linux/memcontrol.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_umem_odp.h>

#include "vhca.h"

/* The index in pages[] of byte iova of an explicit ODP MR. */
static size_t vhca_odp_index(const struct vhca_mr *mr, u64 iova)
{
	return (iova - mr->iova + mr->page_offset) >> PAGE_SHIFT;
}

/* The first byte of chunk index of an implicit ODP MR. */
static u64 vhca_odp_chunk_start(unsigned long index)
{
	return (u64)index << VHCA_ODP_CHUNK_SHIFT;
}

/* The bytes from iova to the end of its chunk. */
static u64 vhca_odp_chunk_left(u64 iova)
{
	return VHCA_ODP_CHUNK - (iova & (VHCA_ODP_CHUNK - 1));
}

/* The index in a child's pages[] of byte iova. */
static size_t vhca_odp_chunk_index(u64 iova)
{
	return (iova & (VHCA_ODP_CHUNK - 1)) >> PAGE_SHIFT;
}

/*
 * The MMU notifier of an explicit MR or of a child: the range is about
 * to change (unmapped, moved, swapped out, write-protected).  The pages
 * leave pages[] under the MR's lock, so no copy is under way when the
 * core unmaps them.  odp->private (the MR, or the child) is set after
 * the notifier is inserted: until then no page is in pages[].
 */
static bool vhca_odp_invalidate_pages(struct mmu_interval_notifier *mni,
				      const struct mmu_notifier_range *range,
				      unsigned long cur_seq, bool child)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	struct vhca_odp_child *c = NULL;
	unsigned long start, end, flags;
	struct page **pages = NULL;
	struct vhca_mr *mr = NULL;
	size_t i, last;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	start = max(range->start, ib_umem_start(odp));
	end = min(range->end, ib_umem_end(odp));
	if (child && odp->private) {
		c = odp->private;
		mr = c->mr;
		pages = c->pages;
	} else if (odp->private) {
		mr = odp->private;
		pages = mr->pages;
	}
	if (mr && start < end) {
		last = (end - 1 - ib_umem_start(odp)) >> PAGE_SHIFT;
		spin_lock_irqsave(&mr->lock, flags);
		for (i = (start - ib_umem_start(odp)) >> PAGE_SHIFT; i <= last;
		     i++)
			pages[i] = NULL;
		spin_unlock_irqrestore(&mr->lock, flags);
	}
	if (start < end)
		ib_umem_odp_unmap_dma_pages(odp, start, end);
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static bool vhca_odp_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range,
				unsigned long cur_seq)
{
	return vhca_odp_invalidate_pages(mni, range, cur_seq, false);
}

static bool vhca_odp_child_invalidate(struct mmu_interval_notifier *mni,
				      const struct mmu_notifier_range *range,
				      unsigned long cur_seq)
{
	return vhca_odp_invalidate_pages(mni, range, cur_seq, true);
}

static const struct mmu_interval_notifier_ops vhca_odp_ops = {
	.invalidate = vhca_odp_invalidate,
};

static const struct mmu_interval_notifier_ops vhca_odp_child_ops = {
	.invalidate = vhca_odp_child_invalidate,
};

/*
 * Map [off, off + len) of odp (off from ib_umem_start(odp)) and record
 * what it mapped in pages[], the entries of odp's pages, under mr's lock.
 */
static int vhca_odp_map(struct vhca_mr *mr, struct ib_umem_odp *odp,
			struct page **pages, u64 off, u64 len, bool fault)
{
	bool writable = odp->umem.writable;
	unsigned long *pfns, flags;
	size_t i, last;
	int ret;

	ret = ib_umem_odp_map_dma_and_lock(odp, ib_umem_start(odp) + off, len,
					   writable ? VHCA_ODP_MAP_WRITE :
						      VHCA_ODP_MAP_READ,
					   fault);
	if (ret < 0)
		return ret;
	/* The pfns of the range just mapped, valid under umem_mutex. */
	pfns = vhca_odp_pfn_list(odp);
	last = (off + len - 1) >> PAGE_SHIFT;
	spin_lock_irqsave(&mr->lock, flags);
	for (i = off >> PAGE_SHIFT; i <= last; i++) {
		if (!(pfns[i] & HMM_PFN_VALID) ||
		    (writable && !(pfns[i] & HMM_PFN_WRITE)))
			continue;
		pages[i] = hmm_pfn_to_page(pfns[i]);
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	mutex_unlock(&odp->umem_mutex);
	return 0;
}

/* Whether a mapping of mm meets [start, end): -EFAULT when none does. */
static int vhca_odp_mapped(struct mm_struct *mm, u64 start, u64 end)
{
	bool mapped;

	if (!mmget_not_zero(mm))
		return -EFAULT;
	mmap_read_lock(mm);
	mapped = find_vma_intersection(mm, start, end);
	mmap_read_unlock(mm);
	mmput(mm);
	return mapped ? 0 : -EFAULT;
}

/*
 * A new child of an implicit MR for chunk index, published in
 * odp_children; odp_mutex held.  -ENOSPC beyond VHCA_ODP_MAX_CHILDREN,
 * -EFAULT when nothing is mapped in the chunk or the process is gone.
 */
static struct vhca_odp_child *vhca_odp_child_new(struct vhca_mr *mr,
						 unsigned long index)
{
	u64 start = vhca_odp_chunk_start(index);
	struct vhca_odp_child *child;
	struct mem_cgroup *memcg;
	struct ib_umem_odp *odp;
	int err;

	lockdep_assert_held(&mr->odp_mutex);
	if (mr->odp_nchildren >= VHCA_ODP_MAX_CHILDREN)
		return ERR_PTR(-ENOSPC);
	err = vhca_odp_mapped(mr->odp->umem.owning_mm, start,
			      start + VHCA_ODP_CHUNK);
	if (err)
		return ERR_PTR(err);
	/* The process's, even from a work item: charged to its cgroup. */
	memcg = set_active_memcg(mr->odp_memcg);
	child = kvzalloc(struct_size(child, pages, VHCA_ODP_CHUNK_PAGES),
			 GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	set_active_memcg(memcg);
	if (!child)
		return ERR_PTR(-ENOMEM);
	child->mr = mr;
	odp = ib_umem_odp_alloc_child(mr->odp, start, VHCA_ODP_CHUNK,
				      &vhca_odp_child_ops);
	if (IS_ERR(odp)) {
		kvfree(child);
		return ERR_CAST(odp);
	}
	child->odp = odp;
	mutex_lock(&odp->umem_mutex);
	odp->private = child;
	mutex_unlock(&odp->umem_mutex);
	err = xa_err(xa_store(&mr->odp_children, index, child, GFP_KERNEL));
	if (err) {
		ib_umem_odp_release(odp);
		kvfree(child);
		return ERR_PTR(err);
	}
	mr->odp_nchildren++;
	return child;
}

/* The child of chunk index of an implicit MR, made if it has none. */
static struct vhca_odp_child *vhca_odp_child(struct vhca_mr *mr,
					     unsigned long index)
{
	struct vhca_odp_child *child = xa_load(&mr->odp_children, index);

	if (child)
		return child;
	mutex_lock(&mr->odp_mutex);
	child = xa_load(&mr->odp_children, index);
	if (!child)
		child = vhca_odp_child_new(mr, index);
	mutex_unlock(&mr->odp_mutex);
	return child;
}

struct page **vhca_odp_chunk_pages(struct vhca_mr *mr, u64 iova)
{
	struct vhca_odp_child *child;

	child = xa_load(&mr->odp_children, iova >> VHCA_ODP_CHUNK_SHIFT);
	return child ? child->pages : NULL;
}

int vhca_odp_fault(struct vhca_mr *mr, u64 iova, u64 len, bool fault)
{
	struct vhca_odp_child *child;
	u64 n;
	int err;

	if (!len)
		return 0;
	if (!vhca_mr_in_bounds(mr, iova, len))
		return -EFAULT;
	if (!mr->odp_implicit)
		return vhca_odp_map(mr, mr->odp, mr->pages,
				    iova - mr->iova + mr->page_offset, len,
				    fault);
	for (; len; iova += n, len -= n) {
		n = min(len, vhca_odp_chunk_left(iova));
		child = vhca_odp_child(mr, iova >> VHCA_ODP_CHUNK_SHIFT);
		if (IS_ERR(child))
			return PTR_ERR(child);
		err = vhca_odp_map(mr, child->odp, child->pages,
				   iova & (VHCA_ODP_CHUNK - 1), n, fault);
		if (err)
			return err;
	}
	return 0;
}

/*
 * The page of va could not be brought in: marked, unless a fault brought
 * it in meanwhile (an implicit MR's chunk without a child: the chunk).
 */
static void vhca_odp_mark_failed(struct vhca_mr *mr, u64 va)
{
	unsigned long flags;
	struct page **pages;
	size_t i;

	spin_lock_irqsave(&mr->lock, flags);
	if (mr->odp_implicit) {
		pages = vhca_odp_chunk_pages(mr, va);
		i = vhca_odp_chunk_index(va);
	} else {
		pages = mr->pages;
		i = vhca_odp_index(mr, va);
	}
	if (!pages)
		mr->odp_failed = (va >> VHCA_ODP_CHUNK_SHIFT) + 1;
	else if (!pages[i])
		pages[i] = VHCA_ODP_FAILED;
	spin_unlock_irqrestore(&mr->lock, flags);
}

/*
 * The fault an access asked for, with what follows it within the MR (of
 * an implicit MR, within the chunk of its last byte); when that fails,
 * the access's own range (what follows may not be mapped).  When that
 * fails too, each of its pages is tried alone: those that cannot be
 * brought in (no mapping, no access, the process gone) are marked, so
 * that the access fails instead of waiting for ever; a busy range or a
 * lack of memory marks nothing.
 */
static void vhca_odp_fault_access(struct vhca_mr *mr, u64 iova, u32 len)
{
	u64 limit = mr->iova + mr->length - iova, ahead;
	u64 va, end = iova + len, n;
	int err;

	if (mr->odp_implicit)
		limit = min(limit, len + vhca_odp_chunk_left(end - 1) - 1);
	ahead = min_t(u64, max_t(u64, len, VHCA_ODP_AHEAD), limit);
	if (!vhca_odp_fault(mr, iova, ahead, true) ||
	    (ahead > len && !vhca_odp_fault(mr, iova, len, true)))
		return;
	for (va = iova; va < end; va += n) {
		n = min_t(u64, end - va, PAGE_SIZE - ((va - mr->iova +
						       mr->page_offset) &
						      ~PAGE_MASK));
		err = vhca_odp_fault(mr, va, n, true);
		if (!err || err == -EBUSY || err == -ENOMEM)
			continue;
		vhca_odp_mark_failed(mr, va);
	}
}

/*
 * The faults of ODP MRs' work items run on a workqueue of the module's
 * own, so that unloading it waits for the last of them to return (a
 * work item's last reference on its MR lets the device go before the
 * item has returned).  Unbound and of normal priority: the memory is a
 * process's, never what a reclaim of memory waits for (no
 * WQ_MEM_RECLAIM), and a fault sleeps as long as the mm makes it.
 */
static struct workqueue_struct *vhca_odp_wq;

int vhca_odp_wq_init(void)
{
	vhca_odp_wq = alloc_workqueue("vhca_odp", WQ_UNBOUND, 0);
	return vhca_odp_wq ? 0 : -ENOMEM;
}

void vhca_odp_wq_exit(void)
{
	destroy_workqueue(vhca_odp_wq);
}

/* A fault queued by vhca_odp_resident(); it holds a reference on the MR. */
static void vhca_odp_work(struct work_struct *work)
{
	struct vhca_mr *mr = container_of(work, struct vhca_mr, odp_work);
	unsigned long flags;
	u64 iova;
	u32 len;

	spin_lock_irqsave(&mr->lock, flags);
	iova = mr->odp_va;
	len = mr->odp_len;
	spin_unlock_irqrestore(&mr->lock, flags);
	vhca_odp_fault_access(mr, iova, len);
	spin_lock_irqsave(&mr->lock, flags);
	mr->odp_queued = false;
	spin_unlock_irqrestore(&mr->lock, flags);
	vhca_mr_put(mr);
}

/*
 * Entries [first, last] of pages[]: 0 when all are resident, 1 when one
 * is not, -EFAULT when one is marked failed (every mark is consumed).
 */
static int vhca_odp_pages_resident(struct page **pages, size_t first,
				   size_t last)
{
	bool missing = false, failed = false;
	size_t i;

	for (i = first; i <= last; i++) {
		if (pages[i] == VHCA_ODP_FAILED) {
			pages[i] = NULL;
			failed = true;
		} else if (!pages[i]) {
			missing = true;
		}
	}
	return failed ? -EFAULT : missing;
}

/* vhca_odp_pages_resident() over the chunks of an implicit MR's range. */
static int vhca_odp_chunks_resident(struct vhca_mr *mr, u64 iova, u32 len)
{
	bool missing = false, failed = false;
	unsigned long index;
	struct page **pages;
	u64 n;
	int ret;

	for (; len; iova += n, len -= n) {
		n = min_t(u64, len, vhca_odp_chunk_left(iova));
		index = iova >> VHCA_ODP_CHUNK_SHIFT;
		pages = vhca_odp_chunk_pages(mr, iova);
		if (pages) {
			ret = vhca_odp_pages_resident(pages,
						      vhca_odp_chunk_index(iova),
						      vhca_odp_chunk_index(iova + n - 1));
		} else if (mr->odp_failed == index + 1) {
			mr->odp_failed = 0;
			ret = -EFAULT;
		} else {
			ret = 1;
		}
		failed |= ret < 0;
		missing |= ret > 0;
	}
	return failed ? -EFAULT : missing;
}

int vhca_odp_resident(struct vhca_mr *mr, u64 iova, u32 len)
{
	int ret;

	lockdep_assert_held(&mr->lock);
	if (mr->odp_implicit)
		ret = vhca_odp_chunks_resident(mr, iova, len);
	else
		ret = vhca_odp_pages_resident(mr->pages,
					      vhca_odp_index(mr, iova),
					      vhca_odp_index(mr, iova + len - 1));
	if (ret <= 0)
		return ret;
	/* The caller's reference keeps the MR; the work item takes its own. */
	if (!mr->odp_queued) {
		mr->odp_queued = true;
		mr->odp_va = iova;
		mr->odp_len = len;
		refcount_inc(&mr->ref);
		queue_work(vhca_odp_wq, &mr->odp_work);
	}
	return -EAGAIN;
}

int vhca_odp_init(struct vhca_dev *vdev, struct vhca_mr *mr, u64 start,
		  u64 length, int access)
{
	struct ib_umem_odp *odp;
	u64 end;

	if (check_add_overflow(start, length, &end) || end > U64_MAX - PAGE_SIZE)
		return -EINVAL;
	mr->npages = (ALIGN(end, PAGE_SIZE) - ALIGN_DOWN(start, PAGE_SIZE)) >>
		     PAGE_SHIFT;
	mr->page_offset = start & ~PAGE_MASK;
	/* The length is the user's: fail quietly, as -ENOMEM. */
	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages),
			     GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!mr->pages)
		return -ENOMEM;
	spin_lock_init(&mr->lock);
	INIT_WORK(&mr->odp_work, vhca_odp_work);
	/* HUGETLB is a hint: pages[] holds base pages whatever backs them. */
	odp = ib_umem_odp_get(&vdev->ibdev, start, length,
			      access & ~IB_ACCESS_HUGETLB, &vhca_odp_ops);
	if (IS_ERR(odp))
		return PTR_ERR(odp);
	mr->odp = odp;
	mr->umem = &odp->umem;
	mutex_lock(&odp->umem_mutex);
	odp->private = mr;
	mutex_unlock(&odp->umem_mutex);
	return 0;
}

int vhca_odp_init_implicit(struct vhca_dev *vdev, struct vhca_mr *mr,
			   int access)
{
	struct ib_umem_odp *odp;
	struct mm_struct *mm;

	spin_lock_init(&mr->lock);
	INIT_WORK(&mr->odp_work, vhca_odp_work);
	xa_init(&mr->odp_children);
	mutex_init(&mr->odp_mutex);
	/* The children have base pages too: HUGETLB is refused here. */
	odp = ib_umem_odp_alloc_implicit(&vdev->ibdev,
					 access & ~IB_ACCESS_HUGETLB);
	if (IS_ERR(odp))
		return PTR_ERR(odp);
	mr->odp = odp;
	mr->umem = &odp->umem;
	mm = odp->umem.owning_mm;
	/* The implicit umem holds no reference: the children need the mm. */
	mmgrab(mm);
	mr->odp_memcg = get_mem_cgroup_from_mm(mm);
	mr->iova = 0;
	mr->length = mm->task_size;
	mr->odp_implicit = true;
	return 0;
}

void vhca_odp_release(struct vhca_mr *mr)
{
	struct vhca_odp_child *child;
	unsigned long index;

	/* Each notifier is gone, and no invalidation runs, once released. */
	xa_for_each(&mr->odp_children, index, child) {
		ib_umem_odp_release(child->odp);
		kvfree(child);
	}
	xa_destroy(&mr->odp_children);
	mem_cgroup_put(mr->odp_memcg);
	mmdrop(mr->odp->umem.owning_mm);
}

/*
 * An asynchronous prefetch: the SGEs of one advise_mr call, each with a
 * reference on its MR, so that dereg_mr waits for the work item.
 */
struct vhca_odp_prefetch {
	struct work_struct work;
	struct vhca_dev *vdev;
	bool fault;
	u32 num_sge;		/* those referenced */
	struct {
		struct vhca_mr *mr;
		u64 addr;
		u32 length;
	} sge[];
};

/*
 * The MR of an SGE of advise_mr, referenced, if pd may prefetch the SGE
 * through it with access; else the error.
 */
static struct vhca_mr *vhca_odp_prefetch_mr(struct vhca_dev *vdev,
					    const struct ib_pd *pd,
					    const struct ib_sge *sge,
					    int access)
{
	struct vhca_mr *mr = vhca_mr_get(vdev, sge->lkey);
	int err;

	if (!mr)
		err = -ENOENT;
	else if (!mr->odp)
		err = -EINVAL;
	else
		err = vhca_mr_check(mr, sge->lkey, pd, sge->addr, sge->length,
				    access);
	if (!err)
		return mr;
	if (mr)
		vhca_mr_put(mr);
	ibdev_dbg(&vdev->ibdev, "advise_mr: lkey %#x %#llx+%u: %d\n",
		  sge->lkey, sge->addr, sge->length, err);
	return ERR_PTR(err);
}

static void vhca_odp_prefetch_free(struct vhca_odp_prefetch *pf)
{
	u32 i;

	for (i = 0; i < pf->num_sge; i++)
		vhca_mr_put(pf->sge[i].mr);
	kvfree(pf);
}

/*
 * Fault [addr, addr + length) of mr a step at a time, until a fault fails
 * (the rest of the SGE is left: a hint) or dereg_mr begins.
 */
static void vhca_odp_prefetch_sge(struct vhca_dev *vdev, struct vhca_mr *mr,
				  u64 addr, u64 length, bool fault)
{
	u64 n;
	int err;

	for (; length; addr += n, length -= n) {
		if (!vhca_mr_published(vdev, mr))
			return;
		n = min_t(u64, length, VHCA_ODP_PREFETCH_STEP);
		err = vhca_odp_fault(mr, addr, n, fault);
		if (err) {
			ibdev_dbg(&vdev->ibdev,
				  "advise_mr: key %#x %#llx+%llu: %d\n",
				  mr->ibmr.lkey, addr, n, err);
			return;
		}
		cond_resched();
	}
}

static void vhca_odp_prefetch_work(struct work_struct *work)
{
	struct vhca_odp_prefetch *pf =
		container_of(work, struct vhca_odp_prefetch, work);
	struct vhca_dev *vdev = pf->vdev;
	u32 i;

	for (i = 0; i < pf->num_sge; i++)
		vhca_odp_prefetch_sge(vdev, pf->sge[i].mr, pf->sge[i].addr,
				      pf->sge[i].length, pf->fault);
	/* The MRs' references keep the device: its count goes first. */
	atomic_dec(&vdev->odp_prefetches);
	vhca_odp_prefetch_free(pf);
}

/* The prefetches of advise_mr with FLUSH, in order, before it returns. */
static int vhca_odp_prefetch_sync(struct vhca_dev *vdev,
				  const struct ib_pd *pd,
				  const struct ib_sge *sg_list, u32 num_sge,
				  int access, bool fault)
{
	struct vhca_mr *mr;
	u32 i;
	int err;

	for (i = 0; i < num_sge; i++) {
		mr = vhca_odp_prefetch_mr(vdev, pd, &sg_list[i], access);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		err = vhca_odp_fault(mr, sg_list[i].addr, sg_list[i].length,
				     fault);
		vhca_mr_put(mr);
		if (err) {
			ibdev_dbg(&vdev->ibdev,
				  "advise_mr: lkey %#x %#llx+%u: %d\n",
				  sg_list[i].lkey, sg_list[i].addr,
				  sg_list[i].length, err);
			return err;
		}
	}
	return 0;
}

/*
 * The prefetches of advise_mr without FLUSH: every SGE checked now, the
 * faults in a work item.  Beyond VHCA_ODP_PREFETCH_MAX of them on the
 * device, the hint is dropped and counted.
 */
static int vhca_odp_prefetch_async(struct vhca_dev *vdev,
				   const struct ib_pd *pd,
				   const struct ib_sge *sg_list, u32 num_sge,
				   int access, bool fault)
{
	struct vhca_odp_prefetch *pf;
	struct vhca_mr *mr;
	int err = 0;

	/* num_sge: 4095 at most, the core's attribute length. */
	pf = kvzalloc(struct_size(pf, sge, num_sge), GFP_KERNEL_ACCOUNT);
	if (!pf)
		return -ENOMEM;
	INIT_WORK(&pf->work, vhca_odp_prefetch_work);
	pf->vdev = vdev;
	pf->fault = fault;
	for (; pf->num_sge < num_sge; pf->num_sge++) {
		mr = vhca_odp_prefetch_mr(vdev, pd, &sg_list[pf->num_sge],
					  access);
		if (IS_ERR(mr)) {
			err = PTR_ERR(mr);
			goto out_free;
		}
		pf->sge[pf->num_sge].mr = mr;
		pf->sge[pf->num_sge].addr = sg_list[pf->num_sge].addr;
		pf->sge[pf->num_sge].length = sg_list[pf->num_sge].length;
	}
	if (!atomic_add_unless(&vdev->odp_prefetches, 1,
			       VHCA_ODP_PREFETCH_MAX)) {
		atomic64_inc(&vdev->counters[VHCA_CNT_ODP_PREFETCH_DROPS]);
		goto out_free;
	}
	queue_work(vhca_odp_wq, &pf->work);
	return 0;

out_free:
	vhca_odp_prefetch_free(pf);
	return err;
}

int vhca_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		   u32 flags, struct ib_sge *sg_list, u32 num_sge,
		   struct uverbs_attr_bundle *attrs)
{
	struct vhca_dev *vdev = to_vdev(ibpd->device);
	bool fault = advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	int access = 0;

	switch (advice) {
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE:
		access = IB_ACCESS_LOCAL_WRITE;
		break;
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH:
	case IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT:
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (flags & IB_UVERBS_ADVISE_MR_FLAG_FLUSH)
		return vhca_odp_prefetch_sync(vdev, ibpd, sg_list, num_sge,
					      access, fault);
	return vhca_odp_prefetch_async(vdev, ibpd, sg_list, num_sge, access,
				       fault);
}
