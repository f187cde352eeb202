// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite of vhca's memory regions and address handles: MR bounds and
 * access checks (edges, u64 wrap-around, zero length, every access bit, PD
 * mismatch, DMA MRs), registration access-flag validation over every flag
 * combination, key composition and key-byte rotation, MR lookup and the
 * wait of deregistration for in-flight users, AH attribute checks and the
 * PD-confined AH lookup.  The device is a zeroed struct vhca_dev with only
 * its xarrays initialized: nothing here registers an ib_device.
 *
 * Suite vhca_mr_copy: the data movement of the engine.  User MRs are built
 * over pages the test allocates (the page array of a registration, without
 * user memory); DMA MRs over kernel buffers.  Translation at page offsets
 * and boundaries, the last byte and one past it, copies to and from linear
 * and paged skbs, SGE-list scatter and gather at message offsets across SGE
 * boundaries, the length and protection errors, MR references, atomic
 * context.
 *
 * Suite vhca_mr_fast: fast-registration MRs: alloc_mr's limits, map_mr_sg
 * over two pages that are not adjacent, the state machine (INVALID, REG_MR,
 * VALID, LOCAL_INV and remote invalidation, a new registration under a new
 * key byte) with the access every state allows, and REG_MR's and
 * invalidation's refusals.
 *
 * Suite vhca_mr_mw: memory windows over a user MR of fake pages: the
 * states alloc_mw gives, every refusal of a bind in its IBTA order, access
 * through a window (bounds, keys, PDs, type 2B's QP) with bytes across a
 * page boundary, unbinding, invalidation of type 2 (local and remote) and
 * its refusals for type 1, and dereg and rereg refused while bound.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "../drivers/infiniband/sw/vhca/vhca_mr.c"
#include "../drivers/infiniband/sw/vhca/vhca_mw.c"
#include "../drivers/infiniband/sw/vhca/vhca_mr_copy.c"
#include "../drivers/infiniband/sw/vhca/vhca_ah.c"

static const u64 mr_start = 0x10000;
static const u64 mr_len = 0x3000;

/* Two PDs, only compared by address. */
static struct ib_pd pd_a, pd_b;

static void user_mr(struct vhca_mr *mr, int access)
{
	memset(mr, 0, sizeof(*mr));
	mr->pd = &pd_a;
	mr->iova = mr_start;
	mr->length = mr_len;
	mr->access = access;
}

static void vhca_mr_bounds_inside_and_edges(struct kunit *test)
{
	struct vhca_mr mr;

	user_mr(&mr, 0);
	/* The whole MR, first byte, last byte, a middle part. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, mr_start, mr_len, 0), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, mr_start, 1, 0), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, mr_start + mr_len - 1, 1, 0), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, mr_start + 0x800, 0x1000, 0), 0);
	/* Ending exactly at the end. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, mr_start + 0x1000,
					    mr_len - 0x1000, 0), 0);

	/* One byte before the start, one byte past the end. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, mr_start - 1, 1, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, mr_start - 1, 2, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, mr_start + mr_len, 1, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, mr_start + mr_len - 1, 2, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, mr_start, mr_len + 1, 0), -EINVAL);
	/* Far outside on either side. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, 0, 1, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, U64_MAX, 1, 0), -EINVAL);
	/* Covering the MR and more on both sides. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, 0, U64_MAX, 0), -EINVAL);
}

static void vhca_mr_bounds_wrap(struct kunit *test)
{
	struct vhca_mr mr;

	user_mr(&mr, 0);
	/* Ranges whose end wraps past U64_MAX. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, U64_MAX, 2, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, mr_start, U64_MAX, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, mr_start + 1, U64_MAX, 0), -EINVAL);
	/* Inside at the start, a length that a naive end check would wrap. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, mr_start + 0x1000,
					    U64_MAX - mr_start - 0x1000 + 1, 0), -EINVAL);

	/* An MR at the very top of the u64 space. */
	mr.iova = U64_MAX - 0xfff;
	mr.length = 0x1000;
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, U64_MAX - 0xfff, 0x1000, 0), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, U64_MAX, 1, 0), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, U64_MAX, 2, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, U64_MAX - 0xfff, 0x1001, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, 0, 1, 0), -EINVAL);
}

static void vhca_mr_zero_length(struct kunit *test)
{
	struct vhca_mr mr;

	user_mr(&mr, IB_ACCESS_LOCAL_WRITE);
	/* Touches no byte: passes the bounds check anywhere. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, mr_start, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, mr_start + mr_len, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, 0, 0, 0), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, U64_MAX, 0, 0), 0);
	/* PD and access still count. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_b, mr_start, 0, 0), -EACCES);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, mr_start, 0,
					    IB_ACCESS_REMOTE_READ), -EACCES);
}

/* Every granted set against every requested set of the four bits. */
static void vhca_mr_access_bits(struct kunit *test)
{
	static const int bits[] = {
		IB_ACCESS_LOCAL_WRITE, IB_ACCESS_REMOTE_READ,
		IB_ACCESS_REMOTE_WRITE, IB_ACCESS_REMOTE_ATOMIC,
	};
	struct vhca_mr mr;
	int g, r, i;

	for (g = 0; g < 16; g++) {
		int granted = 0;

		for (i = 0; i < ARRAY_SIZE(bits); i++)
			if (g & BIT(i))
				granted |= bits[i];
		user_mr(&mr, granted);
		for (r = 0; r < 16; r++) {
			int want = 0;

			for (i = 0; i < ARRAY_SIZE(bits); i++)
				if (r & BIT(i))
					want |= bits[i];
			KUNIT_EXPECT_EQ_MSG(test,
					    vhca_mr_check(&mr, 0, &pd_a, mr_start, 8, want),
					    (want & ~granted) ? -EACCES : 0,
					    "granted %#x requested %#x", granted, want);
		}
	}

	/* Bits outside the four are never granted, even if registered. */
	user_mr(&mr, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_MW_BIND | IB_ACCESS_HUGETLB);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, mr_start, 8,
					    IB_ACCESS_MW_BIND), -EACCES);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, mr_start, 8,
					    IB_ACCESS_HUGETLB), -EACCES);
}

static void vhca_mr_pd_mismatch(struct kunit *test)
{
	struct vhca_mr mr;

	user_mr(&mr, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
		     IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_b, mr_start, 8, 0), -EACCES);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, NULL, mr_start, 8, 0), -EACCES);
	/* Checked before the bounds and the access bits. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_b, 0, 1, 0), -EACCES);
	user_mr(&mr, 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, 0, 1,
					    IB_ACCESS_REMOTE_WRITE), -EACCES);
}

static void vhca_mr_dma(struct kunit *test)
{
	struct vhca_mr mr = {
		.pd = &pd_a,
		.access = IB_ACCESS_LOCAL_WRITE,
		.dma = true,
	};

	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, 0, 1, 0), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, (u64)(uintptr_t)&mr,
					    sizeof(mr), IB_ACCESS_LOCAL_WRITE), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, U64_MAX, 1, 0), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, 0, U64_MAX, 0), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, U64_MAX, 2, 0), -EINVAL);
	/* Ending exactly at 2^64 is no wrap; one more byte is. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, 1, U64_MAX, 0), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, 2, U64_MAX, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_a, 0, 1,
					    IB_ACCESS_REMOTE_READ), -EACCES);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(&mr, 0, &pd_b, 0, 1, 0), -EACCES);
}

static void vhca_mr_reg_access_named(struct kunit *test)
{
	const int lw = IB_ACCESS_LOCAL_WRITE, rw = IB_ACCESS_REMOTE_WRITE;
	const int rr = IB_ACCESS_REMOTE_READ, ra = IB_ACCESS_REMOTE_ATOMIC;

	/* Forbidden by the spec. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(rw), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(ra), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(rw | ra), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(rr | rw), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(rr | ra), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(rr | rw | ra), -EINVAL);
	/* Forbidden beats unsupported. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(rw | IB_ZERO_BASED), -EINVAL);
	/* Allowed. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(0), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(lw), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(rr), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(lw | rr), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(lw | rw), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(lw | ra), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(lw | rr | rw | ra), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(lw | IB_ACCESS_HUGETLB), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(lw | IB_ACCESS_RELAXED_ORDERING), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(IB_UVERBS_ACCESS_OPTIONAL_LAST), 0);
	/* Not implemented by vhca. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(lw | IB_ZERO_BASED), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(lw | IB_ACCESS_MW_BIND), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(IB_ACCESS_ON_DEMAND), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(IB_ACCESS_FLUSH_GLOBAL), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(IB_ACCESS_FLUSH_PERSISTENT), -EOPNOTSUPP);
}

/*
 * The verdict on a set of flags is the worst verdict on any one of them
 * with the set's own LOCAL_WRITE (-EINVAL beats -EOPNOTSUPP beats 0): no
 * two flags interact but through LOCAL_WRITE.  The named cases above pin
 * the verdict on each flag; this holds it for every combination.
 */
static int reg_access_worst(int access)
{
	int lw = access & IB_ACCESS_LOCAL_WRITE, worst = 0, bit, err;

	for (bit = 0; bit < 10; bit++) {
		if (!(access & BIT(bit)))
			continue;
		err = vhca_mr_check_reg_access(BIT(bit) | lw);
		if (err == -EINVAL || !worst)
			worst = err;
	}
	return worst;
}

static void vhca_mr_reg_access_all(struct kunit *test)
{
	int access, bit;

	/* Every combination of the ten defined flags. */
	for (access = 0; access < BIT(10); access++)
		KUNIT_EXPECT_EQ_MSG(test, vhca_mr_check_reg_access(access),
				    reg_access_worst(access),
				    "access %#x", access);
	/* Undefined bits (10-19, 30, 31) are refused with anything else. */
	for (bit = 10; bit < 32; bit++) {
		int b = (int)BIT(bit);

		if (b & IB_ACCESS_OPTIONAL)
			continue;
		KUNIT_EXPECT_EQ_MSG(test, vhca_mr_check_reg_access(b), -EINVAL,
				    "bit %d", bit);
		KUNIT_EXPECT_EQ_MSG(test, vhca_mr_check_reg_access(b | IB_ACCESS_LOCAL_WRITE),
				    -EINVAL, "bit %d", bit);
	}
}

static void vhca_mr_key_layout(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vhca_mr_key(1, 0), 0x100U);
	KUNIT_EXPECT_EQ(test, vhca_mr_key(0x123456, 0x78), 0x12345678U);
	KUNIT_EXPECT_EQ(test, vhca_mr_key(VHCA_MR_INDEX_MAX, 0xff), 0xffffffffU);
	KUNIT_EXPECT_EQ(test, vhca_mr_key_index(0x12345678), 0x123456U);
	KUNIT_EXPECT_EQ(test, vhca_mr_key_index(0xffffffff), (u32)VHCA_MR_INDEX_MAX);
	KUNIT_EXPECT_EQ(test, vhca_mr_key_index(vhca_mr_key(42, 0x5a)), 42U);
}

