// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz: the process-side fuzzers of vhca, seeded and
 * bounded in time, each beside a victim process whose RC traffic must not
 * notice.
 *
 *   vhca_fuzz ring|verbs DEV0 GID0 DEV1 GID1 [--seed N] [--secs S]
 *
 * DEV0 and DEV1 are two vhca ports of one namespace, GID0 and GID1 the
 * indices of their RoCE v2 GIDs.  The seed (random unless given) is printed
 * first as "# seed=N" with the command line that replays it.
 *
 * ring: a process maps its own rings through the provider (RC QPs on an RQ
 * and on an SRQ, a UD QP, their CQ, the context's doorbell records) and
 * writes what it likes into them: every send and receive WQE field,
 * producer indices backwards (behind the consumer, and back over WQEs it
 * had announced, then kicking), forwards, wrapped and beyond the ring, CQ
 * consumer indices, other records of its doorbell page; it kicks or lets
 * the engine find the doorbell, while partner QPs on DEV1 send into its
 * receive queues.  Error completions, QPs in the error state, CQ overruns
 * and async events are what it may get: it recreates its objects and goes
 * on.
 *
 * The rings are reached through the provider's own structures (vhca.h,
 * built from the same tree): the create requests carry no driver data, so
 * creating the objects through the provider costs no control, and every
 * byte the device reads from user memory (ring slots, doorbell records) is
 * then written by this program alone, through the very mappings the
 * provider made from the create responses.
 *
 * verbs: two processes (DEV0 and DEV1, seeds derived from the seed) run
 * random create, modify, post, poll and destroy operations over PDs, MRs,
 * CQs, SRQs, RC and UD QPs and AHs: every state transition, legal or not,
 * with attribute masks right or random; posts in every state; destroys in
 * every order, refused ones included (a PD with an MR); QPs connected to
 * each other carry traffic while they are modified and destroyed; a fork
 * after the rings are mapped (the child reads them and exits, the parent
 * goes on destroying); a child that opens the device, creates objects and
 * exits with them live.  At the end everything is destroyed; the caller
 * compares the device's object and coherent-buffer counts to its baseline.
 *
 * The victim (a process of its own, in both modes): an RC QP on DEV0
 * connected to one on DEV1, SEND, RDMA WRITE and RDMA READ in turn, every
 * completion a success, every byte checked, no operation taking longer
 * than VICTIM_STALL_S.
 *
 * Replay: a seed gives the same sequence of choices (operations, field
 * values relative to the rings' indices and the objects' keys and
 * numbers); when the engine reaches a WQE, which QPs are in error then,
 * and how the processes interleave are timing, which no seed replays.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "vhca.h"
#include "fuzz_rng.h"
#include "vhca_test.h"

#define PORT		1
#define QKEY		0x11111111
#define BUF_SIZE	(1 << 16)
#define VICTIM_LEN	8192
#define VICTIM_STALL_S	60
#define RECV_TAG	(1ULL << 63)
#define FUZZ_SGES	4	/* the fuzzed QPs' max_send_sge, max_recv_sge */

/*
 * The ring fuzzer's hostility: the per mille of choices that take an odd
 * value rather than a plausible one, drawn anew every HOSTILITY_STEPS
 * steps from 1 to 600: a WQE has about ten fields, so only the low
 * values leave valid traffic between the odd fields, which reaches deeper
 * than noise (that only ever fails the first WQE and the QP with it).
 * The verb-sequence fuzzer leaves it at 1000: every fuzz_len() odd.
 */
#define HOSTILITY_STEPS	256
static const uint32_t hostility_pm[] = { 1, 3, 10, 30, 100, 300, 600 };
static uint32_t hostility = 1000;

static bool odd(void)
{
	return below(1000) < hostility;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- devices and connections ---- */

struct port {
	struct ibv_context *ctx;
	struct ibv_port_attr attr;
	union ibv_gid gid;
	int gid_index;
};

static int port_open(struct port *p, const char *name, int gid_index)
{
	p->gid_index = gid_index;
	p->ctx = open_named(name);
	if (!p->ctx)
		return -1;
	if (ibv_query_port(p->ctx, PORT, &p->attr) ||
	    ibv_query_gid(p->ctx, PORT, gid_index, &p->gid)) {
		ibv_close_device(p->ctx);
		p->ctx = NULL;
		return -1;
	}
	return 0;
}

static struct ibv_ah_attr av_to(const struct port *from, const struct port *to)
{
	return (struct ibv_ah_attr){
		.is_global = 1,
		.grh = { .dgid = to->gid, .sgid_index = from->gid_index,
			 .hop_limit = 64 },
		.port_num = PORT,
	};
}

static int qp_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = PORT, .qkey = QKEY,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	return ibv_modify_qp(qp, &a, mask);
}

/* RESET -> RTS; RC towards remote QP number dqpn on port to. */
static int qp_connect(struct ibv_qp *qp, const struct port *from,
		      const struct port *to, uint32_t dqpn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int rtr = IBV_QP_STATE, rts = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (qp_init(qp))
		return -1;
	if (qp->qp_type == IBV_QPT_RC) {
		a.ah_attr = av_to(from, to);
		a.path_mtu = from->attr.active_mtu;
		a.dest_qp_num = dqpn;
		a.rq_psn = 0x100;
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 1;
		rtr |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
		       IBV_QP_MIN_RNR_TIMER;
	}
	if (ibv_modify_qp(qp, &a, rtr))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x100;
	a.timeout = 10;
	a.retry_cnt = 3;
	a.rnr_retry = 3;
	a.max_rd_atomic = 4;
	if (qp->qp_type == IBV_QPT_RC)
		rts |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		       IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, rts);
}

static struct ibv_qp *qp_new(struct ibv_pd *pd, struct ibv_cq *cq,
			     struct ibv_srq *srq, enum ibv_qp_type type,
			     uint32_t wr, uint32_t sge)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = type,
		.cap = { .max_send_wr = wr, .max_recv_wr = srq ? 0 : wr,
			 .max_send_sge = sge, .max_recv_sge = srq ? 0 : sge,
			 .max_inline_data = 64 },
	};

	return ibv_create_qp(pd, &a);
}

/* ---- the victim ---- */

struct victim_report {
	uint64_t iterations;
	uint64_t bytes;
	char why[240];		/* empty: all well */
};

struct victim {
	struct port a, b;
	struct ibv_pd *pa, *pb;
	struct ibv_cq *ca, *cb;
	struct ibv_qp *qa, *qb;
	struct ibv_mr *ma, *mb;
	uint8_t *bufa, *bufb;	/* 4 areas of VICTIM_LEN each */
	struct victim_report r;
};

static uint8_t pattern(uint64_t it, uint32_t i, uint32_t salt)
{
	return (uint8_t)(it * 131 + i * 7 + (i >> 8) + salt * 61);
}

/* One completion on cq with wr_id id; false with r.why set otherwise. */
static bool victim_wait(struct victim *v, struct ibv_cq *cq, uint64_t id,
			uint32_t len, const char *what)
{
	double end = now_s() + VICTIM_STALL_S;
	struct ibv_wc wc;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0) {
			snprintf(v->r.why, sizeof(v->r.why),
				 "%s: poll_cq failed", what);
			return false;
		}
		if (n) {
			if (wc.status != IBV_WC_SUCCESS || wc.wr_id != id ||
			    (len && wc.byte_len != len)) {
				snprintf(v->r.why, sizeof(v->r.why),
					 "%s at iteration %" PRIu64 ": status %s, wr_id %" PRIu64 " (want %" PRIu64 "), byte_len %u (want %u)",
					 what, v->r.iterations,
					 ibv_wc_status_str(wc.status),
					 (uint64_t)wc.wr_id, id, wc.byte_len,
					 len);
				return false;
			}
			return true;
		}
	} while (now_s() < end);
	snprintf(v->r.why, sizeof(v->r.why),
		 "%s at iteration %" PRIu64 ": no completion in %d s", what,
		 v->r.iterations, VICTIM_STALL_S);
	return false;
}

