// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suites of the RC protocol engine without a network: a requester
 * QP and a responder QP on a bare vhca_dev, driven through the entry
 * points the receive path, the work item and the timers call
 * (vhca_engine_rx(), vhca_req_run(), vhca_req_rexmit_timer()).  What the
 * engine transmits is captured by the stand-in vhca_net_xmit() of
 * vhca_net_stub.c, and each case asserts the packets (opcode, PSN, AETH,
 * MSN) and the CQEs.
 * A timeout fires by calling the timer's handler, never by sleeping; the
 * doorbell's poll window is off (poll_budget 0), so no hrtimer runs.
 */
#include <kunit/test.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

#include "../drivers/infiniband/sw/vhca/vhca_qp.c"
#include "../drivers/infiniband/sw/vhca/vhca_tx.c"
#include "../drivers/infiniband/sw/vhca/vhca_wqe.c"
#include "../drivers/infiniband/sw/vhca/vhca_req.c"
#include "../drivers/infiniband/sw/vhca/vhca_comp.c"
#include "../drivers/infiniband/sw/vhca/vhca_resp.c"
#include "../drivers/infiniband/sw/vhca/vhca_resp_rd.c"
#include "../drivers/infiniband/sw/vhca/vhca_db.c"
#include "../drivers/infiniband/sw/vhca/vhca_ghost.c"
#include "../drivers/infiniband/sw/vhca/vhca_rx.c"
#include "../drivers/infiniband/sw/vhca/vhca_ud.c"
#include "vhca_net_stub.c"

#define REQ_QPN		0x11
#define RESP_QPN	0x22
#define NO_SQ_QPN	0x33
#define SQ_PSN		100
/* The responder expects what the requester sends first. */
#define RQ_PSN		SQ_PSN
#define MTU		256
#define RING_COUNT	16
#define BUF_LEN		(3 * MTU)

struct engine_test {
	struct vhca_dev *vdev;
	struct ib_pd pd;
	struct vhca_cq *send_cq, *recv_cq;
	struct ib_mr *mr;		/* DMA MR: kernel addresses */
	struct vhca_qp *req, *resp;
	atomic_t kicks;			/* tx_work runs */
	u8 *local, *remote;		/* BUF_LEN each */
	unsigned int saved_poll_budget;
};

static struct engine_test *engine_test_of(struct vhca_qp *qp)
{
	return (struct engine_test *)qp->ibqp.qp_context;
}

/* The work item only counts: each case runs the requester itself. */
static void engine_test_work(struct work_struct *work)
{
	struct vhca_qp *qp = container_of(work, struct vhca_qp, tx_work);

	atomic_inc(&engine_test_of(qp)->kicks);
}

static struct vhca_cq *new_cq(struct kunit *test, struct engine_test *t)
{
	struct ib_cq_init_attr attr = { .cqe = 64 };
	struct vhca_cq *cq = kunit_kzalloc(test, sizeof(*cq), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, cq);
	cq->ibcq.device = &t->vdev->ibdev;
	KUNIT_ASSERT_EQ(test, vhca_create_cq(&cq->ibcq, &attr, NULL), 0);
	return cq;
}

struct qp_params {
	u32 qpn, dest_qpn, sq_psn, rq_psn;
	u8 retry_cnt, rnr_retry;
	bool no_sq;			/* created with max_send_wr 0 */
};

