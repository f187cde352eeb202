// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The dispatch test's ibv_qp_ex: the operations a QP may be created with,
 * the WQEs of the wr_* builders, wr_abort, the errors wr_complete reports,
 * ATOMIC WRITE.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "dispatch.h"

#define QPEX_RC_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
		     IBV_QP_EX_WITH_RDMA_WRITE | \
		     IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
		     IBV_QP_EX_WITH_RDMA_READ)

/* max_inline_data 40: the fake kernel grants 64 (a multiple of 32). */
static struct ibv_qp *create_qp_ex(struct objs *o, enum ibv_qp_type type,
				   uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex attr = {
		.send_cq = o->cq, .recv_cq = o->cq, .qp_type = type,
		.cap = { .max_send_wr = 10, .max_recv_wr = 4,
			 .max_send_sge = 3, .max_recv_sge = 1,
			 .max_inline_data = 40 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = o->pd, .send_ops_flags = send_ops,
	};

	return ibv_create_qp_ex(o->ctx, &attr);
}

/* Send operations vhca does not execute: refused before the kernel. */
TEST_F(cq, qpex_refused)
{
	struct objs *o = &self->o;
	static const struct { uint64_t ops; const char *what; } bad[] = {
		{ IBV_QP_EX_WITH_TSO, "TSO" },
	};
	unsigned int creates = fk.cmds[IB_USER_VERBS_CMD_CREATE_QP];
	char name[96];
	struct ibv_qp *qp;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		errno = 0;
		qp = create_qp_ex(o, IBV_QPT_RC, IBV_QP_EX_WITH_SEND |
				  bad[i].ops);
		snprintf(name, sizeof(name), "create_qp_ex with %s: EOPNOTSUPP",
			 bad[i].what);
		check(!qp && errno == EOPNOTSUPP, name, "qp %p, errno %d",
		      (void *)qp, errno);
	}
	errno = 0;
	qp = create_qp_ex(o, IBV_QPT_UD, IBV_QP_EX_WITH_RDMA_WRITE);
	check(!qp && errno == EOPNOTSUPP,
	      "create_qp_ex: RDMA WRITE on a UD QP EOPNOTSUPP", "errno %d",
	      errno);
	errno = 0;
	qp = create_qp_ex(o, IBV_QPT_UD, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);
	check(!qp && errno == EOPNOTSUPP,
	      "create_qp_ex: an atomic on a UD QP EOPNOTSUPP", "errno %d",
	      errno);
#if VHCA_RDMA_CORE >= 44
	errno = 0;
	qp = create_qp_ex(o, IBV_QPT_UD, IBV_QP_EX_WITH_ATOMIC_WRITE);
	check(!qp && errno == EOPNOTSUPP,
	      "create_qp_ex: an ATOMIC WRITE on a UD QP EOPNOTSUPP",
	      "errno %d", errno);
#endif
	errno = 0;
	qp = create_qp_ex(o, IBV_QPT_UC, IBV_QP_EX_WITH_RDMA_READ);
	check(!qp && errno == EOPNOTSUPP,
	      "create_qp_ex: RDMA READ on a UC QP EOPNOTSUPP", "errno %d",
	      errno);
	errno = 0;
	qp = create_qp_ex(o, IBV_QPT_UC, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP);
	check(!qp && errno == EOPNOTSUPP,
	      "create_qp_ex: an atomic on a UC QP EOPNOTSUPP", "errno %d",
	      errno);
	check(fk.cmds[IB_USER_VERBS_CMD_CREATE_QP] == creates,
	      "create_qp_ex refusals never reach the kernel", "%u creates",
	      fk.cmds[IB_USER_VERBS_CMD_CREATE_QP] - creates);
	qp = create_qp_ex(o, IBV_QPT_UC, IBV_QP_EX_WITH_SEND |
			  IBV_QP_EX_WITH_SEND_WITH_IMM |
			  IBV_QP_EX_WITH_RDMA_WRITE |
			  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);
	check(qp && fk.create_qp.qp_type == IBV_QPT_UC,
	      "create_qp_ex: SEND and RDMA WRITE (with immediate) on UC",
	      "qp %p, errno %d", (void *)qp, errno);
	if (qp)
		ibv_destroy_qp(qp);
}

