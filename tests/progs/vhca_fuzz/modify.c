// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz modify: modify_qp interleaved with the engine's error paths.
 * QPs on DEV0, each a case of its own with its CQ, carry traffic toward
 * what fails (a bad rkey, a receiver without receives and rnr_retry 0, a
 * QPN nobody has with a short timeout, receives too short for the SEND:
 * RC, UC and UD) and toward what works, while the main thread and a
 * second thread move them at random to RESET, INIT, RTR, RTS, SQD and ERR
 * and back (a RESET reconnects the case's partner QP on DEV1 as well, so
 * that no PSN falls into the partner's duplicate region).  Every other
 * round goes over the wire (force_wire), where receives run in softirq.
 *
 * Checked: every send WR completes once, in the order posted (a RESET
 * forgets the ones still posted: the kernel produces no CQE of the QP
 * after it and the provider drops those its CQ holds), every WR of a
 * failing case and every receive too short completes with an error,
 * never SUCCESS; each round ends with every QP moved to ERR and all of
 * its WRs completed within 10 s.
 */
#include "fuzz.h"

enum { K_GOOD, K_RKEY, K_RNR, K_RETRY, K_LEN, K_UC, K_UD, NKIND };

static const char *const kind_name[NKIND] = {
	"good", "bad-rkey", "rnr", "retry", "length", "uc-length", "ud-length",
};

/* The error a failing case's sender expects (SUCCESS: none). */
static const enum ibv_wc_status kind_err[NKIND] = {
	[K_RKEY] = IBV_WC_REM_ACCESS_ERR, [K_RNR] = IBV_WC_RNR_RETRY_EXC_ERR,
	[K_RETRY] = IBV_WC_RETRY_EXC_ERR, [K_LEN] = IBV_WC_REM_INV_REQ_ERR,
};

#define NCASE		(2 * NKIND)
#define PEND		512	/* pending WRs tracked a case, a power of 2 */
#define MAX_PEND	256
#define SHORT_RECV	16
#define LONG_SEND	256
#define MOD_ROUND_S	2.0
#define DRAIN_S		10

/* Moves: to a state (ibv_qp_state), and a reconnection from RESET. */
enum {
	M_RESET, M_INIT, M_RTR, M_RTS, M_SQD, M_SQE, M_ERR, M_RECONNECT, NMOVE
};

static const char *const move_name[NMOVE] = {
	"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR", "reconnect",
};

struct mcase {
	int kind;
	struct ibv_qp *qp, *peer;	/* DEV0, DEV1 (none for K_RETRY) */
	struct ibv_cq *cq, *pcq;
	struct ibv_ah *ah;		/* K_UD: to peer */
	pthread_mutex_t lock;		/* bookkeeping, RESET, posting, polling */
	uint32_t psn, ppsn, dqpn;
	uint64_t seq, oldest;		/* next to post, oldest pending */
	uint64_t pend[PEND];		/* seq + 1 of a pending WR, 0: none */
	uint32_t precv;			/* receives outstanding on peer */
};

struct modify_fuzz {
	struct port a, b;
	struct ibv_pd *pa, *pb;
	struct ibv_mr *ma, *mb;
	uint8_t *bufa, *bufb;
	struct mcase c[NCASE];
	pthread_t thread;
	int stop;
	uint64_t rng2;			/* the second thread's stream */
	bool bad;
	/* the counts: by kind, and moves by thread */
	uint64_t posted[NKIND], ok[NKIND], expected[NKIND], flushed[NKIND],
		 other[NKIND], forgotten[NKIND];
	uint64_t recv_ok[NKIND], recv_err[NKIND];
	uint64_t moves[2][NMOVE], refused[2][NMOVE];
	uint64_t rounds, polls, wire_rounds;
};

static uint64_t srnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t sbelow(uint64_t *s, uint32_t n)
{
	return (uint32_t)((srnd(s) >> 32) * n >> 32);
}

static enum ibv_qp_type kind_type(int kind)
{
	return kind == K_UC ? IBV_QPT_UC : kind == K_UD ? IBV_QPT_UD :
	       IBV_QPT_RC;
}

static void fail(struct modify_fuzz *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct modify_fuzz *m, const char *fmt, ...)
{
	char s[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s, sizeof(s), fmt, ap);
	va_end(ap);
	if (!m->bad)
		ktap_diag("modify: %s", s);
	m->bad = true;
}

/* INIT, RTR and RTS of qp on from toward dqpn on to, PSNs given. */
static int mq_connect(struct ibv_qp *qp, const struct port *from,
		      const struct port *to, uint32_t dqpn, uint32_t rq_psn,
		      uint32_t sq_psn, int kind, uint64_t *rng)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = PORT, .qkey = QKEY,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	enum ibv_qp_type t = qp->qp_type;
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= t == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	if (ibv_modify_qp(qp, &a, mask))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (t != IBV_QPT_UD) {
		a.ah_attr = av_to(from, to);
		a.path_mtu = from->attr.active_mtu;
		a.dest_qp_num = dqpn;
		a.rq_psn = rq_psn;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
	}
	if (t == IBV_QPT_RC) {
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 1;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	if (ibv_modify_qp(qp, &a, mask))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (t == IBV_QPT_RC) {
		/* 4.096 us * 2^timeout: the nobody case's 8 us to 64 us. */
		a.timeout = kind == K_RETRY ? 1 + sbelow(rng, 4) : 8;
		a.retry_cnt = kind == K_RETRY ? sbelow(rng, 2) : 1;
		a.rnr_retry = kind == K_RNR ? 0 : 1;
		a.max_rd_atomic = 4;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return ibv_modify_qp(qp, &a, mask);
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) ? -1 : (int)a.qp_state;
}

static bool peer_recv(struct modify_fuzz *m, struct mcase *c)
{
	uint32_t len = c->kind == K_GOOD ? 4096 :
		       c->kind == K_UD ? 40 + SHORT_RECV : SHORT_RECV;
	struct ibv_sge s = { .addr = (uintptr_t)m->bufb +
			     (uint32_t)(c - m->c) * 4096, .length = len,
			     .lkey = m->mb->lkey };
	struct ibv_recv_wr wr = { .wr_id = RECV_TAG, .sg_list = &s,
				  .num_sge = 1 }, *bad;

	if (ibv_post_recv(c->peer, &wr, &bad))
		return false;
	c->precv++;
	return true;
}

static void forget(struct modify_fuzz *m, struct mcase *c)
{
	for (; c->oldest < c->seq; c->oldest++)
		if (c->pend[c->oldest % PEND]) {
			c->pend[c->oldest % PEND] = 0;
			m->forgotten[c->kind]++;
		}
}

/*
 * RESET of the case's QP and its peer (the WRs posted are forgotten),
 * fresh PSNs, both back to RTS.  Under the case's lock.
 */
static int reconnect(struct modify_fuzz *m, struct mcase *c, uint64_t *rng)
{
	int err;

	if (to_state(c->qp, IBV_QPS_RESET))
		return -1;
	forget(m, c);
	c->psn = srnd(rng) & 0xffffff;
	c->ppsn = srnd(rng) & 0xffffff;
	if (c->peer) {
		if (to_state(c->peer, IBV_QPS_RESET))
			return -1;
		c->precv = 0;
		if (mq_connect(c->peer, &m->b, &m->a, c->qp->qp_num, c->psn,
			       c->ppsn, c->kind, rng))
			return -1;
	}
	err = mq_connect(c->qp, &m->a, &m->b, c->dqpn, c->ppsn, c->psn,
			 c->kind, rng);
	while (!err && c->peer && c->kind != K_RNR && c->precv < 8 &&
	       peer_recv(m, c))
		;
	return err;
}

/* A random move of a random case, by thread who (0: main, 1: second). */
static void move(struct modify_fuzz *m, uint64_t *rng, int who)
{
	struct mcase *c = &m->c[sbelow(rng, NCASE)];
	int mv = sbelow(rng, NMOVE), err;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS };

	switch (mv) {
	case M_RESET:
	case M_RECONNECT:
		pthread_mutex_lock(&c->lock);
		if (mv == M_RESET) {
			err = to_state(c->qp, IBV_QPS_RESET);
			if (!err)
				forget(m, c);
		} else {
			err = reconnect(m, c, rng);
		}
		pthread_mutex_unlock(&c->lock);
		break;
	case M_INIT:
		a.qp_state = IBV_QPS_INIT;
		a.port_num = PORT;
		a.qkey = QKEY;
		err = ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | (c->kind == K_UD ? IBV_QP_QKEY :
						   IBV_QP_ACCESS_FLAGS));
		break;
	case M_RTR:
		/* From INIT with the case's attributes, else refused. */
		a.qp_state = IBV_QPS_RTR;
		a.ah_attr = av_to(&m->a, &m->b);
		a.path_mtu = m->a.attr.active_mtu;
		a.dest_qp_num = c->dqpn;
		a.rq_psn = c->ppsn;
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 1;
		err = ibv_modify_qp(c->qp, &a, c->kind == K_UD ? IBV_QP_STATE :
				    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				    (c->kind == K_UC ? 0 :
				     IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER));
		break;
	default:
		/* RTS (from SQD, or RTS to RTS), SQD, SQE, ERR. */
		err = to_state(c->qp, (enum ibv_qp_state)mv);
		break;
	}
	if (err)
		m->refused[who][mv]++;
	else
		m->moves[who][mv]++;
}

