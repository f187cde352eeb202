// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite of the DMA-coherent buffer helpers: every size class and its
 * boundaries, alignment, zeroing, the user (page) path, zero and oversized
 * requests, refused frees, and leak accounting.
 */
#include <kunit/test.h>
#include <linux/dma-mapping.h>
#include <linux/platform_device.h>

#include "../vhca_coherent.c"

struct vhca_coherent_test {
	struct platform_device *pdev;
	struct vhca_coherent vc;
	bool fini_done;
};

static int vhca_coherent_test_init(struct kunit *test)
{
	const struct platform_device_info pinfo = {
		.name = "vhca-kunit",
		.id = PLATFORM_DEVID_AUTO,
		.dma_mask = DMA_BIT_MASK(64),
	};
	struct vhca_coherent_test *t;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->pdev = platform_device_register_full(&pinfo);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t->pdev));
	KUNIT_ASSERT_EQ(test, vhca_coherent_init(&t->vc, &t->pdev->dev), 0);
	test->priv = t;
	return 0;
}

static void vhca_coherent_test_exit(struct kunit *test)
{
	struct vhca_coherent_test *t = test->priv;

	if (!t->fini_done)
		KUNIT_EXPECT_EQ(test, vhca_coherent_fini(&t->vc), 0UL);
	platform_device_unregister(t->pdev);
}

static struct vhca_coherent_stats stats_of(struct kunit *test)
{
	struct vhca_coherent_test *t = test->priv;
	struct vhca_coherent_stats s;

	vhca_coherent_get_stats(&t->vc, &s);
	return s;
}

static bool all_zero(const u8 *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

/* Sizes map to the smallest bucket that holds them, and none past 2048. */
static void vhca_coherent_bucket_choice(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vhca_bucket(1), 0);
	KUNIT_EXPECT_EQ(test, vhca_bucket(64), 0);
	KUNIT_EXPECT_EQ(test, vhca_bucket(65), 1);
	KUNIT_EXPECT_EQ(test, vhca_bucket(128), 1);
	KUNIT_EXPECT_EQ(test, vhca_bucket(129), 2);
	KUNIT_EXPECT_EQ(test, vhca_bucket(256), 2);
	KUNIT_EXPECT_EQ(test, vhca_bucket(257), 3);
	KUNIT_EXPECT_EQ(test, vhca_bucket(512), 3);
	KUNIT_EXPECT_EQ(test, vhca_bucket(513), 4);
	KUNIT_EXPECT_EQ(test, vhca_bucket(1024), 4);
	KUNIT_EXPECT_EQ(test, vhca_bucket(1025), 5);
	KUNIT_EXPECT_EQ(test, vhca_bucket(2048), 5);
	KUNIT_EXPECT_EQ(test, vhca_bucket(2049), -1);
	KUNIT_EXPECT_EQ(test, vhca_bucket(PAGE_SIZE), -1);
	KUNIT_EXPECT_EQ(test, VHCA_POOL_MAX, 2048UL);
}

/*
 * Each bucket, at its lower and upper edge: served from the pool, naturally
 * aligned (CPU and DMA address), zeroed, writable over the whole bucket.
 */
static void vhca_coherent_pool_classes(struct kunit *test)
{
	struct vhca_coherent_test *t = test->priv;
	unsigned long pool_before = stats_of(test).pool_allocs;
	int i, n = 0;

	for (i = 0; i < VHCA_POOL_BUCKETS; i++) {
		size_t bsize = 1UL << (VHCA_POOL_MIN_SHIFT + i);
		size_t sizes[] = { i ? bsize / 2 + 1 : 1, bsize };
		int j;

		for (j = 0; j < ARRAY_SIZE(sizes); j++) {
			dma_addr_t dma;
			u8 *p;

			p = vhca_alloc_coherent(&t->vc, sizes[j], GFP_KERNEL,
						&dma);
			KUNIT_ASSERT_NOT_NULL(test, p);
			n++;
			KUNIT_EXPECT_TRUE(test, IS_ALIGNED((unsigned long)p, bsize));
			KUNIT_EXPECT_TRUE(test, IS_ALIGNED(dma, bsize));
			KUNIT_EXPECT_TRUE(test, all_zero(p, sizes[j]));
			memset(p, 0xa5, bsize);
			KUNIT_EXPECT_EQ(test, stats_of(test).pool_allocs,
					pool_before + n);
			KUNIT_EXPECT_EQ(test, stats_of(test).outstanding, 1UL);
			KUNIT_EXPECT_EQ(test, stats_of(test).outstanding_bytes,
					sizes[j]);
			vhca_free_coherent(&t->vc, sizes[j], p, dma);
			KUNIT_EXPECT_EQ(test, stats_of(test).outstanding, 0UL);
		}
	}
	KUNIT_EXPECT_EQ(test, stats_of(test).coherent_allocs, 0UL);
	KUNIT_EXPECT_EQ(test, stats_of(test).bad_frees, 0UL);
}

