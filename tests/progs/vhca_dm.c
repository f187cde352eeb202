// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_dm: device memory (ibv_alloc_dm) as the source and target of RDMA.
 *
 *   vhca_dm DEV_A GID_A DEV_B GID_B
 *   vhca_dm quota DEV N
 *
 * The first form: DEV_B allocates DM_LEN bytes of device memory and
 * registers MR_LEN bytes of it from MR_OFF as a zero-based MR with remote
 * write, read and atomic access; an RC QP of DEV_A, connected to one of
 * DEV_B, WRITEs into it, READs from it, SENDs into a receive posted in
 * it, FETCH_AND_ADDs a word of it, and DEV_B SENDs from it; each time every
 * byte of the allocation is read back (ibv_memcpy_from_dm) against what
 * must be there, the bytes around the MR included.  Before that, the
 * allocation and copy refusals (limits, alignment, bounds, comp_mask,
 * registration without ZERO_BASED); last, a WRITE that ends past the MR
 * completes with a remote access error and places nothing.
 *
 * The second form: allocations of max_dm_size on DEV until one fails; N
 * must succeed (what the context's coherent quota holds) and the next
 * fail with ENOMEM; once they are freed, one succeeds again.
 *
 * The GIDs are indices of RoCE v2 GIDs of port 1.  KTAP results; the exit
 * status counts the failures.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "vhca_test.h"

#define PORT		1
#define DM_LEN		8192
#define MR_OFF		2048	/* the MR across the allocation's pages */
#define MR_LEN		4096
#define BUF_LEN		8192
#define WAIT_MS		60000
#define MAX_DMS		256

struct port {
	struct ibv_context *ctx;
	struct ibv_device_attr_ex dev;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_port_attr attr;
	union ibv_gid gid;
	int gid_index;
	uint8_t *buf;
	struct ibv_mr *mr;
};

/* What the test expects the allocation to hold. */
static uint8_t shadow[DM_LEN];

static int port_open(struct port *p, const char *name, const char *gid)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ;

	p->gid_index = atoi(gid);
	p->ctx = open_port(name, PORT, p->gid_index, &p->attr, &p->gid);
	if (!p->ctx || ibv_query_device_ex(p->ctx, NULL, &p->dev))
		return -1;
	p->pd = ibv_alloc_pd(p->ctx);
	p->cq = p->pd ? ibv_create_cq(p->ctx, 32, NULL, NULL, 0) : NULL;
	p->buf = calloc(1, BUF_LEN);
	p->mr = p->cq && p->buf ? ibv_reg_mr(p->pd, p->buf, BUF_LEN, access) :
		NULL;
	if (!p->mr)
		return -1;
	ia.send_cq = p->cq;
	ia.recv_cq = p->cq;
	p->qp = ibv_create_qp(p->pd, &ia);
	return p->qp ? 0 : -1;
}

static int qp_connect(struct port *from, const struct port *to)
{
	const struct qp_path path = {
		.port = PORT, .sgid_index = from->gid_index, .dgid = to->gid,
		.mtu = from->attr.active_mtu, .dqpn = to->qp->qp_num,
		.rq_psn = 0x20, .sq_psn = 0x20,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.rd_atomic = 4, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};

	errno = qp_rts(from->qp, &path);
	return errno ? -1 : 0;
}

/* The one completion on p's CQ, of opcode and status; false if not. */
static bool completes(struct port *p, enum ibv_wc_opcode opcode,
		      enum ibv_wc_status status, const char *what)
{
	struct ibv_wc wc;
	int k = poll1(p->cq, &wc, WAIT_MS);

	if (k == 1 && wc.status == status &&
	    (status != IBV_WC_SUCCESS || wc.opcode == opcode))
		return true;
	result(false, what, "%d completions, status %s, opcode %d", k,
	       k == 1 ? ibv_wc_status_str(wc.status) : "-",
	       k == 1 ? (int)wc.opcode : -1);
	return false;
}

