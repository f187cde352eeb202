// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca: the ibv_qp_ex work-request API (ibv_wr_start ... ibv_wr_complete).
 *
 * The work requests of a batch are written straight into the send ring at
 * the provider's head, which advances without being published: the device
 * reads only up to the published head, so it never sees part of a batch.
 * wr_complete publishes the batch with the release store post_send uses
 * and then kicks as post_send does.  wr_abort discards the batch by
 * rewinding the head; so does wr_complete when a work request of the batch
 * was refused (a full ring, too many SGEs, inline data too long, an
 * operation or flag the QP does not have), and it returns that error, as
 * rdma-core's providers do: the builders themselves return nothing.  The
 * batch holds the SQ lock from wr_start to wr_complete or wr_abort.
 */
#include <errno.h>
#include <string.h>

#include "vhca.h"

#define VHCA_QPEX_UD_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
#define VHCA_QPEX_UC_OPS (VHCA_QPEX_UD_OPS | IBV_QP_EX_WITH_RDMA_WRITE | \
			  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM)
/* ATOMIC WRITE: rdma-core 44's verbs.h has it, earlier ones do not. */
#if VHCA_RDMA_CORE >= 44
#define VHCA_QPEX_ATOMIC_WRITE IBV_QP_EX_WITH_ATOMIC_WRITE
#else
#define VHCA_QPEX_ATOMIC_WRITE 0
#endif
/* FLUSH: from rdma-core 45's verbs.h on. */
#if VHCA_RDMA_CORE >= 45
#define VHCA_QPEX_FLUSH IBV_QP_EX_WITH_FLUSH
#else
#define VHCA_QPEX_FLUSH 0
#endif
#define VHCA_QPEX_RC_OPS (VHCA_QPEX_UC_OPS | IBV_QP_EX_WITH_RDMA_READ | \
			  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
			  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
			  VHCA_QPEX_ATOMIC_WRITE | VHCA_QPEX_FLUSH | \
			  IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV | \
			  IBV_QP_EX_WITH_SEND_WITH_INV)

/* wr_flags a work request may carry; inline data has its own setters. */
#define VHCA_QPEX_FLAGS (IBV_SEND_FENCE | IBV_SEND_SIGNALED | \
			 IBV_SEND_SOLICITED | IBV_SEND_INLINE)

/* XRC: RC's remote operations; no local ones. */
#define VHCA_QPEX_XRC_OPS (VHCA_QPEX_UC_OPS | IBV_QP_EX_WITH_RDMA_READ | \
			   IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
			   IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
			   VHCA_QPEX_ATOMIC_WRITE | VHCA_QPEX_FLUSH | \
			   IBV_QP_EX_WITH_SEND_WITH_INV)

/*
 * The kernel's IB_UVERBS_DEVICE_ATOMIC_WRITE and _FLUSH_GLOBAL (Linux
 * 6.2), in the device_cap_flags_ex of query_device_ex: vhca sets them
 * where the kernel's verbs have the operations, and refuses them where
 * they do not.
 */
#define VHCA_DEVICE_FLUSH_GLOBAL (1ULL << 38)
#define VHCA_DEVICE_ATOMIC_WRITE (1ULL << 40)

static bool vhca_device_has(struct ibv_context *ibctx, uint64_t cap)
{
	struct ibv_device_attr_ex attr;

	return !ibv_cmd_query_device_any(ibctx, NULL, &attr, sizeof(attr),
					 NULL, NULL) &&
	       (attr.device_cap_flags_ex & cap) == cap;
}

int vhca_qpex_check_ops(struct ibv_context *ibctx, enum ibv_qp_type type,
			uint64_t send_ops)
{
	uint64_t ops = type == IBV_QPT_RC ? VHCA_QPEX_RC_OPS :
		       type == IBV_QPT_UC ? VHCA_QPEX_UC_OPS :
		       type == IBV_QPT_UD ? VHCA_QPEX_UD_OPS :
		       type == IBV_QPT_XRC_SEND ? VHCA_QPEX_XRC_OPS : 0;

	if (send_ops & ~ops)
		return EOPNOTSUPP;
	if ((send_ops & VHCA_QPEX_ATOMIC_WRITE) &&
	    !vhca_device_has(ibctx, VHCA_DEVICE_ATOMIC_WRITE))
		return EOPNOTSUPP;
	if ((send_ops & VHCA_QPEX_FLUSH) &&
	    !vhca_device_has(ibctx, VHCA_DEVICE_FLUSH_GLOBAL))
		return EOPNOTSUPP;
	return 0;
}

