// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite vhca_engine_xrc: XRC on the engine of vhca_engine_kunit.c,
 * which includes this file (its fixture, helpers and the driver sources it
 * includes are this suite's too).  The requester QP becomes an XRC_INI QP,
 * the responder an XRC_TGT QP without PD, receive CQ or receive queue, in
 * an XRC domain with two XRC SRQs (a CQ each); a third SRQ is of another
 * domain.  What the requester sends is handed to the responder and back.
 */

struct xrc_test {
	struct ib_xrcd xrcd, other_xrcd;
	struct vhca_cq *cq[3];
	struct vhca_srq *srq[3];	/* 2: of other_xrcd */
};

static void xrc_destroy_srq(void *srq)
{
	vhca_destroy_srq(&((struct vhca_srq *)srq)->ibsrq, NULL);
}

static void xrc_destroy_cq(void *cq)
{
	vhca_destroy_cq(&((struct vhca_cq *)cq)->ibcq, NULL);
}

static struct vhca_srq *xrc_new_srq(struct kunit *test, struct engine_test *t,
				    struct ib_xrcd *xrcd, struct vhca_cq *cq)
{
	struct ib_srq_init_attr init = {
		.srq_type = IB_SRQT_XRC,
		.attr = { .max_wr = 4, .max_sge = 1 },
		.ext = { .cq = &cq->ibcq, .xrc.xrcd = xrcd },
	};
	struct vhca_srq *srq = kunit_kzalloc(test, sizeof(*srq), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, srq);
	srq->ibsrq.device = &t->vdev->ibdev;
	srq->ibsrq.pd = &t->pd;
	srq->ibsrq.srq_type = IB_SRQT_XRC;
	/* What ib_create_srq_user() sets before the driver's verb. */
	srq->ibsrq.ext.cq = &cq->ibcq;
	srq->ibsrq.ext.xrc.xrcd = xrcd;
	KUNIT_ASSERT_EQ(test, vhca_create_srq(&srq->ibsrq, &init, NULL), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, xrc_destroy_srq,
							srq), 0);
	KUNIT_EXPECT_NE(test, srq->xrc_srqn, 0U);
	KUNIT_EXPECT_EQ(test, srq->xrc_srqn & ~VHCA_PKT_QPN_MASK, 0U);
	KUNIT_EXPECT_EQ(test, srq->ibsrq.ext.xrc.srq_num, srq->xrc_srqn);
	return srq;
}

/* The engine test's QPs as XRC_INI and XRC_TGT; the SRQs. */
static void xrc_setup(struct kunit *test, struct xrc_test *x)
{
	struct engine_test *t = test->priv;
	struct vhca_qp *ini = t->req, *tgt = t->resp;
	int i;

	memset(x, 0, sizeof(*x));
	xa_init(&t->vdev->xsrq_xa);
	x->xrcd.device = &t->vdev->ibdev;
	x->other_xrcd.device = &t->vdev->ibdev;
	for (i = 0; i < 3; i++) {
		x->cq[i] = new_cq(test, t);
		KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
								xrc_destroy_cq,
								x->cq[i]), 0);
		x->srq[i] = xrc_new_srq(test, t, i < 2 ? &x->xrcd :
					&x->other_xrcd, x->cq[i]);
	}
	ini->ibqp.qp_type = IB_QPT_XRC_INI;
	ini->ibqp.recv_cq = NULL;
	ini->rq.count = 0;
	ini->max_recv_sge = 0;
	tgt->ibqp.qp_type = IB_QPT_XRC_TGT;
	tgt->ibqp.pd = NULL;
	tgt->ibqp.send_cq = NULL;
	tgt->ibqp.recv_cq = NULL;
	tgt->rq.count = 0;
	tgt->xrcd = &x->xrcd;
}

