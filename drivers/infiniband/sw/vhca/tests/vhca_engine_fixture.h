/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The fixture of the engine's KUnit suites: a requester QP and a responder
 * QP on a bare vhca_dev, driven through the entry points the receive path,
 * the work item and the timers call (vhca_engine_rx(), vhca_req_run(),
 * vhca_req_rexmit_timer()).  What the engine transmits is captured by the
 * stand-in vhca_net_xmit() of vhca_net_stub.c, and the cases assert the
 * packets (opcode, PSN, AETH, MSN) and the CQEs.  A timeout fires by
 * calling the timer's handler, never by sleeping; the doorbell's poll
 * window is off (poll_budget 0), so no hrtimer runs.
 *
 * Included once, by vhca_engine_kunit.c, after the engine's sources: the
 * suites in its vhca_engine_*_kunit.c files share this one translation
 * unit, since each includes the engine's static functions.
 */
#ifndef VHCA_ENGINE_FIXTURE_H
#define VHCA_ENGINE_FIXTURE_H

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
	atomic_t wire_kicks;		/* wire_work runs ... */
	int wire_cpu;			/* ... and the CPU of the last */
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

/* The work item on req.tx_cpu: counts, and notes where it ran. */
static void engine_test_wire_work(struct work_struct *work)
{
	struct vhca_qp *qp = container_of(work, struct vhca_qp, wire_work);
	struct engine_test *t = engine_test_of(qp);

	WRITE_ONCE(t->wire_cpu, raw_smp_processor_id());
	atomic_inc(&t->wire_kicks);
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
		/* Exactly the caps' room: KASAN sees a copy past it. */
		qp->req.swqe_stride = vhca_swqe_stride(qp->max_send_sge,
						       qp->max_inline);
		qp->req.swqe = kunit_kcalloc(test, RING_COUNT,
					     qp->req.swqe_stride, GFP_KERNEL);
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
	INIT_WORK(&qp->wire_work, engine_test_wire_work);
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
	qp->handle = vhca_handle_alloc(qp, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, qp->handle);
	KUNIT_ASSERT_EQ(test, xa_insert(&t->vdev->qp_xa, params->qpn,
					qp->handle, GFP_KERNEL), 0);
	vhca_qp_set_state(qp, IB_QPS_INIT);
	vhca_qp_set_state(qp, IB_QPS_RTR);
	vhca_qp_set_state(qp, IB_QPS_RTS);
	return qp;
}

static void free_qp(struct engine_test *t, struct vhca_qp *qp)
{
	unsigned long flags;

	WRITE_ONCE(qp->dying, true);
	/* A case may free a QP itself before the exit frees it again. */
	if (qp->handle)
		vhca_handle_remove(&t->vdev->ibdev, "QP", &t->vdev->qp_xa,
				   qp->ibqp.qp_num, qp->handle);
	qp->handle = NULL;
	timer_shutdown_sync(&qp->req.rexmit_timer);
	hrtimer_cancel(&qp->req.rnr_timer);
	hrtimer_cancel(&qp->db.timer);
	cancel_work_sync(&qp->tx_work);
	cancel_work_sync(&qp->wire_work);
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
	engine_test_wire = false;
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

/* Expect the next packet sent to be a NAK of code for PSN psn. */
static void expect_nak(struct kunit *test, u32 psn, u8 code)
{
	struct vhca_pkt nak;

	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, psn, &nak);
	KUNIT_EXPECT_EQ(test, nak.aeth_syndrome, vhca_aeth_nak(code));
}

/*
 * The one request posted (wr_id 1) goes to the responder, which refuses
 * it: its NAK carries code, and the requester completes the WQE with
 * status.
 */
static void expect_refused(struct kunit *test, struct engine_test *t,
			   u8 code, enum ib_wc_status status)
{
	struct vhca_pkt nak;

	vhca_req_run(t->req);
	loop_sent(t);
	expect_sent(test, IB_OPCODE_RC_ACKNOWLEDGE, SQ_PSN, &nak);
	KUNIT_EXPECT_EQ(test, nak.aeth_syndrome, vhca_aeth_nak(code));
	deliver(test, t, &nak, 0);
	expect_cqe(test, t->send_cq, 1, status, 0);
}

/*
 * Expect BUF_LEN bytes of buf to be packets' payloads of MTU bytes each,
 * the first of value first, the next first + 1, ...
 */
static void expect_mtu_fill(struct kunit *test, const u8 *buf, u8 first)
{
	int i;

	for (i = 0; i < BUF_LEN; i++)
		if (buf[i] != (u8)(first + i / MTU))
			break;
	KUNIT_EXPECT_EQ(test, i, BUF_LEN);
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

#endif /* VHCA_ENGINE_FIXTURE_H */
