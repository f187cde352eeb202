// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_xrc: XRC domains, XRC SRQs, XRC_SEND and XRC_RECV QPs, byte by byte.
 *
 *   vhca_xrc DEV_A GID_A DEV_B GID_B
 *
 * An XRC_SEND QP of DEV_A sends to an XRC_RECV QP of DEV_B (the GIDs are
 * indices of RoCE v2 GIDs of port 1), whose XRC domain has two XRC SRQs
 * with a CQ each.  SENDs of several packets land in the SRQ each names
 * (ibv_post_send's remote_srqn, and ibv_qp_ex's wr_set_xrc_srqn), a WRITE
 * with immediate lands exactly where it was aimed and completes a receive
 * WQE of the SRQ it names, with its immediate; a READ through an SRQ reads
 * exactly its bytes; ibv_open_qp opens the XRC_RECV QP again.  Refused:
 * an XRC SRQ without CQ (EINVAL), a receive posted to an XRC_SEND QP
 * (EINVAL), an XRC_RECV QP without XRC domain (EINVAL), ibv_get_srq_num
 * of a basic SRQ (EOPNOTSUPP); a SEND naming the SRQ of another XRC
 * domain or a number no SRQ has completes with IBV_WC_REM_INV_REQ_ERR and
 * lands nowhere.
 * KTAP results; the exit status counts the failures.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "vhca_test.h"

#define PORT		1
#define DEPTH		16
#define BUF		(64 * 1024)
#define MSG		3000	/* three packets at path MTU 1024 */
#define AROUND		64
#define WAIT_MS		10000
#define IMM		0x1a2b3c4du
#define PSN		0xfffff0	/* the PSNs wrap in the first messages */

/* The sender: an XRC_SEND QP. */
struct ini {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	union ibv_gid gid;
	int gid_index;
	uint8_t *buf;
};

/*
 * The receiver: an XRC domain with two XRC SRQs (CQs cq[0], cq[1]), a
 * second domain with one (other), and the XRC_RECV QP of the first.
 */
struct tgt {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_xrcd *xrcd, *xrcd2;
	struct ibv_cq *cq[2], *cq_other;
	struct ibv_srq *srq[2], *other;
	uint32_t srqn[2], other_srqn;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	union ibv_gid gid;
	int gid_index;
	uint8_t *buf;
};

static struct ibv_context *open_dev(const char *name, const char *gid,
				    int *gid_index, union ibv_gid *g)
{
	struct ibv_port_attr attr;

	*gid_index = atoi(gid);
	return open_port(name, PORT, *gid_index, &attr, g);
}

static uint8_t *new_buf(struct ibv_pd *pd, struct ibv_mr **mr)
{
	uint8_t *buf = aligned_alloc(4096, BUF);

	if (!buf)
		return NULL;
	memset(buf, 0xa5, BUF);
	*mr = ibv_reg_mr(pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	return *mr ? buf : NULL;
}

static int ini_open(struct ini *a, const char *name, const char *gid)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_XRC_SEND,
		.cap = { .max_send_wr = DEPTH, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_SEND,
	};

	a->ctx = open_dev(name, gid, &a->gid_index, &a->gid);
	a->pd = a->ctx ? ibv_alloc_pd(a->ctx) : NULL;
	a->cq = a->pd ? ibv_create_cq(a->ctx, 4 * DEPTH, NULL, NULL, 0) : NULL;
	a->buf = a->cq ? new_buf(a->pd, &a->mr) : NULL;
	if (!a->buf)
		return -1;
	ia.pd = a->pd;
	ia.send_cq = a->cq;
	ia.recv_cq = a->cq;
	a->qp = ibv_create_qp_ex(a->ctx, &ia);
	return a->qp ? 0 : -1;
}

/* An XRC SRQ of xrcd with its CQ; its number in *srqn. */
static struct ibv_srq *xsrq(struct tgt *b, struct ibv_xrcd *xrcd,
			    struct ibv_cq *cq, uint32_t *srqn)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = DEPTH, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = b->pd, .xrcd = xrcd, .cq = cq,
	};
	struct ibv_srq *srq = ibv_create_srq_ex(b->ctx, &sa);

	if (srq && ibv_get_srq_num(srq, srqn)) {
		ibv_destroy_srq(srq);
		srq = NULL;
	}
	return srq;
}

static struct ibv_xrcd *new_xrcd(struct ibv_context *ctx)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};

	return ibv_open_xrcd(ctx, &xa);
}

