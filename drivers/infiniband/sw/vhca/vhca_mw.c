// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory windows of vhca, and what a remote key reaches: a window is an
 * MR of another kind in the same key space (struct vhca_mr, vhca_mr.c),
 * bound to a user MR by the engine's BIND_MW or by ibv_bind_mw, and
 * invalidated by LOCAL_INV or a SEND with Invalidate, which for a kernel
 * QP may name a fast MR instead.  Remote accesses reach a window's MR
 * through the window's checks here; the copies of vhca_mr.c follow the
 * window to its MR under the window's lock.
 */
#include "vhca.h"

/* A window's check for an access by QP qpn, of PD pd; its lock held. */
static int vhca_mw_check_locked(const struct vhca_mr *win, u32 key,
				const struct ib_pd *pd, u32 qpn, u64 iova,
				u64 len, int access)
{
	struct vhca_mr *mr = win->mw_mr;

	if (win->state != VHCA_MR_VALID || win->key != key || !mr)
		return -EACCES;
	if (win->pd != pd ||
	    (win->mw_type == IB_MW_TYPE_2 && win->mw_qpn != qpn))
		return -EACCES;
	if (access & ~(win->access & VHCA_MR_CHECK_ACCESS))
		return -EACCES;
	if (!vhca_mr_in_bounds(win, iova, len))
		return -EINVAL;
	/*
	 * The MR: a user MR (no lock of its own), checked as for a local
	 * access.
	 */
	return vhca_mr_check(mr, mr->ibmr.lkey, mr->pd, iova, len,
			     access & (IB_ACCESS_REMOTE_WRITE |
				       IB_ACCESS_REMOTE_ATOMIC) ?
			     IB_ACCESS_LOCAL_WRITE : 0);
}

int vhca_mr_check_remote(struct vhca_mr *mr, u32 key, const struct ib_qp *qp,
			 u64 iova, u64 len, int access)
{
	return vhca_mr_check_remote_pd(mr, key, qp->pd, qp->qp_num, iova, len,
				       access);
}

int vhca_mr_check_remote_pd(struct vhca_mr *mr, u32 key,
			    const struct ib_pd *pd, u32 qpn, u64 iova,
			    u64 len, int access)
{
	unsigned long flags;
	int err;

	if (!vhca_mr_is_mw(mr))
		return vhca_mr_check(mr, key, pd, iova, len, access);
	spin_lock_irqsave(&mr->lock, flags);
	err = vhca_mw_check_locked(mr, key, pd, qpn, iova, len, access);
	spin_unlock_irqrestore(&mr->lock, flags);
	return err;
}

/* Unbind a window: its MR may be deregistered from now on; its lock held. */
static void vhca_mw_unbind_locked(struct vhca_mr *win)
{
	if (win->mw_mr)
		atomic_dec(&win->mw_mr->mw_bound);
	win->mw_mr = NULL;
}

/*
 * The invalidation of a window (vhca_mr_invalidate()): remotely, through
 * the QP a type 2B window is bound to only.
 */
static int vhca_mw_invalidate_one(struct vhca_mr *win, const struct ib_pd *pd,
				  u32 key, const struct ib_qp *remote_qp)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&win->lock, flags);
	if (win->pd != pd)
		err = -EACCES;
	/* o10-37.2.26: a type 1 window is not invalidated so. */
	else if (win->mw_type != IB_MW_TYPE_2 ||
		 win->state != VHCA_MR_VALID || win->key != key)
		err = -EINVAL;
	else if (remote_qp && win->mw_qpn != remote_qp->qp_num)
		err = -EACCES;
	if (!err) {
		vhca_mw_unbind_locked(win);
		win->state = VHCA_MR_INVALID;
	}
	spin_unlock_irqrestore(&win->lock, flags);
	return err;
}

int vhca_mw_invalidate(struct vhca_dev *vdev, const struct ib_pd *pd,
		       u32 key)
{
	struct vhca_mr *win = vhca_mr_get(vdev, key);
	int err;

	if (!win)
		return -EINVAL;
	err = vhca_mr_is_mw(win) ? vhca_mw_invalidate_one(win, pd, key, NULL) :
	      -EINVAL;
	vhca_mr_put(win);
	return err;
}

int vhca_mr_invalidate(struct vhca_dev *vdev, const struct ib_pd *pd,
		       u32 key, const struct ib_qp *remote_qp)
{
	struct vhca_mr *mr = vhca_mr_get(vdev, key);
	int err;

	if (!mr)
		return -EINVAL;
	if (vhca_mr_is_mw(mr))
		err = vhca_mw_invalidate_one(mr, pd, key, remote_qp);
	else if (mr->fast)
		err = vhca_mr_invalidate_fast(mr, pd, key, !!remote_qp);
	else
		err = -EINVAL;
	vhca_mr_put(mr);
	return err;
}

