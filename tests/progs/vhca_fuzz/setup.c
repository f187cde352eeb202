// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz: the program's one PRNG stream, its clock, vhca's force_wire,
 * and the devices and connections every part sets up (ports, address
 * vectors, QPs taken from RESET to RTS).
 */
#include "fuzz.h"

#define FORCE_WIRE	"/sys/module/vhca/parameters/force_wire"

uint64_t fuzz_rng_stream;

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * vhca's force_wire parameter (ports of one namespace deliver in the
 * kernel unless set): read (v < 0) or set; its value, -1 if not there.
 */
int force_wire(int v)
{
	FILE *fp = fopen(FORCE_WIRE, v < 0 ? "r" : "w");
	char c = 'N';

	if (!fp)
		return -1;
	if (v < 0) {
		if (fscanf(fp, " %c", &c) != 1)
			c = 'N';
	} else {
		fputc(v ? 'Y' : 'N', fp);
	}
	if (fclose(fp))
		return -1;
	return v < 0 ? c == 'Y' || c == '1' : v;
}

/* ---- devices and connections ---- */

int port_open(struct port *p, const char *name, int gid_index)
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

struct ibv_ah_attr av_to(const struct port *from, const struct port *to)
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
int qp_connect(struct ibv_qp *qp, const struct port *from,
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

struct ibv_qp *qp_new(struct ibv_pd *pd, struct ibv_cq *cq,
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
