// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_odp: on-demand paging (IBV_ACCESS_ON_DEMAND MRs) with memory that is
 * not resident when an operation starts.
 *
 *   vhca_odp DEV_A GID_A DEV_B GID_B
 *
 * An RC QP of DEV_A, connected to one of DEV_B, both with ODP MRs only:
 * SEND, RDMA WRITE, RDMA READ, FETCH_AND_ADD and CMP_AND_SWP move data
 * between memory freshly mapped and never touched (mincore() shows no
 * page of it resident before the operation) and shared memory whose
 * pages the process dropped with MADV_DONTNEED (its contents stay in the
 * memfd; the device must fault them in again); every byte is checked,
 * and those around the target too.  A READ of anonymous memory the
 * device had mapped, after MADV_DONTNEED, returns zeros, not the old
 * pages, and a SEND lands in such memory.  ibv_advise_mr's prefetch makes
 * a range resident, before it returns with FLUSH, later without; both
 * refuse a bad SGE alike.  Then munmap races READs and WRITEs in
 * flight: every READ that completes successfully brings the right bytes,
 * and once the range is gone they complete with a remote access error,
 * none with success.  Then, with swap on (a skip without), pages the
 * device had mapped and MADV_PAGEOUT then wrote to swap and freed: READ,
 * WRITE, FETCH_AND_ADD and SEND through them, the bytes around each
 * target back from swap unchanged.  A WRITE and a READ across two 2 MiB
 * huge pages (a skip without any in the pool).  Then the same as above
 * with an implicit ODP MR of each port
 * (address 0, length SIZE_MAX: the whole address space), whose keys reach
 * memory mapped after the registration: SEND, WRITE, READ and atomics
 * into untouched memory, a WRITE and a READ across 4 GiB of the address
 * space (two chunks of the MR), prefetches, and munmap racing READs and
 * WRITEs.  Last, MRs deregistered (and their memory unmapped) right
 * after an asynchronous prefetch of 64 MiB, and a flood of them.
 * Registration refusals first: ODP with MW_BIND, implicit ODP at
 * an iova other than 0.  A device without ODP skips it all.
 *
 * The GIDs are indices of RoCE v2 GIDs of port 1.  KTAP results; the exit
 * status counts the failures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "vhca_test.h"

#define PORT		1
#define LEN		(256 * 1024)
#define MSG		(64 * 1024 + 300)	/* many packets, pages */
#define OFF		4196			/* not page-aligned */
#define WAIT_MS		60000
#define RACE_LEN	4096
#define RACE_DEPTH	4
#define RACE_BEFORE	64	/* completions before the munmap */
#define RACE_MAX	100000
#define HUGE_PAGE	(2UL << 20)
#define PREFETCH_MS	10000
#define PF_LEN		(64UL << 20)	/* prefetched while deregistered */
#define PF_ROUNDS	8
#define PF_FLOOD	200	/* more than a device keeps in flight */
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif

static const int odp_access = IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			      IBV_ACCESS_REMOTE_ATOMIC;

struct port {
	struct ibv_context *ctx;
	struct ibv_device_attr_ex dev;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_port_attr attr;
	union ibv_gid gid;
	int gid_index;
};

/* An ODP MR over memory of its own: anonymous, or a memfd's (shared). */
struct region {
	uint8_t *buf;
	size_t len;
	struct ibv_mr *mr;
};

static long page_size;

static int port_open(struct port *p, const char *name, const char *gid)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	p->gid_index = atoi(gid);
	p->ctx = open_port(name, PORT, p->gid_index, &p->attr, &p->gid);
	if (!p->ctx || ibv_query_device_ex(p->ctx, NULL, &p->dev))
		return -1;
	p->pd = ibv_alloc_pd(p->ctx);
	p->cq = p->pd ? ibv_create_cq(p->ctx, 64, NULL, NULL, 0) : NULL;
	if (!p->cq)
		return -1;
	ia.send_cq = p->cq;
	ia.recv_cq = p->cq;
	p->qp = ibv_create_qp(p->pd, &ia);
	return p->qp ? 0 : -1;
}

/* from's QP to RTS towards to's, from RESET: also after an error. */
static int qp_connect(struct port *from, const struct port *to)
{
	const struct qp_path path = {
		.port = PORT, .sgid_index = from->gid_index, .dgid = to->gid,
		.mtu = from->attr.active_mtu, .dqpn = to->qp->qp_num,
		.rq_psn = 0x40, .sq_psn = 0x40,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.rd_atomic = RACE_DEPTH, .timeout = 14, .retry_cnt = 7,
		.rnr_retry = 7,
	};

	errno = qp_rts(from->qp, &path);
	return errno ? -1 : 0;
}

/* Pages of [buf, buf + len) resident in the process (mincore()). */
static size_t resident(const uint8_t *buf, size_t len)
{
	size_t n = (len + page_size - 1) / page_size, i, k = 0;
	unsigned char *vec = calloc(n, 1);

	if (!vec || mincore((void *)buf, len, vec)) {
		free(vec);
		return SIZE_MAX;
	}
	for (i = 0; i < n; i++)
		k += vec[i] & 1;
	free(vec);
	return k;
}

/*
 * Pages of [buf, buf + len) resident once all are, or after PREFETCH_MS:
 * an asynchronous prefetch is waited for, not timed.
 */
static size_t resident_eventually(const uint8_t *buf, size_t len)
{
	double end = now_ms() + PREFETCH_MS;
	size_t k;

	while ((k = resident(buf, len)) != len / page_size && now_ms() < end)
		usleep(10000);
	return k;
}

/*
 * An asynchronous PREFETCH_WRITE (no FLUSH) of sge's LEN bytes: it
 * returns 0, and every page is resident within PREFETCH_MS.
 */
