// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* the FLUSH access flags (6.2) */
#include <rdma/ib_verbs.h>

static int probe __maybe_unused = IB_ACCESS_FLUSH_GLOBAL |
	IB_ACCESS_FLUSH_PERSISTENT;
