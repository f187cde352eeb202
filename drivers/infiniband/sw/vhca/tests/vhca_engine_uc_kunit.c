// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite vhca_engine_uc: UC on the engine (no ACKs, messages dropped
 * whole, receive WQEs kept for the next message).
 * Included by vhca_engine_kunit.c, whose fixture (vhca_engine_fixture.h)
 * and engine sources it uses.
 */

/* ---- UC ---- */

/* The requester and responder QPs of engine_test_init(), as UC QPs. */
static int engine_test_init_uc(struct kunit *test)
{
	struct engine_test *t;
	int err = engine_test_init(test);

	t = test->priv;
	t->req->ibqp.qp_type = IB_QPT_UC;
	t->resp->ibqp.qp_type = IB_QPT_UC;
	return err;
}

static void fill_pattern(u8 *buf, u32 len, u8 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		buf[i] = seed + i * 7;
}

static u32 pattern_differs(const u8 *buf, u32 len, u8 seed)
{
	u32 i, n = 0;

	for (i = 0; i < len; i++)
		n += buf[i] != (u8)(seed + i * 7);
	return n;
}

/* The UC packets of a message: opcodes in order from PSN psn, no AckReq. */
static void expect_uc_sent(struct kunit *test, const u8 *opcodes, int n,
			   u32 psn)
{
	struct vhca_pkt pkt;
	int i;

	for (i = 0; i < n; i++) {
		expect_sent(test, opcodes[i], psn + i, &pkt);
		KUNIT_EXPECT_FALSE(test, pkt.ackreq);
		KUNIT_EXPECT_EQ(test, pkt.dqpn, RESP_QPN);
	}
}

/*
 * A SEND of three packets: UC_SEND_FIRST, MIDDLE, LAST without AckReq;
 * the send WQE completes as they are built, with no timer left; the
 * responder places them and answers nothing.
 */
static void engine_uc_send(struct kunit *test)
{
	static const u8 ops[] = { IB_OPCODE_UC_SEND_FIRST,
		IB_OPCODE_UC_SEND_MIDDLE, IB_OPCODE_UC_SEND_LAST };
	struct engine_test *t = test->priv;
	u32 len = 3 * MTU - 10;
	struct ib_wc wc;

	fill_pattern(t->local, len, 3);
	post_send(t, 1, VHCA_WR_SEND, t->local, len, 0);
	vhca_req_run(t->req);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_SEND);
	KUNIT_EXPECT_FALSE(test, timer_pending(&t->req->req.rexmit_timer));
	KUNIT_EXPECT_EQ(test, t->req->sq_tail, 1U);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&engine_test_sent), 3U);
	post_recv(t, 7, t->remote, BUF_LEN);
	loop_sent(t);
	expect_nothing_sent(test);
	KUNIT_ASSERT_EQ(test, vhca_poll_cq(&t->recv_cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 7ULL);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc.byte_len, len);
	KUNIT_EXPECT_EQ(test, pattern_differs(t->remote, len, 3), 0U);

	/* The packets again, as sent. */
	post_send(t, 2, VHCA_WR_SEND, t->local, len, 0);
	vhca_req_run(t->req);
	expect_uc_sent(test, ops, 3, SQ_PSN + 3);
}

/*
 * A WRITE with immediate of three packets lands in the MR and completes
 * a receive WQE with its immediate and length; nothing is answered.
 */
