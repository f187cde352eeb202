// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca: device memory (ibv_alloc_dm, ibv_memcpy_to_dm/from_dm,
 * ibv_reg_dm_mr).
 *
 * The device's memory is coherent memory of the kernel driver, which the
 * provider maps at allocation (VHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET):
 * the copies are plain memory copies through that mapping, no system call.
 * The commands are the core's ioctl methods and the driver's DM query
 * (for ibv_import_dm), issued with vhca_ioctl(), so that the provider
 * needs no more of libibverbs' private ABI for them.  Functions returning
 * a pointer set errno on failure; the others return 0 or a positive errno
 * value.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rdma/ib_user_ioctl_cmds.h>

#include "vhca.h"

struct vhca_dm {
	struct ibv_dm ibdm;
	void *addr;		/* the mapping, of whole pages */
	uint64_t length;	/* what was allocated: the copies' bound */
};

static struct vhca_dm *to_vdm(struct ibv_dm *ibdm)
{
	return (struct vhca_dm *)ibdm;
}

/*
 * Destroying an object of a device that is gone fails with EIO, and the
 * kernel has destroyed the object already: what is left is user memory.
 */
static int vhca_free_dm_handle(struct ibv_context *ibctx, uint32_t handle)
{
	struct ib_uverbs_attr attr =
		vhca_attr_obj(UVERBS_ATTR_FREE_DM_HANDLE, handle);
	int err = vhca_ioctl(ibctx, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_FREE,
			     &attr, 1);

	return err == EIO ? 0 : err;
}

/*
 * Whether [offset, offset + length) lies in the allocation, both multiples
 * of 4 bytes, as device memory on hardware HCAs requires (mlx5's): a
 * program that copies correctly on vhca copies correctly there.
 */
static bool vhca_dm_range_ok(const struct vhca_dm *dm, uint64_t offset,
			     size_t length)
{
	return !((offset | length) & 3) && offset <= dm->length &&
	       length <= dm->length - offset;
}

static int vhca_memcpy_to_dm(struct ibv_dm *ibdm, uint64_t dm_offset,
			     const void *host_addr, size_t length)
{
	struct vhca_dm *dm = to_vdm(ibdm);

	if (!vhca_dm_range_ok(dm, dm_offset, length))
		return EINVAL;
	memcpy((uint8_t *)dm->addr + dm_offset, host_addr, length);
	return 0;
}

static int vhca_memcpy_from_dm(void *host_addr, struct ibv_dm *ibdm,
			       uint64_t dm_offset, size_t length)
{
	struct vhca_dm *dm = to_vdm(ibdm);

	if (!vhca_dm_range_ok(dm, dm_offset, length))
		return EINVAL;
	memcpy(host_addr, (const uint8_t *)dm->addr + dm_offset, length);
	return 0;
}

/* Maps @length bytes of DM @handle at @offset of the command fd into @dm. */
static int vhca_dm_map(struct vhca_dm *dm, struct ibv_context *ibctx,
		       uint32_t handle, uint64_t offset, uint64_t length)
{
	void *p = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED,
		       ibctx->cmd_fd, offset);

	if (p == MAP_FAILED)
		return errno;
	dm->addr = p;
	dm->length = length;
	dm->ibdm.context = ibctx;
	dm->ibdm.memcpy_to_dm = vhca_memcpy_to_dm;
	dm->ibdm.memcpy_from_dm = vhca_memcpy_from_dm;
	dm->ibdm.handle = handle;
	dm->ibdm.comp_mask = IBV_DM_MASK_HANDLE;
	return 0;
}

/* No comp_mask bit is defined: any is refused. */
struct ibv_dm *vhca_alloc_dm(struct ibv_context *ibctx,
			     struct ibv_alloc_dm_attr *attr)
{
	uint64_t mmap_offset = 0;
	struct ib_uverbs_attr attrs[] = {
		vhca_attr_obj(UVERBS_ATTR_ALLOC_DM_HANDLE, 0),
		vhca_attr_in(UVERBS_ATTR_ALLOC_DM_LENGTH, sizeof(uint64_t),
			     attr->length),
		vhca_attr_in(UVERBS_ATTR_ALLOC_DM_ALIGNMENT, sizeof(uint32_t),
			     attr->log_align_req),
		vhca_attr_out(VHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET,
			      &mmap_offset, sizeof(mmap_offset)),
	};
	struct vhca_dm *dm;
	int err;