static int post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t laddr,
		uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey,
		uint64_t add)
{
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD)
		wr.wr.atomic = (typeof(wr.wr.atomic)){ raddr, add, 0, rkey };
	else
		wr.wr.rdma = (typeof(wr.wr.rdma)){ raddr, rkey };
	return ibv_post_send(qp, &wr, &bad);
}

static int post_recv(struct ibv_qp *qp, uint64_t addr, uint32_t len,
		     uint32_t lkey)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static void fill(uint8_t *p, size_t len, uint8_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 13 + seed);
}

/* Every byte of the allocation against the shadow. */
static void dm_is(struct ibv_dm *dm, const char *what)
{
	static uint8_t got[DM_LEN];
	int err = ibv_memcpy_from_dm(got, dm, 0, DM_LEN);
	size_t i;

	for (i = 0; !err && i < DM_LEN && got[i] == shadow[i]; i++)
		;
	result(!err && i == DM_LEN, what,
	       err ? "ibv_memcpy_from_dm: %d" : "byte %d of the allocation: %#x, expected %#x",
	       err ? err : (int)i, i < DM_LEN ? got[i] : 0,
	       i < DM_LEN ? shadow[i] : 0);
}

/* The refusals, on a context of their own. */
static void refusals(struct port *b, struct ibv_dm *dm)
{
	uint64_t max = b->dev.max_dm_size;
	struct ibv_alloc_dm_attr attr = { .length = max + 1 };
	uint8_t w[8] = { 0 };
	struct ibv_dm *bad;
	int r[5];
	struct ibv_mr *mr;

	bad = ibv_alloc_dm(b->ctx, &attr);
	result(!bad && errno == EINVAL, "alloc_dm of max_dm_size + 1: EINVAL",
	       "%p, errno %d", (void *)bad, errno);
	attr = (struct ibv_alloc_dm_attr){ .length = 64, .log_align_req = 13 };
	bad = ibv_alloc_dm(b->ctx, &attr);
	result(!bad && errno == EINVAL,
	       "alloc_dm aligned past the page size: EINVAL", "%p, errno %d",
	       (void *)bad, errno);
	attr = (struct ibv_alloc_dm_attr){ .length = 64, .comp_mask = 1 };
	bad = ibv_alloc_dm(b->ctx, &attr);
	result(!bad && errno == EINVAL, "alloc_dm with comp_mask bits: EINVAL",
	       "%p, errno %d", (void *)bad, errno);
	attr = (struct ibv_alloc_dm_attr){ .length = max, .log_align_req = 12 };
	bad = ibv_alloc_dm(b->ctx, &attr);
	result(bad && !ibv_free_dm(bad),
	       "alloc_dm of max_dm_size, page-aligned, and free_dm",
	       "errno %d", errno);

	r[0] = ibv_memcpy_to_dm(dm, 2, w, 4);
	r[1] = ibv_memcpy_to_dm(dm, 0, w, 6);
	r[2] = ibv_memcpy_to_dm(dm, DM_LEN - 4, w, 8);
	r[3] = ibv_memcpy_from_dm(w, dm, DM_LEN, 4);
	r[4] = ibv_memcpy_from_dm(w, dm, UINT64_MAX - 3, 8);
	result(r[0] == EINVAL && r[1] == EINVAL && r[2] == EINVAL &&
	       r[3] == EINVAL && r[4] == EINVAL,
	       "memcpy_to/from_dm: unaligned or out of bounds: EINVAL",
	       "%d %d %d %d %d", r[0], r[1], r[2], r[3], r[4]);
	mr = ibv_reg_dm_mr(b->pd, dm, 0, 64, IBV_ACCESS_LOCAL_WRITE);
	result(!mr && errno == EINVAL, "reg_dm_mr without ZERO_BASED: EINVAL",
	       "%p, errno %d", (void *)mr, errno);
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_dm_mr(b->pd, dm, DM_LEN - 60, 64,
			   IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE);
	result(!mr && errno == EINVAL, "reg_dm_mr past the allocation: EINVAL",
	       "%p, errno %d", (void *)mr, errno);
	if (mr)
		ibv_dereg_mr(mr);
}

