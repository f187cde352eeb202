// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 network plumbing of vhca.
 *
 * Sockets: a namespace is a host, so each namespace with a vhca device has
 * one kernel UDP socket bound to port 4791, shared by the devices whose
 * netdev lives there.  It is one IPv6 socket that also receives IPv4
 * (v6only off), so a namespace has one listener; with IPv6 disabled at
 * boot it is an IPv4 socket.  The socket holds no reference on its
 * namespace (else a namespace with a vhca device could never die): a
 * device goes when its netdev leaves the namespace, and the namespace's
 * exit waits for removals still in flight (vhca_net_pernet_exit()).
 *
 * Receive: the socket's encap_rcv finds the device of the namespace that
 * owns the packet's destination IP as a RoCE v2 GID.  Looking it up by GID
 * rather than by the netdev the packet came in on also serves packets that
 * arrive over loopback (sent to the port's own address) or on a VLAN
 * upper, whose addresses the core puts in the GID table of the device.
 *
 * Transmit: vhca builds the IP and UDP headers itself, as rdma_rxe does,
 * instead of using udp_tunnel_xmit_skb(): the ICRC covers the IPv4 ID,
 * which that helper picks after the caller's last look at the packet.
 *
 * Local delivery: a packet whose destination GID belongs to a vhca device
 * of the sender's namespace (the sender itself included) skips routing,
 * IP and the socket: vhca_net_xmit() hands it to that device's engine at
 * once, with the same IP and UDP headers in front of the BTH, so the
 * receiver runs the same checks on the same packet and only the counters
 * local_tx_packets/local_rx_packets tell the paths apart.  The ICRC, which
 * guards against corruption on the wire, is neither computed nor checked
 * there (the trailer stays, zero): the packet never leaves memory, as the
 * stack trusts loopback checksums.  The wire path checks the ICRC before
 * the engine sees a packet.  Delivery is synchronous, BHs off and under
 * RCU, as a packet from the socket would be: the engine sends only with
 * its QP's locks dropped, and a CPU nests at most VHCA_NET_LOCAL_DEPTH
 * deliveries (in practice a request, then its ACK or READ response, which
 * sends nothing); a deeper one takes the wire, whose receive runs later
 * in softirq.  The module parameter force_wire sends everything over the
 * wire.
 *
 * Multicast (a multicast destination GID, DQPN 0xFFFFFF): vhca_net_xmit()
 * gives a copy to every vhca device of the namespace with a QP in the
 * group, in the kernel, the sender's own included, and sends one to the
 * wire, where the IP layer does not loop it back (the socket's multicast
 * loop is off: the kernel copies stand for it).  From the wire a
 * multicast packet goes to each device on whose netdev it came in with a
 * QP in the group (vhca_mcast.c), unless it comes from a vhca address of
 * the namespace, whose copies were given in the kernel already; with
 * force_wire set, the sending namespace's ports get only what comes back
 * in through another netdev.
 */
#include <linux/debugfs.h>
#include <linux/hash.h>
#include <linux/inet.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "vhca.h"
#include "vhca_pkt.h"

static bool force_wire;
module_param(force_wire, bool, 0644);
MODULE_PARM_DESC(force_wire,
		 "Send to vhca ports of the same network namespace through the IP stack too, instead of delivering in the kernel (default: N)");

static DEFINE_PER_CPU(unsigned int, vhca_net_local_depth);

/* The shortest RoCEv2 packet: a BTH and the ICRC. */
#define VHCA_NET_MIN_LEN	(sizeof(struct vhca_bth) + IB_ICRC_BYTES)
/* Headers vhca_net_xmit() pushes, IPv6 being the longer IP header. */
#define VHCA_NET_HDR_LEN	(sizeof(struct ipv6hdr) + sizeof(struct udphdr))
/* Packets in one GSO batch at most (vhca_net_gso()). */
#define VHCA_NET_GSO_SEGS	64
/* Buckets of a namespace's GID index: 2^VHCA_NET_GID_BITS. */
#define VHCA_NET_GID_BITS	6

/*
 * A namespace's socket and the devices using it.  In vhca_nets from the
 * first attach in the namespace to the last detach, which closes the
 * socket; devs is never empty while listed.
 */
struct vhca_net {
	struct list_head list;		/* in vhca_nets, RCU */
	const struct net *net;		/* not counted: see the top comment */
	struct socket *sock;
	struct list_head devs;		/* vhca_net_link.node, RCU */
	spinlock_t gids_lock;		/* writers of gids */
	struct hlist_head gids[1 << VHCA_NET_GID_BITS];	/* vhca_net_gid */
};

/*
 * A RoCE v2 GID of a device of the namespace, in its vhca_net's index from
 * the core's add_gid to its del_gid (the entry's context): the devices'
 * GID tables, by GID, for the per-packet lookups without the tables'
 * locks.  A device's entries all go in its unregistration, before its
 * detach; the device itself is freed a grace period after its release.
 */
struct vhca_net_gid {
	struct hlist_node node;		/* in vhca_net.gids, RCU */
	union ib_gid gid;
	struct vhca_dev *vdev;
	struct rcu_head rcu;
};

/* Writers hold the mutex; the namespace exit reads under RCU. */
static LIST_HEAD(vhca_nets);
static DEFINE_MUTEX(vhca_nets_lock);
static DECLARE_WAIT_QUEUE_HEAD(vhca_nets_wait);

static struct hlist_head *vhca_net_gid_bucket(struct vhca_net *vnet,
					      const union ib_gid *gid)
{
	u32 h = ipv6_addr_hash((const struct in6_addr *)gid->raw);

	return &vnet->gids[hash_32(h, VHCA_NET_GID_BITS)];
}

int vhca_net_add_gid(const struct ib_gid_attr *attr, void **context)
{
	struct vhca_dev *vdev = to_vdev(attr->device);
	struct vhca_net *vnet = vdev->net.vnet;
	struct vhca_net_gid *entry;

	*context = NULL;
	if (attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return 0;
	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return -ENOMEM;
	entry->gid = attr->gid;
	entry->vdev = vdev;
	spin_lock(&vnet->gids_lock);
	hlist_add_tail_rcu(&entry->node, vhca_net_gid_bucket(vnet, &attr->gid));
	spin_unlock(&vnet->gids_lock);
	*context = entry;
	return 0;
}

int vhca_net_del_gid(const struct ib_gid_attr *attr, void **context)
{
	struct vhca_net *vnet = to_vdev(attr->device)->net.vnet;
	struct vhca_net_gid *entry = *context;

	if (!entry)
		return 0;
	spin_lock(&vnet->gids_lock);
	hlist_del_rcu(&entry->node);
	spin_unlock(&vnet->gids_lock);
	kfree_rcu(entry, rcu);
	*context = NULL;
	return 0;
}

/*
 * The device of vnet's namespace whose GID table holds dgid as a RoCE v2
 * GID, with a reference (ib_device_put()), or NULL.  Any context.
 */
static struct vhca_dev *vhca_net_find_dev(struct vhca_net *vnet,
					  const union ib_gid *dgid)
{
	struct vhca_net_gid *entry;
	struct vhca_dev *vdev;

	rcu_read_lock();
	hlist_for_each_entry_rcu(entry, vhca_net_gid_bucket(vnet, dgid), node) {
		vdev = entry->vdev;
		/* Fails before registration and from unregistration on. */
		if (!memcmp(&entry->gid, dgid, sizeof(*dgid)) &&
		    ib_device_try_get(&vdev->ibdev)) {
			rcu_read_unlock();
			return vdev;
		}
	}
	rcu_read_unlock();
	return NULL;
}

/*
 * The netdev of a GID, or NULL once the core deleted the GID (del_gid()
 * clears it), as rdma_read_gid_attr_ndev_rcu() tells but without the GID
 * table's lock, which every packet would take.  Under RCU.
 */
static struct net_device *vhca_net_gid_ndev(const struct ib_gid_attr *attr)
{
	return rcu_dereference(attr->ndev);
}

bool vhca_net_rx_from(struct sk_buff *skb, const struct ib_global_route *path,
		      u32 peer_qpn)
{
	const struct vhca_net_cb *cb = vhca_net_cb(skb);
	const struct net_device *ndev;
	struct vhca_dev *peer;
	union ib_gid sgid, dgid;
	struct vhca_net *vnet;

	if (!path->sgid_attr)
		return false;
	vhca_net_rx_gids(skb, &sgid, &dgid);
	if (memcmp(&sgid, &path->dgid, sizeof(sgid)) ||
	    memcmp(&dgid, &path->sgid_attr->gid, sizeof(dgid)))
		return false;
	if (cb->local)
		return cb->src_qpn && cb->src_qpn == peer_qpn;
	if (!skb->dev)
		return false;
	ndev = vhca_net_gid_ndev(path->sgid_attr);
	if (READ_ONCE(force_wire))
		return skb->dev == ndev || (skb->dev->flags & IFF_LOOPBACK);
	if (skb->dev != ndev)
		return false;
	/* A peer in this namespace delivers in the kernel, never by wire. */
	vnet = READ_ONCE(to_vdev(path->sgid_attr->device)->net.vnet);
	peer = vnet ? vhca_net_find_dev(vnet, &sgid) : NULL;
	if (peer)
		ib_device_put(&peer->ibdev);
	return !peer;
}

enum rdma_network_type vhca_net_rx_gids(const struct sk_buff *skb,
					union ib_gid *sgid, union ib_gid *dgid)
{
	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = ip_hdr(skb);

		ipv6_addr_set_v4mapped(iph->saddr, (struct in6_addr *)sgid->raw);
		ipv6_addr_set_v4mapped(iph->daddr, (struct in6_addr *)dgid->raw);
		return RDMA_NETWORK_IPV4;
	}
	memcpy(sgid->raw, &ipv6_hdr(skb)->saddr, sizeof(*sgid));
	memcpy(dgid->raw, &ipv6_hdr(skb)->daddr, sizeof(*dgid));
	return RDMA_NETWORK_IPV6;
}

/*
 * A packet for vdev, skb->data at the BTH (linear), counted as received
 * and passed to its engine unless its ICRC is checked (wire) and wrong;
 * BHs off, RCU.
 */
static void vhca_net_rx(struct vhca_dev *vdev, struct sk_buff *skb,
			bool check_icrc)
{
	atomic64_inc(&vdev->counters[VHCA_CNT_RX_PACKETS]);
	atomic64_add(skb->len, &vdev->counters[VHCA_CNT_RX_BYTES]);
	if (check_icrc &&
	    vhca_pkt_icrc_check(skb_network_header(skb),
				skb_transport_header(skb), skb->data, skb->len)) {
		atomic64_inc(&vdev->counters[VHCA_CNT_RX_ICRC_ERRORS]);
		kfree_skb(skb);
		return;
	}
	vdev->net.rx(vdev, skb);
}

/*
 * A multicast packet from the wire (see the top comment): a copy to each
 * device it is for.  BHs off, RCU; consumes skb.
 */
static void vhca_net_rx_mcast(struct vhca_net *vnet, struct sk_buff *skb,
			      const union ib_gid *sgid,
			      const union ib_gid *dgid)
{
	struct vhca_net_link *link;
	struct vhca_dev *vdev;
	struct sk_buff *copy;

	if (!skb->dev)
		goto out;
	vdev = READ_ONCE(force_wire) ? NULL : vhca_net_find_dev(vnet, sgid);
	if (vdev) {
		ib_device_put(&vdev->ibdev);
		goto out;
	}
	list_for_each_entry_rcu(link, &vnet->devs, node) {
		vdev = container_of(link, struct vhca_dev, net);
		if (skb->dev != vdev->ndev &&
		    rdma_vlan_dev_real_dev(skb->dev) != vdev->ndev)
			continue;
		if (!vhca_mcast_group(vdev, dgid) ||
		    !ib_device_try_get(&vdev->ibdev))
			continue;
		copy = skb_clone(skb, GFP_ATOMIC);
		if (copy)
			vhca_net_rx(vdev, copy, true);
		ib_device_put(&vdev->ibdev);
	}
out:
	kfree_skb(skb);
}

/*
 * encap_rcv of the socket, in softirq under RCU: skb->data is at the UDP
 * header, whose length the UDP layer has checked and trimmed skb to.
 * Always consumes skb (returns 0).
 */
static int vhca_net_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct vhca_net *vnet = rcu_dereference_sk_user_data(sk);
	union ib_gid sgid, dgid;
	struct vhca_dev *vdev;

	/* NULL once the socket is being released. */
	if (!vnet || skb->len < sizeof(struct udphdr) + VHCA_NET_MIN_LEN)
		goto drop;
	/* skb->data at the BTH, skb->len bytes through the ICRC. */
	__skb_pull(skb, sizeof(struct udphdr));
	if (skb_linearize(skb))
		goto drop;
	/* The IP layer's control block: from here on vhca's. */
	*vhca_net_cb(skb) = (struct vhca_net_cb){};
	vhca_net_rx_gids(skb, &sgid, &dgid);
	if (rdma_is_multicast_addr((struct in6_addr *)dgid.raw)) {
		vhca_net_rx_mcast(vnet, skb, &sgid, &dgid);
		return 0;
	}
	vdev = vhca_net_find_dev(vnet, &dgid);
	if (!vdev)
		goto drop;
	vhca_net_rx(vdev, skb, true);
	ib_device_put(&vdev->ibdev);
	return 0;

drop:
	kfree_skb(skb);
	return 0;
}

