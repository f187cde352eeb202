// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* vhca_rdma: the data tests, every byte verified. */
#include "rdma.h"

/*
 * The receive of test "sge": 4 SGEs out of address order, the first three
 * crossing page boundaries, in a region of SGE_REGION bytes of rbuf.
 */
#define SGE_REGION	(64u * 1024)
static const struct span sge_recv[] = {
	{ 3 * PAGE - 50, 100 }, { 1, PAGE + 7 }, { 20000, 1 },
	{ 6 * PAGE - 2000, 10000 },
};
#define SGE_FULL	(100u + PAGE + 7 + 1 + 10000)
#define SGE_SHORT	(SGE_FULL - 5000)
/* The sends gather from the client's buffer. */
static const struct span sge_send_full[] = {
	{ 100, 5000 }, { 8000, 1 }, { 3 * PAGE - 7, SGE_FULL - 5001 },
};
static const struct span sge_send_short[] = {
	{ 40000, PAGE }, { 50000, SGE_SHORT - PAGE },
};
#define SEED_SGE1	101
#define SEED_SGE2	102

void sge_server_prep(struct env *e, struct session *s)
{
	struct ibv_sge sge[4];
	int i;

	for (i = 0; i < 2; i++) {
		make_sges(sge, e->rbuf + i * SGE_REGION, e->rmr->lkey,
			  sge_recv, 4);
		post_recv(s, i + 1, sge, 4);
	}
}

void sge_server_check(struct env *e, struct session *s)
{
	expect_wc(s, "sge: receive into 4 SGEs, message fills them exactly: "
		  "RECV, byte_len 14204", 1, IBV_WC_SUCCESS, IBV_WC_RECV,
		  SGE_FULL);
	verify("sge: full message: every byte in its SGE, in order; "
	       "nothing else touched", e->rbuf, SGE_REGION, sge_recv, 4,
	       SEED_SGE1, 0, SGE_FULL);
	expect_wc(s, "sge: receive into 4 SGEs, shorter message: RECV, "
		  "byte_len 9204", 2, IBV_WC_SUCCESS, IBV_WC_RECV, SGE_SHORT);
	verify("sge: short message: every byte in its SGE, in order; the "
	       "rest untouched", e->rbuf + SGE_REGION, SGE_REGION, sge_recv,
	       4, SEED_SGE2, 0, SGE_SHORT);
}

void sge_client(struct env *e, struct session *s)
{
	struct ibv_sge full[3], shrt[2];

	fill_spans(e->cbuf, sge_send_full, 3, SEED_SGE1, 0);
	fill_spans(e->cbuf, sge_send_short, 2, SEED_SGE2, 0);
	make_sges(full, e->cbuf, e->cmr->lkey, sge_send_full, 3);
	make_sges(shrt, e->cbuf, e->cmr->lkey, sge_send_short, 2);
	if (post_send(s, "sge: post SEND of 14204 bytes from 3 SGEs", 1,
		      IBV_WR_SEND, full, 3, 0, 0, 0))
		expect_wc(s, "sge: SEND of 14204 bytes gathered from 3 SGEs "
			  "completes", 1, IBV_WC_SUCCESS, IBV_WC_SEND, -1);
	if (post_send(s, "sge: post SEND of 9204 bytes from 2 SGEs", 2,
		      IBV_WR_SEND, shrt, 2, 0, 0, 0))
		expect_wc(s, "sge: SEND of 9204 bytes gathered from 2 SGEs "
			  "completes", 2, IBV_WC_SUCCESS, IBV_WC_SEND, -1);
}

#define IMM1		0xc0ffee01u
#define IMM2		0x80000002u
#define IMM_LEN		200u
#define SEED_IMM	201

/* Waits for a receive with immediate data and checks all its fields. */
static void expect_imm(struct session *s, const char *what, uint64_t wr_id,
		       enum ibv_wc_opcode op, uint32_t imm, uint32_t len)
{
	struct ibv_wc wc;
	char msg[200];

	if (wait_wc(s, &wc, 1, WC_WAIT_MS) != 1) {
		result(false, what, "no completion in %d s", WC_WAIT_MS / 1000);
		return;
	}
	describe_wc(&wc, msg, sizeof(msg));
	result(wc.wr_id == wr_id && wc.status == IBV_WC_SUCCESS &&
	       wc.opcode == op && (wc.wc_flags & IBV_WC_WITH_IMM) &&
	       wc.imm_data == htobe32(imm) && wc.byte_len == len, what,
	       "%s; expected wr_id %llu, %s, %s, IBV_WC_WITH_IMM, imm_data "
	       "%#x, byte_len %u", msg, (unsigned long long)wr_id,
	       ibv_wc_status_str(IBV_WC_SUCCESS), opcode_str(op), imm, len);
}

void imm_server_prep(struct env *e, struct session *s)
{
	post_recv1(e, s, 1, 0, 256);
	post_recv1(e, s, 2, PAGE, 256);
}

