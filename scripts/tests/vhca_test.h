/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the guest test programs share: one "PASS: what" or "FAIL: what:
 * why" line per check (scripts/guest/lib.sh relays them) and an exit
 * status counting the failures.
 */
#ifndef VHCA_TEST_H
#define VHCA_TEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int failures;

static inline void result(bool ok, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline void result(bool ok, const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("%s: %s", ok ? "PASS" : "FAIL", what);
	if (!ok) {
		printf(": ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		failures++;
	}
	printf("\n");
	fflush(stdout);
}

/* The exit status: the number of failures, at most 255. */
static inline int exit_status(void)
{
	return failures > 255 ? 255 : failures;
}

#endif /* VHCA_TEST_H */
