// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kernel network stack's own round trip over make bench's wire, the
 * floor under a wire RDMA READ (one request out, one response back): a
 * UDP socket on ADDR_A in this network namespace and one on ADDR_B in
 * namespace NETNS (/run/netns/NETNS), both in this process; each round
 * sends 2 bytes from A to B and B sends them back, each socket read by
 * polling with MSG_DONTWAIT, so no process sleeps or wakes.  Four system
 * calls a round where an RDMA READ makes one.
 *
 * usage: vhca_udp_rtt NETNS ADDR_A ADDR_B [ROUNDS]   (default 5000)
 * Prints "udp_rtt_min_us <v>" and "udp_rtt_median_us <v>" on standard
 * output.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PORT_A	5001
#define PORT_B	5002

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A UDP socket bound to ip:port of the current namespace, or -1. */
static int udp_bound(const char *ip, int port, struct sockaddr_in *sa)
{
	int s;

	*sa = (struct sockaddr_in){ .sin_family = AF_INET,
				    .sin_port = htons(port) };
	if (inet_pton(AF_INET, ip, &sa->sin_addr) != 1) {
		fprintf(stderr, "vhca_udp_rtt: bad address %s\n", ip);
		return -1;
	}
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0 || bind(s, (struct sockaddr *)sa, sizeof(*sa))) {
		perror("vhca_udp_rtt: socket/bind");
		return -1;
	}
	return s;
}

/* Sends 2 bytes from s to, then reads them at r within a second; 0 or -1. */
static int hop(int s, const struct sockaddr_in *to, int r)
{
	char buf[16] = "rt";
	unsigned long spins = 0;
	double give_up = 0;
	ssize_t n;

	if (sendto(s, buf, 2, 0, (const struct sockaddr *)to,
		   sizeof(*to)) != 2) {
		perror("vhca_udp_rtt: sendto");
		return -1;
	}
	while ((n = recv(r, buf, sizeof(buf), MSG_DONTWAIT)) < 0) {
		if (++spins % 4096)
			continue;
		if (!give_up) {
			give_up = now_us() + 1e6;
		} else if (now_us() > give_up) {
			fprintf(stderr, "vhca_udp_rtt: no datagram in 1 s\n");
			return -1;
		}
	}
	return n == 2 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa, sb;
	char path[PATH_MAX];
	int self, peer, a, b;
	double *t, t0;
	long rounds, i;

	if (argc < 4) {
		fprintf(stderr, "usage: vhca_udp_rtt NETNS ADDR_A ADDR_B [ROUNDS]\n");
		return 2;
	}
	rounds = argc > 4 ? atol(argv[4]) : 5000;
	if (rounds < 1) {
		fprintf(stderr, "vhca_udp_rtt: ROUNDS must be positive\n");
		return 2;
	}
	snprintf(path, sizeof(path), "/run/netns/%s", argv[1]);
	self = open("/proc/self/ns/net", O_RDONLY);
	peer = open(path, O_RDONLY);
	t = calloc(rounds, sizeof(*t));
	if (self < 0 || peer < 0 || !t) {
		perror("vhca_udp_rtt: namespaces");
		return 1;
	}
	a = udp_bound(argv[2], PORT_A, &sa);
	if (a < 0)
		return 1;
	if (setns(peer, CLONE_NEWNET)) {
		perror("vhca_udp_rtt: setns");
		return 1;
	}
	b = udp_bound(argv[3], PORT_B, &sb);
	if (b < 0 || setns(self, CLONE_NEWNET))
		return 1;

	for (i = 0; i < rounds; i++) {
		t0 = now_us();
		if (hop(a, &sb, b) || hop(b, &sa, a))
			return 1;
		t[i] = now_us() - t0;
	}
	qsort(t, rounds, sizeof(*t), cmp_double);
	printf("udp_rtt_min_us %.2f\n", t[0]);
	printf("udp_rtt_median_us %.2f\n", t[rounds / 2]);
	free(t);
	return 0;
}
