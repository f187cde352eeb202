// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite of the performance management agent: ClassPortInfo and its
 * capability bits, PortCounters (4-octet units, saturating at all ones) and
 * PortCountersExtended read from a bare vhca_dev's counters, the refusals
 * (Set, other attributes, PortSelect, versions) with the IBTA's status, and
 * what is left to the MAD layer's agents (other classes, responses, traps).
 */
#include <kunit/test.h>

#include "../vhca_mad.c"

struct vhca_mad_test {
	struct vhca_dev *vdev;
	struct ib_pma_mad in, out;
};

static int vhca_mad_test_init(struct kunit *test)
{
	struct vhca_mad_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->vdev = kunit_kzalloc(test, sizeof(*t->vdev), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->vdev);
	test->priv = t;
	return 0;
}

/* A request as perfquery builds it: PortSelect in data[1]. */
static void vhca_mad_req(struct vhca_mad_test *t, u8 method, __be16 attr,
			 u8 port_select)
{
	memset(&t->in, 0, sizeof(t->in));
	t->in.mad_hdr.base_version = IB_MGMT_BASE_VERSION;
	t->in.mad_hdr.mgmt_class = IB_MGMT_CLASS_PERF_MGMT;
	t->in.mad_hdr.class_version = 1;
	t->in.mad_hdr.method = method;
	t->in.mad_hdr.attr_id = attr;
	t->in.mad_hdr.tid = cpu_to_be64(0x1122334455667788ULL);
	t->in.data[1] = port_select;
	/* CounterSelect: all of them. */
	t->in.data[2] = 0xff;
	t->in.data[3] = 0xff;
	memset(&t->out, 0xa5, sizeof(t->out));
}

static int vhca_mad_call(struct vhca_mad_test *t, u32 port)
{
	size_t size = sizeof(struct ib_mad);
	u16 pkey_index = 0;

	return vhca_process_mad(&t->vdev->ibdev, IB_MAD_IGNORE_MKEY, port,
				NULL, NULL, (const struct ib_mad *)&t->in,
				(struct ib_mad *)&t->out, &size, &pkey_index);
}

/* A request answered: a GetResp with the request's TID and status. */
static void vhca_mad_expect_reply(struct kunit *test, u16 status)
{
	struct vhca_mad_test *t = test->priv;

	KUNIT_ASSERT_EQ(test, vhca_mad_call(t, VHCA_PORT),
			IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY);
	KUNIT_EXPECT_EQ(test, t->out.mad_hdr.method, IB_MGMT_METHOD_GET_RESP);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(t->out.mad_hdr.status), status);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(t->out.mad_hdr.tid),
			0x1122334455667788ULL);
	KUNIT_EXPECT_EQ(test, t->out.mad_hdr.mgmt_class,
			IB_MGMT_CLASS_PERF_MGMT);
	KUNIT_EXPECT_TRUE(test, t->out.mad_hdr.attr_id == t->in.mad_hdr.attr_id);
}

static void vhca_mad_set(struct vhca_mad_test *t, enum vhca_counter c, u64 v)
{
	atomic64_set(&t->vdev->counters[c], v);
}

static void vhca_mad_class_port_info(struct kunit *test)
{
	struct vhca_mad_test *t = test->priv;
	struct ib_class_port_info *cpi = (struct ib_class_port_info *)t->out.data;
	u16 caps;

	vhca_mad_req(t, IB_MGMT_METHOD_GET, IB_PMA_CLASS_PORT_INFO, 0);
	vhca_mad_expect_reply(test, IB_MGMT_MAD_STATUS_SUCCESS);
	KUNIT_EXPECT_EQ(test, cpi->base_version, 1);
	KUNIT_EXPECT_EQ(test, cpi->class_version, 1);
	caps = be16_to_cpu(cpi->capability_mask);
	/* AllPortSelect and the extended counters without (uni|multi)cast. */
	KUNIT_EXPECT_EQ(test, caps, BIT(8) | BIT(10));
	KUNIT_EXPECT_EQ(test, ib_get_cpi_resp_time(cpi), 18);
	KUNIT_EXPECT_EQ(test, ib_get_cpi_capmask2(cpi), 0U);
	/* No redirection, no trap destination: the rest is zero. */
	KUNIT_EXPECT_TRUE(test, !memchr_inv(cpi->redirect_gid, 0,
					    sizeof(*cpi) - 8));
	KUNIT_EXPECT_TRUE(test, !memchr_inv(t->out.data + sizeof(*cpi), 0,
					    sizeof(t->out.data) - sizeof(*cpi)));
}

