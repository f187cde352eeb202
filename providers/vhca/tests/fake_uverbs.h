/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The dispatch test's fake kernel: fake_uverbs.c (the queues' commands in
 * fake_uverbs_queues.c) interposes on the libc calls libibverbs and the
 * provider make (the test binary is linked -rdynamic, so its definitions
 * come first) and answers those made on a uverbs fd: write() commands,
 * ioctl() (ENOTTY: libibverbs falls back to write(); the device memory
 * methods the provider issues itself are answered), mmap() and munmap()
 * of the context's areas and the rings, socket() (RDMA netlink refused, so
 * libibverbs reads sysfs).  Everything else is passed on.  Its mmap
 * entries are memfds: the fake kernel's own view of them (kview) is where
 * the tests read what the provider wrote and write what the device would.
 *
 * fk is all the fake kernel knows: what to inject, what it was asked,
 * what it answered.  A test process starts from the state main() left.
 */
#ifndef VHCA_FAKE_UVERBS_H
#define VHCA_FAKE_UVERBS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/vhca-abi.h>

#define PAGE		4096u
#define DB_OFFSET	(3 * PAGE)
#define STATUS_OFFSET	(7 * PAGE)
#define AREA_RECS	1024u		/* VHCA_UCTX_RECS */
#define AREA_SIZE	(AREA_RECS * 16u)

/* Distinctive answers of the fake kernel. */
#define FAKE_NODE_GUID	0x0002c9030000cafeULL
#define FAKE_MAX_QP	1234
#define FAKE_MAX_CQE	56789
#define FAKE_PART_ID	0x7ca1
#define FAKE_CLOCK_KHZ	98765
#define FAKE_CAP_FLAGS	0x2a5a0000u
#define FAKE_GID_TBL	77
#define FAKE_PD_HANDLE	0x51
#define FAKE_MR_HANDLE	0x61
#define FAKE_LKEY	0x1234abcdu
#define FAKE_RKEY	0x5678ef01u
#define FAKE_MW_HANDLE	0x65
#define FAKE_MW_RKEY	0x4321ab07u
#define FAKE_CQ_HANDLE	0x71
#define FAKE_QP_HANDLE	0x81
#define FAKE_QPN	0x4242
#define FAKE_SRQ_HANDLE	0x91
#define FAKE_SRQN	0x777
#define FAKE_SRQ_LIMIT	13
#define FAKE_XRCD_HANDLE 0xb1
#define FAKE_XSRQN	0x5a5a5
#define FAKE_AH_HANDLE	0xa1
#define FAKE_AH_INDEX	0x5eed
#define FAKE_DEST_QPN	0xabcde
#define FAKE_DM_HANDLE	0xc1
#define FAKE_DM_MR_HANDLE 0xc5
#define FAKE_DM_LKEY	0x2468ace1u
#define FAKE_DM_RKEY	0x13579bd1u

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct fake_map {
	void *addr;
	size_t len;
	int prot;
	int flags;
	off_t offset;
	bool mapped;
};

/* An mmap entry of the fake kernel: a memfd and the kernel's view of it. */
struct region {
	off_t offset;
	size_t size;
	bool writable;		/* may be mapped PROT_WRITE */
	bool live;		/* may be mapped */
	int memfd;
	void *kview;
};

struct fake_cq {
	bool live;
	uint32_t handle, count, db_index;
	uint32_t cqe_size;	/* bytes per CQE: with timestamps, 64 */
	struct region *ring;
};

struct fake_wq {
	uint32_t count, stride;
	struct region *ring;
};

struct fake_qp {
	bool live;
	uint32_t handle, qpn, db_index, state, type;
	struct fake_cq *scq, *rcq;
	struct fake_wq sq, rq;
};

struct fake_srq {
	bool live;
	uint32_t handle, db_index;
	struct fake_wq rq;
};

