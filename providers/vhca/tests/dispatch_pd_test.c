// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The dispatch test's parent domains: the commands of objects created in
 * one carry its PD's handle; the provider's memory of its QPs, CQs and
 * SRQs comes from its allocator (or malloc() when that answers
 * IBV_ALLOCATOR_USE_DEFAULT) and goes back to it; a parent domain with
 * objects, and a PD with parent domains, cannot be deallocated.
 */
#include <errno.h>
#include <stdlib.h>

#include "dispatch.h"

/* The resource types of vhca-provider(7). */
enum { RES_QP = 1, RES_CQ = 2, RES_SRQ = 3, RES_N };

/* What the allocator of the test's parent domain saw. */
struct pd_counts {
	bool use_default;	/* answer IBV_ALLOCATOR_USE_DEFAULT */
	bool bad_pd;		/* a call named another PD */
	int allocs[RES_N], frees[RES_N], others;
	void *last[RES_N];	/* the last memory given out, per type */
	struct ibv_pd *dom;
};

static void *count_alloc(struct ibv_pd *pd, void *pd_context, size_t size,
			 size_t alignment, uint64_t type)
{
	struct pd_counts *c = pd_context;
	void *p;

	c->bad_pd |= pd != c->dom;
	if (type < RES_QP || type >= RES_N) {
		c->others++;
		return NULL;
	}
	if (c->use_default)
		return IBV_ALLOCATOR_USE_DEFAULT;
	if (posix_memalign(&p, alignment, size))
		return NULL;
	c->allocs[type]++;
	c->last[type] = p;
	return p;
}

static void count_free(struct ibv_pd *pd, void *pd_context, void *ptr,
		       uint64_t type)
{
	struct pd_counts *c = pd_context;

	c->bad_pd |= pd != c->dom;
	if (type < RES_QP || type >= RES_N)
		c->others++;
	else
		c->frees[type]++;
	free(ptr);
}

/*
 * A CQ, a QP on it and an SRQ in parent domain @dom; whether all three
 * were created (and then destroyed again).
 */
static bool pd_objects(struct objs *o, struct ibv_pd *dom,
		       struct pd_counts *c, const char *how)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 8, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD, .parent_domain = dom,
	};
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_cq_ex *cqx;
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	int busy_dom, busy_pd;
	bool ok;

	cqx = ibv_create_cq_ex(o->ctx, &ca);
	srq = cqx ? ibv_create_srq(dom, &sa) : NULL;
	qa.send_cq = qa.recv_cq = cqx ? ibv_cq_ex_to_cq(cqx) : NULL;
	qp = srq ? ibv_create_qp(dom, &qa) : NULL;
	ok = qp && fk.create_qp.pd_handle == o->pd->handle &&
	     fk.create_srq.pd_handle == o->pd->handle && qp->pd == dom;
	check(ok, how, "cq %p, srq %p, qp %p, errno %d", (void *)cqx,
	      (void *)srq, (void *)qp, errno);

	busy_dom = ibv_dealloc_pd(dom);
	busy_pd = ibv_dealloc_pd(o->pd);
	check(busy_dom == EBUSY && busy_pd == EBUSY,
	      "parent domain with objects, PD under it: dealloc EBUSY",
	      "%d, %d", busy_dom, busy_pd);
	if (!c->use_default)
		check(c->allocs[RES_QP] == 1 && c->allocs[RES_CQ] == 1 &&
		      c->allocs[RES_SRQ] == 1 && !c->others && !c->bad_pd &&
		      (void *)qp == c->last[RES_QP] &&
		      (void *)srq == c->last[RES_SRQ] &&
		      (void *)cqx == c->last[RES_CQ],
		      "the allocator gave each object's memory",
		      "QP %d, CQ %d, SRQ %d, others %d",
		      c->allocs[RES_QP], c->allocs[RES_CQ],
		      c->allocs[RES_SRQ], c->others);
	ok = !(qp && ibv_destroy_qp(qp)) && !(srq && ibv_destroy_srq(srq)) &&
	     !(cqx && ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)));
	check(ok && c->frees[RES_QP] == c->allocs[RES_QP] &&
	      c->frees[RES_CQ] == c->allocs[RES_CQ] &&
	      c->frees[RES_SRQ] == c->allocs[RES_SRQ] && !c->others &&
	      !c->bad_pd,
	      "destroyed: every allocation freed through the domain",
	      "frees QP %d, CQ %d, SRQ %d", c->frees[RES_QP],
	      c->frees[RES_CQ], c->frees[RES_SRQ]);
	return ok;
}

