// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Dispatch test: libibverbs loads the uninstalled provider and every verb
 * reaches the right op, without a kernel.
 *
 * usage: dispatch_test [-l] [-t TEST]... TAG PROVIDER [RELEASE]
 *   PROVIDER: /abs/path/libvhca; RELEASE: the rdma-core release it was
 *   built for, when not this test's (VHCA_RDMA_CORE): one built for 36 to
 *   43 has no ATOMIC WRITE and must refuse it.  -l lists the tests, -t
 *   runs those named (harness.h).
 *
 * The test enters a private mount namespace (root only) holding a fake
 * /dev/infiniband and a fake sysfs tree, and plays the kernel itself
 * (fake_uverbs.h).  Its tests (dispatch_*_test.c, on the fixtures of
 * dispatch.h) run each in a process of its own, forked with the fake
 * kernel as it starts.  Prints KTAP (harness.h): a subtest per test, one
 * result per check, "TAG: dispatch: what".
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "dispatch.h"

int main(int argc, char **argv)
{
	char name[128];
	int i;

	i = harness_options(argc, argv);
	if (i < 0 || (argc - i != 2 && argc - i != 3)) {
		fprintf(stderr, "usage: %s [-l] [-t TEST]... TAG "
			"/abs/path/libvhca [RELEASE]\n", argv[0]);
		return 2;
	}
	snprintf(name, sizeof(name), "%s: dispatch", argv[i]);
	harness_name(name);
	if (argc - i == 3)
		provider_release = atoi(argv[i + 2]);
	if (geteuid())
		return harness_skip("needs root");
	enter_fake_system(argv[i + 1]);
	return harness_run();
}
