// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The engine's suite of on-demand paging (included by
 * vhca_engine_kunit.c): what each role does with an ODP MR whose pages
 * are not resident.  The MR is built by hand over kernel pages, without
 * a umem: odp_queued stands for a fault under way (none is queued), and
 * the test puts pages in pages[] as a fault would, or the mark of one
 * that failed.  An implicit MR's children are built by hand the same way,
 * each with its chunk's pages[] and no umem.
 */

#define ODP_PAGES	2

struct odp_mr {
	struct vhca_mr *mr;
	u8 *buf;
};

static void odp_mr_new(struct kunit *test, struct engine_test *t,
		       struct odp_mr *o)
{
	struct vhca_mr *mr;
	struct ib_mr *ibmr;

	t->resp->attr.qp_access_flags |= IB_ACCESS_REMOTE_ATOMIC;
	o->buf = (u8 *)__get_free_pages(GFP_KERNEL | __GFP_ZERO,
					get_order(ODP_PAGES * PAGE_SIZE));
	KUNIT_ASSERT_NOT_NULL(test, o->buf);
	mr = vhca_mr_alloc(t->vdev, &t->pd, IB_ACCESS_LOCAL_WRITE |
			   IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			   IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_ON_DEMAND);
	KUNIT_ASSERT_NOT_NULL(test, mr);
	mr->pages = kcalloc(ODP_PAGES, sizeof(*mr->pages), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mr->pages);
	mr->npages = ODP_PAGES;
	mr->iova = (uintptr_t)o->buf;
	mr->length = ODP_PAGES * PAGE_SIZE;
	spin_lock_init(&mr->lock);
	/* Any non-NULL umem: the copies only test it. */
	mr->odp = (struct ib_umem_odp *)o;
	mr->odp_queued = true;
	ibmr = vhca_mr_register(t->vdev, mr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ibmr));
	ibmr->device = &t->vdev->ibdev;
	ibmr->pd = &t->pd;
	o->mr = mr;
}

static void odp_mr_free(struct odp_mr *o)
{
	vhca_dereg_mr(&o->mr->ibmr, NULL);
	free_pages((unsigned long)o->buf, get_order(ODP_PAGES * PAGE_SIZE));
}

/* Page i of the MR brought in (page), or a fault of it failed. */
static void odp_set(struct odp_mr *o, int i, struct page *page)
{
	unsigned long flags;

	spin_lock_irqsave(&o->mr->lock, flags);
	o->mr->pages[i] = page;
	spin_unlock_irqrestore(&o->mr->lock, flags);
}

static void odp_in(struct odp_mr *o, int i)
{
	odp_set(o, i, virt_to_page(o->buf + i * PAGE_SIZE));
}

/*
 * A WRITE into a page not resident: an RNR NAK, no byte placed, the PSN
 * still expected; the same packet after the fault lands and is ACKed.
 */
static void engine_odp_write_rnr(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct odp_mr o;
	struct vhca_pkt ack, pkt = {
		.opcode = IB_OPCODE_RC_RDMA_WRITE_ONLY,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.paylen = MTU,
		.ackreq = true,
	};
	int i;

	odp_mr_new(test, t, &o);
	pkt.reth_va = (uintptr_t)o.buf + PAGE_SIZE + 16;
	pkt.reth_rkey = o.mr->ibmr.rkey;
	pkt.reth_len = MTU;
	odp_in(&o, 0);
	deliver(test, t, &pkt, 0x33);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &ack);
	KUNIT_EXPECT_EQ(test, ack.aeth_syndrome, vhca_aeth_rnr_nak(1));
	KUNIT_EXPECT_EQ(test, o.buf[PAGE_SIZE + 16], 0);
	KUNIT_EXPECT_EQ(test, t->resp->resp.psn, (u32)RQ_PSN);
	odp_in(&o, 1);
	deliver(test, t, &pkt, 0x33);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &ack);
	KUNIT_EXPECT_EQ(test, ack.aeth_syndrome & VHCA_AETH_TYPE_MASK,
			VHCA_AETH_ACK);
	for (i = 0; i < MTU && o.buf[PAGE_SIZE + 16 + i] == 0x33; i++)
		;
	KUNIT_EXPECT_EQ(test, i, MTU);
	KUNIT_EXPECT_EQ(test, o.buf[PAGE_SIZE + 15], 0);
	KUNIT_EXPECT_EQ(test, o.buf[PAGE_SIZE + 16 + MTU], 0);
	odp_mr_free(&o);
}

