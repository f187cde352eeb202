// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues of vhca. (STUB: to be implemented)
 */
#include "vhca.h"

int vhca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr, struct uverbs_attr_bundle *attrs)
{
	return -EOPNOTSUPP;
}

int vhca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

int vhca_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

int vhca_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	return -EOPNOTSUPP;
}

int vhca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	return -EOPNOTSUPP;
}

int vhca_cq_post(struct vhca_cq *cq, const struct vhca_cqe *cqe, bool solicited)
{
	return -EOPNOTSUPP;
}
