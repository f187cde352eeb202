// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* vhca_rdma: access violations, each on a fresh QP pair. */
#include "rdma.h"

#define SEED_ERR	901
#define ERR_LEN		64u

/* Posts one operation of ERR_LEN bytes and expects @status. */
static void violate(struct env *e, struct session *s, const char *what,
		    enum ibv_wr_opcode op, uint32_t lkey, uint32_t len,
		    uint64_t raddr, uint32_t rkey, enum ibv_wc_status status)
{
	static const struct span sp = { 0, 256 };
	struct ibv_sge sge = { (uintptr_t)e->cbuf, len, lkey };

	if (op == IBV_WR_RDMA_READ)
		memset(e->cbuf, CANARY, PAGE);
	else
		fill_spans(e->cbuf, &sp, 1, SEED_ERR, 0);
	if (post_send(s, what, 1, op, &sge, 1, 0, raddr, rkey))
		expect_wc(s, what, 1, status, IBV_WC_SEND, -1);
	if (op == IBV_WR_RDMA_READ)
		verify("... and the local buffer is untouched", e->cbuf, PAGE,
		       &sp, 1, SEED_ERR, 0, 0);
}

void noperm_client(struct env *e, struct session *s)
{
	violate(e, s, "err-write-noperm: WRITE into an MR without "
		"REMOTE_WRITE (LOCAL_WRITE | REMOTE_READ): REM_ACCESS_ERR",
		IBV_WR_RDMA_WRITE, e->cmr->lkey, ERR_LEN,
		s->peer.addr[MR_NOWR], s->peer.rkey[MR_NOWR],
		IBV_WC_REM_ACCESS_ERR);
}

void noperm_server_check(struct env *e, struct session *s)
{
	static const struct span none = { 0, 0 };

	(void)s;
	verify("err-write-noperm: the MR without REMOTE_WRITE is unchanged",
	       e->nwbuf, NOWR_LEN, &none, 1, 0, 0, 0);
}

/* The server's buffers untouched: MR_RW and its surroundings. */
void wbuf_server_check(struct env *e, struct session *s)
{
	static const struct span none = { 0, 0 };

	(void)s;
	verify("the REMOTE_WRITE MR and the bytes around it are unchanged",
	       e->wbuf, WBUF_SIZE, &none, 1, 0, 0, 0);
}

void wrkey_client(struct env *e, struct session *s)
{
	violate(e, s, "err-write-rkey: WRITE with a wrong rkey (the MR's "
		"with its key byte changed): REM_ACCESS_ERR",
		IBV_WR_RDMA_WRITE, e->cmr->lkey, ERR_LEN,
		s->peer.addr[MR_RW], s->peer.rkey[MR_RW] ^ 0x80,
		IBV_WC_REM_ACCESS_ERR);
}

void wrkey2_client(struct env *e, struct session *s)
{
	violate(e, s, "err-write-rkey2: WRITE with an rkey of no MR: "
		"REM_ACCESS_ERR", IBV_WR_RDMA_WRITE, e->cmr->lkey, ERR_LEN,
		s->peer.addr[MR_RW], s->peer.rkey[MR_RW] ^ 0x7fff00,
		IBV_WC_REM_ACCESS_ERR);
}

void rrkey_client(struct env *e, struct session *s)
{
	violate(e, s, "err-read-rkey: READ with a wrong rkey (the MR's with "
		"its key byte changed): REM_ACCESS_ERR", IBV_WR_RDMA_READ,
		e->cmr->lkey, ERR_LEN, s->peer.addr[MR_RD],
		s->peer.rkey[MR_RD] ^ 0x80, IBV_WC_REM_ACCESS_ERR);
}

void woob_client(struct env *e, struct session *s)
{
	violate(e, s, "err-write-oob: WRITE of 16 bytes ending one byte past "
		"the MR's end: REM_ACCESS_ERR", IBV_WR_RDMA_WRITE,
		e->cmr->lkey, 16, s->peer.addr[MR_RW] + s->peer.len[MR_RW] - 15,
		s->peer.rkey[MR_RW], IBV_WC_REM_ACCESS_ERR);
}

void woob_server_check(struct env *e, struct session *s)
{
	uint8_t past = e->wbuf[RW_OFF + RW_LEN];
	size_t i, inside = 0;

	(void)s;
	result(past == CANARY, "err-write-oob: the byte past the MR's end is "
	       "untouched", "%#04x, was %#04x", past, CANARY);
	for (i = RW_OFF + RW_LEN - 15; i < RW_OFF + RW_LEN; i++)
		inside += e->wbuf[i] != CANARY;
	ktap_diag("err-write-oob: %zu of the 15 bytes inside the MR were "
		  "written", inside);
}

void roob_client(struct env *e, struct session *s)
{
	violate(e, s, "err-read-oob: READ of 16 bytes ending one byte past "
		"the MR's end: REM_ACCESS_ERR", IBV_WR_RDMA_READ,
		e->cmr->lkey, 16, s->peer.addr[MR_RD] + s->peer.len[MR_RD] - 15,
		s->peer.rkey[MR_RD], IBV_WC_REM_ACCESS_ERR);
}

void recv256_server_prep(struct env *e, struct session *s)
{
	post_recv1(e, s, 1, 0, 256);
}

void lkey_client(struct env *e, struct session *s)
{
	violate(e, s, "err-lkey: SEND from an SGE with a wrong lkey: "
		"LOC_PROT_ERR on the sender", IBV_WR_SEND, e->cmr->lkey ^ 0x80,
		ERR_LEN, 0, 0, IBV_WC_LOC_PROT_ERR);
}

void lkey_server_check(struct env *e, struct session *s)
{
	static const struct span none = { 0, 0 };

	expect_no_success(s, "err-lkey: no receive completes successfully");
	verify("err-lkey: the receive buffer is untouched", e->rbuf, PAGE,
	       &none, 1, 0, 0, 0);
}

#define LEN_RECV	100u
#define LEN_SEND	200u

void len_server_prep(struct env *e, struct session *s)
{
	post_recv1(e, s, 1, 0, LEN_RECV);
}

void len_server_check(struct env *e, struct session *s)
{
	static const struct span none = { 0, 0 };
	char msg[200];

	expect_wc(s, "err-len: SEND of 200 bytes into a receive of 100: "
		  "LOC_LEN_ERR on the receiver", 1, IBV_WC_LOC_LEN_ERR,
		  IBV_WC_RECV, -1);
	/* The 100 bytes inside may hold the message's start; nothing past. */
	result(check_region(e->rbuf + LEN_RECV, PAGE - LEN_RECV, &none, 1, 0,
			    0, 0, msg, sizeof(msg)),
	       "err-len: nothing written past the receive buffer", "%s", msg);
}

void len_client(struct env *e, struct session *s)
{
	violate(e, s, "err-len: SEND of 200 bytes into a receive of 100: "
		"REM_INV_REQ_ERR on the sender", IBV_WR_SEND, e->cmr->lkey,
		LEN_SEND, 0, 0, IBV_WC_REM_INV_REQ_ERR);
}
