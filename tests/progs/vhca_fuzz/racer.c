// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz ring-race: the racer, a thread that keeps rewriting the WQEs
 * in flight in the mapped rings (between the device's consumer index and
 * the published producer index: posted, not yet completed): num_sge, SGE
 * lengths and addresses, inline lengths, each toggled between an odd
 * value and the one posted and mostly put back, and the producer indices
 * of the send, receive and shared receive queues, moved and put back
 * under the provider's lock.  A send queue with WQEs in flight comes
 * first, and half the flips go to the oldest WQE in flight, the one the
 * engine takes next.  The racer has its own PRNG stream (splitmix64 as
 * fuzz_rng.h's, seeded from the seed): its timing against the main thread
 * is not replayed anyway.
 */
#include <sched.h>

#include "fuzz.h"

#define RACE_BURST	64	/* flips per hold of the racer's lock */
#define RACE_LEAVE_ODD	200

const char *const flip_class[NFLIP] = {
	"num_sge", "SGE length", "SGE address", "inline length",
	"send queue head", "receive queue head", "SRQ head",
};

static uint64_t racer_rnd(struct racer *r)
{
	uint64_t z = (r->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t racer_below(struct racer *r, uint32_t n)
{
	return (uint32_t)((racer_rnd(r) >> 32) * n >> 32);
}

/* An odd value for a 32-bit length. */
static uint32_t racer_len(struct racer *r, uint32_t was)
{
	static const uint32_t edge[] = { 0, 1, 4095, 4096, BUF_SIZE,
		BUF_SIZE + 1, 0x7fffffff, 0x80000000, 0xffffffff };

	switch (racer_below(r, 4)) {
	case 0: return was + 1;
	case 1: return (uint32_t)racer_rnd(r);
	default: return edge[racer_below(r, sizeof(edge) / sizeof(edge[0]))];
	}
}

/* An odd value for an SGE's address. */
static uint64_t racer_addr(struct racer *r, uint64_t was)
{
	switch (racer_below(r, 6)) {
	case 0: return 0;
	case 1: return was + BUF_SIZE;
	case 2: return was - 4096;
	case 3: return 0xffff888000000000ULL + racer_below(r, 1u << 30);
	case 4: return racer_rnd(r);
	default: return was ^ (1ULL << racer_below(r, 64));
	}
}

/* An odd num_sge for a queue of max_sge SGEs. */
static uint8_t racer_num_sge(struct racer *r, uint8_t was, uint32_t max_sge)
{
	switch (racer_below(r, 5)) {
	case 0: return (uint8_t)(max_sge + 1);
	case 1: return 255;
	case 2: return (uint8_t)(was + 1);
	case 3: return 0;
	default: return (uint8_t)racer_rnd(r);
	}
}

/*
 * Toggle a field between odd and the value posted a few times, then put
 * the posted value back, or (one in RACE_LEAVE_ODD) leave the odd one: a
 * WQE left odd fails its QP, which is then recreated.
 */
#define RACE_TOGGLE(r, p, was, odd_v) do { \
	uint32_t _n = 1 + racer_below(r, 64), _i; \
	for (_i = 0; _i < _n; _i++) { \
		__atomic_store_n(p, odd_v, __ATOMIC_RELAXED); \
		__atomic_store_n(p, was, __ATOMIC_RELAXED); \
	} \
	(r)->toggles += _n; \
	if (!racer_below(r, RACE_LEAVE_ODD)) { \
		__atomic_store_n(p, odd_v, __ATOMIC_RELAXED); \
		(r)->left_odd++; \
	} \
} while (0)

/*
 * A producer index moved, under the provider's lock so that no post is
 * lost, and put back: forward over slots not posted, past the ring,
 * behind the consumer, back over posted WQEs, half the space away, or
 * noise.
 */
static void racer_head(struct racer *r, struct vhca_wq *wq, uint32_t tail,
		       int cls)
{
	uint32_t head, odd_v;

	pthread_spin_lock(&wq->lock);
	head = __atomic_load_n(wq->db_head, __ATOMIC_RELAXED);
	switch (racer_below(r, 6)) {
	case 0: odd_v = head + 1 + racer_below(r, wq->count); break;
	case 1: odd_v = tail + wq->count + 1 + racer_below(r, wq->count); break;
	case 2: odd_v = tail - 1 - racer_below(r, wq->count); break;
	case 3: odd_v = head - 1 - racer_below(r, head - tail); break;
	case 4: odd_v = head + 0x80000000u; break;
	default: odd_v = (uint32_t)racer_rnd(r); break;
	}
	/* Put back always: a head left odd loses the posts behind it. */
	{
		uint32_t n = 1 + racer_below(r, 32), i;

		for (i = 0; i < n; i++) {
			__atomic_store_n(wq->db_head, odd_v, __ATOMIC_RELEASE);
			__atomic_store_n(wq->db_head, head, __ATOMIC_RELEASE);
		}
		r->toggles += n;
	}
	pthread_spin_unlock(&wq->lock);
	r->flips[cls]++;
}

/* One flip in ring i, of a WQE in flight; false if none is. */
static bool racer_flip(struct racer *r, int i)
{
	struct vhca_wq *wq = r->wq[i];
	bool send = i <= RR_SQ_UD;
	uint32_t tail, head, idx, room, k;
	struct vhca_sge *sge;
	uint8_t *num_sge;
	char *slot;
	int pick;

	if (!wq || !wq->buf)
		return false;
	tail = __atomic_load_n(wq->st_tail, __ATOMIC_ACQUIRE);
	head = __atomic_load_n(wq->db_head, __ATOMIC_ACQUIRE);
	if (head == tail || head - tail > wq->count)
		return false;
	pick = racer_below(r, 20);
	/* srq-race: num_sge half the time, else SGE lengths and addresses. */
	if (r->srq_only)
		pick = racer_below(r, 2) ? 3 : 9 + racer_below(r, 11);
	if (pick < 3) {
		racer_head(r, wq, tail, send ? FL_SQ_HEAD :
			   i == RR_SRQ ? FL_SRQ_HEAD : FL_RQ_HEAD);
		return true;
	}
	/* Half the time the oldest: the next the engine takes, mostly. */
	idx = tail + (racer_below(r, 2) ? 0 : racer_below(r, head - tail));
	slot = wq_slot(wq, idx);
	if (send) {
		struct vhca_send_wqe *w = (struct vhca_send_wqe *)slot;

		num_sge = &w->num_sge;
		sge = (struct vhca_sge *)(w + 1);
		room = (wq->stride - sizeof(*w)) / sizeof(*sge);
		if (__atomic_load_n(&w->flags, __ATOMIC_RELAXED) &
		    VHCA_WQE_INLINE) {
			uint32_t was = __atomic_load_n(&w->inline_len,
						       __ATOMIC_RELAXED);
			uint32_t odd_v = racer_below(r, 2) ?
					 r->max_inline[i] + 1 + racer_below(r, 64) :
					 racer_len(r, was);

			if (pick < 12) {
				RACE_TOGGLE(r, &w->inline_len, was, odd_v);
				r->flips[FL_INLINE_LEN]++;
				return true;
			}
		}
	} else {
		struct vhca_recv_wqe *w = (struct vhca_recv_wqe *)slot;

		num_sge = &w->num_sge;
		sge = (struct vhca_sge *)(w + 1);
		room = (wq->stride - sizeof(*w)) / sizeof(*sge);
	}
	if (pick < 9 || !room) {
		uint8_t was = __atomic_load_n(num_sge, __ATOMIC_RELAXED);
		uint8_t odd_v = racer_num_sge(r, was, r->max_sge[i]);

		RACE_TOGGLE(r, num_sge, was, odd_v);
		r->flips[FL_NUM_SGE]++;
		r->srq_num_sge += i == RR_SRQ;
		return true;
	}
	k = racer_below(r, room);
	if (pick < 16) {
		uint32_t was = __atomic_load_n(&sge[k].length, __ATOMIC_RELAXED);
		uint32_t odd_v = racer_len(r, was);

		RACE_TOGGLE(r, &sge[k].length, was, odd_v);
		r->flips[FL_SGE_LEN]++;
	} else {
		uint64_t was = __atomic_load_n(&sge[k].addr, __ATOMIC_RELAXED);
		uint64_t odd_v = racer_addr(r, was);

		RACE_TOGGLE(r, &sge[k].addr, was, odd_v);
		r->flips[FL_SGE_ADDR]++;
	}
	return true;
}

/*
 * The ring to flip in: a send queue with WQEs in flight if there is one
 * (the engine takes a send WQE at once, during the post's kick or soon
 * after, so its window is short), else any ring (receive WQEs wait in
 * flight until a message comes).
 */
static int racer_pick(struct racer *r)
{
	int first = racer_below(r, RR_SQ_UD + 1), i, k;

	if (r->srq_only)
		return RR_SRQ;
	for (k = 0; k <= RR_SQ_UD; k++) {
		struct vhca_wq *wq;
		uint32_t head, tail;

		i = (first + k) % (RR_SQ_UD + 1);
		wq = r->wq[i];
		if (!wq)
			continue;
		tail = __atomic_load_n(wq->st_tail, __ATOMIC_ACQUIRE);
		head = __atomic_load_n(wq->db_head, __ATOMIC_ACQUIRE);
		if (head != tail && head - tail <= wq->count)
			return i;
	}
	return racer_below(r, NRR);
}

static void *racer_main(void *arg)
{
	struct racer *r = arg;
	struct timespec nap = { .tv_nsec = 100000 };
	int n, any;

	for (;;) {
		pthread_mutex_lock(&r->lock);
		while (__atomic_load_n(&r->hold, __ATOMIC_ACQUIRE) && !r->stop)
			pthread_cond_wait(&r->cond, &r->lock);
		if (r->stop) {
			pthread_mutex_unlock(&r->lock);
			break;
		}
		any = 0;
		for (n = 0; n < RACE_BURST; n++)
			any |= racer_flip(r, racer_pick(r));
		r->bursts++;
		pthread_mutex_unlock(&r->lock);
		if (any) {
			sched_yield();
		} else {
			r->idle++;
			nanosleep(&nap, NULL);
		}
	}
	return NULL;
}

/* The racer keeps off the rings until racer_release(). */
void racer_hold(struct racer *r)
{
	__atomic_store_n(&r->hold, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&r->lock);
}

/* The rings of the objects f has now, to the racer. */
void racer_release(struct racer *r, struct ring_fuzz *f)
{
	int i;

	for (i = 0; i < NRR; i++)
		r->wq[i] = NULL;
	if (f->q[FQ_RQ] && f->q[FQ_SRQ] && f->q[FQ_UD] && f->srq) {
		r->wq[RR_SQ_RQ] = &to_vqp(f->q[FQ_RQ])->sq;
		r->wq[RR_SQ_SRQ] = &to_vqp(f->q[FQ_SRQ])->sq;
		r->wq[RR_SQ_UD] = &to_vqp(f->q[FQ_UD])->sq;
		r->wq[RR_RQ_RQ] = &to_vqp(f->q[FQ_RQ])->rq;
		r->wq[RR_RQ_UD] = &to_vqp(f->q[FQ_UD])->rq;
		r->wq[RR_SRQ] = &to_vsrq(f->srq)->rq;
		for (i = 0; i < NRR; i++)
			r->max_sge[i] = r->wq[i]->max_sge;
		r->max_inline[RR_SQ_RQ] = to_vqp(f->q[FQ_RQ])->max_inline;
		r->max_inline[RR_SQ_SRQ] = to_vqp(f->q[FQ_SRQ])->max_inline;
		r->max_inline[RR_SQ_UD] = to_vqp(f->q[FQ_UD])->max_inline;
	}
	__atomic_store_n(&r->hold, 0, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

void racer_start(struct racer *r, uint64_t seed)
{
	r->rng = seed;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->started = !pthread_create(&r->thread, NULL, racer_main, r);
}

void racer_stop(struct racer *r)
{
	if (!r->started)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = 1;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	r->started = false;
}