/* The batch fails with its first error; no WQE is being built any more. */
static void vhca_qpex_fail(struct vhca_qp *qp, int err)
{
	if (!qp->ex_err)
		qp->ex_err = err;
	qp->wqe = NULL;
}

/*
 * A new WQE at the head for operation @op (an IBV_QP_EX_WITH_* bit) with
 * VHCA_WR_* @opcode, its header filled from wr_id and wr_flags; NULL if
 * the batch has failed or fails here.
 */
static struct vhca_send_wqe *vhca_qpex_new(struct ibv_qp_ex *qpx,
					   uint64_t op, int opcode)
{
	struct vhca_qp *qp = qpex_to_vqp(qpx);
	struct vhca_send_wqe *wqe;

	if (qp->ex_err)
		return NULL;
	if (!(qp->send_ops & op) || (qpx->wr_flags & ~VHCA_QPEX_FLAGS)) {
		vhca_qpex_fail(qp, EINVAL);
		return NULL;
	}
	if (vhca_wq_full(&qp->sq)) {
		vhca_qpex_fail(qp, ENOMEM);
		return NULL;
	}

	wqe = vhca_wq_slot(&qp->sq, qp->sq.head++);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = qpx->wr_id;
	wqe->opcode = opcode;
	if ((qpx->wr_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		wqe->flags |= VHCA_WQE_SIGNALED;
	if (qpx->wr_flags & IBV_SEND_SOLICITED)
		wqe->flags |= VHCA_WQE_SOLICITED;
	if (qpx->wr_flags & IBV_SEND_FENCE)
		wqe->flags |= VHCA_WQE_FENCE;
	qp->wqe = wqe;
	return wqe;
}

/* The WQE the setters fill; a setter without one fails the batch. */
static struct vhca_send_wqe *vhca_qpex_cur(struct vhca_qp *qp)
{
	if (!qp->wqe && !qp->ex_err)
		vhca_qpex_fail(qp, EINVAL);
	return qp->wqe;
}

static void vhca_wr_start(struct ibv_qp_ex *qpx)
{
	struct vhca_qp *qp = qpex_to_vqp(qpx);

	pthread_spin_lock(&qp->sq.lock);
	qp->ex_start = qp->sq.head;
	qp->wqe = NULL;
	/* As post_send: nothing is queued before RTS. */
	qp->ex_err = !qp->sq.buf || qpx->qp_base.state < IBV_QPS_RTS ?
		     EINVAL : 0;
}

static int vhca_wr_complete(struct ibv_qp_ex *qpx)
{
	struct vhca_qp *qp = qpex_to_vqp(qpx);
	int err = qp->ex_err;
	bool posted;

	if (err)
		qp->sq.head = qp->ex_start;
	posted = qp->sq.head != qp->ex_start;
	if (posted)
		vhca_wq_publish(&qp->sq);
	qp->wqe = NULL;
	pthread_spin_unlock(&qp->sq.lock);

	return posted ? vhca_sq_kick(qp) : err;
}

static void vhca_wr_abort(struct ibv_qp_ex *qpx)
{
	struct vhca_qp *qp = qpex_to_vqp(qpx);

	qp->sq.head = qp->ex_start;
	qp->wqe = NULL;
	pthread_spin_unlock(&qp->sq.lock);
}

/* ---- operations ---- */

static void vhca_wr_send(struct ibv_qp_ex *qpx)
{
	vhca_qpex_new(qpx, IBV_QP_EX_WITH_SEND, VHCA_WR_SEND);
}

static void vhca_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct vhca_send_wqe *wqe;

	wqe = vhca_qpex_new(qpx, IBV_QP_EX_WITH_SEND_WITH_IMM,
			    VHCA_WR_SEND_WITH_IMM);
	if (wqe)
		wqe->imm_data = imm_data;
}

static void vhca_wr_rdma(struct ibv_qp_ex *qpx, uint64_t op, int opcode,
			 uint32_t rkey, uint64_t remote_addr, __be32 imm_data)
{
	struct vhca_send_wqe *wqe = vhca_qpex_new(qpx, op, opcode);

	if (!wqe)
		return;
	wqe->rdma.remote_addr = remote_addr;
	wqe->rdma.rkey = rkey;
	wqe->imm_data = imm_data;
}

static void vhca_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			       uint64_t remote_addr)
{
	vhca_wr_rdma(qpx, IBV_QP_EX_WITH_RDMA_WRITE, VHCA_WR_RDMA_WRITE, rkey,
		     remote_addr, 0);
}

static void vhca_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t remote_addr, __be32 imm_data)
{
	vhca_wr_rdma(qpx, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
		     VHCA_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr, imm_data);
}

