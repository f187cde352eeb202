/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory regions and memory windows of vhca.
 */
#ifndef VHCA_MR_H
#define VHCA_MR_H

#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/vhca-abi.h>

struct mem_cgroup;
struct sk_buff;
struct vhca_dev;

/*
 * Keys: lkey == rkey == (index << 8) | key byte.  The index (1 to
 * VHCA_MR_INDEX_MAX, never 0, so no key is 0) finds the MR in vdev->mr_xa;
 * the key byte is taken from vdev->mr_key, which advances by a random
 * step of 1 to 255 on every registration: no peer can predict it, and the
 * next registration never gets the key of the MR registered before it.
 */
#define VHCA_MR_INDEX_MAX	(BIT(24) - 1)

static inline u32 vhca_mr_key(u32 index, u8 key_byte)
{
	return index << 8 | key_byte;
}

static inline u32 vhca_mr_key_index(u32 key)
{
	return key >> 8;
}

/* The access bits vhca_mr_check() knows; local read is always granted. */
#define VHCA_MR_CHECK_ACCESS	(IB_ACCESS_LOCAL_WRITE |		\
				 IB_ACCESS_REMOTE_READ |		\
				 IB_ACCESS_REMOTE_WRITE |		\
				 IB_ACCESS_REMOTE_ATOMIC |		\
				 IB_ACCESS_FLUSH_GLOBAL)

/* The remote accesses an MR or a window may grant. */
#define VHCA_MR_REMOTE_ACCESS	(IB_ACCESS_REMOTE_READ |		\
				 IB_ACCESS_REMOTE_WRITE |		\
				 IB_ACCESS_REMOTE_ATOMIC)

/* The largest page list of a fast-registration MR (max_fast_reg_page_list_len). */
#define VHCA_MAX_FAST_REG_PAGES	512

/* States of a fast-registration MR (IBTA 10.6.1); dereg_mr ends it. */
enum vhca_mr_state {
	VHCA_MR_INVALID,	/* allocated, or invalidated: no access */
	VHCA_MR_VALID,		/* registered by REG_MR: accessible */
};

