// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ICRC's CRC-32.  Every wire packet is CRCed twice (when sent and
 * when checked), and how fast a CRC-32 runs depends on the kernel and the
 * CPU: Debian's 6.12 serves crc32_le() from lib/crc32.c's slice-by-8
 * table on x86, later kernels by a carry-less multiply; the crypto API's
 * "crc32" is crc32-pclmul where that module exists (as rdma_rxe uses),
 * fast on real CPUs and slow where an emulator runs the multiply.  So at
 * load vhca times the routines it has on this CPU, crc32_le(), its own
 * slice-by-16 table (16 bytes a step: half the steps of slice-by-8) and
 * the crypto API's, and keeps the fastest, as raid6 and xor pick theirs.
 * The icrc parameter overrides the choice.
 */
#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/crc32poly.h>
#include <linux/err.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/preempt.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "vhca_compat.h"
#include "vhca_crc.h"

enum {
	VHCA_ICRC_AUTO,
	VHCA_ICRC_LIB,
	VHCA_ICRC_TABLE,
	VHCA_ICRC_CRYPTO,
	VHCA_ICRC_MODES
};

static const char * const vhca_icrc_names[VHCA_ICRC_MODES] = {
	[VHCA_ICRC_AUTO] = "auto",
	[VHCA_ICRC_LIB] = "lib",
	[VHCA_ICRC_TABLE] = "table",
	[VHCA_ICRC_CRYPTO] = "crypto",
};

static int vhca_icrc_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(vhca_icrc_names, val);

	if (i < 0)
		return i;
	*(int *)kp->arg = i;
	return 0;
}

static int vhca_icrc_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", vhca_icrc_names[*(int *)kp->arg]);
}

static const struct kernel_param_ops vhca_icrc_ops = {
	.set = vhca_icrc_set,
	.get = vhca_icrc_get,
};

static int icrc = VHCA_ICRC_AUTO;
module_param_cb(icrc, &vhca_icrc_ops, &icrc, 0444);
MODULE_PARM_DESC(icrc,
		 "CRC-32 routine of the ICRC: auto (the fastest, timed at load; default), lib (crc32_le), table (vhca's slice-by-16) or crypto (the crypto API's crc32)");

/* vhca_crc_tab[k][b]: the CRC state of byte b followed by k zero bytes. */
static u32 vhca_crc_tab[16][256] __read_mostly;
/* The crypto API's "crc32", when this kernel has it. */
static struct crypto_shash *vhca_crc_tfm;
/* The routine in use: VHCA_ICRC_LIB, _TABLE or _CRYPTO. */
static int vhca_crc_mode __read_mostly = VHCA_ICRC_LIB;

static u32 vhca_crc_slice16(u32 crc, const u8 *p, size_t len)
{
	const u32 (*t)[256] = vhca_crc_tab;
	u32 a, b, c, d;

	for (; len >= 16; p += 16, len -= 16) {
		a = crc ^ get_unaligned_le32(p);
		b = get_unaligned_le32(p + 4);
		c = get_unaligned_le32(p + 8);
		d = get_unaligned_le32(p + 12);
		crc = t[15][a & 0xff] ^ t[14][(a >> 8) & 0xff] ^
		      t[13][(a >> 16) & 0xff] ^ t[12][a >> 24] ^
		      t[11][b & 0xff] ^ t[10][(b >> 8) & 0xff] ^
		      t[9][(b >> 16) & 0xff] ^ t[8][b >> 24] ^
		      t[7][c & 0xff] ^ t[6][(c >> 8) & 0xff] ^
		      t[5][(c >> 16) & 0xff] ^ t[4][c >> 24] ^
		      t[3][d & 0xff] ^ t[2][(d >> 8) & 0xff] ^
		      t[1][(d >> 16) & 0xff] ^ t[0][d >> 24];
	}
	for (; len; p++, len--)
		crc = (crc >> 8) ^ t[0][(crc ^ *p) & 0xff];
	return crc;
}

/*
 * Through the crypto API: the "crc32" state is the CRC register itself
 * (statesize 4, checked at load), so import and export carry crc in and
 * out, and the shared tfm (whose key, the default seed, is never set)
 * serves every CPU at once.
 */
static u32 vhca_crc_crypto(u32 crc, const u8 *p, size_t len)
{
	SHASH_DESC_ON_STACK(desc, vhca_crc_tfm);
	u32 out;

	desc->tfm = vhca_crc_tfm;
	if (unlikely(crypto_shash_import(desc, &crc) ||
		     crypto_shash_update(desc, p, len) ||
		     crypto_shash_export(desc, &out)))
		out = crc32_le(crc, p, len);
	shash_desc_zero(desc);
	return out;
}

static u32 vhca_crc_lib(u32 crc, const u8 *p, size_t len)
{
	return crc32_le(crc, p, len);
}

u32 vhca_crc(u32 crc, const void *p, size_t len)
{
	switch (vhca_crc_mode) {
	case VHCA_ICRC_TABLE:
		return vhca_crc_slice16(crc, p, len);
	case VHCA_ICRC_CRYPTO:
		return vhca_crc_crypto(crc, p, len);
	default:
		return crc32_le(crc, p, len);
	}
}

