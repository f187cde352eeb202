/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * vhca: the one contract between the kernel driver and the rdma-core
 * provider.  Every structure here crosses the user/kernel boundary; all are
 * naturally aligned with explicit padding, so both halves see one layout.
 */
#ifndef VHCA_ABI_USER_H
#define VHCA_ABI_USER_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

/*
 * The device's uverbs ABI version (ib_device_ops.uverbs_abi_ver, shown in
 * /sys/class/infiniband_verbs/uverbsN/abi_version).  The provider accepts
 * exactly the range it was built for (match_min/max_abi_version); bump this
 * on any incompatible change to this file.
 */
#define VHCA_UVERBS_ABI_VERSION 2

/*
 * ALLOC_UCONTEXT (ibv_open_device).  The request carries no driver data.
 * Each context gets two areas of its own, mapped with mmap() on the
 * context's command fd at the offsets below, MAP_SHARED, each exactly its
 * size:
 *  - the doorbell area, read-write: written by the provider, read by the
 *    device: an array of struct vhca_db_rec;
 *  - the status area, read-only: written by the device only: an array of
 *    struct vhca_status_rec.  A writable mapping of it is refused (EPERM).
 * Both start zeroed.  Each CQ, QP and SRQ of the context owns the record
 * with its db_index in both arrays (create responses); record 0 of both is
 * the context's own and never handed to an object.
 *
 * These are the context's first pair of areas.  More pairs of the same
 * sizes come as the context's objects need records (at most
 * VHCA_UCTX_MAX_AREAS pairs in all): with R records per area (db_size /
 * sizeof(struct vhca_db_rec)), record db_index is slot db_index % R of
 * pair db_index / R, whose mmap offsets each create response gives
 * (db_area_offset, status_area_offset).  A provider whose create
 * responses end before those fields is given records of the first pair
 * only.
 */
#define VHCA_UCTX_MAX_AREAS	64

struct vhca_alloc_ucontext_resp {
	__aligned_u64 db_mmap_offset;
	__aligned_u64 status_mmap_offset;
	__u32 db_size;
	__u32 status_size;
};

/*
 * Doorbell record (provider -> device).  Indices are free-running 32-bit
 * counters; an entry's slot is index & (count - 1).
 *  QP:  head[0] = send queue producer index, head[1] = receive queue's
 *  CQ:  head[0] = consumer index (the provider has consumed CQEs before it)
 *  SRQ: head[0] = producer index
 * The device reads these with no trust: a wrong value harms only the
 * object's own queue.
 */
struct vhca_db_rec {
	__u32 head[2];
	__u32 reserved[2];
};

/*
 * Status record (device -> provider).
 *  QP:  tail[0] = send queue consumer index (the device is done with every
 *       WQE before it: its slot may be reused), tail[1] = receive queue's
 *  CQ:  tail[0] = producer index (CQEs before it are valid)
 *  SRQ: tail[0] = consumer index
 * flags: VHCA_STATUS_* bits.
 */
struct vhca_status_rec {
	__u32 tail[2];
	__u32 flags;
	__u32 reserved;
};

enum {
	/* The device stopped polling this queue: post with a system call. */
	VHCA_STATUS_NEEDS_WAKEUP = 1 << 0,
	/* CQ: a CQE was lost because the ring was full (IBV_EVENT_CQ_ERR). */
	VHCA_STATUS_CQ_OVERFLOW = 1 << 1,
	/*
	 * QP: the QP is in the error state.  Work requests posted now are
	 * completed with IBV_WC_WR_FLUSH_ERR once the provider kicks (a
	 * post_send system call with no work requests), so post_recv kicks
	 * while this is set.
	 */
	VHCA_STATUS_QP_ERROR = 1 << 2,
};

