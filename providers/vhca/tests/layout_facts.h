/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The layout facts of the private ABI the provider relies on, for the
 * rdma-core release VHCA_RDMA_CORE, as X-macros:
 *
 *   FACT_SIZE(s)     sizeof(struct s)
 *   FACT_OFF(s, m)   offsetof(struct s, m)
 *   FACT_OP(m)       offsetof(struct verbs_context_ops, m), every op
 *
 * layout_test.c expands them against vhca_pabi.h, layout_probe.c against
 * the real <infiniband/driver.h> of the release; both print or read lines
 * "sizeof S N" and "offsetof S.M N" (tests/pabi*-layout-rdma-core-*.txt).
 * Struct ibv_qp_ex, verbs_context and ibv_cq_ex come from the release's
 * public <infiniband/verbs.h>; the rest from driver.h and kern-abi.h.
 */
#ifndef VHCA_LAYOUT_FACTS_H
#define VHCA_LAYOUT_FACTS_H

#ifndef VHCA_RDMA_CORE
#error "VHCA_RDMA_CORE names the release the facts are for"
#endif

/* ibv_qp_ex grew in 44 and in 45. */
#if VHCA_RDMA_CORE >= 44
#define FACTS_QP_EX_44 FACT_OFF(ibv_qp_ex, wr_atomic_write)
#else
#define FACTS_QP_EX_44
#endif
#if VHCA_RDMA_CORE >= 45
#define FACTS_QP_EX_45 FACT_OFF(ibv_qp_ex, wr_flush)
#else
#define FACTS_QP_EX_45
#endif

#define VHCA_LAYOUT_FACTS						\
	FACT_SIZE(verbs_match_ent)					\
	FACT_OFF(verbs_match_ent, u)					\
	FACT_OFF(verbs_match_ent, vendor)				\
	FACT_OFF(verbs_match_ent, device)				\
	FACT_OFF(verbs_match_ent, kind)					\
	FACT_SIZE(verbs_device_ops)					\
	FACT_OFF(verbs_device_ops, match_min_abi_version)		\
	FACT_OFF(verbs_device_ops, match_max_abi_version)		\
	FACT_OFF(verbs_device_ops, match_table)				\
	FACT_OFF(verbs_device_ops, static_providers)			\
	FACT_OFF(verbs_device_ops, match_device)			\
	FACT_OFF(verbs_device_ops, alloc_context)			\
	FACT_OFF(verbs_device_ops, import_context)			\
	FACT_OFF(verbs_device_ops, alloc_device)			\
	FACT_OFF(verbs_device_ops, uninit_device)			\
	FACT_SIZE(verbs_device)						\
	FACT_OFF(verbs_device, ops)					\
	FACT_OFF(verbs_device, refcount)				\
	FACT_OFF(verbs_device, entry)					\
	FACT_OFF(verbs_device, sysfs)					\
	FACT_OFF(verbs_device, core_support)				\
	FACT_SIZE(verbs_context)					\
	FACT_OFF(verbs_context, sz)					\
	FACT_OFF(verbs_context, context)				\
	FACT_SIZE(verbs_mr)						\
	FACT_OFF(verbs_mr, mr_type)					\
	FACT_OFF(verbs_mr, access)					\
	FACT_SIZE(verbs_cq)						\
	FACT_SIZE(ibv_cq_ex)						\
	FACT_SIZE(verbs_qp)						\
	FACT_OFF(verbs_qp, qp_ex)					\
	FACT_OFF(verbs_qp, comp_mask)					\
	FACT_OFF(verbs_qp, xrcd)					\
	FACT_SIZE(verbs_xrcd)						\
	FACT_OFF(verbs_xrcd, comp_mask)					\
	FACT_OFF(verbs_xrcd, handle)					\
	FACT_SIZE(verbs_srq)						\
	FACT_OFF(verbs_srq, srq_type)					\
	FACT_OFF(verbs_srq, xrcd)					\
	FACT_OFF(verbs_srq, cq)						\
	FACT_OFF(verbs_srq, srq_num)					\
	FACT_SIZE(ibv_qp_ex)						\
	FACT_OFF(ibv_qp_ex, comp_mask)					\
	FACT_OFF(ibv_qp_ex, wr_id)					\
	FACT_OFF(ibv_qp_ex, wr_flags)					\
	FACT_OFF(ibv_qp_ex, wr_atomic_cmp_swp)				\
	FACT_OFF(ibv_qp_ex, wr_rdma_read)				\
	FACT_OFF(ibv_qp_ex, wr_rdma_write)				\
	FACT_OFF(ibv_qp_ex, wr_rdma_write_imm)				\
	FACT_OFF(ibv_qp_ex, wr_send)					\
	FACT_OFF(ibv_qp_ex, wr_send_imm)				\
	FACT_OFF(ibv_qp_ex, wr_set_ud_addr)				\
	FACT_OFF(ibv_qp_ex, wr_set_inline_data)				\
	FACT_OFF(ibv_qp_ex, wr_set_inline_data_list)			\
	FACT_OFF(ibv_qp_ex, wr_set_sge)					\
	FACT_OFF(ibv_qp_ex, wr_set_sge_list)				\
	FACT_OFF(ibv_qp_ex, wr_start)					\
	FACT_OFF(ibv_qp_ex, wr_complete)				\
	FACT_OFF(ibv_qp_ex, wr_abort)					\
	FACTS_QP_EX_44							\
	FACTS_QP_EX_45							\
	FACT_SIZE(verbs_context_ops)					\
	FACT_SIZE(ibv_get_context)					\
	FACT_SIZE(ibv_query_port)					\
	FACT_SIZE(ibv_alloc_pd)						\
	FACT_SIZE(ibv_alloc_mw)						\
	FACT_SIZE(ibv_reg_mr)						\
	FACT_SIZE(ibv_rereg_mr)						\
	FACT_SIZE(ibv_create_cq)					\
	FACT_SIZE(ibv_create_cq_ex)					\
	FACT_SIZE(ibv_resize_cq)					\
	FACT_SIZE(ibv_create_qp)					\
	FACT_SIZE(ibv_modify_qp)					\
	FACT_SIZE(ibv_query_qp)						\
	FACT_SIZE(ibv_create_srq)					\
	FACT_SIZE(ibv_modify_srq)					\
	FACT_SIZE(ibv_query_srq)					\
	FACT_SIZE(ibv_create_xsrq)					\
	FACT_SIZE(ibv_open_xrcd)					\
	FACT_SIZE(ibv_open_qp)

