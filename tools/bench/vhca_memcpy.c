// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The guest's memcpy bandwidth, the floor of a software HCA (one copy per
 * byte): memcpy between two 64 MiB buffers, repeated, in MB/sec where a MB
 * is 2^20 bytes as in perftest's reports.
 *
 * usage: vhca_memcpy [SECONDS]   (default 3)
 * Prints "memcpy_bw_MBps <value>" and the details on standard output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUF_SIZE (64UL << 20)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3.0;
	unsigned long copies = 0;
	unsigned char *a, *b;
	double t0, t;

	if (secs <= 0) {
		fprintf(stderr, "usage: vhca_memcpy [SECONDS]\n");
		return 2;
	}
	a = malloc(BUF_SIZE);
	b = malloc(BUF_SIZE);
	if (!a || !b) {
		perror("malloc");
		return 1;
	}
	/* Fault every page in before timing, and warm up once. */
	memset(a, 0x5a, BUF_SIZE);
	memset(b, 0xa5, BUF_SIZE);
	memcpy(b, a, BUF_SIZE);

	t0 = now();
	do {
		/* Alternate directions so that no copy can be skipped. */
		if (copies & 1)
			memcpy(a, b, BUF_SIZE);
		else
			memcpy(b, a, BUF_SIZE);
		copies++;
		t = now() - t0;
	} while (t < secs);

	if (a[BUF_SIZE - 1] != 0x5a || b[0] != 0x5a) {
		fprintf(stderr, "memcpy: wrong data\n");
		return 1;
	}
	printf("memcpy: %lu copies of %lu MiB in %.3f s\n", copies,
	       BUF_SIZE >> 20, t);
	printf("memcpy_bw_MBps %.1f\n", copies * (double)BUF_SIZE / t / (1 << 20));
	free(a);
	free(b);
	return 0;
}
