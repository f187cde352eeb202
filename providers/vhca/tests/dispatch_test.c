// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Dispatch test: libibverbs loads the uninstalled provider and every verb
 * reaches the right op, without a kernel.
 *
 * usage: dispatch_test TAG PROVIDER   (PROVIDER: /abs/path/libvhca)
 *
 * The test enters a private mount namespace (root only) holding a fake
 * /dev/infiniband and a fake sysfs tree (SYSFS_PATH), and plays the kernel
 * itself: it interposes on the libc calls libibverbs and the provider make
 * (this binary is linked -rdynamic, so its definitions come first) and
 * answers those made on a uverbs fd.  Everything else is passed on.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <endian.h>
#include <linux/netlink.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/vhca-abi.h>

#define FAKESYS		"/dev/.fake-sysfs"
#define PAGE		4096u
#define DB_OFFSET	(3 * PAGE)
#define STATUS_OFFSET	(7 * PAGE)

/* Distinctive answers of the fake kernel. */
#define FAKE_NODE_GUID	0x0002c9030000cafeULL
#define FAKE_MAX_QP	1234
#define FAKE_MAX_CQE	56789
#define FAKE_PART_ID	0x7ca1
#define FAKE_CLOCK_KHZ	98765
#define FAKE_CAP_FLAGS	0x2a5a0000u
#define FAKE_GID_TBL	77

/* ---- the fake kernel ---- */

struct fake_map {
	void *addr;
	size_t len;
	int prot;
	int flags;
	off_t offset;
	bool mapped;
};

static struct {
	struct vhca_alloc_ucontext_resp uresp;	/* GET_CONTEXT's answer */
	int get_context_err;	/* inject: GET_CONTEXT fails */
	int status_mmap_err;	/* inject: the status mmap fails */
	unsigned int get_context, query_device, ex_query_device, query_port;
	unsigned int other_cmds, bad_cmds, ioctls, netlink_refused;
	struct fake_map maps[16];
	unsigned int nmaps;
} fk;

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

static bool is_uverbs_fd(int fd)
{
	static const char prefix[] = "/dev/infiniband/uverbs";
	char link[64], target[PATH_MAX];
	ssize_t n;

	if (fd < 0)
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = 0;
	return !strncmp(target, prefix, sizeof(prefix) - 1);
}

static void fill_device_resp(struct ib_uverbs_query_device_resp *r)
{
	memset(r, 0, sizeof(*r));
	r->node_guid = htobe64(FAKE_NODE_GUID);
	r->vendor_part_id = FAKE_PART_ID;
	r->max_qp = FAKE_MAX_QP;
	r->max_cqe = FAKE_MAX_CQE;
	r->phys_port_cnt = 1;
}

static int fake_get_context(size_t len, void *resp, size_t resp_len)
{
	struct {
		struct ib_uverbs_get_context_resp core;
		struct vhca_alloc_ucontext_resp drv;
	} r = {};
	int efd;

	fk.get_context++;
	/* The contract: no driver data in, vhca's response after the core. */
	if (len != sizeof(struct ib_uverbs_cmd_hdr) +
		   sizeof(struct ib_uverbs_get_context) ||
	    resp_len < sizeof(r))
		return EINVAL;
	if (fk.get_context_err)
		return fk.get_context_err;
	efd = eventfd(0, EFD_CLOEXEC);	/* stands in for the async fd */
	if (efd < 0)
		return errno;
	r.core.async_fd = efd;
	r.core.num_comp_vectors = 1;
	r.drv = fk.uresp;
	memcpy(resp, &r, sizeof(r));
	return 0;
}

