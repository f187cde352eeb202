// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The dispatch test's QPs: creation, modify and query, the posts of
 * receives and sends and their WQEs, the kick, memory windows, UD and the
 * flush of a QP in the error state.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "dispatch.h"

TEST_F(cq, create_qp)
{
	struct objs *o = &self->o;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	int ret;

	o->qp_attr = (struct ibv_qp_init_attr){
		.send_cq = o->cq, .recv_cq = o->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 10, .max_recv_wr = 20,
			 .max_send_sge = 3, .max_recv_sge = 6,
			 .max_inline_data = 40 },
	};
	o->qp = ibv_create_qp(o->pd, &o->qp_attr);
	o->fqp = o->qp ? find_qp(o->qp->handle) : NULL;
	check(o->qp && o->fqp && fk.create_qp.max_send_wr == 10 &&
	      fk.create_qp.max_recv_sge == 6 &&
	      fk.create_qp.qp_type == IBV_QPT_RC &&
	      o->qp->qp_num == o->fqp->qpn && o->qp->state == IBV_QPS_RESET,
	      "ibv_create_qp reaches CREATE_QP", "qp %p, errno %d",
	      (void *)o->qp, errno);
	if (!o->fqp)
		return;
	check(o->qp_attr.cap.max_send_wr == 16 &&
	      o->qp_attr.cap.max_recv_wr == 32 &&
	      o->qp_attr.cap.max_inline_data == 64 &&
	      o->qp_attr.cap.max_send_sge == 3 &&
	      o->qp_attr.cap.max_recv_sge == 6,
	      "create_qp: the kernel's caps reported in attr->cap",
	      "wr %u/%u, inline %u", o->qp_attr.cap.max_send_wr,
	      o->qp_attr.cap.max_recv_wr, o->qp_attr.cap.max_inline_data);
	check(mapped_as(o->fqp->sq.ring, PROT_READ | PROT_WRITE) &&
	      mapped_as(o->fqp->rq.ring, PROT_READ | PROT_WRITE),
	      "create_qp: SQ and RQ rings mapped shared, read-write",
	      "not so");

	ret = ibv_modify_qp(o->qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	check(!ret && fk.modify_qp.qp_handle == o->qp->handle &&
	      fk.modify_qp.qp_state == IBV_QPS_INIT &&
	      fk.modify_qp.port_num == 1 &&
	      fk.modify_qp.qp_access_flags == IBV_ACCESS_REMOTE_WRITE &&
	      fk.modify_qp.attr_mask == (IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) &&
	      o->qp->state == IBV_QPS_INIT,
	      "ibv_modify_qp reaches MODIFY_QP", "ret %d, mask %#x", ret,
	      fk.modify_qp.attr_mask);

	memset(&attr, 0, sizeof(attr));
	ret = ibv_query_qp(o->qp, &attr, IBV_QP_STATE | IBV_QP_PATH_MTU |
			   IBV_QP_DEST_QPN, &init);
	check(!ret && fk.cmds[IB_USER_VERBS_CMD_QUERY_QP] == 1 &&
	      attr.qp_state == IBV_QPS_INIT &&
	      attr.path_mtu == IBV_MTU_2048 &&
	      attr.dest_qp_num == FAKE_DEST_QPN,
	      "ibv_query_qp reaches QUERY_QP", "ret %d, dest_qp %#x", ret,
	      attr.dest_qp_num);
}

