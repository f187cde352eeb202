// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz verbs: two processes, one a port, run random create, modify,
 * post, poll, query and destroy operations over every object and QP type,
 * fork with the rings mapped, and leave children with live objects; then
 * everything is destroyed.
 */
#include <sys/mman.h>
#include <sys/wait.h>

#include "fuzz.h"

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

int verbs_main(char **dev, double secs, uint64_t seed)
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
