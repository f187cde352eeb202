// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca module: `rdma link add NAME type vhca netdev DEV` creates a device,
 * netdev events drive its port state and its removal.
 */
#include <linux/dma-mapping.h>
#include <linux/idr.h>
#include <linux/if_arp.h>
#include <linux/module.h>
#include <net/addrconf.h>
#include <rdma/rdma_netlink.h>
#include <rdma/vhca-abi.h>

#include "vhca.h"
#include "vhca_crc.h"

static unsigned int dev_coherent_mb = VHCA_DEV_COHERENT_MB;
module_param(dev_coherent_mb, uint, 0644);
MODULE_PARM_DESC(dev_coherent_mb,
		 "MiB of coherent memory the processes using a device may map together, read when the device is added (default 1024)");

/*
 * Every vhca device, each holding a reference on its ibdev.dev.  The lock is
 * taken inside RTNL (netdev notifier) and never held across a call that
 * takes RTNL.
 */
static LIST_HEAD(vhca_devices);
static DEFINE_MUTEX(vhca_devices_lock);
static struct workqueue_struct *vhca_wq;
/* Instance numbers of the parent platform devices, vhca.N. */
static DEFINE_IDA(vhca_pdev_ida);

static void vhca_dealloc_driver(struct ib_device *ibdev)
{
	struct vhca_dev *vdev = to_vdev(ibdev);

	mutex_lock(&vhca_devices_lock);
	vdev->dead = true;
	mutex_unlock(&vhca_devices_lock);

	vhca_debugfs_remove(vdev);
	vhca_net_detach(vdev);
	vhca_engine_dev_fini(vdev);
	xa_destroy(&vdev->xsrq_xa);
	xa_destroy(&vdev->qp_xa);
	xa_destroy(&vdev->ah_xa);
	xa_destroy(&vdev->mr_xa);
	vhca_coherent_fini(&vdev->coh);
	platform_device_unregister(vdev->pdev);
	ida_free(&vhca_pdev_ida, vdev->pdev_id);
	netdev_put(vdev->ndev, &vdev->ndev_tracker);
}

static const struct ib_device_ops vhca_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = VHCA_UVERBS_ABI_VERSION,

	.add_gid = vhca_net_add_gid,
#if VHCA_ODP
	.advise_mr = vhca_advise_mr,
#endif
	.alloc_dm = vhca_alloc_dm,
	.alloc_hw_port_stats = vhca_alloc_hw_port_stats,
	.alloc_mr = vhca_alloc_mr,
	.alloc_mw = vhca_alloc_mw,
	.alloc_pd = vhca_alloc_pd,
	.alloc_xrcd = vhca_alloc_xrcd,
	.alloc_ucontext = vhca_alloc_ucontext,
	.attach_mcast = vhca_attach_mcast,
	.create_ah = vhca_create_ah,
	.create_cq = vhca_create_cq_op,
	.create_qp = vhca_create_qp,
	.create_srq = vhca_create_srq,
	.create_user_ah = vhca_create_ah,
	.dealloc_dm = vhca_dealloc_dm,
	.dealloc_driver = vhca_dealloc_driver,
	.dealloc_mw = vhca_dealloc_mw,
	.dealloc_pd = vhca_dealloc_pd,
	.dealloc_ucontext = vhca_dealloc_ucontext,
	.dealloc_xrcd = vhca_dealloc_xrcd,
	.del_gid = vhca_net_del_gid,
	.dereg_mr = vhca_dereg_mr,
	.destroy_ah = vhca_destroy_ah,
	.destroy_cq = vhca_destroy_cq,
	.destroy_qp = vhca_destroy_qp,
	.destroy_srq = vhca_destroy_srq,
	.detach_mcast = vhca_detach_mcast,
	.disassociate_ucontext = vhca_disassociate_ucontext,
	.get_dma_mr = vhca_get_dma_mr,
	.get_hw_stats = vhca_get_hw_stats,
	.get_link_layer = vhca_get_link_layer,
	.get_port_immutable = vhca_get_port_immutable,
	.map_mr_sg = vhca_map_mr_sg,
	.mmap = vhca_mmap,
	.mmap_free = vhca_mmap_free,
	.modify_qp = vhca_modify_qp,
	.modify_srq = vhca_modify_srq,
	.poll_cq = vhca_poll_cq,
	.post_recv = vhca_post_recv,
	.post_send = vhca_post_send,
	.post_srq_recv = vhca_post_srq_recv,
	.process_mad = vhca_process_mad,
	.query_ah = vhca_query_ah,
	.query_device = vhca_query_device,
	.query_pkey = vhca_query_pkey,
	.query_port = vhca_query_port,
	.query_qp = vhca_query_qp,
	.query_srq = vhca_query_srq,
	.query_ucontext = vhca_query_ucontext,
	.reg_dm_mr = vhca_reg_dm_mr,
	.reg_user_mr = vhca_reg_user_mr_op,
	.req_notify_cq = vhca_req_notify_cq,
	.rereg_user_mr = vhca_rereg_user_mr,
