/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Protection domains (their verbs in vhca_mr.c) and address handles
 * (vhca_ah.c) of vhca, with the destinations the engine takes from them.
 */
#ifndef VHCA_AH_H
#define VHCA_AH_H

#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <rdma/ib_verbs.h>

struct vhca_dev;

struct vhca_pd {
	struct ib_pd ibpd;
};

int vhca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int vhca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);

/*
 * The destination of a UD address handle, immutable.  The core frees the
 * ib_ah as soon as destroy_ah returns, so the engine uses this separate,
 * refcounted object instead: ah_xa holds one reference (until destroy_ah),
 * each engine user one more; the last put drops the source GID reference
 * held in attr and frees it after an RCU grace period.
 */
struct vhca_av {
	struct rdma_ah_attr attr;	/* holds its own grh.sgid_attr ref */
	const struct ib_pd *pd;		/* compared only, never dereferenced */
	refcount_t ref;
	struct rcu_head rcu;
};

/* A UD address handle: resolved RoCEv2 destination. Found by index. */
struct vhca_ah {
	struct ib_ah ibah;
	struct vhca_av *av;
	u32 index;		/* ah_index of the user's create_ah response */
};

static inline struct vhca_ah *to_vah(struct ib_ah *ibah)
{
	return container_of(ibah, struct vhca_ah, ibah);
}

int vhca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		   struct ib_udata *udata);
int vhca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *ah_attr);
int vhca_destroy_ah(struct ib_ah *ibah, u32 flags);

/*
 * For the engine, any context.  vhca_av_get: the destination of the user
 * AH with this ah_index, only if it belongs to pd (a QP never reaches
 * another PD's AH), referenced, or NULL.  Every reference goes back with
 * vhca_av_put(), before the device is deallocated.
 */
struct vhca_av *vhca_av_get(struct vhca_dev *vdev, u32 index,
			    const struct ib_pd *pd);
void vhca_av_put(struct vhca_av *av);

#endif /* VHCA_AH_H */
