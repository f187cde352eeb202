// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_rdma: the RC data path between two ports, every byte verified.
 *
 *   vhca_rdma server DEVICE GID_INDEX TCP_PORT
 *   vhca_rdma client DEVICE GID_INDEX SERVER_IPV4 TCP_PORT [TEST...]
 *   vhca_rdma list
 *
 * The server listens on the IPv4 address of its GID (a RoCE v2 GID of port
 * 1, so a loopback or veth address) and serves one client.  The client runs
 * the tests (all of them, or those named, in the order given); for each it
 * tells the server which, and both create a fresh CQ and RC QP and exchange
 * QPN, PSN, GID and the server's MRs over TCP before connecting the QPs, so
 * a test that leaves a QP in the error state does not disturb the next.
 * The data are a pattern of a per-test seed and the byte's index in its
 * message; destination buffers start out filled with CANARY, and what the
 * operation must not touch has to keep it.
 *
 * The server's memory regions:
 *   rbuf    receive buffers, LOCAL_WRITE;
 *   MR_RW   RW_LEN bytes at wbuf + RW_OFF, LOCAL_WRITE | REMOTE_WRITE (what
 *           rdma_reg_write asks for); wbuf is larger, to see stray writes;
 *   MR_RD   RD_LEN bytes of pattern SEED_RD, REMOTE_READ only;
 *   MR_NOWR NOWR_LEN bytes, LOCAL_WRITE | REMOTE_READ: no remote write.
 *
 * Every check prints one KTAP result line (ktap.h) on the side that can
 * see it; lines starting with '#' are information.  Each side exits with its
 * number of failures (at most 255).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "vhca_test.h"

#define PORT		1
#define PAGE		4096u
#define MIB		(1u << 20)
#define CANARY		0xa5
#define WC_WAIT_MS	120000	/* a completion that should come (slow debug kernels) */
#define QUIET_MS	1000	/* a completion that should not come */
#define CTL_WAIT_MS	120000	/* a control message */

#define RBUF_SIZE	(2 * MIB + 64 * 1024)
#define RW_OFF		64u
#define RW_LEN		(MIB + 1000u)
#define WBUF_SIZE	(RW_OFF + RW_LEN + PAGE)
#define RD_LEN		(512u * 1024 + 333)
#define NOWR_LEN	PAGE
#define CBUF_SIZE	(4 * MIB)

#define SEED_RD		0x5eed0001u


/* A setup failure: nothing further can be tested. */
static void __attribute__((noreturn)) fatal(const char *what, int err)
{
	result(false, what, "%s", strerror(err ? err : EIO));
	exit(exit_status());
}

/* Byte @i of the message of pattern @seed. */
static uint8_t pat(uint32_t seed, uint64_t i)
{
	uint32_t x = (uint32_t)i * 0x9e3779b1u + seed * 0x85ebca77u +
		     (uint32_t)(i >> 32);

	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	return x;
}

/* ---- scatter/gather layouts ---- */

/* A piece of a message: @len bytes at @off of some buffer. */
struct span {
	uint32_t off, len;
};

/* Writes pattern @seed, from byte @first on, across the spans of @buf. */
static void fill_spans(uint8_t *buf, const struct span *sp, int n,
		       uint32_t seed, uint64_t first)
{
	uint64_t k = first;
	uint32_t j;
	int i;

	for (i = 0; i < n; i++)
		for (j = 0; j < sp[i].len; j++)
			buf[sp[i].off + j] = pat(seed, k++);
}

static void make_sges(struct ibv_sge *sge, const uint8_t *buf, uint32_t lkey,
		      const struct span *sp, int n)
{
	int i;

	for (i = 0; i < n; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)buf + sp[i].off,
					   sp[i].len, lkey };
}

/*
 * @buf[0, @size) must hold bytes @first .. @first + @len - 1 of pattern
 * @seed scattered over the spans in order, and CANARY everywhere else.
 * On a mismatch, describes the first one and the count in @msg.
 */
static bool check_region(const uint8_t *buf, size_t size,
			 const struct span *sp, int n, uint32_t seed,
			 uint64_t first, uint32_t len, char *msg,
			 size_t msize)
{
	uint8_t *want = malloc(size);
	size_t bad = 0, first_bad = 0, o;
	uint32_t left = len, j;
	uint64_t k = first;
	int i;

	if (!want) {
		snprintf(msg, msize, "out of memory");
		return false;
	}
	memset(want, CANARY, size);
	for (i = 0; i < n && left; i++)
		for (j = 0; j < sp[i].len && left; j++, left--)
			want[sp[i].off + j] = pat(seed, k++);
	for (o = 0; o < size; o++) {
		if (buf[o] == want[o])
			continue;
		if (!bad++)
			first_bad = o;
	}
	if (bad) {
		const char *where = "outside the data";
		uint32_t at = 0;

		for (i = 0; i < n; i++) {
			if (first_bad >= sp[i].off &&
			    first_bad < sp[i].off + sp[i].len) {
				where = "in SGE";
				at = i;
				break;
			}
		}
		snprintf(msg, msize, "%zu of %zu bytes wrong; first at offset "
			 "%zu (%s %u): %#04x, expected %#04x", bad, size,
			 first_bad, where, at, buf[first_bad],
			 want[first_bad]);
	}
	free(want);
	return !bad;
}

/* ---- control channel: fixed records, big-endian on the wire ---- */

enum ctl_type { CTL_TEST = 1, CTL_INFO, CTL_READY, CTL_DONE, CTL_QUIT };
enum { MR_RW, MR_RD, MR_NOWR, NUM_RMR };

static const char *const ctl_names[] = {
	[CTL_TEST] = "TEST", [CTL_INFO] = "INFO", [CTL_READY] = "READY",
	[CTL_DONE] = "DONE", [CTL_QUIT] = "QUIT",
};

struct ctl {
	uint32_t type, arg, qpn, psn;
	union ibv_gid gid;
	uint64_t addr[NUM_RMR];
	uint32_t rkey[NUM_RMR], len[NUM_RMR];
};

