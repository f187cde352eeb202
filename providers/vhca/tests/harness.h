/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A small test harness in the manner of the kernel's kselftest harness:
 * a fixture is a struct with its set-up and tear-down, and each test runs
 * on a fresh one of its own.
 *
 *	FIXTURE(ctx) { struct ibv_context *ctx; };
 *	FIXTURE_SETUP(ctx) { self->ctx = ...; }
 *	FIXTURE_TEARDOWN(ctx) { ... }
 *	TEST_F(ctx, query) { check(..., "query answers", "errno %d", errno); }
 *
 * FIXTURE() declares the set-up and the tear-down, so several files can
 * hold tests of one fixture whose FIXTURE_SETUP and FIXTURE_TEARDOWN are
 * in another.  A test runs in a process of its own, forked from the
 * program before any test ran: set-up, the test if set-up failed nothing,
 * tear-down.  A crash, a sanitizer's report or a timeout fails that test
 * alone.
 *
 * Output is KTAP (tests/lib/ktap.h): the program's results are its tests,
 * each a subtest whose results are its checks.
 *
 *	KTAP version 1
 *	1..N
 *	  KTAP version 1
 *	  # Subtest: query
 *	  ok 1 NAME: query answers
 *	ok 1 query
 *
 * A test fails when one of its checks or requirements fails or when its
 * process does not exit with 0.  Options: -l lists the tests, -t NAME
 * (again for more) runs only those named.
 */
#ifndef VHCA_HARNESS_H
#define VHCA_HARNESS_H

#include <stdbool.h>

struct harness_test {
	const char *name;
	void (*run)(void);	/* set-up, test, tear-down */
	bool selected;
	struct harness_test *next;
};

void harness_register(struct harness_test *t);

#define FIXTURE(f)							\
	struct fixture_##f;						\
	void fixture_##f##_setup(struct fixture_##f *self);		\
	void fixture_##f##_teardown(struct fixture_##f *self);		\
	struct fixture_##f

#define FIXTURE_SETUP(f) void fixture_##f##_setup(struct fixture_##f *self)
#define FIXTURE_TEARDOWN(f)						\
	void fixture_##f##_teardown(struct fixture_##f *self)

#define TEST_F(f, t)							\
	static void test_##f##_##t(struct fixture_##f *self);		\
	static void run_##f##_##t(void)					\
	{								\
		struct fixture_##f self = {};				\
		unsigned int failed = harness_failures();		\
									\
		fixture_##f##_setup(&self);				\
		if (harness_failures() == failed)			\
			test_##f##_##t(&self);				\
		fixture_##f##_teardown(&self);				\
	}								\
	static struct harness_test harness_##f##_##t = {		\
		.name = #t, .run = run_##f##_##t,			\
	};								\
	static void __attribute__((constructor))			\
	register_##f##_##t(void)					\
	{								\
		harness_register(&harness_##f##_##t);			\
	}								\
	static void test_##f##_##t(struct fixture_##f *self)

/*
 * A check: the result "ok N NAME: @name", or when !@ok "# NAME: @name: why"
 * (@fmt) and "not ok N NAME: @name".  Returns @ok.
 */
bool check(bool ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * A step the test needs rather than what it tests (a set-up's, a
 * tear-down's): a result only when it fails, then as check().
 */
bool require(bool ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* check() or require(), for a helper that does either. */
typedef bool check_fn(bool ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The failed checks and requirements of this process so far. */
unsigned int harness_failures(void);

/*
 * Parses -l (lists the tests and exits) and -t NAME; returns the index of
 * the first operand, or -1 after a usage error (said on stderr).
 */
int harness_options(int argc, char **argv);

/* NAME, which every check's name starts with (at most 127 bytes). */
void harness_name(const char *name);

/* Runs the tests selected (all without -t); the exit status. */
int harness_run(void);

/* Runs none: "ok 1 NAME # SKIP @reason"; the exit status. */
int harness_skip(const char *reason);

/* The set-up of the program or of a test failed: "NAME setup" fails. */
void harness_fatal(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

#endif /* VHCA_HARNESS_H */
