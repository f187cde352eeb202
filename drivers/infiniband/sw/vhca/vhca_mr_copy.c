// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The engine's copies between its buffers or packets and memory regions:
 * an MR of any kind (DMA, user, DM, fast-registration) or a window, which
 * leads to its MR under the window's lock; the SGE lists of WQEs; and the
 * atomics on 8 bytes of an MR.  The key a lookup was for is checked again
 * here, under the lock of a fast MR or a window, whose key may change.
 */
#include <linux/highmem.h>
#include <linux/skbuff.h>

#include "vhca.h"

/*
 * What an MR access moves: buf or skb at off, a local requester's payload
 * at off (src: a copy into the MR, gathered straight from the sender's
 * memory), or an atomic's operands.  off advances with every chunk copied.
 */
struct vhca_kbuf {
	void *buf;
	struct sk_buff *skb;
	struct vhca_src *src;
	u32 off;
	struct vhca_atomic *atomic;
};

/* Bytes a copy into a locked MR takes through the stack at a time. */
#define VHCA_BOUNCE_BYTES	512

/*
 * n bytes of a local requester's payload, from off, to mem: its inline
 * data, or gathered through its SGEs with its PD's rights; or of a local
 * responder's READ responses, from its MR.  A failure is the sender's
 * (src->failed, src->err), not the receiver's.
 */
static int vhca_src_gather(struct vhca_src *src, u32 off, void *mem, u32 n)
{
	int err;

	if (src->data) {
		memcpy(mem, src->data + off, n);
		return 0;
	}
	if (src->mr)
		err = vhca_mr_copy(src->mr, src->key, src->va + off, mem, n,
				   VHCA_COPY_FROM_MR);
	else
		err = vhca_sge_copy(src->vdev, src->pd, src->sge,
				    src->num_sge, off, mem, n,
				    VHCA_COPY_FROM_MR, 0);
	if (err) {
		src->failed = true;
		src->err = err;
	}
	return err;
}

/*
 * The atomic on the 8 bytes at mem, as the CPU's own atomics: atomic
 * with respect to every other atomic on that memory, of vhca's engine or
 * of a CPU.  -EINVAL when the 8 bytes are not one aligned word (a range
 * split across pages, or misaligned in the page under an aligned iova).
 */
static int vhca_kbuf_atomic(struct vhca_atomic *atomic, void *mem, u32 n)
{
	u64 *word = mem;

	if (n != sizeof(*word) || !IS_ALIGNED((uintptr_t)mem, sizeof(*word)))
		return -EINVAL;
	switch (atomic->op) {
	case VHCA_ATOMIC_CMP_SWAP:
		atomic->orig = cmpxchg64(word, atomic->compare_add,
					 atomic->swap);
		break;
	case VHCA_ATOMIC_FETCH_ADD:
		atomic->orig = atomic64_fetch_add(atomic->compare_add,
						  (atomic64_t *)word);
		break;
	case VHCA_ATOMIC_WRITE:
		/* After every store the requests before it placed. */
		smp_store_release(word, atomic->swap);
		break;
	}
	return 0;
}

static int vhca_kbuf_copy(struct vhca_kbuf *kb, void *mem, u32 n,
			  enum vhca_copy_dir dir)
{
	int err = 0;

	if (kb->atomic)
		return vhca_kbuf_atomic(kb->atomic, mem, n);
	if (kb->src)
		err = vhca_src_gather(kb->src, kb->off, mem, n);
	else if (kb->skb && dir == VHCA_COPY_TO_MR)
		err = skb_copy_bits(kb->skb, kb->off, mem, n);
	else if (kb->skb)
		err = skb_store_bits(kb->skb, kb->off, mem, n);
	else if (dir == VHCA_COPY_TO_MR)
		memcpy(mem, kb->buf + kb->off, n);
	else
		memcpy(kb->buf + kb->off, mem, n);
	kb->off += n;
	return err;
}

/* Whether skb holds len bytes from off (skb_copy_bits takes ints). */
static bool vhca_skb_range_ok(const struct sk_buff *skb, u32 off, u32 len)
{
	return skb->len <= INT_MAX && len <= skb->len && off <= skb->len - len;
}

