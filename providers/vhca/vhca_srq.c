// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca: shared receive queues and XRC domains.
 *
 * A basic SRQ (ibv_create_srq, or ibv_create_srq_ex without a type) and an
 * XRC SRQ (ibv_create_srq_ex with IBV_SRQT_XRC, an XRC domain and a CQ)
 * have the same ring; an XRC SRQ also has the number that XRC_SEND work
 * requests name (ibv_get_srq_num).  Functions returning a pointer set
 * errno on failure; the others return 0 or a positive errno value.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "vhca.h"

struct vhca_create_srq_resp_all {
	struct ib_uverbs_create_srq_resp ibv_resp;
	struct vhca_create_srq_resp drv;
};

/*
 * An SRQ not yet created (in @pd, which may be a parent domain), with its
 * lock; NULL (errno set) without memory.
 */
static struct vhca_srq *vhca_srq_alloc(struct ibv_pd *pd)
{
	struct vhca_obj obj;
	struct vhca_srq *srq;
	int err;

	srq = vhca_obj_alloc(pd, sizeof(*srq), VHCA_RES_TYPE_SRQ, &obj);
	if (!srq)
		return NULL;
	srq->obj = obj;
	err = pthread_spin_init(&srq->rq.lock, PTHREAD_PROCESS_PRIVATE);
	if (err) {
		vhca_obj_free(srq, &srq->obj);
		errno = err;
		return NULL;
	}
	return srq;
}

static void vhca_srq_free(struct vhca_srq *srq)
{
	pthread_spin_destroy(&srq->rq.lock);
	vhca_obj_free(srq, &srq->obj);
}

/*
 * After a successful create command: checks the response and maps the
 * ring.  On failure destroys the kernel SRQ, frees srq and returns NULL
 * with errno set.
 */
static struct ibv_srq *vhca_srq_created(struct vhca_srq *srq,
					struct ibv_context *ibctx,
					const struct ibv_srq_attr *attr,
					const struct vhca_create_srq_resp *drv)
{
	const struct vhca_status_rec *st;
	struct vhca_db_rec *db;
	int err = EPROTO;

	if (!drv->count || attr->max_sge > UINT8_MAX)
		goto err_destroy;
	err = vhca_recs(ibctx, drv->db_index, drv->db_area_offset,
			drv->status_area_offset, &db, &st);
	if (err)
		goto err_destroy;
	err = vhca_wq_map(ibctx, &srq->rq, drv->mmap_offset, drv->size,
			  drv->count, drv->stride, attr->max_wr,
			  vhca_recv_wqe_bytes(attr->max_sge));
	if (err)
		goto err_destroy;
	srq->rq.max_sge = attr->max_sge;
	srq->rq.db_head = &db->head[0];
	srq->rq.st_tail = &st->tail[0];
	__atomic_store_n(srq->rq.db_head, 0, __ATOMIC_RELEASE);
	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
	vhca_srq_free(srq);
	errno = err;
	return NULL;
}

struct ibv_srq *vhca_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *attr)
{
	struct vhca_create_srq_resp_all resp = {};
	struct ibv_create_srq cmd;
	struct vhca_srq *srq;
	int err;

	srq = vhca_srq_alloc(pd);
	if (!srq)
		return NULL;
	err = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	if (err) {
		vhca_srq_free(srq);
		errno = err;
		return NULL;
	}
	return vhca_srq_created(srq, pd->context, &attr->attr, &resp.drv);
}

/*
 * ibv_create_srq_ex: a PD, and a type (basic or XRC; an XRC SRQ also
 * needs its XRC domain and CQ).  Tag matching and the rest: EOPNOTSUPP.
 */
struct ibv_srq *vhca_create_srq_ex(struct ibv_context *ibctx,
				   struct ibv_srq_init_attr_ex *attr)
{
	struct vhca_create_srq_resp_all resp = {};
	uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			 IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	enum ibv_srq_type type = IBV_SRQT_BASIC;
	struct ibv_create_xsrq cmd;
	struct vhca_srq *srq;
	int err;

	if (attr->comp_mask & ~known) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)
		type = attr->srq_type;
	if (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd ||
	    (type == IBV_SRQT_XRC &&
	     (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !attr->xrcd ||
	      !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->cq))) {
		errno = EINVAL;
		return NULL;
	}

	srq = vhca_srq_alloc(attr->pd);
	if (!srq)
		return NULL;
	err = ibv_cmd_create_srq_ex(ibctx, &srq->vsrq, attr, &cmd, sizeof(cmd),
				    &resp.ibv_resp, sizeof(resp));
	if (err) {
		vhca_srq_free(srq);
		errno = err;
		return NULL;
	}
	return vhca_srq_created(srq, ibctx, &attr->attr, &resp.drv);
}

int vhca_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	struct vhca_srq *srq = to_vsrq(ibsrq);

	if (srq->vsrq.srq_type != IBV_SRQT_XRC)
		return EOPNOTSUPP;
	*srq_num = srq->vsrq.srq_num;
	return 0;
}

int vhca_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		    int attr_mask)
{
	struct ibv_modify_srq cmd;

	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

int vhca_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int vhca_destroy_srq(struct ibv_srq *ibsrq)
{
	struct vhca_srq *srq = to_vsrq(ibsrq);
	int err;

	err = ibv_cmd_destroy_srq(ibsrq);
	if (err)
		return err;
	vhca_wq_unmap(&srq->rq);
	vhca_srq_free(srq);
	return 0;
}

/* ---- XRC domains ---- */

struct ibv_xrcd *vhca_open_xrcd(struct ibv_context *ibctx,
				struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp;
	struct ibv_open_xrcd cmd;
	struct verbs_xrcd *xrcd;
	int err;

	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd)
		return NULL;
	err = ibv_cmd_open_xrcd(ibctx, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(xrcd);
		errno = err;
		return NULL;
	}
	return &xrcd->xrcd;
}

int vhca_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = vhca_container_of(ibxrcd, struct verbs_xrcd,
						    xrcd);
	int err;

	err = ibv_cmd_close_xrcd(xrcd);
	if (err)
		return err;
	free(xrcd);
	return 0;
}
