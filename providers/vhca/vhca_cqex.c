// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca: the ibv_cq_ex poll API (ibv_start_poll, ibv_next_poll,
 * ibv_end_poll and the ibv_wc_read_* accessors).
 *
 * It consumes the same mapped ring as ibv_poll_cq, through vhca_cq_pop(),
 * and makes no system call.  start_poll takes the CQ's lock and keeps it
 * until end_poll; when it finds no completion (ENOENT) or fails it has
 * released the lock again and end_poll must not be called, as
 * ibv_create_cq_ex(3) says.  The consumer index reaches the device at
 * end_poll (the CQEs read in between stay in the ring until then).
 *
 * The fields are those a RoCE port fills: no LID (SLID and DLID path bits
 * read 0), no VLAN, flow tag or tag matching.  Completion timestamps come
 * from CQEs that carry them (struct vhca_cqe_ts): the core clock's count,
 * which is nanoseconds (VHCA_CORE_CLOCK_KHZ), and the wall clock's; the
 * same core clock is what ibv_query_rt_values_ex reads, with
 * clock_gettime() and no system call (the vDSO).
 */
#include <errno.h>
#include <time.h>

#include "vhca.h"

#define VHCA_CQ_WC_TS (IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
		       IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
#define VHCA_CQ_WC_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | \
			  IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP | \
			  IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | \
			  IBV_WC_EX_WITH_DLID_PATH_BITS | VHCA_CQ_WC_TS)

bool vhca_cqex_timestamps(uint64_t wc_flags)
{
	return wc_flags & VHCA_CQ_WC_TS;
}

int vhca_cqex_check(struct ibv_context *ibctx,
		    const struct ibv_cq_init_attr_ex *attr)
{
	uint32_t flags = 0;

	if (attr->comp_mask & ~(IBV_CQ_INIT_ATTR_MASK_FLAGS |
				IBV_CQ_INIT_ATTR_MASK_PD))
		return EINVAL;
	/* A parent domain of the context, not a PD. */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain || attr->parent_domain->context != ibctx ||
	     !to_vpd(attr->parent_domain)->parent))
		return EINVAL;
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS)
		flags = attr->flags;
	if (flags & ~(IBV_CREATE_CQ_ATTR_SINGLE_THREADED |
		      IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN))
		return EINVAL;
	/* An overrun is the CQ's async error (and the kernel says so too). */
	if (flags & IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN)
		return EOPNOTSUPP;
	if (attr->wc_flags & ~(uint64_t)VHCA_CQ_WC_FLAGS)
		return EOPNOTSUPP;
	return 0;
}

/* The CQE just popped becomes the current one. */
static void vhca_cqex_set_cur(struct vhca_cq *cq)
{
	cq->vcq.cq_ex.wr_id = cq->cur.cqe.wr_id;
	cq->vcq.cq_ex.status = cq->cur.cqe.status;
}

static int vhca_cqex_start_poll(struct ibv_cq_ex *cqx,
				struct ibv_poll_cq_attr *attr)
{
	struct vhca_cq *cq = cqex_to_vcq(cqx);
	int err;

	if (attr->comp_mask)
		return EINVAL;
	vhca_cq_lock(cq);
	err = EIO;			/* the ring was lost in a resize */
	if (!cq->ring)
		goto out_unlock;
	err = ENOENT;
	if (!vhca_cq_pop(cq, &cq->cur)) {
		vhca_cq_publish(cq);	/* discarded CQEs may have gone */
		goto out_unlock;
	}
	vhca_cqex_set_cur(cq);
	return 0;

out_unlock:
	vhca_cq_unlock(cq);
	return err;
}

static int vhca_cqex_next_poll(struct ibv_cq_ex *cqx)
{
	struct vhca_cq *cq = cqex_to_vcq(cqx);

	if (!vhca_cq_pop(cq, &cq->cur))
		return ENOENT;
	vhca_cqex_set_cur(cq);
	return 0;
}

static void vhca_cqex_end_poll(struct ibv_cq_ex *cqx)
{
	struct vhca_cq *cq = cqex_to_vcq(cqx);

	vhca_cq_publish(cq);
	vhca_cq_unlock(cq);
}

static enum ibv_wc_opcode vhca_cqex_read_opcode(struct ibv_cq_ex *cqx)
{
	return cqex_to_vcq(cqx)->cur.cqe.opcode;
}

static uint32_t vhca_cqex_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return cqex_to_vcq(cqx)->cur.cqe.vendor_err;
}

static unsigned int vhca_cqex_read_wc_flags(struct ibv_cq_ex *cqx)
{
	return vhca_cqe_wc_flags(&cqex_to_vcq(cqx)->cur.cqe);
}

static uint32_t vhca_cqex_read_byte_len(struct ibv_cq_ex *cqx)
{
	return cqex_to_vcq(cqx)->cur.cqe.byte_len;
}