struct wire {
	uint32_t type, arg, qpn, psn;
	uint8_t gid[16];
	uint64_t addr[NUM_RMR];
	uint32_t rkey[NUM_RMR], len[NUM_RMR];
} __attribute__((packed));

static void send_ctl(int fd, const struct ctl *c)
{
	struct wire w = {
		.type = htobe32(c->type), .arg = htobe32(c->arg),
		.qpn = htobe32(c->qpn), .psn = htobe32(c->psn),
	};
	const char *p = (const char *)&w;
	size_t left = sizeof(w);
	ssize_t n;
	int i;

	memcpy(w.gid, c->gid.raw, sizeof(w.gid));
	for (i = 0; i < NUM_RMR; i++) {
		w.addr[i] = htobe64(c->addr[i]);
		w.rkey[i] = htobe32(c->rkey[i]);
		w.len[i] = htobe32(c->len[i]);
	}
	while (left) {
		n = send(fd, p, left, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fatal("control channel: send", errno);
		p += n;
		left -= n;
	}
}

/*
 * Receives a record of type @want; false on an orderly close before one
 * (only when @eof_ok), fatal otherwise.
 */
static bool recv_ctl(int fd, struct ctl *c, uint32_t want, bool eof_ok)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct wire w;
	char *p = (char *)&w, msg[96];
	size_t got = 0;
	ssize_t n;
	int i;

	while (got < sizeof(w)) {
		if (poll(&pfd, 1, CTL_WAIT_MS) != 1)
			fatal("control channel: peer silent", ETIMEDOUT);
		n = recv(fd, p + got, sizeof(w) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && !got && eof_ok)
			return false;
		if (n <= 0)
			fatal("control channel: closed early", n ? errno :
			      ECONNRESET);
		got += n;
	}
	c->type = be32toh(w.type);
	c->arg = be32toh(w.arg);
	c->qpn = be32toh(w.qpn);
	c->psn = be32toh(w.psn);
	memcpy(c->gid.raw, w.gid, sizeof(w.gid));
	for (i = 0; i < NUM_RMR; i++) {
		c->addr[i] = be64toh(w.addr[i]);
		c->rkey[i] = be32toh(w.rkey[i]);
		c->len[i] = be32toh(w.len[i]);
	}
	if (c->type == want)
		return true;
	if (want == CTL_TEST && c->type == CTL_QUIT)
		return false;
	snprintf(msg, sizeof(msg), "control channel: got %s, expected %s",
		 c->type < CTL_QUIT + 1 && c->type ? ctl_names[c->type] : "?",
		 ctl_names[want]);
	fatal(msg, EPROTO);
}

static void send_simple(int fd, uint32_t type, uint32_t arg)
{
	struct ctl c = { .type = type, .arg = arg };

	send_ctl(fd, &c);
}

/* ---- device, sessions (one CQ and RC QP per test) ---- */

struct env {
	bool server;
	int fd;				/* the control connection */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_port_attr port;
	union ibv_gid gid;
	int gid_index;

	/* client */
	uint8_t *cbuf;
	struct ibv_mr *cmr;

	/* server */
	uint8_t *rbuf, *wbuf, *rdbuf, *nwbuf;
	struct ibv_mr *rmr, *mr[NUM_RMR];
};

struct session {
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint32_t psn;
	struct ctl peer;		/* the peer's INFO */
};

static void session_open(struct env *e, struct session *s)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 4, .max_recv_sge = 4 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = PORT,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	int ret;

	s->ch = ibv_create_comp_channel(e->ctx);
	if (!s->ch)
		fatal("session: create completion channel", errno);
	s->cq = ibv_create_cq(e->ctx, 64, NULL, s->ch, 0);
	if (!s->cq)
		fatal("session: create CQ", errno);
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(e->pd, &ia);
	if (!s->qp)
		fatal("session: create RC QP", errno);
	ret = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		fatal("session: QP RESET -> INIT", ret);
	s->psn = lrand48() & 0xffffff;
}

/* RTR towards the peer of s->peer, then RTS. */
static void session_connect(struct env *e, struct session *s)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = e->port.active_mtu,
		.dest_qp_num = s->peer.qpn,
		.rq_psn = s->peer.psn,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.grh = { .dgid = s->peer.gid,
				 .sgid_index = e->gid_index, .hop_limit = 64 },
			.port_num = PORT,
		},
	};
	int ret;

	ret = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (ret)
		fatal("session: QP INIT -> RTR", ret);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = s->psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	ret = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	if (ret)
		fatal("session: QP RTR -> RTS", ret);
}

static void session_info(const struct env *e, const struct session *s,
			 struct ctl *c)
{
	int i;

	*c = (struct ctl){ .type = CTL_INFO, .qpn = s->qp->qp_num,
			   .psn = s->psn, .gid = e->gid };
	for (i = 0; e->server && i < NUM_RMR; i++) {
		c->addr[i] = (uintptr_t)e->mr[i]->addr;
		c->rkey[i] = e->mr[i]->rkey;
		c->len[i] = e->mr[i]->length;
	}
}

static void session_close(struct session *s)
{
	int ret;

	ret = ibv_destroy_qp(s->qp);
	if (ret)
		fatal("session: destroy QP", ret);
	ret = ibv_destroy_cq(s->cq);
	if (ret)
		fatal("session: destroy CQ", ret);
	ret = ibv_destroy_comp_channel(s->ch);
	if (ret)
		fatal("session: destroy completion channel", ret);
}

/*
 * Waits up to @ms for @n completions into @wc; returns how many came.
 * Sleeps on the completion channel, and polls anyway every 50 ms.
 */