TEST_F(rc, post_recv)
{
	struct objs *o = &self->o;
	struct vhca_db_rec *db = fk_db(o->fqp->db_index);
	struct vhca_status_rec *st = fk_st(o->fqp->db_index);
	uint32_t max_sge = o->qp_attr.cap.max_recv_sge;
	uint32_t count = o->fqp->rq.count, i;
	struct ibv_sge sge[8];
	struct ibv_recv_wr wr = { .wr_id = 0xfeed0001, .sg_list = sge,
				  .num_sge = max_sge };
	struct ibv_recv_wr wr2 = wr, *bad = NULL;
	const struct vhca_recv_wqe *wqe;
	const struct vhca_sge *s;
	unsigned int calls = syscalls();
	bool ok;
	int ret;

	for (i = 0; i < ARRAY_SIZE(sge); i++)
		sge[i] = (struct ibv_sge){ 0x10000 * (i + 1), 100 + i,
					   FAKE_LKEY + i };

	ret = ibv_post_recv(o->qp, &wr, &bad);
	wqe = rq_slot(&o->fqp->rq, 0);
	s = wqe_sges(wqe, sizeof(*wqe));
	ok = !ret && db->head[1] == 1 && db->head[0] == 0 &&
	     wqe->wr_id == wr.wr_id && wqe->num_sge == max_sge;
	for (i = 0; ok && i < max_sge; i++)
		ok = s[i].addr == sge[i].addr && s[i].length == sge[i].length &&
		     s[i].lkey == sge[i].lkey;
	check(ok, "post_recv: max_recv_sge SGEs land in the RQ slot, head[1] "
	      "published", "ret %d, head %u", ret, db->head[1]);

	wr2.num_sge = max_sge + 1;
	wr.next = &wr2;
	wr.wr_id = 0xfeed0002;
	ret = ibv_post_recv(o->qp, &wr, &bad);
	check(ret == EINVAL && bad == &wr2 && db->head[1] == 2 &&
	      rq_slot(&o->fqp->rq, 1)->wr_id == 0xfeed0002,
	      "post_recv: past max_recv_sge EINVAL, *bad_wr at it, the WR "
	      "before it posted", "ret %d, head %u", ret, db->head[1]);
	wr.next = NULL;

	wr.num_sge = 1;
	for (i = 2, ret = 0; i < count && !ret; i++) {
		wr.wr_id = 0xfeed0000 + i;
		ret = ibv_post_recv(o->qp, &wr, &bad);
	}
	bad = NULL;
	wr.wr_id = 0xfeedffff;
	ret = ret ? ret : ibv_post_recv(o->qp, &wr, &bad);
	check(ret == ENOMEM && bad == &wr && db->head[1] == count,
	      "post_recv: ENOMEM when head - tail[1] == count", "ret %d, "
	      "head %u", ret, db->head[1]);

	__atomic_store_n(&st->tail[1], 1, __ATOMIC_RELEASE);
	ret = ibv_post_recv(o->qp, &wr, &bad);
	check(!ret && db->head[1] == count + 1 &&
	      rq_slot(&o->fqp->rq, count)->wr_id == 0xfeedffff,
	      "post_recv: the slot the device released is reused",
	      "ret %d, head %u", ret, db->head[1]);
	check(syscalls() == calls, "post_recv: no system call",
	      "%u system calls", syscalls() - calls);
}

