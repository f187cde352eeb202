// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suites vhca_engine_req, vhca_engine_retry and vhca_engine_wrap: the
 * RC requester and completer (go-back-N on a sequence NAK and on timeout,
 * retries and RNR retries counted, the RNR delay, ACKs for nothing, the
 * doorbell's window in a ping-pong, a QP without a send queue, RTS to RTS,
 * PSN wrap, READ response gaps, a wire QP's passes on the CPU that sent
 * what is unacknowledged).
 * Included by vhca_engine_kunit.c, whose fixture (vhca_engine_fixture.h)
 * and engine sources it uses.
 */

/* ---- requester and completer ---- */

static void engine_seq_nak_go_back_n(struct kunit *test)
{
	struct engine_test *t = test->priv;

	send_n(test, t, 3);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN, NULL);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN + 1, NULL);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN + 2, NULL);
	expect_nothing_sent(test);

	/* The peer lost SQ_PSN + 1: the first completes, the rest go again. */
	deliver_aeth(test, t, vhca_aeth_nak(VHCA_NAK_PSN_SEQ_ERR), SQ_PSN + 1);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_SEND);
	expect_no_cqe(test, t->send_cq);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_SEQ_NAKS), 1ULL);
	KUNIT_EXPECT_GE(test, kicks(t, t->req), 1);
	vhca_req_run(t->req);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN + 1, NULL);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN + 2, NULL);
	expect_nothing_sent(test);

	deliver_ack(test, t, SQ_PSN + 2);
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_SEND);
	expect_cqe(test, t->send_cq, 3, IB_WC_SUCCESS, IB_WC_SEND);
	KUNIT_EXPECT_EQ(test, t->req->state, IB_QPS_RTS);
}

static void engine_timeout_go_back_n(struct kunit *test)
{
	struct engine_test *t = test->priv;

	send_n(test, t, 2);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN, NULL);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN + 1, NULL);
	KUNIT_EXPECT_TRUE(test, timer_pending(&t->req->req.rexmit_timer));

	fire_rexmit(t->req);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_TIMEOUTS), 1ULL);
	KUNIT_EXPECT_EQ(test, t->req->req.retry_left, 6);
	expect_nothing_sent(test);	/* the pass is the work item's */
	KUNIT_EXPECT_GE(test, kicks(t, t->req), 1);
	vhca_req_run(t->req);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN, NULL);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN + 1, NULL);
	expect_nothing_sent(test);

	/* Progress gives the retries back. */
	deliver_ack(test, t, SQ_PSN + 1);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_SEND);
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_SEND);
	KUNIT_EXPECT_EQ(test, t->req->req.retry_left, 7);
	KUNIT_EXPECT_FALSE(test, timer_pending(&t->req->req.rexmit_timer));
}

static int engine_test_init_retry1(struct kunit *test)
{
	return engine_test_init_with(test, 1, 1, SQ_PSN, RQ_PSN);
}

static void engine_timeout_retry_exceeded(struct kunit *test)
{
	struct engine_test *t = test->priv;

	send_n(test, t, 1);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN, NULL);
	fire_rexmit(t->req);
	vhca_req_run(t->req);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN, NULL);
	expect_no_cqe(test, t->send_cq);

	fire_rexmit(t->req);
	expect_cqe(test, t->send_cq, 1, IB_WC_RETRY_EXC_ERR, 0);
	KUNIT_EXPECT_EQ(test, t->req->state, IB_QPS_ERR);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
}

/*
 * The RNR delay ends (rnr_timer's handler runs), then the pass that the
 * kick it queued runs: the WQE goes again.
 */
static void rnr_delay_then_pass(struct kunit *test, struct engine_test *t)
{
	fire_rnr(t->req);
	vhca_req_run(t->req);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN, NULL);
}

static void engine_rnr_retry_counted(struct kunit *test)
{
	struct engine_test *t = test->priv;
	int before;

	send_n(test, t, 1);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN, NULL);
	before = kicks(t, t->req);

	/* The first RNR NAK waits its delay: no pass until then. */
	deliver_aeth(test, t, vhca_aeth_rnr_nak(0), SQ_PSN);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_RNR_NAKS), 1ULL);
	KUNIT_EXPECT_EQ(test, t->req->req.rnr_left, 0);
	KUNIT_EXPECT_EQ(test, kicks(t, t->req), before);
	KUNIT_EXPECT_TRUE(test, hrtimer_active(&t->req->req.rnr_timer));
	KUNIT_EXPECT_FALSE(test, timer_pending(&t->req->req.rexmit_timer));
	expect_no_cqe(test, t->send_cq);
	rnr_delay_then_pass(test, t);

	/* rnr_retry 1: the second one fails the WQE. */
	deliver_aeth(test, t, vhca_aeth_rnr_nak(0), SQ_PSN);
	expect_cqe(test, t->send_cq, 1, IB_WC_RNR_RETRY_EXC_ERR, 0);
	KUNIT_EXPECT_EQ(test, t->req->state, IB_QPS_ERR);
}

