/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * vhca: a virtual RDMA host channel adapter speaking RoCEv2.
 */
#ifndef VHCA_H
#define VHCA_H

#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/platform_device.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "vhca_coherent.h"

#define VHCA_PORT		1
#define VHCA_GID_TABLE_LEN	32
#define VHCA_PKEY_TABLE_LEN	1

/* Device limits: what query_device reports is what the verbs enforce. */
#define VHCA_MAX_QP		16384
#define VHCA_MAX_QP_WR		4096
#define VHCA_MAX_SGE		16
#define VHCA_MAX_CQ		16384
#define VHCA_MAX_CQE		32768
#define VHCA_MAX_MR		65536
#define VHCA_MAX_MR_SIZE	BIT_ULL(40)
#define VHCA_MAX_PD		65536
#define VHCA_MAX_QP_RD_ATOM	16
#define VHCA_MAX_SRQ		4096
#define VHCA_MAX_SRQ_WR		4096
#define VHCA_MAX_AH		65536
#define VHCA_MAX_MSG_SIZE	BIT(31)
#define VHCA_LOCAL_ACK_DELAY	15

/* No IEEE OUI for a software HCA: the all-ones value, as rdma_rxe uses. */
#define VHCA_VENDOR_ID		0xffffff

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
	struct vhca_coherent coh;
	struct work_struct unreg_work;
	enum ib_port_state port_state;	/* last state reported by event */
	bool registered;		/* ib_register_device() succeeded */
	bool unreg_pending;		/* netdev left before registration */
	bool dead;			/* dealloc_driver has run */
};

static inline struct vhca_dev *to_vdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct vhca_dev, ibdev);
}

/*
 * Coherent memory offered to one user context through mmap, freed by
 * mmap_free once the context has removed it and the last mapping is gone.
 */
struct vhca_mmap {
	struct rdma_user_mmap_entry rdma;
	struct vhca_dev *vdev;
	void *cpu_addr;
	dma_addr_t dma;
	size_t size;
	bool writable;
};

struct vhca_ucontext {
	struct ib_ucontext ibuc;
	struct vhca_mmap *db;		/* doorbell page, user read-write */
	struct vhca_mmap *status;	/* status page, user read-only */
};

static inline struct vhca_ucontext *to_vuctx(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct vhca_ucontext, ibuc);
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

/* vhca_ucontext.c */
int vhca_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void vhca_dealloc_ucontext(struct ib_ucontext *ibuc);
void vhca_disassociate_ucontext(struct ib_ucontext *ibuc);
int vhca_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void vhca_mmap_free(struct rdma_user_mmap_entry *entry);

#endif /* VHCA_H */
