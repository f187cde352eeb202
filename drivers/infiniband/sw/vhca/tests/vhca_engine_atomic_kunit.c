// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite vhca_engine_atomic: atomics and ATOMIC WRITE, their
 * duplicates and their refusals, on the engine.
 * Included by vhca_engine_kunit.c, whose fixture (vhca_engine_fixture.h)
 * and engine sources it uses.
 */

/* ---- atomics ---- */

/* A DMA MR with remote atomic access, and the responder QP granting it. */
static struct ib_mr *atomic_mr(struct kunit *test, struct engine_test *t)
{
	struct ib_mr *mr = vhca_get_dma_mr(&t->pd, IB_ACCESS_LOCAL_WRITE |
					   IB_ACCESS_REMOTE_ATOMIC);

	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	mr->device = &t->vdev->ibdev;
	mr->pd = &t->pd;
	mutex_lock(&t->resp->mutex);
	t->resp->attr.qp_access_flags |= IB_ACCESS_REMOTE_ATOMIC;
	mutex_unlock(&t->resp->mutex);
	return mr;
}

/* An atomic WQE: its result into the 8 (or len) bytes at result. */
static void post_atomic(struct engine_test *t, u64 wr_id, u8 opcode,
			u64 *result, u32 len, u64 remote_addr, u32 rkey,
			u64 compare_add, u64 swap)
{
	struct vhca_send_wqe *wqe = sq_slot(t, wr_id, opcode);
	struct vhca_sge *sge = (struct vhca_sge *)(wqe + 1);

	wqe->num_sge = 1;
	wqe->atomic.remote_addr = remote_addr;
	wqe->atomic.rkey = rkey;
	wqe->atomic.compare_add = compare_add;
	wqe->atomic.swap = swap;
	sge->addr = (uintptr_t)result;
	sge->length = len;
	sge->lkey = t->mr->lkey;
	sq_publish(t);
}

/* An ATOMIC WRITE WQE: value stored at remote_addr under rkey. */
static void post_atomic_write(struct engine_test *t, u64 wr_id, u64 value,
			      u64 remote_addr, u32 rkey)
{
	struct vhca_send_wqe *wqe = sq_slot(t, wr_id, VHCA_WR_ATOMIC_WRITE);

	wqe->atomic.remote_addr = remote_addr;
	wqe->atomic.rkey = rkey;
	wqe->atomic.swap = value;
	sq_publish(t);
}

/*
 * One atomic end to end: the request, executed by the responder, its
 * ATOMIC ACKNOWLEDGE carrying the value found, which lands in the
 * requester's SGE; the CQE's opcode is the atomic's.
 */
static void atomic_round(struct kunit *test, struct engine_test *t,
			 struct ib_mr *mr, u64 wr_id, u8 opcode, u32 psn,
			 u64 compare_add, u64 swap, u64 expect_orig)
{
	u64 *result = (u64 *)t->local;
	struct vhca_pkt pkt;

	*result = ~expect_orig;
	post_atomic(t, wr_id, opcode, result, sizeof(*result),
		    (uintptr_t)t->remote, mr->rkey, compare_add, swap);
	vhca_req_run(t->req);
	expect_sent(test, opcode == VHCA_WR_ATOMIC_CMP_AND_SWP ?
		    IB_OPCODE_RC_COMPARE_SWAP : IB_OPCODE_RC_FETCH_ADD, psn,
		    &pkt);
	KUNIT_EXPECT_EQ(test, pkt.reth_va, (u64)(uintptr_t)t->remote);
	KUNIT_EXPECT_EQ(test, pkt.reth_rkey, mr->rkey);
	KUNIT_EXPECT_EQ(test, pkt.atm_swap_add, opcode ==
			VHCA_WR_ATOMIC_CMP_AND_SWP ? swap : compare_add);
	/* The request as it was sent, to the responder. */
	deliver(test, t, &pkt, 0);
	expect_sent(test, IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE, psn, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.atm_orig, expect_orig);
	KUNIT_EXPECT_EQ(test, pkt.aeth_syndrome,
			vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID));
	deliver(test, t, &pkt, 0);
	expect_cqe(test, t->send_cq, wr_id, IB_WC_SUCCESS,
		   opcode == VHCA_WR_ATOMIC_CMP_AND_SWP ? IB_WC_COMP_SWAP :
		   IB_WC_FETCH_ADD);
	KUNIT_EXPECT_EQ(test, *result, expect_orig);
}