TEST_F(rc, post_send)
{
	struct objs *o = &self->o;
	struct vhca_db_rec *db = fk_db(o->fqp->db_index);
	struct vhca_status_rec *st = fk_st(o->fqp->db_index);
	struct ibv_sge sge[4] = {
		{ 0x1000, 11, 0x21 }, { 0x2000, 22, 0x22 },
		{ 0x3000, 33, 0x23 }, { 0x4000, 44, 0x24 },
	};
	char data[100];
	struct ibv_sge inl[2] = {
		{ (uintptr_t)data, 30, 0 }, { (uintptr_t)data + 30, 34, 0 },
	};
	struct ibv_send_wr wr[4], *bad = NULL, bogus;
	const struct vhca_send_wqe *w;
	unsigned int kicks, calls;
	uint32_t i;
	int ret;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 7 + 1);

	memset(&bogus, 0, sizeof(bogus));
	bogus.opcode = IBV_WR_SEND;
	kicks = fk.cmds[IB_USER_VERBS_CMD_POST_SEND];
	ret = ibv_post_send(o->qp, &bogus, &bad);
	check(ret == EINVAL && bad == &bogus &&
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks,
	      "post_send before RTS: EINVAL, no kick", "ret %d", ret);

	check(modify_state(o->qp, IBV_QPS_RTR) &&
	      modify_state(o->qp, IBV_QPS_RTS) && o->qp->state == IBV_QPS_RTS,
	      "modify_qp to RTR and RTS", "errno %d", errno);

	memset(wr, 0, sizeof(wr));
	wr[0] = (struct ibv_send_wr){
		.wr_id = 0xabc0, .next = &wr[1], .sg_list = sge, .num_sge = 3,
		.opcode = IBV_WR_SEND_WITH_IMM, .imm_data = htobe32(0x01020304),
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED,
	};
	wr[1] = (struct ibv_send_wr){
		.wr_id = 0xabc1, .next = &wr[2], .sg_list = sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .imm_data = htobe32(7),
		.wr.rdma = { 0x7000000012345678ULL, 0x99887766 },
	};
	wr[2] = (struct ibv_send_wr){
		.wr_id = 0xabc2, .next = &wr[3], .sg_list = sge + 1,
		.num_sge = 2, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_FENCE | IBV_SEND_SIGNALED,
		.wr.rdma = { 0x5000, 0x4444 },
	};
	wr[3] = (struct ibv_send_wr){
		.wr_id = 0xabc3, .sg_list = inl, .num_sge = 2,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_INLINE,
		.wr.rdma = { 0x6000, 0x5555 },
	};
	kicks = fk.cmds[IB_USER_VERBS_CMD_POST_SEND];
	ret = ibv_post_send(o->qp, wr, &bad);
	check(!ret && db->head[0] == 4,
	      "post_send: four WRs, head[0] published", "ret %d, head %u",
	      ret, db->head[0]);

	w = sq_slot(o->fqp, 0);
	check(w->wr_id == 0xabc0 && w->opcode == VHCA_WR_SEND_WITH_IMM &&
	      w->flags == (VHCA_WQE_SIGNALED | VHCA_WQE_SOLICITED) &&
	      w->num_sge == 3 && w->imm_data == htobe32(0x01020304) &&
	      w->inline_len == 0 && !w->rdma.remote_addr &&
	      wqe_sges(w, sizeof(*w))[2].addr == 0x3000 &&
	      wqe_sges(w, sizeof(*w))[2].lkey == 0x23,
	      "post_send: SEND_WITH_IMM WQE (flags, imm, SGEs)", "flags %#x, "
	      "opcode %u", w->flags, w->opcode);
	w = sq_slot(o->fqp, 1);
	check(w->opcode == VHCA_WR_RDMA_WRITE_WITH_IMM && w->flags == 0 &&
	      w->rdma.remote_addr == 0x7000000012345678ULL &&
	      w->rdma.rkey == 0x99887766 && w->imm_data == htobe32(7),
	      "post_send: RDMA_WRITE_WITH_IMM WQE (unsignaled, remote addr, "
	      "rkey)", "flags %#x", w->flags);
	w = sq_slot(o->fqp, 2);
	check(w->opcode == VHCA_WR_RDMA_READ &&
	      w->flags == (VHCA_WQE_FENCE | VHCA_WQE_SIGNALED) &&
	      w->num_sge == 2 && w->rdma.rkey == 0x4444 &&
	      wqe_sges(w, sizeof(*w))[0].addr == 0x2000,
	      "post_send: RDMA_READ WQE (fence)", "flags %#x", w->flags);
	w = sq_slot(o->fqp, 3);
	check(w->opcode == VHCA_WR_RDMA_WRITE && w->flags == VHCA_WQE_INLINE &&
	      w->num_sge == 0 && w->inline_len == 64 &&
	      !memcmp(w + 1, data, 64),
	      "post_send: inline WQE, data copied after the header",
	      "flags %#x, len %u", w->flags, w->inline_len);
	check(fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks + 1 &&
	      fk.post_send.qp_handle == o->qp->handle &&
	      fk.post_send.wr_count == 0 && fk.post_send.sge_count == 0,
	      "post_send with NEEDS_WAKEUP: one kick, POST_SEND with no "
	      "work requests", "%u kicks, wr_count %u",
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] - kicks,
	      fk.post_send.wr_count);

	/* The engine watches the doorbell: the head alone announces. */
	st->flags &= ~VHCA_STATUS_NEEDS_WAKEUP;
	kicks = fk.cmds[IB_USER_VERBS_CMD_POST_SEND];
	calls = syscalls();
	wr[3].next = NULL;
	ret = ibv_post_send(o->qp, &wr[3], &bad);
	check(!ret && db->head[0] == 5 && syscalls() == calls &&
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks,
	      "post_send without NEEDS_WAKEUP: head published, no system call",
	      "ret %d, head %u, %u system calls", ret, db->head[0],
	      syscalls() - calls);
	st->flags |= VHCA_STATUS_NEEDS_WAKEUP;
	ret = ibv_post_send(o->qp, &wr[3], &bad);
	check(!ret && db->head[0] == 6 &&
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks + 1,
	      "post_send with NEEDS_WAKEUP set again: one kick",
	      "ret %d, %u kicks", ret,
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] - kicks);

	kicks = fk.cmds[IB_USER_VERBS_CMD_POST_SEND];
	wr[0] = (struct ibv_send_wr){ .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
				      .sg_list = sge, .num_sge = 1,
				      .send_flags = IBV_SEND_INLINE };
	ret = ibv_post_send(o->qp, wr, &bad);
	check(ret == EINVAL && bad == wr, "post_send: inline atomic EINVAL",
	      "ret %d", ret);
	wr[0] = (struct ibv_send_wr){ .opcode = IBV_WR_SEND, .sg_list = sge,
				      .num_sge = 4 };
	ret = ibv_post_send(o->qp, wr, &bad);
	check(ret == EINVAL && bad == wr,
	      "post_send: past max_send_sge EINVAL", "ret %d", ret);
	inl[1].length = 35;
	wr[0] = (struct ibv_send_wr){ .opcode = IBV_WR_SEND, .sg_list = inl,
				      .num_sge = 2,
				      .send_flags = IBV_SEND_INLINE };
	ret = ibv_post_send(o->qp, wr, &bad);
	check(ret == EINVAL && bad == wr,
	      "post_send: inline past max_inline EINVAL", "ret %d", ret);
	wr[0] = (struct ibv_send_wr){ .opcode = IBV_WR_SEND,
				      .send_flags = IBV_SEND_IP_CSUM };
	ret = ibv_post_send(o->qp, wr, &bad);
	check(ret == EINVAL && bad == wr,
	      "post_send: unsupported send flag EINVAL", "ret %d", ret);
	check(db->head[0] == 6 &&
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == kicks,
	      "post_send: refused WRs leave head alone and do not kick",
	      "head %u, %u kicks", db->head[0],
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] - kicks);
}

