// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite of the ICRC's CRC-32 routines: vhca's slice-by-16 table
 * against the standard check value, and it and the crypto API's routine
 * against crc32_le() over random data at every alignment and length class
 * (the 16-byte steps, the byte tail, both), chained across calls; the
 * routine the icrc parameter names is the one vhca_crc() runs; the
 * parameter refuses unknown names.
 */
#include <kunit/test.h>
#include <linux/random.h>

#include "../vhca_crc.c"

static int vhca_crc_suite_init(struct kunit_suite *suite)
{
	return vhca_crc_init();
}

static void vhca_crc_suite_exit(struct kunit_suite *suite)
{
	vhca_crc_exit();
}

/* CRC-32/ISO-HDLC's check value: the CRC of "123456789". */
static void vhca_crc_check_value(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, ~vhca_crc_slice16(~0U, "123456789", 9),
			0xcbf43926U);
	KUNIT_EXPECT_EQ(test, vhca_crc_slice16(0x1234, "", 0), 0x1234U);
}

/* fn against crc32_le() over random bytes, seeds, offsets and lengths. */
static void vhca_crc_expect_lib(struct kunit *test,
				u32 (*fn)(u32 crc, const u8 *p, size_t len))
{
	static const size_t lens[] = {
		1, 15, 16, 17, 31, 32, 33, 63, 64, 100, 1024, 1027, 4096,
	};
	size_t bytes = 4096 + 16, off, i;
	u8 *buf = kunit_kmalloc(test, bytes, GFP_KERNEL);
	u32 seed, got;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	get_random_bytes(buf, bytes);
	for (off = 0; off < 16; off++) {
		for (i = 0; i < ARRAY_SIZE(lens); i++) {
			seed = get_random_u32();
			KUNIT_EXPECT_EQ_MSG(test, fn(seed, buf + off, lens[i]),
					    crc32_le(seed, buf + off, lens[i]),
					    "offset %zu length %zu", off,
					    lens[i]);
		}
	}
	/* Chained: a CRC continued over a split equals one over the whole. */
	for (i = 0; i <= 1024; i += 37) {
		got = fn(~0U, buf, i);
		got = fn(got, buf + i, 1024 - i);
		KUNIT_EXPECT_EQ_MSG(test, got, crc32_le(~0U, buf, 1024),
				    "split at %zu", i);
	}
}

static void vhca_crc_table_matches_lib(struct kunit *test)
{
	vhca_crc_expect_lib(test, vhca_crc_slice16);
}

static void vhca_crc_crypto_matches_lib(struct kunit *test)
{
	if (!vhca_crc_tfm)
		kunit_skip(test, "this kernel has no crypto crc32");
	vhca_crc_expect_lib(test, vhca_crc_crypto);
}

/* vhca_crc() runs the routine the parameter names. */
static void vhca_crc_choice(struct kunit *test)
{
	int was = vhca_crc_mode, mode = icrc, m;
	u8 buf[100];

	get_random_bytes(buf, sizeof(buf));
	for (m = VHCA_ICRC_LIB; m < VHCA_ICRC_MODES; m++) {
		icrc = m;
		if (m == VHCA_ICRC_CRYPTO && !vhca_crc_tfm) {
			KUNIT_EXPECT_EQ(test, vhca_crc_init(), -ENOENT);
			continue;
		}
		KUNIT_EXPECT_EQ(test, vhca_crc_init(), 0);
		KUNIT_EXPECT_EQ(test, vhca_crc_mode, m);
		KUNIT_EXPECT_EQ(test, vhca_crc(~0U, buf, sizeof(buf)),
				crc32_le(~0U, buf, sizeof(buf)));
	}
	/* auto picks one of the routines this kernel has. */
	icrc = VHCA_ICRC_AUTO;
	KUNIT_EXPECT_EQ(test, vhca_crc_init(), 0);
	KUNIT_EXPECT_GE(test, vhca_crc_mode, VHCA_ICRC_LIB);
	KUNIT_EXPECT_LE(test, vhca_crc_mode,
			vhca_crc_tfm ? VHCA_ICRC_CRYPTO : VHCA_ICRC_TABLE);
	icrc = mode;
	vhca_crc_mode = was;
}

static void vhca_crc_param(struct kunit *test)
{
	const struct kernel_param kp = { .arg = &(int){ -1 } };
	/* A page, as sysfs hands a parameter's get. */
	char *out = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_EXPECT_EQ(test, vhca_icrc_set("table\n", &kp), 0);
	KUNIT_EXPECT_EQ(test, *(int *)kp.arg, VHCA_ICRC_TABLE);
	KUNIT_EXPECT_EQ(test, vhca_icrc_get(out, &kp), 6);
	KUNIT_EXPECT_STREQ(test, out, "table\n");
	KUNIT_EXPECT_EQ(test, vhca_icrc_set("crypto", &kp), 0);
	KUNIT_EXPECT_EQ(test, *(int *)kp.arg, VHCA_ICRC_CRYPTO);
	KUNIT_EXPECT_EQ(test, vhca_icrc_set("lib", &kp), 0);
	KUNIT_EXPECT_EQ(test, *(int *)kp.arg, VHCA_ICRC_LIB);
	KUNIT_EXPECT_EQ(test, vhca_icrc_set("auto", &kp), 0);
	KUNIT_EXPECT_EQ(test, *(int *)kp.arg, VHCA_ICRC_AUTO);
	KUNIT_EXPECT_EQ(test, vhca_icrc_set("pclmul", &kp), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_icrc_set("", &kp), -EINVAL);
	KUNIT_EXPECT_EQ(test, *(int *)kp.arg, VHCA_ICRC_AUTO);
}

static struct kunit_case vhca_crc_cases[] = {
	KUNIT_CASE(vhca_crc_check_value),
	KUNIT_CASE(vhca_crc_table_matches_lib),
	KUNIT_CASE(vhca_crc_crypto_matches_lib),
	KUNIT_CASE(vhca_crc_choice),
	KUNIT_CASE(vhca_crc_param),
	{}
};

static struct kunit_suite vhca_crc_suite = {
	.name = "vhca_crc",
	.suite_init = vhca_crc_suite_init,
	.suite_exit = vhca_crc_suite_exit,
	.test_cases = vhca_crc_cases,
};

kunit_test_suite(vhca_crc_suite);