static int tgt_open(struct tgt *b, const char *name, const char *gid)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	int i;

	b->ctx = open_dev(name, gid, &b->gid_index, &b->gid);
	b->pd = b->ctx ? ibv_alloc_pd(b->ctx) : NULL;
	b->buf = b->pd ? new_buf(b->pd, &b->mr) : NULL;
	b->xrcd = b->buf ? new_xrcd(b->ctx) : NULL;
	b->xrcd2 = b->xrcd ? new_xrcd(b->ctx) : NULL;
	if (!b->xrcd2)
		return -1;
	for (i = 0; i < 2; i++) {
		b->cq[i] = ibv_create_cq(b->ctx, 4 * DEPTH, NULL, NULL, 0);
		b->srq[i] = b->cq[i] ? xsrq(b, b->xrcd, b->cq[i], &b->srqn[i]) :
				       NULL;
		if (!b->srq[i])
			return -1;
	}
	b->cq_other = ibv_create_cq(b->ctx, 4 * DEPTH, NULL, NULL, 0);
	b->other = b->cq_other ? xsrq(b, b->xrcd2, b->cq_other,
				      &b->other_srqn) : NULL;
	ia.xrcd = b->xrcd;
	b->qp = b->other ? ibv_create_qp_ex(b->ctx, &ia) : NULL;
	return b->qp ? 0 : -1;
}

/* XRC_SEND's or XRC_RECV's attributes, RESET -> RTS towards dqpn. */
static int xrc_rts(struct ibv_qp *qp, int sgid_index,
		   const union ibv_gid *dgid, uint32_t dqpn)
{
	struct qp_path path = {
		.port = PORT, .sgid_index = sgid_index, .dgid = *dgid,
		.mtu = IBV_MTU_1024, .dqpn = dqpn, .rq_psn = PSN, .sq_psn = PSN,
		.access = qp->qp_type == IBV_QPT_XRC_RECV ?
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ : 0,
		.rd_atomic = 1, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};

	return qp_rts(qp, &path);
}

static int connect_both(struct ini *a, struct tgt *b)
{
	errno = xrc_rts(a->qp, a->gid_index, &b->gid, b->qp->qp_num) ?:
		xrc_rts(b->qp, b->gid_index, &a->gid, a->qp->qp_num);
	return errno ? -1 : 0;
}

static int srq_post(struct tgt *b, int i, uint64_t wr_id, uint32_t off)
{
	struct ibv_sge sge = { .addr = (uintptr_t)b->buf + off, .length = MSG,
			       .lkey = b->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(b->srq[i], &wr, &bad);
}

/* One signaled WR to XRC SRQ srqn: SEND, WRITE with immediate or READ. */
static int ini_post(struct ini *a, enum ibv_wr_opcode op, uint32_t srqn,
		    uint32_t off, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)a->buf + off, .length = MSG,
			       .lkey = a->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = op, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(IMM),
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
		.qp_type.xrc.remote_srqn = srqn,
	}, *bad;

	return ibv_post_send(a->qp, &wr, &bad);
}

static void fill(uint8_t *p, uint32_t len, uint8_t seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 7);
}

/* The sender's completion: status, within WAIT_MS. */
static bool sent(struct ini *a, enum ibv_wc_status status, const char *what)
{
	struct ibv_wc wc;

	if (!poll1(a->cq, &wc, WAIT_MS)) {
		result(false, what, "no send completion");
		return false;
	}
	result(wc.status == status, what, "status %s", ibv_wc_status_str(wc.status));
	return wc.status == status;
}

/* A receive completion on SRQ i's CQ: opcode, MSG bytes, the TGT QP's. */
static bool received(struct tgt *b, int i, enum ibv_wc_opcode opcode,
		     const char *what)
{
	struct ibv_wc wc;

	if (!poll1(b->cq[i], &wc, WAIT_MS)) {
		result(false, what, "no receive completion on SRQ %d's CQ", i);
		return false;
	}
	result(wc.status == IBV_WC_SUCCESS && wc.opcode == opcode &&
	       wc.byte_len == MSG && wc.qp_num == b->qp->qp_num &&
	       (opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
		((wc.wc_flags & IBV_WC_WITH_IMM) && ntohl(wc.imm_data) == IMM)),
	       what, "status %s opcode %d len %u qp %#x flags %#x",
	       ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len,
	       wc.qp_num, wc.wc_flags);
	return true;
}

