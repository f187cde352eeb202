// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Handles of the objects the receive path finds by number (vhca_handle.h):
 * a reference per receiver instead of a grace period per destroy.
 */
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "vhca_handle.h"
#include "vhca_param.h"

struct vhca_handle *vhca_handle_alloc(void *obj, gfp_t gfp)
{
	struct vhca_handle *h = kmalloc(sizeof(*h), gfp);

	if (!h)
		return NULL;
	refcount_set(&h->ref, 1);
	init_completion(&h->idle);
	h->obj = obj;
	return h;
}

/* A handle no table ever held. */
void vhca_handle_free(struct vhca_handle *h)
{
	kfree(h);
}

/* Under RCU: the object at index in xa, referenced, or NULL. */
void *vhca_handle_get(struct xarray *xa, unsigned long index)
{
	struct vhca_handle *h = xa_load(xa, index);

	return h && refcount_inc_not_zero(&h->ref) ? h->obj : NULL;
}

/* Under RCU, of a handle found in a table or a list read under RCU. */
bool vhca_handle_tryget(struct vhca_handle *h)
{
	return refcount_inc_not_zero(&h->ref);
}

void vhca_handle_put(struct vhca_handle *h)
{
	if (refcount_dec_and_test(&h->ref))
		complete(&h->idle);
}

/*
 * Wait for the last reference to h, the object what number index of
 * ibdev's.  One still held after warn_after jiffies is a leak (receivers
 * hold theirs for a packet or a run): it is reported once, and the wait
 * goes on, since freeing the object would hand its holder freed memory.
 * Returns whether it was reported.
 */
static bool vhca_handle_wait(struct ib_device *ibdev, const char *what,
			     unsigned long index, struct vhca_handle *h,
			     unsigned long warn_after)
{
	unsigned long start = jiffies;

	if (wait_for_completion_timeout(&h->idle, warn_after))
		return false;
	ibdev_warn(ibdev, "destroy of %s %lu waits: a reference is still held after %u ms\n",
		   what, index, jiffies_to_msecs(jiffies - start));
	wait_for_completion(&h->idle);
	ibdev_info(ibdev, "destroy of %s %lu: its last reference went after %u ms\n",
		   what, index, jiffies_to_msecs(jiffies - start));
	return true;
}

/*
 * Take the object out of xa and wait for the receivers holding it: none
 * holds it, nor finds it, once this returns.  Their references are held
 * for one packet, one run (at most VHCA_REQ_SEG_BYTES of copying) or one
 * pass of READ responses, so the wait is short; the handle itself goes
 * after a grace period.  what
 * and index name the object in the report of a leaked reference.
 */
void vhca_handle_remove(struct ib_device *ibdev, const char *what,
			struct xarray *xa, unsigned long index,
			struct vhca_handle *h)
{
	xa_erase_irq(xa, index);
	vhca_handle_put(h);
	vhca_handle_wait(ibdev, what, index, h, VHCA_HANDLE_WARN_SECS * HZ);
	kfree_rcu(h, rcu);
}
