// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * debugfs view of vhca devices: /sys/kernel/debug/vhca/vhca.N/ (named
 * after the parent platform device, which never changes name).
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "vhca.h"

static struct dentry *vhca_debugfs_root;

static int vhca_coherent_show(struct seq_file *s, void *unused)
{
	struct vhca_dev *vdev = s->private;
	struct vhca_coherent_stats st;

	vhca_coherent_get_stats(&vdev->coh, &st);
	seq_printf(s, "outstanding %lu\n", st.outstanding);
	seq_printf(s, "outstanding_bytes %zu\n", st.outstanding_bytes);
	seq_printf(s, "pool_allocs %lu\n", st.pool_allocs);
	seq_printf(s, "coherent_allocs %lu\n", st.coherent_allocs);
	seq_printf(s, "bad_frees %lu\n", st.bad_frees);
	seq_printf(s, "user_bufs %lu\n", st.user_bufs);
	seq_printf(s, "user_bytes %zu\n", st.user_bytes);
	seq_printf(s, "dev_quota_refusals %lu\n", st.dev_quota_refusals);
	seq_printf(s, "ctx_quota_refusals %lu\n", st.ctx_quota_refusals);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vhca_coherent);

static int vhca_objects_show(struct seq_file *s, void *unused)
{
	struct vhca_dev *vdev = s->private;

	seq_printf(s, "pd %d\nmr %d\nah %d\ncq %d\nsrq %d\nqp %d\n",
		   atomic_read(&vdev->n_pd), atomic_read(&vdev->n_mr),
		   atomic_read(&vdev->n_ah), atomic_read(&vdev->n_cq),
		   atomic_read(&vdev->n_srq), atomic_read(&vdev->n_qp));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vhca_objects);

void vhca_debugfs_add(struct vhca_dev *vdev)
{
	vdev->debugfs = debugfs_create_dir(dev_name(&vdev->pdev->dev),
					   vhca_debugfs_root);
	debugfs_create_file("coherent", 0400, vdev->debugfs, vdev,
			    &vhca_coherent_fops);
	debugfs_create_file("objects", 0400, vdev->debugfs, vdev,
			    &vhca_objects_fops);
}

void vhca_debugfs_remove(struct vhca_dev *vdev)
{
	debugfs_remove_recursive(vdev->debugfs);
	vdev->debugfs = NULL;
}

void vhca_debugfs_init(void)
{
	vhca_debugfs_root = debugfs_create_dir("vhca", NULL);
}

void vhca_debugfs_exit(void)
{
	debugfs_remove_recursive(vhca_debugfs_root);
}
