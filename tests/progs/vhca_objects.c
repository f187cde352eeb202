// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_objects: the verbs objects of a vhca device through libibverbs and
 * the provider (loaded with RDMAV_DRIVERS).
 *
 *   vhca_objects DEVICE GID_INDEX CYCLES
 *
 * GID_INDEX is a RoCE v2 GID of port 1; RC QPs are connected to themselves
 * through it.  CYCLES times: PD, MR, CQ, SRQ, AH, an RC and a UD QP are
 * created, modified (QPs: RESET -> INIT -> RTR -> RTS -> ERR -> RESET) and
 * destroyed.  Then work requests posted on a QP in the error state must
 * complete with IBV_WC_WR_FLUSH_ERR, the refusals are checked with their
 * errno, and ibv_rereg_mr with each flag and with bad arguments.  Every
 * check prints one KTAP result line (ktap.h); the cycle's checks print
 * once each, for all cycles.  The exit status is the number of failures
 * (at most 255).
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "vhca_test.h"

#define PORT		1
#define BUF_SIZE	65536
#define QKEY		0x11111111
#define FLUSH_WAIT_MS	5000


/* What the tests share: the device, its limits, the port's GID. */
struct env {
	struct ibv_context *ctx;
	struct ibv_device_attr dev;
	struct ibv_port_attr port;
	union ibv_gid gid;
	int gid_index;
	char *buf;
};

/* ---- QP state transitions ---- */

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = PORT,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (qp->qp_type == IBV_QPT_UD) {
		a.qkey = QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return ibv_modify_qp(qp, &a, mask);
}

/* An address vector to the port's own GID. */
static struct ibv_ah_attr own_av(const struct env *e)
{
	return (struct ibv_ah_attr){
		.is_global = 1,
		.grh = { .dgid = e->gid, .sgid_index = e->gid_index,
			 .hop_limit = 64 },
		.port_num = PORT,
	};
}

/* RC: connected to itself. */
static int to_rtr(const struct env *e, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };

	if (qp->qp_type == IBV_QPT_UD)
		return ibv_modify_qp(qp, &a, IBV_QP_STATE);
	a.ah_attr = own_av(e);
	a.path_mtu = e->port.active_mtu;
	a.dest_qp_num = qp->qp_num;
	a.rq_psn = 0x1234;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
}

static int to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS, .sq_psn = 0x1234 };

	if (qp->qp_type == IBV_QPT_UD)
		return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr a = { .qp_state = state };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* A QP with 8 WRs of 2 SGEs each way; @cap (optional): what it got. */
static struct ibv_qp *new_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			     enum ibv_qp_type type, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	if (qp && cap)
		*cap = a.cap;
	return qp;
}

/* ---- the cycles ---- */

enum step {
	S_PD, S_MR, S_CQ, S_SRQ, S_MODIFY_SRQ, S_QUERY_SRQ, S_AH,
	S_RC, S_RC_INIT, S_RC_RTR, S_RC_RTS, S_RC_QUERY, S_RC_ERR, S_RC_RESET,
	S_UD, S_UD_INIT, S_UD_RTR, S_UD_RTS, S_UD_ERR, S_UD_RESET,
	S_DESTROY_UD, S_DESTROY_RC, S_DESTROY_AH, S_DESTROY_SRQ,
	S_DESTROY_CQ, S_DEREG_MR, S_DEALLOC_PD, NUM_STEPS
};

