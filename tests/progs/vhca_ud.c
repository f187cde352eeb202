// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_ud: UD QPs between two ports, every byte checked.  One process
 * drives both ends (RDMA devices are visible from every namespace):
 *
 *   vhca_ud DEV0 GID_INDEX0 DEV1 GID_INDEX1
 *
 * Checks: a SEND gathered from three SGEs lands after the 40-byte network
 * header RoCEv2 puts at the start of a UD receive buffer (IPv4: 20 zero
 * bytes, then the IPv4 header with the sender's and receiver's addresses;
 * IPv6: the IPv6 header), with IBV_WC_GRH, src_qp and byte_len; an inline
 * SEND with immediate scattered over three receive SGEs; a datagram with
 * the wrong Q_Key is dropped (its receive WQE stays for the next one); a
 * Q_Key with the high bit set means the sender QP's own; a receive buffer
 * too small completes with IBV_WC_LOC_LEN_ERR; and last, a SEND longer
 * than the MTU completes with IBV_WC_LOC_LEN_ERR.
 *
 *   vhca_ud --oversize DEV0 GID_INDEX0 DEV1 GID_INDEX1
 *
 * for ports on netdevs of MTU 300, too small for any IB MTU: the port's
 * active MTU is 256 and SENDs longer than that complete with
 * IBV_WC_LOC_LEN_ERR (the QP reset after each), whatever their length:
 * 257 bytes, 2000 bytes, and 16 SGEs of 0x0ffffffc bytes over one 256 MiB
 * read-only MR, whose sum is 2^32 - 64.
 */
#include <sys/mman.h>

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "vhca_test.h"

#define QKEY		0x1234567u
#define BUF_SIZE	65536
#define GRH_LEN		40
#define WAIT_MS		10000
#define QUIET_MS	1000
/* --oversize: SGEs whose lengths sum to 2^32 - 64, over one MR. */
#define HUGE_SGES	16
#define HUGE_SGE_LEN	0x0ffffffcu
#define HUGE_MR_LEN	(256u << 20)

struct end {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	int gid_index;
	uint32_t mtu;
};

static void __attribute__((noreturn)) fatal(const char *what)
{
	result(false, what, "%s", strerror(errno ? errno : EIO));
	exit(exit_status());
}

/* e's QP, new or reset, to RTS. */
static void qp_to_rts(struct end *e)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = QKEY };

	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		fatal("UD QP to INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE))
		fatal("UD QP to RTR");
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x123;
	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		fatal("UD QP to RTS");
}

/* After a local error: e's QP through RESET back to RTS. */
static void qp_reset(struct end *e)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	if (ibv_modify_qp(e->qp, &a, IBV_QP_STATE))
		fatal("UD QP to RESET");
	qp_to_rts(e);
}

static void open_end(struct end *e, const char *name, int gid_index,
		     uint32_t send_sges)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_UD,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = send_sges, .max_recv_sge = 3,
			 .max_inline_data = 64 },
	};
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_port_attr port;
	int i;

	if (!list)
		fatal("ibv_get_device_list");
	for (i = 0; list[i] && strcmp(ibv_get_device_name(list[i]), name); i++)
		;
	if (!list[i]) {
		errno = ENODEV;
		fatal(name);
	}
	e->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!e->ctx)
		fatal("ibv_open_device");
	e->gid_index = gid_index;
	if (ibv_query_gid(e->ctx, 1, gid_index, &e->gid) ||
	    ibv_query_port(e->ctx, 1, &port))
		fatal("query the port");
	e->mtu = 128u << port.active_mtu;
	e->pd = ibv_alloc_pd(e->ctx);
	e->cq = e->pd ? ibv_create_cq(e->ctx, 64, NULL, NULL, 0) : NULL;
	e->buf = calloc(1, BUF_SIZE);
	e->mr = e->cq && e->buf ? ibv_reg_mr(e->pd, e->buf, BUF_SIZE,
					     IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!e->mr)
		fatal("PD, CQ, MR");
	init.send_cq = e->cq;
	init.recv_cq = e->cq;
	e->qp = ibv_create_qp(e->pd, &init);
	if (!e->qp)
		fatal("create a UD QP");
	qp_to_rts(e);
}

static void close_end(struct end *e)
{
	ibv_destroy_qp(e->qp);
	ibv_dereg_mr(e->mr);
	ibv_destroy_cq(e->cq);
	ibv_dealloc_pd(e->pd);
	ibv_close_device(e->ctx);
	free(e->buf);
}

