// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite vhca_engine_resp: the RC responder (ACK coalescing,
 * duplicates, READs answered again and bounded, responder resources,
 * WRITEs, RNR, malformed receive WQEs, gap NAKs, lingering QPs).
 * Included by vhca_engine_kunit.c, whose fixture (vhca_engine_fixture.h)
 * and engine sources it uses.
 */

/* ---- responder ---- */

static void engine_duplicate_send(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt ack, pkt = {
		.opcode = IB_OPCODE_RC_SEND_ONLY,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.paylen = 16,
		.ackreq = true,
	};

	post_recv(t, 1, t->remote, 64);
	post_recv(t, 2, t->remote + 64, 64);
	deliver(test, t, &pkt, 0x11);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &ack);
	KUNIT_EXPECT_EQ(test, ack.aeth_msn, 1U);
	expect_cqe(test, t->recv_cq, 1, IB_WC_SUCCESS, IB_WC_RECV);

	/* Again (its ACK was lost): acknowledged, not received twice. */
	deliver(test, t, &pkt, 0x22);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &ack);
	KUNIT_EXPECT_EQ(test, ack.aeth_syndrome & VHCA_AETH_TYPE_MASK,
			VHCA_AETH_ACK);
	KUNIT_EXPECT_EQ(test, ack.aeth_msn, 1U);
	expect_nothing_sent(test);
	expect_no_cqe(test, t->recv_cq);
	KUNIT_EXPECT_EQ(test, t->resp->rq_tail, 1U);
	KUNIT_EXPECT_EQ(test, t->remote[64], 0);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_DUP_REQUESTS), 1ULL);
}

static void engine_duplicate_write(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt ack, pkt = {
		.opcode = IB_OPCODE_RC_RDMA_WRITE_ONLY,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.paylen = 32,
		.ackreq = true,
		.reth_va = (uintptr_t)t->remote,
		.reth_rkey = t->mr->rkey,
		.reth_len = 32,
	};

	deliver(test, t, &pkt, 0x77);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &ack);
	KUNIT_EXPECT_EQ(test, ack.aeth_msn, 1U);
	KUNIT_EXPECT_EQ(test, t->remote[0], 0x77);
	KUNIT_EXPECT_EQ(test, t->remote[31], 0x77);

	/* The duplicate is acknowledged; its payload does not land again. */
	memset(t->remote, 0, 32);
	deliver(test, t, &pkt, 0x77);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &ack);
	KUNIT_EXPECT_EQ(test, ack.aeth_msn, 1U);
	expect_nothing_sent(test);
	KUNIT_EXPECT_EQ(test, t->remote[0], 0);
	KUNIT_EXPECT_EQ(test, t->remote[31], 0);
	expect_no_cqe(test, t->recv_cq);
}

/*
 * Expect the next packet sent to be a READ response carrying these bytes;
 * returns its MSN.
 */
static u32 expect_read_response(struct kunit *test, u8 opcode, u32 psn,
				const u8 *data, u32 len)
{
	struct vhca_pkt pkt;
	struct sk_buff *skb;

	KUNIT_ASSERT_TRUE_MSG(test, next_sent(test, &pkt, &skb),
			      "no packet, expected opcode %#x PSN %u",
			      opcode, psn);
	KUNIT_EXPECT_EQ(test, pkt.opcode, opcode);
	KUNIT_EXPECT_EQ(test, pkt.psn, psn);
	KUNIT_EXPECT_EQ(test, pkt.paylen, len);
	if (pkt.paylen == len)
		KUNIT_EXPECT_EQ(test,
				memcmp(skb->data +
				       vhca_pkt_opinfo(pkt.opcode)->hdr_len,
				       data, len), 0);
	kfree_skb(skb);
	return pkt.aeth_msn;
}

/* A SEND of no bytes at psn, received and acknowledged. */
static void deliver_empty_send(struct kunit *test, struct engine_test *t,
			       u64 wr_id, u32 psn)
{
	struct vhca_pkt pkt = {
		.opcode = IB_OPCODE_RC_SEND_ONLY,
		.dqpn = RESP_QPN,
		.psn = psn,
		.ackreq = true,
	};

	post_recv(t, wr_id, NULL, 0);
	deliver(test, t, &pkt, 0);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, psn, NULL);
	expect_cqe(test, t->recv_cq, wr_id, IB_WC_SUCCESS, IB_WC_RECV);
}

