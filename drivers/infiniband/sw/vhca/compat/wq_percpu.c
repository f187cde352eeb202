// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* WQ_PERCPU (6.17, and 6.12's stable series; 7.x warns without it) */
#include <linux/workqueue.h>

static unsigned int __maybe_unused probe(void)
{
	return WQ_PERCPU;
}
