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

#include <linux/hrtimer.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/timer.h>
#include <net/inet_sock.h>
#include <net/ipv6.h>
#include <net/udp_tunnel.h>
#ifdef VHCA_HAVE_IPV6_STUB
#include <net/ipv6_stubs.h>
#endif
#include <rdma/ib_pack.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/ib_verbs.h>

#ifndef VHCA_HAVE_WQ_PERCPU
/* Before WQ_PERCPU a workqueue without WQ_UNBOUND is bound to its CPUs. */
#define WQ_PERCPU 0
#endif

#ifndef VHCA_HAVE_TIMER_DELETE
static inline int timer_delete(struct timer_list *timer)
{
	return del_timer(timer);
}
#endif

#ifndef VHCA_HAVE_TIMER_CONTAINER_OF
#define timer_container_of(var, timer, field)	from_timer(var, timer, field)
#endif

#ifndef VHCA_HAVE_HRTIMER_SETUP
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*function)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#endif

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
 * ip6_dst_lookup_flow() through ipv6_stub where IPv6 may be a module, so
 * that vhca never needs ipv6.ko loaded.
 */
#ifdef VHCA_HAVE_IPV6_STUB
#define ip6_dst_lookup_flow(net, sk, fl6, final) \
	ipv6_stub->ipv6_dst_lookup_flow(net, sk, fl6, final)
#endif

/* Named in reg_user_mr's prototype, which does not take it before 6.17. */
#ifndef VHCA_HAVE_REG_USER_MR_DMAH
struct ib_dmah;
#endif

#ifndef VHCA_HAVE_IB_UMEM_GET_VA
static inline struct ib_umem *ib_umem_get_va(struct ib_device *device,
					     unsigned long addr, size_t size,
					     int access)
{
	return ib_umem_get(device, addr, size, access);
}
#endif

/* The UDP tunnel socket helpers, before they took the struct sock. */
#ifndef VHCA_HAVE_UDP_TUNNEL_SOCK_SK
#define setup_udp_tunnel_sock(net, sk, cfg) \
	setup_udp_tunnel_sock(net, (sk)->sk_socket, cfg)
#define udp_tunnel_sock_release(sk)	udp_tunnel_sock_release((sk)->sk_socket)
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

/*
 * FLUSH, as ATOMIC WRITE: where the verbs have none, no FLUSH access flag
 * can be asked for, and vhca neither advertises FLUSH nor executes it
 * (VHCA_FLUSH_CAP 0).  The wire opcode and the FETH's values are the
 * IBTA's.
 */
#ifdef VHCA_HAVE_IB_FLUSH
#define VHCA_FLUSH_CAP			1
#else
#define VHCA_FLUSH_CAP			0
#define IB_ACCESS_FLUSH_GLOBAL		0
#define IB_ACCESS_FLUSH_PERSISTENT	0
#define IB_DEVICE_FLUSH_GLOBAL		0
#define IB_OPCODE_FLUSH			0x1c
#define IB_OPCODE_RC_FLUSH		(IB_OPCODE_RC + IB_OPCODE_FLUSH)
#define IB_FLUSH_GLOBAL			1
#define IB_FLUSH_PERSISTENT		2
#define IB_FLUSH_RANGE			0
#define IB_FLUSH_MR			1
#endif

/*
 * On-demand paging: built on the core's ib_umem_odp where the kernel has
 * it (CONFIG_INFINIBAND_ON_DEMAND_PAGING), else compiled out and not
 * advertised (VHCA_ODP 0).  The pfns ib_umem_odp_map_dma_and_lock()
 * leaves of the range it mapped are in pfn_list, or, from 6.15, in a
 * struct hmm_dma_map; the access it maps for is ODP_*_ALLOWED_BIT, or
 * from 6.15 HMM_PFN_WRITE (none: read).
 */
#if IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING)
#define VHCA_ODP			1
#ifdef VHCA_HAVE_HMM_DMA_MAP
#define vhca_odp_pfn_list(odp)		((odp)->map.pfn_list)
#define VHCA_ODP_MAP_READ		0
#define VHCA_ODP_MAP_WRITE		HMM_PFN_WRITE
#else
#define vhca_odp_pfn_list(odp)		((odp)->pfn_list)
#define VHCA_ODP_MAP_READ		ODP_READ_ALLOWED_BIT
#define VHCA_ODP_MAP_WRITE		(ODP_READ_ALLOWED_BIT | ODP_WRITE_ALLOWED_BIT)
#endif
#else
#define VHCA_ODP			0
#endif

#endif /* VHCA_COMPAT_H */
