/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * KTAP results (Documentation/dev-tools/ktap.rst in the kernel) for the C
 * test programs: the guest programs (tests/progs) and the provider's host
 * tests (providers/vhca/tests).
 *
 *   KTAP version 1               once, before the first line of the stream
 *   ok 1 name                    a check that passed
 *   # name: why                  a check that failed: why, then its result
 *   not ok 2 name
 *   ok 3 name # SKIP reason      a check that could not run
 *   # anything                   a diagnostic
 *
 * Results are numbered from 1 in each process; there is no plan line
 * unless the program calls ktap_plan() before its first result (only when
 * the count is known in advance).  A "#" in a name would start the
 * directive, so it is printed as "no."; a newline becomes a space.  Every
 * line is flushed as soon as it is complete: the programs run as pairs and
 * may be killed.  The exit status is ktap_exit_status(): the number of
 * failed results, at most 255.
 */
#ifndef VHCA_KTAP_H
#define VHCA_KTAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/*
 * The stream's state, one per program: a program of several files is
 * compiled with KTAP_SHARED, and one of its files (its main) defines
 * KTAP_STATE_HERE before including this, so that every file's results are
 * numbered and counted in the one stream.
 */
struct ktap_stream {
	unsigned int n;		/* results printed */
	unsigned int failed;	/* of which "not ok" */
	bool started;		/* the version line is out */
};
#ifdef KTAP_SHARED
extern struct ktap_stream ktap_state;
#ifdef KTAP_STATE_HERE
struct ktap_stream ktap_state;
#endif
#else
static struct ktap_stream ktap_state __attribute__((unused));
#endif

/* The version line, once; the callers hold the stdout lock. */
static inline void ktap_start_locked(void)
{
	if (ktap_state.started)
		return;
	ktap_state.started = true;
	fputs("KTAP version 1\n", stdout);
}

/* Start the stream now (before other output such as "READY"). */
static inline void ktap_header(void)
{
	flockfile(stdout);
	ktap_start_locked();
	fflush(stdout);
	funlockfile(stdout);
}

/* The plan: only before the first result, only when n is known. */
static inline void ktap_plan(unsigned int n)
{
	flockfile(stdout);
	ktap_start_locked();
	if (!ktap_state.n)
		printf("1..%u\n", n);
	fflush(stdout);
	funlockfile(stdout);
}

/* A test description: "#" becomes "no.", a newline a space. */
static inline void ktap_put_name(const char *s)
{
	for (; s && *s; s++) {
		if (*s == '#')
			fputs("no.", stdout);
		else if (*s == '\n' || *s == '\r')
			putchar(' ');
		else
			putchar(*s);
	}
}

/*
 * Diagnostic text, each of its lines starting with "# " (and the first
 * with "prefix: " if prefix is set; then empty text prints nothing).
 */
static inline void ktap_put_diag_locked(const char *prefix, const char *fmt,
					va_list ap)
{
	char small[1024], *buf = small, *p;
	va_list aq;
	int len;

	va_copy(aq, ap);
	len = vsnprintf(small, sizeof(small), fmt, aq);
	va_end(aq);
	if (len >= (int)sizeof(small)) {
		p = malloc(len + 1);
		if (p) {
			vsnprintf(p, len + 1, fmt, ap);
			buf = p;
		}
	} else if (len < 0) {
		small[0] = 0;
	}
	if (prefix && !*buf)
		goto out;	/* "name: " and nothing to say */
	fputs("# ", stdout);
	if (prefix) {
		ktap_put_name(prefix);
		fputs(": ", stdout);
	}
	for (p = buf; *p; p++) {
		if (*p == '\n' && p[1])
			fputs("\n# ", stdout);
		else if (*p != '\n')
			putchar(*p);
	}
	putchar('\n');
out:
	if (buf != small)
		free(buf);
}

static inline void ktap_diag(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static inline void ktap_diag(const char *fmt, ...)
{
	va_list ap;

	flockfile(stdout);
	ktap_start_locked();
	va_start(ap, fmt);
	ktap_put_diag_locked(NULL, fmt, ap);
	va_end(ap);
	fflush(stdout);
	funlockfile(stdout);
}

/*
 * One result: "ok N name", or when !ok "# name: why" and "not ok N name"
 * (no diagnostic line when why_fmt is NULL or why is empty).
 */
static inline void ktap_vresult(bool ok, const char *name,
				const char *why_fmt, va_list ap)
{
	flockfile(stdout);
	ktap_start_locked();
	ktap_state.n++;
	if (!ok) {
		ktap_state.failed++;
		if (why_fmt)
			ktap_put_diag_locked(name, why_fmt, ap);
	}
	printf("%s %u ", ok ? "ok" : "not ok", ktap_state.n);
	ktap_put_name(name);
	putchar('\n');
	fflush(stdout);
	funlockfile(stdout);
}

static inline void ktap_result(bool ok, const char *name,
			       const char *why_fmt, ...)
	__attribute__((format(printf, 3, 4)));

static inline void ktap_result(bool ok, const char *name,
			       const char *why_fmt, ...)
{
	va_list ap;

	va_start(ap, why_fmt);
	ktap_vresult(ok, name, why_fmt, ap);
	va_end(ap);
}

/* A check that could not run: "ok N name # SKIP reason". */
static inline void ktap_skip(const char *name, const char *reason)
{
	flockfile(stdout);
	ktap_start_locked();
	ktap_state.n++;
	printf("ok %u ", ktap_state.n);
	ktap_put_name(name);
	fputs(" # SKIP", stdout);
	if (reason && *reason) {
		putchar(' ');
		ktap_put_name(reason);
	}
	putchar('\n');
	fflush(stdout);
	funlockfile(stdout);
}

/* The number of failed results so far. */
static inline unsigned int ktap_failures(void)
{
	return ktap_state.failed;
}

/* The exit status: the number of failed results, at most 255. */
static inline int ktap_exit_status(void)
{
	return ktap_state.failed > 255 ? 255 : (int)ktap_state.failed;
}

#endif /* VHCA_KTAP_H */
