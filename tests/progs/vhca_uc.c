// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_uc: UC QPs, byte by byte.
 *
 *   vhca_uc [--data-only] DEV_A GID_A DEV_B GID_B [LOSSY_N]
 *
 * A UC QP of DEV_A sends to one of DEV_B (the GIDs are indices of RoCE v2
 * GIDs of port 1).  Without LOSSY_N: modify_qp refuses RC's timeout and
 * retry count on UC, and post_send READ and atomics; an RDMA WRITE with
 * immediate spanning several packets lands exactly where it was aimed
 * (the bytes around it untouched) and completes the receive WQE with its
 * immediate and length; a SEND spanning several packets lands in the
 * receive buffer; a SEND that finds no receive WQE is dropped without an
 * error on either side, and the next one lands.  --data-only leaves the
 * refusals out: when DEV_A is another provider's (rdma_rxe's), what its
 * post_send refuses is its own choice.
 * With LOSSY_N (netem losing packets on the wire): LOSSY_N SENDs of
 * several packets, each numbered and filled with a pattern of its number;
 * every receive completion must be successful, of the full length, hold
 * one whole message (never parts of two, never a partial one) and come in
 * increasing order; at least one must arrive.  KTAP results; the exit
 * status counts the failures.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "vhca_test.h"

#define PORT		1
#define DEPTH		16	/* receive WQEs posted at a time */
#define BUF		(64 * 1024)
#define AROUND		64	/* bytes before a WRITE's target */
#define WAIT_MS		10000
#define LOSSY_WAIT_MS	30	/* for each lossy message's receive */
#define IMM		0x5a6b7c8du

struct port {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_port_attr attr;
	union ibv_gid gid;
	int gid_index;
	uint8_t *buf;
};

static int port_open(struct port *p, const char *name, const char *gid)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	p->gid_index = atoi(gid);
	p->ctx = open_port(name, PORT, p->gid_index, &p->attr, &p->gid);
	if (!p->ctx)
		return -1;
	p->pd = ibv_alloc_pd(p->ctx);
	p->cq = p->pd ? ibv_create_cq(p->ctx, 4 * DEPTH, NULL, NULL, 0) : NULL;
	p->buf = aligned_alloc(4096, BUF);
	if (!p->cq || !p->buf)
		return -1;
	memset(p->buf, 0xa5, BUF);
	p->mr = ibv_reg_mr(p->pd, p->buf, BUF, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	ia.send_cq = p->cq;
	ia.recv_cq = p->cq;
	p->qp = p->mr ? ibv_create_qp(p->pd, &ia) : NULL;
	return p->qp ? 0 : -1;
}

/* RESET -> RTS towards QP dqpn of port to: UC's attributes only. */
static int qp_connect(const struct port *from, const struct port *to)
{
	const struct qp_path path = {
		.port = PORT, .sgid_index = from->gid_index, .dgid = to->gid,
		.mtu = IBV_MTU_1024, .dqpn = to->qp->qp_num,
		/* The PSNs wrap in the first messages. */
		.rq_psn = 0xfffff0, .sq_psn = 0xfffff0,
		.access = IBV_ACCESS_REMOTE_WRITE,
	};

	errno = qp_rts(from->qp, &path);
	return errno ? -1 : 0;
}

static int post_recv(struct port *p, uint64_t wr_id, uint32_t off,
		     uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->buf + off, .length = len,
			       .lkey = p->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(p->qp, &wr, &bad);
}

static int post_send(struct port *p, enum ibv_wr_opcode op, uint64_t wr_id,
		     uint32_t off, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->buf + off, .length = len,
			       .lkey = p->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(IMM),
	}, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(p->qp, &wr, &bad);
}

/* One completion of p within ms milliseconds: 1, 0 (none) or -1. */
static int poll_one(struct port *p, struct ibv_wc *wc, double ms)
{
	double end = now_ms() + ms;
	int k;

	while (!(k = ibv_poll_cq(p->cq, 1, wc)) && now_ms() < end)
		;
	return k;
}

