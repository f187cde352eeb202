// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite vhca_engine_flush: FLUSH, its answer, its duplicates and its
 * refusals, on the engine.
 * Included by vhca_engine_kunit.c, whose fixture (vhca_engine_fixture.h)
 * and engine sources it uses.
 */

/*
 * A DMA MR with FLUSH (global) and remote write access, and the responder
 * QP granting both FLUSH rights, as rdma-core's tests set them.
 */
static struct ib_mr *flush_mr(struct kunit *test, struct engine_test *t)
{
	struct ib_mr *mr;

	if (!VHCA_FLUSH_CAP)
		kunit_skip(test, "the kernel's verbs have no FLUSH");
	mr = vhca_get_dma_mr(&t->pd, IB_ACCESS_LOCAL_WRITE |
			     IB_ACCESS_REMOTE_WRITE | IB_ACCESS_FLUSH_GLOBAL);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	mr->device = &t->vdev->ibdev;
	mr->pd = &t->pd;
	mutex_lock(&t->resp->mutex);
	t->resp->attr.qp_access_flags |= IB_ACCESS_FLUSH_GLOBAL |
					 IB_ACCESS_FLUSH_PERSISTENT;
	mutex_unlock(&t->resp->mutex);
	return mr;
}

/* A FLUSH WQE of type and level, for length bytes at remote_addr. */
static void post_flush(struct engine_test *t, u64 wr_id, u8 type, u8 level,
		       u64 remote_addr, u32 rkey, u32 length)
{
	struct vhca_send_wqe *wqe = sq_slot(t, wr_id, VHCA_WR_FLUSH);

	wqe->flush.remote_addr = remote_addr;
	wqe->flush.rkey = rkey;
	wqe->flush.type = type;
	wqe->flush.level = level;
	wqe->flush.length = length;
	sq_publish(t);
}

/*
 * FLUSH end to end: one request with its FETH and RETH, answered by a
 * READ response without payload that completes the WQE as IB_WC_FLUSH; a
 * duplicate of the request is answered again from the responder
 * resource; the requester completes once.  The MR level names the whole
 * MR, whatever the RETH says.
 */
static void engine_flush(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct ib_mr *mr = flush_mr(test, t);
	struct sk_buff *req, *dup;
	struct vhca_pkt pkt;

	post_flush(t, 1, IB_FLUSH_GLOBAL, IB_FLUSH_RANGE,
		   (uintptr_t)t->remote, mr->rkey, 4096);
	vhca_req_run(t->req);
	KUNIT_ASSERT_TRUE(test, next_sent(test, &pkt, &req));
	KUNIT_EXPECT_EQ(test, pkt.opcode, (u8)IB_OPCODE_RC_FLUSH);
	KUNIT_EXPECT_EQ(test, pkt.psn, (u32)SQ_PSN);
	KUNIT_EXPECT_EQ(test, pkt.feth_type, (u8)IB_FLUSH_GLOBAL);
	KUNIT_EXPECT_EQ(test, pkt.feth_level, (u8)IB_FLUSH_RANGE);
	KUNIT_EXPECT_EQ(test, pkt.reth_va, (u64)(uintptr_t)t->remote);
	KUNIT_EXPECT_EQ(test, pkt.reth_rkey, mr->rkey);
	KUNIT_EXPECT_EQ(test, pkt.reth_len, 4096U);
	KUNIT_EXPECT_EQ(test, pkt.paylen, 0U);
	dup = skb_copy(req, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dup);
	receive(t, req);
	expect_sent(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, SQ_PSN, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.paylen, 0U);
	KUNIT_EXPECT_EQ(test, pkt.aeth_syndrome,
			vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID));
	KUNIT_EXPECT_EQ(test, pkt.aeth_msn, 1U);
	receive(t, dup);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_DUP_REQUESTS), 1ULL);
	expect_sent(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, SQ_PSN, &pkt);
	deliver(test, t, &pkt, 0);
	deliver(test, t, &pkt, 0);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_FLUSH);
	expect_no_cqe(test, t->send_cq);

	post_flush(t, 2, IB_FLUSH_GLOBAL, IB_FLUSH_MR, 0, mr->rkey, 0);
	vhca_req_run(t->req);
	expect_sent(test, IB_OPCODE_RC_FLUSH, SQ_PSN + 1, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.feth_level, (u8)IB_FLUSH_MR);
	deliver(test, t, &pkt, 0);
	expect_sent(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, SQ_PSN + 1,
		    &pkt);
	KUNIT_EXPECT_EQ(test, pkt.aeth_msn, 2U);
	deliver(test, t, &pkt, 0);
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_FLUSH);
	expect_nothing_sent(test);
	vhca_dereg_mr(mr, NULL);
}

/* A FLUSH the responder refuses: NAKed with nak, the WQE completed so. */
static void flush_refused(struct kunit *test, struct engine_test *t, u8 type,
			  u32 rkey, enum vhca_nak_code nak,
			  enum ib_wc_status status)
{
	post_flush(t, 1, type, IB_FLUSH_RANGE, (uintptr_t)t->remote, rkey, 64);
	expect_refused(test, t, nak, status);
}