static void vhca_mad_port_counters(struct kunit *test)
{
	struct vhca_mad_test *t = test->priv;
	struct ib_pma_portcounters *pc = (struct ib_pma_portcounters *)t->out.data;

	vhca_mad_set(t, VHCA_CNT_TX_BYTES, 4003);	/* 1000 units and 3 */
	vhca_mad_set(t, VHCA_CNT_RX_BYTES, 8);
	vhca_mad_set(t, VHCA_CNT_TX_PACKETS, 17);
	vhca_mad_set(t, VHCA_CNT_RX_PACKETS, 2);
	vhca_mad_set(t, VHCA_CNT_RX_ICRC_ERRORS, 5);
	/* Counters with no PMA field change nothing. */
	vhca_mad_set(t, VHCA_CNT_RETRANSMITS, 99);
	vhca_mad_set(t, VHCA_CNT_RX_MALFORMED, 77);

	vhca_mad_req(t, IB_MGMT_METHOD_GET, IB_PMA_PORT_COUNTERS, VHCA_PORT);
	vhca_mad_expect_reply(test, IB_MGMT_MAD_STATUS_SUCCESS);
	KUNIT_EXPECT_EQ(test, pc->port_select, VHCA_PORT);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(pc->counter_select), 0xffff);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_xmit_data), 1000U);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_rcv_data), 2U);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_xmit_packets), 17U);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_rcv_packets), 2U);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(pc->port_rcv_errors), 5);
	/* What vhca does not count reads zero, PortXmitWait included. */
	KUNIT_EXPECT_EQ(test, be16_to_cpu(pc->symbol_error_counter), 0);
	KUNIT_EXPECT_EQ(test, pc->link_downed_counter, 0);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(pc->port_xmit_discards), 0);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(pc->vl15_dropped), 0);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_xmit_wait), 0U);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(t->out.data + sizeof(*pc), 0,
					    sizeof(t->out.data) - sizeof(*pc)));

	/* AllPortSelect: the one port. */
	vhca_mad_req(t, IB_MGMT_METHOD_GET, IB_PMA_PORT_COUNTERS, 0xff);
	vhca_mad_expect_reply(test, IB_MGMT_MAD_STATUS_SUCCESS);
	KUNIT_EXPECT_EQ(test, pc->port_select, 0xff);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_xmit_packets), 17U);
}

/* The 32- and 16-bit fields stop at all ones; the extended ones go on. */
static void vhca_mad_saturation(struct kunit *test)
{
	struct vhca_mad_test *t = test->priv;
	struct ib_pma_portcounters *pc = (struct ib_pma_portcounters *)t->out.data;
	struct ib_pma_portcounters_ext *pcx =
		(struct ib_pma_portcounters_ext *)t->out.data;
	const u64 big = 4ULL * U32_MAX + 100;

	vhca_mad_set(t, VHCA_CNT_TX_BYTES, big);
	vhca_mad_set(t, VHCA_CNT_RX_BYTES, 4ULL * U32_MAX);	/* exactly */
	vhca_mad_set(t, VHCA_CNT_TX_PACKETS, U32_MAX + 1ULL);
	vhca_mad_set(t, VHCA_CNT_RX_PACKETS, S64_MAX);
	vhca_mad_set(t, VHCA_CNT_RX_ICRC_ERRORS, U16_MAX + 1ULL);

	vhca_mad_req(t, IB_MGMT_METHOD_GET, IB_PMA_PORT_COUNTERS, VHCA_PORT);
	vhca_mad_expect_reply(test, IB_MGMT_MAD_STATUS_SUCCESS);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_xmit_data), U32_MAX);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_rcv_data), U32_MAX);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_xmit_packets), U32_MAX);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pc->port_rcv_packets), U32_MAX);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(pc->port_rcv_errors), U16_MAX);

	vhca_mad_req(t, IB_MGMT_METHOD_GET, IB_PMA_PORT_COUNTERS_EXT, VHCA_PORT);
	vhca_mad_expect_reply(test, IB_MGMT_MAD_STATUS_SUCCESS);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(pcx->port_xmit_data), big / 4);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(pcx->port_rcv_data), (u64)U32_MAX);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(pcx->port_xmit_packets),
			U32_MAX + 1ULL);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(pcx->port_rcv_packets), (u64)S64_MAX);
}