static void prefetch_later(struct ibv_pd *pd, struct ibv_sge *sge,
			   const char *what)
{
	const uint8_t *buf = (const uint8_t *)(uintptr_t)sge->addr;
	int err = ibv_advise_mr(pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, 0,
				sge, 1);
	size_t k = err ? 0 : resident_eventually(buf, LEN);

	result(!err && k == (size_t)(LEN / page_size), what,
	       "%d, %zu pages resident after %d ms", err, k, PREFETCH_MS);
}

/* LEN bytes freshly mapped: anonymous, or a memfd's (shared); NULL. */
static uint8_t *map_new(bool shared)
{
	uint8_t *buf;
	int fd = -1;

	if (shared) {
		fd = memfd_create("vhca_odp", 0);
		if (fd < 0 || ftruncate(fd, LEN)) {
			if (fd >= 0)
				close(fd);
			return NULL;
		}
	}
	buf = mmap(NULL, LEN, PROT_READ | PROT_WRITE,
		   shared ? MAP_SHARED : MAP_PRIVATE | MAP_ANONYMOUS, fd, 0);
	if (fd >= 0)
		close(fd);
	return buf == MAP_FAILED ? NULL : buf;
}

static int region_new(struct port *p, struct region *r, bool shared)
{
	r->len = LEN;
	r->buf = map_new(shared);
	if (!r->buf)
		return -1;
	r->mr = ibv_reg_mr(p->pd, r->buf, LEN, odp_access);
	return r->mr ? 0 : -1;
}

static void region_free(struct region *r)
{
	ibv_dereg_mr(r->mr);
	munmap(r->buf, r->len);
}

static void fill(uint8_t *p, size_t len, uint8_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 7 + seed + (i >> 12));
}

/* Written by the CPU, then its pages dropped: in the memfd only. */
static void fill_dropped(struct region *r, uint8_t seed)
{
	fill(r->buf, r->len, seed);
	madvise(r->buf, r->len, MADV_DONTNEED);
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

static int post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id,
		const void *laddr, uint32_t len, uint32_t lkey, uint64_t raddr,
		uint32_t rkey, uint64_t cmp_add, uint64_t swap)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)laddr, .length = len, .lkey = lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	    op == IBV_WR_ATOMIC_CMP_AND_SWP)
		wr.wr.atomic = (typeof(wr.wr.atomic)){ raddr, cmp_add, swap,
						       rkey };
	else
		wr.wr.rdma = (typeof(wr.wr.rdma)){ raddr, rkey };
	return ibv_post_send(qp, &wr, &bad);
}

static int post_recv(struct ibv_qp *qp, const void *addr, uint32_t len,
		     uint32_t lkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)addr, .length = len, .lkey = lkey,
	};
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* dst's LEN bytes hold src's MSG bytes at off and zeros around them. */
static void landed_at(const uint8_t *dst, const uint8_t *src, size_t off,
		      const char *what)
{
	size_t i;

	for (i = 0; i < LEN; i++) {
		uint8_t want = i >= off && i < off + MSG ? src[i - off] : 0;

		if (dst[i] != want)
			break;
	}
	result(i == LEN, what, "byte %zu: %#x, expected %#x", i,
	       i < LEN ? dst[i] : 0,
	       i < LEN ? (i >= off && i < off + MSG ? src[i - off] : 0) : 0);
}

static void landed(const uint8_t *dst, const uint8_t *src, const char *what)
{
	landed_at(dst, src, OFF, what);
}

static void not_resident(const struct region *r, const char *what)
{
	size_t k = resident(r->buf, r->len);

	result(k == 0, what, "%zu pages resident", k);
}

static void caps(const struct port *p)
{
	const struct ibv_odp_caps *c = &p->dev.odp_caps;
	uint32_t rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		      IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		      IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;

	result((c->general_caps & IBV_ODP_SUPPORT) &&
	       (c->general_caps & IBV_ODP_SUPPORT_IMPLICIT) &&
	       (c->per_transport_caps.rc_odp_caps & rc) == rc &&
	       (c->per_transport_caps.ud_odp_caps & IBV_ODP_SUPPORT_SEND),
	       "odp_caps: explicit and implicit ODP, RC's operations, UD's sends",
	       "general %#llx, rc %#x, ud %#x",
	       (unsigned long long)c->general_caps,
	       c->per_transport_caps.rc_odp_caps,
	       c->per_transport_caps.ud_odp_caps);
}

static void refusals(struct port *p)
{
	static uint8_t buf[8192];
	struct ibv_mr *mr;

	mr = ibv_reg_mr(p->pd, buf, sizeof(buf),
			IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_MW_BIND);
	result(!mr, "reg_mr with ON_DEMAND and MW_BIND is refused",
	       "%p", (void *)mr);
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_mr_iova(p->pd, NULL, SIZE_MAX, 1UL << 20,
			     IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE);
	result(!mr, "implicit ODP at an iova other than 0 is refused",
	       "%p", (void *)mr);
	if (mr)
		ibv_dereg_mr(mr);
}

/*
 * advise_mr refuses bad SGEs alike with FLUSH and without: an lkey of no
 * MR (ENOENT), a range past the MR's end or wrapping (EINVAL), another
 * PD (EACCES).
 */
