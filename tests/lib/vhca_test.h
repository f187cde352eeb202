/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the guest test programs share: one KTAP result per check (ktap.h:
 * "ok N what", or "# what: why" and "not ok N what"; tests/lib/guest.sh
 * relays them), an exit status counting the failures, and the small
 * helpers every program needs (a device by name, a clock).
 */
#ifndef VHCA_TEST_H
#define VHCA_TEST_H

#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "ktap.h"

static inline void result(bool ok, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline void result(bool ok, const char *what, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ktap_vresult(ok, what, fmt, ap);
	va_end(ap);
}

/* The exit status: the number of failures, at most 255. */
static inline int exit_status(void)
{
	return ktap_exit_status();
}

/* The RDMA device called name, opened; NULL when there is none. */
static inline struct ibv_context *open_named(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

/*
 * The device called name, opened, with the attributes of its port and
 * the GID at gid_index there; NULL (the device closed again) on failure.
 */
static inline struct ibv_context *open_port(const char *name, uint8_t port,
					    int gid_index,
					    struct ibv_port_attr *attr,
					    union ibv_gid *gid)
{
	struct ibv_context *ctx = open_named(name);

	if (ctx && (ibv_query_port(ctx, port, attr) ||
		    ibv_query_gid(ctx, port, gid_index, gid))) {
		ibv_close_device(ctx);
		ctx = NULL;
	}
	return ctx;
}

/*
 * Where qp_rts() takes a connected QP: the peer's GID and QP number from
 * our port and GID index, the path MTU and the PSNs; the remote accesses
 * granted; RC and XRC only (each its side, qp_rts()): the READ/atomic
 * depth both ways, the retransmit timeout (4.096 us x 2^timeout) and the
 * retry counts (7: RNR retries without end).  min_rnr_timer is 1
 * (0.01 ms).
 */
struct qp_path {
	uint8_t port;
	int sgid_index;
	union ibv_gid dgid;
	enum ibv_mtu mtu;
	uint32_t dqpn;
	uint32_t rq_psn, sq_psn;
	unsigned int access;
	uint8_t rd_atomic;
	uint8_t timeout, retry_cnt, rnr_retry;
};

/*
 * An RC, UC or XRC QP in any state to RESET, INIT, RTR and RTS along path:
 * the responder's attributes for RC and XRC_RECV, the requester's for RC
 * and XRC_SEND (an XRC_RECV QP takes the timeout still), none of them for
 * UC.  0, or the errno of the modify that failed.
 */
static inline int qp_rts(struct ibv_qp *qp, const struct qp_path *path)
{
	bool rc = qp->qp_type == IBV_QPT_RC;
	bool resp = rc || qp->qp_type == IBV_QPT_XRC_RECV;
	bool req = rc || qp->qp_type == IBV_QPT_XRC_SEND;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	int err;

	err = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	if (err)
		return err;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_INIT, .port_num = path->port,
		.qp_access_flags = path->access,
	};
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err)
		return err;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.ah_attr = {
			.is_global = 1, .port_num = path->port,
			.grh = { .dgid = path->dgid, .hop_limit = 64,
				 .sgid_index = path->sgid_index },
		},
		.path_mtu = path->mtu, .dest_qp_num = path->dqpn,
		.rq_psn = path->rq_psn,
		.max_dest_rd_atomic = path->rd_atomic, .min_rnr_timer = 1,
	};
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    (resp ? IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER : 0));
	if (err)
		return err;
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTS, .sq_psn = path->sq_psn,
		.timeout = path->timeout, .retry_cnt = path->retry_cnt,
		.rnr_retry = path->rnr_retry, .max_rd_atomic = path->rd_atomic,
	};
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     (req || resp ? IBV_QP_TIMEOUT : 0) |
			     (req ? IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				    IBV_QP_MAX_QP_RD_ATOMIC : 0));
}

/* The number a file holds (sysfs, cgroupfs), -1 if none. */
static inline long long file_number(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Port port's hardware counter name of device dev (sysfs), -1 if none. */
static inline long long hw_counter(const char *dev, int port, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/%d/hw_counters/%s", dev,
		 port, name);
	return file_number(path);
}

/* Milliseconds on the monotonic clock. */
static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Up to one completion of cq within ms; 0 if none came. */
static inline int poll1(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	double end = now_ms() + ms;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		poll(NULL, 0, 1);
	} while (now_ms() < end);
	return 0;
}

#endif /* VHCA_TEST_H */