static void fill(uint8_t *b, uint32_t len, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		b[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

/* The bytes of b that differ from fill(len, seed). */
static uint32_t differ(const uint8_t *b, uint32_t len, uint32_t seed)
{
	uint32_t i, n = 0;

	for (i = 0; i < len; i++)
		n += b[i] != (uint8_t)(seed * 131 + i * 7 + (i >> 8));
	return n;
}

static uint32_t not_byte(const uint8_t *b, uint32_t len, uint8_t v)
{
	uint32_t i, n = 0;

	for (i = 0; i < len; i++)
		n += b[i] != v;
	return n;
}

/* The send completion of wr_id, successful, of opcode op. */
static bool send_done(struct port *a, uint64_t wr_id, enum ibv_wc_opcode op,
		      const char *what)
{
	struct ibv_wc wc;
	int k = poll_one(a, &wc, WAIT_MS);

	result(k == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == wr_id &&
	       wc.opcode == op, what, "%d completions, status %s, wr_id %llu",
	       k, k == 1 ? ibv_wc_status_str(wc.status) : "-",
	       k == 1 ? (unsigned long long)wc.wr_id : 0ULL);
	return k == 1 && wc.status == IBV_WC_SUCCESS;
}

static void refused(struct port *a, const struct port *b)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_RTS, .timeout = 14,
				    .retry_cnt = 7 };
	int err = ibv_modify_qp(a->qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT |
				IBV_QP_RETRY_CNT);

	result(err == EINVAL, "UC refuses RC's timeout and retry_cnt",
	       "modify_qp returned %d", err);
	err = post_send(a, IBV_WR_RDMA_READ, 1, 0, 64, (uintptr_t)b->buf,
			b->mr->rkey);

	result(err == EINVAL, "RDMA READ on UC refused with EINVAL",
	       "post_send returned %d", err);
	err = post_send(a, IBV_WR_ATOMIC_FETCH_AND_ADD, 2, 0, 8,
			(uintptr_t)b->buf, b->mr->rkey);
	result(err == EINVAL, "FETCH_AND_ADD on UC refused with EINVAL",
	       "post_send returned %d", err);
}

/* A WRITE with immediate over four packets, at AROUND bytes into b. */
static void write_imm(struct port *a, struct port *b)
{
	uint32_t len = 3 * 1024 + 100, bad;
	struct ibv_wc wc;
	int k;

	memset(b->buf, 0xa5, BUF);
	fill(a->buf, len, 7);
	if (post_recv(b, 10, 0, 16) ||
	    post_send(a, IBV_WR_RDMA_WRITE_WITH_IMM, 11, 0, len,
		      (uintptr_t)b->buf + AROUND, b->mr->rkey)) {
		result(false, "post a WRITE with immediate", "errno %d", errno);
		return;
	}
	send_done(a, 11, IBV_WC_RDMA_WRITE,
		  "WRITE with immediate (4 packets) completes at the sender");
	k = poll_one(b, &wc, WAIT_MS);
	result(k == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 10 &&
	       wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
	       (wc.wc_flags & IBV_WC_WITH_IMM) && ntohl(wc.imm_data) == IMM &&
	       wc.byte_len == len,
	       "its receive completion: RECV_RDMA_WITH_IMM, immediate, length",
	       "%d completions, status %s, opcode %d, imm %#x, byte_len %u",
	       k, k == 1 ? ibv_wc_status_str(wc.status) : "-",
	       k == 1 ? (int)wc.opcode : -1, k == 1 ? ntohl(wc.imm_data) : 0,
	       k == 1 ? wc.byte_len : 0);
	bad = differ(b->buf + AROUND, len, 7);
	result(!bad, "the WRITE's bytes landed", "%u of %u differ", bad, len);
	bad = not_byte(b->buf, AROUND, 0xa5) +
	      not_byte(b->buf + AROUND + len, 4096, 0xa5) +
	      not_byte(b->buf + BUF - 4096, 4096 - 16, 0xa5);
	result(!bad, "the bytes around it and the receive buffer untouched",
	       "%u changed", bad);
}

/* A SEND of three packets into a receive buffer. */
static void send_multi(struct port *a, struct port *b)
{
	uint32_t len = 2 * 1024 + 7, bad;
	struct ibv_wc wc;
	int k;

	memset(b->buf, 0xa5, BUF);
	fill(a->buf, len, 9);
	if (post_recv(b, 20, 0, 4096) ||
	    post_send(a, IBV_WR_SEND, 21, 0, len, 0, 0)) {
		result(false, "post a SEND", "errno %d", errno);
		return;
	}
	send_done(a, 21, IBV_WC_SEND, "SEND (3 packets) completes at the sender");
	k = poll_one(b, &wc, WAIT_MS);
	result(k == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 20 &&
	       wc.opcode == IBV_WC_RECV && wc.byte_len == len,
	       "its receive completion", "%d completions, status %s, byte_len %u",
	       k, k == 1 ? ibv_wc_status_str(wc.status) : "-",
	       k == 1 ? wc.byte_len : 0);
	bad = differ(b->buf, len, 9) + not_byte(b->buf + len, 4096 - len, 0xa5);
	result(!bad, "the SEND's bytes landed, nothing past them", "%u differ",
	       bad);
}

