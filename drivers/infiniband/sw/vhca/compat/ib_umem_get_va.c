// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ib_umem_get_va() (7.1; ib_umem_get() before) */
#include <rdma/ib_umem.h>

static struct ib_umem * __maybe_unused probe(struct ib_device *dev)
{
	return ib_umem_get_va(dev, 0, 1, 0);
}
