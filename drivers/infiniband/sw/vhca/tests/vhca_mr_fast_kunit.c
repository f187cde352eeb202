// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite vhca_mr_fast: fast-registration MRs: alloc_mr's limits,
 * map_mr_sg over two pages that are not adjacent, the state machine
 * (INVALID, REG_MR, VALID, LOCAL_INV and remote invalidation, a new
 * registration under a new key byte) with the access every state allows,
 * and REG_MR's and invalidation's refusals.
 * Included by vhca_mr_kunit.c, with the sources it includes.
 */

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
	/* The consumer chose the iova: a fast MR is never zero-based. */
	KUNIT_EXPECT_EQ(test, vhca_mr_fast_reg(f.vdev, &f.pd, key,
					       lw | IB_ZERO_BASED), -EINVAL);
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
