/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * vhca: a virtual RDMA host channel adapter speaking RoCEv2.
 */
#ifndef VHCA_H
#define VHCA_H

#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/platform_device.h>
#include <linux/refcount.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "vhca_compat.h"
#include "vhca_param.h"

#define VHCA_PORT		1
#define VHCA_GID_TABLE_LEN	32
#define VHCA_PKEY_TABLE_LEN	1

/* A user context's areas of records: bytes of each, and pairs at most. */
#define VHCA_UCTX_AREA		(VHCA_UCTX_RECS * sizeof(struct vhca_db_rec))
#define VHCA_UCTX_AREAS		DIV_ROUND_UP(VHCA_UCTX_MAX_RECS, VHCA_UCTX_RECS)

/* Hardware counters (rdma statistic): the data path fills them. */
enum vhca_counter {
	VHCA_CNT_TX_PACKETS,
	VHCA_CNT_TX_BYTES,
	VHCA_CNT_RX_PACKETS,
	VHCA_CNT_RX_BYTES,
	VHCA_CNT_RETRANSMITS,
	VHCA_CNT_TIMEOUTS,		/* retransmit timer expiries */
	VHCA_CNT_SEQ_NAKS,
	VHCA_CNT_RNR_NAKS,
	VHCA_CNT_DUP_REQUESTS,
	VHCA_CNT_DB_SYSCALLS,
	VHCA_CNT_DB_RECORDS,
	VHCA_CNT_UD_DROPS,
	VHCA_CNT_UC_DROPS,		/* UC messages dropped (vhca_resp.c) */
	VHCA_CNT_LOCAL_TX_PACKETS,	/* delivered in the kernel (vhca_net.c) */
	VHCA_CNT_LOCAL_RX_PACKETS,
	VHCA_CNT_DIRECT_PACKETS,	/* placed without packets (vhca_req.c) */
	VHCA_CNT_ODP_PREFETCH_DROPS,	/* over VHCA_ODP_PREFETCH_MAX (vhca_odp.c) */
	/* Received and dropped (Documentation/engine.md, Receive checks). */
	VHCA_CNT_RX_ICRC_ERRORS,
	VHCA_CNT_RX_MALFORMED,		/* headers, lengths, wrong transport */
	VHCA_CNT_RX_NO_QP,		/* a QP number no QP has */
	VHCA_CNT_RX_WRONG_PEER,		/* not from the RC QP's peer */
	VHCA_CNT_RX_OUT_OF_WINDOW,	/* RC requests past the expected PSN */
	VHCA_CNT_MALFORMED_WQES,	/* refused by the engine (vhca_wqe.c) */
	/* Creates refused (ENOMEM) at a limit, by limit. */
	VHCA_CNT_LIMIT_OBJECTS,		/* a device maximum: max_qp, max_cq... */
	VHCA_CNT_LIMIT_CTX_RECORDS,	/* a context's doorbell records */
	VHCA_CNT_LIMIT_CTX_COHERENT,	/* uctx_coherent_mb (vhca_coherent) */
	VHCA_CNT_LIMIT_DEV_COHERENT,	/* dev_coherent_mb (vhca_coherent) */
	VHCA_NUM_COUNTERS
};

/* No IEEE OUI for a software HCA: the all-ones value, as rdma_rxe uses. */
#define VHCA_VENDOR_ID		0xffffff

/* The objects use the limits above. */
#include "vhca_ah.h"
#include "vhca_coherent.h"
#include "vhca_cq.h"
#include "vhca_mr.h"
#include "vhca_net.h"
#include "vhca_qp.h"
#include "vhca_ring.h"

/*
 * One HCA, bound to one netdev.  Listed in vhca_devices (which holds a
 * reference on ibdev.dev) from newlink until module exit or reaping after
 * dealloc_driver has run.
 */
struct vhca_dev {
	struct ib_device ibdev;		/* first: ib_alloc_device() */
	struct list_head list;
	struct platform_device *pdev;	/* parent: coherent memory, modalias */
	int pdev_id;			/* N of its name vhca.N */
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	char net_link[IFNAMSIZ];	/* name of ndev's link in pdev's net/ */
	struct vhca_coherent coh;
	struct vhca_net_link net;	/* its namespace's RoCEv2 socket */
	struct work_struct unreg_work;
	enum ib_port_state port_state;	/* last state reported by event */
	bool registered;		/* ib_register_device() succeeded */
	bool unreg_pending;		/* netdev left before registration */
	bool dead;			/* dealloc_driver has run */

