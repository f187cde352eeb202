// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The dispatch test's CQs: creation, polling, resizing, the discards of a
 * QP's reset, and the extended CQ.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "dispatch.h"

TEST_F(pd, create_cq)
{
	struct objs *o = &self->o;

	o->cq = ibv_create_cq(o->ctx, 100, NULL, NULL, 0);
	o->fcq = o->cq ? find_cq(o->cq->handle) : NULL;
	check(o->cq && o->fcq && fk.create_cq.cqe == 100 &&
	      fk.create_cq.comp_channel == -1 && o->cq->cqe == 127,
	      "ibv_create_cq reaches CREATE_CQ (cqe 100 in, 127 back)",
	      "cq %p, errno %d", (void *)o->cq, errno);
	if (!o->fcq)
		return;
	check(mapped_as(o->fcq->ring, PROT_READ),
	      "create_cq: CQE ring mapped shared, read-only, ring_size bytes",
	      "not so");
	check(!ibv_req_notify_cq(o->cq, 1) &&
	      fk.cmds[IB_USER_VERBS_CMD_REQ_NOTIFY_CQ] == 1 &&
	      fk.notify.cq_handle == o->cq->handle &&
	      fk.notify.solicited_only == 1,
	      "ibv_req_notify_cq reaches REQ_NOTIFY_CQ (a system call)",
	      "%u commands, solicited %u",
	      fk.cmds[IB_USER_VERBS_CMD_REQ_NOTIFY_CQ],
	      fk.notify.solicited_only);
}

TEST_F(rc, poll_cq)
{
	struct objs *o = &self->o;
	struct vhca_cqe c1 = {
		.wr_id = 0x1122334455667788ULL, .status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_RECV,
		.flags = VHCA_CQE_WITH_IMM | VHCA_CQE_GRH,
		.sl = 5, .qp_num = o->fqp->qpn, .byte_len = 4000,
		.imm_data = htobe32(0xdeadbeef), .src_qp = 0x333,
		.pkey_index = 7,
	};
	struct vhca_cqe c2 = {
		.wr_id = 2, .status = IBV_WC_LOC_PROT_ERR,
		.opcode = IBV_WC_RDMA_WRITE, .qp_num = o->fqp->qpn,
		.vendor_err = 0x42,
	};
	struct vhca_db_rec *db = fk_db(o->fcq->db_index);
	unsigned int calls;
	struct ibv_wc wc[4];
	int n, m, z;

	push_cqe(o->fcq, &c1);
	push_cqe(o->fcq, &c2);
	memset(wc, 0xff, sizeof(wc));
	calls = syscalls();
	n = ibv_poll_cq(o->cq, 1, wc);
	check(n == 1 && wc[0].wr_id == c1.wr_id &&
	      wc[0].status == IBV_WC_SUCCESS && wc[0].opcode == IBV_WC_RECV &&
	      wc[0].byte_len == 4000 && wc[0].imm_data == htobe32(0xdeadbeef) &&
	      wc[0].wc_flags == (IBV_WC_WITH_IMM | IBV_WC_GRH) &&
	      wc[0].qp_num == o->fqp->qpn && wc[0].src_qp == 0x333 &&
	      wc[0].pkey_index == 7 && wc[0].sl == 5 && wc[0].slid == 0 &&
	      wc[0].dlid_path_bits == 0 && wc[0].vendor_err == 0 &&
	      db->head[0] == 1,
	      "poll_cq: CQE converted to ibv_wc, consumer index published",
	      "n %d, status %d, flags %#x, head %u", n, wc[0].status,
	      wc[0].wc_flags, db->head[0]);
	m = ibv_poll_cq(o->cq, 4, wc + 1);
	z = ibv_poll_cq(o->cq, 4, wc + 2);
	check(m == 1 && z == 0 && wc[1].wr_id == 2 &&
	      wc[1].status == IBV_WC_LOC_PROT_ERR &&
	      wc[1].opcode == IBV_WC_RDMA_WRITE && wc[1].vendor_err == 0x42 &&
	      wc[1].wc_flags == 0 && db->head[0] == 2,
	      "poll_cq: an error CQE, then an empty CQ", "m %d, z %d", m, z);
	check(syscalls() == calls, "poll_cq: no system call",
	      "%u system calls", syscalls() - calls);
}