static void *mover(void *arg)
{
	struct modify_fuzz *m = arg;

	while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
		move(m, &m->rng2, 1);
		usleep(sbelow(&m->rng2, 3000));
	}
	return NULL;
}

static void post(struct modify_fuzz *m, struct mcase *c)
{
	struct ibv_sge s = { .addr = (uintptr_t)m->bufa +
			     (uint32_t)(c - m->c) * 4096, .lkey = m->ma->lkey };
	struct ibv_send_wr wr = { .sg_list = &s, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED,
				  .opcode = IBV_WR_SEND }, *bad;

	if (c->seq - c->oldest >= MAX_PEND)
		return;
	switch (c->kind) {
	case K_GOOD:
	case K_RKEY:
		wr.opcode = chance(50) ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
		if (c->kind == K_GOOD && chance(30))
			wr.opcode = IBV_WR_SEND;
		s.length = 1 + below(c->kind == K_GOOD ? 4096 : 1024);
		wr.wr.rdma.remote_addr = (uintptr_t)m->bufb +
					 (uint32_t)(c - m->c) * 4096;
		wr.wr.rdma.rkey = c->kind == K_GOOD ? m->mb->rkey :
				  m->mb->rkey ^ (1 + below(0xffffff)) << 8;
		break;
	case K_RNR:
	case K_RETRY:
		s.length = below(64);
		break;
	default:
		s.length = LONG_SEND + below(LONG_SEND);
		break;
	}
	if (c->kind == K_UD) {
		wr.wr.ud.ah = c->ah;
		wr.wr.ud.remote_qpn = c->peer->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
	}
	wr.wr_id = ((uint64_t)(c - m->c) << 48) | (c->seq & 0xffffffffffffULL);
	if (ibv_post_send(c->qp, &wr, &bad))
		return;
	c->pend[c->seq % PEND] = c->seq + 1;
	c->seq++;
	m->posted[c->kind]++;
}

