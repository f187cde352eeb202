/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 network plumbing of vhca: one kernel UDP socket on port 4791 per
 * network namespace, shared by the vhca devices whose netdev lives there;
 * received packets go to the device owning their destination GID;
 * transmit routes a RoCEv2 packet from a source GID to a destination GID
 * and sends it through that namespace's IP stack.
 */
#ifndef VHCA_NET_H
#define VHCA_NET_H

#include <linux/list.h>
#include <linux/skbuff.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>

#include "vhca_mcast.h"

struct vhca_dev;
struct vhca_net;

/*
 * The receive handler of a device: a RoCEv2 packet for it, from the wire
 * or delivered locally, skb->data at the BTH; consumes skb.  BHs off,
 * under RCU.
 */
typedef void (*vhca_net_rx_t)(struct vhca_dev *vdev, struct sk_buff *skb);

/* A device's place in its namespace's vhca_net (the vhca_dev field net). */
struct vhca_net_link {
	struct vhca_net *vnet;		/* NULL unless attached */
	struct list_head node;		/* in the vhca_net's devices, RCU */
	vhca_net_rx_t rx;		/* set before the device is listed */
	struct vhca_mcast mcast;	/* groups its QPs are attached to */
};

int vhca_net_init(void);
void vhca_net_exit(void);

/*
 * Attach a device to the socket of its netdev's namespace, opening it for
 * the namespace's first device (-EADDRINUSE: port 4791 is taken there, by
 * rdma_rxe for example); its packets go to rx.  Detach (dealloc_driver; a
 * no-op if not attached) closes it with the last one.  Process context.
 */
int vhca_net_attach(struct vhca_dev *vdev, vhca_net_rx_t rx);
void vhca_net_detach(struct vhca_dev *vdev);

/*
 * ib_device_ops add_gid and del_gid: the core's RoCE v2 GIDs of an attached
 * device go in its namespace's index, by which packets find their device
 * without the GID tables' locks.  Process context.
 */
int vhca_net_add_gid(const struct ib_gid_attr *attr, void **context);
int vhca_net_del_gid(const struct ib_gid_attr *attr, void **context);

/*
 * A linear skb with headroom for Ethernet, IP and UDP headers and tailroom
 * for the ICRC: the caller puts len bytes, BTH through pad, and hands it to
 * vhca_net_xmit().
 */
struct sk_buff *vhca_net_alloc_skb(struct vhca_dev *vdev, unsigned int len,
				   gfp_t gfp);

/*
 * Send skb (BTH through pad, linear, from vhca_net_alloc_skb()) from
 * grh->sgid_attr to grh->dgid (both RoCE v2, IPv4-mapped for IPv4) with
 * grh's traffic class and hop limit, UDP source port sport: appends the
 * ICRC, routes in the device's namespace and passes it to IP output.
 * route (NULL: none) caches the route of a sender whose grh stays the same
 * (a connected QP's path; dst_cache_reset() when it changes).
 * The sending QP's number goes in vhca_net_cb(skb)->src_qpn, if any.
 * Counts tx_packets/tx_bytes (BTH through ICRC) when IP accepts it.
 * When grh->dgid belongs to a vhca device of the same namespace (unless
 * the module parameter force_wire is set), delivers it there at once
 * instead, through the same headers and the receiver's rx handler,
 * without the ICRC; counts local_tx_packets too (the receiver counts
 * local_rx_packets).  A multicast grh->dgid (RoCEv2 multicast: DQPN
 * 0xFFFFFF) goes both ways: a copy to each vhca device of the namespace
 * in the kernel (unless force_wire is set), the sender's own included,
 * and one to the wire.  Always consumes skb.  Any context, but no lock the
 * receive path takes (those of any QP) may be held.
 */
int vhca_net_xmit(struct vhca_dev *vdev, const struct ib_global_route *grh,
		  u16 sport, struct dst_cache *route, struct sk_buff *skb);