int vhca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct vhca_dev *vdev = to_vdev(ibmw->device);
	struct vhca_mr *win;
	struct ib_mr *reg;

	if (vhca_udata_check(&vdev->ibdev, udata, "alloc_mw"))
		return -EINVAL;
	win = vhca_mr_alloc(vdev, ibmw->pd, 0);
	if (!win)
		return -ENOMEM;
	win->mw_type = ibmw->type;
	spin_lock_init(&win->lock);
	/* Type 1: Valid and unbound; type 2: Free (IBTA 10.6.7). */
	win->state = ibmw->type == IB_MW_TYPE_1 ? VHCA_MR_VALID :
		     VHCA_MR_INVALID;
	reg = vhca_mr_register(vdev, win);
	if (IS_ERR(reg))
		return PTR_ERR(reg);
	ibmw->rkey = win->key;
	to_vmw(ibmw)->win = win;
	return 0;
}

int vhca_dealloc_mw(struct ib_mw *ibmw)
{
	struct vhca_dev *vdev = to_vdev(ibmw->device);
	struct vhca_mr *win = to_vmw(ibmw)->win;
	unsigned long flags;

	spin_lock_irqsave(&win->lock, flags);
	vhca_mw_unbind_locked(win);
	win->state = VHCA_MR_INVALID;
	spin_unlock_irqrestore(&win->lock, flags);
	vhca_mr_unpublish(vdev, win);
	vhca_mr_free(vdev, win);
	return 0;
}

/* What a window may grant; LOCAL_WRITE means nothing for one. */
#define VHCA_MW_BIND_ACCESS	(IB_ACCESS_LOCAL_WRITE | VHCA_MR_REMOTE_ACCESS)

/* vhca_mw_bind()'s checks, the window's lock held; mr NULL for length 0. */
static int vhca_mw_bind_check(const struct vhca_mr *win,
			      const struct vhca_mr *mr, const struct ib_qp *qp,
			      const struct vhca_mw_bind *bind)
{
	/*
	 * The window is named by its index, as the MW handle names it: the
	 * key byte posted is the provider's copy, which ibv_bind_mw advances
	 * when it posts, ahead of the window's after a failed bind.
	 */
	/* o10-37.2.30: a type 2 window is bound Free; o10-37.2.40: not to 0. */
	if (win->mw_type == IB_MW_TYPE_2 &&
	    (win->state != VHCA_MR_INVALID || !bind->length))
		return -EINVAL;
	if (vhca_mr_key_index(bind->new_rkey) != win->index)
		return -EINVAL;
	/* No zero-based windows (o10-36.2.2 for type 1), nothing unknown. */
	if (bind->access & ~VHCA_MW_BIND_ACCESS)
		return -EINVAL;
	/* C10-72 */
	if (win->pd != qp->pd)
		return -EACCES;
	if (!mr)
		return 0;
	if (mr->pd != qp->pd)
		return -EACCES;
	/* C10-73 */
	if (!(mr->access & IB_ACCESS_MW_BIND))
		return -EACCES;
	/* C10-74 */
	if ((bind->access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return -EACCES;
	/* C10-75 */
	if (!vhca_mr_in_bounds(mr, bind->addr, bind->length))
		return -EINVAL;
	return 0;
}

int vhca_mw_bind(struct vhca_dev *vdev, const struct ib_qp *qp,
		 const struct vhca_mw_bind *bind)
{
	struct vhca_mr *win, *mr = NULL;
	unsigned long flags;
	int err = -EINVAL;

	win = vhca_mr_get(vdev, bind->mw_rkey);
	if (!win)
		return -EINVAL;
	if (!vhca_mr_is_mw(win))
		goto out;
	if (bind->length) {
		mr = vhca_mr_get(vdev, bind->mr_lkey);
		if (!mr || mr->fast || mr->dma || vhca_mr_is_mw(mr))
			goto out;
	}
	spin_lock_irqsave(&win->lock, flags);
	err = vhca_mw_bind_check(win, mr, qp, bind);
	/* The MR's dereg_mr under way (mw_bound -1): it cannot be bound. */
	if (!err && mr && !atomic_inc_unless_negative(&mr->mw_bound))
		err = -EINVAL;
	if (!err) {
		vhca_mw_unbind_locked(win);
		win->mw_mr = mr;
		win->iova = bind->addr;
		win->length = bind->length;
		win->access = bind->access & VHCA_MR_REMOTE_ACCESS;
		win->mw_qpn = qp->qp_num;
		win->key = bind->new_rkey;
		win->state = VHCA_MR_VALID;
	}
	spin_unlock_irqrestore(&win->lock, flags);
out:
	if (mr)
		vhca_mr_put(mr);
	vhca_mr_put(win);
	return err;
}