/* A device with nothing but its MR and AH xarrays. */
static struct vhca_dev *fake_vdev(struct kunit *test)
{
	struct vhca_dev *vdev = kunit_kzalloc(test, sizeof(*vdev), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, vdev);
	xa_init_flags(&vdev->mr_xa, XA_FLAGS_ALLOC1);
	xa_init_flags(&vdev->ah_xa, XA_FLAGS_ALLOC1);
	return vdev;
}

static struct vhca_mr *new_mr(struct kunit *test, struct vhca_dev *vdev)
{
	struct vhca_mr *mr = vhca_mr_alloc(vdev, &pd_a, IB_ACCESS_LOCAL_WRITE);

	KUNIT_ASSERT_NOT_NULL(test, mr);
	mr->iova = mr_start;
	mr->length = mr_len;
	return mr;
}

static void vhca_mr_key_rotation(struct kunit *test)
{
	struct vhca_dev *vdev = fake_vdev(test);
	struct vhca_mr *a = new_mr(test, vdev), *b = new_mr(test, vdev);
	struct vhca_mr *c = new_mr(test, vdev);
	u32 old_key;
	int i;

	KUNIT_ASSERT_EQ(test, vhca_mr_alloc_key(vdev, a), 0);
	KUNIT_ASSERT_EQ(test, vhca_mr_alloc_key(vdev, b), 0);
	KUNIT_EXPECT_EQ(test, a->index, 1U);
	KUNIT_EXPECT_EQ(test, b->index, 2U);
	KUNIT_EXPECT_EQ(test, vhca_mr_key_index(a->ibmr.lkey), 1U);
	KUNIT_EXPECT_EQ(test, vhca_mr_key_index(b->ibmr.lkey), 2U);
	KUNIT_EXPECT_EQ(test, a->ibmr.rkey, a->ibmr.lkey);
	KUNIT_EXPECT_EQ(test, b->ibmr.rkey, b->ibmr.lkey);

	/* The same index again gets another key byte, every time. */
	xa_erase(&vdev->mr_xa, a->index);
	for (i = 0; i < 600; i++) {
		old_key = vdev->mr_key;
		KUNIT_ASSERT_EQ(test, vhca_mr_alloc_key(vdev, c), 0);
		KUNIT_EXPECT_EQ(test, c->index, 1U);
		KUNIT_EXPECT_NE(test, c->ibmr.lkey & 0xff, old_key);
		KUNIT_EXPECT_EQ(test, c->ibmr.lkey & 0xff, (u32)vdev->mr_key);
		xa_erase(&vdev->mr_xa, c->index);
	}
	KUNIT_ASSERT_EQ(test, vhca_mr_alloc_key(vdev, c), 0);

	/* Reserved but unpublished slots are invisible. */
	KUNIT_EXPECT_NULL(test, vhca_mr_get(vdev, b->ibmr.lkey));

	xa_erase(&vdev->mr_xa, b->index);
	xa_erase(&vdev->mr_xa, c->index);
	vhca_mr_free(vdev, a);
	vhca_mr_free(vdev, b);
	vhca_mr_free(vdev, c);
	KUNIT_EXPECT_EQ(test, atomic_read(&vdev->n_mr), 0);
	KUNIT_EXPECT_TRUE(test, xa_empty(&vdev->mr_xa));
	xa_destroy(&vdev->mr_xa);
}

static void vhca_mr_lookup(struct kunit *test)
{
	struct vhca_dev *vdev = fake_vdev(test);
	struct vhca_mr *mr = new_mr(test, vdev), *got;
	u32 key;

	KUNIT_ASSERT_EQ(test, vhca_mr_alloc_key(vdev, mr), 0);
	KUNIT_ASSERT_EQ(test, vhca_mr_publish(vdev, mr), 0);
	key = mr->ibmr.lkey;

	got = vhca_mr_get(vdev, key);
	KUNIT_EXPECT_PTR_EQ(test, got, mr);
	KUNIT_EXPECT_EQ(test, refcount_read(&mr->ref), 2U);
	/* Stale key byte, unknown index, index 0: nothing. */
	KUNIT_EXPECT_NULL(test, vhca_mr_get(vdev, key ^ 1));
	KUNIT_EXPECT_NULL(test, vhca_mr_get(vdev, key + BIT(8)));
	KUNIT_EXPECT_NULL(test, vhca_mr_get(vdev, key & 0xff));
	vhca_mr_put(got);
	KUNIT_EXPECT_EQ(test, refcount_read(&mr->ref), 1U);
	KUNIT_EXPECT_FALSE(test, completion_done(&mr->released));

	/* Returns once the last reference is gone (it consumes released). */
	vhca_mr_unpublish(vdev, mr);
	KUNIT_EXPECT_EQ(test, refcount_read(&mr->ref), 0U);
	KUNIT_EXPECT_NULL(test, vhca_mr_get(vdev, key));
	vhca_mr_free(vdev, mr);
	KUNIT_EXPECT_EQ(test, atomic_read(&vdev->n_mr), 0);
	xa_destroy(&vdev->mr_xa);
}

struct unpublish_work {
	struct work_struct work;
	struct vhca_dev *vdev;
	struct vhca_mr *mr;
	bool done;
};

static void unpublish_fn(struct work_struct *work)
{
	struct unpublish_work *w = container_of(work, struct unpublish_work, work);

	vhca_mr_unpublish(w->vdev, w->mr);
	WRITE_ONCE(w->done, true);
}

/* Deregistration waits for an engine user holding the MR. */
static void vhca_mr_dereg_waits(struct kunit *test)
{
	struct vhca_dev *vdev = fake_vdev(test);
	struct vhca_mr *mr = new_mr(test, vdev), *got;
	struct unpublish_work w = { .vdev = vdev, .mr = mr };

	KUNIT_ASSERT_EQ(test, vhca_mr_alloc_key(vdev, mr), 0);
	KUNIT_ASSERT_EQ(test, vhca_mr_publish(vdev, mr), 0);
	got = vhca_mr_get(vdev, mr->ibmr.lkey);
	KUNIT_ASSERT_PTR_EQ(test, got, mr);

	INIT_WORK_ONSTACK(&w.work, unpublish_fn);
	schedule_work(&w.work);
	msleep(100);
	/* Gone from lookups, but still waiting for the user. */
	KUNIT_EXPECT_NULL(test, vhca_mr_get(vdev, mr->ibmr.lkey));
	KUNIT_EXPECT_FALSE(test, READ_ONCE(w.done));
	KUNIT_EXPECT_FALSE(test, completion_done(&mr->released));
	/* In-flight users may still check and use it. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check(got, 0, &pd_a, mr_start, 1, 0), 0);

	vhca_mr_put(got);
	flush_work(&w.work);
	destroy_work_on_stack(&w.work);
	KUNIT_EXPECT_TRUE(test, w.done);
	KUNIT_EXPECT_EQ(test, refcount_read(&mr->ref), 0U);
	vhca_mr_free(vdev, mr);
	xa_destroy(&vdev->mr_xa);
}

static void vhca_ah_attr_checks(struct kunit *test)
{
	struct vhca_dev *vdev = fake_vdev(test);
	struct ib_gid_attr v2 = { .gid_type = IB_GID_TYPE_ROCE_UDP_ENCAP };
	struct ib_gid_attr v1 = { .gid_type = IB_GID_TYPE_ROCE };
	struct rdma_ah_attr good = {
		.type = RDMA_AH_ATTR_TYPE_ROCE,
		.port_num = VHCA_PORT,
		.ah_flags = IB_AH_GRH,
		.grh.sgid_attr = &v2,
	};
	struct rdma_ah_attr a;

	KUNIT_EXPECT_EQ(test, vhca_ah_attr_check(&vdev->ibdev, &good), 0);
	a = good;
	a.type = RDMA_AH_ATTR_TYPE_IB;
	KUNIT_EXPECT_EQ(test, vhca_ah_attr_check(&vdev->ibdev, &a), -EINVAL);
	a = good;
	a.ah_flags = 0;
	KUNIT_EXPECT_EQ(test, vhca_ah_attr_check(&vdev->ibdev, &a), -EINVAL);
	a = good;
	a.port_num = 0;
	KUNIT_EXPECT_EQ(test, vhca_ah_attr_check(&vdev->ibdev, &a), -EINVAL);
	a.port_num = 2;
	KUNIT_EXPECT_EQ(test, vhca_ah_attr_check(&vdev->ibdev, &a), -EINVAL);
	a = good;
	a.grh.sgid_attr = NULL;
	KUNIT_EXPECT_EQ(test, vhca_ah_attr_check(&vdev->ibdev, &a), -EINVAL);
	a.grh.sgid_attr = &v1;
	KUNIT_EXPECT_EQ(test, vhca_ah_attr_check(&vdev->ibdev, &a), -EINVAL);
}

/* The AH lookup is confined to its PD and keeps the AV alive. */
static void vhca_ah_lookup(struct kunit *test)
{
	struct vhca_dev *vdev = fake_vdev(test);
	struct vhca_av *av, *got;
	u32 index;

	av = kzalloc(sizeof(*av), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, av);
	av->pd = &pd_a;
	refcount_set(&av->ref, 1);
	KUNIT_ASSERT_EQ(test, xa_alloc(&vdev->ah_xa, &index, av, xa_limit_32b,
				       GFP_KERNEL), 0);

	KUNIT_EXPECT_NULL(test, vhca_av_get(vdev, index, &pd_b));
	KUNIT_EXPECT_NULL(test, vhca_av_get(vdev, index, NULL));
	KUNIT_EXPECT_NULL(test, vhca_av_get(vdev, index + 1, &pd_a));
	KUNIT_EXPECT_NULL(test, vhca_av_get(vdev, 0, &pd_a));
	got = vhca_av_get(vdev, index, &pd_a);
	KUNIT_EXPECT_PTR_EQ(test, got, av);
	KUNIT_EXPECT_EQ(test, refcount_read(&av->ref), 2U);

	/* Destroyed while in use: the user's reference keeps it. */
	vhca_ah_erase(vdev, index);
	vhca_av_put(av);
	KUNIT_EXPECT_NULL(test, vhca_av_get(vdev, index, &pd_a));
	KUNIT_EXPECT_EQ(test, refcount_read(&got->ref), 1U);
	vhca_av_put(got);
	KUNIT_EXPECT_TRUE(test, xa_empty(&vdev->ah_xa));
	xa_destroy(&vdev->ah_xa);
}

static struct kunit_case vhca_mr_cases[] = {
	KUNIT_CASE(vhca_mr_bounds_inside_and_edges),
	KUNIT_CASE(vhca_mr_bounds_wrap),
	KUNIT_CASE(vhca_mr_zero_length),
	KUNIT_CASE(vhca_mr_access_bits),
	KUNIT_CASE(vhca_mr_pd_mismatch),
	KUNIT_CASE(vhca_mr_dma),
	KUNIT_CASE(vhca_mr_reg_access_named),
	KUNIT_CASE(vhca_mr_reg_access_all),
	KUNIT_CASE(vhca_mr_key_layout),
	KUNIT_CASE(vhca_mr_key_rotation),
	KUNIT_CASE(vhca_mr_lookup),
	KUNIT_CASE(vhca_mr_dereg_waits),
	KUNIT_CASE(vhca_ah_attr_checks),
	KUNIT_CASE(vhca_ah_lookup),
	{}
};

static struct kunit_suite vhca_mr_suite = {
	.name = "vhca_mr",
	.test_cases = vhca_mr_cases,
};

/*
 * A fake user MR: FAKE_PAGES pages, the MR starting FAKE_OFF bytes into the
 * first one and ending FAKE_TAIL bytes before the end of the last one.
 */
#define FAKE_PAGES	3
#define FAKE_OFF	0x123
#define FAKE_TAIL	0x45
#define FAKE_LEN	(FAKE_PAGES * PAGE_SIZE - FAKE_OFF - FAKE_TAIL)

static const int lw = IB_ACCESS_LOCAL_WRITE;

static u8 pattern(int page, unsigned int byte)
{
	return byte + (byte >> 8) * 3 + page * 101;
}

static void free_page_action(void *page)
{
	__free_page(page);
}

KUNIT_DEFINE_ACTION_WRAPPER(kvfree_action, kvfree, const void *);

/* kvcalloc'ed like a registration's array; the pages go at the test's end. */
static struct page **fake_pages(struct kunit *test)
{
	struct page **pages = kvcalloc(FAKE_PAGES, sizeof(*pages), GFP_KERNEL);
	unsigned int i, b;

	KUNIT_ASSERT_NOT_NULL(test, pages);
	for (i = 0; i < FAKE_PAGES; i++) {
		pages[i] = alloc_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, pages[i]);
		KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, free_page_action,
								pages[i]), 0);
		for (b = 0; b < PAGE_SIZE; b++)
			((u8 *)page_address(pages[i]))[b] = pattern(i, b);
	}
	return pages;
}