static const char *const step_names[NUM_STEPS] = {
	[S_PD] = "alloc PD", [S_MR] = "register MR", [S_CQ] = "create CQ",
	[S_SRQ] = "create SRQ", [S_MODIFY_SRQ] = "modify SRQ limit",
	[S_QUERY_SRQ] = "query SRQ", [S_AH] = "create AH (own GID)",
	[S_RC] = "create RC QP", [S_RC_INIT] = "RC RESET -> INIT",
	[S_RC_RTR] = "RC INIT -> RTR (connected to itself)",
	[S_RC_RTS] = "RC RTR -> RTS", [S_RC_QUERY] = "query RC QP: RTS",
	[S_RC_ERR] = "RC RTS -> ERR", [S_RC_RESET] = "RC ERR -> RESET",
	[S_UD] = "create UD QP", [S_UD_INIT] = "UD RESET -> INIT",
	[S_UD_RTR] = "UD INIT -> RTR", [S_UD_RTS] = "UD RTR -> RTS",
	[S_UD_ERR] = "UD RTS -> ERR", [S_UD_RESET] = "UD ERR -> RESET",
	[S_DESTROY_UD] = "destroy UD QP", [S_DESTROY_RC] = "destroy RC QP",
	[S_DESTROY_AH] = "destroy AH", [S_DESTROY_SRQ] = "destroy SRQ",
	[S_DESTROY_CQ] = "destroy CQ", [S_DEREG_MR] = "deregister MR",
	[S_DEALLOC_PD] = "dealloc PD",
};

struct tally {
	unsigned int ok, failed, first_cycle;
	int first_err;
};

static struct tally tally[NUM_STEPS];

/* Counts one step of cycle @cycle; @err: its errno, 0 when it worked. */
static bool step(enum step s, unsigned int cycle, int err)
{
	struct tally *t = &tally[s];

	if (!err) {
		t->ok++;
		return true;
	}
	if (!t->failed++) {
		t->first_cycle = cycle;
		t->first_err = err;
	}
	return false;
}

/* errno of a constructor's result, never 0 for a failure. */
static int made(const void *obj)
{
	return obj ? 0 : (errno ? errno : EIO);
}