static int vhca_net_open(struct vhca_net *vnet, struct net *net)
{
	/*
	 * v6only off: IPv4 too.  IPv6 receive checksums off: RoCEv2 sends
	 * UDP checksum 0 over IPv6 as well.
	 */
	struct udp_port_cfg cfg = {
		.family = IS_ENABLED(CONFIG_IPV6) ? AF_INET6 : AF_INET,
		.local_udp_port = htons(ROCE_V2_UDP_DPORT),
	};
	struct udp_tunnel_sock_cfg tcfg = {
		.sk_user_data = vnet,
		.encap_type = 1,	/* any non-zero value: encapsulation on */
		.encap_rcv = vhca_net_encap_rcv,
	};
	int err;

	err = udp_sock_create(net, &cfg, &vnet->sock);
	/* IPv6 disabled at boot (ipv6.disable=1): IPv4 only. */
	if (err == -EAFNOSUPPORT && cfg.family == AF_INET6) {
		cfg.family = AF_INET;
		err = udp_sock_create(net, &cfg, &vnet->sock);
	}
	if (err)
		return err;
	/*
	 * Multicast sent is not looped back (see the top comment); IPv4
	 * groups are received on the IPv6 socket too, which only an IPv4
	 * socket does unless told (ip_mc_sf_allow()).
	 */
	inet_clear_bit(MC_LOOP, vnet->sock->sk);
	inet_set_bit(MC_ALL, vnet->sock->sk);
	if (cfg.family == AF_INET6)
		inet6_clear_bit(MC6_LOOP, vnet->sock->sk);
	setup_udp_tunnel_sock(net, vnet->sock->sk, &tcfg);
	return 0;
}