/* A chunk of a user MR's page, mapped for the CPU while it copies. */
static int vhca_mr_copy_page(struct page *page, u32 pg_off,
			     struct vhca_kbuf *kb, u32 n, enum vhca_copy_dir dir)
{
	void *kaddr = kmap_local_page(page);
	int err;

	err = vhca_kbuf_copy(kb, kaddr + pg_off, n, dir);
	/* The CPU wrote a user page: as memcpy_to_page() does. */
	if (dir == VHCA_COPY_TO_MR)
		flush_dcache_page(page);
	kunmap_local(kaddr);
	return err;
}

/*
 * An implicit ODP MR's pages, chunk by chunk: the caller found all of
 * them resident (vhca_odp_resident()), under the MR's lock, held.
 */
static int vhca_mr_xfer_chunks(struct vhca_mr *mr, u64 iova,
			       struct vhca_kbuf *kb, u32 len,
			       enum vhca_copy_dir dir)
{
	struct page **pages = NULL;
	u64 off = 0;
	int err = 0;
	u32 n;

	while (len && !err) {
		if (!pages || off == VHCA_ODP_CHUNK) {
			pages = vhca_odp_chunk_pages(mr, iova);
			off = iova & (VHCA_ODP_CHUNK - 1);
		}
		n = min_t(u64, len, PAGE_SIZE - (off & ~PAGE_MASK));
		err = vhca_mr_copy_page(pages[off >> PAGE_SHIFT],
					off & ~PAGE_MASK, kb, n, dir);
		iova += n;
		off += n;
		len -= n;
	}
	return err;
}

/*
 * A user MR's pages, or a fast MR's page list in effect: blocks of
 * 2^fr_shift bytes at kernel virtual addresses, the MR's first byte
 * fr_offset into the first, the range within the registration, which
 * REG_MR checked the list holds.
 */
static int vhca_mr_xfer_pages(struct vhca_mr *mr, u64 iova,
			      struct vhca_kbuf *kb, u32 len,
			      enum vhca_copy_dir dir)
{
	unsigned int shift = mr->fast ? mr->fr_shift : PAGE_SHIFT;
	u64 off = iova - mr->iova + (mr->fast ? mr->fr_offset : mr->page_offset);
	int err = 0;

	if (mr->odp_implicit)
		return vhca_mr_xfer_chunks(mr, iova, kb, len, dir);

	while (len && !err) {
		u64 block_off = off & (BIT_ULL(shift) - 1);
		u32 n = min_t(u64, len, BIT_ULL(shift) - block_off);

		if (mr->fast)
			err = vhca_kbuf_copy(kb, (void *)(uintptr_t)
					     (mr->fr_pages[off >> shift] +
					      block_off), n, dir);
		else
			err = vhca_mr_copy_page(mr->pages[off >> shift],
						block_off, kb, n, dir);
		off += n;
		len -= n;
	}
	return err;
}

/* vhca_mr_xfer(), a fast or an ODP MR's lock held. */
static int vhca_mr_xfer_locked(struct vhca_mr *mr, u32 key, u64 iova,
			       struct vhca_kbuf *kb, u32 len,
			       enum vhca_copy_dir dir)
{
	int err;

	if (mr->fast && (mr->state != VHCA_MR_VALID || mr->key != key))
		return -EACCES;
	if (dir == VHCA_COPY_TO_MR && !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return -EACCES;
	if (!vhca_mr_in_bounds(mr, iova, len))
		return -EINVAL;
	if (mr->dma)
		return vhca_kbuf_copy(kb, (void *)(uintptr_t)iova, len, dir);
	if (mr->kaddr)
		return vhca_kbuf_copy(kb, mr->kaddr + (iova - mr->iova), len,
				      dir);
	if (mr->odp) {
		err = vhca_odp_resident(mr, iova, len);
		if (err)
			return err;
	}
	return vhca_mr_xfer_pages(mr, iova, kb, len, dir);
}

/*
 * Through a window, its lock held: its MR, a user MR, stays registered
 * while the window is bound to it.
 */
static int vhca_mw_xfer_locked(struct vhca_mr *win, u32 key, u64 iova,
			       struct vhca_kbuf *kb, u32 len,
			       enum vhca_copy_dir dir)
{
	struct vhca_mr *mr = win->mw_mr;