/*
 * A SEND whose receive buffer is not resident: an RNR NAK, and its
 * receive WQE, taken, waits for the packet sent again, which completes
 * it: one WQE taken, one completion.
 */
static void engine_odp_send_rnr_keeps_wqe(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_qp *qp = t->resp;
	struct vhca_pkt ack, pkt = {
		.opcode = IB_OPCODE_RC_SEND_ONLY,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.paylen = MTU,
		.ackreq = true,
	};
	struct vhca_recv_wqe *wqe;
	struct vhca_sge *sge;
	struct odp_mr o;
	struct ib_wc wc;

	odp_mr_new(test, t, &o);
	wqe = vhca_ring_slot(&qp->rq, qp->recs.db->head[1]);
	memset(wqe, 0, qp->rq.stride);
	wqe->wr_id = 9;
	wqe->num_sge = 1;
	sge = (struct vhca_sge *)(wqe + 1);
	sge->addr = (uintptr_t)o.buf + PAGE_SIZE - MTU / 2;
	sge->length = MTU;
	sge->lkey = o.mr->ibmr.lkey;
	/* Published as the provider does: the WQE before the head. */
	smp_store_release(&qp->recs.db->head[1], qp->recs.db->head[1] + 1);

	odp_in(&o, 0);
	deliver(test, t, &pkt, 0x44);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &ack);
	KUNIT_EXPECT_EQ(test, ack.aeth_syndrome, vhca_aeth_rnr_nak(1));
	expect_no_cqe(test, t->recv_cq);
	odp_in(&o, 1);
	deliver(test, t, &pkt, 0x44);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &ack);
	KUNIT_EXPECT_EQ(test, ack.aeth_syndrome & VHCA_AETH_TYPE_MASK,
			VHCA_AETH_ACK);
	KUNIT_ASSERT_EQ(test, vhca_poll_cq(&t->recv_cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 9ULL);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, wc.byte_len, (u32)MTU);
	expect_no_cqe(test, t->recv_cq);
	KUNIT_EXPECT_EQ(test, qp->rq_tail, 1U);
	KUNIT_EXPECT_EQ(test, o.buf[PAGE_SIZE - MTU / 2], 0x44);
	KUNIT_EXPECT_EQ(test, o.buf[PAGE_SIZE + MTU / 2 - 1], 0x44);
	KUNIT_EXPECT_EQ(test, o.buf[PAGE_SIZE + MTU / 2], 0);
	odp_mr_free(&o);
}

/*
 * A fault that failed (the range not mapped): the next access is a
 * remote access error, nothing placed, and the mark is gone.
 */
static void engine_odp_failed_page(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct odp_mr o;
	struct vhca_pkt nak, pkt = {
		.opcode = IB_OPCODE_RC_RDMA_WRITE_ONLY,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.paylen = 8,
		.ackreq = true,
		.reth_len = 8,
	};

	odp_mr_new(test, t, &o);
	pkt.reth_va = (uintptr_t)o.buf;
	pkt.reth_rkey = o.mr->ibmr.rkey;
	odp_set(&o, 0, VHCA_ODP_FAILED);
	deliver(test, t, &pkt, 0x55);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &nak);
	KUNIT_EXPECT_EQ(test, nak.aeth_syndrome,
			vhca_aeth_nak(VHCA_NAK_REM_ACCESS_ERR));
	KUNIT_EXPECT_EQ(test, o.buf[0], 0);
	KUNIT_EXPECT_NULL(test, o.mr->pages[0]);
	odp_mr_free(&o);
}

/*
 * An atomic on a word not resident: an RNR NAK, the word untouched;
 * after the fault it runs once.
 */
static void engine_odp_atomic_rnr(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct odp_mr o;
	struct vhca_pkt ack, pkt = {
		.opcode = IB_OPCODE_RC_FETCH_ADD,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.ackreq = true,
		.atm_swap_add = 3,
	};
	u64 *word;

	odp_mr_new(test, t, &o);
	word = (u64 *)(o.buf + PAGE_SIZE + 64);
	*word = 10;
	pkt.reth_va = (uintptr_t)word;
	pkt.reth_rkey = o.mr->ibmr.rkey;
	deliver(test, t, &pkt, 0);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &ack);
	KUNIT_EXPECT_EQ(test, ack.aeth_syndrome, vhca_aeth_rnr_nak(1));
	KUNIT_EXPECT_EQ(test, *word, 10ULL);
	odp_in(&o, 1);
	deliver(test, t, &pkt, 0);
	expect_sent(test, IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE, RQ_PSN, &ack);
	KUNIT_EXPECT_EQ(test, ack.atm_orig, 10ULL);
	KUNIT_EXPECT_EQ(test, *word, 13ULL);
	odp_mr_free(&o);
}

