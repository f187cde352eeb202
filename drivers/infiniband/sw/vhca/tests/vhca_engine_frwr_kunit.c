// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite vhca_engine_frwr: fast registration through the send queue
 * (REG_MR, LOCAL_INV, SEND with Invalidate) on the engine.
 * Included by vhca_engine_kunit.c, whose fixture (vhca_engine_fixture.h)
 * and engine sources it uses.
 */

/* ---- fast registration ---- */

#define FRWR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ)
#define FRWR_HEAD	100		/* bytes of the MR on its first page */
#define FRWR_LEN	(3 * MTU)

/*
 * A fast-registration MR of the QPs' PD mapped over the last FRWR_HEAD
 * bytes of one page and the start of another, not adjacent (virtual DMA:
 * the DMA addresses are kernel virtual ones), not yet registered; key is
 * the one its REG_MR gives it.
 */
struct frwr_mr {
	struct vhca_mr *mr;
	u8 *page[2];
	u32 key;
	u64 iova;
};

static void frwr_free_pair(void *page)
{
	__free_pages(page, 1);
}

static void frwr_setup(struct kunit *test, struct engine_test *t,
		       struct frwr_mr *f)
{
	struct scatterlist sg[2];
	struct ib_mr *ibmr;
	struct page *pg;
	int i, err;

	for (i = 0; i < 2; i++) {
		/* The first page of a pair: never next to the other's. */
		pg = alloc_pages(GFP_KERNEL | __GFP_ZERO, 1);
		KUNIT_ASSERT_NOT_NULL(test, pg);
		err = kunit_add_action_or_reset(test, frwr_free_pair, pg);
		KUNIT_ASSERT_EQ(test, err, 0);
		f->page[i] = page_address(pg);
	}
	ibmr = vhca_alloc_mr(&t->pd, IB_MR_TYPE_MEM_REG, 2);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ibmr));
	/* What ib_alloc_mr() and ib_map_mr_sg() set around the verbs. */
	ibmr->device = &t->vdev->ibdev;
	ibmr->pd = &t->pd;
	ibmr->page_size = PAGE_SIZE;
	f->mr = to_vmr(ibmr);
	sg_init_table(sg, 2);
	sg_set_buf(&sg[0], f->page[0] + PAGE_SIZE - FRWR_HEAD, FRWR_HEAD);
	sg_set_buf(&sg[1], f->page[1], FRWR_LEN - FRWR_HEAD);
	for (i = 0; i < 2; i++) {
		sg_dma_address(&sg[i]) = (uintptr_t)sg_virt(&sg[i]);
		sg_dma_len(&sg[i]) = sg[i].length;
	}
	KUNIT_ASSERT_EQ(test, vhca_map_mr_sg(ibmr, sg, 2, NULL), 2);
	f->iova = ibmr->iova;
	KUNIT_ASSERT_EQ(test, ibmr->length, (u64)FRWR_LEN);
	ib_update_fast_reg_key(ibmr, (ibmr->lkey & 0xff) + 1);
	f->key = ibmr->rkey;
}

static u8 *frwr_byte(struct frwr_mr *f, u32 off)
{
	return off < FRWR_HEAD ? f->page[0] + PAGE_SIZE - FRWR_HEAD + off :
				 f->page[1] + off - FRWR_HEAD;
}

/*
 * A send WQE into the requester's ring: one SGE (buf, len, lkey) unless
 * len is 0; key is the rkey of a WRITE or READ, the R_Key of a SEND with
 * Invalidate or a LOCAL_INV, the new key of a REG_MR (FRWR_ACCESS).
 */