/* 65's completion counter ops, by the letter they sort under. */
#if VHCA_RDMA_CORE >= 65
#define FACTS_OPS_65_C FACT_OP(create_comp_cntr)
#define FACTS_OPS_65_D FACT_OP(destroy_comp_cntr)
#define FACTS_OPS_65_I FACT_OP(inc_comp_cntr) FACT_OP(inc_err_comp_cntr)
#define FACTS_OPS_65_Q FACT_OP(qp_attach_comp_cntr)			\
	FACT_OP(query_comp_cntr_caps)
#define FACTS_OPS_65_R1 FACT_OP(read_comp_cntr)
#define FACTS_OPS_65_R2 FACT_OP(read_err_comp_cntr)
#define FACTS_OPS_65_S1 FACT_OP(set_comp_cntr)
#define FACTS_OPS_65_S2 FACT_OP(set_err_comp_cntr)
#else
#define FACTS_OPS_65_C
#define FACTS_OPS_65_D
#define FACTS_OPS_65_I
#define FACTS_OPS_65_Q
#define FACTS_OPS_65_R1
#define FACTS_OPS_65_R2
#define FACTS_OPS_65_S1
#define FACTS_OPS_65_S2
#endif
#if VHCA_RDMA_CORE >= 64
#define FACTS_OPS_64_A FACT_OP(alloc_buf)
#define FACTS_OPS_64_F FACT_OP(free_buf)
#else
#define FACTS_OPS_64_A
#define FACTS_OPS_64_F
#endif
#if VHCA_RDMA_CORE >= 62
#define FACTS_OPS_62_D FACT_OP(dm_export_dmabuf_fd)
#define FACTS_OPS_62_Q FACT_OP(query_port_speed)
#else
#define FACTS_OPS_62_D
#define FACTS_OPS_62_Q
#endif
#if VHCA_RDMA_CORE >= 59
#define FACTS_OPS_59_A FACT_OP(alloc_dmah)
#define FACTS_OPS_59_D FACT_OP(dealloc_dmah)
#define FACTS_OPS_59_R FACT_OP(reg_mr_ex)
#else
#define FACTS_OPS_59_A
#define FACTS_OPS_59_D
#define FACTS_OPS_59_R
#endif

