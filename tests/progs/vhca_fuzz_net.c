// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz_net: hostile RoCEv2 from the network, and its verdict.
 *
 *   vhca_fuzz_net victim DEV0 GID0 DEV1 GID1 INFO STOP SECS [CLASS]
 *   vhca_fuzz_net inject --seed N --secs S INFO IFNAME DST SRC [replay|CLASS]
 *   vhca_fuzz_net netem DEV0 GID0 DEV1 GID1 SECS IFNAME
 *
 * victim drives both ends (RDMA devices are visible from every namespace):
 * RC QP pairs between DEV0 (the victim port) and DEV1 (its real peer in
 * the injector's namespace), a UD QP and RC QPs held in RESET, INIT, RTR,
 * RTS and ERR on DEV0.  It writes what the injector needs (QPNs, PSNs,
 * rkeys, addresses) to INFO and runs byte-verified traffic (SEND both
 * ways, WRITE both ways, READ) on every pair until the file STOP appears
 * or SECS pass.  Two kinds of pairs: "protected" ones get from the
 * injector only packets that no correct responder or requester may act
 * on (a PSN of the duplicate region or 2^22 ahead, a wrong ICRC), so any
 * error or wrong byte on them is a defect; "target" ones get everything,
 * and a forged but valid packet may legitimately break them (they stop
 * being used).  The verdict: every protected pair and every target pair
 * still in service carries verified traffic after the storm, no byte
 * outside an MR (guard pages) and none of a remote-read-only MR changed,
 * and a fresh QP pair works.
 *
 * inject runs in the peer's namespace and sends crafted RoCEv2 through a
 * raw IPv4 socket to DST:4791, from SRC (the real peer's address) or a
 * random source, for S seconds: first, whatever time it takes, every
 * opcode to a QP of every kind and state and every truncation of every
 * valid opcode; then random packets: PSNs around and outside the window
 * (learnt live by sniffing IFNAME), unsolicited responses, RETH lengths
 * up to 4 GiB, wrong keys, bad pad counts, TVer, P_Keys and ICRCs,
 * duplicate storms.  With "replay", instead: mutations (bit flips,
 * truncation, duplication) of the real traffic it captured on IFNAME.
 * The packet crafting is its own (raw IP: the IP and UDP lengths, the
 * IP ID and the source are the fuzzer's, as the ICRC needs).  The seed ("# seed=N") fixes the input sequence;
 * where it lands depends on timing (the PSNs learnt), which a replay
 * cannot reproduce.
 *
 * netem runs the verified traffic of the protected pairs for SECS while
 * it counts the RoCEv2 frames arriving on IFNAME whose ICRC is wrong
 * (the frames netem corrupted that reached the victim), and prints
 * "# corrupted=N" for the script to compare with vhca's rx_icrc_errors.
 *
 * CLASS, boundary or mismatch, given to both: the victim keeps QPs of
 * the class's own on DEV0 (to fake peers that never answer) and shares
 * their state with the injector through INFO.shm; the injector aims at
 * them alone for S seconds.  boundary: every opcode with each length,
 * offset and count field at 0, 1, PMTU-1, PMTU, PMTU+1, 2^31, 2^32-1,
 * counting how each was taken; mismatch: the victim's requests answered
 * only with the wrong kind, length or PSN, none of which may complete
 * them with success.
 *
 * The parts, one file a concern (vhca_fuzz_net/): wire.c (the ICRC,
 * captured frames), verbs.c (the victim's objects and verified
 * transfers), victim.c, netem.c, inject.c, and the classes: sweep.c (the
 * victim's side), boundary.c, mismatch.c.
 */

#define KTAP_STATE_HERE
#include "vhca_test.h"
#include "vhca_fuzz_net/net.h"

uint64_t net_rng_stream;

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void __attribute__((noreturn)) fatal(const char *what)
{
	result(false, what, "%s", strerror(errno ? errno : EIO));
	exit(exit_status());
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("VHCA_FUZZ_WAIT"))
		wait_s = atof(getenv("VHCA_FUZZ_WAIT"));
	rng_state = getenv("FUZZ_SEED") ? strtoull(getenv("FUZZ_SEED"), NULL, 0) :
				    (uint64_t)time(NULL);
	if ((argc == 9 || argc == 10) && !strcmp(argv[1], "victim"))
		return victim(argv + 2);
	if (argc == 8 && !strcmp(argv[1], "netem"))
		return netem(argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "inject"))
		return inject(argc - 2, argv + 2);
	fprintf(stderr, "usage: vhca_fuzz_net victim|netem|inject ...\n");
	return 2;
}
