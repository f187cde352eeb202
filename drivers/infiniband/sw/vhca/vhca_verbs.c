// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device and port queries of vhca.
 */
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>

#include "vhca.h"

#define VHCA_ODP_RC_CAPS	(IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV | \
				 IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ | \
				 IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV)

int vhca_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		      struct ib_udata *udata)
{
	/* The core asks without udata at registration (7.1). */
	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_mr_size = VHCA_MAX_MR_SIZE;
	attr->vendor_id = VHCA_VENDOR_ID;
	attr->page_size_cap = PAGE_SIZE;
	attr->max_qp = VHCA_MAX_QP;
	attr->max_qp_wr = VHCA_MAX_QP_WR;
	attr->device_cap_flags = IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_ATOMIC_WRITE |
				 IB_DEVICE_FLUSH_GLOBAL |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 IB_DEVICE_XRC;
	attr->max_fast_reg_page_list_len = VHCA_MAX_FAST_REG_PAGES;
	attr->max_send_sge = VHCA_MAX_SGE;
	attr->max_recv_sge = VHCA_MAX_SGE;
	attr->max_sge_rd = VHCA_MAX_SGE;
	attr->max_cq = VHCA_MAX_CQ;
	attr->max_cqe = VHCA_MAX_CQE;
	attr->max_mr = VHCA_MAX_MR;
	attr->max_dm_size = VHCA_MAX_DM_SIZE;
	/* Windows are MRs of another kind: they count against VHCA_MAX_MR. */
	attr->max_mw = VHCA_MAX_MR;
	attr->max_pd = VHCA_MAX_PD;
	attr->max_qp_rd_atom = VHCA_MAX_QP_RD_ATOM;
	attr->max_qp_init_rd_atom = VHCA_MAX_QP_INIT_RD_ATOM;
	attr->max_res_rd_atom = VHCA_MAX_QP * VHCA_MAX_QP_RD_ATOM;
	/*
	 * Atomics are the CPU's own instructions (vhca_mr_atomic()), so
	 * global; HCA is the weaker promise, equally true, and the one that
	 * consumers test for by equality (UCX before 1.16, as rxe reports).
	 */
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_srq = VHCA_MAX_SRQ;
	attr->max_srq_wr = VHCA_MAX_SRQ_WR;
	attr->max_srq_sge = VHCA_MAX_SGE;
	attr->max_ah = VHCA_MAX_AH;
	attr->max_pkeys = VHCA_PKEY_TABLE_LEN;
	attr->max_mcast_grp = VHCA_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = VHCA_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = VHCA_MAX_TOTAL_MCAST_QP_ATTACH;
	attr->local_ca_ack_delay = VHCA_LOCAL_ACK_DELAY;
	/* Completion timestamps: see VHCA_CORE_CLOCK_KHZ. */
	attr->hca_core_clock = VHCA_CORE_CLOCK_KHZ;
	attr->timestamp_mask = U64_MAX;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG;
#if VHCA_ODP
	/*
	 * ODP (vhca_odp.c), explicit and implicit, for what the engine
	 * retries while a fault runs: RC and XRC every operation; UD sends
	 * (a datagram that finds its receive buffer not resident is
	 * dropped).
	 */
	attr->kernel_cap_flags |= IBK_ON_DEMAND_PAGING;
	attr->odp_caps.general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT;
	attr->odp_caps.per_transport_caps.rc_odp_caps = VHCA_ODP_RC_CAPS;
	attr->odp_caps.per_transport_caps.xrc_odp_caps = VHCA_ODP_RC_CAPS;
	attr->odp_caps.per_transport_caps.ud_odp_caps = IB_ODP_SUPPORT_SEND;
#endif
	return 0;
}

enum ib_port_state vhca_port_state(struct vhca_dev *vdev)
{
	struct net_device *ndev = vdev->ndev;

	if (netif_running(ndev) && netif_carrier_ok(ndev))
		return IB_PORT_ACTIVE;
	return IB_PORT_DOWN;
}

int vhca_query_port(struct ib_device *ibdev, u32 port,
		    struct ib_port_attr *attr)
{
	struct vhca_dev *vdev = to_vdev(ibdev);

	/* The core has zeroed *attr. */
	attr->gid_tbl_len = VHCA_GID_TABLE_LEN;
	attr->pkey_tbl_len = VHCA_PKEY_TABLE_LEN;
	attr->max_msg_sz = VHCA_MAX_MSG_SIZE;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = vhca_port_mtu(vdev);
	attr->state = vhca_port_state(vdev);
	attr->phys_state = attr->state == IB_PORT_ACTIVE ?
			   IB_PORT_PHYS_STATE_LINK_UP :
			   IB_PORT_PHYS_STATE_DISABLED;
	return ib_get_eth_speed(ibdev, port, &attr->active_speed,
				&attr->active_width);
}

int vhca_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey)
{
	if (index >= VHCA_PKEY_TABLE_LEN)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

int vhca_get_port_immutable(struct ib_device *ibdev, u32 port,
			    struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr;
	int err;

	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;

	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

enum rdma_link_layer vhca_get_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}