static struct vhca_net *vhca_net_lookup_locked(const struct net *net)
{
	struct vhca_net *vnet;

	lockdep_assert_held(&vhca_nets_lock);
	list_for_each_entry(vnet, &vhca_nets, list)
		if (vnet->net == net)
			return vnet;
	return NULL;
}

#ifdef VHCA_TEST_HOOKS
/*
 * Test hook of the debug test build: writing "SGID_INDEX ADDRESS" to
 * debugfs vhca/vhca.N/net_xmit sends one RC ACK from that source GID to
 * the RoCE v2 GID of ADDRESS (IPv4 or IPv6).
 */
static ssize_t vhca_net_xmit_write(struct file *file, const char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	struct vhca_pkt pkt = {
		.opcode = IB_OPCODE_RC_ACKNOWLEDGE,
		.dqpn = 1,
		.aeth_syndrome = vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID),
	};
	const unsigned int len = sizeof(struct vhca_bth) +
				 sizeof(struct vhca_aeth);
	struct vhca_dev *vdev = file->private_data;
	struct ib_global_route grh = { .hop_limit = 64 };
	char buf[80], addr[INET6_ADDRSTRLEN];
	struct sk_buff *skb;
	unsigned int index;
	__be32 v4;
	int err;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (sscanf(buf, "%u %45s", &index, addr) != 2)
		return -EINVAL;
	if (in4_pton(addr, -1, (u8 *)&v4, -1, NULL))
		ipv6_addr_set_v4mapped(v4, (struct in6_addr *)grh.dgid.raw);
	else if (!in6_pton(addr, -1, grh.dgid.raw, -1, NULL))
		return -EINVAL;

	if (!ib_device_try_get(&vdev->ibdev))
		return -ENODEV;
	grh.sgid_attr = rdma_get_gid_attr(&vdev->ibdev, VHCA_PORT, index);
	if (IS_ERR(grh.sgid_attr)) {
		err = PTR_ERR(grh.sgid_attr);
		goto out_put;
	}
	skb = vhca_net_alloc_skb(vdev, len, GFP_KERNEL);
	if (!skb) {
		err = -ENOMEM;
		goto out_attr;
	}
	err = vhca_pkt_build(skb_put(skb, len), len, &pkt);
	if (err < 0) {
		kfree_skb(skb);
		goto out_attr;
	}
	err = vhca_net_xmit(vdev, &grh, rdma_get_udp_sport(0, 1, 1), NULL,
			    skb);