static struct ibv_qp_ex *qpex_batch_start(struct ibv_qp_ex *qpx,
					  uint64_t wr_id, unsigned int flags)
{
	ibv_wr_start(qpx);
	qpx->wr_id = wr_id;
	qpx->wr_flags = flags;
	return qpx;
}

/* RC: every operation, abort, and the errors wr_complete reports. */
TEST_F(cq, qpex_rc)
{
	struct objs *o = &self->o;
	char data[100], big[80];
	const struct ibv_data_buf bufs[2] = { { data, 10 }, { data + 10, 20 } };
	const struct ibv_sge sge[3] = {
		{ 0x1000, 11, 0x21 }, { 0x2000, 22, 0x22 }, { 0x3000, 33, 0x23 },
	};
	const struct ibv_sge four[4] = { sge[0], sge[1], sge[2], sge[0] };
	const struct vhca_send_wqe *w;
	struct vhca_db_rec *db;
	struct vhca_status_rec *st;
	unsigned int calls, kicks;
	struct ibv_qp_ex *qpx;
	struct fake_qp *fqp;
	struct ibv_qp *qp;
	uint32_t count, i;
	int ret;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 5 + 3);
	memset(big, 'x', sizeof(big));
	qp = create_qp_ex(o, IBV_QPT_RC, QPEX_RC_OPS);
	fqp = qp ? find_qp(qp->handle) : NULL;
	qpx = qp ? ibv_qp_to_qp_ex(qp) : NULL;
	check(fqp && qpx && fk.create_qp.max_send_wr == 10 &&
	      fk.create_qp.max_inline_data == 40 &&
	      mapped_as(fqp->sq.ring, PROT_READ | PROT_WRITE),
	      "ibv_create_qp_ex reaches CREATE_QP, rings mapped, "
	      "ibv_qp_to_qp_ex answers", "qp %p, qpx %p, errno %d",
	      (void *)qp, (void *)qpx, errno);
	if (!fqp || !qpx)
		return;
	db = fk_db(fqp->db_index);
	st = fk_st(fqp->db_index);
	count = fqp->sq.count;

	kicks = fk.cmds[IB_USER_VERBS_CMD_POST_SEND];
	qpex_batch_start(qpx, 1, IBV_SEND_SIGNALED);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 1, 2, 3);
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL && db->head[0] == 0 &&
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks,
	      "wr_complete before RTS: EINVAL, nothing posted, no kick",
	      "ret %d, head %u", ret, db->head[0]);
	modify_state(qp, IBV_QPS_INIT);
	modify_state(qp, IBV_QPS_RTR);
	modify_state(qp, IBV_QPS_RTS);

	calls = syscalls();
	qpex_batch_start(qpx, 0x100, IBV_SEND_SIGNALED | IBV_SEND_SOLICITED);
	ibv_wr_send_imm(qpx, htobe32(0x0a0b0c0d));
	ibv_wr_set_sge_list(qpx, 3, sge);
	qpx->wr_id = 0x101;
	qpx->wr_flags = 0;
	ibv_wr_rdma_write(qpx, 0x5555, 0x7000000000001000ULL);
	ibv_wr_set_inline_data_list(qpx, 2, bufs);
	qpx->wr_id = 0x102;
	ibv_wr_rdma_write_imm(qpx, 0x6666, 0x2000, htobe32(9));
	ibv_wr_set_sge(qpx, 0x31, 0x4000, 44);
	qpx->wr_id = 0x103;
	qpx->wr_flags = IBV_SEND_FENCE | IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(qpx, 0x7777, 0x3000);
	ibv_wr_set_sge_list(qpx, 2, sge + 1);
	qpx->wr_id = 0x104;
	qpx->wr_flags = 0;
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, data, 64);
	check(syscalls() == calls && db->head[0] == 0,
	      "wr_* builders: no system call, nothing published before "
	      "wr_complete", "%u system calls, head %u", syscalls() - calls,
	      db->head[0]);
	ret = ibv_wr_complete(qpx);
	check(!ret && db->head[0] == 5 &&
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks + 1 &&
	      fk.post_send.qp_handle == qp->handle &&
	      fk.post_send.wr_count == 0 && syscalls() == calls + 1,
	      "wr_complete: five WQEs published, one kick (the only system "
	      "call)", "ret %d, head %u, %u system calls", ret, db->head[0],
	      syscalls() - calls);

	w = sq_slot(fqp, 0);
	check(w->wr_id == 0x100 && w->opcode == VHCA_WR_SEND_WITH_IMM &&
	      w->flags == (VHCA_WQE_SIGNALED | VHCA_WQE_SOLICITED) &&
	      w->num_sge == 3 && w->inline_len == 0 &&
	      w->imm_data == htobe32(0x0a0b0c0d) && !w->rdma.remote_addr &&
	      !memcmp(wqe_sges(w, sizeof(*w)),
		      (struct vhca_sge[]){ { 0x1000, 11, 0x21 },
					   { 0x2000, 22, 0x22 },
					   { 0x3000, 33, 0x23 } },
		      3 * sizeof(struct vhca_sge)),
	      "wr_send_imm + wr_set_sge_list: WQE bytes", "flags %#x, "
	      "opcode %u, sges %u", w->flags, w->opcode, w->num_sge);
	w = sq_slot(fqp, 1);
	check(w->wr_id == 0x101 && w->opcode == VHCA_WR_RDMA_WRITE &&
	      w->flags == VHCA_WQE_INLINE && w->num_sge == 0 &&
	      w->inline_len == 30 && !w->imm_data &&
	      w->rdma.remote_addr == 0x7000000000001000ULL &&
	      w->rdma.rkey == 0x5555 && !memcmp(w + 1, data, 30),
	      "wr_rdma_write + wr_set_inline_data_list: WQE bytes, data "
	      "after the header", "flags %#x, len %u", w->flags,
	      w->inline_len);
	w = sq_slot(fqp, 2);
	check(w->wr_id == 0x102 && w->opcode == VHCA_WR_RDMA_WRITE_WITH_IMM &&
	      w->flags == 0 && w->num_sge == 1 && w->imm_data == htobe32(9) &&
	      w->rdma.remote_addr == 0x2000 && w->rdma.rkey == 0x6666 &&
	      wqe_sges(w, sizeof(*w))[0].addr == 0x4000 &&
	      wqe_sges(w, sizeof(*w))[0].length == 44 &&
	      wqe_sges(w, sizeof(*w))[0].lkey == 0x31,
	      "wr_rdma_write_imm + wr_set_sge: WQE bytes", "flags %#x",
	      w->flags);
	w = sq_slot(fqp, 3);
	check(w->wr_id == 0x103 && w->opcode == VHCA_WR_RDMA_READ &&
	      w->flags == (VHCA_WQE_FENCE | VHCA_WQE_SIGNALED) &&
	      w->num_sge == 2 && w->rdma.rkey == 0x7777 &&
	      w->rdma.remote_addr == 0x3000 &&
	      wqe_sges(w, sizeof(*w))[1].addr == 0x3000,
	      "wr_rdma_read (fence): WQE bytes", "flags %#x", w->flags);
	w = sq_slot(fqp, 4);
	check(w->wr_id == 0x104 && w->opcode == VHCA_WR_SEND &&
	      w->flags == VHCA_WQE_INLINE && w->inline_len == 64 &&
	      !memcmp(w + 1, data, 64),
	      "wr_send + wr_set_inline_data (max_inline, 64 bytes): WQE bytes",
	      "flags %#x, len %u", w->flags, w->inline_len);

	/* wr_abort: nothing published, the slot is reused. */
	calls = syscalls();
	qpex_batch_start(qpx, 0x200, 0);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 1, 2, 3);
	ibv_wr_abort(qpx);
	qpex_batch_start(qpx, 0x201, 0);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 4, 5, 6);
	ret = ibv_wr_complete(qpx);
	check(!ret && db->head[0] == 6 && sq_slot(fqp, 5)->wr_id == 0x201 &&
	      syscalls() == calls + 1,
	      "wr_abort discards the batch; the next one takes its slot",
	      "ret %d, head %u, wr_id %#llx", ret, db->head[0],
	      (unsigned long long)sq_slot(fqp, 5)->wr_id);

	/* Errors: reported by wr_complete, the whole batch discarded. */
	kicks = fk.cmds[IB_USER_VERBS_CMD_POST_SEND];
	qpex_batch_start(qpx, 0x300, 0);
	for (i = 0; i <= count - 6; i++) {
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, 1, 2, 3);
	}
	ret = ibv_wr_complete(qpx);
	check(ret == ENOMEM && db->head[0] == 6 &&
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks,
	      "a batch past the free slots: wr_complete ENOMEM, nothing "
	      "published, no kick", "ret %d, head %u", ret, db->head[0]);
	qpex_batch_start(qpx, 0x301, 0);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 1, 2, 3);
	ibv_wr_send(qpx);
	ibv_wr_set_sge_list(qpx, 4, four);
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL && db->head[0] == 6,
	      "past max_send_sge: wr_complete EINVAL, the batch discarded",
	      "ret %d, head %u", ret, db->head[0]);
	qpex_batch_start(qpx, 0x302, 0);
	ibv_wr_send(qpx);
	ibv_wr_set_inline_data(qpx, big, 65);
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL && db->head[0] == 6,
	      "inline past max_inline: wr_complete EINVAL", "ret %d", ret);
	qpex_batch_start(qpx, 0x303, 0);
	ibv_wr_rdma_read(qpx, 1, 2);
	ibv_wr_set_inline_data(qpx, big, 4);
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL, "inline RDMA READ: wr_complete EINVAL", "ret %d",
	      ret);
	qpex_batch_start(qpx, 0x304, IBV_SEND_IP_CSUM);
	ibv_wr_send(qpx);
	ibv_wr_set_sge(qpx, 1, 2, 3);
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL, "unsupported wr_flags: wr_complete EINVAL",
	      "ret %d", ret);
	check(db->head[0] == 6 && fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks,
	      "refused batches: head unchanged, no kick", "head %u, %u kicks",
	      db->head[0], fk.cmds[IB_USER_VERBS_CMD_POST_SEND] - kicks);

	/* The device released every slot: a full ring's worth fits. */
	__atomic_store_n(&st->tail[0], 6, __ATOMIC_RELEASE);
	qpex_batch_start(qpx, 0x400, 0);
	for (i = 0; i < count; i++) {
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, 1, 2, 3);
	}
	ret = ibv_wr_complete(qpx);
	check(!ret && db->head[0] == 6 + count,
	      "a batch of exactly the free slots is published", "ret %d, "
	      "head %u", ret, db->head[0]);
	check(!ibv_destroy_qp(qp) && unmapped(fqp->sq.ring),
	      "destroy the ibv_qp_ex QP", "failed");
}

