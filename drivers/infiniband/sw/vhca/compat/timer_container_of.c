// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* timer_container_of() (6.16; from_timer() before) */
#include <linux/timer.h>

struct probe_obj {
	struct timer_list t;
};

static struct probe_obj * __maybe_unused probe(struct timer_list *t)
{
	struct probe_obj *o = timer_container_of(o, t, t);

	return o;
}