/* A freed pool block comes back zeroed, whatever was written to it. */
static void vhca_coherent_pool_reuse_zeroed(struct kunit *test)
{
	struct vhca_coherent_test *t = test->priv;
	dma_addr_t dma;
	u8 *p;
	int i;

	for (i = 0; i < 64; i++) {
		p = vhca_alloc_coherent(&t->vc, 200, GFP_KERNEL, &dma);
		KUNIT_ASSERT_NOT_NULL(test, p);
		KUNIT_EXPECT_TRUE(test, all_zero(p, 200));
		memset(p, 0xff, 200);
		vhca_free_coherent(&t->vc, 200, p, dma);
	}
	KUNIT_EXPECT_EQ(test, stats_of(test).outstanding, 0UL);
}

/* Past the largest bucket: dma_alloc_coherent, page-aligned, page-rounded. */
static void vhca_coherent_large_classes(struct kunit *test)
{
	struct vhca_coherent_test *t = test->priv;
	size_t sizes[] = { VHCA_POOL_MAX + 1, PAGE_SIZE - 1, PAGE_SIZE,
			   PAGE_SIZE + 1, 3 * PAGE_SIZE, SZ_1M };
	int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		dma_addr_t dma;
		u8 *p;

		p = vhca_alloc_coherent(&t->vc, sizes[i], GFP_KERNEL, &dma);
		KUNIT_ASSERT_NOT_NULL(test, p);
		KUNIT_EXPECT_TRUE(test, PAGE_ALIGNED(p));
		KUNIT_EXPECT_TRUE(test, PAGE_ALIGNED(dma));
		KUNIT_EXPECT_TRUE(test, all_zero(p, PAGE_ALIGN(sizes[i])));
		/* The page-rounded tail belongs to the buffer too. */
		memset(p, 0x5a, PAGE_ALIGN(sizes[i]));
		KUNIT_EXPECT_EQ(test, stats_of(test).coherent_allocs,
				(unsigned long)i + 1);
		vhca_free_coherent(&t->vc, sizes[i], p, dma);
	}
	KUNIT_EXPECT_EQ(test, stats_of(test).pool_allocs, 0UL);
	KUNIT_EXPECT_EQ(test, stats_of(test).outstanding, 0UL);
	KUNIT_EXPECT_EQ(test, stats_of(test).bad_frees, 0UL);
}