TEST_F(rc, resize_cq)
{
	struct objs *o = &self->o;
	struct vhca_cqe c = { .wr_id = 0xcafe, .opcode = IBV_WC_SEND };
	struct region *old = o->fcq->ring;
	off_t old_offset = old->offset;
	struct ibv_wc wc;
	int ret, n;

	push_cqe(o->fcq, &c);
	ret = ibv_resize_cq(o->cq, 300);
	check(!ret && fk.resize_cq.cq_handle == o->cq->handle &&
	      fk.resize_cq.cqe == 300 && o->cq->cqe == 511 &&
	      o->fcq->ring->offset != old_offset &&
	      mapped_as(o->fcq->ring, PROT_READ),
	      "ibv_resize_cq reaches RESIZE_CQ, new ring mapped read-only",
	      "ret %d, cqe %d", ret, o->cq->cqe);
	check(unmapped(old), "resize_cq: old ring unmapped", "still mapped");
	n = ibv_poll_cq(o->cq, 1, &wc);
	check(n == 1 && wc.wr_id == 0xcafe,
	      "resize_cq: the unconsumed CQE polled from the new ring",
	      "n %d", n);
}

/*
 * A reset removes the QP's completions from its CQ (the flushes of its
 * previous life), not another QP's, nor those the QP makes afterwards.
 */
TEST_F(rts, reset_discards)
{
	struct objs *o = &self->o;
	struct vhca_cqe mine = {
		.wr_id = 0xd1, .status = IBV_WC_WR_FLUSH_ERR,
		.opcode = IBV_WC_RECV, .qp_num = o->fqp->qpn,
	};
	struct vhca_cqe other = { .wr_id = 0xd2, .qp_num = o->fqp->qpn + 9 };
	unsigned int calls;
	struct ibv_wc wc[4];
	int n;

	while (ibv_poll_cq(o->cq, 4, wc) > 0)
		;
	push_cqe(o->fcq, &mine);
	push_cqe(o->fcq, &other);
	mine.wr_id = 0xd3;
	push_cqe(o->fcq, &mine);
	check(modify_state(o->qp, IBV_QPS_RESET), "modify_qp to RESET",
	      "errno %d", errno);
	mine.wr_id = 0xd4;
	mine.status = IBV_WC_SUCCESS;
	push_cqe(o->fcq, &mine);
	calls = syscalls();
	n = ibv_poll_cq(o->cq, 4, wc);
	check(n == 2 && wc[0].wr_id == 0xd2 && wc[1].wr_id == 0xd4 &&
	      syscalls() == calls,
	      "reset: the QP's earlier CQEs are not polled, the rest are",
	      "n %d, wr_id %#llx", n, (unsigned long long)wc[0].wr_id);
	mine.wr_id = 0xd5;
	push_cqe(o->fcq, &mine);
	n = ibv_poll_cq(o->cq, 4, wc);
	check(n == 1 && wc[0].wr_id == 0xd5,
	      "reset: the discard ends where the CQ stood", "n %d", n);
}

/* A destroy the kernel refuses. */
TEST_F(cq, destroy_cq_refused)
{
	struct objs *o = &self->o;
	int ret;

	fk.fail_cmd = IB_USER_VERBS_CMD_DESTROY_CQ;
	fk.fail_err = EBUSY;
	ret = ibv_destroy_cq(o->cq);
	check(ret == EBUSY && mapped_as(o->fcq->ring, PROT_READ),
	      "destroy_cq refused by the kernel: EBUSY, ring kept",
	      "ret %d", ret);
}