/* SENDs to each SRQ (the second through ibv_qp_ex): each lands in its own. */
static void sends(struct ini *a, struct tgt *b)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(a->qp);
	int i, err;

	for (i = 0; i < 2; i++) {
		fill(a->buf + i * MSG, MSG, (uint8_t)(0x10 + i));
		memset(b->buf + 8192 * (i + 1), 0, MSG);
		if (srq_post(b, i, 100 + i, 8192 * (i + 1))) {
			result(false, "post an XRC SRQ receive", "errno %d", errno);
			return;
		}
	}
	err = ini_post(a, IBV_WR_SEND, b->srqn[0], 0, 0, 0);
	result(!err, "SEND to XRC SRQ 0 posted", "error %d", err);
	if (!err && sent(a, IBV_WC_SUCCESS, "SEND to XRC SRQ 0 completes") &&
	    received(b, 0, IBV_WC_RECV, "it completes a receive of SRQ 0"))
		result(!memcmp(b->buf + 8192, a->buf, MSG),
		       "its bytes land in SRQ 0's buffer", "bytes differ");

	ibv_wr_start(qpx);
	qpx->wr_id = 2;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(qpx);
	ibv_wr_set_xrc_srqn(qpx, b->srqn[1]);
	ibv_wr_set_sge(qpx, a->mr->lkey, (uintptr_t)a->buf + MSG, MSG);
	err = ibv_wr_complete(qpx);
	result(!err, "ibv_qp_ex SEND to XRC SRQ 1 posted", "error %d", err);
	if (!err && sent(a, IBV_WC_SUCCESS, "it completes") &&
	    received(b, 1, IBV_WC_RECV, "it completes a receive of SRQ 1"))
		result(!memcmp(b->buf + 2 * 8192, a->buf + MSG, MSG),
		       "its bytes land in SRQ 1's buffer", "bytes differ");
}

/* A WRITE with immediate: its bytes where aimed, SRQ 0's WQE completed. */
static void write_imm(struct ini *a, struct tgt *b)
{
	uint32_t at = 32768;
	uint8_t *t = b->buf + at;
	bool around = true;
	int i, err;

	fill(a->buf, MSG, 0x77);
	memset(t - AROUND, 0xee, MSG + 2 * AROUND);
	if (srq_post(b, 0, 300, 0)) {
		result(false, "post an XRC SRQ receive", "errno %d", errno);
		return;
	}
	err = ini_post(a, IBV_WR_RDMA_WRITE_WITH_IMM, b->srqn[0], 0,
		       (uintptr_t)t, b->mr->rkey);
	result(!err, "WRITE with immediate to XRC SRQ 0 posted", "error %d", err);
	if (err || !sent(a, IBV_WC_SUCCESS, "it completes") ||
	    !received(b, 0, IBV_WC_RECV_RDMA_WITH_IMM,
		      "it completes a receive of SRQ 0 with its immediate"))
		return;
	for (i = 0; i < AROUND; i++)
		around &= t[i - AROUND] == 0xee && t[MSG + i] == 0xee;
	result(!memcmp(t, a->buf, MSG) && around,
	       "its bytes land where aimed, those around untouched",
	       "bytes differ");
}

/*
 * A READ through SRQ 1 (the target checks its PD): the bytes read land in
 * the sender's buffer, those after them untouched; no receive completes.
 */
static void read_back(struct ini *a, struct tgt *b)
{
	uint32_t at = 40960;
	struct ibv_wc wc;
	bool after = true;
	int i, err;

	fill(b->buf + at, MSG, 0x3c);
	memset(a->buf, 0xee, MSG + AROUND);
	err = ini_post(a, IBV_WR_RDMA_READ, b->srqn[1], 0,
		       (uintptr_t)b->buf + at, b->mr->rkey);
	result(!err, "READ through XRC SRQ 1 posted", "error %d", err);
	if (err || !sent(a, IBV_WC_SUCCESS, "it completes"))
		return;
	for (i = 0; i < AROUND; i++)
		after &= a->buf[MSG + i] == 0xee;
	result(!memcmp(a->buf, b->buf + at, MSG) && after,
	       "the bytes read land, those after them untouched",
	       "bytes differ");
	result(!poll1(b->cq[0], &wc, 1) && !poll1(b->cq[1], &wc, 1),
	       "no receive completes at the target", "a completion came");
}

