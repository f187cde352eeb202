// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_cq_ex: extended CQs (ibv_create_cq_ex, ibv_start_poll/next_poll/
 * end_poll and the ibv_wc_read_* accessors) between two ports, every field
 * checked.  One process drives both ends:
 *
 *   vhca_cq_ex DEV0 GID_INDEX0 DEV1 GID_INDEX1
 *
 * Each end has one extended CQ (IBV_WC_STANDARD_FLAGS; the sender's also
 * IBV_CREATE_CQ_ATTR_SINGLE_THREADED, the receiver's both completion
 * timestamps), an RC QP and a UD QP on it.  Checks: the wc_flags, flags
 * and comp_mask vhca refuses, and their errnos; the device's clock
 * (hca_core_clock, completion_timestamp_mask, ibv_query_rt_values_ex
 * against CLOCK_MONOTONIC_RAW); an empty CQ answers ENOENT; RC SEND,
 * SEND_WITH_IMM and RDMA_WRITE_WITH_IMM
 * with distinct lengths, immediates and patterns, read back in one
 * start/next/end sequence on both sides (wr_id, status, opcode, wc_flags,
 * byte_len, imm_data, qp_num, src_qp, sl, slid, dlid_path_bits, and the
 * bytes placed); a UD SEND with immediate (40-byte network header, GRH
 * flag, the sender's QPN as src_qp), its arrival signalled on a completion
 * channel armed through ibv_cq_ex_to_cq(), and its send completion read
 * with plain ibv_poll_cq on the same CQ; the receiver's completion times
 * (core clock and wall clock) between the clocks read before the post and
 * after the poll, never going backwards, also across a resize.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "vhca_test.h"

#define QKEY		0x11223344u
#define BUF_SIZE	(64 * 1024)
#define RX_OFF		(32 * 1024)	/* receive half of an end's buffer */
#define GRH_LEN		40
#define WAIT_MS		20000
#define MAX_WC		8

/* The three RC messages and the UD one: length, immediate, wr_ids. */
enum { M_SEND, M_SEND_IMM, M_WRITE_IMM, M_UD, NUM_MSG };
static const uint32_t msg_len[NUM_MSG] = { 1000, 777, 4096, 200 };
static const uint32_t msg_imm[NUM_MSG] = { 0, 0x12345678, 0xabcdef01,
					   0x0badf00d };
/* Where each lands in the receiver's buffer (RX_OFF + at). */
static const uint32_t msg_at[NUM_MSG] = { 0, 2048, 8192, 16384 };

struct end {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *chan;
	struct ibv_cq_ex *cq;
	bool ts;		/* the CQ has both completion timestamps */
	struct ibv_qp *rc, *ud;
	struct ibv_ah *ah;	/* to the other end */
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	int gid_index;
	enum ibv_mtu mtu;
};

/* One completion as the accessors read it. */
struct cqe {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	unsigned int wc_flags;
	uint32_t byte_len, imm, qp_num, src_qp, slid, vendor_err;
	uint8_t sl, dlid_path_bits;
	uint64_t ts, wallclock;	/* ends with timestamps */
};

/* The clocks a completion's times must lie between. */
struct times {
	uint64_t core, wall;
};

static void __attribute__((noreturn)) fatal(const char *what, int err)
{
	result(false, what, "%s", strerror(err ? err : EIO));
	exit(exit_status());
}

static uint8_t pat(uint32_t seed, uint32_t i)
{
	uint32_t x = i * 0x9e3779b1u + seed * 0x85ebca77u;

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	return x;
}

/* wr_id of message m on side 's' (send) or 'r' (receive). */
static uint64_t wr_id(char side, int m)
{
	return 0xc0ffee0000000000ULL | (uint64_t)side << 16 | (uint64_t)m;
}

/* ---- the refusals ---- */

static void try_create(struct ibv_context *ctx, struct ibv_cq_init_attr_ex a,
		       int want, const char *what)
{
	struct ibv_cq_ex *cq;

	errno = 0;
	cq = ibv_create_cq_ex(ctx, &a);
	result(!cq && errno == want, what, "cq %p, errno %d (%s)", (void *)cq,
	       errno, strerror(errno));
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
}

static void test_refused(struct ibv_context *ctx)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 16 };
	struct ibv_device_attr dev;

	a.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_CVLAN;
	try_create(ctx, a, EOPNOTSUPP,
		   "create_cq_ex: standard flags plus CVLAN refused: EOPNOTSUPP");
	a.wc_flags = IBV_WC_EX_WITH_FLOW_TAG;
	try_create(ctx, a, EOPNOTSUPP,
		   "create_cq_ex: flow tag refused: EOPNOTSUPP");
	a.wc_flags = 0;
	a.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	a.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	try_create(ctx, a, EOPNOTSUPP,
		   "create_cq_ex: IGNORE_OVERRUN refused: EOPNOTSUPP");
	a.flags = 1u << 9;
	try_create(ctx, a, EINVAL, "create_cq_ex: an unknown flag: EINVAL");
	a.flags = 0;
	a.comp_mask = 1u << 7;
	try_create(ctx, a, EINVAL,
		   "create_cq_ex: an unknown comp_mask bit: EINVAL");
	a.comp_mask = 0;
	if (!ibv_query_device(ctx, &dev)) {
		a.cqe = dev.max_cqe + 1;
		try_create(ctx, a, EINVAL,
			   "create_cq_ex: more CQEs than max_cqe: EINVAL");
	}
	a.cqe = 16;
	a.comp_vector = ctx->num_comp_vectors;
	try_create(ctx, a, EINVAL,
		   "create_cq_ex: comp_vector past the device's: EINVAL");
}