/* ibv_create_cq_ex requests the provider refuses before the kernel. */
TEST_F(ctx, cqex_refused)
{
	struct objs *o = &self->o;
	static const struct {
		struct ibv_cq_init_attr_ex attr;
		int err;
		const char *what;
	} bad[] = {
		{ { .cqe = 8, .wc_flags = IBV_WC_EX_WITH_CVLAN }, EOPNOTSUPP,
		  "CVLAN" },
		{ { .cqe = 8, .wc_flags = IBV_WC_EX_WITH_FLOW_TAG },
		  EOPNOTSUPP, "flow tag" },
		{ { .cqe = 8, .comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		    .flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN }, EOPNOTSUPP,
		  "IGNORE_OVERRUN" },
		{ { .cqe = 8, .comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		    .flags = 1 << 7 }, EINVAL, "an unknown flag" },
		{ { .cqe = 8, .comp_mask = IBV_CQ_INIT_ATTR_MASK_PD },
		  EINVAL, "no parent domain" },
		{ { .cqe = 8, .comp_mask = 1 << 5 }, EINVAL,
		  "an unknown comp_mask bit" },
	};
	unsigned int i, calls = syscalls();
	struct ibv_cq_init_attr_ex attr;
	struct ibv_cq_ex *cqx;
	char name[96];

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		attr = bad[i].attr;
		errno = 0;
		cqx = ibv_create_cq_ex(o->ctx, &attr);
		snprintf(name, sizeof(name), "create_cq_ex: %s refused (%s)",
			 bad[i].what, bad[i].err == EINVAL ? "EINVAL" :
			 "EOPNOTSUPP");
		check(!cqx && errno == bad[i].err, name, "cq %p, errno %d",
		      (void *)cqx, errno);
		if (cqx)
			ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
	}
	check(syscalls() == calls, "create_cq_ex: refused without a command",
	      "%u system calls", syscalls() - calls);
}

