// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Hardware counters of vhca (rdma statistic, sysfs hw_counters).
 */
#include <rdma/ib_verbs.h>

#include "vhca.h"

static const struct rdma_stat_desc vhca_counter_descs[] = {
	[VHCA_CNT_TX_PACKETS].name = "tx_packets",
	[VHCA_CNT_TX_BYTES].name = "tx_bytes",
	[VHCA_CNT_RX_PACKETS].name = "rx_packets",
	[VHCA_CNT_RX_BYTES].name = "rx_bytes",
	[VHCA_CNT_RETRANSMITS].name = "retransmits",
	[VHCA_CNT_TIMEOUTS].name = "timeouts",
	[VHCA_CNT_SEQ_NAKS].name = "seq_naks",
	[VHCA_CNT_RNR_NAKS].name = "rnr_naks",
	[VHCA_CNT_DUP_REQUESTS].name = "duplicate_requests",
	[VHCA_CNT_DB_SYSCALLS].name = "doorbell_syscalls",
	[VHCA_CNT_DB_RECORDS].name = "doorbell_records",
	[VHCA_CNT_UD_DROPS].name = "ud_drops",
	[VHCA_CNT_UC_DROPS].name = "uc_drops",
	[VHCA_CNT_LOCAL_TX_PACKETS].name = "local_tx_packets",
	[VHCA_CNT_LOCAL_RX_PACKETS].name = "local_rx_packets",
	[VHCA_CNT_DIRECT_PACKETS].name = "direct_packets",
	[VHCA_CNT_ODP_PREFETCH_DROPS].name = "odp_prefetch_drops",
	[VHCA_CNT_RX_ICRC_ERRORS].name = "rx_icrc_errors",
	[VHCA_CNT_RX_MALFORMED].name = "rx_malformed",
	[VHCA_CNT_RX_NO_QP].name = "rx_no_qp",
	[VHCA_CNT_RX_WRONG_PEER].name = "rx_wrong_peer",
	[VHCA_CNT_RX_OUT_OF_WINDOW].name = "rx_out_of_window",
	[VHCA_CNT_MALFORMED_WQES].name = "malformed_wqes",
	[VHCA_CNT_LIMIT_OBJECTS].name = "limit_objects",
	[VHCA_CNT_LIMIT_CTX_RECORDS].name = "limit_ctx_records",
	[VHCA_CNT_LIMIT_CTX_COHERENT].name = "limit_ctx_coherent",
	[VHCA_CNT_LIMIT_DEV_COHERENT].name = "limit_dev_coherent",
};

static_assert(ARRAY_SIZE(vhca_counter_descs) == VHCA_NUM_COUNTERS);

struct rdma_hw_stats *vhca_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port)
{
	return rdma_alloc_hw_stats_struct(vhca_counter_descs,
					  ARRAY_SIZE(vhca_counter_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int vhca_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index)
{
	struct vhca_dev *vdev = to_vdev(ibdev);
	struct vhca_coherent_stats coh;
	int i;

	for (i = 0; i < VHCA_NUM_COUNTERS; i++)
		stats->value[i] = atomic64_read(&vdev->counters[i]);
	/* The coherent allocator counts its own refusals. */
	vhca_coherent_get_stats(&vdev->coh, &coh);
	stats->value[VHCA_CNT_LIMIT_CTX_COHERENT] = coh.ctx_quota_refusals;
	stats->value[VHCA_CNT_LIMIT_DEV_COHERENT] = coh.dev_quota_refusals;
	return VHCA_NUM_COUNTERS;
}
