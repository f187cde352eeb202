// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz ring-race: shared memory is read once.  The main thread posts
 * valid traffic through the provider on the ring fuzzer's QPs (SEND, RDMA
 * WRITE and RDMA READ on RC over an RQ and over an SRQ, SEND on UD, with
 * SGEs or inline; receives on the RQs and the SRQ, which the partners'
 * SENDs consume), parks inline sends in flight (written into the ring as
 * the provider writes them, kicked a while later) and polls its
 * completions, while the racer (racer.c) rewrites the WQEs in flight and
 * the producer indices.  The engine
 * copies each field once and checks the copy; a field it read twice would
 * be checked in one version and used in another, which KASAN (the debug
 * kernel) reports.
 *
 * What it asserts: every completion's status is SUCCESS or one of the
 * engine's error statuses, and names a WQE this process posted (or a slot
 * never written, wr_id 0, that a moved index exposed); no send queue
 * stands still with WQEs in flight for RACE_STALL_S (kicked every second
 * meanwhile); after the race every send queue drains or its QP fails
 * within RACE_SETTLE_S, and fresh QPs carry every operation with every
 * completion a success.  Every wait is bounded.  A QP the race failed, a
 * CQ overrun, or a ring whose consumer went past the producer (an index
 * moved forward over slots never posted) is recreated, as in the ring
 * fuzzer.  The seed replays the main thread's choices, not the racer's
 * timing against them.
 */
#include "fuzz.h"

#define RACE_WRID	0x7ace000000000000ULL	/* the main thread's wr_ids */
#define RACE_WRID_MASK	0xffff000000000000ULL
#define RACE_DEPTH	16	/* WRs in flight per queue, at most */
#define RACE_STALL_S	10	/* a send queue standing still: a failure */
#define RACE_SETTLE_S	10	/* the drain after the race */
#define RACE_PARK_US	2000	/* a parked WQE waits this long for its kick */

struct race {
	struct ring_fuzz f;
	struct racer r;
	uint64_t seq;
	uint64_t posted_send, posted_write, posted_read, posted_ud;
	uint64_t posted_inline, posted_recv, posted_srq_recv, full;
	uint64_t recreated_broken, recreated_overrun, recreated_stall;
	uint64_t periodic, stall_kicks, stalls;
	uint64_t parks, parked;		/* race_post_parked() */
	uint64_t status[256];		/* the raced QPs' completions */
	uint64_t partner_status[256];	/* their partners' */
	uint64_t bad_status, foreign, never_posted;
	uint64_t srq_recvs;		/* SRQ receives completed */
	char first_bad[200];
	char first_stall[200];
	char unsettled[200];
	/* The send queues' progress, for the stall check. */
	uint32_t sq_tail[NFQ];
	double sq_moved[NFQ], sq_kicked[NFQ];
};

/* A proper status: SUCCESS or one the engine completes WQEs with. */
static bool status_proper(unsigned int s)
{
	switch (s) {
	case IBV_WC_SUCCESS:
	case IBV_WC_LOC_LEN_ERR:
	case IBV_WC_LOC_QP_OP_ERR:
	case IBV_WC_LOC_PROT_ERR:
	case IBV_WC_WR_FLUSH_ERR:
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_REM_OP_ERR:
	case IBV_WC_RETRY_EXC_ERR:
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return true;
	default:
		return false;
	}
}

static uint64_t race_wrid(struct race *x, int qi)
{
	return RACE_WRID | (uint64_t)qi << 40 | (x->seq++ & 0xffffffffffULL);
}

/* n SGEs of len bytes in all, from off in buffer buf of lkey. */
static void race_sges(struct ibv_sge *s, int n, const uint8_t *buf,
		      uint32_t off, uint32_t len, uint32_t lkey)
{
	int i;

	for (i = 0; i < n; i++) {
		uint32_t l = i + 1 < n ? len / n : len - (n - 1) * (len / n);

		s[i] = (struct ibv_sge){ .addr = (uintptr_t)buf + off,
					 .length = l, .lkey = lkey };
		off += l;
	}
}

/*
 * Up to 8 valid sends in one post on raced QP qi (the engine takes them in
 * one pass: the more, the longer the racer's window): SEND, WRITE or READ
 * on RC, SEND on UD.
 */
