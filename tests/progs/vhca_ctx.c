// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_ctx: user contexts of a vhca device, as a process sees them.
 *
 *   vhca_ctx mmap DEV        the mmap rules of the context pages, through
 *                            raw uverbs commands (the offsets are not
 *                            visible through libibverbs)
 *   vhca_ctx fatal-raw DEV   hold a raw context with its pages mapped until
 *                            the device goes; expect DEVICE_FATAL, then
 *                            touch the (zapped) mappings
 *   vhca_ctx fatal DEV       the same through libibverbs and the provider
 *   vhca_ctx rings DEV DIR   rings of destroyed CQs kept mapped: they count
 *                            (debugfs DIR: objects, coherent) until
 *                            unmapped, and creation is refused (ENOMEM)
 *                            once they fill the context's quota
 *   vhca_ctx charge DEV CG   a CQ ring is charged to the memory cgroup CG
 *                            (a cgroup2 directory the process is in)
 *   vhca_ctx records DEV     CQs of one context whose create responses
 *                            end before the areas' offsets, until its
 *                            first pair's records run out: ENOMEM at the
 *                            1024th (VHCA_UCTX_RECS records, the first
 *                            reserved), one more once one is destroyed
 *   vhca_ctx areas DEV       2100 CQs of one context with whole responses:
 *                            their records in three pairs of areas, each
 *                            at offsets of its own and mapped as the first
 *
 * Every check prints one KTAP result line (ktap.h); the exit status is the
 * number of failures.  The fatal modes print "READY" once set up.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <fcntl.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/vhca-abi.h>

#include "ktap.h"

static void result(int ok, const char *what)
{
	ktap_result(ok, what, NULL);
}

struct raw_ctx {
	int fd;
	int async_fd;
	struct vhca_alloc_ucontext_resp resp;
};

/* Open /dev/infiniband/uverbsN of the ib device named dev. */
static int open_uverbs(const char *dev)
{
	char path[256], name[64];
	glob_t g;
	size_t i;
	int fd = -1;

	if (glob("/sys/class/infiniband_verbs/uverbs*/ibdev", 0, NULL, &g))
		return -1;
	for (i = 0; i < g.gl_pathc && fd < 0; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r");

		if (!f)
			continue;
		if (fscanf(f, "%63s", name) == 1 && !strcmp(name, dev)) {
			const char *n = strstr(g.gl_pathv[i], "uverbs");

			snprintf(path, sizeof(path), "/dev/infiniband/%.*s",
				 (int)strcspn(n, "/"), n);
			fd = open(path, O_RDWR | O_CLOEXEC);
		}
		fclose(f);
	}
	globfree(&g);
	return fd;
}

/* GET_CONTEXT through the legacy write() interface. */
static int get_context(int fd, struct raw_ctx *ctx)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_get_context cmd;
	} req = {};
	struct {
		struct ib_uverbs_get_context_resp core;
		struct vhca_alloc_ucontext_resp drv;
	} resp = {};

	req.hdr.command = IB_USER_VERBS_CMD_GET_CONTEXT;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	if (write(fd, &req, sizeof(req)) != sizeof(req))
		return -1;
	ctx->fd = fd;
	ctx->async_fd = resp.core.async_fd;
	ctx->resp = resp.drv;
	return 0;
}

static int open_raw(const char *dev, struct raw_ctx *ctx)
{
	int fd = open_uverbs(dev);

	if (fd < 0)
		return -1;
	if (get_context(fd, ctx)) {
		close(fd);
		return -1;
	}
	return 0;
}

static void *map(struct raw_ctx *ctx, uint64_t off, size_t len, int prot,
		 int flags)
{
	return mmap(NULL, len, prot, flags, ctx->fd, off);
}

static int map_fails(struct raw_ctx *ctx, uint64_t off, size_t len, int prot,
		     int flags, int err)
{
	void *p = map(ctx, off, len, prot, flags);

	if (p != MAP_FAILED) {
		munmap(p, len);
		return 0;
	}
	return errno == err;
}

/* CREATE_CQ of cqe entries: 0, or -1 with errno. */
static int create_cq_resp(struct raw_ctx *ctx, uint32_t cqe,
			  uint32_t *handle, struct vhca_create_cq_resp *drv,
			  size_t drv_len)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_cq cmd;
	} req = {};
	struct {
		struct ib_uverbs_create_cq_resp core;
		struct vhca_create_cq_resp drv;
	} resp = {};

	req.hdr.command = IB_USER_VERBS_CMD_CREATE_CQ;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = (sizeof(resp.core) + drv_len) / 4;
	req.cmd.response = (uintptr_t)&resp;
	req.cmd.cqe = cqe;
	req.cmd.comp_channel = -1;
	if (write(ctx->fd, &req, sizeof(req)) != sizeof(req))
		return -1;
	*handle = resp.core.cq_handle;
	*drv = resp.drv;
	return 0;
}

