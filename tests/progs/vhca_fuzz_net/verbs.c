// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz_net's verbs: the victim's objects (devices, guarded MRs, RC QP
 * pairs) and its byte-verified transfers.
 */
#include "net.h"

struct end e0, e1;
double wait_s = 10;

uint8_t *guarded(size_t len)
{
	uint8_t *m = mmap(NULL, len + 2 * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		fatal("mmap");
	memset(m, GUARD_BYTE, len + 2 * PAGE);
	return m;
}

bool guards_intact(const uint8_t *m, size_t len)
{
	size_t i;

	for (i = 0; i < PAGE; i++)
		if (m[i] != GUARD_BYTE || m[PAGE + len + i] != GUARD_BYTE)
			return false;
	return true;
}

void end_open(struct end *e, const char *name, int gid_index)
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

void qpx_create(struct qpx *q, struct end *e, enum ibv_qp_type type)
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

void qpx_destroy(struct qpx *q)
{
	ibv_destroy_qp(q->qp);
	ibv_dereg_mr(q->mr);
	ibv_destroy_cq(q->cq);
	munmap(q->map, REGION + 2 * PAGE);
}

int to_init(struct ibv_qp *qp, bool ud)
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

int to_rtr(struct ibv_qp *qp, struct end *remote, struct end *local,
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

int to_rts(struct ibv_qp *qp, uint32_t sq_psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS, .sq_psn = sq_psn, .timeout = 14,
		.retry_cnt = 7, .rnr_retry = 6, .max_rd_atomic = 4,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

void pair_connect(struct pair *p)
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
uint8_t pat(unsigned int id, unsigned int seq, int dir, size_t i)
{
	uint32_t x = (id * 131 + seq * 7919 + dir * 31) ^ (uint32_t)i * 2654435761u;

	return (uint8_t)(x >> 13);
}

void fill(uint8_t *p, size_t n, unsigned int id, unsigned int seq,
		 int dir)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = pat(id, seq, dir, i);
}

/* The first byte of p[0..n) that is not the pattern, or -1. */
long mismatch(const uint8_t *p, size_t n, unsigned int id,
		     unsigned int seq, int dir)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != pat(id, seq, dir, i))
			return (long)i;
	return -1;
}

char why[256];

/* A completion of wr_id on q within wait_s, successful. */
bool wait_wc(struct qpx *q, uint64_t wr_id, struct ibv_wc *out)
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

int post(struct qpx *q, enum ibv_wr_opcode op, uint64_t wr_id,
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

int post_recv(struct qpx *q, uint64_t wr_id, size_t off, size_t len)
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
bool xfer_send(struct qpx *s, struct qpx *r, unsigned int id,
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
bool xfer_rdma(struct qpx *s, struct qpx *r, unsigned int id,
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
bool pair_round(struct pair *p, unsigned int id)
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
