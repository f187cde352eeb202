// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hrtimer_setup() (6.13; hrtimer_init() before, gone in 6.15) */
#include <linux/hrtimer.h>

static enum hrtimer_restart fn(struct hrtimer *t)
{
	return HRTIMER_NORESTART;
}

static void __maybe_unused probe(struct hrtimer *t)
{
	hrtimer_setup(t, fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
}
