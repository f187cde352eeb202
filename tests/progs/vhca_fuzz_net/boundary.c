// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz_net inject, boundary class: every opcode the engine parses
 * (RC, UC and UD requests and responses, with and without immediate or
 * invalidate, ATOMIC WRITE and FLUSH, whose FETH asks for global
 * visibility of a range), each
 * length, offset and count field at its boundaries (0, 1, PMTU-1, PMTU,
 * PMTU+1, 2^31, 2^32-1): the payload, the pad count, the RETH length, the
 * VA's offset into the MR (RETH and AtomicETH), the AtomicETH data, the
 * AETH's MSN.  One field at a time off the packet a correct peer would
 * send, to the victim's class QP of the opcode's transport (sweep.c) at
 * the PSN it expects, and how it took the packet: its answer on the wire
 * (ACK, NAK, READ response, atomic ACK), a completion, its QP failing, or
 * nothing (dropped).
 */
#include "net.h"

enum field { F_PAY, F_PAD, F_RLEN, F_VAOFF, F_ADATA, F_MSN, F_N };

static const char * const field_name[F_N] = {
	"payload", "pad", "reth_len", "va_off", "atomic_data", "aeth_msn",
};

#define N_VAL	7
static const uint32_t val[N_VAL] = {
	0, 1, MTU - 1, MTU, MTU + 1, 1u << 31, 0xffffffffu,
};
static const char * const val_name[N_VAL] = {
	"0", "1", "PMTU-1", "PMTU", "PMTU+1", "2^31", "2^32-1",
};

enum react {
	R_ACK, R_NAK_SEQ, R_NAK_INV, R_NAK_ACC, R_NAK_OP, R_NAK_OTHER, R_RNR,
	R_READ_RESP, R_ATOM_ACK, R_COMP_OK, R_COMP_ERR, R_QP_FAIL, R_DROP, R_N
};

static const char * const react_name[R_N] = {
	"ACK", "NAK-seq", "NAK-inv-req", "NAK-rem-access", "NAK-rem-op",
	"NAK-other", "RNR-NAK", "READ-response", "atomic-ACK",
	"completed-success", "completed-error", "QP-failed", "dropped",
};

static const uint8_t sweep_ops[] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
	0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16,
	0x17, 0x1c, 0x1d,
	0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a,
	0x2b,
	0x64, 0x65,
};

#define N_OPS	ARRAY_SIZE(sweep_ops)

static const char * const op5_name[32] = {
	[0x00] = "SEND_FIRST", [0x01] = "SEND_MIDDLE", [0x02] = "SEND_LAST",
	[0x03] = "SEND_LAST_IMM", [0x04] = "SEND_ONLY",
	[0x05] = "SEND_ONLY_IMM", [0x06] = "WRITE_FIRST",
	[0x07] = "WRITE_MIDDLE", [0x08] = "WRITE_LAST",
	[0x09] = "WRITE_LAST_IMM", [0x0a] = "WRITE_ONLY",
	[0x0b] = "WRITE_ONLY_IMM", [0x0c] = "READ_REQUEST",
	[0x0d] = "READ_RESP_FIRST", [0x0e] = "READ_RESP_MIDDLE",
	[0x0f] = "READ_RESP_LAST", [0x10] = "READ_RESP_ONLY",
	[0x11] = "ACK", [0x12] = "ATOMIC_ACK", [0x13] = "CMP_SWAP",
	[0x14] = "FETCH_ADD", [0x16] = "SEND_LAST_INV",
	[0x17] = "SEND_ONLY_INV", [0x1c] = "FLUSH", [0x1d] = "ATOMIC_WRITE",
};

/*
 * How long the victim has to answer or complete: a debug kernel under
 * TCG answers within some ms; a late answer is counted for the packet
 * after.
 */
#define WINDOW_S	0.01

static unsigned long cnt[N_OPS][F_N][N_VAL][R_N];
static unsigned long sent_combo[N_OPS][F_N][N_VAL];
static unsigned long total_react[R_N], probes, recycles_waited;

static void op_name(uint8_t op, char *buf, size_t n)
{
	snprintf(buf, n, "%s_%s", (op & 0xe0) == 0x60 ? "UD" :
		 (op & 0xe0) == 0x20 ? "UC" : "RC", op5_name[op & 0x1f]);
}