/* The next completion must be wr_id with status; false (reported) if not. */
static bool expect(struct end *e, const char *what, uint64_t wr_id,
		   enum ibv_wc_status status, struct ibv_wc *wc)
{
	int n = poll1(e->cq, wc, WAIT_MS);

	if (n != 1) {
		result(false, what, "no completion (poll returned %d)", n);
		return false;
	}
	if (wc->wr_id != wr_id || wc->status != status) {
		result(false, what, "wr_id %llu status %s; expected %llu %s",
		       (unsigned long long)wc->wr_id,
		       ibv_wc_status_str(wc->status),
		       (unsigned long long)wr_id, ibv_wc_status_str(status));
		return false;
	}
	result(true, what, "%s", "");
	return true;
}

static uint8_t pat(uint32_t seed, uint32_t i)
{
	return (uint8_t)(i * 29 + seed * 7 + (i >> 8));
}

static void post_recv(struct end *e, uint64_t wr_id, const uint32_t *off,
		      const uint32_t *len, int n)
{
	struct ibv_sge sge[3];
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sge,
				  .num_sge = n }, *bad;
	int i;

	for (i = 0; i < n; i++) {
		memset(e->buf + off[i], 0xee, len[i]);
		sge[i].addr = (uintptr_t)e->buf + off[i];
		sge[i].length = len[i];
		sge[i].lkey = e->mr->lkey;
	}
	if (ibv_post_recv(e->qp, &wr, &bad))
		fatal("ibv_post_recv");
}

/* A SEND of len bytes of pattern seed from three SGEs of e's buffer. */
static void post_send(struct end *e, struct ibv_ah *ah, uint32_t dqpn,
		      uint32_t qkey, uint64_t wr_id, uint32_t seed,
		      uint32_t len, bool imm_inline)
{
	uint32_t cut[3] = { len / 3, len / 3, len - 2 * (len / 3) };
	uint32_t base = 32768, off = 0, i, k;
	struct ibv_sge sge[3];
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = sge, .num_sge = 3,
		.opcode = imm_inline ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = imm_inline ? IBV_SEND_INLINE : 0,
		.imm_data = htonl(0xa1b2c3d4),
		.wr.ud = { .ah = ah, .remote_qpn = dqpn, .remote_qkey = qkey },
	}, *bad;

	for (k = 0; k < 3; k++) {
		/* SGEs out of order in memory, 100 bytes apart. */
		uint32_t at = base + (2 - k) * (len + 100);

		for (i = 0; i < cut[k]; i++)
			e->buf[at + i] = pat(seed, off + i);
		sge[k].addr = (uintptr_t)e->buf + at;
		sge[k].length = cut[k];
		sge[k].lkey = e->mr->lkey;
		off += cut[k];
	}
	if (ibv_post_send(e->qp, &wr, &bad))
		fatal("ibv_post_send");
}

/* Bytes [0, len) of the message, spread over the receive SGEs after the GRH. */
static bool check_payload(const struct end *e, const uint32_t *off,
			  const uint32_t *len, int n, uint32_t seed,
			  uint32_t msg_len, char *why, size_t size)
{
	uint32_t m = 0, skip = GRH_LEN, i;
	int k;

	for (k = 0; k < n && m < msg_len; k++) {
		for (i = 0; i < len[k] && m < msg_len; i++) {
			if (skip) {
				skip--;
				continue;
			}
			if (e->buf[off[k] + i] != pat(seed, m)) {
				snprintf(why, size,
					 "message byte %u is %#x, expected %#x",
					 m, e->buf[off[k] + i], pat(seed, m));
				return false;
			}
			m++;
		}
	}
	snprintf(why, size, "%u of %u bytes placed", m, msg_len);
	return m == msg_len;
}

static void check_grh(const struct end *rx, const struct end *tx,
		      const uint8_t *grh)
{
	static const uint8_t zero[20];
	bool v4 = !memcmp(tx->gid.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12);

	if (v4) {
		result(!memcmp(grh, zero, 20),
		       "IPv4: the first 20 bytes of the network header are zero",
		       "%s", "they are not");
		result(grh[20] == 0x45 && grh[29] == 17,
		       "... then an IPv4 header (no options) of a UDP datagram",
		       "version/ihl %#x, protocol %u", grh[20], grh[29]);
		result(!memcmp(grh + 32, tx->gid.raw + 12, 4) &&
		       !memcmp(grh + 36, rx->gid.raw + 12, 4),
		       "... from the sender's address to the receiver's",
		       "%u.%u.%u.%u -> %u.%u.%u.%u", grh[32], grh[33], grh[34],
		       grh[35], grh[36], grh[37], grh[38], grh[39]);
	} else {
		result((grh[0] >> 4) == 6 && grh[6] == 17 &&
		       !memcmp(grh + 8, tx->gid.raw, 16) &&
		       !memcmp(grh + 24, rx->gid.raw, 16),
		       "IPv6: the network header is the IPv6 header",
		       "version %u next %u", grh[0] >> 4, grh[6]);
	}
}

