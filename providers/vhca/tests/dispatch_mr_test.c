// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The dispatch test's PDs and MRs: ibv_alloc_pd, ibv_reg_mr, ibv_rereg_mr.
 */
#include <errno.h>
#include <stdint.h>

#include "dispatch.h"

TEST_F(ctx, pd_mr)
{
	struct objs *o = &self->o;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		     IBV_ACCESS_REMOTE_READ;

	o->pd = ibv_alloc_pd(o->ctx);
	check(o->pd && o->pd->handle == FAKE_PD_HANDLE &&
	      fk.cmds[IB_USER_VERBS_CMD_ALLOC_PD] == 1,
	      "ibv_alloc_pd reaches ALLOC_PD", "pd %p, errno %d",
	      (void *)o->pd, errno);
	if (!o->pd)
		return;
	o->mr = ibv_reg_mr(o->pd, o->buf, sizeof(o->buf), access);
	check(o->mr && fk.reg_mr.start == (uintptr_t)o->buf &&
	      fk.reg_mr.length == sizeof(o->buf) &&
	      fk.reg_mr.hca_va == (uintptr_t)o->buf &&
	      fk.reg_mr.pd_handle == FAKE_PD_HANDLE &&
	      fk.reg_mr.access_flags == (uint32_t)access &&
	      o->mr->lkey == FAKE_LKEY && o->mr->rkey == FAKE_RKEY &&
	      o->mr->handle == FAKE_MR_HANDLE,
	      "ibv_reg_mr reaches REG_MR (addr, length, access through; keys "
	      "back)", "mr %p, errno %d", (void *)o->mr, errno);
}

/* ibv_rereg_mr: the command's fields, the kernel's keys, its errors. */
TEST_F(pd, rereg_mr)
{
	struct objs *o = &self->o;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_pd pd2 = { .context = o->ctx, .handle = FAKE_PD_HANDLE + 1 };
	char other[64];
	int ret;

	ret = ibv_rereg_mr(o->mr, IBV_REREG_MR_CHANGE_TRANSLATION |
			   IBV_REREG_MR_CHANGE_ACCESS, NULL, other,
			   sizeof(other), access);
	check(!ret && fk.rereg_mr.mr_handle == FAKE_MR_HANDLE &&
	      fk.rereg_mr.flags == (IBV_REREG_MR_CHANGE_TRANSLATION |
				    IBV_REREG_MR_CHANGE_ACCESS) &&
	      fk.rereg_mr.start == (uintptr_t)other &&
	      fk.rereg_mr.hca_va == (uintptr_t)other &&
	      fk.rereg_mr.length == sizeof(other) &&
	      fk.rereg_mr.access_flags == (uint32_t)access &&
	      o->mr->lkey == FAKE_LKEY + 0x100 &&
	      o->mr->rkey == FAKE_RKEY + 0x100 &&
	      o->mr->addr == other && o->mr->length == sizeof(other),
	      "ibv_rereg_mr reaches REREG_MR (address, length, access "
	      "through; keys back)", "ret %d, errno %d", ret, errno);
	ret = ibv_rereg_mr(o->mr, IBV_REREG_MR_CHANGE_PD, &pd2, NULL, 0, 0);
	check(!ret && fk.rereg_mr.flags == IBV_REREG_MR_CHANGE_PD &&
	      fk.rereg_mr.pd_handle == pd2.handle && o->mr->pd == &pd2,
	      "ibv_rereg_mr CHANGE_PD carries the new PD's handle", "ret %d",
	      ret);
	fk.fail_cmd = IB_USER_VERBS_CMD_REREG_MR;
	fk.fail_err = EOPNOTSUPP;
	errno = 0;
	ret = ibv_rereg_mr(o->mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE);
	check(ret == IBV_REREG_MR_ERR_CMD && errno == EOPNOTSUPP &&
	      o->mr->lkey == FAKE_LKEY + 0x100,
	      "ibv_rereg_mr refused by the kernel: its errno, keys kept",
	      "ret %d, errno %d", ret, errno);
	ret = ibv_rereg_mr(o->mr, IBV_REREG_MR_CHANGE_PD, o->pd, NULL, 0, 0);
	check(!ret && o->mr->pd == o->pd, "ibv_rereg_mr back to the MR's PD",
	      "ret %d", ret);
}