	if (win->state != VHCA_MR_VALID || win->key != key || !mr)
		return -EACCES;
	if (!vhca_mr_in_bounds(win, iova, len))
		return -EINVAL;
	return vhca_mr_xfer_locked(mr, mr->ibmr.lkey, iova, kb, len, dir);
}

static int vhca_mr_xfer(struct vhca_mr *mr, u32 key, u64 iova,
			struct vhca_kbuf *kb, u32 len, enum vhca_copy_dir dir);

/*
 * A local requester's payload into a fast MR or through a window, whose
 * lock is held while it copies: gathered first through the stack, a chunk
 * at a time, so that no MR's lock is ever taken under another's (two such
 * copies in opposite directions would deadlock).
 */
static int vhca_mr_xfer_bounced(struct vhca_mr *mr, u32 key, u64 iova,
				struct vhca_kbuf *kb, u32 len)
{
	u8 bounce[VHCA_BOUNCE_BYTES];
	struct vhca_kbuf b = { .buf = bounce };
	int err;
	u32 n;

	while (len) {
		n = min_t(u32, len, sizeof(bounce));
		err = vhca_src_gather(kb->src, kb->off, bounce, n);
		if (!err) {
			b.off = 0;
			err = vhca_mr_xfer(mr, key, iova, &b, n,
					   VHCA_COPY_TO_MR);
		}
		if (err)
			return err;
		kb->off += n;
		iova += n;
		len -= n;
	}
	return 0;
}

static int vhca_mr_xfer(struct vhca_mr *mr, u32 key, u64 iova,
			struct vhca_kbuf *kb, u32 len, enum vhca_copy_dir dir)
{
	unsigned long flags;
	int err;

	if (!len)
		return 0;
	if (kb->src && !kb->src->data &&
	    (mr->fast || vhca_mr_is_mw(mr) || mr->odp))
		return vhca_mr_xfer_bounced(mr, key, iova, kb, len);
	if (!mr->fast && !vhca_mr_is_mw(mr) && !mr->odp)
		return vhca_mr_xfer_locked(mr, key, iova, kb, len, dir);
	spin_lock_irqsave(&mr->lock, flags);
	if (vhca_mr_is_mw(mr))
		err = vhca_mw_xfer_locked(mr, key, iova, kb, len, dir);
	else
		err = vhca_mr_xfer_locked(mr, key, iova, kb, len, dir);
	spin_unlock_irqrestore(&mr->lock, flags);
	return err;
}

int vhca_mr_copy(struct vhca_mr *mr, u32 key, u64 iova, void *buf, u32 len,
		 enum vhca_copy_dir dir)
{
	struct vhca_kbuf kb = { .buf = buf };

	return vhca_mr_xfer(mr, key, iova, &kb, len, dir);
}

int vhca_mr_copy_skb(struct vhca_mr *mr, u32 key, u64 iova,
		     struct sk_buff *skb, u32 skb_off, u32 len,
		     enum vhca_copy_dir dir)
{
	struct vhca_kbuf kb = { .skb = skb, .off = skb_off };

	if (!vhca_skb_range_ok(skb, skb_off, len))
		return -EFAULT;
	return vhca_mr_xfer(mr, key, iova, &kb, len, dir);
}

int vhca_mr_copy_src(struct vhca_mr *mr, u32 key, u64 iova,
		     struct vhca_src *src, u32 src_off, u32 len)
{
	struct vhca_kbuf kb = { .src = src, .off = src_off };

	return vhca_mr_xfer(mr, key, iova, &kb, len, VHCA_COPY_TO_MR);
}

int vhca_mr_atomic(struct vhca_mr *mr, u32 key, u64 iova,
		   struct vhca_atomic *atomic)
{
	struct vhca_kbuf kb = { .atomic = atomic };

