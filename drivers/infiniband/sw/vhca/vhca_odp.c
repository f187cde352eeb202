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
 */
#include <linux/hmm.h>
#include <linux/mmu_notifier.h>
#include <linux/slab.h>
#include <rdma/ib_umem_odp.h>

#include "vhca.h"

/* The index in pages[] of byte iova of mr. */
static size_t vhca_odp_index(const struct vhca_mr *mr, u64 iova)
{
	return (iova - mr->iova + mr->page_offset) >> PAGE_SHIFT;
}

/*
 * The MMU notifier: the range is about to change (unmapped, moved,
 * swapped out, write-protected).  The pages leave pages[] under the MR's
 * lock, so no copy is under way when the core unmaps them.
 */
static bool vhca_odp_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range,
				unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	unsigned long start, end, flags;
	struct vhca_mr *mr;
	size_t i, last;

	if (!mmu_notifier_range_blockable(range))
		return false;
	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	start = max(range->start, ib_umem_start(odp));
	end = min(range->end, ib_umem_end(odp));
	mr = odp->private;
	if (mr && start < end) {
		last = (end - 1 - ib_umem_start(odp)) >> PAGE_SHIFT;
		spin_lock_irqsave(&mr->lock, flags);
		for (i = (start - ib_umem_start(odp)) >> PAGE_SHIFT; i <= last;
		     i++)
			mr->pages[i] = NULL;
		spin_unlock_irqrestore(&mr->lock, flags);
	}
	if (start < end)
		ib_umem_odp_unmap_dma_pages(odp, start, end);
	mutex_unlock(&odp->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops vhca_odp_ops = {
	.invalidate = vhca_odp_invalidate,
};

int vhca_odp_fault(struct vhca_mr *mr, u64 iova, u64 len, bool fault)
{
	struct ib_umem_odp *odp = mr->odp;
	u64 off = iova - mr->iova + mr->page_offset;
	bool writable = mr->umem->writable;
	unsigned long *pfns, flags;
	size_t i, last;
	int ret;

	if (!len)
		return 0;
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
		mr->pages[i] = hmm_pfn_to_page(pfns[i]);
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	mutex_unlock(&odp->umem_mutex);
	return 0;
}

/*
 * The fault an access asked for, with what follows it within the MR.
 * When that fails, each page of the access's own range is tried alone:
 * those that cannot be brought in (no mapping, no access, the process
 * gone) are marked, so that the access fails instead of waiting for
 * ever; a busy range or a lack of memory marks nothing.
 */
static void vhca_odp_fault_access(struct vhca_mr *mr, u64 iova, u32 len)
{
	u64 ahead = min_t(u64, max_t(u64, len, VHCA_ODP_AHEAD),
			  mr->iova + mr->length - iova);
	u64 va, end = iova + len, n;
	unsigned long flags;
	size_t i;
	int err;

	if (!vhca_odp_fault(mr, iova, ahead, true))
		return;
	for (va = iova; va < end; va += n) {
		n = min_t(u64, end - va, PAGE_SIZE - ((va - mr->iova +
						       mr->page_offset) &
						      ~PAGE_MASK));
		err = vhca_odp_fault(mr, va, n, true);
		if (!err || err == -EBUSY || err == -ENOMEM)
			continue;
		i = vhca_odp_index(mr, va);
		spin_lock_irqsave(&mr->lock, flags);
		if (!mr->pages[i])
			mr->pages[i] = VHCA_ODP_FAILED;
		spin_unlock_irqrestore(&mr->lock, flags);
	}
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

int vhca_odp_resident(struct vhca_mr *mr, u64 iova, u32 len)
{
	size_t i, last = vhca_odp_index(mr, iova + len - 1);
	bool missing = false, failed = false;

	lockdep_assert_held(&mr->lock);
	for (i = vhca_odp_index(mr, iova); i <= last; i++) {
		if (mr->pages[i] == VHCA_ODP_FAILED) {
			mr->pages[i] = NULL;
			failed = true;
		} else if (!mr->pages[i]) {
			missing = true;
		}
	}
	if (failed)
		return -EFAULT;
	if (!missing)
		return 0;
	/* The caller's reference keeps the MR; the work item takes its own. */
	if (!mr->odp_queued) {
		mr->odp_queued = true;
		mr->odp_va = iova;
		mr->odp_len = len;
		refcount_inc(&mr->ref);
		queue_work(system_unbound_wq, &mr->odp_work);
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

int vhca_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		   u32 flags, struct ib_sge *sg_list, u32 num_sge,
		   struct uverbs_attr_bundle *attrs)
{
	struct vhca_dev *vdev = to_vdev(ibpd->device);
	bool fault = advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	int access = 0;
	struct vhca_mr *mr;
	u32 i;
	int err;

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
	for (i = 0; i < num_sge; i++) {
		mr = vhca_mr_get(vdev, sg_list[i].lkey);
		if (!mr)
			return -ENOENT;
		err = !mr->odp ? -EINVAL :
		      vhca_mr_check(mr, sg_list[i].lkey, ibpd, sg_list[i].addr,
				    sg_list[i].length, access);
		if (!err)
			err = vhca_odp_fault(mr, sg_list[i].addr,
					     sg_list[i].length, fault);
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
