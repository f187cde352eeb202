// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite of ring index arithmetic: slots and occupancy with
 * free-running u32 indices, across the 2^32 wrap, and with the hostile
 * producer indices a process may write into its doorbell record.
 */
#include <kunit/test.h>

#include "../vhca_ring.h"

static void vhca_ring_slots(struct kunit *test)
{
	u8 buf[8 * 64];
	struct vhca_ring r = { .buf = buf, .count = 8, .stride = 64 };

	KUNIT_EXPECT_PTR_EQ(test, vhca_ring_slot(&r, 0), (void *)buf);
	KUNIT_EXPECT_PTR_EQ(test, vhca_ring_slot(&r, 7), (void *)(buf + 7 * 64));
	KUNIT_EXPECT_PTR_EQ(test, vhca_ring_slot(&r, 8), (void *)buf);
	KUNIT_EXPECT_PTR_EQ(test, vhca_ring_slot(&r, 13), (void *)(buf + 5 * 64));
	/* Any index, however large, lands inside the ring. */
	KUNIT_EXPECT_PTR_EQ(test, vhca_ring_slot(&r, U32_MAX),
			    (void *)(buf + 7 * 64));
	KUNIT_EXPECT_PTR_EQ(test, vhca_ring_slot(&r, 0x80000003),
			    (void *)(buf + 3 * 64));
}

static void vhca_ring_occupancy(struct kunit *test)
{
	struct vhca_ring r = { .count = 16, .stride = 32 };

	KUNIT_EXPECT_EQ(test, vhca_ring_used(&r, 0, 0), 0U);
	KUNIT_EXPECT_EQ(test, vhca_ring_used(&r, 5, 0), 5U);
	KUNIT_EXPECT_EQ(test, vhca_ring_used(&r, 16, 0), 16U);
	/* Across the wrap of the free-running indices. */
	KUNIT_EXPECT_EQ(test, vhca_ring_used(&r, 3, U32_MAX - 2), 6U);
	KUNIT_EXPECT_EQ(test, vhca_ring_used(&r, 12, U32_MAX - 3), 16U);
	KUNIT_EXPECT_EQ(test, vhca_ring_used(&r, U32_MAX, U32_MAX), 0U);
	/* Hostile heads: more than a ring ahead, or behind the tail. */
	KUNIT_EXPECT_EQ(test, vhca_ring_used(&r, 17, 0), U32_MAX);
	KUNIT_EXPECT_EQ(test, vhca_ring_used(&r, 4, 5), U32_MAX);
	KUNIT_EXPECT_EQ(test, vhca_ring_used(&r, 13, U32_MAX - 3), U32_MAX);
	KUNIT_EXPECT_EQ(test, vhca_ring_used(&r, 0x80000000, 0), U32_MAX);
}

static struct kunit_case vhca_ring_cases[] = {
	KUNIT_CASE(vhca_ring_slots),
	KUNIT_CASE(vhca_ring_occupancy),
	{}
};

static struct kunit_suite vhca_ring_suite = {
	.name = "vhca_ring",
	.test_cases = vhca_ring_cases,
};

kunit_test_suite(vhca_ring_suite);
