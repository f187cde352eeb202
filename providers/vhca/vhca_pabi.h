/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The private provider ABI of libibverbs, as far as vhca uses it.
 *
 * In an rdma-core checkout (CMakeLists.txt defines VHCA_IN_TREE) the
 * provider uses the real <infiniband/driver.h> of that release.  Elsewhere
 * distributions ship no driver.h, so this header declares the private
 * interface itself, for the rdma-core release VHCA_RDMA_CORE (the Makefile's
 * RDMA_CORE; default 44, Debian 12's).  Each release exports it under one
 * symbol version, IBVERBS_PRIVATE_<VHCA_PABI_VERSION>:
 *
 *   rdma-core  36-56  57-58  59-61  62-63  64  65
 *   PABI       34     57     59     59     64  65
 *
 * 44 added the ATOMIC WRITE work request (and ibv_qp_ex's wr_atomic_write)
 * to verbs.h, which builds for 36 to 43 leave out; 57 added
 * ibv_cmd_get_context()'s fd_arr; 59 ibv_cmd_create_cq_ex()'s prov_attr
 * and three ops; 62 two more ops under the same PABI 59 (so 59-61 and 62-63
 * need separate builds); 64 two more; 65 ten, the completion counter
 * ops (comp_cntr), and no prototype change.  Every structure here is
 * shared with libibverbs by layout only: tests/layout_test.c checks sizes
 * and offsets against the values recorded per release, which
 * tests/provider-abis.sh proves against the real driver.h of that release.
 */
#ifndef VHCA_PABI_H
#define VHCA_PABI_H

#ifdef VHCA_IN_TREE

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>

#define VHCA_PABI_VERSION IBVERBS_PABI_VERSION

/* CMakeLists.txt passes the release's major version, for verbs.h's. */
#ifndef VHCA_RDMA_CORE
#error "VHCA_RDMA_CORE names the rdma-core release of the tree"
#endif

#else /* !VHCA_IN_TREE */

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#ifndef VHCA_RDMA_CORE
#define VHCA_RDMA_CORE 44
#endif

#if VHCA_RDMA_CORE < 36 || VHCA_RDMA_CORE > 65
#error "vhca_pabi.h knows rdma-core 36 to 65"
#elif VHCA_RDMA_CORE < 57
#define VHCA_PABI_VERSION 34
#elif VHCA_RDMA_CORE < 59
#define VHCA_PABI_VERSION 57
#elif VHCA_RDMA_CORE < 64
#define VHCA_PABI_VERSION 59
#elif VHCA_RDMA_CORE < 65
#define VHCA_PABI_VERSION 64
#else
#define VHCA_PABI_VERSION 65
#endif

#if defined(VHCA_PABI) && VHCA_PABI != VHCA_PABI_VERSION
#error "VHCA_PABI is not the PABI of VHCA_RDMA_CORE"
#endif

/* The number of ops in verbs_context_ops. */
#if VHCA_RDMA_CORE >= 65
#define VHCA_NUM_OPS 93
#elif VHCA_RDMA_CORE >= 64
#define VHCA_NUM_OPS 83
#elif VHCA_RDMA_CORE >= 62
#define VHCA_NUM_OPS 81
#elif VHCA_RDMA_CORE >= 59
#define VHCA_NUM_OPS 79
#else
#define VHCA_NUM_OPS 76
#endif

struct verbs_sysfs_dev;		/* libibverbs' view of a sysfs device */

/* Kinds of verbs_match_ent; a zeroed entry ends a match table. */
enum {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

/* One entry of a provider's match table. */
struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;	/* fnmatch() pattern */
		uint64_t driver_id;
	} u;
	uint16_t vendor;		/* VERBS_MATCH_PCI only */
	uint16_t device;
	uint8_t kind;
};

/* What a provider registers with verbs_register_driver_34(). */
struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;	/* uverbsN/abi_version range */
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;
	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);
	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);
	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

/* A doubly linked list node (ccan's list_node in rdma-core). */
struct verbs_list_node {
	struct verbs_list_node *next;
	struct verbs_list_node *prev;
};

