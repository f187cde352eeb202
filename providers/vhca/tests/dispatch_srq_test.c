// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The dispatch test's SRQs and XRC: the SRQ ring and its posts, the XRC
 * domain, its SRQs and QPs.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

#include "dispatch.h"

TEST_F(cq, srq)
{
	struct objs *o = &self->o;
	struct ibv_srq_init_attr init = {
		.attr = { .max_wr = 10, .max_sge = 3, .srq_limit = 0 },
	};
	struct ibv_sge sge[3] = { { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } };
	struct ibv_recv_wr wr = { .wr_id = 0x5a, .sg_list = sge,
				  .num_sge = 3 }, *bad;
	struct ibv_srq_attr attr = { .srq_limit = 5 };
	struct ibv_qp_init_attr qpa = {
		.send_cq = o->cq, .recv_cq = o->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2, .max_send_sge = 1 },
	};
	const struct vhca_recv_wqe *w;
	struct fake_srq *fsrq;
	struct fake_qp *fqp;
	struct ibv_srq *srq;
	struct region *ring;
	struct ibv_qp *qp;
	unsigned int calls, maps;
	int ret;

	srq = ibv_create_srq(o->pd, &init);
	fsrq = srq ? find_srq(srq->handle) : NULL;
	check(fsrq && fk.create_srq.max_wr == 10 &&
	      fk.create_srq.max_sge == 3 && init.attr.max_wr == 16 &&
	      mapped_as(fsrq->rq.ring, PROT_READ | PROT_WRITE),
	      "ibv_create_srq reaches CREATE_SRQ, ring mapped read-write",
	      "srq %p, errno %d", (void *)srq, errno);
	if (!fsrq)
		return;
	ring = fsrq->rq.ring;

	calls = syscalls();
	ret = ibv_post_srq_recv(srq, &wr, &bad);
	w = rq_slot(&fsrq->rq, 0);
	check(!ret && w->wr_id == 0x5a && w->num_sge == 3 &&
	      wqe_sges(w, sizeof(*w))[2].lkey == 9 &&
	      fk_db(fsrq->db_index)[0].head[0] == 1 && syscalls() == calls,
	      "post_srq_recv: WQE in the SRQ ring, head[0], no system call",
	      "ret %d", ret);
	wr.num_sge = 4;
	ret = ibv_post_srq_recv(srq, &wr, &bad);
	check(ret == EINVAL && bad == &wr, "post_srq_recv: past max_sge EINVAL",
	      "ret %d", ret);

	ret = ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT);
	check(!ret && fk.modify_srq.srq_handle == srq->handle &&
	      fk.modify_srq.attr_mask == IBV_SRQ_LIMIT &&
	      fk.modify_srq.srq_limit == 5,
	      "ibv_modify_srq reaches MODIFY_SRQ", "ret %d", ret);
	memset(&attr, 0, sizeof(attr));
	ret = ibv_query_srq(srq, &attr);
	check(!ret && attr.srq_limit == FAKE_SRQ_LIMIT && attr.max_wr == 16 &&
	      attr.max_sge == 3, "ibv_query_srq reaches QUERY_SRQ",
	      "ret %d, limit %u", ret, attr.srq_limit);

	qpa.srq = srq;
	maps = fk.nmaps;
	qp = ibv_create_qp(o->pd, &qpa);
	fqp = qp ? find_qp(qp->handle) : NULL;
	check(fqp && fk.create_qp.is_srq && fk.create_qp.srq_handle ==
	      srq->handle && !fqp->rq.ring && fk.nmaps == maps + 1,
	      "create_qp on an SRQ: only the SQ ring mapped", "qp %p, %u maps",
	      (void *)qp, fk.nmaps - maps);
	if (qp) {
		modify_state(qp, IBV_QPS_INIT);
		wr.num_sge = 1;
		ret = ibv_post_recv(qp, &wr, &bad);
		check(ret == EINVAL && bad == &wr,
		      "post_recv on an SRQ's QP: EINVAL", "ret %d", ret);
		check(!ibv_destroy_qp(qp), "destroy the SRQ's QP", "failed");
	}

	ret = ibv_destroy_srq(srq);
	check(!ret && fk.destroyed == fsrq->handle && unmapped(ring),
	      "ibv_destroy_srq reaches DESTROY_SRQ, ring unmapped", "ret %d",
	      ret);
}

