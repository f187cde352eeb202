/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* vhca provider: per-device, per-context and per-object state. */
#ifndef VHCA_H
#define VHCA_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include <rdma/rdma_user_ioctl_cmds.h>
#include <rdma/vhca-abi.h>

#include "vhca_pabi.h"

struct vhca_device {
	struct verbs_device ibv_dev;
};

/*
 * A pair of areas of records (see struct vhca_alloc_ucontext_resp): the
 * doorbell records the provider writes and the status records only the
 * device writes, at the mmap offsets the kernel gave.
 */
struct vhca_area {
	struct vhca_db_rec *db;
	const struct vhca_status_rec *status;
	uint64_t db_offset;
	uint64_t status_offset;
};

/*
 * A user context and the areas of records the kernel gave it: each CQ, QP
 * and SRQ owns the pair of records at its db_index, slot db_index %
 * area_recs of areas[db_index / area_recs].  areas[0] is mapped with the
 * context, the others when the first object with a record in them is
 * created (under areas_lock); all are unmapped with the context.
 */
struct vhca_context {
	struct verbs_context ibv_ctx;
	size_t db_size;			/* bytes of each doorbell area */
	size_t status_size;		/* and of each status area */
	uint32_t area_recs;
	pthread_mutex_t areas_lock;
	struct vhca_area areas[VHCA_UCTX_MAX_AREAS];
	/*
	 * Whether the device has VHCA_CORE_CLOCK_KHZ's core clock (its
	 * hca_core_clock), for ibv_query_rt_values_ex: 0 not asked yet, 1
	 * yes, -1 no.  Atomic: any thread may ask first.
	 */
	int core_clock;
};

/*
 * A PD (parent NULL), or a parent domain over one (ibv_alloc_parent_domain):
 * it carries its PD's context and handle in ibv_pd, so every command that
 * takes a PD sees the PD's.  A parent domain's alloc and free (both or
 * neither) allocate the provider's own memory of the QPs, CQs and SRQs
 * created in it (struct vhca_obj); the rings are the kernel's memory,
 * never theirs.  users counts the parent domains over a PD, and the
 * objects created in a parent domain; dealloc fails with EBUSY while
 * there are any.
 */
struct vhca_pd {
	struct ibv_pd ibv_pd;
	struct vhca_pd *parent;		/* a parent domain's PD */
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	void *pd_context;
	atomic_uint users;
};

/*
 * resource_type of a parent domain's allocator: the object whose memory
 * it is (vhca-provider(7)).
 */
enum {
	VHCA_RES_TYPE_QP = 1,
	VHCA_RES_TYPE_CQ = 2,
	VHCA_RES_TYPE_SRQ = 3,
};

/*
 * Where an object's memory came from: its parent domain (NULL: a PD,
 * calloc()), and whether that parent domain's alloc gave it (custom) or
 * answered IBV_ALLOCATOR_USE_DEFAULT.
 */
struct vhca_obj {
	struct vhca_pd *domain;
	uint64_t type;
	bool custom;
};

/*
 * CQEs a QP's reset discarded from one of its CQs (as mlx5's provider
 * cleans its CQs): those of qpn before the CQ's producer index at the
 * reset, until.  Linked on the CQ's discard list until the CQ's consumer
 * index reaches until, or the QP is destroyed.
 */
struct vhca_cq_discard {
	struct vhca_cq_discard *next;
	uint32_t qpn;
	uint32_t until;
	bool linked;
};

/*
 * A mapped completion ring; the provider consumes, the device produces.
 * Both poll APIs (ibv_poll_cq, and ibv_start_poll/next_poll/end_poll on a
 * CQ from ibv_create_cq_ex) consume through vhca_cq_pop() under lock,
 * which a CQ created IBV_CREATE_CQ_ATTR_SINGLE_THREADED skips on the poll
 * paths.  cur is the CQE the ibv_wc_read_* accessors read, from
 * start_poll or next_poll until the next of them or end_poll; its times
 * only on a CQ with timestamps (cqe_size is then that of struct
 * vhca_cqe_ts).
 */
struct vhca_cq {
	struct verbs_cq vcq;
	struct vhca_obj obj;
	pthread_spinlock_t lock;
	bool single_threaded;
	const void *ring;		/* NULL after a failed resize */
	size_t ring_size;
	uint32_t count;			/* entries, a power of two */
	uint32_t cqe_size;		/* bytes per entry */
	uint32_t ci;			/* consumer index */
	uint32_t tail;			/* producer index as last read */
	struct vhca_db_rec *db;		/* head[0]: ci, for the device */
	const struct vhca_status_rec *st;	/* tail[0]: producer index */
	struct vhca_cq_discard *discard;	/* under lock */
	struct vhca_cqe_ts cur;
};

