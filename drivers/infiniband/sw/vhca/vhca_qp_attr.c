// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Validation of modify_qp: the IB state machine (transitions and the
 * required/optional attribute masks per QP type, as ib_modify_qp_is_ok()
 * knows them) and the values vhca accepts for each attribute.
 */
#include <rdma/ib_verbs.h>

#include "vhca.h"

/*
 * Local write means nothing to a QP, but verbs users set it: accepted.  So
 * is the persistent FLUSH right (rdma-core's own tests set both FLUSH
 * rights on every RC QP): it grants nothing, as no MR can be registered
 * for persistent FLUSH.  And on-demand paging, where vhca has it
 * (rdma-core's ODP tests set the MRs' flags on their QPs): it grants
 * nothing either.
 */
#define VHCA_QP_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_FLUSH_GLOBAL | IB_ACCESS_FLUSH_PERSISTENT | \
			 (VHCA_ODP ? IB_ACCESS_ON_DEMAND : 0))

/* Attributes vhca does not implement: alternate paths, rate limits. */
#define VHCA_QP_UNSUPPORTED (IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE | \
			     IB_QP_RATE_LIMIT | IB_QP_CAP)

/* The values of an RoCEv2 address vector vhca can use. */
static int vhca_check_av(const struct rdma_ah_attr *ah)
{
	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH))
		return -EINVAL;
	if (rdma_ah_get_port_num(ah) != VHCA_PORT)
		return -EINVAL;
	if (!rdma_ah_read_grh(ah)->sgid_attr)
		return -EINVAL;
	return 0;
}

/*
 * Check one modify_qp call: the transition cur -> next with this mask must
 * be legal for the QP type, and every attribute in the mask must hold a
 * value vhca supports.  Returns 0, -EINVAL or -EOPNOTSUPP.
 */
int vhca_qp_check_modify(enum ib_qp_type type, enum ib_qp_state cur,
			 enum ib_qp_state next,
			 const struct ib_qp_attr *attr, int mask)
{
	if (mask & VHCA_QP_UNSUPPORTED)
		return -EOPNOTSUPP;
	if (!ib_modify_qp_is_ok(cur, next, type, mask))
		return -EINVAL;

	if ((mask & IB_QP_PORT) && attr->port_num != VHCA_PORT)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) &&
	    attr->pkey_index >= VHCA_PKEY_TABLE_LEN)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~VHCA_QP_ACCESS))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > VHCA_MAX_QP_INIT_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > VHCA_MAX_QP_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > IB_QPN_MASK)
		return -EINVAL;
	if ((mask & IB_QP_SQ_PSN) && attr->sq_psn > IB_QPN_MASK)
		return -EINVAL;
	if ((mask & IB_QP_RQ_PSN) && attr->rq_psn > IB_QPN_MASK)
		return -EINVAL;
	if ((mask & IB_QP_AV) && vhca_check_av(&attr->ah_attr))
		return -EINVAL;
	return 0;
}

/*
 * The real capacities of a QP's queues for the requested caps: slot counts
 * and strides (powers of two), and what they hold.  -EINVAL past the device
 * limits.
 */
int vhca_qp_size_caps(struct ib_qp_cap *cap, bool has_srq,
		      struct vhca_qp_geometry *geo)
{
	u32 sq_room, rq_sge;

	if (cap->max_send_wr > VHCA_MAX_QP_WR ||
	    cap->max_send_sge > VHCA_MAX_SGE ||
	    cap->max_inline_data > VHCA_MAX_INLINE)
		return -EINVAL;
	if (!has_srq && (cap->max_recv_wr > VHCA_MAX_QP_WR ||
			 cap->max_recv_sge > VHCA_MAX_SGE))
		return -EINVAL;

	sq_room = max3(cap->max_send_sge * (u32)sizeof(struct vhca_sge),
		       cap->max_inline_data, (u32)sizeof(struct vhca_sge));
	geo->sq_count = cap->max_send_wr ?
			roundup_pow_of_two(cap->max_send_wr) : 0;
	geo->sq_stride = roundup_pow_of_two(sizeof(struct vhca_send_wqe) +
					    sq_room);
	sq_room = geo->sq_stride - sizeof(struct vhca_send_wqe);
	geo->max_send_sge = min_t(u32, sq_room / sizeof(struct vhca_sge),
				  VHCA_MAX_SGE);
	geo->max_inline = min_t(u32, sq_room, VHCA_MAX_INLINE);

	if (has_srq) {
		geo->rq_count = 0;
		geo->rq_stride = 0;
		geo->max_recv_sge = 0;
	} else {
		rq_sge = max_t(u32, cap->max_recv_sge, 1);
		geo->rq_count = cap->max_recv_wr ?
				roundup_pow_of_two(cap->max_recv_wr) : 0;
		geo->rq_stride = roundup_pow_of_two(sizeof(struct vhca_recv_wqe) +
						    rq_sge * sizeof(struct vhca_sge));
		geo->max_recv_sge = min_t(u32, (geo->rq_stride -
					  sizeof(struct vhca_recv_wqe)) /
					  sizeof(struct vhca_sge), VHCA_MAX_SGE);
	}

	cap->max_send_wr = geo->sq_count;
	cap->max_send_sge = geo->max_send_sge;
	cap->max_inline_data = geo->max_inline;
	cap->max_recv_wr = geo->rq_count;
	cap->max_recv_sge = geo->max_recv_sge;
	return 0;
}