static void engine_duplicate_read(struct kunit *test)
{
	struct engine_test *t = test->priv;
	u8 *data = t->remote + 8;
	struct vhca_pkt pkt = {
		.opcode = IB_OPCODE_RC_RDMA_READ_REQUEST,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.ackreq = true,
		.reth_va = (uintptr_t)data,
		.reth_rkey = t->mr->rkey,
		.reth_len = 2 * MTU + 16,
	};
	int i;

	for (i = 0; i < BUF_LEN; i++)
		t->remote[i] = i * 7 + 3;
	deliver(test, t, &pkt, 0);
	respond(t);
	/* Counted when accepted: its responses carry MSN 1. */
	KUNIT_EXPECT_EQ(test,
			expect_read_response(test,
					     IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST,
					     RQ_PSN, data, MTU), 1U);
	expect_read_response(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE,
			     RQ_PSN + 1, data + MTU, MTU);
	expect_read_response(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST,
			     RQ_PSN + 2, data + 2 * MTU, 16);
	/* A later request: the READ's PSNs are behind the expected one. */
	deliver_empty_send(test, t, 1, RQ_PSN + 3);

	/* The responses were lost: the READ asked again is answered again. */
	deliver(test, t, &pkt, 0);
	respond(t);
	expect_read_response(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST,
			     RQ_PSN, data, MTU);
	expect_read_response(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE,
			     RQ_PSN + 1, data + MTU, MTU);
	expect_read_response(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST,
			     RQ_PSN + 2, data + 2 * MTU, 16);
	expect_nothing_sent(test);

	/* Only the first arrived: the rest asked for alone is answered. */
	pkt.psn = RQ_PSN + 1;
	pkt.reth_va += MTU;
	pkt.reth_len -= MTU;
	deliver(test, t, &pkt, 0);
	respond(t);
	expect_read_response(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST,
			     RQ_PSN + 1, data + MTU, MTU);
	expect_read_response(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST,
			     RQ_PSN + 2, data + 2 * MTU, 16);
	expect_nothing_sent(test);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_DUP_REQUESTS), 2ULL);
	KUNIT_EXPECT_EQ(test, t->resp->resp.psn, (u32)RQ_PSN + 4);
	KUNIT_EXPECT_EQ(test, t->resp->resp.msn, 2U);
}

static void engine_duplicate_read_refused(struct kunit *test)
{
	struct engine_test *t = test->priv;
	u64 va = (uintptr_t)t->remote + 16;
	const struct vhca_pkt read = {
		.opcode = IB_OPCODE_RC_RDMA_READ_REQUEST,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.ackreq = true,
		.reth_va = va,
		.reth_rkey = t->mr->rkey,
		.reth_len = 2 * MTU,
	};
	struct vhca_pkt pkt = read;
	struct ib_mr *other;

	/* A second MR that reaches the same memory, with another rkey. */
	other = vhca_get_dma_mr(&t->pd, IB_ACCESS_LOCAL_WRITE |
				IB_ACCESS_REMOTE_READ);
	KUNIT_ASSERT_FALSE(test, IS_ERR(other));
	other->device = &t->vdev->ibdev;
	other->pd = &t->pd;
	KUNIT_ASSERT_NE(test, other->rkey, t->mr->rkey);

	memset(t->remote, 0x3c, BUF_LEN);
	deliver(test, t, &read, 0);
	respond(t);
	expect_read_response(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST,
			     RQ_PSN, t->remote + 16, MTU);
	expect_read_response(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST,
			     RQ_PSN + 1, t->remote + 16 + MTU, MTU);
	deliver_empty_send(test, t, 1, RQ_PSN + 2);

	/* Past the end of the READ held. */
	pkt.reth_len = 2 * MTU + 16;
	deliver(test, t, &pkt, 0);
	/* Before its start. */
	pkt.reth_va = va - 16;
	pkt.reth_len = 2 * MTU;
	deliver(test, t, &pkt, 0);
	/* The same range through another rkey. */
	pkt = read;
	pkt.reth_rkey = other->rkey;
	deliver(test, t, &pkt, 0);
	/* The PSN of the SEND: no READ held there. */
	pkt = read;
	pkt.psn = RQ_PSN + 2;
	deliver(test, t, &pkt, 0);
	/* Responses past the READ's PSNs. */
	pkt = read;
	pkt.psn = RQ_PSN + 1;
	deliver(test, t, &pkt, 0);
	respond(t);
	/* Dropped, not NAKed: the QP goes on. */
	expect_nothing_sent(test);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_DUP_REQUESTS), 5ULL);
	KUNIT_EXPECT_EQ(test, t->resp->state, IB_QPS_RTS);

	/* What the READ asked is still answered. */
	deliver(test, t, &read, 0);
	respond(t);
	expect_read_response(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST,
			     RQ_PSN, t->remote + 16, MTU);
	expect_read_response(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST,
			     RQ_PSN + 1, t->remote + 16 + MTU, MTU);
	expect_nothing_sent(test);
	vhca_dereg_mr(other, NULL);
}