/*
 * A memory region: user memory pinned by ib_umem, or (DMA MR: dma set, umem
 * NULL) all of kernel memory, or (DM MR: kaddr set) a range of a device
 * memory allocation (vhca_dm.c), or (fast set) a fast-registration MR of a
 * kernel consumer.
 *
 * A user, DMA or DM MR: every field but ref is written before the MR is
 * published in vdev->mr_xa and never changes after.
 *
 * A user MR translates an iova in O(1): byte iova of the MR is byte
 * (iova - mr->iova) + page_offset of the concatenation of pages[], which
 * holds the npages pinned pages of the umem in order.  A zero-based user MR
 * (IB_ZERO_BASED) has iova 0, whatever address it was registered with;
 * ibmr.iova keeps that address.  A DMA MR's iova is a kernel virtual
 * address (virtual DMA).  A DM MR is always zero-based: byte iova is at
 * kaddr + iova, in the allocation's coherent buffer, which outlives the MR
 * (the core frees no DM while an MR is registered on it).
 *
 * A fast-registration MR (alloc_mr, IB_MR_TYPE_MEM_REG): pd, fast, index
 * and the two page arrays are set before it is published; what a
 * registration changes is under lock (a spinlock taken with interrupts
 * saved, innermost: the engine holds a QP lock around it, never the
 * reverse): state, key (the lkey and rkey in effect, or of the last
 * registration), iova, length, access, and the page list in effect,
 * fr_pages[0..fr_npages) of 2^fr_shift bytes each, fr_offset the MR's
 * first byte in fr_pages[0] (kernel virtual addresses: virtual DMA).
 * map_mr_sg fills the map (fr_map, fr_nmap, fr_map_offset, fr_map_shift),
 * also under lock, which no access reads; REG_MR copies it into the list
 * in effect, so a map made while the MR is VALID changes nothing until
 * the next registration.  Every engine access to a fast MR checks state,
 * key, PD, access and bounds and copies under lock in one go
 * (vhca_mr_copy() checks again what vhca_mr_check() found): once REG_MR,
 * LOCAL_INV or a remote invalidation has released the lock, no access
 * made under the registration before it is still copying, and none
 * begins.  ibmr.lkey and ibmr.rkey are the consumer's
 * (ib_update_fast_reg_key() writes them); the engine never reads them.
 *
 * A memory window (alloc_mw) is a struct vhca_mr too, mw_type set, in the
 * same xarray and key space: a remote peer's R_Key finds an MR or a window
 * alike (vhca_mr_get()).  Its pd, index and the lifetime below are as an
 * MR's; what a bind or an invalidation changes is under lock, as for a fast
 * MR: state (a type 1 window is always VALID, bound or not; a type 2 window
 * is INVALID, the IBTA's Free, until a bind, and after an invalidation),
 * key, iova, length and access (the bind's), mw_mr (the MR it is bound
 * to, NULL when unbound) and mw_qpn (type 2: the QP it is bound to).  A
 * window holds no reference on its MR: the MR's mw_bound counts the
 * windows bound to it, and dereg_mr refuses (-EINVAL) while any is, so the
 * MR outlives its binding; dereg_mr sets mw_bound to -1 when it proceeds,
 * after which no bind takes the MR.
 *
 * An on-demand paging MR (odp set, IB_ACCESS_ON_DEMAND: vhca_odp.c) is a
 * user MR whose umem is the core's ib_umem_odp and pins nothing: pages[]
 * has an entry for every page of the umem, NULL while the page is not
 * resident, the page once a fault brought it in (writable when the MR is,
 * the mapping it had then), or VHCA_ODP_FAILED after a fault that could
 * not bring it in (the next access fails once, and clears it).  pages[]
 * changes under lock (taken with interrupts saved, as a fast MR's), and
 * the engine copies under it: once the MMU notifier's invalidation has
 * released the lock, no copy into or out of the range is under way and
 * none finds its pages.  A fault runs in process context: one at a time
 * per MR from a non-sleeping access (odp_work, for the range in odp_va
 * and odp_len, odp_queued under lock), or synchronously
 * (vhca_odp_fault()), or from an asynchronous prefetch's work item.
 *
 * An implicit ODP MR (odp_implicit: registered at address 0 with length
 * SIZE_MAX) covers the process's address space, iova 0 and length its
 * mm's task_size; odp is the core's implicit umem, which covers no
 * range, and pages[] is NULL.  Chunk i of the address space (bytes
 * [i << VHCA_ODP_CHUNK_SHIFT, (i + 1) << VHCA_ODP_CHUNK_SHIFT)) has a
 * child (struct vhca_odp_child, in odp_children at index i) once a
 * fault touched it: a child umem of its own, with its own interval
 * notifier, and the pages[] of the chunk, as an explicit ODP MR's, under
 * the MR's lock.  A fault adds children (odp_mutex, odp_nchildren, at
 * most VHCA_ODP_MAX_CHILDREN); they stay until the MR goes.  A chunk
 * without a child is not resident; odp_failed (under lock) is the index
 * + 1 of a chunk whose child could not be made (no mapping there, the
 * process gone, too many children), whose next access fails once.  The
 * MR holds the mm (mmgrab) for the children to come, and the memory
 * cgroup that their pages[] are charged to (odp_memcg).
 *
 * Lifetime: the xarray holds one reference, each engine user one more
 * (vhca_mr_get/vhca_mr_put), as do an ODP MR's queued fault and each
 * asynchronous prefetch of it.  dereg_mr erases the MR from the xarray (no new
 * lookup finds it), drops the xarray's reference, waits for released (the
 * last engine user gone), unpins the memory and frees the MR after an RCU
 * grace period, since lookups run under RCU only.
 */
