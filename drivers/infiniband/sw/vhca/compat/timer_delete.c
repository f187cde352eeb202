// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* timer_delete() (6.2; del_timer() before, gone in 6.15) */
#include <linux/timer.h>

static int __maybe_unused probe(struct timer_list *t)
{
	return timer_delete(t);
}
