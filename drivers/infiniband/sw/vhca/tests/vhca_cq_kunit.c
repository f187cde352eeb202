// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite of vhca's CQs and SRQs: ring sizing, CQE to ib_wc conversion,
 * completion timestamps, overflow arithmetic with hostile consumer indices
 * (wrap-around included), and kernel CQs/SRQs driven through their verbs on
 * a bare vhca_dev.  Rings and records come from the fakes below (plain
 * kernel memory), so no platform device, user context or mmap is involved.
 */
#include <kunit/test.h>
#include <linux/slab.h>

#define vhca_ring_alloc vhca_cq_test_ring_alloc
#define vhca_ring_free vhca_cq_test_ring_free
#define vhca_recs_alloc vhca_cq_test_recs_alloc
#define vhca_recs_free vhca_cq_test_recs_free
#define vhca_rings_release vhca_cq_test_rings_release
#define vhca_recs_reach vhca_cq_test_recs_reach
#define vhca_recs_offsets vhca_cq_test_recs_offsets

#include "../vhca_cq.c"
#include "../vhca_srq.c"

int vhca_cq_test_ring_alloc(struct vhca_dev *vdev, struct vhca_ucontext *uctx,
			    struct vhca_ring *ring, u32 count, u32 stride,
			    bool writable)
{
	ring->count = count;
	ring->stride = stride;
	ring->size = (size_t)count * stride;
	ring->mmap = NULL;
	ring->buf = kvzalloc(ring->size, GFP_KERNEL);
	return ring->buf ? 0 : -ENOMEM;
}

void vhca_cq_test_ring_free(struct vhca_dev *vdev, struct vhca_ring *ring)
{
	kvfree(ring->buf);
	memset(ring, 0, sizeof(*ring));
}

/* Kernel objects only: the ring goes and the count with it. */
void vhca_cq_test_rings_release(struct vhca_dev *vdev, atomic_t *count,
				struct vhca_ring *ring, struct vhca_ring *ring2)
{
	vhca_cq_test_ring_free(vdev, ring);
	atomic_dec(count);
}

int vhca_cq_test_recs_alloc(struct vhca_dev *vdev, struct vhca_ucontext *uctx,
			    struct vhca_recs *recs, u32 reach)
{
	recs->db = kzalloc(sizeof(*recs->db) + sizeof(*recs->st), GFP_KERNEL);
	if (!recs->db)
		return -ENOMEM;
	recs->st = (struct vhca_status_rec *)(recs->db + 1);
	recs->index = 0;
	return 0;
}

/* The tests' CQs and SRQs are kernel objects: records of their own. */
u32 vhca_cq_test_recs_reach(struct ib_udata *udata, size_t resp_end)
{
	return 0;
}

void vhca_cq_test_recs_offsets(const struct vhca_recs *recs, u64 *db_offset,
			       u64 *status_offset)
{
	*db_offset = 0;
	*status_offset = 0;
}

void vhca_cq_test_recs_free(struct vhca_dev *vdev, struct vhca_ucontext *uctx,
			    struct vhca_recs *recs)
{
	kfree(recs->db);
	memset(recs, 0, sizeof(*recs));
}

struct vhca_cq_test {
	struct vhca_dev *vdev;
	struct vhca_qp *qp;		/* in qp_xa as QP 1 */
	int comp_events;
	int cq_err_events;
	int srq_limit_events;
};

/* Stands in for a user context: only compared against NULL. */
#define FAKE_UCTX ((struct vhca_ucontext *)1)

static int vhca_cq_test_init(struct kunit *test)
{
	struct vhca_cq_test *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->vdev = kunit_kzalloc(test, sizeof(*t->vdev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->vdev);
	t->qp = kunit_kzalloc(test, sizeof(*t->qp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->qp);
	t->vdev->ibdev.num_comp_vectors = 1;
	xa_init_flags(&t->vdev->qp_xa, XA_FLAGS_ALLOC);
	t->qp->handle = vhca_handle_alloc(t->qp, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->qp->handle);
	KUNIT_ASSERT_EQ(test, xa_insert(&t->vdev->qp_xa, 1, t->qp->handle,
					GFP_KERNEL), 0);
	test->priv = t;
	return 0;
}

static void vhca_cq_test_exit(struct kunit *test)
{
	struct vhca_cq_test *t = test->priv;

	vhca_handle_remove(&t->vdev->ibdev, "QP", &t->vdev->qp_xa, 1,
			   t->qp->handle);
	xa_destroy(&t->vdev->qp_xa);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->vdev->n_cq), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->vdev->n_srq), 0);
}

static void comp_handler(struct ib_cq *ibcq, void *ctx)
{
	struct vhca_cq_test *t = ctx;

	t->comp_events++;
}

static void cq_event_handler(struct ib_event *ev, void *ctx)
{
	struct vhca_cq_test *t = ctx;

	if (ev->event == IB_EVENT_CQ_ERR)
		t->cq_err_events++;
}

