// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_atomic: RC atomics from several QPs on one counter, every value
 * accounted for.
 *
 *   vhca_atomic DEV_A GID_A DEV_B GID_B [QPS [N]]
 *
 * DEV_A holds a counter in an MR with remote atomic access and QPS RC QPs
 * (default 2); DEV_B as many QPs, each connected to one of them, which
 * post N (default 500) FETCH_AND_ADDs of 1 each, several outstanding per
 * QP and all QPs at once.  The counter starts just below 2^64, so the adds
 * wrap.  If every add executes exactly once and atomically, the values
 * they return are the counter's values base .. base + QPS * N - 1, each
 * exactly once, increasing per QP, and the counter ends at base + QPS * N;
 * a lost add, an add executed twice (a duplicated request executed again)
 * or two adds interleaving shows in one of these checks.  Then a
 * CMP_AND_SWP that does not match (the counter unchanged, its value
 * returned) and one that does; then, where both devices have it, an
 * ATOMIC WRITE (ibv_wr_atomic_write) of the counter, which a FETCH_AND_ADD
 * after it must find.  The GIDs are indices of RoCE v2 GIDs of port 1.
 * KTAP results; the exit status counts the failures.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "vhca_test.h"

#define PORT		1
#define MAX_QPS		8
#define DEPTH		16	/* outstanding atomics per QP */
#define WAIT_MS		120000
/* The kernel's IB_UVERBS_DEVICE_ATOMIC_WRITE; rdma-core 44 has no name. */
#define DEVICE_ATOMIC_WRITE	(1ULL << 40)

struct port {
	struct ibv_context *ctx;
	bool atomic_write;	/* IBV_DEVICE_ATOMIC_WRITE */
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_port_attr attr;
	union ibv_gid gid;
	int gid_index;
	struct ibv_qp *qp[MAX_QPS];
};

static int port_open(struct port *p, const char *name, const char *gid,
		     int nqps)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2 * DEPTH, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
				  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
	};
	struct ibv_device_attr_ex dev;
	int i;

	p->gid_index = atoi(gid);
	p->ctx = open_port(name, PORT, p->gid_index, &p->attr, &p->gid);
	if (!p->ctx || ibv_query_device_ex(p->ctx, NULL, &dev))
		return -1;
	p->atomic_write = dev.device_cap_flags_ex & DEVICE_ATOMIC_WRITE;
	if (p->atomic_write)
		ia.send_ops_flags |= IBV_QP_EX_WITH_ATOMIC_WRITE;
	p->pd = ibv_alloc_pd(p->ctx);
	p->cq = p->pd ? ibv_create_cq(p->ctx, 4 * DEPTH * nqps, NULL, NULL,
				      0) : NULL;
	if (!p->cq)
		return -1;
	ia.send_cq = p->cq;
	ia.recv_cq = p->cq;
	for (i = 0; i < nqps; i++) {
		ia.pd = p->pd;
		p->qp[i] = ibv_create_qp_ex(p->ctx, &ia);
		if (!p->qp[i])
			return -1;
	}
	return 0;
}

/* RESET -> RTS, towards QP dqpn of port to; remote atomics granted. */
static int qp_connect(struct ibv_qp *qp, const struct port *from,
		      const struct port *to, uint32_t dqpn)
{
	const struct qp_path path = {
		.port = PORT, .sgid_index = from->gid_index, .dgid = to->gid,
		.mtu = from->attr.active_mtu, .dqpn = dqpn,
		.rq_psn = 0x10, .sq_psn = 0x10,
		.access = IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_WRITE,
		.rd_atomic = DEPTH, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = 7,
	};

	errno = qp_rts(qp, &path);
	return errno ? -1 : 0;
}