/* A READ request for len bytes of buf at psn. */
static void deliver_read(struct kunit *test, struct engine_test *t, u32 psn,
			 const void *buf, u32 len)
{
	struct vhca_pkt pkt = {
		.opcode = IB_OPCODE_RC_RDMA_READ_REQUEST,
		.dqpn = RESP_QPN,
		.psn = psn,
		.ackreq = true,
		.reth_va = (uintptr_t)buf,
		.reth_rkey = t->mr->rkey,
		.reth_len = len,
	};

	deliver(test, t, &pkt, 0);
}

#define BIG_READ_PKTS	(3 * VHCA_RESP_READ_BUDGET + 5)

/*
 * A large READ is answered a bounded pass at a time: the first in the
 * receive path, the rest by the work item, never all at once; a SEND that
 * comes meanwhile waits behind the responses and is acknowledged after
 * them.
 */
static void engine_read_responses_bounded(struct kunit *test)
{
	struct engine_test *t = test->priv;
	u32 len = BIG_READ_PKTS * MTU, psn = RQ_PSN, n = 0;
	u8 *big = kunit_kmalloc(test, len, GFP_KERNEL);
	struct vhca_pkt pkt, send = {
		.opcode = IB_OPCODE_RC_SEND_ONLY,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN + BIG_READ_PKTS,
		.ackreq = true,
	};

	KUNIT_ASSERT_NOT_NULL(test, big);
	memset(big, 0x5a, len);
	deliver_read(test, t, RQ_PSN, big, len);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&engine_test_sent),
			VHCA_RESP_READ_BUDGET);
	post_recv(t, 1, NULL, 0);
	deliver(test, t, &send, 0);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&engine_test_sent),
			VHCA_RESP_READ_BUDGET);
	expect_no_cqe(test, t->recv_cq);

	KUNIT_EXPECT_TRUE(test, vhca_resp_run(t->resp));
	KUNIT_EXPECT_EQ(test, skb_queue_len(&engine_test_sent),
			2 * VHCA_RESP_READ_BUDGET);
	respond(t);
	while (next_sent(test, &pkt, NULL)) {
		if (pkt.opcode == IB_OPCODE_RC_ACKNOWLEDGE)
			break;
		KUNIT_EXPECT_EQ(test, pkt.psn, psn);
		psn = vhca_psn_add(psn, 1);
		n++;
	}
	KUNIT_EXPECT_EQ(test, n, BIG_READ_PKTS);
	/* The SEND's ACK comes after the last response. */
	KUNIT_EXPECT_EQ(test, pkt.opcode, IB_OPCODE_RC_ACKNOWLEDGE);
	KUNIT_EXPECT_EQ(test, pkt.psn, (u32)RQ_PSN + BIG_READ_PKTS);
	expect_cqe(test, t->recv_cq, 1, IB_WC_SUCCESS, IB_WC_RECV);
	expect_nothing_sent(test);
}