/* A receive WQE of len bytes at buf on srq, posted as a kernel ULP would. */
static void xrc_post_srq(struct kunit *test, struct engine_test *t,
			 struct vhca_srq *srq, u64 wr_id, void *buf, u32 len)
{
	struct ib_sge sge = { .addr = (uintptr_t)buf, .length = len,
			      .lkey = t->mr->lkey };
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				 .num_sge = 1 };
	const struct ib_recv_wr *bad;

	KUNIT_ASSERT_EQ(test, vhca_post_srq_recv(&srq->ibsrq, &wr, &bad), 0);
}

/* A send WQE of the XRC_INI QP to XRC SRQ srqn, sent (not delivered). */
static void xrc_send(struct engine_test *t, u64 wr_id, u8 opcode, u32 len,
		     u64 remote_addr, u32 srqn)
{
	struct vhca_send_wqe *wqe = sq_slot(t, wr_id, opcode);
	struct vhca_sge *sge = (struct vhca_sge *)(wqe + 1);

	wqe->num_sge = 1;
	wqe->xrc_srqn = srqn;
	wqe->imm_data = cpu_to_be32(0x5a5a0001);
	wqe->rdma.remote_addr = remote_addr;
	wqe->rdma.rkey = t->mr->rkey;
	sge->addr = (uintptr_t)t->local;
	sge->length = len;
	sge->lkey = t->mr->lkey;
	sq_publish(t);
	vhca_req_run(t->req);
}

/* The first packet sent, parsed, left in the queue. */
static void xrc_peek(struct kunit *test, struct vhca_pkt *pkt)
{
	struct sk_buff *skb = skb_peek(&engine_test_sent);

	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_ASSERT_EQ(test, vhca_pkt_parse(skb->data, skb->len, pkt), 0);
}

/*
 * A SEND of two packets and a WRITE with immediate to the second SRQ: XRC
 * opcodes carrying its number, XRC ACKs; the SEND's bytes in its receive
 * WQE, the WRITE's in memory, both completions on that SRQ's CQ, none on
 * the other's.
 */
static void engine_xrc_send_write(struct kunit *test)
{
	struct engine_test *t = test->priv;
	u32 len = MTU + 44;
	struct vhca_pkt pkt;
	struct xrc_test x;

	xrc_setup(test, &x);
	fill_pattern(t->local, len, 0x31);
	xrc_post_srq(test, t, x.srq[1], 7, t->remote, BUF_LEN);
	xrc_send(t, 1, VHCA_WR_SEND, len, 0, x.srq[1]->xrc_srqn);
	xrc_peek(test, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.opcode,
			VHCA_OPCODE_XRC | IB_OPCODE_SEND_FIRST);
	KUNIT_EXPECT_EQ(test, pkt.xrc_srqn, x.srq[1]->xrc_srqn);
	loop_sent(t);
	xrc_peek(test, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.opcode,
			VHCA_OPCODE_XRC | IB_OPCODE_ACKNOWLEDGE);
	loop_sent(t);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_SEND);
	expect_cqe(test, x.cq[1], 7, IB_WC_SUCCESS, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, pattern_differs(t->remote, len, 0x31), 0U);
	expect_no_cqe(test, x.cq[0]);

	fill_pattern(t->local, len, 0x52);
	memset(t->remote, 0, BUF_LEN);
	xrc_post_srq(test, t, x.srq[1], 8, NULL, 0);
	xrc_send(t, 2, VHCA_WR_RDMA_WRITE_WITH_IMM, len,
		 (uintptr_t)t->remote + 8, x.srq[1]->xrc_srqn);
	loop_sent(t);
	loop_sent(t);
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	expect_cqe(test, x.cq[1], 8, IB_WC_SUCCESS, IB_WC_RECV_RDMA_WITH_IMM);
	KUNIT_EXPECT_EQ(test, pattern_differs(t->remote + 8, len, 0x52), 0U);
	KUNIT_EXPECT_EQ(test, t->remote[7], 0);
	KUNIT_EXPECT_EQ(test, t->remote[8 + len], 0);
	expect_no_cqe(test, x.cq[0]);
	KUNIT_EXPECT_EQ(test, t->resp->state, IB_QPS_RTS);
}

