// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device memory of vhca (ibv_alloc_dm): the device's own DMA-coherent
 * memory, one page-rounded buffer per allocation, charged to the user
 * context's coherent quota and mapped into the process read-write through
 * the rdma_user_mmap_entry API, as the rings are.  The provider copies to
 * and from it through that mapping; an MR registered on a range of it
 * (reg_dm_mr, always zero-based) makes it the source and target of every
 * operation an MR takes.  The process may write the memory at any time,
 * also while the engine reads it: it holds data only, never the driver's.
 * A process sharing the command fd (ibv_import_dm) learns where to map it
 * from VHCA_IB_METHOD_DM_QUERY.  The file also holds the driver's other
 * ioctl methods and attributes, those of the imports.
 */
#include <rdma/ib_user_ioctl_cmds.h>

#define UVERBS_MODULE_NAME vhca_ib
#include <rdma/uverbs_named_ioctl.h>
#include <rdma/vhca-abi.h>

#include "vhca.h"

struct vhca_dm {
	struct ib_dm ibdm;
	struct vhca_mmap *mem;	/* freed by mmap_free, after the last unmap */
};

static struct vhca_dm *to_vdm(struct ib_dm *ibdm)
{
	return container_of(ibdm, struct vhca_dm, ibdm);
}

struct ib_dm *vhca_alloc_dm(struct ib_device *ibdev, struct ib_ucontext *ibuc,
			    struct ib_dm_alloc_attr *attr,
			    struct uverbs_attr_bundle *attrs)
{
	struct vhca_dm *dm;
	u64 offset;
	int err;

	if (!attr->length || attr->length > VHCA_MAX_DM_SIZE ||
	    attr->alignment > PAGE_SHIFT) {
		ibdev_dbg(ibdev, "alloc_dm: length %llu, log alignment %u refused\n",
			  attr->length, attr->alignment);
		return ERR_PTR(-EINVAL);
	}
	dm = kzalloc(sizeof(*dm), GFP_KERNEL_ACCOUNT);
	if (!dm)
		return ERR_PTR(-ENOMEM);
	/* Page-aligned: every alignment up to the page size. */
	dm->mem = vhca_mmap_create(to_vuctx(ibuc), attr->length, true);
	if (IS_ERR(dm->mem)) {
		err = PTR_ERR(dm->mem);
		ibdev_dbg(ibdev, "alloc_dm: no coherent memory for %llu bytes\n",
			  attr->length);
		goto err_free;
	}
	offset = rdma_user_mmap_get_offset(&dm->mem->rdma);
	err = uverbs_copy_to(attrs, VHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
			     &offset, sizeof(offset));
	if (err)
		goto err_mem;
	return &dm->ibdm;

err_mem:
	rdma_user_mmap_entry_remove(&dm->mem->rdma);
err_free:
	kfree(dm);
	return ERR_PTR(err);
}

/* The memory goes in mmap_free, once no process maps it any more. */
int vhca_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs)
{
	struct vhca_dm *dm = to_vdm(ibdm);

	rdma_user_mmap_entry_remove(&dm->mem->rdma);
	kfree(dm);
	return 0;
}

struct ib_mr *vhca_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			     struct ib_dm_mr_attr *attr,
			     struct uverbs_attr_bundle *attrs)
{
	struct vhca_mmap *mem = to_vdm(ibdm)->mem;

	return vhca_mr_reg_dm(to_vdev(ibpd->device), ibpd, mem->cpu_addr,
			      mem->size, attr->offset, attr->length,
			      attr->access_flags);
}

/* ibv_import_dm: where a DM of the context is mapped, and its length. */
static int
UVERBS_HANDLER(VHCA_IB_METHOD_DM_QUERY)(struct uverbs_attr_bundle *attrs)
{
	struct vhca_dm *dm = to_vdm(uverbs_attr_get_obj(attrs,
					VHCA_IB_ATTR_QUERY_DM_REQ_HANDLE));
	u64 offset = rdma_user_mmap_get_offset(&dm->mem->rdma);
	u64 length = dm->mem->size;
	int err;

	err = uverbs_copy_to(attrs, VHCA_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET,
			     &offset, sizeof(offset));
	if (err)
		return err;
	return uverbs_copy_to(attrs, VHCA_IB_ATTR_QUERY_DM_RESP_LENGTH,
			      &length, sizeof(length));
}

DECLARE_UVERBS_NAMED_METHOD(VHCA_IB_METHOD_DM_QUERY,
			    UVERBS_ATTR_IDR(VHCA_IB_ATTR_QUERY_DM_REQ_HANDLE,
					    UVERBS_OBJECT_DM,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(VHCA_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET,
						UVERBS_ATTR_TYPE(u64),
						UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(VHCA_IB_ATTR_QUERY_DM_RESP_LENGTH,
						UVERBS_ATTR_TYPE(u64),
						UA_MANDATORY));

ADD_UVERBS_METHODS(vhca_dm_methods, UVERBS_OBJECT_DM,
		   &UVERBS_METHOD(VHCA_IB_METHOD_DM_QUERY));

ADD_UVERBS_ATTRIBUTES_SIMPLE(vhca_dm_alloc_attrs, UVERBS_OBJECT_DM,
			     UVERBS_METHOD_DM_ALLOC,
			     UVERBS_ATTR_PTR_OUT(VHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
						 UVERBS_ATTR_TYPE(u64),
						 UA_MANDATORY));

/* ibv_import_pd: the core has checked that the handle names a PD. */
static int
UVERBS_HANDLER(VHCA_IB_METHOD_PD_QUERY)(struct uverbs_attr_bundle *attrs)
{
	return 0;
}

DECLARE_UVERBS_NAMED_METHOD(VHCA_IB_METHOD_PD_QUERY,
			    UVERBS_ATTR_IDR(VHCA_IB_ATTR_QUERY_PD_HANDLE,
					    UVERBS_OBJECT_PD,
					    UVERBS_ACCESS_READ, UA_MANDATORY));

ADD_UVERBS_METHODS(vhca_pd_methods, UVERBS_OBJECT_PD,
		   &UVERBS_METHOD(VHCA_IB_METHOD_PD_QUERY));

/* query_ucontext's answer (vhca_ucontext.c), for ibv_import_device. */
ADD_UVERBS_ATTRIBUTES_SIMPLE(vhca_query_context_attrs, UVERBS_OBJECT_DEVICE,
			     UVERBS_METHOD_QUERY_CONTEXT,
			     UVERBS_ATTR_PTR_OUT(VHCA_IB_ATTR_QUERY_CONTEXT_RESP_UCTX,
						 UVERBS_ATTR_STRUCT(struct vhca_alloc_ucontext_resp,
								    status_size),
						 UA_MANDATORY));

const struct uapi_definition vhca_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &vhca_dm_alloc_attrs),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &vhca_dm_methods),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_PD, &vhca_pd_methods),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DEVICE,
				&vhca_query_context_attrs),
	{},
};