static int fake_query_port(const struct ib_uverbs_query_port *cmd,
			   void *resp, size_t resp_len)
{
	struct ib_uverbs_query_port_resp r = {};

	fk.query_port++;
	if (resp_len < sizeof(r) || cmd->port_num != 1)
		return EINVAL;
	r.state = IBV_PORT_ACTIVE;
	r.max_mtu = IBV_MTU_4096;
	r.active_mtu = IBV_MTU_1024;
	r.gid_tbl_len = FAKE_GID_TBL;
	r.port_cap_flags = FAKE_CAP_FLAGS;
	r.max_msg_sz = 1u << 30;
	r.pkey_tbl_len = 1;
	r.link_layer = IBV_LINK_LAYER_ETHERNET;
	r.phys_state = 5;
	memcpy(resp, &r, sizeof(r));
	return 0;
}

/* A write() on a uverbs fd: one command, checked like the kernel does. */
static int fake_command(const void *buf, size_t len)
{
	const struct ib_uverbs_cmd_hdr *hdr = buf;
	const struct ib_uverbs_ex_cmd_hdr *ex = (const void *)(hdr + 1);
	size_t resp_len;
	void *resp;

	if (len < sizeof(*hdr))
		goto bad;
	if (hdr->command & IB_USER_VERBS_CMD_FLAG_EXTENDED) {
		struct ib_uverbs_ex_query_device_resp r;

		if (len < sizeof(*hdr) + sizeof(*ex) ||
		    len != sizeof(*hdr) + sizeof(*ex) +
			   (hdr->in_words + ex->provider_in_words) * 8u)
			goto bad;
		resp = (void *)(uintptr_t)ex->response;
		resp_len = (hdr->out_words + ex->provider_out_words) * 8u;
		if ((hdr->command & ~IB_USER_VERBS_CMD_FLAG_EXTENDED) !=
		    IB_USER_VERBS_EX_CMD_QUERY_DEVICE) {
			fk.other_cmds++;
			return EOPNOTSUPP;
		}
		fk.ex_query_device++;
		if (resp_len < sizeof(r.base) + 8)
			return EINVAL;
		memset(&r, 0, sizeof(r));
		fill_device_resp(&r.base);
		r.hca_core_clock = FAKE_CLOCK_KHZ;
		if (resp_len > sizeof(r))
			resp_len = sizeof(r);
		r.response_length = resp_len;
		memcpy(resp, &r, resp_len);
		return 0;
	}

	if (len != hdr->in_words * 4u || len < sizeof(*hdr) + 8)
		goto bad;
	resp = (void *)(uintptr_t)*(const __u64 *)(hdr + 1);
	resp_len = hdr->out_words * 4u;
	switch (hdr->command) {
	case IB_USER_VERBS_CMD_GET_CONTEXT:
		return fake_get_context(len, resp, resp_len);
	case IB_USER_VERBS_CMD_QUERY_DEVICE:
		fk.query_device++;
		if (resp_len < sizeof(struct ib_uverbs_query_device_resp))
			return EINVAL;
		fill_device_resp(resp);
		return 0;
	case IB_USER_VERBS_CMD_QUERY_PORT:
		if (len < sizeof(*hdr) + sizeof(struct ib_uverbs_query_port))
			goto bad;
		return fake_query_port((const void *)(hdr + 1), resp, resp_len);
	default:
		fk.other_cmds++;
		return EOPNOTSUPP;
	}
bad:
	fk.bad_cmds++;
	return EINVAL;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	int err;

	if (!is_uverbs_fd(fd))
		return NEXT(write)(fd, buf, len);
	err = fake_command(buf, len);
	if (err) {
		errno = err;
		return -1;
	}
	return len;
}

/* No ioctl() framework: libibverbs falls back to write(). */
int ioctl(int fd, unsigned long request, ...)
{
	va_list ap;
	void *arg;

	va_start(ap, request);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!is_uverbs_fd(fd))
		return NEXT(ioctl)(fd, request, arg);
	fk.ioctls++;
	errno = ENOTTY;
	return -1;
}

