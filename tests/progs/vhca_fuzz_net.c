// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz_net: hostile RoCEv2 from the network, and its verdict.
 *
 *   vhca_fuzz_net victim DEV0 GID0 DEV1 GID1 INFO STOP SECS
 *   vhca_fuzz_net inject --seed N --secs S INFO IFNAME DST SRC [replay]
 *   vhca_fuzz_net netem DEV0 GID0 DEV1 GID1 SECS IFNAME
 *
 * victim drives both ends (RDMA devices are visible from every namespace):
 * RC QP pairs between DEV0 (the victim port) and DEV1 (its real peer in
 * the injector's namespace), a UD QP and RC QPs held in RESET, INIT, RTR,
 * RTS and ERR on DEV0.  It writes what the injector needs (QPNs, PSNs,
 * rkeys, addresses) to INFO and runs byte-verified traffic (SEND both
 * ways, WRITE both ways, READ) on every pair until the file STOP appears
 * or SECS pass.  Two kinds of pairs: "protected" ones get from the
 * injector only packets that no correct responder or requester may act
 * on (a PSN of the duplicate region or 2^22 ahead, a wrong ICRC), so any
 * error or wrong byte on them is a defect; "target" ones get everything,
 * and a forged but valid packet may legitimately break them (they stop
 * being used).  The verdict: every protected pair and every target pair
 * still in service carries verified traffic after the storm, no byte
 * outside an MR (guard pages) and none of a remote-read-only MR changed,
 * and a fresh QP pair works.
 *
 * inject runs in the peer's namespace and sends crafted RoCEv2 through a
 * raw IPv4 socket to DST:4791, from SRC (the real peer's address) or a
 * random source, for S seconds: first, whatever time it takes, every
 * opcode to a QP of every kind and state and every truncation of every
 * valid opcode; then random packets: PSNs around and outside the window
 * (learnt live by sniffing IFNAME), unsolicited responses, RETH lengths
 * up to 4 GiB, wrong keys, bad pad counts, TVer, P_Keys and ICRCs,
 * duplicate storms.  With "replay", instead: mutations (bit flips,
 * truncation, duplication) of the real traffic it captured on IFNAME.
 * The packet crafting is its own (raw IP: the IP and UDP lengths, the
 * IP ID and the source are the fuzzer's, as the ICRC needs).  The seed ("# seed=N") fixes the input sequence;
 * where it lands depends on timing (the PSNs learnt), which a replay
 * cannot reproduce.
 *
 * netem runs the verified traffic of the protected pairs for SECS while
 * it counts the RoCEv2 frames arriving on IFNAME whose ICRC is wrong
 * (the frames netem corrupted that reached the victim), and prints
 * "# corrupted=N" for the script to compare with vhca's rx_icrc_errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "fuzz_rng.h"
#include "roce.h"
#include "vhca_test.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define ROCE_PORT	4791
#define MTU		1024
#define PAGE		4096
#define REGION		32768		/* an MR: recv | send | write | read */
#define SLOT		8192
#define MAX_MSG		4096
#define N_PROT		2
#define N_TARG		2
#define N_PAIRS		(N_PROT + N_TARG)
#define UD_RECVS	32
#define UD_QKEY		0x11111111u
#define GUARD_BYTE	0xa5
#define INJ_TOS		0x04		/* marks injected packets for the sniffer */
#define MAX_CAP		256

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void __attribute__((noreturn)) fatal(const char *what)
{
	result(false, what, "%s", strerror(errno ? errno : EIO));
	exit(exit_status());
}

/*
 * ---- the ICRC (RoCEv2 annex: masked IPv4/UDP/BTH, 8 bytes of ones first),
 * over a whole IPv4 packet as captured or crafted here (roce.h's CRC-32)
 */

/* The ICRC of an IPv4 packet ip whose IB part (BTH to ICRC) is iblen bytes. */
static uint32_t icrc_of(const uint8_t *ip, size_t iblen)
{
	uint8_t h[20 + 8 + 12];
	uint32_t crc = 0xffffffff;
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0xff };

	memcpy(h, ip, sizeof(h));
	h[1] = 0xff;			/* TOS */
	h[8] = 0xff;			/* TTL */
	h[10] = h[11] = 0xff;		/* IP checksum */
	h[26] = h[27] = 0xff;		/* UDP checksum */
	h[32] = 0xff;			/* BTH F, B, resv6 */
	crc = roce_crc32(crc, ones, 8);
	crc = roce_crc32(crc, h, sizeof(h));
	crc = roce_crc32(crc, ip + sizeof(h), iblen - 12 - 4);
	return ~crc;
}

static bool icrc_ok(const uint8_t *ip, size_t iblen)
{
	uint32_t c;

	if (iblen < 16)
		return false;
	c = icrc_of(ip, iblen);
	return ip[28 + iblen - 4] == (c & 0xff) &&
	       ip[28 + iblen - 3] == ((c >> 8) & 0xff) &&
	       ip[28 + iblen - 2] == ((c >> 16) & 0xff) &&
	       ip[28 + iblen - 1] == (c >> 24);
}

static void icrc_put(uint8_t *ip, size_t iblen)
{
	uint32_t c = icrc_of(ip, iblen);
	uint8_t *p = ip + 28 + iblen - 4;

	p[0] = c;
	p[1] = c >> 8;
	p[2] = c >> 16;
	p[3] = c >> 24;
}

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put24(uint8_t *p, uint32_t v)
{
	p[0] = v >> 16;
	p[1] = v >> 8;
	p[2] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

static uint32_t get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | p[1] << 8 | p[2];
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

/* ---- the victim's verbs objects */

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
	int gid_index;
};

struct qpx {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	uint8_t *map;			/* guard page, REGION, guard page */
	uint8_t *buf;			/* the MR's REGION */
	struct ibv_mr *mr;
	uint32_t psn;			/* its sq_psn */
};

struct pair {
	struct qpx a, b;		/* a on the victim port, b its peer */
	bool prot, broken;
	unsigned int seq, rounds;
};

static struct end e0, e1;
static double wait_s = 10;

static uint8_t *guarded(size_t len)
{
	uint8_t *m = mmap(NULL, len + 2 * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		fatal("mmap");
	memset(m, GUARD_BYTE, len + 2 * PAGE);
	return m;
}

static bool guards_intact(const uint8_t *m, size_t len)
{
	size_t i;

	for (i = 0; i < PAGE; i++)
		if (m[i] != GUARD_BYTE || m[PAGE + len + i] != GUARD_BYTE)
			return false;
	return true;
}

static void end_open(struct end *e, const char *name, int gid_index)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			e->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!e->ctx)
		fatal("open the device");
	e->pd = ibv_alloc_pd(e->ctx);
	e->gid_index = gid_index;
	if (!e->pd || ibv_query_gid(e->ctx, 1, gid_index, &e->gid))
		fatal("ibv_alloc_pd, ibv_query_gid");
}

static void qpx_create(struct qpx *q, struct end *e, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = UD_RECVS + 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	q->cq = ibv_create_cq(e->ctx, 128, NULL, NULL, 0);
	if (!q->cq)
		fatal("ibv_create_cq");
	ia.send_cq = ia.recv_cq = q->cq;
	q->qp = ibv_create_qp(e->pd, &ia);
	if (!q->qp)
		fatal("ibv_create_qp");
	q->map = guarded(REGION);
	q->buf = q->map + PAGE;
	q->mr = ibv_reg_mr(e->pd, q->buf, REGION, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!q->mr)
		fatal("ibv_reg_mr");
	q->psn = rnd() & 0xffffff;
}

static void qpx_destroy(struct qpx *q)
{
	ibv_destroy_qp(q->qp);
	ibv_dereg_mr(q->mr);
	ibv_destroy_cq(q->cq);
	munmap(q->map, REGION + 2 * PAGE);
}

static int to_init(struct ibv_qp *qp, bool ud)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = UD_QKEY,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT |
			     (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
}

static int to_rtr(struct ibv_qp *qp, struct end *remote, struct end *local,
		  uint32_t dqpn, uint32_t rq_psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn, .rq_psn = rq_psn,
		.max_dest_rd_atomic = 4, .min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = remote->gid, .hop_limit = 64,
				      .sgid_index = local->gid_index } },
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
}

