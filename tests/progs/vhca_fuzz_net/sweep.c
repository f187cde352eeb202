// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz_net victim, boundary and mismatch classes: the QPs the
 * injector aims at, kept in service, and what they saw.
 *
 * boundary: an RC, a UC and a UD QP on DEV0, each connected (RC, UC) to a
 * fake peer QPN at DEV1's address that nothing answers from, with
 * receives posted; a QP that fails is brought up again (RESET to RTS,
 * the same QPN, receive PSN SW_RQ_PSN) and counted in gen.
 *
 * mismatch: three RC requesters, each to a fake peer QPN, each with one
 * WQE at a time outstanding (SEND, WRITE, READ, compare-and-swap,
 * fetch-and-add in turn): nothing correct ever answers them (the
 * injector answers with the wrong kind, length or PSN), so none may
 * complete with success; a QP whose WQE failed is brought up again with
 * its send PSN moved on.
 *
 * Either way the RDMA half of each QP's MR past SW_CANARY keeps its
 * pattern (no packet of the class may reach it) and the guard pages
 * around the MR theirs.
 */
#include <fcntl.h>

#include "net.h"

const char * const sw_kind_name[SW_KINDS] = {
	"SEND", "WRITE", "READ", "CMP_SWAP", "FETCH_ADD",
};

#define SW_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define N_STATUS	32

struct swq {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	uint8_t *map, *buf;
	struct ibv_mr *mr;
	enum ibv_qp_type type;
	uint32_t sq_psn;		/* the next WQE's first PSN */
	bool busy;			/* mismatch: a WQE outstanding */
	unsigned int next_kind;
	/* completions: [kind or receive opcode][status] */
	unsigned long comp[SW_KINDS + 1][N_STATUS];
	/* mismatch: [answer sent][status] of the WQEs answered so */
	unsigned long by_answer[MM_N][N_STATUS];
	unsigned long bringups, posted;
	uint32_t max_len;		/* the longest receive completed */
	double t_query;
};

static struct swq sq[SW_QPS];
static struct sw_shm *shm;
static int sw_mode;
static unsigned long sw_success_bad;
static char sw_why[256];

static void sw_canary_fill(struct swq *q)
{
	fill(q->buf + SW_CANARY, SW_REGION / 2 - SW_CANARY, 77, 0, 0);
}

static bool sw_canary_ok(const struct swq *q)
{
	return mismatch(q->buf + SW_CANARY, SW_REGION / 2 - SW_CANARY,
			77, 0, 0) < 0;
}

static void sw_post_recvs(struct swq *q)
{
	struct ibv_sge sge = { .lkey = q->mr->lkey, .length = SW_RECV };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	int i;

	for (i = 0; i < SW_RECVS; i++) {
		wr.wr_id = i;
		sge.addr = (uintptr_t)(q->buf + SW_REGION / 2 + i * SW_RECV);
		ibv_post_recv(q->qp, &wr, &bad);
	}
}