/*
 * The sender's completion wc of case c: once, in order, never SUCCESS
 * where the case fails.
 */
static void sent(struct modify_fuzz *m, struct mcase *c, const struct ibv_wc *wc)
{
	uint64_t seq = wc->wr_id & 0xffffffffffffULL;
	int k = c->kind;

	if ((wc->wr_id >> 48) != (uint64_t)(c - m->c) || seq >= c->seq ||
	    c->pend[seq % PEND] != seq + 1) {
		fail(m, "case %s: completion of wr_id 0x%" PRIx64 " (status %s) not pending (posted %" PRIu64 ", oldest %" PRIu64 ")",
		     kind_name[k], (uint64_t)wc->wr_id,
		     ibv_wc_status_str(wc->status), c->seq, c->oldest);
		return;
	}
	if (seq != c->oldest)
		fail(m, "case %s: WR %" PRIu64 " completed before WR %" PRIu64,
		     kind_name[k], seq, c->oldest);
	c->pend[seq % PEND] = 0;
	while (c->oldest < c->seq && !c->pend[c->oldest % PEND])
		c->oldest++;
	if (wc->status == IBV_WC_SUCCESS) {
		m->ok[k]++;
		if (kind_err[k])
			fail(m, "case %s: WR %" PRIu64 " completed SUCCESS",
			     kind_name[k], seq);
	} else if (wc->status == IBV_WC_WR_FLUSH_ERR) {
		m->flushed[k]++;
	} else if (kind_err[k] && wc->status == kind_err[k]) {
		m->expected[k]++;
	} else {
		m->other[k]++;
	}
}

static void poll_case(struct modify_fuzz *m, struct mcase *c)
{
	struct ibv_wc wc[16];
	int n, i;

	pthread_mutex_lock(&c->lock);
	while ((n = ibv_poll_cq(c->cq, 16, wc)) > 0)
		for (i = 0; i < n; i++)
			sent(m, c, &wc[i]);
	if (n < 0)
		fail(m, "case %s: poll_cq failed", kind_name[c->kind]);
	while (c->pcq && (n = ibv_poll_cq(c->pcq, 16, wc)) > 0)
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id != RECV_TAG) {
				fail(m, "case %s: peer completion of wr_id 0x%" PRIx64,
				     kind_name[c->kind], (uint64_t)wc[i].wr_id);
				continue;
			}
			if (c->precv)
				c->precv--;
			if (wc[i].status != IBV_WC_SUCCESS) {
				m->recv_err[c->kind]++;
				continue;
			}
			m->recv_ok[c->kind]++;
			if (c->kind != K_GOOD)
				fail(m, "case %s: a receive of %u bytes took %u bytes with SUCCESS",
				     kind_name[c->kind], SHORT_RECV,
				     wc[i].byte_len);
		}
	if (c->peer && c->kind != K_RNR)
		while (c->precv < 8 && peer_recv(m, c))
			;
	pthread_mutex_unlock(&c->lock);
	m->polls++;
}

