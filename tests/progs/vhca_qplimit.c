// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_qplimit: the QPs one process gets, through libibverbs and the
 * provider (loaded with RDMAV_DRIVERS).
 *
 *   vhca_qplimit DEVICE GID_INDEX
 *
 * RC QPs of 64 send and 64 receive work requests of one SGE, a CQ of 128
 * entries per 64 of them, are created until the device refuses one.  It
 * must refuse exactly past query_device's max_qp, with ENOMEM.  The last
 * two QPs, whose doorbell and status records are in the context's last
 * pair of areas, are then connected to each other through GID_INDEX (a
 * RoCE v2 GID of port 1) and carry a SEND both ways, checked byte for
 * byte.  The process prints "HOLDING" and exits holding every QP: the
 * scenario sees them go.  Every check prints one KTAP result line; the
 * exit status is the number of failures.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "qp_fill.h"
#include "vhca_test.h"

#define PORT		1
#define WRS		64
#define MSG		64

/* A SEND of MSG bytes from a to b, received and compared. */
static bool send_recv(struct ibv_qp *a, struct ibv_qp *b, struct ibv_mr *mr,
		      char *buf, char tag)
{
	struct ibv_sge rs = { (uintptr_t)buf, MSG, mr->lkey };
	struct ibv_sge ss = { (uintptr_t)buf + MSG, MSG, mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rs, .num_sge = 1 };
	struct ibv_send_wr swr = {
		.wr_id = 2, .sg_list = &ss, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr *sbad;
	struct ibv_wc wc;
	bool got_send = false, got_recv = false;
	int i;

	memset(buf, 0, MSG);
	memset(buf + MSG, tag, MSG);
	if (ibv_post_recv(b, &rwr, &rbad) || ibv_post_send(a, &swr, &sbad))
		return false;
	/* a and b share their CQ (the last QPs' CQ): two completions. */
	for (i = 0; i < 2; i++) {
		if (poll1(a->send_cq, &wc, 5000) != 1 ||
		    wc.status != IBV_WC_SUCCESS)
			return false;
		got_send |= wc.wr_id == 2 && wc.qp_num == a->qp_num;
		got_recv |= wc.wr_id == 1 && wc.qp_num == b->qp_num &&
			    wc.byte_len == MSG;
	}
	for (i = 0; i < MSG; i++)
		if (buf[i] != tag)
			return false;
	return got_send && got_recv;
}

int main(int argc, char **argv)
{
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	struct ibv_context *ctx;
	struct ibv_qp **qps;
	struct qp_path path = {
		.port = PORT, .mtu = IBV_MTU_1024, .rq_psn = 7, .sq_psn = 7,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	int n, err, cqs;
	char *buf;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DEVICE GID_INDEX\n", argv[0]);
		return 2;
	}
	path.sgid_index = atoi(argv[2]);
	ctx = open_port(argv[1], PORT, path.sgid_index, &pattr, &path.dgid);
	if (!ctx || ibv_query_device(ctx, &dattr)) {
		result(false, "open the device", "%s", strerror(errno));
		return exit_status();
	}
	pd = ibv_alloc_pd(ctx);
	buf = calloc(1, 2 * MSG);
	mr = pd && buf ? ibv_reg_mr(pd, buf, 2 * MSG,
				    IBV_ACCESS_LOCAL_WRITE) : NULL;
	qps = calloc(dattr.max_qp + 1, sizeof(*qps));
	if (!mr || !qps) {
		result(false, "PD, MR and the QP table", "%s", strerror(errno));
		return exit_status();
	}

	n = qp_fill(ctx, pd, WRS, dattr.max_qp + 1, qps, &cqs, &err);
	result(n == dattr.max_qp && err == ENOMEM,
	       "QPs until refused: max_qp of them, then ENOMEM",
	       "%d QPs (max_qp %d) and %d CQs, then %s", n, dattr.max_qp, cqs,
	       err ? strerror(err) : "none refused");
	if (n < 2)
		return exit_status();

	a = qps[n - 2];
	b = qps[n - 1];
	path.dqpn = b->qp_num;
	path.access = IBV_ACCESS_LOCAL_WRITE;
	err = qp_rts(a, &path);
	path.dqpn = a->qp_num;
	err = err ?: qp_rts(b, &path);
	result(!err && a->send_cq == b->send_cq,
	       "the last two QPs connected to each other", "%s",
	       strerror(err));
	result(!err && send_recv(a, b, mr, buf, 'a') &&
	       send_recv(b, a, mr, buf, 'b'),
	       "a SEND each way through the last pair of areas", "failed");
	printf("HOLDING %d QPs\n", n);
	fflush(stdout);
	return exit_status();
}