static void one_cycle(const struct env *e, unsigned int c)
{
	struct ibv_srq_init_attr srq_attr = {
		.attr = { .max_wr = 16, .max_sge = 2 },
	};
	struct ibv_srq_attr srq_mod = { .srq_limit = 4 };
	struct ibv_ah_attr av = own_av(e);
	struct ibv_qp_init_attr init;
	struct ibv_qp *rc = NULL, *ud = NULL;
	struct ibv_srq *srq = NULL;
	struct ibv_qp_attr qa;
	struct ibv_ah *ah = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_pd *pd;
	int err;

	errno = 0;
	pd = ibv_alloc_pd(e->ctx);
	if (!step(S_PD, c, made(pd)))
		return;
	mr = ibv_reg_mr(pd, e->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	step(S_MR, c, made(mr));
	cq = ibv_create_cq(e->ctx, 64, NULL, NULL, 0);
	step(S_CQ, c, made(cq));
	srq = ibv_create_srq(pd, &srq_attr);
	if (step(S_SRQ, c, made(srq))) {
		step(S_MODIFY_SRQ, c,
		     ibv_modify_srq(srq, &srq_mod, IBV_SRQ_LIMIT));
		memset(&srq_mod, 0, sizeof(srq_mod));
		err = ibv_query_srq(srq, &srq_mod);
		step(S_QUERY_SRQ, c, err ? err :
		     srq_mod.srq_limit == 4 ? 0 : EPROTO);
	}
	ah = ibv_create_ah(pd, &av);
	step(S_AH, c, made(ah));

	if (cq) {
		rc = new_qp(pd, cq, IBV_QPT_RC, NULL);
		ud = new_qp(pd, cq, IBV_QPT_UD, NULL);
	}
	if (step(S_RC, c, cq ? made(rc) : EINVAL) &&
	    step(S_RC_INIT, c, to_init(rc)) &&
	    step(S_RC_RTR, c, to_rtr(e, rc)) &&
	    step(S_RC_RTS, c, to_rts(rc))) {
		err = ibv_query_qp(rc, &qa, IBV_QP_STATE, &init);
		step(S_RC_QUERY, c, err ? err :
		     qa.qp_state == IBV_QPS_RTS ? 0 : EPROTO);
		if (step(S_RC_ERR, c, to_state(rc, IBV_QPS_ERR)))
			step(S_RC_RESET, c, to_state(rc, IBV_QPS_RESET));
	}
	if (step(S_UD, c, cq ? made(ud) : EINVAL) &&
	    step(S_UD_INIT, c, to_init(ud)) &&
	    step(S_UD_RTR, c, to_rtr(e, ud)) &&
	    step(S_UD_RTS, c, to_rts(ud)) &&
	    step(S_UD_ERR, c, to_state(ud, IBV_QPS_ERR)))
		step(S_UD_RESET, c, to_state(ud, IBV_QPS_RESET));

	if (ud)
		step(S_DESTROY_UD, c, ibv_destroy_qp(ud));
	if (rc)
		step(S_DESTROY_RC, c, ibv_destroy_qp(rc));
	if (ah)
		step(S_DESTROY_AH, c, ibv_destroy_ah(ah));
	if (srq)
		step(S_DESTROY_SRQ, c, ibv_destroy_srq(srq));
	if (cq)
		step(S_DESTROY_CQ, c, ibv_destroy_cq(cq));
	if (mr)
		step(S_DEREG_MR, c, ibv_dereg_mr(mr));
	step(S_DEALLOC_PD, c, ibv_dealloc_pd(pd));
}

static void test_cycles(const struct env *e, unsigned int cycles)
{
	char what[128];
	unsigned int c;
	int s;

	for (c = 0; c < cycles; c++)
		one_cycle(e, c);
	for (s = 0; s < NUM_STEPS; s++) {
		const struct tally *t = &tally[s];

		snprintf(what, sizeof(what), "cycles: %s (%u/%u)",
			 step_names[s], t->ok, cycles);
		if (t->failed)
			result(false, what, "%u failed, first in cycle %u: %s",
			       t->failed, t->first_cycle,
			       strerror(t->first_err));
		else
			result(t->ok == cycles, what, "%u not reached",
			       cycles - t->ok);
	}
}

/* ---- flush in the error state ---- */

#define RECV_WR_ID	0x100	/* receives: RECV_WR_ID + 1 ... */
#define SEND_WR_ID	0x200	/* sends: SEND_WR_ID + 1 ... */

/*
 * Polls until @n completions arrived or the wait ended; each must be
 * IBV_WC_WR_FLUSH_ERR and its wr_id seen once, from @base + 1 to @base + @n.
 */
static void expect_flushed(struct ibv_cq *cq, uint64_t base, int n,
			   const char *what)
{
	double end = now_ms() + FLUSH_WAIT_MS;
	bool seen[64] = { false };
	struct ibv_wc wc[16];
	int got = 0, bad = 0, i, k;
	char msg[160];

	while (got < n && now_ms() < end) {
		k = ibv_poll_cq(cq, 16, wc);
		if (k < 0) {
			result(false, what, "ibv_poll_cq returned %d", k);
			return;
		}
		for (i = 0; i < k; i++) {
			uint64_t id = wc[i].wr_id - base;

			if (wc[i].status != IBV_WC_WR_FLUSH_ERR || !id ||
			    id > (uint64_t)n || seen[id]) {
				bad++;
				ktap_diag("unexpected completion: wr_id %#llx, "
					  "status %s",
				       (unsigned long long)wc[i].wr_id,
				       ibv_wc_status_str(wc[i].status));
			} else {
				seen[id] = true;
			}
		}
		got += k;
	}
	snprintf(msg, sizeof(msg), "%d of %d completions, %d wrong (status "
		 "not WR_FLUSH_ERR or unexpected wr_id)", got, n, bad);
	result(got == n && !bad, what, "%s", msg);
}

/* Destroys whichever of these exist, in dependency order. */
static void release(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr,
		    struct ibv_pd *pd)
{
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	if (mr)
		ibv_dereg_mr(mr);
	if (pd)
		ibv_dealloc_pd(pd);
}

/* An RC QP on cq, moved to ERR: anything posted to it now is flushed. */
static struct ibv_qp *error_qp(const struct env *e, struct ibv_pd *pd,
			       struct ibv_cq *cq)
{
	struct ibv_qp *qp = new_qp(pd, cq, IBV_QPT_RC, NULL);
	int ret = qp ? to_init(qp) : errno;

	ret = ret ? ret : to_rtr(e, qp);
	ret = ret ? ret : to_rts(qp);
	ret = ret ? ret : to_state(qp, IBV_QPS_ERR);
	if (ret && qp) {
		ibv_destroy_qp(qp);
		qp = NULL;
	}
	return qp;
}

static void test_flush(const struct env *e)
{
	struct ibv_recv_wr rwr[4], *rbad;
	struct ibv_send_wr swr[3], *sbad;
	struct ibv_sge rsge[4][2], ssge[3];
	struct ibv_pd *pd = ibv_alloc_pd(e->ctx);
	struct ibv_mr *mr = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp = NULL;
	int i, ret;

	if (pd)
		mr = ibv_reg_mr(pd, e->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (mr)
		cq = ibv_create_cq(e->ctx, 32, NULL, NULL, 0);
	if (cq)
		qp = error_qp(e, pd, cq);
	ret = qp ? 0 : errno;
	result(qp, "flush: RC QP set up and moved to ERR", "%s",
	       strerror(ret));
	if (!qp)
		goto out;

	for (i = 0; i < 4; i++) {
		rsge[i][0] = (struct ibv_sge){ (uintptr_t)e->buf + i * 1024,
					       512, mr->lkey };
		rsge[i][1] = (struct ibv_sge){ (uintptr_t)e->buf + i * 1024 +
					       512, 512, mr->lkey };
		rwr[i] = (struct ibv_recv_wr){
			.wr_id = RECV_WR_ID + i + 1,
			.next = i < 3 ? &rwr[i + 1] : NULL,
			.sg_list = rsge[i], .num_sge = 2,
		};
	}
	ret = ibv_post_recv(qp, rwr, &rbad);
	result(!ret, "flush: post 4 receives of 2 SGEs in ERR", "%s",
	       strerror(ret));
	if (!ret)
		expect_flushed(cq, RECV_WR_ID, 4, "flush: the receives "
			       "complete with WR_FLUSH_ERR (post_recv kicks "
			       "in ERR)");

	for (i = 0; i < 3; i++) {
		ssge[i] = (struct ibv_sge){ (uintptr_t)e->buf + 8192 + i * 64,
					    64, mr->lkey };
		swr[i] = (struct ibv_send_wr){
			.wr_id = SEND_WR_ID + i + 1,
			.next = i < 2 ? &swr[i + 1] : NULL,
			.sg_list = &ssge[i], .num_sge = 1,
			.opcode = i == 1 ? IBV_WR_RDMA_WRITE : IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)e->buf, mr->rkey },
		};
	}
	ret = ibv_post_send(qp, swr, &sbad);
	result(!ret, "flush: post 3 sends in ERR", "%s", strerror(ret));
	if (!ret)
		expect_flushed(cq, SEND_WR_ID, 3, "flush: the sends complete "
			       "with WR_FLUSH_ERR");
out:
	release(qp, cq, mr, pd);
}

