// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address handles of vhca. (STUB: to be implemented)
 */
#include "vhca.h"

int vhca_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

int vhca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *ah_attr)
{
	return -EOPNOTSUPP;
}

int vhca_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	return -EOPNOTSUPP;
}
