// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* vhca_rdma: sessions (one CQ and RC QP per test), posts and completions. */
#include "rdma.h"

void session_open(struct env *e, struct session *s)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 4, .max_recv_sge = 4 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = PORT,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	int ret;

	s->ch = ibv_create_comp_channel(e->ctx);
	if (!s->ch)
		fatal("session: create completion channel", errno);
	s->cq = ibv_create_cq(e->ctx, 64, NULL, s->ch, 0);
	if (!s->cq)
		fatal("session: create CQ", errno);
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(e->pd, &ia);
	if (!s->qp)
		fatal("session: create RC QP", errno);
	ret = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		fatal("session: QP RESET -> INIT", ret);
	s->psn = lrand48() & 0xffffff;
}

/* RTR towards the peer of s->peer, then RTS. */
void session_connect(struct env *e, struct session *s)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = e->port.active_mtu,
		.dest_qp_num = s->peer.qpn,
		.rq_psn = s->peer.psn,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.grh = { .dgid = s->peer.gid,
				 .sgid_index = e->gid_index, .hop_limit = 64 },
			.port_num = PORT,
		},
	};
	int ret;

	ret = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (ret)
		fatal("session: QP INIT -> RTR", ret);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = s->psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	ret = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			    IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	if (ret)
		fatal("session: QP RTR -> RTS", ret);
}

void session_info(const struct env *e, const struct session *s,
		  struct ctl *c)
{
	int i;

	*c = (struct ctl){ .type = CTL_INFO, .qpn = s->qp->qp_num,
			   .psn = s->psn, .gid = e->gid };
	for (i = 0; e->server && i < NUM_RMR; i++) {
		c->addr[i] = (uintptr_t)e->mr[i]->addr;
		c->rkey[i] = e->mr[i]->rkey;
		c->len[i] = e->mr[i]->length;
	}
}

void session_close(struct session *s)
{
	int ret;

	ret = ibv_destroy_qp(s->qp);
	if (ret)
		fatal("session: destroy QP", ret);
	ret = ibv_destroy_cq(s->cq);
	if (ret)
		fatal("session: destroy CQ", ret);
	ret = ibv_destroy_comp_channel(s->ch);
	if (ret)
		fatal("session: destroy completion channel", ret);
}

/*
 * Waits up to @ms for @n completions into @wc; returns how many came.
 * Sleeps on the completion channel, and polls anyway every 50 ms.
 */
int wait_wc(struct session *s, struct ibv_wc *wc, int n, int ms)
{
	struct pollfd pfd = { .fd = s->ch->fd, .events = POLLIN };
	double end = now_ms() + ms;
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int got = 0, k;

	for (;;) {
		k = ibv_poll_cq(s->cq, n - got, wc + got);
		if (k < 0)
			fatal("ibv_poll_cq", EIO);
		got += k;
		if (got == n || now_ms() >= end)
			return got;
		if (k)
			continue;
		if (ibv_req_notify_cq(s->cq, 0))
			fatal("ibv_req_notify_cq", errno);
		k = ibv_poll_cq(s->cq, n - got, wc + got);
		if (k < 0)
			fatal("ibv_poll_cq", EIO);
		got += k;
		if (got == n)
			return got;
		if (!k && poll(&pfd, 1, 50) == 1 &&
		    !ibv_get_cq_event(s->ch, &ev_cq, &ev_ctx))
			ibv_ack_cq_events(ev_cq, 1);
	}
}

const char *opcode_str(enum ibv_wc_opcode op)
{
	switch (op) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	default: return "other";
	}
}

void describe_wc(const struct ibv_wc *wc, char *msg, size_t size)
{
	snprintf(msg, size, "wr_id %llu, status %s (%d), opcode %s (%d), "
		 "byte_len %u, wc_flags %#x, imm_data %#x",
		 (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status),
		 wc->status, opcode_str(wc->opcode), wc->opcode, wc->byte_len,
		 wc->wc_flags, be32toh(wc->imm_data));
}

/*
 * Waits for one completion that must be @wr_id with @status; and, when the
 * status is success, opcode @op and, if @len >= 0, byte_len @len.
 */
bool expect_wc(struct session *s, const char *what, uint64_t wr_id,
	       enum ibv_wc_status status, enum ibv_wc_opcode op,
	       long long len)
{
	struct ibv_wc wc;
	char msg[200];
	bool ok;

	if (wait_wc(s, &wc, 1, WC_WAIT_MS) != 1) {
		result(false, what, "no completion in %d s (expected %s)",
		       WC_WAIT_MS / 1000, ibv_wc_status_str(status));
		return false;
	}
	ok = wc.wr_id == wr_id && wc.status == status;
	if (ok && status == IBV_WC_SUCCESS)
		ok = wc.opcode == op && (len < 0 || wc.byte_len == len);
	describe_wc(&wc, msg, sizeof(msg));
	result(ok, what, "%s; expected wr_id %llu, %s", msg,
	       (unsigned long long)wr_id, ibv_wc_status_str(status));
	return ok;
}

/* Nothing may complete successfully within QUIET_MS. */
void expect_no_success(struct session *s, const char *what)
{
	struct ibv_wc wc;
	char msg[200];
	int n = wait_wc(s, &wc, 1, QUIET_MS);

	if (n)
		describe_wc(&wc, msg, sizeof(msg));
	result(!n || wc.status != IBV_WC_SUCCESS, what, "%s",
	       n ? msg : "");
}

bool post_send(struct session *s, const char *what, uint64_t wr_id,
	       enum ibv_wr_opcode op, struct ibv_sge *sge, int nsge,
	       uint32_t imm, uint64_t raddr, uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = sge, .num_sge = nsge,
		.opcode = op, .send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32(imm),
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	int ret = ibv_post_send(s->qp, &wr, &bad);

	if (ret)
		result(false, what, "ibv_post_send returned %d (%s)", ret,
		       strerror(ret));
	return !ret;
}

void post_recv(struct session *s, uint64_t wr_id, struct ibv_sge *sge,
	       int nsge)
{
	struct ibv_recv_wr wr = {
		.wr_id = wr_id, .sg_list = sge, .num_sge = nsge,
	}, *bad;
	int ret = ibv_post_recv(s->qp, &wr, &bad);

	if (ret)
		fatal("ibv_post_recv", ret);
}

/* A receive of one SGE: @len bytes at rbuf + @off. */
void post_recv1(struct env *e, struct session *s, uint64_t wr_id,
		uint32_t off, uint32_t len)
{
	struct ibv_sge sge = { (uintptr_t)e->rbuf + off, len, e->rmr->lkey };

	post_recv(s, wr_id, &sge, 1);
}