static void fake_user_mr(struct vhca_mr *mr, struct page **pages, u64 iova,
			 int access)
{
	mr->pd = &pd_a;
	mr->access = access;
	mr->iova = iova;
	mr->length = FAKE_LEN;
	mr->pages = pages;
	mr->npages = FAKE_PAGES;
	mr->page_offset = FAKE_OFF;
}

/* A fake user MR on the stack; its page array goes at the test's end. */
static void stack_user_mr(struct kunit *test, struct vhca_mr *mr, u64 iova,
			  int access)
{
	struct page **pages = fake_pages(test);

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, kvfree_action, pages), 0);
	memset(mr, 0, sizeof(*mr));
	fake_user_mr(mr, pages, iova, access);
}

/* Byte off of the MR, found without vhca_mr_copy's arithmetic. */
static u8 *mr_byte(const struct vhca_mr *mr, u64 off)
{
	u64 pos = mr->page_offset + off;

	return (u8 *)page_address(mr->pages[pos / PAGE_SIZE]) + pos % PAGE_SIZE;
}

static void expect_mr_bytes(struct kunit *test, const struct vhca_mr *mr,
			    u64 off, const u8 *data, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++) {
		if (*mr_byte(mr, off + i) != data[i]) {
			KUNIT_FAIL(test, "MR byte %llu: %#x, expected %#x",
				   off + i, *mr_byte(mr, off + i), data[i]);
			return;
		}
	}
}

static void expect_all(struct kunit *test, const u8 *p, u8 val, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++) {
		if (p[i] != val) {
			KUNIT_FAIL(test, "byte %u: %#x, expected %#x", i, p[i], val);
			return;
		}
	}
}

static void vhca_copy_dma_mr(struct kunit *test)
{
	struct vhca_mr mr = { .pd = &pd_a, .access = lw, .dma = true };
	u8 *mem = kunit_kzalloc(test, 64, GFP_KERNEL);
	u8 *buf = kunit_kzalloc(test, 64, GFP_KERNEL);
	u64 iova = (uintptr_t)mem;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, mem);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < 64; i++)
		buf[i] = i + 1;

	/* The iova is the kernel virtual address. */
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova + 8, buf, 32, VHCA_COPY_TO_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, mem + 8, buf, 32);
	expect_all(test, mem, 0, 8);
	expect_all(test, mem + 40, 0, 24);
	memset(buf, 0, 64);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova + 12, buf, 16, VHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, buf, mem + 12, 16);
	expect_all(test, buf + 16, 0, 48);

	/* Zero length touches nothing, wherever. */
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, 0, NULL, 0, VHCA_COPY_TO_MR), 0);
	/* A wrapping range. */
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, U64_MAX, buf, 2, VHCA_COPY_FROM_MR), -EINVAL);

	/* Without local write: read, never written. */
	mr.access = IB_ACCESS_REMOTE_READ;
	memset(buf, 0xee, 64);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova, buf, 64, VHCA_COPY_TO_MR), -EACCES);
	expect_all(test, mem, 0, 8);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova, buf, 64, VHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_EQ(test, buf[0], 0);
	KUNIT_EXPECT_EQ(test, buf[8], 1);
}

/* Reads: translation by (iova - mr->iova) + page_offset, page by page. */
static void vhca_copy_page_array_read(struct kunit *test)
{
	/* Page-aligned, and with the user address's page offset. */
	static const u64 iovas[] = { 0x40000000, 0x7fff12345000 + FAKE_OFF };
	u8 *buf = kunit_kmalloc(test, FAKE_LEN + 1, GFP_KERNEL);
	const u64 to_page1 = PAGE_SIZE - FAKE_OFF;
	struct vhca_mr mr;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < ARRAY_SIZE(iovas); i++) {
		u64 iova = iovas[i];

		stack_user_mr(test, &mr, iova, lw);
		/* The first byte is at the offset in the first page. */
		KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova, buf, 1, VHCA_COPY_FROM_MR), 0);
		KUNIT_EXPECT_EQ(test, buf[0], pattern(0, FAKE_OFF));
		/* Within the first page. */
		KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova + 16, buf, 32,
						   VHCA_COPY_FROM_MR), 0);
		expect_mr_bytes(test, &mr, 16, buf, 32);
		KUNIT_EXPECT_EQ(test, buf[31], pattern(0, FAKE_OFF + 47));
		/* Across the first page boundary, and exactly at it. */
		KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova + to_page1 - 8, buf, 16,
						   VHCA_COPY_FROM_MR), 0);
		KUNIT_EXPECT_EQ(test, buf[7], pattern(0, PAGE_SIZE - 1));
		KUNIT_EXPECT_EQ(test, buf[8], pattern(1, 0));
		expect_mr_bytes(test, &mr, to_page1 - 8, buf, 16);
		KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova + to_page1, buf, 1,
						   VHCA_COPY_FROM_MR), 0);
		KUNIT_EXPECT_EQ(test, buf[0], pattern(1, 0));
		/* A whole page's worth across two boundaries, then all of it. */
		KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova + to_page1 - 1, buf,
						   PAGE_SIZE + 2, VHCA_COPY_FROM_MR), 0);
		KUNIT_EXPECT_EQ(test, buf[PAGE_SIZE + 1], pattern(2, 0));
		expect_mr_bytes(test, &mr, to_page1 - 1, buf, PAGE_SIZE + 2);
		KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova, buf, FAKE_LEN,
						   VHCA_COPY_FROM_MR), 0);
		expect_mr_bytes(test, &mr, 0, buf, FAKE_LEN);
		/* The last byte. */
		KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova + FAKE_LEN - 1, buf, 1,
						   VHCA_COPY_FROM_MR), 0);
		KUNIT_EXPECT_EQ(test, buf[0], pattern(2, PAGE_SIZE - FAKE_TAIL - 1));

		/* Refused, untouched: past the end, before the start, wraps. */
		memset(buf, 0x5a, FAKE_LEN + 1);
		KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova + FAKE_LEN, buf, 1,
						   VHCA_COPY_FROM_MR), -EINVAL);
		KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova + FAKE_LEN - 1, buf, 2,
						   VHCA_COPY_FROM_MR), -EINVAL);
		KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova, buf, FAKE_LEN + 1,
						   VHCA_COPY_FROM_MR), -EINVAL);
		KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova - 1, buf, 1,
						   VHCA_COPY_FROM_MR), -EINVAL);
		KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova - 1, buf, 2,
						   VHCA_COPY_FROM_MR), -EINVAL);
		KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova + 1, buf, U32_MAX,
						   VHCA_COPY_FROM_MR), -EINVAL);
		KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, U64_MAX, buf, 2,
						   VHCA_COPY_FROM_MR), -EINVAL);
		expect_all(test, buf, 0x5a, FAKE_LEN + 1);
	}
}

/* Writes land on the MR's bytes only, never around them. */
static void vhca_copy_page_array_write(struct kunit *test)
{
	const u64 iova = 0x40000000, to_page2 = 2 * PAGE_SIZE - FAKE_OFF;
	u8 *buf = kunit_kmalloc(test, FAKE_LEN, GFP_KERNEL);
	u8 *first, *last;
	struct vhca_mr mr;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	stack_user_mr(test, &mr, iova, lw);
	first = page_address(mr.pages[0]);
	last = page_address(mr.pages[FAKE_PAGES - 1]);
	for (i = 0; i < FAKE_LEN; i++)
		buf[i] = ~pattern(7, i);

	/* Across the second boundary. */
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova + to_page2 - 3, buf, 10,
					   VHCA_COPY_TO_MR), 0);
	expect_mr_bytes(test, &mr, to_page2 - 3, buf, 10);
	KUNIT_EXPECT_EQ(test, *mr_byte(&mr, to_page2 - 4), pattern(1, PAGE_SIZE - 4));
	KUNIT_EXPECT_EQ(test, *mr_byte(&mr, to_page2 + 7), pattern(2, 7));
	/* The whole MR; the bytes around it keep theirs. */
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova, buf, FAKE_LEN, VHCA_COPY_TO_MR), 0);
	expect_mr_bytes(test, &mr, 0, buf, FAKE_LEN);
	for (i = 0; i < FAKE_OFF; i++)
		KUNIT_EXPECT_EQ(test, first[i], pattern(0, i));
	for (i = PAGE_SIZE - FAKE_TAIL; i < PAGE_SIZE; i++)
		KUNIT_EXPECT_EQ(test, last[i], pattern(FAKE_PAGES - 1, i));

	/* One past the end: refused, nothing written. */
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova + FAKE_LEN - 4, buf + 100, 5,
					   VHCA_COPY_TO_MR), -EINVAL);
	expect_mr_bytes(test, &mr, FAKE_LEN - 4, buf + FAKE_LEN - 4, 4);
	KUNIT_EXPECT_EQ(test, last[PAGE_SIZE - FAKE_TAIL],
			pattern(FAKE_PAGES - 1, PAGE_SIZE - FAKE_TAIL));
	/* Read-only MR (pages pinned without FOLL_WRITE): never written. */
	mr.access = IB_ACCESS_REMOTE_READ;
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, iova, buf + 1, 1, VHCA_COPY_TO_MR), -EACCES);
	KUNIT_EXPECT_EQ(test, *mr_byte(&mr, 0), buf[0]);
}