static void race_post_send(struct race *x, int qi)
{
	struct ring_fuzz *f = &x->f;
	struct vhca_qp *vq = to_vqp(f->q[qi]);
	struct ibv_sge s[8][FUZZ_SGES];
	struct ibv_send_wr wr[8], *bad;
	int n = 1 + below(8), i, err;

	if (vq->sq.head - *vq->sq.st_tail >= RACE_DEPTH)
		return;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		int nsge = 1 + below(FUZZ_SGES);
		uint32_t len = qi == FQ_UD ? 1 + below(512) : 1 + below(16384);

		wr[i].wr_id = race_wrid(x, qi);
		wr[i].sg_list = s[i];
		wr[i].num_sge = nsge;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].opcode = IBV_WR_SEND;
		if (qi != FQ_UD)
			wr[i].opcode = chance(40) ? IBV_WR_SEND : chance(50) ?
				       IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
		if (wr[i].opcode != IBV_WR_RDMA_READ && chance(20)) {
			wr[i].send_flags |= IBV_SEND_INLINE;
			len = 1 + below(vq->max_inline);
		}
		if (wr[i].opcode == IBV_WR_RDMA_READ)
			race_sges(s[i], nsge, f->bufa, BUF_SIZE / 2, len,
				  f->ma->lkey);
		else
			race_sges(s[i], nsge, f->bufa, below(BUF_SIZE / 2 - len),
				  len, f->ma->lkey);
		if (qi == FQ_UD) {
			wr[i].wr.ud.ah = f->aha;
			wr[i].wr.ud.remote_qpn = f->p[FQ_UD]->qp_num;
			wr[i].wr.ud.remote_qkey = QKEY;
		} else {
			wr[i].wr.rdma.remote_addr = (uintptr_t)f->bufb +
						    BUF_SIZE / 4 +
						    below(BUF_SIZE / 2 - len);
			wr[i].wr.rdma.rkey = f->mb->rkey;
		}
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	bad = NULL;
	err = ibv_post_send(f->q[qi], wr, &bad);
	if (err == ENOMEM)
		x->full++;
	for (i = 0; i < n && &wr[i] != bad; i++) {
		if (wr[i].opcode == IBV_WR_RDMA_WRITE)
			x->posted_write++;
		else if (wr[i].opcode == IBV_WR_RDMA_READ)
			x->posted_read++;
		else if (qi == FQ_UD)
			x->posted_ud++;
		else
			x->posted_send++;
		x->posted_inline += !!(wr[i].send_flags & IBV_SEND_INLINE);
	}
}

/*
 * Up to 4 inline sends (UD SEND; RC SEND or WRITE) parked in flight on
 * raced QP qi: written into the ring as the provider writes them and
 * published, but kicked only RACE_PARK_US later, the main thread asleep
 * meanwhile.  Only when the send queue is empty and the engine stopped
 * watching its doorbell (VHCA_STATUS_NEEDS_WAKEUP): then nothing takes
 * them before the kick, except a pass the QP's receive side runs.  A WQE
 * posted through the provider is taken during its post's kick or soon
 * after, so the racer's window on one depends on the machine's speed; on
 * a parked one it is RACE_PARK_US, which flips inline lengths on any
 * machine.  False if qi's queue was not in that state.
 */
