// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* vhca_rdma: the data pattern, scatter/gather layouts and their checks. */
#include "rdma.h"

/* Byte @i of the message of pattern @seed. */
static uint8_t pat(uint32_t seed, uint64_t i)
{
	uint32_t x = (uint32_t)i * 0x9e3779b1u + seed * 0x85ebca77u +
		     (uint32_t)(i >> 32);

	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	return x;
}

/* Writes pattern @seed, from byte @first on, across the spans of @buf. */
void fill_spans(uint8_t *buf, const struct span *sp, int n,
		uint32_t seed, uint64_t first)
{
	uint64_t k = first;
	uint32_t j;
	int i;

	for (i = 0; i < n; i++)
		for (j = 0; j < sp[i].len; j++)
			buf[sp[i].off + j] = pat(seed, k++);
}

void make_sges(struct ibv_sge *sge, const uint8_t *buf, uint32_t lkey,
	       const struct span *sp, int n)
{
	int i;

	for (i = 0; i < n; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)buf + sp[i].off,
					   sp[i].len, lkey };
}

/*
 * @buf[0, @size) must hold bytes @first .. @first + @len - 1 of pattern
 * @seed scattered over the spans in order, and CANARY everywhere else.
 * On a mismatch, describes the first one and the count in @msg.
 */
bool check_region(const uint8_t *buf, size_t size,
		  const struct span *sp, int n, uint32_t seed,
		  uint64_t first, uint32_t len, char *msg,
		  size_t msize)
{
	uint8_t *want = malloc(size);
	size_t bad = 0, first_bad = 0, o;
	uint32_t left = len, j;
	uint64_t k = first;
	int i;

	if (!want) {
		snprintf(msg, msize, "out of memory");
		return false;
	}
	memset(want, CANARY, size);
	for (i = 0; i < n && left; i++)
		for (j = 0; j < sp[i].len && left; j++, left--)
			want[sp[i].off + j] = pat(seed, k++);
	for (o = 0; o < size; o++) {
		if (buf[o] == want[o])
			continue;
		if (!bad++)
			first_bad = o;
	}
	if (bad) {
		const char *where = "outside the data";
		uint32_t at = 0;

		for (i = 0; i < n; i++) {
			if (first_bad >= sp[i].off &&
			    first_bad < sp[i].off + sp[i].len) {
				where = "in SGE";
				at = i;
				break;
			}
		}
		snprintf(msg, msize, "%zu of %zu bytes wrong; first at offset "
			 "%zu (%s %u): %#04x, expected %#04x", bad, size,
			 first_bad, where, at, buf[first_bad],
			 want[first_bad]);
	}
	free(want);
	return !bad;
}

/* Checks @buf[0, @size) as check_region does, as a result line. */
void verify(const char *what, const uint8_t *buf, size_t size,
	    const struct span *sp, int n, uint32_t seed, uint64_t first,
	    uint32_t len)
{
	char msg[200];
	bool ok = check_region(buf, size, sp, n, seed, first, len, msg,
			       sizeof(msg));

	result(ok, what, "%s", msg);
}
