/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the guest test programs share: one KTAP result per check (ktap.h:
 * "ok N what", or "# what: why" and "not ok N what"; scripts/guest/lib.sh
 * relays them) and an exit status counting the failures.
 */
#ifndef VHCA_TEST_H
#define VHCA_TEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

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

#endif /* VHCA_TEST_H */