#if VHCA_ATOMIC_WRITE_CAP
/* An ATOMIC WRITE goes as the atomics: an RNR NAK, then stored once. */
static void engine_odp_atomic_write_rnr(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct odp_mr o;
	struct vhca_pkt ack, pkt = {
		.opcode = IB_OPCODE_RC_ATOMIC_WRITE,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.ackreq = true,
		.paylen = 8,
		.reth_len = 8,
	};
	u64 *word;

	odp_mr_new(test, t, &o);
	word = (u64 *)(o.buf + PAGE_SIZE + 8);
	pkt.reth_va = (uintptr_t)word;
	pkt.reth_rkey = o.mr->ibmr.rkey;
	deliver(test, t, &pkt, 0x77);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &ack);
	KUNIT_EXPECT_EQ(test, ack.aeth_syndrome, vhca_aeth_rnr_nak(1));
	KUNIT_EXPECT_EQ(test, *word, 0ULL);
	odp_in(&o, 1);
	deliver(test, t, &pkt, 0x77);
	expect_sent(test, IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, RQ_PSN, NULL);
	KUNIT_EXPECT_EQ(test, *word, 0x7777777777777777ULL);
	odp_mr_free(&o);
}
#endif

/*
 * The requester's own memory not resident: nothing is sent and no pass
 * runs until the wait ends; then the WRITE goes, its bytes from the page.
 */
static void engine_odp_requester_waits(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_send_wqe *wqe;
	struct vhca_sge *sge;
	struct vhca_pkt pkt;
	struct sk_buff *skb;
	struct odp_mr o;

	odp_mr_new(test, t, &o);
	memset(o.buf + PAGE_SIZE, 0x66, MTU);
	wqe = sq_slot(t, 4, VHCA_WR_RDMA_WRITE);
	wqe->num_sge = 1;
	wqe->rdma.remote_addr = (uintptr_t)t->remote;
	wqe->rdma.rkey = t->mr->rkey;
	sge = (struct vhca_sge *)(wqe + 1);
	sge->addr = (uintptr_t)o.buf + PAGE_SIZE;
	sge->length = MTU;
	sge->lkey = o.mr->ibmr.lkey;
	sq_publish(t);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	/* The wait's end finds the page still out: it waits again. */
	fire_rnr(t->req);
	kicks(t, t->req);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	odp_in(&o, 1);
	fire_rnr(t->req);
	kicks(t, t->req);
	vhca_req_run(t->req);
	KUNIT_ASSERT_TRUE(test, next_sent(test, &pkt, &skb));
	KUNIT_EXPECT_EQ(test, pkt.opcode, IB_OPCODE_RC_RDMA_WRITE_ONLY);
	KUNIT_EXPECT_EQ(test, pkt.psn, (u32)SQ_PSN);
	KUNIT_EXPECT_EQ(test, pkt.paylen, (u32)MTU);
	receive(t, skb);
	KUNIT_EXPECT_EQ(test, t->remote[0], 0x66);
	KUNIT_EXPECT_EQ(test, t->remote[MTU - 1], 0x66);
	odp_mr_free(&o);
}

/*
 * An implicit MR over the address space, its chunks' children built by
 * hand (none yet): two pages of kernel memory, o->buf, stand for the last
 * page of chunk 1 and the first of chunk 2, at ODP_IMPLICIT_VA.
 */
#define ODP_IMPLICIT_VA		(2 * VHCA_ODP_CHUNK - PAGE_SIZE)

static void odp_implicit_new(struct kunit *test, struct engine_test *t,
			     struct odp_mr *o)
{
	struct vhca_mr *mr;
	struct ib_mr *ibmr;