struct vhca_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	struct page **pages;	/* user MR: the umem's pages, kvcalloc'ed */
	size_t npages;
	unsigned int page_offset;	/* of the MR's first byte in pages[0] */
	const struct ib_pd *pd;	/* ibmr.pd, which the core sets only later */
	u64 iova;
	u64 length;
	int access;		/* IB_ACCESS_* */
	bool dma;		/* DMA MR: any kernel virtual address */
	void *kaddr;		/* DM MR: byte 0 of the MR */
	bool fast;		/* fast-registration MR: the fields below */
	u32 index;
	refcount_t ref;		/* the xarray's, plus one per engine user */
	struct completion released;
	struct rcu_head rcu;

	spinlock_t lock;	/* fast: the registration and the map */
	u8 state;		/* enum vhca_mr_state */
	u32 key;
	u64 *fr_pages;		/* VHCA_MAX_FAST_REG_PAGES max: fr_max */
	u64 *fr_map;
	u32 fr_max;
	u32 fr_npages;
	u32 fr_offset;
	u8 fr_shift;
	u32 fr_nmap;
	u32 fr_map_offset;
	u8 fr_map_shift;

	u8 mw_type;		/* a window: IB_MW_TYPE_1 or _2; 0: an MR */
	struct vhca_mr *mw_mr;	/* a window: the MR it is bound to, or NULL */
	u32 mw_qpn;		/* a bound type 2 window: its QP */
	atomic_t mw_bound;	/* an MR: windows bound to it; -1: dereg'ed */

	struct ib_umem_odp *odp;	/* ODP MR: its umem, also in umem */
	struct work_struct odp_work;
	u64 odp_va;			/* the range odp_work faults in */
	u32 odp_len;
	bool odp_queued;
	bool odp_implicit;		/* implicit ODP: the fields below */
	struct xarray odp_children;	/* chunk index -> vhca_odp_child */
	struct mutex odp_mutex;		/* adds children */
	u32 odp_nchildren;
	unsigned long odp_failed;	/* chunk index + 1, or 0 */
	struct mem_cgroup *odp_memcg;
};

/*
 * A chunk of an implicit ODP MR: its child umem, and pages[] of its
 * VHCA_ODP_CHUNK_PAGES pages as an explicit ODP MR's pages[], under the
 * MR's lock.
 */
struct vhca_odp_child {
	struct ib_umem_odp *odp;
	struct vhca_mr *mr;
	struct page *pages[];
};

#define VHCA_ODP_CHUNK		BIT_ULL(VHCA_ODP_CHUNK_SHIFT)
#define VHCA_ODP_CHUNK_PAGES	(VHCA_ODP_CHUNK >> PAGE_SHIFT)

/* pages[] of an ODP MR: a fault could not bring the page in. */
#define VHCA_ODP_FAILED		((struct page *)1)

/* The driver's ib_mw; the window itself outlives it by an RCU grace period. */
struct vhca_mw {
	struct ib_mw ibmw;
	struct vhca_mr *win;
};

static inline struct vhca_mw *to_vmw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct vhca_mw, ibmw);
}

static inline struct vhca_mr *to_vmr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct vhca_mr, ibmr);
}

struct ib_mr *vhca_get_dma_mr(struct ib_pd *ibpd, int access);
/* reg_user_mr: a DMA handle (steering hints) is refused. */
struct ib_mr *vhca_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_dmah *dmah,
			       struct ib_udata *udata);
#ifdef VHCA_HAVE_REG_USER_MR_DMAH
#define vhca_reg_user_mr_op	vhca_reg_user_mr
#else
/* reg_user_mr before it took a DMA handle. */
struct ib_mr *vhca_reg_user_mr_op(struct ib_pd *ibpd, u64 start, u64 length,
				  u64 iova, int access, struct ib_udata *udata);
#endif
/*
 * rereg_user_mr: always a new MR (the core swaps it in and deregisters the
 * old one) that keeps the old one's lkey and rkey, or NULL when nothing
 * changes.  Arguments are checked as reg_user_mr checks them.
 */
struct ib_mr *vhca_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				 u64 length, u64 iova, int access,
				 struct ib_pd *ibpd, struct ib_udata *udata);
int vhca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
/*
 * reg_dm_mr's MR (vhca_dm.c): zero-based over [offset, offset + length) of
 * the device memory buffer buf of size bytes.  -EINVAL when the range is
 * not within the buffer or access lacks IB_ZERO_BASED, else as
 * vhca_mr_check_reg_access() answers (MW_BIND accepted).
 */