/*
 * FETCH_AND_ADD and CMP_AND_SWP, a compare that matches and one that
 * does not: the remote word and the values returned are exact.
 */
static void engine_atomic_ops(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct ib_mr *mr = atomic_mr(test, t);
	u64 *word = (u64 *)t->remote;

	*word = 5;
	atomic_round(test, t, mr, 1, VHCA_WR_ATOMIC_FETCH_AND_ADD, SQ_PSN,
		     3, 0, 5);
	KUNIT_EXPECT_EQ(test, *word, 8ULL);
	atomic_round(test, t, mr, 2, VHCA_WR_ATOMIC_CMP_AND_SWP, SQ_PSN + 1,
		     8, 0x1234567890abcdefULL, 8);
	KUNIT_EXPECT_EQ(test, *word, 0x1234567890abcdefULL);
	atomic_round(test, t, mr, 3, VHCA_WR_ATOMIC_CMP_AND_SWP, SQ_PSN + 2,
		     8, 1, 0x1234567890abcdefULL);
	KUNIT_EXPECT_EQ(test, *word, 0x1234567890abcdefULL);
	/* An add wraps as a u64 does. */
	atomic_round(test, t, mr, 4, VHCA_WR_ATOMIC_FETCH_AND_ADD, SQ_PSN + 3,
		     ~0ULL - 0x1234567890abcdefULL + 2, 0,
		     0x1234567890abcdefULL);
	KUNIT_EXPECT_EQ(test, *word, 1ULL);
	KUNIT_EXPECT_EQ(test, t->resp->resp.msn, 4U);
	expect_nothing_sent(test);
	vhca_dereg_mr(mr, NULL);
}

/*
 * A duplicated atomic request executes once: the duplicate is answered
 * from the result the responder kept, the same value, and the word is
 * added to once.  An atomic whose result is no longer kept gets nothing.
 */
static void engine_atomic_duplicate(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct ib_mr *mr = atomic_mr(test, t);
	u64 *word = (u64 *)t->remote, *result = (u64 *)t->local;
	struct vhca_pkt ack;
	struct sk_buff *req, *dup;
	u32 i;

	*word = 40;
	post_atomic(t, 1, VHCA_WR_ATOMIC_FETCH_AND_ADD, result, 8,
		    (uintptr_t)word, mr->rkey, 2, 0);
	vhca_req_run(t->req);
	req = skb_dequeue(&engine_test_sent);
	KUNIT_ASSERT_NOT_NULL(test, req);
	dup = skb_copy(req, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dup);
	receive(t, req);
	receive(t, dup);
	KUNIT_EXPECT_EQ(test, *word, 42ULL);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_DUP_REQUESTS), 1ULL);
	expect_sent(test, IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE, SQ_PSN, &ack);
	KUNIT_EXPECT_EQ(test, ack.atm_orig, 40ULL);
	expect_sent(test, IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE, SQ_PSN, &ack);
	KUNIT_EXPECT_EQ(test, ack.atm_orig, 40ULL);
	KUNIT_EXPECT_EQ(test, ack.aeth_msn, 1U);
	/* The requester completes on the first, drops the second. */
	deliver(test, t, &ack, 0);
	deliver(test, t, &ack, 0);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_FETCH_ADD);
	expect_no_cqe(test, t->send_cq);
	KUNIT_EXPECT_EQ(test, *result, 40ULL);

	/* max_dest_rd_atomic atomics later, the first's result is gone. */
	for (i = 1; i <= t->resp->attr.max_dest_rd_atomic; i++)
		atomic_round(test, t, mr, 1 + i, VHCA_WR_ATOMIC_FETCH_AND_ADD,
			     SQ_PSN + i, 1, 0, 41 + i);
	/* The first request again, as a retransmission would send it. */
	deliver(test, t, &(struct vhca_pkt){
		.opcode = IB_OPCODE_RC_FETCH_ADD, .dqpn = RESP_QPN,
		.psn = SQ_PSN, .ackreq = true, .reth_va = (uintptr_t)word,
		.reth_rkey = mr->rkey, .atm_swap_add = 2 }, 0);
	expect_nothing_sent(test);
	KUNIT_EXPECT_EQ(test, *word, 42ULL + t->resp->attr.max_dest_rd_atomic);
	vhca_dereg_mr(mr, NULL);
}