static int wait_wc(struct session *s, struct ibv_wc *wc, int n, int ms)
{
	struct pollfd pfd = { .fd = s->ch->fd, .events = POLLIN };
	double end = now_ms() + ms;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int got = 0, k;

	for (;;) {
		k = ibv_poll_cq(s->cq, n - got, wc + got);
		if (k < 0)
			fatal("ibv_poll_cq", EIO);
		got += k;
		if (got == n || now_ms() >= end)
			return got;
		if (k)
			continue;
		if (ibv_req_notify_cq(s->cq, 0))
			fatal("ibv_req_notify_cq", errno);
		k = ibv_poll_cq(s->cq, n - got, wc + got);
		if (k < 0)
			fatal("ibv_poll_cq", EIO);
		got += k;
		if (got == n)
			return got;
		if (!k && poll(&pfd, 1, 50) == 1 &&
		    !ibv_get_cq_event(s->ch, &ev_cq, &ev_ctx))
			ibv_ack_cq_events(ev_cq, 1);
	}
}

static const char *opcode_str(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	default: return "other";
	}
}

static void describe_wc(const struct ibv_wc *wc, char *msg, size_t size)
{
	snprintf(msg, size, "wr_id %llu, status %s (%d), opcode %s (%d), "
		 "byte_len %u, wc_flags %#x, imm_data %#x",
		 (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status),
		 wc->status, opcode_str(wc->opcode), wc->opcode, wc->byte_len,
		 wc->wc_flags, be32toh(wc->imm_data));
}

/*
 * Waits for one completion that must be @wr_id with @status; and, when the
 * status is success, opcode @op and, if @len >= 0, byte_len @len.
 */
static bool expect_wc(struct session *s, const char *what, uint64_t wr_id,
		      enum ibv_wc_status status, enum ibv_wc_opcode op,
		      long long len)
{
	struct ibv_wc wc;
	char msg[200];
	bool ok;

	if (wait_wc(s, &wc, 1, WC_WAIT_MS) != 1) {
		result(false, what, "no completion in %d s (expected %s)",
		       WC_WAIT_MS / 1000, ibv_wc_status_str(status));
		return false;
	}
	ok = wc.wr_id == wr_id && wc.status == status;
	if (ok && status == IBV_WC_SUCCESS)
		ok = wc.opcode == op && (len < 0 || wc.byte_len == len);
	describe_wc(&wc, msg, sizeof(msg));
	result(ok, what, "%s; expected wr_id %llu, %s", msg,
	       (unsigned long long)wr_id, ibv_wc_status_str(status));
	return ok;
}

/* Nothing may complete successfully within QUIET_MS. */
static void expect_no_success(struct session *s, const char *what)
{
	struct ibv_wc wc;
	char msg[200];
	int n = wait_wc(s, &wc, 1, QUIET_MS);

	if (n)
		describe_wc(&wc, msg, sizeof(msg));
	result(!n || wc.status != IBV_WC_SUCCESS, what, "%s",
	       n ? msg : "");
}

static bool post_send(struct session *s, const char *what, uint64_t wr_id,
		      enum ibv_wr_opcode op, struct ibv_sge *sge, int nsge,
		      uint32_t imm, uint64_t raddr, uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = sge, .num_sge = nsge,
		.opcode = op, .send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32(imm),
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	int ret = ibv_post_send(s->qp, &wr, &bad);

	if (ret)
		result(false, what, "ibv_post_send returned %d (%s)", ret,
		       strerror(ret));
	return !ret;
}

static void post_recv(struct session *s, uint64_t wr_id, struct ibv_sge *sge,
		      int nsge)
{
	struct ibv_recv_wr wr = {
		.wr_id = wr_id, .sg_list = sge, .num_sge = nsge,
	}, *bad;
	int ret = ibv_post_recv(s->qp, &wr, &bad);

	if (ret)
		fatal("ibv_post_recv", ret);
}

/* A receive of one SGE: @len bytes at rbuf + @off. */
static void post_recv1(struct env *e, struct session *s, uint64_t wr_id,
		       uint32_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)e->rbuf + off, len, e->rmr->lkey };

	post_recv(s, wr_id, &sge, 1);
}

/* Checks @buf[0, @size) as check_region does, as a result line. */
static void verify(const char *what, const uint8_t *buf, size_t size,
		   const struct span *sp, int n, uint32_t seed, uint64_t first,
		   uint32_t len)
{
	char msg[200];
	bool ok = check_region(buf, size, sp, n, seed, first, len, msg,
			       sizeof(msg));

	result(ok, what, "%s", msg);
}

/* ---- the tests ---- */

/*
 * The receive of test "sge": 4 SGEs out of address order, the first three
 * crossing page boundaries, in a region of SGE_REGION bytes of rbuf.
 */
#define SGE_REGION	(64u * 1024)
static const struct span sge_recv[] = {
	{ 3 * PAGE - 50, 100 }, { 1, PAGE + 7 }, { 20000, 1 },
	{ 6 * PAGE - 2000, 10000 },
};
#define SGE_FULL	(100u + PAGE + 7 + 1 + 10000)
#define SGE_SHORT	(SGE_FULL - 5000)
/* The sends gather from the client's buffer. */
static const struct span sge_send_full[] = {
	{ 100, 5000 }, { 8000, 1 }, { 3 * PAGE - 7, SGE_FULL - 5001 },
};
static const struct span sge_send_short[] = {
	{ 40000, PAGE }, { 50000, SGE_SHORT - PAGE },
};
#define SEED_SGE1	101
#define SEED_SGE2	102

static void sge_server_prep(struct env *e, struct session *s)
{
	struct ibv_sge sge[4];
	int i;

	for (i = 0; i < 2; i++) {
		make_sges(sge, e->rbuf + i * SGE_REGION, e->rmr->lkey,
			  sge_recv, 4);
		post_recv(s, i + 1, sge, 4);
	}
}

