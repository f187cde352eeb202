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
struct vhca_pkt;

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

/* Whether a QP of vdev is in group mgid.  Under RCU. */
bool vhca_mcast_member(struct vhca_dev *vdev, const union ib_gid *mgid);

/*
 * A packet to the multicast QPN for vdev, its destination GID dgid: a copy
 * to every UD QP attached to that group (none: counted in ud_drops).  In
 * the rx handler: BHs off, under RCU.
 */
void vhca_mcast_rx(struct vhca_dev *vdev, const union ib_gid *dgid,
		   const struct vhca_pkt *pkt, struct sk_buff *skb, u32 off);

#endif /* VHCA_MCAST_H */
