// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The dispatch test's device memory: ibv_alloc_dm (the ioctl and the
 * mapping), the copies through the mapping and their bounds,
 * ibv_reg_dm_mr, ibv_free_dm.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "dispatch.h"

/* What the fake kernel's view of the allocation holds at off. */
static bool dm_holds(size_t off, const void *data, size_t len)
{
	return fk.dm && !memcmp((const uint8_t *)fk.dm->kview + off, data, len);
}

/* Copies that must fail with EINVAL and move no byte. */
static void dm_refusals(struct ibv_dm *dm, uint64_t len)
{
	static const struct { uint64_t off; size_t len; const char *what; } bad[] = {
		{ 1, 4, "an offset not a multiple of 4" },
		{ 4, 3, "a length not a multiple of 4" },
		{ 0, 0, "past the end" },		/* len + 4 */
		{ 0, 0, "starting at the end" },	/* off len, 4 */
		{ UINT64_MAX - 3, 8, "a range wrapping the u64 space" },
	};
	uint8_t buf[256], zero[256] = {};
	unsigned int i;
	int to, from;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		uint64_t off = bad[i].off;
		size_t n = bad[i].len;

		if (i == 2)
			n = len + 4;
		if (i == 3)
			off = len, n = 4;
		memset(buf, 0x5a, sizeof(buf));
		to = ibv_memcpy_to_dm(dm, off, buf, n);
		from = ibv_memcpy_from_dm(buf, dm, off, n);
		check(to == EINVAL && from == EINVAL &&
		      dm_holds(0, zero, len) && buf[0] == 0x5a,
		      "ibv_memcpy_to_dm/from_dm refuse", "%s: %d, %d",
		      bad[i].what, to, from);
	}
}

TEST_F(ctx, dm)
{
	struct ibv_alloc_dm_attr attr = { .length = 100, .log_align_req = 6 };
	int access = IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE |
		     IBV_ACCESS_REMOTE_WRITE;
	const uint8_t data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	unsigned int calls;
	struct ibv_dm *dm;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	uint8_t back[8];
	int ret;

	attr.comp_mask = 1;
	calls = syscalls();
	errno = 0;
	dm = ibv_alloc_dm(self->o.ctx, &attr);
	check(!dm && errno == EINVAL && syscalls() == calls,
	      "ibv_alloc_dm refuses comp_mask bits before the kernel",
	      "dm %p, errno %d", (void *)dm, errno);
	if (dm)
		ibv_free_dm(dm);
	attr.comp_mask = 0;
	dm = ibv_alloc_dm(self->o.ctx, &attr);
	check(dm && fk.dm_allocs == 1 && fk.dm && fk.dm->size == 100 &&
	      fk.dm_align == 6 && dm->handle == FAKE_DM_HANDLE,
	      "ibv_alloc_dm reaches DM_ALLOC (length, alignment through; "
	      "handle back)", "dm %p, errno %d", (void *)dm, errno);
	if (!dm)
		return;

	calls = syscalls();
	ret = ibv_memcpy_to_dm(dm, 4, data, sizeof(data));
	check(!ret && dm_holds(4, data, sizeof(data)),
	      "ibv_memcpy_to_dm writes the mapped allocation", "ret %d", ret);
	memset(back, 0, sizeof(back));
	ret = ibv_memcpy_from_dm(back, dm, 4, sizeof(back));
	check(!ret && !memcmp(back, data, sizeof(data)),
	      "ibv_memcpy_from_dm reads it back", "ret %d", ret);
	ret = ibv_memcpy_to_dm(dm, 96, data, 4);
	check(!ret && dm_holds(96, data, 4),
	      "ibv_memcpy_to_dm of the last word", "ret %d", ret);
	check(syscalls() == calls, "the copies make no system call",
	      "%u made", syscalls() - calls);
	memset(fk.dm->kview, 0, 100);
	dm_refusals(dm, 100);

	pd = ibv_alloc_pd(self->o.ctx);
	mr = pd ? ibv_reg_dm_mr(pd, dm, 8, 64, access) : NULL;
	check(mr && fk.dm_mr_regs == 1 && fk.dm_mr.offset == 8 &&
	      fk.dm_mr.length == 64 && fk.dm_mr.pd == FAKE_PD_HANDLE &&
	      fk.dm_mr.dm == FAKE_DM_HANDLE &&
	      fk.dm_mr.access == (uint32_t)access &&
	      mr->lkey == FAKE_DM_LKEY && mr->rkey == FAKE_DM_RKEY &&
	      mr->handle == FAKE_DM_MR_HANDLE && !mr->addr &&
	      mr->length == 64 && mr->pd == pd,
	      "ibv_reg_dm_mr reaches DM_MR_REG (offset, length, PD, DM, "
	      "access through; keys back, zero-based)", "mr %p, errno %d",
	      (void *)mr, errno);
	if (mr) {
		ret = ibv_dereg_mr(mr);
		check(!ret && fk.destroyed == FAKE_DM_MR_HANDLE,
		      "ibv_dereg_mr of a DM MR reaches DEREG_MR", "ret %d",
		      ret);
	}
	if (pd)
		ibv_dealloc_pd(pd);

	ret = ibv_free_dm(dm);
	check(!ret && fk.dm_frees == 1 && !fk.dm,
	      "ibv_free_dm reaches DM_FREE", "ret %d", ret);
}