static void sge_server_check(struct env *e, struct session *s)
{
	expect_wc(s, "sge: receive into 4 SGEs, message fills them exactly: "
		  "RECV, byte_len 14204", 1, IBV_WC_SUCCESS, IBV_WC_RECV,
		  SGE_FULL);
	verify("sge: full message: every byte in its SGE, in order; "
	       "nothing else touched", e->rbuf, SGE_REGION, sge_recv, 4,
	       SEED_SGE1, 0, SGE_FULL);
	expect_wc(s, "sge: receive into 4 SGEs, shorter message: RECV, "
		  "byte_len 9204", 2, IBV_WC_SUCCESS, IBV_WC_RECV, SGE_SHORT);
	verify("sge: short message: every byte in its SGE, in order; the "
	       "rest untouched", e->rbuf + SGE_REGION, SGE_REGION, sge_recv,
	       4, SEED_SGE2, 0, SGE_SHORT);
}

static void sge_client(struct env *e, struct session *s)
{
	struct ibv_sge full[3], shrt[2];

	fill_spans(e->cbuf, sge_send_full, 3, SEED_SGE1, 0);
	fill_spans(e->cbuf, sge_send_short, 2, SEED_SGE2, 0);
	make_sges(full, e->cbuf, e->cmr->lkey, sge_send_full, 3);
	make_sges(shrt, e->cbuf, e->cmr->lkey, sge_send_short, 2);
	if (post_send(s, "sge: post SEND of 14204 bytes from 3 SGEs", 1,
		      IBV_WR_SEND, full, 3, 0, 0, 0))
		expect_wc(s, "sge: SEND of 14204 bytes gathered from 3 SGEs "
			  "completes", 1, IBV_WC_SUCCESS, IBV_WC_SEND, -1);
	if (post_send(s, "sge: post SEND of 9204 bytes from 2 SGEs", 2,
		      IBV_WR_SEND, shrt, 2, 0, 0, 0))
		expect_wc(s, "sge: SEND of 9204 bytes gathered from 2 SGEs "
			  "completes", 2, IBV_WC_SUCCESS, IBV_WC_SEND, -1);
}

#define IMM1		0xc0ffee01u
#define IMM2		0x80000002u
#define IMM_LEN		200u
#define SEED_IMM	201

/* Waits for a receive with immediate data and checks all its fields. */
static void expect_imm(struct session *s, const char *what, uint64_t wr_id,
		       enum ibv_wc_opcode op, uint32_t imm, uint32_t len)
{
	struct ibv_wc wc;
	char msg[200];

	if (wait_wc(s, &wc, 1, WC_WAIT_MS) != 1) {
		result(false, what, "no completion in %d s", WC_WAIT_MS / 1000);
		return;
	}
	describe_wc(&wc, msg, sizeof(msg));
	result(wc.wr_id == wr_id && wc.status == IBV_WC_SUCCESS &&
	       wc.opcode == op && (wc.wc_flags & IBV_WC_WITH_IMM) &&
	       wc.imm_data == htobe32(imm) && wc.byte_len == len, what,
	       "%s; expected wr_id %llu, %s, %s, IBV_WC_WITH_IMM, imm_data "
	       "%#x, byte_len %u", msg, (unsigned long long)wr_id,
	       ibv_wc_status_str(IBV_WC_SUCCESS), opcode_str(op), imm, len);
}

static void imm_server_prep(struct env *e, struct session *s)
{
	post_recv1(e, s, 1, 0, 256);
	post_recv1(e, s, 2, PAGE, 256);
}

static void imm_server_check(struct env *e, struct session *s)
{
	static const struct span one = { 0, 256 };

	expect_imm(s, "imm: SEND_WITH_IMM of 200 bytes: RECV, WITH_IMM, "
		   "imm_data, byte_len", 1, IBV_WC_RECV, IMM1, IMM_LEN);
	verify("imm: the 200 bytes received", e->rbuf, PAGE, &one, 1,
	       SEED_IMM, 0, IMM_LEN);
	expect_imm(s, "imm: SEND_WITH_IMM of 0 bytes: RECV, WITH_IMM, "
		   "imm_data, byte_len 0", 2, IBV_WC_RECV, IMM2, 0);
	verify("imm: 0 bytes: the receive buffer untouched", e->rbuf + PAGE,
	       PAGE, &one, 1, SEED_IMM, 0, 0);
}

static void imm_client(struct env *e, struct session *s)
{
	static const struct span sp = { 7, IMM_LEN };
	struct ibv_sge sge;

	fill_spans(e->cbuf, &sp, 1, SEED_IMM, 0);
	make_sges(&sge, e->cbuf, e->cmr->lkey, &sp, 1);
	if (post_send(s, "imm: post SEND_WITH_IMM", 1, IBV_WR_SEND_WITH_IMM,
		      &sge, 1, IMM1, 0, 0))
		expect_wc(s, "imm: SEND_WITH_IMM of 200 bytes completes", 1,
			  IBV_WC_SUCCESS, IBV_WC_SEND, -1);
	if (post_send(s, "imm: post SEND_WITH_IMM of 0 bytes", 2,
		      IBV_WR_SEND_WITH_IMM, NULL, 0, IMM2, 0, 0))
		expect_wc(s, "imm: SEND_WITH_IMM of 0 bytes completes", 2,
			  IBV_WC_SUCCESS, IBV_WC_SEND, -1);
}

/* 1 MiB SEND into one SGE at an odd offset of rbuf. */
#define BIG_RECV_OFF	(PAGE + 5)
#define SEED_BIG_SEND	301

static void send1m_server_prep(struct env *e, struct session *s)
{
	post_recv1(e, s, 1, BIG_RECV_OFF, MIB);
}

static void send1m_server_check(struct env *e, struct session *s)
{
	static const struct span sp = { BIG_RECV_OFF, MIB };

	expect_wc(s, "send-1m: receive of a 1 MiB SEND: RECV, byte_len "
		  "1048576", 1, IBV_WC_SUCCESS, IBV_WC_RECV, MIB);
	verify("send-1m: 1 MiB received, byte by byte, nothing else touched",
	       e->rbuf, RBUF_SIZE, &sp, 1, SEED_BIG_SEND, 0, MIB);
}

