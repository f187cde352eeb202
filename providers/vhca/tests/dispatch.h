/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The dispatch test's fixtures and helpers (dispatch.c), shared by its
 * tests (dispatch_*_test.c).
 *
 * Every fixture holds a struct objs: the device list as libibverbs gives
 * it in the fake system, and the verbs objects its set-up made, each level
 * on the one before:
 *
 *	devices	the list, and vhca0 and foo0 in it (NULL when not listed)
 *	ctx	vhca0 opened (fk.cmds counted from here)
 *	pd	a PD, and an MR of buf
 *	cq	a CQ of 100 CQEs (127 granted)
 *	rc	an RC QP on the CQ (10 and 20 WRs, 3 and 6 SGEs, 40 bytes
 *		inline), in INIT
 *	rts	that QP in RTS
 *
 * Each test's tear-down destroys what its struct objs still holds and
 * closes the context, requiring what the verbs_lifecycle test checks
 * (objs_release()): every destroy reaches its command, no unexpected or
 * malformed command was made, nothing is left.
 */
#ifndef VHCA_DISPATCH_H
#define VHCA_DISPATCH_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "fake_uverbs.h"
#include "harness.h"

/* The rdma-core release the provider under test was built for. */
extern int provider_release;

struct objs {
	struct ibv_device **list;
	int num;
	char err[4096];		/* what libibverbs said on stderr */
	struct ibv_device *vhca0, *foo0;
	unsigned int maps;	/* fk.nmaps before the context was opened */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct fake_cq *fcq;
	struct ibv_qp *qp;
	struct fake_qp *fqp;
	struct ibv_qp_init_attr qp_attr;
	char buf[256];
};

FIXTURE(devices) { struct objs o; };
FIXTURE(ctx) { struct objs o; };
FIXTURE(pd) { struct objs o; };
FIXTURE(cq) { struct objs o; };
FIXTURE(rc) { struct objs o; };
FIXTURE(rts) { struct objs o; };

/* Opens vhca0 into @o, reported by @step; whether it opened. */
bool objs_open(struct objs *o, check_fn *step);

/* Makes the rc fixture's objects in @o's context; whether it did. */
bool objs_rc(struct objs *o);

/*
 * Destroys what @o holds (QP, CQ, MR, PD), closes its context, each step
 * reported by @step, and then that nothing of the context is left.
 */
void objs_release(struct objs *o, check_fn *step);

/* The device of @list named @name, or NULL. */
struct ibv_device *find_device(struct ibv_device **list, const char *name);

bool modify_state(struct ibv_qp *qp, enum ibv_qp_state state);

/* Every write() and ioctl() on a uverbs fd so far. */
unsigned int syscalls(void);

/* Nothing of a context is left: no uverbs or async fd, no mapping. */
void check_released(check_fn *step, const char *name);

/* @r is mapped shared, whole, with exactly @prot. */
bool mapped_as(const struct region *r, int prot);

/* @r's newest mapping is gone. */
bool unmapped(const struct region *r);

const struct vhca_send_wqe *sq_slot(const struct fake_qp *qp, uint32_t index);
const struct vhca_recv_wqe *rq_slot(const struct fake_wq *wq, uint32_t index);
const struct vhca_sge *wqe_sges(const void *wqe, size_t hdr);

#endif /* VHCA_DISPATCH_H */