/* The payload a correct peer would send with op. */
static uint32_t natural_payload(uint8_t op)
{
	switch (op & 0x1f) {
	case 0x00: case 0x01: case 0x06: case 0x07: case 0x0d: case 0x0e:
		return MTU;
	case 0x0c: case 0x11: case 0x12: case 0x13: case 0x14: case 0x1c:
		return 0;
	default:
		return 8;
	}
}

/* The packet's fields, the correct ones first, then one changed. */
struct bpkt {
	uint8_t op;
	uint32_t psn, payload, pad, rlen, msn;
	uint64_t va, adata;
	bool ackreq;
};

static size_t build(const struct sw_qp *q, const struct bpkt *p)
{
	bool reth, aeth, imm, deth, atom;
	size_t ext = ext_len(p->op, &reth, &aeth, &imm, &deth, &atom);
	size_t iblen = 12 + ext + p->payload + p->pad + 4;
	uint8_t *b = pkt + 28, *h = b + 12;

	ip_udp(src_ip, iblen);
	b[0] = p->op;
	b[1] = p->pad << 4;
	put16(b + 2, 0xffff);
	b[4] = 0;
	put24(b + 5, q->qpn);
	b[8] = p->ackreq ? 0x80 : 0;
	put24(b + 9, p->psn);
	if (deth) {
		put32(h, UD_QKEY);
		put24(h + 5, q->peer);
		h += 8;
	}
	if ((p->op & 0x1f) == 0x1c) {
		put32(h, 1);			/* FETH: global, range */
		h += 4;
	}
	if (reth) {
		put64(h, p->va);
		put32(h + 8, q->rkey);
		put32(h + 12, p->rlen);
		h += 16;
	}
	if (atom) {
		put64(h, p->va);
		put32(h + 8, q->rkey);
		put64(h + 12, p->adata);
		put64(h + 20, p->adata);
		h += 28;
	}
	if (aeth) {
		h[0] = 0x1f;			/* ACK, no credit count */
		put24(h + 1, p->msn);
		h += 4;
	}
	if ((p->op & 0x1f) == 0x12) {
		put64(h, 0);			/* AtomicAckETH */
		h += 8;
	}
	if (imm) {
		/* immediate data, or the IETH's R_Key: another key of the PD */
		put32(h, (p->op & 0x1f) >= 0x16 ? q->rkey + 0x100 : (uint32_t)rnd());
		h += 4;
	}
	memset(h, 0xf5, p->payload + p->pad);
	icrc_put(pkt, iblen);
	return iblen;
}

/* The largest payload of op that fits a 1500-byte IP packet. */
static uint32_t max_payload(uint8_t op)
{
	bool r, a, i, d, t;

	return 1500 - 28 - 12 - ext_len(op, &r, &a, &i, &d, &t) - 4 - 3;
}

/*
 * An answer at psn: the PSN expected next is after it, unless a later
 * answer already said so (a late one is stale); a sequence NAK's PSN is
 * taken as it is.
 */
static void forward(uint32_t *epsn, uint32_t psn)
{
	uint32_t next = (psn + 1) & 0xffffff;

	if (((next - *epsn) & 0xffffff) < (1u << 23))
		*epsn = next;
}

/*
 * What came back within the window: the victim's answers on the wire to
 * the class QP's fake peer, its completions, its QP failing.  *epsn
 * follows the answers (the PSN the RC QP expects next).
 */