/* The same with the whole response of this vhca-abi.h. */
static int create_cq(struct raw_ctx *ctx, uint32_t cqe, uint32_t *handle,
		     struct vhca_create_cq_resp *drv)
{
	return create_cq_resp(ctx, cqe, handle, drv, sizeof(*drv));
}

static int destroy_cq(struct raw_ctx *ctx, uint32_t handle)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_destroy_cq cmd;
	} req = {};
	struct ib_uverbs_destroy_cq_resp resp;

	req.hdr.command = IB_USER_VERBS_CMD_DESTROY_CQ;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	req.cmd.cq_handle = handle;
	return write(ctx->fd, &req, sizeof(req)) == sizeof(req) ? 0 : -1;
}

/* The number after "NAME " in the file DIR/FILE, or -1. */
static long long field(const char *dir, const char *file, const char *name)
{
	char path[512], key[64];
	long long v, found = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", key, &v) == 2)
		if (!strcmp(key, name))
			found = v;
	fclose(f);
	return found;
}

/* A whole-file number (cgroup2's memory.current), or -1. */
static long long number(const char *dir, const char *file)
{
	char path[512];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Rings of destroyed CQs kept mapped, at most this many tries. */
#define RINGS_MAX	4096

struct held_ring {
	volatile uint8_t *p;
	size_t len;
};

static int mode_rings(const char *dev, const char *dbg)
{
	static struct held_ring held[RINGS_MAX];
	long pg = sysconf(_SC_PAGESIZE);
	struct vhca_create_cq_resp drv;
	long long cq0, bufs0, cq1, bufs1;
	int n = 0, refused = 0, err = 0, i;
	uint8_t seen = 0;
	struct raw_ctx a;
	uint32_t h;

	if (open_raw(dev, &a)) {
		result(0, "open a raw context");
		return ktap_exit_status();
	}
	cq0 = field(dbg, "objects", "cq");
	bufs0 = field(dbg, "coherent", "user_bufs");
	result(cq0 >= 0 && bufs0 >= 2, "debugfs shows the CQ and user buffer counts");

	while (n < RINGS_MAX) {
		if (create_cq(&a, 1, &h, &drv)) {
			refused = 1;
			err = errno;
			break;
		}
		held[n].len = (drv.ring_size + pg - 1) / pg * pg;
		held[n].p = mmap(NULL, held[n].len, PROT_READ, MAP_SHARED, a.fd,
				 drv.mmap_offset);
		if (held[n].p == MAP_FAILED || destroy_cq(&a, h)) {
			result(0, "create, map and destroy a CQ");
			return ktap_exit_status();
		}
		n++;
	}
	ktap_result(refused && err == ENOMEM,
		    "creation is refused (ENOMEM) with destroyed CQs' rings mapped",
		    "after %d CQs: %s", n, refused ? strerror(err) : "never refused");
	cq1 = field(dbg, "objects", "cq");
	bufs1 = field(dbg, "coherent", "user_bufs");
	ktap_result(cq1 == cq0 + n, "destroyed CQs still mapped count as CQs",
		    "%lld CQs, %lld before %d held", cq1, cq0, n);
	ktap_result(bufs1 == bufs0 + n,
		    "their rings count as the context's user buffers",
		    "%lld buffers, %lld before %d held", bufs1, bufs0, n);
	for (i = 0; i < n; i++)
		seen |= held[i].p[0] | held[i].p[held[i].len - 1];
	result(!seen, "the rings of destroyed CQs stay mapped, readable, zeroed");

	for (i = 0; i < n; i++)
		munmap((void *)held[i].p, held[i].len);
	ktap_result(field(dbg, "objects", "cq") == cq0,
		    "unmapped, they are gone from the CQ count", "%lld CQs",
		    field(dbg, "objects", "cq"));
	ktap_result(field(dbg, "coherent", "user_bufs") == bufs0,
		    "and from the user buffers", "%lld buffers",
		    field(dbg, "coherent", "user_bufs"));
	result(!create_cq(&a, 1, &h, &drv) && !destroy_cq(&a, h),
	       "a CQ can be created again once they are unmapped");
	close(a.async_fd);
	close(a.fd);
	return ktap_exit_status();
}

/*
 * CQs one context can have when its create responses end before the
 * offsets of the areas (a provider of one pair of areas): the first pair's
 * records, the first reserved.
 */
#define RECORDS		1023
#define SHORT_CQ_RESP	offsetof(struct vhca_create_cq_resp, db_area_offset)

static int mode_records(const char *dev)
{
	static uint32_t cq[RECORDS + 1];
	struct vhca_create_cq_resp drv;
	int n = 0, err = 0, again = 0, i;
	struct raw_ctx a;

	if (open_raw(dev, &a)) {
		result(0, "open a raw context");
		return ktap_exit_status();
	}
	while (n <= RECORDS) {
		if (create_cq_resp(&a, 1, &cq[n], &drv, SHORT_CQ_RESP)) {
			err = errno;
			break;
		}
		n++;
	}
	ktap_result(n == RECORDS && err == ENOMEM,
		    "short responses: CQs refused (ENOMEM) once the first pair's records run out",
		    "after %d CQs: %s", n, err ? strerror(err) : "never refused");
	if (n > 0 && !destroy_cq(&a, cq[n - 1])) {
		n--;
		again = !create_cq_resp(&a, 1, &cq[n], &drv, SHORT_CQ_RESP);
		n += again;
	}
	result(again, "one destroyed, a CQ takes its record");
	for (i = 0; i < n; i++)
		destroy_cq(&a, cq[i]);
	close(a.async_fd);
	close(a.fd);
	return ktap_exit_status();
}

/*
 * CQs of one context past its first pair of areas, with whole responses:
 * record i in pair i / R (R records per area), every record of a pair
 * placed at the same offsets and each pair at offsets of its own; the
 * pairs map as the first does (doorbells read-write, status read-only).
 */
#define AREAS_CQS	2100

static int mode_areas(const char *dev)
{
	static uint32_t cq[AREAS_CQS];
	static struct vhca_create_cq_resp drv[AREAS_CQS];
	uint64_t db_off[VHCA_UCTX_MAX_AREAS] = {}, st_off[VHCA_UCTX_MAX_AREAS] = {};
	bool seen[VHCA_UCTX_MAX_AREAS] = {};
	int n = 0, same = 1, i, j;
	uint32_t pairs = 0;
	uint32_t recs, k;
	struct raw_ctx a;
	void *p;

	if (open_raw(dev, &a)) {
		result(0, "open a raw context");
		return ktap_exit_status();
	}
	recs = a.resp.db_size / sizeof(struct vhca_db_rec);
	while (n < AREAS_CQS && !create_cq(&a, 1, &cq[n], &drv[n]))
		n++;
	ktap_result(n == AREAS_CQS, "whole responses: CQs past the first pair's records",
		    "%d of %d: %s", n, AREAS_CQS, strerror(errno));
	for (i = 0; i < n; i++) {
		k = drv[i].db_index / recs;
		if (!drv[i].db_index || k >= VHCA_UCTX_MAX_AREAS) {
			same = 0;
			break;
		}
		if (!seen[k]) {
			seen[k] = true;
			db_off[k] = drv[i].db_area_offset;
			st_off[k] = drv[i].status_area_offset;
			pairs++;
		}
		same &= drv[i].db_area_offset == db_off[k] &&
			drv[i].status_area_offset == st_off[k];
	}
	result(same && db_off[0] == a.resp.db_mmap_offset &&
	       st_off[0] == a.resp.status_mmap_offset,
	       "each pair's records at its offsets, the first pair's the context's");
	for (i = 0; i < VHCA_UCTX_MAX_AREAS; i++)
		for (j = i + 1; j < VHCA_UCTX_MAX_AREAS; j++)
			same &= !seen[i] || !seen[j] ||
				(db_off[i] != db_off[j] &&
				 db_off[i] != st_off[j] &&
				 st_off[i] != db_off[j] &&
				 st_off[i] != st_off[j]);
	ktap_result(same && pairs == (AREAS_CQS + recs) / recs,
		    "one pair of areas per records' pair, at offsets of its own",
		    "%u pairs", pairs);
	k = pairs ? pairs - 1 : 0;
	p = map(&a, db_off[k], a.resp.db_size, PROT_READ | PROT_WRITE, MAP_SHARED);
	result(p != MAP_FAILED, "the last pair's doorbells map read-write");
	if (p != MAP_FAILED)
		munmap(p, a.resp.db_size);
	p = map(&a, st_off[k], a.resp.status_size, PROT_READ, MAP_SHARED);
	result(p != MAP_FAILED, "the last pair's status maps read-only");
	if (p != MAP_FAILED)
		munmap(p, a.resp.status_size);
	result(map_fails(&a, st_off[k], a.resp.status_size,
			 PROT_READ | PROT_WRITE, MAP_SHARED, EPERM),
	       "the last pair's status: a writable mapping refused (EPERM)");
	for (i = 0; i < n; i++)
		destroy_cq(&a, cq[i]);
	close(a.async_fd);
	close(a.fd);
	return ktap_exit_status();
}

/*
 * A CQ's ring (1 MiB) charged to the caller's memory cgroup, then not: at
 * least half of it either way, since the memory controller's per-CPU
 * charge cache takes and keeps up to 64 pages at a time (uncharged,
 * nothing of the ring is counted at all).
 */
static int mode_charge(const char *dev, const char *cg)
{
	struct vhca_create_cq_resp drv;
	long long m0, m1, m2;
	struct raw_ctx a;
	uint32_t h;

	if (open_raw(dev, &a)) {
		result(0, "open a raw context");
		return ktap_exit_status();
	}
	m0 = number(cg, "memory.current");
	result(m0 > 0, "the process's memory cgroup counts memory.current");
	if (create_cq(&a, 32768, &h, &drv)) {
		result(0, "create a CQ of 32768 entries");
		return ktap_exit_status();
	}
	m1 = number(cg, "memory.current");
	ktap_result(m1 - m0 >= (long long)drv.ring_size / 2,
		    "its ring is charged to the memory cgroup",
		    "%u bytes of ring, memory.current %lld -> %lld",
		    drv.ring_size, m0, m1);
	result(!destroy_cq(&a, h), "destroy the CQ");
	m2 = number(cg, "memory.current");
	ktap_result(m1 - m2 >= (long long)drv.ring_size / 2,
		    "and uncharged when freed", "memory.current %lld -> %lld",
		    m1, m2);
	close(a.async_fd);
	close(a.fd);
	return ktap_exit_status();
}

static int mode_mmap(const char *dev)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct raw_ctx a, b, c;
	uint8_t *db, *st, *db2;
	int rw = PROT_READ | PROT_WRITE;
	size_t sz;

	if (open_raw(dev, &a)) {
		result(0, "open the device and allocate a raw context");
		return ktap_exit_status();
	}
	result(1, "open the device and allocate a raw context");
	result(a.resp.db_size && a.resp.db_size % pg == 0 &&
	       a.resp.status_size == a.resp.db_size,
	       "doorbell and status areas: equal, whole pages");
	result(a.resp.db_mmap_offset != a.resp.status_mmap_offset,
	       "the two pages have distinct offsets");
	result(get_context(a.fd, &c) && errno == EINVAL,
	       "a second context on the same fd is refused (EINVAL)");

	sz = a.resp.db_size;
	db = map(&a, a.resp.db_mmap_offset, sz, rw, MAP_SHARED);
	result(db != MAP_FAILED, "doorbell area maps read-write, shared");
	st = map(&a, a.resp.status_mmap_offset, sz, PROT_READ, MAP_SHARED);
	result(st != MAP_FAILED, "status area maps read-only, shared");
	if (db == MAP_FAILED || st == MAP_FAILED)
		return ktap_exit_status();
	result(!memcmp(db, st, sz) && !db[0] && !db[sz - 1],
	       "both areas start zeroed");
	memset(db, 0xa5, sz);
	result(db[0] == 0xa5 && db[sz - 1] == 0xa5, "doorbell area holds writes");

	result(map_fails(&a, a.resp.status_mmap_offset, sz, rw, MAP_SHARED, EPERM),
	       "status area refuses a writable mapping (EPERM)");
	result(mprotect(st, sz, rw) && errno == EACCES,
	       "status mapping cannot be made writable by mprotect (EACCES)");
	result(map_fails(&a, a.resp.db_mmap_offset, sz, rw, MAP_PRIVATE, EINVAL),
	       "a private mapping is refused (EINVAL)");
	result(map_fails(&a, a.resp.db_mmap_offset, sz + pg, rw, MAP_SHARED, EINVAL),
	       "a mapping longer than the area is refused (EINVAL)");
	result(map_fails(&a, a.resp.db_mmap_offset, sz - pg, rw, MAP_SHARED, EINVAL) ||
	       sz == (size_t)pg,
	       "a mapping shorter than the area is refused (EINVAL)");
	result(map_fails(&a, a.resp.db_mmap_offset + 1024 * pg, pg, rw,
			 MAP_SHARED, EINVAL),
	       "an offset the context does not own is refused (EINVAL)");

	/* Another context never sees this one's memory, whatever it maps. */
	if (open_raw(dev, &b)) {
		result(0, "a second context on a second fd");
		return ktap_exit_status();
	}
	db2 = map(&b, a.resp.db_mmap_offset, sz, rw, MAP_SHARED);
	if (db2 == MAP_FAILED) {
		result(map_fails(&b, a.resp.db_mmap_offset, sz, rw, MAP_SHARED,
				 EINVAL),
		       "the first context's offset is not the second's");
	} else {
		result(db2[0] == 0 && db2[sz - 1] == 0,
		       "the same offset on another context maps other memory");
		memset(db2, 0x5a, sz);
		result(db[0] == 0xa5, "writes through one context stay there");
		munmap(db2, sz);
	}
	close(b.async_fd);
	close(b.fd);

	/* A mapping outlives the fd and the context keeps its memory. */
	close(a.async_fd);
	close(a.fd);
	result(db[0] == 0xa5 && db[sz - 1] == 0xa5,
	       "the doorbell area stays mapped after close()");
	db[1] = 0x11;
	munmap(db, sz);
	munmap(st, sz);
	return ktap_exit_status();
}

