// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite of hostile input to the engine: lengths past the port's MTU,
 * READ responses and WRITEs that do not carry what their request said, a
 * send queue head moved backwards, lingering-QP accounting, and an error
 * of the engine racing a reset.  Each case states the wrong result it
 * guards against.  Included by vhca_engine_kunit.c, whose fixture it uses.
 */
#include <linux/etherdevice.h>

/* QP events the engine raised (qp_context is the fixture). */
static atomic_t hostile_qp_events;

static void hostile_qp_event(struct ib_event *ev, void *ctx)
{
	atomic_inc(&hostile_qp_events);
}

/*
 * A UD payload is bounded by the port's active MTU, which is 256 on a
 * netdev too small for any IB MTU: never "no bound" (a 2000-byte datagram
 * on an MTU-300 port went out, and SGEs summing near 2^32 overflowed the
 * packet).
 */
static void engine_ud_len_past_port_mtu(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct net_device *ndev = alloc_etherdev(0);
	struct vhca_send_wqe *slot;
	struct vhca_ud_wqe wqe;
	struct vhca_sge *sge;

	KUNIT_ASSERT_NOT_NULL(test, ndev);
	t->vdev->ndev = ndev;
	slot = sq_slot(t, 1, VHCA_WR_SEND);
	slot->num_sge = 1;
	sge = (struct vhca_sge *)(slot + 1);
	sge->addr = (uintptr_t)t->local;
	sge->lkey = t->mr->lkey;
	sq_publish(t);

	ndev->mtu = 300;
	KUNIT_EXPECT_EQ(test, vhca_port_mtu(t->vdev), IB_MTU_256);
	sge->length = 257;
	KUNIT_EXPECT_EQ(test, vhca_ud_fetch(t->req, &wqe), IB_WC_LOC_LEN_ERR);
	sge->length = 256;
	KUNIT_EXPECT_EQ(test, vhca_ud_fetch(t->req, &wqe), IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wqe.len, 256U);

	ndev->mtu = 68;
	KUNIT_EXPECT_EQ(test, vhca_port_mtu(t->vdev), IB_MTU_256);
	sge->length = 0x0ffffffc;
	KUNIT_EXPECT_EQ(test, vhca_ud_fetch(t->req, &wqe), IB_WC_LOC_LEN_ERR);

	ndev->mtu = 1500;
	KUNIT_EXPECT_EQ(test, vhca_port_mtu(t->vdev), IB_MTU_1024);
	sge->length = 1025;
	KUNIT_EXPECT_EQ(test, vhca_ud_fetch(t->req, &wqe), IB_WC_LOC_LEN_ERR);
	sge->length = 1024;
	KUNIT_EXPECT_EQ(test, vhca_ud_fetch(t->req, &wqe), IB_WC_SUCCESS);

	t->vdev->ndev = NULL;
	free_netdev(ndev);
}

/* No packet is built with more payload than the largest path MTU. */
static void engine_tx_build_len_bounded(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt pkt = {
		.opcode = IB_OPCODE_UD_SEND_ONLY,
		.paylen = VHCA_MAX_PKT_PAYLOAD,
	};
	struct sk_buff *skb;
	void *payload;

	skb = vhca_tx_build(t->vdev, &pkt, &payload);
	KUNIT_ASSERT_FALSE(test, IS_ERR(skb));
	KUNIT_EXPECT_GE(test, skb_tailroom(skb), (int)IB_ICRC_BYTES);
	kfree_skb(skb);
	pkt.paylen = VHCA_MAX_PKT_PAYLOAD + 1;
	KUNIT_ASSERT_EQ(test, PTR_ERR(vhca_tx_build(t->vdev, &pkt, &payload)),
			-EINVAL);
	/* Where the sums of the headers, pad and ICRC would wrap. */
	pkt.paylen = U32_MAX - 3;
	KUNIT_EXPECT_EQ(test, PTR_ERR(vhca_tx_build(t->vdev, &pkt, &payload)),
			-EINVAL);
}