#ifdef VHCA_HAVE_RESIZE_USER_CQ
	.resize_user_cq = vhca_resize_cq,
#else
	.resize_cq = vhca_resize_cq_op,
#endif

	INIT_RDMA_OBJ_SIZE(ib_ah, vhca_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, vhca_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, vhca_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, vhca_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, vhca_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, vhca_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, vhca_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, vhca_xrcd, ibxrcd),
};

static void vhca_unreg_work(struct work_struct *work)
{
	struct vhca_dev *vdev = container_of(work, struct vhca_dev, unreg_work);

	ib_unregister_device(&vdev->ibdev);
	put_device(&vdev->ibdev.dev);
}

/* Unregister outside RTNL, like ib_unregister_device_queued(), but on our
 * own workqueue so that module exit can flush it.
 */
static void vhca_queue_unregister(struct vhca_dev *vdev)
{
	get_device(&vdev->ibdev.dev);
	if (!queue_work(vhca_wq, &vdev->unreg_work))
		put_device(&vdev->ibdev.dev);
}

static struct vhca_dev *vhca_find_locked(struct net_device *ndev)
{
	struct vhca_dev *vdev;

	lockdep_assert_held(&vhca_devices_lock);
	list_for_each_entry(vdev, &vhca_devices, list)
		if (!vdev->dead && vdev->ndev == ndev)
			return vdev;
	return NULL;
}

/* Drop the list's reference on devices whose dealloc_driver has run. */
static void vhca_reap_locked(void)
{
	struct vhca_dev *vdev, *tmp;

	lockdep_assert_held(&vhca_devices_lock);
	list_for_each_entry_safe(vdev, tmp, &vhca_devices, list) {
		if (!vdev->dead)
			continue;
		list_del(&vdev->list);
		put_device(&vdev->ibdev.dev);
	}
}

/*
 * The parent's net/ directory: one link, named after the netdev, to the
 * netdev (what the net/ directory of a NIC's PCI device lists).  Tools
 * such as rdma-core's tests find a device's netdev there.  The link is
 * renamed with the netdev (under RTNL: the netdev notifier) and goes with
 * the parent, which the device's removal unregisters.
 */
static struct attribute *vhca_net_attrs[] = { NULL };
static const struct attribute_group vhca_net_group = {
	.name = "net",
	.attrs = vhca_net_attrs,
};

static int vhca_net_link_add(struct vhca_dev *vdev)
{
	int err;

	strscpy(vdev->net_link, netdev_name(vdev->ndev),
		sizeof(vdev->net_link));
	err = sysfs_add_link_to_group(&vdev->pdev->dev.kobj, "net",
				      &vdev->ndev->dev.kobj, vdev->net_link);
	if (err)
		vdev->net_link[0] = '\0';
	return err;
}

static void vhca_net_link_rename_locked(struct vhca_dev *vdev)
{
	lockdep_assert_held(&vhca_devices_lock);
	if (vdev->net_link[0])
		sysfs_remove_link_from_group(&vdev->pdev->dev.kobj, "net",
					     vdev->net_link);
	if (vhca_net_link_add(vdev))
		dev_warn(&vdev->pdev->dev,
			 "no net/ link for the renamed netdev %s\n",
			 netdev_name(vdev->ndev));
}

static struct vhca_dev *vhca_alloc_dev(struct net_device *ndev)
{
	struct platform_device_info pinfo = {
		.name = "vhca",
		.dma_mask = DMA_BIT_MASK(64),
	};
	struct ib_device *ibdev;
	struct vhca_dev *vdev;
	int err;

	vdev = ib_alloc_device(vhca_dev, ibdev);
	if (!vdev)
		return ERR_PTR(-ENOMEM);
	ibdev = &vdev->ibdev;