/*
 * Creation flags: none is vhca's, so an empty set is taken (as pyverbs'
 * QP tests ask, the mask set and no flag) and any flag refused.
 */
TEST_F(cq, qpex_create_flags)
{
	struct objs *o = &self->o;
	struct ibv_qp_init_attr_ex attr = {
		.send_cq = o->cq, .recv_cq = o->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 10, .max_recv_wr = 4,
			 .max_send_sge = 3, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_CREATE_FLAGS,
		.pd = o->pd,
	};
	unsigned int creates = fk.cmds[IB_USER_VERBS_CMD_CREATE_QP];
	struct ibv_qp *qp;

	qp = ibv_create_qp_ex(o->ctx, &attr);
	check(qp && fk.cmds[IB_USER_VERBS_CMD_CREATE_QP] == creates + 1 &&
	      attr.cap.max_send_wr >= 10,
	      "create_qp_ex with the creation flags' mask and no flag",
	      "errno %d", errno);
	check(qp && !ibv_destroy_qp(qp), "destroy it", "failed");
	attr.create_flags = IBV_QP_CREATE_BLOCK_SELF_MCAST_LB;
	errno = 0;
	qp = ibv_create_qp_ex(o->ctx, &attr);
	check(!qp && errno == EOPNOTSUPP &&
	      fk.cmds[IB_USER_VERBS_CMD_CREATE_QP] == creates + 1,
	      "create_qp_ex with a creation flag: EOPNOTSUPP, no command",
	      "qp %p, errno %d", (void *)qp, errno);
}