/* A READ of BUF_LEN bytes (wr_id 1) posted and its request sent. */
static void start_read(struct kunit *test, struct engine_test *t)
{
	post_send(t, 1, VHCA_WR_RDMA_READ, t->local, BUF_LEN,
		  (uintptr_t)t->remote);
	vhca_req_run(t->req);
	expect_sent(test, IB_OPCODE_RC_RDMA_READ_REQUEST, SQ_PSN, NULL);
}

/*
 * READ responses that leave holes: FIRST and MIDDLE without payload, then
 * a full LAST, must not complete a 3-packet READ; nor may responses of
 * the wrong opcode or length at their PSN.  The right ones, after, do.
 */
static void engine_read_response_holes(struct kunit *test)
{
	struct engine_test *t = test->priv;
	u64 malformed = counter(t, VHCA_CNT_RX_MALFORMED);
	struct vhca_pkt rsp = {
		.dqpn = REQ_QPN,
		.aeth_syndrome = vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID),
	};
	/* At the READ's first PSN, what it expects next. */
	static const struct {
		u8 opcode;
		u32 paylen;
	} bad[] = {
		{ IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, 0 },
		{ IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, MTU - 1 },
		{ IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE, MTU },
		{ IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST, MTU },
		{ IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, BUF_LEN },
	};
	int i;

	memset(t->local, 0, BUF_LEN);
	start_read(test, t);

	/* The forged burst of the report: holes, then a full LAST. */
	rsp.opcode = IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST;
	rsp.psn = SQ_PSN;
	deliver(test, t, &rsp, 0xa1);
	rsp.opcode = IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE;
	rsp.psn = SQ_PSN + 1;
	deliver(test, t, &rsp, 0xa2);
	rsp.opcode = IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST;
	rsp.psn = SQ_PSN + 2;
	rsp.paylen = MTU;
	deliver(test, t, &rsp, 0xa3);
	expect_no_cqe(test, t->send_cq);
	/* The MIDDLE past the dropped FIRST asked the READ again, whole. */
	vhca_req_run(t->req);
	expect_sent(test, IB_OPCODE_RC_RDMA_READ_REQUEST, SQ_PSN, NULL);
	expect_nothing_sent(test);

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		rsp.opcode = bad[i].opcode;
		rsp.psn = SQ_PSN;
		rsp.paylen = bad[i].paylen;
		deliver(test, t, &rsp, 0xee);
		expect_no_cqe(test, t->send_cq);
	}
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_RX_MALFORMED),
			malformed + 1 + ARRAY_SIZE(bad));
	KUNIT_EXPECT_EQ(test, t->local[0], 0);

	/* Then answered as it asked. */
	rsp.paylen = MTU;
	for (i = 0; i < 3; i++) {
		rsp.opcode = !i ? IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST :
			     i == 2 ? IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST :
			     IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE;
		rsp.psn = SQ_PSN + i;
		deliver(test, t, &rsp, 0xb1 + i);
	}
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	expect_mtu_fill(test, t->local, 0xb1);
}

/*
 * A READ asked again from its middle is answered from there with a FIRST
 * (or an ONLY for its last packet), as any responder answers a new READ:
 * those complete it.
 */
static void engine_read_response_reasked(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt rsp = {
		.dqpn = REQ_QPN,
		.paylen = MTU,
		.aeth_syndrome = vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID),
	};

	start_read(test, t);
	rsp.opcode = IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST;
	rsp.psn = SQ_PSN;
	deliver(test, t, &rsp, 0xc1);
	/* Asked again from SQ_PSN + 1: a 2-packet READ's FIRST and LAST. */
	rsp.psn = SQ_PSN + 1;
	deliver(test, t, &rsp, 0xc2);
	/* Asked again from SQ_PSN + 2: a 1-packet READ's ONLY. */
	rsp.opcode = IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY;
	rsp.psn = SQ_PSN + 2;
	deliver(test, t, &rsp, 0xc3);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	expect_mtu_fill(test, t->local, 0xc1);
}

/*
 * A WRITE whose packets carry less than its RETH's length is an invalid
 * request: NAKed, the QP in error, and a WRITE with immediate's receive
 * WQE completed in error, never with SUCCESS and the short byte count.
 */