static int post_atomic(struct ibv_qp *qp, enum ibv_wr_opcode op,
		       uint64_t wr_id, uint64_t *result, uint32_t lkey,
		       uint64_t *counter, uint32_t rkey, uint64_t compare_add,
		       uint64_t swap)
{
	struct ibv_sge sge = { .addr = (uintptr_t)result, .length = 8,
			       .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = (uintptr_t)counter, .rkey = rkey,
			       .compare_add = compare_add, .swap = swap },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Every QP keeps DEPTH adds outstanding until each has posted n.  Returns
 * the number of successful FETCH_ADD completions; a failed or unexpected
 * one is reported and ends the run.
 */
static uint64_t fetch_adds(struct port *b, int nqps, uint32_t n,
			   uint64_t *results, uint32_t lkey, uint64_t *counter,
			   uint32_t rkey)
{
	uint32_t posted[MAX_QPS] = { 0 }, done[MAX_QPS] = { 0 };
	double end = now_ms() + WAIT_MS;
	uint64_t total = 0, want = (uint64_t)nqps * n;
	struct ibv_wc wc[16];
	int i, k, q;

	while (total < want) {
		for (q = 0; q < nqps; q++) {
			while (posted[q] < n && posted[q] - done[q] < DEPTH) {
				uint64_t id = (uint64_t)q * n + posted[q];

				if (post_atomic(b->qp[q],
						IBV_WR_ATOMIC_FETCH_AND_ADD,
						id, &results[id], lkey, counter,
						rkey, 1, 0)) {
					result(false, "post FETCH_AND_ADD",
					       "errno %d", errno);
					return total;
				}
				posted[q]++;
			}
		}
		k = ibv_poll_cq(b->cq, 16, wc);
		for (i = 0; i < k; i++) {
			if (wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].opcode != IBV_WC_FETCH_ADD) {
				result(false, "every FETCH_AND_ADD completes",
				       "wr_id %llu: status %s, opcode %d",
				       (unsigned long long)wc[i].wr_id,
				       ibv_wc_status_str(wc[i].status),
				       wc[i].opcode);
				return total;
			}
			done[wc[i].wr_id / n]++;
			total++;
		}
		if (k < 0 || now_ms() > end) {
			result(false, "every FETCH_AND_ADD completes",
			       "%llu of %llu in %d s",
			       (unsigned long long)total,
			       (unsigned long long)want, WAIT_MS / 1000);
			return total;
		}
	}
	return total;
}

/* The one completion of an atomic of opcode, successful. */
static bool one_atomic(struct port *b, enum ibv_wc_opcode opcode,
		       const char *what)
{
	double end = now_ms() + WAIT_MS;
	struct ibv_wc wc;
	int k;

	while (!(k = ibv_poll_cq(b->cq, 1, &wc)) && now_ms() < end)
		;
	if (k != 1 || wc.status != IBV_WC_SUCCESS || wc.opcode != opcode) {
		result(false, what, "%d completions, status %s, opcode %d", k,
		       k == 1 ? ibv_wc_status_str(wc.status) : "-",
		       k == 1 ? (int)wc.opcode : -1);
		return false;
	}
	return true;
}

/*
 * An ATOMIC WRITE of counter[1], then a FETCH_AND_ADD of 0 on the same QP,
 * which must return the value written; the words around it untouched.
 */
static void atomic_write(struct port *b, uint64_t *results, uint64_t i,
			 uint32_t lkey, uint64_t *counter, uint32_t rkey)
{
	const uint64_t value = 0xfedcba9876543210ULL;
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(b->qp[0]);

	ibv_wr_start(qpx);
	qpx->wr_id = 3;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qpx, rkey, (uintptr_t)&counter[1], &value);
	if (ibv_wr_complete(qpx) ||
	    !one_atomic(b, IBV_WC_ATOMIC_WRITE, "ATOMIC WRITE completes")) {
		result(false, "ATOMIC WRITE", "errno %d", errno);
		return;
	}
	result(counter[1] == value, "ATOMIC WRITE: the counter holds the value",
	       "%#llx", (unsigned long long)counter[1]);
	if (post_atomic(b->qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD, 4, &results[i],
			lkey, &counter[1], rkey, 0, 0) ||
	    !one_atomic(b, IBV_WC_FETCH_ADD,
			"FETCH_AND_ADD after the ATOMIC WRITE completes")) {
		result(false, "FETCH_AND_ADD", "errno %d", errno);
		return;
	}
	result(results[i] == value,
	       "FETCH_AND_ADD after the ATOMIC WRITE returns its value",
	       "%#llx", (unsigned long long)results[i]);
	result(counter[0] == 0xa5a5a5a5a5a5a5a5ULL &&
	       counter[2] == 0xa5a5a5a5a5a5a5a5ULL,
	       "ATOMIC WRITE: the words around the counter untouched",
	       "%#llx, %#llx", (unsigned long long)counter[0],
	       (unsigned long long)counter[2]);
}