#if VHCA_RDMA_CORE >= 44
/*
 * A provider built for 36 to 43 (whose verbs.h has no ATOMIC WRITE) under
 * an application that has it: refused as the operations vhca does not
 * execute are, by create_qp_ex and by post_send, never reaching the kernel.
 */
static void atomic_write_refused(struct objs *o)
{
	uint64_t local = 0;
	struct ibv_sge sge = { (uintptr_t)&local, 8, 0x21 };
	struct ibv_send_wr wr = {
		.opcode = IBV_WR_ATOMIC_WRITE, .sg_list = &sge, .num_sge = 1,
		.wr.rdma = { 0x9000, 0x4444 },
	}, *bad = NULL;
	unsigned int creates = fk.cmds[IB_USER_VERBS_CMD_CREATE_QP];
	unsigned int kicks = fk.cmds[IB_USER_VERBS_CMD_POST_SEND];
	struct ibv_qp *qp;
	int ret;

	errno = 0;
	qp = create_qp_ex(o, IBV_QPT_RC, IBV_QP_EX_WITH_ATOMIC_WRITE);
	check(!qp && errno == EOPNOTSUPP &&
	      fk.cmds[IB_USER_VERBS_CMD_CREATE_QP] == creates,
	      "create_qp_ex with ATOMIC WRITE (built for 36-43): EOPNOTSUPP",
	      "qp %p, errno %d", (void *)qp, errno);
	/* On the RC QP in RTS: EINVAL for the opcode, not the state. */
	ret = ibv_post_send(o->qp, &wr, &bad);
	check(ret == EINVAL && bad == &wr && o->qp->state == IBV_QPS_RTS &&
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks,
	      "post_send ATOMIC WRITE (built for 36-43): EINVAL, no kick",
	      "ret %d, state %d", ret, o->qp->state);
}