static int to_rts(struct ibv_qp *qp, uint32_t sq_psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .sq_psn = sq_psn, .timeout = 14,
		.retry_cnt = 7, .rnr_retry = 6, .max_rd_atomic = 4,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static void pair_connect(struct pair *p)
{
	qpx_create(&p->a, &e0, IBV_QPT_RC);
	qpx_create(&p->b, &e1, IBV_QPT_RC);
	if (to_init(p->a.qp, false) || to_init(p->b.qp, false) ||
	    to_rtr(p->a.qp, &e1, &e0, p->b.qp->qp_num, p->b.psn) ||
	    to_rtr(p->b.qp, &e0, &e1, p->a.qp->qp_num, p->a.psn) ||
	    to_rts(p->a.qp, p->a.psn) || to_rts(p->b.qp, p->b.psn))
		fatal("connect an RC QP pair");
}

/* The byte i of message seq of pair id, direction dir. */
static uint8_t pat(unsigned int id, unsigned int seq, int dir, size_t i)
{
	uint32_t x = (id * 131 + seq * 7919 + dir * 31) ^ (uint32_t)i * 2654435761u;

	return (uint8_t)(x >> 13);
}

static void fill(uint8_t *p, size_t n, unsigned int id, unsigned int seq,
		 int dir)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = pat(id, seq, dir, i);
}

/* The first byte of p[0..n) that is not the pattern, or -1. */
static long mismatch(const uint8_t *p, size_t n, unsigned int id,
		     unsigned int seq, int dir)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != pat(id, seq, dir, i))
			return (long)i;
	return -1;
}

static char why[256];

/* A completion of wr_id on q within wait_s, successful. */
static bool wait_wc(struct qpx *q, uint64_t wr_id, struct ibv_wc *out)
{
	double t0 = now_s();
	struct ibv_wc wc;
	int n;

	while (now_s() - t0 < wait_s) {
		n = ibv_poll_cq(q->cq, 1, &wc);
		if (n < 0) {
			snprintf(why, sizeof(why), "ibv_poll_cq failed");
			return false;
		}
		if (!n)
			continue;
		if (wc.status != IBV_WC_SUCCESS) {
			snprintf(why, sizeof(why), "wr_id %llu: %s",
				 (unsigned long long)wc.wr_id,
				 ibv_wc_status_str(wc.status));
			return false;
		}
		if (wc.wr_id != wr_id) {
			snprintf(why, sizeof(why),
				 "a completion of wr_id %llu while waiting for %llu",
				 (unsigned long long)wc.wr_id,
				 (unsigned long long)wr_id);
			return false;
		}
		*out = wc;
		return true;
	}
	snprintf(why, sizeof(why), "no completion of wr_id %llu in %.0f s",
		 (unsigned long long)wr_id, wait_s);
	return false;
}

static int post(struct qpx *q, enum ibv_wr_opcode op, uint64_t wr_id,
		size_t off, size_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(q->buf + off), .length = len,
		.lkey = q->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	return ibv_post_send(q->qp, &wr, &bad);
}