/* Memory for userspace never comes from a pool and never shares a page. */
static void vhca_coherent_user_path(struct kunit *test)
{
	struct vhca_coherent_test *t = test->priv;
	dma_addr_t dma1, dma2;
	u8 *p1, *p2;

	p1 = vhca_alloc_coherent_user(&t->vc, 64, GFP_KERNEL, &dma1, NULL);
	p2 = vhca_alloc_coherent_user(&t->vc, 64, GFP_KERNEL, &dma2, NULL);
	KUNIT_ASSERT_NOT_NULL(test, p1);
	KUNIT_ASSERT_NOT_NULL(test, p2);
	KUNIT_EXPECT_TRUE(test, PAGE_ALIGNED(p1));
	KUNIT_EXPECT_TRUE(test, PAGE_ALIGNED(p2));
	KUNIT_EXPECT_NE(test, (unsigned long)p1 >> PAGE_SHIFT,
			(unsigned long)p2 >> PAGE_SHIFT);
	KUNIT_EXPECT_TRUE(test, all_zero(p1, PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, stats_of(test).coherent_allocs, 2UL);
	KUNIT_EXPECT_EQ(test, stats_of(test).pool_allocs, 0UL);
	vhca_free_coherent(&t->vc, 64, p1, dma1);
	vhca_free_coherent(&t->vc, 64, p2, dma2);
	KUNIT_EXPECT_EQ(test, stats_of(test).outstanding, 0UL);
	KUNIT_EXPECT_EQ(test, stats_of(test).bad_frees, 0UL);
}

/* Zero and impossible sizes get NULL and leave no trace. */
static void vhca_coherent_bad_sizes(struct kunit *test)
{
	struct vhca_coherent_test *t = test->priv;
	dma_addr_t dma = 0x1234;

	KUNIT_EXPECT_NULL(test, vhca_alloc_coherent(&t->vc, 0, GFP_KERNEL, &dma));
	KUNIT_EXPECT_NULL(test, vhca_alloc_coherent_user(&t->vc, 0, GFP_KERNEL,
							 &dma, NULL));
	KUNIT_EXPECT_NULL(test, vhca_alloc_coherent(&t->vc,
						    VHCA_COHERENT_MAX + 1,
						    GFP_KERNEL, &dma));
	KUNIT_EXPECT_NULL(test, vhca_alloc_coherent(&t->vc, SIZE_MAX,
						    GFP_KERNEL, &dma));
	KUNIT_EXPECT_EQ(test, dma, (dma_addr_t)0x1234);
	KUNIT_EXPECT_EQ(test, stats_of(test).pool_allocs, 0UL);
	KUNIT_EXPECT_EQ(test, stats_of(test).coherent_allocs, 0UL);
	KUNIT_EXPECT_EQ(test, stats_of(test).outstanding, 0UL);
}

/* Small pool allocations work in atomic context, under a spinlock. */
static void vhca_coherent_atomic(struct kunit *test)
{
	struct vhca_coherent_test *t = test->priv;
	dma_addr_t dma[8];
	spinlock_t lock;	/* only to be in atomic context */
	void *p[8];
	int i;

	spin_lock_init(&lock);
	spin_lock(&lock);
	for (i = 0; i < ARRAY_SIZE(p); i++)
		p[i] = vhca_alloc_coherent(&t->vc, 64 << (i % 6), GFP_ATOMIC,
					   &dma[i]);
	for (i = 0; i < ARRAY_SIZE(p); i++)
		vhca_free_coherent(&t->vc, 64 << (i % 6), p[i], dma[i]);
	spin_unlock(&lock);
	for (i = 0; i < ARRAY_SIZE(p); i++)
		KUNIT_EXPECT_NOT_NULL(test, p[i]);
	KUNIT_EXPECT_EQ(test, stats_of(test).outstanding, 0UL);
	KUNIT_EXPECT_EQ(test, stats_of(test).bad_frees, 0UL);
}

static void vhca_coherent_free_null(struct kunit *test)
{
	struct vhca_coherent_test *t = test->priv;

	vhca_free_coherent(&t->vc, 64, NULL, 0);
	vhca_free_coherent(&t->vc, 0, NULL, 0);
	KUNIT_EXPECT_EQ(test, stats_of(test).bad_frees, 0UL);
}

/*
 * A free with another size, another handle or an address that is not a live
 * buffer is refused and counted; the buffer stays usable and is freed later
 * with the right arguments.
 */
static void vhca_coherent_mismatched_free(struct kunit *test)
{
	struct vhca_coherent_test *t = test->priv;
	dma_addr_t dma_small, dma_big;
	u8 *small, *big;
	int local;

	small = vhca_alloc_coherent(&t->vc, 100, GFP_KERNEL, &dma_small);
	big = vhca_alloc_coherent(&t->vc, 3 * PAGE_SIZE, GFP_KERNEL, &dma_big);
	KUNIT_ASSERT_NOT_NULL(test, small);
	KUNIT_ASSERT_NOT_NULL(test, big);

	vhca_free_coherent(&t->vc, 200, small, dma_small);	/* size */
	KUNIT_EXPECT_EQ(test, stats_of(test).bad_frees, 1UL);
	vhca_free_coherent(&t->vc, 100, small, dma_small + 64);	/* handle */
	KUNIT_EXPECT_EQ(test, stats_of(test).bad_frees, 2UL);
	vhca_free_coherent(&t->vc, 64, big, dma_big);	/* other path's size */
	KUNIT_EXPECT_EQ(test, stats_of(test).bad_frees, 3UL);
	vhca_free_coherent(&t->vc, 100, small + 1, dma_small + 1); /* inside */
	KUNIT_EXPECT_EQ(test, stats_of(test).bad_frees, 4UL);
	vhca_free_coherent(&t->vc, sizeof(local), &local, 0);	/* foreign */
	KUNIT_EXPECT_EQ(test, stats_of(test).bad_frees, 5UL);
	KUNIT_EXPECT_EQ(test, stats_of(test).outstanding, 2UL);

	/* Still live and usable. */
	memset(small, 1, 100);
	memset(big, 2, 3 * PAGE_SIZE);
	vhca_free_coherent(&t->vc, 100, small, dma_small);
	vhca_free_coherent(&t->vc, 3 * PAGE_SIZE, big, dma_big);
	KUNIT_EXPECT_EQ(test, stats_of(test).outstanding, 0UL);

	/* A second free of the same buffer is refused too. */
	vhca_free_coherent(&t->vc, 100, small, dma_small);
	KUNIT_EXPECT_EQ(test, stats_of(test).bad_frees, 6UL);
	KUNIT_EXPECT_EQ(test, stats_of(test).outstanding, 0UL);
}

/* Outstanding counts and bytes follow every alloc and free. */
static void vhca_coherent_accounting(struct kunit *test)
{
	struct vhca_coherent_test *t = test->priv;
	size_t sizes[] = { 1, 64, 65, 2048, 2049, PAGE_SIZE, 5 * PAGE_SIZE + 7 };
	dma_addr_t dma[ARRAY_SIZE(sizes)];
	void *p[ARRAY_SIZE(sizes)];
	size_t total = 0;
	int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		p[i] = vhca_alloc_coherent(&t->vc, sizes[i], GFP_KERNEL, &dma[i]);
		KUNIT_ASSERT_NOT_NULL(test, p[i]);
		total += sizes[i];
		KUNIT_EXPECT_EQ(test, stats_of(test).outstanding,
				(unsigned long)i + 1);
		KUNIT_EXPECT_EQ(test, stats_of(test).outstanding_bytes, total);
	}
	KUNIT_EXPECT_EQ(test, stats_of(test).pool_allocs, 4UL);
	KUNIT_EXPECT_EQ(test, stats_of(test).coherent_allocs, 3UL);
	for (i = ARRAY_SIZE(sizes) - 1; i >= 0; i--) {
		vhca_free_coherent(&t->vc, sizes[i], p[i], dma[i]);
		total -= sizes[i];
		KUNIT_EXPECT_EQ(test, stats_of(test).outstanding, (unsigned long)i);
		KUNIT_EXPECT_EQ(test, stats_of(test).outstanding_bytes, total);
	}
}

