// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite of direct placement between local ports: the requester's
 * runs of SEND and WRITE packets placed by the peer's responder straight
 * from the requester's memory, without packets, and what brings packets
 * back.  Included by vhca_engine_kunit.c (its fixture and helpers): the
 * stand-in vhca_net_direct() makes the fixture's device every QP's local
 * peer device; what the responder answers (its ACKs and NAKs) is still
 * handed to the requester's completer at once, without packets too.
 */

static int engine_direct_init(struct kunit *test)
{
	int err = engine_test_init(test);

	engine_test_direct_dev = ((struct engine_test *)test->priv)->vdev;
	engine_test_direct_runs = 0;
	return err;
}

static void engine_direct_exit(struct kunit *test)
{
	engine_test_direct_dev = NULL;
	engine_test_exit(test);
}

/* Expect the next packet sent to be an ACK of psn with MSN msn. */
static void expect_ack(struct kunit *test, u32 psn, u32 msn)
{
	struct vhca_pkt ack;

	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, psn, &ack);
	KUNIT_EXPECT_EQ(test, ack.aeth_syndrome & VHCA_AETH_TYPE_MASK,
			VHCA_AETH_ACK);
	KUNIT_EXPECT_EQ(test, ack.aeth_msn, msn);
}

/*
 * A SEND of three packets: placed at once, one ACK for its last PSN (the
 * send completion), the responder's PSN and MSN where the packets would
 * have left them, counted as three packets and an ACK.
 */
static void engine_direct_send(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct ib_wc wc;
	int i;

	for (i = 0; i < BUF_LEN; i++)
		t->local[i] = 0x31 + i * 5;
	post_recv(t, 7, t->remote, BUF_LEN);
	post_send(t, 1, VHCA_WR_SEND, t->local, BUF_LEN, 0);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	KUNIT_ASSERT_EQ(test, vhca_poll_cq(&t->recv_cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 7ULL);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc.byte_len, (u32)BUF_LEN);
	KUNIT_EXPECT_EQ(test, memcmp(t->local, t->remote, BUF_LEN), 0);
	KUNIT_EXPECT_EQ(test, t->resp->resp.psn, (u32)SQ_PSN + 3);
	KUNIT_EXPECT_EQ(test, t->resp->resp.msn, 1U);
	KUNIT_EXPECT_EQ(test, t->req->comp.acked_psn, (u32)SQ_PSN + 3);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_DIRECT_PACKETS), 4ULL);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_LOCAL_RX_PACKETS), 4ULL);
	/* Three BTHs, the payload, an ACK (BTH, AETH), four ICRCs. */
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_RX_BYTES),
			(u64)4 * (IB_BTH_BYTES + IB_ICRC_BYTES) + BUF_LEN +
			sizeof(struct vhca_aeth));
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_SEND);
}

/*
 * A WRITE placed directly, then the same packets from the wire (a
 * retransmission): duplicates, acknowledged again and not placed twice.
 */
static void engine_direct_write_duplicate(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt pkt = {
		.opcode = IB_OPCODE_RC_RDMA_WRITE_MIDDLE,
		.dqpn = RESP_QPN,
		.psn = SQ_PSN + 1,
		.paylen = MTU,
		.ackreq = true,
	};

	memset(t->local, 0x6b, BUF_LEN);
	post_send(t, 1, VHCA_WR_RDMA_WRITE, t->local, BUF_LEN,
		  (uintptr_t)t->remote);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	KUNIT_EXPECT_EQ(test, memcmp(t->local, t->remote, BUF_LEN), 0);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);

	memset(t->remote, 0, BUF_LEN);
	deliver(test, t, &pkt, 0x99);
	expect_ack(test, SQ_PSN + 2, 1);
	expect_nothing_sent(test);
	KUNIT_EXPECT_EQ(test, t->remote[MTU], 0);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_DUP_REQUESTS), 1ULL);
}

/*
 * A message of 160 packets: runs of at most VHCA_REQ_SEG_BYTES, within a
 * pass's budget, an ACK asked every VHCA_REQ_ACK_EVERY packets and at the
 * end, every byte in place.
 */
