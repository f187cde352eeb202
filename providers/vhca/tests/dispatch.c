// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The dispatch test's fixtures and helpers (dispatch.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dispatch.h"

/* The access flags of the fixtures' MR. */
#define MR_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

int provider_release = VHCA_RDMA_CORE;

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

void check_released(check_fn *step, const char *name)
{
	int uverbs = count_fds("/dev/infiniband/uverbs");
	int events = count_fds("anon_inode:[eventfd]");

	step(!uverbs && !events && !live_maps(), name,
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
		harness_fatal("capture stderr: %s", strerror(errno));
	list = ibv_get_device_list(num);
	dup2(saved, 2);
	close(saved);
	n = pread(memfd, err, err_len - 1, 0);
	err[n > 0 ? n : 0] = 0;
	close(memfd);
	return list;
}

struct ibv_device *find_device(struct ibv_device **list, const char *name)
{
	for (; list && *list; list++)
		if (!strcmp(ibv_get_device_name(*list), name))
			return *list;
	return NULL;
}

bool objs_open(struct objs *o, check_fn *step)
{
	o->maps = fk.nmaps;
	o->ctx = o->vhca0 ? ibv_open_device(o->vhca0) : NULL;
	if (!step(o->ctx, "open vhca0 for the verbs", "errno %d%s", errno,
		  o->vhca0 ? "" : " (vhca0 not listed)"))
		return false;
	memset(fk.cmds, 0, sizeof(fk.cmds));
	return true;
}

void objs_release(struct objs *o, check_fn *step)
{
	struct region *cq_ring, *sq_ring, *rq_ring;

	if (o->fqp) {
		sq_ring = o->fqp->sq.ring;
		rq_ring = o->fqp->rq.ring;
		step(!ibv_destroy_qp(o->qp) && unmapped(sq_ring) &&
		     unmapped(rq_ring), "destroy the RC QP, rings unmapped",
		     "failed");
	}
	if (o->fcq) {
		cq_ring = o->fcq->ring;
		step(!ibv_destroy_cq(o->cq) && fk.destroyed == o->fcq->handle &&
		     unmapped(cq_ring),
		     "ibv_destroy_cq reaches DESTROY_CQ, ring unmapped",
		     "failed");
	}
	if (o->mr)
		step(!ibv_dereg_mr(o->mr) && fk.destroyed == FAKE_MR_HANDLE &&
		     fk.cmds[IB_USER_VERBS_CMD_DEREG_MR] == 1,
		     "ibv_dereg_mr reaches DEREG_MR", "failed");
	if (o->pd)
		step(!ibv_dealloc_pd(o->pd) &&
		     fk.destroyed == FAKE_PD_HANDLE &&
		     fk.cmds[IB_USER_VERBS_CMD_DEALLOC_PD] == 1,
		     "ibv_dealloc_pd reaches DEALLOC_PD", "failed");
	step(!fk.other_cmds && !fk.bad_cmds,
	     "verbs: no unexpected or malformed command",
	     "%u unexpected, %u bad", fk.other_cmds, fk.bad_cmds);
	step(!ibv_close_device(o->ctx), "close vhca0 after the verbs",
	     "failed");
	step(fk.nmaps > o->maps, "verbs: mappings were made", "none");
	check_released(step, "verbs: nothing left");
	o->qp = NULL;
	o->fqp = NULL;
	o->cq = NULL;
	o->fcq = NULL;
	o->mr = NULL;
	o->pd = NULL;
	o->ctx = NULL;
}

bool modify_state(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr = { .qp_state = state };

	return !ibv_modify_qp(qp, &attr, IBV_QP_STATE);
}

/* ---- the fixtures ---- */

static void devices_setup(struct objs *o)
{
	o->list = list_devices(&o->num, o->err, sizeof(o->err));
	o->vhca0 = find_device(o->list, "vhca0");
	o->foo0 = find_device(o->list, "foo0");
}

static bool objs_pd(struct objs *o)
{
	o->pd = ibv_alloc_pd(o->ctx);
	o->mr = o->pd ? ibv_reg_mr(o->pd, o->buf, sizeof(o->buf),
				   MR_ACCESS) : NULL;
	return require(o->mr, "PD and MR", "errno %d", errno);
}

static bool objs_cq(struct objs *o)
{
	if (!objs_pd(o))
		return false;
	o->cq = ibv_create_cq(o->ctx, 100, NULL, NULL, 0);
	o->fcq = o->cq ? find_cq(o->cq->handle) : NULL;
	return require(o->fcq, "CQ", "errno %d", errno);
}

bool objs_rc(struct objs *o)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	int ret;

	if (!objs_cq(o))
		return false;
	o->qp_attr = (struct ibv_qp_init_attr){
		.send_cq = o->cq, .recv_cq = o->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 10, .max_recv_wr = 20,
			 .max_send_sge = 3, .max_recv_sge = 6,
			 .max_inline_data = 40 },
	};
	o->qp = ibv_create_qp(o->pd, &o->qp_attr);
	o->fqp = o->qp ? find_qp(o->qp->handle) : NULL;
	if (!require(o->fqp, "RC QP", "errno %d", errno))
		return false;
	ret = ibv_modify_qp(o->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	return require(!ret, "RC QP to INIT", "ret %d", ret);
}