/* ---- completion events and CQ overflow ---- */

/* Waits up to FLUSH_WAIT_MS for fd to become readable. */
static bool readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, FLUSH_WAIT_MS) == 1;
}

static int post_recvs(struct ibv_qp *qp, struct ibv_mr *mr, void *buf, int n)
{
	struct ibv_recv_wr wr[8], *bad;
	struct ibv_sge sge[8];
	int i;

	for (i = 0; i < n; i++) {
		sge[i] = (struct ibv_sge){ (uintptr_t)buf + i * 64, 64,
					   mr->lkey };
		wr[i] = (struct ibv_recv_wr){ .wr_id = i + 1, .sg_list = &sge[i],
					      .num_sge = 1,
					      .next = i + 1 < n ? &wr[i + 1] :
								  NULL };
	}
	return ibv_post_recv(qp, wr, &bad);
}

static void test_cq_events(const struct env *e)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(e->ctx);
	struct ibv_pd *pd = ibv_alloc_pd(e->ctx);
	struct ibv_cq *cq = NULL, *small = NULL, *evcq = NULL;
	struct ibv_qp *qp = NULL, *qp2 = NULL;
	struct ibv_async_event aev;
	struct ibv_mr *mr = NULL;
	struct ibv_wc wc;
	void *cq_ctx;
	bool got;

	if (pd)
		mr = ibv_reg_mr(pd, e->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (mr && ch)
		cq = ibv_create_cq(e->ctx, 16, NULL, ch, 0);
	if (cq)
		qp = error_qp(e, pd, cq);
	result(qp && !ibv_req_notify_cq(cq, 0),
	       "events: CQ on a completion channel, armed", "%s",
	       strerror(errno));
	if (!qp)
		goto out;
	result(!post_recvs(qp, mr, e->buf, 1) && readable(ch->fd) &&
	       !ibv_get_cq_event(ch, &evcq, &cq_ctx) && evcq == cq,
	       "events: a completion raises an event on the channel", "%s",
	       strerror(errno));
	if (evcq)
		ibv_ack_cq_events(evcq, 1);
	result(ibv_poll_cq(cq, 1, &wc) == 1 &&
	       wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == 1,
	       "events: ... and the CQE is there", "status %d",
	       (int)wc.status);

	/* Four completions into a CQ of one entry: overflow, CQ_ERR. */
	small = ibv_create_cq(e->ctx, 1, NULL, NULL, 0);
	if (small)
		qp2 = error_qp(e, pd, small);
	result(small && small->cqe == 1 && qp2,
	       "overflow: a QP on a CQ of 1 entry, in ERR", "%s",
	       strerror(errno));
	if (!qp2)
		goto out;
	post_recvs(qp2, mr, e->buf, 4);
	got = false;
	while (!got && readable(e->ctx->async_fd) &&
	       !ibv_get_async_event(e->ctx, &aev)) {
		got = aev.event_type == IBV_EVENT_CQ_ERR &&
		      aev.element.cq == small;
		ibv_ack_async_event(&aev);
	}
	result(got, "overflow: IBV_EVENT_CQ_ERR reaches the process", "%s",
	       "no such event");
out:
	release(qp2, small, NULL, NULL);
	release(qp, cq, mr, pd);
	if (ch)
		ibv_destroy_comp_channel(ch);
}

