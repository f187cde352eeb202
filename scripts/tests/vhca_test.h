/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the guest test programs share: one KTAP result per check (ktap.h:
 * "ok N what", or "# what: why" and "not ok N what"; scripts/guest/lib.sh
 * relays them), an exit status counting the failures, and the small
 * helpers every program needs (a device by name, a clock).
 */
#ifndef VHCA_TEST_H
#define VHCA_TEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "ktap.h"

static inline void result(bool ok, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline void result(bool ok, const char *what, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ktap_vresult(ok, what, fmt, ap);
	va_end(ap);
}

/* The exit status: the number of failures, at most 255. */
static inline int exit_status(void)
{
	return ktap_exit_status();
}

/* The RDMA device called name, opened; NULL when there is none. */
static inline struct ibv_context *open_named(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

/* Milliseconds on the monotonic clock. */
static inline double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

#endif /* VHCA_TEST_H */