static void engine_rnr_retry_infinite(struct kunit *test)
{
	struct engine_test *t = test->priv;
	int round;

	send_n(test, t, 1);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN, NULL);
	for (round = 0; round < 5; round++) {
		deliver_aeth(test, t, vhca_aeth_rnr_nak(0), SQ_PSN);
		KUNIT_EXPECT_EQ(test, t->req->req.rnr_left, 7);
		expect_no_cqe(test, t->send_cq);
		rnr_delay_then_pass(test, t);
	}
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_RNR_NAKS), 5ULL);
	deliver_ack(test, t, SQ_PSN);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_SEND);
	KUNIT_EXPECT_EQ(test, t->req->state, IB_QPS_RTS);
}

/*
 * With the doorbell's poll window on: a lone WRITE's ACK opens the window
 * (db_timer looks at the doorbell when it ends, no NEEDS_WAKEUP yet),
 * while the answer to a lone READ sets NEEDS_WAKEUP at once, as a message
 * received does: the process's next post kicks without waiting.
 */
static void engine_db_lone_read_wakes(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_qp *qp = t->req;

	/* A window that cannot end by itself while the test looks. */
	poll_budget = USEC_PER_SEC;
	post_send(t, 1, VHCA_WR_RDMA_WRITE, t->local, 8, (uintptr_t)t->remote);
	vhca_req_run(qp);
	loop_sent(t);
	loop_sent(t);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	KUNIT_EXPECT_EQ(test, qp->db.state, VHCA_DB_GRACE);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(qp->recs.st->flags) &
			   VHCA_STATUS_NEEDS_WAKEUP);
	/* The window's end, as db_timer's: nothing came, so it sleeps. */
	hrtimer_cancel(&qp->db.timer);
	vhca_db_expire(qp, false);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(qp->recs.st->flags) &
			  VHCA_STATUS_NEEDS_WAKEUP);

	post_send(t, 2, VHCA_WR_RDMA_READ, t->local, 8, (uintptr_t)t->remote);
	vhca_req_run(qp);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(qp->recs.st->flags) &
			   VHCA_STATUS_NEEDS_WAKEUP);
	loop_sent(t);
	loop_sent(t);
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test, qp->db.state, VHCA_DB_AWAKE);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(qp->recs.st->flags) &
			  VHCA_STATUS_NEEDS_WAKEUP);
}