static void vhca_crc_tab_init(void)
{
	u32 b, k, v;

	for (b = 0; b < 256; b++) {
		v = b;
		for (k = 0; k < 8; k++)
			v = (v >> 1) ^ (v & 1 ? CRC32_POLY_LE : 0);
		vhca_crc_tab[0][b] = v;
	}
	for (k = 1; k < 16; k++)
		for (b = 0; b < 256; b++) {
			v = vhca_crc_tab[k - 1][b];
			vhca_crc_tab[k][b] = (v >> 8) ^
					     vhca_crc_tab[0][v & 0xff];
		}
}

/*
 * The crypto API's "crc32", if this kernel has one whose state is the
 * CRC register: a 4-byte state that, carried in and out, continues a
 * crc32_le() (checked on the CRC-32 check string from a nonzero seed).
 */
static void vhca_crc_tfm_init(void)
{
	static const u8 check[] = "123456789";
	struct crypto_shash *tfm;

	if (vhca_crc_tfm)
		return;
	tfm = crypto_alloc_shash("crc32", 0, 0);
	if (IS_ERR(tfm))
		return;
	vhca_crc_tfm = tfm;
	if (crypto_shash_statesize(tfm) != sizeof(u32) ||
	    crypto_shash_descsize(tfm) != sizeof(u32) ||
	    vhca_crc_crypto(~0U, check, 9) != crc32_le(~0U, check, 9)) {
		vhca_crc_tfm = NULL;
		crypto_free_shash(tfm);
	}
}

#define VHCA_CRC_BENCH_BYTES	1024	/* a path-MTU packet's payload */
#define VHCA_CRC_BENCH_RUNS	16
#define VHCA_CRC_BENCH_ROUNDS	5

/* MB/s of the routine over buf, the best of a few rounds. */
static u64 vhca_crc_rate(u32 (*fn)(u32 crc, const u8 *p, size_t len),
			 const u8 *buf)
{
	u64 t, best = U64_MAX;
	u32 crc = ~0;
	int r, i;

	for (r = 0; r < VHCA_CRC_BENCH_ROUNDS; r++) {
		preempt_disable();
		t = ktime_get_ns();
		for (i = 0; i < VHCA_CRC_BENCH_RUNS; i++)
			crc = fn(crc, buf, VHCA_CRC_BENCH_BYTES);
		/* The CRCs are done before the clock is read again. */
		barrier_data(&crc);
		t = ktime_get_ns() - t;
		preempt_enable();
		best = min(best, t);
	}
	return div64_u64((u64)VHCA_CRC_BENCH_RUNS * VHCA_CRC_BENCH_BYTES *
			 1000, max(best, 1ULL));
}

/* Time the routines and keep the fastest; crc32_le() without memory. */
static void vhca_crc_pick(void)
{
	u64 rate[VHCA_ICRC_MODES] = {};
	int m;
	u8 *buf;

	buf = kmalloc(VHCA_CRC_BENCH_BYTES, GFP_KERNEL);
	if (!buf)
		return;
	get_random_bytes(buf, VHCA_CRC_BENCH_BYTES);
	rate[VHCA_ICRC_LIB] = vhca_crc_rate(vhca_crc_lib, buf);
	rate[VHCA_ICRC_TABLE] = vhca_crc_rate(vhca_crc_slice16, buf);
	if (vhca_crc_tfm)
		rate[VHCA_ICRC_CRYPTO] = vhca_crc_rate(vhca_crc_crypto, buf);
	kfree(buf);

	vhca_crc_mode = VHCA_ICRC_LIB;
	for (m = VHCA_ICRC_TABLE; m < VHCA_ICRC_MODES; m++)
		if (rate[m] > rate[vhca_crc_mode])
			vhca_crc_mode = m;
	if (vhca_crc_tfm)
		pr_info("vhca: ICRC by %s: crc32_le %llu MB/s, table %llu MB/s, crypto (%s) %llu MB/s\n",
			vhca_icrc_names[vhca_crc_mode], rate[VHCA_ICRC_LIB],
			rate[VHCA_ICRC_TABLE],
			crypto_shash_driver_name(vhca_crc_tfm),
			rate[VHCA_ICRC_CRYPTO]);
	else
		pr_info("vhca: ICRC by %s: crc32_le %llu MB/s, table %llu MB/s, no crypto crc32\n",
			vhca_icrc_names[vhca_crc_mode], rate[VHCA_ICRC_LIB],
			rate[VHCA_ICRC_TABLE]);
}

/*
 * Build the table, take the crypto API's routine and pick one; -ENOENT
 * when icrc=crypto names a routine this kernel lacks.
 */
int vhca_crc_init(void)
{
	vhca_crc_tab_init();
	vhca_crc_tfm_init();
	switch (icrc) {
	case VHCA_ICRC_AUTO:
		vhca_crc_pick();
		return 0;
	case VHCA_ICRC_CRYPTO:
		if (!vhca_crc_tfm) {
			pr_err("vhca: icrc=crypto: this kernel has no crc32 hash\n");
			return -ENOENT;
		}
		break;
	}
	vhca_crc_mode = icrc;
	pr_info("vhca: ICRC by %s (the icrc parameter)\n",
		vhca_icrc_names[icrc]);
	return 0;
}

void vhca_crc_exit(void)
{
	crypto_free_shash(vhca_crc_tfm);
	vhca_crc_tfm = NULL;
	vhca_crc_mode = VHCA_ICRC_LIB;
}