static bool victim_check(struct victim *v, const uint8_t *p, uint32_t len,
			 uint32_t salt, const char *what)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern(v->r.iterations, i, salt)) {
			snprintf(v->r.why, sizeof(v->r.why),
				 "%s at iteration %" PRIu64 ": byte %u of %u is 0x%02x, want 0x%02x",
				 what, v->r.iterations, i, len, p[i],
				 pattern(v->r.iterations, i, salt));
			return false;
		}
	return true;
}

static bool victim_setup(struct victim *v, char **argv)
{
	size_t sz = 4 * VICTIM_LEN;
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ;

	if (port_open(&v->a, argv[0], atoi(argv[1])) ||
	    port_open(&v->b, argv[2], atoi(argv[3])))
		return false;
	v->bufa = calloc(1, sz);
	v->bufb = calloc(1, sz);
	v->pa = ibv_alloc_pd(v->a.ctx);
	v->pb = ibv_alloc_pd(v->b.ctx);
	if (!v->bufa || !v->bufb || !v->pa || !v->pb)
		return false;
	v->ma = ibv_reg_mr(v->pa, v->bufa, sz, acc);
	v->mb = ibv_reg_mr(v->pb, v->bufb, sz, acc);
	v->ca = ibv_create_cq(v->a.ctx, 64, NULL, NULL, 0);
	v->cb = ibv_create_cq(v->b.ctx, 64, NULL, NULL, 0);
	if (!v->ma || !v->mb || !v->ca || !v->cb)
		return false;
	v->qa = qp_new(v->pa, v->ca, NULL, IBV_QPT_RC, 16, 1);
	v->qb = qp_new(v->pb, v->cb, NULL, IBV_QPT_RC, 16, 1);
	return v->qa && v->qb &&
	       !qp_connect(v->qa, &v->a, &v->b, v->qb->qp_num) &&
	       !qp_connect(v->qb, &v->b, &v->a, v->qa->qp_num);
}

/* One SEND, one WRITE and one READ, each verified; false on a failure. */
static bool victim_round(struct victim *v)
{
	uint32_t len = 1 + (uint32_t)(v->r.iterations * 2749 % VICTIM_LEN);
	uint8_t *send = v->bufa, *rdst = v->bufa + VICTIM_LEN;
	uint8_t *recv = v->bufb, *wdst = v->bufb + VICTIM_LEN;
	struct ibv_sge s = { .lkey = v->ma->lkey, .length = len };
	struct ibv_sge rs = { .addr = (uintptr_t)recv, .lkey = v->mb->lkey,
			      .length = VICTIM_LEN };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rs, .num_sge = 1 };
	struct ibv_send_wr wr = { .sg_list = &s, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr *rbad;
	uint32_t i;

	for (i = 0; i < len; i++) {
		send[i] = pattern(v->r.iterations, i, 0);
		send[VICTIM_LEN * 2 + i] = pattern(v->r.iterations, i, 1);
	}
	memset(recv, 0, len);
	memset(wdst, 0, len);
	memset(rdst, 0, len);

	if (ibv_post_recv(v->qb, &rwr, &rbad)) {
		snprintf(v->r.why, sizeof(v->r.why), "post_recv: %s",
			 strerror(errno));
		return false;
	}
	s.addr = (uintptr_t)send;
	wr.wr_id = 1;
	wr.opcode = IBV_WR_SEND;
	if (ibv_post_send(v->qa, &wr, &bad)) {
		snprintf(v->r.why, sizeof(v->r.why), "post SEND: %s",
			 strerror(errno));
		return false;
	}
	if (!victim_wait(v, v->ca, 1, 0, "SEND") ||
	    !victim_wait(v, v->cb, 2, len, "receive") ||
	    !victim_check(v, recv, len, 0, "received"))
		return false;

	s.addr = (uintptr_t)(v->bufa + VICTIM_LEN * 2);
	wr.wr_id = 3;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)wdst;
	wr.wr.rdma.rkey = v->mb->rkey;
	if (ibv_post_send(v->qa, &wr, &bad)) {
		snprintf(v->r.why, sizeof(v->r.why), "post WRITE: %s",
			 strerror(errno));
		return false;
	}
	if (!victim_wait(v, v->ca, 3, 0, "WRITE") ||
	    !victim_check(v, wdst, len, 1, "written"))
		return false;

	s.addr = (uintptr_t)rdst;
	wr.wr_id = 4;
	wr.opcode = IBV_WR_RDMA_READ;
	if (ibv_post_send(v->qa, &wr, &bad)) {
		snprintf(v->r.why, sizeof(v->r.why), "post READ: %s",
			 strerror(errno));
		return false;
	}
	if (!victim_wait(v, v->ca, 4, len, "READ") ||
	    !victim_check(v, rdst, len, 1, "read"))
		return false;
	v->r.bytes += 3 * (uint64_t)len;
	return true;
}

/*
 * The victim's process: ready (one byte) on out once connected, then
 * rounds until stop is readable (closed), then its report on out.
 */
static void victim_main(char **argv, int stop, int out)
{
	struct victim v = { 0 };
	struct pollfd pfd = { .fd = stop, .events = POLLIN };
	char ok = 1;

	if (!victim_setup(&v, argv)) {
		snprintf(v.r.why, sizeof(v.r.why), "setup failed: %s",
			 strerror(errno));
		ok = 0;
	}
	if (write(out, &ok, 1) != 1)
		_exit(1);
	while (ok && poll(&pfd, 1, 0) == 0) {
		if (!victim_round(&v))
			break;
		v.r.iterations++;
	}
	if (write(out, &v.r, sizeof(v.r)) != sizeof(v.r))
		_exit(1);
	_exit(0);
}

struct victim_proc {
	pid_t pid;
	int stop, in;
};

/* Starts the victim; false if it could not connect. */
static bool victim_start(struct victim_proc *vp, char **argv)
{
	int s[2], o[2];
	char ok = 0;

	if (pipe(s) || pipe(o))
		return false;
	fflush(stdout);
	vp->pid = fork();
	if (vp->pid < 0)
		return false;
	if (!vp->pid) {
		close(s[1]);
		close(o[0]);
		victim_main(argv, s[0], o[1]);
	}
	close(s[0]);
	close(o[1]);
	vp->stop = s[1];
	vp->in = o[0];
	return read(vp->in, &ok, 1) == 1 && ok;
}

/* Stops the victim and prints its results. */
static void victim_end(struct victim_proc *vp)
{
	struct victim_report r = { 0 };
	ssize_t n;
	int st = 0;

	close(vp->stop);
	n = read(vp->in, &r, sizeof(r));
	waitpid(vp->pid, &st, 0);
	if (n != sizeof(r)) {
		result(false, "victim: RC traffic beside the fuzzer",
		       "no report (exit status 0x%x)", st);
		return;
	}
	ktap_diag("victim: %" PRIu64 " rounds of SEND, WRITE and READ, %" PRIu64 " bytes checked",
		  r.iterations, r.bytes);
	result(!r.why[0] && r.iterations, "victim: RC traffic beside the fuzzer, every completion a success, every byte right",
	       "%s", r.why[0] ? r.why : "no round completed");
}