/* --oversize: every SEND longer than the 256-byte MTU fails locally. */
static void oversize(struct end *a, struct end *b, struct ibv_ah *ah)
{
	struct ibv_sge sge[HUGE_SGES];
	struct ibv_send_wr wr = {
		.wr_id = 203, .sg_list = sge, .num_sge = HUGE_SGES,
		.opcode = IBV_WR_SEND,
		.wr.ud = { .ah = ah, .remote_qpn = b->qp->qp_num,
			   .remote_qkey = QKEY },
	}, *bad;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	void *huge;
	int i;

	result(a->mtu == 256 && b->mtu == 256,
	       "ports on 300-byte netdevs: active MTU 256", "%u and %u",
	       a->mtu, b->mtu);
	post_send(a, ah, b->qp->qp_num, QKEY, 201, 1, 257, false);
	expect(a, "SEND of 257 bytes: IBV_WC_LOC_LEN_ERR", 201,
	       IBV_WC_LOC_LEN_ERR, &wc);
	qp_reset(a);
	post_send(a, ah, b->qp->qp_num, QKEY, 202, 2, 2000, false);
	expect(a, "SEND of 2000 bytes: IBV_WC_LOC_LEN_ERR", 202,
	       IBV_WC_LOC_LEN_ERR, &wc);
	qp_reset(a);

	/* Never written: the MR pins the zero page only. */
	huge = mmap(NULL, HUGE_MR_LEN, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		    -1, 0);
	if (huge == MAP_FAILED)
		fatal("mmap 256 MiB");
	mr = ibv_reg_mr(a->pd, huge, HUGE_MR_LEN, 0);
	if (!mr)
		fatal("ibv_reg_mr of 256 MiB, read-only");
	for (i = 0; i < HUGE_SGES; i++) {
		sge[i].addr = (uintptr_t)huge;
		sge[i].length = HUGE_SGE_LEN;
		sge[i].lkey = mr->lkey;
	}
	if (ibv_post_send(a->qp, &wr, &bad))
		fatal("ibv_post_send");
	expect(a, "SEND of 16 SGEs summing to 2^32 - 64: IBV_WC_LOC_LEN_ERR",
	       203, IBV_WC_LOC_LEN_ERR, &wc);
	result(poll1(b->cq, &wc, QUIET_MS) == 0,
	       "... and nothing was received", "wr_id %llu arrived",
	       (unsigned long long)wc.wr_id);
	ibv_dereg_mr(mr);
	munmap(huge, HUGE_MR_LEN);
}