/* ---- refusals ---- */

static void expect_null(const void *obj, int err, int want, const char *what)
{
	result(!obj && err == want, what, "%s, errno %d (%s), expected %s",
	       obj ? "created" : "refused", err, strerror(err),
	       strerror(want));
}

static void expect_err(int ret, int want, const char *what)
{
	result(ret == want, what, "returned %d (%s), expected %s", ret,
	       strerror(ret), strerror(want));
}

static void test_refusals(const struct env *e)
{
	struct ibv_qp_init_attr qa;
	struct ibv_qp_attr attr;
	struct ibv_qp_cap cap;
	struct ibv_sge sge[64];
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int i, ret;

	errno = 0;
	cq = ibv_create_cq(e->ctx, 0, NULL, NULL, 0);
	expect_null(cq, errno, EINVAL, "refused: CQ with cqe 0: EINVAL");
	if (cq)
		ibv_destroy_cq(cq);
	errno = 0;
	cq = ibv_create_cq(e->ctx, e->dev.max_cqe + 1, NULL, NULL, 0);
	expect_null(cq, errno, EINVAL,
		    "refused: CQ with cqe > max_cqe: EINVAL");
	if (cq)
		ibv_destroy_cq(cq);

	pd = ibv_alloc_pd(e->ctx);
	cq = ibv_create_cq(e->ctx, 16, NULL, NULL, 0);
	if (!pd || !cq) {
		result(false, "refused: setup (PD, CQ)", "%s", strerror(errno));
		goto out;
	}

	qa = (struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = e->dev.max_qp_wr + 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	errno = 0;
	qp = ibv_create_qp(pd, &qa);
	expect_null(qp, errno, EINVAL,
		    "refused: QP with max_send_wr > max_qp_wr: EINVAL");
	if (qp)
		ibv_destroy_qp(qp);
	qa.cap.max_send_wr = 1;
	qa.cap.max_send_sge = e->dev.max_sge + 1;
	errno = 0;
	qp = ibv_create_qp(pd, &qa);
	expect_null(qp, errno, EINVAL,
		    "refused: QP with max_send_sge > max_sge: EINVAL");
	if (qp)
		ibv_destroy_qp(qp);

	errno = 0;
	mr = ibv_reg_mr(pd, e->buf, BUF_SIZE, IBV_ACCESS_REMOTE_WRITE);
	expect_null(mr, errno, EINVAL,
		    "refused: MR with REMOTE_WRITE, no LOCAL_WRITE: EINVAL");
	if (mr)
		ibv_dereg_mr(mr);

	qp = new_qp(pd, cq, IBV_QPT_RC, &cap);
	if (!qp || cap.max_recv_sge >= 64) {
		result(false, "refused: setup (RC QP)", "%s", strerror(errno));
		goto out;
	}
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 1;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 1;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN |
			    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	expect_err(ret, EINVAL, "refused: modify_qp RESET -> RTS: EINVAL");
	ret = to_state(qp, IBV_QPS_INIT);
	expect_err(ret, EINVAL, "refused: modify_qp RESET -> INIT without "
		   "pkey_index, port, access flags: EINVAL");

	ret = to_init(qp);
	result(!ret, "refused: setup (RC QP to INIT)", "%s", strerror(ret));
	for (i = 0; i < 64; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)e->buf, 16, 0 };
	rwr = (struct ibv_recv_wr){ .wr_id = 1, .sg_list = sge,
				    .num_sge = cap.max_recv_sge + 1 };
	ret = ibv_post_recv(qp, &rwr, &rbad);
	result(ret == EINVAL && rbad == &rwr,
	       "refused: post_recv with more SGEs than max_recv_sge: EINVAL",
	       "returned %d (%s)", ret, strerror(ret));

	ret = ibv_destroy_cq(cq);
	expect_err(ret, EBUSY, "refused: destroy a CQ a QP uses: EBUSY");
	if (!ret)
		cq = NULL;
	ibv_destroy_qp(qp);

	mr = ibv_reg_mr(pd, e->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		result(false, "refused: setup (MR)", "%s", strerror(errno));
		goto out;
	}
	ret = ibv_dealloc_pd(pd);
	expect_err(ret, EBUSY, "refused: dealloc a PD with an MR: EBUSY");
	if (!ret)
		pd = NULL;
	ibv_dereg_mr(mr);
out:
	if (cq)
		ibv_destroy_cq(cq);
	if (pd)
		ibv_dealloc_pd(pd);
}

