// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_churn: QPs, SRQs and XRC SRQs destroyed while traffic to them is
 * in flight.
 *
 *   vhca_churn DEVICE GID_INDEX ROUNDS
 *
 * GID_INDEX is a RoCE v2 GID of port 1, which every QP sends to (in the
 * kernel, or through the IP stack with the module parameter force_wire).
 * Each round creates an SRQ, two RC QPs A and B connected to each other
 * (B's receives from the SRQ) and a UD QP T; A writes into B and sends
 * to it twice, a long-lived UD QP sends a datagram to T.  It also creates
 * an XRC SRQ S of a long-lived XRC domain and an XRC_SEND QP X connected
 * to an XRC_RECV QP Y of that domain; X sends to S and reads READ_LEN
 * bytes through it (READ responses of several passes).  One round in four
 * waits for the completions and checks them (status, length, the bytes
 * received and read); the others destroy S, Y, X, B, T, A and the SRQ at
 * once, while those packets are still on their way.  Every UD send must
 * complete with success.  The time spent in ibv_destroy_qp (all five
 * QPs), in ibv_destroy_srq of the SRQ and of S is printed as destroys per
 * second (a figure, not a check).  Every check prints one KTAP result
 * line (ktap.h); the exit status is the number of failures (at most 255).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "vhca_test.h"

#define PORT		1
#define QKEY		0x11111111
#define CQ_SIZE		4096
#define MSG_LEN		64
#define WRITE_LEN	4096
#define GRH_LEN		40
#define WAIT_MS		5000
/* READ responses of several passes (64 packets a pass). */
#define READ_LEN	(256 * 1024)
/*
 * Slots of the buffer: B's two receives, T's, the sends' bytes, the
 * WRITE's source and target, S's receive; then what X reads and where.
 */
#define SLOT		(WRITE_LEN + GRH_LEN + MSG_LEN)
#define NSLOTS		7
#define BUF_SIZE	(NSLOTS * SLOT + 2 * READ_LEN)

enum kind {
	WR_SEND1, WR_SEND2, WR_RECV1, WR_RECV2, WR_UD_RECV, WR_UD_SEND,
	WR_XRC_SEND, WR_XRC_READ, WR_XRC_RECV,
};

struct env {
	struct ibv_context *ctx;
	struct ibv_port_attr port;
	union ibv_gid gid;
	int gid_index;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *ud;		/* the long-lived UD sender */
	struct ibv_ah *ah;
	struct ibv_xrcd *xrcd;
	unsigned char *buf;
	double destroy_ms, srq_ms, xsrq_ms;
	unsigned int destroyed, srqs_destroyed, xsrqs_destroyed;
	unsigned int bad_create, bad_post, bad_wc, bad_data, bad_destroy;
};

static uint64_t wr_id(unsigned int round, enum kind k)
{
	return (uint64_t)round << 8 | k;
}

static unsigned char *slot(const struct env *e, unsigned int i)
{
	return e->buf + i * SLOT;
}

/* What X reads (through S), and where it lands. */
static unsigned char *read_src(const struct env *e)
{
	return e->buf + NSLOTS * SLOT;
}

static unsigned char *read_dst(const struct env *e)
{
	return read_src(e) + READ_LEN;
}

static struct ibv_qp *new_qp(struct env *e, enum ibv_qp_type type,
			     struct ibv_srq *srq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = e->scq, .recv_cq = e->rcq, .srq = srq,
		.qp_type = type,
		.cap = { .max_send_wr = 8, .max_recv_wr = srq ? 0 : 4,
			 .max_send_sge = 1, .max_recv_sge = 2 },
	};

	return ibv_create_qp(e->pd, &init);
}

