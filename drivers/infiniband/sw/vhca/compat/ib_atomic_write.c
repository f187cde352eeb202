// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ATOMIC WRITE in the verbs and the packet layer (6.2) */
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

static u64 probe __maybe_unused = IB_WR_ATOMIC_WRITE + IB_WC_ATOMIC_WRITE +
	IB_OPCODE_RC_ATOMIC_WRITE + IB_DEVICE_ATOMIC_WRITE;