static void srq_event_handler(struct ib_event *ev, void *ctx)
{
	struct vhca_cq_test *t = ctx;

	if (ev->event == IB_EVENT_SRQ_LIMIT_REACHED)
		t->srq_limit_events++;
}

/* A kernel CQ of at least cqe entries, with the test's handlers. */
static struct vhca_cq *new_cq(struct kunit *test, int cqe)
{
	struct vhca_cq_test *t = test->priv;
	struct ib_cq_init_attr attr = { .cqe = cqe };
	struct vhca_cq *cq;

	cq = kunit_kzalloc(test, sizeof(*cq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cq);
	cq->ibcq.device = &t->vdev->ibdev;
	KUNIT_ASSERT_EQ(test, vhca_create_cq(&cq->ibcq, &attr, NULL), 0);
	cq->ibcq.comp_handler = comp_handler;
	cq->ibcq.event_handler = cq_event_handler;
	cq->ibcq.cq_context = t;
	return cq;
}

static int post(struct vhca_cq *cq, u64 wr_id, u32 qp_num, bool solicited)
{
	struct vhca_cqe cqe = {
		.wr_id = wr_id,
		.opcode = IB_WC_RECV,
		.qp_num = qp_num,
	};

	return vhca_cq_post(cq, &cqe, solicited);
}

static void vhca_cq_ring_count(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vhca_cq_count(1), 1U);
	KUNIT_EXPECT_EQ(test, vhca_cq_count(2), 2U);
	KUNIT_EXPECT_EQ(test, vhca_cq_count(3), 4U);
	KUNIT_EXPECT_EQ(test, vhca_cq_count(640), 1024U);
	KUNIT_EXPECT_EQ(test, vhca_cq_count(1024), 1024U);
	KUNIT_EXPECT_EQ(test, vhca_cq_count(1025), 2048U);
	KUNIT_EXPECT_EQ(test, vhca_cq_count(VHCA_MAX_CQE), (u32)VHCA_MAX_CQE);
	KUNIT_EXPECT_EQ(test, sizeof(struct vhca_cqe), (size_t)32);
}

/* Any consumer index outside [head - count, head] means a full ring. */
static void vhca_cq_room_hostile(struct kunit *test)
{
	struct vhca_ring r = { .count = 8 };

	KUNIT_EXPECT_TRUE(test, vhca_cq_has_room(&r, 0, 0));
	KUNIT_EXPECT_TRUE(test, vhca_cq_has_room(&r, 7, 0));
	KUNIT_EXPECT_FALSE(test, vhca_cq_has_room(&r, 8, 0));
	KUNIT_EXPECT_FALSE(test, vhca_cq_has_room(&r, 9, 0));
	/* Wrap-around of the free-running indices. */
	KUNIT_EXPECT_TRUE(test, vhca_cq_has_room(&r, 3, 0xfffffffd));
	KUNIT_EXPECT_TRUE(test, vhca_cq_has_room(&r, 4, 0xfffffffd));
	KUNIT_EXPECT_FALSE(test, vhca_cq_has_room(&r, 5, 0xfffffffd));
	KUNIT_EXPECT_TRUE(test, vhca_cq_has_room(&r, 0, 0));
	/* A consumer ahead of the producer. */
	KUNIT_EXPECT_FALSE(test, vhca_cq_has_room(&r, 0, 1));
	KUNIT_EXPECT_FALSE(test, vhca_cq_has_room(&r, 100, 200));
	KUNIT_EXPECT_FALSE(test, vhca_cq_has_room(&r, 0xfffffffe, 2));
	KUNIT_EXPECT_TRUE(test, vhca_cq_has_room(&r, 5, U32_MAX));
	KUNIT_EXPECT_FALSE(test, vhca_cq_has_room(&r, 5, 0xfffffffc));
	KUNIT_EXPECT_FALSE(test, vhca_cq_has_room(&r, 5, 0x80000005));
}

static void vhca_cq_wc_conversion(struct kunit *test)
{
	struct vhca_cqe cqe = {
		.wr_id = 0x1122334455667788ULL,
		.status = IB_WC_REM_ACCESS_ERR,
		.opcode = IB_WC_RECV_RDMA_WITH_IMM,
		.flags = VHCA_CQE_WITH_IMM,
		.sl = 3,
		.qp_num = 9,
		.byte_len = 4096,
		.imm_data = cpu_to_be32(0xdeadbeef),
		.src_qp = 0x123456,
		.pkey_index = 0,
		.vendor_err = 7,
	};
	struct ib_wc wc;

	memset(&wc, 0xff, sizeof(wc));
	vhca_cqe_to_wc(&cqe, &wc);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 0x1122334455667788ULL);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, wc.opcode, IB_WC_RECV_RDMA_WITH_IMM);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 4096U);
	KUNIT_EXPECT_EQ(test, wc.vendor_err, 7U);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0xdeadbeefU);
	KUNIT_EXPECT_EQ(test, wc.wc_flags, (int)IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, wc.src_qp, 0x123456U);
	KUNIT_EXPECT_EQ(test, wc.sl, 3);
	KUNIT_EXPECT_EQ(test, wc.slid, 0);
	KUNIT_EXPECT_EQ(test, wc.port_num, 1);
	KUNIT_EXPECT_EQ(test, wc.pkey_index, 0);
	KUNIT_EXPECT_NULL(test, wc.qp);

	/* A UD receive: GRH and network header type, no immediate. */
	cqe.flags = VHCA_CQE_GRH;
	cqe.opcode = IB_WC_RECV;
	cqe.status = IB_WC_SUCCESS;
	cqe.network_hdr_type = RDMA_NETWORK_IPV4;
	vhca_cqe_to_wc(&cqe, &wc);
	KUNIT_EXPECT_EQ(test, wc.wc_flags,
			(int)(IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE));
	KUNIT_EXPECT_EQ(test, wc.network_hdr_type, RDMA_NETWORK_IPV4);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0U);
}