/*
 * A READ of three packets through the second SRQ: the request carries its
 * number, the responses come back as XRC READ RESPONSEs, checked through
 * that SRQ's PD (the TGT QP has none), their bytes land, nothing
 * completes on the target's CQs.
 */
static void engine_xrc_read(struct kunit *test)
{
	struct engine_test *t = test->priv;
	u32 len = 2 * MTU + 100;
	struct vhca_pkt pkt;
	struct xrc_test x;

	xrc_setup(test, &x);
	fill_pattern(t->remote, len, 0x63);
	memset(t->local, 0, BUF_LEN);
	xrc_send(t, 1, VHCA_WR_RDMA_READ, len, (uintptr_t)t->remote,
		 x.srq[1]->xrc_srqn);
	xrc_peek(test, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.opcode,
			VHCA_OPCODE_XRC | IB_OPCODE_RDMA_READ_REQUEST);
	KUNIT_EXPECT_EQ(test, pkt.xrc_srqn, x.srq[1]->xrc_srqn);
	loop_sent(t);
	respond(t);
	xrc_peek(test, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.opcode,
			VHCA_OPCODE_XRC | IB_OPCODE_RDMA_READ_RESPONSE_FIRST);
	loop_sent(t);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test, pattern_differs(t->local, len, 0x63), 0U);
	KUNIT_EXPECT_EQ(test, t->local[len], 0);
	expect_no_cqe(test, x.cq[0]);
	expect_no_cqe(test, x.cq[1]);
}

/*
 * An XRC SRQ destroyed while a READ through it has responses to go: the
 * first pass (in the receive path) is sent, the rest is refused with a
 * NAK remote access error, never built through a PD nothing holds.
 */
static void engine_xrc_read_srq_gone(struct kunit *test)
{
	struct engine_test *t = test->priv;
	u32 len = BIG_READ_PKTS * MTU, n = 0;
	u8 *big = kunit_kzalloc(test, len, GFP_KERNEL);
	struct vhca_pkt pkt = {
		.opcode = VHCA_OPCODE_XRC | IB_OPCODE_RDMA_READ_REQUEST,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.ackreq = true,
		.reth_len = len,
	};
	struct xrc_test x;

	KUNIT_ASSERT_NOT_NULL(test, big);
	xrc_setup(test, &x);
	pkt.xrc_srqn = x.srq[0]->xrc_srqn;
	pkt.reth_va = (uintptr_t)big;
	pkt.reth_rkey = t->mr->rkey;
	deliver(test, t, &pkt, 0);
	KUNIT_EXPECT_EQ(test, skb_queue_len(&engine_test_sent),
			VHCA_RESP_READ_BUDGET);
	xa_erase_irq(&t->vdev->xsrq_xa, x.srq[0]->xrc_srqn);
	respond(t);
	while (next_sent(test, &pkt, NULL) &&
	       pkt.opcode != (VHCA_OPCODE_XRC | IB_OPCODE_ACKNOWLEDGE))
		n++;
	KUNIT_EXPECT_EQ(test, n, VHCA_RESP_READ_BUDGET);
	KUNIT_EXPECT_EQ(test, pkt.opcode,
			VHCA_OPCODE_XRC | IB_OPCODE_ACKNOWLEDGE);
	KUNIT_EXPECT_EQ(test, pkt.aeth_syndrome,
			vhca_aeth_nak(VHCA_NAK_REM_ACCESS_ERR));
	KUNIT_EXPECT_EQ(test, pkt.psn, (u32)RQ_PSN + VHCA_RESP_READ_BUDGET);
	expect_nothing_sent(test);
}

/* destroy_srq of an XRC SRQ, run by a work item. */
struct xrc_destroyer {
	struct work_struct work;
	struct vhca_srq *srq;
	struct completion done;
};

static void xrc_destroy_work(struct work_struct *work)
{
	struct xrc_destroyer *d = container_of(work, struct xrc_destroyer,
					       work);

	vhca_destroy_srq(&d->srq->ibsrq, NULL);
	complete(&d->done);
}

