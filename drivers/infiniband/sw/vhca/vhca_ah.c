// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles of vhca: RoCEv2 destinations, each kept in a refcounted
 * struct vhca_av that the engine finds by ah_index in vdev->ah_xa.
 *
 * create_ah and destroy_ah may run in atomic context (without the
 * SLEEPABLE flags; ib_cm holds a spinlock), so nothing here sleeps then:
 * allocations follow the flag, and ah_xa is changed under its lock with
 * interrupts off and GFP_ATOMIC node allocations, safe from any context.
 */
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/vhca-abi.h>

#include "vhca.h"

static int vhca_ah_attr_check(struct ib_device *ibdev,
			      const struct rdma_ah_attr *attr)
{
	const struct ib_gid_attr *sgid_attr = attr->grh.sgid_attr;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE) {
		ibdev_dbg(ibdev, "create_ah: type %d is not RoCE\n", attr->type);
		return -EINVAL;
	}
	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH)) {
		ibdev_dbg(ibdev, "create_ah: no GRH\n");
		return -EINVAL;
	}
	if (rdma_ah_get_port_num(attr) != VHCA_PORT) {
		ibdev_dbg(ibdev, "create_ah: port %u does not exist\n",
			  rdma_ah_get_port_num(attr));
		return -EINVAL;
	}
	if (!sgid_attr) {
		ibdev_dbg(ibdev, "create_ah: no source GID\n");
		return -EINVAL;
	}
	if (sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP) {
		ibdev_dbg(ibdev, "create_ah: source GID %u is not RoCE v2\n",
			  sgid_attr->index);
		return -EINVAL;
	}
	return 0;
}

struct vhca_av *vhca_av_get(struct vhca_dev *vdev, u32 index,
			    const struct ib_pd *pd)
{
	struct vhca_av *av;

	rcu_read_lock();
	av = xa_load(&vdev->ah_xa, index);
	if (av && (av->pd != pd || !refcount_inc_not_zero(&av->ref)))
		av = NULL;
	rcu_read_unlock();
	return av;
}

void vhca_av_put(struct vhca_av *av)
{
	if (!refcount_dec_and_test(&av->ref))
		return;
	/* Atomic-safe: the GID entry's last put is deferred to a work. */
	rdma_destroy_ah_attr(&av->attr);
	kfree_rcu(av, rcu);
}

static void vhca_ah_erase(struct vhca_dev *vdev, u32 index)
{
	unsigned long flags;

	xa_lock_irqsave(&vdev->ah_xa, flags);
	__xa_erase(&vdev->ah_xa, index);
	xa_unlock_irqrestore(&vdev->ah_xa, flags);
}

int vhca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata)
{
	/* A process's AH is charged to its memory cgroup. */
	gfp_t gfp = udata ? GFP_KERNEL_ACCOUNT :
		    init_attr->flags & RDMA_CREATE_AH_SLEEPABLE ? GFP_KERNEL :
		    GFP_ATOMIC;
	struct vhca_dev *vdev = to_vdev(ibah->device);
	struct vhca_ah *ah = to_vah(ibah);
	struct vhca_create_ah_resp resp = {};
	unsigned long flags;
	struct vhca_av *av;
	int err;

	err = vhca_ah_attr_check(&vdev->ibdev, init_attr->ah_attr);
	if (err)
		return err;
	/* A user AH is always sleepable. */
	err = vhca_create_prologue(&vdev->ibdev, udata, &vdev->n_ah,
				   VHCA_MAX_AH, "create_ah");
	if (err)
		return err;

	av = kzalloc(sizeof(*av), gfp);
	if (!av) {
		err = -ENOMEM;
		goto err_count;
	}
	rdma_copy_ah_attr(&av->attr, init_attr->ah_attr);
	av->pd = ibah->pd;
	refcount_set(&av->ref, 1);

	/* Published complete: the engine may find it from here on. */
	xa_lock_irqsave(&vdev->ah_xa, flags);
	err = __xa_alloc(&vdev->ah_xa, &ah->index, av, xa_limit_32b,
			 GFP_ATOMIC);
	xa_unlock_irqrestore(&vdev->ah_xa, flags);
	if (err) {
		ibdev_dbg(&vdev->ibdev, "create_ah: no index: %d\n", err);
		err = -ENOMEM;
		goto err_av;
	}
	ah->av = av;

	if (udata) {
		resp.ah_index = ah->index;
		err = vhca_copy_resp(udata, &resp, sizeof(resp));
		if (err)
			goto err_erase;
	}
	return 0;

err_erase:
	vhca_ah_erase(vdev, ah->index);
err_av:
	vhca_av_put(av);
err_count:
	atomic_dec(&vdev->n_ah);
	return err;
}

int vhca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *ah_attr)
{
	*ah_attr = to_vah(ibah)->av->attr;
	/* rdma_query_ah() callers take no GID reference and put none. */
	ah_attr->grh.sgid_attr = NULL;
	return 0;
}

int vhca_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct vhca_dev *vdev = to_vdev(ibah->device);
	struct vhca_ah *ah = to_vah(ibah);

	vhca_ah_erase(vdev, ah->index);
	vhca_av_put(ah->av);
	atomic_dec(&vdev->n_ah);
	return 0;
}