/* A post answering the peer's message: its ACK opens no window. */
static void pingpong_post(struct kunit *test, struct engine_test *t, u64 id)
{
	struct vhca_qp *qp = t->req;

	post_send(t, id, VHCA_WR_RDMA_WRITE, t->local, 8, (uintptr_t)t->remote);
	vhca_req_run(qp);
	loop_sent(t);
	loop_sent(t);
	expect_cqe(test, t->send_cq, id, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	KUNIT_EXPECT_EQ(test, qp->db.state, VHCA_DB_AWAKE);
	KUNIT_EXPECT_FALSE(test, hrtimer_active(&qp->db.timer));
	KUNIT_EXPECT_TRUE(test, READ_ONCE(qp->recs.st->flags) &
			  VHCA_STATUS_NEEDS_WAKEUP);
}

/*
 * A ping-pong seen from one side: the ACK of its WRITE opens the window,
 * the peer's answer (a WRITE to this QP) ends it and stops db_timer; the
 * post answering it opens no window, its ACK sets NEEDS_WAKEUP at once.
 * The peer's next message comes while the doorbell sleeps: the same.  A
 * post with no message since, a stream's, opens the window again.
 */
static void engine_db_pingpong_skips_window(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_qp *qp = t->req;
	struct vhca_pkt ack, pkt = {
		.opcode = IB_OPCODE_RC_RDMA_WRITE_ONLY,
		.dqpn = REQ_QPN,
		.psn = RQ_PSN,
		.paylen = 8,
		.ackreq = true,
		.reth_va = (uintptr_t)t->local,
		.reth_rkey = t->mr->rkey,
		.reth_len = 8,
	};

	/* A window that cannot end by itself while the test looks. */
	poll_budget = USEC_PER_SEC;
	post_send(t, 1, VHCA_WR_RDMA_WRITE, t->local, 8, (uintptr_t)t->remote);
	vhca_req_run(qp);
	loop_sent(t);
	loop_sent(t);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	KUNIT_EXPECT_EQ(test, qp->db.state, VHCA_DB_GRACE);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(qp->recs.st->flags) &
			   VHCA_STATUS_NEEDS_WAKEUP);

	/* The answer ends the window, then the post that answers it. */
	deliver(test, t, &pkt, 0x5a);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &ack);
	KUNIT_EXPECT_FALSE(test, hrtimer_active(&qp->db.timer));
	KUNIT_EXPECT_EQ(test, qp->db.state, VHCA_DB_AWAKE);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(qp->recs.st->flags) &
			  VHCA_STATUS_NEEDS_WAKEUP);
	pingpong_post(test, t, 2);

	/* The next round's message, while the doorbell sleeps: the same. */
	pkt.psn = RQ_PSN + 1;
	deliver(test, t, &pkt, 0x5b);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN + 1, &ack);
	pingpong_post(test, t, 3);

	/* No message since: the window opens. */
	post_send(t, 4, VHCA_WR_RDMA_WRITE, t->local, 8, (uintptr_t)t->remote);
	vhca_req_run(qp);
	loop_sent(t);
	loop_sent(t);
	expect_cqe(test, t->send_cq, 4, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	KUNIT_EXPECT_EQ(test, qp->db.state, VHCA_DB_GRACE);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(qp->recs.st->flags) &
			   VHCA_STATUS_NEEDS_WAKEUP);
	hrtimer_cancel(&qp->db.timer);
}

/*
 * The end of the RNR delay alone sends the WQE again, and the delay is
 * not a timeout: retry_cnt is not spent on it, and the retransmit timer
 * does nothing meanwhile.  A kick during the delay sends nothing.
 */
static void engine_rnr_delay_resends(struct kunit *test)
{
	struct engine_test *t = test->priv;
	int before;

	send_n(test, t, 1);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN, NULL);
	deliver_aeth(test, t, vhca_aeth_rnr_nak(0), SQ_PSN);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	before = kicks(t, t->req);
	fire_rexmit(t->req);
	KUNIT_EXPECT_EQ(test, kicks(t, t->req), before);
	KUNIT_EXPECT_TRUE(test, t->req->req.rnr_wait);
	fire_rnr(t->req);
	KUNIT_EXPECT_FALSE(test, t->req->req.rnr_wait);
	KUNIT_EXPECT_GT(test, kicks(t, t->req), before);
	KUNIT_EXPECT_EQ(test, t->req->req.retry_left, 7);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_TIMEOUTS), 0ULL);
	vhca_req_run(t->req);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN, NULL);
}

/*
 * An ACK that makes room while a pass is under way (it came back inside
 * that pass's transmit, or on another CPU) leaves the next pass to it: no
 * work item is queued, the pass runs again when it ends.  Without a pass
 * under way, the same ACK queues the work item.
 */
static void engine_ack_during_pass(struct kunit *test)
{
	struct engine_test *t = test->priv;
	int before;

	send_n(test, t, 1);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN, NULL);
	post_send(t, 2, VHCA_WR_SEND, t->local, 8, 0);
	before = kicks(t, t->req);
	t->req->req.running = true;
	deliver_ack(test, t, SQ_PSN);
	KUNIT_EXPECT_TRUE(test, t->req->req.again);
	t->req->req.running = false;
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_SEND);
	KUNIT_EXPECT_EQ(test, kicks(t, t->req), before);

	vhca_req_run(t->req);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN + 1, NULL);
	post_send(t, 3, VHCA_WR_SEND, t->local, 8, 0);
	deliver_ack(test, t, SQ_PSN + 1);
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_SEND);
	KUNIT_EXPECT_GT(test, kicks(t, t->req), before);
}