static bool race_post_parked(struct race *x, int qi)
{
	struct ring_fuzz *f = &x->f;
	struct vhca_qp *vq = to_vqp(f->q[qi]);
	struct vhca_wq *sq = &vq->sq;
	struct timespec park = { .tv_nsec = RACE_PARK_US * 1000L };
	int n = 1 + below(4), i;

	if (!(__atomic_load_n(&vq->st->flags, __ATOMIC_ACQUIRE) &
	      VHCA_STATUS_NEEDS_WAKEUP))
		return false;
	pthread_spin_lock(&sq->lock);
	if (sq->head != __atomic_load_n(sq->st_tail, __ATOMIC_ACQUIRE)) {
		pthread_spin_unlock(&sq->lock);
		return false;
	}
	for (i = 0; i < n; i++) {
		struct vhca_send_wqe *w = wq_slot(sq, sq->head);
		uint32_t len = 1 + below(vq->max_inline);

		memset(w, 0, sizeof(*w));
		memcpy(w + 1, f->bufa + below(BUF_SIZE / 2 - len), len);
		w->wr_id = race_wrid(x, qi);
		w->opcode = qi == FQ_UD || chance(50) ? VHCA_WR_SEND :
			    VHCA_WR_RDMA_WRITE;
		w->flags = VHCA_WQE_SIGNALED | VHCA_WQE_INLINE;
		w->inline_len = len;
		if (qi == FQ_UD) {
			w->ud.ah = to_vah(f->aha)->ah_index;
			w->ud.remote_qpn = f->p[FQ_UD]->qp_num;
			w->ud.remote_qkey = QKEY;
			x->posted_ud++;
		} else {
			if (w->opcode == VHCA_WR_RDMA_WRITE) {
				w->rdma.remote_addr = (uintptr_t)f->bufb +
						      BUF_SIZE / 4 +
						      below(BUF_SIZE / 2 - len);
				w->rdma.rkey = f->mb->rkey;
			}
			if (w->opcode == VHCA_WR_SEND)
				x->posted_send++;
			else
				x->posted_write++;
		}
		x->posted_inline++;
		sq->head++;
	}
	__atomic_store_n(sq->db_head, sq->head, __ATOMIC_RELEASE);
	pthread_spin_unlock(&sq->lock);
	x->parks++;
	x->parked += n;
	nanosleep(&park, NULL);
	kick(f, f->q[qi]);
	return true;
}

/*
 * A few receives on the raced RQs or the SRQ, 4 KiB in 1 to 4 SGEs: room
 * for the partners' SENDs (2 KiB at most, 512 bytes and a GRH on UD).
 */
static void race_post_recv(struct race *x, int qi)
{
	struct ring_fuzz *f = &x->f;
	struct vhca_wq *wq = qi == FQ_SRQ ? &to_vsrq(f->srq)->rq :
			     &to_vqp(f->q[qi])->rq;
	struct ibv_sge s[4][FUZZ_SGES];
	struct ibv_recv_wr wr[4], *bad;
	int n = 1 + below(4), i, err;

	if (wq->head - *wq->st_tail >= 2 * RACE_DEPTH)
		return;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		int nsge = 1 + below(FUZZ_SGES);

		race_sges(s[i], nsge, f->bufa, BUF_SIZE / 2 + 4096 * i, 4096,
			  f->ma->lkey);
		wr[i].wr_id = race_wrid(x, qi);
		wr[i].sg_list = s[i];
		wr[i].num_sge = nsge;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	bad = NULL;
	err = qi == FQ_SRQ ? ibv_post_srq_recv(f->srq, wr, &bad) :
			     ibv_post_recv(f->q[qi], wr, &bad);
	if (err == ENOMEM)
		x->full++;
	for (i = 0; i < n && &wr[i] != bad; i++) {
		if (qi == FQ_SRQ)
			x->posted_srq_recv++;
		else
			x->posted_recv++;
	}
}

/* Both CQs drained: statuses counted and checked, partners topped up. */
static void race_poll(struct race *x)
{
	struct ring_fuzz *f = &x->f;
	struct ibv_wc wc[32];
	int n, i;

	while ((n = ibv_poll_cq(f->ca, 32, wc)) > 0)
		for (i = 0; i < n; i++) {
			f->cqes++;
			x->status[wc[i].status & 0xff]++;
			if (!status_proper(wc[i].status)) {
				if (!x->bad_status++)
					snprintf(x->first_bad, sizeof(x->first_bad),
						 "status %u (%s), wr_id 0x%" PRIx64 ", QP %u, opcode %u",
						 wc[i].status,
						 ibv_wc_status_str(wc[i].status),
						 (uint64_t)wc[i].wr_id,
						 wc[i].qp_num, wc[i].opcode);
			}
			if (f->q[FQ_SRQ] && wc[i].qp_num == f->q[FQ_SRQ]->qp_num &&
			    (wc[i].opcode & IBV_WC_RECV))
				x->srq_recvs++;
			if (!wc[i].wr_id)
				x->never_posted++;
			else if ((wc[i].wr_id & RACE_WRID_MASK) != RACE_WRID)
				x->foreign++;
		}
	while ((n = ibv_poll_cq(f->cb, 32, wc)) > 0)
		for (i = 0; i < n; i++) {
			x->partner_status[wc[i].status & 0xff]++;
			if (!status_proper(wc[i].status) && !x->bad_status++)
				snprintf(x->first_bad, sizeof(x->first_bad),
					 "partner: status %u (%s), QP %u",
					 wc[i].status,
					 ibv_wc_status_str(wc[i].status),
					 wc[i].qp_num);
			if (wc[i].wr_id & RECV_TAG) {
				int q = wc[i].wr_id & 3;

				if (q < NFQ && f->p_recvs[q])
					f->p_recvs[q]--;
			}
		}
	for (i = 0; i < NFQ; i++)
		partner_recvs(f, i);
}