/*
 * Memory windows on the ring: ibv_bind_mw (type 1) writes a BIND_MW WQE
 * with the window's next rkey and keeps it; IBV_WR_BIND_MW takes type 2
 * windows only; LOCAL_INV and SEND_WITH_INV carry the rkey.
 */
TEST_F(rts, post_mw)
{
	struct objs *o = &self->o;
	struct vhca_db_rec *db = fk_db(o->fqp->db_index);
	struct ibv_mr mr = { .lkey = 0x3344, .pd = o->pd, .context = o->ctx };
	struct ibv_mw mw1 = { .context = o->ctx, .pd = o->pd,
			      .rkey = 0x1200ff, .type = IBV_MW_TYPE_1 };
	struct ibv_mw mw2 = { .context = o->ctx, .pd = o->pd,
			      .rkey = 0x340011, .type = IBV_MW_TYPE_2 };
	struct ibv_mw_bind mb = {
		.wr_id = 0xb1, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = &mr, .addr = 0x9000, .length = 0x800,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};
	struct ibv_send_wr wr, *bad = NULL;
	uint32_t head = db->head[0];
	const struct vhca_send_wqe *w;
	int ret;

	ret = ibv_bind_mw(o->qp, &mw1, &mb);
	w = sq_slot(o->fqp, head);
	check(!ret && db->head[0] == head + 1 && w->wr_id == 0xb1 &&
	      w->opcode == VHCA_WR_BIND_MW && w->flags == VHCA_WQE_SIGNALED &&
	      w->num_sge == 0 && w->bind.mw_rkey == 0x1200ff &&
	      w->bind.new_rkey == 0x120000 && mw1.rkey == 0x120000 &&
	      w->bind.mr_lkey == 0x3344 && w->bind.addr == 0x9000 &&
	      w->bind.length == 0x800 &&
	      w->bind.access == IBV_ACCESS_REMOTE_WRITE,
	      "ibv_bind_mw: a BIND_MW WQE, the next rkey kept in the window",
	      "ret %d, opcode %u, new_rkey %#x, mw rkey %#x", ret, w->opcode,
	      w->bind.new_rkey, mw1.rkey);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xb2;
	wr.opcode = IBV_WR_BIND_MW;
	wr.bind_mw.mw = &mw1;
	wr.bind_mw.rkey = 0x120001;
	wr.bind_mw.bind_info = mb.bind_info;
	ret = ibv_post_send(o->qp, &wr, &bad);
	check(ret == EINVAL && bad == &wr && db->head[0] == head + 1,
	      "post_send: IBV_WR_BIND_MW of a type 1 window EINVAL", "ret %d",
	      ret);
	wr.bind_mw.mw = &mw2;
	wr.bind_mw.rkey = 0x340012;
	ret = ibv_post_send(o->qp, &wr, &bad);
	w = sq_slot(o->fqp, head + 1);
	check(!ret && w->opcode == VHCA_WR_BIND_MW &&
	      w->bind.mw_rkey == 0x340011 && w->bind.new_rkey == 0x340012 &&
	      mw2.rkey == 0x340011 && w->bind.mr_lkey == 0x3344,
	      "post_send: IBV_WR_BIND_MW of a type 2 window, the consumer's key",
	      "ret %d, new_rkey %#x", ret, w->bind.new_rkey);
	memset(&wr, 0, sizeof(wr));
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.invalidate_rkey = 0x340012;
	ret = ibv_post_send(o->qp, &wr, &bad);
	w = sq_slot(o->fqp, head + 2);
	check(!ret && w->opcode == VHCA_WR_LOCAL_INV &&
	      w->invalidate_rkey == 0x340012 && w->num_sge == 0,
	      "post_send: LOCAL_INV carries the rkey", "ret %d", ret);
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.invalidate_rkey = 0x77;
	ret = ibv_post_send(o->qp, &wr, &bad);
	w = sq_slot(o->fqp, head + 3);
	check(!ret && w->opcode == VHCA_WR_SEND_WITH_INV &&
	      w->invalidate_rkey == 0x77 && db->head[0] == head + 4,
	      "post_send: SEND_WITH_INV carries the rkey", "ret %d", ret);
}

