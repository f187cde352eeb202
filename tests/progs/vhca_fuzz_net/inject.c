// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz_net inject: crafted RoCEv2 from a raw IPv4 socket, the live
 * PSNs learnt by sniffing, the systematic part, random packets and
 * mutated replays.
 */
#include "net.h"

static struct target tg[16];
static int ntg;
uint32_t dst_ip, src_ip, ro_rkey;
static uint64_t ro_va;
int raw_fd, cap_fd;
static uint8_t cap[MAX_CAP][1500];
static size_t cap_len[MAX_CAP];
static int ncap;
unsigned long sent, sent_bad_icrc, sent_src_random;

static void read_info(const char *path)
{
	char kind[16];
	unsigned long long va;
	struct target t;
	FILE *f = fopen(path, "r");

	if (!f)
		fatal("read the info file");
	while (ntg < 16 &&
	       fscanf(f, "%15s %u %u %u %u %u %llu %u", kind, &t.qpn, &t.peer,
		      &t.rq_psn, &t.sq_psn, &t.rkey, &va, &t.len) == 8) {
		t.va = va;
		t.in_psn = (t.rq_psn - 1) & 0xffffff;
		t.out_psn = (t.sq_psn - 1) & 0xffffff;
		if (!strcmp(kind, "ro")) {
			ro_rkey = t.rkey;
			ro_va = t.va;
			continue;
		}
		t.kind = !strcmp(kind, "prot") ? K_PROT :
			 !strcmp(kind, "targ") ? K_TARG :
			 !strcmp(kind, "ud") ? K_UD : K_STATE;
		tg[ntg++] = t;
	}
	fclose(f);
}

static struct target *by_qpn(uint32_t qpn, bool peer)
{
	int i;

	for (i = 0; i < ntg; i++)
		if ((peer ? tg[i].peer : tg[i].qpn) == qpn)
			return &tg[i];
	return NULL;
}

bool is_response(uint8_t op)
{
	return op >= 0x0d && op <= 0x12;
}

/*
 * Learn from the real traffic on the interface: the last request PSN to
 * and from each victim QP, and (the first MAX_CAP) frames to replay.
 */
static void sniff(void)
{
	uint8_t f[9216];
	const uint8_t *ip, *bth;
	struct target *t;
	size_t iblen;
	uint32_t psn;
	ssize_t n;

	while ((n = recv(cap_fd, f, sizeof(f), MSG_DONTWAIT)) > 0) {
		ip = roce_of(f, n, &iblen);
		if (!ip || ip[1] == INJ_TOS)
			continue;
		bth = ip + 28;
		psn = get24(bth + 9);
		if (get32(ip + 16) == dst_ip) {
			t = by_qpn(get24(bth + 5), false);
			if (t && !is_response(bth[0]))
				t->in_psn = psn;
			if (t && t->kind == K_TARG && ncap < MAX_CAP &&
			    28 + iblen <= sizeof(cap[0])) {
				memcpy(cap[ncap], ip, 28 + iblen);
				cap_len[ncap++] = 28 + iblen;
			}
		} else {
			t = by_qpn(get24(bth + 5), true);
			if (t && !is_response(bth[0]))
				t->out_psn = psn;
		}
	}
}

uint8_t pkt[1600];

/* The IPv4 and UDP headers of an IB part of iblen bytes, from src. */
void ip_udp(uint32_t src, size_t iblen)
{
	size_t tot = 28 + iblen;

	memset(pkt, 0, 28);
	pkt[0] = 0x45;
	pkt[1] = INJ_TOS;
	put16(pkt + 2, tot);
	put16(pkt + 4, 1 + below(0xfffe));	/* the kernel keeps a nonzero ID */
	put16(pkt + 6, 0x4000);
	pkt[8] = 64;
	pkt[9] = 17;
	put32(pkt + 12, src);
	put32(pkt + 16, dst_ip);
	put16(pkt + 20, 0xc000 | below(0x4000));
	put16(pkt + 22, ROCE_PORT);
	put16(pkt + 24, iblen + 8);
}

void send_pkt(size_t tot)
{
	struct sockaddr_in to = { .sin_family = AF_INET };

	to.sin_addr.s_addr = htonl(get32(pkt + 16));
	if (sendto(raw_fd, pkt, tot, 0, (struct sockaddr *)&to, sizeof(to)) >= 0)
		sent++;
	if (!(sent % 16))
		usleep(2000);	/* leave the victim CPU: 2 cores, shared */
}