/*
 * An XRC SRQ destroyed while a receiver holds it (as the responder does
 * for a request): no request finds it from the start of destroy_srq, which
 * returns only after the receiver's put; until then the receiver still
 * takes a receive WQE from it (KASAN sees a ring freed early).
 */
static void engine_xrc_destroy_waits(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_srq *srq, *held, *found;
	struct vhca_sge sge[VHCA_MAX_SGE];
	struct xrc_destroyer d;
	struct vhca_recv_wqe wqe;
	struct xrc_test x;
	int i;

	xrc_setup(test, &x);
	srq = x.srq[0];
	xrc_post_srq(test, t, srq, 21, t->remote, 64);
	held = vhca_xsrq_get(t->vdev, srq->xrc_srqn, &x.xrcd);
	KUNIT_ASSERT_PTR_EQ(test, held, srq);
	/* The work item destroys it, not the end of the test. */
	kunit_remove_action(test, xrc_destroy_srq, srq);
	d.srq = srq;
	init_completion(&d.done);
	INIT_WORK_ONSTACK(&d.work, xrc_destroy_work);
	queue_work(system_unbound_wq, &d.work);
	for (i = 0; i < 500 && xa_load(&t->vdev->xsrq_xa, srq->xrc_srqn); i++)
		msleep(20);
	KUNIT_EXPECT_NULL(test, xa_load(&t->vdev->xsrq_xa, srq->xrc_srqn));
	found = vhca_xsrq_get(t->vdev, srq->xrc_srqn, &x.xrcd);
	KUNIT_EXPECT_NULL(test, found);
	vhca_xsrq_put(found);
	KUNIT_EXPECT_FALSE(test, completion_done(&d.done));
	KUNIT_EXPECT_EQ(test, vhca_srq_take(held, &wqe, sge), 0);
	KUNIT_EXPECT_EQ(test, wqe.wr_id, 21ULL);
	vhca_xsrq_put(held);
	KUNIT_EXPECT_TRUE(test, wait_for_completion_timeout(&d.done, 10 * HZ));
	flush_work(&d.work);
	destroy_work_on_stack(&d.work);
}

/*
 * A SEND naming srqn is NAKed as an invalid request: the requester's WQE
 * completes with REM_INV_REQ_ERR, the XRC_TGT QP fails, nothing lands.
 */
static void xrc_refused(struct kunit *test, struct xrc_test *x, u32 srqn)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt pkt;
	int i;

	for (i = 0; i < 3; i++)
		xrc_post_srq(test, t, x->srq[i], 10 + i, t->remote, 64);
	xrc_send(t, 1, VHCA_WR_SEND, 16, 0, srqn);
	loop_sent(t);
	xrc_peek(test, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.opcode,
			VHCA_OPCODE_XRC | IB_OPCODE_ACKNOWLEDGE);
	KUNIT_EXPECT_EQ(test, pkt.aeth_syndrome,
			vhca_aeth_nak(VHCA_NAK_INVALID_REQ));
	loop_sent(t);
	expect_cqe(test, t->send_cq, 1, IB_WC_REM_INV_REQ_ERR, IB_WC_SEND);
	KUNIT_EXPECT_EQ(test, t->resp->state, IB_QPS_ERR);
	for (i = 0; i < 3; i++)
		expect_no_cqe(test, x->cq[i]);
	KUNIT_EXPECT_EQ(test, t->remote[0], 0);
}

static void engine_xrc_unknown_srqn(struct kunit *test)
{
	struct xrc_test x;
	u32 srqn;

	xrc_setup(test, &x);
	/* A number none of the three has. */
	srqn = x.srq[0]->xrc_srqn;
	while (!srqn || srqn == x.srq[0]->xrc_srqn ||
	       srqn == x.srq[1]->xrc_srqn || srqn == x.srq[2]->xrc_srqn)
		srqn = (srqn + 1) & VHCA_PKT_QPN_MASK;
	xrc_refused(test, &x, srqn);
}

static void engine_xrc_other_domain(struct kunit *test)
{
	struct xrc_test x;

	xrc_setup(test, &x);
	xrc_refused(test, &x, x.srq[2]->xrc_srqn);
}