struct ib_mr *vhca_mr_reg_dm(struct vhca_dev *vdev, struct ib_pd *ibpd,
			     void *buf, size_t size, u64 offset, u64 length,
			     int access);

/*
 * alloc_mr: a fast-registration MR in the INVALID state, its key the
 * index and a fresh key byte, for up to max_num_sg pages
 * (VHCA_MAX_FAST_REG_PAGES: -EINVAL beyond, or for 0); IB_MR_TYPE_MEM_REG
 * only (-EOPNOTSUPP).  map_mr_sg: ib_sg_to_pages() into the MR's map,
 * which the next REG_MR puts in effect; -EINVAL for a page size that is
 * not a power of two.
 */
struct ib_mr *vhca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg);
int vhca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset);

/*
 * For the engine, any context (no sleeping): the local operations on the
 * fast-registration MR that key's index names.
 *
 * vhca_mr_fast_reg(): REG_MR for a QP of pd: the MR's map (as map_mr_sg
 * left it, with ibmr.iova and ibmr.length) is put in effect with key and
 * access, and the MR becomes VALID.  -EINVAL: no fast MR has that index,
 * the map does not hold [iova, iova + length), or access is not one a
 * registration takes (vhca_mr_check_reg_access()) or is zero-based;
 * -EACCES: the MR is of
 * another PD; -EBUSY: the MR is VALID.
 *
 * vhca_mr_invalidate(): LOCAL_INV (remote_qp NULL) or a SEND with
 * Invalidate's (remote_qp: the QP it came to) for a QP of pd: the MR
 * becomes INVALID.
 * -EINVAL: no fast MR has that index, or key is not its key; -EACCES:
 * another PD; remote only, -EINVAL also when the MR is not VALID (a local
 * invalidation of an INVALID MR with its last key is accepted, as the
 * IBTA's Invalid state allows it).  A window's key: a bound type 2
 * window under key is unbound and INVALID (-EINVAL for a type 1 window,
 * o10-37.2.26, and for one not VALID under key; -EACCES: another PD, or,
 * remotely, another QP than the one the window is bound to: type 2B).
 * vhca_mw_invalidate() takes windows only (a user QP's LOCAL_INV):
 * -EINVAL for any MR's key.
 */
int vhca_mr_fast_reg(struct vhca_dev *vdev, const struct ib_pd *pd, u32 key,
		     int access);
int vhca_mr_invalidate(struct vhca_dev *vdev, const struct ib_pd *pd,
		       u32 key, const struct ib_qp *remote_qp);
int vhca_mw_invalidate(struct vhca_dev *vdev, const struct ib_pd *pd,
		       u32 key);

/*
 * Registration access flags: 0, -EINVAL for flags unknown to the core and
 * for the combinations the IB spec forbids (remote write or remote atomic
 * without local write), -EOPNOTSUPP for what vhca does not implement:
 * memory window binding (MW_BIND: reg_user_mr, rereg_user_mr and
 * reg_dm_mr take it off before asking, windows bind to user and DM MRs
 * only), on-demand paging (ON_DEMAND: reg_user_mr and rereg_user_mr take
 * it off before asking, on a kernel with VHCA_ODP, and then refuse
 * MW_BIND) and persistence (FLUSH_PERSISTENT).  HUGETLB (a
 * hint) and the optional range are accepted and ignored.  ZERO_BASED is
 * accepted here: user and DM MRs take it, DMA and fast-registration MRs
 * refuse it themselves (-EOPNOTSUPP from get_dma_mr, -EINVAL from
 * vhca_mr_fast_reg()).
 */
int vhca_mr_check_reg_access(int access);

/*
 * alloc_mw: a window of type 1 (VALID, unbound) or 2 (INVALID), its key
 * the index and a fresh key byte, counted with the MRs (VHCA_MAX_MR).
 * dealloc_mw unbinds it (its MR may be deregistered from then on), makes
 * it unfindable and waits for the engine to let go of it.
 */
int vhca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int vhca_dealloc_mw(struct ib_mw *ibmw);