/*
 * vhca_net_xmit() of each packet of list in turn (emptied), but that
 * consecutive packets of one length that take the wire go out together,
 * as one UDP GSO packet of at most 64 KiB (its frag_list holds each with
 * its own headers and ICRC; a receiving host's UDP, or a device without
 * the feature, cuts it back into those packets): IP output, the devices
 * and the receiving host's IP and UDP take them once.  Returns true when
 * a packet took the wire (the IP stack sent it without error).
 */
bool vhca_net_xmit_list(struct vhca_dev *vdev,
			const struct ib_global_route *grh, u16 sport,
			struct dst_cache *route, struct sk_buff_head *list);

/*
 * Direct placement: place(dst, arg) for the device dst of vdev's namespace
 * that owns grh->dgid, where vhca_net_xmit() would deliver a packet of grh
 * in the kernel, with dst held, BHs off and under RCU, as the packet's
 * receive would run.  Returns place's result (1: taken, 0: not), or
 * -ENODEV when such a packet would take the wire (no such device,
 * force_wire, multicast) or could not be sent.  Any context, no QP lock
 * held.
 */
int vhca_net_direct(struct vhca_dev *vdev, const struct ib_global_route *grh,
		    bool (*place)(struct vhca_dev *dst, void *arg), void *arg);

/*
 * Direct placement: whether a run of packets from the RC QP sqpn of path
 * spath, placed directly, is from the peer of the QP whose path is path
 * and whose dest_qp_num is peer_qpn: the run's packets would pass
 * vhca_net_rx_from() there (source and destination GIDs, sending QP).
 */
bool vhca_net_direct_from(const struct ib_global_route *spath, u32 sqpn,
			  const struct ib_global_route *path, u32 peer_qpn);

/*
 * What a packet carries in skb->cb on its way to the rx handler: the
 * sender sets src_qpn (zeroed by vhca_net_alloc_skb(): no QP) before
 * vhca_net_xmit(), which sets local when it delivers in the kernel; the
 * wire path clears both.
 */
struct vhca_net_cb {
	u32 src_qpn;		/* the sending QP, 0 for none */
	bool local;		/* delivered by vhca_net_xmit(), no wire */
};

static inline struct vhca_net_cb *vhca_net_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct vhca_net_cb) > sizeof(skb->cb));
	return (struct vhca_net_cb *)skb->cb;
}

/**
 * vhca_net_rx_from() - whether a packet comes from a connected QP's peer
 * @skb: the packet, in the rx handler
 * @path: the QP's path (its AV's GRH, sgid_attr held by the QP)
 * @peer_qpn: the QP's dest_qp_num
 *
 * The packet's source and destination IP addresses must be the path's
 * dgid and source GID, and it must have come either in the kernel from
 * QP @peer_qpn (vhca_net_xmit()'s local delivery, which knows the sending
 * QP), or from the wire through the netdev of the source GID, from an
 * address no vhca device of this namespace has: such a peer delivers in
 * the kernel, and any local process can send from its address, through
 * lo or (SO_BINDTODEVICE) out of the peer's netdev.  While force_wire is
 * set, which sends the packets between the ports of one namespace through
 * the stack, local addresses and lo are accepted.  Under RCU.
 *
 * Return: true if so.
 */
bool vhca_net_rx_from(struct sk_buff *skb, const struct ib_global_route *path,
		      u32 peer_qpn);

/*
 * For the rx handler: the RoCE v2 GIDs of a received packet (IPv4-mapped
 * for IPv4) from its IP header, and its network type, RDMA_NETWORK_IPV4 or
 * RDMA_NETWORK_IPV6.  The UDP header is at skb_transport_header().
 */
enum rdma_network_type vhca_net_rx_gids(const struct sk_buff *skb,
					union ib_gid *sgid, union ib_gid *dgid);

#endif /* VHCA_NET_H */