/* An skb of 100 linear bytes and a 200-byte page fragment; data[] has them. */
static struct sk_buff *test_skb(struct kunit *test, u8 *data)
{
	struct sk_buff *skb = alloc_skb(128, GFP_KERNEL);
	struct page *page;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, skb);
	page = alloc_page(GFP_KERNEL);
	if (!page)
		kfree_skb(skb);
	KUNIT_ASSERT_NOT_NULL(test, page);
	for (i = 0; i < 300; i++)
		data[i] = 0x80 ^ i;
	skb_put_data(skb, data, 100);
	memcpy(page_address(page) + 10, data + 100, 200);
	skb_add_rx_frag(skb, 0, page, 10, 200, PAGE_SIZE);	/* skb's page now */
	KUNIT_EXPECT_EQ(test, skb->len, 300U);
	KUNIT_EXPECT_TRUE(test, skb_is_nonlinear(skb));
	return skb;
}

static void vhca_copy_skb(struct kunit *test)
{
	const u64 iova = 0x40000000, at = PAGE_SIZE - FAKE_OFF - 100;
	u8 data[300], buf[300];
	struct sk_buff *skb;
	struct vhca_mr mr;

	stack_user_mr(test, &mr, iova, lw);
	skb = test_skb(test, data);

	/* skb bytes 50-249 (linear and fragment) to an MR page boundary. */
	KUNIT_EXPECT_EQ(test, vhca_mr_copy_skb(&mr, 0, iova + at, skb, 50, 200,
					       VHCA_COPY_TO_MR), 0);
	expect_mr_bytes(test, &mr, at, data + 50, 200);
	KUNIT_EXPECT_EQ(test, *mr_byte(&mr, at - 1), pattern(0, FAKE_OFF + at - 1));
	KUNIT_EXPECT_EQ(test, *mr_byte(&mr, at + 200), pattern(1, 100));

	/* MR bytes across the boundary into all of the skb. */
	KUNIT_EXPECT_EQ(test, vhca_mr_copy_skb(&mr, 0, iova + at + 150, skb, 0, 300,
					       VHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_EQ(test, skb_copy_bits(skb, 0, buf, 300), 0);
	expect_mr_bytes(test, &mr, at + 150, buf, 300);

	/* The skb too short: refused before the MR is touched. */
	KUNIT_EXPECT_EQ(test, vhca_mr_copy_skb(&mr, 0, iova, skb, 250, 51,
					       VHCA_COPY_TO_MR), -EFAULT);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy_skb(&mr, 0, iova, skb, 301, 0,
					       VHCA_COPY_TO_MR), -EFAULT);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy_skb(&mr, 0, iova, skb, 0, U32_MAX,
					       VHCA_COPY_FROM_MR), -EFAULT);
	KUNIT_EXPECT_EQ(test, *mr_byte(&mr, 0), pattern(0, FAKE_OFF));
	/* The MR's bounds still hold with an skb. */
	KUNIT_EXPECT_EQ(test, vhca_mr_copy_skb(&mr, 0, iova + FAKE_LEN - 1, skb, 0, 2,
					       VHCA_COPY_TO_MR), -EINVAL);
	kfree_skb(skb);
}

/*
 * Three SGEs of a message of 37 bytes: 10 bytes in a kmalloc buffer (DMA
 * MR), 7 bytes across a page boundary of a user MR, 20 bytes in another
 * kmalloc buffer (the same DMA MR).
 */
struct sge_fixture {
	struct vhca_dev *vdev;
	struct vhca_mr *dma, *user;
	u8 *m0, *m2;
	u64 user_at;		/* MR offset of the second SGE */
	struct vhca_sge sge[3];
	u8 payload[37];
};

static struct vhca_mr *keyed_mr(struct kunit *test, struct vhca_dev *vdev,
				int access)
{
	struct vhca_mr *mr = vhca_mr_alloc(vdev, &pd_a, access);

	KUNIT_ASSERT_NOT_NULL(test, mr);
	KUNIT_ASSERT_EQ(test, vhca_mr_alloc_key(vdev, mr), 0);
	return mr;
}

static void sge_setup(struct kunit *test, struct sge_fixture *f)
{
	const u64 iova = 0x40000000;
	int i;

	f->vdev = fake_vdev(test);
	f->dma = keyed_mr(test, f->vdev, lw);
	f->dma->dma = true;
	KUNIT_ASSERT_EQ(test, vhca_mr_publish(f->vdev, f->dma), 0);
	f->user = keyed_mr(test, f->vdev, lw | IB_ACCESS_REMOTE_WRITE);
	fake_user_mr(f->user, fake_pages(test), iova, lw | IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_EQ(test, vhca_mr_publish(f->vdev, f->user), 0);

	f->m0 = kunit_kzalloc(test, 10, GFP_KERNEL);
	f->m2 = kunit_kzalloc(test, 20, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->m0);
	KUNIT_ASSERT_NOT_NULL(test, f->m2);
	f->user_at = PAGE_SIZE - FAKE_OFF - 3;
	f->sge[0] = (struct vhca_sge){ (uintptr_t)f->m0, 10, f->dma->ibmr.lkey };
	f->sge[1] = (struct vhca_sge){ iova + f->user_at, 7, f->user->ibmr.lkey };
	f->sge[2] = (struct vhca_sge){ (uintptr_t)f->m2, 20, f->dma->ibmr.lkey };
	for (i = 0; i < sizeof(f->payload); i++)
		f->payload[i] = 0xc0 + i;
}

/* No reference left behind; then the MRs go as dereg_mr has them go. */
static void sge_teardown(struct kunit *test, struct sge_fixture *f)
{
	KUNIT_EXPECT_EQ(test, refcount_read(&f->dma->ref), 1U);
	KUNIT_EXPECT_EQ(test, refcount_read(&f->user->ref), 1U);
	vhca_mr_unpublish(f->vdev, f->dma);
	vhca_mr_free(f->vdev, f->dma);
	vhca_mr_unpublish(f->vdev, f->user);
	vhca_mr_free(f->vdev, f->user);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->vdev->n_mr), 0);
	xa_destroy(&f->vdev->mr_xa);
}

static int scatter(struct sge_fixture *f, u64 off, u32 len)
{
	return vhca_sge_copy(f->vdev, &pd_a, f->sge, 3, off, f->payload + off,
			     len, VHCA_COPY_TO_MR, lw);
}

static void expect_scattered(struct kunit *test, struct sge_fixture *f)
{
	KUNIT_EXPECT_MEMEQ(test, f->m0, f->payload, 10);
	expect_mr_bytes(test, f->user, f->user_at, f->payload + 10, 7);
	KUNIT_EXPECT_MEMEQ(test, f->m2, f->payload + 17, 20);
}

static void vhca_sge_scatter_gather(struct kunit *test)
{
	struct sge_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	u8 out[37];

	KUNIT_ASSERT_NOT_NULL(test, f);
	sge_setup(test, f);

	/* A message in three packets, each crossing an SGE boundary. */
	KUNIT_EXPECT_EQ(test, scatter(f, 0, 12), 0);
	KUNIT_EXPECT_EQ(test, scatter(f, 12, 10), 0);
	KUNIT_EXPECT_EQ(test, scatter(f, 22, 15), 0);
	expect_scattered(test, f);
	/* The user MR's bytes around its SGE are untouched. */
	KUNIT_EXPECT_EQ(test, *mr_byte(f->user, f->user_at - 1),
			pattern(0, PAGE_SIZE - 4));
	KUNIT_EXPECT_EQ(test, *mr_byte(f->user, f->user_at + 7), pattern(1, 4));

	/* Gathers at offsets, across SGEs, the whole message. */
	memset(out, 0, sizeof(out));
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, f->sge, 3, 8, out, 20,
					    VHCA_COPY_FROM_MR, 0), 0);
	KUNIT_EXPECT_MEMEQ(test, out, f->payload + 8, 20);
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, f->sge, 3, 0, out, 37,
					    VHCA_COPY_FROM_MR, 0), 0);
	KUNIT_EXPECT_MEMEQ(test, out, f->payload, 37);
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, f->sge, 3, 36, out, 1,
					    VHCA_COPY_FROM_MR, 0), 0);
	KUNIT_EXPECT_EQ(test, out[0], f->payload[36]);
	/* Within one SGE, and exactly one whole SGE. */
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, f->sge, 3, 11, out, 5,
					    VHCA_COPY_FROM_MR, 0), 0);
	KUNIT_EXPECT_MEMEQ(test, out, f->payload + 11, 5);
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, f->sge, 3, 10, out, 7,
					    VHCA_COPY_FROM_MR, 0), 0);
	KUNIT_EXPECT_MEMEQ(test, out, f->payload + 10, 7);
	/* Zero bytes at the end of the list, or of an empty list. */
	KUNIT_EXPECT_EQ(test, scatter(f, 37, 0), 0);
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, NULL, 0, 0, out, 0,
					    VHCA_COPY_TO_MR, lw), 0);
	sge_teardown(test, f);
}

static void vhca_sge_length_overflow(struct kunit *test)
{
	struct sge_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	u8 big[64] = {};

	KUNIT_ASSERT_NOT_NULL(test, f);
	sge_setup(test, f);

	/* Checked first: nothing copied, not even the SGEs that fit. */
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, f->sge, 3, 0, big, 38,
					    VHCA_COPY_TO_MR, lw), -EINVAL);
	KUNIT_EXPECT_EQ(test, scatter(f, 30, 8), -EINVAL);
	expect_all(test, f->m0, 0, 10);
	expect_all(test, f->m2, 0, 20);
	KUNIT_EXPECT_EQ(test, scatter(f, 38, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, f->sge, 3, U64_MAX, big, 1,
					    VHCA_COPY_FROM_MR, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, f->sge, 3, 1, big, U32_MAX,
					    VHCA_COPY_FROM_MR, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, NULL, 0, 0, big, 1,
					    VHCA_COPY_FROM_MR, 0), -EINVAL);
	/* A length error wins over a protection error. */
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_b, f->sge, 3, 0, big, 38,
					    VHCA_COPY_TO_MR, lw), -EINVAL);
	sge_teardown(test, f);
}