/*
 * One pass of READ responses at a time: a pass that finds another one
 * running (the receive path's first pass and the work item's, on two
 * CPUs) builds and sends nothing, and the work item leaves the rest to the
 * kick that follows the running pass; each response goes out once, in
 * order.
 */
static void engine_read_one_pass_at_a_time(struct kunit *test)
{
	struct engine_test *t = test->priv;
	u32 len = BIG_READ_PKTS * MTU, psn = RQ_PSN, n = 0;
	u8 *big = kunit_kmalloc(test, len, GFP_KERNEL);
	struct vhca_pkt pkt;
	int passes;

	KUNIT_ASSERT_NOT_NULL(test, big);
	memset(big, 0x5a, len);
	deliver_read(test, t, RQ_PSN, big, len);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&engine_test_sent),
			VHCA_RESP_READ_BUDGET);
	t->resp->resp.rd_pass = true;
	KUNIT_EXPECT_FALSE(test, vhca_resp_run(t->resp));
	KUNIT_EXPECT_EQ(test, skb_queue_len(&engine_test_sent),
			VHCA_RESP_READ_BUDGET);
	t->resp->resp.rd_pass = false;
	for (passes = 0; passes < 8 && vhca_resp_run(t->resp); passes++)
		;
	KUNIT_EXPECT_LT(test, passes, 8);
	while (next_sent(test, &pkt, NULL)) {
		KUNIT_EXPECT_EQ(test, pkt.psn, psn);
		psn = vhca_psn_add(psn, 1);
		n++;
	}
	KUNIT_EXPECT_EQ(test, n, BIG_READ_PKTS);
}

/*
 * A request that comes while a work item runs one held behind READ
 * responses (taken from the backlog, its READs done) is held too: handled
 * at once, it would overtake the one running.  The other work item leaves
 * it to the one running, which finds it once its own is done.
 */
static void engine_held_not_overtaken(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt ack, pkt = {
		.opcode = IB_OPCODE_RC_SEND_ONLY,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.ackreq = true,
	};

	post_recv(t, 1, NULL, 0);
	t->resp->resp.draining = true;
	deliver(test, t, &pkt, 0);
	expect_nothing_sent(test);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&t->resp->resp.backlog), 1U);
	KUNIT_EXPECT_FALSE(test, vhca_resp_run(t->resp));
	expect_nothing_sent(test);
	expect_no_cqe(test, t->recv_cq);

	t->resp->resp.draining = false;
	KUNIT_EXPECT_FALSE(test, vhca_resp_run(t->resp));
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &ack);
	KUNIT_EXPECT_EQ(test, ack.aeth_syndrome,
			vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID));
	expect_cqe(test, t->recv_cq, 1, IB_WC_SUCCESS, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&t->resp->resp.backlog), 0U);
	expect_nothing_sent(test);
}

/*
 * READs are answered one after another, in order: those that come while
 * responses are to go wait (and the NAK that would tell "too many READs"
 * cannot come from the held ones), each answered from a resource of its
 * own.  With max_dest_rd_atomic 0 a READ is an invalid request.
 */
static void engine_read_resources_enforced(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt nak;
	u32 i, n = t->resp->attr.max_dest_rd_atomic + 1;

	/* Each small READ is answered in the pass its request pays for. */
	for (i = 0; i < n; i++)
		deliver_read(test, t, RQ_PSN + i, t->remote + i, 8);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&engine_test_sent), n);
	respond(t);
	for (i = 0; i < n; i++)
		expect_read_response(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY,
				     RQ_PSN + i, t->remote + i, 8);
	expect_nothing_sent(test);
	KUNIT_EXPECT_EQ(test, t->resp->resp.msn, n);

	mutex_lock(&t->resp->mutex);
	t->resp->attr.max_dest_rd_atomic = 0;
	mutex_unlock(&t->resp->mutex);
	deliver_read(test, t, RQ_PSN + n, t->remote, 8);
	respond(t);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN + n, &nak);
	KUNIT_EXPECT_EQ(test, nak.aeth_syndrome,
			vhca_aeth_nak(VHCA_NAK_INVALID_REQ));
}

