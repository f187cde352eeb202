// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite vhca_mr_copy: the data movement of the engine.  User MRs are
 * built over pages the test allocates (the page array of a registration,
 * without user memory); DMA and DM MRs over kernel buffers.  Translation at page
 * offsets and boundaries, the last byte and one past it, copies to and
 * from linear and paged skbs, SGE-list scatter and gather at message
 * offsets across SGE boundaries, the length and protection errors, MR
 * references, atomic context.
 * Included by vhca_mr_kunit.c, with the sources it includes.
 */

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

/*
 * A DM MR: zero-based, over DM_MR_LEN bytes at DM_MR_OFF of a device
 * memory buffer (DM_BUF bytes, as the coherent helpers hand them out),
 * 4 bytes off an 8-byte boundary so that its atomics find no aligned word.
 */
#define DM_BUF		(2 * PAGE_SIZE)
#define DM_MR_OFF	(PAGE_SIZE - 0x104)
#define DM_MR_LEN	0x300

static void dm_mr(struct vhca_mr *mr, u8 *dm, u64 off, u64 len, int access)
{
	memset(mr, 0, sizeof(*mr));
	mr->pd = &pd_a;
	mr->access = access;
	mr->kaddr = dm + off;
	mr->length = len;
}

/* Placement at byte iova of the MR, across the page boundary, and bounds. */
static void vhca_copy_dm_mr(struct kunit *test)
{
	u8 *dm = kunit_kzalloc(test, DM_BUF, GFP_KERNEL);
	u8 *buf = kunit_kzalloc(test, DM_MR_LEN + 8, GFP_KERNEL);
	struct vhca_mr mr;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, dm);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < DM_MR_LEN + 8; i++)
		buf[i] = i * 7 + 1;
	dm_mr(&mr, dm, DM_MR_OFF, DM_MR_LEN, lw);

	/* The whole MR: from iova 0, nothing before or after it. */
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, 0, buf, DM_MR_LEN, VHCA_COPY_TO_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, dm + DM_MR_OFF, buf, DM_MR_LEN);
	expect_all(test, dm, 0, DM_MR_OFF);
	expect_all(test, dm + DM_MR_OFF + DM_MR_LEN, 0, DM_BUF - DM_MR_OFF - DM_MR_LEN);

	/* A middle part, read back at its iova. */
	memset(buf, 0, DM_MR_LEN);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, 0x101, buf, 0x20, VHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, buf, dm + DM_MR_OFF + 0x101, 0x20);
	expect_all(test, buf + 0x20, 0, DM_MR_LEN - 0x20);

	/* Last byte; one past the end; a range wrapping the u64 space. */
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, DM_MR_LEN - 1, buf, 1, VHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_EQ(test, buf[0], dm[DM_MR_OFF + DM_MR_LEN - 1]);
	memset(buf, 0xee, DM_MR_LEN + 8);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, DM_MR_LEN - 1, buf, 2, VHCA_COPY_TO_MR),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, DM_MR_LEN, buf, 1, VHCA_COPY_TO_MR), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, 0, buf, DM_MR_LEN + 1, VHCA_COPY_TO_MR),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, U64_MAX, buf, 2, VHCA_COPY_TO_MR), -EINVAL);
	/* Its addresses are offsets: the buffer's address is out of bounds. */
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, (uintptr_t)(dm + DM_MR_OFF), buf, 1,
					   VHCA_COPY_TO_MR), -EINVAL);
	expect_all(test, dm + DM_MR_OFF + DM_MR_LEN, 0, DM_BUF - DM_MR_OFF - DM_MR_LEN);
	KUNIT_EXPECT_NE(test, dm[DM_MR_OFF + DM_MR_LEN - 1], 0xee);

	/* Without local write: read, never written. */
	dm_mr(&mr, dm, DM_MR_OFF, DM_MR_LEN, IB_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, 0, buf, 4, VHCA_COPY_TO_MR), -EACCES);
	KUNIT_EXPECT_NE(test, dm[DM_MR_OFF], 0xee);

	/* A zero-length DM MR (at the buffer's end) holds no byte. */
	dm_mr(&mr, dm, DM_BUF, 0, lw);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, 0, buf, 1, VHCA_COPY_TO_MR), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_copy(&mr, 0, 0, NULL, 0, VHCA_COPY_TO_MR), 0);
}

/* Atomics on a DM MR: the CPU's, on the aligned word of the buffer only. */
static void vhca_copy_dm_mr_atomic(struct kunit *test)
{
	struct vhca_atomic fadd = { .op = VHCA_ATOMIC_FETCH_ADD, .compare_add = 5 };
	u8 *dm = kunit_kzalloc(test, DM_BUF, GFP_KERNEL);
	struct vhca_mr mr;
	u64 *word;

	KUNIT_ASSERT_NOT_NULL(test, dm);
	/* 8-byte aligned in the buffer: iova 8 is the word at 0x108. */
	dm_mr(&mr, dm, 0x100, 0x100, lw | IB_ACCESS_REMOTE_ATOMIC);
	word = (u64 *)(dm + 0x108);
	*word = 37;
	KUNIT_EXPECT_EQ(test, vhca_mr_atomic(&mr, 0, 8, &fadd), 0);
	KUNIT_EXPECT_EQ(test, fadd.orig, 37);
	KUNIT_EXPECT_EQ(test, *word, 42);
	/* The last word; one past it. */
	KUNIT_EXPECT_EQ(test, vhca_mr_atomic(&mr, 0, 0xf8, &fadd), 0);
	KUNIT_EXPECT_EQ(test, vhca_mr_atomic(&mr, 0, 0x100, &fadd), -EINVAL);

	/* 4 bytes off: no iova of the MR is an aligned word of memory. */
	dm_mr(&mr, dm, DM_MR_OFF, DM_MR_LEN, lw | IB_ACCESS_REMOTE_ATOMIC);
	KUNIT_EXPECT_EQ(test, vhca_mr_atomic(&mr, 0, 0, &fadd), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_atomic(&mr, 0, 4, &fadd), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_mr_atomic(&mr, 0, 8, &fadd), -EINVAL);
	expect_all(test, dm + DM_MR_OFF, 0, DM_MR_LEN);
}