/* The extended headers an opcode carries after the BTH, in bytes. */
size_t ext_len(uint8_t op, bool *reth, bool *aeth, bool *imm,
		      bool *deth, bool *atom)
{
	uint8_t o = op & 0x1f;

	*reth = *aeth = *imm = *deth = *atom = false;
	if ((op & 0xe0) == 0x60) {
		*deth = true;
		*imm = o == 0x05;
		return 8 + (*imm ? 4 : 0);
	}
	*reth = o == 0x06 || o == 0x0a || o == 0x0b || o == 0x0c ||
		o == 0x1c || o == 0x1d;
	*aeth = o == 0x0d || o == 0x0f || o == 0x10 || o == 0x11 || o == 0x12;
	*imm = o == 0x03 || o == 0x05 || o == 0x09 || o == 0x0b ||
	       o == 0x16 || o == 0x17;
	*atom = o == 0x13 || o == 0x14;
	return (*reth ? 16 : 0) + (*aeth ? 4 : 0) + (*imm ? 4 : 0) +
	       (*atom ? 28 : 0) + (o == 0x12 ? 8 : 0) + (o == 0x1c ? 4 : 0);
}

static uint32_t pick_len(uint32_t mrlen)
{
	static const uint32_t l[] = { 0, 1, 8, MTU - 1, MTU, MTU + 1,
				      REGION, REGION + 1, 1u << 20, 1u << 31,
				      0xfffffffeu, 0xffffffffu };

	return below(4) ? l[below(ARRAY_SIZE(l))] :
			  below(mrlen + 64);
}

static uint64_t pick_va(const struct target *t)
{
	switch (below(8)) {
	case 0:
		return t->va + t->len - 1 - below(8);
	case 1:
		return t->va + t->len;
	case 2:
		return t->va - 1 - below(64);
	case 3:
		return 0;
	case 4:
		return ~0ull - below(4096);
	case 5:
		return rnd();
	default:
		return t->va + below(t->len);
	}
}

/* An R_Key and a VA for t: its MR's, the remote-read-only MR's, others. */
static void pick_key(const struct target *t, uint32_t *rkey, uint64_t *va)
{
	*va = pick_va(t);
	switch (below(6)) {
	case 0:
		*rkey = t->rkey ^ 1;		/* the key byte */
		break;
	case 1:
		*rkey = ro_rkey;
		*va = ro_va + below(PAGE);
		break;
	case 2:
		*rkey = (uint32_t)rnd();
		break;
	default:
		*rkey = t->rkey;
	}
}

/*
 * A PSN for t: around the expected one for a target, or (prot_safe) one
 * that no correct QP acts on: the duplicate region or 2^22 ahead.
 */
static uint32_t pick_psn(const struct target *t, bool response, bool prot_safe)
{
	uint32_t base = response ? t->out_psn : t->in_psn;
	/* expected, last, just ahead, just behind, the window's two edges */
	static const int32_t near[] = { 1, 0, 2, 9, 17, -1, -8, -15,
					(1 << 23) - 1, 1 << 23, (1 << 23) + 1,
					-(1 << 23) + 1, -(1 << 23) };

	if (prot_safe)
		return (below(2) ? base - 64 - below(1 << 20) :
				   base + (1u << 22) + below(1 << 22)) & 0xffffff;
	if (!below(8))
		return (uint32_t)rnd() & 0xffffff;
	return (base + near[below(ARRAY_SIZE(near))]) & 0xffffff;
}

static uint32_t pick_src(void)
{
	if (below(5))
		return src_ip;
	sent_src_random++;
	switch (below(4)) {
	case 0:
		return src_ip + 1;
	case 1:
		return (src_ip & 0xffffff00) | 0xfe;
	case 2:
		return dst_ip;
	default:
		return ((uint32_t)rnd() & 0xdfffffff) | 0x01000000;
	}
}

/*
 * Build one packet to t with opcode op and payload len; prot_safe keeps
 * its PSN harmless.  The IB part's length is returned.
 */