static void vhca_mad_port_counters_ext(struct kunit *test)
{
	struct vhca_mad_test *t = test->priv;
	struct ib_pma_portcounters_ext *pcx =
		(struct ib_pma_portcounters_ext *)t->out.data;

	vhca_mad_set(t, VHCA_CNT_TX_BYTES, (1ULL << 40) + 7);
	vhca_mad_set(t, VHCA_CNT_RX_BYTES, 12);
	vhca_mad_set(t, VHCA_CNT_TX_PACKETS, 1ULL << 33);
	vhca_mad_set(t, VHCA_CNT_RX_PACKETS, 3);

	vhca_mad_req(t, IB_MGMT_METHOD_GET, IB_PMA_PORT_COUNTERS_EXT, VHCA_PORT);
	vhca_mad_expect_reply(test, IB_MGMT_MAD_STATUS_SUCCESS);
	KUNIT_EXPECT_EQ(test, pcx->port_select, VHCA_PORT);
	KUNIT_EXPECT_EQ(test, be16_to_cpu(pcx->counter_select), 0xffff);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(pcx->port_xmit_data),
			(1ULL << 38) + 1);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(pcx->port_rcv_data), 3ULL);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(pcx->port_xmit_packets), 1ULL << 33);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(pcx->port_rcv_packets), 3ULL);
	/* Not claimed (no IB_PMA_CLASS_CAP_EXT_WIDTH): zero. */
	KUNIT_EXPECT_EQ(test, be64_to_cpu(pcx->port_unicast_xmit_packets), 0ULL);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(pcx->port_unicast_rcv_packets), 0ULL);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(pcx->port_multicast_xmit_packets), 0ULL);
	KUNIT_EXPECT_EQ(test, be64_to_cpu(pcx->port_multicast_rcv_packets), 0ULL);
}

/*
 * Refused with a status: the reply carries no counter (the request's data
 * comes back as it was) and no counter changes.
 */
static void vhca_mad_expect_refused(struct kunit *test, u16 status)
{
	struct vhca_mad_test *t = test->priv;

	vhca_mad_expect_reply(test, status);
	KUNIT_EXPECT_EQ(test, memcmp(t->out.data, t->in.data,
				     sizeof(t->out.data)), 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->vdev->counters[VHCA_CNT_TX_BYTES]),
			4000LL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&t->vdev->counters[VHCA_CNT_RX_PACKETS]),
			9LL);
}

static void vhca_mad_refused(struct kunit *test)
{
	static const u16 other_attrs[] = {
		0x0000, 0x0002, 0x0010, 0x0011, 0x0013, 0x0016, 0x001e,
		0x0036, 0x0080, 0xff00, 0xffff,
	};
	static const u8 bad_ports[] = { 0, 2, 3, 0x7f, 0xfe };
	static const __be16 attrs[] = {
		IB_PMA_CLASS_PORT_INFO, IB_PMA_PORT_COUNTERS,
		IB_PMA_PORT_COUNTERS_EXT,
	};
	struct vhca_mad_test *t = test->priv;
	int i;

	vhca_mad_set(t, VHCA_CNT_TX_BYTES, 4000);
	vhca_mad_set(t, VHCA_CNT_RX_PACKETS, 9);

	/* Set (perfquery -R): no counter is reset. */
	for (i = 0; i < ARRAY_SIZE(attrs); i++) {
		vhca_mad_req(t, IB_MGMT_METHOD_SET, attrs[i], VHCA_PORT);
		vhca_mad_expect_refused(test,
					IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB);
	}
	/* Attributes vhca does not have (samples, SL, VL, error details). */
	for (i = 0; i < ARRAY_SIZE(other_attrs); i++) {
		vhca_mad_req(t, IB_MGMT_METHOD_GET, cpu_to_be16(other_attrs[i]),
			     VHCA_PORT);
		vhca_mad_expect_refused(test,
					IB_MGMT_MAD_STATUS_UNSUPPORTED_METHOD_ATTRIB);
	}
	/* A port the device does not have. */
	for (i = 0; i < ARRAY_SIZE(bad_ports); i++) {
		vhca_mad_req(t, IB_MGMT_METHOD_GET, IB_PMA_PORT_COUNTERS,
			     bad_ports[i]);
		vhca_mad_expect_refused(test,
					IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE);
		vhca_mad_req(t, IB_MGMT_METHOD_GET, IB_PMA_PORT_COUNTERS_EXT,
			     bad_ports[i]);
		vhca_mad_expect_refused(test,
					IB_MGMT_MAD_STATUS_INVALID_ATTRIB_VALUE);
	}
	/* Versions: the class's is 1, the base's 1. */
	vhca_mad_req(t, IB_MGMT_METHOD_GET, IB_PMA_PORT_COUNTERS, VHCA_PORT);
	t->in.mad_hdr.class_version = 2;
	vhca_mad_expect_refused(test, IB_MGMT_MAD_STATUS_BAD_VERSION);
	vhca_mad_req(t, IB_MGMT_METHOD_GET, IB_PMA_CLASS_PORT_INFO, 0);
	t->in.mad_hdr.class_version = 0;
	vhca_mad_expect_refused(test, IB_MGMT_MAD_STATUS_BAD_VERSION);
	vhca_mad_req(t, IB_MGMT_METHOD_GET, IB_PMA_PORT_COUNTERS_EXT, VHCA_PORT);
	t->in.mad_hdr.base_version = 0x80;
	vhca_mad_expect_refused(test, IB_MGMT_MAD_STATUS_BAD_VERSION);
}