static void engine_uc_write_imm(struct kunit *test)
{
	static const u8 ops[] = { IB_OPCODE_UC_RDMA_WRITE_FIRST,
		IB_OPCODE_UC_RDMA_WRITE_MIDDLE,
		IB_OPCODE_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE };
	struct engine_test *t = test->priv;
	u32 len = 2 * MTU + 5;
	struct vhca_send_wqe *wqe;
	struct vhca_sge *sge;
	struct vhca_pkt pkt;
	struct sk_buff *skb;
	struct ib_wc wc;
	int i;

	fill_pattern(t->local, len, 5);
	memset(t->remote, 0xa5, BUF_LEN);
	wqe = sq_slot(t, 1, VHCA_WR_RDMA_WRITE_WITH_IMM);
	sge = (struct vhca_sge *)(wqe + 1);
	wqe->num_sge = 1;
	wqe->imm_data = cpu_to_be32(0xfeed);
	wqe->rdma.remote_addr = (uintptr_t)t->remote + 4;
	wqe->rdma.rkey = t->mr->rkey;
	sge->addr = (uintptr_t)t->local;
	sge->length = len;
	sge->lkey = t->mr->lkey;
	sq_publish(t);
	vhca_req_run(t->req);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	post_recv(t, 7, NULL, 0);
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_TRUE(test, next_sent(test, &pkt, &skb));
		KUNIT_EXPECT_EQ(test, pkt.opcode, ops[i]);
		KUNIT_EXPECT_EQ(test, pkt.psn, SQ_PSN + i);
		KUNIT_EXPECT_FALSE(test, pkt.ackreq);
		receive(t, skb);
	}
	expect_nothing_sent(test);
	KUNIT_ASSERT_EQ(test, vhca_poll_cq(&t->recv_cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 7ULL);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV_RDMA_WITH_IMM);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0xfeedU);
	KUNIT_EXPECT_EQ(test, wc.byte_len, len);
	KUNIT_EXPECT_EQ(test, pattern_differs(t->remote + 4, len, 5), 0U);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, t->remote[i], 0xa5);
	for (i = 4 + len; i < BUF_LEN; i++)
		if (t->remote[i] != 0xa5)
			break;
	KUNIT_EXPECT_EQ(test, i, BUF_LEN);
}

/* A UC request packet to the responder. */
static void deliver_uc(struct kunit *test, struct engine_test *t, u8 opcode,
		       u32 psn, u32 paylen, u8 fill)
{
	struct vhca_pkt pkt = {
		.opcode = opcode,
		.dqpn = RESP_QPN,
		.psn = psn,
		.paylen = paylen,
		.reth_va = (uintptr_t)t->remote,
		.reth_rkey = t->mr->rkey,
		.reth_len = 2 * MTU,
	};

	deliver(test, t, &pkt, fill);
}

/*
 * A PSN gap in a SEND drops exactly that message: the next one lands in
 * the same receive WQE.  A SEND after a WRITE that lost its LAST lands in
 * the next WQE; a MIDDLE without its FIRST is dropped; a receive WQE held
 * by a dropped message is flushed when the QP fails.  Nothing is ever
 * answered.
 */
static void engine_uc_gap(struct kunit *test)
{
	struct engine_test *t = test->priv;
	u64 gaps = counter(t, VHCA_CNT_RX_OUT_OF_WINDOW);
	u32 p = RQ_PSN;
	struct ib_wc wc;

	post_recv(t, 7, t->remote, BUF_LEN);
	post_recv(t, 8, t->local, BUF_LEN);
	deliver_uc(test, t, IB_OPCODE_UC_SEND_FIRST, p, MTU, 0x11);
	/* p + 1, its MIDDLE, is lost. */
	deliver_uc(test, t, IB_OPCODE_UC_SEND_LAST, p + 2, 16, 0x33);
	expect_no_cqe(test, t->recv_cq);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_RX_OUT_OF_WINDOW), gaps + 1);
	deliver_uc(test, t, IB_OPCODE_UC_SEND_ONLY, p + 3, 100, 0x44);
	KUNIT_ASSERT_EQ(test, vhca_poll_cq(&t->recv_cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 7ULL);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 100U);
	KUNIT_EXPECT_EQ(test, t->remote[0], 0x44);
	KUNIT_EXPECT_EQ(test, t->remote[99], 0x44);

	/* A WRITE whose LAST never comes, then a SEND. */
	deliver_uc(test, t, IB_OPCODE_UC_RDMA_WRITE_FIRST, p + 4, MTU, 0x55);
	deliver_uc(test, t, IB_OPCODE_UC_SEND_ONLY, p + 5, 8, 0x66);
	expect_cqe(test, t->recv_cq, 8, IB_WC_SUCCESS, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, t->local[0], 0x66);

	/* A MIDDLE and a LAST without their FIRST. */
	post_recv(t, 9, t->local, BUF_LEN);
	deliver_uc(test, t, IB_OPCODE_UC_SEND_MIDDLE, p + 6, MTU, 0x77);
	deliver_uc(test, t, IB_OPCODE_UC_SEND_LAST, p + 7, 8, 0x77);
	expect_no_cqe(test, t->recv_cq);
	KUNIT_EXPECT_EQ(test, t->local[0], 0x66);

	/* WQE 9 taken by a message that loses its LAST, then the QP fails. */
	deliver_uc(test, t, IB_OPCODE_UC_SEND_FIRST, p + 8, MTU, 0x88);
	deliver_uc(test, t, IB_OPCODE_UC_SEND_LAST, p + 10, 8, 0x88);
	expect_no_cqe(test, t->recv_cq);
	KUNIT_EXPECT_EQ(test, t->resp->rq_tail, 3U);
	vhca_qp_to_error(t->resp);
	expect_cqe(test, t->recv_cq, 9, IB_WC_WR_FLUSH_ERR, IB_WC_RECV);
	expect_no_cqe(test, t->recv_cq);
	expect_nothing_sent(test);
}

