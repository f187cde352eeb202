// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz_net netem: verified traffic while the corrupted frames that
 * reach the victim's interface are counted.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "net.h"

static int sniff_fd;
static atomic_bool sniff_stop;
static unsigned long corrupted, roce_frames;

static void *sniff_corrupt(void *arg)
{
	uint8_t f[9216];
	struct sockaddr_ll from;
	socklen_t fl;
	size_t iblen;
	ssize_t n;

	(void)arg;
	while (!sniff_stop) {
		fl = sizeof(from);
		n = recvfrom(sniff_fd, f, sizeof(f), MSG_DONTWAIT,
			     (struct sockaddr *)&from, &fl);
		if (n <= 0) {
			usleep(1000);
			continue;
		}
		if (from.sll_pkttype == PACKET_OUTGOING ||
		    !roce_of(f, n, &iblen))
			continue;
		roce_frames++;
		if (!icrc_ok(f + 14, iblen))
			corrupted++;
	}
	return NULL;
}

int netem(char **argv)
{
	struct tpacket_stats st = { 0 };
	socklen_t sl = sizeof(st);
	pthread_t th;
	int i;

	setup(argv);
	for (i = 0; i < N_PAIRS; i++)
		pairs[i].prot = true;
	sniff_fd = packet_socket(argv[5]);
	getsockopt(sniff_fd, SOL_PACKET, PACKET_STATISTICS, &st, &sl);
	if (pthread_create(&th, NULL, sniff_corrupt, NULL))
		fatal("pthread_create");
	traffic(NULL, atof(argv[4]), false);
	for (i = 0; i < N_PAIRS; i++) {
		char name[128];

		snprintf(name, sizeof(name),
			 "pair %d: every transfer under corruption verified (%u rounds)",
			 i, pairs[i].rounds);
		result(!pairs[i].broken, name, "%s", why);
	}
	usleep(200000);
	sniff_stop = true;
	pthread_join(th, NULL);
	sl = sizeof(st);
	getsockopt(sniff_fd, SOL_PACKET, PACKET_STATISTICS, &st, &sl);
	result(st.tp_drops == 0, "the counting socket lost no frame",
	       "%u dropped", st.tp_drops);
	ktap_diag("RoCEv2 frames received %lu", roce_frames);
	printf("# corrupted=%lu\n", corrupted);
	for (i = 0; i < N_PAIRS; i++) {
		qpx_destroy(&pairs[i].a);
		qpx_destroy(&pairs[i].b);
	}
	return exit_status();
}
