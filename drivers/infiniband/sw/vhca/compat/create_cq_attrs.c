// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* create_cq takes a uverbs_attr_bundle (6.11; an ib_udata before) */
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

static int probe(struct ib_cq *cq, const struct ib_cq_init_attr *attr,
		 struct uverbs_attr_bundle *attrs)
{
	return 0;
}

static const struct ib_device_ops ops __maybe_unused = {
	.create_cq = probe,
};