/* A ring whose consumer is past its producer: an index moved forward. */
static bool wq_overrun(const struct vhca_wq *wq)
{
	return wq->head - __atomic_load_n(wq->st_tail, __ATOMIC_ACQUIRE) >
	       wq->count;
}

/*
 * Whether the objects need recreating: broken as the ring fuzzer sees it,
 * a ring overrun, or a send queue that stood still with WQEs in flight
 * for RACE_STALL_S (kicked every second before that: the racer may have
 * hidden the head a post published from an engine that then stopped
 * watching the doorbell).
 */
static bool race_check(struct race *x)
{
	struct ring_fuzz *f = &x->f;
	double now = now_s();
	int i;

	if (ring_broken(f)) {
		x->recreated_broken++;
		return true;
	}
	for (i = 0; i < NFQ; i++) {
		struct vhca_qp *vq = to_vqp(f->q[i]);

		if (wq_overrun(&vq->sq) || (i != FQ_SRQ && wq_overrun(&vq->rq))) {
			x->recreated_overrun++;
			return true;
		}
	}
	if (wq_overrun(&to_vsrq(f->srq)->rq)) {
		x->recreated_overrun++;
		return true;
	}
	for (i = 0; i < NFQ; i++) {
		struct vhca_qp *vq = to_vqp(f->q[i]);
		uint32_t tail = __atomic_load_n(vq->sq.st_tail, __ATOMIC_ACQUIRE);

		if (tail != x->sq_tail[i] || vq->sq.head == tail) {
			x->sq_tail[i] = tail;
			x->sq_moved[i] = x->sq_kicked[i] = now;
			continue;
		}
		if (now - x->sq_moved[i] >= RACE_STALL_S) {
			if (!x->stalls++)
				snprintf(x->first_stall, sizeof(x->first_stall),
					 "QP %u (%s): consumer %u, producer %u (published %u), status flags 0x%x, for %d s",
					 f->q[i]->qp_num,
					 i == FQ_UD ? "UD" : "RC", tail,
					 vq->sq.head, *vq->sq.db_head,
					 vq->st->flags, RACE_STALL_S);
			x->recreated_stall++;
			return true;
		}
		if (now - x->sq_kicked[i] >= 1) {
			kick(f, f->q[i]);
			x->stall_kicks++;
			x->sq_kicked[i] = now;
		}
	}
	return false;
}

/* New objects, with the racer kept off the rings meanwhile. */
static bool race_recreate(struct race *x)
{
	double now = now_s();
	bool ok;
	int i;

	racer_hold(&x->r);
	ring_destroy(&x->f);
	x->f.recreated++;
	ok = ring_create(&x->f);
	for (i = 0; i < NFQ; i++) {
		x->sq_tail[i] = 0;
		x->sq_moved[i] = x->sq_kicked[i] = now;
	}
	racer_release(&x->r, &x->f);
	return ok;
}

/* Receives posted on raced QP qi's RQ (or the SRQ), not yet consumed. */
static uint32_t race_rq_posted(struct race *x, int qi)
{
	const struct vhca_wq *wq = qi == FQ_SRQ ? &to_vsrq(x->f.srq)->rq :
				   &to_vqp(x->f.q[qi])->rq;

	return wq->head - __atomic_load_n(wq->st_tail, __ATOMIC_ACQUIRE);
}