static void vhca_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t remote_addr)
{
	vhca_wr_rdma(qpx, IBV_QP_EX_WITH_RDMA_READ, VHCA_WR_RDMA_READ, rkey,
		     remote_addr, 0);
}

static void vhca_wr_atomic(struct ibv_qp_ex *qpx, uint64_t op, int opcode,
			   uint32_t rkey, uint64_t remote_addr,
			   uint64_t compare_add, uint64_t swap)
{
	struct vhca_send_wqe *wqe = vhca_qpex_new(qpx, op, opcode);

	if (!wqe)
		return;
	wqe->atomic.remote_addr = remote_addr;
	wqe->atomic.rkey = rkey;
	wqe->atomic.compare_add = compare_add;
	wqe->atomic.swap = swap;
}

static void vhca_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t remote_addr, uint64_t compare,
				   uint64_t swap)
{
	vhca_wr_atomic(qpx, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP,
		       VHCA_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr, compare,
		       swap);
}

static void vhca_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				     uint64_t remote_addr, uint64_t add)
{
	vhca_wr_atomic(qpx, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
		       VHCA_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr, add, 0);
}

#if VHCA_RDMA_CORE >= 44
/* The 8 bytes at atomic_wr, stored as one: they travel in the WQE. */
static void vhca_wr_atomic_write(struct ibv_qp_ex *qpx, uint32_t rkey,
				 uint64_t remote_addr, const void *atomic_wr)
{
	struct vhca_send_wqe *wqe = vhca_qpex_new(qpx,
						  IBV_QP_EX_WITH_ATOMIC_WRITE,
						  VHCA_WR_ATOMIC_WRITE);

	if (!wqe)
		return;
	wqe->atomic.remote_addr = remote_addr;
	wqe->atomic.rkey = rkey;
	memcpy(&wqe->atomic.swap, atomic_wr, sizeof(wqe->atomic.swap));
	/* It takes no SGEs and no inline data: a setter fails the batch. */
	qpex_to_vqp(qpx)->wqe = NULL;
}
#endif

#if VHCA_RDMA_CORE >= 45
/*
 * type and level go to the device as they are: it completes a WQE with
 * one it does not know in error.  The range's length is the RETH's, 32
 * bits.
 */
static void vhca_wr_flush(struct ibv_qp_ex *qpx, uint32_t rkey,
			  uint64_t remote_addr, size_t len, uint8_t type,
			  uint8_t level)
{
	struct vhca_send_wqe *wqe = vhca_qpex_new(qpx, IBV_QP_EX_WITH_FLUSH,
						  VHCA_WR_FLUSH);

	if (!wqe)
		return;
	qpex_to_vqp(qpx)->wqe = NULL;
	if (len > UINT32_MAX) {
		vhca_qpex_fail(qpex_to_vqp(qpx), EINVAL);
		return;
	}
	wqe->flush.remote_addr = remote_addr;
	wqe->flush.rkey = rkey;
	wqe->flush.type = type;
	wqe->flush.level = level;
	wqe->flush.length = len;
}
#endif

/* A type 2 window's bind (type 1 windows bind with ibv_bind_mw). */
static void vhca_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
			    uint32_t rkey, const struct ibv_mw_bind_info *info)
{
	struct vhca_send_wqe *wqe;

	wqe = vhca_qpex_new(qpx, IBV_QP_EX_WITH_BIND_MW, VHCA_WR_BIND_MW);
	if (!wqe)
		return;
	if (!mw || mw->type != IBV_MW_TYPE_2) {
		vhca_qpex_fail(qpex_to_vqp(qpx), EINVAL);
		return;
	}
	vhca_wqe_set_bind(wqe, mw, rkey, info);
}

/* Of a type 2 window's rkey: a user process has no MR to invalidate. */
static void vhca_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct vhca_send_wqe *wqe;

	wqe = vhca_qpex_new(qpx, IBV_QP_EX_WITH_LOCAL_INV, VHCA_WR_LOCAL_INV);
	if (wqe)
		wqe->invalidate_rkey = invalidate_rkey;
}

static void vhca_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct vhca_send_wqe *wqe;

	wqe = vhca_qpex_new(qpx, IBV_QP_EX_WITH_SEND_WITH_INV,
			    VHCA_WR_SEND_WITH_INV);
	if (wqe)
		wqe->invalidate_rkey = invalidate_rkey;
}

/* ---- setters of the current work request ---- */

