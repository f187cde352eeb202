// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs of vhca. (STUB: to be implemented)
 */
#include "vhca.h"

int vhca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

int vhca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

int vhca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask, struct ib_qp_init_attr *init)
{
	return -EOPNOTSUPP;
}

int vhca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

int vhca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr, const struct ib_send_wr **bad_wr)
{
	return -EOPNOTSUPP;
}

int vhca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr, const struct ib_recv_wr **bad_wr)
{
	return -EOPNOTSUPP;
}