static void race_step(struct race *x)
{
	int qi = below(NFQ);

	switch (below(10)) {
	case 0:
	case 1:
	case 2:
		race_post_send(x, qi);
		break;
	case 3:
		if (!race_post_parked(x, qi))
			race_post_send(x, qi);
		break;
	case 4:
	case 5:
	case 6:
		race_post_recv(x, qi);
		break;
	default:
		/* Into receives posted, not to fail the partner on RNR. */
		if (race_rq_posted(x, qi) >= 4)
			partner_send(&x->f, qi);
		break;
	}
}

/*
 * After the race: every send queue's head published again, the provider's
 * own, and kicked; then the CQs drained until every send queue is empty,
 * overrun or its QP failed, RACE_SETTLE_S at most.  False if one is not.
 */
static bool race_settle(struct race *x)
{
	struct ring_fuzz *f = &x->f;
	double end = now_s() + RACE_SETTLE_S;
	bool busy = true;
	int i;

	for (i = 0; i < NFQ; i++) {
		struct vhca_wq *sq = &to_vqp(f->q[i])->sq;

		__atomic_store_n(sq->db_head, sq->head, __ATOMIC_RELEASE);
		kick(f, f->q[i]);
	}
	while (busy && now_s() < end) {
		poll(NULL, 0, 1);
		race_poll(x);
		busy = false;
		for (i = 0; i < NFQ; i++) {
			struct vhca_qp *vq = to_vqp(f->q[i]);
			uint32_t tail = *vq->sq.st_tail;

			if (vq->sq.head == tail || wq_overrun(&vq->sq) ||
			    vq->st->flags & VHCA_STATUS_QP_ERROR)
				continue;
			busy = true;
			snprintf(x->unsettled, sizeof(x->unsettled),
				 "QP %u (%s): consumer %u, producer %u, status flags 0x%x",
				 f->q[i]->qp_num, i == FQ_UD ? "UD" : "RC",
				 tail, vq->sq.head, vq->st->flags);
		}
	}
	race_poll(x);
	return !busy;
}

/*
 * Fresh QPs after the race, no racer: on each RC QP a SEND, a WRITE and
 * a READ, on UD a SEND, each partner SENDing into the raced QPs' RQ and
 * SRQ; every completion a success, within RACE_SETTLE_S.
 */