out_attr:
	rdma_put_gid_attr(grh.sgid_attr);
out_put:
	ib_device_put(&vdev->ibdev);
	return err ?: count;
}

static const struct file_operations vhca_net_xmit_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = vhca_net_xmit_write,
};

/* Removed with the device's debugfs folder, before dealloc_driver detaches. */
static void vhca_net_debugfs_add(struct vhca_dev *vdev)
{
	debugfs_create_file("net_xmit", 0200, vdev->debugfs, vdev,
			    &vhca_net_xmit_fops);
}
#else
static void vhca_net_debugfs_add(struct vhca_dev *vdev)
{
}
#endif

int vhca_net_attach(struct vhca_dev *vdev, vhca_net_rx_t rx)
{
	struct net *net = dev_net(vdev->ndev);
	struct vhca_net *vnet;
	int err = 0;

	mutex_lock(&vhca_nets_lock);
	vnet = vhca_net_lookup_locked(net);
	if (!vnet) {
		vnet = kzalloc(sizeof(*vnet), GFP_KERNEL);
		if (!vnet) {
			err = -ENOMEM;
			goto out;
		}
		vnet->net = net;
		INIT_LIST_HEAD(&vnet->devs);
		spin_lock_init(&vnet->gids_lock);
		err = vhca_net_open(vnet, net);
		if (err) {
			kfree(vnet);
			goto out;
		}
		list_add_rcu(&vnet->list, &vhca_nets);
	}
	vdev->net.rx = rx;
	vhca_mcast_init(&vdev->net.mcast);
	list_add_tail_rcu(&vdev->net.node, &vnet->devs);
	vdev->net.vnet = vnet;
	vhca_net_debugfs_add(vdev);
out:
	mutex_unlock(&vhca_nets_lock);
	return err;
}

