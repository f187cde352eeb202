// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* FLUSH: its work request, completion, opcode, caps and access flags (6.2) */
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

static u64 probe __maybe_unused = IB_WR_FLUSH + IB_WC_FLUSH +
	IB_OPCODE_RC_FLUSH + IB_DEVICE_FLUSH_GLOBAL + IB_FLUSH_GLOBAL +
	IB_FLUSH_MR + (IB_ACCESS_FLUSH_GLOBAL | IB_ACCESS_FLUSH_PERSISTENT);
