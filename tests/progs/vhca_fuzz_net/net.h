/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the parts of vhca_fuzz_net (tests/progs/vhca_fuzz_net.c, the
 * program's comment and main(); this directory, one file a concern) share.
 */
#ifndef VHCA_FUZZ_NET_H
#define VHCA_FUZZ_NET_H

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "vhca_test.h"

/*
 * fuzz_rng.h keeps its state in a static, one per file: here every file's
 * rng_state is the program's one stream, net_rng_stream (the main file),
 * so that a seed replays the same choices whichever file makes them.
 */
extern uint64_t net_rng_stream;
#define rng_state (*net_rng)
#include "fuzz_rng.h"
static uint64_t *net_rng = &net_rng_stream;

#include "roce.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define ROCE_PORT	4791
#define MTU		1024
#define PAGE		4096
#define REGION		32768		/* an MR: recv | send | write | read */
#define SLOT		8192
#define MAX_MSG		4096
#define N_PROT		2
#define N_TARG		2
#define N_PAIRS		(N_PROT + N_TARG)
#define UD_RECVS	32
#define UD_QKEY		0x11111111u
#define GUARD_BYTE	0xa5
#define INJ_TOS		0x04		/* marks injected packets for the sniffer */
#define MAX_CAP		256

double now_s(void);
void __attribute__((noreturn)) fatal(const char *what);

static inline void put16(uint8_t *p, uint32_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static inline void put24(uint8_t *p, uint32_t v)
{
	p[0] = v >> 16;
	p[1] = v >> 8;
	p[2] = v;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static inline void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

static inline uint32_t get24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | p[1] << 8 | p[2];
}

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

/* ---- the wire (wire.c) */

bool icrc_ok(const uint8_t *ip, size_t iblen);
void icrc_put(uint8_t *ip, size_t iblen);
const uint8_t *roce_of(const uint8_t *f, size_t n, size_t *iblen);
int packet_socket(const char *ifname);

/* ---- the victim's verbs objects and transfers (verbs.c) */

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	union ibv_gid gid;
	int gid_index;
};

struct qpx {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	uint8_t *map;			/* guard page, REGION, guard page */
	uint8_t *buf;			/* the MR's REGION */
	struct ibv_mr *mr;
	uint32_t psn;			/* its sq_psn */
};

struct pair {
	struct qpx a, b;		/* a on the victim port, b its peer */
	bool prot, broken;
	unsigned int seq, rounds;
};

extern struct end e0, e1;
extern double wait_s;
extern char why[256];

uint8_t *guarded(size_t len);
bool guards_intact(const uint8_t *m, size_t len);
void end_open(struct end *e, const char *name, int gid_index);
void qpx_create(struct qpx *q, struct end *e, enum ibv_qp_type type);
void qpx_destroy(struct qpx *q);
int to_init(struct ibv_qp *qp, bool ud);
int to_rtr(struct ibv_qp *qp, struct end *remote, struct end *local,
	   uint32_t dqpn, uint32_t rq_psn);
int to_rts(struct ibv_qp *qp, uint32_t sq_psn);
void pair_connect(struct pair *p);
uint8_t pat(unsigned int id, unsigned int seq, int dir, size_t i);
void fill(uint8_t *p, size_t n, unsigned int id, unsigned int seq, int dir);
long mismatch(const uint8_t *p, size_t n, unsigned int id,
	      unsigned int seq, int dir);
bool wait_wc(struct qpx *q, uint64_t wr_id, struct ibv_wc *out);
int post(struct qpx *q, enum ibv_wr_opcode op, uint64_t wr_id,
	 size_t off, size_t len, uint64_t raddr, uint32_t rkey);
int post_recv(struct qpx *q, uint64_t wr_id, size_t off, size_t len);
bool xfer_send(struct qpx *s, struct qpx *r, unsigned int id,
	       unsigned int seq, int dir, size_t len);
bool xfer_rdma(struct qpx *s, struct qpx *r, unsigned int id,
	       unsigned int seq, int dir, size_t len, bool read);
bool pair_round(struct pair *p, unsigned int id);

/* ---- the victim (victim.c), netem (netem.c) */

extern struct pair pairs[N_PAIRS];

void setup(char **argv);
bool stop_now(const char *stop, double t_end);
void traffic(const char *stop, double secs, bool ud);
int victim(char **argv);
int netem(char **argv);

/* ---- the injector (inject.c) */

enum kind { K_PROT, K_TARG, K_UD, K_STATE, K_RO };

struct target {
	enum kind kind;
	uint32_t qpn, peer, rq_psn, sq_psn, rkey, len;
	uint64_t va;
	uint32_t in_psn, out_psn;	/* learnt: last request to it, from it */
};

extern uint32_t dst_ip, src_ip;
extern int raw_fd, cap_fd;
extern unsigned long sent;
extern uint8_t pkt[1600];

bool is_response(uint8_t op);
void ip_udp(uint32_t src, size_t iblen);
void send_pkt(size_t tot);
size_t ext_len(uint8_t op, bool *reth, bool *aeth, bool *imm, bool *deth,
	       bool *atom);
int inject(int argc, char **argv);

/*
 * ---- the boundary and mismatch classes: the victim's QPs for them
 * (sweep.c) and what the injector sends them (boundary.c, mismatch.c)
 *
 * The victim shares with the injector a file (INFO.shm) that both map:
 * each QP of the class, its key, its state and the completions it saw,
 * so that the injector can tell how the victim took each packet.
 */
#define SW_QPS		3
#define SW_REGION	65536		/* RDMA half, then the receive half */
#define SW_RECV		2048		/* a receive WQE's buffer */
#define SW_RECVS	16
#define SW_CANARY	4096		/* the RDMA half's bytes past here */
#define SW_PEER		0xfffe00	/* + index: the fake peers' QPNs */
#define SW_RQ_PSN	0x100		/* every bring-up's receive PSN */

enum sw_kind { SW_SEND, SW_WRITE, SW_READ, SW_CAS, SW_FAA, SW_KINDS };

struct sw_qp {
	uint32_t qpn, peer, type, rkey;	/* type: IBV_QPT_RC, UC or UD */
	uint64_t va;			/* the RDMA half */
	volatile uint32_t gen;		/* bring-ups so far */
	volatile uint32_t ready;	/* in RTS, receives posted */
	volatile uint32_t ncomp, last_status;
	/* mismatch: the WQE outstanding, the answers sent to it */
	volatile uint32_t cur_first, cur_last, cur_kind, cur_len;
	volatile uint32_t ans_mask;
};

struct sw_shm {
	uint32_t magic, mode, n;
	struct sw_qp q[SW_QPS];
};

#define SW_MAGIC	0x76686361u
#define MODE_BOUNDARY	1
#define MODE_MISMATCH	2

extern const char * const sw_kind_name[SW_KINDS];

/* The mismatch class's answers (mismatch.c), a bit each in ans_mask. */
enum mm {
	MM_ACK_DUP, MM_ACK_AHEAD, MM_ACK_FAR, MM_READ_RESP_TO, MM_ATOM_ACK_TO,
	MM_ACK_TO, MM_READ_SHORT, MM_READ_LONG, MM_READ_ONLY_MULTI,
	MM_READ_MIDDLE_FIRST, MM_READ_LAST_EARLY, MM_READ_DUP, MM_READ_AHEAD,
	MM_ATOM_DUP, MM_N
};

extern const char * const mm_name[MM_N];

void sw_setup(int mode, const char *info);
void sw_run(const char *stop, double secs);
bool sw_verdict(void);
void sw_teardown(void);
struct sw_shm *sw_map(const char *info);
void boundary(struct sw_shm *sh, double t_end);
void mismatch_class(struct sw_shm *sh, double t_end);

#endif /* VHCA_FUZZ_NET_H */
