// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ODP: the umem's pfns in a struct hmm_dma_map, access by HMM_PFN_WRITE (6.15) */
#include <linux/hmm.h>
#include <linux/stddef.h>
#include <rdma/ib_umem_odp.h>

static size_t probe __maybe_unused = offsetof(struct ib_umem_odp, map.pfn_list) +
	HMM_PFN_WRITE;
