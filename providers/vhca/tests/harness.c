// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The test harness (harness.h): the registered tests, each run in a child
 * process whose KTAP is relayed as a subtest, two spaces in.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "ktap.h"

/* Seconds a test may run before SIGALRM ends it. */
#define HARNESS_TIMEOUT	60

static struct harness_test *tests, **tests_tail = &tests;
static char harness_prefix[128];

void harness_register(struct harness_test *t)
{
	*tests_tail = t;
	tests_tail = &t->next;
}

static bool vresult(bool ok, bool quiet, const char *name, const char *fmt,
		    va_list ap)
{
	char full[320];

	if (ok && quiet)
		return true;
	snprintf(full, sizeof(full), "%s: %s", harness_prefix, name);
	ktap_vresult(ok, full, fmt, ap);
	return ok;
}

bool check(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vresult(ok, false, name, fmt, ap);
	va_end(ap);
	return ok;
}

bool require(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vresult(ok, true, name, fmt, ap);
	va_end(ap);
	return ok;
}

unsigned int harness_failures(void)
{
	return ktap_failures();
}

void harness_fatal(const char *fmt, ...)
{
	char name[160];
	va_list ap;

	snprintf(name, sizeof(name), "%s setup", harness_prefix);
	va_start(ap, fmt);
	ktap_vresult(false, name, fmt, ap);
	va_end(ap);
	exit(1);
}

void harness_name(const char *name)
{
	snprintf(harness_prefix, sizeof(harness_prefix), "%s", name);
}

int harness_options(int argc, char **argv)
{
	struct harness_test *t, *u;
	int c;

	for (t = tests; t; t = t->next)
		for (u = t->next; u; u = u->next)
			if (!strcmp(t->name, u->name)) {
				fprintf(stderr, "%s: two tests named %s\n",
					argv[0], t->name);
				return -1;
			}
	while ((c = getopt(argc, argv, "lt:")) != -1) {
		switch (c) {
		case 'l':
			for (t = tests; t; t = t->next)
				puts(t->name);
			exit(0);
		case 't':
			for (t = tests; t && strcmp(t->name, optarg);)
				t = t->next;
			if (!t) {
				fprintf(stderr, "%s: no test named %s\n",
					argv[0], optarg);
				return -1;
			}
			t->selected = true;
			break;
		default:
			return -1;
		}
	}
	return optind;
}

/*
 * The test's child: its checks go to @out, numbered from 1 (the parent
 * printed the subtest's version line); its exit status is the number of
 * them that failed (ktap.h), or a sanitizer's.
 */
static void __attribute__((noreturn)) run_child(const struct harness_test *t,
						int out)
{
	if (dup2(out, STDOUT_FILENO) < 0)
		harness_fatal("dup2: %s", strerror(errno));
	close(out);
	ktap_state.n = 0;
	ktap_state.failed = 0;
	alarm(HARNESS_TIMEOUT);
	t->run();
	exit(ktap_exit_status());
}

/* Relays the child's lines from @in as a subtest; its failed checks. */
static unsigned int relay(int in)
{
	unsigned int failed = 0;
	size_t size = 0;
	char *line = NULL;
	ssize_t len;
	FILE *f;

	f = fdopen(in, "r");
	if (!f)
		harness_fatal("fdopen: %s", strerror(errno));
	while ((len = getline(&line, &size, f)) > 0) {
		printf("  %s%s", line, line[len - 1] == '\n' ? "" : "\n");
		fflush(stdout);
		failed += !strncmp(line, "not ok ", 7);
	}
	free(line);
	fclose(f);
	return failed;
}

/* One test in a child of its own; whether it passed. */
static bool run_test(const struct harness_test *t)
{
	unsigned int failed;
	int fds[2], status;
	pid_t pid;

	printf("  KTAP version 1\n  # Subtest: %s\n", t->name);
	fflush(stdout);
	if (pipe(fds))
		harness_fatal("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		harness_fatal("fork: %s", strerror(errno));
	if (!pid) {
		close(fds[0]);
		run_child(t, fds[1]);
	}
	close(fds[1]);
	failed = relay(fds[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			harness_fatal("waitpid: %s", strerror(errno));

	if (WIFEXITED(status) && !WEXITSTATUS(status))
		ktap_result(true, t->name, NULL);
	else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
		ktap_result(false, t->name, "timed out after %d s",
			    HARNESS_TIMEOUT);
	else if (WIFSIGNALED(status))
		ktap_result(false, t->name, "killed by signal %d (%s)",
			    WTERMSIG(status), strsignal(WTERMSIG(status)));
	else if (failed)
		ktap_result(false, t->name, "%u of its checks failed", failed);
	else
		ktap_result(false, t->name,
			    "exit %d with no failed check: see stderr",
			    WEXITSTATUS(status));
	return WIFEXITED(status) && !WEXITSTATUS(status);
}

int harness_run(void)
{
	struct harness_test *t;
	unsigned int n = 0, failed = 0;
	bool all = true;

	for (t = tests; t; t = t->next)
		all &= !t->selected;
	for (t = tests; t; t = t->next) {
		t->selected |= all;
		n += t->selected;
	}
	ktap_plan(n);
	for (t = tests; t; t = t->next)
		if (t->selected)
			failed += !run_test(t);
	return failed ? 1 : 0;
}

int harness_skip(const char *reason)
{
	ktap_skip(harness_prefix, reason);
	return 0;
}