static uint64_t ns_of(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/*
 * ibv_query_rt_values_ex: a device whose hca_core_clock is vhca's reads
 * CLOCK_MONOTONIC_RAW's nanoseconds into raw_clock.tv_nsec, asking the
 * kernel once per context; unknown comp_mask bits are EINVAL.
 */
TEST_F(ctx, rt_values)
{
	struct ibv_values_ex v = { .comp_mask = 1 << 1 };
	unsigned int queries = fk.ex_query_device, calls;
	struct timespec t0, t1;
	uint64_t first;
	int ret;

	fk.clock_khz = VHCA_CORE_CLOCK_KHZ;
	ret = ibv_query_rt_values_ex(self->o.ctx, &v);
	check(ret == EINVAL && fk.ex_query_device == queries,
	      "query_rt_values_ex: an unknown comp_mask bit: EINVAL",
	      "ret %d", ret);
	v = (struct ibv_values_ex){ .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	clock_gettime(CLOCK_MONOTONIC_RAW, &t0);
	ret = ibv_query_rt_values_ex(self->o.ctx, &v);
	clock_gettime(CLOCK_MONOTONIC_RAW, &t1);
	first = v.raw_clock.tv_nsec;
	check(!ret && v.comp_mask == IBV_VALUES_MASK_RAW_CLOCK &&
	      v.raw_clock.tv_sec == 0 && first >= ns_of(&t0) &&
	      first <= ns_of(&t1) && fk.ex_query_device == queries + 1,
	      "query_rt_values_ex: CLOCK_MONOTONIC_RAW's ns in tv_nsec",
	      "ret %d, %llu not in [%llu, %llu]", ret,
	      (unsigned long long)first, (unsigned long long)ns_of(&t0),
	      (unsigned long long)ns_of(&t1));
	calls = syscalls();
	ret = ibv_query_rt_values_ex(self->o.ctx, &v);
	check(!ret && (uint64_t)v.raw_clock.tv_nsec >= first &&
	      syscalls() == calls,
	      "query_rt_values_ex again: no system call, the clock moved on",
	      "ret %d, %u system calls", ret, syscalls() - calls);
	fk.clock_khz = 0;
}

/* A device with another clock (an older kernel reports none) has none. */
TEST_F(ctx, rt_values_other_clock)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	int ret = ibv_query_rt_values_ex(self->o.ctx, &v);

	check(ret == EOPNOTSUPP,
	      "query_rt_values_ex: hca_core_clock not vhca's: EOPNOTSUPP",
	      "ret %d", ret);
}

/* Polls @cqx empty through the ibv_cq_ex API. */
static void drain_cqex(struct ibv_cq_ex *cqx)
{
	struct ibv_poll_cq_attr pa = {};

	if (ibv_start_poll(cqx, &pa))
		return;
	while (!ibv_next_poll(cqx))
		;
	ibv_end_poll(cqx);
}

/*
 * Timestamps: libibverbs asks for IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION,
 * the ring has 64-byte CQEs, both poll APIs step over them and the
 * accessors read their times, also after a resize; a kernel answering
 * another CQE size fails the create (EPROTO), its CQ destroyed.
 */
TEST_F(ctx, cqex_timestamps)
{
	struct objs *o = &self->o;
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 10, .wc_flags = IBV_WC_STANDARD_FLAGS |
				       IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
				       IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	};
	struct vhca_cqe c = {
		.wr_id = 41, .opcode = IBV_WC_RECV, .qp_num = 0x55,
		.byte_len = 300,
	};
	struct ibv_poll_cq_attr pa = {};
	struct fake_cq *fcq = NULL;
	struct ibv_cq_ex *cqx;
	struct ibv_wc wc;
	int r1, r2, n;

	cqx = ibv_create_cq_ex(o->ctx, &attr);
	if (cqx)
		fcq = find_cq(cqx->handle);
	check(cqx && fcq && fcq->cqe_size == sizeof(struct vhca_cqe_ts) &&
	      fk.ex_create_cq.flags == IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION &&
	      cqx->read_completion_ts && cqx->read_completion_wallclock_ns,
	      "create_cq_ex with both timestamps: the kernel's flag, 64-byte CQEs",
	      "cq %p, errno %d", (void *)cqx, errno);
	if (!fcq)
		return;
	push_cqe_ts(fcq, &c, 1000, 1700000000123456789ULL);
	c.wr_id = 42;
	c.byte_len = 301;
	push_cqe_ts(fcq, &c, 1001, 1700000000123456790ULL);
	r1 = ibv_start_poll(cqx, &pa);
	check(!r1 && cqx->wr_id == 41 && ibv_wc_read_byte_len(cqx) == 300 &&
	      ibv_wc_read_qp_num(cqx) == 0x55 &&
	      ibv_wc_read_completion_ts(cqx) == 1000 &&
	      ibv_wc_read_completion_wallclock_ns(cqx) ==
	      1700000000123456789ULL,
	      "start_poll: the CQE and its times", "ret %d, wr_id %llu", r1,
	      (unsigned long long)cqx->wr_id);
	r2 = r1 ? r1 : ibv_next_poll(cqx);
	check(!r2 && cqx->wr_id == 42 && ibv_wc_read_byte_len(cqx) == 301 &&
	      ibv_wc_read_completion_ts(cqx) == 1001 &&
	      ibv_wc_read_completion_wallclock_ns(cqx) ==
	      1700000000123456790ULL,
	      "next_poll: the next 64-byte CQE and its times", "ret %d", r2);
	if (!r1)
		ibv_end_poll(cqx);

	c.wr_id = 43;
	push_cqe_ts(fcq, &c, 2000, 2);
	n = ibv_resize_cq(ibv_cq_ex_to_cq(cqx), 100);
	check(!n && fcq->count == 128,
	      "resize_cq of a CQ with timestamps", "ret %d", n);
	r1 = ibv_start_poll(cqx, &pa);
	check(!r1 && cqx->wr_id == 43 &&
	      ibv_wc_read_completion_ts(cqx) == 2000 &&
	      ibv_wc_read_completion_wallclock_ns(cqx) == 2,
	      "start_poll after the resize: the moved CQE's times",
	      "ret %d", r1);
	if (!r1)
		ibv_end_poll(cqx);
	c.wr_id = 44;
	push_cqe_ts(fcq, &c, 3000, 3);
	n = ibv_poll_cq(ibv_cq_ex_to_cq(cqx), 1, &wc);
	check(n == 1 && wc.wr_id == 44 && wc.qp_num == 0x55,
	      "ibv_poll_cq steps over 64-byte CQEs", "n %d", n);
	drain_cqex(cqx);
	check(!ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), "destroy it", "failed");

	attr.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	cqx = ibv_create_cq_ex(o->ctx, &attr);
	check(cqx && !cqx->read_completion_ts &&
	      cqx->read_completion_wallclock_ns,
	      "create_cq_ex with the wall clock only: its accessor only",
	      "cq %p, errno %d", (void *)cqx, errno);
	if (cqx)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));

	fk.cqe_size_resp = sizeof(struct vhca_cqe);
	fk.destroyed = 0;
	errno = 0;
	cqx = ibv_create_cq_ex(o->ctx, &attr);
	check(!cqx && errno == EPROTO && fk.destroyed,
	      "a kernel answering 32-byte CQEs to timestamps: EPROTO, destroyed",
	      "cq %p, errno %d", (void *)cqx, errno);
	fk.cqe_size_resp = sizeof(struct vhca_cqe_ts);
	attr.wc_flags = IBV_WC_STANDARD_FLAGS;
	errno = 0;
	cqx = ibv_create_cq_ex(o->ctx, &attr);
	check(!cqx && errno == EPROTO,
	      "a kernel answering 64-byte CQEs to none: EPROTO", "cq %p",
	      (void *)cqx);
	fk.cqe_size_resp = 0;
}