static void send1m_client(struct env *e, struct session *s)
{
	static const struct span sp = { 3, MIB };
	struct ibv_sge sge;

	fill_spans(e->cbuf, &sp, 1, SEED_BIG_SEND, 0);
	make_sges(&sge, e->cbuf, e->cmr->lkey, &sp, 1);
	if (post_send(s, "send-1m: post SEND of 1 MiB", 1, IBV_WR_SEND, &sge,
		      1, 0, 0, 0))
		expect_wc(s, "send-1m: SEND of 1 MiB completes", 1,
			  IBV_WC_SUCCESS, IBV_WC_SEND, -1);
}

/* 1 MiB RDMA WRITE to the start of MR_RW, then a SEND to say so. */
#define SEED_BIG_WRITE	401
#define SEED_NOTE	402
#define NOTE_LEN	8u

static void write1m_server_prep(struct env *e, struct session *s)
{
	post_recv1(e, s, 1, 0, 64);
}

static void write1m_server_check(struct env *e, struct session *s)
{
	static const struct span sp = { RW_OFF, MIB }, note = { 0, 64 };

	expect_wc(s, "write-1m: the notification SEND after the WRITE "
		  "arrives", 1, IBV_WC_SUCCESS, IBV_WC_RECV, NOTE_LEN);
	verify("write-1m: the notification's bytes", e->rbuf, 64, &note, 1,
	       SEED_NOTE, 0, NOTE_LEN);
	verify("write-1m: 1 MiB written into the REMOTE_WRITE MR, byte by "
	       "byte, nothing else touched", e->wbuf, WBUF_SIZE, &sp, 1,
	       SEED_BIG_WRITE, 0, MIB);
}

static void write1m_client(struct env *e, struct session *s)
{
	static const struct span sp = { 11, MIB }, note = { 2 * MIB, NOTE_LEN };
	struct ibv_sge sge, nsge;

	fill_spans(e->cbuf, &sp, 1, SEED_BIG_WRITE, 0);
	fill_spans(e->cbuf, &note, 1, SEED_NOTE, 0);
	make_sges(&sge, e->cbuf, e->cmr->lkey, &sp, 1);
	make_sges(&nsge, e->cbuf, e->cmr->lkey, &note, 1);
	if (post_send(s, "write-1m: post RDMA WRITE of 1 MiB", 1,
		      IBV_WR_RDMA_WRITE, &sge, 1, 0, s->peer.addr[MR_RW],
		      s->peer.rkey[MR_RW]) &&
	    post_send(s, "write-1m: post the notification SEND", 2,
		      IBV_WR_SEND, &nsge, 1, 0, 0, 0)) {
		expect_wc(s, "write-1m: RDMA WRITE of 1 MiB completes", 1,
			  IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1);
		expect_wc(s, "write-1m: the notification SEND completes", 2,
			  IBV_WC_SUCCESS, IBV_WC_SEND, -1);
	}
}

/* RDMA WRITE_WITH_IMM at an odd offset of MR_RW: consumes a receive. */
#define WIMM_OFF	4093u
#define WIMM_LEN	(64u * 1024 + 123)
#define WIMM_IMM	0x5eed0003u
#define SEED_WIMM	501

static void wimm_server_prep(struct env *e, struct session *s)
{
	post_recv1(e, s, 1, 0, 16);
}

static void wimm_server_check(struct env *e, struct session *s)
{
	static const struct span sp = { RW_OFF + WIMM_OFF, WIMM_LEN },
		rsp = { 0, 16 };

	expect_imm(s, "write-imm: RDMA_WRITE_WITH_IMM: RECV_RDMA_WITH_IMM, "
		   "WITH_IMM, imm_data, byte_len = the write's length", 1,
		   IBV_WC_RECV_RDMA_WITH_IMM, WIMM_IMM, WIMM_LEN);
	verify("write-imm: 65659 bytes written at offset 4093 of the "
	       "REMOTE_WRITE MR, nothing else touched", e->wbuf, WBUF_SIZE,
	       &sp, 1, SEED_WIMM, 0, WIMM_LEN);
	verify("write-imm: the consumed receive's buffer untouched", e->rbuf,
	       PAGE, &rsp, 1, SEED_WIMM, 0, 0);
}

static void wimm_client(struct env *e, struct session *s)
{
	static const struct span sp = { 999, WIMM_LEN };
	struct ibv_sge sge;

	fill_spans(e->cbuf, &sp, 1, SEED_WIMM, 0);
	make_sges(&sge, e->cbuf, e->cmr->lkey, &sp, 1);
	if (post_send(s, "write-imm: post RDMA_WRITE_WITH_IMM", 1,
		      IBV_WR_RDMA_WRITE_WITH_IMM, &sge, 1, WIMM_IMM,
		      s->peer.addr[MR_RW] + WIMM_OFF, s->peer.rkey[MR_RW]))
		expect_wc(s, "write-imm: RDMA_WRITE_WITH_IMM completes", 1,
			  IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1);
}

/* RDMA READ of all of MR_RD into 4 SGEs, and a part into one. */
#define READ_REGION	MIB
static const struct span read_sges[] = {
	{ 300000, 1000 }, { PAGE - 10, 200000 }, { 250000, 7 },
	{ 400000, RD_LEN - 201007 },
};
#define READ2_OFF	777u
#define READ2_LEN	5000u

static void read_server_check(struct env *e, struct session *s)
{
	static const struct span sp = { 0, RD_LEN };

	(void)s;
	verify("read: the REMOTE_READ MR is unchanged", e->rdbuf, RD_LEN, &sp,
	       1, SEED_RD, 0, RD_LEN);
}

