// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz ring: the producer indices it writes into doorbell records,
 * by class (enum in fuzz.h), and a work ring's slots and index together.
 */
#include "fuzz.h"

/*
 * An odd producer index, relative to the consumer's tail: full, beyond
 * the ring, backwards (behind the consumer, or from cur, the head written
 * last, back over WQEs announced), wrapped, noise, or not moving; its
 * class in *cls.
 */
static uint32_t odd_head(uint32_t tail, uint32_t cur, uint32_t count, int *cls)
{
	switch (below(7)) {
	case 0: *cls = H_FULL; return tail + count;
	case 1: *cls = H_PAST; return tail + count + 1 + below(count);
	case 2: *cls = H_BEHIND; return tail - 1 - below(count);
	case 3:
		if (cur != tail) {
			*cls = H_BACK;
			return cur - 1 - below(cur - tail);
		}
		*cls = H_STILL;
		return tail;
	case 4: *cls = H_WRAP; return tail + 0x80000000u;
	case 5: *cls = H_RANDOM; return (uint32_t)rnd();
	default: *cls = H_STILL; return tail;
	}
}

/* A producer index: a few entries past the tail, or an odd one. */
uint32_t fuzz_head(uint32_t tail, uint32_t count)
{
	int cls;

	if (!odd())
		return tail + 1 + below(count < 8 ? count : 8);
	return odd_head(tail, tail, count, &cls);
}

/*
 * Scribble on a work ring (SQ, RQ or SRQ) and set its producer index.
 * True when the index moved back over WQEs announced.
 */
bool fuzz_wq(struct ring_fuzz *f, int qi, struct vhca_wq *wq, bool send,
	     uint32_t max_inline)
{
	uint32_t tail = __atomic_load_n(wq->st_tail, __ATOMIC_ACQUIRE);
	uint32_t cur = *wq->db_head, n = 1 + below(8), i, head;
	int cls = H_NEXT;

	/* Plausibly, the next n slots after the last head this side wrote. */
	if (cur - tail > wq->count)
		cur = tail;
	if (n > wq->count - (cur - tail))
		n = wq->count - (cur - tail);
	for (i = 0; i < n; i++) {
		uint32_t idx = !odd() ? cur + i : (uint32_t)rnd();
		void *slot = wq_slot(wq, idx);

		if (send)
			fuzz_send_wqe(f, qi, slot, wq->stride, max_inline);
		else
			fuzz_recv_wqe(f, slot, wq->stride);
	}
	f->wqes += n;
	head = !odd() ? cur + n : odd_head(tail, cur + n, wq->count, &cls);
	f->heads[cls]++;
	__atomic_store_n(wq->db_head, head, __ATOMIC_RELEASE);
	return cls == H_BACK;
}