/*
 * A WRITE holds no reference to its MR between packets: deregistered
 * after WRITE_FIRST, the MR goes at once, and the rest of the message
 * is refused with a remote access NAK.
 */
static void engine_write_mr_not_held(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct ib_mr *mr = vhca_get_dma_mr(&t->pd, IB_ACCESS_LOCAL_WRITE |
					   IB_ACCESS_REMOTE_WRITE);
	struct vhca_pkt nak, pkt = {
		.opcode = IB_OPCODE_RC_RDMA_WRITE_FIRST,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.paylen = MTU,
		.reth_va = (uintptr_t)t->remote,
		.reth_len = 2 * MTU,
	};

	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	mr->device = &t->vdev->ibdev;
	mr->pd = &t->pd;
	pkt.reth_rkey = mr->rkey;
	deliver(test, t, &pkt, 0x11);
	/* Not held: else the deregistration below would wait for ever. */
	KUNIT_ASSERT_EQ(test, refcount_read(&to_vmr(mr)->ref), 1U);
	/* As vhca_dereg_mr() waits for the references: none is left. */
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(mr, NULL), 0);
	pkt.opcode = IB_OPCODE_RC_RDMA_WRITE_LAST;
	pkt.psn = RQ_PSN + 1;
	deliver(test, t, &pkt, 0x22);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN + 1, &nak);
	KUNIT_EXPECT_EQ(test, nak.aeth_syndrome,
			vhca_aeth_nak(VHCA_NAK_REM_ACCESS_ERR));
	KUNIT_EXPECT_EQ(test, t->remote[MTU], 0);
}

/*
 * A zero-length RDMA WRITE, as srpt posts one once a channel is up and
 * ib_drain_sq() posts one to drain: no SGE, rkey 0, address 0.  It goes
 * as a WRITE_ONLY of no payload, whose R_Key the responder does not
 * check (C9-88), is acknowledged and completes, and touches no byte.
 */
static void engine_write_zero_length(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt pkt;
	struct sk_buff *skb;

	memset(t->remote, 0x5a, BUF_LEN);
	/* The slot as sq_slot() zeroes it: no SGE, rkey 0, address 0. */
	sq_slot(t, 5, VHCA_WR_RDMA_WRITE);
	sq_publish(t);
	vhca_req_run(t->req);
	KUNIT_ASSERT_TRUE(test, next_sent(test, &pkt, &skb));
	KUNIT_EXPECT_EQ(test, pkt.opcode, IB_OPCODE_RC_RDMA_WRITE_ONLY);
	KUNIT_EXPECT_EQ(test, pkt.psn, (u32)SQ_PSN);
	KUNIT_EXPECT_EQ(test, pkt.paylen, 0U);
	KUNIT_EXPECT_EQ(test, pkt.reth_len, 0U);
	KUNIT_EXPECT_EQ(test, pkt.reth_rkey, 0U);
	KUNIT_EXPECT_EQ(test, pkt.reth_va, 0ULL);
	receive(t, skb);
	KUNIT_ASSERT_TRUE(test, next_sent(test, &pkt, &skb));
	KUNIT_EXPECT_EQ(test, pkt.opcode, IB_OPCODE_RC_ACKNOWLEDGE);
	KUNIT_EXPECT_EQ(test, pkt.psn, (u32)RQ_PSN);
	KUNIT_EXPECT_EQ(test, pkt.aeth_syndrome & VHCA_AETH_TYPE_MASK,
			VHCA_AETH_ACK);
	KUNIT_EXPECT_EQ(test, pkt.aeth_msn, 1U);
	receive(t, skb);
	expect_cqe(test, t->send_cq, 5, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	expect_nothing_sent(test);
	expect_no_cqe(test, t->recv_cq);
	KUNIT_EXPECT_EQ(test, t->remote[0], 0x5a);
	KUNIT_EXPECT_EQ(test, t->remote[BUF_LEN - 1], 0x5a);
	KUNIT_EXPECT_EQ(test, t->req->state, IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, t->resp->state, IB_QPS_RTS);
}

/*
 * A WRITE with immediate whose last packet finds no receive WQE gets an
 * RNR NAK and is taken whole when that packet comes again: the message
 * stays open, and its last payload lands once.
 */
static void engine_write_imm_rnr(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt ack, pkt = {
		.opcode = IB_OPCODE_RC_RDMA_WRITE_FIRST,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.paylen = MTU,
		.reth_va = (uintptr_t)t->remote,
		.reth_rkey = t->mr->rkey,
		.reth_len = 2 * MTU,
	};
	struct ib_wc wc;
	int i;

	deliver(test, t, &pkt, 0x11);
	pkt.opcode = IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE;
	pkt.psn = RQ_PSN + 1;
	pkt.ackreq = true;
	pkt.imm = cpu_to_be32(0x1234);
	deliver(test, t, &pkt, 0x22);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN + 1, &ack);
	KUNIT_EXPECT_EQ(test, ack.aeth_syndrome, vhca_aeth_rnr_nak(1));
	post_recv(t, 7, NULL, 0);
	deliver(test, t, &pkt, 0x22);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN + 1, &ack);
	KUNIT_EXPECT_EQ(test, ack.aeth_syndrome & VHCA_AETH_TYPE_MASK,
			VHCA_AETH_ACK);
	KUNIT_ASSERT_EQ(test, vhca_poll_cq(&t->recv_cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 7ULL);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV_RDMA_WITH_IMM);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 2U * MTU);
	for (i = 0; i < 2 * MTU; i++)
		if (t->remote[i] != (i < MTU ? 0x11 : 0x22))
			break;
	KUNIT_EXPECT_EQ(test, i, 2 * MTU);
}

