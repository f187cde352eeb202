/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Many RC QPs in one process (tests/progs/vhca_qplimit.c and
 * tools/bench/vhca_scale.c): QPs of as many send as receive work requests
 * of one SGE, and a CQ of twice that many entries for every QP_FILL_PER_CQ
 * of them.
 */
#ifndef VHCA_QP_FILL_H
#define VHCA_QP_FILL_H

#include <errno.h>

#include <infiniband/verbs.h>

#define QP_FILL_PER_CQ	64

/* An RC QP of wrs send and wrs receive work requests of one SGE on cq. */
static inline struct ibv_qp *rc_qp_create(struct ibv_pd *pd, struct ibv_cq *cq,
					  unsigned int wrs)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = wrs, .max_recv_wr = wrs,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &init);
}

/*
 * RC QPs of wrs work requests each way into qps[], a new CQ of 2 x wrs
 * entries before every QP_FILL_PER_CQ-th, until max are made or the device
 * refuses a QP or a CQ.  Returns the QPs made; *cqs is the CQs made, *err
 * the errno of the refusal (0 when there was none).  The CQs are each
 * QP's send_cq.
 */
static inline int qp_fill(struct ibv_context *ctx, struct ibv_pd *pd,
			  unsigned int wrs, int max, struct ibv_qp **qps,
			  int *cqs, int *err)
{
	struct ibv_cq *cq = NULL;
	int n = 0;

	*cqs = 0;
	*err = 0;
	while (n < max) {
		if (n % QP_FILL_PER_CQ == 0) {
			cq = ibv_create_cq(ctx, 2 * wrs, NULL, NULL, 0);
			if (!cq) {
				*err = errno;
				break;
			}
			(*cqs)++;
		}
		qps[n] = rc_qp_create(pd, cq, wrs);
		if (!qps[n]) {
			*err = errno;
			break;
		}
		n++;
	}
	return n;
}

#endif /* VHCA_QP_FILL_H */