static void advise_errors(struct port *a, const struct region *r)
{
	static const struct {
		const char *what;
		int err;
	} bad[] = {
		{ "a stale lkey", ENOENT },
		{ "a range past the MR's end", EINVAL },
		{ "a range that wraps", EINVAL },
		{ "another PD", EACCES },
	};
	struct ibv_pd *other = ibv_alloc_pd(a->ctx);
	uint32_t flags, i;
	char name[96];
	struct ibv_sge sge;
	int err;

	if (!other) {
		result(false, "advise_mr refusals: a second PD", "errno %d",
		       errno);
		return;
	}
	for (flags = 0; flags <= IBV_ADVISE_MR_FLAG_FLUSH;
	     flags += IBV_ADVISE_MR_FLAG_FLUSH) {
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			sge = (struct ibv_sge){
				.addr = (uintptr_t)r->buf, .length = LEN,
				.lkey = r->mr->lkey,
			};
			if (i == 0)
				sge.lkey ^= 0x80;
			else if (i == 1)
				sge.addr += page_size;
			else if (i == 2)
				sge.addr = UINT64_MAX - page_size;
			err = ibv_advise_mr(i == 3 ? other : a->pd,
					    IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
					    flags, &sge, 1);
			snprintf(name, sizeof(name),
				 "advise_mr%s refuses %s (errno %d)",
				 flags ? ", FLUSH," : " without FLUSH",
				 bad[i].what, bad[i].err);
			result(err == bad[i].err, name, "%d", err);
		}
	}
	ibv_dealloc_pd(other);
}