/* An XRC SRQ of xrcd on the objects' PD and CQ. */
static struct ibv_srq *xrc_srq(struct objs *o, struct ibv_xrcd *xrcd,
			       struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC, .pd = o->pd, .xrcd = xrcd, .cq = cq,
	};

	return ibv_create_srq_ex(o->ctx, &sa);
}

/*
 * XRC: open_xrcd, create_srq_ex of an XRC SRQ and its number, XRC_RECV
 * QPs created and opened (no rings), close_xrcd.
 */
TEST_F(cq, xrc)
{
	struct objs *o = &self->o;
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_RECV, .comp_mask = IBV_QP_INIT_ATTR_XRCD,
	};
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	unsigned int maps, cmds;
	struct ibv_qp *tgt, *opened;
	struct fake_srq *fsrq;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	uint32_t srqn = 0;
	int ret;

	xrcd = ibv_open_xrcd(o->ctx, &xa);
	check(xrcd && fk.open_xrcd.fd == (uint32_t)-1 &&
	      fk.open_xrcd.oflags == O_CREAT,
	      "ibv_open_xrcd reaches OPEN_XRCD", "xrcd %p, errno %d",
	      (void *)xrcd, errno);
	if (!xrcd)
		return;
	srq = xrc_srq(o, xrcd, o->cq);
	fsrq = srq ? find_srq(srq->handle) : NULL;
	check(fsrq && fk.create_xsrq.srq_type == IBV_SRQT_XRC &&
	      fk.create_xsrq.xrcd_handle == FAKE_XRCD_HANDLE &&
	      fk.create_xsrq.cq_handle == o->cq->handle &&
	      fk.create_xsrq.pd_handle == FAKE_PD_HANDLE &&
	      mapped_as(fsrq->rq.ring, PROT_READ | PROT_WRITE),
	      "ibv_create_srq_ex XRC reaches CREATE_XSRQ, ring mapped",
	      "srq %p, errno %d", (void *)srq, errno);
	ret = srq ? ibv_get_srq_num(srq, &srqn) : -1;
	check(!ret && srqn == FAKE_XSRQN, "ibv_get_srq_num: the kernel's number",
	      "ret %d, srqn %#x", ret, srqn);
	cmds = fk.writes;
	check(!xrc_srq(o, xrcd, NULL) && errno == EINVAL && fk.writes == cmds,
	      "create_srq_ex XRC without CQ: EINVAL, no command", "errno %d",
	      errno);

	maps = fk.nmaps;
	qa.xrcd = xrcd;
	tgt = ibv_create_qp_ex(o->ctx, &qa);
	check(tgt && fk.create_qp.qp_type == IBV_QPT_XRC_RECV &&
	      fk.create_qp.pd_handle == FAKE_XRCD_HANDLE && fk.nmaps == maps,
	      "create_qp_ex XRC_RECV: CREATE_QP in the XRCD, nothing mapped",
	      "qp %p, errno %d", (void *)tgt, errno);
	if (tgt) {
		oa.qp_num = tgt->qp_num;
		oa.xrcd = xrcd;
		opened = ibv_open_qp(o->ctx, &oa);
		check(opened && fk.open_qp.qpn == tgt->qp_num &&
		      fk.open_qp.pd_handle == FAKE_XRCD_HANDLE &&
		      opened->qp_num == tgt->qp_num,
		      "ibv_open_qp reaches OPEN_QP", "qp %p, errno %d",
		      (void *)opened, errno);
		if (opened)
			check(!ibv_destroy_qp(opened), "destroy the opened QP",
			      "failed");
		check(!ibv_destroy_qp(tgt), "destroy the XRC_RECV QP",
		      "failed");
	}
	if (srq)
		check(!ibv_destroy_srq(srq) && unmapped(fsrq->rq.ring),
		      "destroy the XRC SRQ, ring unmapped", "failed");
	ret = ibv_close_xrcd(xrcd);
	check(!ret && fk.destroyed == FAKE_XRCD_HANDLE,
	      "ibv_close_xrcd reaches CLOSE_XRCD", "ret %d", ret);
}