	struct xarray mr_xa;		/* MRs by key index */
	struct xarray ah_xa;		/* AHs by ah_index */
	struct xarray qp_xa;		/* QPs by number */
	struct xarray linger_xa;		/* destroyed RC QPs lingering */
	struct xarray xsrq_xa;		/* XRC SRQs by number */
	struct delayed_work linger_gc;	/* frees the expired ones */
	atomic_t n_lingering;
	u8 mr_key;			/* key byte of the last MR */
	atomic_t n_pd, n_mr, n_ah, n_cq, n_srq, n_qp, n_xrcd;
	atomic_t odp_prefetches;	/* asynchronous, queued or running */
	atomic64_t counters[VHCA_NUM_COUNTERS];
	struct dentry *debugfs;
};

static inline struct vhca_dev *to_vdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct vhca_dev, ibdev);
}

/*
 * The port's active MTU: the largest IB MTU whose packets, with every
 * header, fit the netdev's MTU, and 256 below that (as rdma_rxe reports;
 * iboe_get_mtu() gives 0 for a netdev MTU under 352).
 */
static inline enum ib_mtu vhca_port_mtu(const struct vhca_dev *vdev)
{
	return max_t(int, iboe_get_mtu(READ_ONCE(vdev->ndev->mtu)), IB_MTU_256);
}

/*
 * Coherent memory offered to one user context through mmap, freed by
 * mmap_free once the context has removed it and the last mapping is gone.
 * The rings of a destroyed object keep its place in its kind's count
 * (vhca_rings_release()) until the last of them is freed: owner is the
 * ring that holds the count, holds (owner's) the object's rings not yet
 * freed; a ring not of a destroyed object is its own owner.
 */
struct vhca_mmap {
	struct rdma_user_mmap_entry rdma;
	struct vhca_dev *vdev;
	void *cpu_addr;
	dma_addr_t dma;
	size_t size;
	bool writable;
	struct vhca_mmap *owner;
	refcount_t holds;
	atomic_t *count;		/* owner: given back at the last free */
};

/*
 * A user context.  quota bounds the coherent memory of its mappable
 * buffers; the core frees the context only after the last mmap_free,
 * so every buffer is uncharged before the quota goes.
 */
/*
 * A user context.  Its records are in pairs of areas of VHCA_UCTX_RECS
 * records each: the doorbell records (user read-write) and the status
 * records (user read-only).  Pair 0 comes with the context, the others
 * when a record of theirs is first handed out (under areas_lock); all go
 * with the context.
 */
struct vhca_ucontext {
	struct ib_ucontext ibuc;
	struct mutex areas_lock;	/* makes areas[n] */
	struct vhca_uctx_area areas[VHCA_UCTX_AREAS];
	struct ida recs;		/* record indices in use */
	struct vhca_coherent_quota quota;
};

static inline struct vhca_ucontext *to_vuctx(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct vhca_ucontext, ibuc);
}

/* The user context of a verb's caller: NULL for a kernel caller. */
static inline struct vhca_ucontext *vhca_uctx_of(struct ib_udata *udata)
{
	return udata ? rdma_udata_to_drv_context(udata, struct vhca_ucontext,
						 ibuc) : NULL;
}

/* vhca_verbs.c */
int vhca_query_device(struct ib_device *ibdev, struct ib_device_attr *attr,
		      struct ib_udata *udata);
int vhca_query_port(struct ib_device *ibdev, u32 port,
		    struct ib_port_attr *attr);
int vhca_query_pkey(struct ib_device *ibdev, u32 port, u16 index, u16 *pkey);
int vhca_get_port_immutable(struct ib_device *ibdev, u32 port,
			    struct ib_port_immutable *immutable);
enum rdma_link_layer vhca_get_link_layer(struct ib_device *ibdev, u32 port);
enum ib_port_state vhca_port_state(struct vhca_dev *vdev);

/* The checks every verb that creates an object makes first. */

/**
 * vhca_udata_check() - refuse request data this driver does not know
 * @ibdev: the device
 * @udata: the verb's user data, NULL for a kernel caller
 * @verb: the verb's name, for the debug message
 *
 * Return: 0, or -EINVAL when the request carries any byte other than zero.
 */
static inline int vhca_udata_check(struct ib_device *ibdev,
				   struct ib_udata *udata, const char *verb)
{
	if (!udata || !udata->inlen ||
	    ib_is_udata_cleared(udata, 0, udata->inlen))
		return 0;
	ibdev_dbg(ibdev, "%s: unknown request data\n", verb);
	return -EINVAL;
}