/*
 * An XRC_TGT QP receives into XRC SRQs only: an RC SEND (another
 * transport) is dropped, an XRC response too; a READ naming no SRQ of its
 * domain is NAKed.
 */
static void engine_xrc_tgt_srq_only(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt nak, pkt = {
		.opcode = IB_OPCODE_RC_SEND_ONLY,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.paylen = 16,
		.ackreq = true,
	};
	u64 malformed = counter(t, VHCA_CNT_RX_MALFORMED);
	struct xrc_test x;

	xrc_setup(test, &x);
	xrc_post_srq(test, t, x.srq[0], 1, t->remote, 64);
	deliver(test, t, &pkt, 0x11);
	pkt.opcode = VHCA_OPCODE_XRC | IB_OPCODE_ACKNOWLEDGE;
	pkt.paylen = 0;
	deliver(test, t, &pkt, 0);
	expect_nothing_sent(test);
	expect_no_cqe(test, x.cq[0]);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_RX_MALFORMED), malformed + 2);
	KUNIT_EXPECT_EQ(test, t->remote[0], 0);

	pkt.opcode = VHCA_OPCODE_XRC | IB_OPCODE_RDMA_READ_REQUEST;
	pkt.xrc_srqn = x.srq[2]->xrc_srqn;
	pkt.reth_va = (uintptr_t)t->remote;
	pkt.reth_rkey = t->mr->rkey;
	pkt.reth_len = 8;
	deliver(test, t, &pkt, 0);
	expect_sent(test, VHCA_OPCODE_XRC | IB_OPCODE_ACKNOWLEDGE, RQ_PSN,
		    &nak);
	KUNIT_EXPECT_EQ(test, nak.aeth_syndrome,
			vhca_aeth_nak(VHCA_NAK_INVALID_REQ));
	expect_no_cqe(test, x.cq[0]);
}

/*
 * An XRC_INI QP has no receive queue: a receive head its provider writes
 * anyway gives the engine no WQE, and a request sent to it is dropped.
 * (Its post_recv, the kernel's and the provider's, refuses with EINVAL:
 * rc/xrc checks the provider's.)
 */
static void engine_xrc_ini_no_recv(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt pkt = {
		.opcode = VHCA_OPCODE_XRC | IB_OPCODE_SEND_ONLY,
		.dqpn = REQ_QPN,
		.psn = RQ_PSN,
		.paylen = 8,
	};
	struct xrc_test x;
	bool bad;

	xrc_setup(test, &x);
	/* As a provider publishes a receive head (the engine acquires it). */
	smp_store_release(&t->req->recs.db->head[1], 1);
	KUNIT_EXPECT_FALSE(test, vhca_wqe_take_recv(t->req, &t->req->resp.msg,
						    &bad));
	KUNIT_EXPECT_FALSE(test, bad);
	pkt.xrc_srqn = x.srq[0]->xrc_srqn;
	deliver(test, t, &pkt, 0x22);
	expect_nothing_sent(test);
	expect_no_cqe(test, t->send_cq);
	KUNIT_EXPECT_EQ(test, t->req->state, IB_QPS_RTS);
}

static struct kunit_case vhca_engine_xrc_cases[] = {
	KUNIT_CASE(engine_xrc_send_write),
	KUNIT_CASE(engine_xrc_read),
	KUNIT_CASE(engine_xrc_read_srq_gone),
	KUNIT_CASE(engine_xrc_destroy_waits),
	KUNIT_CASE(engine_xrc_unknown_srqn),
	KUNIT_CASE(engine_xrc_other_domain),
	KUNIT_CASE(engine_xrc_tgt_srq_only),
	KUNIT_CASE(engine_xrc_ini_no_recv),
	{}
};

static struct kunit_suite vhca_engine_xrc_suite = {
	.name = "vhca_engine_xrc",
	.suite_init = engine_suite_init,
	.suite_exit = engine_suite_exit,
	.init = engine_test_init,
	.exit = engine_test_exit,
	.test_cases = vhca_engine_xrc_cases,
};
