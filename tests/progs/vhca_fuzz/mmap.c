// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz mmap and hold: mappings of rings and doorbell pages that
 * outlive what they belong to.
 *
 * mmap: rounds of a context on DEV0 with an RC QP connected to itself and
 * RDMA WRITEs in flight; the mappings of its SQ, RQ and CQ ring (or of
 * the context's doorbell and status pages) are kept while the QP is
 * destroyed, then its CQ, or while the context is closed with or without
 * its objects; then every page is read (and written where the mapping is
 * writable), the process forks with them mapped (the child touches them
 * too: vhca's mappings are not inherited, so it must see them unmapped),
 * and they are unmapped.  They are kept by handing the provider anonymous
 * pages of the same size in their place, which it unmaps instead.
 *
 * hold: an RC pair between DEV0 and DEV1 carrying RDMA WRITEs, and the
 * rings of a QP destroyed at the start kept mapped, until either device
 * goes (DEVICE_FATAL: the caller deletes its link or its namespace) or
 * the time is up; then the same touches, fork and unmaps of every ring
 * and page, and the objects destroyed.  A device gone before or during
 * the setup is no failure: the caller races them on purpose.
 *
 * A touch may read or write the page (it stays valid until munmap) or
 * raise SIGBUS; SIGSEGV in the parent (the mapping vanished under it) or
 * any other end of a child is a failure.
 */
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "fuzz.h"

#define MAX_HELD	8

struct held {
	volatile uint8_t *p;
	size_t len;
	bool writable;
};

enum { T_OK, T_BUS, T_SEGV, NT };

struct mmap_fuzz {
	struct held h[MAX_HELD];
	int n;
	uint64_t touch[NT], child_unmapped, child_mapped, child_bad, rounds,
		 by_way[4];
	bool bad;
};

static sigjmp_buf touch_env;

static void touch_fault(int sig)
{
	siglongjmp(touch_env, sig);
}

/* Read (and write) every page of h: T_OK, T_BUS or T_SEGV. */
static int touch(const struct held *h)
{
	volatile size_t off;
	int sig;

	sig = sigsetjmp(touch_env, 1);
	if (sig)
		return sig == SIGBUS ? T_BUS : T_SEGV;
	for (off = 0; off < h->len; off += 4096) {
		uint8_t v = h->p[off];

		if (h->writable)
			h->p[off] = v;
	}
	return T_OK;
}

/*
 * Keep the mapping at *slot of len bytes: the provider gets anonymous
 * pages in its place (and unmaps those).
 */
static bool steal(struct mmap_fuzz *f, void *slot, size_t len, bool writable)
{
	void **pp = slot, *anon;

	if (!*pp || !len || f->n == MAX_HELD)
		return true;
	anon = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED)
		return false;
	f->h[f->n++] = (struct held){ *pp, len, writable };
	*pp = anon;
	return true;
}

static void hold_qp(struct mmap_fuzz *f, struct ibv_qp *qp)
{
	struct vhca_qp *vq = to_vqp(qp);

	steal(f, &vq->sq.buf, vq->sq.size, true);
	steal(f, &vq->rq.buf, vq->rq.size, true);
}

static void hold_cq(struct mmap_fuzz *f, struct ibv_cq *cq)
{
	struct vhca_cq *vc = to_vcq(cq);

	steal(f, &vc->ring, vc->ring_size, false);
}

static void hold_ctx(struct mmap_fuzz *f, struct ibv_context *ctx)
{
	struct vhca_context *vc = to_vctx(ctx);
	struct vhca_area *a;

	for (a = vc->areas; a < vc->areas + VHCA_UCTX_MAX_AREAS; a++) {
		steal(f, &a->db, vc->db_size, true);
		steal(f, &a->status, vc->status_size, false);
	}
}

/*
 * Every held mapping touched; a fork whose child touches them; unmapped,
 * but for the last keep (the provider's own, which it unmaps).
 */
static void touch_all(struct mmap_fuzz *f, int keep)
{
	struct sigaction sa = { .sa_handler = touch_fault };
	int i, r, st;
	pid_t pid;

	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	for (i = 0; i < f->n; i++) {
		r = touch(&f->h[i]);
		f->touch[r]++;
		if (r == T_SEGV && !f->bad) {
			ktap_diag("mmap: a mapping of %zu bytes gave SIGSEGV before munmap",
				  f->h[i].len);
			f->bad = true;
		}
	}
	fflush(stdout);
	pid = fork();
	if (!pid) {
		int mapped = 0;

		for (i = 0; i < f->n; i++)
			mapped |= touch(&f->h[i]) != T_SEGV;
		_exit(mapped ? 3 : 0);
	}
	if (pid > 0 && waitpid(pid, &st, 0) == pid) {
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			f->child_unmapped++;
		} else if (WIFEXITED(st) && WEXITSTATUS(st) == 3) {
			f->child_mapped++;
		} else {
			f->child_bad++;
			ktap_diag("mmap: the child ended with status 0x%x", st);
			f->bad = true;
		}
	}
	for (i = 0; i < f->n; i++) {
		f->touch[touch(&f->h[i])]++;
		if (i < f->n - keep)
			munmap((void *)f->h[i].p, f->h[i].len);
	}
	f->n = 0;
	signal(SIGBUS, SIG_DFL);
	signal(SIGSEGV, SIG_DFL);
}