static void engine_direct_large(struct kunit *test)
{
	struct engine_test *t = test->priv;
	u32 len = 160 * MTU, i;
	u8 *src, *dst;

	src = kunit_kmalloc(test, len, GFP_KERNEL);
	dst = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	for (i = 0; i < len; i++)
		src[i] = i * 13 + (i >> 8);
	post_recv(t, 3, dst, len);
	post_send(t, 1, VHCA_WR_SEND_WITH_IMM, src, len, 0);
	KUNIT_EXPECT_FALSE(test, vhca_req_drain(t->req));
	expect_nothing_sent(test);
	expect_cqe(test, t->recv_cq, 3, IB_WC_SUCCESS, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, memcmp(src, dst, len), 0);
	/* 160 packets and three ACKs. */
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_DIRECT_PACKETS), 163ULL);
	KUNIT_EXPECT_EQ(test, t->resp->resp.msn, 1U);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_SEND);
}

/*
 * The responder expects another PSN: the run is not taken, and the same
 * packets go instead, from the run's first PSN, counted as neither a
 * retransmission nor direct placement; they meet the responder's PSN
 * check as packets do (duplicates here).
 */
static void engine_direct_psn_refused(struct kunit *test)
{
	struct engine_test *t = test->priv;

	t->resp->resp.psn = SQ_PSN + 10;
	memset(t->local, 0x42, BUF_LEN);
	post_send(t, 1, VHCA_WR_RDMA_WRITE, t->local, BUF_LEN,
		  (uintptr_t)t->remote);
	vhca_req_run(t->req);
	expect_sent(test, IB_OPCODE_RC_RDMA_WRITE_FIRST, SQ_PSN, NULL);
	expect_sent(test, IB_OPCODE_RC_RDMA_WRITE_MIDDLE, SQ_PSN + 1, NULL);
	expect_sent(test, IB_OPCODE_RC_RDMA_WRITE_LAST, SQ_PSN + 2, NULL);
	expect_nothing_sent(test);
	KUNIT_EXPECT_EQ(test, t->remote[0], 0);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_DIRECT_PACKETS), 0ULL);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_RETRANSMITS), 0ULL);
	KUNIT_EXPECT_TRUE(test, t->req->req.wire);
	KUNIT_EXPECT_FALSE(test, t->req->req.remote);
}

/*
 * The retransmit timer goes back to the first PSN of a message whose
 * first pass the peer acknowledged: the run from there is refused (the
 * peer expects the PSN after it), and its packets go instead, once, as
 * duplicates the peer acknowledges again without placing them; then a
 * run carries the rest.  The refused run is offered once, not again and
 * again (the requester would never return).
 */
static void engine_direct_rexmit_acked(struct kunit *test)
{
	struct engine_test *t = test->priv;
	u32 len = 96 * MTU, i;
	struct vhca_pkt pkt;
	struct ib_wc wc;
	u8 *src, *dst;

	src = kunit_kmalloc(test, len, GFP_KERNEL);
	dst = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	for (i = 0; i < len; i++)
		src[i] = i * 7 + (i >> 8);
	post_recv(t, 3, dst, len);
	post_send(t, 1, VHCA_WR_SEND, src, len, 0);
	/* One pass: a run of VHCA_REQ_BUDGET packets, acknowledged. */
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	KUNIT_ASSERT_EQ(test, t->req->comp.acked_psn,
			(u32)SQ_PSN + VHCA_REQ_BUDGET);
	fire_rexmit(t->req);
	vhca_req_run(t->req);
	KUNIT_EXPECT_EQ(test, engine_test_direct_runs, 2U);
	KUNIT_EXPECT_FALSE(test, t->req->req.remote);
	KUNIT_ASSERT_EQ(test, skb_queue_len(&engine_test_sent),
			(u32)VHCA_REQ_BUDGET);
	KUNIT_ASSERT_TRUE(test, next_sent(test, &pkt, NULL));
	KUNIT_EXPECT_EQ(test, pkt.opcode, IB_OPCODE_RC_SEND_FIRST);
	KUNIT_EXPECT_EQ(test, pkt.psn, (u32)SQ_PSN);
	loop_sent(t);		/* the duplicates to the responder */
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_DUP_REQUESTS),
			(u64)VHCA_REQ_BUDGET - 1);
	loop_sent(t);		/* its ACKs to the requester */
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	KUNIT_EXPECT_EQ(test, engine_test_direct_runs, 3U);
	KUNIT_ASSERT_EQ(test, vhca_poll_cq(&t->recv_cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 3ULL);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, len);
	KUNIT_EXPECT_EQ(test, memcmp(src, dst, len), 0);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_RETRANSMITS), 1ULL);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_SEND);
}