/* ---- the device's clock ---- */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (uint64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The core clock's count, by ibv_query_rt_values_ex (0 on failure). */
static uint64_t core_clock(struct ibv_context *ctx)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	if (ibv_query_rt_values_ex(ctx, &v) ||
	    v.comp_mask != IBV_VALUES_MASK_RAW_CLOCK)
		return 0;
	return v.raw_clock.tv_nsec;
}

static struct times times_now(struct ibv_context *ctx)
{
	return (struct times){ core_clock(ctx), clock_ns(CLOCK_REALTIME) };
}

/*
 * hca_core_clock 1 GHz and a 64-bit counter, which
 * ibv_query_rt_values_ex reads as CLOCK_MONOTONIC_RAW: between two reads
 * of it, and again later.
 */
static void test_clock(struct ibv_context *ctx)
{
	struct ibv_values_ex bad = { .comp_mask = 1 << 1 };
	struct ibv_device_attr_ex attr;
	uint64_t t0, t1, c, c2;
	int ret;

	ret = ibv_query_device_ex(ctx, NULL, &attr);
	result(!ret && attr.hca_core_clock == 1000000 &&
	       attr.completion_timestamp_mask == UINT64_MAX,
	       "query_device_ex: hca_core_clock 1000000 kHz, 64-bit mask",
	       "ret %d, clock %llu kHz, mask %#llx", ret,
	       (unsigned long long)attr.hca_core_clock,
	       (unsigned long long)attr.completion_timestamp_mask);
	t0 = clock_ns(CLOCK_MONOTONIC_RAW);
	c = core_clock(ctx);
	t1 = clock_ns(CLOCK_MONOTONIC_RAW);
	c2 = core_clock(ctx);
	result(c >= t0 && c <= t1 && c2 >= c,
	       "query_rt_values_ex: the core clock is CLOCK_MONOTONIC_RAW",
	       "%llu, then %llu, not in [%llu, %llu]", (unsigned long long)c,
	       (unsigned long long)c2, (unsigned long long)t0,
	       (unsigned long long)t1);
	ret = ibv_query_rt_values_ex(ctx, &bad);
	result(ret == EINVAL, "query_rt_values_ex: an unknown bit: EINVAL",
	       "ret %d", ret);
}

/*
 * The times of @n completions of @e, in the order read: between @t0 and
 * @t1, none before the one read before it.
 */
static void check_times(const struct end *e, const struct cqe *c, int n,
			struct times t0, struct times t1, const char *what)
{
	uint64_t ts = t0.core, wall = t0.wall;
	char name[128];
	int i;