/*
 * ATOMIC WRITE, by ibv_wr_atomic_write and by post_send: the 8 bytes in
 * the WQE (atomic.swap), no SGEs; a setter after it, or a post_send whose
 * SGE is not 8 bytes, is refused.
 */
static void atomic_write(struct objs *o)
{
	const uint64_t value = 0x0102030405060708ULL;
	uint64_t local = 0x1112131415161718ULL;
	struct ibv_sge sge = { (uintptr_t)&local, 8, 0x21 };
	struct ibv_send_wr wr = {
		.wr_id = 0x502, .opcode = IBV_WR_ATOMIC_WRITE, .sg_list = &sge,
		.num_sge = 1, .wr.rdma = { 0x9000, 0x4444 },
	}, *bad;
	const struct vhca_send_wqe *w;
	struct vhca_db_rec *db;
	struct ibv_qp_ex *qpx;
	struct fake_qp *fqp;
	struct ibv_qp *qp;
	int ret;

	qp = create_qp_ex(o, IBV_QPT_RC, IBV_QP_EX_WITH_ATOMIC_WRITE);
	fqp = qp ? find_qp(qp->handle) : NULL;
	qpx = qp ? ibv_qp_to_qp_ex(qp) : NULL;
	check(fqp && qpx, "create_qp_ex with ATOMIC WRITE", "errno %d",
	      errno);
	if (!fqp || !qpx)
		return;
	db = fk_db(fqp->db_index);
	modify_state(qp, IBV_QPS_INIT);
	modify_state(qp, IBV_QPS_RTR);
	modify_state(qp, IBV_QPS_RTS);

	qpex_batch_start(qpx, 0x500, IBV_SEND_SIGNALED);
	ibv_wr_atomic_write(qpx, 0x3333, 0x8000, &value);
	ret = ibv_wr_complete(qpx);
	w = sq_slot(fqp, 0);
	check(!ret && db->head[0] == 1 && w->wr_id == 0x500 &&
	      w->opcode == VHCA_WR_ATOMIC_WRITE &&
	      w->flags == VHCA_WQE_SIGNALED && !w->num_sge &&
	      !w->inline_len && w->atomic.remote_addr == 0x8000 &&
	      w->atomic.rkey == 0x3333 && w->atomic.swap == value,
	      "wr_atomic_write: WQE bytes, the value in atomic.swap",
	      "ret %d, opcode %u, swap %#llx", ret, w->opcode,
	      (unsigned long long)w->atomic.swap);
	qpex_batch_start(qpx, 0x501, 0);
	ibv_wr_atomic_write(qpx, 0x3333, 0x8000, &value);
	ibv_wr_set_sge(qpx, 1, 2, 8);
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL && db->head[0] == 1,
	      "wr_atomic_write then wr_set_sge: wr_complete EINVAL",
	      "ret %d, head %u", ret, db->head[0]);

	ret = ibv_post_send(qp, &wr, &bad);
	w = sq_slot(fqp, 1);
	check(!ret && db->head[0] == 2 && w->opcode == VHCA_WR_ATOMIC_WRITE &&
	      !w->num_sge && w->atomic.remote_addr == 0x9000 &&
	      w->atomic.rkey == 0x4444 && w->atomic.swap == local,
	      "post_send ATOMIC WRITE: its SGE's 8 bytes in the WQE",
	      "ret %d, swap %#llx", ret, (unsigned long long)w->atomic.swap);
	sge.length = 4;
	ret = ibv_post_send(qp, &wr, &bad);
	check(ret == EINVAL && bad == &wr && db->head[0] == 2,
	      "post_send ATOMIC WRITE of 4 bytes: EINVAL", "ret %d", ret);
	check(!ibv_destroy_qp(qp), "destroy the ATOMIC WRITE QP", "failed");
}