/* ---- ibv_rereg_mr ---- */

/* ibv_rereg_mr failed in the kernel with @want, or was refused by it. */
static void expect_rereg_err(int ret, int want, const char *what)
{
	int err = errno;

	result(ret == IBV_REREG_MR_ERR_CMD && err == want, what,
	       "returned %d, errno %d (%s), expected %s", ret, err,
	       strerror(err), strerror(want));
}

/*
 * rereg keeps the keys (a peer's rkey stays valid), moves the MR between
 * PDs (the old PD is free to go), changes translation and access; bad
 * flags and access are refused with the MR left as it was.
 */
static void test_rereg(const struct env *e)
{
	struct ibv_pd *pd = ibv_alloc_pd(e->ctx), *pd2 = ibv_alloc_pd(e->ctx);
	char *other = calloc(1, BUF_SIZE);
	uint32_t lkey, rkey;
	struct ibv_mr *mr;
	int ret;

	mr = pd ? ibv_reg_mr(pd, e->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE) :
		  NULL;
	if (!mr || !pd2 || !other) {
		result(false, "rereg: setup", "%s", strerror(errno));
		goto out;
	}
	lkey = mr->lkey;
	rkey = mr->rkey;

	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	result(!ret && mr->lkey == lkey && mr->rkey == rkey,
	       "rereg: CHANGE_ACCESS, keys kept", "returned %d, errno %d, "
	       "keys %#x/%#x were %#x/%#x", ret, errno, mr->lkey, mr->rkey,
	       lkey, rkey);
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, other,
			   BUF_SIZE / 2, 0);
	result(!ret && mr->lkey == lkey && mr->addr == other &&
	       mr->length == BUF_SIZE / 2,
	       "rereg: CHANGE_TRANSLATION to another buffer, keys kept",
	       "returned %d, errno %d", ret, errno);
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0);
	result(!ret && mr->pd == pd2 && mr->lkey == lkey,
	       "rereg: CHANGE_PD, keys kept", "returned %d, errno %d", ret,
	       errno);
	ret = ibv_dealloc_pd(pd);
	expect_err(ret, 0, "rereg: the MR's old PD can be deallocated");
	if (!ret)
		pd = NULL;
	ret = ibv_dealloc_pd(pd2);
	expect_err(ret, EBUSY, "rereg: the MR's new PD is busy: EBUSY");
	if (!ret)
		pd2 = NULL;

	errno = 0;
	ret = ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0);
	expect_rereg_err(ret, EINVAL, "refused: rereg with no flags: EINVAL");
	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_REMOTE_WRITE);
	expect_rereg_err(ret, EINVAL, "refused: rereg to REMOTE_WRITE without "
			 "LOCAL_WRITE: EINVAL");
	/* A user MR may be zero-based: its addresses then run from 0. */
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ZERO_BASED);
	result(!ret && mr->lkey == lkey && mr->rkey == rkey,
	       "rereg to ZERO_BASED access, keys kept", "returned %d, errno %d",
	       ret, errno);
	/* Memory windows bind to user MRs: MW_BIND is theirs. */
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	result(!ret && mr->lkey == lkey && mr->rkey == rkey,
	       "rereg to MW_BIND access, keys kept", "returned %d, errno %d",
	       ret, errno);
	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			   other + 1, BUF_SIZE / 2, 0);
	result(!ret, "rereg: CHANGE_TRANSLATION to an unaligned address",
	       "returned %d, errno %d", ret, errno);
	result(mr->lkey == lkey && mr->rkey == rkey && mr->pd == pd2,
	       "rereg: refusals left the MR as it was", "keys %#x/%#x",
	       mr->lkey, mr->rkey);
	ret = ibv_dereg_mr(mr);
	expect_err(ret, 0, "rereg: dereg the re-registered MR");
	if (!ret)
		mr = NULL;