	for (i = 0; i < n; i++) {
		if (c[i].ts < ts || c[i].ts > t1.core ||
		    c[i].wallclock < wall || c[i].wallclock > t1.wall)
			break;
		ts = c[i].ts;
		wall = c[i].wallclock;
	}
	snprintf(name, sizeof(name),
		 "%s: %s: %d completion times in order, in the window",
		 e->name, what, n);
	result(n && i == n, name,
	       "completion %d: core %llu in [%llu, %llu], wall %llu in "
	       "[%llu, %llu]", i,
	       (unsigned long long)(i < n ? c[i].ts : 0),
	       (unsigned long long)ts, (unsigned long long)t1.core,
	       (unsigned long long)(i < n ? c[i].wallclock : 0),
	       (unsigned long long)wall, (unsigned long long)t1.wall);
}

/* ---- setup ---- */

static void to_rts_ud(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = QKEY };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		fatal("UD QP to INIT", errno);
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		fatal("UD QP to RTR", errno);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x42;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		fatal("UD QP to RTS", errno);
}

static void open_end(struct end *e, const char *name, int gid_index,
		     uint32_t cq_flags, bool ts)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 64, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS, .flags = cq_flags,
	};
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	struct ibv_port_attr port;

	e->name = name;
	e->gid_index = gid_index;
	e->ctx = open_named(name);
	if (!e->ctx)
		fatal(name, ENODEV);
	if (ibv_query_gid(e->ctx, 1, gid_index, &e->gid) ||
	    ibv_query_port(e->ctx, 1, &port))
		fatal("query the port", errno);
	e->mtu = port.active_mtu;
	e->pd = ibv_alloc_pd(e->ctx);
	e->chan = ibv_create_comp_channel(e->ctx);
	e->buf = calloc(1, BUF_SIZE);
	e->mr = e->pd && e->buf ?
		ibv_reg_mr(e->pd, e->buf, BUF_SIZE,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) :
		NULL;
	if (!e->mr || !e->chan)
		fatal("PD, channel, MR", errno);
	ca.channel = e->chan;
	e->ts = ts;
	if (ts)
		ca.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			       IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	e->cq = ibv_create_cq_ex(e->ctx, &ca);
	result(e->cq != NULL, cq_flags ?
	       "create_cq_ex: standard flags, single-threaded, a channel" :
	       "create_cq_ex: standard flags, both timestamps, a channel",
	       "errno %d", errno);
	if (!e->cq)
		exit(exit_status());
	qa.send_cq = ibv_cq_ex_to_cq(e->cq);
	qa.recv_cq = qa.send_cq;
	qa.qp_type = IBV_QPT_RC;
	e->rc = ibv_create_qp(e->pd, &qa);
	qa.qp_type = IBV_QPT_UD;
	e->ud = ibv_create_qp(e->pd, &qa);
	if (!e->rc || !e->ud)
		fatal("create the RC and UD QPs", errno);
	if (ibv_modify_qp(e->rc, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		fatal("RC QP to INIT", errno);
	to_rts_ud(e->ud);
}

static struct ibv_ah_attr ah_to(const struct end *from, const struct end *to)
{
	return (struct ibv_ah_attr){
		.is_global = 1,
		.grh = { .dgid = to->gid, .sgid_index = from->gid_index,
			 .hop_limit = 64 },
		.port_num = 1,
	};
}

static void connect_rc(struct end *e, const struct end *peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = e->mtu,
		.dest_qp_num = peer->rc->qp_num,
		.rq_psn = 0x100,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = ah_to(e, peer),
	};

	if (ibv_modify_qp(e->rc, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		fatal("RC QP to RTR", errno);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x100;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(e->rc, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		fatal("RC QP to RTS", errno);
	a.ah_attr = ah_to(e, peer);
	e->ah = ibv_create_ah(e->pd, &a.ah_attr);
	if (!e->ah)
		fatal("create the AH", errno);
}

static void close_end(struct end *e)
{
	ibv_destroy_ah(e->ah);
	ibv_destroy_qp(e->ud);
	ibv_destroy_qp(e->rc);
	ibv_dereg_mr(e->mr);
	result(!ibv_destroy_cq(ibv_cq_ex_to_cq(e->cq)),
	       "destroy the extended CQ", "errno %d", errno);
	ibv_destroy_comp_channel(e->chan);
	ibv_dealloc_pd(e->pd);
	ibv_close_device(e->ctx);
	free(e->buf);
}

/* ---- posting ---- */

static void post_recv(struct end *e, struct ibv_qp *qp, int m, uint32_t len)
{
	struct ibv_sge sge = {
		(uintptr_t)e->buf + RX_OFF + msg_at[m], len, e->mr->lkey
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id('r', m), .sg_list = &sge,
				  .num_sge = len ? 1 : 0 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad))
		fatal("ibv_post_recv", errno);
}

/* Message m from e: its pattern in e's send half, then the post. */
static void post_send(struct end *e, const struct end *peer, int m)
{
	struct ibv_sge sge = {
		(uintptr_t)e->buf + msg_at[m], msg_len[m], e->mr->lkey
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id('s', m), .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint32_t i;

	for (i = 0; i < msg_len[m]; i++)
		e->buf[msg_at[m] + i] = pat(m, i);
	switch (m) {
	case M_SEND:
		wr.opcode = IBV_WR_SEND;
		break;
	case M_SEND_IMM:
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = htonl(msg_imm[m]);
		break;
	case M_WRITE_IMM:
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = htonl(msg_imm[m]);
		wr.wr.rdma.remote_addr = (uintptr_t)peer->buf + RX_OFF +
					 msg_at[m];
		wr.wr.rdma.rkey = peer->mr->rkey;
		break;
	default:
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		wr.imm_data = htonl(msg_imm[m]);
		wr.wr.ud.ah = e->ah;
		wr.wr.ud.remote_qpn = peer->ud->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
		break;
	}
	if (ibv_post_send(m == M_UD ? e->ud : e->rc, &wr, &bad))
		fatal("ibv_post_send", errno);
}

/* ---- polling through the extended API ---- */

static void read_cur(const struct end *e, struct cqe *c)
{
	struct ibv_cq_ex *cq = e->cq;

	*c = (struct cqe){
		.wr_id = cq->wr_id,
		.status = cq->status,
		.opcode = ibv_wc_read_opcode(cq),
		.wc_flags = ibv_wc_read_wc_flags(cq),
		.byte_len = ibv_wc_read_byte_len(cq),
		.qp_num = ibv_wc_read_qp_num(cq),
		.src_qp = ibv_wc_read_src_qp(cq),
		.slid = ibv_wc_read_slid(cq),
		.sl = ibv_wc_read_sl(cq),
		.dlid_path_bits = ibv_wc_read_dlid_path_bits(cq),
		.vendor_err = ibv_wc_read_vendor_err(cq),
	};
	if (c->wc_flags & IBV_WC_WITH_IMM)
		c->imm = ntohl(ibv_wc_read_imm_data(cq));
	if (e->ts) {
		c->ts = ibv_wc_read_completion_ts(cq);
		c->wallclock = ibv_wc_read_completion_wallclock_ns(cq);
	}
}

/*
 * Reads completions in start_poll / next_poll / end_poll sequences until
 * @n are read (or WAIT_MS pass); each sequence ends where next_poll says
 * ENOENT.  Returns how many it read.
 */
static int poll_ex(struct end *e, struct cqe *out, int n, const char *what)
{
	struct ibv_poll_cq_attr pa = {};
	double end = now_ms() + WAIT_MS;
	int got = 0, seqs = 0, ret = 0;
	char name[128];

	while (got < n && now_ms() < end) {
		ret = ibv_start_poll(e->cq, &pa);
		if (ret == ENOENT) {
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
			continue;
		}
		if (ret)
			break;
		do
			read_cur(e, &out[got++]);
		while (got < MAX_WC && !(ret = ibv_next_poll(e->cq)));
		ibv_end_poll(e->cq);
		seqs++;
		if (ret != ENOENT)
			break;
	}
	printf("# %s: %s: %d completions in %d start_poll sequences\n",
	       e->name, what, got, seqs);
	snprintf(name, sizeof(name), "%s: %s: %d completions read",
		 e->name, what, n);
	result(got == n && ret == ENOENT, name, "%d read, last return %d",
	       got, ret);
	return got;
}

static void check_cqe(const struct end *e, const struct cqe *c,
		      const struct cqe *want, const char *what)
{
	char name[160];

	snprintf(name, sizeof(name), "%s: %s", e->name, what);
	result(c->wr_id == want->wr_id && c->status == want->status &&
	       c->opcode == want->opcode && c->wc_flags == want->wc_flags &&
	       c->qp_num == want->qp_num && c->vendor_err == 0 &&
	       c->slid == 0 && c->sl == 0 && c->dlid_path_bits == 0 &&
	       (want->opcode & IBV_WC_RECV ?
		c->byte_len == want->byte_len && c->src_qp == want->src_qp &&
		c->imm == want->imm : true),
	       name,
	       "wr_id %#llx/%#llx status %d/%d opcode %d/%d wc_flags %#x/%#x "
	       "byte_len %u/%u imm %#x/%#x qp_num %#x/%#x src_qp %#x/%#x "
	       "sl %u slid %u dlid_path_bits %u vendor_err %u",
	       (unsigned long long)c->wr_id, (unsigned long long)want->wr_id,
	       c->status, want->status, c->opcode, want->opcode, c->wc_flags,
	       want->wc_flags, c->byte_len, want->byte_len, c->imm, want->imm,
	       c->qp_num, want->qp_num, c->src_qp, want->src_qp, c->sl,
	       c->slid, c->dlid_path_bits, c->vendor_err);
}

/* The bytes of message m at the receiver, after @skip bytes. */
static void check_bytes(const struct end *rx, int m, uint32_t skip)
{
	const uint8_t *p = rx->buf + RX_OFF + msg_at[m] + skip;
	char name[96];
	uint32_t i;

	for (i = 0; i < msg_len[m] && p[i] == pat(m, i); i++)
		;
	snprintf(name, sizeof(name), "%s: message %d: %u bytes placed",
		 rx->name, m, msg_len[m]);
	result(i == msg_len[m], name, "byte %u differs", i);
}

/* ---- the traffic ---- */

static void test_rc(struct end *a, struct end *b)
{
	static const char *const what[] = {
		"RC SEND", "RC SEND_WITH_IMM", "RC RDMA_WRITE_WITH_IMM",
	};
	static const enum ibv_wc_opcode sop[] = {
		IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE,
	};
	static const enum ibv_wc_opcode rop[] = {
		IBV_WC_RECV, IBV_WC_RECV, IBV_WC_RECV_RDMA_WITH_IMM,
	};
	struct cqe got[MAX_WC], want;
	struct times t0, t1;
	char name[96];
	int m, n;

	/* The WRITE's receive WQE gets no data: it has no SGE. */
	for (m = M_SEND; m <= M_WRITE_IMM; m++)
		post_recv(b, b->rc, m, m == M_WRITE_IMM ? 0 : 4096);
	t0 = times_now(b->ctx);
	for (m = M_SEND; m <= M_WRITE_IMM; m++)
		post_send(a, b, m);

	n = poll_ex(a, got, 3, "RC sends");
	for (m = 0; m < n && m < 3; m++) {
		want = (struct cqe){
			.wr_id = wr_id('s', m), .status = IBV_WC_SUCCESS,
			.opcode = sop[m], .qp_num = a->rc->qp_num,
		};
		snprintf(name, sizeof(name), "%s: send completion", what[m]);
		check_cqe(a, &got[m], &want, name);
	}
	/*
	 * The receives are in b's ring by now (the sends were acknowledged):
	 * a resize moves them, times included, into a ring of its own.
	 */
	result(!ibv_resize_cq(ibv_cq_ex_to_cq(b->cq), 200),
	       "resize the CQ with timestamps, its CQEs outstanding",
	       "errno %d", errno);
	n = poll_ex(b, got, 3, "RC receives");
	t1 = times_now(b->ctx);
	check_times(b, got, n, t0, t1, "RC receives");
	for (m = 0; m < n && m < 3; m++) {
		want = (struct cqe){
			.wr_id = wr_id('r', m), .status = IBV_WC_SUCCESS,
			.opcode = rop[m], .byte_len = msg_len[m],
			.imm = msg_imm[m], .qp_num = b->rc->qp_num,
			.src_qp = a->rc->qp_num,
			.wc_flags = msg_imm[m] ? IBV_WC_WITH_IMM : 0,
		};
		snprintf(name, sizeof(name), "%s: receive completion",
			 what[m]);
		check_cqe(b, &got[m], &want, name);
		check_bytes(b, m, 0);
	}
}

/* b's CQ armed, the UD datagram, its event; a's completion by poll_cq. */
static void test_ud(struct end *a, struct end *b)
{
	struct pollfd pfd = { .fd = b->chan->fd, .events = POLLIN };
	struct ibv_cq *ev_cq = NULL;
	struct cqe got[MAX_WC], want;
	void *ev_ctx;
	struct ibv_wc wc;
	double end;
	int n = 0, r;

	post_recv(b, b->ud, M_UD, GRH_LEN + msg_len[M_UD]);
	result(!ibv_req_notify_cq(ibv_cq_ex_to_cq(b->cq), 0),
	       "req_notify_cq through ibv_cq_ex_to_cq()", "errno %d", errno);
	post_send(a, b, M_UD);

	r = poll(&pfd, 1, WAIT_MS);
	result(r == 1 && !ibv_get_cq_event(b->chan, &ev_cq, &ev_ctx) &&
	       ev_cq == ibv_cq_ex_to_cq(b->cq),
	       "UD: the armed extended CQ's completion event", "poll %d", r);
	if (ev_cq)
		ibv_ack_cq_events(ev_cq, 1);

	n = poll_ex(b, got, 1, "UD receive");
	want = (struct cqe){
		.wr_id = wr_id('r', M_UD), .status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_RECV, .byte_len = GRH_LEN + msg_len[M_UD],
		.imm = msg_imm[M_UD], .qp_num = b->ud->qp_num,
		.src_qp = a->ud->qp_num,
		.wc_flags = IBV_WC_WITH_IMM | IBV_WC_GRH,
	};
	if (n) {
		check_cqe(b, &got[0], &want, "UD SEND_WITH_IMM: receive completion");
		check_bytes(b, M_UD, GRH_LEN);
	}

	for (end = now_ms() + WAIT_MS, n = 0; !n && now_ms() < end;)
		n = ibv_poll_cq(ibv_cq_ex_to_cq(a->cq), 1, &wc);
	result(n == 1 && wc.wr_id == wr_id('s', M_UD) &&
	       wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND &&
	       wc.qp_num == a->ud->qp_num,
	       "UD send completion by ibv_poll_cq on ibv_cq_ex_to_cq()",
	       "n %d, wr_id %#llx, status %d", n,
	       (unsigned long long)wc.wr_id, wc.status);
}

static void test_empty(struct end *e)
{
	struct ibv_poll_cq_attr pa = {}, bad = { .comp_mask = 1 };
	int r1 = ibv_start_poll(e->cq, &pa);
	int r2 = ibv_start_poll(e->cq, &bad);
	char name[96];

	snprintf(name, sizeof(name),
		 "%s: start_poll on an empty CQ: ENOENT (twice: no lock held)",
		 e->name);
	result(r1 == ENOENT && ibv_start_poll(e->cq, &pa) == ENOENT, name,
	       "returned %d", r1);
	snprintf(name, sizeof(name),
		 "%s: start_poll with an unknown comp_mask: EINVAL", e->name);
	result(r2 == EINVAL, name, "returned %d", r2);
}

int main(int argc, char **argv)
{
	struct end a = {}, b = {};

	if (argc != 5) {
		fprintf(stderr, "usage: %s DEV0 GID0 DEV1 GID1\n", argv[0]);
		return 2;
	}
	open_end(&a, argv[1], atoi(argv[2]),
		 IBV_CREATE_CQ_ATTR_SINGLE_THREADED, false);
	open_end(&b, argv[3], atoi(argv[4]), 0, true);
	test_refused(a.ctx);
	test_clock(b.ctx);
	connect_rc(&a, &b);
	connect_rc(&b, &a);
	test_empty(&a);
	test_empty(&b);
	test_rc(&a, &b);
	test_ud(&a, &b);
	test_empty(&a);
	test_empty(&b);
	close_end(&a);
	close_end(&b);
	return exit_status();
}