/* Not a request of the class: left to the agents, out untouched. */
static void vhca_mad_passed_on(struct kunit *test)
{
	static const u8 classes[] = {
		IB_MGMT_CLASS_SUBN_LID_ROUTED, IB_MGMT_CLASS_SUBN_ADM,
		IB_MGMT_CLASS_CM, IB_MGMT_CLASS_DEVICE_MGMT, 0x05, 0x84, 0xff,
	};
	static const u8 methods[] = {
		IB_MGMT_METHOD_GET_RESP, IB_MGMT_METHOD_SEND,
		IB_MGMT_METHOD_TRAP, IB_MGMT_METHOD_REPORT,
		IB_MGMT_METHOD_REPORT_RESP, IB_MGMT_METHOD_TRAP_REPRESS,
		0x00, 0x12, 0x7f, 0x82, 0xff,
	};
	struct vhca_mad_test *t = test->priv;
	struct ib_pma_mad untouched;
	int i;

	memset(&untouched, 0xa5, sizeof(untouched));
	for (i = 0; i < ARRAY_SIZE(classes); i++) {
		vhca_mad_req(t, IB_MGMT_METHOD_GET, IB_PMA_PORT_COUNTERS,
			     VHCA_PORT);
		t->in.mad_hdr.mgmt_class = classes[i];
		KUNIT_EXPECT_EQ(test, vhca_mad_call(t, VHCA_PORT),
				IB_MAD_RESULT_SUCCESS);
		KUNIT_EXPECT_EQ(test, memcmp(&t->out, &untouched,
					     sizeof(untouched)), 0);
	}
	for (i = 0; i < ARRAY_SIZE(methods); i++) {
		vhca_mad_req(t, methods[i], IB_PMA_PORT_COUNTERS, VHCA_PORT);
		KUNIT_EXPECT_EQ(test, vhca_mad_call(t, VHCA_PORT),
				IB_MAD_RESULT_SUCCESS);
		KUNIT_EXPECT_EQ(test, memcmp(&t->out, &untouched,
					     sizeof(untouched)), 0);
	}
	/* A port other than the device's: not processed at all. */
	vhca_mad_req(t, IB_MGMT_METHOD_GET, IB_PMA_PORT_COUNTERS, VHCA_PORT);
	KUNIT_EXPECT_EQ(test, vhca_mad_call(t, 0), IB_MAD_RESULT_FAILURE);
	KUNIT_EXPECT_EQ(test, vhca_mad_call(t, 2), IB_MAD_RESULT_FAILURE);
	KUNIT_EXPECT_EQ(test, memcmp(&t->out, &untouched, sizeof(untouched)), 0);
}

static struct kunit_case vhca_mad_cases[] = {
	KUNIT_CASE(vhca_mad_class_port_info),
	KUNIT_CASE(vhca_mad_port_counters),
	KUNIT_CASE(vhca_mad_saturation),
	KUNIT_CASE(vhca_mad_port_counters_ext),
	KUNIT_CASE(vhca_mad_refused),
	KUNIT_CASE(vhca_mad_passed_on),
	{}
};

static struct kunit_suite vhca_mad_suite = {
	.name = "vhca_mad",
	.init = vhca_mad_test_init,
	.test_cases = vhca_mad_cases,
};

kunit_test_suite(vhca_mad_suite);