static bool case_create(struct modify_fuzz *m, struct mcase *c, int kind)
{
	enum ibv_qp_type t = kind_type(kind);
	struct ibv_ah_attr av = av_to(&m->a, &m->b);
	uint64_t *rng = &fuzz_rng_stream;

	c->kind = kind;
	pthread_mutex_init(&c->lock, NULL);
	c->cq = ibv_create_cq(m->a.ctx, 2 * PEND, NULL, NULL, 0);
	c->qp = c->cq ? qp_new(m->pa, c->cq, NULL, t, 32, 1) : NULL;
	if (!c->qp)
		return false;
	if (kind != K_RETRY) {
		c->pcq = ibv_create_cq(m->b.ctx, 64, NULL, NULL, 0);
		c->peer = c->pcq ? qp_new(m->pb, c->pcq, NULL, t, 32, 1) : NULL;
		if (!c->peer)
			return false;
		c->dqpn = c->peer->qp_num;
	} else {
		/* A QPN nobody has: vhca draws them at random. */
		do
			c->dqpn = 2 + below(0xfffffd);
		while (c->dqpn == c->qp->qp_num);
	}
	if (kind == K_UD) {
		c->ah = ibv_create_ah(m->pa, &av);
		if (!c->ah)
			return false;
	}
	return !reconnect(m, c, rng);
}

static void case_destroy(struct mcase *c)
{
	if (c->qp && ibv_destroy_qp(c->qp))
		ktap_diag("modify: destroy QP: %s", strerror(errno));
	if (c->peer && ibv_destroy_qp(c->peer))
		ktap_diag("modify: destroy peer QP: %s", strerror(errno));
	if (c->ah)
		ibv_destroy_ah(c->ah);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->pcq)
		ibv_destroy_cq(c->pcq);
	pthread_mutex_destroy(&c->lock);
}

/* Every QP to ERR (but those in RESET), every WR completed within DRAIN_S. */
static bool drain(struct modify_fuzz *m)
{
	double end = now_s() + DRAIN_S;
	bool left;
	int i;

	/* RESET has nothing posted and may not go to ERR. */
	for (i = 0; i < NCASE; i++)
		if (to_state(m->c[i].qp, IBV_QPS_ERR) &&
		    (qp_state(m->c[i].qp) != IBV_QPS_RESET ||
		     m->c[i].oldest < m->c[i].seq))
			fail(m, "case %s: modify to ERR: %s",
			     kind_name[m->c[i].kind], strerror(errno));
	do {
		left = false;
		for (i = 0; i < NCASE; i++) {
			poll_case(m, &m->c[i]);
			left |= m->c[i].oldest < m->c[i].seq;
		}
	} while (left && now_s() < end);
	for (i = 0; left && i < NCASE; i++)
		if (m->c[i].oldest < m->c[i].seq)
			fail(m, "case %s: %" PRIu64 " WRs without a completion %d s after ERR (oldest %" PRIu64 ")",
			     kind_name[m->c[i].kind],
			     m->c[i].seq - m->c[i].oldest, DRAIN_S,
			     m->c[i].oldest);
	return !left;
}

