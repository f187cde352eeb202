// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The dispatch test's devices: which ones libibverbs lists (modalias and
 * uverbs ABI), a context's set-up and tear-down, the open refused, and
 * a context's whole life of verbs objects.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "dispatch.h"

static const struct fake_map *map_at(unsigned int from, off_t offset)
{
	unsigned int i;

	for (i = from; i < fk.nmaps; i++)
		if (fk.maps[i].offset == offset)
			return &fk.maps[i];
	return NULL;
}

TEST_F(devices, list)
{
	struct ibv_device **list = self->o.list;
	char warning[128];

	check(fk.netlink_refused > 0, "RDMA netlink refused, sysfs used",
	      "libibverbs never tried netlink");
	check(list && self->o.num == 2, "two devices listed", "%d listed",
	      self->o.num);
	check(self->o.vhca0, "vhca0 listed (modalias platform:vhca)",
	      "missing");
	check(self->o.foo0, "renamed device foo0 listed", "missing");
	check(!find_device(list, "vhca1"), "ABI mismatch hides vhca1",
	      "listed");
	snprintf(warning, sizeof(warning),
		 "vhca does not support the kernel ABI of %d "
		 "(supports %d to %d)",
		 VHCA_UVERBS_ABI_VERSION + 1, VHCA_UVERBS_ABI_VERSION,
		 VHCA_UVERBS_ABI_VERSION);
	check(strstr(self->o.err, warning) && strstr(self->o.err, "vhca1"),
	      "ABI mismatch warned by libibverbs", "stderr was \"%s\"",
	      self->o.err);
	check(!find_device(list, "vhca2"), "pci modalias not claimed (vhca2)",
	      "listed");
}

TEST_F(devices, open)
{
	struct ibv_device_attr_ex attr_ex;
	struct ibv_device_attr attr;
	struct ibv_port_attr port;
	const struct fake_map *db, *st;
	unsigned int first = fk.nmaps;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mw *mw;
	int ret;

	if (!require(self->o.vhca0, "vhca0 listed", "missing"))
		return;
	ctx = ibv_open_device(self->o.vhca0);
	check(ctx, "open vhca0", "errno %d", errno);
	if (!ctx)
		return;
	check(fk.get_context == 1 && fk.ioctls > 0,
	      "open: GET_CONTEXT by write() after ioctl() ENOTTY",
	      "%u GET_CONTEXT, %u ioctls", fk.get_context, fk.ioctls);

	db = map_at(first, DB_OFFSET);
	st = map_at(first, STATUS_OFFSET);
	check(db && db->mapped && db->len == AREA_SIZE &&
	      db->prot == (PROT_READ | PROT_WRITE) &&
	      (db->flags & MAP_TYPE) == MAP_SHARED,
	      "open: doorbell area (16 KiB) mapped shared, read-write", "%s",
	      db ? "wrong length, prot or flags" : "not mapped");
	check(st && st->mapped && st->len == AREA_SIZE &&
	      st->prot == PROT_READ && (st->flags & MAP_TYPE) == MAP_SHARED,
	      "open: status area (16 KiB) mapped shared, read-only", "%s",
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

	pd = ibv_alloc_pd(ctx);
	mw = pd ? ibv_alloc_mw(pd, IBV_MW_TYPE_2) : NULL;
	check(mw && fk.cmds[IB_USER_VERBS_CMD_ALLOC_MW] == 1 &&
	      mw->rkey == FAKE_MW_RKEY && mw->handle == FAKE_MW_HANDLE &&
	      mw->type == IBV_MW_TYPE_2 && mw->pd == pd,
	      "ibv_alloc_mw reaches ALLOC_MW", "pd %p, mw %p, errno %d",
	      (void *)pd, (void *)mw, errno);
	if (mw)
		check(!ibv_dealloc_mw(mw) && fk.destroyed == FAKE_MW_HANDLE,
		      "ibv_dealloc_mw reaches DEALLOC_MW", "destroyed %#x",
		      fk.destroyed);
	if (pd)
		ibv_dealloc_pd(pd);
	check(!fk.other_cmds && !fk.bad_cmds,
	      "no unexpected or malformed command", "%u unexpected, %u bad",
	      fk.other_cmds, fk.bad_cmds);

	check(!ibv_close_device(ctx), "close vhca0", "failed");
	check(!db->mapped && !st->mapped, "close: both areas unmapped",
	      "doorbell %s, status %s", db->mapped ? "mapped" : "unmapped",
	      st->mapped ? "mapped" : "unmapped");
	check_released(check, "close: nothing left");
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
	check_released(check, what);
}

TEST_F(devices, open_refused)
{
	const struct vhca_alloc_ucontext_resp good = fk.uresp;
	struct ibv_device *dev = self->o.vhca0;

	if (!require(dev, "vhca0 listed", "missing"))
		return;
	fk.get_context_err = ENOMEM;
	expect_open_fails(dev, ENOMEM, "GET_CONTEXT fails: open fails");
	fk.get_context_err = 0;

	fk.uresp.db_size = 0;
	expect_open_fails(dev, EPROTO, "empty doorbell area refused");
	fk.uresp = good;
	fk.uresp.status_size = AREA_SIZE - 8;
	expect_open_fails(dev, EPROTO, "partial status record refused");
	fk.uresp = good;
	fk.uresp.db_size = sizeof(struct vhca_db_rec);
	expect_open_fails(dev, EPROTO, "area without object records refused");
	fk.uresp = good;
	fk.uresp.status_mmap_offset = STATUS_OFFSET + 64;
	expect_open_fails(dev, EPROTO, "unaligned status offset refused");
	fk.uresp = good;

	fk.status_mmap_err = ENOMEM;
	expect_open_fails(dev, ENOMEM, "status mmap fails: open fails");
	fk.status_mmap_err = 0;
}

TEST_F(devices, renamed)
{
	struct ibv_port_attr port;
	struct ibv_context *ctx;

	if (!require(self->o.foo0, "foo0 listed", "missing"))
		return;
	ctx = ibv_open_device(self->o.foo0);
	check(ctx && !ibv_query_port(ctx, 1, &port) &&
	      port.gid_tbl_len == FAKE_GID_TBL,
	      "renamed foo0 opens and answers", "errno %d", errno);
	if (ctx)
		ibv_close_device(ctx);
	check_released(check, "foo0 closed: nothing left");
}

/*
 * The rc fixture's objects made in a context opened, then each destroy
 * checked and the context closed, as every test's tear-down requires.
 */
TEST_F(devices, verbs_lifecycle)
{
	struct objs *o = &self->o;

	if (objs_open(o, check) && objs_rc(o))
		objs_release(o, check);
}
