// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UD multicast: attach_mcast and detach_mcast keep, per device, the groups
 * its UD QPs belong to; a packet to the multicast QPN (0xFFFFFF) for a
 * group's MGID gives each QP attached to that group a copy of its own
 * (the receive demux, vhca_rx.c, walks the group this file finds).
 *
 * RoCEv2 carries a group's packets to its IP multicast address (the MGID,
 * IPv4-mapped for IPv4).  So that they reach the socket, the device's
 * netdev joins the group while a QP of the device is attached: its MAC
 * filter (dev_mc_add()) and the IP layer, which drops a multicast packet
 * for a group no interface joined (IGMP or MLD membership; the RDMA CM
 * joins IPv4 groups itself, a QP attached through the verbs alone needs
 * this).  Sending needs no membership: vhca_net_xmit() sends to every vhca
 * port of the namespace in the kernel and to the wire.
 *
 * Lifetime: the lists change under the table's mutex and are read under
 * RCU.  An attachment names a QP by its handle, without a reference: the
 * core refuses to destroy a kernel QP still attached (its usecnt), uverbs
 * detaches a user QP's groups before destroying it, and the handle outlives
 * the QP by a grace period, so a receiver that found the attachment before
 * its detach takes a reference on the QP, or finds it gone
 * (vhca_handle_tryget()).
 */
#include <linux/if_ether.h>
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/rculist.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <net/if_inet6.h>
#include <net/ip.h>
#include <rdma/ib_addr.h>

#include "vhca_engine.h"

void vhca_mcast_init(struct vhca_mcast *mc)
{
	mutex_init(&mc->lock);
	INIT_LIST_HEAD(&mc->groups);
	mc->n_groups = 0;
	mc->n_attached = 0;
}

static struct vhca_mcast_grp *vhca_mcast_find(struct vhca_mcast *mc,
					      const union ib_gid *mgid)
{
	struct vhca_mcast_grp *grp;

	list_for_each_entry_rcu(grp, &mc->groups, node,
				lockdep_is_held(&mc->lock))
		if (!memcmp(&grp->mgid, mgid, sizeof(*mgid)))
			return grp;
	return NULL;
}

static struct vhca_mcast_qp *vhca_mcast_find_qp(struct vhca_mcast *mc,
						struct vhca_mcast_grp *grp,
						struct vhca_qp *qp)
{
	struct vhca_mcast_qp *mqp;

	lockdep_assert_held(&mc->lock);
	list_for_each_entry(mqp, &grp->qps, node)
		if (mqp->handle == qp->handle)
			return mqp;
	return NULL;
}

/* The Ethernet address of a group's packets. */
static void vhca_mcast_mac(const union ib_gid *mgid, u8 *mac)
{
	const struct in6_addr *addr = (const struct in6_addr *)mgid->raw;

	if (ipv6_addr_v4mapped(addr))
		ip_eth_mc_map(addr->s6_addr32[3], mac);
	else
		ipv6_eth_mc_map(addr, mac);
}

/*
 * The IP layer's membership of ndev in group mgid: taken (join) or given
 * back.  True if taken.
 */
static bool vhca_mcast_ip(struct net_device *ndev, const union ib_gid *mgid,
			  bool join)
{
	const struct in6_addr *addr = (const struct in6_addr *)mgid->raw;
	struct in_device *in_dev;
	bool done = false;

	if (ipv6_addr_v4mapped(addr)) {
		rtnl_lock();
		in_dev = __in_dev_get_rtnl(ndev);
		if (in_dev) {
			if (join)
				ip_mc_inc_group(in_dev, addr->s6_addr32[3]);
			else
				ip_mc_dec_group(in_dev, addr->s6_addr32[3]);
			done = true;
		}
		rtnl_unlock();
		return done;
	}
	if (!IS_ENABLED(CONFIG_IPV6))
		return false;
	if (join)
		return !ipv6_dev_mc_inc(ndev, addr);
	return !ipv6_dev_mc_dec(ndev, addr);
}

/* The device's netdev leaves a group it joined (its last QP detached). */
static void vhca_mcast_leave(struct vhca_dev *vdev, struct vhca_mcast_grp *grp)
{
	u8 mac[ETH_ALEN];

	if (grp->ip_joined)
		vhca_mcast_ip(vdev->ndev, &grp->mgid, false);
	vhca_mcast_mac(&grp->mgid, mac);
	dev_mc_del(vdev->ndev, mac);
}

/* A new group, its netdev joined; ERR_PTR() if not. */
static struct vhca_mcast_grp *vhca_mcast_grp_new(struct vhca_dev *vdev,
						 const union ib_gid *mgid,
						 gfp_t gfp)
{
	struct vhca_mcast_grp *grp;
	u8 mac[ETH_ALEN];
	int err;

	grp = kzalloc(sizeof(*grp), gfp);
	if (!grp)
		return ERR_PTR(-ENOMEM);
	grp->mgid = *mgid;
	INIT_LIST_HEAD(&grp->qps);
	vhca_mcast_mac(mgid, mac);
	err = dev_mc_add(vdev->ndev, mac);
	if (err) {
		kfree(grp);
		return ERR_PTR(err);
	}
	/* Without it the group is local to the namespace's vhca ports. */
	grp->ip_joined = vhca_mcast_ip(vdev->ndev, mgid, true);
	if (!grp->ip_joined)
		ibdev_dbg(&vdev->ibdev, "mcast: %pI6: no IP membership on %s\n",
			  mgid->raw, netdev_name(vdev->ndev));
	return grp;
}