void vhca_net_detach(struct vhca_dev *vdev)
{
	struct vhca_net *vnet = vdev->net.vnet;

	if (!vnet)
		return;
	/* Unregistered: no QP, no receiver (vhca_net_find_dev()) left. */
	vhca_mcast_fini(vdev);
	mutex_lock(&vhca_nets_lock);
	list_del_rcu(&vdev->net.node);
	WRITE_ONCE(vdev->net.vnet, NULL);
	if (list_empty(&vnet->devs)) {
		list_del_rcu(&vnet->list);
		/*
		 * Clears sk_user_data and waits a grace period: no receiver
		 * and no namespace exit still looks at vnet afterwards.
		 */
		udp_tunnel_sock_release(vnet->sock->sk);
		kfree(vnet);
		wake_up_all(&vhca_nets_wait);
	}
	mutex_unlock(&vhca_nets_lock);
}

struct sk_buff *vhca_net_alloc_skb(struct vhca_dev *vdev, unsigned int len,
				   gfp_t gfp)
{
	unsigned int head = LL_RESERVED_SPACE(vdev->ndev) + VHCA_NET_HDR_LEN;
	struct sk_buff *skb;

	skb = alloc_skb(head + len + IB_ICRC_BYTES, gfp);
	if (skb)
		skb_reserve(skb, head);
	return skb;
}

/*
 * Put the UDP and IP headers in front of skb (BTH through ICRC) as they go
 * out, but for the IPv4 header checksum, which IP output sets, and the
 * IPv4 ID, which the wire path picks (vhca_net_gso()).
 */
static void vhca_net_push_hdrs(struct sk_buff *skb,
			       const struct ib_global_route *grh, u16 sport,
			       bool ip4)
{
	const struct in6_addr *saddr =
		(const struct in6_addr *)grh->sgid_attr->gid.raw;
	const struct in6_addr *daddr = (const struct in6_addr *)grh->dgid.raw;
	struct ipv6hdr *ip6h;
	struct udphdr *uh;
	struct iphdr *iph;

	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = htons(sport);
	uh->dest = htons(ROCE_V2_UDP_DPORT);
	uh->len = htons(skb->len);
	uh->check = 0;

	if (ip4) {
		iph = skb_push(skb, sizeof(*iph));
		skb_reset_network_header(skb);
		iph->version = 4;
		iph->ihl = sizeof(*iph) / 4;
		iph->tos = grh->traffic_class;
		iph->tot_len = htons(skb->len);
		iph->frag_off = htons(IP_DF);
		iph->ttl = grh->hop_limit;
		iph->protocol = IPPROTO_UDP;
		iph->check = 0;
		iph->saddr = saddr->s6_addr32[3];
		iph->daddr = daddr->s6_addr32[3];
		iph->id = 0;
		skb->protocol = htons(ETH_P_IP);
	} else {
		ip6h = skb_push(skb, sizeof(*ip6h));
		skb_reset_network_header(skb);
		ip6_flow_hdr(ip6h, grh->traffic_class, 0);
		ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
		ip6h->nexthdr = IPPROTO_UDP;
		ip6h->hop_limit = grh->hop_limit;
		ip6h->saddr = *saddr;
		ip6h->daddr = *daddr;
		skb->protocol = htons(ETH_P_IPV6);
	}
}

/*
 * Route skb by route, the cache of its sender's path, or (none cached, or
 * no cache) by a lookup that fills it.  BHs off.
 */
static int vhca_net_route4(struct sk_buff *skb, struct net *net, int oif,
			   struct dst_cache *route)
{
	const struct iphdr *iph = ip_hdr(skb);
	struct flowi4 fl4 = {
		.flowi4_oif = oif,
		.flowi4_proto = IPPROTO_UDP,
		.saddr = iph->saddr,
		.daddr = iph->daddr,
	};
	struct rtable *rt = NULL;
	__be32 saddr;

	if (route)
		rt = dst_cache_get_ip4(route, &saddr);
	if (!rt) {
		rt = ip_route_output_key(net, &fl4);
		if (IS_ERR(rt))
			return PTR_ERR(rt);
		if (route)
			dst_cache_set_ip4(route, &rt->dst, fl4.saddr);
	}
	skb_dst_set(skb, &rt->dst);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	return 0;
}