int main(int argc, char **argv)
{
	int nqps = argc > 5 ? atoi(argv[5]) : 2, q;
	uint32_t n = argc > 6 ? strtoul(argv[6], NULL, 0) : 500, i;
	struct port a = { 0 }, b = { 0 };
	uint64_t *counter, *results, base, want, bad = 0, unordered = 0;
	struct ibv_mr *amr, *bmr;
	uint64_t *sorted;
	char what[128];

	if (argc < 5 || nqps < 1 || nqps > MAX_QPS || !n) {
		fprintf(stderr, "usage: %s DEV_A GID_A DEV_B GID_B [QPS [N]]\n",
			argv[0]);
		return 255;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	ktap_header();
	want = (uint64_t)nqps * n;
	counter = aligned_alloc(4096, 4096);
	results = calloc(want + 1, sizeof(*results));
	sorted = calloc(want, sizeof(*sorted));
	if (!counter || !results || !sorted ||
	    port_open(&a, argv[1], argv[2], nqps) ||
	    port_open(&b, argv[3], argv[4], nqps)) {
		result(false, "set up both ports", "errno %d", errno);
		return exit_status();
	}
	/* The adds wrap past 2^64 halfway. */
	base = UINT64_MAX - want / 2 + 1;
	memset(counter, 0xa5, 4096);
	counter[1] = base;
	amr = ibv_reg_mr(a.pd, counter, 4096, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_WRITE);
	bmr = ibv_reg_mr(b.pd, results, (want + 1) * sizeof(*results),
			 IBV_ACCESS_LOCAL_WRITE);
	result(amr && bmr,
	       "register the counter (remote atomic, write) and results",
	       "errno %d", errno);
	if (!amr || !bmr)
		return exit_status();
	for (q = 0; q < nqps; q++) {
		if (qp_connect(a.qp[q], &a, &b, b.qp[q]->qp_num) ||
		    qp_connect(b.qp[q], &b, &a, a.qp[q]->qp_num)) {
			result(false, "connect the QPs", "QP %d: errno %d", q,
			       errno);
			return exit_status();
		}
	}
	ktap_diag("%d QPs x %u FETCH_AND_ADD of 1 from %#llx", nqps, n,
		  (unsigned long long)base);

	snprintf(what, sizeof(what), "%llu FETCH_AND_ADDs complete",
		 (unsigned long long)want);
	result(fetch_adds(&b, nqps, n, results, bmr->lkey, &counter[1],
			  amr->rkey) == want, what, "not all");
	result(counter[1] == base + want,
	       "the counter ends at base + the number of adds",
	       "%#llx, expected %#llx", (unsigned long long)counter[1],
	       (unsigned long long)(base + want));
	memcpy(sorted, results, want * sizeof(*sorted));
	for (i = 0; i < want; i++)
		sorted[i] -= base;
	qsort(sorted, want, sizeof(*sorted), cmp_u64);
	for (i = 0; i < want; i++)
		bad += sorted[i] != i;
	result(!bad, "each value of the counter returned exactly once",
	       "%llu of %llu out of place", (unsigned long long)bad,
	       (unsigned long long)want);
	for (q = 0; q < nqps; q++)
		for (i = 1; i < n; i++)
			unordered += results[(uint64_t)q * n + i] - base <=
				     results[(uint64_t)q * n + i - 1] - base;
	result(!unordered, "each QP's adds return increasing values",
	       "%llu out of order", (unsigned long long)unordered);
	result(counter[0] == 0xa5a5a5a5a5a5a5a5ULL &&
	       counter[2] == 0xa5a5a5a5a5a5a5a5ULL,
	       "the words around the counter untouched", "%#llx, %#llx",
	       (unsigned long long)counter[0], (unsigned long long)counter[2]);

	/* A compare that fails, then one that matches. */
	if (post_atomic(b.qp[0], IBV_WR_ATOMIC_CMP_AND_SWP, 1, &results[want],
			bmr->lkey, &counter[1], amr->rkey, base, 7) ||
	    !one_atomic(&b, IBV_WC_COMP_SWAP,
			       "CMP_AND_SWP that does not match completes")) {
		result(false, "CMP_AND_SWP", "errno %d", errno);
		return exit_status();
	}
	result(results[want] == base + want && counter[1] == base + want,
	       "CMP_AND_SWP that does not match: the value, no swap",
	       "returned %#llx, counter %#llx",
	       (unsigned long long)results[want],
	       (unsigned long long)counter[1]);
	if (post_atomic(b.qp[1 % nqps], IBV_WR_ATOMIC_CMP_AND_SWP, 2,
			&results[want], bmr->lkey, &counter[1], amr->rkey,
			base + want, 0x0123456789abcdefULL) ||
	    !one_atomic(&b, IBV_WC_COMP_SWAP,
			       "CMP_AND_SWP that matches completes")) {
		result(false, "CMP_AND_SWP", "errno %d", errno);
		return exit_status();
	}
	result(results[want] == base + want &&
	       counter[1] == 0x0123456789abcdefULL,
	       "CMP_AND_SWP that matches: the value, swapped",
	       "returned %#llx, counter %#llx",
	       (unsigned long long)results[want],
	       (unsigned long long)counter[1]);
	if (a.atomic_write && b.atomic_write)
		atomic_write(&b, results, want, bmr->lkey, counter, amr->rkey);
	else
		ktap_skip("ATOMIC WRITE", "a device without it");
	return exit_status();
}