	if (attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return NULL;
	err = vhca_ioctl(ibctx, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC,
			 attrs, sizeof(attrs) / sizeof(attrs[0]));
	if (err)
		goto err_free;

	err = vhca_dm_map(dm, ibctx, attrs[0].data, mmap_offset, attr->length);
	if (err) {
		vhca_free_dm_handle(ibctx, attrs[0].data);
		goto err_free;
	}
	return &dm->ibdm;

err_free:
	free(dm);
	errno = err;
	return NULL;
}

/*
 * ibv_import_dm: the driver's query says where a DM of the context is
 * mapped and how long it is; this process maps it too.
 */
struct ibv_dm *vhca_import_dm(struct ibv_context *ibctx, uint32_t dm_handle)
{
	uint64_t mmap_offset = 0, length = 0;
	struct ib_uverbs_attr attrs[] = {
		vhca_attr_obj(VHCA_IB_ATTR_QUERY_DM_REQ_HANDLE, dm_handle),
		vhca_attr_out(VHCA_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET,
			      &mmap_offset, sizeof(mmap_offset)),
		vhca_attr_out(VHCA_IB_ATTR_QUERY_DM_RESP_LENGTH, &length,
			      sizeof(length)),
	};
	struct vhca_dm *dm;
	int err;

	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return NULL;
	err = vhca_ioctl(ibctx, UVERBS_OBJECT_DM, VHCA_IB_METHOD_DM_QUERY,
			 attrs, sizeof(attrs) / sizeof(attrs[0]));
	if (!err && (!length || length > SIZE_MAX))
		err = EPROTO;
	if (!err)
		err = vhca_dm_map(dm, ibctx, dm_handle, mmap_offset, length);
	if (err) {
		free(dm);
		errno = err;
		return NULL;
	}
	return &dm->ibdm;
}

/* The DM stays: this process only stops mapping it. */
void vhca_unimport_dm(struct ibv_dm *ibdm)
{
	struct vhca_dm *dm = to_vdm(ibdm);

	munmap(dm->addr, dm->length);
	free(dm);
}

int vhca_free_dm(struct ibv_dm *ibdm)
{
	struct vhca_dm *dm = to_vdm(ibdm);
	int err = vhca_free_dm_handle(ibdm->context, ibdm->handle);

	if (err)
		return err;
	munmap(dm->addr, dm->length);
	free(dm);
	return 0;
}

/* The kernel checks the range and the access flags (ZERO_BASED needed). */
struct ibv_mr *vhca_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			      uint64_t dm_offset, size_t length,
			      unsigned int access)
{
	uint32_t lkey = 0, rkey = 0;
	struct ib_uverbs_attr attrs[] = {
		vhca_attr_obj(UVERBS_ATTR_REG_DM_MR_HANDLE, 0),
		vhca_attr_in(UVERBS_ATTR_REG_DM_MR_OFFSET, sizeof(uint64_t),
			     dm_offset),
		vhca_attr_in(UVERBS_ATTR_REG_DM_MR_LENGTH, sizeof(uint64_t),
			     length),
		vhca_attr_obj(UVERBS_ATTR_REG_DM_MR_PD_HANDLE, pd->handle),
		vhca_attr_in(UVERBS_ATTR_REG_DM_MR_ACCESS_FLAGS,
			     sizeof(uint32_t), access),
		vhca_attr_obj(UVERBS_ATTR_REG_DM_MR_DM_HANDLE, ibdm->handle),
		vhca_attr_out(UVERBS_ATTR_REG_DM_MR_RESP_LKEY, &lkey,
			      sizeof(lkey)),
		vhca_attr_out(UVERBS_ATTR_REG_DM_MR_RESP_RKEY, &rkey,
			      sizeof(rkey)),
	};
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	err = vhca_ioctl(pd->context, UVERBS_OBJECT_MR,
			 UVERBS_METHOD_DM_MR_REG, attrs,
			 sizeof(attrs) / sizeof(attrs[0]));
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	/* Zero-based: the MR's addresses are offsets into it. */
	vmr->ibv_mr.context = pd->context;
	vmr->ibv_mr.pd = pd;
	vmr->ibv_mr.addr = NULL;
	vmr->ibv_mr.length = length;
	vmr->ibv_mr.handle = attrs[0].data;
	vmr->ibv_mr.lkey = lkey;
	vmr->ibv_mr.rkey = rkey;
	vmr->mr_type = IBV_MR_TYPE_MR;
	vmr->access = access;
	return &vmr->ibv_mr;
}