/* X (XRC_SEND, PD and send CQ) or Y (XRC_RECV, the XRC domain). */
static struct ibv_qp *new_xrc_qp(struct env *e, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr_ex init = { .qp_type = type };

	if (type == IBV_QPT_XRC_SEND) {
		init.comp_mask = IBV_QP_INIT_ATTR_PD;
		init.pd = e->pd;
		init.send_cq = e->scq;
		init.recv_cq = e->scq;
		init.cap = (struct ibv_qp_cap){
			.max_send_wr = 8, .max_send_sge = 1,
		};
	} else {
		init.comp_mask = IBV_QP_INIT_ATTR_XRCD;
		init.xrcd = e->xrcd;
	}
	return ibv_create_qp_ex(e->ctx, &init);
}

/* S, of the XRC domain, completing on the receive CQ; its number. */
static struct ibv_srq *new_xsrq(struct env *e, uint32_t *srqn)
{
	struct ibv_srq_init_attr_ex init = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = e->pd, .xrcd = e->xrcd,
		.cq = e->rcq,
	};
	struct ibv_srq *srq = ibv_create_srq_ex(e->ctx, &init);

	if (srq && ibv_get_srq_num(srq, srqn)) {
		ibv_destroy_srq(srq);
		srq = NULL;
	}
	return srq;
}

static int ud_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = PORT, .qkey = QKEY,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static int rc_rts(const struct env *e, struct ibv_qp *qp, uint32_t dqpn)
{
	struct qp_path path = {
		.port = PORT, .sgid_index = e->gid_index, .dgid = e->gid,
		.mtu = e->port.active_mtu, .dqpn = dqpn,
		.access = IBV_ACCESS_REMOTE_WRITE, .rd_atomic = 1,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};

	return qp_rts(qp, &path);
}

/* X or Y towards dqpn; Y grants remote READ for X's. */
static int xrc_rts(const struct env *e, struct ibv_qp *qp, uint32_t dqpn)
{
	struct qp_path path = {
		.port = PORT, .sgid_index = e->gid_index, .dgid = e->gid,
		.mtu = e->port.active_mtu, .dqpn = dqpn,
		.access = qp->qp_type == IBV_QPT_XRC_RECV ?
			  IBV_ACCESS_REMOTE_READ : 0,
		.rd_atomic = 1, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};

	return qp_rts(qp, &path);
}

static void destroy_qp(struct env *e, struct ibv_qp *qp)
{
	double t0 = now_ms();

	if (ibv_destroy_qp(qp))
		e->bad_destroy++;
	e->destroy_ms += now_ms() - t0;
	e->destroyed++;
}

static void destroy_srq(struct env *e, struct ibv_srq *srq)
{
	double t0 = now_ms();

	if (ibv_destroy_srq(srq))
		e->bad_destroy++;
	e->srq_ms += now_ms() - t0;
	e->srqs_destroyed++;
}

static void destroy_xsrq(struct env *e, struct ibv_srq *srq)
{
	double t0 = now_ms();

	if (ibv_destroy_srq(srq))
		e->bad_destroy++;
	e->xsrq_ms += now_ms() - t0;
	e->xsrqs_destroyed++;
}

/* Receives of round r: two on the SRQ (slots 0, 1), one on T (slot 2). */
static int post_recvs(const struct env *e, struct ibv_srq *srq,
		      struct ibv_qp *t, unsigned int r)
{
	struct ibv_sge sge[3];
	struct ibv_recv_wr wr[3], *bad;
	int i;

	for (i = 0; i < 3; i++) {
		memset(slot(e, i), 0, SLOT);
		sge[i] = (struct ibv_sge){
			.addr = (uintptr_t)slot(e, i), .length = SLOT,
			.lkey = e->mr->lkey,
		};
		wr[i] = (struct ibv_recv_wr){
			.wr_id = wr_id(r, WR_RECV1 + i), .sg_list = &sge[i],
			.num_sge = 1, .next = i == 0 ? &wr[1] : NULL,
		};
	}
	return ibv_post_srq_recv(srq, &wr[0], &bad) ||
	       ibv_post_recv(t, &wr[2], &bad);
}