static size_t craft(struct target *t, uint8_t op, size_t len, bool prot_safe)
{
	bool reth, aeth, imm, deth, atom;
	size_t ext = ext_len(op, &reth, &aeth, &imm, &deth, &atom);
	uint8_t pad = below(8) ? (-len) & 3 : below(4);
	uint8_t *b = pkt + 28, *h = b + 12;
	size_t iblen = 12 + ext + len + pad + 4;
	uint32_t qpn = t->qpn, rkey;
	uint64_t va;
	static const uint8_t syn[] = { 0x1f, 0x00, 0x20, 0x3f, 0x40, 0x5f,
				       0x60, 0x61, 0x62, 0x63, 0x64, 0x9f };

	if (!below(40))
		qpn = below(2) ? 1 : (uint32_t)rnd();
	ip_udp(pick_src(), iblen);
	b[0] = op;
	b[1] = (below(2) << 7) | (pad << 4) | (below(30) ? 0 : below(16));
	put16(b + 2, below(30) ? 0xffff : (uint16_t)rnd());
	b[4] = below(20) ? 0 : (uint8_t)rnd();
	put24(b + 5, qpn);
	b[8] = below(2) ? 0x80 : 0;
	put24(b + 9, pick_psn(t, is_response(op), prot_safe));
	if (deth) {
		put32(h, below(4) ? UD_QKEY : (uint32_t)rnd());
		put24(h + 5, below(2) ? t->peer : (uint32_t)rnd());
		h += 8;
	}
	if (op == 0x1c)
		h += 4;				/* FETH */
	if (reth) {
		pick_key(t, &rkey, &va);
		put64(h, va);
		put32(h + 8, rkey);
		/*
		 * A duplicate READ is executed again: a long one would answer
		 * with PSNs of the real requester's outstanding requests.
		 */
		put32(h + 12, prot_safe && (op & 0x1f) == 0x0c ? below(65) :
			      pick_len(t->len));
		h += 16;
	}
	if (atom) {
		pick_key(t, &rkey, &va);
		put64(h, below(2) ? t->va + 8 * below(t->len / 8) : va);
		put32(h + 8, rkey);
		put64(h + 12, rnd());
		put64(h + 20, rnd());
		h += 28;
	}
	if (aeth) {
		h[0] = syn[below(ARRAY_SIZE(syn))];
		put24(h + 1, (uint32_t)rnd());
		h += 4;
	}
	if ((op & 0x1f) == 0x12)
		h += 8;				/* AtomicAckETH */
	if (imm) {
		put32(h, (uint32_t)rnd());
		h += 4;
	}
	memset(h, 0xf5, len + pad);		/* the injector's bytes */
	icrc_put(pkt, iblen);
	return iblen;
}

/* Send the crafted packet (IB part iblen), one time in ten with a bad ICRC. */
static void emit(size_t iblen)
{
	size_t at = 28 + iblen - 1 - below(4);
	uint8_t bit = 1 << below(8);

	if (below(10)) {
		send_pkt(28 + iblen);
		return;
	}
	pkt[at] ^= bit;
	send_pkt(28 + iblen);
	pkt[at] ^= bit;
	sent_bad_icrc++;
}

static const uint8_t valid_ops[] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
	0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16,
	0x17, 0x1c, 0x1d, 0x64, 0x65,
};

static size_t pick_payload(void)
{
	static const size_t l[] = { 0, 1, 3, 4, MTU - 1, MTU, MTU + 1, 1400 };

	return below(2) ? l[below(ARRAY_SIZE(l))] : below(1400);
}

static struct target *pick_target(void)
{
	return &tg[below(ntg)];
}

/*
 * Every opcode to a QP of each kind and state, then every truncation of
 * each valid opcode to the target QPs, however long it takes (some 3500
 * packets).
 */
static void systematic(void)
{
	double t0 = now_s();
	struct target *t;
	size_t iblen, cut;
	int i, op, k;

	for (i = 0; i < ntg; i++) {
		if (i && tg[i].kind == tg[i - 1].kind && tg[i].kind != K_STATE)
			continue;	/* one protected and one target pair */
		for (op = 0; op < 256; op++) {
			sniff();
			iblen = craft(&tg[i], op, below(2) ? 8 : MTU,
				      tg[i].kind == K_PROT);
			emit(iblen);
		}
	}
	for (k = 0; k < (int)ARRAY_SIZE(valid_ops); k++) {
		t = &tg[N_PROT + below(ntg - N_PROT)];
		iblen = craft(t, valid_ops[k], 8, false);
		for (cut = 0; cut < iblen; cut++) {
			sniff();
			/* a truncated packet, its ICRC recomputed over what is left */
			put16(pkt + 2, 28 + cut);
			put16(pkt + 24, 8 + cut);
			if (cut >= 16)
				icrc_put(pkt, cut);
			send_pkt(28 + cut);
		}
	}
	ktap_diag("systematic part: %lu packets in %.1f s", sent, now_s() - t0);
}