/*
 * A READ whose responses were lost (the peer was not local then: its
 * request and responses took packets), and a SEND after it that the peer
 * acknowledged: the retransmit timer goes back to the READ.  Its
 * request's run is refused (the peer is past it), so it leaves as a
 * packet; the SEND is no run after it (a run would be placed before that
 * packet leaves, and the peer, past the SEND, refuses it, which drops the
 * pass's packets): the READ's request goes, the peer answers it again,
 * in a run now, and both WQEs complete after the one timeout.
 */
static void engine_direct_read_rexmit(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt pkt;
	struct sk_buff *skb;
	u8 *src, *dst;
	int i;

	src = kunit_kzalloc(test, 8, GFP_KERNEL);
	dst = kunit_kzalloc(test, 8, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	for (i = 0; i < BUF_LEN; i++)
		t->remote[i] = 0x50 + i * 3;
	memset(src, 0x77, 8);
	post_recv(t, 5, dst, 8);
	post_send(t, 1, VHCA_WR_RDMA_READ, t->local, BUF_LEN,
		  (uintptr_t)t->remote);
	post_send(t, 2, VHCA_WR_SEND, src, 8, 0);
	engine_test_direct_dev = NULL;
	vhca_req_run(t->req);
	loop_sent(t);
	expect_cqe(test, t->recv_cq, 5, IB_WC_SUCCESS, IB_WC_RECV);
	/* Its three responses are lost; the SEND's ACK comes. */
	expect_sent(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, SQ_PSN, NULL);
	expect_sent(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE, SQ_PSN + 1,
		    NULL);
	expect_sent(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST, SQ_PSN + 2,
		    NULL);
	loop_sent(t);
	KUNIT_ASSERT_EQ(test, t->req->comp.acked_psn, (u32)SQ_PSN + 4);
	expect_no_cqe(test, t->send_cq);

	/* The peer is local again, as the next RTR would find it. */
	engine_test_direct_dev = t->vdev;
	engine_test_direct_runs = 0;
	t->req->req.remote = false;
	fire_rexmit(t->req);
	vhca_req_run(t->req);
	KUNIT_EXPECT_EQ(test, engine_test_direct_runs, 1U);
	KUNIT_ASSERT_EQ(test, skb_queue_len(&engine_test_sent), 2U);
	KUNIT_ASSERT_TRUE(test, next_sent(test, &pkt, &skb));
	KUNIT_EXPECT_EQ(test, pkt.opcode, IB_OPCODE_RC_RDMA_READ_REQUEST);
	KUNIT_EXPECT_EQ(test, pkt.psn, (u32)SQ_PSN);
	receive(t, skb);	/* answered again, in a run */
	KUNIT_EXPECT_EQ(test, engine_test_direct_runs, 2U);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test, memcmp(t->local, t->remote, BUF_LEN), 0);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN + 3, &pkt);
	deliver(test, t, &pkt, 0x99);	/* the SEND, a duplicate */
	loop_sent(t);			/* its ACK, to the requester */
	expect_nothing_sent(test);
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_SEND);
	expect_no_cqe(test, t->recv_cq);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_RETRANSMITS), 1ULL);
	KUNIT_EXPECT_EQ(test, dst[7], 0x77);
}

/*
 * After packets, no run until they are acknowledged: a run must not
 * overtake them.  Then runs again.
 */
static void engine_direct_after_packets(struct kunit *test)
{
	struct engine_test *t = test->priv;

	t->resp->resp.psn = SQ_PSN + 10;
	post_send(t, 1, VHCA_WR_RDMA_WRITE, t->local, 8,
		  (uintptr_t)t->remote);
	vhca_req_run(t->req);
	expect_sent(test, IB_OPCODE_RC_RDMA_WRITE_ONLY, SQ_PSN, NULL);
	t->resp->resp.psn = SQ_PSN + 1;
	post_send(t, 2, VHCA_WR_RDMA_WRITE, t->local, 8,
		  (uintptr_t)t->remote);
	vhca_req_run(t->req);
	expect_sent(test, IB_OPCODE_RC_RDMA_WRITE_ONLY, SQ_PSN + 1, NULL);
	expect_nothing_sent(test);
	deliver_ack(test, t, SQ_PSN + 1);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);

	t->resp->resp.psn = SQ_PSN + 2;
	post_send(t, 3, VHCA_WR_RDMA_WRITE, t->local, 8,
		  (uintptr_t)t->remote);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	expect_cqe(test, t->send_cq, 3, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_DIRECT_PACKETS), 2ULL);
}