/* A: a WRITE into slot 4, two SENDs of round r's bytes; the UD send. */
static int post_sends(const struct env *e, struct ibv_qp *a, uint32_t tqpn,
		      unsigned int r)
{
	struct ibv_sge wsge = {
		.addr = (uintptr_t)slot(e, 5), .length = WRITE_LEN,
		.lkey = e->mr->lkey,
	};
	struct ibv_sge ssge = {
		.addr = (uintptr_t)slot(e, 3), .length = MSG_LEN,
		.lkey = e->mr->lkey,
	};
	struct ibv_send_wr wr[3] = {
		{ .opcode = IBV_WR_RDMA_WRITE, .sg_list = &wsge, .num_sge = 1,
		  .wr.rdma = { .remote_addr = (uintptr_t)slot(e, 4),
			       .rkey = e->mr->rkey },
		  .next = &wr[1] },
		{ .wr_id = wr_id(r, WR_SEND1), .opcode = IBV_WR_SEND,
		  .sg_list = &ssge, .num_sge = 1,
		  .send_flags = IBV_SEND_SIGNALED, .next = &wr[2] },
		{ .wr_id = wr_id(r, WR_SEND2), .opcode = IBV_WR_SEND,
		  .sg_list = &ssge, .num_sge = 1,
		  .send_flags = IBV_SEND_SIGNALED },
	};
	struct ibv_send_wr ud = {
		.wr_id = wr_id(r, WR_UD_SEND), .opcode = IBV_WR_SEND,
		.sg_list = &ssge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = e->ah, .remote_qpn = tqpn,
			   .remote_qkey = QKEY },
	};
	struct ibv_send_wr *bad;

	memset(slot(e, 3), (int)(r & 0xff) | 1, MSG_LEN);
	return ibv_post_send(a, wr, &bad) || ibv_post_send(e->ud, &ud, &bad);
}

/*
 * S's receive (slot 6); X's SEND of round r's bytes to S and its READ of
 * round r's pattern through S.
 */
static int post_xrc(const struct env *e, struct ibv_srq *s, uint32_t srqn,
		    struct ibv_qp *x, unsigned int r)
{
	struct ibv_sge rsge = {
		.addr = (uintptr_t)slot(e, 6), .length = SLOT,
		.lkey = e->mr->lkey,
	};
	struct ibv_recv_wr rwr = {
		.wr_id = wr_id(r, WR_XRC_RECV), .sg_list = &rsge, .num_sge = 1,
	};
	struct ibv_sge ssge = {
		.addr = (uintptr_t)slot(e, 3), .length = MSG_LEN,
		.lkey = e->mr->lkey,
	};
	struct ibv_sge dsge = {
		.addr = (uintptr_t)read_dst(e), .length = READ_LEN,
		.lkey = e->mr->lkey,
	};
	struct ibv_send_wr wr[2] = {
		{ .wr_id = wr_id(r, WR_XRC_SEND), .opcode = IBV_WR_SEND,
		  .sg_list = &ssge, .num_sge = 1,
		  .send_flags = IBV_SEND_SIGNALED,
		  .qp_type.xrc.remote_srqn = srqn, .next = &wr[1] },
		{ .wr_id = wr_id(r, WR_XRC_READ), .opcode = IBV_WR_RDMA_READ,
		  .sg_list = &dsge, .num_sge = 1,
		  .send_flags = IBV_SEND_SIGNALED,
		  .wr.rdma = { .remote_addr = (uintptr_t)read_src(e),
			       .rkey = e->mr->rkey },
		  .qp_type.xrc.remote_srqn = srqn },
	};
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr *bad;

	memset(slot(e, 6), 0, SLOT);
	memset(read_src(e), (int)(r & 0xff) | 1, READ_LEN);
	memset(read_dst(e), 0, READ_LEN);
	return ibv_post_srq_recv(s, &rwr, &rbad) || ibv_post_send(x, wr, &bad);
}

/*
 * Wait for the completions of round r in want (a bit per kind) on cq,
 * dropping those of earlier rounds; each must be a success of its
 * length.  The bits not seen are returned.
 */