static int vhca_net_route6(struct sk_buff *skb, struct sock *sk, int oif,
			   struct dst_cache *route)
{
	const struct ipv6hdr *ip6h = ipv6_hdr(skb);
	struct flowi6 fl6 = {
		.flowi6_oif = oif,
		.flowi6_proto = IPPROTO_UDP,
		.saddr = ip6h->saddr,
		.daddr = ip6h->daddr,
	};
	struct dst_entry *dst = NULL;
	struct in6_addr saddr;
	int err;

	if (route)
		dst = dst_cache_get_ip6(route, &saddr);
	if (!dst) {
		dst = ip6_dst_lookup_flow(sock_net(sk), sk, &fl6, NULL);
		if (IS_ERR(dst))
			return PTR_ERR(dst);
		if (dst->error) {
			err = dst->error;
			dst_release(dst);
			return err;
		}
		if (route)
			dst_cache_set_ip6(route, dst, &fl6.saddr);
	}
	skb_dst_set(skb, dst);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	return 0;
}

/*
 * Deliver skb (headers pushed) from vdev to dst in the kernel, unless this
 * CPU is nested too deeply: true if so (skb consumed).  BHs off, dst held.
 */
static bool vhca_net_deliver(struct vhca_dev *vdev, struct vhca_dev *dst,
			     struct sk_buff *skb)
{
	if (__this_cpu_read(vhca_net_local_depth) >= VHCA_NET_LOCAL_DEPTH)
		return false;
	__this_cpu_inc(vhca_net_local_depth);
	atomic64_inc(&vdev->counters[VHCA_CNT_LOCAL_TX_PACKETS]);
	atomic64_inc(&dst->counters[VHCA_CNT_LOCAL_RX_PACKETS]);
	/* What IP output would do: the header arrives as sent. */
	if (skb->protocol == htons(ETH_P_IP))
		ip_send_check(ip_hdr(skb));
	__skb_pull(skb, skb_transport_offset(skb) + sizeof(struct udphdr));
	vhca_net_cb(skb)->local = true;
	/* QPs are freed after a grace period (vhca_engine_qp_fini). */
	rcu_read_lock();
	vhca_net_rx(dst, skb, false);
	rcu_read_unlock();
	__this_cpu_dec(vhca_net_local_depth);
	return true;
}

/*
 * Deliver skb (headers pushed, len bytes BTH through ICRC) to the device
 * of vdev's namespace owning dgid, if there is one and this CPU is not
 * nested too deeply: true if so (skb consumed), false if skb is to take
 * the wire.  See the top comment.
 */
static bool vhca_net_local(struct vhca_dev *vdev, const union ib_gid *dgid,
			   struct sk_buff *skb, unsigned int len)
{
	struct vhca_dev *dst;
	bool done;

	/* Holds dst's registration: its removal waits for the put below. */
	dst = vhca_net_find_dev(vdev->net.vnet, dgid);
	if (!dst)
		return false;
	local_bh_disable();
	done = vhca_net_deliver(vdev, dst, skb);
	if (done) {
		atomic64_inc(&vdev->counters[VHCA_CNT_TX_PACKETS]);
		atomic64_add(len, &vdev->counters[VHCA_CNT_TX_BYTES]);
	}
	local_bh_enable();
	ib_device_put(&dst->ibdev);
	return done;
}

int vhca_net_direct(struct vhca_dev *vdev, const struct ib_global_route *grh,
		    bool (*place)(struct vhca_dev *dst, void *arg), void *arg)
{
	const struct ib_gid_attr *sattr = grh->sgid_attr;
	const struct in6_addr *daddr = (const struct in6_addr *)grh->dgid.raw;
	struct vhca_net *vnet = READ_ONCE(vdev->net.vnet);
	struct vhca_dev *dst;
	bool taken;

	if (READ_ONCE(force_wire) || !vnet || !sattr ||
	    sattr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP ||
	    rdma_is_multicast_addr((struct in6_addr *)daddr) ||
	    ipv6_addr_v4mapped(daddr) !=
	    ipv6_addr_v4mapped((const struct in6_addr *)sattr->gid.raw))
		return -ENODEV;
	/* Holds dst's registration: its removal waits for the put below. */
	dst = vhca_net_find_dev(vnet, &grh->dgid);
	if (!dst)
		return -ENODEV;
	local_bh_disable();
	rcu_read_lock();
	taken = place(dst, arg);
	rcu_read_unlock();
	local_bh_enable();
	ib_device_put(&dst->ibdev);
	return taken;
}

bool vhca_net_direct_from(const struct ib_global_route *spath, u32 sqpn,
			  const struct ib_global_route *path, u32 peer_qpn)
{
	return spath->sgid_attr && path->sgid_attr && sqpn == peer_qpn &&
	       !memcmp(&spath->sgid_attr->gid, &path->dgid,
		       sizeof(path->dgid)) &&
	       !memcmp(&spath->dgid, &path->sgid_attr->gid,
		       sizeof(path->dgid));
}