static void engine_write_short_of_reth(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt pkt = {
		.opcode = IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.paylen = 8,
		.reth_va = (uintptr_t)t->remote,
		.reth_rkey = t->mr->rkey,
		.reth_len = 2 * MTU,
		.ackreq = true,
		.imm = cpu_to_be32(0x1234),
	};

	post_recv(t, 9, NULL, 0);
	deliver(test, t, &pkt, 0x5a);
	expect_nak(test, RQ_PSN, VHCA_NAK_INVALID_REQ);
	expect_cqe(test, t->recv_cq, 9, IB_WC_REM_INV_REQ_ERR, 0);
	expect_no_cqe(test, t->recv_cq);
	KUNIT_EXPECT_EQ(test, t->resp->state, IB_QPS_ERR);
}

/* The same for a FIRST and a LAST one MTU short, without immediate. */
static void engine_write_last_short(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt pkt = {
		.opcode = IB_OPCODE_RC_RDMA_WRITE_FIRST,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.paylen = MTU,
		.reth_va = (uintptr_t)t->remote,
		.reth_rkey = t->mr->rkey,
		.reth_len = 3 * MTU,
	};

	deliver(test, t, &pkt, 0x11);
	pkt.opcode = IB_OPCODE_RC_RDMA_WRITE_LAST;
	pkt.psn = RQ_PSN + 1;
	pkt.ackreq = true;
	deliver(test, t, &pkt, 0x22);
	expect_nak(test, RQ_PSN + 1, VHCA_NAK_INVALID_REQ);
	expect_no_cqe(test, t->recv_cq);
	KUNIT_EXPECT_EQ(test, t->resp->state, IB_QPS_ERR);
}

/*
 * Request packets longer than the path MTU, or a LAST without payload,
 * are malformed: dropped and counted, nothing placed, nothing answered.
 */
static void engine_request_len_past_mtu(struct kunit *test)
{
	struct engine_test *t = test->priv;
	u64 malformed = counter(t, VHCA_CNT_RX_MALFORMED);
	struct vhca_pkt pkt = {
		.opcode = IB_OPCODE_RC_SEND_ONLY,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.paylen = MTU + 1,
		.ackreq = true,
	};

	post_recv(t, 1, t->remote, BUF_LEN);
	deliver(test, t, &pkt, 0x77);
	pkt.opcode = IB_OPCODE_RC_RDMA_WRITE_ONLY;
	pkt.reth_va = (uintptr_t)t->remote;
	pkt.reth_rkey = t->mr->rkey;
	pkt.reth_len = MTU + 1;
	deliver(test, t, &pkt, 0x77);
	expect_nothing_sent(test);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_RX_MALFORMED), malformed + 2);

	/* A FIRST, then a LAST of no byte. */
	pkt.opcode = IB_OPCODE_RC_SEND_FIRST;
	pkt.paylen = MTU;
	pkt.ackreq = false;
	deliver(test, t, &pkt, 0x11);
	pkt.opcode = IB_OPCODE_RC_SEND_LAST;
	pkt.psn = RQ_PSN + 1;
	pkt.paylen = 0;
	pkt.ackreq = true;
	deliver(test, t, &pkt, 0);
	expect_nothing_sent(test);
	expect_no_cqe(test, t->recv_cq);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_RX_MALFORMED), malformed + 3);
	KUNIT_EXPECT_EQ(test, t->remote[MTU], 0);
	KUNIT_EXPECT_EQ(test, t->resp->state, IB_QPS_RTS);
}

/*
 * A READ or WRITE longer than the IBTA's largest message (2^31 bytes,
 * which a READ's responses could not number without wrapping the PSNs)
 * is an invalid request.
 */
static void engine_request_past_max_msg(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt pkt = {
		.opcode = IB_OPCODE_RC_RDMA_READ_REQUEST,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.reth_va = (uintptr_t)t->remote,
		.reth_rkey = t->mr->rkey,
		.reth_len = VHCA_MAX_MSG_SIZE + 1,
		.ackreq = true,
	};

	deliver(test, t, &pkt, 0);
	expect_nak(test, RQ_PSN, VHCA_NAK_INVALID_REQ);
	expect_nothing_sent(test);
	KUNIT_EXPECT_EQ(test, t->resp->state, IB_QPS_ERR);
}