/* ---- the ring fuzzer ---- */

enum { FQ_RQ, FQ_SRQ, FQ_UD, NFQ };

/*
 * The producer indices the ring fuzzer writes into a work ring's doorbell
 * record, by class: the next few, a full ring, past the ring, behind the
 * consumer, back over WQEs it had announced (between the consumer and the
 * head it wrote last: the engine may have sent them), half the index space
 * away, random, and unmoved.
 */
enum { H_NEXT, H_FULL, H_PAST, H_BEHIND, H_BACK, H_WRAP, H_RANDOM, H_STILL,
       NHEAD };
static const char *const head_class[NHEAD] = {
	"next", "full", "past the ring", "behind the consumer",
	"back over posted", "half the space away", "random", "unmoved",
};

struct ring_fuzz {
	struct port a, b;
	struct ibv_pd *pa, *pb;
	struct ibv_mr *ma, *mb;
	uint8_t *bufa, *bufb;
	struct ibv_cq *ca, *cb;
	struct ibv_srq *srq;
	struct ibv_ah *aha, *ahb;
	struct ibv_qp *q[NFQ];		/* fuzzed, on a */
	struct ibv_qp *p[NFQ];		/* partners, on b */
	uint32_t p_recvs[NFQ];		/* receives posted on p[] */
	uint64_t rounds, wqes, kicks, recreated, events, cqes, cqe_errors;
	uint64_t partner_sends;
	uint64_t heads[NHEAD];		/* work ring heads written, by class */
};

static void ring_destroy(struct ring_fuzz *f)
{
	int i;

	for (i = 0; i < NFQ; i++) {
		if (f->q[i] && ibv_destroy_qp(f->q[i]))
			ktap_diag("ring: destroy QP: %s", strerror(errno));
		if (f->p[i] && ibv_destroy_qp(f->p[i]))
			ktap_diag("ring: destroy partner QP: %s",
				  strerror(errno));
		f->q[i] = f->p[i] = NULL;
	}
	if (f->srq && ibv_destroy_srq(f->srq))
		ktap_diag("ring: destroy SRQ: %s", strerror(errno));
	if (f->ca && ibv_destroy_cq(f->ca))
		ktap_diag("ring: destroy CQ: %s", strerror(errno));
	if (f->cb && ibv_destroy_cq(f->cb))
		ktap_diag("ring: destroy CQ: %s", strerror(errno));
	f->srq = NULL;
	f->ca = f->cb = NULL;
}

/* Receives on partner i up to 16, by the provider's own path. */
static void partner_recvs(struct ring_fuzz *f, int i)
{
	struct ibv_sge s = { .addr = (uintptr_t)f->bufb,
			     .length = FUZZ_SGES * 4096, .lkey = f->mb->lkey };
	struct ibv_recv_wr wr = { .wr_id = RECV_TAG | i, .sg_list = &s,
				  .num_sge = 1 }, *bad;

	while (f->p_recvs[i] < 16 && !ibv_post_recv(f->p[i], &wr, &bad))
		f->p_recvs[i]++;
}

/* The fuzzed QPs, their partners, CQs and SRQ, all connected. */
static bool ring_create(struct ring_fuzz *f)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 64,
						  .max_sge = FUZZ_SGES } };
	int i;

	f->ca = ibv_create_cq(f->a.ctx, 256, NULL, NULL, 0);
	f->cb = ibv_create_cq(f->b.ctx, 256, NULL, NULL, 0);
	f->srq = ibv_create_srq(f->pa, &sa);
	if (!f->ca || !f->cb || !f->srq)
		return false;
	f->q[FQ_RQ] = qp_new(f->pa, f->ca, NULL, IBV_QPT_RC, 64, FUZZ_SGES);
	f->q[FQ_SRQ] = qp_new(f->pa, f->ca, f->srq, IBV_QPT_RC, 64, FUZZ_SGES);
	f->q[FQ_UD] = qp_new(f->pa, f->ca, NULL, IBV_QPT_UD, 64, FUZZ_SGES);
	for (i = 0; i < NFQ; i++) {
		f->p[i] = qp_new(f->pb, f->cb, NULL,
				 i == FQ_UD ? IBV_QPT_UD : IBV_QPT_RC, 64, 1);
		f->p_recvs[i] = 0;
		if (!f->q[i] || !f->p[i])
			return false;
	}
	for (i = 0; i < NFQ; i++)
		if (qp_connect(f->q[i], &f->a, &f->b, f->p[i]->qp_num) ||
		    qp_connect(f->p[i], &f->b, &f->a, f->q[i]->qp_num))
			return false;
	for (i = 0; i < NFQ; i++)
		partner_recvs(f, i);
	return true;
}

static bool ring_recreate(struct ring_fuzz *f)
{
	ring_destroy(f);
	f->recreated++;
	return ring_create(f);
}

/* An adversarial 32-bit length. */
static uint32_t fuzz_len(uint32_t small)
{
	static const uint32_t edge[] = { 0, 1, 4096, 65535, 65536, 65537,
		0x7fffffff, 0x80000000, 0xffffffff };

	if (!odd())
		return below(small + 1);
	if (chance(70))
		return edge[below(sizeof(edge) / sizeof(edge[0]))];
	return (uint32_t)rnd();
}

/* An lkey or rkey: the right one, a neighbour, another device's, noise. */
static uint32_t fuzz_key(uint32_t right, uint32_t other)
{
	if (!odd())
		return right;
	switch (below(6)) {
	case 0: return right ^ 1;
	case 1: return right + 0x100;
	case 2: return other;
	case 3: return (uint32_t)rnd();
	case 4: return 0;
	default: return right;	/* odd in another field */
	}
}

/* An address in buf with span bytes after it, at its edges, or anywhere. */
static uint64_t fuzz_addr(const uint8_t *buf, uint32_t span)
{
	if (!odd())
		return (uintptr_t)buf + below(BUF_SIZE - span);
	switch (below(5)) {
	case 0: return (uintptr_t)buf + BUF_SIZE - below(64);
	case 1: return (uintptr_t)buf - 1 - below(64);
	case 2: return rnd();
	case 3: return 0;
	default: return (uintptr_t)buf + below(BUF_SIZE);
	}
}

/*
 * The SGEs of a slot (room of them); plausible ones are at most small
 * bytes long, so that FUZZ_SGES of them fit the other side's receive (RC)
 * or the MTU (UD).
 */
static void fuzz_sges(struct vhca_sge *sge, uint32_t room, uint32_t small,
		      const struct ring_fuzz *f)
{
	uint32_t i;

	for (i = 0; i < room; i++) {
		sge[i].addr = fuzz_addr(f->bufa, 4096);
		sge[i].length = fuzz_len(small);
		sge[i].lkey = fuzz_key(f->ma->lkey, f->mb->lkey);
	}
}