static void post_frwr(struct engine_test *t, u64 wr_id, u8 opcode,
		      const void *buf, u32 len, u32 lkey, u64 remote_addr,
		      u32 key)
{
	struct vhca_send_wqe *wqe = sq_slot(t, wr_id, opcode);
	struct vhca_sge *sge = (struct vhca_sge *)(wqe + 1);

	if (opcode == VHCA_WR_REG_MR) {
		wqe->reg.key = key;
		wqe->reg.access = FRWR_ACCESS;
	} else if (opcode == VHCA_WR_SEND_WITH_INV ||
		   opcode == VHCA_WR_LOCAL_INV) {
		wqe->invalidate_rkey = key;
	} else {
		wqe->rdma.remote_addr = remote_addr;
		wqe->rdma.rkey = key;
	}
	if (len) {
		wqe->num_sge = 1;
		sge->addr = (uintptr_t)buf;
		sge->length = len;
		sge->lkey = lkey;
	}
	sq_publish(t);
}

/*
 * A fast MR set up (frwr_setup()), then REG_MR (wr_id 1, completed) and a
 * WRITE (wr_id 2) of FRWR_LEN patterned bytes through the new rkey,
 * crossing the gap between the MR's pages; the requester has run.
 */
static void frwr_reg_write(struct kunit *test, struct engine_test *t,
			   struct frwr_mr *f)
{
	int i;

	frwr_setup(test, t, f);
	for (i = 0; i < FRWR_LEN; i++)
		t->local[i] = 0x40 + i * 7;
	post_frwr(t, 1, VHCA_WR_REG_MR, NULL, 0, 0, 0, f->key);
	post_frwr(t, 2, VHCA_WR_RDMA_WRITE, t->local, FRWR_LEN, t->mr->lkey,
		  f->iova, f->key);
	vhca_req_run(t->req);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_REG_MR);
}

/* The WRITE of frwr_reg_write() landed: every byte where the list says. */
static void frwr_expect_written(struct kunit *test, struct engine_test *t,
				struct frwr_mr *f)
{
	int i;

	for (i = 0; i < FRWR_LEN; i++)
		if (*frwr_byte(f, i) != t->local[i])
			break;
	KUNIT_EXPECT_EQ_MSG(test, i, FRWR_LEN, "WRITE byte %d differs", i);
	KUNIT_EXPECT_EQ(test, f->page[1][FRWR_LEN - FRWR_HEAD], 0);
}

/*
 * REG_MR, then a WRITE and a READ through the new rkey, both crossing the
 * gap between the MR's pages: every byte lands where the page list says
 * and comes back.
 */
static void engine_frwr_write_read(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct frwr_mr f;
	int i;

	frwr_reg_write(test, t, &f);
	loop_sent(t);			/* the WRITE, to the responder */
	loop_sent(t);			/* its ACK */
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE);
	frwr_expect_written(test, t, &f);

	memset(t->local, 0, FRWR_LEN);
	post_frwr(t, 3, VHCA_WR_RDMA_READ, t->local, FRWR_LEN, t->mr->lkey,
		  f.iova, f.key);
	vhca_req_run(t->req);
	loop_sent(t);			/* the request: answered at once */
	loop_sent(t);			/* the responses */
	expect_cqe(test, t->send_cq, 3, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	for (i = 0; i < FRWR_LEN; i++)
		if (t->local[i] != *frwr_byte(&f, i))
			break;
	KUNIT_EXPECT_EQ_MSG(test, i, FRWR_LEN, "READ byte %d differs", i);
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&f.mr->ibmr, NULL), 0);
}

/*
 * A SEND with Invalidate invalidates the rkey at the responder, whose
 * receive completion says so; a WRITE through that rkey afterwards is
 * refused with a remote access NAK and lands nothing.
 */