static void traffic(struct port *a, struct port *b, struct ibv_dm *dm,
		    struct ibv_mr *dmr)
{
	uint64_t *word = (uint64_t *)(a->buf + 4096), v = 41;
	int err;

	/* RDMA WRITE into the DM MR, at iova 100. */
	fill(a->buf, 1000, 1);
	memcpy(shadow + MR_OFF + 100, a->buf, 1000);
	if (post(a->qp, IBV_WR_RDMA_WRITE, (uintptr_t)a->buf, 1000,
		 a->mr->lkey, 100, dmr->rkey, 0) ||
	    !completes(a, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS, "RDMA WRITE"))
		return;
	dm_is(dm, "RDMA WRITE lands at iova 100 of the DM MR, nothing else");

	/* RDMA READ of the whole MR, after the process wrote it. */
	fill(shadow + MR_OFF, MR_LEN, 2);
	err = ibv_memcpy_to_dm(dm, MR_OFF, shadow + MR_OFF, MR_LEN);
	result(!err, "memcpy_to_dm of the MR's range", "%d", err);
	if (post(a->qp, IBV_WR_RDMA_READ, (uintptr_t)a->buf, MR_LEN,
		 a->mr->lkey, 0, dmr->rkey, 0) ||
	    !completes(a, IBV_WC_RDMA_READ, IBV_WC_SUCCESS, "RDMA READ"))
		return;
	result(!memcmp(a->buf, shadow + MR_OFF, MR_LEN),
	       "RDMA READ of the DM MR returns what memcpy_to_dm wrote",
	       "%s", "bytes differ");

	/* SEND into a receive posted in the DM MR (iova 512). */
	fill(a->buf, 256, 3);
	memcpy(shadow + MR_OFF + 512, a->buf, 256);
	if (post_recv(b->qp, 512, 256, dmr->lkey) ||
	    post(a->qp, IBV_WR_SEND, (uintptr_t)a->buf, 256, a->mr->lkey, 0,
		 0, 0) ||
	    !completes(a, IBV_WC_SEND, IBV_WC_SUCCESS, "SEND") ||
	    !completes(b, IBV_WC_RECV, IBV_WC_SUCCESS, "RECV into the DM MR"))
		return;
	dm_is(dm, "SEND lands in the receive posted in the DM MR");

	/* SEND from the DM MR (iova 64). */
	memset(a->buf, 0, 64);
	if (post_recv(a->qp, (uintptr_t)a->buf, 64, a->mr->lkey) ||
	    post(b->qp, IBV_WR_SEND, 64, 64, dmr->lkey, 0, 0, 0) ||
	    !completes(b, IBV_WC_SEND, IBV_WC_SUCCESS, "SEND from the DM MR") ||
	    !completes(a, IBV_WC_RECV, IBV_WC_SUCCESS, "RECV"))
		return;
	result(!memcmp(a->buf, shadow + MR_OFF + 64, 64),
	       "SEND gathers from the DM MR", "%s", "bytes differ");