static void vhca_cq_create_refusals(struct kunit *test)
{
	struct vhca_cq_test *t = test->priv;
	struct ib_cq_init_attr attr = { .cqe = 1 };
	struct vhca_cq *cq;

	cq = kunit_kzalloc(test, sizeof(*cq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cq);
	cq->ibcq.device = &t->vdev->ibdev;

	attr.cqe = 0;
	KUNIT_EXPECT_EQ(test, vhca_create_cq(&cq->ibcq, &attr, NULL), -EINVAL);
	attr.cqe = VHCA_MAX_CQE + 1;
	KUNIT_EXPECT_EQ(test, vhca_create_cq(&cq->ibcq, &attr, NULL), -EINVAL);
	attr.cqe = 1;
	attr.flags = IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
	KUNIT_EXPECT_EQ(test, vhca_create_cq(&cq->ibcq, &attr, NULL),
			-EOPNOTSUPP);
	attr.flags = 0;
	attr.comp_vector = 1;
	KUNIT_EXPECT_EQ(test, vhca_create_cq(&cq->ibcq, &attr, NULL), -EINVAL);
	attr.comp_vector = 0;
	/* VHCA_MAX_CQ and the MAD layer's own: full. */
	atomic_set(&t->vdev->n_cq, VHCA_MAX_CQ + VHCA_MAD_OBJECTS);
	KUNIT_EXPECT_EQ(test, vhca_create_cq(&cq->ibcq, &attr, NULL), -ENOMEM);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->vdev->n_cq),
			VHCA_MAX_CQ + VHCA_MAD_OBJECTS);
	/* VHCA_MAX_CQ less one with the MAD layer's: room for one more. */
	atomic_set(&t->vdev->n_cq, VHCA_MAX_CQ - 1 + VHCA_MAD_OBJECTS);
	KUNIT_ASSERT_EQ(test, vhca_create_cq(&cq->ibcq, &attr, NULL), 0);
	KUNIT_EXPECT_EQ(test, vhca_destroy_cq(&cq->ibcq, NULL), 0);
	atomic_set(&t->vdev->n_cq, 0);

	attr.cqe = VHCA_MAX_CQE;
	KUNIT_ASSERT_EQ(test, vhca_create_cq(&cq->ibcq, &attr, NULL), 0);
	KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, VHCA_MAX_CQE);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->vdev->n_cq), 1);
	KUNIT_EXPECT_EQ(test, vhca_destroy_cq(&cq->ibcq, NULL), 0);
}

/* Fill, overflow once (one event, status flag), then poll in order. */
static void vhca_cq_post_poll_overflow(struct kunit *test)
{
	struct vhca_cq_test *t = test->priv;
	struct vhca_cq *cq = new_cq(test, 3);
	struct ib_wc wc[8];
	int i;

	KUNIT_ASSERT_EQ(test, cq->ibcq.cqe, 4);
	KUNIT_EXPECT_EQ(test, vhca_poll_cq(&cq->ibcq, 8, wc), 0);
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, post(cq, 100 + i, i % 2 ? 1 : 7, false), 0);
	KUNIT_EXPECT_EQ(test, cq->recs.st->tail[0], 4U);
	KUNIT_EXPECT_EQ(test, post(cq, 104, 1, false), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, t->cq_err_events, 1);
	KUNIT_EXPECT_TRUE(test, cq->recs.st->flags & VHCA_STATUS_CQ_OVERFLOW);
	KUNIT_EXPECT_EQ(test, post(cq, 105, 1, false), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, t->cq_err_events, 1);
	KUNIT_EXPECT_EQ(test, t->comp_events, 0);

	KUNIT_EXPECT_EQ(test, vhca_poll_cq(&cq->ibcq, 3, wc), 3);
	KUNIT_EXPECT_EQ(test, vhca_poll_cq(&cq->ibcq, 8, wc + 3), 1);
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_EQ(test, wc[i].wr_id, 100ULL + i);
		/* QP 1 is in qp_xa, QP 7 is not. */
		KUNIT_EXPECT_PTR_EQ(test, wc[i].qp,
				    i % 2 ? &t->qp->ibqp : NULL);
	}
	KUNIT_EXPECT_EQ(test, vhca_poll_cq(&cq->ibcq, 8, wc), 0);
	/* In error for good: the lost CQE cannot be made up for. */
	KUNIT_EXPECT_EQ(test, post(cq, 106, 1, false), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, vhca_destroy_cq(&cq->ibcq, NULL), 0);
}