/*
 * A receive WQE the process wrote malformed (more SGEs than the QP has)
 * completes in error, NAKs the request as invalid and fails the QP, for a
 * WRITE with immediate (which places nothing in it) as for a SEND: never
 * a success completion.
 */
static void engine_recv_wqe_malformed(struct kunit *test)
{
	struct engine_test *t = test->priv;
	u64 malformed = counter(t, VHCA_CNT_MALFORMED_WQES);
	struct vhca_pkt nak, pkt = {
		.opcode = IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.paylen = 16,
		.reth_va = (uintptr_t)t->remote,
		.reth_rkey = t->mr->rkey,
		.reth_len = 16,
		.ackreq = true,
		.imm = cpu_to_be32(0x1234),
	};
	struct vhca_recv_wqe *wqe;

	wqe = vhca_ring_slot(&t->resp->rq, t->resp->recs.db->head[1]);
	post_recv(t, 9, NULL, 0);
	wqe->num_sge = t->resp->max_recv_sge + 1;
	deliver(test, t, &pkt, 0x5a);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &nak);
	KUNIT_EXPECT_EQ(test, nak.aeth_syndrome,
			vhca_aeth_nak(VHCA_NAK_INVALID_REQ));
	expect_cqe(test, t->recv_cq, 9, IB_WC_LOC_LEN_ERR, 0);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_MALFORMED_WQES), malformed + 1);
	KUNIT_EXPECT_EQ(test, t->resp->state, IB_QPS_ERR);
}

static void engine_gap_nak_once(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt nak, pkt = {
		.opcode = IB_OPCODE_RC_SEND_ONLY,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN + 1,
		.ackreq = true,
	};

	post_recv(t, 1, NULL, 0);
	deliver(test, t, &pkt, 0);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &nak);
	KUNIT_EXPECT_EQ(test, nak.aeth_syndrome,
			vhca_aeth_nak(VHCA_NAK_PSN_SEQ_ERR));
	KUNIT_EXPECT_EQ(test, nak.aeth_msn, 0U);
	pkt.psn = RQ_PSN + 2;
	deliver(test, t, &pkt, 0);
	expect_nothing_sent(test);
	expect_no_cqe(test, t->recv_cq);
	KUNIT_EXPECT_EQ(test, t->resp->rq_tail, 0U);
}

