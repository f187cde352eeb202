/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the parts of vhca_rdma (tests/progs/vhca_rdma.c, the program's
 * comment, its tests and main(); this directory, one file a concern) share.
 */
#ifndef VHCA_RDMA_H
#define VHCA_RDMA_H

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "vhca_test.h"

#define PORT		1
#define PAGE		4096u
#define MIB		(1u << 20)
#define CANARY		0xa5
#define WC_WAIT_MS	120000	/* a completion that should come (slow debug kernels) */
#define QUIET_MS	1000	/* a completion that should not come */
#define CTL_WAIT_MS	120000	/* a control message */

#define RBUF_SIZE	(2 * MIB + 64 * 1024)
#define RW_OFF		64u
#define RW_LEN		(MIB + 1000u)
#define WBUF_SIZE	(RW_OFF + RW_LEN + PAGE)
#define RD_LEN		(512u * 1024 + 333)
#define NOWR_LEN	PAGE
#define CBUF_SIZE	(4 * MIB)

#define SEED_RD		0x5eed0001u

/* A setup failure: nothing further can be tested. */
void __attribute__((noreturn)) fatal(const char *what, int err);

/* A piece of a message: @len bytes at @off of some buffer. */
struct span {
	uint32_t off, len;
};

/* ---- control channel: fixed records, big-endian on the wire ---- */

enum ctl_type { CTL_TEST = 1, CTL_INFO, CTL_READY, CTL_DONE, CTL_QUIT };
enum { MR_RW, MR_RD, MR_NOWR, NUM_RMR };

struct ctl {
	uint32_t type, arg, qpn, psn;
	union ibv_gid gid;
	uint64_t addr[NUM_RMR];
	uint32_t rkey[NUM_RMR], len[NUM_RMR];
};

/* ---- device, sessions (one CQ and RC QP per test) ---- */

struct env {
	bool server;
	int fd;				/* the control connection */
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_port_attr port;
	union ibv_gid gid;
	int gid_index;

	/* client */
	uint8_t *cbuf;
	struct ibv_mr *cmr;

	/* server */
	uint8_t *rbuf, *wbuf, *rdbuf, *nwbuf;
	struct ibv_mr *rmr, *mr[NUM_RMR];
};

struct session {
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint32_t psn;
	struct ctl peer;		/* the peer's INFO */
};

struct test {
	const char *name;
	void (*client)(struct env *e, struct session *s);
	void (*server_prep)(struct env *e, struct session *s);
	void (*server_check)(struct env *e, struct session *s);
};

/* the data pattern and the spans (pattern.c) */
void fill_spans(uint8_t *buf, const struct span *sp, int n,
		uint32_t seed, uint64_t first);
void make_sges(struct ibv_sge *sge, const uint8_t *buf, uint32_t lkey,
	       const struct span *sp, int n);
bool check_region(const uint8_t *buf, size_t size,
		  const struct span *sp, int n, uint32_t seed,
		  uint64_t first, uint32_t len, char *msg,
		  size_t msize);
void verify(const char *what, const uint8_t *buf, size_t size,
	    const struct span *sp, int n, uint32_t seed, uint64_t first,
	    uint32_t len);

/* the control channel (ctl.c) */
void send_ctl(int fd, const struct ctl *c);
bool recv_ctl(int fd, struct ctl *c, uint32_t want, bool eof_ok);
void send_simple(int fd, uint32_t type, uint32_t arg);

/* sessions, posts and completions (session.c) */
void session_open(struct env *e, struct session *s);
void session_connect(struct env *e, struct session *s);
void session_info(const struct env *e, const struct session *s,
		  struct ctl *c);
void session_close(struct session *s);
int wait_wc(struct session *s, struct ibv_wc *wc, int n, int ms);
const char *opcode_str(enum ibv_wc_opcode op);
void describe_wc(const struct ibv_wc *wc, char *msg, size_t size);
bool expect_wc(struct session *s, const char *what, uint64_t wr_id,
	       enum ibv_wc_status status, enum ibv_wc_opcode op,
	       long long len);
void expect_no_success(struct session *s, const char *what);
bool post_send(struct session *s, const char *what, uint64_t wr_id,
	       enum ibv_wr_opcode op, struct ibv_sge *sge, int nsge,
	       uint32_t imm, uint64_t raddr, uint32_t rkey);
void post_recv(struct session *s, uint64_t wr_id, struct ibv_sge *sge,
	       int nsge);
void post_recv1(struct env *e, struct session *s, uint64_t wr_id,
		uint32_t off, uint32_t len);

/* the data tests (data.c) */
void sge_server_prep(struct env *e, struct session *s);
void sge_server_check(struct env *e, struct session *s);
void sge_client(struct env *e, struct session *s);
void imm_server_prep(struct env *e, struct session *s);
void imm_server_check(struct env *e, struct session *s);
void imm_client(struct env *e, struct session *s);
void send1m_server_prep(struct env *e, struct session *s);
void send1m_server_check(struct env *e, struct session *s);
void send1m_client(struct env *e, struct session *s);
void write1m_server_prep(struct env *e, struct session *s);
void write1m_server_check(struct env *e, struct session *s);
void write1m_client(struct env *e, struct session *s);
void wimm_server_prep(struct env *e, struct session *s);
void wimm_server_check(struct env *e, struct session *s);
void wimm_client(struct env *e, struct session *s);
void read_server_check(struct env *e, struct session *s);
void read_client(struct env *e, struct session *s);

/* the access violations (errors.c) */
void noperm_client(struct env *e, struct session *s);
void noperm_server_check(struct env *e, struct session *s);
void wbuf_server_check(struct env *e, struct session *s);
void wrkey_client(struct env *e, struct session *s);
void wrkey2_client(struct env *e, struct session *s);
void rrkey_client(struct env *e, struct session *s);
void woob_client(struct env *e, struct session *s);
void woob_server_check(struct env *e, struct session *s);
void roob_client(struct env *e, struct session *s);
void recv256_server_prep(struct env *e, struct session *s);
void lkey_client(struct env *e, struct session *s);
void lkey_server_check(struct env *e, struct session *s);
void len_server_prep(struct env *e, struct session *s);
void len_server_check(struct env *e, struct session *s);
void len_client(struct env *e, struct session *s);

#endif
