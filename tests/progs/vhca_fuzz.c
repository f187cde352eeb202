// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz: the process-side fuzzers of vhca, seeded and
 * bounded in time, most beside a victim process whose RC traffic must not
 * notice.
 *
 *   vhca_fuzz MODE DEV0 GID0 DEV1 GID1 [--seed N] [--secs S]
 *
 * MODE: ring, ring-race, srq-race, verbs, modify, mtu, mmap or hold.
 *
 * DEV0 and DEV1 are two vhca ports of one namespace, GID0 and GID1 the
 * indices of their RoCE v2 GIDs.  The seed (random unless given) is printed
 * first as "# seed=N" with the command line that replays it.
 *
 * ring: a process maps its own rings through the provider (RC QPs on an RQ
 * and on an SRQ, a UD QP, their CQ, the context's doorbell records) and
 * writes what it likes into them: every send and receive WQE field,
 * producer indices backwards (behind the consumer, and back over WQEs it
 * had announced, then kicking), forwards, wrapped and beyond the ring, CQ
 * consumer indices, other records of its doorbell page; it kicks or lets
 * the engine find the doorbell, while partner QPs on DEV1 send into its
 * receive queues.  Error completions, QPs in the error state, CQ overruns
 * and async events are what it may get: it recreates its objects and goes
 * on.
 *
 * The rings are reached through the provider's own structures (vhca.h,
 * built from the same tree): the create requests carry no driver data, so
 * creating the objects through the provider costs no control, and every
 * byte the device reads from user memory (ring slots, doorbell records) is
 * then written by this program alone, through the very mappings the
 * provider made from the create responses.
 *
 * ring-race: shared memory is read once.  The same objects as ring's; the
 * main thread posts valid traffic through the provider (RC SEND, WRITE and
 * READ over an RQ and over an SRQ, UD SEND, with SGEs or inline; receives
 * on the RQs and the SRQ, the partners SENDing into them) and polls, while
 * a second thread flips num_sge, SGE lengths and addresses, inline lengths
 * and the producer indices of the WQEs in flight.  Every completion must
 * be a success or an engine's error status and name a WQE posted; no send
 * queue may stand still; after the race fresh QPs must work.
 *
 * verbs: two processes (DEV0 and DEV1, seeds derived from the seed) run
 * random create, modify, post, poll and destroy operations over PDs, MRs,
 * CQs, SRQs, RC and UD QPs and AHs: every state transition, legal or not,
 * with attribute masks right or random; posts in every state; destroys in
 * every order, refused ones included (a PD with an MR); QPs connected to
 * each other carry traffic while they are modified and destroyed; a fork
 * after the rings are mapped (the child reads them and exits, the parent
 * goes on destroying); a child that opens the device, creates objects and
 * exits with them live.  At the end everything is destroyed; the caller
 * compares the device's object and coherent-buffer counts to its baseline.
 *
 * srq-race: ring-race with the racer on the SRQ's WQEs alone (num_sge,
 * SGE lengths and addresses) while the partners' SENDs consume them.
 *
 * modify: modify_qp from the posting thread and a second one, to every
 * state and back, against QPs whose traffic fails (bad rkey, RNR with
 * rnr_retry 0, retries toward a QPN nobody has, receives too short) and
 * works: every WR completes once, in order, no failing one with SUCCESS,
 * all of them once the QP is in ERR (modify.c).
 *
 * mtu: DEV0's netdev MTU moved from 68 to 9000 under RC traffic (half of
 * it over the wire: vhca's force_wire parameter): active_mtu truthful, UD
 * SENDs longer than it fail, RC bytes exact or an error completion
 * (mtu.c).
 *
 * mmap and hold: rings and doorbell pages kept mapped while their QP, CQ,
 * context (mmap) or device (hold, whose link the caller deletes) goes,
 * then touched, forked with, unmapped (mmap.c).
 *
 * The victim (a process of its own, in ring, ring-race, srq-race, verbs
 * and modify): an RC QP on DEV0
 * connected to one on DEV1, SEND, RDMA WRITE and RDMA READ in turn, every
 * completion a success, every byte checked, no operation taking longer
 * than VICTIM_STALL_S.
 *
 * Replay: a seed gives the same sequence of choices (operations, field
 * values relative to the rings' indices and the objects' keys and
 * numbers); when the engine reaches a WQE, which QPs are in error then,
 * and how the processes interleave are timing, which no seed replays.
 *
 * This file is main(); the parts are in vhca_fuzz/, one file a concern:
 * setup.c (the PRNG stream, ports, QPs to RTS), victim.c, ring.c (the ring
 * fuzzer's objects, steps and report), ring_wqe.c (the values it writes
 * into slots), ring_head.c (the producer indices it writes), race.c and
 * racer.c (ring-race's main thread and its racer), verbs.c, modify.c,
 * mtu.c, mmap.c, and fuzz.h, what they share.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KTAP_STATE_HERE
#include "vhca_fuzz/fuzz.h"

static const struct {
	const char *name;
	int (*main)(char **dev, double secs, uint64_t seed);
} modes[] = {
	{ "ring", ring_main }, { "ring-race", race_main },
	{ "srq-race", srq_race_main },
	{ "verbs", verbs_main }, { "modify", modify_main },
	{ "mtu", mtu_main }, { "mmap", mmap_main }, { "hold", hold_main },
};
#define NMODE	(int)(sizeof(modes) / sizeof(modes[0]))

int main(int argc, char **argv)
{
	uint64_t seed = 0;
	double secs = 10;
	int i, n = 0;
	char *pos[5];
	bool have_seed = false;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			seed = strtoull(argv[++i], NULL, 0);
			have_seed = true;
		} else if (!strcmp(argv[i], "--secs") && i + 1 < argc) {
			secs = strtod(argv[++i], NULL);
		} else if (n < 5) {
			pos[n++] = argv[i];
		} else {
			n = 6;
		}
	}
	for (i = 0; n == 5 && i < NMODE; i++)
		if (!strcmp(pos[0], modes[i].name))
			break;
	if (n != 5 || i == NMODE) {
		fprintf(stderr, "usage: %s ring|ring-race|srq-race|verbs|modify|mtu|mmap|hold DEV0 GID0 DEV1 GID1 [--seed N] [--secs S]\n",
			argv[0]);
		return 255;
	}
	if (!have_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
		       ((uint64_t)getpid() << 40);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	ktap_header();
	ktap_diag("seed=%" PRIu64, seed);
	ktap_diag("replay: %s %s %s %s %s %s --seed %" PRIu64 " --secs %g",
		  argv[0], pos[0], pos[1], pos[2], pos[3], pos[4], seed, secs);
	return modes[i].main(pos + 1, secs, seed);
}