static int post_recv(struct qpx *q, uint64_t wr_id, size_t off, size_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(q->buf + off), .length = len,
		.lkey = q->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	return ibv_post_recv(q->qp, &wr, &bad);
}

/* A SEND of len bytes from s to r, verified on arrival. */
static bool xfer_send(struct qpx *s, struct qpx *r, unsigned int id,
		      unsigned int seq, int dir, size_t len)
{
	struct ibv_wc wc;
	long bad;

	fill(s->buf + SLOT, len, id, seq, dir);
	memset(r->buf, 0, SLOT);
	if (post_recv(r, seq, 0, SLOT) || post(s, IBV_WR_SEND, seq, SLOT, len, 0, 0)) {
		snprintf(why, sizeof(why), "post: %s", strerror(errno));
		return false;
	}
	if (!wait_wc(s, seq, &wc) || !wait_wc(r, seq, &wc))
		return false;
	if (wc.byte_len != len) {
		snprintf(why, sizeof(why), "SEND of %zu bytes received as %u",
			 len, wc.byte_len);
		return false;
	}
	bad = mismatch(r->buf, len, id, seq, dir);
	if (bad >= 0) {
		snprintf(why, sizeof(why), "SEND of %zu bytes: byte %ld wrong",
			 len, bad);
		return false;
	}
	return true;
}

/* A WRITE (or a READ by r) of len bytes from s's send slot to r's MR. */
static bool xfer_rdma(struct qpx *s, struct qpx *r, unsigned int id,
		      unsigned int seq, int dir, size_t len, bool read)
{
	struct qpx *req = read ? r : s;
	struct ibv_wc wc;
	uint8_t *dst;
	long bad;

	fill(s->buf + SLOT, len, id, seq, dir);
	if (read) {
		dst = r->buf + 3 * SLOT;
		memset(dst, 0, len);
		if (post(r, IBV_WR_RDMA_READ, seq, 3 * SLOT, len,
			 (uintptr_t)(s->buf + SLOT), s->mr->rkey))
			goto post_err;
	} else {
		dst = r->buf + 2 * SLOT;
		memset(dst, 0, len);
		if (post(s, IBV_WR_RDMA_WRITE, seq, SLOT, len,
			 (uintptr_t)dst, r->mr->rkey))
			goto post_err;
	}
	if (!wait_wc(req, seq, &wc))
		return false;
	bad = mismatch(dst, len, id, seq, dir);
	if (bad >= 0) {
		snprintf(why, sizeof(why), "%s of %zu bytes: byte %ld wrong",
			 read ? "READ" : "WRITE", len, bad);
		return false;
	}
	return true;
post_err:
	snprintf(why, sizeof(why), "post: %s", strerror(errno));
	return false;
}

/* One round on a pair: SEND both ways, WRITE both ways, a READ. */
static bool pair_round(struct pair *p, unsigned int id)
{
	size_t len = 1 + below(MAX_MSG);
	unsigned int s = p->seq;

	p->seq += 5;
	p->rounds++;
	return xfer_send(&p->a, &p->b, id, s, 0, len) &&
	       xfer_send(&p->b, &p->a, id, s + 1, 1, 1 + below(MAX_MSG)) &&
	       xfer_rdma(&p->b, &p->a, id, s + 2, 2, 1 + below(MAX_MSG), false) &&
	       xfer_rdma(&p->a, &p->b, id, s + 3, 3, 1 + below(MAX_MSG), false) &&
	       xfer_rdma(&p->b, &p->a, id, s + 4, 4, len, true);
}

static struct pair pairs[N_PAIRS];
static struct qpx ud_a, ud_b, ro;
static struct ibv_ah *ud_ah;
static const char * const state_name[] = { "RESET", "INIT", "RTR", "RTS", "ERR" };
static struct qpx stq[5];

static void ud_setup(void)
{
	struct ibv_qp_attr rtr = { .qp_state = IBV_QPS_RTR };
	struct ibv_qp_attr rts = { .qp_state = IBV_QPS_RTS, .sq_psn = 0 };
	struct ibv_ah_attr ah = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = e0.gid, .hop_limit = 64,
			 .sgid_index = e1.gid_index },
	};
	int i;

	qpx_create(&ud_a, &e0, IBV_QPT_UD);
	qpx_create(&ud_b, &e1, IBV_QPT_UD);
	if (to_init(ud_a.qp, true) || to_init(ud_b.qp, true) ||
	    ibv_modify_qp(ud_a.qp, &rtr, IBV_QP_STATE) ||
	    ibv_modify_qp(ud_b.qp, &rtr, IBV_QP_STATE) ||
	    ibv_modify_qp(ud_a.qp, &rts, IBV_QP_STATE | IBV_QP_SQ_PSN) ||
	    ibv_modify_qp(ud_b.qp, &rts, IBV_QP_STATE | IBV_QP_SQ_PSN))
		fatal("UD QPs to RTS");
	ud_ah = ibv_create_ah(e1.pd, &ah);
	if (!ud_ah)
		fatal("ibv_create_ah");
	for (i = 0; i < UD_RECVS; i++)
		if (post_recv(&ud_a, i, i * 1024, 1024))
			fatal("UD post_recv");
}