static void engine_frwr_send_with_inv(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt pkt;
	struct sk_buff *skb;
	struct frwr_mr f;
	struct ib_wc wc;

	frwr_setup(test, t, &f);
	post_recv(t, 9, t->remote, 64);
	memset(t->local, 0x5c, 16);
	post_frwr(t, 1, VHCA_WR_REG_MR, NULL, 0, 0, 0, f.key);
	post_frwr(t, 2, VHCA_WR_SEND_WITH_INV, t->local, 16, t->mr->lkey, 0,
		  f.key);
	vhca_req_run(t->req);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_REG_MR);
	KUNIT_EXPECT_EQ(test, f.mr->state, (u8)VHCA_MR_VALID);
	KUNIT_ASSERT_TRUE(test, next_sent(test, &pkt, &skb));
	KUNIT_EXPECT_EQ(test, pkt.opcode, IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, pkt.ieth_rkey, f.key);
	KUNIT_EXPECT_EQ(test, pkt.paylen, 16U);
	receive(t, skb);

	KUNIT_ASSERT_EQ(test, vhca_poll_cq(&t->recv_cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 9ULL);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 16U);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, wc.ex.invalidate_rkey, f.key);
	KUNIT_EXPECT_EQ(test, f.mr->state, (u8)VHCA_MR_INVALID);
	loop_sent(t);			/* the ACK */
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_SEND);

	post_frwr(t, 3, VHCA_WR_RDMA_WRITE, t->local, 16, t->mr->lkey, f.iova,
		  f.key);
	vhca_req_run(t->req);
	loop_sent(t);			/* the WRITE: NAKed */
	loop_sent(t);			/* the NAK */
	expect_cqe(test, t->send_cq, 3, IB_WC_REM_ACCESS_ERR, 0);
	KUNIT_EXPECT_EQ(test, *frwr_byte(&f, 0), 0);
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&f.mr->ibmr, NULL), 0);
}

/*
 * A SEND with Invalidate naming an MR that is no fast-registration MR
 * (the DMA MR) invalidates nothing: the receive WQE fails with
 * REM_INV_REQ_ERR, the sender gets an invalid-request NAK.
 */
static void engine_frwr_send_with_inv_refused(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_pkt nak;

	post_recv(t, 9, t->remote, 64);
	post_frwr(t, 1, VHCA_WR_SEND_WITH_INV, t->local, 16, t->mr->lkey, 0,
		  t->mr->rkey);
	vhca_req_run(t->req);
	loop_sent(t);
	expect_cqe(test, t->recv_cq, 9, IB_WC_REM_INV_REQ_ERR, 0);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, SQ_PSN, &nak);
	KUNIT_EXPECT_EQ(test, nak.aeth_syndrome,
			vhca_aeth_nak(VHCA_NAK_INVALID_REQ));
	KUNIT_EXPECT_EQ(test, t->resp->state, IB_QPS_ERR);
	/* The DMA MR still works. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check(to_vmr(t->mr), t->mr->lkey, &t->pd,
					    (uintptr_t)t->local, 1, 0), 0);
}

/*
 * REG_MR and LOCAL_INV execute in send-queue order: a SEND right after
 * the REG_MR gathers through the new lkey; the LOCAL_INV waits for that
 * SEND to complete (it may have to gather again); a SEND after it is
 * refused with LOC_PROT_ERR.
 */
static void engine_frwr_local_inv(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct frwr_mr f;
	int i;

	frwr_setup(test, t, &f);
	for (i = 0; i < 16; i++)
		*frwr_byte(&f, FRWR_HEAD - 8 + i) = 0xa0 + i;
	post_recv(t, 9, t->remote, 64);
	post_frwr(t, 1, VHCA_WR_REG_MR, NULL, 0, 0, 0, f.key);
	post_frwr(t, 2, VHCA_WR_SEND, (void *)(uintptr_t)(f.iova + FRWR_HEAD - 8),
		  16, f.key, 0, 0);
	post_frwr(t, 3, VHCA_WR_LOCAL_INV, NULL, 0, 0, 0, f.key);
	vhca_req_run(t->req);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_REG_MR);
	expect_no_cqe(test, t->send_cq);
	KUNIT_EXPECT_EQ(test, f.mr->state, (u8)VHCA_MR_VALID);
	loop_sent(t);			/* the SEND */
	expect_cqe(test, t->recv_cq, 9, IB_WC_SUCCESS, IB_WC_RECV);
	for (i = 0; i < 16; i++)
		if (t->remote[i] != 0xa0 + i)
			break;
	KUNIT_EXPECT_EQ(test, i, 16);
	loop_sent(t);			/* its ACK, which kicks the requester */
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_SEND);
	KUNIT_EXPECT_EQ(test, f.mr->state, (u8)VHCA_MR_VALID);
	vhca_req_run(t->req);
	expect_cqe(test, t->send_cq, 3, IB_WC_SUCCESS, IB_WC_LOCAL_INV);
	KUNIT_EXPECT_EQ(test, f.mr->state, (u8)VHCA_MR_INVALID);
	expect_nothing_sent(test);

	post_frwr(t, 4, VHCA_WR_SEND, (void *)(uintptr_t)f.iova, 16, f.key, 0,
		  0);
	vhca_req_run(t->req);
	expect_cqe(test, t->send_cq, 4, IB_WC_LOC_PROT_ERR, 0);
	expect_nothing_sent(test);
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&f.mr->ibmr, NULL), 0);
}