/* Indices wrap around 2^32 without a hiccup. */
static void vhca_cq_wrap(struct kunit *test)
{
	struct vhca_cq *cq = new_cq(test, 4);
	struct ib_wc wc;
	int i, n = 0;

	cq->head = 0xfffffffa;
	cq->tail = 0xfffffffa;
	for (i = 0; i < 40; i++) {
		KUNIT_EXPECT_EQ(test, post(cq, i, 1, false), 0);
		if (i % 3 == 2) {
			while (vhca_poll_cq(&cq->ibcq, 1, &wc) == 1)
				KUNIT_EXPECT_EQ(test, wc.wr_id, (u64)n++);
		}
	}
	while (vhca_poll_cq(&cq->ibcq, 1, &wc) == 1)
		KUNIT_EXPECT_EQ(test, wc.wr_id, (u64)n++);
	KUNIT_EXPECT_EQ(test, n, 40);
	KUNIT_EXPECT_EQ(test, cq->head, 0xfffffffaU + 40);
	KUNIT_EXPECT_EQ(test, cq->recs.st->tail[0], cq->head);
	KUNIT_EXPECT_FALSE(test, cq->error);
	KUNIT_EXPECT_EQ(test, vhca_destroy_cq(&cq->ibcq, NULL), 0);
}

static void vhca_cq_notify(struct kunit *test)
{
	struct vhca_cq_test *t = test->priv;
	struct vhca_cq *cq = new_cq(test, 16);
	struct ib_wc wc[16];

	KUNIT_EXPECT_EQ(test, post(cq, 1, 1, true), 0);
	KUNIT_EXPECT_EQ(test, t->comp_events, 0);	/* not armed */

	KUNIT_EXPECT_EQ(test, vhca_req_notify_cq(&cq->ibcq, IB_CQ_NEXT_COMP |
						 IB_CQ_REPORT_MISSED_EVENTS), 1);
	KUNIT_EXPECT_EQ(test, post(cq, 2, 1, false), 0);
	KUNIT_EXPECT_EQ(test, t->comp_events, 1);
	KUNIT_EXPECT_EQ(test, post(cq, 3, 1, false), 0);
	KUNIT_EXPECT_EQ(test, t->comp_events, 1);	/* once per arm */

	KUNIT_EXPECT_EQ(test, vhca_req_notify_cq(&cq->ibcq, IB_CQ_SOLICITED), 0);
	KUNIT_EXPECT_EQ(test, post(cq, 4, 1, false), 0);
	KUNIT_EXPECT_EQ(test, t->comp_events, 1);
	KUNIT_EXPECT_EQ(test, post(cq, 5, 1, true), 0);
	KUNIT_EXPECT_EQ(test, t->comp_events, 2);

	/* NEXT_COMP is not narrowed by a later SOLICITED request. */
	vhca_req_notify_cq(&cq->ibcq, IB_CQ_NEXT_COMP);
	vhca_req_notify_cq(&cq->ibcq, IB_CQ_SOLICITED);
	KUNIT_EXPECT_EQ(test, post(cq, 6, 1, false), 0);
	KUNIT_EXPECT_EQ(test, t->comp_events, 3);

	KUNIT_EXPECT_EQ(test, vhca_poll_cq(&cq->ibcq, 16, wc), 6);
	KUNIT_EXPECT_EQ(test, vhca_req_notify_cq(&cq->ibcq, IB_CQ_NEXT_COMP |
						 IB_CQ_REPORT_MISSED_EVENTS), 0);
	/* No handler (yet): armed, nothing called, nothing crashes. */
	cq->ibcq.comp_handler = NULL;
	KUNIT_EXPECT_EQ(test, post(cq, 7, 1, false), 0);
	KUNIT_EXPECT_EQ(test, t->comp_events, 3);
	KUNIT_EXPECT_EQ(test, vhca_destroy_cq(&cq->ibcq, NULL), 0);
}

