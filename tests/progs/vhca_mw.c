// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_mw: memory windows, every byte checked.
 *
 *   vhca_mw DEV_A GID_A DEV_B GID_B
 *   vhca_mw hold DEV GID mr-first|mw-first
 *
 * DEV_A holds a buffer in an MR with MW_BIND and local write access (no
 * remote access of its own) and binds windows over parts of it; a QP of
 * DEV_B writes and reads through them.  Type 1 (ibv_bind_mw): a WRITE and
 * a READ through the window land and come back byte for byte, the bytes
 * around it untouched; a WRITE crossing its end fails with
 * REM_ACCESS_ERR; after a bind of length 0 (unbinding) its key fails too.
 * Type 2 (IBV_WR_BIND_MW): a WRITE lands; the MR refuses deregistration
 * while the window is bound; LOCAL_INV of its rkey and (bound again) a
 * SEND with Invalidate each end access through it; LOCAL_INV of a type 1
 * window's rkey fails.  Binds the IBTA forbids (an MR without MW_BIND,
 * beyond the MR, remote write on an MR without local write) complete with
 * MW_BIND_ERR and move the QP to the error state.  Then dealloc and dereg
 * in both orders, and two processes exiting with a window bound, the MR
 * created first or last.  The GIDs are indices of RoCE v2 GIDs of port 1.
 * KTAP results; the exit status counts the failures.
 *
 * hold: binds a window to an MR (created in that order) and waits to be
 * killed, for rdma link delete or process exit to destroy both.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "vhca_test.h"

#define PORT		1
#define BUF		8192
#define WAIT_MS		20000
#define RW		(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

struct port {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_port_attr attr;
	union ibv_gid gid;
	int gid_index;
	uint8_t *buf;
	struct ibv_mr *mr;
};

static int port_open(struct port *p, const char *name, const char *gid)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	p->gid_index = atoi(gid);
	p->ctx = open_port(name, PORT, p->gid_index, &p->attr, &p->gid);
	if (!p->ctx)
		return -1;
	p->pd = ibv_alloc_pd(p->ctx);
	p->cq = p->pd ? ibv_create_cq(p->ctx, 32, NULL, NULL, 0) : NULL;
	if (!p->cq)
		return -1;
	ia.send_cq = p->cq;
	ia.recv_cq = p->cq;
	p->qp = ibv_create_qp(p->pd, &ia);
	p->buf = aligned_alloc(4096, BUF);
	return p->qp && p->buf ? 0 : -1;
}

/* Anything to RESET, then to RTS towards QP dqpn of port to. */
static int qp_connect(struct ibv_qp *qp, const struct port *from,
		      const struct port *to, uint32_t dqpn)
{
	const struct qp_path path = {
		.port = PORT, .sgid_index = from->gid_index, .dgid = to->gid,
		.mtu = from->attr.active_mtu, .dqpn = dqpn,
		.rq_psn = 0x20, .sq_psn = 0x20, .access = RW,
		.rd_atomic = 4, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};

	errno = qp_rts(qp, &path);
	return errno ? -1 : 0;
}

static struct port a, b;

/* Both QPs reconnected (after an error), both CQs drained. */
static bool reconnect(void)
{
	struct ibv_wc wc;
	bool ok = !qp_connect(a.qp, &a, &b, b.qp->qp_num) &&
		  !qp_connect(b.qp, &b, &a, a.qp->qp_num);

	while (ibv_poll_cq(a.cq, 1, &wc) > 0 || ibv_poll_cq(b.cq, 1, &wc) > 0)
		;
	if (!ok)
		result(false, "reconnect the QPs", "errno %d", errno);
	return ok;
}

/* The next completion of cq into *wc; false after WAIT_MS without one. */
static bool wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	double end = now_ms() + WAIT_MS;
	int k;

	while (!(k = ibv_poll_cq(cq, 1, wc)) && now_ms() < end)
		;
	return k == 1;
}

/* One signaled work request on qp; its completion's status, or -1. */
static int post_wait(struct ibv_qp *qp, struct ibv_cq *cq,
		     struct ibv_send_wr *wr, struct ibv_wc *wc)
{
	struct ibv_send_wr *bad;