static unsigned int wait_round(struct env *e, struct ibv_cq *cq,
			       unsigned int r, unsigned int want)
{
	double end = now_ms() + WAIT_MS;
	struct ibv_wc wc;

	while (want && now_ms() < end) {
		unsigned int k;

		if (!poll1(cq, &wc, 10) || wc.wr_id >> 8 != r)
			continue;
		k = wc.wr_id & 0xff;
		if (k > WR_XRC_RECV || !(want & 1U << k))
			continue;
		want &= ~(1U << k);
		if (wc.status != IBV_WC_SUCCESS) {
			if (!e->bad_wc++)
				ktap_diag("round %u kind %u: %s", r, k,
					  ibv_wc_status_str(wc.status));
			continue;
		}
		if ((k == WR_RECV1 || k == WR_RECV2) &&
		    (wc.byte_len != MSG_LEN ||
		     slot(e, k - WR_RECV1)[MSG_LEN - 1] != ((r & 0xff) | 1)))
			e->bad_data++;
		if (k == WR_UD_RECV && (wc.byte_len != GRH_LEN + MSG_LEN ||
					slot(e, 2)[GRH_LEN] != ((r & 0xff) | 1)))
			e->bad_data++;
		if (k == WR_XRC_RECV &&
		    (wc.byte_len != MSG_LEN ||
		     slot(e, 6)[MSG_LEN - 1] != ((r & 0xff) | 1)))
			e->bad_data++;
		if (k == WR_XRC_READ &&
		    memcmp(read_dst(e), read_src(e), READ_LEN))
			e->bad_data++;
	}
	return want;
}

static void one_round(struct env *e, unsigned int r)
{
	struct ibv_srq_init_attr sinit = {
		.attr = { .max_wr = 4, .max_sge = 1 },
	};
	struct ibv_qp *a = NULL, *b = NULL, *t = NULL, *x = NULL, *y = NULL;
	struct ibv_srq *srq, *s = NULL;
	bool check = r % 4 == 0;
	uint32_t srqn = 0;
	unsigned int lost;
	struct ibv_wc wc;

	/* What earlier rounds left in the CQs. */
	while (ibv_poll_cq(e->rcq, 1, &wc) > 0)
		;
	srq = ibv_create_srq(e->pd, &sinit);
	if (srq) {
		a = new_qp(e, IBV_QPT_RC, NULL);
		b = new_qp(e, IBV_QPT_RC, srq);
		t = new_qp(e, IBV_QPT_UD, NULL);
		s = new_xsrq(e, &srqn);
		x = new_xrc_qp(e, IBV_QPT_XRC_SEND);
		y = new_xrc_qp(e, IBV_QPT_XRC_RECV);
	}
	if (!srq || !a || !b || !t || !s || !x || !y) {
		e->bad_create++;
		goto out;
	}
	if (rc_rts(e, b, a->qp_num) || rc_rts(e, a, b->qp_num) || ud_rts(t) ||
	    xrc_rts(e, y, x->qp_num) || xrc_rts(e, x, y->qp_num) ||
	    post_recvs(e, srq, t, r) || post_sends(e, a, t->qp_num, r) ||
	    post_xrc(e, s, srqn, x, r)) {
		e->bad_post++;
		goto out;
	}
	/* The UD sender's completion, whether T is still there or not. */
	lost = wait_round(e, e->scq, r, 1U << WR_UD_SEND |
			  (check ? 1U << WR_SEND1 | 1U << WR_SEND2 |
				   1U << WR_XRC_SEND | 1U << WR_XRC_READ : 0));
	if (check)
		lost |= wait_round(e, e->rcq, r, 1U << WR_RECV1 |
				   1U << WR_RECV2 | 1U << WR_UD_RECV |
				   1U << WR_XRC_RECV);
	if (lost && !e->bad_wc++)
		ktap_diag("round %u: no completion of kinds %#x", r, lost);
out:
	/* S first: X's SEND and READ may still be on their way to it. */
	if (s)
		destroy_xsrq(e, s);
	if (y)
		destroy_qp(e, y);
	if (x)
		destroy_qp(e, x);
	if (b)
		destroy_qp(e, b);
	if (t)
		destroy_qp(e, t);
	if (a)
		destroy_qp(e, a);
	if (srq)
		destroy_srq(e, srq);
}