static void traffic(struct port *a, struct port *b)
{
	struct region as, aa, ba, bb, bs, bw, ap;
	uint64_t *word, *orig;
	struct ibv_sge sge;
	size_t k;
	int err;

	if (region_new(a, &as, true) || region_new(a, &aa, false) ||
	    region_new(b, &ba, false) || region_new(b, &bb, false) ||
	    region_new(b, &bs, true) || region_new(b, &bw, false) ||
	    region_new(a, &ap, false)) {
		result(false, "ODP MRs over fresh mappings", "errno %d", errno);
		return;
	}
	result(true, "ODP MRs over fresh mappings", "%s", "");

	/* SEND: from dropped shared pages into untouched anonymous ones. */
	fill_dropped(&as, 1);
	not_resident(&ba, "the receive buffer is not resident before the SEND");
	if (post_recv(b->qp, ba.buf + OFF, MSG, ba.mr->lkey) ||
	    post(a->qp, IBV_WR_SEND, 1, as.buf, MSG, as.mr->lkey, 0, 0, 0, 0) ||
	    !completes(a, IBV_WC_SEND, IBV_WC_SUCCESS, "SEND") ||
	    !completes(b, IBV_WC_RECV, IBV_WC_SUCCESS, "RECV"))
		return;
	landed(ba.buf, as.buf, "SEND: every byte lands, nothing around it");

	/* WRITE: from the shared pages dropped again, untouched target. */
	fill_dropped(&as, 2);
	not_resident(&bb, "the WRITE's target is not resident before it");
	if (post(a->qp, IBV_WR_RDMA_WRITE, 2, as.buf, MSG, as.mr->lkey,
		 (uintptr_t)bb.buf + OFF, bb.mr->rkey, 0, 0) ||
	    !completes(a, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS, "RDMA WRITE"))
		return;
	landed(bb.buf, as.buf, "RDMA WRITE: every byte lands, nothing around it");

	/* READ: from dropped shared pages into untouched anonymous ones. */
	fill_dropped(&bs, 3);
	not_resident(&aa, "the READ's local buffer is not resident before it");
	if (post(a->qp, IBV_WR_RDMA_READ, 3, aa.buf + OFF, MSG, aa.mr->lkey,
		 (uintptr_t)bs.buf, bs.mr->rkey, 0, 0) ||
	    !completes(a, IBV_WC_RDMA_READ, IBV_WC_SUCCESS, "RDMA READ"))
		return;
	landed(aa.buf, bs.buf, "RDMA READ: every byte lands, nothing around it");

	/* The WRITE's target dropped: a READ of it sees zero-fill pages. */
	madvise(bb.buf, LEN, MADV_DONTNEED);
	memset(aa.buf, 0xa5, LEN);
	if (post(a->qp, IBV_WR_RDMA_READ, 4, aa.buf, LEN, aa.mr->lkey,
		 (uintptr_t)bb.buf, bb.mr->rkey, 0, 0) ||
	    !completes(a, IBV_WC_RDMA_READ, IBV_WC_SUCCESS,
		       "RDMA READ after MADV_DONTNEED"))
		return;
	for (k = 0; k < LEN && !aa.buf[k]; k++)
		;
	result(k == LEN,
	       "READ after MADV_DONTNEED returns the new zero pages, not the old",
	       "byte %zu is %#x", k, k < LEN ? aa.buf[k] : 0);

	/* A SEND into the receive buffer after it was dropped. */
	madvise(ba.buf, LEN, MADV_DONTNEED);
	fill_dropped(&as, 5);
	if (post_recv(b->qp, ba.buf + OFF, MSG, ba.mr->lkey) ||
	    post(a->qp, IBV_WR_SEND, 5, as.buf, MSG, as.mr->lkey, 0, 0, 0, 0) ||
	    !completes(a, IBV_WC_SEND, IBV_WC_SUCCESS, "SEND again") ||
	    !completes(b, IBV_WC_RECV, IBV_WC_SUCCESS, "RECV again"))
		return;
	landed(ba.buf, as.buf,
	       "SEND into dropped pages: every byte lands, nothing around it");

	/* Atomics on an untouched word, their results to an untouched page. */
	not_resident(&bw, "the atomics' target is not resident before them");
	word = (uint64_t *)(bw.buf + 3 * page_size + 8);
	orig = (uint64_t *)(ap.buf + 5 * page_size);
	if (post(a->qp, IBV_WR_ATOMIC_FETCH_AND_ADD, 6, orig, 8, ap.mr->lkey,
		 (uintptr_t)word, bw.mr->rkey, 5, 0) ||
	    !completes(a, IBV_WC_FETCH_ADD, IBV_WC_SUCCESS, "FETCH_AND_ADD"))
		return;
	result(*orig == 0 && *word == 5,
	       "FETCH_AND_ADD on a fresh word: 0 found, 5 left",
	       "found %llu, left %llu", (unsigned long long)*orig,
	       (unsigned long long)*word);
	madvise(ap.buf, LEN, MADV_DONTNEED);
	orig = (uint64_t *)(ap.buf + 6 * page_size + 16);
	if (post(a->qp, IBV_WR_ATOMIC_CMP_AND_SWP, 7, orig, 8, ap.mr->lkey,
		 (uintptr_t)word, bw.mr->rkey, 5, 9) ||
	    !completes(a, IBV_WC_COMP_SWAP, IBV_WC_SUCCESS, "CMP_AND_SWP"))
		return;
	result(*orig == 5 && *word == 9,
	       "CMP_AND_SWP into dropped pages: 5 found, 9 swapped in",
	       "found %llu, left %llu", (unsigned long long)*orig,
	       (unsigned long long)*word);

	/* A synchronous prefetch for writing makes the range resident. */
	madvise(ap.buf, LEN, MADV_DONTNEED);
	sge = (struct ibv_sge){
		.addr = (uintptr_t)ap.buf, .length = LEN, .lkey = ap.mr->lkey,
	};
	err = ibv_advise_mr(a->pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
	k = resident(ap.buf, LEN);
	result(!err && k == (size_t)(LEN / page_size),
	       "advise_mr PREFETCH_WRITE, FLUSH: every page resident",
	       "%d, %zu pages resident", err, k);

	/* Without FLUSH: it returns, and the pages come in afterwards. */
	madvise(ap.buf, LEN, MADV_DONTNEED);
	k = resident(ap.buf, LEN);
	result(k == 0, "the prefetch's range is dropped again",
	       "%zu pages resident", k);
	prefetch_later(a->pd, &sge,
		       "advise_mr PREFETCH_WRITE without FLUSH: every page resident later");
	err = ibv_advise_mr(a->pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sge, 1);
	result(!err, "advise_mr PREFETCH without FLUSH", "%d", err);
	advise_errors(a, &ap);
}

/* Completions of cq until none comes for a while (after an error). */
static void drain(struct port *p)
{
	struct ibv_wc wc;

	while (poll1(p->cq, &wc, 200) == 1)
		;
}

/*
 * munmap of b's region while READs (read) or WRITEs of it from a are in
 * flight, RACE_DEPTH at a time, after RACE_BEFORE completions.  Each
 * READ that succeeds brought the region's bytes; after the munmap, the
 * first error is a remote access error, and no operation posted after
 * the munmap succeeds.  With implicit MRs (ia of a's PD, ib of b's), their
 * keys; else an ODP MR of each side's own.
 */
static void race(struct port *a, struct port *b, bool read,
		 struct ibv_mr *ia, struct ibv_mr *ib)
{
	const char *op = read ? (ia ? "READ, implicit" : "READ") :
			 (ia ? "WRITE, implicit" : "WRITE");
	static uint8_t slots[RACE_DEPTH][RACE_LEN];
	uint64_t posted = 0, done = 0, unmapped_at = 0, bad_data = 0;
	uint64_t late_ok = 0;
	enum ibv_wc_status first_err = IBV_WC_SUCCESS;
	struct ibv_mr *lmr;
	struct region r = { .len = LEN };
	struct ibv_wc wc;
	bool unmapped = false;
	int k;

	drain(a);
	drain(b);
	if (ib) {
		r.buf = map_new(false);
		r.mr = ib;
	}
	if (qp_connect(a, b) || qp_connect(b, a) ||
	    (ib ? !r.buf : region_new(b, &r, false))) {
		result(false, "a fresh connection and region", "errno %d",
		       errno);
		return;
	}
	fill(r.buf, LEN, 9);
	lmr = ia ? ia : ibv_reg_mr(a->pd, slots, sizeof(slots), odp_access);
	if (!lmr) {
		result(false, "the local slots' MR", "errno %d", errno);
		return;
	}
	while (done < RACE_MAX) {
		while (posted - done < RACE_DEPTH && first_err == IBV_WC_SUCCESS) {
			uint64_t off = (posted * RACE_LEN) % LEN;

			if (post(a->qp, read ? IBV_WR_RDMA_READ :
				 IBV_WR_RDMA_WRITE, posted,
				 slots[posted % RACE_DEPTH], RACE_LEN,
				 lmr->lkey, (uintptr_t)r.buf + off, r.mr->rkey,
				 0, 0))
				break;
			posted++;
		}
		if (posted == done)
			break;
		k = poll1(a->cq, &wc, WAIT_MS);
		if (k != 1)
			break;
		done++;
		if (wc.status == IBV_WC_SUCCESS) {
			if (unmapped && wc.wr_id >= unmapped_at)
				late_ok++;
			if (read) {
				uint64_t off = (wc.wr_id * RACE_LEN) % LEN;
				size_t i;

				for (i = 0; i < RACE_LEN; i++)
					if (slots[wc.wr_id % RACE_DEPTH][i] !=
					    (uint8_t)((off + i) * 7 + 9 +
						      ((off + i) >> 12)))
						break;
				bad_data += i != RACE_LEN;
			}
		} else if (first_err == IBV_WC_SUCCESS) {
			first_err = wc.status;
		}
		if (!unmapped && done == RACE_BEFORE) {
			munmap(r.buf, LEN);
			unmapped = true;
			unmapped_at = posted;
		}
	}
	result(unmapped && posted == done,
	       "munmap racing: every operation posted completes",
	       "%llu posted, %llu completed", (unsigned long long)posted,
	       (unsigned long long)done);
	result(!bad_data, "munmap racing READs: no READ succeeds with wrong bytes",
	       "%llu did", (unsigned long long)bad_data);
	result(first_err == IBV_WC_REM_ACCESS_ERR,
	       "munmap racing: operations fail with a remote access error",
	       "first error %s (%s)", ibv_wc_status_str(first_err), op);
	result(!late_ok,
	       "munmap racing: no operation posted after the munmap succeeds",
	       "%llu did (%s)", (unsigned long long)late_ok, op);
	if (!ia) {
		ibv_dereg_mr(r.mr);
		ibv_dereg_mr(lmr);
	}
}

/*
 * Swap active in /proc/swaps: some line below its header.  The guest
 * script turns a zram device on before this runs, and checks it did.
 */
static bool swap_on(void)
{
	char line[256];
	FILE *f = fopen("/proc/swaps", "r");
	int n = 0;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n > 1;
}

/*
 * r's pages written to swap and reclaimed (MADV_PAGEOUT): none resident.
 * A page still in a CPU's batch of pages bound for the LRU cannot be
 * taken off the LRU, and madvise drains only its own CPU's: one call on
 * each CPU the process may run on, the device's faults (work items) and
 * this process's having come on any of them.
 */
static void page_out(const struct region *r, const char *what)
{
	cpu_set_t all, one;
	size_t k;
	int cpu, err = 0;

	if (sched_getaffinity(0, sizeof(all), &all))
		CPU_ZERO(&all);
	for (cpu = 0; cpu < CPU_SETSIZE && !err; cpu++) {
		if (!CPU_ISSET(cpu, &all))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (!sched_setaffinity(0, sizeof(one), &one))
			err = madvise(r->buf, r->len, MADV_PAGEOUT);
	}
	if (!err)
		err = madvise(r->buf, r->len, MADV_PAGEOUT);
	if (CPU_COUNT(&all))
		sched_setaffinity(0, sizeof(all), &all);
	if (err) {
		result(false, what, "madvise: errno %d", errno);
		return;
	}
	k = resident(r->buf, r->len);
	result(k == 0, what, "%zu pages resident", k);
}

/* got's first len bytes are want's. */
static void same(const uint8_t *got, const uint8_t *want, size_t len,
		 const char *what)
{
	size_t i;

	for (i = 0; i < len && got[i] == want[i]; i++)
		;
	result(i == len, what, "byte %zu: %#x, expected %#x", i,
	       i < len ? got[i] : 0, i < len ? want[i] : 0);
}

/* want: LEN bytes of pattern bg, with MSG bytes of pattern msg at OFF. */
static void expect(uint8_t *want, uint8_t bg, uint8_t msg)
{
	fill(want, LEN, bg);
	fill(want + OFF, MSG, msg);
}

/*
 * Swapped-out pages: the ODP MRs pin nothing, so MADV_PAGEOUT writes
 * their anonymous pages to swap and frees them, after the device mapped
 * every one.  A READ from swapped-out pages into swapped-out pages, a
 * WRITE into swapped-out pages (the bytes around it come back from swap
 * unchanged), a FETCH_AND_ADD on a swapped-out word with its result
 * swapped out, and a SEND from and into swapped-out pages.
 */
static void swapped(struct port *a, struct port *b)
{
	static uint8_t want[LEN];
	struct region la, lb, src;
	uint64_t *word, *orig;

	if (!swap_on()) {
		ktap_skip("swapped-out pages", "no swap in /proc/swaps");
		return;
	}
	drain(a);
	drain(b);
	if (qp_connect(a, b) || qp_connect(b, a) ||
	    region_new(a, &la, false) || region_new(b, &lb, false) ||
	    region_new(a, &src, false)) {
		result(false, "swap: a fresh connection and ODP MRs",
		       "errno %d", errno);
		return;
	}
	fill(lb.buf, LEN, 21);
	if (post(a->qp, IBV_WR_RDMA_READ, 20, la.buf, LEN, la.mr->lkey,
		 (uintptr_t)lb.buf, lb.mr->rkey, 0, 0) ||
	    !completes(a, IBV_WC_RDMA_READ, IBV_WC_SUCCESS,
		       "swap: a READ of every page maps them all first"))
		return;

	memset(la.buf, 0x5a, LEN);
	page_out(&lb, "the READ's source swapped out, its MR mapped");
	page_out(&la, "the READ's local buffer swapped out");
	if (post(a->qp, IBV_WR_RDMA_READ, 21, la.buf + OFF, MSG, la.mr->lkey,
		 (uintptr_t)lb.buf, lb.mr->rkey, 0, 0) ||
	    !completes(a, IBV_WC_RDMA_READ, IBV_WC_SUCCESS,
		       "RDMA READ of swapped-out pages"))
		return;
	memset(want, 0x5a, LEN);
	fill(want + OFF, MSG, 21);
	same(la.buf, want, LEN,
	     "RDMA READ of swapped-out pages into swapped-out ones: every byte");

	fill(src.buf, LEN, 22);
	page_out(&src, "the WRITE's source swapped out");
	page_out(&lb, "the WRITE's target swapped out");
	if (post(a->qp, IBV_WR_RDMA_WRITE, 22, src.buf, MSG, src.mr->lkey,
		 (uintptr_t)lb.buf + OFF, lb.mr->rkey, 0, 0) ||
	    !completes(a, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS,
		       "RDMA WRITE into swapped-out pages"))
		return;
	expect(want, 21, 22);
	same(lb.buf, want, LEN,
	     "RDMA WRITE into swapped-out pages: every byte, the rest from swap");

	word = (uint64_t *)(lb.buf + 2 * page_size + 24);
	orig = (uint64_t *)(la.buf + 7 * page_size + 8);
	*word = 1000;
	*orig = 0;
	page_out(&lb, "the atomic's target swapped out");
	page_out(&la, "the atomic's result buffer swapped out");
	if (post(a->qp, IBV_WR_ATOMIC_FETCH_AND_ADD, 23, orig, 8, la.mr->lkey,
		 (uintptr_t)word, lb.mr->rkey, 7, 0) ||
	    !completes(a, IBV_WC_FETCH_ADD, IBV_WC_SUCCESS,
		       "FETCH_AND_ADD on a swapped-out word"))
		return;
	result(*orig == 1000 && *word == 1007,
	       "FETCH_AND_ADD on a swapped-out word: 1000 found, 1007 left",
	       "found %llu, left %llu", (unsigned long long)*orig,
	       (unsigned long long)*word);

	fill(src.buf, LEN, 24);
	fill(lb.buf, LEN, 25);
	page_out(&src, "the SEND's source swapped out");
	page_out(&lb, "the receive buffer swapped out");
	if (post_recv(b->qp, lb.buf + OFF, MSG, lb.mr->lkey) ||
	    post(a->qp, IBV_WR_SEND, 24, src.buf, MSG, src.mr->lkey, 0, 0, 0,
		 0) ||
	    !completes(a, IBV_WC_SEND, IBV_WC_SUCCESS,
		       "SEND of swapped-out pages") ||
	    !completes(b, IBV_WC_RECV, IBV_WC_SUCCESS,
		       "RECV into swapped-out pages"))
		return;
	expect(want, 25, 24);
	same(lb.buf, want, LEN,
	     "SEND into swapped-out pages: every byte, the rest from swap");
	region_free(&la);
	region_free(&lb);
	region_free(&src);
}

/*
 * Huge pages: an ODP MR of b over two 2 MiB pages of hugetlbfs (the
 * guest script reserves them), untouched.  A WRITE across the boundary
 * of the two pages, then a READ of it back, every byte checked.
 */
static void huge(struct port *a, struct port *b)
{
	static uint8_t want[LEN];
	size_t off = HUGE_PAGE - LEN / 2, k;
	struct region l, src;
	struct ibv_mr *mr;
	uint8_t *h;

	drain(a);
	drain(b);
	h = mmap(NULL, 2 * HUGE_PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (h == MAP_FAILED) {
		ktap_skip("huge pages", "no 2 MiB pages to map");
		return;
	}
	mr = ibv_reg_mr(b->pd, h, 2 * HUGE_PAGE, odp_access);
	if (qp_connect(a, b) || qp_connect(b, a) || !mr ||
	    region_new(a, &l, false) || region_new(a, &src, false)) {
		result(false, "huge pages: a fresh connection and ODP MRs",
		       "errno %d", errno);
		return;
	}
	k = resident(h, 2 * HUGE_PAGE);
	result(k == 0, "the huge pages are not resident before the WRITE",
	       "%zu pages resident", k);
	fill(src.buf, LEN, 31);
	if (post(a->qp, IBV_WR_RDMA_WRITE, 31, src.buf, LEN, src.mr->lkey,
		 (uintptr_t)h + off, mr->rkey, 0, 0) ||
	    !completes(a, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS,
		       "RDMA WRITE across two huge pages"))
		return;
	memset(want, 0, LEN);
	same(h + off - LEN, want, LEN, "nothing lands before the WRITE");
	same(h + off, src.buf, LEN,
	     "RDMA WRITE across two huge pages: every byte");
	same(h + off + LEN, want, LEN, "nothing lands after it");
	if (post(a->qp, IBV_WR_RDMA_READ, 32, l.buf, LEN, l.mr->lkey,
		 (uintptr_t)h + off, mr->rkey, 0, 0) ||
	    !completes(a, IBV_WC_RDMA_READ, IBV_WC_SUCCESS,
		       "RDMA READ across two huge pages"))
		return;
	same(l.buf, src.buf, LEN, "RDMA READ across two huge pages: every byte");
	ibv_dereg_mr(mr);
	munmap(h, 2 * HUGE_PAGE);
	region_free(&l);
	region_free(&src);
}

/* LEN bytes mapped at addr itself, replacing nothing; NULL if not. */
static uint8_t *map_at(uintptr_t addr)
{
	void *p = mmap((void *)addr, LEN, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (p != (void *)addr) {
		munmap(p, LEN);
		return NULL;
	}
	return p;
}

/* Written by the CPU, then its pages dropped (a memfd's: kept there). */
static void fill_drop(uint8_t *buf, uint8_t seed)
{
	fill(buf, LEN, seed);
	madvise(buf, LEN, MADV_DONTNEED);
}

static void untouched(const uint8_t *buf, const char *what)
{
	size_t k = resident(buf, LEN);

	result(k == 0, what, "%zu pages resident", k);
}

enum { I_SRC, I_SHARED, I_RECV, I_WRITE, I_READ, I_WORDS, I_RES, I_PF,
       I_CROSS, I_N };

/*
 * Implicit ODP: an MR over the address space on each port (ia, ib),
 * registered before the memory its keys then reach is mapped: a's
 * local SGEs through ia's lkey, b's memory through ib's keys.  The
 * mapping at I_CROSS straddles 4 GiB (or the next power of two that is
 * free), so that its WRITE and READ span two chunks of the MR.
 */
static void implicit_odp(struct port *a, struct port *b)
{
	static const bool shared[I_N] = { [I_SRC] = true, [I_SHARED] = true };
	size_t cross_off = LEN / 2 - MSG / 2, k;
	struct ibv_mr *ia = NULL, *ib = NULL;
	uint8_t *m[I_N] = { NULL };
	uint64_t *word, *orig;
	struct ibv_sge sge;
	uintptr_t at;
	int i, err;

	drain(a);
	drain(b);
	if (qp_connect(a, b) || qp_connect(b, a)) {
		result(false, "implicit: a fresh connection", "errno %d",
		       errno);
		return;
	}
	ia = ibv_reg_mr(a->pd, NULL, SIZE_MAX, odp_access);
	ib = ia ? ibv_reg_mr(b->pd, NULL, SIZE_MAX, odp_access) : NULL;
	result(ia && ib, "implicit ODP MRs (address 0, SIZE_MAX) on both ports",
	       "errno %d", errno);
	if (!ia || !ib)
		goto out;
	for (i = 0; i < I_CROSS; i++)
		m[i] = map_new(shared[i]);
	for (at = 1UL << 32; at <= 1UL << 40 && !m[I_CROSS]; at <<= 1)
		m[I_CROSS] = map_at(at - LEN / 2);
	for (i = 0; i < I_N && m[i]; i++)
		;
	result(i == I_N, "implicit: fresh mappings, one across 4 GiB or above",
	       "mapping %d: errno %d", i, errno);
	if (i < I_N)
		goto out;

	/* SEND: a's dropped shared pages into b's untouched ones. */
	fill_drop(m[I_SRC], 21);
	untouched(m[I_RECV], "implicit: the receive buffer is not resident");
	if (post_recv(b->qp, m[I_RECV] + OFF, MSG, ib->lkey) ||
	    post(a->qp, IBV_WR_SEND, 21, m[I_SRC], MSG, ia->lkey, 0, 0, 0, 0) ||
	    !completes(a, IBV_WC_SEND, IBV_WC_SUCCESS, "implicit: SEND") ||
	    !completes(b, IBV_WC_RECV, IBV_WC_SUCCESS, "implicit: RECV"))
		goto out;
	landed(m[I_RECV], m[I_SRC],
	       "implicit: SEND lands, every byte, nothing around it");

	/* WRITE: the source dropped again, an untouched target. */
	fill_drop(m[I_SRC], 22);
	untouched(m[I_WRITE], "implicit: the WRITE's target is not resident");
	if (post(a->qp, IBV_WR_RDMA_WRITE, 22, m[I_SRC], MSG, ia->lkey,
		 (uintptr_t)m[I_WRITE] + OFF, ib->rkey, 0, 0) ||
	    !completes(a, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS,
		       "implicit: RDMA WRITE"))
		goto out;
	landed(m[I_WRITE], m[I_SRC],
	       "implicit: RDMA WRITE lands, every byte, nothing around it");

	/* READ: from dropped shared pages into untouched ones. */
	fill_drop(m[I_SHARED], 23);
	untouched(m[I_READ], "implicit: the READ's buffer is not resident");
	if (post(a->qp, IBV_WR_RDMA_READ, 23, m[I_READ] + OFF, MSG, ia->lkey,
		 (uintptr_t)m[I_SHARED], ib->rkey, 0, 0) ||
	    !completes(a, IBV_WC_RDMA_READ, IBV_WC_SUCCESS,
		       "implicit: RDMA READ"))
		goto out;
	landed(m[I_READ], m[I_SHARED],
	       "implicit: RDMA READ lands, every byte, nothing around it");

	/* Atomics on an untouched word, their results to an untouched page. */
	untouched(m[I_WORDS], "implicit: the atomics' target is not resident");
	word = (uint64_t *)(m[I_WORDS] + 3 * page_size + 8);
	orig = (uint64_t *)(m[I_RES] + 5 * page_size);
	if (post(a->qp, IBV_WR_ATOMIC_FETCH_AND_ADD, 24, orig, 8, ia->lkey,
		 (uintptr_t)word, ib->rkey, 7, 0) ||
	    !completes(a, IBV_WC_FETCH_ADD, IBV_WC_SUCCESS,
		       "implicit: FETCH_AND_ADD"))
		goto out;
	result(*orig == 0 && *word == 7,
	       "implicit: FETCH_AND_ADD on a fresh word: 0 found, 7 left",
	       "found %llu, left %llu", (unsigned long long)*orig,
	       (unsigned long long)*word);
	orig = (uint64_t *)(m[I_RES] + 6 * page_size + 16);
	if (post(a->qp, IBV_WR_ATOMIC_CMP_AND_SWP, 25, orig, 8, ia->lkey,
		 (uintptr_t)word, ib->rkey, 7, 11) ||
	    !completes(a, IBV_WC_COMP_SWAP, IBV_WC_SUCCESS,
		       "implicit: CMP_AND_SWP"))
		goto out;
	result(*orig == 7 && *word == 11,
	       "implicit: CMP_AND_SWP: 7 found, 11 swapped in",
	       "found %llu, left %llu", (unsigned long long)*orig,
	       (unsigned long long)*word);

	/* Across the boundary: a WRITE into it, a READ whose SGE spans it. */
	fill_drop(m[I_SRC], 26);
	untouched(m[I_CROSS], "implicit: the mapping across 4 GiB is not resident");
	if (post(a->qp, IBV_WR_RDMA_WRITE, 26, m[I_SRC], MSG, ia->lkey,
		 (uintptr_t)m[I_CROSS] + cross_off, ib->rkey, 0, 0) ||
	    !completes(a, IBV_WC_RDMA_WRITE, IBV_WC_SUCCESS,
		       "implicit: RDMA WRITE across 4 GiB"))
		goto out;
	landed_at(m[I_CROSS], m[I_SRC], cross_off,
		  "implicit: WRITE across 4 GiB lands, every byte, nothing around it");
	madvise(m[I_CROSS], LEN, MADV_DONTNEED);
	fill_drop(m[I_SHARED], 27);
	if (post(a->qp, IBV_WR_RDMA_READ, 27, m[I_CROSS] + cross_off, MSG,
		 ia->lkey, (uintptr_t)m[I_SHARED], ib->rkey, 0, 0) ||
	    !completes(a, IBV_WC_RDMA_READ, IBV_WC_SUCCESS,
		       "implicit: RDMA READ into an SGE across 4 GiB"))
		goto out;
	landed_at(m[I_CROSS], m[I_SHARED], cross_off,
		  "implicit: READ across 4 GiB lands, every byte, nothing around it");

	/* A synchronous prefetch of a fresh mapping through ia's lkey. */
	sge = (struct ibv_sge){
		.addr = (uintptr_t)m[I_PF], .length = LEN, .lkey = ia->lkey,
	};
	err = ibv_advise_mr(a->pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
	k = resident(m[I_PF], LEN);
	result(!err && k == (size_t)(LEN / page_size),
	       "implicit: advise_mr PREFETCH_WRITE, FLUSH: every page resident",
	       "%d, %zu pages resident", err, k);
	madvise(m[I_PF], LEN, MADV_DONTNEED);
	prefetch_later(a->pd, &sge,
		       "implicit: advise_mr PREFETCH_WRITE without FLUSH: every page resident later");

	race(a, b, true, ia, ib);
	race(a, b, false, ia, ib);
out:
	for (i = 0; i < I_N; i++)
		if (m[i])
			munmap(m[i], LEN);
	if (ib)
		ibv_dereg_mr(ib);
	if (ia)
		ibv_dereg_mr(ia);
}

/* The device's counter name (port 1's hw_counters), or -1. */
static long long counter(const struct port *p, const char *name)
{
	return hw_counter(ibv_get_device_name(p->ctx->device), PORT, name);
}

/*
 * Asynchronous prefetches of PF_LEN bytes, the MR deregistered right
 * after, the memory unmapped before or after that: dereg_mr waits for the
 * work item, which must not touch the MR once it is freed (on the debug
 * kernel, KASAN reports it if it does).  Explicit and implicit MRs; then
 * PF_FLOOD prefetches of one MR at once, more than the device keeps in
 * flight (the rest dropped: a hint), and its deregistration.  The device
 * still prefetches afterwards.
 */
static void prefetch_dereg(struct port *p)
{
	struct ibv_sge sge = { .length = PF_LEN };
	int r, i, err = 0, derr = 0, n = 0;
	long long drops = counter(p, "odp_prefetch_drops");
	struct ibv_mr *mr;
	struct region pr;
	uint8_t *buf;

	for (r = 0; r < PF_ROUNDS + 1; r++) {
		buf = mmap(NULL, PF_LEN, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf == MAP_FAILED)
			break;
		mr = r & 2 ? ibv_reg_mr(p->pd, NULL, SIZE_MAX, odp_access) :
		     ibv_reg_mr(p->pd, buf, PF_LEN, odp_access);
		if (!mr) {
			munmap(buf, PF_LEN);
			break;
		}
		sge.addr = (uintptr_t)buf;
		sge.lkey = mr->lkey;
		/* The last round floods. */
		for (i = 0; i < (r == PF_ROUNDS ? PF_FLOOD : 1) && !err; i++)
			err = ibv_advise_mr(p->pd,
					    IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
					    0, &sge, 1);
		if (r & 1)
			munmap(buf, PF_LEN);
		derr = ibv_dereg_mr(mr);
		if (!(r & 1))
			munmap(buf, PF_LEN);
		if (err || derr)
			break;
		n++;
	}
	result(n == PF_ROUNDS + 1,
	       "advise_mr without FLUSH of 64 MiB, dereg_mr and munmap at once",
	       "round %d: advise_mr %d, dereg_mr %d, errno %d", n, err, derr,
	       errno);
	ktap_diag("odp_prefetch_drops grew by %lld",
		  counter(p, "odp_prefetch_drops") - drops);

	if (region_new(p, &pr, false)) {
		result(false, "a prefetch after them", "errno %d", errno);
		return;
	}
	sge = (struct ibv_sge){
		.addr = (uintptr_t)pr.buf, .length = LEN, .lkey = pr.mr->lkey,
	};
	prefetch_later(p->pd, &sge,
		       "after them, a prefetch without FLUSH: every page resident later");
	region_free(&pr);
}

int main(int argc, char **argv)
{
	struct port a = { 0 }, b = { 0 };

	ktap_header();
	if (argc != 5) {
		fprintf(stderr, "usage: vhca_odp DEV_A GID_A DEV_B GID_B\n");
		return 2;
	}
	page_size = sysconf(_SC_PAGESIZE);
	if (port_open(&a, argv[1], argv[2]) || port_open(&b, argv[3], argv[4]) ||
	    qp_connect(&a, &b) || qp_connect(&b, &a)) {
		result(false, "two connected RC QPs", "errno %d", errno);
		return exit_status();
	}
	/* A kernel without ODP (CONFIG_INFINIBAND_ON_DEMAND_PAGING) has none. */
	if (!(a.dev.odp_caps.general_caps & IBV_ODP_SUPPORT)) {
		ktap_skip("on-demand paging", "the device advertises none");
		return exit_status();
	}
	caps(&a);
	refusals(&a);
	traffic(&a, &b);
	race(&a, &b, true, NULL, NULL);
	race(&a, &b, false, NULL, NULL);
	swapped(&a, &b);
	huge(&a, &b);
	implicit_odp(&a, &b);
	prefetch_dereg(&a);
	return exit_status();
}