	t->resp->attr.qp_access_flags |= IB_ACCESS_REMOTE_ATOMIC;
	o->buf = (u8 *)__get_free_pages(GFP_KERNEL | __GFP_ZERO,
					get_order(ODP_PAGES * PAGE_SIZE));
	KUNIT_ASSERT_NOT_NULL(test, o->buf);
	mr = vhca_mr_alloc(t->vdev, &t->pd, IB_ACCESS_LOCAL_WRITE |
			   IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			   IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_ON_DEMAND);
	KUNIT_ASSERT_NOT_NULL(test, mr);
	mr->length = BIT_ULL(47);
	spin_lock_init(&mr->lock);
	xa_init(&mr->odp_children);
	/* Any non-NULL umem: the copies only test it. */
	mr->odp = (struct ib_umem_odp *)o;
	mr->odp_implicit = true;
	mr->odp_queued = true;
	ibmr = vhca_mr_register(t->vdev, mr);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ibmr));
	ibmr->device = &t->vdev->ibdev;
	ibmr->pd = &t->pd;
	o->mr = mr;
}

/* The child of chunk index, made as a fault would (nothing resident). */
static struct vhca_odp_child *odp_child_new(struct kunit *test,
					    struct odp_mr *o,
					    unsigned long index)
{
	struct vhca_odp_child *child;

	child = kvzalloc(struct_size(child, pages, VHCA_ODP_CHUNK_PAGES),
			 GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, child);
	child->mr = o->mr;
	KUNIT_ASSERT_EQ(test, xa_err(xa_store(&o->mr->odp_children, index,
					      child, GFP_KERNEL)), 0);
	return child;
}

/* The hand-built children taken back before the MR goes. */
static void odp_implicit_free(struct odp_mr *o)
{
	struct vhca_odp_child *child;
	unsigned long index;

	xa_for_each(&o->mr->odp_children, index, child) {
		xa_erase(&o->mr->odp_children, index);
		kvfree(child);
	}
	o->mr->odp_implicit = false;
	odp_mr_free(o);
}

/*
 * A WRITE across two chunks of an implicit MR: RNR NAKed, nothing placed,
 * while neither chunk has a child, and while one has its page in and
 * the other has no child; it lands across the boundary, every byte and
 * none around it, once both pages are in.
 */
static void engine_odp_implicit_write(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_odp_child *lo, *hi;
	struct odp_mr o;
	struct vhca_pkt ack, pkt = {
		.opcode = IB_OPCODE_RC_RDMA_WRITE_ONLY,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.paylen = MTU,
		.ackreq = true,
		.reth_len = MTU,
		.reth_va = ODP_IMPLICIT_VA + PAGE_SIZE - MTU / 2,
	};
	unsigned long flags;
	int i;

	odp_implicit_new(test, t, &o);
	pkt.reth_rkey = o.mr->ibmr.rkey;
	deliver(test, t, &pkt, 0x5a);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &ack);
	KUNIT_EXPECT_EQ(test, ack.aeth_syndrome, vhca_aeth_rnr_nak(1));
	KUNIT_EXPECT_EQ(test, t->resp->resp.psn, (u32)RQ_PSN);

	lo = odp_child_new(test, &o, 1);
	spin_lock_irqsave(&o.mr->lock, flags);
	lo->pages[VHCA_ODP_CHUNK_PAGES - 1] = virt_to_page(o.buf);
	spin_unlock_irqrestore(&o.mr->lock, flags);
	deliver(test, t, &pkt, 0x5a);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &ack);
	KUNIT_EXPECT_EQ(test, ack.aeth_syndrome, vhca_aeth_rnr_nak(1));
	KUNIT_EXPECT_EQ(test, o.buf[PAGE_SIZE - MTU / 2], 0);

	hi = odp_child_new(test, &o, 2);
	spin_lock_irqsave(&o.mr->lock, flags);
	hi->pages[0] = virt_to_page(o.buf + PAGE_SIZE);
	spin_unlock_irqrestore(&o.mr->lock, flags);
	deliver(test, t, &pkt, 0x5a);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &ack);
	KUNIT_EXPECT_EQ(test, ack.aeth_syndrome & VHCA_AETH_TYPE_MASK,
			VHCA_AETH_ACK);
	for (i = 0; i < MTU && o.buf[PAGE_SIZE - MTU / 2 + i] == 0x5a; i++)
		;
	KUNIT_EXPECT_EQ(test, i, MTU);
	KUNIT_EXPECT_EQ(test, o.buf[PAGE_SIZE - MTU / 2 - 1], 0);
	KUNIT_EXPECT_EQ(test, o.buf[PAGE_SIZE + MTU / 2], 0);
	odp_implicit_free(&o);
}

/*
 * A chunk whose child could not be made: the next access to it is a
 * remote access error, nothing placed, and the mark is gone.
 */