/* A send WQE into slot, every field chosen (or noise). */
static void fuzz_send_wqe(struct ring_fuzz *f, int qi, void *slot,
			  uint32_t stride, uint32_t max_inline)
{
	struct vhca_send_wqe *w = slot;
	uint32_t room = (stride - sizeof(*w)) / sizeof(struct vhca_sge);
	uint32_t plausible = room < FUZZ_SGES ? room : FUZZ_SGES;
	uint32_t i;

	if (odd() && chance(10)) {
		for (i = 0; i + 8 <= stride; i += 8) {
			uint64_t x = rnd();

			memcpy((char *)slot + i, &x, 8);
		}
		return;
	}
	memset(w, 0, sizeof(*w));
	w->wr_id = rnd();
	/*
	 * Plausible: the opcodes of the QP's type (UD: the two SENDs; RC:
	 * WRITEs, SENDs, READ, SEND with Invalidate, the atomics, ATOMIC
	 * WRITE); else the kernel QPs' local operations, the atomics, or
	 * anything.
	 */
	if (!odd())
		w->opcode = qi == FQ_UD ? VHCA_WR_SEND + below(2) :
			    chance(75) ? below(6) :
			    chance(67) ? VHCA_WR_ATOMIC_CMP_AND_SWP + below(2) :
			    VHCA_WR_ATOMIC_WRITE;
	else
		w->opcode = chance(50) ? VHCA_WR_SEND_WITH_INV + below(7) :
			    below(256);
	w->flags = !odd() ? VHCA_WQE_SIGNALED | (below(8) & ~VHCA_WQE_INLINE) :
		   below(256);
	w->num_sge = !odd() ? below(plausible + 1) :
		     chance(50) ? plausible + 1 + below(room) : below(256);
	if (chance(20) && (w->opcode != VHCA_WR_RDMA_READ || odd())) {
		w->flags |= VHCA_WQE_INLINE;
		w->inline_len = !odd() ? below(max_inline + 1) :
				chance(50) ? max_inline + 1 : fuzz_len(max_inline);
	}
	w->imm_data = (uint32_t)rnd();
	if (odd()) {
		w->reserved0 = below(256);
		w->xrc_srqn = (uint32_t)rnd();
	}
	if (qi == FQ_UD) {
		uint32_t ah = to_vah(f->aha)->ah_index;

		w->ud.ah = !odd() ? ah : chance(50) ? ah + 1 : (uint32_t)rnd();
		w->ud.remote_qpn = !odd() ? f->p[FQ_UD]->qp_num :
				   chance(50) ? 0xffffff + below(2) : (uint32_t)rnd();
		w->ud.remote_qkey = !odd() ? QKEY : (uint32_t)rnd();
	} else {
		w->rdma.remote_addr = fuzz_addr(f->bufb, FUZZ_SGES * 4096);
		w->rdma.rkey = fuzz_key(f->mb->rkey, f->ma->rkey);
		/* The atomics' operands (past rdma's part of the union). */
		w->atomic.compare_add = rnd();
		w->atomic.swap = rnd();
	}
	if (w->flags & VHCA_WQE_INLINE) {
		for (i = 0; i < stride - sizeof(*w); i++)
			((uint8_t *)(w + 1))[i] = (uint8_t)rnd();
	} else {
		fuzz_sges((struct vhca_sge *)(w + 1), room,
			  qi == FQ_UD ? 256 : 4096, f);
	}
}

static void fuzz_recv_wqe(struct ring_fuzz *f, void *slot, uint32_t stride)
{
	struct vhca_recv_wqe *w = slot;
	uint32_t room = (stride - sizeof(*w)) / sizeof(struct vhca_sge);

	memset(w, 0, sizeof(*w));
	w->wr_id = rnd() | RECV_TAG;
	w->num_sge = !odd() ? below((room < FUZZ_SGES ? room : FUZZ_SGES) + 1) :
		     chance(50) ? room + 1 : below(256);
	if (odd())
		w->reserved[below(7)] = 1 + below(255);
	fuzz_sges((struct vhca_sge *)(w + 1), room, 4096, f);
}

/*
 * An odd producer index, relative to the consumer's tail: full, beyond
 * the ring, backwards (behind the consumer, or from cur, the head written
 * last, back over WQEs announced), wrapped, noise, or not moving; its
 * class in *cls.
 */
static uint32_t odd_head(uint32_t tail, uint32_t cur, uint32_t count, int *cls)
{
	switch (below(7)) {
	case 0: *cls = H_FULL; return tail + count;
	case 1: *cls = H_PAST; return tail + count + 1 + below(count);
	case 2: *cls = H_BEHIND; return tail - 1 - below(count);
	case 3:
		if (cur != tail) {
			*cls = H_BACK;
			return cur - 1 - below(cur - tail);
		}
		*cls = H_STILL;
		return tail;
	case 4: *cls = H_WRAP; return tail + 0x80000000u;
	case 5: *cls = H_RANDOM; return (uint32_t)rnd();
	default: *cls = H_STILL; return tail;
	}
}

/* A producer index: a few entries past the tail, or an odd one. */
static uint32_t fuzz_head(uint32_t tail, uint32_t count)
{
	int cls;

	if (!odd())
		return tail + 1 + below(count < 8 ? count : 8);
	return odd_head(tail, tail, count, &cls);
}

/*
 * Scribble on a work ring (SQ, RQ or SRQ) and set its producer index.
 * True when the index moved back over WQEs announced.
 */
static bool fuzz_wq(struct ring_fuzz *f, int qi, struct vhca_wq *wq,
		    bool send, uint32_t max_inline)
{
	uint32_t tail = __atomic_load_n(wq->st_tail, __ATOMIC_ACQUIRE);
	uint32_t cur = *wq->db_head, n = 1 + below(8), i, head;
	int cls = H_NEXT;

	/* Plausibly, the next n slots after the last head this side wrote. */
	if (cur - tail > wq->count)
		cur = tail;
	if (n > wq->count - (cur - tail))
		n = wq->count - (cur - tail);
	for (i = 0; i < n; i++) {
		uint32_t idx = !odd() ? cur + i : (uint32_t)rnd();
		void *slot = (char *)wq->buf + (size_t)(idx & (wq->count - 1)) *
						   wq->stride;

		if (send)
			fuzz_send_wqe(f, qi, slot, wq->stride, max_inline);
		else
			fuzz_recv_wqe(f, slot, wq->stride);
	}
	f->wqes += n;
	head = !odd() ? cur + n : odd_head(tail, cur + n, wq->count, &cls);
	f->heads[cls]++;
	__atomic_store_n(wq->db_head, head, __ATOMIC_RELEASE);
	return cls == H_BACK;
}