static void read_client(struct env *e, struct session *s)
{
	static const struct span sp2 = { 7, READ2_LEN };
	uint8_t *b2 = e->cbuf + READ_REGION;
	struct ibv_sge sge[4], sge2;

	memset(e->cbuf, CANARY, READ_REGION + PAGE * 4);
	make_sges(sge, e->cbuf, e->cmr->lkey, read_sges, 4);
	make_sges(&sge2, b2, e->cmr->lkey, &sp2, 1);
	if (post_send(s, "read: post RDMA READ of the whole MR", 1,
		      IBV_WR_RDMA_READ, sge, 4, 0, s->peer.addr[MR_RD],
		      s->peer.rkey[MR_RD]) &&
	    post_send(s, "read: post RDMA READ of 5000 bytes at offset 777", 2,
		      IBV_WR_RDMA_READ, &sge2, 1, 0,
		      s->peer.addr[MR_RD] + READ2_OFF, s->peer.rkey[MR_RD])) {
		expect_wc(s, "read: RDMA READ of 524621 bytes into 4 SGEs "
			  "completes, byte_len", 1, IBV_WC_SUCCESS,
			  IBV_WC_RDMA_READ, RD_LEN);
		expect_wc(s, "read: RDMA READ of 5000 bytes completes, "
			  "byte_len", 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ,
			  READ2_LEN);
	}
	verify("read: 524621 bytes scattered over 4 SGEs in order, nothing "
	       "else touched", e->cbuf, READ_REGION, read_sges, 4, SEED_RD, 0,
	       RD_LEN);
	verify("read: 5000 bytes from offset 777, nothing else touched", b2,
	       PAGE * 4, &sp2, 1, SEED_RD, READ2_OFF, READ2_LEN);
}

/* ---- access violations, each on a fresh QP pair ---- */

#define SEED_ERR	901
#define ERR_LEN		64u

/* Posts one operation of ERR_LEN bytes and expects @status. */
static void violate(struct env *e, struct session *s, const char *what,
		    enum ibv_wr_opcode op, uint32_t lkey, uint32_t len,
		    uint64_t raddr, uint32_t rkey, enum ibv_wc_status status)
{
	static const struct span sp = { 0, 256 };
	struct ibv_sge sge = { (uintptr_t)e->cbuf, len, lkey };

	if (op == IBV_WR_RDMA_READ)
		memset(e->cbuf, CANARY, PAGE);
	else
		fill_spans(e->cbuf, &sp, 1, SEED_ERR, 0);
	if (post_send(s, what, 1, op, &sge, 1, 0, raddr, rkey))
		expect_wc(s, what, 1, status, IBV_WC_SEND, -1);
	if (op == IBV_WR_RDMA_READ)
		verify("... and the local buffer is untouched", e->cbuf, PAGE,
		       &sp, 1, SEED_ERR, 0, 0);
}

static void noperm_client(struct env *e, struct session *s)
{
	violate(e, s, "err-write-noperm: WRITE into an MR without "
		"REMOTE_WRITE (LOCAL_WRITE | REMOTE_READ): REM_ACCESS_ERR",
		IBV_WR_RDMA_WRITE, e->cmr->lkey, ERR_LEN,
		s->peer.addr[MR_NOWR], s->peer.rkey[MR_NOWR],
		IBV_WC_REM_ACCESS_ERR);
}

static void noperm_server_check(struct env *e, struct session *s)
{
	static const struct span none = { 0, 0 };

	(void)s;
	verify("err-write-noperm: the MR without REMOTE_WRITE is unchanged",
	       e->nwbuf, NOWR_LEN, &none, 1, 0, 0, 0);
}

/* The server's buffers untouched: MR_RW and its surroundings. */
static void wbuf_server_check(struct env *e, struct session *s)
{
	static const struct span none = { 0, 0 };

	(void)s;
	verify("the REMOTE_WRITE MR and the bytes around it are unchanged",
	       e->wbuf, WBUF_SIZE, &none, 1, 0, 0, 0);
}

static void wrkey_client(struct env *e, struct session *s)
{
	violate(e, s, "err-write-rkey: WRITE with a wrong rkey (the MR's "
		"with its key byte changed): REM_ACCESS_ERR",
		IBV_WR_RDMA_WRITE, e->cmr->lkey, ERR_LEN,
		s->peer.addr[MR_RW], s->peer.rkey[MR_RW] ^ 0x80,
		IBV_WC_REM_ACCESS_ERR);
}

static void wrkey2_client(struct env *e, struct session *s)
{
	violate(e, s, "err-write-rkey2: WRITE with an rkey of no MR: "
		"REM_ACCESS_ERR", IBV_WR_RDMA_WRITE, e->cmr->lkey, ERR_LEN,
		s->peer.addr[MR_RW], s->peer.rkey[MR_RW] ^ 0x7fff00,
		IBV_WC_REM_ACCESS_ERR);
}

static void rrkey_client(struct env *e, struct session *s)
{
	violate(e, s, "err-read-rkey: READ with a wrong rkey (the MR's with "
		"its key byte changed): REM_ACCESS_ERR", IBV_WR_RDMA_READ,
		e->cmr->lkey, ERR_LEN, s->peer.addr[MR_RD],
		s->peer.rkey[MR_RD] ^ 0x80, IBV_WC_REM_ACCESS_ERR);
}

static void woob_client(struct env *e, struct session *s)
{
	violate(e, s, "err-write-oob: WRITE of 16 bytes ending one byte past "
		"the MR's end: REM_ACCESS_ERR", IBV_WR_RDMA_WRITE,
		e->cmr->lkey, 16, s->peer.addr[MR_RW] + s->peer.len[MR_RW] - 15,
		s->peer.rkey[MR_RW], IBV_WC_REM_ACCESS_ERR);
}

static void woob_server_check(struct env *e, struct session *s)
{
	uint8_t past = e->wbuf[RW_OFF + RW_LEN];
	size_t i, inside = 0;

	(void)s;
	result(past == CANARY, "err-write-oob: the byte past the MR's end is "
	       "untouched", "%#04x, was %#04x", past, CANARY);
	for (i = RW_OFF + RW_LEN - 15; i < RW_OFF + RW_LEN; i++)
		inside += e->wbuf[i] != CANARY;
	ktap_diag("err-write-oob: %zu of the 15 bytes inside the MR were "
		  "written", inside);
}

