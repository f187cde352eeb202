/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the parts of vhca_fuzz (tests/progs/vhca_fuzz.c, the program's
 * comment and main(); this directory, one file a concern) share.
 */
#ifndef VHCA_FUZZ_H
#define VHCA_FUZZ_H

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "vhca.h"
#include "vhca_test.h"

/*
 * fuzz_rng.h keeps its state in a static, one per file: here every file's
 * rng_state is the program's one stream, fuzz_rng_stream (setup.c), so
 * that a seed replays the same choices whichever file makes them.
 */
extern uint64_t fuzz_rng_stream;
#define rng_state (*fuzz_rng)
#include "fuzz_rng.h"
static uint64_t *fuzz_rng = &fuzz_rng_stream;

#define PORT		1
#define QKEY		0x11111111
#define BUF_SIZE	(1 << 16)
#define VICTIM_LEN	8192
#define VICTIM_STALL_S	60
#define RECV_TAG	(1ULL << 63)
#define FUZZ_SGES	4	/* the fuzzed QPs' max_send_sge, max_recv_sge */

double now_s(void);
int force_wire(int v);

/* ---- devices and connections (setup.c) ---- */

struct port {
	struct ibv_context *ctx;
	struct ibv_port_attr attr;
	union ibv_gid gid;
	int gid_index;
};

int port_open(struct port *p, const char *name, int gid_index);
struct ibv_ah_attr av_to(const struct port *from, const struct port *to);
int qp_connect(struct ibv_qp *qp, const struct port *from,
	       const struct port *to, uint32_t dqpn);
struct ibv_qp *qp_new(struct ibv_pd *pd, struct ibv_cq *cq,
		      struct ibv_srq *srq, enum ibv_qp_type type,
		      uint32_t wr, uint32_t sge);

/* ---- the victim (victim.c) ---- */

struct victim_proc {
	pid_t pid;
	int stop, in;
};

bool victim_start(struct victim_proc *vp, char **argv);
void victim_end(struct victim_proc *vp);

/* ---- the ring fuzzer (ring.c, ring_wqe.c, ring_head.c) ---- */

/*
 * The ring fuzzer's hostility: the per mille of choices that take an odd
 * value rather than a plausible one, drawn anew every HOSTILITY_STEPS
 * steps from 1 to 600: a WQE has about ten fields, so only the low
 * values leave valid traffic between the odd fields, which reaches deeper
 * than noise (that only ever fails the first WQE and the QP with it).
 * The verb-sequence fuzzer leaves it at 1000: every fuzz_len() odd.
 */
extern uint32_t hostility;
bool odd(void);

enum { FQ_RQ, FQ_SRQ, FQ_UD, NFQ };

/*
 * The producer indices the ring fuzzer writes into a work ring's doorbell
 * record, by class: the next few, a full ring, past the ring, behind the
 * consumer, back over WQEs it had announced (between the consumer and the
 * head it wrote last: the engine may have sent them), half the index space
 * away, random, and unmoved.
 */
enum { H_NEXT, H_FULL, H_PAST, H_BEHIND, H_BACK, H_WRAP, H_RANDOM, H_STILL,
       NHEAD };

struct ring_fuzz {
	struct port a, b;
	struct ibv_pd *pa, *pb;
	struct ibv_mr *ma, *mb;
	uint8_t *bufa, *bufb;
	struct ibv_cq *ca, *cb;
	struct ibv_srq *srq;
	struct ibv_ah *aha, *ahb;
	struct ibv_qp *q[NFQ];		/* fuzzed, on a */
	struct ibv_qp *p[NFQ];		/* partners, on b */
	uint32_t p_recvs[NFQ];		/* receives posted on p[] */
	uint64_t rounds, wqes, kicks, recreated, events, cqes, cqe_errors;
	uint64_t partner_sends;
	uint64_t heads[NHEAD];		/* work ring heads written, by class */
};