/* A bind work request, as the requester read it from the ring. */
struct vhca_mw_bind {
	u32 mw_rkey;		/* names the window by its index */
	u32 new_rkey;		/* the window's index, the new key byte */
	u32 mr_lkey;		/* the MR to bind to (length 0: none) */
	u32 access;		/* IB_ACCESS_REMOTE_* (LOCAL_WRITE ignored) */
	u64 addr;
	u64 length;
};

/*
 * For the engine, any context (no sleeping): execute bind for a QP
 * (qp->pd, qp->qp_num), in the order rxe checks and the IBTA's
 * compliance statements number them.  -EINVAL: no window has mw_rkey's
 * index (its key byte is not checked), a type 2 window is not
 * INVALID or the bind's length is 0, new_rkey names another index, access
 * has a bit a window cannot grant (zero-based windows included), the MR
 * named is no user or DM MR or is being deregistered, or the window does
 * not lie within the MR; -EACCES: the window or the MR is of another PD, the MR
 * has no MW_BIND access, or the window grants remote write or atomic on
 * an MR without local write.  A type 1 bind of length 0 unbinds it
 * (still VALID, under the new key).
 */
int vhca_mw_bind(struct vhca_dev *vdev, const struct ib_qp *qp,
		 const struct vhca_mw_bind *bind);

/* Whether mr is a memory window. */
static inline bool vhca_mr_is_mw(const struct vhca_mr *mr)
{
	return mr->mw_type;
}

/*
 * Between vhca_mr.c and vhca_mw.c, which makes its windows with them:
 * vhca_mr_alloc() counts a new MR or window against VHCA_MAX_MR (NULL
 * beyond it or without memory); vhca_mr_register() gives a filled-in one
 * its keys and publishes it, freeing it on failure; vhca_mr_unpublish()
 * returns once no lookup finds it and its last user let go, and
 * vhca_mr_free() frees it.  vhca_mr_in_bounds() is the bounds part of the
 * checks; vhca_mr_invalidate_fast() the invalidation of a fast MR (see
 * vhca_mr_invalidate()).
 */
struct vhca_mr *vhca_mr_alloc(struct vhca_dev *vdev, struct ib_pd *ibpd,
			      int access);
struct ib_mr *vhca_mr_register(struct vhca_dev *vdev, struct vhca_mr *mr);
void vhca_mr_unpublish(struct vhca_dev *vdev, struct vhca_mr *mr);
void vhca_mr_free(struct vhca_dev *vdev, struct vhca_mr *mr);
bool vhca_mr_in_bounds(const struct vhca_mr *mr, u64 iova, u64 len);
int vhca_mr_invalidate_fast(struct vhca_mr *mr, const struct ib_pd *pd, u32 key,
			    bool remote);

/*
 * For the engine, any context: the MR with this lkey/rkey, referenced, or
 * NULL if there is none (unknown index or stale key byte); release it with
 * vhca_mr_put().  A fast-registration MR and a window are found by their
 * index alone: key and state are checked, under their lock, by
 * vhca_mr_check() and the copies, which take the key the lookup was for.
 */
struct vhca_mr *vhca_mr_get(struct vhca_dev *vdev, u32 key);
void vhca_mr_put(struct vhca_mr *mr);

/*
 * Whether lookups still find mr: false once dereg_mr has begun, or
 * rereg_user_mr has put its successor in its place.
 */
bool vhca_mr_published(struct vhca_dev *vdev, const struct vhca_mr *mr);