/* A valid SEND from partner i, to consume the fuzzed receive queues. */
static void partner_send(struct ring_fuzz *f, int i)
{
	struct ibv_sge s = { .addr = (uintptr_t)f->bufb + 8192,
			     .length = 1 + below(i == FQ_UD ? 512 : 2048),
			     .lkey = f->mb->lkey };
	struct ibv_send_wr wr = { .wr_id = i, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	if (i == FQ_UD) {
		wr.wr.ud.ah = f->ahb;
		wr.wr.ud.remote_qpn = f->q[FQ_UD]->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
	}
	if (!ibv_post_send(f->p[i], &wr, &bad))
		f->partner_sends++;
}

static void kick(struct ring_fuzz *f, struct ibv_qp *qp)
{
	struct ibv_send_wr *bad = NULL;

	ibv_cmd_post_send(qp, NULL, &bad);
	f->kicks++;
}

/* Drain both CQs; partner receives are topped up. */
static void ring_poll(struct ring_fuzz *f)
{
	struct ibv_wc wc[32];
	int n, i;

	while ((n = ibv_poll_cq(f->ca, 32, wc)) > 0)
		for (i = 0; i < n; i++) {
			f->cqes++;
			f->cqe_errors += wc[i].status != IBV_WC_SUCCESS;
		}
	while ((n = ibv_poll_cq(f->cb, 32, wc)) > 0)
		for (i = 0; i < n; i++)
			if (wc[i].wr_id & RECV_TAG) {
				int q = wc[i].wr_id & 3;

				if (q < NFQ && f->p_recvs[q])
					f->p_recvs[q]--;
			}
	for (i = 0; i < NFQ; i++)
		partner_recvs(f, i);
}

static void ring_events(struct ring_fuzz *f)
{
	struct ibv_async_event ev;
	struct port *p[2] = { &f->a, &f->b };
	int i;

	for (i = 0; i < 2; i++)
		while (!ibv_get_async_event(p[i]->ctx, &ev)) {
			ibv_ack_async_event(&ev);
			f->events++;
		}
}

/* Any fuzzed or partner QP in error (or a CQ overrun): recreate all. */
static bool ring_broken(struct ring_fuzz *f)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	int i;

	if (to_vcq(f->ca)->st->flags & VHCA_STATUS_CQ_OVERFLOW ||
	    to_vcq(f->cb)->st->flags & VHCA_STATUS_CQ_OVERFLOW)
		return true;
	for (i = 0; i < NFQ; i++) {
		if (to_vqp(f->q[i])->st->flags & VHCA_STATUS_QP_ERROR ||
		    to_vqp(f->p[i])->st->flags & VHCA_STATUS_QP_ERROR)
			return true;
		if (!ibv_query_qp(f->p[i], &a, IBV_QP_STATE, &ia) &&
		    a.qp_state != IBV_QPS_RTS)
			return true;
	}
	return false;
}

/* One fuzzing step, chosen by the seed's stream. */
static void ring_step(struct ring_fuzz *f)
{
	struct vhca_context *vc = to_vctx(f->a.ctx);
	int qi = below(NFQ);
	struct vhca_qp *vq = to_vqp(f->q[qi]);

	switch (below(10)) {
	case 0:
	case 1:
	case 2:
	case 3:
		/* A head moved back is kicked: the engine must fail the QP. */
		if (fuzz_wq(f, qi, &vq->sq, true, vq->max_inline) || chance(60))
			kick(f, f->q[qi]);
		break;
	case 4:
	case 5:
	case 8:
		if (qi == FQ_SRQ)
			fuzz_wq(f, qi, &to_vsrq(f->srq)->rq, false, 0);
		else
			fuzz_wq(f, qi, &vq->rq, false, 0);
		partner_send(f, qi);
		break;
	case 6:
		/* The CQ's consumer index: the engine decides overruns by it. */
		__atomic_store_n(&to_vcq(f->ca)->db->head[0],
				 fuzz_head(to_vcq(f->ca)->st->tail[0],
					   to_vcq(f->ca)->count), __ATOMIC_RELEASE);
		break;
	case 7:
		/* Any record of the context's doorbell page. */
		__atomic_store_n(&vc->db[below(vc->nrecs)].head[below(2)],
				 fuzz_head(0, 1u << below(13)), __ATOMIC_RELEASE);
		if (chance(50))
			kick(f, f->q[qi]);
		break;
	default:
		kick(f, f->q[qi]);
		break;
	}
}