static int mode_fatal_raw(const char *dev)
{
	struct ib_uverbs_async_event_desc ev;
	struct raw_ctx a;
	volatile uint8_t *db, *st;
	ssize_t n;

	if (open_raw(dev, &a)) {
		result(0, "open a raw context");
		return ktap_exit_status();
	}
	db = map(&a, a.resp.db_mmap_offset, a.resp.db_size,
		 PROT_READ | PROT_WRITE, MAP_SHARED);
	st = map(&a, a.resp.status_mmap_offset, a.resp.status_size, PROT_READ,
		 MAP_SHARED);
	if (db == MAP_FAILED || st == MAP_FAILED) {
		result(0, "map the context's pages");
		return ktap_exit_status();
	}
	db[0] = 1;
	printf("READY\n");
	fflush(stdout);

	do {
		n = read(a.async_fd, &ev, sizeof(ev));
	} while (n == sizeof(ev) && ev.event_type != IBV_EVENT_DEVICE_FATAL);
	result(n == sizeof(ev) && ev.event_type == IBV_EVENT_DEVICE_FATAL,
	       "raw context receives DEVICE_FATAL");
	/* The mappings were zapped: they fault in a harmless page now. */
	db[0] = 2;
	result(st[0] == 0, "zapped mappings stay accessible, no crash");
	munmap((void *)db, a.resp.db_size);
	munmap((void *)st, a.resp.status_size);
	close(a.async_fd);
	close(a.fd);
	return ktap_exit_status();
}

