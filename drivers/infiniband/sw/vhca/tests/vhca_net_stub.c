// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What vhca_engine_kunit.c's engine has of the network instead of
 * vhca_net.c: a transmit hook that captures every packet, the origin of
 * received packets, and a GID entry for the bare device.  Not compiled on
 * its own: vhca_engine_kunit.c includes it after the engine's sources,
 * whose headers declare these functions.
 */

/* The transmit hook: every packet the engine sends, in order. */
static struct sk_buff_head engine_test_sent;

struct sk_buff *vhca_net_alloc_skb(struct vhca_dev *vdev, unsigned int len,
				   gfp_t gfp)
{
	return alloc_skb(len + IB_ICRC_BYTES, gfp);
}

/* Captured with a zero ICRC, so that vhca_pkt_parse() takes it back. */
int vhca_net_xmit(struct vhca_dev *vdev, const struct ib_global_route *grh,
		  u16 sport, struct dst_cache *route, struct sk_buff *skb)
{
	skb_put_zero(skb, IB_ICRC_BYTES);
	skb_queue_tail(&engine_test_sent, skb);
	return 0;
}

/* A case sets it to have the captured packets count as on the wire. */
static bool engine_test_wire;

bool vhca_net_xmit_list(struct vhca_dev *vdev,
			const struct ib_global_route *grh, u16 sport,
			struct dst_cache *route, struct sk_buff_head *list)
{
	struct sk_buff *skb;
	bool sent = false;

	while ((skb = __skb_dequeue(list))) {
		vhca_net_xmit(vdev, grh, sport, route, skb);
		sent = true;
	}
	return sent && engine_test_wire;
}

/* Every packet comes from this GID (the QPs' peer GID is all zeros). */
static union ib_gid engine_test_source_gid;

enum rdma_network_type vhca_net_rx_gids(const struct sk_buff *skb,
					union ib_gid *sgid, union ib_gid *dgid)
{
	*sgid = engine_test_source_gid;
	memset(dgid, 0, sizeof(*dgid));
	return RDMA_NETWORK_IPV4;
}

/* The origin check: the source GID alone (the QPs have no sgid_attr). */
bool vhca_net_rx_from(struct sk_buff *skb, const struct ib_global_route *path,
		      u32 peer_qpn)
{
	return !memcmp(&engine_test_source_gid, &path->dgid, sizeof(path->dgid));
}

/*
 * Direct placement: the device a case sets here is every QP's local peer
 * device (NULL: none, every run takes packets).  The runs offered are
 * counted; past ENGINE_TEST_DIRECT_MAX the peer is no longer local, so
 * that a requester offering a refused run again and again turns to
 * packets and its case fails on the count instead of never returning.
 */
#define ENGINE_TEST_DIRECT_MAX	1000
static struct vhca_dev *engine_test_direct_dev;
static unsigned int engine_test_direct_runs;

int vhca_net_direct(struct vhca_dev *vdev, const struct ib_global_route *grh,
		    bool (*place)(struct vhca_dev *dst, void *arg), void *arg)
{
	bool taken;

	if (!engine_test_direct_dev ||
	    ++engine_test_direct_runs > ENGINE_TEST_DIRECT_MAX)
		return -ENODEV;
	local_bh_disable();
	rcu_read_lock();
	taken = place(engine_test_direct_dev, arg);
	rcu_read_unlock();
	local_bh_enable();
	return taken;
}

/* As vhca_net_rx_from(): the source GID, and the sending QP. */
bool vhca_net_direct_from(const struct ib_global_route *spath, u32 sqpn,
			  const struct ib_global_route *path, u32 peer_qpn)
{
	return sqpn == peer_qpn &&
	       !memcmp(&engine_test_source_gid, &path->dgid, sizeof(path->dgid));
}

/*
 * The bare device has no GID table: the lingering QPs' lookup of their
 * source GID gets this entry (only the engine's code in this module calls
 * these two).
 */
static const struct ib_gid_attr engine_test_gid_attr = {
	.gid_type = IB_GID_TYPE_ROCE_UDP_ENCAP,
};

const struct ib_gid_attr *rdma_get_gid_attr(struct ib_device *device,
					    u32 port_num, int index)
{
	return &engine_test_gid_attr;
}

void rdma_put_gid_attr(const struct ib_gid_attr *attr)
{
}