/*
 * A SEND without a receive WQE is dropped without an RNR NAK, and an RC
 * opcode to a UC QP is refused; the next SEND lands.
 */
static void engine_uc_no_wqe(struct kunit *test)
{
	struct engine_test *t = test->priv;
	u64 malformed = counter(t, VHCA_CNT_RX_MALFORMED);

	deliver_uc(test, t, IB_OPCODE_UC_SEND_ONLY, RQ_PSN, 32, 0x11);
	expect_nothing_sent(test);
	expect_no_cqe(test, t->recv_cq);
	post_recv(t, 7, t->remote, BUF_LEN);
	deliver_uc(test, t, IB_OPCODE_RC_SEND_ONLY, RQ_PSN + 1, 32, 0x22);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_RX_MALFORMED), malformed + 1);
	expect_no_cqe(test, t->recv_cq);
	deliver_uc(test, t, IB_OPCODE_UC_SEND_ONLY, RQ_PSN + 1, 32, 0x33);
	expect_cqe(test, t->recv_cq, 7, IB_WC_SUCCESS, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, t->remote[0], 0x33);
	expect_nothing_sent(test);
}

/*
 * READ and atomics on UC (which post_send refuses with -EINVAL, in the
 * kernel verb and in the provider): one written into the ring anyway
 * completes in error and fails the QP, and nothing is sent.
 */
static void engine_uc_read_refused(struct kunit *test)
{
	struct engine_test *t = test->priv;

	post_send(t, 3, VHCA_WR_RDMA_READ, t->local, 64, (uintptr_t)t->remote);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	expect_cqe(test, t->send_cq, 3, IB_WC_LOC_QP_OP_ERR, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test, t->req->state, IB_QPS_ERR);
}

/* Likewise an atomic. */
static void engine_uc_atomic_refused(struct kunit *test)
{
	struct engine_test *t = test->priv;

	post_send(t, 4, VHCA_WR_ATOMIC_FETCH_AND_ADD, t->local, 8,
		  (uintptr_t)t->remote);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	expect_cqe(test, t->send_cq, 4, IB_WC_LOC_QP_OP_ERR, IB_WC_FETCH_ADD);
	KUNIT_EXPECT_EQ(test, t->req->state, IB_QPS_ERR);
}

static struct kunit_case vhca_engine_uc_cases[] = {
	KUNIT_CASE(engine_uc_send),
	KUNIT_CASE(engine_uc_write_imm),
	KUNIT_CASE(engine_uc_gap),
	KUNIT_CASE(engine_uc_no_wqe),
	KUNIT_CASE(engine_uc_read_refused),
	KUNIT_CASE(engine_uc_atomic_refused),
	{}
};

static struct kunit_suite vhca_engine_uc_suite = {
	.name = "vhca_engine_uc",
	.suite_init = engine_suite_init,
	.suite_exit = engine_suite_exit,
	.init = engine_test_init_uc,
	.exit = engine_test_exit,
	.test_cases = vhca_engine_uc_cases,
};
