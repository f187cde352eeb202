// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz ring: its objects (the fuzzed QPs, their partners, CQs and
 * SRQ), the partners' traffic, the steps, and the loop that runs them for
 * the time given and reports what it did.
 */
#include <fcntl.h>

#include "fuzz.h"

#define HOSTILITY_STEPS	256
static const uint32_t hostility_pm[] = { 1, 3, 10, 30, 100, 300, 600 };

static const char *const head_class[NHEAD] = {
	"next", "full", "past the ring", "behind the consumer",
	"back over posted", "half the space away", "random", "unmoved",
};

void ring_destroy(struct ring_fuzz *f)
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
void partner_recvs(struct ring_fuzz *f, int i)
{
	struct ibv_sge s = { .addr = (uintptr_t)f->bufb,
			     .length = FUZZ_SGES * 4096, .lkey = f->mb->lkey };
	struct ibv_recv_wr wr = { .wr_id = RECV_TAG | i, .sg_list = &s,
				  .num_sge = 1 }, *bad;

	while (f->p_recvs[i] < 16 && !ibv_post_recv(f->p[i], &wr, &bad))
		f->p_recvs[i]++;
}

/* The fuzzed QPs, their partners, CQs and SRQ, all connected. */
bool ring_create(struct ring_fuzz *f)
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

bool ring_recreate(struct ring_fuzz *f)
{
	ring_destroy(f);
	f->recreated++;
	return ring_create(f);
}

/* A valid SEND from partner i, to consume the fuzzed receive queues. */
void partner_send(struct ring_fuzz *f, int i)
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

void kick(struct ring_fuzz *f, struct ibv_qp *qp)
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

void ring_events(struct ring_fuzz *f)
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
bool ring_broken(struct ring_fuzz *f)
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
		/* Any record of the context's first doorbell area. */
		__atomic_store_n(&vc->areas[0].db[below(vc->area_recs)].head[below(2)],
				 fuzz_head(0, 1u << below(13)), __ATOMIC_RELEASE);
		if (chance(50))
			kick(f, f->q[qi]);
		break;
	default:
		kick(f, f->q[qi]);
		break;
	}
}

/*
 * The ports, buffers, PDs, MRs and AHs of DEV0 and DEV1, then the objects
 * (ring_create()); the async event fds made non-blocking.
 */
bool ring_open(struct ring_fuzz *f, char **dev)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_ah_attr av;
	bool ok;
	int fl;

	ok = !port_open(&f->a, dev[0], atoi(dev[1])) &&
	     !port_open(&f->b, dev[2], atoi(dev[3]));
	f->bufa = calloc(1, BUF_SIZE);
	f->bufb = calloc(1, BUF_SIZE);
	ok = ok && f->bufa && f->bufb && (f->pa = ibv_alloc_pd(f->a.ctx)) &&
	     (f->pb = ibv_alloc_pd(f->b.ctx)) &&
	     (f->ma = ibv_reg_mr(f->pa, f->bufa, BUF_SIZE, acc)) &&
	     (f->mb = ibv_reg_mr(f->pb, f->bufb, BUF_SIZE, acc));
	if (ok) {
		av = av_to(&f->a, &f->b);
		f->aha = ibv_create_ah(f->pa, &av);
		av = av_to(&f->b, &f->a);
		f->ahb = ibv_create_ah(f->pb, &av);
		ok = f->aha && f->ahb && ring_create(f);
	}
	if (ok) {
		fl = fcntl(f->a.ctx->async_fd, F_GETFL);
		fcntl(f->a.ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
		fl = fcntl(f->b.ctx->async_fd, F_GETFL);
		fcntl(f->b.ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	}
	return ok;
}

/* Everything ring_open() made, destroyed; false (errno set) if refused. */
bool ring_close(struct ring_fuzz *f)
{
	bool ok;
	int err;

	ring_destroy(f);
	if (f->aha)
		ibv_destroy_ah(f->aha);
	if (f->ahb)
		ibv_destroy_ah(f->ahb);
	ok = (!f->ma || !ibv_dereg_mr(f->ma)) && (!f->mb || !ibv_dereg_mr(f->mb)) &&
	     (!f->pa || !ibv_dealloc_pd(f->pa)) && (!f->pb || !ibv_dealloc_pd(f->pb));
	err = errno;
	if (f->a.ctx)
		ibv_close_device(f->a.ctx);
	if (f->b.ctx)
		ibv_close_device(f->b.ctx);
	free(f->bufa);
	free(f->bufb);
	errno = err;
	return ok;
}

int ring_main(char **dev, double secs, uint64_t seed)
{
	struct ring_fuzz f = { 0 };
	struct victim_proc vp;
	char heads[256];
	bool ok;
	double end;
	int i, n;

	rng_state = seed;
	ok = victim_start(&vp, dev);
	result(ok, "victim: RC pair connected in a process of its own",
	       "setup failed");
	ok = ok && ring_open(&f, dev);
	result(ok, "ring: the fuzzed QPs (RC on an RQ, RC on an SRQ, UD) and their partners",
	       "%s", strerror(errno));
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
	result(ring_close(&f), "ring: every object destroyed", "%s",
	       strerror(errno));
	victim_end(&vp);
	return exit_status();
}