/* The XRC_SEND QP: the SRQ numbers in its WQEs; no receives, no local ops. */
TEST_F(cq, xrc_send)
{
	struct objs *o = &self->o;
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_SEND, .send_cq = o->cq,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = o->pd, .send_ops_flags = IBV_QP_EX_WITH_SEND,
	};
	struct ibv_sge sge = { 0x8000, 64, FAKE_LKEY };
	struct ibv_send_wr swr = {
		.wr_id = 0x33, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .qp_type.xrc.remote_srqn = 0x123456,
	}, *sbad;
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	unsigned int maps = fk.nmaps;
	struct ibv_qp_ex *qpx;
	struct fake_qp *fqp;
	struct ibv_qp *qp;
	int ret;

	qp = ibv_create_qp_ex(o->ctx, &qa);
	fqp = qp ? find_qp(qp->handle) : NULL;
	check(fqp && fk.create_qp.qp_type == IBV_QPT_XRC_SEND &&
	      fk.create_qp.pd_handle == FAKE_PD_HANDLE && fqp->sq.ring &&
	      !fqp->rq.ring && fk.nmaps == maps + 1,
	      "create_qp_ex XRC_SEND: CREATE_QP, only the SQ ring mapped",
	      "qp %p, errno %d", (void *)qp, errno);
	if (!fqp)
		return;
	check(modify_state(qp, IBV_QPS_INIT) && modify_state(qp, IBV_QPS_RTR) &&
	      modify_state(qp, IBV_QPS_RTS), "XRC_SEND QP to RTS", "failed");
	ret = ibv_post_send(qp, &swr, &sbad);
	check(!ret && sq_slot(fqp, 0)->xrc_srqn == 0x123456 &&
	      sq_slot(fqp, 0)->opcode == VHCA_WR_SEND,
	      "post_send on XRC_SEND: remote_srqn in the WQE's xrc_srqn",
	      "ret %d, xrc_srqn %#x", ret, sq_slot(fqp, 0)->xrc_srqn);
	qpx = ibv_qp_to_qp_ex(qp);
	ibv_wr_start(qpx);
	qpx->wr_id = 0x34;
	ibv_wr_send(qpx);
	ibv_wr_set_xrc_srqn(qpx, 0xabcdef);
	ibv_wr_set_sge(qpx, FAKE_LKEY, 0x8000, 64);
	ret = ibv_wr_complete(qpx);
	check(!ret && sq_slot(fqp, 1)->xrc_srqn == 0xabcdef &&
	      sq_slot(fqp, 1)->wr_id == 0x34,
	      "ibv_wr_set_xrc_srqn: the number in the WQE's xrc_srqn",
	      "ret %d, xrc_srqn %#x", ret, sq_slot(fqp, 1)->xrc_srqn);
	swr.opcode = IBV_WR_RDMA_READ;
	swr.wr.rdma.remote_addr = 0x9000;
	swr.wr.rdma.rkey = 0x1234;
	ret = ibv_post_send(qp, &swr, &sbad);
	check(!ret && sq_slot(fqp, 2)->opcode == VHCA_WR_RDMA_READ &&
	      sq_slot(fqp, 2)->xrc_srqn == 0x123456,
	      "post_send READ on XRC_SEND: a READ WQE with the SRQ number",
	      "ret %d, opcode %u", ret, sq_slot(fqp, 2)->opcode);
	swr.opcode = IBV_WR_LOCAL_INV;
	ret = ibv_post_send(qp, &swr, &sbad);
	check(ret == EINVAL && sbad == &swr,
	      "post_send LOCAL_INV on XRC_SEND: EINVAL", "ret %d", ret);
	ret = ibv_post_recv(qp, &rwr, &rbad);
	check(ret == EINVAL && rbad == &rwr, "post_recv on XRC_SEND: EINVAL",
	      "ret %d", ret);
	check(!ibv_destroy_qp(qp) && fk.destroyed == fqp->handle,
	      "destroy the XRC_SEND QP", "failed");
}