/*
 * ATOMIC WRITE as the provider under test was built: one for rdma-core 44
 * or later executes it, one for 36 to 43 refuses it.
 */
TEST_F(rts, atomic_write)
{
	if (provider_release >= 44)
		atomic_write(&self->o);
	else
		atomic_write_refused(&self->o);
}

/*
 * A kernel before 6.2 has no ATOMIC WRITE (no capability bit): a QP that
 * asks for it is refused before the kernel is asked; one without it is
 * created as ever.
 */
TEST_F(cq, atomic_write_old_kernel)
{
	struct objs *o = &self->o;
	unsigned int creates = fk.cmds[IB_USER_VERBS_CMD_CREATE_QP];
	struct ibv_qp *qp;

	fk.before_6_2 = true;
	errno = 0;
	qp = create_qp_ex(o, IBV_QPT_RC, IBV_QP_EX_WITH_SEND |
			  IBV_QP_EX_WITH_ATOMIC_WRITE);
	check(!qp && errno == EOPNOTSUPP &&
	      fk.cmds[IB_USER_VERBS_CMD_CREATE_QP] == creates,
	      "create_qp_ex with ATOMIC WRITE, kernel without it: EOPNOTSUPP",
	      "qp %p, errno %d", (void *)qp, errno);
	qp = create_qp_ex(o, IBV_QPT_RC, IBV_QP_EX_WITH_SEND);
	check(qp != NULL, "create_qp_ex without it, same kernel: created",
	      "errno %d", errno);
	if (qp)
		ibv_destroy_qp(qp);
	fk.before_6_2 = false;
}
#endif