/*
 * An atomic (a FETCH_AND_ADD, or with write an ATOMIC WRITE) the responder
 * refuses: NAKed with nak, the requester's WQE completed with status, the
 * remote word untouched.
 */
static void atomic_refused(struct kunit *test, struct engine_test *t,
			   bool write, u64 remote_addr, u32 rkey,
			   enum vhca_nak_code nak, enum ib_wc_status status)
{
	u64 *word = (u64 *)t->remote, *result = (u64 *)t->local;

	*word = 7;
	if (write)
		post_atomic_write(t, 1, 9, remote_addr, rkey);
	else
		post_atomic(t, 1, VHCA_WR_ATOMIC_FETCH_AND_ADD, result, 8,
			    remote_addr, rkey, 1, 0);
	expect_refused(test, t, nak, status);
	KUNIT_EXPECT_EQ(test, *word, 7ULL);
}

/* A misaligned address is an invalid request, as the IBTA has it. */
static void engine_atomic_misaligned(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct ib_mr *mr = atomic_mr(test, t);

	atomic_refused(test, t, false, (uintptr_t)t->remote + 4, mr->rkey,
		       VHCA_NAK_INVALID_REQ, IB_WC_REM_INV_REQ_ERR);
	vhca_dereg_mr(mr, NULL);
}

/* An MR without remote atomic access: a remote access error. */
static void engine_atomic_mr_access(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct ib_mr *mr = atomic_mr(test, t);

	/* The QP grants remote atomics; t->mr, read and write only, does not. */
	atomic_refused(test, t, false, (uintptr_t)t->remote, t->mr->rkey,
		       VHCA_NAK_REM_ACCESS_ERR, IB_WC_REM_ACCESS_ERR);
	vhca_dereg_mr(mr, NULL);
}

/* A QP without remote atomic access: a remote access error. */
static void engine_atomic_qp_access(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct ib_mr *mr = atomic_mr(test, t);

	mutex_lock(&t->resp->mutex);
	t->resp->attr.qp_access_flags &= ~IB_ACCESS_REMOTE_ATOMIC;
	mutex_unlock(&t->resp->mutex);
	atomic_refused(test, t, false, (uintptr_t)t->remote, mr->rkey,
		       VHCA_NAK_REM_ACCESS_ERR, IB_WC_REM_ACCESS_ERR);
	vhca_dereg_mr(mr, NULL);
}

/*
 * The local SGEs of an atomic take exactly 8 bytes: other lengths, and
 * inline data, complete with a local length error and nothing is sent.
 */
static void engine_atomic_local_len(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct ib_mr *mr = atomic_mr(test, t);
	u64 *result = (u64 *)t->local;

	post_atomic(t, 1, VHCA_WR_ATOMIC_CMP_AND_SWP, result, 4,
		    (uintptr_t)t->remote, mr->rkey, 0, 1);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	expect_cqe(test, t->send_cq, 1, IB_WC_LOC_LEN_ERR, 0);
	vhca_dereg_mr(mr, NULL);
}

/*
 * ATOMIC WRITE end to end: one request of the 8 bytes, stored once by
 * the responder, answered by a READ response without payload that
 * completes the WQE; a duplicate of the request (the word changed since)
 * is answered again from the responder resource, not stored again.
 */