	/* FETCH_AND_ADD on the word at iova 8. */
	memcpy(shadow + MR_OFF + 8, &v, 8);
	ibv_memcpy_to_dm(dm, MR_OFF + 8, &v, 8);
	v = 42;
	memcpy(shadow + MR_OFF + 8, &v, 8);
	if (post(a->qp, IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)word, 8,
		 a->mr->lkey, 8, dmr->rkey, 1) ||
	    !completes(a, IBV_WC_FETCH_ADD, IBV_WC_SUCCESS, "FETCH_AND_ADD"))
		return;
	result(*word == 41, "FETCH_AND_ADD returns the DM word's value",
	       "%llu", (unsigned long long)*word);
	dm_is(dm, "FETCH_AND_ADD adds to the DM word");

	/* A WRITE ending 4 bytes past the MR: refused, nothing placed. */
	fill(a->buf, 8, 4);
	if (post(a->qp, IBV_WR_RDMA_WRITE, (uintptr_t)a->buf, 8, a->mr->lkey,
		 MR_LEN - 4, dmr->rkey, 0))
		return;
	completes(a, IBV_WC_RDMA_WRITE, IBV_WC_REM_ACCESS_ERR,
		  "RDMA WRITE past the DM MR: remote access error");
	dm_is(dm, "the WRITE past the DM MR placed nothing");
}

static int two_ports(char **argv)
{
	struct ibv_alloc_dm_attr attr = { .length = DM_LEN };
	struct port a = { 0 }, b = { 0 };
	struct ibv_mr *dmr = NULL;
	struct ibv_dm *dm = NULL;
	int err, access = IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE |
		     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_ATOMIC;

	if (port_open(&a, argv[1], argv[2]) || port_open(&b, argv[3], argv[4]) ||
	    qp_connect(&a, &b) || qp_connect(&b, &a)) {
		result(false, "two connected RC QPs", "errno %d", errno);
		return exit_status();
	}
	result(b.dev.max_dm_size >= DM_LEN, "max_dm_size holds the test's",
	       "%llu", (unsigned long long)b.dev.max_dm_size);
	dm = ibv_alloc_dm(b.ctx, &attr);
	result(dm, "alloc_dm", "errno %d", errno);
	if (!dm)
		return exit_status();
	dm_is(dm, "a new allocation is zeroed");
	refusals(&b, dm);
	dmr = ibv_reg_dm_mr(b.pd, dm, MR_OFF, MR_LEN, access);
	result(dmr && !dmr->addr, "reg_dm_mr, zero-based", "errno %d", errno);
	if (dmr) {
		traffic(&a, &b, dm, dmr);
		err = ibv_free_dm(dm);
		result(err == EBUSY, "free_dm with an MR on it: EBUSY",
		       "%d", err);
		result(!ibv_dereg_mr(dmr), "dereg_mr of the DM MR",
		       "errno %d", errno);
	}
	err = ibv_free_dm(dm);
	result(!err, "free_dm", "%d", err);
	return exit_status();
}

static int quota(const char *name, int want)
{
	struct ibv_context *ctx = open_named(name);
	struct ibv_dm *dm[MAX_DMS], *again;
	struct ibv_alloc_dm_attr attr;
	struct ibv_device_attr_ex dev;
	int n = 0, err = 0;

	if (!ctx || ibv_query_device_ex(ctx, NULL, &dev)) {
		result(false, "open the device", "errno %d", errno);
		return exit_status();
	}
	attr = (struct ibv_alloc_dm_attr){ .length = dev.max_dm_size };
	while (n < MAX_DMS && (dm[n] = ibv_alloc_dm(ctx, &attr)))
		n++;
	err = errno;
	result(n == want && err == ENOMEM,
	       "allocations of max_dm_size until the quota is full",
	       "%d made (%d expected), then errno %d", n, want, err);
	while (n > 0)
		ibv_free_dm(dm[--n]);
	again = ibv_alloc_dm(ctx, &attr);
	result(again, "freed allocations give their room back", "errno %d",
	       errno);
	if (again)
		ibv_free_dm(again);
	ibv_close_device(ctx);
	return exit_status();
}

int main(int argc, char **argv)
{
	ktap_header();
	if (argc == 4 && !strcmp(argv[1], "quota"))
		return quota(argv[2], atoi(argv[3]));
	if (argc != 5) {
		fprintf(stderr, "usage: vhca_dm DEV_A GID_A DEV_B GID_B\n"
			"       vhca_dm quota DEV N\n");
		return 2;
	}
	return two_ports(argv);
}