static void engine_write_past_max_msg(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt pkt = {
		.opcode = IB_OPCODE_RC_RDMA_WRITE_FIRST,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.paylen = MTU,
		.reth_va = (uintptr_t)t->remote,
		.reth_rkey = t->mr->rkey,
		.reth_len = U32_MAX,
		.ackreq = true,
	};

	deliver(test, t, &pkt, 0x33);
	expect_nak(test, RQ_PSN, VHCA_NAK_INVALID_REQ);
	KUNIT_EXPECT_EQ(test, t->remote[0], 0);
	KUNIT_EXPECT_EQ(test, t->resp->state, IB_QPS_ERR);
}

/*
 * A send queue head written back over WQEs the engine already sent is an
 * error of the QP, found at the next pass: the requester must not walk
 * the index space from its position to the head (which sent packets
 * without bound, the window refilling with every timeout).
 */
static void engine_sq_head_backwards(struct kunit *test)
{
	struct engine_test *t = test->priv;
	u64 malformed = counter(t, VHCA_CNT_MALFORMED_WQES);
	int i;

	send_n(test, t, 4);
	for (i = 0; i < 4; i++)
		expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN + i, NULL);
	WRITE_ONCE(t->req->recs.db->head[0], 2);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	expect_cqe(test, t->send_cq, 1, IB_WC_LOC_QP_OP_ERR, 0);
	expect_cqe(test, t->send_cq, 2, IB_WC_WR_FLUSH_ERR, 0);
	expect_no_cqe(test, t->send_cq);
	KUNIT_EXPECT_EQ(test, t->req->state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_MALFORMED_WQES),
			malformed + 1);
	/* The retransmit timer finds nothing to send again. */
	fire_rexmit(t->req);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
}

/*
 * A head moved back over a WQE the engine read but holds (a fenced SEND
 * behind a READ) fails the QP too: every WQE announced is the engine's.
 */
static void engine_sq_head_backwards_unsent(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_send_wqe *slot;

	post_send(t, 1, VHCA_WR_RDMA_READ, t->local, 8, (uintptr_t)t->remote);
	slot = sq_slot(t, 2, VHCA_WR_SEND);
	slot->flags = VHCA_WQE_FENCE;
	sq_publish(t);
	vhca_req_run(t->req);
	expect_sent(test, IB_OPCODE_RC_RDMA_READ_REQUEST, SQ_PSN, NULL);
	expect_nothing_sent(test);
	WRITE_ONCE(t->req->recs.db->head[0], 1);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	expect_cqe(test, t->send_cq, 1, IB_WC_LOC_QP_OP_ERR, 0);
	expect_no_cqe(test, t->send_cq);
	KUNIT_EXPECT_EQ(test, t->req->state, IB_QPS_ERR);
}

/*
 * A WQE in flight is flushed from the requester's copy: rewriting its
 * slot after the fetch changes neither the wr_id nor the opcode of its
 * flush completion.  One still unfetched is read from the ring.
 */
static void engine_flush_from_copy(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_send_wqe *slot;
	struct ib_wc wc;

	slot = vhca_ring_slot(&t->req->sq, t->req->recs.db->head[0]);
	post_send(t, 1, VHCA_WR_SEND, t->local, 8, 0);
	vhca_req_run(t->req);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN, NULL);
	WRITE_ONCE(slot->wr_id, 0xbad);
	WRITE_ONCE(slot->opcode, VHCA_WR_RDMA_READ);
	post_send(t, 2, VHCA_WR_SEND, t->local, 8, 0);
	vhca_qp_set_state(t->req, IB_QPS_ERR);
	KUNIT_ASSERT_EQ(test, vhca_poll_cq(&t->send_cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_SEND);
	expect_cqe(test, t->send_cq, 2, IB_WC_WR_FLUSH_ERR, 0);
	expect_no_cqe(test, t->send_cq);
}

/* Bytes after the requester's one WQE copy, which no fetch may touch. */
#define CAPS_GUARD	64

