// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz ring: the values it writes into ring slots: the hostility
 * that decides how many of them are odd, lengths, keys, addresses, SGEs,
 * and whole send and receive WQEs.
 */
#include "fuzz.h"

uint32_t hostility = 1000;

bool odd(void)
{
	return below(1000) < hostility;
}

/* An adversarial 32-bit length. */
uint32_t fuzz_len(uint32_t small)
{
	static const uint32_t edge[] = { 0, 1, 4096, 65535, 65536, 65537,
		0x7fffffff, 0x80000000, 0xffffffff };

	if (!odd())
		return below(small + 1);
	if (chance(70))
		return edge[below(sizeof(edge) / sizeof(edge[0]))];
	return (uint32_t)rnd();
}

/* An lkey or rkey: the right one, a neighbour, another device's, noise. */
static uint32_t fuzz_key(uint32_t right, uint32_t other)
{
	if (!odd())
		return right;
	switch (below(6)) {
	case 0: return right ^ 1;
	case 1: return right + 0x100;
	case 2: return other;
	case 3: return (uint32_t)rnd();
	case 4: return 0;
	default: return right;	/* odd in another field */
	}
}

/* An address in buf with span bytes after it, at its edges, or anywhere. */
static uint64_t fuzz_addr(const uint8_t *buf, uint32_t span)
{
	if (!odd())
		return (uintptr_t)buf + below(BUF_SIZE - span);
	switch (below(5)) {
	case 0: return (uintptr_t)buf + BUF_SIZE - below(64);
	case 1: return (uintptr_t)buf - 1 - below(64);
	case 2: return rnd();
	case 3: return 0;
	default: return (uintptr_t)buf + below(BUF_SIZE);
	}
}

/*
 * The SGEs of a slot (room of them); plausible ones are at most small
 * bytes long, so that FUZZ_SGES of them fit the other side's receive (RC)
 * or the MTU (UD).
 */
static void fuzz_sges(struct vhca_sge *sge, uint32_t room, uint32_t small,
		      const struct ring_fuzz *f)
{
	uint32_t i;

	for (i = 0; i < room; i++) {
		sge[i].addr = fuzz_addr(f->bufa, 4096);
		sge[i].length = fuzz_len(small);
		sge[i].lkey = fuzz_key(f->ma->lkey, f->mb->lkey);
	}
}

/* A send WQE into slot, every field chosen (or noise). */
void fuzz_send_wqe(struct ring_fuzz *f, int qi, void *slot, uint32_t stride,
		   uint32_t max_inline)
{
	struct vhca_send_wqe *w = slot;
	uint32_t room = (stride - sizeof(*w)) / sizeof(struct vhca_sge);
	uint32_t plausible = room < FUZZ_SGES ? room : FUZZ_SGES;
	uint32_t i;

	if (odd() && chance(10)) {
		for (i = 0; i + 8 <= stride; i += 8) {
			uint64_t x = rnd();

			memcpy((char *)slot + i, &x, 8);
		}
		return;
	}
	memset(w, 0, sizeof(*w));
	w->wr_id = rnd();
	/*
	 * Plausible: the opcodes of the QP's type (UD: the two SENDs; RC:
	 * WRITEs, SENDs, READ, SEND with Invalidate, the atomics, ATOMIC
	 * WRITE); else the kernel QPs' local operations, the atomics, or
	 * anything.
	 */
	if (!odd())
		w->opcode = qi == FQ_UD ? VHCA_WR_SEND + below(2) :
			    chance(75) ? below(6) :
			    chance(67) ? VHCA_WR_ATOMIC_CMP_AND_SWP + below(2) :
			    VHCA_WR_ATOMIC_WRITE;
	else
		w->opcode = chance(50) ? VHCA_WR_SEND_WITH_INV + below(7) :
			    below(256);
	w->flags = !odd() ? VHCA_WQE_SIGNALED | (below(8) & ~VHCA_WQE_INLINE) :
		   below(256);
	w->num_sge = !odd() ? below(plausible + 1) :
		     chance(50) ? plausible + 1 + below(room) : below(256);
	if (chance(20) && (w->opcode != VHCA_WR_RDMA_READ || odd())) {
		w->flags |= VHCA_WQE_INLINE;
		w->inline_len = !odd() ? below(max_inline + 1) :
				chance(50) ? max_inline + 1 : fuzz_len(max_inline);
	}
	w->imm_data = (uint32_t)rnd();
	if (odd()) {
		w->reserved0 = below(256);
		w->xrc_srqn = (uint32_t)rnd();
	}
	if (qi == FQ_UD) {
		uint32_t ah = to_vah(f->aha)->ah_index;

		w->ud.ah = !odd() ? ah : chance(50) ? ah + 1 : (uint32_t)rnd();
		w->ud.remote_qpn = !odd() ? f->p[FQ_UD]->qp_num :
				   chance(50) ? 0xffffff + below(2) : (uint32_t)rnd();
		w->ud.remote_qkey = !odd() ? QKEY : (uint32_t)rnd();
	} else {
		w->rdma.remote_addr = fuzz_addr(f->bufb, FUZZ_SGES * 4096);
		w->rdma.rkey = fuzz_key(f->mb->rkey, f->ma->rkey);
		/* The atomics' operands (past rdma's part of the union). */
		w->atomic.compare_add = rnd();
		w->atomic.swap = rnd();
	}
	if (w->flags & VHCA_WQE_INLINE) {
		for (i = 0; i < stride - sizeof(*w); i++)
			((uint8_t *)(w + 1))[i] = (uint8_t)rnd();
	} else {
		fuzz_sges((struct vhca_sge *)(w + 1), room,
			  qi == FQ_UD ? 256 : 4096, f);
	}
}

void fuzz_recv_wqe(struct ring_fuzz *f, void *slot, uint32_t stride)
{
	struct vhca_recv_wqe *w = slot;
	uint32_t room = (stride - sizeof(*w)) / sizeof(struct vhca_sge);

	memset(w, 0, sizeof(*w));
	w->wr_id = rnd() | RECV_TAG;
	w->num_sge = !odd() ? below((room < FUZZ_SGES ? room : FUZZ_SGES) + 1) :
		     chance(50) ? room + 1 : below(256);
	if (odd())
		w->reserved[below(7)] = 1 + below(255);
	fuzz_sges((struct vhca_sge *)(w + 1), room, 4096, f);
}