static bool race_after(struct race *x, char *why, size_t n)
{
	struct ring_fuzz *f = &x->f;
	struct ibv_sge s = { .addr = (uintptr_t)f->bufa, .length = 1024,
			     .lkey = f->ma->lkey };
	struct ibv_sge rs = { .addr = (uintptr_t)f->bufa + BUF_SIZE / 2,
			      .length = 4096, .lkey = f->ma->lkey };
	struct ibv_send_wr wr = { .sg_list = &s, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr rwr = { .sg_list = &rs, .num_sge = 1 }, *rbad;
	static const enum ibv_wr_opcode op[] = { IBV_WR_SEND,
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ };
	unsigned int want = 0, got = 0, pgot = 0;
	double end;
	struct ibv_wc wc;
	int qi, k, err;

	if (!ring_recreate(f)) {
		snprintf(why, n, "recreate: %s", strerror(errno));
		return false;
	}
	for (qi = 0; qi < NFQ; qi++) {
		rwr.wr_id = RACE_WRID | qi;
		err = qi == FQ_SRQ ? ibv_post_srq_recv(f->srq, &rwr, &rbad) :
				     ibv_post_recv(f->q[qi], &rwr, &rbad);
		if (err) {
			snprintf(why, n, "post_recv: %s", strerror(err));
			return false;
		}
		want++;
		for (k = 0; k < (qi == FQ_UD ? 1 : 3); k++) {
			wr.wr_id = RACE_WRID | qi << 4 | k;
			wr.opcode = op[k];
			if (qi == FQ_UD) {
				s.length = 256;
				wr.wr.ud.ah = f->aha;
				wr.wr.ud.remote_qpn = f->p[FQ_UD]->qp_num;
				wr.wr.ud.remote_qkey = QKEY;
			} else {
				wr.wr.rdma.remote_addr = (uintptr_t)f->bufb +
							 BUF_SIZE / 2;
				wr.wr.rdma.rkey = f->mb->rkey;
			}
			err = ibv_post_send(f->q[qi], &wr, &bad);
			if (err) {
				snprintf(why, n, "post_send: %s", strerror(err));
				return false;
			}
			want++;
		}
		partner_send(f, qi);
	}
	end = now_s() + RACE_SETTLE_S;
	while ((got < want || pgot < 2 * NFQ) && now_s() < end) {
		poll(NULL, 0, 1);
		while (ibv_poll_cq(f->ca, 1, &wc) > 0) {
			if (wc.status != IBV_WC_SUCCESS) {
				snprintf(why, n, "wr_id 0x%" PRIx64 ": %s",
					 (uint64_t)wc.wr_id,
					 ibv_wc_status_str(wc.status));
				return false;
			}
			got++;
		}
		while (ibv_poll_cq(f->cb, 1, &wc) > 0) {
			if (wc.status != IBV_WC_SUCCESS) {
				snprintf(why, n, "partner wr_id 0x%" PRIx64 ": %s",
					 (uint64_t)wc.wr_id,
					 ibv_wc_status_str(wc.status));
				return false;
			}
			pgot++;
		}
	}
	if (got < want || pgot < 2 * NFQ) {
		snprintf(why, n, "%u of %u completions, %u of %u at the partners, in %d s",
			 got, want, pgot, 2 * NFQ, RACE_SETTLE_S);
		return false;
	}
	return true;
}

/* name count, ... for the non-zero counts of a status table. */
static void race_statuses(const char *who, const uint64_t *st)
{
	char buf[512];
	int i, n = 0;

	buf[0] = 0;
	for (i = 0; i < 256; i++)
		if (st[i])
			n += snprintf(buf + n, sizeof(buf) - n, "%s%s %" PRIu64,
				      n ? ", " : "",
				      ibv_wc_status_str((enum ibv_wc_status)i),
				      st[i]);
	ktap_diag("ring-race: %s completions: %s", who, n ? buf : "none");
}

static void race_report(struct race *x)
{
	struct racer *r = &x->r;
	char buf[512];
	int i, n = 0;

	ktap_diag("ring-race: %" PRIu64 " steps; posted %" PRIu64 " RC SENDs, %" PRIu64 " WRITEs, %" PRIu64 " READs, %" PRIu64 " UD SENDs (%" PRIu64 " inline), %" PRIu64 " receives, %" PRIu64 " SRQ receives; %" PRIu64 " partner SENDs; %" PRIu64 " refused as full",
		  x->f.rounds, x->posted_send, x->posted_write, x->posted_read,
		  x->posted_ud, x->posted_inline, x->posted_recv,
		  x->posted_srq_recv, x->f.partner_sends, x->full);
	for (i = 0; i < NFLIP; i++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s %" PRIu64,
			      i ? ", " : "", flip_class[i], r->flips[i]);
	ktap_diag("ring-race: flips of WQEs in flight: %s; %" PRIu64 " toggles, %" PRIu64 " left odd; %" PRIu64 " bursts, %" PRIu64 " with nothing in flight",
		  buf, r->toggles, r->left_odd, r->bursts, r->idle);
	race_statuses("raced QPs'", x->status);
	race_statuses("partners'", x->partner_status);
	ktap_diag("ring-race: %" PRIu64 " completions of slots never posted (wr_id 0), %" PRIu64 " async events, %" PRIu64 " kicks after a second standing still; %" PRIu64 " inline sends parked in %" PRIu64 " parks",
		  x->never_posted, x->f.events, x->stall_kicks, x->parked,
		  x->parks);
	ktap_diag("ring-race: %" PRIu64 " recreations: %" PRIu64 " QP or CQ broken, %" PRIu64 " ring overrun, %" PRIu64 " stalled, %" PRIu64 " periodic",
		  x->f.recreated, x->recreated_broken, x->recreated_overrun,
		  x->recreated_stall, x->periodic);
}

/* ring-race, or srq-race (srq_only): the racer on the SRQ's WQEs alone. */
static int race_run(char **dev, double secs, uint64_t seed, bool srq_only)
{
	static struct race x;
	struct ring_fuzz *f = &x.f;
	struct racer *r = &x.r;
	struct victim_proc vp;
	bool ok, settled = false;
	char why[200] = "";
	double end;
	int i, n;

	rng_state = seed;
	ok = victim_start(&vp, dev);
	result(ok, "victim: RC pair connected in a process of its own",
	       "setup failed");
	ok = ok && ring_open(f, dev);
	result(ok, "ring-race: the raced QPs (RC on an RQ, RC on an SRQ, UD) and their partners",
	       "%s", strerror(errno));
	r->srq_only = srq_only;
	racer_start(r, seed ^ 0x5241434552ULL);
	racer_hold(r);
	racer_release(r, f);
	if (!r->started) {
		result(false, "ring-race: the racer thread", "pthread_create failed");
		ok = false;
	}
	for (i = 0; i < NFQ; i++)
		x.sq_moved[i] = x.sq_kicked[i] = now_s();
	end = now_s() + secs;
	while (ok && now_s() < end) {
		race_step(&x);
		f->rounds++;
		race_poll(&x);
		if (!(f->rounds & 15))
			ring_events(f);
		if (!(f->rounds & 7) && race_check(&x)) {
			ok = race_recreate(&x);
		} else if (!(f->rounds % 2000)) {
			x.periodic++;
			ok = race_recreate(&x);
		}
		if (!ok)
			result(false, "ring-race: recreate the objects",
			       "after %" PRIu64 " steps: %s", f->rounds,
			       strerror(errno));
	}
	racer_stop(r);
	if (ok)
		settled = race_settle(&x);
	if (f->a.ctx)
		ring_events(f);
	race_report(&x);
	for (i = 0, n = 0, why[0] = 0; i < NFLIP; i++)
		if (!r->flips[i])
			n += snprintf(why + n, sizeof(why) - n, "%s%s",
				      n ? ", " : "never flipped: ",
				      flip_class[i]);
	ktap_diag("ring-race: %" PRIu64 " num_sge flips of SRQ WQEs, %" PRIu64 " SRQ receives completed",
		  r->srq_num_sge, x.srq_recvs);
	if (srq_only)
		result(r->srq_num_sge && x.srq_recvs,
		       "srq-race: a second thread flipped num_sge of SRQ WQEs in flight while the engine consumed them",
		       "%" PRIu64 " flips, %" PRIu64 " SRQ receives completed",
		       r->srq_num_sge, x.srq_recvs);
	else
		result(f->rounds > 0 && !n,
		       "ring-race: the racer flipped num_sge, SGE lengths and addresses, inline lengths and producer indices of WQEs in flight",
		       "%s", f->rounds ? why : "no step");
	why[0] = 0;
	result(x.status[IBV_WC_SUCCESS] > 0,
	       "ring-race: WQEs completed successfully while the racer ran",
	       "no successful completion");
	result(!x.bad_status,
	       "ring-race: every completion a success or an error status of the engine's",
	       "%" PRIu64 " not, the first: %s", x.bad_status, x.first_bad);
	result(!x.foreign,
	       "ring-race: every completion names a WQE this process posted",
	       "%" PRIu64 " with another wr_id", x.foreign);
	result(!x.stalls,
	       "ring-race: no send queue stood still with WQEs in flight",
	       "%" PRIu64 " did, the first: %s", x.stalls, x.first_stall);
	result(settled,
	       "ring-race: the racer stopped, every send queue drained or its QP failed within 10 s",
	       "%s", x.unsettled);
	if (ok)
		ok = race_after(&x, why, sizeof(why));
	result(ok, "ring-race: after the race, fresh QPs carry SEND, WRITE, READ, UD SEND and receives, every completion a success",
	       "%s", why);
	result(ring_close(f), "ring-race: every object destroyed", "%s",
	       strerror(errno));
	victim_end(&vp);
	return exit_status();
}

int race_main(char **dev, double secs, uint64_t seed)
{
	return race_run(dev, secs, seed, false);
}

int srq_race_main(char **dev, double secs, uint64_t seed)
{
	return race_run(dev, secs, seed, true);
}