/* A DM MR registration's result: its error, 0 for an MR. */
static long dm_reg_err(struct vhca_dev *vdev, u8 *dm, u64 off, u64 len,
		       int access)
{
	struct ib_mr *ibmr = vhca_mr_reg_dm(vdev, &pd_a, dm, DM_BUF, off, len,
					    access);

	if (IS_ERR(ibmr))
		return PTR_ERR(ibmr);
	ibmr->device = &vdev->ibdev;
	return vhca_dereg_mr(ibmr, NULL);
}

/* reg_dm_mr's registration: its refusals, its key, placement through it. */
static void vhca_copy_dm_mr_reg(struct kunit *test)
{
	const int zb = IB_ZERO_BASED | lw;
	struct vhca_dev *vdev = fake_vdev(test);
	u8 *dm = kunit_kzalloc(test, DM_BUF, GFP_KERNEL);
	u8 data[16] = { 9, 8, 7, 6, 5, 4, 3, 2, 1, 2, 3, 4, 5, 6, 7, 8 };
	struct vhca_mr *mr;
	struct ib_mr *ibmr;

	KUNIT_ASSERT_NOT_NULL(test, dm);
	/* Not zero-based; past the buffer; a length wrapping the u64 space. */
	KUNIT_EXPECT_EQ(test, dm_reg_err(vdev, dm, 0, 16, lw), -EINVAL);
	KUNIT_EXPECT_EQ(test, dm_reg_err(vdev, dm, DM_BUF - 8, 16, zb), -EINVAL);
	KUNIT_EXPECT_EQ(test, dm_reg_err(vdev, dm, DM_BUF + 1, 0, zb), -EINVAL);
	KUNIT_EXPECT_EQ(test, dm_reg_err(vdev, dm, 8, U64_MAX - 7, zb), -EINVAL);
	/* Access the spec forbids, and what vhca does not implement. */
	KUNIT_EXPECT_EQ(test, dm_reg_err(vdev, dm, 0, 16,
					 IB_ZERO_BASED | IB_ACCESS_REMOTE_WRITE), -EINVAL);
	KUNIT_EXPECT_EQ(test, dm_reg_err(vdev, dm, 0, 16, zb | IB_ACCESS_ON_DEMAND),
			-EOPNOTSUPP);
	/* Zero length at the buffer's end; the whole buffer; windows' access. */
	KUNIT_EXPECT_EQ(test, dm_reg_err(vdev, dm, DM_BUF, 0, zb), 0);
	KUNIT_EXPECT_EQ(test, dm_reg_err(vdev, dm, 0, DM_BUF, zb), 0);
	KUNIT_EXPECT_EQ(test, dm_reg_err(vdev, dm, 0, 16, zb | IB_ACCESS_MW_BIND), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&vdev->n_mr), 0);

	/* The buffer's last 16 bytes, found by the MR's key, at iova 0. */
	ibmr = vhca_mr_reg_dm(vdev, &pd_a, dm, DM_BUF, DM_BUF - 16, 16, zb);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ibmr));
	ibmr->device = &vdev->ibdev;
	mr = vhca_mr_get(vdev, ibmr->lkey);
	KUNIT_EXPECT_PTR_EQ(test, mr, to_vmr(ibmr));
	if (mr) {
		KUNIT_EXPECT_EQ(test, mr->iova, 0ULL);
		KUNIT_EXPECT_EQ(test, ibmr->iova, 0ULL);
		KUNIT_EXPECT_EQ(test, ibmr->length, 16ULL);
		KUNIT_EXPECT_EQ(test, vhca_mr_check(mr, ibmr->lkey, &pd_a, 0, 16, lw), 0);
		KUNIT_EXPECT_EQ(test, vhca_mr_check(mr, ibmr->lkey, &pd_a, 1, 16, lw),
				-EINVAL);
		KUNIT_EXPECT_EQ(test, vhca_mr_copy(mr, ibmr->lkey, 0, data, 16,
						   VHCA_COPY_TO_MR), 0);
		KUNIT_EXPECT_MEMEQ(test, dm + DM_BUF - 16, data, 16);
		expect_all(test, dm, 0, DM_BUF - 16);
		vhca_mr_put(mr);
	}
	KUNIT_EXPECT_EQ(test, vhca_dereg_mr(ibmr, NULL), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&vdev->n_mr), 0);
	xa_destroy(&vdev->mr_xa);
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
	KUNIT_CASE(vhca_copy_dm_mr),
	KUNIT_CASE(vhca_copy_dm_mr_atomic),
	KUNIT_CASE(vhca_copy_dm_mr_reg),
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