static void engine_atomic_write(struct kunit *test)
{
	struct engine_test *t = test->priv;
	u64 *word = (u64 *)t->remote, value = 0x1122334455667788ULL;
	struct sk_buff *req, *dup;
	struct vhca_pkt pkt;
	u64 sent;

	*word = 0;
	post_atomic_write(t, 1, value, (uintptr_t)word, t->mr->rkey);
	vhca_req_run(t->req);
	KUNIT_ASSERT_TRUE(test, next_sent(test, &pkt, &req));
	KUNIT_EXPECT_EQ(test, pkt.opcode, (u8)IB_OPCODE_RC_ATOMIC_WRITE);
	KUNIT_EXPECT_EQ(test, pkt.psn, (u32)SQ_PSN);
	KUNIT_EXPECT_EQ(test, pkt.reth_va, (u64)(uintptr_t)word);
	KUNIT_EXPECT_EQ(test, pkt.reth_rkey, t->mr->rkey);
	KUNIT_EXPECT_EQ(test, pkt.reth_len, 8U);
	KUNIT_ASSERT_EQ(test, pkt.paylen, 8U);
	KUNIT_ASSERT_EQ(test, skb_copy_bits(req,
					    vhca_pkt_opinfo(pkt.opcode)->hdr_len,
					    &sent, sizeof(sent)), 0);
	KUNIT_EXPECT_EQ(test, sent, value);
	dup = skb_copy(req, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dup);
	receive(t, req);
	KUNIT_EXPECT_EQ(test, *word, value);
	expect_sent(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, SQ_PSN, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.paylen, 0U);
	KUNIT_EXPECT_EQ(test, pkt.aeth_syndrome,
			vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID));
	KUNIT_EXPECT_EQ(test, pkt.aeth_msn, 1U);
	*word = 0;
	receive(t, dup);
	KUNIT_EXPECT_EQ(test, *word, 0ULL);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_DUP_REQUESTS), 1ULL);
	expect_sent(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, SQ_PSN, &pkt);
	/* The requester completes on the first answer, drops the second. */
	deliver(test, t, &pkt, 0);
	deliver(test, t, &pkt, 0);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_ATOMIC_WRITE);
	expect_no_cqe(test, t->send_cq);
	expect_nothing_sent(test);
}

/* A misaligned address is an invalid request, as for the atomics. */
static void engine_atomic_write_misaligned(struct kunit *test)
{
	struct engine_test *t = test->priv;

	atomic_refused(test, t, true, (uintptr_t)t->remote + 4, t->mr->rkey,
		       VHCA_NAK_INVALID_REQ, IB_WC_REM_INV_REQ_ERR);
}

/*
 * An ATOMIC WRITE needs remote write access, as rxe has it: an MR with
 * remote atomic access only refuses it.
 */
static void engine_atomic_write_mr_access(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct ib_mr *mr = atomic_mr(test, t);

	atomic_refused(test, t, true, (uintptr_t)t->remote, mr->rkey,
		       VHCA_NAK_REM_ACCESS_ERR, IB_WC_REM_ACCESS_ERR);
	vhca_dereg_mr(mr, NULL);
}

/* Its 8 bytes travel in the WQE: an ATOMIC WRITE with SGEs is malformed. */
static void engine_atomic_write_sges(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_send_wqe *wqe = sq_slot(t, 1, VHCA_WR_ATOMIC_WRITE);
	struct vhca_sge *sge = (struct vhca_sge *)(wqe + 1);

	wqe->num_sge = 1;
	wqe->atomic.remote_addr = (uintptr_t)t->remote;
	wqe->atomic.rkey = t->mr->rkey;
	sge->addr = (uintptr_t)t->local;
	sge->length = 8;
	sge->lkey = t->mr->lkey;
	sq_publish(t);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	expect_cqe(test, t->send_cq, 1, IB_WC_LOC_LEN_ERR, 0);
}

static struct kunit_case vhca_engine_atomic_cases[] = {
	KUNIT_CASE(engine_atomic_ops),
	KUNIT_CASE(engine_atomic_duplicate),
	KUNIT_CASE(engine_atomic_misaligned),
	KUNIT_CASE(engine_atomic_mr_access),
	KUNIT_CASE(engine_atomic_qp_access),
	KUNIT_CASE(engine_atomic_local_len),
	KUNIT_CASE(engine_atomic_write),
	KUNIT_CASE(engine_atomic_write_misaligned),
	KUNIT_CASE(engine_atomic_write_mr_access),
	KUNIT_CASE(engine_atomic_write_sges),
	{}
};

static struct kunit_suite vhca_engine_atomic_suite = {
	.name = "vhca_engine_atomic",
	.suite_init = engine_suite_init,
	.suite_exit = engine_suite_exit,
	.init = engine_test_init,
	.exit = engine_test_exit,
	.test_cases = vhca_engine_atomic_cases,
};