	err = ida_alloc(&vhca_pdev_ida, GFP_KERNEL);
	if (err < 0)
		goto err_dealloc;
	vdev->pdev_id = err;
	pinfo.id = err;
	vdev->pdev = platform_device_register_full(&pinfo);
	if (IS_ERR(vdev->pdev)) {
		err = PTR_ERR(vdev->pdev);
		goto err_ida;
	}
	err = vhca_coherent_init(&vdev->coh, &vdev->pdev->dev);
	if (err)
		goto err_pdev;
	vhca_coherent_quota_init(&vdev->coh.user, ULONG_MAX,
				 (size_t)READ_ONCE(dev_coherent_mb) << 20);

	vdev->ndev = ndev;
	netdev_hold(ndev, &vdev->ndev_tracker, GFP_KERNEL);
	err = sysfs_create_group(&vdev->pdev->dev.kobj, &vhca_net_group);
	if (!err)
		err = vhca_net_link_add(vdev);
	if (err)
		goto err_ndev;
	INIT_WORK(&vdev->unreg_work, vhca_unreg_work);
	xa_init_flags(&vdev->mr_xa, XA_FLAGS_ALLOC1);
	xa_init_flags(&vdev->ah_xa, XA_FLAGS_ALLOC1);
	xa_init(&vdev->qp_xa);
	xa_init(&vdev->xsrq_xa);
	vhca_engine_dev_init(vdev);
	vhca_debugfs_add(vdev);

	/* From here on, dealloc_driver undoes all of the above. */
	ib_set_device_ops(ibdev, &vhca_dev_ops);
	ibdev->driver_def = vhca_uapi_defs;
	ibdev->node_type = RDMA_NODE_IB_CA;
	/* The provider posts to the rings; these two are its kicks. */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	ibdev->dev.parent = &vdev->pdev->dev;
	strscpy(ibdev->node_desc, "vhca", sizeof(ibdev->node_desc));
	addrconf_addr_eui48((u8 *)&ibdev->node_guid, ndev->dev_addr);

	err = ib_device_set_netdev(ibdev, ndev, VHCA_PORT);
	if (err) {
		ib_dealloc_device(ibdev);
		return ERR_PTR(err);
	}
	return vdev;

err_ndev:
	netdev_put(ndev, &vdev->ndev_tracker);
	vhca_coherent_fini(&vdev->coh);
err_pdev:
	platform_device_unregister(vdev->pdev);
err_ida:
	ida_free(&vhca_pdev_ida, vdev->pdev_id);
err_dealloc:
	ib_dealloc_device(ibdev);
	return ERR_PTR(err);
}

/*
 * rdma_link_ops.newlink: runs in process context without RTNL; ndev is held
 * by the core for the call only.  The core itself answers -ENODEV for an
 * unknown netdev; newlink has no extended ack, so each refusal here logs
 * one line saying why.
 */
static int vhca_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct vhca_dev *vdev, *bound;
	int err;

	if (ndev->type != ARPHRD_ETHER) {
		pr_warn("vhca: rdma link add %s: netdev %s is not an Ethernet device\n",
			ibdev_name, netdev_name(ndev));
		return -EOPNOTSUPP;
	}
	vdev = vhca_alloc_dev(ndev);
	if (IS_ERR(vdev)) {
		pr_warn("vhca: rdma link add %s: cannot allocate the device: %pe\n",
			ibdev_name, vdev);
		return PTR_ERR(vdev);
	}
	err = vhca_net_attach(vdev, vhca_engine_rx);
	if (err) {
		if (err == -EADDRINUSE)
			pr_warn("vhca: rdma link add %s: UDP port %u is in use in network namespace net:[%u]\n",
				ibdev_name, ROCE_V2_UDP_DPORT,
				dev_net(ndev)->ns.inum);
		else
			pr_warn("vhca: rdma link add %s: cannot open UDP port %u: %pe\n",
				ibdev_name, ROCE_V2_UDP_DPORT, ERR_PTR(err));
		ib_dealloc_device(&vdev->ibdev);
		return err;
	}

	mutex_lock(&vhca_devices_lock);
	vhca_reap_locked();
	bound = vhca_find_locked(ndev);
	if (bound) {
		mutex_unlock(&vhca_devices_lock);
		pr_warn("vhca: rdma link add %s: netdev %s is already bound to a vhca device\n",
			ibdev_name, netdev_name(ndev));
		ib_dealloc_device(&vdev->ibdev);
		return -EEXIST;
	}
	get_device(&vdev->ibdev.dev);
	list_add_tail(&vdev->list, &vhca_devices);
	mutex_unlock(&vhca_devices_lock);

	err = ib_register_device(&vdev->ibdev, ibdev_name, NULL);
	if (err) {
		if (err == -ENFILE) {
			pr_warn("vhca: rdma link add %s: an RDMA device of that name exists already\n",
				ibdev_name);
			err = -EEXIST;
		} else {
			pr_warn("vhca: rdma link add %s: registration failed: %d\n",
				ibdev_name, err);
		}
		/* dealloc_driver marks it dead; the list reference goes at reaping. */
		ib_dealloc_device(&vdev->ibdev);
		return err;
	}

	mutex_lock(&vhca_devices_lock);
	vdev->registered = true;
	vdev->port_state = vhca_port_state(vdev);
	if (vdev->unreg_pending)
		vhca_queue_unregister(vdev);
	mutex_unlock(&vhca_devices_lock);
	return 0;
}