struct fake_kernel {
	struct vhca_alloc_ucontext_resp uresp;	/* GET_CONTEXT's answer */
	int get_context_err;	/* inject: GET_CONTEXT fails */
	int status_mmap_err;	/* inject: the status mmap fails */
	unsigned int fail_cmd;	/* inject: this command fails once ... */
	int fail_err;		/* ... with this error */
	bool bad_qp_resp;	/* inject: CREATE_QP answers an odd SQ count */
	bool before_6_2;	/* inject: a kernel without ATOMIC WRITE */
	uint64_t clock_khz;	/* inject: hca_core_clock (0: FAKE_CLOCK_KHZ) */
	uint32_t cqe_size_resp;	/* inject: CREATE_CQ's cqe_size, not the ring's */
	unsigned int get_context, query_device, ex_query_device, query_port;
	unsigned int other_cmds, bad_cmds, ioctls, netlink_refused;
	unsigned int writes;	/* every write() on a uverbs fd */
	unsigned int cmds[64];	/* per IB_USER_VERBS_CMD_* */
	struct fake_map maps[64];
	unsigned int nmaps;
	struct region regions[64];
	unsigned int nregions;
	off_t next_offset;
	uint32_t next_rec, next_handle;
	/*
	 * The context's pairs of areas of records (fk_db(), fk_st()), the
	 * first made with the context, the others by new_rec().  Create
	 * responses place a record's pair at its offsets, or (zero_offsets,
	 * as a kernel before more than one pair) at 0.
	 */
	struct region *area_db[4], *area_st[4];
	bool zero_offsets;
	struct fake_cq cqs[8];
	struct fake_qp qps[8];
	struct fake_srq srqs[4];
	/* What the last commands carried. */
	struct ib_uverbs_reg_mr reg_mr;
	struct ib_uverbs_create_cq create_cq;
	struct ib_uverbs_ex_create_cq ex_create_cq;
	struct ib_uverbs_resize_cq resize_cq;
	struct ib_uverbs_req_notify_cq notify;
	struct ib_uverbs_create_qp create_qp;
	struct ib_uverbs_modify_qp modify_qp;
	struct ib_uverbs_post_send post_send;
	struct ib_uverbs_create_srq create_srq;
	struct ib_uverbs_create_xsrq create_xsrq;
	struct ib_uverbs_open_xrcd open_xrcd;
	struct ib_uverbs_open_qp open_qp;
	struct ib_uverbs_modify_srq modify_srq;
	struct ib_uverbs_create_ah create_ah;
	struct ib_uverbs_rereg_mr rereg_mr;
	uint32_t destroyed;	/* handle of the last destroy/dealloc/dereg */
	/* Device memory (the ioctl methods): the live allocation, if any. */
	struct region *dm;
	uint64_t dm_align;	/* DM_ALLOC's log alignment */
	unsigned int dm_allocs, dm_frees, dm_mr_regs;
	struct {		/* DM_MR_REG's attributes */
		uint64_t offset, length;
		uint32_t pd, dm, access;
	} dm_mr;
};

extern struct fake_kernel fk;

/* The live objects of the fake kernel by handle, or NULL. */
struct fake_cq *find_cq(uint32_t handle);
struct fake_qp *find_qp(uint32_t handle);
struct fake_srq *find_srq(uint32_t handle);

/*
 * The device writes a CQE at the CQ's producer index and publishes it;
 * push_cqe_ts with its times, on a CQ with timestamps.
 */
void push_cqe(struct fake_cq *cq, const struct vhca_cqe *cqe);
void push_cqe_ts(struct fake_cq *cq, const struct vhca_cqe *cqe,
		 uint64_t core_clock, uint64_t wallclock_ns);

/*
 * Between the fake kernel's files: fake_uverbs.c's mmap entries (regions),
 * doorbell records and responses, which the queues' commands use; and
 * those commands (fake_uverbs_queues.c, each 0 or an errno), which
 * fake_uverbs.c's command dispatch calls.
 */
size_t page_up(size_t n);
void region_del(struct region *r);
struct region *region_new(off_t offset, size_t size, bool writable);
uint32_t pow2_at_least(uint32_t n);
uint32_t new_rec(void);
/* The kernel's view of record @index of either kind. */
struct vhca_db_rec *fk_db(uint32_t index);
struct vhca_status_rec *fk_st(uint32_t index);
/* Where a create response places the pair of areas of record @index. */
void rec_offsets(uint32_t index, __u64 *db, __u64 *st);
int respond(void *resp, size_t resp_len, const void *core,
	    size_t core_len, const void *drv, size_t drv_len);
int fake_create_cq(const void *req, void *resp, size_t resp_len);
/* The extended command: IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION taken. */
int fake_ex_create_cq(const void *req, void *resp, size_t resp_len);
int fake_resize_cq(const void *req, void *resp, size_t resp_len);
int fake_destroy_cq(uint32_t handle, void *resp, size_t resp_len);
int fake_open_qp(const struct ib_uverbs_open_qp *c, void *resp,
		 size_t resp_len);
int fake_create_qp(const void *req, void *resp, size_t resp_len);
int fake_modify_qp(const void *req);
int fake_query_qp(const struct ib_uverbs_query_qp *q, void *resp,
		  size_t resp_len);
int fake_post_send(const void *req, void *resp, size_t resp_len);
int fake_destroy_qp(uint32_t handle, void *resp, size_t resp_len);
int fake_create_srq(const void *req, void *resp, size_t resp_len);
int fake_create_xsrq(const void *req, void *resp, size_t resp_len);
int fake_query_srq(const struct ib_uverbs_query_srq *q, void *resp,
		   size_t resp_len);
int fake_destroy_srq(uint32_t handle, void *resp, size_t resp_len);

/*
 * Enters a private mount namespace (root only) with a fake
 * /dev/infiniband and a fake sysfs (SYSFS_PATH) for libibverbs to find, as
 * RDMAV_DRIVERS, the provider at @provider (/abs/path/libvhca): vhca0
 * (platform:vhca), vhca1 (another uverbs ABI), vhca2 (a PCI modalias) and
 * foo0 (vhca0's parent, renamed); fake_uverbs_system.c.  Fails the program (harness_fatal()) if it cannot.
 */
void enter_fake_system(const char *provider);

#endif /* VHCA_FAKE_UVERBS_H */