/* The kernel's mmap rules for the two pages, served from anonymous memory. */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t offset)
{
	struct fake_map *m;
	void *p;

	if (!is_uverbs_fd(fd))
		return NEXT(mmap)(addr, len, prot, flags, fd, offset);

	errno = EINVAL;
	if ((flags & MAP_TYPE) != MAP_SHARED ||
	    fk.nmaps == ARRAY_SIZE(fk.maps))
		return MAP_FAILED;
	if (offset == (off_t)fk.uresp.db_mmap_offset) {
		if (len != fk.uresp.db_size ||
		    prot != (PROT_READ | PROT_WRITE))
			return MAP_FAILED;
	} else if (offset == (off_t)fk.uresp.status_mmap_offset) {
		if (len != fk.uresp.status_size)
			return MAP_FAILED;
		errno = EPERM;
		if (prot & PROT_WRITE)
			return MAP_FAILED;
		errno = fk.status_mmap_err;
		if (errno)
			return MAP_FAILED;
	} else {
		return MAP_FAILED;
	}
	p = NEXT(mmap)(addr, len, prot, flags | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return p;
	m = &fk.maps[fk.nmaps++];
	*m = (struct fake_map){ p, len, prot, flags, offset, true };
	return p;
}

int munmap(void *addr, size_t len)
{
	unsigned int i;

	for (i = 0; i < fk.nmaps; i++)
		if (fk.maps[i].mapped && fk.maps[i].addr == addr &&
		    fk.maps[i].len == len)
			fk.maps[i].mapped = false;
	return NEXT(munmap)(addr, len);
}

/* RDMA netlink refused: libibverbs must take its sysfs path. */
int socket(int domain, int type, int protocol)
{
	if (domain == AF_NETLINK && protocol == NETLINK_RDMA) {
		fk.netlink_refused++;
		errno = EPROTONOSUPPORT;
		return -1;
	}
	return NEXT(socket)(domain, type, protocol);
}

/* ---- the fake system ---- */

static void die(const char *what)
{
	printf("FAIL: dispatch setup: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void mkdirs(const char *path)
{
	char buf[PATH_MAX], *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			die(buf);
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		die(buf);
}

static void put(const char *dir, const char *name, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	FILE *f;

	mkdirs(dir);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		die(path);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

/*
 * uverbsN for ib device @ibdev with uverbs ABI @abi, its parent device
 * being @parent (under FAKESYS/devices/) with modalias @modalias.  Like the
 * kernel, both class entries link to the parent.
 */
static void fake_device(int n, const char *ibdev, int abi,
			const char *parent, const char *modalias)
{
	char uv[PATH_MAX], ib[PATH_MAX], dev[PATH_MAX], link[PATH_MAX];

	snprintf(uv, sizeof(uv), FAKESYS "/class/infiniband_verbs/uverbs%d", n);
	snprintf(ib, sizeof(ib), FAKESYS "/class/infiniband/%s", ibdev);
	snprintf(dev, sizeof(dev), FAKESYS "/devices/%s", parent);
	snprintf(link, sizeof(link), "../../../devices/%s", parent);

	put(dev, "modalias", "%s", modalias);
	put(uv, "ibdev", "%s", ibdev);
	put(uv, "abi_version", "%d", abi);
	put(uv, "dev", "1:3");
	put(ib, "node_type", "1: CA");
	put(ib, "node_guid", "0002:c903:0000:cafe");
	if (symlink(link, strcat(uv, "/device")) ||
	    symlink(link, strcat(ib, "/device")))
		die("symlink");

	snprintf(uv, sizeof(uv), "/dev/infiniband/uverbs%d", n);
	if (mknod(uv, S_IFCHR | 0666, makedev(1, 3)))
		die(uv);
}

/*
 * A private mount namespace with a tmpfs /dev holding the usual nodes, the
 * uverbs nodes and the fake sysfs, and with no installed provider config.
 */
static void enter_fake_system(const char *provider)
{
	static const struct { const char *name; int minor; } nodes[] = {
		{ "null", 3 }, { "zero", 5 }, { "full", 7 },
		{ "random", 8 }, { "urandom", 9 },
	};
	char path[64];
	size_t i;

	if (unshare(CLONE_NEWNS))
		die("unshare");
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("fakedev", "/dev", "tmpfs", 0, "mode=755"))
		die("mount /dev");
	umask(0);
	for (i = 0; i < ARRAY_SIZE(nodes); i++) {
		snprintf(path, sizeof(path), "/dev/%s", nodes[i].name);
		if (mknod(path, S_IFCHR | 0666, makedev(1, nodes[i].minor)))
			die(path);
	}
	if (!access("/etc/libibverbs.d", F_OK) &&
	    mount("noconf", "/etc/libibverbs.d", "tmpfs", 0, "mode=755"))
		die("mount /etc/libibverbs.d");
	mkdirs("/dev/infiniband");

	put(FAKESYS "/class/infiniband_verbs", "abi_version", "6");
	fake_device(0, "vhca0", VHCA_UVERBS_ABI_VERSION, "platform/vhca.0",
		    "platform:vhca");
	fake_device(1, "vhca1", VHCA_UVERBS_ABI_VERSION + 1, "platform/vhca.0",
		    "platform:vhca");
	fake_device(2, "vhca2", VHCA_UVERBS_ABI_VERSION,
		    "pci0000:00/0000:00:03.0",
		    "pci:v00008086d00001572sv00008086sd00000000bc02sc00i00");
	fake_device(3, "foo0", VHCA_UVERBS_ABI_VERSION, "platform/vhca.0",
		    "platform:vhca");

	if (setenv("SYSFS_PATH", FAKESYS, 1) ||
	    setenv("RDMAV_DRIVERS", provider, 1))
		die("setenv");
	unsetenv("IBV_DRIVERS");
	unsetenv("VERBS_LOG_LEVEL");
}

/* ---- the checks ---- */

static const char *tag;
static int failures;

static void check(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%s: %s: dispatch: %s", ok ? "PASS" : "FAIL", tag, name);
	if (!ok) {
		printf(": ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		failures++;
	}
	printf("\n");
	fflush(stdout);
}

/* Open fds whose link target starts with @prefix. */
static int count_fds(const char *prefix)
{
	char target[PATH_MAX];
	struct dirent *d;
	int n = 0;
	ssize_t len;
	DIR *dir;

	dir = opendir("/proc/self/fd");
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		len = readlinkat(dirfd(dir), d->d_name, target,
				 sizeof(target) - 1);
		if (len < 0)
			continue;
		target[len] = 0;
		n += !strncmp(target, prefix, strlen(prefix));
	}
	closedir(dir);
	return n;
}

static unsigned int live_maps(void)
{
	unsigned int i, n = 0;

	for (i = 0; i < fk.nmaps; i++)
		n += fk.maps[i].mapped;
	return n;
}

static const struct fake_map *map_at(unsigned int from, off_t offset)
{
	unsigned int i;

	for (i = from; i < fk.nmaps; i++)
		if (fk.maps[i].offset == offset)
			return &fk.maps[i];
	return NULL;
}

/* Nothing of a context is left: no uverbs or async fd, no mapping. */
static void check_released(const char *name)
{
	int uverbs = count_fds("/dev/infiniband/uverbs");
	int events = count_fds("anon_inode:[eventfd]");

	check(!uverbs && !events && !live_maps(), name,
	      "%d uverbs fds, %d async fds, %u mappings left", uverbs, events,
	      live_maps());
}

static struct ibv_device **list_devices(int *num, char *err, size_t err_len)
{
	struct ibv_device **list;
	int saved, memfd;
	ssize_t n;

	/* libibverbs warns on stderr: capture it. */
	memfd = memfd_create("stderr", 0);
	saved = dup(2);
	if (memfd < 0 || saved < 0 || dup2(memfd, 2) < 0)
		die("capture stderr");
	list = ibv_get_device_list(num);
	dup2(saved, 2);
	close(saved);
	n = pread(memfd, err, err_len - 1, 0);
	err[n > 0 ? n : 0] = 0;
	close(memfd);
	return list;
}

static struct ibv_device *find(struct ibv_device **list, const char *name)
{
	for (; list && *list; list++)
		if (!strcmp(ibv_get_device_name(*list), name))
			return *list;
	return NULL;
}

static void test_list(struct ibv_device **list, int num, const char *err)
{
	char warning[128];

	check(fk.netlink_refused > 0, "RDMA netlink refused, sysfs used",
	      "libibverbs never tried netlink");
	check(list && num == 2, "two devices listed", "%d listed", num);
	check(find(list, "vhca0"), "vhca0 listed (modalias platform:vhca)",
	      "missing");
	check(find(list, "foo0"), "renamed device foo0 listed", "missing");
	check(!find(list, "vhca1"), "ABI mismatch hides vhca1", "listed");
	snprintf(warning, sizeof(warning),
		 "vhca does not support the kernel ABI of %d "
		 "(supports %d to %d)",
		 VHCA_UVERBS_ABI_VERSION + 1, VHCA_UVERBS_ABI_VERSION,
		 VHCA_UVERBS_ABI_VERSION);
	check(strstr(err, warning) && strstr(err, "vhca1"),
	      "ABI mismatch warned by libibverbs", "stderr was \"%s\"", err);
	check(!find(list, "vhca2"), "pci modalias not claimed (vhca2)",
	      "listed");
}

static void test_open(struct ibv_device *dev)
{
	struct ibv_device_attr_ex attr_ex;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	const struct fake_map *db, *st;
	unsigned int first = fk.nmaps;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int ret;

	ctx = ibv_open_device(dev);
	check(ctx, "open vhca0", "errno %d", errno);
	if (!ctx)
		return;
	check(fk.get_context == 1 && fk.ioctls > 0,
	      "open: GET_CONTEXT by write() after ioctl() ENOTTY",
	      "%u GET_CONTEXT, %u ioctls", fk.get_context, fk.ioctls);

	db = map_at(first, DB_OFFSET);
	st = map_at(first, STATUS_OFFSET);
	check(db && db->mapped && db->len == PAGE &&
	      db->prot == (PROT_READ | PROT_WRITE) &&
	      (db->flags & MAP_TYPE) == MAP_SHARED,
	      "open: doorbell page mapped shared, read-write", "%s",
	      db ? "wrong length, prot or flags" : "not mapped");
	check(st && st->mapped && st->len == PAGE && st->prot == PROT_READ &&
	      (st->flags & MAP_TYPE) == MAP_SHARED,
	      "open: status page mapped shared, read-only", "%s",
	      st ? "wrong length, prot or flags" : "not mapped");

	memset(&attr, 0, sizeof(attr));
	ret = ibv_query_device(ctx, &attr);
	check(!ret && fk.query_device == 1 && attr.max_qp == FAKE_MAX_QP &&
	      attr.max_cqe == FAKE_MAX_CQE &&
	      attr.vendor_part_id == FAKE_PART_ID &&
	      attr.node_guid == htobe64(FAKE_NODE_GUID) &&
	      attr.phys_port_cnt == 1,
	      "ibv_query_device reaches QUERY_DEVICE",
	      "ret %d, %u commands, max_qp %d", ret, fk.query_device,
	      attr.max_qp);

	ret = ibv_query_device_ex(ctx, NULL, &attr_ex);
	check(!ret && fk.ex_query_device == 1 &&
	      attr_ex.orig_attr.max_qp == FAKE_MAX_QP &&
	      attr_ex.hca_core_clock == FAKE_CLOCK_KHZ,
	      "ibv_query_device_ex reaches EX_QUERY_DEVICE",
	      "ret %d, %u commands, clock %lu", ret, fk.ex_query_device,
	      (unsigned long)attr_ex.hca_core_clock);

	ret = ibv_query_port(ctx, 1, &port);
	check(!ret && fk.query_port == 1 && port.state == IBV_PORT_ACTIVE &&
	      port.port_cap_flags == FAKE_CAP_FLAGS &&
	      port.gid_tbl_len == FAKE_GID_TBL &&
	      port.active_mtu == IBV_MTU_1024 &&
	      port.link_layer == IBV_LINK_LAYER_ETHERNET,
	      "ibv_query_port reaches QUERY_PORT",
	      "ret %d, %u commands, cap_flags %#x", ret, fk.query_port,
	      port.port_cap_flags);
	ret = ibv_query_port(ctx, 2, &port);
	check(ret == EINVAL, "ibv_query_port passes the kernel's error",
	      "ret %d", ret);

	errno = 0;
	pd = ibv_alloc_pd(ctx);
	check(!pd && errno == EOPNOTSUPP, "ibv_alloc_pd: EOPNOTSUPP",
	      "pd %p, errno %d", (void *)pd, errno);
	errno = 0;
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	check(!cq && errno == EOPNOTSUPP, "ibv_create_cq: EOPNOTSUPP",
	      "cq %p, errno %d", (void *)cq, errno);
	check(!fk.other_cmds && !fk.bad_cmds,
	      "no unexpected or malformed command", "%u unexpected, %u bad",
	      fk.other_cmds, fk.bad_cmds);

	check(!ibv_close_device(ctx), "close vhca0", "failed");
	check(!db->mapped && !st->mapped, "close: both pages unmapped",
	      "doorbell %s, status %s", db->mapped ? "mapped" : "unmapped",
	      st->mapped ? "mapped" : "unmapped");
	check_released("close: nothing left");
}

static void test_renamed(struct ibv_device *dev)
{
	struct ibv_port_attr port;
	struct ibv_context *ctx;

	if (!dev)
		return;
	ctx = ibv_open_device(dev);
	check(ctx && !ibv_query_port(ctx, 1, &port) &&
	      port.gid_tbl_len == FAKE_GID_TBL,
	      "renamed foo0 opens and answers", "errno %d", errno);
	if (ctx)
		ibv_close_device(ctx);
	check_released("foo0 closed: nothing left");
}

/* Opening fails with @err and leaves nothing behind. */
static void expect_open_fails(struct ibv_device *dev, int err,
			      const char *name)
{
	struct ibv_context *ctx;
	char what[128];

	errno = 0;
	ctx = ibv_open_device(dev);
	check(!ctx && errno == err, name, "ctx %p, errno %d", (void *)ctx,
	      errno);
	if (ctx)
		ibv_close_device(ctx);
	snprintf(what, sizeof(what), "%s: nothing left", name);
	check_released(what);
}

static void test_open_failures(struct ibv_device *dev)
{
	const struct vhca_alloc_ucontext_resp good = fk.uresp;

	fk.get_context_err = ENOMEM;
	expect_open_fails(dev, ENOMEM, "GET_CONTEXT fails: open fails");
	fk.get_context_err = 0;

	fk.uresp.db_size = 0;
	expect_open_fails(dev, EPROTO, "empty doorbell page refused");
	fk.uresp = good;
	fk.uresp.status_size = PAGE / 2;
	expect_open_fails(dev, EPROTO, "partial status page refused");
	fk.uresp = good;

	fk.status_mmap_err = ENOMEM;
	expect_open_fails(dev, ENOMEM, "status mmap fails: open fails");
	fk.status_mmap_err = 0;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_device *vhca0;
	char err[4096];
	int num = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s TAG /abs/path/libvhca\n", argv[0]);
		return 2;
	}
	tag = argv[1];
	if (geteuid()) {
		printf("SKIP: %s: dispatch: needs root\n", tag);
		return 0;
	}
	enter_fake_system(argv[2]);
	fk.uresp = (struct vhca_alloc_ucontext_resp){
		.db_mmap_offset = DB_OFFSET, .db_size = PAGE,
		.status_mmap_offset = STATUS_OFFSET, .status_size = PAGE,
	};

	list = list_devices(&num, err, sizeof(err));
	test_list(list, num, err);
	vhca0 = find(list, "vhca0");
	if (vhca0) {
		test_open(vhca0);
		test_open_failures(vhca0);
	}
	test_renamed(find(list, "foo0"));
	if (list)
		ibv_free_device_list(list);
	return failures ? 1 : 0;
}