/*
 * No receive WQE: an RNR NAK for the run's first PSN, as for its first
 * packet, and the next message's run is not placed (it would come out of
 * sequence), nor sent as packets; the RNR delay over, both go again and
 * land.
 */
static void engine_direct_rnr(struct kunit *test)
{
	struct engine_test *t = test->priv;

	/* 655.36 ms: the delay ends when the test says (fire_rnr()). */
	t->resp->attr.min_rnr_timer = 0;
	memset(t->local, 0x24, BUF_LEN);
	post_send(t, 1, VHCA_WR_SEND, t->local, BUF_LEN, 0);
	post_send(t, 2, VHCA_WR_SEND, t->local, 8, 0);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	KUNIT_EXPECT_TRUE(test, t->req->req.rnr_wait);
	KUNIT_EXPECT_FALSE(test, t->req->req.wire);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_RNR_NAKS), 1ULL);
	KUNIT_EXPECT_EQ(test, t->resp->resp.psn, (u32)SQ_PSN);
	expect_no_cqe(test, t->send_cq);
	post_recv(t, 5, t->remote, BUF_LEN);
	post_recv(t, 6, t->remote + BUF_LEN / 2, 8);
	fire_rnr(t->req);		/* the RNR delay's end */
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_SEND);
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_SEND);
	expect_cqe(test, t->recv_cq, 5, IB_WC_SUCCESS, IB_WC_RECV);
	expect_cqe(test, t->recv_cq, 6, IB_WC_SUCCESS, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, t->resp->resp.psn, (u32)SQ_PSN + 4);
	KUNIT_EXPECT_EQ(test, t->remote[0], 0x24);
	KUNIT_EXPECT_EQ(test, t->remote[BUF_LEN / 2 + 7], 0x24);
}

/*
 * The requester's SGE names no MR: the responder cannot read it and does
 * not take the run (its receive WQE not completed), the packets then fail
 * the WQE with LOC_PROT_ERR before any is sent, as without runs.
 */
static void engine_direct_bad_lkey(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_send_wqe *wqe = sq_slot(t, 1, VHCA_WR_SEND);
	struct vhca_sge *sge = (struct vhca_sge *)(wqe + 1);

	wqe->num_sge = 1;
	sge->addr = (uintptr_t)t->local;
	sge->length = BUF_LEN;
	sge->lkey = t->mr->lkey + 0x100;
	sq_publish(t);
	post_recv(t, 4, t->remote, BUF_LEN);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	expect_cqe(test, t->send_cq, 1, IB_WC_LOC_PROT_ERR, IB_WC_SEND);
	expect_no_cqe(test, t->recv_cq);
	KUNIT_EXPECT_EQ(test, t->resp->resp.psn, (u32)SQ_PSN);
	KUNIT_EXPECT_FALSE(test, t->resp->resp.msg.active);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_DIRECT_PACKETS), 0ULL);
}

/* A WRITE the rkey does not grant: a remote access NAK, nothing lands. */
static void engine_direct_write_access(struct kunit *test)
{
	struct engine_test *t = test->priv;

	t->resp->attr.qp_access_flags = IB_ACCESS_REMOTE_READ;
	memset(t->local, 0x17, BUF_LEN);
	post_send(t, 1, VHCA_WR_RDMA_WRITE, t->local, BUF_LEN,
		  (uintptr_t)t->remote);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	KUNIT_EXPECT_EQ(test, t->remote[0], 0);
	expect_cqe(test, t->send_cq, 1, IB_WC_REM_ACCESS_ERR,
		   IB_WC_RDMA_WRITE);
	KUNIT_EXPECT_EQ(test, t->resp->state, IB_QPS_ERR);
}