TEST_F(ctx, cqex)
{
	struct objs *o = &self->o;
	struct ibv_cq_init_attr_ex attr = {
		.cqe = 50, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS,
		.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
	};
	struct vhca_cqe c1 = {
		.wr_id = 0x0102030405060708ULL, .status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_RECV_RDMA_WITH_IMM, .flags = VHCA_CQE_WITH_IMM,
		.sl = 3, .qp_num = 0x77, .byte_len = 1234,
		.imm_data = htobe32(0xa5a5f00d), .src_qp = 0x99,
	};
	struct vhca_cqe c2 = {
		.wr_id = 9, .status = IBV_WC_REM_ACCESS_ERR,
		.opcode = IBV_WC_RDMA_WRITE, .qp_num = 0x78, .vendor_err = 0x21,
	};
	struct ibv_poll_cq_attr pa = {};
	struct fake_cq *fcq = NULL;
	struct ibv_cq_ex *cqx;
	struct vhca_db_rec *db;
	int r1, r2, r3, n;
	unsigned int calls;
	struct ibv_wc wc;

	cqx = ibv_create_cq_ex(o->ctx, &attr);
	if (cqx)
		fcq = find_cq(cqx->handle);
	check(cqx && fcq && fk.create_cq.cqe == 50 && cqx->cqe == 63 &&
	      mapped_as(fcq->ring, PROT_READ),
	      "ibv_create_cq_ex reaches CREATE_CQ, ring mapped read-only",
	      "cq %p, errno %d", (void *)cqx, errno);
	if (!fcq)
		return;
	check(cqx->read_byte_len && cqx->read_imm_data && cqx->read_qp_num &&
	      cqx->read_src_qp && cqx->read_slid && cqx->read_sl &&
	      cqx->read_dlid_path_bits && !cqx->read_completion_ts &&
	      !cqx->read_cvlan && !cqx->read_flow_tag,
	      "create_cq_ex: accessors of the asked fields only", "not so");

	db = fk_db(fcq->db_index);
	calls = syscalls();
	r1 = ibv_start_poll(cqx, &pa);
	check(r1 == ENOENT && db->head[0] == 0,
	      "start_poll on an empty CQ: ENOENT", "ret %d", r1);
	push_cqe(fcq, &c1);
	push_cqe(fcq, &c2);
	r1 = ibv_start_poll(cqx, &pa);
	check(!r1 && cqx->wr_id == c1.wr_id &&
	      cqx->status == IBV_WC_SUCCESS &&
	      ibv_wc_read_opcode(cqx) == IBV_WC_RECV_RDMA_WITH_IMM &&
	      ibv_wc_read_byte_len(cqx) == 1234 &&
	      ibv_wc_read_imm_data(cqx) == htobe32(0xa5a5f00d) &&
	      ibv_wc_read_wc_flags(cqx) == IBV_WC_WITH_IMM &&
	      ibv_wc_read_qp_num(cqx) == 0x77 &&
	      ibv_wc_read_src_qp(cqx) == 0x99 && ibv_wc_read_sl(cqx) == 3 &&
	      ibv_wc_read_slid(cqx) == 0 &&
	      ibv_wc_read_dlid_path_bits(cqx) == 0 &&
	      ibv_wc_read_vendor_err(cqx) == 0,
	      "start_poll: the first CQE through the accessors",
	      "ret %d, wr_id %#llx", r1, (unsigned long long)cqx->wr_id);
	if (r1)
		goto out;
	r2 = ibv_next_poll(cqx);
	check(!r2 && cqx->wr_id == 9 && cqx->status == IBV_WC_REM_ACCESS_ERR &&
	      ibv_wc_read_opcode(cqx) == IBV_WC_RDMA_WRITE &&
	      ibv_wc_read_vendor_err(cqx) == 0x21 &&
	      ibv_wc_read_wc_flags(cqx) == 0 && ibv_wc_read_qp_num(cqx) == 0x78,
	      "next_poll: the error CQE", "ret %d", r2);
	r3 = ibv_next_poll(cqx);
	check(r3 == ENOENT && db->head[0] == 0,
	      "next_poll past the last CQE: ENOENT, index not yet published",
	      "ret %d, head %u", r3, db->head[0]);
	ibv_end_poll(cqx);
	check(db->head[0] == 2 && syscalls() == calls,
	      "end_poll publishes the consumer index; no system call",
	      "head %u, %u system calls", db->head[0], syscalls() - calls);

	push_cqe(fcq, &c2);
	n = ibv_poll_cq(ibv_cq_ex_to_cq(cqx), 1, &wc);
	check(n == 1 && wc.wr_id == 9 && wc.vendor_err == 0x21 &&
	      db->head[0] == 3,
	      "ibv_poll_cq on ibv_cq_ex_to_cq() reads the same ring",
	      "n %d", n);
	check(!ibv_req_notify_cq(ibv_cq_ex_to_cq(cqx), 0) &&
	      fk.notify.cq_handle == cqx->handle,
	      "req_notify_cq on an extended CQ", "failed");
out:
	drain_cqex(cqx);
	check(!ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)) && unmapped(fcq->ring),
	      "destroy the extended CQ, ring unmapped", "failed");
}