static void vhca_sge_protection(struct kunit *test)
{
	struct sge_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	const int rw = IB_ACCESS_REMOTE_WRITE;
	struct vhca_sge s[3];
	u8 buf[16] = {};

	KUNIT_ASSERT_NOT_NULL(test, f);
	sge_setup(test, f);

	/* Stale key byte, unknown index, no key. */
	memcpy(s, f->sge, sizeof(s));
	s[0].lkey ^= 1;
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, s, 3, 0, buf, 4,
					    VHCA_COPY_TO_MR, lw), -EACCES);
	s[0].lkey = vhca_mr_key(99, 0);
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, s, 3, 0, buf, 4,
					    VHCA_COPY_FROM_MR, 0), -EACCES);
	s[0].lkey = 0;
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, s, 3, 0, buf, 4,
					    VHCA_COPY_FROM_MR, 0), -EACCES);
	/* Another PD; access not granted (remote write on the DMA MR). */
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_b, f->sge, 3, 0, buf, 4,
					    VHCA_COPY_FROM_MR, 0), -EACCES);
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, f->sge, 3, 0, buf, 4,
					    VHCA_COPY_TO_MR, lw | rw), -EACCES);
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, f->sge, 3, 10, buf, 4,
					    VHCA_COPY_TO_MR, lw | rw), 0);
	expect_all(test, f->m0, 0, 10);

	/* Out of the user MR's bounds: one past its end, one before it. */
	memcpy(s, f->sge, sizeof(s));
	s[1].addr = f->user->iova + FAKE_LEN - 6;
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, s, 3, 10, buf, 6,
					    VHCA_COPY_FROM_MR, 0), 0);
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, s, 3, 10, buf, 7,
					    VHCA_COPY_FROM_MR, 0), -EACCES);
	s[1].addr = f->user->iova - 1;
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, s, 3, 10, buf, 1,
					    VHCA_COPY_FROM_MR, 0), -EACCES);
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, s, 3, 11, buf, 1,
					    VHCA_COPY_FROM_MR, 0), 0);
	/* An SGE wrapping past U64_MAX (DMA MR: no other bound). */
	s[2].addr = U64_MAX - 3;
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, s, 3, 17 + 4, buf, 1,
					    VHCA_COPY_FROM_MR, 0), -EACCES);
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, s, 3, 17, buf, 5,
					    VHCA_COPY_FROM_MR, 0), -EACCES);

	/* Only the SGEs a copy touches are looked up; empty ones never. */
	memcpy(s, f->sge, sizeof(s));
	s[1].lkey = 0;
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, s, 3, 0, buf, 10,
					    VHCA_COPY_FROM_MR, 0), 0);
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, s, 3, 17, buf, 16,
					    VHCA_COPY_FROM_MR, 0), 0);
	s[1].length = 0;
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, s, 3, 8, buf, 4,
					    VHCA_COPY_FROM_MR, 0), 0);
	KUNIT_EXPECT_EQ(test, buf[2], f->m2[0]);

	/* A bad SGE after good ones: those before it are copied. */
	memcpy(s, f->sge, sizeof(s));
	s[1].lkey = 0;
	memset(f->m0, 0, 10);
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, s, 3, 0, f->payload, 12,
					    VHCA_COPY_TO_MR, lw), -EACCES);
	KUNIT_EXPECT_MEMEQ(test, f->m0, f->payload, 10);
	sge_teardown(test, f);
}

/* A read-only MR is gathered from, never scattered to. */
static void vhca_sge_read_only_mr(struct kunit *test)
{
	struct sge_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	struct vhca_mr *ro;
	struct vhca_sge s;
	u8 buf[8];

	KUNIT_ASSERT_NOT_NULL(test, f);
	sge_setup(test, f);
	ro = keyed_mr(test, f->vdev, IB_ACCESS_REMOTE_READ);
	fake_user_mr(ro, fake_pages(test), 0x80000000, IB_ACCESS_REMOTE_READ);
	KUNIT_ASSERT_EQ(test, vhca_mr_publish(f->vdev, ro), 0);
	s = (struct vhca_sge){ ro->iova, 8, ro->ibmr.lkey };

	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, &s, 1, 0, buf, 8,
					    VHCA_COPY_FROM_MR, 0), 0);
	expect_mr_bytes(test, ro, 0, buf, 8);
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, &s, 1, 0, buf, 8,
					    VHCA_COPY_FROM_MR, IB_ACCESS_REMOTE_READ), 0);
	memset(buf, 0, sizeof(buf));
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, &s, 1, 0, buf, 8,
					    VHCA_COPY_TO_MR, lw), -EACCES);
	/* A caller that forgets the access bit is still refused. */
	KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &pd_a, &s, 1, 0, buf, 8,
					    VHCA_COPY_TO_MR, 0), -EACCES);
	KUNIT_EXPECT_EQ(test, *mr_byte(ro, 0), pattern(0, FAKE_OFF));
	KUNIT_EXPECT_EQ(test, refcount_read(&ro->ref), 1U);
	vhca_mr_unpublish(f->vdev, ro);
	vhca_mr_free(f->vdev, ro);
	sge_teardown(test, f);
}

static void vhca_sge_skb(struct kunit *test)
{
	struct sge_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	u8 data[300], out[37];
	struct sk_buff *skb;

	KUNIT_ASSERT_NOT_NULL(test, f);
	sge_setup(test, f);
	skb = test_skb(test, data);

	/* A payload at skb offset 90 (linear, then fragment), in two parts. */
	memcpy(f->payload, data + 90, sizeof(f->payload));
	KUNIT_EXPECT_EQ(test, vhca_sge_copy_skb(f->vdev, &pd_a, f->sge, 3, 0, skb,
						90, 13, VHCA_COPY_TO_MR, lw), 0);
	KUNIT_EXPECT_EQ(test, vhca_sge_copy_skb(f->vdev, &pd_a, f->sge, 3, 13, skb,
						103, 24, VHCA_COPY_TO_MR, lw), 0);
	expect_scattered(test, f);
	/* Gathered into the skb's end. */
	KUNIT_EXPECT_EQ(test, vhca_sge_copy_skb(f->vdev, &pd_a, f->sge, 3, 0, skb,
						263, 37, VHCA_COPY_FROM_MR, 0), 0);
	KUNIT_EXPECT_EQ(test, skb_copy_bits(skb, 263, out, 37), 0);
	KUNIT_EXPECT_MEMEQ(test, out, f->payload, 37);
	/* The skb too short: refused first. */
	KUNIT_EXPECT_EQ(test, vhca_sge_copy_skb(f->vdev, &pd_a, f->sge, 3, 0, skb,
						264, 37, VHCA_COPY_FROM_MR, 0), -EFAULT);
	KUNIT_EXPECT_EQ(test, vhca_sge_copy_skb(f->vdev, &pd_b, f->sge, 3, 0, skb,
						264, 37, VHCA_COPY_TO_MR, lw), -EFAULT);
	kfree_skb(skb);
	sge_teardown(test, f);
}

/* The engine copies under spinlocks with bottom halves off. */
static DEFINE_SPINLOCK(copy_lock);

static void vhca_sge_atomic_context(struct kunit *test)
{
	struct sge_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	u8 out[37];
	int err[3];

	KUNIT_ASSERT_NOT_NULL(test, f);
	sge_setup(test, f);
	spin_lock_bh(&copy_lock);
	err[0] = scatter(f, 0, 37);
	err[1] = vhca_sge_copy(f->vdev, &pd_a, f->sge, 3, 0, out, 37,
			       VHCA_COPY_FROM_MR, 0);
	err[2] = scatter(f, 0, 38);
	spin_unlock_bh(&copy_lock);
	KUNIT_EXPECT_EQ(test, err[0], 0);
	KUNIT_EXPECT_EQ(test, err[1], 0);
	KUNIT_EXPECT_EQ(test, err[2], -EINVAL);
	expect_scattered(test, f);
	KUNIT_EXPECT_MEMEQ(test, out, f->payload, 37);
	sge_teardown(test, f);
}

static struct kunit_case vhca_mr_copy_cases[] = {
	KUNIT_CASE(vhca_copy_dma_mr),
	KUNIT_CASE(vhca_copy_page_array_read),
	KUNIT_CASE(vhca_copy_page_array_write),
	KUNIT_CASE(vhca_copy_skb),
	KUNIT_CASE(vhca_sge_scatter_gather),
	KUNIT_CASE(vhca_sge_length_overflow),
	KUNIT_CASE(vhca_sge_protection),
	KUNIT_CASE(vhca_sge_read_only_mr),
	KUNIT_CASE(vhca_sge_skb),
	KUNIT_CASE(vhca_sge_atomic_context),
	{}
};

static struct kunit_suite vhca_mr_copy_suite = {
	.name = "vhca_mr_copy",
	.test_cases = vhca_mr_copy_cases,
};

/* ---- fast-registration MRs ---- */

struct fast_fixture {
	struct vhca_dev *vdev;
	struct ib_pd pd, other_pd;
	struct vhca_mr *mr;
	u8 *page[2];
	u32 key0;		/* the key alloc_mr gave */
};

static void free_pair_action(void *page)
{
	__free_pages(page, 1);
}

/*
 * A fast MR of up to 4 pages, as ib_alloc_mr() leaves it, and two pages
 * that are not adjacent; the pages go at the test's end.
 */
static void fast_setup(struct kunit *test, struct fast_fixture *f)
{
	struct ib_mr *ibmr;
	struct page *pg;
	int i, err;

	f->vdev = fake_vdev(test);
	f->pd.device = &f->vdev->ibdev;
	f->other_pd.device = &f->vdev->ibdev;
	ibmr = vhca_alloc_mr(&f->pd, IB_MR_TYPE_MEM_REG, 4);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ibmr));
	ibmr->device = &f->vdev->ibdev;
	ibmr->pd = &f->pd;
	f->mr = to_vmr(ibmr);
	f->key0 = ibmr->lkey;
	for (i = 0; i < 2; i++) {
		pg = alloc_pages(GFP_KERNEL | __GFP_ZERO, 1);
		KUNIT_ASSERT_NOT_NULL(test, pg);
		err = kunit_add_action_or_reset(test, free_pair_action, pg);
		KUNIT_ASSERT_EQ(test, err, 0);
		/* The first of two pages: never adjacent to the other's. */
		f->page[i] = page_address(pg);
	}
}

static void fast_teardown(struct kunit *test, struct fast_fixture *f)
{
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&f->mr->ibmr, NULL), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->vdev->n_mr), 0);
	xa_destroy(&f->vdev->mr_xa);
}

/*
 * Map the last 100 bytes of page 0 and the first 300 of page 1 (DMA
 * addresses are kernel virtual ones); returns what map_mr_sg returns.
 */
static int fast_map(struct fast_fixture *f)
{
	struct scatterlist sg[2];

	sg_init_table(sg, 2);
	sg_set_buf(&sg[0], f->page[0] + PAGE_SIZE - 100, 100);
	sg_set_buf(&sg[1], f->page[1], 300);
	sg_dma_address(&sg[0]) = (uintptr_t)(f->page[0] + PAGE_SIZE - 100);
	sg_dma_len(&sg[0]) = 100;
	sg_dma_address(&sg[1]) = (uintptr_t)f->page[1];
	sg_dma_len(&sg[1]) = 300;
	f->mr->ibmr.page_size = PAGE_SIZE;
	return vhca_map_mr_sg(&f->mr->ibmr, sg, 2, NULL);
}

