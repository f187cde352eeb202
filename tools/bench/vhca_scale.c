// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_scale: the scale figures of make bench for one RDMA device (vhca's
 * or rdma_rxe's), one "name value" line each on standard output;
 * tools/bench/guest-scale.sh makes the table.  No figure is checked: the
 * exit status is 1 when a verb or the RDMA CM failed where it should not
 * (the figures printed before that stand), 2 on a usage error.
 *
 *   vhca_scale objects DEVICE NQP NMR
 *	MR register and deregister per second, and the kernel memory each
 *	MR holds, at 4 KiB (NMR MRs, each its own page), 1 MiB (1024 MRs:
 *	each 1 MiB slice of a 64 MiB buffer 16 times) and 64 MiB (32 MRs of
 *	that buffer): each size registered while the sizes before it are
 *	still held, then all deregistered, so that no memory is being freed
 *	while one is measured.  Then QP create and destroy per second over
 *	NQP RC QPs of 128 send and 128 receive work requests of one SGE
 *	(their CQs made first, one of 256 entries per 64 QPs), and the
 *	kernel memory each holds.  Memory is read from /proc/meminfo before
 *	and after each batch is created (kmem() below).
 *   vhca_scale limit DEVICE CAP
 *	A child process creates RC QPs of 64/64 work requests, a CQ per 64
 *	(tests/lib/qp_fill.h, as vhca_qplimit), until the device refuses one
 *	or CAP are made, reports, and exits holding them: how many, why it
 *	stopped, how long creating them took, and how long its exit took
 *	(from just before its exit() until waitpid() returns: the kernel
 *	tears the QPs down before the parent can reap the child).
 *   vhca_scale cm SERVER_ADDR CLIENT_ADDR CYCLES ROUNDS
 *	RDMA CM connect+disconnect per second, both ends in this process
 *	on one event channel: a server listening on SERVER_ADDR and clients
 *	bound to CLIENT_ADDR, an RC QP and a CQ of its own per connection on
 *	each side.  A cycle is rdma_create_id, address and route
 *	resolution, rdma_connect, ESTABLISHED, rdma_disconnect, then both
 *	sides' DISCONNECTED and their QPs, CQs and IDs destroyed.  CYCLES
 *	cycles one after the other, then ROUNDS rounds of 64 at once; each
 *	phase stops starting new cycles after PHASE_S seconds.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "qp_fill.h"
#include "vhca_test.h"