	wr->send_flags |= IBV_SEND_SIGNALED;
	if (ibv_post_send(qp, wr, &bad) || !wait_wc(cq, wc))
		return -1;
	return wc->status;
}

/* An RDMA WRITE or READ of len bytes of b's buffer at off, to addr/rkey. */
static int rdma(enum ibv_wr_opcode op, uint32_t off, uint32_t len,
		uint64_t addr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)b.buf + off, len, b.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = op, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.wr.rdma = { .remote_addr = addr, .rkey = rkey },
	};
	struct ibv_wc wc;

	return post_wait(b.qp, b.cq, &wr, &wc);
}

/* ibv_bind_mw of a type 1 window on qp; the completion's status or -1. */
static int bind1(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mw *mw,
		 struct ibv_mr *mr, uint64_t addr, uint64_t len, int access)
{
	struct ibv_mw_bind mb = {
		.wr_id = 1, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = addr, .length = len,
			       .mw_access_flags = access },
	};
	struct ibv_wc wc;

	if (ibv_bind_mw(qp, mw, &mb) || !wait_wc(cq, &wc))
		return -1;
	if (wc.status == IBV_WC_SUCCESS && wc.opcode != IBV_WC_BIND_MW)
		return -2;
	return wc.status;
}

/* IBV_WR_BIND_MW of a type 2 window on a's QP to a new key, in *rkey. */
static int bind2(struct ibv_mw *mw, uint64_t addr, uint64_t len, int access,
		 uint32_t *rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = 2, .opcode = IBV_WR_BIND_MW,
		.bind_mw = { .mw = mw, .rkey = ibv_inc_rkey(*rkey),
			     .bind_info = { .mr = a.mr, .addr = addr,
					    .length = len,
					    .mw_access_flags = access } },
	};
	struct ibv_wc wc;
	int st = post_wait(a.qp, a.cq, &wr, &wc);

	if (!st)
		*rkey = wr.bind_mw.rkey;
	return st;
}

static int local_inv(uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = 3, .opcode = IBV_WR_LOCAL_INV,
		.invalidate_rkey = rkey,
	};
	struct ibv_wc wc;
	int st = post_wait(a.qp, a.cq, &wr, &wc);

	return st == IBV_WC_SUCCESS && wc.opcode != IBV_WC_LOCAL_INV ? -2 : st;
}

static void fill(uint8_t *p, uint32_t len, unsigned int seed)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

/* a's buffer holds b's bytes [off, off + len) at aoff, 0x11 around. */
static bool landed(uint32_t aoff, uint32_t off, uint32_t len)
{
	uint32_t i;

	if (memcmp(a.buf + aoff, b.buf + off, len))
		return false;
	for (i = 0; i < BUF; i++)
		if ((i < aoff || i >= aoff + len) && a.buf[i] != 0x11)
			return false;
	return true;
}

static const char *st(int s)
{
	return s < 0 ? (s == -1 ? "no completion" : "wrong opcode") :
	       ibv_wc_status_str(s);
}