/*
 * The requester as a QP created with one send WR of one SGE, no inline
 * data: its granted caps in *cap, its one WQE copy sized by them
 * (vhca_swqe_stride()) and followed by CAPS_GUARD bytes of 0xa5; the
 * ring keeps the fixture's slots, with room for more than the caps.
 * Returns the guard.
 */
static u8 *small_caps_qp(struct kunit *test, struct engine_test *t,
			 struct ib_qp_cap *cap)
{
	struct vhca_qp *qp = t->req;
	struct vhca_qp_geometry geo;
	u8 *buf;

	*cap = (struct ib_qp_cap){ .max_send_wr = 1, .max_send_sge = 1,
				   .max_recv_wr = 1, .max_recv_sge = 1 };
	KUNIT_ASSERT_EQ(test, vhca_qp_size_caps(cap, false, &geo), 0);
	KUNIT_ASSERT_EQ(test, geo.sq_count, 1U);
	/* Caps below the device's: the fetch must bound by these. */
	KUNIT_ASSERT_LT(test, cap->max_send_sge, (u32)VHCA_MAX_SGE);
	KUNIT_ASSERT_LT(test, cap->max_inline_data, (u32)VHCA_MAX_INLINE);
	KUNIT_ASSERT_LE(test, sizeof(struct vhca_send_wqe) +
			(cap->max_send_sge + 1) * sizeof(struct vhca_sge),
			(size_t)qp->sq.stride);
	KUNIT_ASSERT_LE(test, sizeof(struct vhca_send_wqe) +
			cap->max_inline_data + 1, (size_t)qp->sq.stride);
	qp->sq.count = geo.sq_count;
	qp->max_send_sge = cap->max_send_sge;
	qp->max_inline = cap->max_inline_data;
	qp->req.swqe_stride = vhca_swqe_stride(qp->max_send_sge,
					       qp->max_inline);
	buf = kunit_kzalloc(test, qp->req.swqe_stride + CAPS_GUARD,
			    GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	memset(buf + qp->req.swqe_stride, 0xa5, CAPS_GUARD);
	qp->req.swqe = buf;
	return buf + qp->req.swqe_stride;
}

/*
 * A SEND of num_sge SGEs of 8 bytes each, from t->local on: as many as the
 * ring's slot holds are written.
 */
static void post_send_sges(struct engine_test *t, u64 wr_id, u8 num_sge)
{
	struct vhca_send_wqe *slot = sq_slot(t, wr_id, VHCA_WR_SEND);
	struct vhca_sge *sge = (struct vhca_sge *)(slot + 1);
	u32 i, n = min_t(u32, num_sge, (t->req->sq.stride - sizeof(*slot)) /
					sizeof(*sge));

	slot->num_sge = num_sge;
	for (i = 0; i < n; i++) {
		sge[i].addr = (uintptr_t)t->local + 8 * i;
		sge[i].length = 8;
		sge[i].lkey = t->mr->lkey;
	}
	sq_publish(t);
}

/* A SEND of len bytes inline, len bytes of t->local (all the slot holds). */
static void post_send_inline(struct engine_test *t, u64 wr_id, u32 len,
			     u32 inline_len)
{
	struct vhca_send_wqe *slot = sq_slot(t, wr_id, VHCA_WR_SEND);

	slot->flags = VHCA_WQE_INLINE;
	slot->inline_len = inline_len;
	memcpy(slot + 1, t->local, len);
	sq_publish(t);
}

/* The one WQE posted is sent, received whole, acknowledged, completed. */
static void expect_sent_whole(struct kunit *test, struct engine_test *t,
			      u64 wr_id, u32 len, const u8 *guard)
{
	struct ib_wc wc;

	memset(t->remote, 0, BUF_LEN);
	post_recv(t, wr_id, t->remote, BUF_LEN);
	vhca_req_run(t->req);
	loop_sent(t);			/* the SEND to the responder */
	loop_sent(t);			/* its ACK back */
	expect_cqe(test, t->send_cq, wr_id, IB_WC_SUCCESS, IB_WC_SEND);
	KUNIT_ASSERT_EQ(test, vhca_poll_cq(&t->recv_cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, len);
	KUNIT_EXPECT_EQ(test, memcmp(t->remote, t->local, len), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(guard, 0xa5, CAPS_GUARD));
	KUNIT_EXPECT_EQ(test, t->req->state, IB_QPS_RTS);
}

/*
 * The one WQE posted is refused: LOC_LEN_ERR, nothing sent, counted as
 * malformed, nothing copied past the QP's room; the QP is then reset and
 * brought back to RTS.
 */
static void expect_refused_len(struct kunit *test, struct engine_test *t,
			       u64 wr_id, const u8 *guard)
{
	u64 malformed = counter(t, VHCA_CNT_MALFORMED_WQES);

	vhca_req_run(t->req);
	expect_nothing_sent(test);
	expect_cqe(test, t->send_cq, wr_id, IB_WC_LOC_LEN_ERR, 0);
	expect_no_cqe(test, t->send_cq);
	KUNIT_EXPECT_EQ(test, t->req->state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_MALFORMED_WQES),
			malformed + 1);
	KUNIT_EXPECT_NULL(test, memchr_inv(guard, 0xa5, CAPS_GUARD));
	vhca_qp_set_state(t->req, IB_QPS_RESET);
	vhca_qp_set_state(t->req, IB_QPS_INIT);
	vhca_qp_set_state(t->req, IB_QPS_RTR);
	vhca_qp_set_state(t->req, IB_QPS_RTS);
}

/*
 * A QP's copy of a send WQE has room for the caps it was granted, not for
 * the device's limits: a WQE at max_send_sge SGEs or at max_inline_data
 * bytes is sent whole; one SGE or one byte more, or counts no cap
 * reaches, completes with LOC_LEN_ERR and nothing sent.  Guards against a
 * fetch bounded by VHCA_MAX_SGE or VHCA_MAX_INLINE, which would copy past
 * the QP's room (the guard bytes here, KASAN's redzone further on) and
 * send what the QP never allowed.
 */
static void engine_send_caps_bounded(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct ib_qp_cap cap;
	const u8 *guard = small_caps_qp(test, t, &cap);
	u32 room = max_t(u32, cap.max_send_sge * sizeof(struct vhca_sge),
			 cap.max_inline_data);
	int i;

	/* Room for the caps, less than for the device's limits. */
	KUNIT_EXPECT_GE(test, t->req->req.swqe_stride,
			(u32)(sizeof(struct vhca_swqe) + room));
	KUNIT_EXPECT_LT(test, t->req->req.swqe_stride,
			vhca_swqe_stride(VHCA_MAX_SGE, VHCA_MAX_INLINE));
	for (i = 0; i < BUF_LEN; i++)
		t->local[i] = i * 7 + 1;

	post_send_sges(t, 1, cap.max_send_sge);
	expect_sent_whole(test, t, 1, cap.max_send_sge * 8, guard);
	post_send_inline(t, 2, cap.max_inline_data, cap.max_inline_data);
	expect_sent_whole(test, t, 2, cap.max_inline_data, guard);

	post_send_sges(t, 3, cap.max_send_sge + 1);
	expect_refused_len(test, t, 3, guard);
	post_send_sges(t, 4, U8_MAX);
	expect_refused_len(test, t, 4, guard);
	post_send_inline(t, 5, cap.max_inline_data + 1,
			 cap.max_inline_data + 1);
	expect_refused_len(test, t, 5, guard);
	post_send_inline(t, 6, 0, U32_MAX);
	expect_refused_len(test, t, 6, guard);
}

/*
 * The bug classes rxe and siw fixed in 2026, one check each where the
 * engine alone shows them.
 */

/* A raw packet of len bytes (BTH onwards, ICRC included) to receive. */
static void deliver_raw(struct kunit *test, struct engine_test *t,
			const void *buf, u32 len)
{
	struct sk_buff *skb = alloc_skb(len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_put_data(skb, buf, len);
	receive(t, skb);
}

/*
 * Unknown opcodes (reserved RC ones, CNP, a manufacturer's) never reach a
 * QP's state: dropped as malformed at the parse, nothing answered, the
 * responder's PSN unmoved.
 */
static void engine_unknown_opcode_no_state(struct kunit *test)
{
	static const u8 unknown[] = { 0x19, 0x1e, 0x1f, 0x81, 0xc0, 0xe0 };
	struct engine_test *t = test->priv;
	u64 malformed = counter(t, VHCA_CNT_RX_MALFORMED);
	u8 buf[IB_BTH_BYTES + 16 + IB_ICRC_BYTES] = {};
	struct vhca_pkt pkt = {
		.opcode = IB_OPCODE_RC_SEND_ONLY,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.paylen = 16,
		.ackreq = true,
	};
	int i;

	KUNIT_ASSERT_EQ(test, vhca_pkt_build(buf, IB_BTH_BYTES, &pkt), IB_BTH_BYTES);
	post_recv(t, 1, t->remote, BUF_LEN);
	for (i = 0; i < ARRAY_SIZE(unknown); i++) {
		buf[0] = unknown[i];
		deliver_raw(test, t, buf, sizeof(buf));
	}
	expect_nothing_sent(test);
	expect_no_cqe(test, t->recv_cq);
	KUNIT_EXPECT_EQ(test, t->resp->resp.psn, (u32)RQ_PSN);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_RX_MALFORMED),
			malformed + ARRAY_SIZE(unknown));
	/* The same packet with a known opcode is taken. */
	buf[0] = IB_OPCODE_RC_SEND_ONLY;
	deliver_raw(test, t, buf, sizeof(buf));
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, NULL);
	expect_cqe(test, t->recv_cq, 1, IB_WC_SUCCESS, IB_WC_RECV);
}