/* A new key byte for the MR's index, as ib_update_fast_reg_key() makes. */
static u32 fast_key(u32 key, u8 byte)
{
	return vhca_mr_key(vhca_mr_key_index(key), byte);
}

static void vhca_fast_alloc_limits(struct kunit *test)
{
	struct vhca_dev *vdev = fake_vdev(test);
	struct ib_pd pd = { .device = &vdev->ibdev };
	struct ib_mr *ibmr;

	KUNIT_EXPECT_EQ(test, PTR_ERR(vhca_alloc_mr(&pd, IB_MR_TYPE_SG_GAPS, 4)),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, PTR_ERR(vhca_alloc_mr(&pd, IB_MR_TYPE_INTEGRITY, 4)),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, PTR_ERR(vhca_alloc_mr(&pd, IB_MR_TYPE_MEM_REG, 0)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(vhca_alloc_mr(&pd, IB_MR_TYPE_MEM_REG,
						    VHCA_MAX_FAST_REG_PAGES + 1)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, atomic_read(&vdev->n_mr), 0);
	ibmr = vhca_alloc_mr(&pd, IB_MR_TYPE_MEM_REG, VHCA_MAX_FAST_REG_PAGES);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ibmr));
	ibmr->device = &vdev->ibdev;
	KUNIT_EXPECT_EQ(test, to_vmr(ibmr)->state, (u8)VHCA_MR_INVALID);
	KUNIT_EXPECT_EQ(test, ibmr->rkey, ibmr->lkey);
	KUNIT_EXPECT_NE(test, vhca_mr_key_index(ibmr->lkey), 0U);
	/* Nothing is accessible before a registration. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check(to_vmr(ibmr), ibmr->lkey, &pd, 0, 0, 0),
			-EACCES);
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(ibmr, NULL), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&vdev->n_mr), 0);
	xa_destroy(&vdev->mr_xa);
}

static void vhca_fast_map(struct kunit *test)
{
	struct fast_fixture f;
	struct scatterlist sg[5];
	int i;

	fast_setup(test, &f);
	KUNIT_EXPECT_EQ(test, fast_map(&f), 2);
	KUNIT_EXPECT_EQ(test, f.mr->fr_nmap, 2U);
	KUNIT_EXPECT_EQ(test, f.mr->fr_map[0], (u64)(uintptr_t)f.page[0]);
	KUNIT_EXPECT_EQ(test, f.mr->fr_map[1], (u64)(uintptr_t)f.page[1]);
	KUNIT_EXPECT_EQ(test, f.mr->fr_map_offset, (u32)(PAGE_SIZE - 100));
	KUNIT_EXPECT_EQ(test, f.mr->ibmr.iova,
			(u64)(uintptr_t)(f.page[0] + PAGE_SIZE - 100));
	KUNIT_EXPECT_EQ(test, f.mr->ibmr.length, 400ULL);
	/* The map is not in effect: still nothing accessible. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check(f.mr, f.key0, &f.pd,
					    f.mr->ibmr.iova, 1, 0), -EACCES);

	/* Five pages for an MR of four: the first four are mapped. */
	sg_init_table(sg, 5);
	for (i = 0; i < 5; i++) {
		sg_set_buf(&sg[i], f.page[i & 1], PAGE_SIZE);
		sg_dma_address(&sg[i]) = (uintptr_t)f.page[i & 1];
		sg_dma_len(&sg[i]) = PAGE_SIZE;
	}
	KUNIT_EXPECT_EQ(test, vhca_map_mr_sg(&f.mr->ibmr, sg, 5, NULL), 4);
	KUNIT_EXPECT_EQ(test, f.mr->fr_nmap, 4U);
	/* A page size that is not a power of two. */
	f.mr->ibmr.page_size = 3 * PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, vhca_map_mr_sg(&f.mr->ibmr, sg, 1, NULL), -EINVAL);
	fast_teardown(test, &f);
}

/*
 * REG_MR puts the map in effect under the consumer's key byte: bytes land
 * on both pages across the gap between them; the old key is refused.
 */
static void vhca_fast_register_and_use(struct kunit *test)
{
	const int acc = lw | IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	u8 out[16], in[16];
	struct fast_fixture f;
	struct scatterlist sg;
	u32 key;
	u64 iova;
	int i;

	fast_setup(test, &f);
	KUNIT_ASSERT_EQ(test, fast_map(&f), 2);
	iova = f.mr->ibmr.iova;
	key = fast_key(f.key0, (f.key0 & 0xff) ^ 0x5a);
	KUNIT_ASSERT_EQ(test, vhca_mr_fast_reg(f.vdev, &f.pd, key, acc), 0);
	KUNIT_EXPECT_EQ(test, f.mr->state, (u8)VHCA_MR_VALID);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(f.mr, key, &f.pd, iova, 400, acc), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(f.mr, key, &f.pd, iova, 401, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(f.mr, key, &f.pd, iova - 1, 1, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(f.mr, key, &f.other_pd, iova, 1, 0),
			-EACCES);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(f.mr, key, &f.pd, iova, 1,
					    IB_ACCESS_REMOTE_ATOMIC), -EACCES);
	/* The key alloc_mr gave is not the key in effect. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check(f.mr, f.key0, &f.pd, iova, 1, 0),
			-EACCES);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(f.mr, f.key0, iova, in, 1,
					   VHCA_COPY_TO_MR), -EACCES);

	/* 16 bytes across the gap: 8 at the end of page 0, 8 on page 1. */
	for (i = 0; i < 16; i++)
		in[i] = 0x80 + i;
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(f.mr, key, iova + 92, in, 16,
					   VHCA_COPY_TO_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, f.page[0] + PAGE_SIZE - 8, in, 8);
	KUNIT_EXPECT_MEMEQ(test, f.page[1], in + 8, 8);
	KUNIT_EXPECT_EQ(test, f.page[1][8], 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(f.mr, key, iova + 92, out, 16,
					   VHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, out, in, 16);
	/* The last byte, and one past it. */
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(f.mr, key, iova + 399, in, 1,
					   VHCA_COPY_TO_MR), 0);
	KUNIT_EXPECT_EQ(test, f.page[1][299], in[0]);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(f.mr, key, iova + 399, in, 2,
					   VHCA_COPY_TO_MR), -EINVAL);

	/* A VALID MR is not registered again; a new map changes nothing. */
	KUNIT_EXPECT_EQ(test, vhca_mr_fast_reg(f.vdev, &f.pd, key, acc), -EBUSY);
	sg_init_one(&sg, f.page[1], PAGE_SIZE);
	sg_dma_address(&sg) = (uintptr_t)f.page[1];
	sg_dma_len(&sg) = PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, vhca_map_mr_sg(&f.mr->ibmr, &sg, 1, NULL), 1);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(f.mr, key, iova + 92, out, 16,
					   VHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, out, in, 16);
	fast_teardown(test, &f);
}

/* The QP a SEND with Invalidate came to: a fast MR does not look at it. */
static const struct ib_qp fast_receiver;

/*
 * LOCAL_INV and remote invalidation end access at once; a registration
 * under a new key byte brings it back, for the new key only.
 */
static void vhca_fast_invalidate(struct kunit *test)
{
	const int acc = lw | IB_ACCESS_REMOTE_WRITE;
	struct fast_fixture f;
	u32 key1, key2;
	u64 iova;
	u8 b = 7;

	fast_setup(test, &f);
	KUNIT_ASSERT_EQ(test, fast_map(&f), 2);
	iova = f.mr->ibmr.iova;
	key1 = fast_key(f.key0, (f.key0 & 0xff) + 1);
	key2 = fast_key(f.key0, (f.key0 & 0xff) + 2);
	/* Nothing to invalidate remotely before a registration. */
	KUNIT_EXPECT_EQ(test, vhca_mr_invalidate(f.vdev, &f.pd, f.key0, &fast_receiver),
			-EINVAL);
	KUNIT_ASSERT_EQ(test, vhca_mr_fast_reg(f.vdev, &f.pd, key1, acc), 0);

	/* Refused: another key byte, another PD. */
	KUNIT_EXPECT_EQ(test, vhca_mr_invalidate(f.vdev, &f.pd, key2, NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_invalidate(f.vdev, &f.other_pd, key1, NULL),
			-EACCES);
	KUNIT_EXPECT_EQ(test, f.mr->state, (u8)VHCA_MR_VALID);

	KUNIT_EXPECT_EQ(test, vhca_mr_invalidate(f.vdev, &f.pd, key1, NULL), 0);
	KUNIT_EXPECT_EQ(test, f.mr->state, (u8)VHCA_MR_INVALID);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(f.mr, key1, &f.pd, iova, 1, 0), -EACCES);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(f.mr, key1, iova, &b, 1,
					   VHCA_COPY_TO_MR), -EACCES);
	KUNIT_EXPECT_EQ(test, f.page[0][PAGE_SIZE - 100], 0);
	/* Locally again with its last key: accepted; remotely: refused. */
	KUNIT_EXPECT_EQ(test, vhca_mr_invalidate(f.vdev, &f.pd, key1, NULL), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_invalidate(f.vdev, &f.pd, key1, &fast_receiver),
			-EINVAL);

	/* Registered again under key2: key1 is refused. */
	KUNIT_ASSERT_EQ(test, vhca_mr_fast_reg(f.vdev, &f.pd, key2, acc), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(f.mr, key1, &f.pd, iova, 1, 0), -EACCES);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(f.mr, key2, &f.pd, iova, 1,
					    IB_ACCESS_REMOTE_WRITE), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(f.mr, key2, iova, &b, 1,
					   VHCA_COPY_TO_MR), 0);
	KUNIT_EXPECT_EQ(test, f.page[0][PAGE_SIZE - 100], 7);
	KUNIT_EXPECT_EQ(test, vhca_mr_invalidate(f.vdev, &f.pd, key1, &fast_receiver),
			-EINVAL);
	/* Remotely, under the key in effect: INVALID. */
	KUNIT_EXPECT_EQ(test, vhca_mr_invalidate(f.vdev, &f.pd, key2, &fast_receiver), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(f.mr, key2, &f.pd, iova, 1, 0), -EACCES);

	/* No remote access: no R_Key to invalidate remotely. */
	KUNIT_ASSERT_EQ(test, vhca_mr_fast_reg(f.vdev, &f.pd, key1, lw), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_invalidate(f.vdev, &f.pd, key1, &fast_receiver),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, f.mr->state, (u8)VHCA_MR_VALID);
	fast_teardown(test, &f);
}