/*
 * A copy of multicast skb (headers pushed) to each vhca device of vdev's
 * namespace with a QP in group mgid, in the kernel.  A copy this CPU is
 * nested too deeply for is lost, as a datagram may be.
 */
static void vhca_net_local_mcast(struct vhca_dev *vdev,
				 const union ib_gid *mgid, struct sk_buff *skb)
{
	struct vhca_net_link *link;
	struct vhca_dev *dst;
	struct sk_buff *copy;

	local_bh_disable();
	rcu_read_lock();
	list_for_each_entry_rcu(link, &vdev->net.vnet->devs, node) {
		dst = container_of(link, struct vhca_dev, net);
		if (!vhca_mcast_group(dst, mgid) ||
		    !ib_device_try_get(&dst->ibdev))
			continue;
		copy = skb_clone(skb, GFP_ATOMIC);
		if (copy && !vhca_net_deliver(vdev, dst, copy))
			kfree_skb(copy);
		ib_device_put(&dst->ibdev);
	}
	rcu_read_unlock();
	local_bh_enable();
}

/*
 * GSO: the packets at the head of more (headers not pushed, no ICRC yet)
 * that have skb's length (len: BTH through ICRC) follow skb (routed, its
 * headers pushed), as many as one IP datagram carries, in one UDP
 * fraglist GSO packet: the frag_list holds each packet with its own
 * headers (data at its BTH), as the kernel's UDP GRO builds them.  IP
 * output, the device and the receiving host's IP and UDP then take the
 * batch once, and whatever segments it (the receiving UDP socket, a device
 * without the feature, a tap's reader cutting by gso_size) gives back the
 * packets they were: each its own headers, the IPv4 ID one above the one
 * before.  The IPv4 IDs are set here and every ICRC covers its packet's
 * headers as segmentation leaves them.  Returns how many packets skb
 * carries, or an error (skb still single; the packets taken from more are
 * freed).
 */
static int vhca_net_gso(struct sk_buff *skb, struct sk_buff_head *more,
			struct net *net, const struct ib_global_route *grh,
			u16 sport, bool ip4, unsigned int len)
{
	unsigned int hlen = skb->len - len;
	unsigned int room = hlen + LL_RESERVED_SPACE(skb_dst(skb)->dev);
	struct sk_buff *segs = NULL, **tail = &segs, *seg;
	unsigned int n = 1;
	u16 id = 0;
	int err;

	while (more && n < VHCA_NET_GSO_SEGS &&
	       hlen + (n + 1) * len <= IP_MAX_MTU) {
		seg = skb_peek(more);
		if (!seg || seg->len + IB_ICRC_BYTES != len ||
		    skb_tailroom(seg) < IB_ICRC_BYTES ||
		    skb_headroom(seg) < room || skb_is_nonlinear(seg))
			break;
		__skb_unlink(seg, more);
		skb_put_zero(seg, IB_ICRC_BYTES);
		vhca_net_push_hdrs(seg, grh, sport, ip4);
		*tail = seg;
		tail = &seg->next;
		n++;
	}
	*tail = NULL;

	if (ip4) {
		__ip_select_ident(net, ip_hdr(skb), n);
		id = ntohs(ip_hdr(skb)->id);
	}
	err = vhca_pkt_icrc_set(ip_hdr(skb), udp_hdr(skb), udp_hdr(skb) + 1,
				len);
	for (seg = segs; seg && !err; seg = seg->next) {
		if (ip4)
			ip_hdr(seg)->id = htons(++id);
		err = vhca_pkt_icrc_set(ip_hdr(seg), udp_hdr(seg),
					udp_hdr(seg) + 1, len);
	}
	if (err) {
		kfree_skb_list(segs);
		return err;
	}
	if (!segs)
		return 1;

	for (seg = segs; seg; seg = seg->next) {
		__skb_pull(seg, hlen);
		skb->len += seg->len;
		skb->data_len += seg->len;
		skb->truesize += seg->truesize;
	}
	skb_shinfo(skb)->frag_list = segs;
	udp_hdr(skb)->len = htons(skb->len - skb_transport_offset(skb));
	skb_shinfo(skb)->gso_size = len;
	skb_shinfo(skb)->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
	skb_shinfo(skb)->gso_segs = n;
	/* UDP checksum zero: none to compute or check, here or on receive. */
	skb->ip_summed = CHECKSUM_UNNECESSARY;
	return n;
}

/*
 * Send skb, and the packets of more that can go with it (vhca_net_gso());
 * see vhca_net_xmit().  Returns 1 when skb took the wire, 0 when it was
 * delivered in the kernel, or an error.
 */