/* A user CQ: the consumer index comes from the doorbell record. */
static void vhca_cq_user_consumer(struct kunit *test)
{
	struct vhca_cq_test *t = test->priv;
	struct vhca_cq *cq = new_cq(test, 4);
	/* Consumer indices relative to the producer's. */
	const u32 hostile[] = { 1, 5, 0x80000000, U32_MAX - 4 };
	int i;

	cq->uctx = FAKE_UCTX;
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, post(cq, i, 1, false), 0);
	KUNIT_EXPECT_EQ(test, post(cq, 4, 1, false), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, t->cq_err_events, 1);
	cq->error = false;

	/* The provider consumed 3: room for 3 more, then full. */
	WRITE_ONCE(cq->recs.db->head[0], 3);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, post(cq, i, 1, false), 0);
	KUNIT_EXPECT_EQ(test, post(cq, 9, 1, false), -EOVERFLOW);
	KUNIT_EXPECT_EQ(test, cq->head, 7U);

	/* Indices ahead of the producer, or far behind it, mean full. */
	for (i = 0; i < ARRAY_SIZE(hostile); i++) {
		cq->error = false;
		WRITE_ONCE(cq->recs.db->head[0], cq->head + hostile[i]);
		KUNIT_EXPECT_EQ(test, post(cq, 9, 1, false), -EOVERFLOW);
		KUNIT_EXPECT_EQ(test, cq->head, 7U);
	}

	/* REPORT_MISSED_EVENTS compares with the provider's index too. */
	WRITE_ONCE(cq->recs.db->head[0], 7);
	KUNIT_EXPECT_EQ(test, vhca_req_notify_cq(&cq->ibcq, IB_CQ_NEXT_COMP |
						 IB_CQ_REPORT_MISSED_EVENTS), 0);
	WRITE_ONCE(cq->recs.db->head[0], 6);
	KUNIT_EXPECT_EQ(test, vhca_req_notify_cq(&cq->ibcq, IB_CQ_NEXT_COMP |
						 IB_CQ_REPORT_MISSED_EVENTS), 1);
	KUNIT_EXPECT_EQ(test, vhca_destroy_cq(&cq->ibcq, NULL), 0);
}

/* Resize keeps outstanding CQEs, in order, and refuses to drop any. */
static void vhca_cq_resize(struct kunit *test)
{
	struct vhca_cq_test *t = test->priv;
	struct vhca_cq *cq = new_cq(test, 4);
	struct ib_wc wc;
	int i, n;

	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, post(cq, i, 1, false), 0);
	KUNIT_EXPECT_EQ(test, vhca_poll_cq(&cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, vhca_resize_cq(&cq->ibcq, 2, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, 4);
	KUNIT_EXPECT_EQ(test, vhca_resize_cq(&cq->ibcq, 0, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_resize_cq(&cq->ibcq, VHCA_MAX_CQE + 1, NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_resize_cq(&cq->ibcq, 3, NULL), 0);
	KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, 4);
	KUNIT_EXPECT_EQ(test, vhca_resize_cq(&cq->ibcq, 17, NULL), 0);
	KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, 32);
	for (i = 4; i < 33; i++)
		KUNIT_EXPECT_EQ(test, post(cq, i, 1, false), 0);
	KUNIT_EXPECT_EQ(test, post(cq, 33, 1, false), -EOVERFLOW);
	for (n = 0; vhca_poll_cq(&cq->ibcq, 1, &wc) == 1; n++) {
		KUNIT_EXPECT_EQ(test, wc.wr_id, (u64)n + 1);
		KUNIT_EXPECT_PTR_EQ(test, wc.qp, &t->qp->ibqp);
	}
	KUNIT_EXPECT_EQ(test, n, 32);
	KUNIT_EXPECT_EQ(test, vhca_resize_cq(&cq->ibcq, 1, NULL), 0);
	KUNIT_EXPECT_EQ(test, cq->ibcq.cqe, 1);
	KUNIT_EXPECT_EQ(test, vhca_destroy_cq(&cq->ibcq, NULL), 0);
}

/*
 * A CQ with timestamps, as create_cq makes it for a user CQ that asks for
 * them (here with a time namespace 5 s ahead): every CQE carries the times
 * it was written at, in ring order, and a resize keeps them.
 */
static void vhca_cq_timestamps(struct kunit *test)
{
	struct vhca_cq *cq = new_cq(test, 4);
	const s64 offset = 5 * NSEC_PER_SEC;
	struct vhca_cqe_ts saved[3];
	const struct vhca_cqe_ts *ts;
	u64 raw0, raw1, real0, real1, prev = 0;
	struct ib_wc wc;
	int i;

	vhca_ring_free(NULL, &cq->ring);
	cq->timestamps = true;
	cq->cqe_size = sizeof(*ts);
	cq->clock_offset = offset;
	KUNIT_ASSERT_EQ(test, vhca_ring_alloc(NULL, NULL, &cq->ring, 4,
					      cq->cqe_size, false), 0);
	KUNIT_EXPECT_EQ(test, sizeof(*ts), (size_t)64);

	raw0 = ktime_get_raw_ns();
	real0 = ktime_get_real_ns();
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, post(cq, 10 + i, 1, false), 0);
	raw1 = ktime_get_raw_ns();
	real1 = ktime_get_real_ns();
	for (i = 0; i < 3; i++) {
		ts = vhca_ring_slot(&cq->ring, i);
		saved[i] = *ts;
		KUNIT_EXPECT_EQ(test, ts->cqe.wr_id, 10ULL + i);
		KUNIT_EXPECT_GE(test, ts->core_clock, raw0 + offset);
		KUNIT_EXPECT_LE(test, ts->core_clock, raw1 + offset);
		KUNIT_EXPECT_GE(test, ts->core_clock, prev);
		KUNIT_EXPECT_GE(test, ts->wallclock_ns, real0);
		KUNIT_EXPECT_LE(test, ts->wallclock_ns, real1);
		prev = ts->core_clock;
	}

	KUNIT_EXPECT_EQ(test, vhca_poll_cq(&cq->ibcq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(test, wc.wr_id, 10ULL);
	KUNIT_EXPECT_EQ(test, vhca_resize_cq(&cq->ibcq, 9, NULL), 0);
	KUNIT_EXPECT_EQ(test, cq->ring.stride, (u32)sizeof(*ts));
	for (i = 1; i < 3; i++)
		KUNIT_EXPECT_EQ(test, memcmp(vhca_ring_slot(&cq->ring, i),
					     &saved[i], sizeof(saved[i])), 0);
	for (i = 1; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, vhca_poll_cq(&cq->ibcq, 1, &wc), 1);
		KUNIT_EXPECT_EQ(test, wc.wr_id, 10ULL + i);
	}
	KUNIT_EXPECT_EQ(test, vhca_destroy_cq(&cq->ibcq, NULL), 0);
}

static struct vhca_srq *new_srq(struct kunit *test, u32 max_wr, u32 max_sge)
{
	struct vhca_cq_test *t = test->priv;
	struct ib_srq_init_attr init = {
		.srq_type = IB_SRQT_BASIC,
		.attr = { .max_wr = max_wr, .max_sge = max_sge },
	};
	struct vhca_srq *srq;

	srq = kunit_kzalloc(test, sizeof(*srq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, srq);
	srq->ibsrq.device = &t->vdev->ibdev;
	KUNIT_ASSERT_EQ(test, vhca_create_srq(&srq->ibsrq, &init, NULL), 0);
	KUNIT_EXPECT_EQ(test, init.attr.max_wr, srq->ring.count);
	KUNIT_EXPECT_EQ(test, init.attr.max_sge, srq->max_sge);
	srq->ibsrq.event_handler = srq_event_handler;
	srq->ibsrq.srq_context = t;
	return srq;
}

static void vhca_srq_sizes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vhca_srq_stride(1), 32U);
	KUNIT_EXPECT_EQ(test, vhca_srq_stride(2), 64U);
	KUNIT_EXPECT_EQ(test, vhca_srq_stride(3), 64U);
	KUNIT_EXPECT_EQ(test, vhca_srq_stride(4), 128U);
	KUNIT_EXPECT_EQ(test, vhca_srq_stride(VHCA_MAX_SGE), 512U);
	KUNIT_EXPECT_EQ(test, vhca_srq_max_sge(32), 1U);
	KUNIT_EXPECT_EQ(test, vhca_srq_max_sge(64), 3U);
	KUNIT_EXPECT_EQ(test, vhca_srq_max_sge(128), 7U);
	KUNIT_EXPECT_EQ(test, vhca_srq_max_sge(512), (u32)VHCA_MAX_SGE);
}