/* One UD datagram from b to a; a's completions drained, receives reposted. */
static void ud_round(unsigned int seq)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(ud_b.buf + SLOT), .length = 1 + below(900),
		.lkey = ud_b.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = seq, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ud_ah, .remote_qpn = ud_a.qp->qp_num,
			   .remote_qkey = UD_QKEY },
	}, *bad;
	struct ibv_wc wc[8];
	int n, i;

	ibv_post_send(ud_b.qp, &wr, &bad);
	while ((n = ibv_poll_cq(ud_b.cq, 8, wc)) > 0)
		;
	while ((n = ibv_poll_cq(ud_a.cq, 8, wc)) > 0)
		for (i = 0; i < n; i++)
			if (wc[i].wr_id < UD_RECVS)
				post_recv(&ud_a, wc[i].wr_id,
					  wc[i].wr_id * 1024, 1024);
}

/* QPs of DEV0 held in every state, connected (RTR, RTS) to no one. */
static void states_setup(void)
{
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	int i;

	for (i = 0; i < 5; i++) {
		qpx_create(&stq[i], &e0, IBV_QPT_RC);
		if (i >= 1 && to_init(stq[i].qp, false))
			fatal("state QP to INIT");
		if (i >= 2 && i <= 3 &&
		    to_rtr(stq[i].qp, &e1, &e0, 0xfffff0 - i, stq[i].psn))
			fatal("state QP to RTR");
		if (i == 3 && to_rts(stq[i].qp, stq[i].psn))
			fatal("state QP to RTS");
		if (i == 4 && ibv_modify_qp(stq[i].qp, &err, IBV_QP_STATE))
			fatal("state QP to ERR");
	}
}

static void write_info(const char *path)
{
	char tmp[512];
	FILE *f;
	int i;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		fatal("write the info file");
	for (i = 0; i < N_PAIRS; i++)
		fprintf(f, "%s %u %u %u %u %u %llu %u\n",
			pairs[i].prot ? "prot" : "targ", pairs[i].a.qp->qp_num,
			pairs[i].b.qp->qp_num, pairs[i].b.psn, pairs[i].a.psn,
			pairs[i].a.mr->rkey,
			(unsigned long long)(uintptr_t)pairs[i].a.buf, REGION);
	fprintf(f, "ud %u %u %u %u %u %llu %u\n", ud_a.qp->qp_num,
		ud_b.qp->qp_num, 0, 0, ud_a.mr->rkey,
		(unsigned long long)(uintptr_t)ud_a.buf, REGION);
	for (i = 0; i < 5; i++)
		fprintf(f, "state %u %u %u %u %u %llu %u\n", stq[i].qp->qp_num,
			0xfffff0 - i, stq[i].psn, stq[i].psn, stq[i].mr->rkey,
			(unsigned long long)(uintptr_t)stq[i].buf, REGION);
	fprintf(f, "ro %u %u %u %u %u %llu %u\n", pairs[N_PROT].a.qp->qp_num,
		0, 0, 0, ro.mr->rkey, (unsigned long long)(uintptr_t)ro.buf,
		PAGE);
	if (fclose(f) || rename(tmp, path))
		fatal("write the info file");
}

static void setup(char **argv)
{
	int i;

	end_open(&e0, argv[0], atoi(argv[1]));
	end_open(&e1, argv[2], atoi(argv[3]));
	for (i = 0; i < N_PAIRS; i++) {
		pairs[i].prot = i < N_PROT;
		pair_connect(&pairs[i]);
	}
}

static bool stop_now(const char *stop, double t_end)
{
	struct stat st;

	return now_s() > t_end || (stop && !stat(stop, &st));
}

/*
 * Rounds on every pair in service until the file stop exists or secs
 * pass; a pair that fails leaves service (a failure if it is protected).
 */
static void traffic(const char *stop, double secs, bool ud)
{
	double t_end = now_s() + secs;
	unsigned int r = 0;
	int i;

	while (!stop_now(stop, t_end)) {
		for (i = 0; i < N_PAIRS; i++) {
			if (pairs[i].broken || pair_round(&pairs[i], i))
				continue;
			pairs[i].broken = true;
			if (pairs[i].prot)
				result(false, "a protected QP pair carries verified traffic during the storm",
				       "pair %d, round %u: %s", i, pairs[i].rounds, why);
			else
				ktap_diag("target pair %d out of service at round %u: %s",
					  i, pairs[i].rounds, why);
		}
		if (ud)
			ud_round(r);
		r++;
	}
	ktap_diag("%u rounds of traffic", r);
}

static bool all_guards(void)
{
	bool ok = guards_intact(ro.map, PAGE) && guards_intact(ud_a.map, REGION);
	int i;

	for (i = 0; i < N_PAIRS; i++)
		ok = ok && guards_intact(pairs[i].a.map, REGION) &&
		     guards_intact(pairs[i].b.map, REGION);
	for (i = 0; i < 5; i++)
		ok = ok && guards_intact(stq[i].map, REGION);
	return ok;
}

/* The verdict after the storm. */
static void verdict(void)
{
	struct pair fresh = { 0 };
	bool ok;
	int i, k;

	for (i = 0; i < N_PAIRS; i++) {
		char name[128];

		snprintf(name, sizeof(name), "%s pair %d carries verified traffic after the storm",
			 pairs[i].prot ? "protected" : "target", i);
		if (pairs[i].broken) {
			if (pairs[i].prot)
				result(false, name, "out of service since round %u",
				       pairs[i].rounds);
			else
				ktap_skip(name, "a forged packet took it out of service");
			continue;
		}
		ok = true;
		for (k = 0; k < 3 && ok; k++)
			ok = pair_round(&pairs[i], i);
		result(ok, name, "%s", why);
	}
	result(all_guards(), "no byte outside any MR changed (guard pages)", NULL);
	result(mismatch(ro.buf, PAGE, 99, 0, 0) < 0,
	       "the remote-read-only MR is unchanged", NULL);
	pair_connect(&fresh);
	ok = true;
	for (k = 0; k < 3 && ok; k++)
		ok = pair_round(&fresh, 7);
	result(ok, "a fresh QP pair carries verified traffic", "%s", why);
	qpx_destroy(&fresh.a);
	qpx_destroy(&fresh.b);
}