static int mode_fatal(const char *dev)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_async_event ev;
	struct ibv_port_attr pa;
	int i, n, fatal = 0;

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			ctx = ibv_open_device(list[i]);
	result(ctx != NULL, "ibv_open_device through the provider");
	if (!ctx)
		return ktap_exit_status();
	result(!ibv_query_port(ctx, 1, &pa), "ibv_query_port before removal");
	printf("READY\n");
	fflush(stdout);

	while (!ibv_get_async_event(ctx, &ev)) {
		fatal = ev.event_type == IBV_EVENT_DEVICE_FATAL;
		ibv_ack_async_event(&ev);
		if (fatal)
			break;
	}
	result(fatal, "libibverbs context receives IBV_EVENT_DEVICE_FATAL");
	result(ibv_query_port(ctx, 1, &pa) != 0,
	       "verbs fail once the device is gone");
	result(!ibv_close_device(ctx), "ibv_close_device after removal");
	ibv_free_device_list(list);
	return ktap_exit_status();
}

int main(int argc, char **argv)
{
	if (argc == 3 || argc == 4)
		ktap_header();
	if (argc == 4 && !strcmp(argv[1], "rings"))
		return mode_rings(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "charge"))
		return mode_charge(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "records"))
		return mode_records(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "areas"))
		return mode_areas(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "mmap"))
		return mode_mmap(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "fatal-raw"))
		return mode_fatal_raw(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "fatal"))
		return mode_fatal(argv[2]);
	fprintf(stderr,
		"usage: %s mmap|fatal-raw|fatal|records|areas DEVICE | rings DEVICE DEBUGFS | charge DEVICE CGROUP\n",
		argv[0]);
	return 2;
}