/* UD: AH index in the WQE, sq_sig_all, and the flush on the kick in ERR. */
TEST_F(cq, ud)
{
	struct objs *o = &self->o;
	struct ibv_ah_attr ah_attr = { .dlid = 0x1234, .sl = 3, .port_num = 1 };
	struct ibv_qp_init_attr qpa = {
		.send_cq = o->cq, .recv_cq = o->cq, .qp_type = IBV_QPT_UD,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_sge sge = { 0x8000, 64, FAKE_LKEY };
	struct ibv_send_wr swr = { .wr_id = 0x11, .sg_list = &sge,
				   .num_sge = 1, .opcode = IBV_WR_SEND }, *sbad;
	struct ibv_recv_wr rwr = { .wr_id = 0x22, .sg_list = &sge,
				   .num_sge = 1 }, *rbad;
	const struct vhca_send_wqe *w;
	struct ibv_wc wc[4];
	struct fake_qp *fqp;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	unsigned int calls;
	int ret, n;

	ah = ibv_create_ah(o->pd, &ah_attr);
	check(ah && ah->handle == FAKE_AH_HANDLE &&
	      fk.create_ah.pd_handle == FAKE_PD_HANDLE &&
	      fk.create_ah.attr.dlid == 0x1234 && fk.create_ah.attr.sl == 3,
	      "ibv_create_ah reaches CREATE_AH", "ah %p, errno %d",
	      (void *)ah, errno);
	qp = ibv_create_qp(o->pd, &qpa);
	fqp = qp ? find_qp(qp->handle) : NULL;
	if (!ah || !fqp) {
		check(false, "UD QP created", "errno %d", errno);
		return;
	}
	modify_state(qp, IBV_QPS_INIT);
	modify_state(qp, IBV_QPS_RTR);
	modify_state(qp, IBV_QPS_RTS);

	swr.wr.ud.ah = ah;
	swr.wr.ud.remote_qpn = 0x654321;
	swr.wr.ud.remote_qkey = 0x11111111;
	ret = ibv_post_send(qp, &swr, &sbad);
	w = sq_slot(fqp, 0);
	check(!ret && w->opcode == VHCA_WR_SEND &&
	      w->flags == VHCA_WQE_SIGNALED && w->ud.ah == FAKE_AH_INDEX &&
	      w->ud.remote_qpn == 0x654321 && w->ud.remote_qkey == 0x11111111,
	      "post_send UD: ah_index, remote QPN and Q_Key; sq_sig_all "
	      "signals", "ret %d, ah %#x, flags %#x", ret, w->ud.ah, w->flags);
	swr.opcode = IBV_WR_RDMA_WRITE;
	ret = ibv_post_send(qp, &swr, &sbad);
	check(ret == EINVAL && sbad == &swr, "post_send UD: RDMA WRITE EINVAL",
	      "ret %d", ret);
	swr.opcode = IBV_WR_SEND;

	check(modify_state(qp, IBV_QPS_ERR) &&
	      (fk_st(fqp->db_index)[0].flags & VHCA_STATUS_QP_ERROR),
	      "modify_qp to ERR (the fake raises VHCA_STATUS_QP_ERROR)",
	      "errno %d", errno);
	calls = fk.cmds[IB_USER_VERBS_CMD_POST_SEND];
	ret = ibv_post_recv(qp, &rwr, &rbad);
	n = ibv_poll_cq(o->cq, 4, wc);
	check(!ret && fk.cmds[IB_USER_VERBS_CMD_POST_SEND] == calls + 1 &&
	      n == 2 && wc[0].wr_id == 0x11 && wc[1].wr_id == 0x22 &&
	      wc[0].status == IBV_WC_WR_FLUSH_ERR &&
	      wc[1].status == IBV_WC_WR_FLUSH_ERR,
	      "post_recv in ERR kicks; the flushed WRs complete with "
	      "WR_FLUSH_ERR", "ret %d, n %d, %u kicks", ret, n,
	      fk.cmds[IB_USER_VERBS_CMD_POST_SEND] - calls);
	swr.wr_id = 0x33;
	ret = ibv_post_send(qp, &swr, &sbad);
	n = ibv_poll_cq(o->cq, 4, wc);
	check(!ret && n == 1 && wc[0].wr_id == 0x33 &&
	      wc[0].status == IBV_WC_WR_FLUSH_ERR,
	      "post_send in ERR: flushed on the kick", "ret %d, n %d", ret, n);

	check(modify_state(qp, IBV_QPS_RESET), "modify_qp ERR -> RESET",
	      "errno %d", errno);
	calls = syscalls();
	ret = ibv_post_recv(qp, &rwr, &rbad);
	check(ret == EINVAL && syscalls() == calls,
	      "post_recv in RESET: EINVAL, no system call", "ret %d", ret);
	modify_state(qp, IBV_QPS_INIT);
	ret = ibv_post_recv(qp, &rwr, &rbad);
	check(!ret && syscalls() == calls + 1,
	      "post_recv after the error flag cleared: no kick",
	      "ret %d, %u system calls", ret, syscalls() - calls - 1);

	check(!ibv_destroy_qp(qp) && fk.destroyed == fqp->handle &&
	      unmapped(fqp->sq.ring) && unmapped(fqp->rq.ring),
	      "ibv_destroy_qp reaches DESTROY_QP, rings unmapped", "failed");
	check(!ibv_destroy_ah(ah) && fk.destroyed == FAKE_AH_HANDLE,
	      "ibv_destroy_ah reaches DESTROY_AH", "failed");
}

/* A response the provider must refuse. */
TEST_F(rc, qp_bad_response)
{
	struct objs *o = &self->o;
	struct ibv_qp_init_attr qpa = o->qp_attr;
	unsigned int destroys = fk.cmds[IB_USER_VERBS_CMD_DESTROY_QP];
	unsigned int maps = fk.nmaps;
	struct ibv_qp *qp;

	fk.bad_qp_resp = true;
	errno = 0;
	qp = ibv_create_qp(o->pd, &qpa);
	fk.bad_qp_resp = false;
	check(!qp && errno == EPROTO &&
	      fk.cmds[IB_USER_VERBS_CMD_DESTROY_QP] == destroys + 1 &&
	      fk.nmaps == maps,
	      "create_qp: inconsistent response EPROTO, QP destroyed, nothing "
	      "mapped", "qp %p, errno %d", (void *)qp, errno);
}