void imm_server_check(struct env *e, struct session *s)
{
	static const struct span one = { 0, 256 };

	expect_imm(s, "imm: SEND_WITH_IMM of 200 bytes: RECV, WITH_IMM, "
		   "imm_data, byte_len", 1, IBV_WC_RECV, IMM1, IMM_LEN);
	verify("imm: the 200 bytes received", e->rbuf, PAGE, &one, 1,
	       SEED_IMM, 0, IMM_LEN);
	expect_imm(s, "imm: SEND_WITH_IMM of 0 bytes: RECV, WITH_IMM, "
		   "imm_data, byte_len 0", 2, IBV_WC_RECV, IMM2, 0);
	verify("imm: 0 bytes: the receive buffer untouched", e->rbuf + PAGE,
	       PAGE, &one, 1, SEED_IMM, 0, 0);
}

void imm_client(struct env *e, struct session *s)
{
	static const struct span sp = { 7, IMM_LEN };
	struct ibv_sge sge;

	fill_spans(e->cbuf, &sp, 1, SEED_IMM, 0);
	make_sges(&sge, e->cbuf, e->cmr->lkey, &sp, 1);
	if (post_send(s, "imm: post SEND_WITH_IMM", 1, IBV_WR_SEND_WITH_IMM,
		      &sge, 1, IMM1, 0, 0))
		expect_wc(s, "imm: SEND_WITH_IMM of 200 bytes completes", 1,
			  IBV_WC_SUCCESS, IBV_WC_SEND, -1);
	if (post_send(s, "imm: post SEND_WITH_IMM of 0 bytes", 2,
		      IBV_WR_SEND_WITH_IMM, NULL, 0, IMM2, 0, 0))
		expect_wc(s, "imm: SEND_WITH_IMM of 0 bytes completes", 2,
			  IBV_WC_SUCCESS, IBV_WC_SEND, -1);
}

/* 1 MiB SEND into one SGE at an odd offset of rbuf. */
#define BIG_RECV_OFF	(PAGE + 5)
#define SEED_BIG_SEND	301

void send1m_server_prep(struct env *e, struct session *s)
{
	post_recv1(e, s, 1, BIG_RECV_OFF, MIB);
}

void send1m_server_check(struct env *e, struct session *s)
{
	static const struct span sp = { BIG_RECV_OFF, MIB };

	expect_wc(s, "send-1m: receive of a 1 MiB SEND: RECV, byte_len "
		  "1048576", 1, IBV_WC_SUCCESS, IBV_WC_RECV, MIB);
	verify("send-1m: 1 MiB received, byte by byte, nothing else touched",
	       e->rbuf, RBUF_SIZE, &sp, 1, SEED_BIG_SEND, 0, MIB);
}

void send1m_client(struct env *e, struct session *s)
{
	static const struct span sp = { 3, MIB };
	struct ibv_sge sge;

	fill_spans(e->cbuf, &sp, 1, SEED_BIG_SEND, 0);
	make_sges(&sge, e->cbuf, e->cmr->lkey, &sp, 1);
	if (post_send(s, "send-1m: post SEND of 1 MiB", 1, IBV_WR_SEND, &sge,
		      1, 0, 0, 0))
		expect_wc(s, "send-1m: SEND of 1 MiB completes", 1,
			  IBV_WC_SUCCESS, IBV_WC_SEND, -1);
}

/* 1 MiB RDMA WRITE to the start of MR_RW, then a SEND to say so. */
#define SEED_BIG_WRITE	401
#define SEED_NOTE	402
#define NOTE_LEN	8u

void write1m_server_prep(struct env *e, struct session *s)
{
	post_recv1(e, s, 1, 0, 64);
}

void write1m_server_check(struct env *e, struct session *s)
{
	static const struct span sp = { RW_OFF, MIB }, note = { 0, 64 };

	expect_wc(s, "write-1m: the notification SEND after the WRITE "
		  "arrives", 1, IBV_WC_SUCCESS, IBV_WC_RECV, NOTE_LEN);
	verify("write-1m: the notification's bytes", e->rbuf, 64, &note, 1,
	       SEED_NOTE, 0, NOTE_LEN);
	verify("write-1m: 1 MiB written into the REMOTE_WRITE MR, byte by "
	       "byte, nothing else touched", e->wbuf, WBUF_SIZE, &sp, 1,
	       SEED_BIG_WRITE, 0, MIB);
}

void write1m_client(struct env *e, struct session *s)
{
	static const struct span sp = { 11, MIB }, note = { 2 * MIB, NOTE_LEN };
	struct ibv_sge sge, nsge;

	fill_spans(e->cbuf, &sp, 1, SEED_BIG_WRITE, 0);
	fill_spans(e->cbuf, &note, 1, SEED_NOTE, 0);
	make_sges(&sge, e->cbuf, e->cmr->lkey, &sp, 1);
	make_sges(&nsge, e->cbuf, e->cmr->lkey, &note, 1);
	if (post_send(s, "write-1m: post RDMA WRITE of 1 MiB", 1,
		      IBV_WR_RDMA_WRITE, &sge, 1, 0, s->peer.addr[MR_RW],
		      s->peer.rkey[MR_RW]) &&
	    post_send(s, "write-1m: post the notification SEND", 2,
		      IBV_WR_SEND, &nsge, 1, 0, 0, 0)) {
		expect_wc(s, "write-1m: RDMA WRITE of 1 MiB completes", 1,
			  IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1);
		expect_wc(s, "write-1m: the notification SEND completes", 2,
			  IBV_WC_SUCCESS, IBV_WC_SEND, -1);
	}
}