static void vhca_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
				 const struct ibv_sge *sg_list)
{
	struct vhca_qp *qp = qpex_to_vqp(qpx);
	struct vhca_send_wqe *wqe = vhca_qpex_cur(qp);

	if (!wqe)
		return;
	if (num_sge > qp->sq.max_sge) {
		vhca_qpex_fail(qp, EINVAL);
		return;
	}
	vhca_copy_sges((struct vhca_sge *)(wqe + 1), sg_list, (int)num_sge);
	wqe->num_sge = num_sge;
	wqe->inline_len = 0;
	wqe->flags &= ~VHCA_WQE_INLINE;
}

static void vhca_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
			    uint64_t addr, uint32_t length)
{
	const struct ibv_sge sge = {
		.addr = addr, .length = length, .lkey = lkey,
	};

	vhca_wr_set_sge_list(qpx, 1, &sge);
}

static void vhca_wr_set_inline_data_list(struct ibv_qp_ex *qpx,
					 size_t num_buf,
					 const struct ibv_data_buf *buf_list)
{
	struct vhca_qp *qp = qpex_to_vqp(qpx);
	struct vhca_send_wqe *wqe = vhca_qpex_cur(qp);
	size_t total = 0, i;
	char *data;

	if (!wqe)
		return;
	data = (char *)(wqe + 1);
	if (wqe->opcode == VHCA_WR_RDMA_READ) {
		vhca_qpex_fail(qp, EINVAL);
		return;
	}
	for (i = 0; i < num_buf; i++) {
		size_t n = buf_list[i].length;

		if (n > qp->max_inline - total) {
			vhca_qpex_fail(qp, EINVAL);
			return;
		}
		memcpy(data + total, buf_list[i].addr, n);
		total += n;
	}
	wqe->inline_len = total;
	wqe->num_sge = 0;
	wqe->flags |= VHCA_WQE_INLINE;
}

static void vhca_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				    size_t length)
{
	const struct ibv_data_buf buf = { .addr = addr, .length = length };

	vhca_wr_set_inline_data_list(qpx, 1, &buf);
}

static void vhca_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
				uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct vhca_qp *qp = qpex_to_vqp(qpx);
	struct vhca_send_wqe *wqe = vhca_qpex_cur(qp);

	if (!wqe)
		return;
	if (qpx->qp_base.qp_type != IBV_QPT_UD || !ah) {
		vhca_qpex_fail(qp, EINVAL);
		return;
	}
	wqe->ud.ah = to_vah(ah)->ah_index;
	wqe->ud.remote_qpn = remote_qpn;
	wqe->ud.remote_qkey = remote_qkey;
}

static void vhca_wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	struct vhca_qp *qp = qpex_to_vqp(qpx);
	struct vhca_send_wqe *wqe = vhca_qpex_cur(qp);

	if (!wqe)
		return;
	if (qpx->qp_base.qp_type != IBV_QPT_XRC_SEND) {
		vhca_qpex_fail(qp, EINVAL);
		return;
	}
	wqe->xrc_srqn = remote_srqn;
}

void vhca_qpex_init(struct vhca_qp *qp, uint64_t send_ops)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qp->send_ops = send_ops;
	qpx->wr_start = vhca_wr_start;
	qpx->wr_complete = vhca_wr_complete;
	qpx->wr_abort = vhca_wr_abort;
	qpx->wr_send = vhca_wr_send;
	qpx->wr_send_imm = vhca_wr_send_imm;
	qpx->wr_rdma_write = vhca_wr_rdma_write;
	qpx->wr_rdma_write_imm = vhca_wr_rdma_write_imm;
	qpx->wr_rdma_read = vhca_wr_rdma_read;
	qpx->wr_atomic_cmp_swp = vhca_wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = vhca_wr_atomic_fetch_add;
#if VHCA_RDMA_CORE >= 44
	qpx->wr_atomic_write = vhca_wr_atomic_write;
#endif
#if VHCA_RDMA_CORE >= 45
	qpx->wr_flush = vhca_wr_flush;
#endif
	qpx->wr_bind_mw = vhca_wr_bind_mw;
	qpx->wr_local_inv = vhca_wr_local_inv;
	qpx->wr_send_inv = vhca_wr_send_inv;
	qpx->wr_set_sge = vhca_wr_set_sge;
	qpx->wr_set_sge_list = vhca_wr_set_sge_list;
	qpx->wr_set_inline_data = vhca_wr_set_inline_data;
	qpx->wr_set_inline_data_list = vhca_wr_set_inline_data_list;
	qpx->wr_set_ud_addr = vhca_wr_set_ud_addr;
	qpx->wr_set_xrc_srqn = vhca_wr_set_xrc_srqn;
	qp->vqp.comp_mask |= VERBS_QP_EX;
}