/*
 * A WRITE into a fast MR across its two pages (which the copy reaches
 * under the MR's lock, through the stack a chunk at a time): every byte
 * lands where the page list says, none past the end.
 */
static void engine_direct_fast_mr(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct frwr_mr f;

	frwr_reg_write(test, t, &f);
	expect_nothing_sent(test);
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	frwr_expect_written(test, t, &f);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_DIRECT_PACKETS), 4ULL);
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&f.mr->ibmr, NULL), 0);
}

/*
 * A READ of three packets: its request a run the peer takes, its
 * responses one run its requester places at once, byte by byte, from the
 * peer's MR; nothing sent, the responder's PSN and MSN and the counters
 * as for the packets (a request, three responses with two AETHs).
 */
static void engine_direct_read(struct kunit *test)
{
	struct engine_test *t = test->priv;
	int i;

	for (i = 0; i < BUF_LEN; i++)
		t->remote[i] = 0x21 + i * 11;
	post_send(t, 1, VHCA_WR_RDMA_READ, t->local, BUF_LEN,
		  (uintptr_t)t->remote);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test, memcmp(t->local, t->remote, BUF_LEN), 0);
	KUNIT_EXPECT_EQ(test, engine_test_direct_runs, 2U);
	KUNIT_EXPECT_EQ(test, t->resp->resp.psn, (u32)SQ_PSN + 3);
	KUNIT_EXPECT_EQ(test, t->resp->resp.msn, 1U);
	KUNIT_EXPECT_NULL(test, vhca_resp_rd_oldest(t->resp));
	KUNIT_EXPECT_EQ(test, t->req->comp.psn, (u32)SQ_PSN + 3);
	KUNIT_EXPECT_FALSE(test, t->req->req.wire);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_DIRECT_PACKETS), 4ULL);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_LOCAL_RX_PACKETS), 4ULL);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_RX_BYTES),
			(u64)4 * (IB_BTH_BYTES + IB_ICRC_BYTES) +
			sizeof(struct vhca_reth) +
			2 * sizeof(struct vhca_aeth) + BUF_LEN);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_TX_PACKETS), 4ULL);
}

/*
 * A READ of 160 packets and a SEND after it: the READ request pays for
 * the first VHCA_RESP_READ_BUDGET responses, placed at once; the SEND's
 * run is refused while the rest is to go, and its packet waits behind
 * them; the work item places the rest, in runs, then takes the SEND.
 * Every byte in place, the completions in order.
 */
static void engine_direct_read_large(struct kunit *test)
{
	struct engine_test *t = test->priv;
	u32 len = 160 * MTU, i;
	struct vhca_pkt pkt;
	struct sk_buff *skb;
	u8 *src, *dst;

	src = kunit_kmalloc(test, len, GFP_KERNEL);
	dst = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	for (i = 0; i < len; i++)
		src[i] = i * 29 + (i >> 9);
	memset(t->local, 0x3c, 8);
	post_recv(t, 5, t->remote, 8);
	post_send(t, 1, VHCA_WR_RDMA_READ, dst, len, (uintptr_t)src);
	post_send(t, 2, VHCA_WR_SEND, t->local, 8, 0);
	vhca_req_run(t->req);
	KUNIT_EXPECT_EQ(test, t->req->comp.psn,
			(u32)SQ_PSN + VHCA_RESP_READ_BUDGET);
	KUNIT_EXPECT_EQ(test, memcmp(src, dst, VHCA_RESP_READ_BUDGET * MTU),
			0);
	KUNIT_EXPECT_EQ(test, dst[VHCA_RESP_READ_BUDGET * MTU], 0);
	expect_no_cqe(test, t->send_cq);
	/* The SEND's packet, held behind the READ's responses. */
	KUNIT_ASSERT_EQ(test, skb_queue_len(&engine_test_sent), 1U);
	KUNIT_ASSERT_TRUE(test, next_sent(test, &pkt, &skb));
	KUNIT_EXPECT_EQ(test, pkt.opcode, IB_OPCODE_RC_SEND_ONLY);
	KUNIT_EXPECT_EQ(test, pkt.psn, (u32)SQ_PSN + 160);
	receive(t, skb);
	expect_nothing_sent(test);
	KUNIT_EXPECT_EQ(test, t->remote[0], 0);
	respond(t);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test, memcmp(src, dst, len), 0);
	expect_cqe(test, t->recv_cq, 5, IB_WC_SUCCESS, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, t->remote[7], 0x3c);
	loop_sent(t);		/* the SEND's ACK */
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_SEND);
	expect_nothing_sent(test);
}