static void vhca_srq_create_refusals(struct kunit *test)
{
	struct vhca_cq_test *t = test->priv;
	struct ib_srq_init_attr init = {
		.srq_type = IB_SRQT_BASIC,
		.attr = { .max_wr = 5, .max_sge = 2 },
	};
	struct ib_srq_attr attr;
	struct vhca_srq *srq;

	srq = kunit_kzalloc(test, sizeof(*srq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, srq);
	srq->ibsrq.device = &t->vdev->ibdev;

	init.srq_type = IB_SRQT_TM;
	KUNIT_EXPECT_EQ(test, vhca_create_srq(&srq->ibsrq, &init, NULL),
			-EOPNOTSUPP);
	/* An XRC SRQ needs its CQ and its XRC domain. */
	init.srq_type = IB_SRQT_XRC;
	KUNIT_EXPECT_EQ(test, vhca_create_srq(&srq->ibsrq, &init, NULL),
			-EINVAL);
	init.srq_type = IB_SRQT_BASIC;
	init.attr.max_wr = 0;
	KUNIT_EXPECT_EQ(test, vhca_create_srq(&srq->ibsrq, &init, NULL), -EINVAL);
	init.attr.max_wr = VHCA_MAX_SRQ_WR + 1;
	KUNIT_EXPECT_EQ(test, vhca_create_srq(&srq->ibsrq, &init, NULL), -EINVAL);
	init.attr.max_wr = 5;
	init.attr.max_sge = 0;
	KUNIT_EXPECT_EQ(test, vhca_create_srq(&srq->ibsrq, &init, NULL), -EINVAL);
	init.attr.max_sge = VHCA_MAX_SGE + 1;
	KUNIT_EXPECT_EQ(test, vhca_create_srq(&srq->ibsrq, &init, NULL), -EINVAL);
	init.attr.max_sge = 2;
	init.attr.srq_limit = 5;
	KUNIT_EXPECT_EQ(test, vhca_create_srq(&srq->ibsrq, &init, NULL), -EINVAL);
	init.attr.srq_limit = 0;
	atomic_set(&t->vdev->n_srq, VHCA_MAX_SRQ);
	KUNIT_EXPECT_EQ(test, vhca_create_srq(&srq->ibsrq, &init, NULL), -ENOMEM);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->vdev->n_srq), VHCA_MAX_SRQ);
	/* rdma statistic says which limit refused it. */
	KUNIT_EXPECT_EQ(test,
			atomic64_read(&t->vdev->counters[VHCA_CNT_LIMIT_OBJECTS]),
			1LL);
	atomic_set(&t->vdev->n_srq, 0);

	KUNIT_ASSERT_EQ(test, vhca_create_srq(&srq->ibsrq, &init, NULL), 0);
	KUNIT_EXPECT_EQ(test, init.attr.max_wr, 8U);
	KUNIT_EXPECT_EQ(test, init.attr.max_sge, 3U);
	KUNIT_EXPECT_EQ(test, vhca_query_srq(&srq->ibsrq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.max_wr, 8U);
	KUNIT_EXPECT_EQ(test, attr.max_sge, 3U);
	KUNIT_EXPECT_EQ(test, attr.srq_limit, 0U);

	attr.max_wr = 16;
	KUNIT_EXPECT_EQ(test, vhca_modify_srq(&srq->ibsrq, &attr, IB_SRQ_MAX_WR,
					      NULL), -EOPNOTSUPP);
	attr.srq_limit = 8;
	KUNIT_EXPECT_EQ(test, vhca_modify_srq(&srq->ibsrq, &attr, IB_SRQ_LIMIT,
					      NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_modify_srq(&srq->ibsrq, &attr, 1 << 5, NULL),
			-EINVAL);
	attr.srq_limit = 7;
	KUNIT_EXPECT_EQ(test, vhca_modify_srq(&srq->ibsrq, &attr, IB_SRQ_LIMIT,
					      NULL), 0);
	KUNIT_EXPECT_EQ(test, vhca_query_srq(&srq->ibsrq, &attr), 0);
	KUNIT_EXPECT_EQ(test, attr.srq_limit, 7U);
	KUNIT_EXPECT_EQ(test, vhca_destroy_srq(&srq->ibsrq, NULL), 0);
}

/* Kernel posts, engine takes: order, SGEs, full, bad num_sge, limit. */
static void vhca_srq_post_take(struct kunit *test)
{
	struct vhca_cq_test *t = test->priv;
	struct vhca_srq *srq = new_srq(test, 4, 2);
	struct ib_sge sgl[4] = {
		{ .addr = 0x1000, .length = 10, .lkey = 1 },
		{ .addr = 0x2000, .length = 20, .lkey = 2 },
		{ .addr = 0x3000, .length = 30, .lkey = 3 },
		{ .addr = 0x4000, .length = 40, .lkey = 4 },
	};
	struct ib_recv_wr wr[6];
	const struct ib_recv_wr *bad;
	struct vhca_sge sge[VHCA_MAX_SGE];
	struct vhca_recv_wqe wqe;
	struct ib_srq_attr attr = { .srq_limit = 2 };
	int i;

	KUNIT_ASSERT_EQ(test, srq->max_sge, 3U);
	KUNIT_EXPECT_EQ(test, vhca_srq_take(srq, &wqe, sge), -ENOENT);
	for (i = 0; i < 6; i++) {
		wr[i] = (struct ib_recv_wr){ .wr_id = i, .sg_list = sgl,
					     .num_sge = i % 4,
					     .next = &wr[i + 1] };
	}
	wr[5].next = NULL;
	wr[3].num_sge = 4;			/* above max_sge */
	KUNIT_EXPECT_EQ(test, vhca_post_srq_recv(&srq->ibsrq, wr, &bad),
			-EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, bad, &wr[3]);
	KUNIT_EXPECT_EQ(test, srq->recs.db->head[0], 3U);
	wr[3].num_sge = 1;
	KUNIT_EXPECT_EQ(test, vhca_post_srq_recv(&srq->ibsrq, &wr[3], &bad),
			-ENOMEM);
	KUNIT_EXPECT_PTR_EQ(test, bad, &wr[4]);

	KUNIT_EXPECT_EQ(test, vhca_modify_srq(&srq->ibsrq, &attr, IB_SRQ_LIMIT,
					      NULL), 0);
	for (i = 0; i < 4; i++) {
		KUNIT_EXPECT_EQ(test, vhca_srq_take(srq, &wqe, sge), 0);
		KUNIT_EXPECT_EQ(test, wqe.wr_id, (u64)i);
		KUNIT_EXPECT_EQ(test, wqe.num_sge, i == 3 ? 1 : i);
		if (i == 2) {
			KUNIT_EXPECT_EQ(test, sge[1].addr, 0x2000ULL);
			KUNIT_EXPECT_EQ(test, sge[1].length, 20U);
			KUNIT_EXPECT_EQ(test, sge[1].lkey, 2U);
		}
		/* Fires once, when fewer than 2 are left. */
		KUNIT_EXPECT_EQ(test, t->srq_limit_events, i >= 2 ? 1 : 0);
		KUNIT_EXPECT_EQ(test, srq->recs.st->tail[0], (u32)i + 1);
	}
	KUNIT_EXPECT_EQ(test, vhca_srq_take(srq, &wqe, sge), -ENOENT);
	KUNIT_EXPECT_EQ(test, READ_ONCE(srq->limit), 0U);
	KUNIT_EXPECT_EQ(test, vhca_destroy_srq(&srq->ibsrq, NULL), 0);
}

/* A user SRQ: hostile producer index and WQE contents. */
static void vhca_srq_user_hostile(struct kunit *test)
{
	struct vhca_srq *srq = new_srq(test, 8, 1);
	struct vhca_sge sge[VHCA_MAX_SGE];
	struct vhca_recv_wqe wqe, *slot;
	const struct ib_recv_wr *bad;
	struct ib_recv_wr wr = {};
	struct vhca_sge *ssge;
	int i;

	srq->uctx = FAKE_UCTX;
	KUNIT_EXPECT_EQ(test, vhca_post_srq_recv(&srq->ibsrq, &wr, &bad),
			-EOPNOTSUPP);
	KUNIT_EXPECT_PTR_EQ(test, bad, &wr);

	srq->tail = 0xfffffffe;
	for (i = 0; i < 3; i++) {
		slot = vhca_ring_slot(&srq->ring, srq->tail + i);
		slot->wr_id = 50 + i;
		slot->num_sge = i == 1 ? 200 : 1;
		ssge = (struct vhca_sge *)(slot + 1);
		ssge->addr = 0xabc0 + i;
		ssge->length = 64;
		ssge->lkey = 9;
	}
	/* Beyond the ring, or behind the consumer: empty. */
	WRITE_ONCE(srq->recs.db->head[0], srq->tail + 9);
	KUNIT_EXPECT_EQ(test, vhca_srq_take(srq, &wqe, sge), -ENOENT);
	WRITE_ONCE(srq->recs.db->head[0], srq->tail - 1);
	KUNIT_EXPECT_EQ(test, vhca_srq_take(srq, &wqe, sge), -ENOENT);
	KUNIT_EXPECT_EQ(test, srq->tail, 0xfffffffeU);

	WRITE_ONCE(srq->recs.db->head[0], srq->tail + 3);
	KUNIT_EXPECT_EQ(test, vhca_srq_take(srq, &wqe, sge), 0);
	KUNIT_EXPECT_EQ(test, wqe.wr_id, 50ULL);
	KUNIT_EXPECT_EQ(test, wqe.num_sge, 1);
	KUNIT_EXPECT_EQ(test, sge[0].addr, 0xabc0ULL);
	/* num_sge above max_sge: consumed, reported, no SGE returned. */
	KUNIT_EXPECT_EQ(test, vhca_srq_take(srq, &wqe, sge), -EINVAL);
	KUNIT_EXPECT_EQ(test, wqe.wr_id, 51ULL);
	KUNIT_EXPECT_EQ(test, wqe.num_sge, 0);
	KUNIT_EXPECT_EQ(test, vhca_srq_take(srq, &wqe, sge), 0);
	KUNIT_EXPECT_EQ(test, wqe.wr_id, 52ULL);
	KUNIT_EXPECT_EQ(test, sge[0].addr, 0xabc2ULL);
	KUNIT_EXPECT_EQ(test, vhca_srq_take(srq, &wqe, sge), -ENOENT);
	KUNIT_EXPECT_EQ(test, srq->tail, 1U);
	KUNIT_EXPECT_EQ(test, srq->recs.st->tail[0], 1U);
	KUNIT_EXPECT_EQ(test, vhca_destroy_srq(&srq->ibsrq, NULL), 0);
}

static struct kunit_case vhca_cq_cases[] = {
	KUNIT_CASE(vhca_cq_ring_count),
	KUNIT_CASE(vhca_cq_room_hostile),
	KUNIT_CASE(vhca_cq_wc_conversion),
	KUNIT_CASE(vhca_cq_create_refusals),
	KUNIT_CASE(vhca_cq_post_poll_overflow),
	KUNIT_CASE(vhca_cq_wrap),
	KUNIT_CASE(vhca_cq_notify),
	KUNIT_CASE(vhca_cq_user_consumer),
	KUNIT_CASE(vhca_cq_resize),
	KUNIT_CASE(vhca_cq_timestamps),
	KUNIT_CASE(vhca_srq_sizes),
	KUNIT_CASE(vhca_srq_create_refusals),
	KUNIT_CASE(vhca_srq_post_take),
	KUNIT_CASE(vhca_srq_user_hostile),
	{}
};

static struct kunit_suite vhca_cq_suite = {
	.name = "vhca_cq",
	.init = vhca_cq_test_init,
	.exit = vhca_cq_test_exit,
	.test_cases = vhca_cq_cases,
};

kunit_test_suite(vhca_cq_suite);