static void roob_client(struct env *e, struct session *s)
{
	violate(e, s, "err-read-oob: READ of 16 bytes ending one byte past "
		"the MR's end: REM_ACCESS_ERR", IBV_WR_RDMA_READ,
		e->cmr->lkey, 16, s->peer.addr[MR_RD] + s->peer.len[MR_RD] - 15,
		s->peer.rkey[MR_RD], IBV_WC_REM_ACCESS_ERR);
}

static void recv256_server_prep(struct env *e, struct session *s)
{
	post_recv1(e, s, 1, 0, 256);
}

static void lkey_client(struct env *e, struct session *s)
{
	violate(e, s, "err-lkey: SEND from an SGE with a wrong lkey: "
		"LOC_PROT_ERR on the sender", IBV_WR_SEND, e->cmr->lkey ^ 0x80,
		ERR_LEN, 0, 0, IBV_WC_LOC_PROT_ERR);
}

static void lkey_server_check(struct env *e, struct session *s)
{
	static const struct span none = { 0, 0 };

	expect_no_success(s, "err-lkey: no receive completes successfully");
	verify("err-lkey: the receive buffer is untouched", e->rbuf, PAGE,
	       &none, 1, 0, 0, 0);
}

#define LEN_RECV	100u
#define LEN_SEND	200u

static void len_server_prep(struct env *e, struct session *s)
{
	post_recv1(e, s, 1, 0, LEN_RECV);
}

static void len_server_check(struct env *e, struct session *s)
{
	static const struct span none = { 0, 0 };
	char msg[200];

	expect_wc(s, "err-len: SEND of 200 bytes into a receive of 100: "
		  "LOC_LEN_ERR on the receiver", 1, IBV_WC_LOC_LEN_ERR,
		  IBV_WC_RECV, -1);
	/* The 100 bytes inside may hold the message's start; nothing past. */
	result(check_region(e->rbuf + LEN_RECV, PAGE - LEN_RECV, &none, 1, 0,
			    0, 0, msg, sizeof(msg)),
	       "err-len: nothing written past the receive buffer", "%s", msg);
}

static void len_client(struct env *e, struct session *s)
{
	violate(e, s, "err-len: SEND of 200 bytes into a receive of 100: "
		"REM_INV_REQ_ERR on the sender", IBV_WR_SEND, e->cmr->lkey,
		LEN_SEND, 0, 0, IBV_WC_REM_INV_REQ_ERR);
}

struct test {
	const char *name;
	void (*client)(struct env *e, struct session *s);
	void (*server_prep)(struct env *e, struct session *s);
	void (*server_check)(struct env *e, struct session *s);
};

static const struct test tests[] = {
	{ "sge", sge_client, sge_server_prep, sge_server_check },
	{ "imm", imm_client, imm_server_prep, imm_server_check },
	{ "send-1m", send1m_client, send1m_server_prep, send1m_server_check },
	{ "write-1m", write1m_client, write1m_server_prep,
	  write1m_server_check },
	{ "write-imm", wimm_client, wimm_server_prep, wimm_server_check },
	{ "read", read_client, NULL, read_server_check },
	{ "err-write-noperm", noperm_client, NULL, noperm_server_check },
	{ "err-write-rkey", wrkey_client, NULL, wbuf_server_check },
	{ "err-write-rkey2", wrkey2_client, NULL, wbuf_server_check },
	{ "err-read-rkey", rrkey_client, NULL, NULL },
	{ "err-write-oob", woob_client, NULL, woob_server_check },
	{ "err-read-oob", roob_client, NULL, NULL },
	{ "err-lkey", lkey_client, recv256_server_prep, lkey_server_check },
	{ "err-len", len_client, len_server_prep, len_server_check },
};
#define NUM_TESTS	(sizeof(tests) / sizeof(tests[0]))

/* ---- the two sides ---- */

static struct ibv_mr *reg(struct env *e, void *addr, size_t len, int access,
			  const char *what)
{
	struct ibv_mr *mr = ibv_reg_mr(e->pd, addr, len, access);

	result(mr, what, "%s", strerror(errno));
	if (!mr)
		exit(exit_status());
	return mr;
}

static void *alloc_buf(size_t size)
{
	void *p = aligned_alloc(PAGE, size);

	if (!p)
		fatal("allocate buffers", ENOMEM);
	memset(p, CANARY, size);
	return p;
}

static void server_setup(struct env *e)
{
	static const struct span sp = { 0, RD_LEN };

	e->rbuf = alloc_buf(RBUF_SIZE);
	e->wbuf = alloc_buf(WBUF_SIZE + PAGE);
	e->rdbuf = alloc_buf(RD_LEN + PAGE);
	e->nwbuf = alloc_buf(NOWR_LEN);
	fill_spans(e->rdbuf, &sp, 1, SEED_RD, 0);
	e->rmr = reg(e, e->rbuf, RBUF_SIZE, IBV_ACCESS_LOCAL_WRITE,
		     "server: register the receive buffers (LOCAL_WRITE)");
	e->mr[MR_RW] = reg(e, e->wbuf + RW_OFF, RW_LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
			   "server: register an MR with LOCAL_WRITE | "
			   "REMOTE_WRITE");
	e->mr[MR_RD] = reg(e, e->rdbuf, RD_LEN, IBV_ACCESS_REMOTE_READ,
			   "server: register an MR with REMOTE_READ only");
	e->mr[MR_NOWR] = reg(e, e->nwbuf, NOWR_LEN, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_READ, "server: register an MR "
			     "with LOCAL_WRITE | REMOTE_READ");
}

/* The IPv4 address of a RoCE v2 GID (::ffff:a.b.c.d). */
static bool gid_ipv4(const union ibv_gid *gid, struct in_addr *a)
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	if (memcmp(gid->raw, prefix, sizeof(prefix)))
		return false;
	memcpy(&a->s_addr, gid->raw + 12, 4);
	return true;
}