static void teardown(void)
{
	int i;

	for (i = 0; i < N_PAIRS; i++) {
		qpx_destroy(&pairs[i].a);
		qpx_destroy(&pairs[i].b);
	}
	for (i = 0; i < 5; i++)
		qpx_destroy(&stq[i]);
	ibv_destroy_ah(ud_ah);
	qpx_destroy(&ud_a);
	qpx_destroy(&ud_b);
	ibv_dereg_mr(ro.mr);
	munmap(ro.map, PAGE + 2 * PAGE);
	ibv_dealloc_pd(e0.pd);
	ibv_dealloc_pd(e1.pd);
	ibv_close_device(e0.ctx);
	ibv_close_device(e1.ctx);
}

static int victim(char **argv)
{
	setup(argv);
	ud_setup();
	states_setup();
	ro.map = guarded(PAGE);
	ro.buf = ro.map + PAGE;
	fill(ro.buf, PAGE, 99, 0, 0);
	ro.mr = ibv_reg_mr(e0.pd, ro.buf, PAGE, IBV_ACCESS_REMOTE_READ);
	if (!ro.mr)
		fatal("ibv_reg_mr (remote read only)");
	write_info(argv[4]);
	ktap_diag("victim ready: %d protected and %d target RC pairs, UD QP %u, QPs in %s..%s",
		  N_PROT, N_TARG, ud_a.qp->qp_num, state_name[0], state_name[4]);
	traffic(argv[5], atof(argv[6]), true);
	verdict();
	teardown();
	return exit_status();
}

/* ---- netem: verified traffic while the corrupted frames are counted */

static int sniff_fd;
static atomic_bool sniff_stop;
static unsigned long corrupted, roce_frames;

/* The IPv4 RoCEv2 packet of frame f (n bytes), its IB length in *iblen. */
static const uint8_t *roce_of(const uint8_t *f, size_t n, size_t *iblen)
{
	const uint8_t *ip = f + 14;
	size_t tot, udp;

	if (n < 14 + 28 + 16 || f[12] != 0x08 || f[13] != 0x00 ||
	    ip[0] != 0x45 || ip[9] != 17)
		return NULL;
	tot = (size_t)ip[2] << 8 | ip[3];
	udp = (size_t)ip[24] << 8 | ip[25];
	if ((((size_t)ip[22] << 8) | ip[23]) != ROCE_PORT || tot > n - 14 ||
	    tot < 28 + 16 || udp != tot - 20)
		return NULL;
	*iblen = udp - 8;
	return ip;
}

static void *sniff_corrupt(void *arg)
{
	uint8_t f[9216];
	struct sockaddr_ll from;
	socklen_t fl;
	size_t iblen;
	ssize_t n;

	(void)arg;
	while (!sniff_stop) {
		fl = sizeof(from);
		n = recvfrom(sniff_fd, f, sizeof(f), MSG_DONTWAIT,
			     (struct sockaddr *)&from, &fl);
		if (n <= 0) {
			usleep(1000);
			continue;
		}
		if (from.sll_pkttype == PACKET_OUTGOING ||
		    !roce_of(f, n, &iblen))
			continue;
		roce_frames++;
		if (!icrc_ok(f + 14, iblen))
			corrupted++;
	}
	return NULL;
}

static int packet_socket(const char *ifname)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = (int)if_nametoindex(ifname),
	};
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	int sz = 8 << 20;

	if (fd < 0 || !sll.sll_ifindex ||
	    bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
		fatal("AF_PACKET socket on the interface");
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
	return fd;
}

static int netem(char **argv)
{
	struct tpacket_stats st = { 0 };
	socklen_t sl = sizeof(st);
	pthread_t th;
	int i;

	setup(argv);
	for (i = 0; i < N_PAIRS; i++)
		pairs[i].prot = true;
	sniff_fd = packet_socket(argv[5]);
	getsockopt(sniff_fd, SOL_PACKET, PACKET_STATISTICS, &st, &sl);
	if (pthread_create(&th, NULL, sniff_corrupt, NULL))
		fatal("pthread_create");
	traffic(NULL, atof(argv[4]), false);
	for (i = 0; i < N_PAIRS; i++) {
		char name[128];

		snprintf(name, sizeof(name),
			 "pair %d: every transfer under corruption verified (%u rounds)",
			 i, pairs[i].rounds);
		result(!pairs[i].broken, name, "%s", why);
	}
	usleep(200000);
	sniff_stop = true;
	pthread_join(th, NULL);
	sl = sizeof(st);
	getsockopt(sniff_fd, SOL_PACKET, PACKET_STATISTICS, &st, &sl);
	result(st.tp_drops == 0, "the counting socket lost no frame",
	       "%u dropped", st.tp_drops);
	ktap_diag("RoCEv2 frames received %lu", roce_frames);
	printf("# corrupted=%lu\n", corrupted);
	for (i = 0; i < N_PAIRS; i++) {
		qpx_destroy(&pairs[i].a);
		qpx_destroy(&pairs[i].b);
	}
	return exit_status();
}

/* ---- the injector */

enum kind { K_PROT, K_TARG, K_UD, K_STATE, K_RO };

struct target {
	enum kind kind;
	uint32_t qpn, peer, rq_psn, sq_psn, rkey, len;
	uint64_t va;
	uint32_t in_psn, out_psn;	/* learnt: last request to it, from it */
};

