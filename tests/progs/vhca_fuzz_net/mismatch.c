// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz_net inject, mismatch class: the victim's requesters (sweep.c)
 * send to fake peers that never answer; the injector, learning each
 * request from the wire, answers it only wrongly: an ACK at a duplicate
 * PSN, past the last PSN sent or out of the window; a READ response to a
 * SEND, WRITE or atomic; an atomic ACK to a SEND, WRITE or READ; a plain
 * ACK to a READ or atomic; for a READ a response shorter or longer than
 * its share, ONLY or LAST where the READ has more packets, MIDDLE at its
 * first PSN, or a response at a PSN before or after it; for an atomic an
 * atomic ACK at the PSN before it.  None may complete the WQE with
 * success (the victim's verdict); the retries draw further answers.
 */
#include "net.h"

const char * const mm_name[MM_N] = {
	[MM_ACK_DUP] = "ACK-duplicate-PSN",
	[MM_ACK_AHEAD] = "ACK-PSN-not-sent",
	[MM_ACK_FAR] = "ACK-out-of-window",
	[MM_READ_RESP_TO] = "READ-response-to-it",
	[MM_ATOM_ACK_TO] = "atomic-ACK-to-it",
	[MM_ACK_TO] = "plain-ACK-to-it",
	[MM_READ_SHORT] = "READ-response-short",
	[MM_READ_LONG] = "READ-response-long",
	[MM_READ_ONLY_MULTI] = "READ-ONLY-for-several",
	[MM_READ_MIDDLE_FIRST] = "READ-MIDDLE-first",
	[MM_READ_LAST_EARLY] = "READ-LAST-early",
	[MM_READ_DUP] = "READ-response-duplicate-PSN",
	[MM_READ_AHEAD] = "READ-response-PSN-not-sent",
	[MM_ATOM_DUP] = "atomic-ACK-duplicate-PSN",
};

static unsigned long mm_sent[SW_KINDS][MM_N];
static unsigned long requests_seen[SW_KINDS], stale;

/* An answer to class QP q: opcode op at psn with len bytes of payload. */
static void answer(const struct sw_qp *q, uint8_t op, uint32_t psn,
		   uint32_t len)
{
	bool reth, aeth, imm, deth, atom;
	size_t ext = ext_len(op, &reth, &aeth, &imm, &deth, &atom);
	uint32_t pad = (-len) & 3;
	size_t iblen = 12 + ext + len + pad + 4;
	uint8_t *b = pkt + 28, *h = b + 12;

	ip_udp(src_ip, iblen);
	b[0] = op;
	b[1] = pad << 4;
	put16(b + 2, 0xffff);
	b[4] = 0;
	put24(b + 5, q->qpn);
	b[8] = 0;
	put24(b + 9, psn & 0xffffff);
	if (aeth) {
		h[0] = 0x1f;			/* ACK */
		put24(h + 1, (uint32_t)rnd());
		h += 4;
	}
	if (op == 0x12) {
		put64(h, rnd());		/* AtomicAckETH */
		h += 8;
	}
	memset(h, 0xf5, len + pad);
	icrc_put(pkt, iblen);
	send_pkt(28 + iblen);
}

static uint32_t share(uint32_t len, uint32_t i)
{
	uint32_t off = i * MTU;

	return len - off < MTU ? len - off : MTU;
}

/* One wrong answer to the request of kind k, len, PSNs first..last. */
static enum mm answer_wrongly(const struct sw_qp *q, enum sw_kind k,
			      uint32_t len, uint32_t first, uint32_t last)
{
	uint32_t n = ((last - first) & 0xffffff) + 1;
	enum mm pick[MM_N];
	int np = 0;
	enum mm m;

	pick[np++] = MM_ACK_DUP;
	pick[np++] = MM_ACK_AHEAD;
	pick[np++] = MM_ACK_FAR;
	if (k != SW_READ)
		pick[np++] = MM_READ_RESP_TO;
	if (k != SW_CAS && k != SW_FAA)
		pick[np++] = MM_ATOM_ACK_TO;
	if (k == SW_READ || k == SW_CAS || k == SW_FAA)
		pick[np++] = MM_ACK_TO;
	if (k == SW_READ) {
		pick[np++] = MM_READ_SHORT;
		pick[np++] = MM_READ_LONG;
		if (n > 1) {
			pick[np++] = MM_READ_ONLY_MULTI;
			pick[np++] = MM_READ_LAST_EARLY;
		}
		pick[np++] = MM_READ_MIDDLE_FIRST;
		pick[np++] = MM_READ_DUP;
		pick[np++] = MM_READ_AHEAD;
	}
	if (k == SW_CAS || k == SW_FAA)
		pick[np++] = MM_ATOM_DUP;
	m = pick[below(np)];
	switch (m) {
	case MM_ACK_DUP:
		answer(q, 0x11, first - 1 - below(8), 0);
		break;
	case MM_ACK_AHEAD:
		answer(q, 0x11, last + 1 + below(4), 0);
		break;
	case MM_ACK_FAR:
		answer(q, 0x11, first + (1u << 23) - below(2), 0);
		break;
	case MM_READ_RESP_TO:
		answer(q, 0x10, last, below(2) ? 8 : 0);
		break;
	case MM_ATOM_ACK_TO:
		answer(q, 0x12, last, 0);
		break;
	case MM_ACK_TO:
		answer(q, 0x11, below(2) ? first : last, 0);
		break;
	case MM_READ_SHORT:
		if (n == 1)
			answer(q, 0x10, first, len - 1);
		else
			answer(q, 0x0d, first, MTU - 1 - below(8));
		break;
	case MM_READ_LONG:
		if (n == 1)
			answer(q, 0x10, first, len + 1 + below(4));
		else if (below(2))
			answer(q, 0x0d, first, MTU + 1);
		else
			answer(q, 0x0f, last, share(len, n - 1) + 1);
		break;
	case MM_READ_ONLY_MULTI:
		answer(q, 0x10, first, below(2) ? MTU : len < 1400 ? len : 1400);
		break;
	case MM_READ_MIDDLE_FIRST:
		answer(q, 0x0e, first, share(len, 0));
		break;
	case MM_READ_LAST_EARLY:
		answer(q, 0x0f, first, share(len, 0));
		break;
	case MM_READ_DUP:
		answer(q, 0x10, first - 1 - below(4), share(len, 0));
		break;
	case MM_READ_AHEAD:
		answer(q, 0x10, last + 1 + below(4), share(len, n - 1));
		break;
	default:
		answer(q, 0x12, first - 1 - below(4), 0);
	}
	return m;
}

static bool request_done(uint8_t o)
{
	/* a SEND or WRITE ends at LAST or ONLY; a READ or atomic is one */
	return o == 0x02 || o == 0x03 || o == 0x04 || o == 0x05 || o == 0x08 ||
	       o == 0x09 || o == 0x0a || o == 0x0b || o == 0x0c || o == 0x13 ||
	       o == 0x14;
}

void mismatch_class(struct sw_shm *sh, double t_end)
{
	uint8_t f[9216];
	const uint8_t *ip, *bth;
	unsigned long answers = 0;
	char line[1024];
	struct sw_qp *q;
	uint32_t qi, psn, first, last;
	unsigned int k, m;
	size_t iblen, o;
	enum mm a;
	ssize_t n;

	while (now_s() < t_end) {
		n = recv(cap_fd, f, sizeof(f), MSG_DONTWAIT);
		if (n <= 0) {
			usleep(200);
			continue;
		}
		ip = roce_of(f, n, &iblen);
		if (!ip || ip[1] == INJ_TOS || get32(ip + 12) != dst_ip)
			continue;
		bth = ip + 28;
		qi = get24(bth + 5) - SW_PEER;
		if (qi >= SW_QPS || bth[0] > 0x14 || !request_done(bth[0]))
			continue;
		q = &sh->q[qi];
		psn = get24(bth + 9);
		first = q->cur_first;
		__sync_synchronize();
		last = q->cur_last;
		k = q->cur_kind;
		if (first == ~0u || k >= SW_KINDS ||
		    ((psn - first) & 0xffffff) > ((last - first) & 0xffffff)) {
			stale++;
			continue;
		}
		requests_seen[k]++;
		a = answer_wrongly(q, k, q->cur_len, first, last);
		mm_sent[k][a]++;
		answers++;
		if (q->cur_first == first)
			q->ans_mask |= 1u << a;
	}
	for (k = 0; k < SW_KINDS; k++) {
		o = 0;
		for (m = 0; m < MM_N; m++)
			if (mm_sent[k][m])
				o += snprintf(line + o, sizeof(line) - o, " %s %lu",
					      mm_name[m], mm_sent[k][m]);
		ktap_diag("mismatch: %s requests seen %lu, answered:%s",
			  sw_kind_name[k], requests_seen[k], o ? line : " none");
	}
	ktap_diag("mismatch: %lu wrong answers sent, %lu requests of WQEs already done left alone",
		  answers, stale);
	result(answers > 0, "wrong answers sent to the victim's requests",
	       "none: no request of the class's QPs was seen");
}