/* The provider's device; allocated by alloc_device, filled by libibverbs. */
struct verbs_device {
	struct ibv_device device;	/* first: ibv_device * casts to it */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct verbs_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

/* verbs_xrcd.comp_mask: VERBS_XRCD_HANDLE, the handle is valid. */
enum {
	VERBS_XRCD_HANDLE = 1 << 0,
};

struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

/* An SRQ; ibv_cmd_create_srq_ex() fills all but srq for an XRC SRQ. */
struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

/* verbs_qp.comp_mask: VERBS_QP_EX makes ibv_qp_to_qp_ex() answer qp_ex. */
enum {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,
};

/*
 * qp_ex is the struct ibv_qp_ex of the <infiniband/verbs.h> built with: it
 * grew in 44 and 45, so comp_mask moves with the release the provider is
 * built for (the layout test records it per release).
 */
struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

/* Types of the ops newer releases added (their verbs.h defines them). */
struct ibv_buf;
struct ibv_comp_cntr;
struct ibv_comp_cntr_caps;
struct ibv_comp_cntr_init_attr;
struct ibv_dmah;
struct ibv_dmah_init_attr;
struct ibv_mr_init_attr;
struct ibv_qp_attach_comp_cntr_attr;

/*
 * Every op a provider may implement, VHCA_NUM_OPS function pointers sorted
 * by name.  verbs_set_ops() copies the non-NULL ones; libibverbs answers the
 * others with EOPNOTSUPP.
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
#if VHCA_RDMA_CORE >= 64
	void *(*alloc_buf)(struct ibv_pd *pd, size_t size,
			   struct ibv_buf **buf);
#endif
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
#if VHCA_RDMA_CORE >= 59
	struct ibv_dmah *(*alloc_dmah)(struct ibv_context *context,
				       struct ibv_dmah_init_attr *attr);
#endif
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(
		struct ibv_context *context,
		struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
#if VHCA_RDMA_CORE >= 65
	struct ibv_comp_cntr *(*create_comp_cntr)(
		struct ibv_context *context,
		struct ibv_comp_cntr_init_attr *attr);
#endif
	struct ibv_counters *(*create_counters)(
		struct ibv_context *context,
		struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(
		struct ibv_context *context,
		struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
		struct ibv_context *context,
		struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *attr);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *attr);
#if VHCA_RDMA_CORE >= 59
	int (*dealloc_dmah)(struct ibv_dmah *dmah);
#endif
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
#if VHCA_RDMA_CORE >= 65
	int (*destroy_comp_cntr)(struct ibv_comp_cntr *comp_cntr);
#endif
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
#if VHCA_RDMA_CORE >= 62
	int (*dm_export_dmabuf_fd)(struct ibv_dm *dm);
#endif
#if VHCA_RDMA_CORE >= 64
	void (*free_buf)(struct ibv_buf *buf);
#endif
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
#if VHCA_RDMA_CORE >= 65
	int (*inc_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t amount);
	int (*inc_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
				 uint64_t amount);
#endif
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			  int attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			     struct ibv_recv_wr **bad_wr);
#if VHCA_RDMA_CORE >= 65
	int (*qp_attach_comp_cntr)(struct ibv_qp *qp,
				   struct ibv_comp_cntr *comp_cntr,
				   struct ibv_qp_attach_comp_cntr_attr *attr);
	int (*query_comp_cntr_caps)(struct ibv_context *context,
				    struct ibv_comp_cntr_caps *caps,
				    size_t caps_size);
#endif
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
#if VHCA_RDMA_CORE >= 62
	int (*query_port_speed)(struct ibv_context *context,
				uint32_t port_num, uint64_t *speed);
#endif
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *attr);
#if VHCA_RDMA_CORE >= 65
	int (*read_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t *value);
#endif
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
#if VHCA_RDMA_CORE >= 65
	int (*read_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
				  uint64_t *value);
#endif
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
#if VHCA_RDMA_CORE >= 59
	struct ibv_mr *(*reg_mr_ex)(struct ibv_pd *pd,
				    struct ibv_mr_init_attr *mr_init_attr);
#endif
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
#if VHCA_RDMA_CORE >= 65
	int (*set_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t value);
#endif
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
#if VHCA_RDMA_CORE >= 65
	int (*set_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
				 uint64_t value);
#endif
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

_Static_assert(sizeof(struct verbs_context_ops) ==
	       VHCA_NUM_OPS * sizeof(void *),
	       "verbs_context_ops must hold exactly VHCA_NUM_OPS ops");

/*
 * write() commands: the uverbs header, then the kernel's request struct
 * (whose first field is the response pointer, for commands with one), then
 * the driver's data.  The _ex commands carry the extended header as well.
 * rdma-core declares each as exactly header + kernel struct (a static
 * assertion in its kern-abi.h); tests/layout_test.c checks the same here.
 */
struct vhca_ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

#define VHCA_DECLARE_CMD(name, kabi)			\
	struct name {					\
		struct ib_uverbs_cmd_hdr hdr;		\
		struct kabi core;			\
	}

#define VHCA_DECLARE_CMD_EX(name, kabi)			\
	struct name {					\
		struct vhca_ex_hdr hdr;			\
		struct kabi core;			\
	}

VHCA_DECLARE_CMD(ibv_get_context, ib_uverbs_get_context);
VHCA_DECLARE_CMD(ibv_query_port, ib_uverbs_query_port);
VHCA_DECLARE_CMD(ibv_alloc_pd, ib_uverbs_alloc_pd);
VHCA_DECLARE_CMD(ibv_alloc_mw, ib_uverbs_alloc_mw);
VHCA_DECLARE_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
VHCA_DECLARE_CMD(ibv_rereg_mr, ib_uverbs_rereg_mr);
VHCA_DECLARE_CMD(ibv_create_cq, ib_uverbs_create_cq);
VHCA_DECLARE_CMD_EX(ibv_create_cq_ex, ib_uverbs_ex_create_cq);
VHCA_DECLARE_CMD(ibv_create_qp, ib_uverbs_create_qp);
VHCA_DECLARE_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
VHCA_DECLARE_CMD(ibv_query_qp, ib_uverbs_query_qp);
VHCA_DECLARE_CMD(ibv_resize_cq, ib_uverbs_resize_cq);
VHCA_DECLARE_CMD(ibv_create_srq, ib_uverbs_create_srq);
VHCA_DECLARE_CMD(ibv_modify_srq, ib_uverbs_modify_srq);
VHCA_DECLARE_CMD(ibv_query_srq, ib_uverbs_query_srq);
VHCA_DECLARE_CMD(ibv_create_xsrq, ib_uverbs_create_xsrq);
VHCA_DECLARE_CMD(ibv_open_xrcd, ib_uverbs_open_xrcd);
VHCA_DECLARE_CMD(ibv_open_qp, ib_uverbs_open_qp);

/* Opaque here: vhca passes NULL for them. */
struct ibv_fd_arr;
struct verbs_create_cq_prov_attr;

#define VHCA_PASTE2(a, b) a##b
#define VHCA_PASTE(a, b) VHCA_PASTE2(a, b)
/* verbs_register_driver_34 etc.: the PABI is part of the name. */
#define verbs_register_driver \
	VHCA_PASTE(verbs_register_driver_, VHCA_PABI_VERSION)

/*
 * Exported by libibverbs with version IBVERBS_PRIVATE_<VHCA_PABI_VERSION>.
 * Those returning int return 0 or a positive errno value.
 */
void verbs_register_driver(const struct verbs_device_ops *ops);

/* Registers drv_struct with libibverbs when the provider is loaded. */
#define PROVIDER_DRIVER(provider_name, drv_struct)			\
	static void __attribute__((constructor))			\
	provider_name##_register_driver(void)				\
	{								\
		verbs_register_driver(&drv_struct);			\
	}

/*
 * calloc()s alloc_size bytes holding a verbs_context at byte offset
 * (uintptr_t)context_offset and initialises it.  Owns cmd_fd from then on:
 * closes it on failure (returning NULL, errno set), else
 * verbs_uninit_context() closes it.
 */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
#if VHCA_RDMA_CORE >= 57
			struct ibv_fd_arr *fd_arr,
#endif
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
/* resp and resp_size may both be NULL. */
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);