/*
 * A mapped work ring (SQ, RQ or SRQ); the provider produces at head and
 * publishes it in *db_head, the device consumes and reports *st_tail.
 */
struct vhca_wq {
	pthread_spinlock_t lock;
	void *buf;			/* NULL: the queue has no ring */
	size_t size;
	uint32_t count;			/* slots, a power of two */
	uint32_t stride;		/* bytes per slot */
	uint32_t head;
	uint32_t max_sge;
	uint32_t *db_head;
	const uint32_t *st_tail;
};

/*
 * A QP.  With the ibv_qp_ex API (vqp.qp_ex, send_ops non-zero), a batch is
 * built between wr_start and wr_complete under sq.lock: each work request
 * is written into the slot at sq.head, which advances unpublished; wqe is
 * the one the setters fill; the batch's first error is kept in ex_err and
 * returned by wr_complete, which then discards the batch, as wr_abort
 * does, by rewinding sq.head to ex_start.
 */
struct vhca_qp {
	struct verbs_qp vqp;
	struct vhca_obj obj;
	struct vhca_wq sq;		/* record index 0 */
	struct vhca_wq rq;		/* record index 1 */
	const struct vhca_status_rec *st;
	uint32_t max_inline;
	bool sq_sig_all;
	uint64_t send_ops;		/* IBV_QP_EX_WITH_* granted */
	struct vhca_send_wqe *wqe;
	uint32_t ex_start;
	int ex_err;
	struct vhca_cq_discard discard[2];	/* send CQ, receive CQ */
};

/* An SRQ, basic or XRC (vsrq.srq_num: the XRC SRQ's number). */
struct vhca_srq {
	struct verbs_srq vsrq;
	struct vhca_obj obj;
	struct vhca_wq rq;		/* record index 0 */
};

struct vhca_ah {
	struct ibv_ah ibv_ah;
	uint32_t ah_index;		/* goes into UD send WQEs */
};

#define vhca_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

static inline struct vhca_device *to_vdev(struct ibv_device *ibdev)
{
	return vhca_container_of(ibdev, struct vhca_device, ibv_dev.device);
}

static inline struct vhca_context *to_vctx(struct ibv_context *ibctx)
{
	return vhca_container_of(ibctx, struct vhca_context, ibv_ctx.context);
}

static inline struct vhca_pd *to_vpd(struct ibv_pd *ibpd)
{
	return vhca_container_of(ibpd, struct vhca_pd, ibv_pd);
}

static inline struct vhca_cq *to_vcq(struct ibv_cq *ibcq)
{
	return vhca_container_of(ibcq, struct vhca_cq, vcq.cq);
}

static inline struct vhca_cq *cqex_to_vcq(struct ibv_cq_ex *cqx)
{
	return vhca_container_of(cqx, struct vhca_cq, vcq.cq_ex);
}

static inline struct vhca_qp *to_vqp(struct ibv_qp *ibqp)
{
	return vhca_container_of(ibqp, struct vhca_qp, vqp.qp);
}

static inline struct vhca_qp *qpex_to_vqp(struct ibv_qp_ex *qpx)
{
	return vhca_container_of(qpx, struct vhca_qp, vqp.qp_ex);
}

static inline struct vhca_srq *to_vsrq(struct ibv_srq *ibsrq)
{
	return vhca_container_of(ibsrq, struct vhca_srq, vsrq.srq);
}

static inline struct vhca_ah *to_vah(struct ibv_ah *ibah)
{
	return vhca_container_of(ibah, struct vhca_ah, ibv_ah);
}

/*
 * vhca.c: the core's ioctl methods, issued with the kernel's uAPI
 * (<rdma/rdma_user_ioctl_cmds.h>) for the verbs libibverbs' private ABI
 * has no command of the same form for in every release.
 */
/* An attribute the kernel reads in place: up to 8 bytes of value. */
static inline struct ib_uverbs_attr vhca_attr_in(uint16_t id, uint16_t len,
						 uint64_t value)
{
	return (struct ib_uverbs_attr){ .attr_id = id, .len = len,
					.data = value };
}

/* An object handle: an existing one, or 0 for one the method creates. */
static inline struct ib_uverbs_attr vhca_attr_obj(uint16_t id,
						  uint32_t handle)
{
	return (struct ib_uverbs_attr){ .attr_id = id, .data = handle };
}

/*
 * A buffer the kernel writes len bytes to; mandatory: a kernel that does
 * not know the attribute must fail, not ignore it.
 */
static inline struct ib_uverbs_attr vhca_attr_out(uint16_t id, void *buf,
						  uint16_t len)
{
	return (struct ib_uverbs_attr){ .attr_id = id, .len = len,
					.flags = UVERBS_ATTR_F_MANDATORY,
					.data = (uintptr_t)buf };
}

