// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Protection domains and memory regions of vhca: registration pins user
 * memory (ib_umem) and publishes the MR under its key in vdev->mr_xa, where
 * the engine finds it lock-free; deregistration waits for the engine to let
 * go of it.
 */
#include <linux/slab.h>
#include <rdma/ib_umem.h>

#include "vhca.h"

int vhca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibpd->device);

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen)) {
		ibdev_dbg(&vdev->ibdev, "alloc_pd: unknown request data\n");
		return -EINVAL;
	}
	if (atomic_inc_return(&vdev->n_pd) > VHCA_MAX_PD) {
		atomic_dec(&vdev->n_pd);
		ibdev_dbg(&vdev->ibdev, "alloc_pd: %u PDs exist already\n",
			  VHCA_MAX_PD);
		return -ENOMEM;
	}
	return 0;
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
	if (access & (IB_ZERO_BASED | IB_ACCESS_MW_BIND | IB_ACCESS_ON_DEMAND |
		      IB_ACCESS_FLUSH_GLOBAL | IB_ACCESS_FLUSH_PERSISTENT))
		return -EOPNOTSUPP;
	return 0;
}

int vhca_mr_check(const struct vhca_mr *mr, const struct ib_pd *pd, u64 iova,
		  u64 len, int access)
{
	u64 off;

	if (mr->pd != pd)
		return -EACCES;
	if (access & ~(mr->access & VHCA_MR_CHECK_ACCESS))
		return -EACCES;
	if (!len)
		return 0;
	if (iova + (len - 1) < iova)
		return -EINVAL;
	if (mr->dma)
		return 0;
	if (iova < mr->iova)
		return -EINVAL;
	off = iova - mr->iova;
	if (off >= mr->length || len > mr->length - off)
		return -EINVAL;
	return 0;
}

/* A new MR, counted against VHCA_MAX_MR; NULL beyond it or without memory. */
static struct vhca_mr *vhca_mr_alloc(struct vhca_dev *vdev,
				     struct ib_pd *ibpd, int access)
{
	struct vhca_mr *mr;

	if (atomic_inc_return(&vdev->n_mr) > VHCA_MAX_MR) {
		ibdev_dbg(&vdev->ibdev, "MR refused: %u exist already\n",
			  VHCA_MAX_MR);
		goto err_count;
	}
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
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

static void vhca_mr_free(struct vhca_dev *vdev, struct vhca_mr *mr)
{
	ib_umem_release(mr->umem);
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
	key = vdev->mr_key++;
	xa_unlock(&vdev->mr_xa);
	if (err)
		return err == -EBUSY ? -ENOMEM : err;

	mr->index = index;
	mr->ibmr.lkey = vhca_mr_key(index, key);
	mr->ibmr.rkey = mr->ibmr.lkey;
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
	if (mr && (mr->ibmr.lkey != key || !refcount_inc_not_zero(&mr->ref)))
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
static struct ib_mr *vhca_mr_register(struct vhca_dev *vdev,
				      struct vhca_mr *mr)
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

/* No new lookup finds mr after this; returns when the last user is gone. */
static void vhca_mr_unpublish(struct vhca_dev *vdev, struct vhca_mr *mr)
{
	xa_erase(&vdev->mr_xa, mr->index);
	vhca_mr_put(mr);
	wait_for_completion(&mr->released);
}

struct ib_mr *vhca_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct vhca_dev *vdev = to_vdev(ibpd->device);
	struct vhca_mr *mr;
	int err;

	err = vhca_mr_check_reg_access(access);
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

struct ib_mr *vhca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibpd->device);
	struct vhca_mr *mr;
	int err;

	err = vhca_mr_check_reg_access(access);
	if (err) {
		ibdev_dbg(&vdev->ibdev, "reg_mr: access %#x refused: %d\n",
			  access, err);
		return ERR_PTR(err);
	}
	if (!length || length > VHCA_MAX_MR_SIZE) {
		ibdev_dbg(&vdev->ibdev, "reg_mr: length %llu refused\n", length);
		return ERR_PTR(-EINVAL);
	}
	if (iova + (length - 1) < iova) {
		ibdev_dbg(&vdev->ibdev, "reg_mr: iova %#llx + length %llu wraps\n",
			  iova, length);
		return ERR_PTR(-EINVAL);
	}
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen)) {
		ibdev_dbg(&vdev->ibdev, "reg_mr: unknown request data\n");
		return ERR_PTR(-EINVAL);
	}

	mr = vhca_mr_alloc(vdev, ibpd, access);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->iova = iova;
	mr->length = length;
	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		ibdev_dbg(&vdev->ibdev, "reg_mr: cannot pin %#llx+%llu: %d\n",
			  start, length, err);
		mr->umem = NULL;
		vhca_mr_free(vdev, mr);
		return ERR_PTR(err);
	}
	return vhca_mr_register(vdev, mr);
}

int vhca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibmr->device);
	struct vhca_mr *mr = to_vmr(ibmr);

	vhca_mr_unpublish(vdev, mr);
	vhca_mr_free(vdev, mr);
	return 0;
}