/*
 * A PadCnt larger than what follows the headers, or a payload that is not
 * a multiple of 4 with its pad: dropped before any byte is used.
 */
static void engine_pad_checked_first(struct kunit *test)
{
	struct engine_test *t = test->priv;
	u64 malformed = counter(t, VHCA_CNT_RX_MALFORMED);
	u8 buf[IB_BTH_BYTES + 4 + IB_ICRC_BYTES] = {};
	struct vhca_pkt pkt = {
		.opcode = IB_OPCODE_RC_SEND_ONLY,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.paylen = 1,		/* PadCnt 3 */
		.ackreq = true,
	};

	post_recv(t, 1, t->remote, BUF_LEN);
	/* No payload at all after the BTH: the pad has nothing to cut. */
	KUNIT_ASSERT_EQ(test, vhca_pkt_build(buf, IB_BTH_BYTES, &pkt), IB_BTH_BYTES);
	deliver_raw(test, t, buf, IB_BTH_BYTES + IB_ICRC_BYTES);
	/* Five bytes after the BTH: not a multiple of 4. */
	deliver_raw(test, t, buf, IB_BTH_BYTES + 1 + IB_ICRC_BYTES);
	expect_nothing_sent(test);
	expect_no_cqe(test, t->recv_cq);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_RX_MALFORMED), malformed + 2);
	/* One byte and its 3 of pad: taken, byte_len 1. */
	deliver_raw(test, t, buf, sizeof(buf));
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, NULL);
	expect_cqe(test, t->recv_cq, 1, IB_WC_SUCCESS, IB_WC_RECV);
}

