/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * UD multicast of vhca: the groups a device's UD QPs are attached to.
 */
#ifndef VHCA_MCAST_H
#define VHCA_MCAST_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

struct vhca_dev;
struct vhca_handle;
struct vhca_qp;

/* A QP attached to a group. */
struct vhca_mcast_qp {
	struct list_head node;		/* in the group's qps, RCU */
	struct vhca_handle *handle;	/* the QP's */
	struct rcu_head rcu;
};

/* A group with at least one QP of the device attached. */
struct vhca_mcast_grp {
	struct list_head node;		/* in vhca_mcast.groups, RCU */
	union ib_gid mgid;
	struct list_head qps;		/* vhca_mcast_qp.node, RCU */
	unsigned int n_qps;		/* at most VHCA_MAX_MCAST_QP_ATTACH */
	bool ip_joined;			/* the IP layer's membership taken */
	struct rcu_head rcu;
};

/*
 * A device's groups: writers (attach, detach, the device's removal) hold
 * lock; receivers walk the lists under RCU.  Part of its vhca_net_link,
 * set up by vhca_net_attach() and emptied by vhca_net_detach().
 */
struct vhca_mcast {
	struct mutex lock;		/* writers of the lists and counts */
	struct list_head groups;	/* vhca_mcast_grp.node, RCU */
	unsigned int n_groups;		/* at most VHCA_MAX_MCAST_GRP */
	unsigned int n_attached;	/* QP attachments of all groups */
};

void vhca_mcast_init(struct vhca_mcast *mc);
void vhca_mcast_fini(struct vhca_dev *vdev);

int vhca_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int vhca_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);

/*
 * Group mgid of vdev, NULL when no QP of vdev is attached to it.  Under
 * RCU: its qps, walked with list_for_each_entry_rcu(), stay valid until
 * the reader's grace period ends.
 */
struct vhca_mcast_grp *vhca_mcast_group(struct vhca_dev *vdev,
					const union ib_gid *mgid);

#endif /* VHCA_MCAST_H */