/*
 * A REG_MR between SENDs executes once, in order: a go-back-N over it
 * sends the SENDs again but does not register again (which would fail);
 * the ACK of what precedes it completes it, in order.
 */
static void engine_frwr_reg_rewound(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct frwr_mr f;

	frwr_setup(test, t, &f);
	post_frwr(t, 1, VHCA_WR_SEND, t->local, 8, t->mr->lkey, 0, 0);
	post_frwr(t, 2, VHCA_WR_REG_MR, NULL, 0, 0, 0, f.key);
	post_frwr(t, 3, VHCA_WR_SEND, t->local, 8, t->mr->lkey, 0, 0);
	vhca_req_run(t->req);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN, NULL);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN + 1, NULL);
	expect_no_cqe(test, t->send_cq);
	KUNIT_EXPECT_EQ(test, f.mr->state, (u8)VHCA_MR_VALID);
	deliver_aeth(test, t, vhca_aeth_nak(VHCA_NAK_PSN_SEQ_ERR), SQ_PSN);
	vhca_req_run(t->req);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN, NULL);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN + 1, NULL);
	expect_no_cqe(test, t->send_cq);
	deliver_ack(test, t, SQ_PSN + 1);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_SEND);
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_REG_MR);
	expect_cqe(test, t->send_cq, 3, IB_WC_SUCCESS, IB_WC_SEND);
	KUNIT_EXPECT_EQ(test, t->req->state, IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&f.mr->ibmr, NULL), 0);
}

/*
 * A fenced REG_MR waits for the READ before it to complete, and the SEND
 * after it waits too; the READ's completion releases both.
 */
static void engine_frwr_reg_fenced(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_send_wqe *slot;
	struct vhca_pkt pkt;
	struct sk_buff *skb;
	struct frwr_mr f;

	frwr_setup(test, t, &f);
	post_frwr(t, 1, VHCA_WR_RDMA_READ, t->local, 16, t->mr->lkey,
		  (uintptr_t)t->remote, t->mr->rkey);
	post_frwr(t, 2, VHCA_WR_REG_MR, NULL, 0, 0, 0, f.key);
	slot = vhca_ring_slot(&t->req->sq, t->req->recs.db->head[0] - 1);
	slot->flags |= VHCA_WQE_FENCE;
	post_frwr(t, 3, VHCA_WR_SEND, t->local, 8, t->mr->lkey, 0, 0);
	vhca_req_run(t->req);
	KUNIT_ASSERT_TRUE(test, next_sent(test, &pkt, &skb));
	KUNIT_EXPECT_EQ(test, pkt.opcode, IB_OPCODE_RC_RDMA_READ_REQUEST);
	expect_nothing_sent(test);
	KUNIT_EXPECT_EQ(test, f.mr->state, (u8)VHCA_MR_INVALID);
	receive(t, skb);		/* the READ, answered */
	loop_sent(t);			/* its response */
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test, f.mr->state, (u8)VHCA_MR_INVALID);
	vhca_req_run(t->req);		/* the kick the completion asked for */
	expect_cqe(test, t->send_cq, 2, IB_WC_SUCCESS, IB_WC_REG_MR);
	KUNIT_EXPECT_EQ(test, f.mr->state, (u8)VHCA_MR_VALID);
	expect_sent(test, IB_OPCODE_RC_SEND_ONLY, SQ_PSN + 1, NULL);
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&f.mr->ibmr, NULL), 0);
}