/* The set-up of the fixtures but devices: vhca0 opened in @o. */
static bool ctx_setup(struct objs *o)
{
	devices_setup(o);
	return objs_open(o, require);
}

/* What every fixture's tear-down does. */
static void objs_teardown(struct objs *o)
{
	if (o->ctx)
		objs_release(o, require);
	if (o->list)
		ibv_free_device_list(o->list);
}

FIXTURE_SETUP(devices)
{
	devices_setup(&self->o);
}

FIXTURE_TEARDOWN(devices)
{
	objs_teardown(&self->o);
}

FIXTURE_SETUP(ctx)
{
	ctx_setup(&self->o);
}

FIXTURE_TEARDOWN(ctx)
{
	objs_teardown(&self->o);
}

FIXTURE_SETUP(pd)
{
	if (ctx_setup(&self->o))
		objs_pd(&self->o);
}

FIXTURE_TEARDOWN(pd)
{
	objs_teardown(&self->o);
}

FIXTURE_SETUP(cq)
{
	if (ctx_setup(&self->o))
		objs_cq(&self->o);
}

FIXTURE_TEARDOWN(cq)
{
	objs_teardown(&self->o);
}

FIXTURE_SETUP(rc)
{
	if (ctx_setup(&self->o))
		objs_rc(&self->o);
}

FIXTURE_TEARDOWN(rc)
{
	objs_teardown(&self->o);
}

FIXTURE_SETUP(rts)
{
	if (ctx_setup(&self->o) && objs_rc(&self->o))
		require(modify_state(self->o.qp, IBV_QPS_RTR) &&
			modify_state(self->o.qp, IBV_QPS_RTS), "RC QP to RTS",
			"errno %d", errno);
}

FIXTURE_TEARDOWN(rts)
{
	objs_teardown(&self->o);
}

/* ---- the fake kernel's records, as the tests read them ---- */

unsigned int syscalls(void)
{
	return fk.writes + fk.ioctls;
}

/* The newest mapping of @r, if any. */
static const struct fake_map *map_of(const struct region *r)
{
	unsigned int i;

	for (i = fk.nmaps; r && i-- > 0;)
		if (fk.maps[i].offset == r->offset)
			return &fk.maps[i];
	return NULL;
}

bool mapped_as(const struct region *r, int prot)
{
	const struct fake_map *m = map_of(r);

	return m && m->mapped && m->len == r->size && m->prot == prot &&
	       (m->flags & MAP_TYPE) == MAP_SHARED;
}

bool unmapped(const struct region *r)
{
	const struct fake_map *m = map_of(r);

	return m && !m->mapped;
}

const struct vhca_send_wqe *sq_slot(const struct fake_qp *qp, uint32_t index)
{
	return (const void *)((char *)qp->sq.ring->kview +
			      (index & (qp->sq.count - 1)) * qp->sq.stride);
}

const struct vhca_recv_wqe *rq_slot(const struct fake_wq *wq, uint32_t index)
{
	return (const void *)((char *)wq->ring->kview +
			      (index & (wq->count - 1)) * wq->stride);
}

const struct vhca_sge *wqe_sges(const void *wqe, size_t hdr)
{
	return (const void *)((const char *)wqe + hdr);
}