/* Buffers left at teardown are counted by fini, which reclaims them. */
static void vhca_coherent_leak_at_fini(struct kunit *test)
{
	struct vhca_coherent_test *t = test->priv;
	dma_addr_t dma;
	struct vhca_coherent_stats s;

	KUNIT_ASSERT_NOT_NULL(test, vhca_alloc_coherent(&t->vc, 64, GFP_KERNEL,
							&dma));
	KUNIT_ASSERT_NOT_NULL(test, vhca_alloc_coherent(&t->vc, 8192,
							GFP_KERNEL, &dma));
	KUNIT_ASSERT_NOT_NULL(test, vhca_alloc_coherent_user(&t->vc, 10,
							     GFP_KERNEL, &dma,
							     NULL));
	t->fini_done = true;
	KUNIT_EXPECT_EQ(test, vhca_coherent_fini(&t->vc), 3UL);
	vhca_coherent_get_stats(&t->vc, &s);
	KUNIT_EXPECT_EQ(test, s.outstanding, 0UL);
	KUNIT_EXPECT_EQ(test, s.outstanding_bytes, (size_t)0);
	KUNIT_EXPECT_EQ(test, s.user_bufs, 0UL);
	KUNIT_EXPECT_EQ(test, s.user_bytes, (size_t)0);
	KUNIT_EXPECT_TRUE(test, hash_empty(t->vc.live));
}