#define OBJ_WRS		128
#define LIMIT_WRS	64
#define BIG		(64UL << 20)
#define CM_PORT		7471
#define CM_AT_ONCE	64
#define CM_WAIT_MS	10000
#define PHASE_S		15
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * The kernel's share of the memory in use, in bytes: MemTotal - MemFree
 * - Buffers - Cached - AnonPages of /proc/meminfo.  What a process holds
 * in its anonymous memory (its heap, the provider's) and the page cache
 * are left out; slab, vmalloc, page tables, kernel stacks and pages a
 * driver allocates directly (rings mapped into the process included) are
 * in.  Per-CPU page lists and other processes move it by up to a few
 * hundred KiB: the objects measured are many.
 */
static long long kmem(void)
{
	static const char *const keys[] = {
		"MemTotal:", "MemFree:", "Buffers:", "Cached:", "AnonPages:",
	};
	long long v[5] = { 0 }, kb;
	char key[64];
	FILE *f = fopen("/proc/meminfo", "r");
	int i, found = 0;

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld kB", key, &kb) == 2)
		for (i = 0; i < 5; i++)
			if (!strcmp(key, keys[i])) {
				v[i] = kb;
				found |= 1 << i;
			}
	fclose(f);
	if (found != 0x1f)
		return -1;
	return (v[0] - v[1] - v[2] - v[3] - v[4]) * 1024;
}

static double rate(int n, double ms)
{
	return ms > 0 ? n * 1e3 / ms : 0;
}

static void fail(const char *what)
{
	fprintf(stderr, "vhca_scale: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void qps(struct ibv_context *ctx, struct ibv_pd *pd, int n)
{
	int ncq = (n + QP_FILL_PER_CQ - 1) / QP_FILL_PER_CQ, i;
	struct ibv_qp **qp = calloc(n, sizeof(*qp));
	struct ibv_cq **cq = calloc(ncq, sizeof(*cq));
	long long m0, m1;
	double t0, t1, t2;

	if (!qp || !cq)
		fail("calloc");
	for (i = 0; i < ncq; i++) {
		cq[i] = ibv_create_cq(ctx, 2 * OBJ_WRS, NULL, NULL, 0);
		if (!cq[i])
			fail("ibv_create_cq");
	}
	m0 = kmem();
	t0 = now_ms();
	for (i = 0; i < n; i++) {
		qp[i] = rc_qp_create(pd, cq[i / QP_FILL_PER_CQ], OBJ_WRS);
		if (!qp[i])
			fail("ibv_create_qp");
	}
	t1 = now_ms();
	m1 = kmem();
	for (i = 0; i < n; i++)
		if (ibv_destroy_qp(qp[i]))
			fail("ibv_destroy_qp");
	t2 = now_ms();
	printf("qp_create_per_s %.0f\n", rate(n, t1 - t0));
	printf("qp_destroy_per_s %.0f\n", rate(n, t2 - t1));
	if (m0 >= 0 && m1 >= 0)
		printf("qp_kmem_bytes %.0f\n", (double)(m1 - m0) / n);
	for (i = 0; i < ncq; i++)
		if (ibv_destroy_cq(cq[i]))
			fail("ibv_destroy_cq");
	free(cq);
	free(qp);
}

/*
 * n MRs of len bytes each, the i-th at buf + (i % slices) * len, under
 * names ending in tag: registered by mrs_reg(), deregistered by
 * mrs_dereg(), which prints the figures.
 */
struct mrs {
	const char *tag;
	size_t len;
	int n, slices;
	struct ibv_mr **mr;
	double reg_ms;
	long long mem;
};

static void mrs_reg(struct ibv_pd *pd, char *buf, struct mrs *g)
{
	long long m0, m1;
	double t0;
	int i;

	g->mr = calloc(g->n, sizeof(*g->mr));
	if (!g->mr)
		fail("calloc");
	m0 = kmem();
	t0 = now_ms();
	for (i = 0; i < g->n; i++) {
		g->mr[i] = ibv_reg_mr(pd, buf + (size_t)(i % g->slices) * g->len,
				      g->len, IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_WRITE |
				      IBV_ACCESS_REMOTE_READ);
		if (!g->mr[i])
			fail("ibv_reg_mr");
	}
	g->reg_ms = now_ms() - t0;
	m1 = kmem();
	g->mem = m0 >= 0 && m1 >= 0 ? m1 - m0 : LLONG_MIN;
}

static void mrs_dereg(struct mrs *g)
{
	double t0 = now_ms();
	int i;

	for (i = 0; i < g->n; i++)
		if (ibv_dereg_mr(g->mr[i]))
			fail("ibv_dereg_mr");
	printf("mr_reg_per_s_%s %.0f\n", g->tag, rate(g->n, g->reg_ms));
	printf("mr_dereg_per_s_%s %.0f\n", g->tag, rate(g->n, now_ms() - t0));
	if (g->mem != LLONG_MIN)
		printf("mr_kmem_bytes_%s %.0f\n", g->tag, (double)g->mem / g->n);
	free(g->mr);
}

static int objects(const char *dev, int nqp, int nmr)
{
	struct ibv_context *ctx = open_named(dev);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	size_t len = (size_t)nmr * 4096 > BIG ? (size_t)nmr * 4096 : BIG;
	char *buf = aligned_alloc(4096, len);
	struct mrs g[] = {
		{ .tag = "4k", .len = 4096, .n = nmr, .slices = nmr },
		{ .tag = "1m", .len = 1UL << 20, .n = 1024, .slices = 64 },
		{ .tag = "64m", .len = BIG, .n = 32, .slices = 1 },
	};
	unsigned int i;

	if (!pd || !buf)
		fail(dev);
	/* Every page present before the first reading. */
	memset(buf, 1, len);
	for (i = 0; i < ARRAY_SIZE(g); i++)
		mrs_reg(pd, buf, &g[i]);
	for (i = 0; i < ARRAY_SIZE(g); i++)
		mrs_dereg(&g[i]);
	qps(ctx, pd, nqp);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	free(buf);
	return 0;
}

/* What the child of limit() reports before it exits. */
struct held {
	int n, err;
	double create_ms, exit_at_ms;
};

static void hold(const char *dev, int cap, int fd)
{
	struct ibv_context *ctx = open_named(dev);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	struct ibv_qp **qp = calloc(cap, sizeof(*qp));
	struct held h = { 0 };
	double t0;
	int cqs;

	if (!pd || !qp)
		fail(dev);
	t0 = now_ms();
	h.n = qp_fill(ctx, pd, LIMIT_WRS, cap, qp, &cqs, &h.err);
	h.create_ms = now_ms() - t0;
	h.exit_at_ms = now_ms();
	if (write(fd, &h, sizeof(h)) != sizeof(h))
		fail("write");
	exit(0);
}

static int limit(const char *dev, int cap)
{
	struct held h;
	int fd[2], status;
	double reaped;
	pid_t pid;

	if (pipe(fd))
		fail("pipe");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		fail("fork");
	if (!pid) {
		close(fd[0]);
		hold(dev, cap, fd[1]);
	}
	close(fd[1]);
	if (read(fd[0], &h, sizeof(h)) != sizeof(h)) {
		fprintf(stderr, "vhca_scale: the child reported nothing\n");
		waitpid(pid, &status, 0);
		return 1;
	}
	if (waitpid(pid, &status, 0) != pid)
		fail("waitpid");
	reaped = now_ms();
	printf("qp_limit %d\n", h.n);
	printf("qp_limit_stop %s\n", h.err ? strerrorname_np(h.err) : "cap");
	printf("qp_limit_create_s %.2f\n", h.create_ms / 1e3);
	printf("qp_exit_s %.2f\n", (reaped - h.exit_at_ms) / 1e3);
	return !WIFEXITED(status) || WEXITSTATUS(status);
}

/* ---- RDMA CM */

struct conn {
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	bool server;
};

struct cm {
	struct rdma_event_channel *ch;
	struct sockaddr_in src, dst;
	/* A PD per device (the server's and the clients'). */
	struct ibv_context *verbs[2];
	struct ibv_pd *pd[2];
	int started, client_done, server_done;
};

static struct ibv_pd *cm_pd(struct cm *cm, struct ibv_context *verbs)
{
	int i;

	for (i = 0; i < 2 && cm->verbs[i]; i++)
		if (cm->verbs[i] == verbs)
			return cm->pd[i];
	if (i == 2)
		return NULL;
	cm->verbs[i] = verbs;
	cm->pd[i] = ibv_alloc_pd(verbs);
	return cm->pd[i];
}

/* The connection's CQ and RC QP of 8/8 work requests. */
static int cm_qp(struct cm *cm, struct conn *c)
{
	struct ibv_pd *pd = cm_pd(cm, c->id->verbs);
	struct ibv_qp_init_attr attr = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	c->cq = pd ? ibv_create_cq(c->id->verbs, 16, NULL, NULL, 0) : NULL;
	if (!c->cq)
		return -1;
	attr.send_cq = c->cq;
	attr.recv_cq = c->cq;
	return rdma_create_qp(c->id, pd, &attr);
}

static void cm_free(struct conn *c)
{
	if (c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	rdma_destroy_id(c->id);
	free(c);
}

static int cm_start(struct cm *cm)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (!c || rdma_create_id(cm->ch, &c->id, c, RDMA_PS_TCP))
		return -1;
	cm->started++;
	return rdma_resolve_addr(c->id, (struct sockaddr *)&cm->src,
				 (struct sockaddr *)&cm->dst, 2000);
}

/* One event, acknowledged; -1 when it is an error. */
static int cm_event(struct cm *cm, struct rdma_cm_event *ev)
{
	struct rdma_conn_param param = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	enum rdma_cm_event_type type = ev->event;
	struct rdma_cm_id *id = ev->id;
	struct conn *c = id->context;
	int status = ev->status;

	rdma_ack_cm_event(ev);
	switch (type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		return rdma_resolve_route(id, 2000);
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		return cm_qp(cm, c) ?: rdma_connect(id, &param);
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		c = calloc(1, sizeof(*c));
		if (!c)
			return -1;
		c->id = id;
		c->server = true;
		id->context = c;
		return cm_qp(cm, c) ?: rdma_accept(id, &param);
	case RDMA_CM_EVENT_ESTABLISHED:
		return c->server ? 0 : rdma_disconnect(id);
	case RDMA_CM_EVENT_DISCONNECTED:
		if (c->server) {
			/* The DREP, if destroying the ID would not send it. */
			rdma_disconnect(id);
			cm->server_done++;
		} else {
			cm->client_done++;
		}
		cm_free(c);
		return 0;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return 0;
	default:
		fprintf(stderr, "vhca_scale: RDMA CM event %s (status %d)\n",
			rdma_event_str(type), status);
		return -1;
	}
}

/* Events until every cycle started is done on both sides. */
static int cm_wait(struct cm *cm)
{
	struct pollfd pfd = { .fd = cm->ch->fd, .events = POLLIN };
	double end = now_ms() + CM_WAIT_MS;
	struct rdma_cm_event *ev;

	while (cm->client_done < cm->started || cm->server_done < cm->started) {
		if (now_ms() > end) {
			fprintf(stderr, "vhca_scale: %d of %d connections done after %d ms\n",
				cm->client_done, cm->started, CM_WAIT_MS);
			return -1;
		}
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (rdma_get_cm_event(cm->ch, &ev))
			return -1;
		if (cm_event(cm, ev))
			return -1;
	}
	return 0;
}

/* rounds of at_once cycles; the cycles per second, 0 on failure. */
static double cm_phase(struct cm *cm, int rounds, int at_once)
{
	double t0 = now_ms();
	int r, i;

	cm->started = 0;
	cm->client_done = 0;
	cm->server_done = 0;
	for (r = 0; r < rounds && now_ms() - t0 < PHASE_S * 1e3; r++) {
		for (i = 0; i < at_once; i++)
			if (cm_start(cm))
				return 0;
		if (cm_wait(cm))
			return 0;
	}
	return rate(cm->started, now_ms() - t0);
}

static int parse_in(const char *s, struct sockaddr_in *a, int port)
{
	a->sin_family = AF_INET;
	a->sin_port = htons(port);
	return inet_pton(AF_INET, s, &a->sin_addr) == 1 ? 0 : -1;
}

static int cm(const char *saddr, const char *caddr, int cycles, int rounds)
{
	struct cm cm = { 0 };
	struct rdma_cm_id *listen_id;
	double seq, par;

	if (parse_in(saddr, &cm.dst, CM_PORT) || parse_in(caddr, &cm.src, 0))
		return 2;
	cm.ch = rdma_create_event_channel();
	if (!cm.ch || rdma_create_id(cm.ch, &listen_id, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(listen_id, (struct sockaddr *)&cm.dst) ||
	    rdma_listen(listen_id, 2 * CM_AT_ONCE))
		fail("listen");
	seq = cm_phase(&cm, cycles, 1);
	if (seq > 0)
		printf("cm_seq_per_s %.1f\n", seq);
	par = seq > 0 ? cm_phase(&cm, rounds, CM_AT_ONCE) : 0;
	if (par > 0)
		printf("cm_64_per_s %.1f\n", par);
	return seq > 0 && par > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "objects"))
		return objects(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "limit"))
		return limit(argv[2], atoi(argv[3]));
	if (argc == 6 && !strcmp(argv[1], "cm"))
		return cm(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
	fprintf(stderr,
		"usage: %s objects DEVICE NQP NMR | limit DEVICE CAP | cm SERVER_ADDR CLIENT_ADDR CYCLES ROUNDS\n",
		argv[0]);
	return 2;
}