/* The RNR NAK's timer codes (IBTA table 45), in microseconds. */
static void engine_rnr_delays(struct kunit *test)
{
	static const struct {
		u8 code;
		u32 us;
	} table[] = {
		{ 0, 655360 }, { 1, 10 }, { 2, 20 }, { 3, 30 }, { 4, 40 },
		{ 5, 60 }, { 6, 80 }, { 7, 120 }, { 12, 640 }, { 13, 960 },
		{ 14, 1280 }, { 20, 10240 }, { 30, 327680 }, { 31, 491520 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(table); i++)
		KUNIT_EXPECT_EQ_MSG(test, vhca_rnr_delay_us(table[i].code),
				    table[i].us, "code %u", table[i].code);
}

static void engine_ack_for_nothing(struct kunit *test)
{
	struct engine_test *t = test->priv;

	/*
	 * Nothing outstanding: an ACK or NAK completes nothing, sends
	 * nothing, moves nothing, and an RNR NAK spends no retry.
	 */
	deliver_ack(test, t, SQ_PSN + 50);
	deliver_ack(test, t, SQ_PSN - 1);
	deliver_aeth(test, t, vhca_aeth_rnr_nak(0), SQ_PSN);
	deliver_aeth(test, t, vhca_aeth_nak(VHCA_NAK_PSN_SEQ_ERR), SQ_PSN);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	expect_no_cqe(test, t->send_cq);
	KUNIT_EXPECT_EQ(test, t->req->state, IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, t->req->comp.acked_psn, (u32)SQ_PSN);
	KUNIT_EXPECT_EQ(test, t->req->req.rnr_left, 7);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_RNR_NAKS), 0ULL);

	/*
	 * An ACK for a PSN before the WQE's does not complete it, and
	 * neither does one for a PSN never sent.
	 */
	send_n(test, t, 1);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN, NULL);
	deliver_ack(test, t, SQ_PSN - 1);
	deliver_ack(test, t, SQ_PSN + 50);
	expect_no_cqe(test, t->send_cq);
	deliver_ack(test, t, SQ_PSN);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_SEND);

	/* A NAK for a PSN acknowledged already is stale: it fails nothing. */
	post_send(t, 2, VHCA_WR_SEND, t->local, 8, 0);
	vhca_req_run(t->req);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN + 1, NULL);
	deliver_aeth(test, t, vhca_aeth_nak(VHCA_NAK_REM_ACCESS_ERR), SQ_PSN);
	expect_no_cqe(test, t->send_cq);
	KUNIT_EXPECT_EQ(test, t->req->state, IB_QPS_RTS);
	deliver_ack(test, t, SQ_PSN + 1);
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_SEND);
}

/*
 * A QP created without a send queue (max_send_wr 0) gets ACKs, NAKs and
 * READ responses it never asked for (its peer's responder answers
 * requests from elsewhere): each is dropped; the QP stays in RTS.
 */
static void engine_no_send_queue(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct qp_params params = {
		.qpn = NO_SQ_QPN, .dest_qpn = RESP_QPN, .sq_psn = SQ_PSN,
		.rq_psn = RQ_PSN, .retry_cnt = 7, .no_sq = true,
	};
	struct vhca_qp *qp = new_qp(test, t, &params);
	struct vhca_pkt pkt = {
		.opcode = IB_OPCODE_RC_ACKNOWLEDGE,
		.dqpn = NO_SQ_QPN,
		.psn = SQ_PSN,
	};
	static const u8 syndromes[] = {
		VHCA_AETH_ACK | VHCA_AETH_CREDIT_INVALID,
		VHCA_AETH_RNR_NAK,
		VHCA_AETH_NAK | VHCA_NAK_PSN_SEQ_ERR,
		VHCA_AETH_NAK | VHCA_NAK_REM_ACCESS_ERR,
	};
	u32 i;

	for (i = 0; i < ARRAY_SIZE(syndromes); i++) {
		pkt.aeth_syndrome = syndromes[i];
		deliver(test, t, &pkt, 0);
	}
	pkt.opcode = IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY;
	pkt.aeth_syndrome = VHCA_AETH_ACK | VHCA_AETH_CREDIT_INVALID;
	pkt.paylen = 8;
	deliver(test, t, &pkt, 0);
	KUNIT_EXPECT_EQ(test, qp->state, IB_QPS_RTS);
	expect_nothing_sent(test);
	expect_no_cqe(test, t->send_cq);
	free_qp(t, qp);
}

/*
 * An RTS to RTS modify (here min_rnr_timer's) keeps the PSNs: the next
 * SEND reaches the peer as a new request, not as a duplicate it would
 * acknowledge and drop.
 */