static struct target tg[16];
static int ntg;
static uint32_t dst_ip, src_ip, ro_rkey;
static uint64_t ro_va;
static int raw_fd, cap_fd;
static uint8_t cap[MAX_CAP][1500];
static size_t cap_len[MAX_CAP];
static int ncap;
static unsigned long sent, sent_bad_icrc, sent_src_random;

static void read_info(const char *path)
{
	char kind[16];
	unsigned long long va;
	struct target t;
	FILE *f = fopen(path, "r");

	if (!f)
		fatal("read the info file");
	while (ntg < 16 &&
	       fscanf(f, "%15s %u %u %u %u %u %llu %u", kind, &t.qpn, &t.peer,
		      &t.rq_psn, &t.sq_psn, &t.rkey, &va, &t.len) == 8) {
		t.va = va;
		t.in_psn = (t.rq_psn - 1) & 0xffffff;
		t.out_psn = (t.sq_psn - 1) & 0xffffff;
		if (!strcmp(kind, "ro")) {
			ro_rkey = t.rkey;
			ro_va = t.va;
			continue;
		}
		t.kind = !strcmp(kind, "prot") ? K_PROT :
			 !strcmp(kind, "targ") ? K_TARG :
			 !strcmp(kind, "ud") ? K_UD : K_STATE;
		tg[ntg++] = t;
	}
	fclose(f);
}

static struct target *by_qpn(uint32_t qpn, bool peer)
{
	int i;

	for (i = 0; i < ntg; i++)
		if ((peer ? tg[i].peer : tg[i].qpn) == qpn)
			return &tg[i];
	return NULL;
}

static bool is_response(uint8_t op)
{
	return op >= 0x0d && op <= 0x12;
}

/*
 * Learn from the real traffic on the interface: the last request PSN to
 * and from each victim QP, and (the first MAX_CAP) frames to replay.
 */
static void sniff(void)
{
	uint8_t f[9216];
	const uint8_t *ip, *bth;
	struct target *t;
	size_t iblen;
	uint32_t psn;
	ssize_t n;

	while ((n = recv(cap_fd, f, sizeof(f), MSG_DONTWAIT)) > 0) {
		ip = roce_of(f, n, &iblen);
		if (!ip || ip[1] == INJ_TOS)
			continue;
		bth = ip + 28;
		psn = get24(bth + 9);
		if (get32(ip + 16) == dst_ip) {
			t = by_qpn(get24(bth + 5), false);
			if (t && !is_response(bth[0]))
				t->in_psn = psn;
			if (t && t->kind == K_TARG && ncap < MAX_CAP &&
			    28 + iblen <= sizeof(cap[0])) {
				memcpy(cap[ncap], ip, 28 + iblen);
				cap_len[ncap++] = 28 + iblen;
			}
		} else {
			t = by_qpn(get24(bth + 5), true);
			if (t && !is_response(bth[0]))
				t->out_psn = psn;
		}
	}
}

static uint8_t pkt[1600];

/* The IPv4 and UDP headers of an IB part of iblen bytes, from src. */
static void ip_udp(uint32_t src, size_t iblen)
{
	size_t tot = 28 + iblen;

	memset(pkt, 0, 28);
	pkt[0] = 0x45;
	pkt[1] = INJ_TOS;
	put16(pkt + 2, tot);
	put16(pkt + 4, 1 + below(0xfffe));	/* the kernel keeps a nonzero ID */
	put16(pkt + 6, 0x4000);
	pkt[8] = 64;
	pkt[9] = 17;
	put32(pkt + 12, src);
	put32(pkt + 16, dst_ip);
	put16(pkt + 20, 0xc000 | below(0x4000));
	put16(pkt + 22, ROCE_PORT);
	put16(pkt + 24, iblen + 8);
}

static void send_pkt(size_t tot)
{
	struct sockaddr_in to = { .sin_family = AF_INET };

	to.sin_addr.s_addr = htonl(get32(pkt + 16));
	if (sendto(raw_fd, pkt, tot, 0, (struct sockaddr *)&to, sizeof(to)) >= 0)
		sent++;
	if (!(sent % 16))
		usleep(2000);	/* leave the victim CPU: 2 cores, shared */
}

/* The extended headers an opcode carries after the BTH, in bytes. */
static size_t ext_len(uint8_t op, bool *reth, bool *aeth, bool *imm,
		      bool *deth, bool *atom)
{
	uint8_t o = op & 0x1f;

	*reth = *aeth = *imm = *deth = *atom = false;
	if ((op & 0xe0) == 0x60) {
		*deth = true;
		*imm = o == 0x05;
		return 8 + (*imm ? 4 : 0);
	}
	*reth = o == 0x06 || o == 0x0a || o == 0x0b || o == 0x0c ||
		o == 0x1c || o == 0x1d;
	*aeth = o == 0x0d || o == 0x0f || o == 0x10 || o == 0x11 || o == 0x12;
	*imm = o == 0x03 || o == 0x05 || o == 0x09 || o == 0x0b ||
	       o == 0x16 || o == 0x17;
	*atom = o == 0x13 || o == 0x14;
	return (*reth ? 16 : 0) + (*aeth ? 4 : 0) + (*imm ? 4 : 0) +
	       (*atom ? 28 : 0) + (o == 0x12 ? 8 : 0) + (o == 0x1c ? 4 : 0);
}

static uint32_t pick_len(uint32_t mrlen)
{
	static const uint32_t l[] = { 0, 1, 8, MTU - 1, MTU, MTU + 1,
				      REGION, REGION + 1, 1u << 20, 1u << 31,
				      0xfffffffeu, 0xffffffffu };

	return below(4) ? l[below(ARRAY_SIZE(l))] :
			  below(mrlen + 64);
}