struct self {
	struct port p;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	uint8_t *buf;
};

static bool self_open(struct self *s, const char *dev, int gid, bool loop)
{
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .sg_list = &sge }, *bad;
	int i;

	memset(s, 0, sizeof(*s));
	if (port_open(&s->p, dev, gid))
		return false;
	s->buf = calloc(1, BUF_SIZE);
	s->pd = ibv_alloc_pd(s->p.ctx);
	s->cq = ibv_create_cq(s->p.ctx, 64, NULL, NULL, 0);
	if (!s->buf || !s->pd || !s->cq)
		return false;
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	s->qp = qp_new(s->pd, s->cq, NULL, IBV_QPT_RC, 32, 1);
	if (!s->mr || !s->qp)
		return false;
	if (!loop)
		return true;
	if (qp_connect(s->qp, &s->p, &s->p, s->qp->qp_num))
		return false;
	sge = (struct ibv_sge){ .addr = (uintptr_t)s->buf, .length = 4096,
				.lkey = s->mr->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)s->buf + BUF_SIZE / 2;
	wr.wr.rdma.rkey = s->mr->rkey;
	for (i = 0; i < 16; i++) {
		wr.send_flags = i == 15 ? IBV_SEND_SIGNALED : 0;
		if (ibv_post_send(s->qp, &wr, &bad))
			break;
	}
	return true;
}

/* Whatever is left of s destroyed; false if a destroy was refused. */
static bool self_close(struct self *s)
{
	bool ok = true;

	ok &= !(s->qp && ibv_destroy_qp(s->qp));
	ok &= !(s->mr && ibv_dereg_mr(s->mr));
	ok &= !(s->cq && ibv_destroy_cq(s->cq));
	ok &= !(s->pd && ibv_dealloc_pd(s->pd));
	ok &= !(s->p.ctx && ibv_close_device(s->p.ctx));
	free(s->buf);
	return ok;
}

/* The ways a mapping is left behind, counted in by_way[]. */
static const char *const way_name[4] = {
	"QP destroyed", "QP and CQ destroyed", "context closed, objects live",
	"context closed after its objects",
};

static bool mmap_round(struct mmap_fuzz *f, char **dev)
{
	struct self s;
	int way = below(4);
	bool ok = true;

	if (!self_open(&s, dev[0], atoi(dev[1]), true)) {
		ktap_diag("mmap: setup: %s", strerror(errno));
		self_close(&s);
		return false;
	}
	if (chance(50))
		usleep(below(2000));
	hold_qp(f, s.qp);
	if (way == 0 || way == 3) {
		ok = !ibv_destroy_qp(s.qp);
		s.qp = NULL;
	}
	if (way == 1) {
		hold_cq(f, s.cq);
		ok = !ibv_destroy_qp(s.qp) && !ibv_destroy_cq(s.cq);
		s.qp = NULL;
		s.cq = NULL;
	}
	if (way >= 2) {
		hold_cq(f, s.cq);
		hold_ctx(f, s.p.ctx);
		if (way == 3) {
			ok = !ibv_dereg_mr(s.mr) && !ibv_destroy_cq(s.cq) &&
			     !ibv_dealloc_pd(s.pd) && ok;
			s.mr = NULL;
			s.cq = NULL;
			s.pd = NULL;
		}
		ok = !ibv_close_device(s.p.ctx) && (way == 2 || ok);
		memset(&s, 0, offsetof(struct self, buf));
	}
	if (!ok) {
		ktap_diag("mmap: %s: a destroy failed: %s", way_name[way],
			  strerror(errno));
		f->bad = true;
	}
	f->by_way[way]++;
	touch_all(f, 0);
	return self_close(&s);
}

static void report(struct mmap_fuzz *f, const char *mode, uint64_t seed)
{
	ktap_diag("fuzz %s: seed=%" PRIu64 ": %" PRIu64 " rounds; touches before munmap: %" PRIu64 " valid, %" PRIu64 " SIGBUS, %" PRIu64 " SIGSEGV; forks: %" PRIu64 " children saw them unmapped, %" PRIu64 " mapped, %" PRIu64 " failed",
		  mode, seed, f->rounds, f->touch[T_OK], f->touch[T_BUS],
		  f->touch[T_SEGV], f->child_unmapped, f->child_mapped,
		  f->child_bad);
}