/*
 * attach_mcast.  The core has checked that the QP is UD and gid a
 * multicast GID (EINVAL otherwise).  ENOMEM at the device's limits, EEXIST
 * for a QP attached to the group already (uverbs filters a user's
 * duplicates; a kernel caller's would unbalance the QP's usecnt).
 */
int vhca_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct vhca_dev *vdev = to_vdev(ibqp->device);
	struct vhca_mcast *mc = &vdev->net.mcast;
	struct vhca_qp *qp = to_vqp(ibqp);
	gfp_t gfp = qp->uctx ? GFP_KERNEL_ACCOUNT : GFP_KERNEL;
	struct vhca_mcast_grp *grp;
	struct vhca_mcast_qp *mqp;
	int err = 0;

	mqp = kzalloc(sizeof(*mqp), gfp);
	if (!mqp)
		return -ENOMEM;
	mqp->handle = qp->handle;

	mutex_lock(&mc->lock);
	grp = vhca_mcast_find(mc, gid);
	if (grp && vhca_mcast_find_qp(mc, grp, qp)) {
		err = -EEXIST;
		goto err_unlock;
	}
	if (mc->n_attached >= VHCA_MAX_TOTAL_MCAST_QP_ATTACH ||
	    (grp && grp->n_qps >= VHCA_MAX_MCAST_QP_ATTACH) ||
	    (!grp && mc->n_groups >= VHCA_MAX_MCAST_GRP)) {
		ibdev_dbg(&vdev->ibdev, "attach_mcast: QP %u, %pI6: limit reached\n",
			  ibqp->qp_num, gid->raw);
		err = -ENOMEM;
		goto err_unlock;
	}
	if (!grp) {
		grp = vhca_mcast_grp_new(vdev, gid, gfp);
		if (IS_ERR(grp)) {
			err = PTR_ERR(grp);
			goto err_unlock;
		}
		list_add_tail_rcu(&grp->node, &mc->groups);
		mc->n_groups++;
	}
	list_add_tail_rcu(&mqp->node, &grp->qps);
	grp->n_qps++;
	mc->n_attached++;
	mutex_unlock(&mc->lock);
	return 0;

err_unlock:
	mutex_unlock(&mc->lock);
	kfree(mqp);
	return err;
}

/* Remove an empty group; under the table's mutex. */
static void vhca_mcast_grp_del(struct vhca_dev *vdev,
			       struct vhca_mcast_grp *grp)
{
	struct vhca_mcast *mc = &vdev->net.mcast;

	list_del_rcu(&grp->node);
	mc->n_groups--;
	vhca_mcast_leave(vdev, grp);
	kfree_rcu(grp, rcu);
}

/* detach_mcast: EINVAL for a group the QP is not attached to. */
int vhca_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct vhca_dev *vdev = to_vdev(ibqp->device);
	struct vhca_mcast *mc = &vdev->net.mcast;
	struct vhca_mcast_grp *grp;
	struct vhca_mcast_qp *mqp = NULL;

	mutex_lock(&mc->lock);
	grp = vhca_mcast_find(mc, gid);
	if (grp)
		mqp = vhca_mcast_find_qp(mc, grp, to_vqp(ibqp));
	if (!mqp) {
		mutex_unlock(&mc->lock);
		ibdev_dbg(&vdev->ibdev, "detach_mcast: QP %u is not in %pI6\n",
			  ibqp->qp_num, gid->raw);
		return -EINVAL;
	}
	list_del_rcu(&mqp->node);
	kfree_rcu(mqp, rcu);
	grp->n_qps--;
	mc->n_attached--;
	if (!grp->n_qps)
		vhca_mcast_grp_del(vdev, grp);
	mutex_unlock(&mc->lock);
	return 0;
}

/*
 * The device's removal, its QPs destroyed (and so detached, see the top
 * comment) and no receiver left (vhca_net_detach()): frees what a
 * misbehaving kernel consumer may have left.
 */
void vhca_mcast_fini(struct vhca_dev *vdev)
{
	struct vhca_mcast *mc = &vdev->net.mcast;
	struct vhca_mcast_grp *grp, *gnext;
	struct vhca_mcast_qp *mqp, *qnext;

	mutex_lock(&mc->lock);
	list_for_each_entry_safe(grp, gnext, &mc->groups, node) {
		ibdev_warn(&vdev->ibdev, "mcast: %pI6 still has %u QPs at removal\n",
			   grp->mgid.raw, grp->n_qps);
		list_for_each_entry_safe(mqp, qnext, &grp->qps, node) {
			list_del_rcu(&mqp->node);
			kfree_rcu(mqp, rcu);
		}
		mc->n_attached -= grp->n_qps;
		vhca_mcast_grp_del(vdev, grp);
	}
	mutex_unlock(&mc->lock);
	mutex_destroy(&mc->lock);
}

struct vhca_mcast_grp *vhca_mcast_group(struct vhca_dev *vdev,
					const union ib_gid *mgid)
{
	return vhca_mcast_find(&vdev->net.mcast, mgid);
}
