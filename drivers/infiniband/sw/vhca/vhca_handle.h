/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Handles: what the tables the receive path searches (QPs by number, XRC
 * SRQs by number) hold instead of the objects themselves.
 */
#ifndef VHCA_HANDLE_H
#define VHCA_HANDLE_H

#include <linux/completion.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/xarray.h>

struct ib_device;

/*
 * The core frees a QP or an SRQ as soon as its destroy verb returns, so a
 * receiver that found one under RCU alone could still be using it then,
 * unless destroy waited for a grace period.  A receiver takes a reference
 * on the object's handle instead (vhca_handle_get()), and destroy waits
 * only for those (vhca_handle_remove()): a handle outlives its object by
 * a grace period, so a lookup that found it can still try for a reference.
 */
struct vhca_handle {
	refcount_t ref;			/* the table's, and each receiver's */
	struct completion idle;		/* the last reference went */
	void *obj;
	struct rcu_head rcu;
};

struct vhca_handle *vhca_handle_alloc(void *obj, gfp_t gfp);
void vhca_handle_free(struct vhca_handle *h);
void *vhca_handle_get(struct xarray *xa, unsigned long index);
bool vhca_handle_tryget(struct vhca_handle *h);
void vhca_handle_put(struct vhca_handle *h);
void vhca_handle_remove(struct ib_device *ibdev, const char *what,
			struct xarray *xa, unsigned long index,
			struct vhca_handle *h);

#endif /* VHCA_HANDLE_H */