/* What REG_MR and invalidation refuse, the MR left as it was. */
static void vhca_fast_refusals(struct kunit *test)
{
	struct fast_fixture f;
	struct vhca_mr *dma;
	u32 key;

	fast_setup(test, &f);
	KUNIT_ASSERT_EQ(test, fast_map(&f), 2);
	key = fast_key(f.key0, (f.key0 & 0xff) + 1);
	/* Another PD, an index no MR has, access a registration refuses. */
	KUNIT_EXPECT_EQ(test, vhca_mr_fast_reg(f.vdev, &f.other_pd, key, lw),
			-EACCES);
	KUNIT_EXPECT_EQ(test, vhca_mr_fast_reg(f.vdev, &f.pd, key + BIT(8), lw),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_fast_reg(f.vdev, &f.pd, key & 0xff, lw),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_fast_reg(f.vdev, &f.pd, key,
					       IB_ACCESS_REMOTE_WRITE), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_fast_reg(f.vdev, &f.pd, key,
					       lw | IB_ACCESS_MW_BIND), -EINVAL);
	/*
	 * A length the map does not hold: past the end of its last page
	 * (the page list maps whole pages, 100 + PAGE_SIZE bytes here).
	 */
	f.mr->ibmr.length = PAGE_SIZE + 101;
	KUNIT_EXPECT_EQ(test, vhca_mr_fast_reg(f.vdev, &f.pd, key, lw), -EINVAL);
	KUNIT_EXPECT_EQ(test, f.mr->state, (u8)VHCA_MR_INVALID);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(f.mr, key, &f.pd, f.mr->ibmr.iova,
					    1, 0), -EACCES);

	/* Not a fast MR: neither registered nor invalidated. */
	dma = keyed_mr(test, f.vdev, lw);
	dma->dma = true;
	KUNIT_ASSERT_EQ(test, vhca_mr_publish(f.vdev, dma), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_fast_reg(f.vdev, &pd_a, dma->ibmr.lkey, lw),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_invalidate(f.vdev, &pd_a, dma->ibmr.lkey,
						 NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_invalidate(f.vdev, &pd_a, dma->ibmr.lkey,
						 &fast_receiver), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check(dma, dma->ibmr.lkey, &pd_a,
					    0x1000, 1, lw), 0);
	vhca_mr_unpublish(f.vdev, dma);
	vhca_mr_free(f.vdev, dma);
	KUNIT_EXPECT_EQ(test, refcount_read(&f.mr->ref), 1U);
	fast_teardown(test, &f);
}

static struct kunit_case vhca_mr_fast_cases[] = {
	KUNIT_CASE(vhca_fast_alloc_limits),
	KUNIT_CASE(vhca_fast_map),
	KUNIT_CASE(vhca_fast_register_and_use),
	KUNIT_CASE(vhca_fast_invalidate),
	KUNIT_CASE(vhca_fast_refusals),
	{}
};

static struct kunit_suite vhca_mr_fast_suite = {
	.name = "vhca_mr_fast",
	.test_cases = vhca_mr_fast_cases,
};

/* ---- memory windows ---- */

/*
 * A user MR over fake pages (MW_BIND, local write), published under its
 * key, and QPs of its PD and of another; windows are allocated as the core
 * allocates them (the driver's ib_mw zeroed, device, pd and type set).
 */
struct mw_fixture {
	struct vhca_dev *vdev;
	struct ib_pd pd, other_pd;
	struct ib_qp qp, qp2, other_qp;
	struct vhca_mr *mr;
	u64 iova;
};

/* The fixture is large (three ib_qps): not on the stack. */
static struct mw_fixture *mw_setup(struct kunit *test, int access)
{
	struct mw_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->vdev = fake_vdev(test);
	f->pd.device = &f->vdev->ibdev;
	f->other_pd.device = &f->vdev->ibdev;
	f->qp = (struct ib_qp){ .pd = &f->pd, .qp_num = 0x101 };
	f->qp2 = (struct ib_qp){ .pd = &f->pd, .qp_num = 0x102 };
	f->other_qp = (struct ib_qp){ .pd = &f->other_pd, .qp_num = 0x103 };
	f->iova = 0x7f0000001000ULL;
	f->mr = vhca_mr_alloc(f->vdev, &f->pd, access);
	KUNIT_ASSERT_NOT_NULL(test, f->mr);
	KUNIT_ASSERT_EQ(test, vhca_mr_alloc_key(f->vdev, f->mr), 0);
	fake_user_mr(f->mr, fake_pages(test), f->iova, access);
	f->mr->pd = &f->pd;
	f->mr->ibmr.device = &f->vdev->ibdev;
	KUNIT_ASSERT_EQ(test, vhca_mr_publish(f->vdev, f->mr), 0);
	return f;
}

static void mw_teardown(struct kunit *test, struct mw_fixture *f)
{
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&f->mr->ibmr, NULL), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->vdev->n_mr), 0);
	xa_destroy(&f->vdev->mr_xa);
}

static struct ib_mw *mw_alloc(struct kunit *test, struct mw_fixture *f,
			      struct ib_pd *pd, enum ib_mw_type type)
{
	struct vhca_mw *mw = kunit_kzalloc(test, sizeof(*mw), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, mw);
	mw->ibmw.device = &f->vdev->ibdev;
	mw->ibmw.pd = pd;
	mw->ibmw.type = type;
	KUNIT_ASSERT_EQ(test, vhca_alloc_mw(&mw->ibmw, NULL), 0);
	return &mw->ibmw;
}

/* A bind of mw over [off, off + len) of the MR, to its next key byte. */
static struct vhca_mw_bind mw_bind_of(const struct mw_fixture *f,
				      const struct ib_mw *mw, u64 off, u64 len,
				      int access)
{
	return (struct vhca_mw_bind){
		.mw_rkey = to_vmw((struct ib_mw *)mw)->win->key,
		.new_rkey = fast_key(to_vmw((struct ib_mw *)mw)->win->key,
				     to_vmw((struct ib_mw *)mw)->win->key + 1),
		.mr_lkey = f->mr->ibmr.lkey,
		.access = access,
		.addr = f->iova + off,
		.length = len,
	};
}

static const int rw = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;

static void vhca_mw_alloc_states(struct kunit *test)
{
	struct mw_fixture *f;
	struct ib_mw *mw1, *mw2;
	struct vhca_mr *got;

	f = mw_setup(test, lw | IB_ACCESS_MW_BIND);
	mw1 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_1);
	mw2 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_2);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->vdev->n_mr), 3);
	KUNIT_EXPECT_EQ(test, to_vmw(mw1)->win->state, (u8)VHCA_MR_VALID);
	KUNIT_EXPECT_EQ(test, to_vmw(mw2)->win->state, (u8)VHCA_MR_INVALID);
	KUNIT_EXPECT_NE(test, vhca_mr_key_index(mw1->rkey), 0U);
	KUNIT_EXPECT_NE(test, vhca_mr_key_index(mw1->rkey),
			vhca_mr_key_index(f->mr->ibmr.rkey));
	KUNIT_EXPECT_NE(test, vhca_mr_key_index(mw1->rkey),
			vhca_mr_key_index(mw2->rkey));
	/* The rkey finds the window in the MRs' key space. */
	got = vhca_mr_get(f->vdev, mw1->rkey);
	KUNIT_ASSERT_TRUE(test, got == to_vmw(mw1)->win);
	/* Unbound: no access, local or remote; a local one never. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check(got, mw1->rkey, &f->pd, f->iova, 1, 0),
			-EACCES);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(got, mw1->rkey, &f->qp,
						   f->iova, 1,
						   IB_ACCESS_REMOTE_READ),
			-EACCES);
	vhca_mr_put(got);
	/* An lkey naming a window gathers nothing. */
	{
		struct vhca_sge sge = { f->iova, 4, mw1->rkey };
		u8 buf[4];

		KUNIT_EXPECT_EQ(test, vhca_sge_copy(f->vdev, &f->pd, &sge, 1, 0,
						    buf, 4, VHCA_COPY_FROM_MR, 0),
				-EACCES);
	}
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw1), 0);
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw2), 0);
	KUNIT_EXPECT_NULL(test, vhca_mr_get(f->vdev, mw1->rkey));
	mw_teardown(test, f);
}

static void vhca_mw_bind_refusals(struct kunit *test)
{
	struct mw_fixture *f;
	struct ib_mw *mw1, *mw2, *other;
	struct vhca_mr *nobind, *nowrite;
	struct vhca_mw_bind b;

	f = mw_setup(test, lw | IB_ACCESS_MW_BIND);
	mw1 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_1);
	mw2 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_2);
	other = mw_alloc(test, f, &f->other_pd, IB_MW_TYPE_1);
	nobind = keyed_mr(test, f->vdev, lw);
	fake_user_mr(nobind, fake_pages(test), f->iova, lw);
	nobind->pd = &f->pd;
	nobind->ibmr.device = &f->vdev->ibdev;
	KUNIT_ASSERT_EQ(test, vhca_mr_publish(f->vdev, nobind), 0);
	nowrite = keyed_mr(test, f->vdev, IB_ACCESS_MW_BIND);
	fake_user_mr(nowrite, fake_pages(test), f->iova, IB_ACCESS_MW_BIND);
	nowrite->pd = &f->pd;
	nowrite->ibmr.device = &f->vdev->ibdev;
	KUNIT_ASSERT_EQ(test, vhca_mr_publish(f->vdev, nowrite), 0);

	/* No window by that index. */
	b = mw_bind_of(f, mw1, 0, 64, rw);
	b.mw_rkey = vhca_mr_key(VHCA_MR_INDEX_MAX, 1);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	/* An MR's key is no window; a window's is no MR to bind to. */
	b = mw_bind_of(f, mw1, 0, 64, rw);
	b.mw_rkey = f->mr->ibmr.rkey;
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	b = mw_bind_of(f, mw1, 0, 64, rw);
	b.mr_lkey = mw2->rkey;
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	/* The new key keeps the index. */
	b = mw_bind_of(f, mw1, 0, 64, rw);
	b.new_rkey = f->mr->ibmr.rkey;
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	/* Zero-based, unknown bits. */
	b = mw_bind_of(f, mw1, 0, 64, rw | IB_ZERO_BASED);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	b = mw_bind_of(f, mw1, 0, 64, rw | IB_ACCESS_MW_BIND);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	/* C10-72: the window of the QP's PD; the MR too. */
	b = mw_bind_of(f, other, 0, 64, rw);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EACCES);
	b = mw_bind_of(f, other, 0, 64, rw);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->other_qp, &b), -EACCES);
	/* C10-73: MW_BIND; C10-74: remote write needs local write. */
	b = mw_bind_of(f, mw1, 0, 64, rw);
	b.mr_lkey = nobind->ibmr.lkey;
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EACCES);
	b = mw_bind_of(f, mw1, 0, 64, IB_ACCESS_REMOTE_WRITE);
	b.mr_lkey = nowrite->ibmr.lkey;
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EACCES);
	b = mw_bind_of(f, mw1, 0, 64, IB_ACCESS_REMOTE_ATOMIC);
	b.mr_lkey = nowrite->ibmr.lkey;
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EACCES);
	/* C10-75: within the MR: its first byte to its last, no further. */
	b = mw_bind_of(f, mw1, 0, FAKE_LEN + 1, rw);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	b = mw_bind_of(f, mw1, 0, 64, rw);
	b.addr = f->iova - 1;
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	/* Type 2: not to length 0 (o10-37.2.40), not when bound (.30). */
	b = mw_bind_of(f, mw2, 0, 0, rw);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	KUNIT_EXPECT_EQ(test, to_vmw(mw1)->win->state, (u8)VHCA_MR_VALID);
	KUNIT_EXPECT_PTR_EQ(test, to_vmw(mw1)->win->mw_mr, NULL);
	b = mw_bind_of(f, mw2, 0, FAKE_LEN, rw);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	KUNIT_EXPECT_EQ(test, to_vmw(mw2)->win->key, b.new_rkey);
	b = mw_bind_of(f, mw2, 0, 64, rw);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	/*
	 * After a refused bind the provider's key byte is ahead of the
	 * window's: the index names the window, the bind goes through.
	 */
	b = mw_bind_of(f, mw1, 0, 64, rw);
	b.mw_rkey = vhca_mr_key(vhca_mr_key_index(b.mw_rkey),
				(u8)(b.mw_rkey + 7));
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	/* Read-only on an MR without local write is allowed. */
	b = mw_bind_of(f, mw1, 0, 64, IB_ACCESS_REMOTE_READ);
	b.mr_lkey = nowrite->ibmr.lkey;
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&nowrite->mw_bound), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->mr->mw_bound), 1);

	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw1), 0);
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw2), 0);
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(other), 0);
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&nobind->ibmr, NULL), 0);
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&nowrite->ibmr, NULL), 0);
	mw_teardown(test, f);
}