/*
 * An ATOMIC WRITE request carrying other than 8 bytes (or a RETH length
 * other than 8) is an invalid request: nothing stored.
 */
static void engine_atomic_write_not_8_bytes(struct kunit *test)
{
	/* Payload and RETH length: all but 8 and 8. */
	static const u32 lens[][2] = { { 4, 8 }, { 16, 8 }, { 8, 16 }, { 0, 8 } };
	struct engine_test *t = test->priv;
	struct vhca_pkt pkt = {
		.opcode = IB_OPCODE_RC_ATOMIC_WRITE,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.reth_va = (uintptr_t)t->remote,
		.reth_rkey = t->mr->rkey,
		.ackreq = true,
	};
	int i;

	if (!VHCA_ATOMIC_WRITE_CAP)
		kunit_skip(test, "this kernel's verbs have no ATOMIC WRITE");
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		pkt.paylen = lens[i][0];
		pkt.reth_len = lens[i][1];
		deliver(test, t, &pkt, 0x77);
		expect_nak(test, RQ_PSN, VHCA_NAK_INVALID_REQ);
		KUNIT_EXPECT_EQ(test, t->remote[0], 0);
		KUNIT_EXPECT_EQ(test, t->resp->state, IB_QPS_ERR);
		/* Reset, for the next one to meet a QP that takes requests. */
		vhca_qp_set_state(t->resp, IB_QPS_RESET);
		vhca_qp_set_state(t->resp, IB_QPS_INIT);
		vhca_qp_set_state(t->resp, IB_QPS_RTR);
		vhca_qp_set_state(t->resp, IB_QPS_RTS);
	}
}