/*
 * Whether the engine may access [iova, iova + len) through mr, found by
 * key, for a QP of pd, needing every bit of access (VHCA_MR_CHECK_ACCESS
 * bits; 0 means local read).  Checked in this order:
 *  -EACCES: a fast MR that is not VALID or whose key is not key; mr
 *           belongs to another PD, or a bit of access is not granted
 *           (a bit outside VHCA_MR_CHECK_ACCESS is never granted);
 *  -EINVAL: the range wraps around the end of the u64 space, or (user or
 *           DM MR) does not lie within [mr->iova, mr->iova + mr->length).
 * A zero-length range touches no byte: it passes the bounds check wherever
 * it is (PD and access are still checked).  A DMA MR accepts any range that
 * does not wrap.  A window is refused (-EACCES): a local access never goes
 * through one.
 *
 * vhca_mr_check_remote(): the same for a remote access by the responder
 * QP qp (its PD qp->pd), which also takes a window: under its lock, it
 * must be VALID under key and bound (-EACCES), of qp's PD and (type 2)
 * bound to qp itself (-EACCES), grant access (-EACCES) and hold the range
 * (-EINVAL); then its MR is checked for the bounds, and for local write
 * when access writes (remote write or atomic), as vhca_mr_check() does.
 * vhca_mr_check_remote_pd(): the same for QP number qpn and PD pd (an
 * XRC_TGT QP checks with the PD of the XRC SRQ a request names).
 */
int vhca_mr_check(struct vhca_mr *mr, u32 key, const struct ib_pd *pd,
		  u64 iova, u64 len, int access);
int vhca_mr_check_remote(struct vhca_mr *mr, u32 key, const struct ib_qp *qp,
			 u64 iova, u64 len, int access);
int vhca_mr_check_remote_pd(struct vhca_mr *mr, u32 key,
			    const struct ib_pd *pd, u32 qpn, u64 iova,
			    u64 len, int access);

/* Direction of a copy between kernel memory and memory regions. */
enum vhca_copy_dir {
	VHCA_COPY_TO_MR,	/* kernel buffer or skb -> MR */
	VHCA_COPY_FROM_MR,	/* MR -> kernel buffer or skb */
};

/*
 * For the engine, any context (no sleeping): copy len bytes between buf
 * and [iova, iova + len) of mr, found by key.  PD and access are the
 * caller's to check with vhca_mr_check(); this only refuses to touch
 * memory the MR does not grant, whatever it is called with: -EINVAL if the
 * range is out of the MR's bounds (as vhca_mr_check() has them), -EACCES
 * for a copy into an MR registered without IB_ACCESS_LOCAL_WRITE (its
 * pages are pinned read-only) and for a fast MR not VALID under key (it
 * was invalidated or registered again since the check).  Through a window
 * (under its lock, its MR's translation): -EACCES also when the window is
 * no longer VALID under key or no longer bound, -EINVAL when the range is
 * out of its bounds.
 * An ODP MR: -EAGAIN when a page of the range is not resident (a fault
 * is queued: the caller tries again later), -EFAULT when a fault could
 * not bring one in (vhca_odp_resident()).
 * Nothing is copied on error.  vhca_mr_copy_skb() does the same with the
 * skb's data at skb_off (linear or not) in place of buf, and also returns
 * -EFAULT if the skb is shorter than skb_off + len.
 */
int vhca_mr_copy(struct vhca_mr *mr, u32 key, u64 iova, void *buf, u32 len,
		 enum vhca_copy_dir dir);
int vhca_mr_copy_skb(struct vhca_mr *mr, u32 key, u64 iova,
		     struct sk_buff *skb, u32 skb_off, u32 len,
		     enum vhca_copy_dir dir);

/*
 * The payload of a local requester's message (direct placement, no
 * packets): the bytes of its WQE, its inline data or gathered through its
 * SGEs (a kernel copy its requester validated) with its device's MRs and
 * its PD's rights; or a local responder's READ responses, read from the
 * MR the READ names (mr, referenced and checked for remote read by the
 * responder; key and va of byte 0 of the run).  failed: a gather failed,
 * the sender's error (an SGE's MR gone or no longer granting the range
 * since the WQE was checked, the READ's MR invalidated or its ODP memory
 * not resident), not the receiver's; err is its error.
 */
struct vhca_src {
	struct vhca_dev *vdev;
	const struct ib_pd *pd;
	const struct vhca_sge *sge;
	u32 num_sge;
	const u8 *data;		/* inline data, or NULL: sge or mr */
	struct vhca_mr *mr;	/* a READ's MR, or NULL */
	u32 key;
	u64 va;
	bool failed;
	int err;
};