/* The most attributes one method here passes (DM_MR_REG). */
#define VHCA_IOCTL_ATTRS 8

/*
 * Runs method of object with the n attributes at attrs, which get back
 * what the kernel wrote into them (the handles of new objects).
 */
int vhca_ioctl(struct ibv_context *ibctx, uint16_t object, uint16_t method,
	       struct ib_uverbs_attr *attrs, uint16_t n);

/* vhca_verbs.c: the verbs that go through the kernel. */
struct ibv_pd *vhca_alloc_pd(struct ibv_context *ibctx);
int vhca_dealloc_pd(struct ibv_pd *pd);
struct ibv_pd *vhca_alloc_parent_domain(struct ibv_context *ibctx,
					struct ibv_parent_domain_init_attr *attr);
/*
 * ibv_import_pd/ibv_import_mr: a PD or MR of the context, by handle, which
 * another process created on the command fd it shares; unimport forgets
 * it without destroying it.
 */
struct ibv_pd *vhca_import_pd(struct ibv_context *ibctx, uint32_t pd_handle);
void vhca_unimport_pd(struct ibv_pd *pd);
struct ibv_mr *vhca_import_mr(struct ibv_pd *pd, uint32_t mr_handle);
void vhca_unimport_mr(struct ibv_mr *mr);
/*
 * Zeroed memory of @size bytes for an object of @type created in @pd
 * (from a parent domain's allocator when it has one; counted as one of
 * the parent domain's users), its origin in *obj; NULL (errno set)
 * without.  vhca_obj_free() gives it back.
 */
void *vhca_obj_alloc(struct ibv_pd *pd, size_t size, uint64_t type,
		     struct vhca_obj *obj);
void vhca_obj_free(void *p, const struct vhca_obj *obj);
struct ibv_mr *vhca_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			   uint64_t hca_va, int access);
int vhca_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		  void *addr, size_t length, int access);
int vhca_dereg_mr(struct verbs_mr *vmr);
struct ibv_dm *vhca_alloc_dm(struct ibv_context *ibctx,
			     struct ibv_alloc_dm_attr *attr);
int vhca_free_dm(struct ibv_dm *ibdm);
struct ibv_dm *vhca_import_dm(struct ibv_context *ibctx, uint32_t dm_handle);
void vhca_unimport_dm(struct ibv_dm *ibdm);
struct ibv_mr *vhca_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			      uint64_t dm_offset, size_t length,
			      unsigned int access);
struct ibv_mw *vhca_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int vhca_dealloc_mw(struct ibv_mw *mw);
struct ibv_cq *vhca_create_cq(struct ibv_context *ibctx, int cqe,
			      struct ibv_comp_channel *channel,
			      int comp_vector);
struct ibv_cq_ex *vhca_create_cq_ex(struct ibv_context *ibctx,
				    struct ibv_cq_init_attr_ex *attr);
int vhca_resize_cq(struct ibv_cq *ibcq, int cqe);
int vhca_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
int vhca_destroy_cq(struct ibv_cq *ibcq);
struct ibv_qp *vhca_create_qp(struct ibv_pd *pd,
			      struct ibv_qp_init_attr *attr);
struct ibv_qp *vhca_create_qp_ex(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr);
int vhca_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		   int attr_mask);
int vhca_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask, struct ibv_qp_init_attr *init_attr);
int vhca_destroy_qp(struct ibv_qp *ibqp);
struct ibv_qp *vhca_open_qp(struct ibv_context *ibctx,
			    struct ibv_qp_open_attr *attr);
struct ibv_ah *vhca_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int vhca_destroy_ah(struct ibv_ah *ibah);

/* Maps a pair of areas of records at the offsets the kernel gave. */
int vhca_map_area(struct vhca_context *ctx, struct vhca_area *area,
		  uint64_t db_offset, uint64_t status_offset);
/*
 * The records of object @index, whose create response placed its areas at
 * @db_offset and @status_offset: 0, or EPROTO when the context can have
 * none such, or mmap()'s error.
 */
int vhca_recs(struct ibv_context *ibctx, uint32_t index, uint64_t db_offset,
	      uint64_t status_offset, struct vhca_db_rec **db,
	      const struct vhca_status_rec **st);
/*
 * Checks a work ring the kernel described (@count slots of @stride bytes in
 * @size, room for @slots_needed WQEs of @wqe_bytes) and maps it read-write.
 * A ring of count 0 is no ring: size and slots_needed must be 0 too.
 */
int vhca_wq_map(struct ibv_context *ibctx, struct vhca_wq *wq,
		uint64_t offset, uint32_t size, uint32_t count,
		uint32_t stride, uint32_t slots_needed, uint64_t wqe_bytes);
