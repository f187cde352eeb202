// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Work queue entries as the engine reads them from the rings the provider
 * writes: send WQEs (RC and UD), their completion and its opcode, and
 * receive WQEs from the RQ or the SRQ.
 * The rings are in user memory: every field is read once, and what was
 * read is checked by the caller before it is used.
 */
#include "vhca_engine.h"

const struct vhca_sge *vhca_wqe_read_send(const struct vhca_qp *qp,
					  const struct vhca_send_wqe *slot,
					  struct vhca_send_wqe *hdr)
{
	hdr->wr_id = READ_ONCE(slot->wr_id);
	hdr->opcode = READ_ONCE(slot->opcode);
	hdr->flags = READ_ONCE(slot->flags) |
		     (qp->sig_all ? VHCA_WQE_SIGNALED : 0);
	hdr->num_sge = READ_ONCE(slot->num_sge);
	hdr->inline_len = READ_ONCE(slot->inline_len);
	hdr->imm_data = READ_ONCE(slot->imm_data);
	return (const struct vhca_sge *)(slot + 1);
}

u64 vhca_wqe_read_sges(struct vhca_sge *dst, const struct vhca_sge *src,
		       u32 num_sge)
{
	u64 len = 0;
	u32 i;

	for (i = 0; i < num_sge; i++) {
		dst[i].addr = READ_ONCE(src[i].addr);
		dst[i].length = READ_ONCE(src[i].length);
		dst[i].lkey = READ_ONCE(src[i].lkey);
		len += dst[i].length;
	}
	return len;
}

void vhca_wqe_complete_send(struct vhca_qp *qp, const struct vhca_send_wqe *hdr,
			    u8 opcode, u32 len, u8 status)
{
	struct vhca_cqe cqe = {
		.wr_id = hdr->wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = len,
		.qp_num = qp->ibqp.qp_num,
	};

	qp->sq_tail++;
	/* The provider may reuse the slot once it sees the tail. */
	smp_store_release(&qp->recs.st->tail[0], qp->sq_tail);
	if (status != IB_WC_SUCCESS || (hdr->flags & VHCA_WQE_SIGNALED))
		vhca_cq_post(to_vcq(qp->ibqp.send_cq), &cqe, false);
}

void vhca_wqe_malformed(const struct vhca_qp *qp)
{
	atomic64_inc(&to_vdev(qp->ibqp.device)->counters[VHCA_CNT_MALFORMED_WQES]);
}

bool vhca_wqe_take_recv(struct vhca_qp *qp, struct vhca_rmsg *msg, bool *bad)
{
	struct vhca_srq *srq = qp->ibqp.srq ? to_vsrq(qp->ibqp.srq) :
			       qp->resp.xsrq;
	const struct vhca_recv_wqe *slot;
	const struct vhca_sge *sge;
	u32 head, used;

	*bad = false;
	if (srq) {
		int err = vhca_srq_take(srq, &msg->rwqe, msg->sge);

		*bad = err == -EINVAL;
		if (*bad)
			vhca_wqe_malformed(qp);
		return err != -ENOENT;
	}
	if (!qp->rq.count)
		return false;
	/* Pairs with the producer's release: WQEs before head are written. */
	head = smp_load_acquire(&qp->recs.db->head[1]);
	used = vhca_ring_used(&qp->rq, head, qp->rq_tail);
	if (!used || used == U32_MAX)
		return false;
	slot = vhca_ring_slot(&qp->rq, qp->rq_tail);
	sge = (const struct vhca_sge *)(slot + 1);
	msg->rwqe.wr_id = READ_ONCE(slot->wr_id);
	msg->rwqe.num_sge = READ_ONCE(slot->num_sge);
	if (msg->rwqe.num_sge > qp->max_recv_sge) {
		*bad = true;
		vhca_wqe_malformed(qp);
		msg->rwqe.num_sge = 0;
	}
	vhca_wqe_read_sges(msg->sge, sge, msg->rwqe.num_sge);
	qp->rq_tail++;
	/* The slot is read before the provider may reuse it. */
	smp_store_release(&qp->recs.st->tail[1], qp->rq_tail);
	return true;
}

/* The work completion opcode of a send WQE opcode. */
enum ib_wc_opcode vhca_wc_opcode(u8 wr_opcode)
{
	switch (wr_opcode) {
	case VHCA_WR_RDMA_WRITE:
	case VHCA_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case VHCA_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case VHCA_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case VHCA_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
#ifdef VHCA_HAVE_IB_ATOMIC_WRITE
	case VHCA_WR_ATOMIC_WRITE:
		return IB_WC_ATOMIC_WRITE;
#endif
#ifdef VHCA_HAVE_IB_FLUSH
	case VHCA_WR_FLUSH:
		return IB_WC_FLUSH;
#endif
	default:
		return IB_WC_SEND;
	}
}

/* The work completion opcode of a send WQE's opcode. */
static u8 vhca_comp_opcode(u8 wr_opcode)
{
	switch (wr_opcode) {
	case VHCA_WR_REG_MR:
		return IB_WC_REG_MR;
	case VHCA_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case VHCA_WR_BIND_MW:
		return IB_WC_BIND_MW;
	default:
		return vhca_wc_opcode(wr_opcode);
	}
}

/* Complete the WQE at sq_tail; under sq_lock. */
void vhca_comp_wqe(struct vhca_qp *qp, u8 status)
{
	struct vhca_swqe *wqe = vhca_qp_swqe(qp, qp->sq_tail);

	wqe->fetched = false;
	if (qp->req.next == qp->sq_tail) {
		/* Unsent: the requester goes on with the next. */
		qp->req.next = qp->sq_tail + 1;
		qp->req.pkt = 0;
	}
	vhca_wqe_complete_send(qp, &wqe->hdr, vhca_comp_opcode(wqe->hdr.opcode),
			       wqe->len, status);
}