static struct vhca_qp *new_qp(struct kunit *test, struct engine_test *t,
			      const struct qp_params *params)
{
	struct vhca_qp *qp = kunit_kzalloc(test, sizeof(*qp), GFP_KERNEL);
	struct ib_qp_attr *attr;

	KUNIT_ASSERT_NOT_NULL(test, qp);
	qp->ibqp.device = &t->vdev->ibdev;
	qp->ibqp.qp_num = params->qpn;
	qp->ibqp.qp_type = IB_QPT_RC;
	qp->ibqp.pd = &t->pd;
	qp->ibqp.send_cq = &t->send_cq->ibcq;
	qp->ibqp.recv_cq = &t->recv_cq->ibcq;
	qp->ibqp.qp_context = t;
	mutex_init(&qp->mutex);
	mutex_init(&qp->tx_mutex);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	qp->sig_all = true;
	qp->max_send_sge = 4;
	qp->max_recv_sge = 4;
	qp->max_inline = 64;
	if (!params->no_sq) {
		qp->sq.count = RING_COUNT;
		qp->sq.stride = 256;
		qp->sq.buf = kunit_kzalloc(test, RING_COUNT * 256, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, qp->sq.buf);
		qp->req.swqe = kunit_kcalloc(test, RING_COUNT,
					     sizeof(*qp->req.swqe), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, qp->req.swqe);
	}
	qp->rq.count = RING_COUNT;
	qp->rq.stride = 128;
	qp->rq.buf = kunit_kzalloc(test, RING_COUNT * 128, GFP_KERNEL);
	qp->recs.db = kunit_kzalloc(test, sizeof(*qp->recs.db), GFP_KERNEL);
	qp->recs.st = kunit_kzalloc(test, sizeof(*qp->recs.st), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qp->rq.buf);
	KUNIT_ASSERT_NOT_NULL(test, qp->recs.db);
	KUNIT_ASSERT_NOT_NULL(test, qp->recs.st);
	INIT_WORK(&qp->tx_work, engine_test_work);
	skb_queue_head_init(&qp->resp.backlog);
	timer_setup(&qp->req.rexmit_timer, vhca_req_rexmit_timer, 0);
	hrtimer_init(&qp->req.rnr_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	qp->req.rnr_timer.function = vhca_req_rnr_timer;
	hrtimer_init(&qp->db.timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	qp->db.timer.function = vhca_db_timer;

	attr = &qp->attr;
	attr->path_mtu = IB_MTU_256;
	attr->dest_qp_num = params->dest_qpn;
	attr->sq_psn = params->sq_psn;
	attr->rq_psn = params->rq_psn;
	attr->retry_cnt = params->retry_cnt;
	attr->rnr_retry = params->rnr_retry;
	attr->timeout = 20;		/* 4.3 s: never fires by itself */
	attr->min_rnr_timer = 1;
	attr->max_rd_atomic = 4;
	attr->max_dest_rd_atomic = 4;
	attr->qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	KUNIT_ASSERT_EQ(test, xa_insert(&t->vdev->qp_xa, params->qpn, qp,
					GFP_KERNEL), 0);
	vhca_qp_set_state(qp, IB_QPS_INIT);
	vhca_qp_set_state(qp, IB_QPS_RTR);
	vhca_qp_set_state(qp, IB_QPS_RTS);
	return qp;
}

static void free_qp(struct engine_test *t, struct vhca_qp *qp)
{
	unsigned long flags;

	WRITE_ONCE(qp->dying, true);
	xa_erase(&t->vdev->qp_xa, qp->ibqp.qp_num);
	timer_shutdown_sync(&qp->req.rexmit_timer);
	hrtimer_cancel(&qp->req.rnr_timer);
	hrtimer_cancel(&qp->db.timer);
	cancel_work_sync(&qp->tx_work);
	vhca_resp_drop_held(qp);
	spin_lock_irqsave(&qp->rq_lock, flags);
	vhca_rmsg_close(&qp->resp.msg);
	spin_unlock_irqrestore(&qp->rq_lock, flags);
}

/* The engine's workqueue, which vhca_engine_kick() queues on. */
static int engine_suite_init(struct kunit_suite *suite)
{
	return vhca_engine_init();
}

static void engine_suite_exit(struct kunit_suite *suite)
{
	vhca_engine_exit();
}

static int engine_test_init_with(struct kunit *test, u8 retry_cnt,
				 u8 rnr_retry, u32 sq_psn, u32 rq_psn)
{
	struct qp_params req = {
		.qpn = REQ_QPN, .dest_qpn = RESP_QPN, .sq_psn = sq_psn,
		.rq_psn = RQ_PSN, .retry_cnt = retry_cnt,
		.rnr_retry = rnr_retry,
	};
	struct qp_params resp = {
		.qpn = RESP_QPN, .dest_qpn = REQ_QPN, .sq_psn = RQ_PSN,
		.rq_psn = rq_psn, .retry_cnt = 7, .rnr_retry = 7,
	};
	struct engine_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	test->priv = t;
	skb_queue_head_init(&engine_test_sent);
	t->saved_poll_budget = poll_budget;
	poll_budget = 0;
	t->vdev = kunit_kzalloc(test, sizeof(*t->vdev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->vdev);
	t->vdev->ibdev.num_comp_vectors = 1;
	xa_init_flags(&t->vdev->qp_xa, XA_FLAGS_ALLOC);
	xa_init_flags(&t->vdev->mr_xa, XA_FLAGS_ALLOC1);
	vhca_engine_dev_init(t->vdev);
	memset(&engine_test_source_gid, 0, sizeof(engine_test_source_gid));
	t->pd.device = &t->vdev->ibdev;
	t->mr = vhca_get_dma_mr(&t->pd, IB_ACCESS_LOCAL_WRITE |
				IB_ACCESS_REMOTE_WRITE |
				IB_ACCESS_REMOTE_READ);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t->mr));
	/* What ib_get_dma_mr() sets after the driver's verb. */
	t->mr->device = &t->vdev->ibdev;
	t->mr->pd = &t->pd;
	t->local = kunit_kzalloc(test, BUF_LEN, GFP_KERNEL);
	t->remote = kunit_kzalloc(test, BUF_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->local);
	KUNIT_ASSERT_NOT_NULL(test, t->remote);
	t->send_cq = new_cq(test, t);
	t->recv_cq = new_cq(test, t);
	t->req = new_qp(test, t, &req);
	t->resp = new_qp(test, t, &resp);
	return 0;
}

static int engine_test_init(struct kunit *test)
{
	return engine_test_init_with(test, 7, 7, SQ_PSN, RQ_PSN);
}

static void engine_test_exit(struct kunit *test)
{
	struct engine_test *t = test->priv;

	free_qp(t, t->req);
	free_qp(t, t->resp);
	vhca_dereg_mr(t->mr, NULL);
	vhca_destroy_cq(&t->send_cq->ibcq, NULL);
	vhca_destroy_cq(&t->recv_cq->ibcq, NULL);
	skb_queue_purge(&engine_test_sent);
	xa_destroy(&t->vdev->qp_xa);
	xa_destroy(&t->vdev->mr_xa);
	vhca_engine_dev_fini(t->vdev);
	poll_budget = t->saved_poll_budget;
}

/* ---- driving the engine ---- */

/*
 * The requester's next send WQE slot, zeroed, with wr_id and opcode; the
 * caller fills the rest and publishes it with sq_publish().
 */
static struct vhca_send_wqe *sq_slot(struct engine_test *t, u64 wr_id,
				     u8 opcode)
{
	struct vhca_qp *qp = t->req;
	struct vhca_send_wqe *wqe = vhca_ring_slot(&qp->sq,
						   qp->recs.db->head[0]);

	memset(wqe, 0, qp->sq.stride);
	wqe->wr_id = wr_id;
	wqe->opcode = opcode;
	return wqe;
}

/* The slot sq_slot() gave, published as the provider does. */
static void sq_publish(struct engine_test *t)
{
	struct vhca_qp *qp = t->req;

	/* The engine reads the WQE only after this head. */
	smp_store_release(&qp->recs.db->head[0], qp->recs.db->head[0] + 1);
}

/* A send WQE into the ring, published as the provider does. */
static void post_send(struct engine_test *t, u64 wr_id, u8 opcode,
		      const void *buf, u32 len, u64 remote_addr)
{
	struct vhca_send_wqe *wqe = sq_slot(t, wr_id, opcode);
	struct vhca_sge *sge = (struct vhca_sge *)(wqe + 1);

	wqe->num_sge = len ? 1 : 0;
	wqe->rdma.remote_addr = remote_addr;
	wqe->rdma.rkey = t->mr->rkey;
	sge->addr = (uintptr_t)buf;
	sge->length = len;
	sge->lkey = t->mr->lkey;
	sq_publish(t);
}

static void post_recv(struct engine_test *t, u64 wr_id, void *buf, u32 len)
{
	struct vhca_qp *qp = t->resp;
	u32 head = qp->recs.db->head[1];
	struct vhca_recv_wqe *wqe = vhca_ring_slot(&qp->rq, head);
	struct vhca_sge *sge = (struct vhca_sge *)(wqe + 1);

	memset(wqe, 0, qp->rq.stride);
	wqe->wr_id = wr_id;
	wqe->num_sge = len ? 1 : 0;
	sge->addr = (uintptr_t)buf;
	sge->length = len;
	sge->lkey = t->mr->lkey;
	/* Likewise for the receive queue. */
	smp_store_release(&qp->recs.db->head[1], head + 1);
}

/* The receive path: softirq context, under RCU, as the socket runs it. */
static void receive(struct engine_test *t, struct sk_buff *skb)
{
	local_bh_disable();
	rcu_read_lock();
	vhca_engine_rx(t->vdev, skb);
	rcu_read_unlock();
	local_bh_enable();
}

/* A synthetic packet, payload bytes of value fill. */
static void deliver(struct kunit *test, struct engine_test *t,
		    const struct vhca_pkt *pkt, u8 fill)
{
	const struct vhca_pkt_opinfo *info = vhca_pkt_opinfo(pkt->opcode);
	u32 pad = vhca_pkt_pad(pkt->paylen);
	struct sk_buff *skb;

	KUNIT_ASSERT_NOT_NULL(test, info);
	skb = alloc_skb(info->hdr_len + pkt->paylen + pad + IB_ICRC_BYTES,
			GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_ASSERT_EQ(test, vhca_pkt_build(skb_put(skb, info->hdr_len),
					     info->hdr_len, pkt),
			(int)info->hdr_len);
	memset(skb_put(skb, pkt->paylen), fill, pkt->paylen);
	skb_put_zero(skb, pad + IB_ICRC_BYTES);
	receive(t, skb);
}

/* An ACK or NAK from the responder to the requester. */
static void deliver_aeth(struct kunit *test, struct engine_test *t,
			 u8 syndrome, u32 psn)
{
	struct vhca_pkt pkt = {
		.opcode = IB_OPCODE_RC_ACKNOWLEDGE,
		.dqpn = REQ_QPN,
		.psn = psn,
		.aeth_syndrome = syndrome,
		.aeth_msn = 1,
	};

	deliver(test, t, &pkt, 0);
}

static void deliver_ack(struct kunit *test, struct engine_test *t, u32 psn)
{
	deliver_aeth(test, t, vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID), psn);
}

/* The next packet the engine sent, parsed; false when there is none. */
static bool next_sent(struct kunit *test, struct vhca_pkt *pkt,
		      struct sk_buff **skbp)
{
	struct sk_buff *skb = skb_dequeue(&engine_test_sent);

	if (!skb)
		return false;
	KUNIT_EXPECT_EQ(test, vhca_pkt_parse(skb->data, skb->len, pkt), 0);
	if (skbp)
		*skbp = skb;
	else
		kfree_skb(skb);
	return true;
}

/* Expect the next packet sent to have this opcode and PSN. */
static void expect_sent(struct kunit *test, u8 opcode, u32 psn,
			struct vhca_pkt *pkt)
{
	struct vhca_pkt parsed;

	if (!pkt)
		pkt = &parsed;
	KUNIT_ASSERT_TRUE_MSG(test, next_sent(test, pkt, NULL),
			      "no packet, expected opcode %#x PSN %u",
			      opcode, psn);
	KUNIT_EXPECT_EQ(test, pkt->opcode, opcode);
	KUNIT_EXPECT_EQ(test, pkt->psn, psn);
}

static void expect_nothing_sent(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, skb_queue_len(&engine_test_sent), 0U);
}