out:
	if (mr)
		ibv_dereg_mr(mr);
	if (pd2)
		ibv_dealloc_pd(pd2);
	if (pd)
		ibv_dealloc_pd(pd);
	free(other);
}

/* ---- main ---- */

int main(int argc, char **argv)
{
	static const union ibv_gid zero_gid;
	struct env e = { 0 };
	unsigned long cycles;
	char *end;

	if (argc != 4) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX CYCLES\n", argv[0]);
		return 255;
	}
	e.gid_index = strtol(argv[2], &end, 0);
	if (*end || e.gid_index < 0) {
		fprintf(stderr, "%s: bad GID index %s\n", argv[0], argv[2]);
		return 255;
	}
	cycles = strtoul(argv[3], &end, 0);
	if (*end || !cycles) {
		fprintf(stderr, "%s: bad number of cycles %s\n", argv[0],
			argv[3]);
		return 255;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	ktap_header();

	e.ctx = open_named(argv[1]);
	result(e.ctx, "open the device", "%s: %s", argv[1], strerror(errno));
	if (!e.ctx)
		return exit_status();
	e.buf = calloc(1, BUF_SIZE);
	result(e.buf && !ibv_query_device(e.ctx, &e.dev) &&
	       !ibv_query_port(e.ctx, PORT, &e.port) &&
	       !ibv_query_gid(e.ctx, PORT, e.gid_index, &e.gid) &&
	       memcmp(&e.gid, &zero_gid, sizeof(e.gid)),
	       "query device, port and GID", "GID index %d: %s", e.gid_index,
	       strerror(errno));
	if (!ktap_failures()) {
		test_cycles(&e, cycles);
		test_flush(&e);
		test_cq_events(&e);
		test_refusals(&e);
		test_rereg(&e);
	}
	free(e.buf);
	result(!ibv_close_device(e.ctx), "close the device", "%s",
	       strerror(errno));
	return exit_status();
}