int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
/* Sets mw's context, pd, rkey, handle and type from the kernel's answer. */
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
/* Sets vmr's lkey and rkey from the kernel's answer. */
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
/*
 * Accepts comp_mask FLAGS and PD; asks the kernel for the CQ flags the
 * wc_flags (timestamps) and flags (IGNORE_OVERRUN) imply.  cmd_flags 1 lets
 * a timestamp request fall back to a kernel that ignores it.
 */
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
#if VHCA_RDMA_CORE >= 59
			 struct verbs_create_cq_prov_attr *prov_attr,
#endif
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
/* Any SRQ type; an XRC SRQ's number lands in srq->srq_num. */
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex,
			  struct ibv_create_xsrq *cmd, size_t cmd_size,
			  struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size);
int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd,
		      int vxrcd_size, struct ibv_xrcd_init_attr *attr,
		      struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size);
int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd);
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr, struct ibv_create_qp *cmd,
		      size_t cmd_size, struct ib_uverbs_create_qp_resp *resp,
		      size_t resp_size);
/*
 * Accepts comp_mask PD, XRCD and SEND_OPS_FLAGS; sets qp->comp_mask to 0
 * (or VERBS_QP_XRCD) and the caps the kernel granted in attr_ex->cap.
 */
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
/* Opens the XRC_TGT QP attr names in its XRC domain: no driver data. */
int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp,
		    int vqp_sz, struct ibv_qp_open_attr *attr,
		    struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		     int attr_mask, struct ibv_qp_init_attr *init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_sge *sg_list,
		      uint32_t num_sge);

#endif /* VHCA_IN_TREE */

/*
 * The calls whose arguments differ between releases: the ones added (a file
 * descriptor array for the context, the provider's own CQ buffer) are not
 * used and passed as NULL.
 */
static inline int
vhca_cmd_get_context(struct verbs_context *context,
		     struct ibv_get_context *cmd, size_t cmd_size,
		     struct ib_uverbs_get_context_resp *resp, size_t resp_size)
{
#if VHCA_PABI_VERSION >= 57
	return ibv_cmd_get_context(context, cmd, cmd_size, NULL, resp,
				   resp_size);
#else
	return ibv_cmd_get_context(context, cmd, cmd_size, resp, resp_size);
#endif
}

static inline int
vhca_cmd_create_cq_ex(struct ibv_context *context,
		      const struct ibv_cq_init_attr_ex *cq_attr,
		      struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
		      size_t cmd_size,
		      struct ib_uverbs_ex_create_cq_resp *resp,
		      size_t resp_size, uint32_t cmd_flags)
{
#if VHCA_PABI_VERSION >= 59
	return ibv_cmd_create_cq_ex(context, cq_attr, NULL, cq, cmd, cmd_size,
				    resp, resp_size, cmd_flags);
#else
	return ibv_cmd_create_cq_ex(context, cq_attr, cq, cmd, cmd_size, resp,
				    resp_size, cmd_flags);
#endif
}

#endif /* VHCA_PABI_H */
