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
 *
 * Every check prints one KTAP result line (ktap.h); the exit status is the
 * number of failures.  The fatal modes print "READY" once set up.
 */
#include <errno.h>
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
	if (argc == 3)
		ktap_header();
	if (argc == 3 && !strcmp(argv[1], "mmap"))
		return mode_mmap(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "fatal-raw"))
		return mode_fatal_raw(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "fatal"))
		return mode_fatal(argv[2]);
	fprintf(stderr, "usage: %s mmap|fatal-raw|fatal DEVICE\n", argv[0]);
	return 2;
}
