// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * User contexts of vhca: each gets pairs of a doorbell area (user
 * read-write) and a status area (user read-only) of its own, the first
 * with the context and the others as its objects need them
 * (vhca_recs_alloc()), in DMA-coherent memory mapped through the
 * rdma_user_mmap_entry API.
 */
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/vhca-abi.h>

#include "vhca.h"

static unsigned int uctx_coherent_mb = VHCA_UCTX_COHERENT_MB;
module_param(uctx_coherent_mb, uint, 0644);
MODULE_PARM_DESC(uctx_coherent_mb,
		 "MiB of coherent memory one user context may map, its destroyed objects' rings still mapped included; read when the context is allocated (default 256)");

/*
 * Coherent memory for one context, offered to it through mmap: charged
 * to the caller's memory cgroup and to the context's quota.
 */
struct vhca_mmap *vhca_mmap_create(struct vhca_ucontext *uctx, size_t size,
				   bool writable)
{
	struct vhca_dev *vdev = to_vdev(uctx->ibuc.device);
	struct vhca_mmap *m;
	int err;

	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return ERR_PTR(-ENOMEM);
	m->vdev = vdev;
	m->size = size;
	m->writable = writable;
	m->owner = m;
	refcount_set(&m->holds, 1);
	m->cpu_addr = vhca_alloc_coherent_user(&vdev->coh, size,
					       GFP_KERNEL_ACCOUNT, &m->dma,
					       &uctx->quota);
	if (!m->cpu_addr) {
		err = -ENOMEM;
		goto err_free;
	}
	err = rdma_user_mmap_entry_insert(&uctx->ibuc, &m->rdma,
					  PAGE_ALIGN(size));
	if (err)
		goto err_coherent;
	return m;

err_coherent:
	vhca_free_coherent(&vdev->coh, size, m->cpu_addr, m->dma);
err_free:
	kfree(m);
	return ERR_PTR(err);
}

static_assert(VHCA_UCTX_AREAS <= VHCA_UCTX_MAX_AREAS);

/* Every pair of areas the context has; the pages go in mmap_free. */
static void vhca_uctx_areas_remove(struct vhca_ucontext *uctx)
{
	struct vhca_uctx_area *area;

	for (area = uctx->areas; area < uctx->areas + VHCA_UCTX_AREAS; area++) {
		if (!area->db)
			continue;
		rdma_user_mmap_entry_remove(&area->status->rdma);
		rdma_user_mmap_entry_remove(&area->db->rdma);
	}
}

/*
 * Where the context's first pair of areas is, for ALLOC_UCONTEXT and
 * QUERY_CONTEXT.
 */
static void vhca_ucontext_resp(const struct vhca_ucontext *uctx,
			       struct vhca_alloc_ucontext_resp *resp)
{
	const struct vhca_uctx_area *area0 = &uctx->areas[0];

	*resp = (struct vhca_alloc_ucontext_resp){
		.db_mmap_offset = rdma_user_mmap_get_offset(&area0->db->rdma),
		.status_mmap_offset =
			rdma_user_mmap_get_offset(&area0->status->rdma),
		.db_size = VHCA_UCTX_AREA,
		.status_size = VHCA_UCTX_AREA,
	};
}

int vhca_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct vhca_ucontext *uctx = to_vuctx(ibuc);
	struct vhca_alloc_ucontext_resp resp = {};
	struct vhca_uctx_area *area0 = &uctx->areas[0];
	int err;

	if (vhca_udata_check(ibuc->device, udata, "alloc_ucontext"))
		return -EINVAL;

	ida_init(&uctx->recs);
	vhca_coherent_quota_init(&uctx->quota, VHCA_UCTX_BUFS,
				 (size_t)READ_ONCE(uctx_coherent_mb) << 20);
	area0->db = vhca_mmap_create(uctx, VHCA_UCTX_AREA, true);
	if (IS_ERR(area0->db))
		return PTR_ERR(area0->db);
	area0->status = vhca_mmap_create(uctx, VHCA_UCTX_AREA, false);
	if (IS_ERR(area0->status)) {
		err = PTR_ERR(area0->status);
		rdma_user_mmap_entry_remove(&area0->db->rdma);
		return err;
	}

	vhca_ucontext_resp(uctx, &resp);
	err = vhca_copy_resp(udata, &resp, sizeof(resp));
	if (err) {
		vhca_uctx_areas_remove(uctx);
		return err;
	}
	mutex_init(&uctx->areas_lock);
	return 0;
}

