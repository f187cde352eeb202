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

#endif /* VHCA_H */