/*
 * Hand everything sent so far to the receive path (requests to the peer);
 * what that sends in turn stays captured.
 */
static void loop_sent(struct engine_test *t)
{
	struct sk_buff_head sent;
	struct sk_buff *skb;

	__skb_queue_head_init(&sent);
	skb_queue_splice_init(&engine_test_sent, &sent);
	while ((skb = __skb_dequeue(&sent)))
		receive(t, skb);
}

/* The retransmit timer expires now. */
static void fire_rexmit(struct vhca_qp *qp)
{
	del_timer_sync(&qp->req.rexmit_timer);
	vhca_req_rexmit_timer(&qp->req.rexmit_timer);
}

/* The end of an RNR NAK's delay, as its timer brings it. */
static void fire_rnr(struct vhca_qp *qp)
{
	hrtimer_cancel(&qp->req.rnr_timer);
	vhca_req_rnr_timer(&qp->req.rnr_timer);
}

/*
 * The responder's part of the work item, as the kick it asked for runs it:
 * READ responses, then the requests held behind them.
 */
static void respond(struct engine_test *t)
{
	int passes = 0;

	while (vhca_resp_run(t->resp) && ++passes < 1000)
		;
}

static int kicks(struct engine_test *t, struct vhca_qp *qp)
{
	flush_work(&qp->tx_work);
	return atomic_read(&t->kicks);
}