static unsigned int watch(struct sw_shm *sh, int qi, uint32_t gen0,
			  uint32_t ncomp0, uint32_t *epsn, bool comp)
{
	const struct sw_qp *q = &sh->q[qi];
	double t0 = now_s(), deadline = t0 + WINDOW_S;
	unsigned int got = 0;
	uint8_t f[9216], syn;
	const uint8_t *ip, *bth;
	size_t iblen;
	ssize_t n;

	while (now_s() < deadline) {
		n = recv(cap_fd, f, sizeof(f), MSG_DONTWAIT);
		if (n <= 0) {
			if (q->ncomp != ncomp0 && (q->type != IBV_QPT_RC || got))
				break;
			usleep(100);
			continue;
		}
		ip = roce_of(f, n, &iblen);
		if (!ip || ip[1] == INJ_TOS || get32(ip + 12) != dst_ip)
			continue;
		bth = ip + 28;
		if (get24(bth + 5) != q->peer)
			continue;
		switch (bth[0]) {
		case 0x11:
			syn = bth[12];
			if (syn < 0x20) {
				got |= 1u << R_ACK;
				forward(epsn, get24(bth + 9));
			} else if (syn < 0x40) {
				got |= 1u << R_RNR;
			} else if (syn == 0x60) {
				got |= 1u << R_NAK_SEQ;
				*epsn = get24(bth + 9);
			} else {
				got |= 1u << (syn == 0x61 ? R_NAK_INV :
					      syn == 0x62 ? R_NAK_ACC :
					      syn == 0x63 ? R_NAK_OP : R_NAK_OTHER);
			}
			break;
		case 0x12:
			got |= 1u << R_ATOM_ACK;
			forward(epsn, get24(bth + 9));
			break;
		case 0x0d: case 0x0e: case 0x0f: case 0x10:
			got |= 1u << R_READ_RESP;
			forward(epsn, get24(bth + 9));
			break;
		}
		/* a READ's responses keep coming: wait for their end */
		deadline = now_s() + (got & (1u << R_READ_RESP) ? 0.01 : 0.002);
		/* an ACK of a message that completes: its completion too */
		if (comp && q->ncomp == ncomp0 && deadline < t0 + 2 * WINDOW_S)
			deadline = t0 + 2 * WINDOW_S;
		if (deadline > t0 + 10 * WINDOW_S)
			deadline = t0 + 10 * WINDOW_S;
	}
	__sync_synchronize();
	if (q->ncomp != ncomp0)
		got |= 1u << (q->last_status ? R_COMP_ERR : R_COMP_OK);
	if (q->gen != gen0 || !q->ready)
		got |= 1u << R_QP_FAIL;
	return got;
}

/* Wait (at most a second) for the victim to bring a failed QP up again. */
static void await_ready(struct sw_shm *sh, int qi, uint32_t gen0)
{
	double t0 = now_s();

	while (now_s() - t0 < 1 && (sh->q[qi].gen == gen0 || !sh->q[qi].ready))
		usleep(200);
	recycles_waited++;
}

static void one(struct sw_shm *sh, unsigned int oi, enum field fi,
		unsigned int vi, uint32_t *epsn, uint32_t *uc_psn,
		uint32_t *gen)
{
	uint8_t op = sweep_ops[oi], o = op & 0x1f;
	int qi = (op & 0xe0) == 0x60 ? 2 : (op & 0xe0) == 0x20 ? 1 : 0;
	struct sw_qp *q = &sh->q[qi];
	bool resp = is_response(op) && qi == 0;
	struct bpkt p = { .op = op, .ackreq = true };
	uint32_t v = val[vi], ncomp0, gen0;
	/* a SEND's LAST or ONLY, a WRITE with immediate: a receive completes */
	bool comp = (o >= 0x02 && o <= 0x05) || o == 0x09 || o == 0x0b ||
		    o == 0x16 || o == 0x17;
	unsigned int got, r;
	size_t iblen;

	if (!q->ready || q->gen != gen[qi]) {
		if (!q->ready)
			await_ready(sh, qi, gen[qi]);
		gen[qi] = q->gen;
		if (qi == 0)
			*epsn = SW_RQ_PSN;
		if (qi == 1)
			*uc_psn = SW_RQ_PSN;
	}
	p.payload = natural_payload(op);
	p.rlen = o == 0x06 ? 2 * MTU : o == 0x0c || o == 0x1c ? 8 : p.payload;
	p.va = q->va;
	p.psn = qi == 0 ? (resp ? (uint32_t)rnd() & 0xffffff : *epsn) :
		qi == 1 ? (*uc_psn)++ & 0xffffff : 0;
	switch (fi) {
	case F_PAY:
		p.payload = v < max_payload(op) ? v : max_payload(op);
		p.rlen = o == 0x06 ? p.payload + MTU : p.payload;
		break;
	case F_PAD:
		p.payload = p.payload ? 1 : 0;
		p.rlen = o == 0x06 ? MTU + 1 : o == 0x0c || o == 0x1c ? 8 : p.payload;
		p.pad = vi;
		break;
	case F_RLEN:
		p.rlen = v;
		break;
	case F_VAOFF:
		p.va = q->va + v;
		break;
	case F_ADATA:
		p.adata = v;
		break;
	case F_MSN:
		p.msn = v & 0xffffff;
		break;
	default:
		break;
	}
	if (fi != F_PAD)
		p.pad = (-p.payload) & 3;
	iblen = build(q, &p);
	gen0 = q->gen;
	ncomp0 = q->ncomp;
	send_pkt(28 + iblen);
	sent_combo[oi][fi][vi]++;
	got = watch(sh, qi, gen0, ncomp0, epsn, comp);
	if (qi == 0 && !resp && !(got & ~(1u << R_COMP_OK | 1u << R_COMP_ERR))) {
		/*
		 * Silent: taken without an answer, or dropped.  A zero-length
		 * WRITE far ahead draws a sequence NAK with the PSN expected.
		 */
		struct bpkt pr = { .op = 0x0a, .ackreq = true, .va = q->va,
				   .psn = (*epsn + 1000) & 0xffffff };
		uint32_t ignore = 0;

		iblen = build(q, &pr);
		send_pkt(28 + iblen);
		probes++;
		if (watch(sh, qi, gen0, q->ncomp, &ignore, false) &
		    (1u << R_NAK_SEQ))
			*epsn = ignore;
	}
	if (!got)
		got = 1u << R_DROP;
	for (r = 0; r < R_N; r++)
		if (got & (1u << r)) {
			cnt[oi][fi][vi][r]++;
			total_react[r]++;
		}
	if (got & (1u << R_QP_FAIL) || got & (0xfu << R_NAK_INV) ||
	    !q->ready) {
		/* a fatal NAK: the victim notices and brings it up again */
		usleep(2000);
		if (!q->ready || q->gen == gen0)
			await_ready(sh, qi, gen0);
	}
}