void vhca_wq_unmap(struct vhca_wq *wq);
/* Bytes of a receive WQE with @max_sge SGEs. */
uint64_t vhca_recv_wqe_bytes(uint32_t max_sge);

/* vhca_srq.c: SRQs (basic and XRC) and XRC domains. */
struct ibv_srq *vhca_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr);
struct ibv_srq *vhca_create_srq_ex(struct ibv_context *ibctx,
				   struct ibv_srq_init_attr_ex *attr);
int vhca_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);
int vhca_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int attr_mask);
int vhca_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int vhca_destroy_srq(struct ibv_srq *ibsrq);
struct ibv_xrcd *vhca_open_xrcd(struct ibv_context *ibctx,
				struct ibv_xrcd_init_attr *attr);
int vhca_close_xrcd(struct ibv_xrcd *ibxrcd);

/* vhca_post.c: the fast path on the mapped rings, no system call. */
int vhca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);
int vhca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		   struct ibv_recv_wr **bad_wr);
int vhca_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);
/*
 * ibv_bind_mw (type 1 windows): a BIND_MW WQE on the QP's ring with the
 * window's next rkey (ibv_inc_rkey), which mw->rkey holds once posted.
 */
int vhca_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		 struct ibv_mw_bind *mw_bind);
/* A BIND_MW WQE's operands: mw to the new rkey over info (also qp_ex's). */
void vhca_wqe_set_bind(struct vhca_send_wqe *wqe, const struct ibv_mw *mw,
		       uint32_t rkey, const struct ibv_mw_bind_info *info);
int vhca_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc);
/* The poll lock, which a single-threaded CQ does without. */
static inline void vhca_cq_lock(struct vhca_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_lock(&cq->lock);
}

static inline void vhca_cq_unlock(struct vhca_cq *cq)
{
	if (!cq->single_threaded)
		pthread_spin_unlock(&cq->lock);
}

/*
 * vhca_post.c, for both poll APIs, under vhca_cq_lock() on a CQ with a
 * ring: copies the next CQE to report into *cqe (cq->cqe_size bytes) and
 * consumes it (CQEs a QP's reset discarded are consumed and skipped);
 * false when there is none.  vhca_cq_publish() tells the device the
 * consumer index.
 */
bool vhca_cq_pop(struct vhca_cq *cq, struct vhca_cqe_ts *cqe);
void vhca_cq_publish(struct vhca_cq *cq);
/* The IBV_WC_* flags of a CQE. */
unsigned int vhca_cqe_wc_flags(const struct vhca_cqe *cqe);
/* The ring helpers of vhca_post.c, for vhca_qpex.c. */
void *vhca_wq_slot(const struct vhca_wq *wq, uint32_t index);
bool vhca_wq_full(const struct vhca_wq *wq);
void vhca_wq_publish(struct vhca_wq *wq);
void vhca_copy_sges(struct vhca_sge *dst, const struct ibv_sge *src,
		    int num_sge);
/*
 * After publishing the SQ head: what post_send does next, the kick when
 * vhca_kick_needed() says so; 0 or the kick's error.
 */
int vhca_sq_kick(struct vhca_qp *qp);

/* vhca_qpex.c: the ibv_qp_ex work-request API. */
/*
 * 0, or EOPNOTSUPP for send_ops a QP of this type cannot have, or that
 * the kernel cannot carry (ATOMIC WRITE before Linux 6.2).
 */
int vhca_qpex_check_ops(struct ibv_context *ibctx, enum ibv_qp_type type,
			uint64_t send_ops);
/* Installs the API on a created QP; send_ops passed the check. */
void vhca_qpex_init(struct vhca_qp *qp, uint64_t send_ops);

/* vhca_cqex.c: the ibv_cq_ex poll API, and the device's clock. */
/*
 * 0, or the errno for an ibv_create_cq_ex request vhca cannot honour
 * (EINVAL for unknown bits or a PD that is not a parent domain of @ibctx,
 * EOPNOTSUPP for known features it lacks).
 */
int vhca_cqex_check(struct ibv_context *ibctx,
		    const struct ibv_cq_init_attr_ex *attr);
/* Installs the API on a created CQ; attr passed the check. */
void vhca_cqex_init(struct vhca_cq *cq, const struct ibv_cq_init_attr_ex *attr);
/* Whether a CQ asked for @wc_flags has CQEs with timestamps. */
bool vhca_cqex_timestamps(uint64_t wc_flags);
/*
 * ibv_query_rt_values_ex: the core clock's count (VHCA_CORE_CLOCK_KHZ) in
 * raw_clock.tv_nsec, tv_sec 0, as mlx4 and mlx5 report their cycles.
 */
int vhca_query_rt_values(struct ibv_context *ibctx,
			 struct ibv_values_ex *values);

#endif /* VHCA_H */
