// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues of vhca. (STUB: to be implemented)
 */
#include "vhca.h"

int vhca_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

int vhca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr, enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

int vhca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	return -EOPNOTSUPP;
}

int vhca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

int vhca_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr, const struct ib_recv_wr **bad_wr)
{
	return -EOPNOTSUPP;
}

int vhca_srq_take(struct vhca_srq *srq, struct vhca_recv_wqe *wqe, struct vhca_sge *sge)
{
	return -EOPNOTSUPP;
}