/* A SEND naming srqn fails with REM_INV_REQ_ERR; nothing is received. */
static void refused_srqn(struct ini *a, struct tgt *b, uint32_t srqn,
			 const char *what)
{
	struct ibv_wc wc;
	int err;

	if (connect_both(a, b) || srq_post(b, 0, 400, 0)) {
		result(false, what, "reconnect: errno %d", errno);
		return;
	}
	err = ini_post(a, IBV_WR_SEND, srqn, 0, 0, 0);
	if (err) {
		result(false, what, "post: error %d", err);
		return;
	}
	sent(a, IBV_WC_REM_INV_REQ_ERR, what);
	result(!poll1(b->cq[0], &wc, 200) && !poll1(b->cq_other, &wc, 1),
	       "nothing lands", "a receive completion came");
}

static void refusals(struct ini *a, struct tgt *b)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = DEPTH, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD,
		.srq_type = IBV_SRQT_XRC, .pd = b->pd, .xrcd = b->xrcd,
	};
	struct ibv_srq_init_attr ba = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = b->pd,
	};
	struct ibv_sge sge = { .addr = (uintptr_t)a->buf, .length = 8,
			       .lkey = a->mr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	uint32_t n;
	int err;

	srq = ibv_create_srq_ex(b->ctx, &sa);
	result(!srq && errno == EINVAL, "an XRC SRQ without CQ: EINVAL",
	       "%s, errno %d", srq ? "created" : "refused", errno);
	if (srq)
		ibv_destroy_srq(srq);
	qp = ibv_create_qp_ex(b->ctx, &qa);
	result(!qp && errno == EINVAL, "an XRC_RECV QP without XRCD: EINVAL",
	       "%s, errno %d", qp ? "created" : "refused", errno);
	if (qp)
		ibv_destroy_qp(qp);
	srq = ibv_create_srq(b->pd, &ba);
	err = srq ? ibv_get_srq_num(srq, &n) : -1;
	result(err == EOPNOTSUPP, "ibv_get_srq_num of a basic SRQ: EOPNOTSUPP",
	       "error %d", err);
	if (srq)
		ibv_destroy_srq(srq);
	err = ibv_post_recv(a->qp, &rwr, &rbad);
	result(err == EINVAL, "a receive posted to an XRC_SEND QP: EINVAL",
	       "error %d", err);
}

static void open_qp(struct tgt *b)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = b->qp->qp_num, .xrcd = b->xrcd,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_qp *qp = ibv_open_qp(b->ctx, &oa);

	result(qp && qp->qp_num == b->qp->qp_num,
	       "ibv_open_qp opens the XRC_RECV QP", "errno %d", errno);
	if (qp)
		result(!ibv_destroy_qp(qp), "and closes it", "errno %d", errno);
}

int main(int argc, char **argv)
{
	struct ibv_device_attr dattr;
	struct ini a = { 0 };
	struct tgt b = { 0 };
	uint32_t unknown;

	if (argc < 5) {
		fprintf(stderr, "usage: %s DEV_A GID_A DEV_B GID_B\n", argv[0]);
		return 255;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	ktap_header();
	if (ini_open(&a, argv[1], argv[2]) || tgt_open(&b, argv[3], argv[4]) ||
	    connect_both(&a, &b)) {
		result(false, "set up and connect XRC_SEND and XRC_RECV QPs",
		       "errno %d", errno);
		return exit_status();
	}
	result(!ibv_query_device(b.ctx, &dattr) &&
	       (dattr.device_cap_flags & IBV_DEVICE_XRC),
	       "the device reports IBV_DEVICE_XRC", "flags %#x",
	       dattr.device_cap_flags);
	refusals(&a, &b);
	sends(&a, &b);
	write_imm(&a, &b);
	read_back(&a, &b);
	open_qp(&b);
	refused_srqn(&a, &b, b.other_srqn,
		     "a SEND naming another XRC domain's SRQ: REM_INV_REQ_ERR");
	/* A number no SRQ has: the 24-bit numbers are random. */
	unknown = (b.srqn[0] ^ 0x800000) & 0xffffff;
	if (unknown == b.srqn[1] || unknown == b.other_srqn || !unknown)
		unknown = (b.srqn[0] ^ 0x400000) & 0xffffff;
	refused_srqn(&a, &b, unknown,
		     "a SEND naming no XRC SRQ: REM_INV_REQ_ERR");
	return exit_status();
}