static void type1(void)
{
	uint64_t base = (uintptr_t)a.buf;
	struct ibv_mw *mw = ibv_alloc_mw(a.pd, IBV_MW_TYPE_1);
	uint32_t key0;
	int s;

	result(mw != NULL, "ibv_alloc_mw type 1", "errno %d", errno);
	if (!mw)
		return;
	key0 = mw->rkey;
	s = bind1(a.qp, a.cq, mw, a.mr, base + 1024, 2048, RW);
	result(!s && mw->rkey != key0 && (mw->rkey >> 8) == (key0 >> 8),
	       "type 1: ibv_bind_mw completes BIND_MW, key byte changed",
	       "%s, rkey %#x from %#x", st(s), mw->rkey, key0);
	fill(b.buf, BUF, 1);
	s = rdma(IBV_WR_RDMA_WRITE, 0, 2048, base + 1024, mw->rkey);
	result(!s && landed(1024, 0, 2048),
	       "type 1: a WRITE of the whole window lands, nothing around it",
	       "%s", st(s));
	s = rdma(IBV_WR_RDMA_READ, 4096, 2048, base + 1024, mw->rkey);
	result(!s && !memcmp(b.buf + 4096, b.buf, 2048),
	       "type 1: a READ through the window returns those bytes", "%s",
	       st(s));
	s = rdma(IBV_WR_RDMA_WRITE, 0, 32, base + 1024 + 2048 - 16, mw->rkey);
	result(s == IBV_WC_REM_ACCESS_ERR && landed(1024, 0, 2048),
	       "type 1: a WRITE crossing the window's end: REM_ACCESS_ERR",
	       "%s", st(s));
	reconnect();
	s = local_inv(mw->rkey);
	result(s == IBV_WC_LOC_QP_OP_ERR,
	       "type 1: LOCAL_INV of its rkey fails (LOC_QP_OP_ERR)", "%s",
	       st(s));
	reconnect();
	s = rdma(IBV_WR_RDMA_WRITE, 0, 16, base + 1024, mw->rkey);
	result(!s, "type 1: still bound after the refused LOCAL_INV", "%s",
	       st(s));
	key0 = mw->rkey;
	s = bind1(a.qp, a.cq, mw, a.mr, base, 0, 0);
	result(!s, "type 1: a bind of length 0 (unbind) completes", "%s",
	       st(s));
	s = rdma(IBV_WR_RDMA_WRITE, 0, 16, base + 1024, mw->rkey);
	result(s == IBV_WC_REM_ACCESS_ERR,
	       "type 1: unbound, its new key: REM_ACCESS_ERR", "%s", st(s));
	reconnect();
	s = rdma(IBV_WR_RDMA_WRITE, 0, 16, base + 1024, key0);
	result(s == IBV_WC_REM_ACCESS_ERR,
	       "type 1: unbound, its old key: REM_ACCESS_ERR", "%s", st(s));
	reconnect();
	/* Bound again, deallocated first: the MR stays, then goes. */
	s = bind1(a.qp, a.cq, mw, a.mr, base, 64, RW);
	result(!s && !ibv_dealloc_mw(mw),
	       "type 1: bound, then deallocated", "%s, errno %d", st(s), errno);
}