/*
 * FLUSH needs the MR's FLUSH access for its placement type: an MR with
 * remote write only refuses a global FLUSH, and no MR grants a persistent
 * one (none can be registered for it), whatever the QP grants.
 */
static void engine_flush_mr_access(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct ib_mr *mr = flush_mr(test, t);

	flush_refused(test, t, IB_FLUSH_GLOBAL, t->mr->rkey,
		      VHCA_NAK_REM_ACCESS_ERR, IB_WC_REM_ACCESS_ERR);
	vhca_dereg_mr(mr, NULL);
}

static void engine_flush_persistent(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct ib_mr *mr = flush_mr(test, t);

	flush_refused(test, t, IB_FLUSH_PERSISTENT, mr->rkey,
		      VHCA_NAK_REM_ACCESS_ERR, IB_WC_REM_ACCESS_ERR);
	vhca_dereg_mr(mr, NULL);
}

/* A QP without the global FLUSH right: a remote access error. */
static void engine_flush_qp_access(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct ib_mr *mr = flush_mr(test, t);

	mutex_lock(&t->resp->mutex);
	t->resp->attr.qp_access_flags &= ~IB_ACCESS_FLUSH_GLOBAL;
	mutex_unlock(&t->resp->mutex);
	flush_refused(test, t, IB_FLUSH_GLOBAL, mr->rkey,
		      VHCA_NAK_REM_ACCESS_ERR, IB_WC_REM_ACCESS_ERR);
	vhca_dereg_mr(mr, NULL);
}

/*
 * A malformed FLUSH WQE completes with status and sends nothing: SGEs (it
 * moves no data) are a length error, no placement type or an unknown one
 * or level an operation error.
 */
static void flush_malformed(struct kunit *test, u8 type, u8 level,
			    u8 num_sge, enum ib_wc_status status)
{
	struct engine_test *t = test->priv;
	struct ib_mr *mr = flush_mr(test, t);
	struct vhca_send_wqe *wqe = sq_slot(t, 1, VHCA_WR_FLUSH);
	struct vhca_sge *sge = (struct vhca_sge *)(wqe + 1);

	wqe->num_sge = num_sge;
	wqe->flush.remote_addr = (uintptr_t)t->remote;
	wqe->flush.rkey = mr->rkey;
	wqe->flush.type = type;
	wqe->flush.level = level;
	sge->addr = (uintptr_t)t->local;
	sge->length = 8;
	sge->lkey = t->mr->lkey;
	sq_publish(t);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	expect_cqe(test, t->send_cq, 1, status, 0);
	vhca_dereg_mr(mr, NULL);
}

static void engine_flush_sges(struct kunit *test)
{
	flush_malformed(test, IB_FLUSH_GLOBAL, IB_FLUSH_RANGE, 1,
			IB_WC_LOC_LEN_ERR);
}

static void engine_flush_no_type(struct kunit *test)
{
	flush_malformed(test, 0, IB_FLUSH_RANGE, 0, IB_WC_LOC_QP_OP_ERR);
}

static void engine_flush_bad_type(struct kunit *test)
{
	flush_malformed(test, 4, IB_FLUSH_RANGE, 0, IB_WC_LOC_QP_OP_ERR);
}

static void engine_flush_bad_level(struct kunit *test)
{
	flush_malformed(test, IB_FLUSH_GLOBAL, 2, 0, IB_WC_LOC_QP_OP_ERR);
}

/*
 * A forged FLUSH whose FETH names an unknown placement type or level is an
 * invalid request; nothing is kept for it.
 */
static void engine_flush_bad_feth(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct ib_mr *mr = flush_mr(test, t);

	deliver(test, t, &(struct vhca_pkt){
		.opcode = IB_OPCODE_RC_FLUSH, .dqpn = RESP_QPN,
		.psn = SQ_PSN, .ackreq = true, .reth_va = (uintptr_t)t->remote,
		.reth_rkey = mr->rkey, .feth_type = 8 }, 0);
	expect_nak(test, SQ_PSN, VHCA_NAK_INVALID_REQ);
	vhca_dereg_mr(mr, NULL);
}

static struct kunit_case vhca_engine_flush_cases[] = {
	KUNIT_CASE(engine_flush),
	KUNIT_CASE(engine_flush_mr_access),
	KUNIT_CASE(engine_flush_persistent),
	KUNIT_CASE(engine_flush_qp_access),
	KUNIT_CASE(engine_flush_sges),
	KUNIT_CASE(engine_flush_no_type),
	KUNIT_CASE(engine_flush_bad_type),
	KUNIT_CASE(engine_flush_bad_level),
	KUNIT_CASE(engine_flush_bad_feth),
	{}
};

static struct kunit_suite vhca_engine_flush_suite = {
	.name = "vhca_engine_flush",
	.suite_init = engine_suite_init,
	.suite_exit = engine_suite_exit,
	.init = engine_test_init,
	.exit = engine_test_exit,
	.test_cases = vhca_engine_flush_cases,
};