/* UD: the address of a datagram, and RDMA refused on it. */
TEST_F(cq, qpex_ud)
{
	struct objs *o = &self->o;
	struct ibv_ah_attr ah_attr = { .dlid = 1, .port_num = 1 };
	const struct vhca_send_wqe *w;
	struct ibv_qp_ex *qpx;
	struct fake_qp *fqp;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	int ret;

	ah = ibv_create_ah(o->pd, &ah_attr);
	qp = create_qp_ex(o, IBV_QPT_UD, IBV_QP_EX_WITH_SEND |
			  IBV_QP_EX_WITH_SEND_WITH_IMM);
	fqp = qp ? find_qp(qp->handle) : NULL;
	qpx = qp ? ibv_qp_to_qp_ex(qp) : NULL;
	check(ah && fqp && qpx && fk.create_qp.qp_type == IBV_QPT_UD,
	      "ibv_create_qp_ex UD with SEND and SEND_WITH_IMM", "errno %d",
	      errno);
	if (!ah || !fqp || !qpx)
		return;
	modify_state(qp, IBV_QPS_INIT);
	modify_state(qp, IBV_QPS_RTR);
	modify_state(qp, IBV_QPS_RTS);

	qpex_batch_start(qpx, 0x500, IBV_SEND_SIGNALED);
	ibv_wr_send_imm(qpx, htobe32(77));
	ibv_wr_set_ud_addr(qpx, ah, 0x123456, 0x11112222);
	ibv_wr_set_sge(qpx, 0x41, 0x9000, 0);
	ret = ibv_wr_complete(qpx);
	w = sq_slot(fqp, 0);
	check(!ret && w->opcode == VHCA_WR_SEND_WITH_IMM &&
	      w->flags == VHCA_WQE_SIGNALED && w->ud.ah == FAKE_AH_INDEX &&
	      w->ud.remote_qpn == 0x123456 &&
	      w->ud.remote_qkey == 0x11112222 && w->imm_data == htobe32(77) &&
	      w->num_sge == 1 && wqe_sges(w, sizeof(*w))[0].length == 0 &&
	      fk_db(fqp->db_index)[0].head[0] == 1,
	      "UD wr_send_imm + wr_set_ud_addr (zero-length SGE): WQE bytes",
	      "ret %d, ah %#x", ret, w->ud.ah);
	qpex_batch_start(qpx, 0x501, 0);
	ibv_wr_rdma_write(qpx, 1, 2);
	ibv_wr_set_sge(qpx, 1, 2, 3);
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL && fk_db(fqp->db_index)[0].head[0] == 1,
	      "UD wr_rdma_write: wr_complete EINVAL", "ret %d", ret);
	qpex_batch_start(qpx, 0x502, 0);
	ibv_wr_send(qpx);
	ibv_wr_set_ud_addr(qpx, NULL, 1, 2);
	ret = ibv_wr_complete(qpx);
	check(ret == EINVAL, "UD wr_set_ud_addr without an AH: EINVAL",
	      "ret %d", ret);
	check(!ibv_destroy_qp(qp) && !ibv_destroy_ah(ah),
	      "destroy the UD ibv_qp_ex QP and its AH", "failed");
}