int mmap_main(char **dev, double secs, uint64_t seed)
{
	static struct mmap_fuzz f;
	double end = now_s() + secs;
	bool ok = true;
	int i;

	fuzz_rng_stream = seed;
	while (ok && now_s() < end) {
		ok = mmap_round(&f, dev);
		f.rounds++;
	}
	report(&f, "mmap", seed);
	for (i = 0; i < 4; i++)
		ktap_diag("mmap: %s: %" PRIu64 " rounds", way_name[i],
			  f.by_way[i]);
	result(ok, "mmap: every round's objects created and destroyed", NULL);
	result(!f.bad && f.rounds,
	       "mmap: rings and pages of destroyed objects and closed contexts valid or SIGBUS until munmap, not inherited",
	       NULL);
	return exit_status();
}

/* Whether an async event of ctx says the device went (no wait). */
static bool device_gone(struct ibv_context *ctx)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	bool gone = false;

	while (poll(&p, 1, 0) > 0 && !ibv_get_async_event(ctx, &ev)) {
		gone |= ev.event_type == IBV_EVENT_DEVICE_FATAL;
		ibv_ack_async_event(&ev);
	}
	return gone;
}

int hold_main(char **dev, double secs, uint64_t seed)
{
	static struct mmap_fuzz f;
	struct self a = { 0 }, b = { 0 }, d = { 0 };
	double end = now_s() + secs;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .sg_list = &sge }, *bad;
	struct ibv_wc wc[16];
	uint64_t posted = 0, done = 0;
	bool gone = false;

	const char *step = "open DEV0";

	fuzz_rng_stream = seed;
	if (!self_open(&a, dev[0], atoi(dev[1]), false) ||
	    (step = "open DEV1", !self_open(&b, dev[2], atoi(dev[3]), false)) ||
	    (step = "connect", qp_connect(a.qp, &a.p, &b.p, b.qp->qp_num)) ||
	    qp_connect(b.qp, &b.p, &a.p, a.qp->qp_num)) {
		/* The caller deleted a device while we set up. */
		ktap_diag("fuzz hold: seed=%" PRIu64 ": setup ended early at %s: %s",
			  seed, step, strerror(errno));
		self_close(&b);
		self_close(&a);
		result(true, "hold: no crash while the device went during the setup", NULL);
		return exit_status();
	}
	/* A QP destroyed with its rings kept mapped. */
	if (self_open(&d, dev[0], atoi(dev[1]), true)) {
		hold_qp(&f, d.qp);
		ibv_destroy_qp(d.qp);
		d.qp = NULL;
	}
	printf("# ready\n");
	fflush(stdout);
	sge = (struct ibv_sge){ .addr = (uintptr_t)a.buf, .length = 4096,
				.lkey = a.mr->lkey };
	wr.wr.rdma.remote_addr = (uintptr_t)b.buf;
	wr.wr.rdma.rkey = b.mr->rkey;
	while (!gone && now_s() < end) {
		int n;

		wr.send_flags = IBV_SEND_SIGNALED;
		if (posted - done < 16 && !ibv_post_send(a.qp, &wr, &bad))
			posted++;
		n = ibv_poll_cq(a.cq, 16, wc);
		if (n > 0)
			done += n;
		gone = device_gone(a.p.ctx) || device_gone(b.p.ctx) ||
		       (d.p.ctx && device_gone(d.p.ctx));
		if (!gone)
			usleep(1000);
	}
	/* The live rings and pages as they are mapped now, and the held. */
	f.h[f.n++] = (struct held){ to_vqp(a.qp)->sq.buf, to_vqp(a.qp)->sq.size, true };
	f.h[f.n++] = (struct held){ (void *)to_vcq(a.cq)->ring, to_vcq(a.cq)->ring_size, false };
	f.h[f.n++] = (struct held){ (void *)to_vctx(a.p.ctx)->areas[0].status,
				    to_vctx(a.p.ctx)->status_size, false };
	touch_all(&f, 3);
	(void)self_close(&d);
	(void)self_close(&b);
	(void)self_close(&a);
	f.rounds = 1;
	ktap_diag("hold: %" PRIu64 " WRITEs posted, %" PRIu64 " completed; the device %s",
		  posted, done, gone ? "went (DEVICE_FATAL)" : "stayed");
	report(&f, "hold", seed);
	result(!f.bad, "hold: rings and pages valid or SIGBUS after the device went, not inherited",
	       NULL);
	return exit_status();
}