static void type2(void)
{
	uint64_t base = (uintptr_t)a.buf + 4096;
	struct ibv_mw *mw = ibv_alloc_mw(a.pd, IBV_MW_TYPE_2);
	/* 16 bytes: pyverbs' remote invalidation test sends data too. */
	struct ibv_sge rsge = { (uintptr_t)a.buf + 2048, 16, a.mr->lkey };
	struct ibv_sge ssge = { (uintptr_t)b.buf, 16, b.mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_send_wr swr = { .wr_id = 8, .sg_list = &ssge, .num_sge = 1,
				   .opcode = IBV_WR_SEND_WITH_INV };
	struct ibv_recv_wr *rbad;
	struct ibv_wc wc;
	uint32_t rkey;
	int s, r;

	result(mw != NULL, "ibv_alloc_mw type 2", "errno %d", errno);
	if (!mw)
		return;
	rkey = mw->rkey;
	memset(a.buf, 0x11, BUF);
	s = rdma(IBV_WR_RDMA_WRITE, 0, 16, base, rkey);
	result(s == IBV_WC_REM_ACCESS_ERR,
	       "type 2: not bound yet: REM_ACCESS_ERR", "%s", st(s));
	reconnect();
	s = bind2(mw, base, 1024, IBV_ACCESS_REMOTE_WRITE, &rkey);
	result(!s, "type 2: IBV_WR_BIND_MW completes", "%s", st(s));
	fill(b.buf, BUF, 2);
	s = rdma(IBV_WR_RDMA_WRITE, 0, 1024, base, rkey);
	result(!s && landed(4096, 0, 1024),
	       "type 2: a WRITE of the whole window lands, nothing around it",
	       "%s", st(s));
	s = rdma(IBV_WR_RDMA_READ, 4096, 16, base, rkey);
	result(s == IBV_WC_REM_ACCESS_ERR,
	       "type 2: a READ through a write-only window: REM_ACCESS_ERR",
	       "%s", st(s));
	reconnect();
	errno = 0;
	r = ibv_dereg_mr(a.mr);
	result(r == EINVAL, "ibv_dereg_mr of the MR a window is bound to: EINVAL",
	       "returned %d", r);
	s = bind2(mw, base, 1024, IBV_ACCESS_REMOTE_WRITE, &rkey);
	result(s == IBV_WC_MW_BIND_ERR,
	       "type 2: a bind of a bound window: MW_BIND_ERR", "%s", st(s));
	reconnect();
	s = local_inv(rkey);
	result(!s, "type 2: LOCAL_INV of its rkey completes LOCAL_INV", "%s",
	       st(s));
	s = rdma(IBV_WR_RDMA_WRITE, 0, 16, base, rkey);
	result(s == IBV_WC_REM_ACCESS_ERR,
	       "type 2: invalidated locally: REM_ACCESS_ERR", "%s", st(s));
	reconnect();
	s = bind2(mw, base + 512, 512, IBV_ACCESS_REMOTE_WRITE, &rkey);
	result(!s, "type 2: bound again after LOCAL_INV", "%s", st(s));
	swr.invalidate_rkey = rkey;
	r = ibv_post_recv(a.qp, &rwr, &rbad);
	s = r ? -1 : post_wait(b.qp, b.cq, &swr, &wc);
	memset(&wc, 0, sizeof(wc));
	r = s ? 0 : wait_wc(a.cq, &wc);
	result(r && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
	       (wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == rkey &&
	       wc.byte_len == 16 && !memcmp(a.buf + 2048, b.buf, 16),
	       "type 2: a SEND with Invalidate of its rkey: the receive says so",
	       "send %s, %s, receive %s, opcode %d, flags %#x, key %#x", st(s),
	       r ? "a receive completion" : "no receive completion",
	       st(wc.status), wc.opcode, wc.wc_flags, wc.invalidated_rkey);
	memset(a.buf, 0x11, BUF);
	s = rdma(IBV_WR_RDMA_WRITE, 0, 16, base + 512, rkey);
	result(s == IBV_WC_REM_ACCESS_ERR,
	       "type 2: invalidated remotely: REM_ACCESS_ERR", "%s", st(s));
	reconnect();
	s = bind2(mw, base, 64, IBV_ACCESS_REMOTE_WRITE, &rkey);
	result(!s && ibv_dereg_mr(a.mr) == EINVAL && !ibv_dealloc_mw(mw),
	       "type 2: bound, dereg refused, then deallocated", "%s", st(s));
}

/* Binds the IBTA forbids, each on a fresh QP of a to itself. */
static void bind_errors(void)
{
	uint64_t base = (uintptr_t)a.buf;
	struct ibv_mr *plain = ibv_reg_mr(a.pd, a.buf, BUF,
					  IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *ro = ibv_reg_mr(a.pd, a.buf, BUF, IBV_ACCESS_MW_BIND);
	struct ibv_mw *mw = ibv_alloc_mw(a.pd, IBV_MW_TYPE_1);
	static const struct {
		const char *what;
		int mr;		/* 0: a.mr, 1: plain, 2: ro */
		uint64_t off, len;
		int access;
	} cases[] = {
		{ "an MR without MW_BIND", 1, 0, 64, RW },
		{ "past the MR's end", 0, BUF - 32, 64, RW },
		{ "remote write on an MR without local write", 2, 0, 64,
		  IBV_ACCESS_REMOTE_WRITE },
		{ "zero-based", 0, 0, 64, RW | IBV_ACCESS_ZERO_BASED },
	};
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	unsigned int i;
	char what[128];
	int s;

	result(plain && ro && mw, "an MR without MW_BIND, one read-only, a window",
	       "errno %d", errno);
	if (!plain || !ro || !mw)
		return;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ibv_mr *mr = cases[i].mr == 1 ? plain :
				    cases[i].mr == 2 ? ro : a.mr;

		qp_connect(a.qp, &a, &a, a.qp->qp_num);
		s = bind1(a.qp, a.cq, mw, mr, base + cases[i].off,
			  cases[i].len, cases[i].access);
		ibv_query_qp(a.qp, &qa, IBV_QP_STATE, &qi);
		snprintf(what, sizeof(what),
			 "bind %s: MW_BIND_ERR, the QP in ERR", cases[i].what);
		result(s == IBV_WC_MW_BIND_ERR && qa.qp_state == IBV_QPS_ERR,
		       what, "%s, state %d", st(s), qa.qp_state);
	}
	qp_connect(a.qp, &a, &a, a.qp->qp_num);
	s = bind1(a.qp, a.cq, mw, ro, base, 64, IBV_ACCESS_REMOTE_READ);
	result(!s, "bind a read-only window on an MR without local write", "%s",
	       st(s));
	/* Deregistration first is refused, then the window, then the MR. */
	result(ibv_dereg_mr(ro) == EINVAL && !ibv_dealloc_mw(mw) &&
	       !ibv_dereg_mr(ro) && !ibv_dereg_mr(plain),
	       "dereg refused while bound; dealloc, then dereg", "errno %d",
	       errno);
	reconnect();
}

/*
 * A window bound to an MR, created in the order given, left to process
 * exit or rdma link delete; sleeps up to secs (0: returns at once).
 */
static int hold(const char *dev, const char *gid, bool mr_first, int secs)
{
	struct port p = { 0 };
	struct ibv_mw *mw = NULL;
	struct ibv_mr *mr = NULL;

	if (port_open(&p, dev, gid) || qp_connect(p.qp, &p, &p, p.qp->qp_num))
		return 2;
	if (mr_first)
		mr = ibv_reg_mr(p.pd, p.buf, BUF, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_MW_BIND);
	mw = ibv_alloc_mw(p.pd, IBV_MW_TYPE_1);
	if (!mr_first)
		mr = ibv_reg_mr(p.pd, p.buf, BUF, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_MW_BIND);
	if (!mr || !mw || bind1(p.qp, p.cq, mw, mr, (uintptr_t)p.buf, BUF,
				RW))
		return 3;
	printf("# hold: window %#x bound to MR %#x (%s first)\n", mw->rkey,
	       mr->lkey, mr_first ? "MR" : "window");
	fflush(stdout);
	if (secs)
		sleep(secs);
	return 0;
}

static void exits(const char *dev, const char *gid)
{
	int i, status;
	pid_t pid;

	for (i = 0; i < 2; i++) {
		pid = fork();
		if (!pid)
			_exit(hold(dev, gid, i, 0));
		result(pid > 0 && waitpid(pid, &status, 0) == pid &&
		       WIFEXITED(status) && !WEXITSTATUS(status),
		       i ? "a process exits with a window bound (MR first)" :
			   "a process exits with a window bound (window first)",
		       "status %#x", status);
	}
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "hold"))
		return hold(argv[2], argv[3], !strcmp(argv[4], "mr-first"), 60);
	if (argc != 5) {
		fprintf(stderr, "usage: %s DEV_A GID_A DEV_B GID_B\n"
			"       %s hold DEV GID mr-first|mw-first\n", argv[0],
			argv[0]);
		return 255;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	ktap_header();
	if (port_open(&a, argv[1], argv[2]) || port_open(&b, argv[3], argv[4])) {
		result(false, "set up both ports", "errno %d", errno);
		return exit_status();
	}
	memset(a.buf, 0x11, BUF);
	a.mr = ibv_reg_mr(a.pd, a.buf, BUF, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_MW_BIND);
	b.mr = ibv_reg_mr(b.pd, b.buf, BUF, IBV_ACCESS_LOCAL_WRITE);
	result(a.mr && b.mr, "register an MR with MW_BIND (no remote access)",
	       "errno %d", errno);
	if (!a.mr || !b.mr || !reconnect())
		return exit_status();
	type1();
	type2();
	bind_errors();
	result(!ibv_dereg_mr(a.mr), "the MR deregisters once no window is bound",
	       "errno %d", errno);
	exits(argv[1], argv[2]);
	return exit_status();
}