/*
 * A READ through an rkey that names no MR: the peer's remote access NAK
 * completes it with REM_ACCESS_ERR, nothing placed, nothing sent.
 */
static void engine_direct_read_bad_rkey(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_send_wqe *wqe = sq_slot(t, 1, VHCA_WR_RDMA_READ);
	struct vhca_sge *sge = (struct vhca_sge *)(wqe + 1);

	memset(t->remote, 0x5a, BUF_LEN);
	wqe->num_sge = 1;
	wqe->rdma.remote_addr = (uintptr_t)t->remote;
	wqe->rdma.rkey = t->mr->rkey + 0x100;
	sge->addr = (uintptr_t)t->local;
	sge->length = BUF_LEN;
	sge->lkey = t->mr->lkey;
	sq_publish(t);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	expect_cqe(test, t->send_cq, 1, IB_WC_REM_ACCESS_ERR,
		   IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test, t->local[0], 0);
	KUNIT_EXPECT_EQ(test, t->local[BUF_LEN - 1], 0);
	KUNIT_EXPECT_EQ(test, t->resp->state, IB_QPS_ERR);
}

/*
 * READs of a fast MR: of its whole range, across its two pages (read
 * under the MR's lock), every byte from where the page list says; of one
 * byte more, refused with a remote access NAK (REM_ACCESS_ERR), nothing
 * placed.
 */
static void engine_direct_read_past_mr(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct frwr_mr f;
	u8 *dst;
	int i;

	dst = kunit_kzalloc(test, FRWR_LEN + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	frwr_reg_write(test, t, &f);
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	post_frwr(t, 3, VHCA_WR_RDMA_READ, dst, FRWR_LEN, t->mr->lkey,
		  f.iova, f.key);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	expect_cqe(test, t->send_cq, 3, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	for (i = 0; i < FRWR_LEN; i++)
		if (dst[i] != *frwr_byte(&f, i))
			break;
	KUNIT_EXPECT_EQ_MSG(test, i, FRWR_LEN, "READ byte %d differs", i);

	memset(dst, 0, FRWR_LEN + 1);
	post_frwr(t, 4, VHCA_WR_RDMA_READ, dst, FRWR_LEN + 1, t->mr->lkey,
		  f.iova, f.key);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	expect_cqe(test, t->send_cq, 4, IB_WC_REM_ACCESS_ERR,
		   IB_WC_RDMA_READ);
	for (i = 0; i <= FRWR_LEN && !dst[i]; i++)
		;
	KUNIT_EXPECT_EQ(test, i, FRWR_LEN + 1);
	KUNIT_EXPECT_EQ(test, t->resp->state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&f.mr->ibmr, NULL), 0);
}

static struct kunit_case vhca_engine_direct_cases[] = {
	KUNIT_CASE(engine_direct_send),
	KUNIT_CASE(engine_direct_write_duplicate),
	KUNIT_CASE(engine_direct_large),
	KUNIT_CASE(engine_direct_psn_refused),
	KUNIT_CASE(engine_direct_rexmit_acked),
	KUNIT_CASE(engine_direct_read_rexmit),
	KUNIT_CASE(engine_direct_after_packets),
	KUNIT_CASE(engine_direct_rnr),
	KUNIT_CASE(engine_direct_bad_lkey),
	KUNIT_CASE(engine_direct_write_access),
	KUNIT_CASE(engine_direct_fast_mr),
	KUNIT_CASE(engine_direct_read),
	KUNIT_CASE(engine_direct_read_large),
	KUNIT_CASE(engine_direct_read_bad_rkey),
	KUNIT_CASE(engine_direct_read_past_mr),
	{}
};

static struct kunit_suite vhca_engine_direct_suite = {
	.name = "vhca_engine_direct",
	.suite_init = engine_suite_init,
	.suite_exit = engine_suite_exit,
	.init = engine_direct_init,
	.exit = engine_direct_exit,
	.test_cases = vhca_engine_direct_cases,
};
