// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz_net victim: its QPs (RC pairs, UD, every state, a
 * remote-read-only MR), the info file for the injector, the traffic
 * during the storm and the verdict after it.
 */
#include "net.h"

struct pair pairs[N_PAIRS];
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

void setup(char **argv)
{
	int i;

	end_open(&e0, argv[0], atoi(argv[1]));
	end_open(&e1, argv[2], atoi(argv[3]));
	for (i = 0; i < N_PAIRS; i++) {
		pairs[i].prot = i < N_PROT;
		pair_connect(&pairs[i]);
	}
}

bool stop_now(const char *stop, double t_end)
{
	struct stat st;

	return now_s() > t_end || (stop && !stat(stop, &st));
}

/*
 * Rounds on every pair in service until the file stop exists or secs
 * pass; a pair that fails leaves service (a failure if it is protected).
 */
void traffic(const char *stop, double secs, bool ud)
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

/*
 * argv[7], when set, names a class of the injector's (boundary,
 * mismatch): the victim then keeps that class's QPs in service
 * (sweep.c) instead of the storm's traffic.
 */
int victim(char **argv)
{
	int mode = !argv[7] ? 0 : !strcmp(argv[7], "boundary") ?
		   MODE_BOUNDARY : MODE_MISMATCH;

	setup(argv);
	ud_setup();
	states_setup();
	ro.map = guarded(PAGE);
	ro.buf = ro.map + PAGE;
	fill(ro.buf, PAGE, 99, 0, 0);
	ro.mr = ibv_reg_mr(e0.pd, ro.buf, PAGE, IBV_ACCESS_REMOTE_READ);
	if (!ro.mr)
		fatal("ibv_reg_mr (remote read only)");
	if (mode)
		sw_setup(mode, argv[4]);
	write_info(argv[4]);
	ktap_diag("victim ready: %d protected and %d target RC pairs, UD QP %u, QPs in %s..%s",
		  N_PROT, N_TARG, ud_a.qp->qp_num, state_name[0], state_name[4]);
	if (mode)
		sw_run(argv[5], atof(argv[6]));
	else
		traffic(argv[5], atof(argv[6]), true);
	if (mode)
		sw_verdict();
	verdict();
	if (mode)
		sw_teardown();
	teardown();
	return exit_status();
}