int main(int argc, char **argv)
{
	struct ibv_ah_attr av = { .is_global = 1, .port_num = 1,
				  .grh = { .hop_limit = 64 } };
	struct end a = { 0 }, b = { 0 };
	uint32_t roff[3] = { 0, 8192, 16384 };
	uint32_t rlen[3];
	struct ibv_ah *ah;
	struct ibv_wc wc;
	char why[128];
	uint32_t len;
	bool ok;

	bool big = argc == 6 && !strcmp(argv[1], "--oversize");

	if (argc != 5 && !big) {
		fprintf(stderr, "usage: %s [--oversize] DEV0 GID0 DEV1 GID1\n",
			argv[0]);
		return 2;
	}
	argv += big;
	ktap_header();
	open_end(&a, argv[1], atoi(argv[2]), big ? HUGE_SGES : 3);
	open_end(&b, argv[3], atoi(argv[4]), 3);
	av.grh.dgid = b.gid;
	av.grh.sgid_index = a.gid_index;
	ah = ibv_create_ah(a.pd, &av);
	if (!ah)
		fatal("ibv_create_ah");
	result(true, "two UD QPs and an address handle", "%s", "");
	if (big) {
		oversize(&a, &b, ah);
		goto out;
	}

	/* 1. A full-MTU SEND gathered from 3 SGEs into one receive SGE. */
	len = a.mtu < b.mtu ? a.mtu : b.mtu;
	rlen[0] = GRH_LEN + len;
	post_recv(&b, 1, roff, rlen, 1);
	post_send(&a, ah, b.qp->qp_num, QKEY, 101, 1, len, false);
	if (expect(&a, "MTU-sized SEND from three SGEs completes", 101,
		   IBV_WC_SUCCESS, &wc) &&
	    expect(&b, "... and is received", 1, IBV_WC_SUCCESS, &wc)) {
		result(wc.opcode == IBV_WC_RECV && wc.byte_len == GRH_LEN + len,
		       "... as IBV_WC_RECV of 40 + MTU bytes",
		       "opcode %d byte_len %u", wc.opcode, wc.byte_len);
		result((wc.wc_flags & IBV_WC_GRH) &&
		       !(wc.wc_flags & IBV_WC_WITH_IMM),
		       "... with IBV_WC_GRH and no immediate", "wc_flags %#x",
		       wc.wc_flags);
		result(wc.src_qp == a.qp->qp_num && wc.qp_num == b.qp->qp_num,
		       "... from the sender's QP number", "src_qp %u, qp_num %u",
		       wc.src_qp, wc.qp_num);
		check_grh(&b, &a, b.buf);
		ok = check_payload(&b, roff, rlen, 1, 1, len, why, sizeof(why));
		result(ok, "... every payload byte after the header", "%s", why);
	}

	/* 2. Inline SEND with immediate, scattered over three SGEs. */
	rlen[0] = GRH_LEN + 5;
	rlen[1] = 7;
	rlen[2] = 100;
	post_recv(&b, 2, roff, rlen, 3);
	post_send(&a, ah, b.qp->qp_num, QKEY, 102, 2, 48, true);
	if (expect(&a, "inline SEND with immediate completes", 102,
		   IBV_WC_SUCCESS, &wc) &&
	    expect(&b, "... and is received", 2, IBV_WC_SUCCESS, &wc)) {
		result((wc.wc_flags & IBV_WC_WITH_IMM) &&
		       wc.imm_data == htonl(0xa1b2c3d4) &&
		       wc.byte_len == GRH_LEN + 48,
		       "... with its immediate and 40 + 48 bytes",
		       "wc_flags %#x imm %#x byte_len %u", wc.wc_flags,
		       ntohl(wc.imm_data), wc.byte_len);
		ok = check_payload(&b, roff, rlen, 3, 2, 48, why, sizeof(why));
		result(ok, "... scattered over three receive SGEs", "%s", why);
	}

	/* 3. The wrong Q_Key: dropped; the receive WQE waits for the next. */
	rlen[0] = GRH_LEN + 256;
	post_recv(&b, 3, roff, rlen, 1);
	post_send(&a, ah, b.qp->qp_num, QKEY + 1, 103, 3, 256, false);
	expect(&a, "SEND with the wrong Q_Key completes at the sender", 103,
	       IBV_WC_SUCCESS, &wc);
	result(poll1(b.cq, &wc, QUIET_MS) == 0,
	       "... and is dropped by the receiver", "wr_id %llu arrived",
	       (unsigned long long)wc.wr_id);

	/* 4. A Q_Key with the high bit set: the sender QP's own (QKEY). */
	post_send(&a, ah, b.qp->qp_num, 0x80000000u, 104, 4, 256, false);
	if (expect(&a, "SEND with a privileged Q_Key (the QP's own)", 104,
		   IBV_WC_SUCCESS, &wc) &&
	    expect(&b, "... lands in the receive WQE left by the dropped one",
		   3, IBV_WC_SUCCESS, &wc)) {
		ok = check_payload(&b, roff, rlen, 1, 4, 256, why, sizeof(why));
		result(ok, "... with its own bytes", "%s", why);
	}

	/* 5. A receive buffer too small. */
	rlen[0] = GRH_LEN + 100;
	post_recv(&b, 5, roff, rlen, 1);
	post_send(&a, ah, b.qp->qp_num, QKEY, 105, 5, 500, false);
	expect(&a, "SEND of 500 bytes completes at the sender", 105,
	       IBV_WC_SUCCESS, &wc);
	expect(&b, "... into 40 + 100 bytes: IBV_WC_LOC_LEN_ERR", 5,
	       IBV_WC_LOC_LEN_ERR, &wc);

	/* 6. Longer than the MTU: a local length error at the sender. */
	post_send(&a, ah, b.qp->qp_num, QKEY, 106, 6, a.mtu + 4, false);
	expect(&a, "SEND longer than the MTU: IBV_WC_LOC_LEN_ERR", 106,
	       IBV_WC_LOC_LEN_ERR, &wc);

out:
	ibv_destroy_ah(ah);
	close_end(&a);
	close_end(&b);
	return exit_status();
}