/* A scatter/gather element, as in struct ibv_sge. */
struct vhca_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* Send WQE opcodes (the IB_WR_* subset vhca executes). */
enum vhca_wr_opcode {
	VHCA_WR_RDMA_WRITE = 0,
	VHCA_WR_RDMA_WRITE_WITH_IMM = 1,
	VHCA_WR_SEND = 2,
	VHCA_WR_SEND_WITH_IMM = 3,
	VHCA_WR_RDMA_READ = 4,
	VHCA_WR_SEND_WITH_INV = 5,	/* invalidate_rkey: the peer's R_Key */
	/*
	 * Local operations: fast registration of the MR that reg.key names
	 * (its index) with that key and reg.access, of kernel QPs only (a
	 * user QP's REG_MR completes in error), and local invalidation of
	 * invalidate_rkey: an MR's for a kernel QP, a type 2 memory
	 * window's for a user QP.
	 */
	VHCA_WR_LOCAL_INV = 6,
	VHCA_WR_REG_MR = 7,
	/*
	 * 8-byte atomics on the aligned remote address of atomic; the value
	 * found there lands in the WQE's SGEs (8 bytes in all).
	 */
	VHCA_WR_ATOMIC_CMP_AND_SWP = 8,
	VHCA_WR_ATOMIC_FETCH_AND_ADD = 9,
	/*
	 * A local operation of any QP: binds the memory window that
	 * bind.mw_rkey names to bind.length bytes at bind.addr of the MR
	 * bind.mr_lkey, with bind.access (IB_ACCESS_REMOTE_*) and the key
	 * bind.new_rkey (the window's index, a new key byte).  Type 1
	 * windows (ibv_bind_mw) and type 2 (IBV_WR_BIND_MW) alike; a bind
	 * of length 0 unbinds a type 1 window.  LOCAL_INV from a user QP
	 * takes a type 2 window's rkey only.
	 */
	VHCA_WR_BIND_MW = 10,
	/*
	 * An 8-byte atomic store at the aligned remote address of atomic:
	 * the 8 bytes of atomic.swap, in memory order (no SGEs, no inline
	 * data).
	 */
	VHCA_WR_ATOMIC_WRITE = 11,
	/*
	 * FLUSH of RC QPs: flush.type names the placement types (IB_FLUSH_*
	 * of <rdma/ib_user_verbs.h>), flush.level the selectivity, the
	 * flush.length bytes at flush.remote_addr (IB_FLUSH_RANGE) or the
	 * whole MR of flush.rkey (IB_FLUSH_MR).  No SGEs, no inline data.
	 */
	VHCA_WR_FLUSH = 12,
};

enum {
	VHCA_WQE_SIGNALED = 1 << 0,	/* generate a CQE on success */
	VHCA_WQE_SOLICITED = 1 << 1,
	VHCA_WQE_FENCE = 1 << 2,
	VHCA_WQE_INLINE = 1 << 3,	/* data follows the header, no SGEs */
};

/*
 * Send WQE: this header, then num_sge struct vhca_sge or, with
 * VHCA_WQE_INLINE, inline_len bytes of data.  The slot size (sq_stride) is
 * in the create response.
 */
struct vhca_send_wqe {
	__aligned_u64 wr_id;
	__u8 opcode;
	__u8 flags;
	__u8 num_sge;
	__u8 reserved0;
	__u32 inline_len;
	union {
		__be32 imm_data;
		__u32 invalidate_rkey;	/* SEND_WITH_INV, LOCAL_INV */
	};
	/*
	 * XRC_SEND QPs: the XRC SRQ number of the target (its low 24
	 * bits; a WQE with any of the high 8 set completes in error).
	 * Other QPs ignore it.
	 */
	__u32 xrc_srqn;
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;	/* as rdma's */
			__u32 rkey;
			__u32 reserved;
			__aligned_u64 compare_add;	/* compare, or add */
			__aligned_u64 swap;
		} atomic;
		struct {
			__aligned_u64 remote_addr;	/* as rdma's */
			__u32 rkey;
			__u8 type;	/* IB_FLUSH_GLOBAL, IB_FLUSH_PERSISTENT */
			__u8 level;	/* IB_FLUSH_RANGE or IB_FLUSH_MR */
			__u16 reserved;
			__u32 length;
			__u32 reserved1;
		} flush;
		struct {
			__u32 key;	/* the new lkey and rkey */
			__u32 access;	/* IB_ACCESS_* */
			__aligned_u64 reserved;
		} reg;
		struct {
			__u32 mw_rkey;	/* the window's rkey (its index) */
			__u32 new_rkey;
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 mr_lkey;
			__u32 access;	/* IB_ACCESS_* */
		} bind;
		struct {
			__u32 ah;	/* ah_index of the create_ah response */
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved;
		} ud;
	};
};