/*
 * Only RC QPs linger, and only they count: a UD QP's destroy leaves the
 * count of lingering QPs as it was (it was lowered once per destroy, so
 * that the cap let more than VHCA_LINGER_MAX linger).
 */
static void engine_linger_count_rc_only(struct kunit *test)
{
	struct engine_test *t = test->priv;
	int i;

	free_qp(t, t->resp);
	t->resp->ibqp.qp_type = IB_QPT_UD;
	for (i = 0; i < 3; i++)
		vhca_engine_qp_linger(t->resp);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->vdev->n_lingering), 0);
	t->resp->ibqp.qp_type = IB_QPT_RC;
	/* An RC QP that received nothing leaves no lingering QP and no count. */
	vhca_engine_qp_linger(t->resp);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->vdev->n_lingering), 0);
}

/*
 * The engine's error found before a modify_qp to RESET lands after it:
 * the QP stays in RESET and no QP_FATAL event is raised for it.
 */
static void engine_error_after_reset(struct kunit *test)
{
	struct engine_test *t = test->priv;

	atomic_set(&hostile_qp_events, 0);
	t->req->ibqp.event_handler = hostile_qp_event;
	vhca_qp_set_state(t->req, IB_QPS_RESET);
	vhca_qp_fatal(t->req, IB_WC_SUCCESS);
	vhca_qp_fatal(t->req, IB_WC_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(test, t->req->state, IB_QPS_RESET);
	KUNIT_EXPECT_EQ(test, atomic_read(&hostile_qp_events), 0);
	expect_no_cqe(test, t->send_cq);

	/* In RTS the same error moves it, with its event. */
	vhca_qp_set_state(t->req, IB_QPS_INIT);
	vhca_qp_set_state(t->req, IB_QPS_RTR);
	vhca_qp_set_state(t->req, IB_QPS_RTS);
	vhca_qp_fatal(t->req, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, t->req->state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, atomic_read(&hostile_qp_events), 1);
}

static struct kunit_case vhca_engine_hostile_cases[] = {
	KUNIT_CASE(engine_ud_len_past_port_mtu),
	KUNIT_CASE(engine_tx_build_len_bounded),
	KUNIT_CASE(engine_read_response_holes),
	KUNIT_CASE(engine_read_response_reasked),
	KUNIT_CASE(engine_write_short_of_reth),
	KUNIT_CASE(engine_write_last_short),
	KUNIT_CASE(engine_request_len_past_mtu),
	KUNIT_CASE(engine_request_past_max_msg),
	KUNIT_CASE(engine_write_past_max_msg),
	KUNIT_CASE(engine_sq_head_backwards),
	KUNIT_CASE(engine_sq_head_backwards_unsent),
	KUNIT_CASE(engine_flush_from_copy),
	KUNIT_CASE(engine_send_caps_bounded),
	KUNIT_CASE(engine_unknown_opcode_no_state),
	KUNIT_CASE(engine_pad_checked_first),
	KUNIT_CASE(engine_atomic_write_not_8_bytes),
	KUNIT_CASE(engine_linger_count_rc_only),
	KUNIT_CASE(engine_error_after_reset),
	{}
};

static struct kunit_suite vhca_engine_hostile_suite = {
	.name = "vhca_engine_hostile",
	.suite_init = engine_suite_init,
	.suite_exit = engine_suite_exit,
	.init = engine_test_init,
	.exit = engine_test_exit,
	.test_cases = vhca_engine_hostile_cases,
};