static int listen_accept(const struct env *e, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	struct pollfd pfd = { .events = POLLIN };
	char addr[INET_ADDRSTRLEN];
	int one = 1, fd, c;

	if (!gid_ipv4(&e->gid, &sa.sin_addr))
		fatal("server: the GID is not an IPv4 one", EINVAL);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		fatal("server: socket", errno);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1))
		fatal("server: bind and listen", errno);
	ktap_diag("server: listening on %s:%d",
		  inet_ntop(AF_INET, &sa.sin_addr, addr, sizeof(addr)), port);
	pfd.fd = fd;
	if (poll(&pfd, 1, CTL_WAIT_MS) != 1)
		fatal("server: no client connected", ETIMEDOUT);
	c = accept(fd, NULL, NULL);
	if (c < 0)
		fatal("server: accept", errno);
	close(fd);
	return c;
}

static void run_server(struct env *e, int port)
{
	struct session s;
	struct ctl c;
	int served = 0;

	server_setup(e);
	e->fd = listen_accept(e, port);
	while (recv_ctl(e->fd, &c, CTL_TEST, true)) {
		const struct test *t;

		if (c.arg >= NUM_TESTS)
			fatal("server: the client asked for an unknown test",
			      EINVAL);
		t = &tests[c.arg];
		memset(e->rbuf, CANARY, RBUF_SIZE);
		memset(e->wbuf, CANARY, WBUF_SIZE + PAGE);
		memset(e->nwbuf, CANARY, NOWR_LEN);
		memset(&s, 0, sizeof(s));
		session_open(e, &s);
		if (t->server_prep)
			t->server_prep(e, &s);
		session_info(e, &s, &c);
		send_ctl(e->fd, &c);
		recv_ctl(e->fd, &s.peer, CTL_INFO, false);
		session_connect(e, &s);
		send_simple(e->fd, CTL_READY, 0);
		recv_ctl(e->fd, &c, CTL_DONE, false);
		ktap_diag("server: test %s", t->name);
		if (t->server_check)
			t->server_check(e, &s);
		session_close(&s);
		send_simple(e->fd, CTL_DONE, 0);
		served++;
	}
	ktap_diag("server: %d tests served", served);
	close(e->fd);
}

static int connect_to(const char *ip, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	double end = now_ms() + 30000;
	int fd;

	if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1)
		fatal("client: bad server address", EINVAL);
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			fatal("client: socket", errno);
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			return fd;
		close(fd);
		if (now_ms() > end)
			fatal("client: connect to the server", errno);
		usleep(200000);
	}
}

static void run_one(struct env *e, unsigned int i)
{
	const struct test *t = &tests[i];
	double t0 = now_ms();
	struct session s = { 0 };
	struct ctl c;

	ktap_diag("test %s", t->name);
	send_simple(e->fd, CTL_TEST, i);
	recv_ctl(e->fd, &s.peer, CTL_INFO, false);
	session_open(e, &s);
	session_connect(e, &s);
	session_info(e, &s, &c);
	send_ctl(e->fd, &c);
	recv_ctl(e->fd, &c, CTL_READY, false);
	t->client(e, &s);
	send_simple(e->fd, CTL_DONE, 0);
	recv_ctl(e->fd, &c, CTL_DONE, false);
	session_close(&s);
	ktap_diag("test %s: %.2f s", t->name, (now_ms() - t0) / 1e3);
}

static void run_client(struct env *e, const char *ip, int port, int ntests,
		       char **names)
{
	unsigned int i;
	int n;

	e->cbuf = alloc_buf(CBUF_SIZE);
	e->cmr = reg(e, e->cbuf, CBUF_SIZE, IBV_ACCESS_LOCAL_WRITE,
		     "client: register the buffers (LOCAL_WRITE)");
	e->fd = connect_to(ip, port);
	if (!ntests)
		for (i = 0; i < NUM_TESTS; i++)
			run_one(e, i);
	for (n = 0; n < ntests; n++) {
		for (i = 0; i < NUM_TESTS; i++)
			if (!strcmp(names[n], tests[i].name))
				break;
		if (i == NUM_TESTS)
			result(false, names[n], "no such test");
		else
			run_one(e, i);
	}
	send_simple(e->fd, CTL_QUIT, 0);
	close(e->fd);
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s server DEVICE GID_INDEX TCP_PORT\n"
		"       %s client DEVICE GID_INDEX SERVER_IPV4 TCP_PORT "
		"[TEST...]\n       %s list\n", prog, prog, prog);
	exit(255);
}

int main(int argc, char **argv)
{
	struct env e = { 0 };
	unsigned int i;
	char *end;
	int port;

	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (i = 0; i < NUM_TESTS; i++)
			printf("%s\n", tests[i].name);
		return 0;
	}
	if (argc < 5)
		usage(argv[0]);
	if (!strcmp(argv[1], "server") && argc == 5)
		e.server = true;
	else if (strcmp(argv[1], "client") || argc < 6)
		usage(argv[0]);
	e.gid_index = strtol(argv[3], &end, 0);
	if (*end || e.gid_index < 0)
		usage(argv[0]);
	port = strtol(argv[e.server ? 4 : 5], &end, 0);
	if (*end || port <= 0 || port > 65535)
		usage(argv[0]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	ktap_header();
	srand48(getpid() ^ (long)now_ms());

	e.ctx = open_named(argv[2]);
	if (!e.ctx)
		fatal("open the device", errno);
	if (ibv_query_port(e.ctx, PORT, &e.port) ||
	    ibv_query_gid(e.ctx, PORT, e.gid_index, &e.gid))
		fatal("query the port and the GID", errno);
	e.pd = ibv_alloc_pd(e.ctx);
	if (!e.pd)
		fatal("allocate a PD", errno);
	ktap_diag("%s: %s, GID index %d, active MTU %d", argv[1], argv[2],
		  e.gid_index, 128 << e.port.active_mtu);

	if (e.server)
		run_server(&e, port);
	else
		run_client(&e, argv[4], port, argc - 6, argv + 6);
	ktap_diag("%s: %u failures", argv[1], ktap_failures());
	return exit_status();
}