static void engine_rts_to_rts_keeps_psn(struct kunit *test)
{
	struct engine_test *t = test->priv;
	int i;

	for (i = 1; i <= 3; i++)
		post_recv(t, 10 + i, t->remote + 16 * i, 16);
	send_n(test, t, 2);
	loop_sent(t);		/* the SENDs to the responder */
	loop_sent(t);		/* its ACK back */
	expect_cqe(test, t->recv_cq, 11, IB_WC_SUCCESS, IB_WC_RECV);
	expect_cqe(test, t->recv_cq, 12, IB_WC_SUCCESS, IB_WC_RECV);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_SEND);
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_SEND);

	mutex_lock(&t->req->mutex);
	t->req->attr.min_rnr_timer = 2;
	vhca_qp_set_state(t->req, IB_QPS_RTS);
	mutex_unlock(&t->req->mutex);
	post_send(t, 3, VHCA_WR_SEND, t->local, 8, 0);
	vhca_req_run(t->req);
	loop_sent(t);
	expect_cqe(test, t->recv_cq, 13, IB_WC_SUCCESS, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, t->resp->resp.psn, (u32)RQ_PSN + 3);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_DUP_REQUESTS), 0ULL);
}

static int engine_test_init_wrap(struct kunit *test)
{
	return engine_test_init_with(test, 7, 7, 0xfffffe, 0xffffff);
}

static void engine_psn_wrap(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt pkt;
	struct sk_buff *skb;

	send_n(test, t, 3);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, 0xfffffe, NULL);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, 0xffffff, NULL);
	KUNIT_ASSERT_TRUE(test, next_sent(test, &pkt, &skb));
	KUNIT_EXPECT_EQ(test, pkt.psn, 0U);
	kfree_skb(skb);

	/* An ACK for PSN 0 covers the two before the wrap. */
	deliver_ack(test, t, 0);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_SEND);
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_SEND);
	expect_cqe(test, t->send_cq, 3, IB_WC_SUCCESS, IB_WC_SEND);

	/* The responder expects 0xffffff, then 0; 0xffffff is then old. */
	post_recv(t, 10, NULL, 0);
	post_recv(t, 11, NULL, 0);
	post_recv(t, 12, NULL, 0);
	pkt = (struct vhca_pkt){ .opcode = IB_OPCODE_RC_SEND_ONLY,
				 .dqpn = RESP_QPN, .psn = 0xffffff,
				 .ackreq = true };
	deliver(test, t, &pkt, 0);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, 0xffffff, NULL);
	pkt.psn = 0;
	deliver(test, t, &pkt, 0);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, 0, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.aeth_msn, 2U);
	expect_cqe(test, t->recv_cq, 10, IB_WC_SUCCESS, IB_WC_RECV);
	expect_cqe(test, t->recv_cq, 11, IB_WC_SUCCESS, IB_WC_RECV);
	pkt = (struct vhca_pkt){ .opcode = IB_OPCODE_RC_SEND_ONLY,
				 .dqpn = RESP_QPN, .psn = 0xffffff,
				 .ackreq = true };
	deliver(test, t, &pkt, 0);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, 0, NULL);
	expect_no_cqe(test, t->recv_cq);
}

static void engine_read_gap_rerequested(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt pkt, rsp = {
		.dqpn = REQ_QPN,
		.paylen = MTU,
		.aeth_syndrome = vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID),
	};
	u64 remote = (uintptr_t)t->remote;

	post_send(t, 1, VHCA_WR_RDMA_READ, t->local, BUF_LEN, remote);
	vhca_req_run(t->req);
	expect_sent(test, IB_OPCODE_RC_RDMA_READ_REQUEST, SQ_PSN, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.reth_len, (u32)BUF_LEN);
	expect_nothing_sent(test);

	/* The first response lands; the second is lost. */
	rsp.opcode = IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST;
	rsp.psn = SQ_PSN;
	deliver(test, t, &rsp, 0xa1);
	rsp.opcode = IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST;
	rsp.psn = SQ_PSN + 2;
	deliver(test, t, &rsp, 0xa3);
	vhca_req_run(t->req);
	/* Asked again at once, for the rest only. */
	expect_sent(test, IB_OPCODE_RC_RDMA_READ_REQUEST, SQ_PSN + 1, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.reth_va, remote + MTU);
	KUNIT_EXPECT_EQ(test, pkt.reth_len, (u32)(BUF_LEN - MTU));
	expect_nothing_sent(test);
	expect_no_cqe(test, t->send_cq);

	/* Another response past the gap does not ask a third time. */
	deliver(test, t, &rsp, 0xa3);
	vhca_req_run(t->req);
	expect_nothing_sent(test);

	rsp.opcode = IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE;
	rsp.psn = SQ_PSN + 1;
	deliver(test, t, &rsp, 0xa2);
	rsp.opcode = IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST;
	rsp.psn = SQ_PSN + 2;
	deliver(test, t, &rsp, 0xa3);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	expect_mtu_fill(test, t->local, 0xa1);
}