/* RDMA WRITE_WITH_IMM at an odd offset of MR_RW: consumes a receive. */
#define WIMM_OFF	4093u
#define WIMM_LEN	(64u * 1024 + 123)
#define WIMM_IMM	0x5eed0003u
#define SEED_WIMM	501

void wimm_server_prep(struct env *e, struct session *s)
{
	post_recv1(e, s, 1, 0, 16);
}

void wimm_server_check(struct env *e, struct session *s)
{
	static const struct span sp = { RW_OFF + WIMM_OFF, WIMM_LEN },
		rsp = { 0, 16 };

	expect_imm(s, "write-imm: RDMA_WRITE_WITH_IMM: RECV_RDMA_WITH_IMM, "
		   "WITH_IMM, imm_data, byte_len = the write's length", 1,
		   IBV_WC_RECV_RDMA_WITH_IMM, WIMM_IMM, WIMM_LEN);
	verify("write-imm: 65659 bytes written at offset 4093 of the "
	       "REMOTE_WRITE MR, nothing else touched", e->wbuf, WBUF_SIZE,
	       &sp, 1, SEED_WIMM, 0, WIMM_LEN);
	verify("write-imm: the consumed receive's buffer untouched", e->rbuf,
	       PAGE, &rsp, 1, SEED_WIMM, 0, 0);
}

void wimm_client(struct env *e, struct session *s)
{
	static const struct span sp = { 999, WIMM_LEN };
	struct ibv_sge sge;

	fill_spans(e->cbuf, &sp, 1, SEED_WIMM, 0);
	make_sges(&sge, e->cbuf, e->cmr->lkey, &sp, 1);
	if (post_send(s, "write-imm: post RDMA_WRITE_WITH_IMM", 1,
		      IBV_WR_RDMA_WRITE_WITH_IMM, &sge, 1, WIMM_IMM,
		      s->peer.addr[MR_RW] + WIMM_OFF, s->peer.rkey[MR_RW]))
		expect_wc(s, "write-imm: RDMA_WRITE_WITH_IMM completes", 1,
			  IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE, -1);
}

/* RDMA READ of all of MR_RD into 4 SGEs, and a part into one. */
#define READ_REGION	MIB
static const struct span read_sges[] = {
	{ 300000, 1000 }, { PAGE - 10, 200000 }, { 250000, 7 },
	{ 400000, RD_LEN - 201007 },
};
#define READ2_OFF	777u
#define READ2_LEN	5000u

void read_server_check(struct env *e, struct session *s)
{
	static const struct span sp = { 0, RD_LEN };

	(void)s;
	verify("read: the REMOTE_READ MR is unchanged", e->rdbuf, RD_LEN, &sp,
	       1, SEED_RD, 0, RD_LEN);
}

void read_client(struct env *e, struct session *s)
{
	static const struct span sp2 = { 7, READ2_LEN };
	uint8_t *b2 = e->cbuf + READ_REGION;
	struct ibv_sge sge[4], sge2;

	memset(e->cbuf, CANARY, READ_REGION + PAGE * 4);
	make_sges(sge, e->cbuf, e->cmr->lkey, read_sges, 4);
	make_sges(&sge2, b2, e->cmr->lkey, &sp2, 1);
	if (post_send(s, "read: post RDMA READ of the whole MR", 1,
		      IBV_WR_RDMA_READ, sge, 4, 0, s->peer.addr[MR_RD],
		      s->peer.rkey[MR_RD]) &&
	    post_send(s, "read: post RDMA READ of 5000 bytes at offset 777", 2,
		      IBV_WR_RDMA_READ, &sge2, 1, 0,
		      s->peer.addr[MR_RD] + READ2_OFF, s->peer.rkey[MR_RD])) {
		expect_wc(s, "read: RDMA READ of 524621 bytes into 4 SGEs "
			  "completes, byte_len", 1, IBV_WC_SUCCESS,
			  IBV_WC_RDMA_READ, RD_LEN);
		expect_wc(s, "read: RDMA READ of 5000 bytes completes, "
			  "byte_len", 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ,
			  READ2_LEN);
	}
	verify("read: 524621 bytes scattered over 4 SGEs in order, nothing "
	       "else touched", e->cbuf, READ_REGION, read_sges, 4, SEED_RD, 0,
	       RD_LEN);
	verify("read: 5000 bytes from offset 777, nothing else touched", b2,
	       PAGE * 4, &sp2, 1, SEED_RD, READ2_OFF, READ2_LEN);
}