static bool applies(uint8_t op, enum field fi)
{
	bool reth, aeth, imm, deth, atom;

	ext_len(op, &reth, &aeth, &imm, &deth, &atom);
	switch (fi) {
	case F_RLEN:
		return reth;
	case F_VAOFF:
		return reth || atom;
	case F_ADATA:
		return atom;
	case F_MSN:
		return aeth;
	default:
		return true;
	}
}

static void print_counts(void)
{
	char name[48], line[2048];
	unsigned int oi, fi, vi, r;
	unsigned long total = 0;
	size_t o;

	for (oi = 0; oi < N_OPS; oi++) {
		op_name(sweep_ops[oi], name, sizeof(name));
		for (fi = 0; fi < F_N; fi++) {
			if (!applies(sweep_ops[oi], fi))
				continue;
			o = 0;
			for (vi = 0; vi < (fi == F_PAD ? 4 : N_VAL); vi++) {
				total += sent_combo[oi][fi][vi];
				if (fi == F_PAD)
					o += snprintf(line + o, sizeof(line) - o,
						      " %u=", vi);
				else
					o += snprintf(line + o, sizeof(line) - o,
						      " %s=", val_name[vi]);
				for (r = 0; r < R_N; r++)
					if (cnt[oi][fi][vi][r])
						o += snprintf(line + o, sizeof(line) - o,
							      "%s%s:%lu",
							      line[o - 1] == '=' ? "" : ",",
							      react_name[r],
							      cnt[oi][fi][vi][r]);
			}
			ktap_diag("boundary %s %s (sent %lu each):%s", name,
				  field_name[fi], sent_combo[oi][fi][0], line);
		}
	}
	o = 0;
	for (r = 0; r < R_N; r++)
		o += snprintf(line + o, sizeof(line) - o, " %s %lu",
			      react_name[r], total_react[r]);
	ktap_diag("boundary: %lu packets (%zu opcodes), reactions:%s; %lu sequence probes, %lu waits for a QP brought up again",
		  total, N_OPS, line, probes, recycles_waited);
	ktap_diag("boundary: payloads of 2^31 and 2^32-1 are sent as the largest that fits a 1500-byte IP packet");
}

/*
 * The sweep, whole the first time however long it takes, then again
 * until t_end.
 */
void boundary(struct sw_shm *sh, double t_end)
{
	uint32_t epsn = SW_RQ_PSN, uc_psn = SW_RQ_PSN, gen[SW_QPS];
	unsigned int oi, fi, vi, passes = 0;
	double t0 = now_s();
	int i;

	for (i = 0; i < SW_QPS; i++)
		gen[i] = sh->q[i].gen;
	do {
		for (oi = 0; oi < N_OPS; oi++)
			for (fi = 0; fi < F_N; fi++) {
				if (!applies(sweep_ops[oi], fi))
					continue;
				for (vi = 0; vi < (fi == F_PAD ? 4 : N_VAL); vi++)
					one(sh, oi, fi, vi, &epsn, &uc_psn, gen);
			}
		passes++;
		if (passes == 1)
			ktap_diag("boundary: the first pass in %.1f s", now_s() - t0);
	} while (now_s() < t_end);
	ktap_diag("boundary: %u passes in %.1f s", passes, now_s() - t0);
	print_counts();
}