static void engine_odp_implicit_failed_chunk(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct odp_mr o;
	struct vhca_pkt nak, pkt = {
		.opcode = IB_OPCODE_RC_FETCH_ADD,
		.dqpn = RESP_QPN,
		.psn = RQ_PSN,
		.ackreq = true,
		.atm_swap_add = 3,
		.reth_va = 3 * VHCA_ODP_CHUNK + 64,
	};
	unsigned long flags;

	odp_implicit_new(test, t, &o);
	pkt.reth_rkey = o.mr->ibmr.rkey;
	spin_lock_irqsave(&o.mr->lock, flags);
	o.mr->odp_failed = 3 + 1;
	spin_unlock_irqrestore(&o.mr->lock, flags);
	deliver(test, t, &pkt, 0);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, RQ_PSN, &nak);
	KUNIT_EXPECT_EQ(test, nak.aeth_syndrome,
			vhca_aeth_nak(VHCA_NAK_REM_ACCESS_ERR));
	KUNIT_EXPECT_EQ(test, o.mr->odp_failed, 0UL);
	odp_implicit_free(&o);
}

/* The end of a case that made the fixture's device the peer's. */
static void engine_odp_direct_off(void *unused)
{
	engine_test_direct_dev = NULL;
}

/*
 * A READ placed directly (suite vhca_engine_direct's setting) from two
 * pages of the peer's ODP MR, the second not resident: the first pass
 * of its responses, in the receive path, places no byte and leaves the
 * READ to the work item; once the page is in, the work item places it
 * all, every byte from the MR.
 */
static void engine_odp_direct_read(struct kunit *test)
{
	struct engine_test *t = test->priv;
	struct vhca_send_wqe *wqe;
	struct vhca_sge *sge;
	struct odp_mr o;
	u8 *dst;
	int i;

	dst = kunit_kzalloc(test, 2 * MTU, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							engine_odp_direct_off,
							NULL), 0);
	engine_test_direct_dev = t->vdev;
	odp_mr_new(test, t, &o);
	for (i = 0; i < ODP_PAGES * PAGE_SIZE; i++)
		o.buf[i] = 0x80 + i * 3 + (i >> 8);
	wqe = sq_slot(t, 1, VHCA_WR_RDMA_READ);
	wqe->num_sge = 1;
	wqe->rdma.remote_addr = (uintptr_t)o.buf + PAGE_SIZE - MTU;
	wqe->rdma.rkey = o.mr->ibmr.rkey;
	sge = (struct vhca_sge *)(wqe + 1);
	sge->addr = (uintptr_t)dst;
	sge->length = 2 * MTU;
	sge->lkey = t->mr->lkey;
	sq_publish(t);
	odp_in(&o, 0);
	vhca_req_run(t->req);
	expect_nothing_sent(test);
	expect_no_cqe(test, t->send_cq);
	KUNIT_EXPECT_EQ(test, t->req->comp.psn, (u32)SQ_PSN);
	for (i = 0; i < 2 * MTU && !dst[i]; i++)
		;
	KUNIT_EXPECT_EQ(test, i, 2 * MTU);
	KUNIT_EXPECT_NOT_NULL(test, vhca_resp_rd_oldest(t->resp));
	odp_in(&o, 1);
	respond(t);
	expect_nothing_sent(test);
	expect_cqe(test, t->send_cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(test, memcmp(dst, o.buf + PAGE_SIZE - MTU, 2 * MTU),
			0);
	odp_mr_free(&o);
}

static struct kunit_case vhca_engine_odp_cases[] = {
	KUNIT_CASE(engine_odp_write_rnr),
	KUNIT_CASE(engine_odp_send_rnr_keeps_wqe),
	KUNIT_CASE(engine_odp_failed_page),
	KUNIT_CASE(engine_odp_atomic_rnr),
#if VHCA_ATOMIC_WRITE_CAP
	KUNIT_CASE(engine_odp_atomic_write_rnr),
#endif
	KUNIT_CASE(engine_odp_requester_waits),
	KUNIT_CASE(engine_odp_implicit_write),
	KUNIT_CASE(engine_odp_implicit_failed_chunk),
	KUNIT_CASE(engine_odp_direct_read),
	{}
};

static struct kunit_suite vhca_engine_odp_suite = {
	.name = "vhca_engine_odp",
	.suite_init = engine_suite_init,
	.suite_exit = engine_suite_exit,
	.init = engine_test_init,
	.exit = engine_test_exit,
	.test_cases = vhca_engine_odp_cases,
};