/*
 * User buffers count, page-rounded, against the device's quota and their
 * own until freed; one past either is refused and counted as a refusal of
 * that quota, and leaves both as they were.  Kernel buffers are not
 * charged.
 */
static void vhca_coherent_quota(struct kunit *test)
{
	struct vhca_coherent_test *t = test->priv;
	struct vhca_coherent_quota q;
	dma_addr_t dma[3], kdma;
	void *p[3], *k;

	vhca_coherent_quota_init(&q, 2, 3 * PAGE_SIZE);
	p[0] = vhca_alloc_coherent_user(&t->vc, 10, GFP_KERNEL, &dma[0], &q);
	p[1] = vhca_alloc_coherent_user(&t->vc, PAGE_SIZE + 1, GFP_KERNEL,
					&dma[1], &q);
	KUNIT_ASSERT_NOT_NULL(test, p[0]);
	KUNIT_ASSERT_NOT_NULL(test, p[1]);
	KUNIT_EXPECT_EQ(test, q.bufs, 2UL);
	KUNIT_EXPECT_EQ(test, q.bytes, (size_t)3 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, stats_of(test).user_bufs, 2UL);
	KUNIT_EXPECT_EQ(test, stats_of(test).user_bytes, (size_t)3 * PAGE_SIZE);

	/* A third buffer: past the count, then (one freed) past the bytes. */
	KUNIT_EXPECT_NULL(test, vhca_alloc_coherent_user(&t->vc, 1, GFP_KERNEL,
							 &dma[2], &q));
	vhca_free_coherent(&t->vc, 10, p[0], dma[0]);
	KUNIT_EXPECT_EQ(test, q.bufs, 1UL);
	KUNIT_EXPECT_EQ(test, q.bytes, (size_t)2 * PAGE_SIZE);
	KUNIT_EXPECT_NULL(test, vhca_alloc_coherent_user(&t->vc,
							 PAGE_SIZE + 1,
							 GFP_KERNEL, &dma[2],
							 &q));
	KUNIT_EXPECT_EQ(test, stats_of(test).ctx_quota_refusals, 2UL);
	KUNIT_EXPECT_EQ(test, stats_of(test).dev_quota_refusals, 0UL);
	KUNIT_EXPECT_EQ(test, q.bufs, 1UL);
	KUNIT_EXPECT_EQ(test, q.bytes, (size_t)2 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, stats_of(test).outstanding, 1UL);

	/* Kernel buffers: never charged, never refused by a quota. */
	k = vhca_alloc_coherent(&t->vc, 4 * PAGE_SIZE, GFP_KERNEL, &kdma);
	KUNIT_ASSERT_NOT_NULL(test, k);
	KUNIT_EXPECT_EQ(test, stats_of(test).user_bytes, (size_t)2 * PAGE_SIZE);

	/* The device's quota binds every context together. */
	vhca_coherent_quota_init(&t->vc.user, ULONG_MAX, 3 * PAGE_SIZE);
	t->vc.user.bufs = 1;
	t->vc.user.bytes = 2 * PAGE_SIZE;
	KUNIT_EXPECT_NULL(test, vhca_alloc_coherent_user(&t->vc, PAGE_SIZE + 1,
							 GFP_KERNEL, &dma[2],
							 NULL));
	p[2] = vhca_alloc_coherent_user(&t->vc, PAGE_SIZE, GFP_KERNEL, &dma[2],
					NULL);
	KUNIT_ASSERT_NOT_NULL(test, p[2]);
	KUNIT_EXPECT_EQ(test, stats_of(test).ctx_quota_refusals, 2UL);
	KUNIT_EXPECT_EQ(test, stats_of(test).dev_quota_refusals, 1UL);
	KUNIT_EXPECT_EQ(test, q.bufs, 1UL);

	vhca_free_coherent(&t->vc, PAGE_SIZE, p[2], dma[2]);
	vhca_free_coherent(&t->vc, PAGE_SIZE + 1, p[1], dma[1]);
	vhca_free_coherent(&t->vc, 4 * PAGE_SIZE, k, kdma);
	KUNIT_EXPECT_EQ(test, q.bufs, 0UL);
	KUNIT_EXPECT_EQ(test, q.bytes, (size_t)0);
	KUNIT_EXPECT_EQ(test, stats_of(test).user_bufs, 0UL);
	KUNIT_EXPECT_EQ(test, stats_of(test).user_bytes, (size_t)0);
	KUNIT_EXPECT_EQ(test, stats_of(test).bad_frees, 0UL);
}