/* Receive WQE: this header, then num_sge struct vhca_sge. */
struct vhca_recv_wqe {
	__aligned_u64 wr_id;
	__u8 num_sge;
	__u8 reserved[7];
};

enum {
	VHCA_CQE_WITH_IMM = 1 << 0,
	VHCA_CQE_GRH = 1 << 1,
	VHCA_CQE_WITH_INV = 1 << 2,	/* invalidate_rkey was invalidated */
};

/*
 * Completion queue entry.  status and opcode use the values of enum
 * ibv_wc_status and enum ibv_wc_opcode (equal to the kernel's ib_wc_*).
 */
struct vhca_cqe {
	__aligned_u64 wr_id;
	__u8 status;
	__u8 opcode;
	__u8 flags;		/* VHCA_CQE_* */
	__u8 sl;
	__u32 qp_num;
	__u32 byte_len;
	union {
		__be32 imm_data;
		__u32 invalidate_rkey;
	};
	__u32 src_qp;
	__u16 pkey_index;
	__u8 network_hdr_type;	/* UD: RDMA_NETWORK_IPV4 or _IPV6 */
	__u8 vendor_err;
};

/*
 * The device's core clock, which completion timestamps (struct vhca_cqe_ts)
 * and ibv_query_rt_values_ex() read: CLOCK_MONOTONIC_RAW in nanoseconds as
 * the process that created the CQ reads it with clock_gettime() (in its time
 * namespace), one tick per nanosecond, 64 bits wide.  query_device_ex
 * reports it as hca_core_clock (kHz) and completion_timestamp_mask
 * (all 64 bits).
 */
#define VHCA_CORE_CLOCK_KHZ 1000000

/*
 * The CQE of a CQ created with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION
 * (which libibverbs asks for IBV_WC_EX_WITH_COMPLETION_TIMESTAMP and
 * IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK): the CQE, then the times
 * at which the device wrote it, read as one under the CQ's lock, so that
 * they never go backwards along the ring.
 */
struct vhca_cqe_ts {
	struct vhca_cqe cqe;
	__aligned_u64 core_clock;	/* VHCA_CORE_CLOCK_KHZ's clock */
	__aligned_u64 wallclock_ns;	/* CLOCK_REALTIME, ns since the epoch */
	__aligned_u64 reserved[2];
};

/*
 * CREATE_CQ: no request data.  The CQ flag the device takes is
 * IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION (user CQs only).
 */
struct vhca_create_cq_resp {
	__aligned_u64 mmap_offset;	/* the CQE ring, read-only */
	__u32 ring_size;		/* bytes to map */
	__u32 cqe_count;		/* entries, a power of two */
	__u32 db_index;
	/*
	 * Bytes per CQE: sizeof(struct vhca_cqe_ts) for a CQ with
	 * timestamps, else sizeof(struct vhca_cqe) (which 0 also means).
	 */
	__u32 cqe_size;
	__aligned_u64 db_area_offset;	/* the areas holding db_index */
	__aligned_u64 status_area_offset;
};

/*
 * RESIZE_CQ: the ring is replaced, with CQEs of the same size; map the new
 * one, unmap the old one.
 */
struct vhca_resize_cq_resp {
	__aligned_u64 mmap_offset;
	__u32 ring_size;
	__u32 cqe_count;
};