static int ring_main(char **dev, double secs, uint64_t seed)
{
	struct ring_fuzz f = { 0 };
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_ah_attr av;
	struct victim_proc vp;
	char heads[256];
	bool ok;
	double end;
	int fl, i, n;

	rng_state = seed;
	ok = victim_start(&vp, dev);
	result(ok, "victim: RC pair connected in a process of its own",
	       "setup failed");
	ok = ok && !port_open(&f.a, dev[0], atoi(dev[1])) &&
	     !port_open(&f.b, dev[2], atoi(dev[3]));
	f.bufa = calloc(1, BUF_SIZE);
	f.bufb = calloc(1, BUF_SIZE);
	ok = ok && f.bufa && f.bufb && (f.pa = ibv_alloc_pd(f.a.ctx)) &&
	     (f.pb = ibv_alloc_pd(f.b.ctx)) &&
	     (f.ma = ibv_reg_mr(f.pa, f.bufa, BUF_SIZE, acc)) &&
	     (f.mb = ibv_reg_mr(f.pb, f.bufb, BUF_SIZE, acc));
	if (ok) {
		av = av_to(&f.a, &f.b);
		f.aha = ibv_create_ah(f.pa, &av);
		av = av_to(&f.b, &f.a);
		f.ahb = ibv_create_ah(f.pb, &av);
		ok = f.aha && f.ahb && ring_create(&f);
	}
	result(ok, "ring: the fuzzed QPs (RC on an RQ, RC on an SRQ, UD) and their partners",
	       "%s", strerror(errno));
	if (ok) {
		fl = fcntl(f.a.ctx->async_fd, F_GETFL);
		fcntl(f.a.ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
		fl = fcntl(f.b.ctx->async_fd, F_GETFL);
		fcntl(f.b.ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	}
	end = now_s() + secs;
	while (ok && now_s() < end) {
		if (!(f.rounds % HOSTILITY_STEPS))
			hostility = hostility_pm[below(sizeof(hostility_pm) /
						       sizeof(hostility_pm[0]))];
		ring_step(&f);
		f.rounds++;
		ring_poll(&f);
		if (!(f.rounds & 15))
			ring_events(&f);
		if ((!(f.rounds & 7) && ring_broken(&f)) ||
		    !(f.rounds % 2000)) {
			ok = ring_recreate(&f);
			if (!ok)
				result(false, "ring: recreate the objects",
				       "after %" PRIu64 " steps: %s", f.rounds,
				       strerror(errno));
		}
	}
	if (f.a.ctx) {
		ring_poll(&f);
		ring_events(&f);
	}
	ktap_diag("ring: %" PRIu64 " steps, %" PRIu64 " WQEs written, %" PRIu64 " kicks, %" PRIu64 " partner sends, %" PRIu64 " CQEs (%" PRIu64 " in error), %" PRIu64 " async events, %" PRIu64 " recreations",
		  f.rounds, f.wqes, f.kicks, f.partner_sends, f.cqes,
		  f.cqe_errors, f.events, f.recreated);
	for (i = 0, n = 0; i < NHEAD; i++)
		n += snprintf(heads + n, sizeof(heads) - n, "%s%s %" PRIu64,
			      i ? ", " : "", head_class[i], f.heads[i]);
	ktap_diag("ring: work ring heads written: %s", heads);
	result(f.rounds > 0, "ring: fuzzed for the time given", "no step");
	ring_destroy(&f);
	if (f.aha)
		ibv_destroy_ah(f.aha);
	if (f.ahb)
		ibv_destroy_ah(f.ahb);
	result((!f.ma || !ibv_dereg_mr(f.ma)) && (!f.mb || !ibv_dereg_mr(f.mb)) &&
	       (!f.pa || !ibv_dealloc_pd(f.pa)) && (!f.pb || !ibv_dealloc_pd(f.pb)),
	       "ring: every object destroyed", "%s", strerror(errno));
	if (f.a.ctx)
		ibv_close_device(f.a.ctx);
	if (f.b.ctx)
		ibv_close_device(f.b.ctx);
	victim_end(&vp);
	free(f.bufa);
	free(f.bufb);
	return exit_status();
}

/* ---- the verb-sequence fuzzer ---- */

#define NPD	3
#define NMR	6
#define NCQ	4
#define NSRQ	2
#define NQP	8
#define NAH	3

struct verbs_fuzz {
	struct port p;
	uint8_t *buf;
	struct ibv_comp_channel *ch;
	struct ibv_pd *pd[NPD];
	struct ibv_mr *mr[NMR];
	struct ibv_cq *cq[NCQ];
	struct ibv_srq *srq[NSRQ];
	struct ibv_qp *qp[NQP];
	struct ibv_ah *ah[NAH];
	uint64_t ops, forks, children;
	uint64_t modified[7];		/* transitions done, by new state */
	uint64_t posted, cqes;
	unsigned int bad_children;
};

/* A live object of a table of n, or NULL (never for an empty table). */
static void *pick(void *const *tab, int n)
{
	int i = below(n), j;

	for (j = 0; j < n; j++)
		if (tab[(i + j) % n])
			return tab[(i + j) % n];
	return NULL;
}

static void op_pd(struct verbs_fuzz *v)
{
	int i = below(NPD);

	if (!v->pd[i])
		v->pd[i] = ibv_alloc_pd(v->p.ctx);
	else if (!ibv_dealloc_pd(v->pd[i]))
		v->pd[i] = NULL;	/* EBUSY while something uses it */
}

static void op_mr(struct verbs_fuzz *v)
{
	static const int acc[] = { 0, IBV_ACCESS_LOCAL_WRITE,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_WRITE,
		IBV_ACCESS_REMOTE_READ };
	int i = below(NMR);
	struct ibv_pd *pd = pick((void *const *)v->pd, NPD);
	uint32_t off = below(BUF_SIZE), len;

	if (v->mr[i]) {
		if (chance(20))
			ibv_rereg_mr(v->mr[i], IBV_REREG_MR_CHANGE_ACCESS, NULL,
				     NULL, 0, acc[below(5)]);
		else if (!ibv_dereg_mr(v->mr[i]))
			v->mr[i] = NULL;
		return;
	}
	if (!pd)
		return;
	len = chance(90) ? 1 + below(BUF_SIZE - off) : fuzz_len(BUF_SIZE);
	v->mr[i] = ibv_reg_mr(pd, v->buf + off, len, acc[below(5)]);
}

static void op_cq(struct verbs_fuzz *v)
{
	int i = below(NCQ);

	if (!v->cq[i]) {
		v->cq[i] = ibv_create_cq(v->p.ctx,
					 chance(90) ? 1 + (int)below(512) : (int)fuzz_len(1 << 16),
					 NULL, chance(30) ? v->ch : NULL, 0);
		return;
	}
	switch (below(4)) {
	case 0:
		ibv_resize_cq(v->cq[i], chance(90) ? 1 + (int)below(1024) :
					(int)fuzz_len(1 << 16));
		break;
	case 1:
		ibv_req_notify_cq(v->cq[i], below(2));
		break;
	default:
		if (!ibv_destroy_cq(v->cq[i]))
			v->cq[i] = NULL;
	}
}

static void op_srq(struct verbs_fuzz *v)
{
	int i = below(NSRQ);
	struct ibv_pd *pd = pick((void *const *)v->pd, NPD);
	struct ibv_srq_init_attr a = { .attr = {
		.max_wr = chance(90) ? 1 + below(128) : fuzz_len(8192),
		.max_sge = chance(90) ? 1 + below(4) : below(64) } };
	struct ibv_srq_attr m = { .max_wr = below(256), .srq_limit = below(64) };

	if (!v->srq[i]) {
		if (pd)
			v->srq[i] = ibv_create_srq(pd, &a);
	} else if (chance(30)) {
		ibv_modify_srq(v->srq[i], &m, chance(50) ? IBV_SRQ_LIMIT :
					      IBV_SRQ_LIMIT | IBV_SRQ_MAX_WR);
	} else if (!ibv_destroy_srq(v->srq[i])) {
		v->srq[i] = NULL;
	}
}

static void op_ah(struct verbs_fuzz *v)
{
	int i = below(NAH);
	struct ibv_pd *pd = pick((void *const *)v->pd, NPD);
	struct ibv_ah_attr a = av_to(&v->p, &v->p);

	if (v->ah[i]) {
		if (!ibv_destroy_ah(v->ah[i]))
			v->ah[i] = NULL;
		return;
	}
	if (chance(10))
		a.grh.sgid_index = below(256);
	if (chance(10))
		a.port_num = below(3);
	if (pd)
		v->ah[i] = ibv_create_ah(pd, &a);
}

static void op_qp_create(struct verbs_fuzz *v, int i)
{
	struct ibv_pd *pd = pick((void *const *)v->pd, NPD);
	struct ibv_cq *scq = pick((void *const *)v->cq, NCQ);
	struct ibv_cq *rcq = chance(50) ? scq : pick((void *const *)v->cq, NCQ);
	struct ibv_qp_init_attr a = {
		.send_cq = scq, .recv_cq = rcq,
		.qp_type = chance(60) ? IBV_QPT_RC : IBV_QPT_UD,
		.sq_sig_all = below(2),
		.cap = { .max_send_wr = 1 + below(64), .max_recv_wr = 1 + below(64),
			 .max_send_sge = 1 + below(4), .max_recv_sge = 1 + below(4),
			 .max_inline_data = below(128) },
	};

	if (chance(30))
		a.srq = pick((void *const *)v->srq, NSRQ);
	if (chance(10)) {
		a.cap.max_send_wr = fuzz_len(8192);
		a.cap.max_recv_sge = below(64);
		a.cap.max_inline_data = fuzz_len(1024);
	}
	if (chance(3))
		a.qp_type = below(256);
	if (pd && scq && rcq)
		v->qp[i] = ibv_create_qp(pd, &a);
}

/* A random transition: the attributes it needs, or any mask at all. */
static void op_qp_modify(struct verbs_fuzz *v, struct ibv_qp *qp)
{
	struct ibv_qp *peer = pick((void *const *)v->qp, NQP);
	static const enum ibv_qp_state next[] = {
		[IBV_QPS_RESET] = IBV_QPS_INIT, [IBV_QPS_INIT] = IBV_QPS_RTR,
		[IBV_QPS_RTR] = IBV_QPS_RTS, [IBV_QPS_RTS] = IBV_QPS_RTS,
		[IBV_QPS_SQD] = IBV_QPS_RTS, [IBV_QPS_SQE] = IBV_QPS_RTS,
		[IBV_QPS_ERR] = IBV_QPS_RESET,
	};
	struct ibv_qp_attr a = {
		.qp_state = chance(50) && qp->state <= IBV_QPS_ERR ?
			    next[qp->state] : below(7),
		.cur_qp_state = chance(90) ? qp->state : below(7),
		.port_num = chance(95) ? PORT : below(3), .qkey = QKEY,
		.qp_access_flags = below(16), .pkey_index = chance(95) ? 0 : below(4),
		.ah_attr = av_to(&v->p, &v->p),
		.path_mtu = chance(90) ? v->p.attr.active_mtu : below(8),
		.dest_qp_num = peer ? peer->qp_num : below(1 << 24),
		.rq_psn = (uint32_t)rnd() & 0xffffff, .sq_psn = (uint32_t)rnd() & 0xffffff,
		.max_dest_rd_atomic = below(20), .max_rd_atomic = below(20),
		.min_rnr_timer = below(32), .timeout = below(32),
		.retry_cnt = below(8), .rnr_retry = below(8),
		.sq_draining = below(2), .en_sqd_async_notify = below(2),
	};
	int mask;

	if (chance(10))
		a.ah_attr.grh.sgid_index = below(64);
	switch (a.qp_state) {
	case IBV_QPS_INIT:
		mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		       (qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
		break;
	case IBV_QPS_RTR:
		mask = IBV_QP_STATE;
		if (qp->qp_type == IBV_QPT_RC)
			mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER;
		break;
	case IBV_QPS_RTS:
		mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
		if (qp->qp_type == IBV_QPT_RC)
			mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
		break;
	default:
		mask = IBV_QP_STATE;
	}
	if (chance(15))
		mask = (int)(rnd() & 0x1fffff);	/* any attributes */
	else if (chance(10))
		mask ^= 1 << below(21);		/* one too many or too few */
	if (a.max_rd_atomic > 16 && chance(80))
		a.max_rd_atomic = 1;
	if (a.max_dest_rd_atomic > 16 && chance(80))
		a.max_dest_rd_atomic = 1;
	if (!ibv_modify_qp(qp, &a, mask) && (mask & IBV_QP_STATE))
		v->modified[a.qp_state]++;
}

static void op_post_send(struct verbs_fuzz *v, struct ibv_qp *qp)
{
	static const enum ibv_wr_opcode opc[] = { IBV_WR_SEND,
		IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ };
	struct ibv_mr *mr = pick((void *const *)v->mr, NMR);
	struct ibv_mr *rmr = pick((void *const *)v->mr, NMR);
	struct ibv_ah *ah = pick((void *const *)v->ah, NAH);
	struct ibv_qp *peer = pick((void *const *)v->qp, NQP);
	struct ibv_sge s[4];
	struct ibv_send_wr wr[4], *bad;
	int n = 1 + below(4), i, j;

	memset(wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		for (j = 0; j < 4; j++) {
			s[j].addr = (uintptr_t)v->buf + below(BUF_SIZE / 2);
			s[j].length = below(2048);
			s[j].lkey = mr ? mr->lkey : (uint32_t)rnd();
		}
		wr[i].wr_id = rnd();
		wr[i].opcode = opc[below(5)];
		wr[i].sg_list = s;
		wr[i].num_sge = below(3);
		wr[i].send_flags = below(2) ? IBV_SEND_SIGNALED : 0;
		if (chance(20)) {
			wr[i].send_flags |= IBV_SEND_INLINE;
			s[0].length = below(128);
		}
		wr[i].wr.rdma.remote_addr = (uintptr_t)v->buf + below(BUF_SIZE / 2);
		wr[i].wr.rdma.rkey = rmr ? rmr->rkey : (uint32_t)rnd();
		if (qp->qp_type == IBV_QPT_UD) {
			if (!ah)
				return;
			wr[i].opcode = below(2) ? IBV_WR_SEND : IBV_WR_SEND_WITH_IMM;
			wr[i].wr.ud.ah = ah;
			wr[i].wr.ud.remote_qpn = peer ? peer->qp_num : 1;
			wr[i].wr.ud.remote_qkey = QKEY;
		}
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	if (!ibv_post_send(qp, wr, &bad))
		v->posted += n;
}

static void op_post_recv(struct verbs_fuzz *v)
{
	struct ibv_mr *mr = pick((void *const *)v->mr, NMR);
	struct ibv_qp *qp = pick((void *const *)v->qp, NQP);
	struct ibv_srq *srq = pick((void *const *)v->srq, NSRQ);
	struct ibv_sge s = { .addr = (uintptr_t)v->buf + BUF_SIZE / 2 +
				     below(BUF_SIZE / 4),
			     .length = below(BUF_SIZE / 4),
			     .lkey = mr ? mr->lkey : 0 };
	struct ibv_recv_wr wr = { .wr_id = rnd(), .sg_list = &s,
				  .num_sge = below(2) }, *bad;

	if (chance(30) && srq)
		v->posted += !ibv_post_srq_recv(srq, &wr, &bad);
	else if (qp)
		v->posted += !ibv_post_recv(qp, &wr, &bad);
}

static void op_poll(struct verbs_fuzz *v)
{
	struct ibv_cq *cq = pick((void *const *)v->cq, NCQ);
	struct ibv_wc wc[16];
	int n;

	if (cq)
		while ((n = ibv_poll_cq(cq, 16, wc)) > 0)
			v->cqes += n;
}

/* Whether the page at addr is mapped in this process. */
static bool page_mapped(const void *addr)
{
	unsigned char vec;

	return !mincore((void *)((uintptr_t)addr & ~(uintptr_t)4095), 1, &vec);
}

/*
 * A fork with the rings mapped: vhca's mappings are not inherited
 * (VM_DONTCOPY), so the child must find neither the QP's rings nor its
 * status record mapped (exit status 1 counts as a failed child), then
 * exits after a moment; the parent goes on (and may destroy them
 * meanwhile).  Reaped by reap().
 */
static void op_fork(struct verbs_fuzz *v)
{
	struct ibv_qp *qp = pick((void *const *)v->qp, NQP);
	unsigned int delay = below(20000);
	struct vhca_qp *vq;
	bool mapped;
	pid_t pid;

	if (!qp)
		return;
	vq = to_vqp(qp);
	fflush(stdout);
	pid = fork();
	if (pid)
		return;
	mapped = (vq->sq.buf && page_mapped(vq->sq.buf)) ||
		 (vq->rq.buf && page_mapped(vq->rq.buf)) ||
		 page_mapped((const void *)vq->st);
	usleep(delay);
	_exit(mapped ? 1 : 0);
}

/*
 * A child of its own: a context, objects, a QP connected to itself with
 * work in flight, and exit with all of it live.
 */
static void op_child_live(struct verbs_fuzz *v, const char *name)
{
	struct port p;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_sge s;
	struct ibv_send_wr wr = { .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	bool write_after = chance(50);
	pid_t pid;
	int i;

	fflush(stdout);
	pid = fork();
	if (pid)
		return;
	if (port_open(&p, name, v->p.gid_index))
		_exit(2);
	pd = ibv_alloc_pd(p.ctx);
	cq = ibv_create_cq(p.ctx, 64, NULL, NULL, 0);
	mr = pd ? ibv_reg_mr(pd, v->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE) : NULL;
	qp = pd && cq ? qp_new(pd, cq, NULL, IBV_QPT_RC, 32, 1) : NULL;
	if (!mr || !qp || qp_connect(qp, &p, &p, qp->qp_num))
		_exit(3);
	s = (struct ibv_sge){ .addr = (uintptr_t)v->buf, .length = 4096,
			      .lkey = mr->lkey };
	wr.sg_list = &s;
	wr.wr.rdma.remote_addr = (uintptr_t)v->buf + BUF_SIZE / 2;
	wr.wr.rdma.rkey = mr->rkey;
	for (i = 0; i < 16; i++)
		ibv_post_send(qp, &wr, &bad);
	if (write_after)
		usleep(1000);
	_exit(0);
}

/* Children that ended (all of them when wait_all), their status checked. */
static void reap(struct verbs_fuzz *v, bool wait_all)
{
	int st;
	pid_t pid;

	while ((pid = waitpid(-1, &st, wait_all ? 0 : WNOHANG)) > 0) {
		v->children++;
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			v->bad_children++;
			ktap_diag("verbs: child %d ended with status 0x%x", pid,
				  st);
		}
	}
}

static void verbs_step(struct verbs_fuzz *v, const char *name)
{
	int i = below(NQP);
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	switch (below(20)) {
	case 0:
		op_pd(v);
		break;
	case 1:
	case 2:
		op_mr(v);
		break;
	case 3:
	case 4:
		op_cq(v);
		break;
	case 5:
		op_srq(v);
		break;
	case 6:
		op_ah(v);
		break;
	case 7:
	case 8:
		if (!v->qp[i])
			op_qp_create(v, i);
		else if (!ibv_destroy_qp(v->qp[i]))
			v->qp[i] = NULL;
		break;
	case 9:
	case 10:
	case 11:
		if (v->qp[i])
			op_qp_modify(v, v->qp[i]);
		break;
	case 12:
	case 13:
	case 14:
		if (v->qp[i])
			op_post_send(v, v->qp[i]);
		break;
	case 15:
		op_post_recv(v);
		break;
	case 16:
		op_poll(v);
		break;
	case 17:
		if (v->qp[i])
			ibv_query_qp(v->qp[i], &a, 0x1fffff, &ia);
		break;
	case 18:
		if (chance(10)) {
			op_fork(v);
			v->forks++;
		}
		break;
	default:
		if (chance(2)) {
			op_child_live(v, name);
			v->forks++;
		}
		break;
	}
	v->ops++;
}

static int destroy_one(int kind, void *obj)
{
	switch (kind) {
	case 0: return ibv_destroy_qp(obj);
	case 1: return ibv_destroy_ah(obj);
	case 2: return ibv_destroy_srq(obj);
	case 3: return ibv_destroy_cq(obj);
	case 4: return ibv_dereg_mr(obj);
	default: return ibv_dealloc_pd(obj);
	}
}

/*
 * Everything destroyed: first in a random order, where a destroy may be
 * refused (a CQ a QP uses, a PD with an MR), then what is left in the
 * order of dependence, where none may be.
 */
static bool verbs_teardown(struct verbs_fuzz *v)
{
	void **all[NPD + NMR + NCQ + NSRQ + NQP + NAH];
	int kind[NPD + NMR + NCQ + NSRQ + NQP + NAH];
	int n = 0, i, k;
	bool ok = true;

#define ADD(tab, k) \
	for (i = 0; i < (int)(sizeof(v->tab) / sizeof(v->tab[0])); i++) { \
		all[n] = (void **)&v->tab[i]; \
		kind[n++] = k; \
	}
	ADD(qp, 0)
	ADD(ah, 1)
	ADD(srq, 2)
	ADD(cq, 3)
	ADD(mr, 4)
	ADD(pd, 5)
#undef ADD
	for (i = 0; i < 2 * n; i++) {
		int j = below(n);

		if (*all[j] && !destroy_one(kind[j], *all[j]))
			*all[j] = NULL;
	}
	for (k = 0; k < 6; k++)
		for (i = 0; i < n; i++) {
			if (kind[i] != k || !*all[i])
				continue;
			if (destroy_one(k, *all[i])) {
				ktap_diag("verbs: destroy of an object of kind %d refused: %s",
					  k, strerror(errno));
				ok = false;
			}
			*all[i] = NULL;
		}
	return ok;
}

static int verbs_worker(const char *name, int gid_index, double secs,
			uint64_t seed, int who)
{
	struct verbs_fuzz v = { 0 };
	double end = now_s() + secs;
	int bad = 0;

	rng_state = seed;
	if (port_open(&v.p, name, gid_index))
		return 10;
	v.buf = calloc(1, BUF_SIZE);
	v.ch = ibv_create_comp_channel(v.p.ctx);
	if (!v.buf || !v.ch)
		return 11;
	while (now_s() < end) {
		verbs_step(&v, name);
		if (!(v.ops & 31))
			reap(&v, false);
	}
	reap(&v, true);
	if (!verbs_teardown(&v)) {
		ktap_diag("verbs %d: objects left after teardown", who);
		bad |= 1;
	}
	if (ibv_destroy_comp_channel(v.ch) || ibv_close_device(v.p.ctx)) {
		ktap_diag("verbs %d: close: %s", who, strerror(errno));
		bad |= 2;
	}
	if (v.bad_children)
		bad |= 4;
	ktap_diag("verbs %d (%s, seed=%" PRIu64 "): %" PRIu64 " operations, %" PRIu64 " work requests posted, %" PRIu64 " CQEs, %" PRIu64 " forks, %u children failed",
		  who, name, seed, v.ops, v.posted, v.cqes, v.forks,
		  v.bad_children);
	ktap_diag("verbs %d: transitions to RESET %" PRIu64 ", INIT %" PRIu64 ", RTR %" PRIu64 ", RTS %" PRIu64 ", SQD %" PRIu64 ", SQE %" PRIu64 ", ERR %" PRIu64,
		  who, v.modified[0], v.modified[1], v.modified[2],
		  v.modified[3], v.modified[4], v.modified[5], v.modified[6]);
	free(v.buf);
	return bad;
}

static int verbs_main(char **dev, double secs, uint64_t seed)
{
	struct victim_proc vp;
	pid_t pid[2];
	int i, st;
	bool ok;

	ok = victim_start(&vp, dev);
	result(ok, "victim: RC pair connected in a process of its own",
	       "setup failed");
	for (i = 0; i < 2; i++) {
		uint64_t s;

		rng_state = seed + i;
		s = rnd();
		fflush(stdout);
		pid[i] = fork();
		if (!pid[i])
			_exit(verbs_worker(dev[2 * i], atoi(dev[2 * i + 1]),
					   secs, s, i));
	}
	for (i = 0; i < 2; i++) {
		if (pid[i] < 0 || waitpid(pid[i], &st, 0) != pid[i])
			st = -1;
		result(WIFEXITED(st) && !WEXITSTATUS(st),
		       i ? "verbs: the process on DEV1" : "verbs: the process on DEV0",
		       "exit status 0x%x (bits: 1 objects left, 2 close failed, 4 a child failed)",
		       st);
	}
	victim_end(&vp);
	return exit_status();
}

/* ---- main ---- */

int main(int argc, char **argv)
{
	uint64_t seed = 0;
	double secs = 10;
	int i, n = 0;
	char *pos[5];
	bool have_seed = false;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			seed = strtoull(argv[++i], NULL, 0);
			have_seed = true;
		} else if (!strcmp(argv[i], "--secs") && i + 1 < argc) {
			secs = strtod(argv[++i], NULL);
		} else if (n < 5) {
			pos[n++] = argv[i];
		} else {
			n = 6;
		}
	}
	if (n != 5 || (strcmp(pos[0], "ring") && strcmp(pos[0], "verbs"))) {
		fprintf(stderr, "usage: %s ring|verbs DEV0 GID0 DEV1 GID1 [--seed N] [--secs S]\n",
			argv[0]);
		return 255;
	}
	if (!have_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
		       ((uint64_t)getpid() << 40);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	ktap_header();
	ktap_diag("seed=%" PRIu64, seed);
	ktap_diag("replay: %s %s %s %s %s %s --seed %" PRIu64 " --secs %g",
		  argv[0], pos[0], pos[1], pos[2], pos[3], pos[4], seed, secs);
	if (!strcmp(pos[0], "ring"))
		return ring_main(pos + 1, secs, seed);
	return verbs_main(pos + 1, secs, seed);
}