/* ACKs: how many the requester asks for, and what one completes. */

static void engine_ack_coalescing(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt pkt;
	struct sk_buff *skb;
	u8 opcodes[3];
	bool ackreq[3];
	int i;

	memset(t->local, 0x5c, BUF_LEN);
	post_recv(t, 7, t->remote, BUF_LEN);
	post_send(t, 1, VHCA_WR_SEND, t->local, BUF_LEN, 0);
	vhca_req_run(t->req);

	/* Three packets, an ACK asked only on the last. */
	KUNIT_ASSERT_EQ(test, skb_queue_len(&engine_test_sent), 3U);
	i = 0;
	skb_queue_walk(&engine_test_sent, skb) {
		KUNIT_ASSERT_EQ(test, vhca_pkt_parse(skb->data, skb->len,
						     &pkt), 0);
		opcodes[i] = pkt.opcode;
		ackreq[i] = pkt.ackreq;
		KUNIT_EXPECT_EQ(test, pkt.psn, (u32)SQ_PSN + i);
		i++;
	}
	KUNIT_EXPECT_EQ(test, opcodes[0], IB_OPCODE_RC_SEND_FIRST);
	KUNIT_EXPECT_EQ(test, opcodes[1], IB_OPCODE_RC_SEND_MIDDLE);
	KUNIT_EXPECT_EQ(test, opcodes[2], IB_OPCODE_RC_SEND_LAST);
	KUNIT_EXPECT_FALSE(test, ackreq[0]);
	KUNIT_EXPECT_FALSE(test, ackreq[1]);
	KUNIT_EXPECT_TRUE(test, ackreq[2]);

	/* The responder answers the message with one ACK. */
	loop_sent(t);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, SQ_PSN + 2, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.aeth_syndrome & VHCA_AETH_TYPE_MASK,
			VHCA_AETH_ACK);
	KUNIT_EXPECT_EQ(test, pkt.aeth_msn, 1U);
	KUNIT_EXPECT_EQ(test, pkt.dqpn, (u32)REQ_QPN);
	expect_nothing_sent(test);
	expect_cqe(test, t->recv_cq, 7, IB_WC_SUCCESS, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, memcmp(t->local, t->remote, BUF_LEN), 0);
}

/*
 * Three messages in one pass: only the pass's last packet asks for an
 * ACK, and that one ACK completes all three.
 */
static void engine_ack_per_pass(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt pkt;
	int i;

	for (i = 1; i <= 3; i++)
		post_recv(t, 10 + i, t->remote + 16 * i, 16);
	send_n(test, t, 3);
	for (i = 0; i < 3; i++) {
		KUNIT_ASSERT_TRUE(test, next_sent(test, &pkt, NULL));
		KUNIT_EXPECT_EQ(test, pkt.opcode, IB_OPCODE_RC_SEND_ONLY);
		KUNIT_EXPECT_EQ(test, pkt.ackreq, i == 2);
	}
	expect_nothing_sent(test);
	/* Sent again: the responder acknowledges the last only. */
	fire_rexmit(t->req);
	vhca_req_run(t->req);
	loop_sent(t);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, SQ_PSN + 2, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.aeth_msn, 3U);
	expect_nothing_sent(test);
	deliver_ack(test, t, SQ_PSN + 2);
	for (i = 1; i <= 3; i++)
		expect_cqe(test, t->send_cq, i, IB_WC_SUCCESS, IB_WC_SEND);
}

/* One requester pass on the CPU work_on_cpu() runs it on. */
static long run_pass_here(void *qp)
{
	vhca_req_run(qp);
	return 0;
}

/*
 * Packets that took the wire from one CPU are unacknowledged: a pass on
 * another CPU sends nothing and queues the work item on the first, whose
 * pass sends; once everything is acknowledged, the other CPU sends and
 * is the QP's from then on.
 */