static __be32 vhca_cqex_read_imm_data(struct ibv_cq_ex *cqx)
{
	return cqex_to_vcq(cqx)->cur.cqe.imm_data;
}

static uint32_t vhca_cqex_read_qp_num(struct ibv_cq_ex *cqx)
{
	return cqex_to_vcq(cqx)->cur.cqe.qp_num;
}

static uint32_t vhca_cqex_read_src_qp(struct ibv_cq_ex *cqx)
{
	return cqex_to_vcq(cqx)->cur.cqe.src_qp;
}

static uint8_t vhca_cqex_read_sl(struct ibv_cq_ex *cqx)
{
	return cqex_to_vcq(cqx)->cur.cqe.sl;
}

/* RoCE has no LIDs: SLID and DLID path bits are 0, as ibv_poll_cq says. */
static uint32_t vhca_cqex_read_slid(struct ibv_cq_ex *cqx
				    __attribute__((unused)))
{
	return 0;
}

static uint8_t vhca_cqex_read_dlid_path_bits(struct ibv_cq_ex *cqx
					     __attribute__((unused)))
{
	return 0;
}

static uint64_t vhca_cqex_read_completion_ts(struct ibv_cq_ex *cqx)
{
	return cqex_to_vcq(cqx)->cur.core_clock;
}

static uint64_t vhca_cqex_read_completion_wallclock_ns(struct ibv_cq_ex *cqx)
{
	return cqex_to_vcq(cqx)->cur.wallclock_ns;
}

/* Only the accessors of the fields asked for are set, as in rdma-core. */
void vhca_cqex_init(struct vhca_cq *cq, const struct ibv_cq_init_attr_ex *attr)
{
	struct ibv_cq_ex *cqx = &cq->vcq.cq_ex;
	uint64_t wc = attr->wc_flags;

	cq->single_threaded = (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
			      (attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED);
	cqx->start_poll = vhca_cqex_start_poll;
	cqx->next_poll = vhca_cqex_next_poll;
	cqx->end_poll = vhca_cqex_end_poll;
	cqx->read_opcode = vhca_cqex_read_opcode;
	cqx->read_vendor_err = vhca_cqex_read_vendor_err;
	cqx->read_wc_flags = vhca_cqex_read_wc_flags;
	if (wc & IBV_WC_EX_WITH_BYTE_LEN)
		cqx->read_byte_len = vhca_cqex_read_byte_len;
	if (wc & IBV_WC_EX_WITH_IMM)
		cqx->read_imm_data = vhca_cqex_read_imm_data;
	if (wc & IBV_WC_EX_WITH_QP_NUM)
		cqx->read_qp_num = vhca_cqex_read_qp_num;
	if (wc & IBV_WC_EX_WITH_SRC_QP)
		cqx->read_src_qp = vhca_cqex_read_src_qp;
	if (wc & IBV_WC_EX_WITH_SLID)
		cqx->read_slid = vhca_cqex_read_slid;
	if (wc & IBV_WC_EX_WITH_SL)
		cqx->read_sl = vhca_cqex_read_sl;
	if (wc & IBV_WC_EX_WITH_DLID_PATH_BITS)
		cqx->read_dlid_path_bits = vhca_cqex_read_dlid_path_bits;
	if (wc & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		cqx->read_completion_ts = vhca_cqex_read_completion_ts;
	if (wc & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		cqx->read_completion_wallclock_ns =
			vhca_cqex_read_completion_wallclock_ns;
}

/*
 * Whether the device reports VHCA_CORE_CLOCK_KHZ's clock: asked once per
 * context (a device without completion timestamps has no core clock).
 * A failed query answers false and is not remembered.
 */
static bool vhca_has_core_clock(struct ibv_context *ibctx)
{
	struct vhca_context *ctx = to_vctx(ibctx);
	struct ibv_device_attr_ex attr = {};
	int has = __atomic_load_n(&ctx->core_clock, __ATOMIC_RELAXED);

	if (!has) {
		if (ibv_cmd_query_device_any(ibctx, NULL, &attr, sizeof(attr),
					     NULL, NULL))
			return false;	/* asked again next time */
		has = attr.hca_core_clock == VHCA_CORE_CLOCK_KHZ ? 1 : -1;
		__atomic_store_n(&ctx->core_clock, has, __ATOMIC_RELAXED);
	}
	return has > 0;
}

int vhca_query_rt_values(struct ibv_context *ibctx,
			 struct ibv_values_ex *values)
{
	struct timespec now;

	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	if (!vhca_has_core_clock(ibctx))
		return EOPNOTSUPP;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		if (clock_gettime(CLOCK_MONOTONIC_RAW, &now))
			return errno;
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (uint64_t)now.tv_sec * 1000000000 +
					    now.tv_nsec;
	}
	return 0;
}