/* The objects (ring.c), shared with the racing-thread check (race.c). */
bool ring_open(struct ring_fuzz *f, char **dev);
bool ring_close(struct ring_fuzz *f);
bool ring_create(struct ring_fuzz *f);
void ring_destroy(struct ring_fuzz *f);
bool ring_recreate(struct ring_fuzz *f);
bool ring_broken(struct ring_fuzz *f);
void ring_events(struct ring_fuzz *f);
void partner_recvs(struct ring_fuzz *f, int i);
void partner_send(struct ring_fuzz *f, int i);
void kick(struct ring_fuzz *f, struct ibv_qp *qp);

/* The slot of ring index idx (the provider's vhca_wq_slot(), not linked here). */
static inline void *wq_slot(const struct vhca_wq *wq, uint32_t idx)
{
	return (char *)wq->buf + (size_t)(idx & (wq->count - 1)) * wq->stride;
}

uint32_t fuzz_len(uint32_t small);
void fuzz_send_wqe(struct ring_fuzz *f, int qi, void *slot, uint32_t stride,
		   uint32_t max_inline);
void fuzz_recv_wqe(struct ring_fuzz *f, void *slot, uint32_t stride);
uint32_t fuzz_head(uint32_t tail, uint32_t count);
bool fuzz_wq(struct ring_fuzz *f, int qi, struct vhca_wq *wq, bool send,
	     uint32_t max_inline);
int ring_main(char **dev, double secs, uint64_t seed);

/* ---- the racing-thread check (race.c, racer.c) ---- */

/* The fields the racer flips in WQEs in flight, its classes. */
enum { FL_NUM_SGE, FL_SGE_LEN, FL_SGE_ADDR, FL_INLINE_LEN, FL_SQ_HEAD,
       FL_RQ_HEAD, FL_SRQ_HEAD, NFLIP };
extern const char *const flip_class[NFLIP];

/* The rings it rewrites: the raced QPs' SQs and RQs, and the SRQ. */
enum { RR_SQ_RQ, RR_SQ_SRQ, RR_SQ_UD, RR_RQ_RQ, RR_RQ_UD, RR_SRQ, NRR };

/*
 * The racer thread.  It touches the rings only holding lock, and only
 * those of wq[], which racer_release() sets; the main thread takes them
 * from it with racer_hold() to destroy and create objects.  The counts
 * are the main thread's to read after racer_stop().
 */
struct racer {
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int hold;		/* the main thread wants the rings */
	int stop;
	uint64_t rng;		/* its own PRNG stream */
	struct vhca_wq *wq[NRR];
	uint32_t max_sge[NRR];
	uint32_t max_inline[NRR];
	uint64_t flips[NFLIP], toggles, left_odd, idle, bursts;
	bool srq_only;		/* srq-race: the SRQ's WQEs alone */
	uint64_t srq_num_sge;	/* num_sge flips of SRQ WQEs */
};

void racer_start(struct racer *r, uint64_t seed);
void racer_stop(struct racer *r);
void racer_hold(struct racer *r);
void racer_release(struct racer *r, struct ring_fuzz *f);
int race_main(char **dev, double secs, uint64_t seed);
int srq_race_main(char **dev, double secs, uint64_t seed);

/* ---- the verb-sequence fuzzer (verbs.c) ---- */

int verbs_main(char **dev, double secs, uint64_t seed);

/* ---- modify_qp against the engine's error paths (modify.c) ---- */

int modify_main(char **dev, double secs, uint64_t seed);

/* ---- netdev MTUs under traffic (mtu.c) ---- */

int mtu_main(char **dev, double secs, uint64_t seed);

/* ---- mappings that outlive their objects (mmap.c) ---- */

int mmap_main(char **dev, double secs, uint64_t seed);
int hold_main(char **dev, double secs, uint64_t seed);

#endif /* VHCA_FUZZ_H */