/* A REG_MR of a VALID MR fails with MW_BIND_ERR and changes nothing. */
static void engine_frwr_reg_refused(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct frwr_mr f;

	frwr_setup(test, t, &f);
	KUNIT_ASSERT_EQ(test, vhca_mr_fast_reg(t->vdev, &t->pd, f.key,
					       FRWR_ACCESS), 0);
	post_frwr(t, 1, VHCA_WR_REG_MR, NULL, 0, 0, 0, f.key);
	vhca_req_run(t->req);
	expect_cqe(test, t->send_cq, 1, IB_WC_MW_BIND_ERR, 0);
	KUNIT_EXPECT_EQ(test, t->req->state, IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, f.mr->state, (u8)VHCA_MR_VALID);
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&f.mr->ibmr, NULL), 0);
}

/*
 * A user QP's ring is the process's: a REG_MR or LOCAL_INV written there
 * completes with LOC_QP_OP_ERR and touches no MR.
 */
static void engine_frwr_user_qp_refused(struct kunit *test)
{
	struct engine_test *t = test->priv;
	u64 malformed = counter(t, VHCA_CNT_MALFORMED_WQES);
	struct frwr_mr f;

	frwr_setup(test, t, &f);
	t->req->uctx = kunit_kzalloc(test, sizeof(*t->req->uctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->req->uctx);
	post_frwr(t, 1, VHCA_WR_REG_MR, NULL, 0, 0, 0, f.key);
	vhca_req_run(t->req);
	expect_cqe(test, t->send_cq, 1, IB_WC_LOC_QP_OP_ERR, 0);
	KUNIT_EXPECT_EQ(test, f.mr->state, (u8)VHCA_MR_INVALID);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(f.mr, f.key, &t->pd, f.iova, 1, 0),
			-EACCES);
	KUNIT_EXPECT_EQ(test, counter(t, VHCA_CNT_MALFORMED_WQES), malformed + 1);
	t->req->uctx = NULL;
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&f.mr->ibmr, NULL), 0);
}

static void engine_frwr_user_qp_inv_refused(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct frwr_mr f;

	frwr_setup(test, t, &f);
	KUNIT_ASSERT_EQ(test, vhca_mr_fast_reg(t->vdev, &t->pd, f.key,
					       FRWR_ACCESS), 0);
	t->req->uctx = kunit_kzalloc(test, sizeof(*t->req->uctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->req->uctx);
	post_frwr(t, 1, VHCA_WR_LOCAL_INV, NULL, 0, 0, 0, f.key);
	vhca_req_run(t->req);
	expect_cqe(test, t->send_cq, 1, IB_WC_LOC_QP_OP_ERR, 0);
	KUNIT_EXPECT_EQ(test, f.mr->state, (u8)VHCA_MR_VALID);
	t->req->uctx = NULL;
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&f.mr->ibmr, NULL), 0);
}

static struct kunit_case vhca_engine_frwr_cases[] = {
	KUNIT_CASE(engine_frwr_write_read),
	KUNIT_CASE(engine_frwr_send_with_inv),
	KUNIT_CASE(engine_frwr_send_with_inv_refused),
	KUNIT_CASE(engine_frwr_local_inv),
	KUNIT_CASE(engine_frwr_reg_rewound),
	KUNIT_CASE(engine_frwr_reg_fenced),
	KUNIT_CASE(engine_frwr_reg_refused),
	KUNIT_CASE(engine_frwr_user_qp_refused),
	KUNIT_CASE(engine_frwr_user_qp_inv_refused),
	{}
};

static struct kunit_suite vhca_engine_frwr_suite = {
	.name = "vhca_engine_frwr",
	.suite_init = engine_suite_init,
	.suite_exit = engine_suite_exit,
	.init = engine_test_init,
	.exit = engine_test_exit,
	.test_cases = vhca_engine_frwr_cases,
};