static uint64_t pick_va(const struct target *t)
{
	switch (below(8)) {
	case 0:
		return t->va + t->len - 1 - below(8);
	case 1:
		return t->va + t->len;
	case 2:
		return t->va - 1 - below(64);
	case 3:
		return 0;
	case 4:
		return ~0ull - below(4096);
	case 5:
		return rnd();
	default:
		return t->va + below(t->len);
	}
}

/* An R_Key and a VA for t: its MR's, the remote-read-only MR's, others. */
static void pick_key(const struct target *t, uint32_t *rkey, uint64_t *va)
{
	*va = pick_va(t);
	switch (below(6)) {
	case 0:
		*rkey = t->rkey ^ 1;		/* the key byte */
		break;
	case 1:
		*rkey = ro_rkey;
		*va = ro_va + below(PAGE);
		break;
	case 2:
		*rkey = (uint32_t)rnd();
		break;
	default:
		*rkey = t->rkey;
	}
}

/*
 * A PSN for t: around the expected one for a target, or (prot_safe) one
 * that no correct QP acts on: the duplicate region or 2^22 ahead.
 */
static uint32_t pick_psn(const struct target *t, bool response, bool prot_safe)
{
	uint32_t base = response ? t->out_psn : t->in_psn;
	/* expected, last, just ahead, just behind, the window's two edges */
	static const int32_t near[] = { 1, 0, 2, 9, 17, -1, -8, -15,
					(1 << 23) - 1, 1 << 23, (1 << 23) + 1,
					-(1 << 23) + 1, -(1 << 23) };

	if (prot_safe)
		return (below(2) ? base - 64 - below(1 << 20) :
				   base + (1u << 22) + below(1 << 22)) & 0xffffff;
	if (!below(8))
		return (uint32_t)rnd() & 0xffffff;
	return (base + near[below(ARRAY_SIZE(near))]) & 0xffffff;
}

static uint32_t pick_src(void)
{
	if (below(5))
		return src_ip;
	sent_src_random++;
	switch (below(4)) {
	case 0:
		return src_ip + 1;
	case 1:
		return (src_ip & 0xffffff00) | 0xfe;
	case 2:
		return dst_ip;
	default:
		return ((uint32_t)rnd() & 0xdfffffff) | 0x01000000;
	}
}

/*
 * Build one packet to t with opcode op and payload len; prot_safe keeps
 * its PSN harmless.  The IB part's length is returned.
 */
static size_t craft(struct target *t, uint8_t op, size_t len, bool prot_safe)
{
	bool reth, aeth, imm, deth, atom;
	size_t ext = ext_len(op, &reth, &aeth, &imm, &deth, &atom);
	uint8_t pad = below(8) ? (-len) & 3 : below(4);
	uint8_t *b = pkt + 28, *h = b + 12;
	size_t iblen = 12 + ext + len + pad + 4;
	uint32_t qpn = t->qpn, rkey;
	uint64_t va;
	static const uint8_t syn[] = { 0x1f, 0x00, 0x20, 0x3f, 0x40, 0x5f,
				       0x60, 0x61, 0x62, 0x63, 0x64, 0x9f };

	if (!below(40))
		qpn = below(2) ? 1 : (uint32_t)rnd();
	ip_udp(pick_src(), iblen);
	b[0] = op;
	b[1] = (below(2) << 7) | (pad << 4) | (below(30) ? 0 : below(16));
	put16(b + 2, below(30) ? 0xffff : (uint16_t)rnd());
	b[4] = below(20) ? 0 : (uint8_t)rnd();
	put24(b + 5, qpn);
	b[8] = below(2) ? 0x80 : 0;
	put24(b + 9, pick_psn(t, is_response(op), prot_safe));
	if (deth) {
		put32(h, below(4) ? UD_QKEY : (uint32_t)rnd());
		put24(h + 5, below(2) ? t->peer : (uint32_t)rnd());
		h += 8;
	}
	if (op == 0x1c)
		h += 4;				/* FETH */
	if (reth) {
		pick_key(t, &rkey, &va);
		put64(h, va);
		put32(h + 8, rkey);
		/*
		 * A duplicate READ is executed again: a long one would answer
		 * with PSNs of the real requester's outstanding requests.
		 */
		put32(h + 12, prot_safe && (op & 0x1f) == 0x0c ? below(65) :
			      pick_len(t->len));
		h += 16;
	}
	if (atom) {
		pick_key(t, &rkey, &va);
		put64(h, below(2) ? t->va + 8 * below(t->len / 8) : va);
		put32(h + 8, rkey);
		put64(h + 12, rnd());
		put64(h + 20, rnd());
		h += 28;
	}
	if (aeth) {
		h[0] = syn[below(ARRAY_SIZE(syn))];
		put24(h + 1, (uint32_t)rnd());
		h += 4;
	}
	if ((op & 0x1f) == 0x12)
		h += 8;				/* AtomicAckETH */
	if (imm) {
		put32(h, (uint32_t)rnd());
		h += 4;
	}
	memset(h, 0xf5, len + pad);		/* the injector's bytes */
	icrc_put(pkt, iblen);
	return iblen;
}

/* Send the crafted packet (IB part iblen), one time in ten with a bad ICRC. */
static void emit(size_t iblen)
{
	size_t at = 28 + iblen - 1 - below(4);
	uint8_t bit = 1 << below(8);

	if (below(10)) {
		send_pkt(28 + iblen);
		return;
	}
	pkt[at] ^= bit;
	send_pkt(28 + iblen);
	pkt[at] ^= bit;
	sent_bad_icrc++;
}