/* A SEND finding no receive WQE is dropped; the QPs go on. */
static void send_no_wqe(struct port *a, struct port *b)
{
	uint32_t len = 1500, bad;
	struct ibv_wc wc;
	int k;

	memset(b->buf, 0xa5, BUF);
	fill(a->buf, len, 3);
	if (post_send(a, IBV_WR_SEND, 30, 0, len, 0, 0)) {
		result(false, "post a SEND", "errno %d", errno);
		return;
	}
	send_done(a, 30, IBV_WC_SEND,
		  "a SEND with no receive WQE completes at the sender");
	k = poll_one(b, &wc, 200);
	result(k == 0, "it completes nothing at the receiver",
	       "%d completions", k);
	fill(a->buf, len, 4);
	if (post_recv(b, 31, 0, 4096) ||
	    post_send(a, IBV_WR_SEND, 32, 0, len, 0, 0)) {
		result(false, "post a SEND", "errno %d", errno);
		return;
	}
	send_done(a, 32, IBV_WC_SEND, "the next SEND completes at the sender");
	k = poll_one(b, &wc, WAIT_MS);
	bad = differ(b->buf, len, 4);
	result(k == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 31 &&
	       wc.byte_len == len && !bad,
	       "the next SEND lands whole in the receive WQE posted after",
	       "%d completions, status %s, byte_len %u, %u bytes differ", k,
	       k == 1 ? ibv_wc_status_str(wc.status) : "-",
	       k == 1 ? wc.byte_len : 0, bad);
	k = poll_one(b, &wc, 100);
	result(k == 0, "and nothing else", "%d more completions", k);
}

/*
 * n SENDs of four packets, each the pattern of its number (which its first
 * bytes hold), while netem loses packets: what arrives is whole and in
 * order.
 */
static void lossy(struct port *a, struct port *b, uint32_t n)
{
	uint32_t len = 3 * 1024 + 512, seq, got = 0, last = 0, partial = 0;
	uint32_t bad_wc = 0, unordered = 0, sent = 0, i;
	struct ibv_wc wc;
	uint8_t *slot;

	for (i = 0; i < DEPTH; i++)
		if (post_recv(b, i, i * 4096, 4096)) {
			result(false, "post the receive WQEs", "errno %d", errno);
			return;
		}
	for (seq = 1; seq <= n; seq++) {
		fill(a->buf, len, seq);
		memcpy(a->buf, &seq, sizeof(seq));
		if (post_send(a, IBV_WR_SEND, seq, 0, len, 0, 0))
			break;
		if (poll_one(a, &wc, WAIT_MS) != 1 ||
		    wc.status != IBV_WC_SUCCESS)
			break;
		sent++;
		/* Its receive, if it comes; a loss costs LOSSY_WAIT_MS. */
		while (poll_one(b, &wc, LOSSY_WAIT_MS) == 1) {
			slot = b->buf + wc.wr_id * 4096;
			if (wc.status != IBV_WC_SUCCESS || wc.byte_len != len) {
				bad_wc++;
			} else {
				uint32_t k;

				memcpy(&k, slot, sizeof(k));
				/* Its own number in the first bytes. */
				fill(slot, sizeof(k), k);
				partial += !!differ(slot, len, k);
				unordered += k <= last || k > seq;
				last = k;
				got++;
			}
			memset(slot, 0xee, 4096);
			if (post_recv(b, wc.wr_id, wc.wr_id * 4096, 4096)) {
				result(false, "post a receive WQE again",
				       "errno %d", errno);
				return;
			}
			if (last == seq)
				break;
		}
	}
	ktap_diag("lossy: %u of %u SENDs sent, %u received", sent, n, got);
	result(sent == n, "every lossy SEND completes at the sender",
	       "%u of %u", sent, n);
	result(!bad_wc, "every receive completion succeeds, full length",
	       "%u did not", bad_wc);
	result(!partial, "every message received is one whole message",
	       "%u mixed or partial", partial);
	result(!unordered, "messages arrive in order, none twice",
	       "%u out of order", unordered);
	result(got > 0, "messages arrive", "none of %u", n);
}

int main(int argc, char **argv)
{
	struct port a = { 0 }, b = { 0 };
	bool data_only = argc > 1 && !strcmp(argv[1], "--data-only");
	uint32_t n;

	argv += data_only;
	argc -= data_only;
	if (argc < 5) {
		fprintf(stderr,
			"usage: vhca_uc [--data-only] DEV_A GID_A DEV_B GID_B [LOSSY_N]\n");
		return 255;
	}
	n = argc > 5 ? strtoul(argv[5], NULL, 0) : 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	ktap_header();
	if (port_open(&a, argv[1], argv[2]) || port_open(&b, argv[3], argv[4]) ||
	    qp_connect(&a, &b) || qp_connect(&b, &a)) {
		result(false, "set up and connect two UC QPs", "errno %d", errno);
		return exit_status();
	}
	if (n) {
		lossy(&a, &b, n);
		return exit_status();
	}
	if (!data_only)
		refused(&a, &b);
	write_imm(&a, &b);
	send_multi(&a, &b);
	send_no_wqe(&a, &b);
	return exit_status();
}
