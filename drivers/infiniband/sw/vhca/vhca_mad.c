// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The port's performance management agent (PMA): Get of ClassPortInfo,
 * PortCounters and PortCountersExtended, answered from the counters that
 * rdma statistic shows (vhca_stats.c).  The MAD layer offers every MAD its
 * GSI QP receives to process_mad before its agents see it, and the core's
 * sysfs files ports/1/counters/ call it directly.  MADs of other classes,
 * and responses, go on to the agents; requests of the class are answered
 * here, refused with the status the IBTA gives for what vhca does not do.
 */
#include <rdma/ib_mad.h>
#include <rdma/ib_pma.h>

#include "vhca.h"

#define VHCA_PMA_CLASS_VERSION	1
/* PortSelect: every port (AllPortSelect), which is the one port here. */
#define VHCA_PMA_ALL_PORTS	0xff
/* ClassPortInfo.RespTimeValue: 4.096 us x 2^18, about one second. */
#define VHCA_PMA_RESP_TIME	18

/*
 * ClassPortInfo.CapabilityMask: PortSelect 0xff, and PortCountersExtended
 * without its unicast and multicast counters, which vhca does not keep.
 * PortXmitWait is not counted either (no capability bit).
 */
#define VHCA_PMA_CAPS	(IB_PMA_CLASS_CAP_ALLPORTSELECT | \
			 IB_PMA_CLASS_CAP_EXT_WIDTH_NOIETF)

static u64 vhca_pma_counter(struct vhca_dev *vdev, enum vhca_counter c)
{
	return atomic64_read(&vdev->counters[c]);
}

/* A PortCounters field: instead of wrapping, it stops at all ones. */
static __be32 vhca_pma_sat32(u64 v)
{
	return cpu_to_be32(min_t(u64, v, U32_MAX));
}

static __be16 vhca_pma_sat16(u64 v)
{
	return cpu_to_be16(min_t(u64, v, U16_MAX));
}

static void vhca_pma_class_port_info(struct ib_pma_mad *pmad)
{
	struct ib_class_port_info *cpi = (struct ib_class_port_info *)pmad->data;

	cpi->base_version = IB_MGMT_BASE_VERSION;
	cpi->class_version = VHCA_PMA_CLASS_VERSION;
	cpi->capability_mask = VHCA_PMA_CAPS;
	ib_set_cpi_resp_time(cpi, VHCA_PMA_RESP_TIME);
}

/*
 * Data counts BTH through ICRC, as tx_bytes and rx_bytes do, in units of
 * 4 octets; packets count those with errors, as rx_packets does.
 */
static void vhca_pma_port_counters(struct vhca_dev *vdev,
				   struct ib_pma_mad *pmad)
{
	struct ib_pma_portcounters *pc = (struct ib_pma_portcounters *)pmad->data;

	pc->port_rcv_errors =
		vhca_pma_sat16(vhca_pma_counter(vdev, VHCA_CNT_RX_ICRC_ERRORS));
	pc->port_xmit_data =
		vhca_pma_sat32(vhca_pma_counter(vdev, VHCA_CNT_TX_BYTES) / 4);
	pc->port_rcv_data =
		vhca_pma_sat32(vhca_pma_counter(vdev, VHCA_CNT_RX_BYTES) / 4);
	pc->port_xmit_packets =
		vhca_pma_sat32(vhca_pma_counter(vdev, VHCA_CNT_TX_PACKETS));
	pc->port_rcv_packets =
		vhca_pma_sat32(vhca_pma_counter(vdev, VHCA_CNT_RX_PACKETS));
}

static void vhca_pma_port_counters_ext(struct vhca_dev *vdev,
				       struct ib_pma_mad *pmad)
{
	struct ib_pma_portcounters_ext *pc =
		(struct ib_pma_portcounters_ext *)pmad->data;

	pc->port_xmit_data =
		cpu_to_be64(vhca_pma_counter(vdev, VHCA_CNT_TX_BYTES) / 4);
	pc->port_rcv_data =
		cpu_to_be64(vhca_pma_counter(vdev, VHCA_CNT_RX_BYTES) / 4);
	pc->port_xmit_packets =
		cpu_to_be64(vhca_pma_counter(vdev, VHCA_CNT_TX_PACKETS));
	pc->port_rcv_packets =
		cpu_to_be64(vhca_pma_counter(vdev, VHCA_CNT_RX_PACKETS));
}

/*
 * The answer to request in, built in out (a copy of it): its status, and
 * for a Get that succeeds, the attribute.
 */
static u16 vhca_pma_request(struct vhca_dev *vdev, const struct ib_pma_mad *in,
			    struct ib_pma_mad *out)
{
	__be16 attr = in->mad_hdr.attr_id;
	u8 port_select;

	if (in->mad_hdr.base_version != IB_MGMT_BASE_VERSION ||
	    in->mad_hdr.class_version != VHCA_PMA_CLASS_VERSION)
		return IB_MGMT_MAD_STATUS_BAD_VERSION;
	if (attr != IB_PMA_CLASS_PORT_INFO && attr != IB_PMA_PORT_COUNTERS &&
	    attr != IB_PMA_PORT_COUNTERS_EXT)
		return IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;
	/* No counter is reset: they are rdma statistic's, which only grow. */
	if (in->mad_hdr.method != IB_MGMT_METHOD_GET)
		return IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB;

	if (attr == IB_PMA_CLASS_PORT_INFO) {
		memset(out->data, 0, sizeof(out->data));
		vhca_pma_class_port_info(out);
		return IB_MGMT_MAD_STATUS_SUCCESS;
	}
	/* Both counter attributes have PortSelect in their second octet. */
	port_select = in->data[1];
	if (port_select != VHCA_PORT && port_select != VHCA_PMA_ALL_PORTS)
		return IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE;
	/* The answer keeps PortSelect and CounterSelect, as asked. */
	memset(out->data + 4, 0, sizeof(out->data) - 4);
	if (attr == IB_PMA_PORT_COUNTERS)
		vhca_pma_port_counters(vdev, out);
	else
		vhca_pma_port_counters_ext(vdev, out);
	return IB_MGMT_MAD_STATUS_SUCCESS;
}

int vhca_process_mad(struct ib_device *ibdev, int mad_flags, u32 port_num,
		     const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		     const struct ib_mad *in_mad, struct ib_mad *out_mad,
		     size_t *out_mad_size, u16 *out_mad_pkey_index)
{
	const struct ib_pma_mad *in = (const struct ib_pma_mad *)in_mad;
	struct ib_pma_mad *out = (struct ib_pma_mad *)out_mad;
	u8 method = in->mad_hdr.method;
	u16 status;

	static_assert(sizeof(*in) == sizeof(*in_mad));
	if (port_num != VHCA_PORT)
		return IB_MAD_RESULT_FAILURE;
	/* Another class, a response or a trap: for the MAD layer's agents. */
	if (in->mad_hdr.mgmt_class != IB_MGMT_CLASS_PERF_MGMT ||
	    (method != IB_MGMT_METHOD_GET && method != IB_MGMT_METHOD_SET))
		return IB_MAD_RESULT_SUCCESS;

	memcpy(out, in, sizeof(*out));
	status = vhca_pma_request(to_vdev(ibdev), in, out);
	out->mad_hdr.method = IB_MGMT_METHOD_GET_RESP;
	out->mad_hdr.status = cpu_to_be16(status);
	return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY;
}