static const uint8_t valid_ops[] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
	0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16,
	0x17, 0x1c, 0x1d, 0x64, 0x65,
};

static size_t pick_payload(void)
{
	static const size_t l[] = { 0, 1, 3, 4, MTU - 1, MTU, MTU + 1, 1400 };

	return below(2) ? l[below(ARRAY_SIZE(l))] : below(1400);
}

static struct target *pick_target(void)
{
	return &tg[below(ntg)];
}

/*
 * Every opcode to a QP of each kind and state, then every truncation of
 * each valid opcode to the target QPs, however long it takes (some 3500
 * packets).
 */
static void systematic(void)
{
	double t0 = now_s();
	struct target *t;
	size_t iblen, cut;
	int i, op, k;

	for (i = 0; i < ntg; i++) {
		if (i && tg[i].kind == tg[i - 1].kind && tg[i].kind != K_STATE)
			continue;	/* one protected and one target pair */
		for (op = 0; op < 256; op++) {
			sniff();
			iblen = craft(&tg[i], op, below(2) ? 8 : MTU,
				      tg[i].kind == K_PROT);
			emit(iblen);
		}
	}
	for (k = 0; k < (int)ARRAY_SIZE(valid_ops); k++) {
		t = &tg[N_PROT + below(ntg - N_PROT)];
		iblen = craft(t, valid_ops[k], 8, false);
		for (cut = 0; cut < iblen; cut++) {
			sniff();
			/* a truncated packet, its ICRC recomputed over what is left */
			put16(pkt + 2, 28 + cut);
			put16(pkt + 24, 8 + cut);
			if (cut >= 16)
				icrc_put(pkt, cut);
			send_pkt(28 + cut);
		}
	}
	ktap_diag("systematic part: %lu packets in %.1f s", sent, now_s() - t0);
}

/* A mutated replay of captured traffic to the target QPs. */
static void replay_one(void)
{
	size_t n, iblen;
	int c = below(ncap), k, flips;
	struct target *t;

	n = cap_len[c];
	memcpy(pkt, cap[c], n);
	pkt[1] = INJ_TOS;
	flips = below(4);
	for (k = 0; k < flips; k++)
		pkt[28 + below(n - 28)] ^= 1 << below(8);
	if (!below(4))
		n = 28 + below(n - 28 + 1);
	iblen = n - 28;
	put16(pkt + 2, n);
	put16(pkt + 24, 8 + iblen);
	if (iblen >= 16 && below(2))
		icrc_put(pkt, iblen);
	/* a flip into a protected QPN must not reach it as valid */
	t = iblen >= 12 ? by_qpn(get24(pkt + 28 + 5), false) : NULL;
	if (t && t->kind == K_PROT && iblen >= 16)
		pkt[n - 1] ^= 0x80;
	for (k = below(8) ? 1 : 2 + below(30); k > 0; k--)
		send_pkt(n);
}

static int inject(int argc, char **argv)
{
	uint64_t seed = 0;
	double secs = 10, t_end;
	bool replay = false;
	struct target *t;
	size_t iblen;
	int i, k, storm;
	uint8_t op;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--secs") && i + 1 < argc)
			secs = atof(argv[++i]);
		else
			break;
	}
	if (argc - i < 4) {
		fprintf(stderr, "inject --seed N --secs S INFO IFNAME DST SRC [replay]\n");
		return 2;
	}
	replay = argc - i > 4 && !strcmp(argv[i + 4], "replay");
	rng_state = seed;
	printf("# seed=%llu\n", (unsigned long long)seed);
	read_info(argv[i]);
	dst_ip = ntohl(inet_addr(argv[i + 2]));
	src_ip = ntohl(inet_addr(argv[i + 3]));
	if (ntg < N_PAIRS)
		fatal("the info file names the victim's QPs");
	raw_fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (raw_fd < 0)
		fatal("raw IPv4 socket");
	cap_fd = packet_socket(argv[i + 1]);
	t_end = now_s() + secs;
	if (replay) {
		/* the real traffic first: what is replayed */
		while (ncap < MAX_CAP && now_s() < t_end - secs / 2) {
			sniff();
			usleep(2000);
		}
		ktap_diag("%d frames captured for replay", ncap);
	} else {
		systematic();
	}
	while (now_s() < t_end) {
		sniff();
		if (replay && ncap && below(10) < 7) {
			replay_one();
			continue;
		}
		t = pick_target();
		op = below(8) ? valid_ops[below(ARRAY_SIZE(valid_ops))] :
				(uint8_t)rnd();
		iblen = craft(t, op, pick_payload(), t->kind == K_PROT);
		storm = below(25) ? 1 : 20 + below(100);
		for (k = 0; k < storm; k++)
			emit(iblen);
	}
	ktap_diag("%lu packets sent, %lu with a wrong ICRC, %lu from a random source",
		  sent, sent_bad_icrc, sent_src_random);
	result(sent > 0, replay ? "mutated replays of real traffic sent" :
	       "crafted packets sent", "none could be sent");
	return exit_status();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("VHCA_FUZZ_WAIT"))
		wait_s = atof(getenv("VHCA_FUZZ_WAIT"));
	rng_state = getenv("FUZZ_SEED") ? strtoull(getenv("FUZZ_SEED"), NULL, 0) :
				    (uint64_t)time(NULL);
	if (argc == 9 && !strcmp(argv[1], "victim"))
		return victim(argv + 2);
	if (argc == 8 && !strcmp(argv[1], "netem"))
		return netem(argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "inject"))
		return inject(argc - 2, argv + 2);
	fprintf(stderr, "usage: vhca_fuzz_net victim|netem|inject ...\n");
	return 2;
}