TEST_F(cq, parent_domain)
{
	struct objs *o = &self->o;
	struct pd_counts c = {};
	struct ibv_parent_domain_init_attr pa = {
		.pd = o->pd,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = count_alloc, .free = count_free, .pd_context = &c,
	};
	struct ibv_parent_domain_init_attr bad;
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 8, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
		.parent_domain = o->pd,
	};
	unsigned int calls = syscalls();
	struct ibv_pd *dom, *p;
	struct ibv_mr *mr;
	int ret;

	dom = ibv_alloc_parent_domain(o->ctx, &pa);
	c.dom = dom;
	check(dom && dom != o->pd && dom->handle == o->pd->handle &&
	      dom->context == o->ctx && syscalls() == calls,
	      "ibv_alloc_parent_domain: the PD's handle, no system call",
	      "dom %p, errno %d", (void *)dom, errno);
	if (!dom)
		return;

	bad = pa;
	bad.pd = dom;
	p = ibv_alloc_parent_domain(o->ctx, &bad);
	check(!p && errno == EINVAL,
	      "a parent domain over a parent domain: EINVAL", "%p, errno %d",
	      (void *)p, errno);
	bad = pa;
	bad.free = NULL;
	p = ibv_alloc_parent_domain(o->ctx, &bad);
	check(!p && errno == EINVAL, "allocators without free: EINVAL",
	      "%p, errno %d", (void *)p, errno);
	bad = pa;
	bad.comp_mask |= 1 << 7;
	p = ibv_alloc_parent_domain(o->ctx, &bad);
	check(!p && errno == EOPNOTSUPP,
	      "an unknown comp_mask bit: EOPNOTSUPP", "%p, errno %d",
	      (void *)p, errno);
	errno = 0;
	check(!ibv_create_cq_ex(o->ctx, &ca) && errno == EINVAL,
	      "create_cq_ex with a PD that is no parent domain: EINVAL",
	      "errno %d", errno);

	/* The fake kernel has one MR handle: the fixture's MR goes first. */
	if (!ibv_dereg_mr(o->mr))
		o->mr = NULL;
	mr = ibv_reg_mr(dom, o->buf, sizeof(o->buf), IBV_ACCESS_LOCAL_WRITE);
	check(mr && fk.reg_mr.pd_handle == o->pd->handle && mr->pd == dom,
	      "ibv_reg_mr in a parent domain: REG_MR with the PD's handle",
	      "mr %p, errno %d", (void *)mr, errno);
	if (mr)
		ibv_dereg_mr(mr);

	if (pd_objects(o, dom, &c, "a CQ, an SRQ and a QP in the parent domain")) {
		c = (struct pd_counts){ .use_default = true, .dom = dom };
		pd_objects(o, dom, &c,
			   "the same with the allocator answering USE_DEFAULT");
		check(!c.allocs[RES_QP] && !c.frees[RES_QP] && !c.others,
		      "USE_DEFAULT: malloc()'s memory, free() not called",
		      "frees %d", c.frees[RES_QP]);
	}
	ret = ibv_dealloc_pd(dom);
	check(!ret, "ibv_dealloc_pd of the parent domain, now unused",
	      "ret %d", ret);
}