/*
 * vhca_mr_copy() into the MR, the bytes [src_off, src_off + len) of src
 * in place of buf: one copy from the sender's memory to the receiver's
 * (through the stack, a chunk at a time, into a fast MR or a window,
 * whose lock is held while they copy).  A failed gather sets src->failed.
 */
int vhca_mr_copy_src(struct vhca_mr *mr, u32 key, u64 iova,
		     struct vhca_src *src, u32 src_off, u32 len);

enum vhca_atomic_op {
	VHCA_ATOMIC_FETCH_ADD,
	VHCA_ATOMIC_CMP_SWAP,
	VHCA_ATOMIC_WRITE,	/* stores swap */
};

/* An 8-byte atomic's operands, and the value it found (orig). */
struct vhca_atomic {
	enum vhca_atomic_op op;
	u64 compare_add;
	u64 swap;
	u64 orig;
};

/*
 * For the engine, any context (no sleeping): execute the atomic on the
 * 8 bytes at iova of mr, found by key, with the CPU's atomic instructions
 * (atomic with respect to the CPUs' and every vhca device's atomics on that
 * memory; an ATOMIC WRITE's store is a release, after everything placed
 * before it).  PD and access are the caller's to check, as for the copies,
 * which refuse the same way; also -EINVAL when iova is not 8-byte aligned
 * or the 8 bytes are not one aligned word of memory.
 */
int vhca_mr_atomic(struct vhca_mr *mr, u32 key, u64 iova,
		   struct vhca_atomic *atomic);

/*
 * For the engine, any context (no sleeping): copy len bytes between buf
 * and the bytes [offset, offset + len) of the message that the SGE list
 * (num_sge entries, a kernel copy the caller has validated) describes: a
 * receive scatters a packet's payload at its offset in the message, a send
 * gathers one.  Each SGE the copy touches is looked up by lkey (referenced
 * for the copy only) and checked with vhca_mr_check() against pd and
 * access (IB_ACCESS_LOCAL_WRITE to scatter, 0 to gather); zero-length SGEs
 * and SGEs outside [offset, offset + len) are not looked up.  Returns, for
 * the work completion status:
 *  0;
 *  -EINVAL (IB_WC_LOC_LEN_ERR): offset + len exceeds the SGEs' total
 *          length; checked first, nothing is copied;
 *  -EACCES (IB_WC_LOC_PROT_ERR): an SGE's lkey names no MR, its MR is of
 *          another PD or lacks access, or the SGE is out of its MR's
 *          bounds; the SGEs before it have been copied;
 *  -EAGAIN or -EFAULT from an SGE's ODP MR (vhca_mr_copy()), likewise.
 * vhca_sge_copy_skb() takes the skb's data at skb_off in place of buf and
 * also returns -EFAULT (checked first) if the skb is too short.
 */
int vhca_sge_copy(struct vhca_dev *vdev, const struct ib_pd *pd,
		  const struct vhca_sge *sge, u32 num_sge, u64 offset,
		  void *buf, u32 len, enum vhca_copy_dir dir, int access);
int vhca_sge_copy_skb(struct vhca_dev *vdev, const struct ib_pd *pd,
		      const struct vhca_sge *sge, u32 num_sge, u64 offset,
		      struct sk_buff *skb, u32 skb_off, u32 len,
		      enum vhca_copy_dir dir, int access);
/* vhca_sge_copy() to scatter, from src as vhca_mr_copy_src() has it. */
int vhca_sge_copy_src(struct vhca_dev *vdev, const struct ib_pd *pd,
		      const struct vhca_sge *sge, u32 num_sge, u64 offset,
		      struct vhca_src *src, u32 src_off, u32 len, int access);

