/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * vhca: the one contract between the kernel driver and the rdma-core
 * provider.  Every structure here crosses the user/kernel boundary; all are
 * naturally aligned with explicit padding, so both halves see one layout.
 */
#ifndef VHCA_ABI_USER_H
#define VHCA_ABI_USER_H

#include <linux/types.h>

/*
 * The device's uverbs ABI version (ib_device_ops.uverbs_abi_ver, shown in
 * /sys/class/infiniband_verbs/uverbsN/abi_version).  The provider accepts
 * exactly the range it was built for (match_min/max_abi_version); bump this
 * on any incompatible change to this file.
 */
#define VHCA_UVERBS_ABI_VERSION 1

/*
 * ALLOC_UCONTEXT (ibv_open_device).  The request carries no driver data.
 * Each context gets two pages of its own, mapped with mmap() on the
 * context's command fd at the offsets below, MAP_SHARED, each exactly its
 * size:
 *  - the doorbell page, read-write: written by the provider, read by the
 *    device (doorbell records of the context's queues);
 *  - the status page, read-only: written by the device only (flags the
 *    device raises for the provider, such as "needs wakeup").  A writable
 *    mapping of it is refused with EPERM.
 * Both pages start zeroed.  Their layouts come with the queues that use them.
 */
struct vhca_alloc_ucontext_resp {
	__aligned_u64 db_mmap_offset;
	__aligned_u64 status_mmap_offset;
	__u32 db_size;
	__u32 status_size;
};

#endif /* VHCA_ABI_USER_H */