/*
 * CREATE_QP: no request data.  A queue of count 0 (a QP on an SRQ, or
 * without receive or send work) has no ring: offset and size are 0.
 */
struct vhca_create_qp_resp {
	__aligned_u64 sq_mmap_offset;	/* read-write */
	__aligned_u64 rq_mmap_offset;	/* read-write */
	__u32 sq_size;			/* bytes to map */
	__u32 rq_size;
	__u32 sq_count;			/* WQE slots, powers of two */
	__u32 rq_count;
	__u32 sq_stride;		/* bytes per WQE slot */
	__u32 rq_stride;
	__u32 db_index;
	__u32 max_inline;
	__aligned_u64 db_area_offset;	/* the areas holding db_index */
	__aligned_u64 status_area_offset;
};

/* CREATE_SRQ: no request data. */
struct vhca_create_srq_resp {
	__aligned_u64 mmap_offset;	/* read-write */
	__u32 size;
	__u32 count;
	__u32 stride;
	__u32 db_index;
	__aligned_u64 db_area_offset;	/* the areas holding db_index */
	__aligned_u64 status_area_offset;
};

/* CREATE_AH: no request data; ah_index goes into UD send WQEs. */
struct vhca_create_ah_resp {
	__u32 ah_index;
	__u32 reserved;
};

/*
 * Device memory (ibv_alloc_dm): the ioctl method UVERBS_METHOD_DM_ALLOC of
 * UVERBS_OBJECT_DM takes one driver attribute more than the core's, an
 * output: the offset at which the provider maps the memory with mmap() on
 * the context's command fd, MAP_SHARED and read-write, the allocation's
 * length rounded up to whole pages.  The memory starts zeroed.  Lengths
 * go from 1 byte to the device's max_dm_size (ibv_query_device_ex), the
 * alignment (log_align_req) up to the page size; anything else is EINVAL.
 */
enum vhca_alloc_dm_attrs {
	VHCA_IB_ATTR_ALLOC_DM_RESP_MMAP_OFFSET = (1U << UVERBS_ID_NS_SHIFT),
};

/*
 * ibv_import_dm: the driver's method VHCA_IB_METHOD_DM_QUERY of
 * UVERBS_OBJECT_DM answers, for the handle of a DM of the context, the
 * mmap offset and the length ALLOC answered and was asked for, so that a
 * process sharing the command fd maps the same memory.
 */
enum vhca_dm_methods {
	VHCA_IB_METHOD_DM_QUERY = (1U << UVERBS_ID_NS_SHIFT),
};

enum vhca_query_dm_attrs {
	VHCA_IB_ATTR_QUERY_DM_REQ_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
	VHCA_IB_ATTR_QUERY_DM_RESP_MMAP_OFFSET,
	VHCA_IB_ATTR_QUERY_DM_RESP_LENGTH,
};

/*
 * ibv_import_pd: the driver's method VHCA_IB_METHOD_PD_QUERY of
 * UVERBS_OBJECT_PD succeeds for the handle of a PD of the context and
 * answers nothing more; any other handle fails (EINVAL, ENOENT).
 */
enum vhca_pd_methods {
	VHCA_IB_METHOD_PD_QUERY = (1U << UVERBS_ID_NS_SHIFT),
};

enum vhca_query_pd_attrs {
	VHCA_IB_ATTR_QUERY_PD_HANDLE = (1U << UVERBS_ID_NS_SHIFT),
};

/*
 * ibv_import_device: the ioctl method UVERBS_METHOD_QUERY_CONTEXT of
 * UVERBS_OBJECT_DEVICE takes one driver attribute more than the core's, an
 * output: the context's struct vhca_alloc_ucontext_resp, what
 * ALLOC_UCONTEXT answered, so that a process sharing the command fd maps
 * the context's two areas itself.
 */
enum vhca_query_context_attrs {
	VHCA_IB_ATTR_QUERY_CONTEXT_RESP_UCTX = (1U << UVERBS_ID_NS_SHIFT),
};

#endif /* VHCA_ABI_USER_H */
