// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* reg_user_mr takes a struct ib_dmah (6.17) */
#include <rdma/ib_verbs.h>

static struct ib_mr *probe(struct ib_pd *pd, u64 start, u64 length, u64 iova,
			   int access, struct ib_dmah *dmah,
			   struct ib_udata *udata)
{
	return NULL;
}

static const struct ib_device_ops ops __maybe_unused = {
	.reg_user_mr = probe,
};