static int vhca_net_send(struct vhca_dev *vdev,
			 const struct ib_global_route *grh, u16 sport,
			 struct dst_cache *route, struct sk_buff *skb,
			 struct sk_buff_head *more)
{
	const struct ib_gid_attr *sattr = grh->sgid_attr;
	const struct in6_addr *saddr = (const struct in6_addr *)sattr->gid.raw;
	const struct in6_addr *daddr = (const struct in6_addr *)grh->dgid.raw;
	struct sock *sk = vdev->net.vnet->sock->sk;
	struct net_device *ndev;
	bool ip4 = ipv6_addr_v4mapped(saddr);
	bool mcast = rdma_is_multicast_addr((struct in6_addr *)daddr);
	unsigned int len;
	int oif, err, n;

	if (sattr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP ||
	    ipv6_addr_v4mapped(daddr) != ip4) {
		ibdev_dbg(&vdev->ibdev, "xmit: not a RoCE v2 GID pair: %pI6 -> %pI6\n",
			  saddr, daddr);
		err = -EINVAL;
		goto err_free;
	}
	if (skb_tailroom(skb) < IB_ICRC_BYTES ||
	    skb_headroom(skb) < VHCA_NET_HDR_LEN || skb_is_nonlinear(skb)) {
		ibdev_dbg(&vdev->ibdev, "xmit: skb not from vhca_net_alloc_skb\n");
		err = -EINVAL;
		goto err_free;
	}
	rcu_read_lock();
	ndev = vhca_net_gid_ndev(sattr);
	oif = ndev ? ndev->ifindex : 0;
	rcu_read_unlock();
	if (!oif) {
		err = -ENODEV;
		goto err_free;
	}

	skb_put_zero(skb, IB_ICRC_BYTES);
	len = skb->len;
	vhca_net_push_hdrs(skb, grh, sport, ip4);
	if (!READ_ONCE(force_wire)) {
		if (mcast)
			vhca_net_local_mcast(vdev, &grh->dgid, skb);
		else if (vhca_net_local(vdev, &grh->dgid, skb, len))
			return 0;
	}

	/* The route cache's entries are per CPU. */
	local_bh_disable();
	if (ip4)
		err = vhca_net_route4(skb, sock_net(sk), oif, route);
	else
		err = vhca_net_route6(skb, sk, oif, route);
	local_bh_enable();
	if (err) {
		ibdev_dbg(&vdev->ibdev, "xmit: no route from %pI6 to %pI6: %d\n",
			  saddr, daddr, err);
		goto err_free;
	}
	n = vhca_net_gso(skb, mcast ? NULL : more, sock_net(sk), grh, sport,
			 ip4, len);
	if (n < 0) {
		err = n;
		goto err_free;
	}

	if (ip4)
		err = ip_local_out(sock_net(sk), sk, skb);
	else
		err = ip6_local_out(sock_net(sk), sk, skb);
	if (err > 0)
		err = net_xmit_errno(err);
	if (err)
		return err;
	atomic64_add(n, &vdev->counters[VHCA_CNT_TX_PACKETS]);
	atomic64_add((u64)n * len, &vdev->counters[VHCA_CNT_TX_BYTES]);
	return 1;

err_free:
	kfree_skb(skb);
	return err;
}

int vhca_net_xmit(struct vhca_dev *vdev, const struct ib_global_route *grh,
		  u16 sport, struct dst_cache *route, struct sk_buff *skb)
{
	int err = vhca_net_send(vdev, grh, sport, route, skb, NULL);

	return err < 0 ? err : 0;
}

bool vhca_net_xmit_list(struct vhca_dev *vdev,
			const struct ib_global_route *grh, u16 sport,
			struct dst_cache *route, struct sk_buff_head *list)
{
	struct sk_buff *skb;
	bool wire = false;

	while ((skb = __skb_dequeue(list)))
		if (vhca_net_send(vdev, grh, sport, route, skb, list) > 0)
			wire = true;
	return wire;
}

static bool vhca_net_in_use(const struct net *net)
{
	struct vhca_net *vnet;
	bool used = false;

	rcu_read_lock();
	list_for_each_entry_rcu(vnet, &vhca_nets, list)
		if (vnet->net == net)
			used = true;
	rcu_read_unlock();
	return used;
}

/*
 * Runs after the namespace's netdevs are gone (unregistered or moved out):
 * each device of the namespace has had NETDEV_UNREGISTER and its removal
 * is done or queued, so this wait ends.
 */
static void __net_exit vhca_net_pernet_exit(struct net *net)
{
	wait_event(vhca_nets_wait, !vhca_net_in_use(net));
}

static struct pernet_operations vhca_net_pernet_ops = {
	.exit = vhca_net_pernet_exit,
};

int vhca_net_init(void)
{
	return register_pernet_subsys(&vhca_net_pernet_ops);
}

void vhca_net_exit(void)
{
	unregister_pernet_subsys(&vhca_net_pernet_ops);
}