/*
 * ibv_import_device: a process sharing the command fd asks where the
 * context's areas are, to map them itself.
 */
int vhca_query_ucontext(struct ib_ucontext *ibuc,
			struct uverbs_attr_bundle *attrs)
{
	struct vhca_alloc_ucontext_resp resp;

	vhca_ucontext_resp(to_vuctx(ibuc), &resp);
	return uverbs_copy_to(attrs, VHCA_IB_ATTR_QUERY_CONTEXT_RESP_UCTX,
			      &resp, sizeof(resp));
}

/* The pages go in mmap_free, once no process maps them any more. */
void vhca_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct vhca_ucontext *uctx = to_vuctx(ibuc);

	vhca_uctx_areas_remove(uctx);
	mutex_destroy(&uctx->areas_lock);
	ida_destroy(&uctx->recs);
}

/*
 * Device removal with the context still open: the core has already
 * destroyed its objects and zapped its mappings (they were made with
 * rdma_user_mmap_io()); the context holds nothing else of the device.
 */
void vhca_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * Map one of the context's own entries: shared, exactly its size, and never
 * writable when the entry is read-only (VM_MAYWRITE goes too, so mprotect()
 * cannot add write access later).  Not inherited by fork() (VM_DONTCOPY): a
 * child may not use its parent's queues (ibv_fork_init(3)), and one that
 * wrote them would corrupt the parent's.  It also keeps fork() out of the
 * core's rdma_umap_open(), whose disassociation_lock taken under the new
 * mm's mmap_lock lockdep reports against uverbs_user_mmap_disassociate()
 * taking mmap_lock under it (6.12; a trylock of hw_destroy_rwsem keeps the
 * two apart, which lockdep cannot see).
 */
int vhca_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	struct vhca_mmap *m;
	int err;

	entry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!entry) {
		ibdev_dbg(ibuc->device,
			  "mmap: no entry of %lu bytes at offset %#lx (shared %d)\n",
			  vma->vm_end - vma->vm_start, vma->vm_pgoff << PAGE_SHIFT,
			  !!(vma->vm_flags & VM_SHARED));
		return -EINVAL;
	}
	m = container_of(entry, struct vhca_mmap, rdma);

	if (!m->writable) {
		if (vma->vm_flags & VM_WRITE) {
			ibdev_dbg(ibuc->device,
				  "mmap: writable mapping of a read-only page\n");
			err = -EPERM;
			goto out;
		}
		vm_flags_clear(vma, VM_MAYWRITE);
	}
	vm_flags_set(vma, VM_DONTCOPY);
	err = rdma_user_mmap_io(ibuc, vma, PHYS_PFN(virt_to_phys(m->cpu_addr)),
				entry->npages << PAGE_SHIFT, vma->vm_page_prot,
				entry);
out:
	rdma_user_mmap_entry_put(entry);
	return err;
}

/* The last of a destroyed object's rings gives back its count. */
void vhca_mmap_free(struct rdma_user_mmap_entry *entry)
{
	struct vhca_mmap *m = container_of(entry, struct vhca_mmap, rdma);
	struct vhca_mmap *owner = m->owner;

	vhca_free_coherent(&m->vdev->coh, m->size, m->cpu_addr, m->dma);
	if (m != owner)
		kfree(m);
	if (refcount_dec_and_test(&owner->holds)) {
		if (owner->count)
			atomic_dec(owner->count);
		kfree(owner);
	}
}