static struct rdma_link_ops vhca_link_ops = {
	.type = "vhca",
	.newlink = vhca_newlink,
};

static void vhca_port_event_locked(struct vhca_dev *vdev)
{
	enum ib_port_state state = vhca_port_state(vdev);
	struct ib_event ev = {
		.device = &vdev->ibdev,
		.element.port_num = VHCA_PORT,
	};

	if (!vdev->registered || state == vdev->port_state)
		return;
	vdev->port_state = state;
	ev.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
					     IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
}

static int vhca_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct vhca_dev *vdev;

	mutex_lock(&vhca_devices_lock);
	vdev = vhca_find_locked(ndev);
	if (!vdev)
		goto out;

	switch (event) {
	case NETDEV_UNREGISTER:
		if (vdev->registered)
			vhca_queue_unregister(vdev);
		else
			vdev->unreg_pending = true;
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		vhca_port_event_locked(vdev);
		break;
	case NETDEV_CHANGENAME:
		vhca_net_link_rename_locked(vdev);
		break;
	}
out:
	mutex_unlock(&vhca_devices_lock);
	return NOTIFY_DONE;
}

static struct notifier_block vhca_netdev_nb = {
	.notifier_call = vhca_netdev_event,
};

static int __init vhca_init(void)
{
	int err;

	err = vhca_crc_init();
	if (err)
		return err;
	vhca_wq = alloc_workqueue("vhca", WQ_UNBOUND, 0);
	if (!vhca_wq) {
		err = -ENOMEM;
		goto err_crc;
	}
	err = vhca_engine_init();
	if (err)
		goto err_wq;
	err = vhca_odp_wq_init();
	if (err)
		goto err_engine;
	vhca_debugfs_init();

	err = vhca_net_init();
	if (err)
		goto err_debugfs;
	err = register_netdevice_notifier(&vhca_netdev_nb);
	if (err)
		goto err_net;
	rdma_link_register(&vhca_link_ops);
	return 0;

err_net:
	vhca_net_exit();
err_debugfs:
	vhca_debugfs_exit();
	vhca_odp_wq_exit();
err_engine:
	vhca_engine_exit();
err_wq:
	destroy_workqueue(vhca_wq);
err_crc:
	vhca_crc_exit();
	return err;
}

static void __exit vhca_exit(void)
{
	struct vhca_dev *vdev;

	/* No newlink runs after this; it waits for one in flight. */
	rdma_link_unregister(&vhca_link_ops);
	/* Replays NETDEV_UNREGISTER for every netdev: queues every device. */
	unregister_netdevice_notifier(&vhca_netdev_nb);
	flush_workqueue(vhca_wq);

	/*
	 * Unregistration is fenced: this waits for one running elsewhere
	 * (rdma link delete) and is a no-op for a device already gone.
	 */
	for (;;) {
		mutex_lock(&vhca_devices_lock);
		vdev = list_first_entry_or_null(&vhca_devices, struct vhca_dev,
						list);
		if (vdev)
			list_del(&vdev->list);
		mutex_unlock(&vhca_devices_lock);
		if (!vdev)
			break;
		ib_unregister_device(&vdev->ibdev);
		put_device(&vdev->ibdev.dev);
	}
	vhca_net_exit();
	vhca_debugfs_exit();
	vhca_odp_wq_exit();
	vhca_engine_exit();
	destroy_workqueue(vhca_wq);
	vhca_crc_exit();
}

module_init(vhca_init);
module_exit(vhca_exit);

MODULE_DESCRIPTION("vhca: virtual RDMA host channel adapter (RoCEv2)");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("vhca");