static void expect_cqe(struct kunit *test, struct vhca_cq *cq, u64 wr_id,
		       enum ib_wc_status status, enum ib_wc_opcode opcode)
{
	struct ib_wc wc;

	KUNIT_ASSERT_EQ_MSG(test, vhca_poll_cq(&cq->ibcq, 1, &wc), 1,
			    "no CQE, expected wr_id %llu", wr_id);
	KUNIT_EXPECT_EQ(test, wc.wr_id, wr_id);
	KUNIT_EXPECT_EQ(test, wc.status, status);
	if (status == IB_WC_SUCCESS)
		KUNIT_EXPECT_EQ(test, wc.opcode, opcode);
}

static void expect_no_cqe(struct kunit *test, struct vhca_cq *cq)
{
	struct ib_wc wc;

	KUNIT_EXPECT_EQ(test, vhca_poll_cq(&cq->ibcq, 1, &wc), 0);
}

static u64 counter(struct engine_test *t, enum vhca_counter which)
{
	return atomic64_read(&t->vdev->counters[which]);
}

/* Post n small SENDs (wr_id 1..n) and send them. */
static void send_n(struct kunit *test, struct engine_test *t, int n)
{
	int i;

	for (i = 1; i <= n; i++)
		post_send(t, i, VHCA_WR_SEND, t->local, 8, 0);
	vhca_req_run(t->req);
}

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
	int i;

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
	for (i = 0; i < BUF_LEN; i++)
		if (t->local[i] != 0xa1 + i / MTU)
			break;
	KUNIT_EXPECT_EQ(test, i, BUF_LEN);
}