/*
 * On-demand paging (vhca_odp.c; compiled out without VHCA_ODP, when no
 * MR is ODP).  vhca_odp_wq_init() and vhca_odp_wq_exit(): the module's
 * workqueue of ODP work items, made when it loads and destroyed, after
 * every device is gone, when it unloads.  vhca_odp_init(): an ODP MR over [start, start + length)
 * of the calling process, nothing resident, for vhca_mr_pin();
 * vhca_odp_init_implicit(): an implicit one, over the whole of it.
 * vhca_odp_release(): an implicit MR's children and what it holds, for
 * vhca_mr_free(), before the MR's own umem goes.
 * vhca_odp_chunk_pages(), mr->lock held: the pages[] of the child of an
 * implicit MR holding iova, or NULL.
 * vhca_odp_resident(), for the copies, mr->lock held: 0 when every page
 * of [iova, iova + len) (within bounds) is resident; -EAGAIN when one is
 * not, a fault of the range queued (odp_work, one at a time: the engine
 * tries again later, as its caller says); -EFAULT when a fault failed for
 * one (the failure is consumed).  vhca_odp_fault(): bring [iova, iova +
 * len) in, process context (sleeps), without fault only what is resident
 * (prefetch's NO_FAULT); 0 or the fault's error.  vhca_advise_mr(): the
 * advise_mr verb; its SGEs are checked before it returns (-ENOENT: no MR
 * has the lkey; -EINVAL: not an ODP MR, or the range wraps or is out of
 * its bounds; -EACCES: another PD's MR, or PREFETCH_WRITE of an MR
 * without local write).  With IB_UVERBS_ADVISE_MR_FLAG_FLUSH the
 * prefetches are done before it returns, with their error; without, a
 * work item on the module's workqueue does them later and ignores their
 * errors (a hint), holding a reference on each SGE's MR (dereg_mr waits
 * for its current step, VHCA_ODP_PREFETCH_STEP, and stops it); -ENOMEM
 * when the SGEs cannot be copied, and 0 without doing anything when the
 * device has VHCA_ODP_PREFETCH_MAX of them already (counted).
 */
#if VHCA_ODP
int vhca_odp_wq_init(void);
void vhca_odp_wq_exit(void);
int vhca_odp_init(struct vhca_dev *vdev, struct vhca_mr *mr, u64 start,
		  u64 length, int access);
int vhca_odp_init_implicit(struct vhca_dev *vdev, struct vhca_mr *mr,
			   int access);
void vhca_odp_release(struct vhca_mr *mr);
struct page **vhca_odp_chunk_pages(struct vhca_mr *mr, u64 iova);
int vhca_odp_resident(struct vhca_mr *mr, u64 iova, u32 len);
int vhca_odp_fault(struct vhca_mr *mr, u64 iova, u64 len, bool fault);
int vhca_advise_mr(struct ib_pd *ibpd, enum ib_uverbs_advise_mr_advice advice,
		   u32 flags, struct ib_sge *sg_list, u32 num_sge,
		   struct uverbs_attr_bundle *attrs);
#else
static inline int vhca_odp_wq_init(void)
{
	return 0;
}

static inline void vhca_odp_wq_exit(void)
{
}

static inline int vhca_odp_init(struct vhca_dev *vdev, struct vhca_mr *mr,
				u64 start, u64 length, int access)
{
	return -EOPNOTSUPP;
}

static inline int vhca_odp_init_implicit(struct vhca_dev *vdev,
					 struct vhca_mr *mr, int access)
{
	return -EOPNOTSUPP;
}

static inline void vhca_odp_release(struct vhca_mr *mr)
{
}

static inline struct page **vhca_odp_chunk_pages(struct vhca_mr *mr, u64 iova)
{
	return NULL;
}

static inline int vhca_odp_resident(struct vhca_mr *mr, u64 iova, u32 len)
{
	return -EFAULT;
}

static inline int vhca_odp_fault(struct vhca_mr *mr, u64 iova, u64 len,
				 bool fault)
{
	return -EFAULT;
}
#endif

/*
 * For the engine's process context: vhca_odp_fault() of the ODP MRs among
 * the SGEs over [offset, offset + len) of the message they describe (what
 * an access that answered -EAGAIN touches), those pd may read (the access
 * checks again); 0, or the first error.
 */
int vhca_sge_fault(struct vhca_dev *vdev, const struct ib_pd *pd,
		   const struct vhca_sge *sge, u32 num_sge, u64 offset,
		   u32 len);

#endif /* VHCA_MR_H */
