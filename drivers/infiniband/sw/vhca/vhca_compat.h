/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel API vhca calls, for kernels that lack part of it.  The
 * driver's files call today's API; here older kernels get shims named
 * after it.  VHCA_HAVE_<NAME> comes from the probe compat/<name>.c, which
 * the driver's Makefile compiles against the target kernel's headers: a
 * feature, not a version number, decides.  What a kernel cannot carry is
 * compiled out and not advertised.
 */
#ifndef VHCA_COMPAT_H
#define VHCA_COMPAT_H

#include <linux/mm.h>
#include <linux/mmzone.h>
#include <net/inet_sock.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

#ifdef VHCA_HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * MAX_ORDER was the number of orders (exclusive) up to 6.3 and the largest
 * order (inclusive) from 6.4 until MAX_PAGE_ORDER replaced it: the smaller
 * of the two meanings is safe under both.
 */
#ifndef VHCA_HAVE_MAX_PAGE_ORDER
#define MAX_PAGE_ORDER	(MAX_ORDER - 1)
#endif

#ifndef VHCA_HAVE_VM_FLAGS_SET
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void vm_flags_clear(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

/* The socket flags vhca sets, as bit fields before 6.6. */
#ifndef VHCA_HAVE_INET_SET_BIT
#define inet_set_bit(nr, sk)	(inet_sk(sk)->vhca_inet_##nr = 1)
#define inet_clear_bit(nr, sk)	(inet_sk(sk)->vhca_inet_##nr = 0)
#define vhca_inet_MC_LOOP	mc_loop
#define vhca_inet_MC_ALL	mc_all
#endif

#ifndef VHCA_HAVE_INET6_CLEAR_BIT
#define inet6_clear_bit(nr, sk)	(inet6_sk(sk)->vhca_inet6_##nr = 0)
#define vhca_inet6_MC6_LOOP	mc_loop
#endif

/*
 * ATOMIC WRITE: a kernel without it in its verbs has no work request, work
 * completion or capability for it, so vhca neither advertises it nor
 * executes it (VHCA_ATOMIC_WRITE_CAP 0: a WQE or a request of it is
 * refused).  Its wire opcode is the IBTA's, for the packet layer's tables.
 */
#ifdef VHCA_HAVE_IB_ATOMIC_WRITE
#define VHCA_ATOMIC_WRITE_CAP	1
#else
#define VHCA_ATOMIC_WRITE_CAP	0
#define IB_OPCODE_ATOMIC_WRITE		0x1d
#define IB_OPCODE_RC_ATOMIC_WRITE	(IB_OPCODE_RC + IB_OPCODE_ATOMIC_WRITE)
#define IB_DEVICE_ATOMIC_WRITE		0
#endif

/* No FLUSH access flag can be asked for where the verbs have none. */
#ifndef VHCA_HAVE_IB_ACCESS_FLUSH
#define IB_ACCESS_FLUSH_GLOBAL		0
#define IB_ACCESS_FLUSH_PERSISTENT	0
#endif

#endif /* VHCA_COMPAT_H */