static int setup(struct env *e)
{
	struct ibv_ah_attr av = {
		.is_global = 1, .port_num = PORT,
		.grh = { .dgid = e->gid, .sgid_index = e->gid_index,
			 .hop_limit = 64 },
	};

	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};

	e->buf = calloc(1, BUF_SIZE);
	e->pd = e->buf ? ibv_alloc_pd(e->ctx) : NULL;
	e->mr = e->pd ? ibv_reg_mr(e->pd, e->buf, BUF_SIZE,
				   IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ) : NULL;
	e->xrcd = e->mr ? ibv_open_xrcd(e->ctx, &xa) : NULL;
	e->scq = e->xrcd ? ibv_create_cq(e->ctx, CQ_SIZE, NULL, NULL, 0) : NULL;
	e->rcq = e->scq ? ibv_create_cq(e->ctx, CQ_SIZE, NULL, NULL, 0) : NULL;
	e->ud = e->rcq ? new_qp(e, IBV_QPT_UD, NULL) : NULL;
	e->ah = e->ud && !ud_rts(e->ud) ? ibv_create_ah(e->pd, &av) : NULL;
	return e->ah ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct env e = { 0 };
	unsigned int rounds, r;
	char *end;

	if (argc != 4) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX ROUNDS\n", argv[0]);
		return 2;
	}
	e.gid_index = strtol(argv[2], &end, 0);
	rounds = strtoul(argv[3], &end, 0);
	ktap_header();
	e.ctx = open_port(argv[1], PORT, e.gid_index, &e.port, &e.gid);
	result(e.ctx && !setup(&e),
	       "set up the device's PD, MR, XRC domain, CQs, UD sender",
	       "%s: %s", argv[1], strerror(errno));
	if (ktap_failures())
		return exit_status();
	for (r = 0; r < rounds; r++)
		one_round(&e, r);
	result(!e.bad_create, "every SRQ, XRC SRQ and QP created",
	       "%u rounds failed", e.bad_create);
	result(!e.bad_post, "every QP connected, every WR posted",
	       "%u rounds failed", e.bad_post);
	result(!e.bad_wc, "every completion waited for came, a success",
	       "%u missing or failed", e.bad_wc);
	result(!e.bad_data, "every receive checked has its bytes",
	       "%u wrong", e.bad_data);
	result(!e.bad_destroy, "every destroy succeeded",
	       "%u failed", e.bad_destroy);
	if (e.destroy_ms > 0 && e.srq_ms > 0 && e.xsrq_ms > 0)
		ktap_diag("destroy_qp: %u in %.0f ms, %.0f per second; destroy_srq: %u in %.0f ms, %.0f per second; XRC SRQs: %u in %.0f ms, %.0f per second",
			  e.destroyed, e.destroy_ms,
			  e.destroyed * 1e3 / e.destroy_ms, e.srqs_destroyed,
			  e.srq_ms, e.srqs_destroyed * 1e3 / e.srq_ms,
			  e.xsrqs_destroyed, e.xsrq_ms,
			  e.xsrqs_destroyed * 1e3 / e.xsrq_ms);
	ibv_destroy_ah(e.ah);
	ibv_destroy_qp(e.ud);
	ibv_destroy_cq(e.rcq);
	ibv_destroy_cq(e.scq);
	ibv_close_xrcd(e.xrcd);
	ibv_dereg_mr(e.mr);
	ibv_dealloc_pd(e.pd);
	ibv_close_device(e.ctx);
	free(e.buf);
	return exit_status();
}