/* Every member of verbs_context_ops, in rdma-core's order: sorted. */
#define VHCA_LAYOUT_OPS							\
	FACT_OP(advise_mr) FACTS_OPS_64_A FACT_OP(alloc_dm)		\
	FACTS_OPS_59_A FACT_OP(alloc_mw) FACT_OP(alloc_null_mr)		\
	FACT_OP(alloc_parent_domain) FACT_OP(alloc_pd) FACT_OP(alloc_td) \
	FACT_OP(async_event) FACT_OP(attach_counters_point_flow)	\
	FACT_OP(attach_mcast) FACT_OP(bind_mw) FACT_OP(close_xrcd)	\
	FACT_OP(cq_event) FACT_OP(create_ah) FACTS_OPS_65_C		\
	FACT_OP(create_counters)					\
	FACT_OP(create_cq) FACT_OP(create_cq_ex) FACT_OP(create_flow)	\
	FACT_OP(create_flow_action_esp) FACT_OP(create_qp)		\
	FACT_OP(create_qp_ex) FACT_OP(create_rwq_ind_table)		\
	FACT_OP(create_srq) FACT_OP(create_srq_ex) FACT_OP(create_wq)	\
	FACTS_OPS_59_D FACT_OP(dealloc_mw) FACT_OP(dealloc_pd)		\
	FACT_OP(dealloc_td) FACT_OP(dereg_mr) FACT_OP(destroy_ah)	\
	FACTS_OPS_65_D FACT_OP(destroy_counters) FACT_OP(destroy_cq)	\
	FACT_OP(destroy_flow) FACT_OP(destroy_flow_action)		\
	FACT_OP(destroy_qp) FACT_OP(destroy_rwq_ind_table)		\
	FACT_OP(destroy_srq) FACT_OP(destroy_wq) FACT_OP(detach_mcast)	\
	FACTS_OPS_62_D FACTS_OPS_64_F FACT_OP(free_context)		\
	FACT_OP(free_dm) FACT_OP(get_srq_num) FACT_OP(import_dm)	\
	FACT_OP(import_mr) FACT_OP(import_pd) FACTS_OPS_65_I		\
	FACT_OP(modify_cq)						\
	FACT_OP(modify_flow_action_esp) FACT_OP(modify_qp)		\
	FACT_OP(modify_qp_rate_limit) FACT_OP(modify_srq)		\
	FACT_OP(modify_wq) FACT_OP(open_qp) FACT_OP(open_xrcd)		\
	FACT_OP(poll_cq) FACT_OP(post_recv) FACT_OP(post_send)		\
	FACT_OP(post_srq_ops) FACT_OP(post_srq_recv) FACTS_OPS_65_Q	\
	FACT_OP(query_device_ex) FACT_OP(query_ece) FACT_OP(query_port)	\
	FACTS_OPS_62_Q FACT_OP(query_qp) FACT_OP(query_qp_data_in_order) \
	FACT_OP(query_rt_values) FACT_OP(query_srq) FACTS_OPS_65_R1	\
	FACT_OP(read_counters) FACTS_OPS_65_R2				\
	FACT_OP(reg_dm_mr) FACT_OP(reg_dmabuf_mr) FACT_OP(reg_mr)	\
	FACTS_OPS_59_R FACT_OP(req_notify_cq) FACT_OP(rereg_mr)		\
	FACT_OP(resize_cq) FACTS_OPS_65_S1 FACT_OP(set_ece)		\
	FACTS_OPS_65_S2 FACT_OP(unimport_dm)				\
	FACT_OP(unimport_mr) FACT_OP(unimport_pd)

#endif /* VHCA_LAYOUT_FACTS_H */