static void engine_wire_one_cpu(struct kunit *test)
{
	struct engine_test *t = test->priv;
	int a, b, before;

	a = cpumask_first(cpu_online_mask);
	b = cpumask_next(a, cpu_online_mask);
	if (b >= nr_cpu_ids)
		kunit_skip(test, "a second CPU online is needed");
	engine_test_wire = true;
	post_send(t, 1, VHCA_WR_SEND, t->local, 8, 0);
	work_on_cpu(a, run_pass_here, t->req);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN, NULL);
	KUNIT_EXPECT_EQ(test, READ_ONCE(t->req->req.tx_cpu), a);

	flush_work(&t->req->wire_work);
	before = atomic_read(&t->wire_kicks);
	post_send(t, 2, VHCA_WR_SEND, t->local, 8, 0);
	work_on_cpu(b, run_pass_here, t->req);
	expect_nothing_sent(test);
	flush_work(&t->req->wire_work);
	KUNIT_EXPECT_GT(test, atomic_read(&t->wire_kicks), before);
	KUNIT_EXPECT_EQ(test, READ_ONCE(t->wire_cpu), a);
	work_on_cpu(a, run_pass_here, t->req);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN + 1, NULL);
	expect_nothing_sent(test);

	deliver_ack(test, t, SQ_PSN + 1);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_SEND);
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_SEND);
	post_send(t, 3, VHCA_WR_SEND, t->local, 8, 0);
	work_on_cpu(b, run_pass_here, t->req);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN + 2, NULL);
	KUNIT_EXPECT_EQ(test, READ_ONCE(t->req->req.tx_cpu), b);
}

/* Packets that stay in the kernel (a local peer) tie the QP to no CPU. */
static void engine_local_no_cpu(struct kunit *test)
{
	struct engine_test *t = test->priv;

	send_n(test, t, 2);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN, NULL);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN + 1, NULL);
	KUNIT_EXPECT_EQ(test, READ_ONCE(t->req->req.tx_cpu), -1);
}

static struct kunit_case vhca_engine_req_cases[] = {
	KUNIT_CASE(engine_seq_nak_go_back_n),
	KUNIT_CASE(engine_timeout_go_back_n),
	KUNIT_CASE(engine_rnr_retry_infinite),
	KUNIT_CASE(engine_rnr_delay_resends),
	KUNIT_CASE(engine_rnr_delays),
	KUNIT_CASE(engine_ack_during_pass),
	KUNIT_CASE(engine_ack_for_nothing),
	KUNIT_CASE(engine_db_lone_read_wakes),
	KUNIT_CASE(engine_db_pingpong_skips_window),
	KUNIT_CASE(engine_no_send_queue),
	KUNIT_CASE(engine_rts_to_rts_keeps_psn),
	KUNIT_CASE(engine_read_gap_rerequested),
	KUNIT_CASE(engine_ack_coalescing),
	KUNIT_CASE(engine_ack_per_pass),
	KUNIT_CASE(engine_wire_one_cpu),
	KUNIT_CASE(engine_local_no_cpu),
	{}
};

static struct kunit_suite vhca_engine_req_suite = {
	.name = "vhca_engine_req",
	.suite_init = engine_suite_init,
	.suite_exit = engine_suite_exit,
	.init = engine_test_init,
	.exit = engine_test_exit,
	.test_cases = vhca_engine_req_cases,
};

static struct kunit_case vhca_engine_retry_cases[] = {
	KUNIT_CASE(engine_timeout_retry_exceeded),
	KUNIT_CASE(engine_rnr_retry_counted),
	{}
};

static struct kunit_suite vhca_engine_retry_suite = {
	.name = "vhca_engine_retry",
	.suite_init = engine_suite_init,
	.suite_exit = engine_suite_exit,
	.init = engine_test_init_retry1,
	.exit = engine_test_exit,
	.test_cases = vhca_engine_retry_cases,
};

static struct kunit_case vhca_engine_wrap_cases[] = {
	KUNIT_CASE(engine_psn_wrap),
	{}
};

static struct kunit_suite vhca_engine_wrap_suite = {
	.name = "vhca_engine_wrap",
	.suite_init = engine_suite_init,
	.suite_exit = engine_suite_exit,
	.init = engine_test_init_wrap,
	.exit = engine_test_exit,
	.test_cases = vhca_engine_wrap_cases,
};