/*
 * A CQ whose records are in the context's second pair of areas: the pair
 * mapped at the response's offsets on first use (doorbells read-write,
 * status read-only) and used by the fast path; a second record of the
 * pair maps nothing more; a response placing the pair elsewhere is
 * refused; a record of the first pair with no offsets (a kernel of one
 * pair) is taken.  The tear-down sees every mapping undone at close.
 */
TEST_F(ctx, records_second_area)
{
	struct objs *o = &self->o;
	struct vhca_cqe c = {
		.wr_id = 0xa2ea, .status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_SEND, .qp_num = 0x12,
	};
	struct fake_cq *f1 = NULL, *f2 = NULL;
	struct ibv_cq *cq1, *cq2, *cq3;
	unsigned int maps;
	struct ibv_wc wc;
	int n;

	fk.next_rec = AREA_RECS - 1;
	cq1 = ibv_create_cq(o->ctx, 10, NULL, NULL, 0);
	if (cq1)
		f1 = find_cq(cq1->handle);
	check(f1 && f1->db_index == AREA_RECS && fk.area_db[1] &&
	      mapped_as(fk.area_db[1], PROT_READ | PROT_WRITE) &&
	      mapped_as(fk.area_st[1], PROT_READ),
	      "create_cq: record 1024 maps the second pair of areas",
	      "cq %p, errno %d", (void *)cq1, errno);
	if (!f1)
		return;
	push_cqe(f1, &c);
	n = ibv_poll_cq(cq1, 1, &wc);
	check(n == 1 && wc.wr_id == c.wr_id &&
	      fk_db(f1->db_index)->head[0] == 1,
	      "poll_cq reads and publishes through the second pair",
	      "n %d, head %u", n, fk_db(f1->db_index)->head[0]);

	maps = fk.nmaps;
	cq2 = ibv_create_cq(o->ctx, 10, NULL, NULL, 0);
	if (cq2)
		f2 = find_cq(cq2->handle);
	check(f2 && f2->db_index == AREA_RECS + 1 && fk.nmaps == maps + 1,
	      "a second record of the pair maps only its CQ's ring",
	      "cq %p, %u mappings more", (void *)cq2, fk.nmaps - maps);

	fk.zero_offsets = true;
	errno = 0;
	cq3 = ibv_create_cq(o->ctx, 10, NULL, NULL, 0);
	check(!cq3 && errno == EPROTO,
	      "a response placing the second pair elsewhere: EPROTO",
	      "cq %p, errno %d", (void *)cq3, errno);
	fk.next_rec = 5;
	cq3 = ibv_create_cq(o->ctx, 10, NULL, NULL, 0);
	check(cq3 && !ibv_destroy_cq(cq3),
	      "a first-pair record without offsets (one-pair kernel) taken",
	      "cq %p, errno %d", (void *)cq3, errno);
	fk.zero_offsets = false;

	check((!cq2 || !ibv_destroy_cq(cq2)) && !ibv_destroy_cq(cq1),
	      "destroy both CQs of the second pair", "failed");
}