/* ---- responder ---- */

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
	KUNIT_EXPECT_EQ(test, atomic_read(&t->vdev->n_ghosts), 1);

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
	struct vhca_pkt pkt;

	*word = 7;
	if (write)
		post_atomic_write(t, 1, 9, remote_addr, rkey);
	else
		post_atomic(t, 1, VHCA_WR_ATOMIC_FETCH_AND_ADD, result, 8,
			    remote_addr, rkey, 1, 0);
	vhca_req_run(t->req);
	loop_sent(t);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, SQ_PSN, &pkt);
	KUNIT_EXPECT_EQ(test, pkt.aeth_syndrome, vhca_aeth_nak(nak));
	deliver(test, t, &pkt, 0);
	expect_cqe(test, t->send_cq, 1, status, 0);
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

static struct kunit_case vhca_engine_resp_cases[] = {
	KUNIT_CASE(engine_duplicate_send),
	KUNIT_CASE(engine_duplicate_write),
	KUNIT_CASE(engine_duplicate_read),
	KUNIT_CASE(engine_duplicate_read_refused),
	KUNIT_CASE(engine_read_responses_bounded),
	KUNIT_CASE(engine_read_one_pass_at_a_time),
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

/*
 * XRC, direct placement and hostile input: files of their own, with this
 * one's fixture.
 */
#include "vhca_engine_xrc.c"
#include "vhca_engine_direct.c"
#include "vhca_engine_hostile.c"

kunit_test_suites(&vhca_engine_req_suite, &vhca_engine_retry_suite,
		  &vhca_engine_wrap_suite, &vhca_engine_resp_suite,
		  &vhca_engine_frwr_suite, &vhca_engine_atomic_suite,
		  &vhca_engine_uc_suite, &vhca_engine_xrc_suite,
		  &vhca_engine_direct_suite, &vhca_engine_hostile_suite);
