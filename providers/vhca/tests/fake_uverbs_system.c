// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The dispatch test's fake system (fake_uverbs.h): a mount namespace in
 * which libibverbs finds the devices.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "fake_uverbs.h"
#include "harness.h"

#define FAKESYS		"/dev/.fake-sysfs"

static void die(const char *what)
{
	harness_fatal("%s: %s", what, strerror(errno));
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
void enter_fake_system(const char *provider)
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
