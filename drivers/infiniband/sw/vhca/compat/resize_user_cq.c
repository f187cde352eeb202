// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* resize_user_cq, an unsigned count (7.1; resize_cq and an int before) */
#include <rdma/ib_verbs.h>

static int probe(struct ib_cq *cq, unsigned int cqe, struct ib_udata *udata)
{
	return 0;
}

static const struct ib_device_ops ops __maybe_unused = {
	.resize_user_cq = probe,
};