static void vhca_mw_access(struct kunit *test)
{
	u8 data[40], back[40];
	struct mw_fixture *f;
	struct ib_mw *mw1, *mw2;
	struct vhca_mr *w1, *w2;
	struct vhca_mw_bind b;
	u64 off = PAGE_SIZE - FAKE_OFF - 20, at;
	u32 key1, old;
	int i;

	f = mw_setup(test, lw | IB_ACCESS_MW_BIND);
	at = f->iova + off;
	mw1 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_1);
	mw2 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_2);
	w1 = to_vmw(mw1)->win;
	w2 = to_vmw(mw2)->win;
	/* A window of 40 bytes across the MR's first page boundary. */
	b = mw_bind_of(f, mw1, off, 40, rw);
	KUNIT_ASSERT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	key1 = b.new_rkey;
	old = b.mw_rkey;
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w1, key1, &f->qp, at, 40,
						   IB_ACCESS_REMOTE_WRITE), 0);
	/* Any QP of the PD for type 1; not another PD's; not the old key. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w1, key1, &f->qp2, at, 40,
						   IB_ACCESS_REMOTE_READ), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w1, key1, &f->other_qp, at,
						   40, IB_ACCESS_REMOTE_READ),
			-EACCES);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w1, old, &f->qp, at, 40,
						   IB_ACCESS_REMOTE_READ),
			-EACCES);
	/* Bounds: one byte before, one past; access the window lacks. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w1, key1, &f->qp, at - 1, 2,
						   IB_ACCESS_REMOTE_READ),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w1, key1, &f->qp, at + 39, 2,
						   IB_ACCESS_REMOTE_READ),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w1, key1, &f->qp, at, 8,
						   IB_ACCESS_REMOTE_ATOMIC),
			-EACCES);
	/* Bytes through the window land in the MR, across the page. */
	for (i = 0; i < sizeof(data); i++)
		data[i] = 0x30 + i;
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(w1, key1, at, data, 40,
					   VHCA_COPY_TO_MR), 0);
	expect_mr_bytes(test, f->mr, off, data, 40);
	KUNIT_EXPECT_EQ(test, *mr_byte(f->mr, off - 1), pattern(0, off - 1 + FAKE_OFF));
	memset(back, 0, sizeof(back));
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(w1, key1, at, back, 40,
					   VHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, back, data, 40);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(w1, key1, at + 1, data, 40,
					   VHCA_COPY_TO_MR), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(w1, old, at, data, 4,
					   VHCA_COPY_TO_MR), -EACCES);
	/* Type 2B: only its QP. */
	b = mw_bind_of(f, mw2, 0, 16, IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w2, b.new_rkey, &f->qp,
						   f->iova, 16,
						   IB_ACCESS_REMOTE_WRITE), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w2, b.new_rkey, &f->qp2,
						   f->iova, 16,
						   IB_ACCESS_REMOTE_WRITE),
			-EACCES);
	/* Unbinding type 1 (length 0): VALID, its new key grants nothing. */
	b = mw_bind_of(f, mw1, 0, 0, 0);
	KUNIT_ASSERT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	KUNIT_EXPECT_EQ(test, w1->state, (u8)VHCA_MR_VALID);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(w1, b.new_rkey, &f->qp, at,
						   0, 0), -EACCES);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(w1, b.new_rkey, at, data, 4,
					   VHCA_COPY_TO_MR), -EACCES);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->mr->mw_bound), 1);
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw1), 0);
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw2), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->mr->mw_bound), 0);
	mw_teardown(test, f);
}

static void vhca_mw_invalidation(struct kunit *test)
{
	struct mw_fixture *f;
	struct ib_mw *mw1, *mw2;
	struct vhca_mw_bind b;
	u32 key;

	f = mw_setup(test, lw | IB_ACCESS_MW_BIND);
	mw1 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_1);
	mw2 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_2);
	b = mw_bind_of(f, mw1, 0, 64, rw);
	KUNIT_ASSERT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	/* o10-37.2.26: type 1 is not invalidated, locally or remotely. */
	KUNIT_EXPECT_EQ(test, vhca_mw_invalidate(f->vdev, &f->pd, b.new_rkey),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_invalidate(f->vdev, &f->pd, b.new_rkey,
						 &f->qp), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, to_vmw(mw1)->win->mw_mr, f->mr);
	/* A user QP's LOCAL_INV never reaches an MR. */
	KUNIT_EXPECT_EQ(test, vhca_mw_invalidate(f->vdev, &f->pd,
						 f->mr->ibmr.rkey), -EINVAL);
	/* Type 2: not a free one; another PD's, a stale key refused. */
	KUNIT_EXPECT_EQ(test, vhca_mw_invalidate(f->vdev, &f->pd, mw2->rkey),
			-EINVAL);
	b = mw_bind_of(f, mw2, 0, 64, rw);
	KUNIT_ASSERT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	key = b.new_rkey;
	KUNIT_EXPECT_EQ(test, atomic_read(&f->mr->mw_bound), 2);
	KUNIT_EXPECT_EQ(test, vhca_mw_invalidate(f->vdev, &f->other_pd, key),
			-EACCES);
	KUNIT_EXPECT_EQ(test, vhca_mw_invalidate(f->vdev, &f->pd, b.mw_rkey),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mw_invalidate(f->vdev, &f->pd, key), 0);
	KUNIT_EXPECT_EQ(test, to_vmw(mw2)->win->state, (u8)VHCA_MR_INVALID);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->mr->mw_bound), 1);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_remote(to_vmw(mw2)->win, key, &f->qp,
						   f->iova, 1,
						   IB_ACCESS_REMOTE_READ),
			-EACCES);
	KUNIT_EXPECT_EQ(test, vhca_mw_invalidate(f->vdev, &f->pd, key), -EINVAL);
	/*
	 * Bound again (Free), invalidated by a SEND with Invalidate: through
	 * the QP it is bound to only (type 2B), not another of its PD's.
	 */
	b = mw_bind_of(f, mw2, 0, 64, rw);
	KUNIT_ASSERT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_invalidate(f->vdev, &f->pd, b.new_rkey,
						 &f->qp2), -EACCES);
	KUNIT_EXPECT_EQ(test, to_vmw(mw2)->win->state, (u8)VHCA_MR_VALID);
	KUNIT_EXPECT_EQ(test, vhca_mr_invalidate(f->vdev, &f->pd, b.new_rkey,
						 &f->qp), 0);
	KUNIT_EXPECT_EQ(test, to_vmw(mw2)->win->state, (u8)VHCA_MR_INVALID);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->mr->mw_bound), 1);
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw1), 0);
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw2), 0);
	mw_teardown(test, f);
}

/* Deregistration while bound, and the orders process exit may take. */
static void vhca_mw_dealloc_dereg(struct kunit *test)
{
	struct mw_fixture *f;
	struct ib_mw *mw1, *mw2;
	struct vhca_mw_bind b;

	f = mw_setup(test, lw | IB_ACCESS_MW_BIND);
	mw1 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_1);
	mw2 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_2);
	b = mw_bind_of(f, mw1, 0, 64, rw);
	KUNIT_ASSERT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	b = mw_bind_of(f, mw2, 64, 64, rw);
	KUNIT_ASSERT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), 0);
	/* Refused while either is bound; the MR stays findable. */
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&f->mr->ibmr, NULL), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test,
			    vhca_rereg_user_mr(&f->mr->ibmr, IB_MR_REREG_ACCESS,
					       0, 0, 0, lw, &f->pd, NULL),
			    ERR_PTR(-EINVAL));
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw1), 0);
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(&f->mr->ibmr, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw2), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->mr->mw_bound), 0);
	/* Once dereg_mr has begun (mw_bound -1), no bind takes the MR. */
	mw1 = mw_alloc(test, f, &f->pd, IB_MW_TYPE_1);
	atomic_set(&f->mr->mw_bound, -1);
	b = mw_bind_of(f, mw1, 0, 64, rw);
	KUNIT_EXPECT_EQ(test, vhca_mw_bind(f->vdev, &f->qp, &b), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, to_vmw(mw1)->win->mw_mr, NULL);
	atomic_set(&f->mr->mw_bound, 0);
	KUNIT_EXPECT_EQ(test, vhca_dealloc_mw(mw1), 0);
	mw_teardown(test, f);
}

static struct kunit_case vhca_mr_mw_cases[] = {
	KUNIT_CASE(vhca_mw_alloc_states),
	KUNIT_CASE(vhca_mw_bind_refusals),
	KUNIT_CASE(vhca_mw_access),
	KUNIT_CASE(vhca_mw_invalidation),
	KUNIT_CASE(vhca_mw_dealloc_dereg),
	{}
};

static struct kunit_suite vhca_mr_mw_suite = {
	.name = "vhca_mr_mw",
	.test_cases = vhca_mr_mw_cases,
};

kunit_test_suites(&vhca_mr_suite, &vhca_mr_copy_suite, &vhca_mr_fast_suite,
		  &vhca_mr_mw_suite);