/* A mutated replay of captured traffic to the target QPs. */
static void replay_one(void)
{
	size_t n, iblen;
	int c = below(ncap), k, flips;
	struct target *t;

	n = cap_len[c];
	memcpy(pkt, cap[c], n);
	pkt[1] = INJ_TOS;
	flips = below(4);
	for (k = 0; k < flips; k++)
		pkt[28 + below(n - 28)] ^= 1 << below(8);
	if (!below(4))
		n = 28 + below(n - 28 + 1);
	iblen = n - 28;
	put16(pkt + 2, n);
	put16(pkt + 24, 8 + iblen);
	if (iblen >= 16 && below(2))
		icrc_put(pkt, iblen);
	/* a flip into a protected QPN must not reach it as valid */
	t = iblen >= 12 ? by_qpn(get24(pkt + 28 + 5), false) : NULL;
	if (t && t->kind == K_PROT && iblen >= 16)
		pkt[n - 1] ^= 0x80;
	for (k = below(8) ? 1 : 2 + below(30); k > 0; k--)
		send_pkt(n);
}

/* A class of its own (boundary.c, mismatch.c) to the victim's QPs of it. */
static int inject_class(const char *info, const char *cls, double t_end)
{
	struct sw_shm *sh = sw_map(info);
	double t0 = now_s();

	while (sh->magic != SW_MAGIC && now_s() - t0 < 10)
		usleep(10000);
	__sync_synchronize();
	if (sh->magic != SW_MAGIC || sh->n != SW_QPS)
		fatal("the victim's shared file describes its class's QPs");
	if (!strcmp(cls, "boundary"))
		boundary(sh, t_end);
	else
		mismatch_class(sh, t_end);
	ktap_diag("%lu packets sent", sent);
	result(sent > 0, "crafted packets sent", "none could be sent");
	return exit_status();
}

int inject(int argc, char **argv)
{
	uint64_t seed = 0;
	double secs = 10, t_end;
	bool replay = false;
	struct target *t;
	size_t iblen;
	int i, k, storm;
	uint8_t op;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--secs") && i + 1 < argc)
			secs = atof(argv[++i]);
		else
			break;
	}
	if (argc - i < 4) {
		fprintf(stderr, "inject --seed N --secs S INFO IFNAME DST SRC [replay|boundary|mismatch]\n");
		return 2;
	}
	replay = argc - i > 4 && !strcmp(argv[i + 4], "replay");
	rng_state = seed;
	printf("# seed=%llu\n", (unsigned long long)seed);
	read_info(argv[i]);
	dst_ip = ntohl(inet_addr(argv[i + 2]));
	src_ip = ntohl(inet_addr(argv[i + 3]));
	if (ntg < N_PAIRS)
		fatal("the info file names the victim's QPs");
	raw_fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	if (raw_fd < 0)
		fatal("raw IPv4 socket");
	cap_fd = packet_socket(argv[i + 1]);
	t_end = now_s() + secs;
	if (argc - i > 4 && (!strcmp(argv[i + 4], "boundary") ||
			     !strcmp(argv[i + 4], "mismatch")))
		return inject_class(argv[i], argv[i + 4], t_end);
	if (replay) {
		/* the real traffic first: what is replayed */
		while (ncap < MAX_CAP && now_s() < t_end - secs / 2) {
			sniff();
			usleep(2000);
		}
		ktap_diag("%d frames captured for replay", ncap);
	} else {
		systematic();
	}
	while (now_s() < t_end) {
		sniff();
		if (replay && ncap && below(10) < 7) {
			replay_one();
			continue;
		}
		t = pick_target();
		op = below(8) ? valid_ops[below(ARRAY_SIZE(valid_ops))] :
				(uint8_t)rnd();
		iblen = craft(t, op, pick_payload(), t->kind == K_PROT);
		storm = below(25) ? 1 : 20 + below(100);
		for (k = 0; k < storm; k++)
			emit(iblen);
	}
	ktap_diag("%lu packets sent, %lu with a wrong ICRC, %lu from a random source",
		  sent, sent_bad_icrc, sent_src_random);
	result(sent > 0, replay ? "mutated replays of real traffic sent" :
	       "crafted packets sent", "none could be sent");
	return exit_status();
}