/* RESET to RTS, the same QPN: receive PSN SW_RQ_PSN, send PSN q->sq_psn. */
static int sw_bringup(struct swq *q, int i)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct ibv_wc wc[16];
	int mask;

	if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE))
		return -1;
	while (ibv_poll_cq(q->cq, 16, wc) > 0)
		;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = UD_QKEY;
	a.qp_access_flags = q->type == IBV_QPT_UC ? IBV_ACCESS_REMOTE_WRITE :
			    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			    IBV_ACCESS_REMOTE_ATOMIC;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	       (q->type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
	if (ibv_modify_qp(q->qp, &a, mask))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (q->type != IBV_QPT_UD) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = SW_PEER + i;
		a.rq_psn = SW_RQ_PSN;
		a.ah_attr.is_global = 1;
		a.ah_attr.port_num = 1;
		a.ah_attr.grh.dgid = e1.gid;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.grh.sgid_index = e0.gid_index;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
	}
	if (q->type == IBV_QPT_RC) {
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 1;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	if (ibv_modify_qp(q->qp, &a, mask))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = q->sq_psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (q->type == IBV_QPT_RC) {
		/* a lost answer fails the WQE within some 70 ms */
		a.timeout = 12;
		a.retry_cnt = 3;
		a.rnr_retry = 3;
		a.max_rd_atomic = 4;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	if (ibv_modify_qp(q->qp, &a, mask))
		return -1;
	if (sw_mode == MODE_BOUNDARY)
		sw_post_recvs(q);
	q->busy = false;
	q->bringups++;
	return 0;
}

static void sw_create(struct swq *q, int i, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = type,
		.cap = { .max_send_wr = 4, .max_recv_wr = SW_RECVS + 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	q->type = type;
	q->cq = ibv_create_cq(e0.ctx, 64, NULL, NULL, 0);
	if (!q->cq)
		fatal("ibv_create_cq");
	ia.send_cq = ia.recv_cq = q->cq;
	q->qp = ibv_create_qp(e0.pd, &ia);
	if (!q->qp)
		fatal("ibv_create_qp");
	q->map = guarded(SW_REGION);
	q->buf = q->map + PAGE;
	memset(q->buf, 0, SW_REGION);
	sw_canary_fill(q);
	q->mr = ibv_reg_mr(e0.pd, q->buf, SW_REGION, SW_ACCESS);
	if (!q->mr)
		fatal("ibv_reg_mr");
	q->sq_psn = rnd() & 0xffffff;
	if (sw_bringup(q, i))
		fatal("a class QP to RTS");
	shm->q[i] = (struct sw_qp){
		.qpn = q->qp->qp_num, .peer = SW_PEER + i, .type = type,
		.rkey = q->mr->rkey, .va = (uintptr_t)q->buf, .gen = 1,
		.ready = 1, .cur_first = ~0u, .cur_last = ~0u,
	};
}

static uint32_t npkts(uint32_t len)
{
	return len ? (len + MTU - 1) / MTU : 1;
}

/* mismatch: the next WQE of a requester, one outstanding at a time. */
static void sw_post_next(struct swq *q, int i)
{
	enum sw_kind k = q->next_kind++ % SW_KINDS;
	uint32_t len = k == SW_CAS || k == SW_FAA ? 8 : 1 + below(3 * MTU);
	struct ibv_sge sge = {
		.addr = (uintptr_t)q->buf, .length = len, .lkey = q->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = k, .sg_list = &sge, .num_sge = 1,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	uint32_t n = k == SW_READ || k == SW_SEND || k == SW_WRITE ?
		     npkts(len) : 1;

	switch (k) {
	case SW_SEND:
		wr.opcode = IBV_WR_SEND;
		break;
	case SW_WRITE:
		wr.opcode = IBV_WR_RDMA_WRITE;
		break;
	case SW_READ:
		wr.opcode = IBV_WR_RDMA_READ;
		break;
	case SW_CAS:
		wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		break;
	default:
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	}
	if (k == SW_CAS || k == SW_FAA) {
		wr.wr.atomic.remote_addr = 0x10000;
		wr.wr.atomic.rkey = 0x1234;
		wr.wr.atomic.compare_add = 1;
		wr.wr.atomic.swap = 2;
	} else {
		wr.wr.rdma.remote_addr = 0x10000;
		wr.wr.rdma.rkey = 0x1234;
	}
	shm->q[i].ans_mask = 0;
	shm->q[i].cur_kind = k;
	shm->q[i].cur_len = len;
	shm->q[i].cur_last = (q->sq_psn + n - 1) & 0xffffff;
	__sync_synchronize();
	shm->q[i].cur_first = q->sq_psn;
	if (ibv_post_send(q->qp, &wr, &bad))
		return;
	q->sq_psn = (q->sq_psn + n) & 0xffffff;
	q->busy = true;
	q->posted++;
}

static void sw_recycle(struct swq *q, int i)
{
	shm->q[i].ready = 0;
	__sync_synchronize();
	q->sq_psn = (q->sq_psn + 64) & 0xffffff;
	if (sw_bringup(q, i))
		fatal("a class QP brought up again");
	shm->q[i].gen++;
	__sync_synchronize();
	shm->q[i].ready = 1;
}

static unsigned int wc_row(const struct ibv_wc *wc)
{
	if (sw_mode == MODE_MISMATCH)
		return wc->wr_id < SW_KINDS ? wc->wr_id : SW_KINDS;
	return SW_KINDS;	/* boundary: receives */
}

/* Poll one class QP; bring it up again when it failed. */
static void sw_poll(struct swq *q, int i)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct ibv_wc wc[16];
	bool failed = false;
	unsigned int st, b;
	int n, k;

	while ((n = ibv_poll_cq(q->cq, 16, wc)) > 0) {
		for (k = 0; k < n; k++) {
			st = wc[k].status < N_STATUS ? wc[k].status : N_STATUS - 1;
			q->comp[wc_row(&wc[k])][st]++;
			shm->q[i].last_status = st;
			__sync_synchronize();
			shm->q[i].ncomp++;
			if (st != IBV_WC_SUCCESS)
				failed = true;
			else if (wc[k].opcode & IBV_WC_RECV &&
				 wc[k].byte_len > q->max_len)
				q->max_len = wc[k].byte_len;
			if (sw_mode == MODE_BOUNDARY && !st && wc[k].wr_id < SW_RECVS) {
				struct ibv_sge sge = {
					.addr = (uintptr_t)(q->buf + SW_REGION / 2 +
							    wc[k].wr_id * SW_RECV),
					.length = SW_RECV, .lkey = q->mr->lkey,
				};
				struct ibv_recv_wr wr = {
					.wr_id = wc[k].wr_id, .sg_list = &sge,
					.num_sge = 1,
				}, *bad;

				ibv_post_recv(q->qp, &wr, &bad);
			}
			if (sw_mode != MODE_MISMATCH || wc[k].wr_id >= SW_KINDS)
				continue;
			q->busy = false;
			for (b = 0; b < MM_N; b++)
				if (shm->q[i].ans_mask & (1u << b))
					q->by_answer[b][st]++;
			if (!st) {
				sw_success_bad++;
				snprintf(sw_why, sizeof(sw_why),
					 "QP %u: a %s of %u bytes completed with success, answered only wrongly (answers 0x%x)",
					 q->qp->qp_num, sw_kind_name[wc[k].wr_id],
					 shm->q[i].cur_len, shm->q[i].ans_mask);
			}
		}
	}
	/* a QP that failed without a completion: its state, each ms */
	if (!failed && now_s() - q->t_query < 0.001)
		return;
	q->t_query = now_s();
	if (!failed && !ibv_query_qp(q->qp, &a, IBV_QP_STATE, &ia) &&
	    a.qp_state != IBV_QPS_ERR && a.qp_state != IBV_QPS_SQE)
		return;
	sw_recycle(q, i);
}

struct sw_shm *sw_map(const char *info)
{
	char path[512];
	struct sw_shm *m;
	int fd;

	snprintf(path, sizeof(path), "%s.shm", info);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0 || ftruncate(fd, sizeof(*m)))
		fatal("the shared file");
	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		fatal("mmap the shared file");
	return m;
}

/* The class's QPs, and the shared file that describes them, INFO.shm. */
void sw_setup(int mode, const char *info)
{
	static const enum ibv_qp_type bt[SW_QPS] = {
		IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD,
	};
	int i;

	sw_mode = mode;
	shm = sw_map(info);
	memset(shm, 0, sizeof(*shm));
	for (i = 0; i < SW_QPS; i++)
		sw_create(&sq[i], i, mode == MODE_BOUNDARY ? bt[i] : IBV_QPT_RC);
	shm->n = SW_QPS;
	shm->mode = mode;
	__sync_synchronize();
	shm->magic = SW_MAGIC;
	ktap_diag("%s class: QPs %u %u %u", mode == MODE_BOUNDARY ?
		  "boundary" : "mismatch", sq[0].qp->qp_num, sq[1].qp->qp_num,
		  sq[2].qp->qp_num);
}

/*
 * The class's QPs in service until stop exists or secs pass, the pairs
 * (which the injector leaves alone in these classes) carrying verified
 * traffic every second.
 */
void sw_run(const char *stop, double secs)
{
	double t_end = now_s() + secs, t_round = 0;
	unsigned int rounds = 0;
	int i;

	while (!stop_now(stop, t_end)) {
		for (i = 0; i < SW_QPS; i++) {
			if (sw_mode == MODE_MISMATCH && !sq[i].busy)
				sw_post_next(&sq[i], i);
			sw_poll(&sq[i], i);
		}
		if (now_s() - t_round > 1) {
			for (i = 0; i < N_PAIRS; i++) {
				if (pairs[i].broken || pair_round(&pairs[i], i))
					continue;
				pairs[i].broken = true;
				result(false, "a QP pair the class leaves alone carries verified traffic during it",
				       "pair %d, round %u: %s", i, pairs[i].rounds, why);
			}
			rounds++;
			t_round = now_s();
		}
		usleep(300);
	}
	ktap_diag("%u rounds of traffic on the pairs", rounds);
}

static void sw_print(void)
{
	static const char * const qt[] = { [IBV_QPT_RC] = "RC",
		[IBV_QPT_UC] = "UC", [IBV_QPT_UD] = "UD" };
	char line[1024];
	unsigned int r, s, b;
	size_t o;
	int i;

	for (i = 0; i < SW_QPS; i++) {
		ktap_diag("victim %s QP %u: brought up %lu times, %lu WQEs posted, longest receive %u bytes",
			  qt[sq[i].type], sq[i].qp->qp_num, sq[i].bringups,
			  sq[i].posted, sq[i].max_len);
		for (r = 0; r <= SW_KINDS; r++) {
			o = 0;
			for (s = 0; s < N_STATUS; s++)
				if (sq[i].comp[r][s])
					o += snprintf(line + o, sizeof(line) - o,
						      " %s %lu", ibv_wc_status_str(s),
						      sq[i].comp[r][s]);
			if (o)
				ktap_diag("  %s completions:%s",
					  r < SW_KINDS ? sw_kind_name[r] : "receive",
					  line);
		}
		for (b = 0; b < MM_N; b++) {
			o = 0;
			for (s = 0; s < N_STATUS; s++)
				if (sq[i].by_answer[b][s])
					o += snprintf(line + o, sizeof(line) - o,
						      " %s %lu", ibv_wc_status_str(s),
						      sq[i].by_answer[b][s]);
			if (o)
				ktap_diag("  WQEs answered with %s:%s", mm_name[b], line);
		}
	}
}

/* The class's verdict: what it may assert of the victim. */
bool sw_verdict(void)
{
	bool ok = true;
	int i;

	sw_print();
	for (i = 0; i < SW_QPS; i++)
		ok = ok && guards_intact(sq[i].map, SW_REGION) &&
		     sw_canary_ok(&sq[i]);
	result(ok, "no byte of the class's QPs outside the packets' reach changed (guard pages, MR past 4 KiB)",
	       NULL);
	if (sw_mode == MODE_MISMATCH)
		result(!sw_success_bad, "no WQE answered only wrongly completed with success",
		       "%lu did; the last: %s", sw_success_bad, sw_why);
	return ok && !sw_success_bad;
}

void sw_teardown(void)
{
	int i;

	for (i = 0; i < SW_QPS; i++) {
		ibv_destroy_qp(sq[i].qp);
		ibv_dereg_mr(sq[i].mr);
		ibv_destroy_cq(sq[i].cq);
		munmap(sq[i].map, SW_REGION + 2 * PAGE);
	}
}
