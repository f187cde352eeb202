// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite vhca_mr: MR bounds and access checks (edges, u64
 * wrap-around, zero length, every access bit, PD mismatch, DMA MRs),
 * registration access-flag validation over every flag combination, key
 * composition and key-byte rotation, MR lookup and the wait of
 * deregistration for in-flight users, AH attribute checks and the
 * PD-confined AH lookup.  The device is a zeroed struct vhca_dev with only
 * its xarrays initialized: nothing here registers an ib_device.
 * Included by vhca_mr_kunit.c, with the sources it includes.
 */

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
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(rw | IB_ACCESS_MW_BIND), -EINVAL);
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
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(lw | IB_ZERO_BASED), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(IB_ZERO_BASED), 0);
	/* Not implemented by vhca. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(lw | IB_ACCESS_MW_BIND), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(IB_ACCESS_ON_DEMAND), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(IB_ACCESS_FLUSH_PERSISTENT), -EOPNOTSUPP);
	/* Global visibility only: no memory vhca places into is persistent. */
	KUNIT_EXPECT_EQ(test, vhca_mr_check_reg_access(IB_ACCESS_FLUSH_GLOBAL), 0);
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