static void engine_rnr_nak_sent(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt nak, pkt = {
		.opcode = IB_OPCODE_RC_SEND_ONLY,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.ackreq = true,
	};

	/* No receive WQE: an RNR NAK with the QP's min_rnr_timer. */
	deliver(test, t, &pkt, 0);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &nak);
	KUNIT_EXPECT_EQ(test, nak.aeth_syndrome, vhca_aeth_rnr_nak(1));
	post_recv(t, 1, NULL, 0);
	deliver(test, t, &pkt, 0);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &nak);
	KUNIT_EXPECT_EQ(test, nak.aeth_syndrome & VHCA_AETH_TYPE_MASK,
			VHCA_AETH_ACK);
	expect_cqe(test, t->recv_cq, 1, IB_WC_SUCCESS, IB_WC_RECV);
}

static void engine_lingering_qp(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt ack, pkt = {
		.opcode = IB_OPCODE_RC_SEND_ONLY,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.ackreq = true,
	};

	post_recv(t, 1, NULL, 0);
	deliver(test, t, &pkt, 0);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, NULL);
	expect_cqe(test, t->recv_cq, 1, IB_WC_SUCCESS, IB_WC_RECV);

	/* Destroyed (as vhca_destroy_qp() does it), it lingers. */
	free_qp(t, t->resp);
	vhca_engine_qp_linger(t->resp);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->vdev->n_lingering), 1);

	/* Its last ACK was lost: the retransmission is acknowledged again. */
	deliver(test, t, &pkt, 0);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &ack);
	KUNIT_EXPECT_EQ(test, ack.dqpn, (u32)REQ_QPN);
	KUNIT_EXPECT_EQ(test, ack.aeth_msn, 1U);
	KUNIT_EXPECT_EQ(test, ack.aeth_syndrome & VHCA_AETH_TYPE_MASK,
			VHCA_AETH_ACK);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_DUP_REQUESTS), 1ULL);
	expect_no_cqe(test, t->recv_cq);

	/* A request it never received, a READ, another peer: no answer. */
	pkt.psn = RQ_PSN + 1;
	deliver(test, t, &pkt, 0);
	pkt = (struct vhca_pkt){ .opcode = IB_OPCODE_RC_RDMA_READ_REQUEST,
				 .dqpn = RESP_QPN, .psn = RQ_PSN,
				 .reth_len = 8, .ackreq = true };
	deliver(test, t, &pkt, 0);
	pkt = (struct vhca_pkt){ .opcode = IB_OPCODE_RC_SEND_ONLY,
				 .dqpn = RESP_QPN, .psn = RQ_PSN,
				 .ackreq = true };
	engine_test_source_gid.raw[15] = 1;
	deliver(test, t, &pkt, 0);
	expect_nothing_sent(test);
}

static struct kunit_case vhca_engine_resp_cases[] = {
	KUNIT_CASE(engine_duplicate_send),
	KUNIT_CASE(engine_duplicate_write),
	KUNIT_CASE(engine_duplicate_read),
	KUNIT_CASE(engine_duplicate_read_refused),
	KUNIT_CASE(engine_read_responses_bounded),
	KUNIT_CASE(engine_read_one_pass_at_a_time),
	KUNIT_CASE(engine_held_not_overtaken),
	KUNIT_CASE(engine_read_resources_enforced),
	KUNIT_CASE(engine_write_mr_not_held),
	KUNIT_CASE(engine_write_zero_length),
	KUNIT_CASE(engine_write_imm_rnr),
	KUNIT_CASE(engine_recv_wqe_malformed),
	KUNIT_CASE(engine_gap_nak_once),
	KUNIT_CASE(engine_rnr_nak_sent),
	KUNIT_CASE(engine_lingering_qp),
	{}
};

static struct kunit_suite vhca_engine_resp_suite = {
	.name = "vhca_engine_resp",
	.suite_init = engine_suite_init,
	.suite_exit = engine_suite_exit,
	.init = engine_test_init,
	.exit = engine_test_exit,
	.test_cases = vhca_engine_resp_cases,
};