static bool modify_open(struct modify_fuzz *m, char **dev)
{
	int i;

	if (port_open(&m->a, dev[0], atoi(dev[1])) ||
	    port_open(&m->b, dev[2], atoi(dev[3])))
		return false;
	m->pa = ibv_alloc_pd(m->a.ctx);
	m->pb = ibv_alloc_pd(m->b.ctx);
	m->bufa = calloc(NCASE, 4096);
	m->bufb = calloc(NCASE, 4096);
	if (!m->pa || !m->pb || !m->bufa || !m->bufb)
		return false;
	m->ma = ibv_reg_mr(m->pa, m->bufa, NCASE * 4096,
			   IBV_ACCESS_LOCAL_WRITE);
	m->mb = ibv_reg_mr(m->pb, m->bufb, NCASE * 4096,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	if (!m->ma || !m->mb)
		return false;
	for (i = 0; i < NCASE; i++)
		if (!case_create(m, &m->c[i], i % NKIND))
			return false;
	return true;
}

static bool modify_close(struct modify_fuzz *m)
{
	int i;

	for (i = 0; i < NCASE; i++)
		case_destroy(&m->c[i]);
	return !(m->ma && ibv_dereg_mr(m->ma)) && !(m->mb && ibv_dereg_mr(m->mb)) &&
	       !(m->pa && ibv_dealloc_pd(m->pa)) &&
	       !(m->pb && ibv_dealloc_pd(m->pb)) &&
	       !(m->a.ctx && ibv_close_device(m->a.ctx)) &&
	       !(m->b.ctx && ibv_close_device(m->b.ctx));
}

static void modify_report(struct modify_fuzz *m, uint64_t seed)
{
	int k, w;

	ktap_diag("fuzz modify: seed=%" PRIu64 ": %" PRIu64 " rounds (%" PRIu64 " over the wire), %" PRIu64 " polls",
		  seed, m->rounds, m->wire_rounds, m->polls);
	for (k = 0; k < NKIND; k++)
		ktap_diag("modify %s: %" PRIu64 " posted: %" PRIu64 " SUCCESS, %" PRIu64 " %s, %" PRIu64 " flushed, %" PRIu64 " other errors, %" PRIu64 " forgotten by RESET; peer receives %" PRIu64 " SUCCESS, %" PRIu64 " errors",
			  kind_name[k], m->posted[k], m->ok[k], m->expected[k],
			  kind_err[k] ? ibv_wc_status_str(kind_err[k]) : "expected",
			  m->flushed[k], m->other[k], m->forgotten[k],
			  m->recv_ok[k], m->recv_err[k]);
	for (w = 0; w < 2; w++) {
		char line[512];
		int n = 0;

		for (k = 0; k < NMOVE; k++)
			n += snprintf(line + n, sizeof(line) - n,
				      "%s %s %" PRIu64 "/%" PRIu64, k ? "," : "",
				      move_name[k], m->moves[w][k],
				      m->refused[w][k]);
		ktap_diag("modify moves by the %s thread (done/refused):%s",
			  w ? "second" : "posting", line);
	}
}

int modify_main(char **dev, double secs, uint64_t seed)
{
	static struct modify_fuzz m;
	struct victim_proc vp;
	double end = now_s() + secs, round_end;
	bool ok, drained = true;
	int i, wire0, first;

	fuzz_rng_stream = seed;
	m.rng2 = rnd();
	ok = victim_start(&vp, dev);
	result(ok, "victim: RC pair connected in a process of its own",
	       "setup failed");
	ok = modify_open(&m, dev);
	result(ok, "modify: QPs of every case connected", "%s",
	       strerror(errno));
	wire0 = force_wire(-1);
	first = below(2);
	while (ok && now_s() < end) {
		/* Every other round over the wire: receives in softirq. */
		if (wire0 >= 0 && force_wire((m.rounds + first) & 1) > 0)
			m.wire_rounds++;
		m.stop = 0;
		if (pthread_create(&m.thread, NULL, mover, &m)) {
			fail(&m, "pthread_create failed");
			break;
		}
		round_end = now_s() + MOD_ROUND_S;
		while (now_s() < round_end) {
			struct mcase *c = &m.c[below(NCASE)];

			if (chance(5)) {
				move(&m, &fuzz_rng_stream, 0);
				continue;
			}
			pthread_mutex_lock(&c->lock);
			for (i = 1 + below(8); i; i--)
				post(&m, c);
			pthread_mutex_unlock(&c->lock);
			poll_case(&m, &m.c[below(NCASE)]);
		}
		__atomic_store_n(&m.stop, 1, __ATOMIC_RELEASE);
		pthread_join(m.thread, NULL);
		drained = drain(&m) && drained;
		for (i = 0; i < NCASE; i++) {
			pthread_mutex_lock(&m.c[i].lock);
			if (reconnect(&m, &m.c[i], &fuzz_rng_stream))
				fail(&m, "case %s: reconnect after the round: %s",
				     kind_name[m.c[i].kind], strerror(errno));
			pthread_mutex_unlock(&m.c[i].lock);
		}
		m.rounds++;
	}
	if (wire0 >= 0)
		force_wire(wire0);
	modify_report(&m, seed);
	result(ok && drained,
	       "modify: every QP moved to ERR completes all its WRs within 10 s",
	       NULL);
	result(ok && !m.bad,
	       "modify: every WR completes once, in order; no failing case and no short receive completes SUCCESS",
	       NULL);
	result(modify_close(&m), "modify: every object destroyed", "%s",
	       strerror(errno));
	victim_end(&vp);
	return exit_status();
}