/**
 * vhca_copy_resp() - give a verb's response to its user caller
 * @udata: the verb's user data
 * @resp: the response
 * @len: its size
 *
 * A provider that knows a shorter response gets the part it knows.
 *
 * Return: 0 or -EFAULT.
 */
static inline int vhca_copy_resp(struct ib_udata *udata, void *resp,
				 size_t len)
{
	return ib_copy_to_udata(udata, resp, min(udata->outlen, len));
}

/**
 * vhca_object_get() - count one more object of a kind against its limit
 * @ibdev: the device
 * @count: the device's count of objects of that kind
 * @max: the limit query_device reports
 * @verb: the verb's name, for the debug message
 *
 * The caller gives the count back with atomic_dec() when the object goes,
 * or when its creation fails later.
 *
 * Return: 0, or -ENOMEM (the count unchanged, limit_objects counted) when
 * @max exist already.
 */
static inline int vhca_object_get(struct ib_device *ibdev, atomic_t *count,
				  int max, const char *verb)
{
	if (atomic_inc_return(count) <= max)
		return 0;
	atomic_dec(count);
	atomic64_inc(&to_vdev(ibdev)->counters[VHCA_CNT_LIMIT_OBJECTS]);
	ibdev_dbg(ibdev, "%s: %d exist already\n", verb, max);
	return -ENOMEM;
}

/**
 * vhca_create_prologue() - the checks of a create verb, before any work
 * @ibdev: the device
 * @udata: the verb's user data, NULL for a kernel caller
 * @count: the device's count of objects of that kind
 * @max: its limit
 * @verb: the verb's name, for debug messages
 *
 * Return: 0 with the object counted, or the error of vhca_udata_check()
 * or vhca_object_get().
 */
static inline int vhca_create_prologue(struct ib_device *ibdev,
				       struct ib_udata *udata,
				       atomic_t *count, int max,
				       const char *verb)
{
	return vhca_udata_check(ibdev, udata, verb) ?:
	       vhca_object_get(ibdev, count, max, verb);
}

/* vhca_dm.c: device memory, and the driver's attributes of the ioctl methods. */
struct ib_dm *vhca_alloc_dm(struct ib_device *ibdev, struct ib_ucontext *ibuc,
			    struct ib_dm_alloc_attr *attr,
			    struct uverbs_attr_bundle *attrs);
int vhca_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs);
struct ib_mr *vhca_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			     struct ib_dm_mr_attr *attr,
			     struct uverbs_attr_bundle *attrs);
extern const struct uapi_definition vhca_uapi_defs[];

/* vhca_debugfs.c */
void vhca_debugfs_init(void);
void vhca_debugfs_exit(void);
void vhca_debugfs_add(struct vhca_dev *vdev);
void vhca_debugfs_remove(struct vhca_dev *vdev);

/*
 * The engine's entries: vhca_engine.c (its workqueue, the kick that queues
 * a QP's work item on it, the setup of devices and QPs), vhca_rx.c (the
 * receive handler the net layer calls), vhca_linger.c (a destroyed QP left
 * lingering).
 */
int vhca_engine_init(void);
void vhca_engine_exit(void);
void vhca_engine_dev_init(struct vhca_dev *vdev);
void vhca_engine_dev_fini(struct vhca_dev *vdev);
int vhca_engine_qp_init(struct vhca_qp *qp);
void vhca_engine_qp_fini(struct vhca_qp *qp);
void vhca_engine_kick(struct vhca_qp *qp);
void vhca_engine_rx(struct vhca_dev *vdev, struct sk_buff *skb);
void vhca_engine_qp_linger(struct vhca_qp *qp);

/* vhca_mad.c */
int vhca_process_mad(struct ib_device *ibdev, int mad_flags, u32 port_num,
		     const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		     const struct ib_mad *in_mad, struct ib_mad *out_mad,
		     size_t *out_mad_size, u16 *out_mad_pkey_index);

/* vhca_stats.c */
struct rdma_hw_stats *vhca_alloc_hw_port_stats(struct ib_device *ibdev,
					       u32 port);
int vhca_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		      u32 port, int index);

/* vhca_ucontext.c */
struct vhca_mmap *vhca_mmap_create(struct vhca_ucontext *uctx, size_t size,
				   bool writable);
int vhca_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void vhca_dealloc_ucontext(struct ib_ucontext *ibuc);
int vhca_query_ucontext(struct ib_ucontext *ibuc,
			struct uverbs_attr_bundle *attrs);
void vhca_disassociate_ucontext(struct ib_ucontext *ibuc);
int vhca_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void vhca_mmap_free(struct rdma_user_mmap_entry *entry);

#endif /* VHCA_H */