/*
 * vhca_mmap() maps a user buffer at PHYS_PFN(virt_to_phys()): on the
 * architectures the module builds for (Kbuild), coherent memory is in the
 * linear map, so that PFN is the buffer's own first page, and the pages
 * after it are the rest of the buffer.
 */
static void vhca_coherent_user_pfn(struct kunit *test)
{
	struct vhca_coherent_test *t = test->priv;
	size_t size = 3 * PAGE_SIZE;
	unsigned long pfn, i;
	dma_addr_t dma;
	u8 *p;

	p = vhca_alloc_coherent_user(&t->vc, size, GFP_KERNEL, &dma, NULL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_EXPECT_TRUE(test, virt_addr_valid(p));
	KUNIT_EXPECT_TRUE(test, virt_addr_valid(p + size - 1));
	pfn = PHYS_PFN(virt_to_phys(p));
	for (i = 0; i < size / PAGE_SIZE; i++) {
		KUNIT_EXPECT_PTR_EQ(test, page_address(pfn_to_page(pfn + i)),
				    (void *)(p + i * PAGE_SIZE));
		p[i * PAGE_SIZE] = i + 1;
		KUNIT_EXPECT_EQ(test,
				*(u8 *)page_address(pfn_to_page(pfn + i)),
				(u8)(i + 1));
	}
	vhca_free_coherent(&t->vc, size, p, dma);
}

/* Many mixed cycles end with nothing outstanding. */
static void vhca_coherent_cycles(struct kunit *test)
{
	struct vhca_coherent_test *t = test->priv;
	int i;

	for (i = 0; i < 2000; i++) {
		size_t size = 1 + (i * 97) % (3 * PAGE_SIZE);
		dma_addr_t dma;
		void *p;

		p = vhca_alloc_coherent(&t->vc, size, GFP_KERNEL, &dma);
		KUNIT_ASSERT_NOT_NULL(test, p);
		vhca_free_coherent(&t->vc, size, p, dma);
	}
	KUNIT_EXPECT_EQ(test, stats_of(test).outstanding, 0UL);
	KUNIT_EXPECT_EQ(test, stats_of(test).pool_allocs +
			stats_of(test).coherent_allocs, 2000UL);
	KUNIT_EXPECT_EQ(test, stats_of(test).bad_frees, 0UL);
}

static struct kunit_case vhca_coherent_cases[] = {
	KUNIT_CASE(vhca_coherent_bucket_choice),
	KUNIT_CASE(vhca_coherent_pool_classes),
	KUNIT_CASE(vhca_coherent_pool_reuse_zeroed),
	KUNIT_CASE(vhca_coherent_large_classes),
	KUNIT_CASE(vhca_coherent_user_path),
	KUNIT_CASE(vhca_coherent_bad_sizes),
	KUNIT_CASE(vhca_coherent_atomic),
	KUNIT_CASE(vhca_coherent_free_null),
	KUNIT_CASE(vhca_coherent_mismatched_free),
	KUNIT_CASE(vhca_coherent_accounting),
	KUNIT_CASE(vhca_coherent_leak_at_fini),
	KUNIT_CASE(vhca_coherent_quota),
	KUNIT_CASE(vhca_coherent_user_pfn),
	KUNIT_CASE(vhca_coherent_cycles),
	{}
};

static struct kunit_suite vhca_coherent_suite = {
	.name = "vhca_coherent",
	.init = vhca_coherent_test_init,
	.exit = vhca_coherent_test_exit,
	.test_cases = vhca_coherent_cases,
};

kunit_test_suite(vhca_coherent_suite);

MODULE_DESCRIPTION("KUnit suites of vhca");
MODULE_LICENSE("Dual BSD/GPL");