	if (!IS_ALIGNED(iova, sizeof(u64)))
		return -EINVAL;
	return vhca_mr_xfer(mr, key, iova, &kb, sizeof(u64), VHCA_COPY_TO_MR);
}

static int vhca_sge_xfer(struct vhca_dev *vdev, const struct ib_pd *pd,
			 const struct vhca_sge *sge, u32 num_sge, u64 offset,
			 struct vhca_kbuf *kb, u32 len, enum vhca_copy_dir dir,
			 int access)
{
	u64 total = 0;
	u32 i;
	int err;

	for (i = 0; i < num_sge; i++)
		total += sge[i].length;
	if (offset > total || len > total - offset) {
		ibdev_dbg(&vdev->ibdev,
			  "sge: %u bytes at %llu overflow %u SGEs of %llu bytes\n",
			  len, offset, num_sge, total);
		return -EINVAL;
	}

	for (i = 0; i < num_sge && len; i++) {
		u64 addr = sge[i].addr;
		u32 n, slen = sge[i].length, lkey = sge[i].lkey;
		struct vhca_mr *mr;

		if (offset >= slen) {
			offset -= slen;
			continue;
		}
		n = min_t(u64, slen - offset, len);
		if (addr + offset < addr) {
			ibdev_dbg(&vdev->ibdev, "sge %u: %#llx wraps\n", i, addr);
			return -EACCES;
		}
		addr += offset;
		mr = vhca_mr_get(vdev, lkey);
		if (!mr) {
			ibdev_dbg(&vdev->ibdev, "sge %u: no MR for lkey %#x\n",
				  i, lkey);
			return -EACCES;
		}
		err = vhca_mr_check(mr, lkey, pd, addr, n, access);
		if (err) {
			vhca_mr_put(mr);
			ibdev_dbg(&vdev->ibdev,
				  "sge %u: lkey %#x refuses %#llx+%u access %#x: %d\n",
				  i, lkey, addr, n, access, err);
			return -EACCES;
		}
		err = vhca_mr_xfer(mr, lkey, addr, kb, n, dir);
		vhca_mr_put(mr);
		if (err) {
			ibdev_dbg(&vdev->ibdev, "sge %u: copy failed: %d\n",
				  i, err);
			return err;
		}
		offset = 0;
		len -= n;
	}
	return len ? -EINVAL : 0;
}

int vhca_sge_copy(struct vhca_dev *vdev, const struct ib_pd *pd,
		  const struct vhca_sge *sge, u32 num_sge, u64 offset,
		  void *buf, u32 len, enum vhca_copy_dir dir, int access)
{
	struct vhca_kbuf kb = { .buf = buf };

	return vhca_sge_xfer(vdev, pd, sge, num_sge, offset, &kb, len, dir,
			     access);
}

int vhca_sge_copy_skb(struct vhca_dev *vdev, const struct ib_pd *pd,
		      const struct vhca_sge *sge, u32 num_sge, u64 offset,
		      struct sk_buff *skb, u32 skb_off, u32 len,
		      enum vhca_copy_dir dir, int access)
{
	struct vhca_kbuf kb = { .skb = skb, .off = skb_off };

	if (!vhca_skb_range_ok(skb, skb_off, len)) {
		ibdev_dbg(&vdev->ibdev, "sge: skb of %u bytes has no %u at %u\n",
			  skb->len, len, skb_off);
		return -EFAULT;
	}
	return vhca_sge_xfer(vdev, pd, sge, num_sge, offset, &kb, len, dir,
			     access);
}

int vhca_sge_copy_src(struct vhca_dev *vdev, const struct ib_pd *pd,
		      const struct vhca_sge *sge, u32 num_sge, u64 offset,
		      struct vhca_src *src, u32 src_off, u32 len, int access)
{
	struct vhca_kbuf kb = { .src = src, .off = src_off };

	return vhca_sge_xfer(vdev, pd, sge, num_sge, offset, &kb, len,
			     VHCA_COPY_TO_MR, access);
}

int vhca_sge_fault(struct vhca_dev *vdev, const struct ib_pd *pd,
		   const struct vhca_sge *sge, u32 num_sge, u64 offset,
		   u32 len)
{
	struct vhca_mr *mr;
	u32 i, n;
	int err;

	for (i = 0; i < num_sge && len; i++) {
		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			continue;
		}
		n = min_t(u64, sge[i].length - offset, len);
		mr = vhca_mr_get(vdev, sge[i].lkey);
		err = 0;
		if (mr && mr->odp &&
		    !vhca_mr_check(mr, sge[i].lkey, pd, sge[i].addr + offset,
				   n, 0))
			err = vhca_odp_fault(mr, sge[i].addr + offset, n, true);
		if (mr)
			vhca_mr_put(mr);
		if (err)
			return err;
		offset = 0;
		len -= n;
	}
	return 0;
}
