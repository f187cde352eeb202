// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_cm: the librdmacm endpoint API over an RC connection, every byte
 * checked.  One KTAP result line per check (ktap.h); the exit status counts
 * failures.
 *
 *   vhca_cm server ADDR [PORT]    (listens on ADDR)
 *   vhca_cm client ADDR [PORT]    (connects to the server at ADDR)
 *
 * The server (rdma_create_ep passive, rdma_listen, rdma_get_request)
 * registers a receive area in three pieces with rdma_reg_msgs, a write
 * target with rdma_reg_write (and with rdma_reg_read, to be read back)
 * and a message-only area, posts one receive of
 * three SGEs with rdma_post_recvv, accepts and sends the client where the
 * target and the message-only area are.  The client (rdma_create_ep
 * active, rdma_connect) writes a pattern into the target with
 * rdma_post_write, then sends a message the server's receive scatters over
 * its three SGEs.  RC delivers the WRITE before the SEND: once
 * rdma_get_recv_comp returns, the server checks both byte by byte and
 * answers with its verdict.  The client reads the target back with
 * rdma_post_read and compares it, says "done", and last writes into the
 * message-only area, which must fail with IBV_WC_REM_ACCESS_ERR; the
 * server's next receive is then flushed (its QP is in the error state).
 */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include "vhca_test.h"

#define DEFAULT_PORT	"7174"
#define TARGET_LEN	(256 * 1024)	/* many packets at any MTU */
#define BAD_LEN		4096
#define SEED_WRITE	0x11u
#define SEED_SEND	0x22u
#define TIMEOUT_S	120

/* The receive's three SGEs; the client's message fills them exactly. */
static const uint32_t piece_len[3] = { 100, 1000, 3000 };
#define SEND_LEN	(100 + 1000 + 3000)

/*
 * Server -> client: where to write (rkey, of rdma_reg_write: remote write
 * only), the same memory to read back (read_rkey, of rdma_reg_read) and
 * where writing is refused.
 */
struct info {
	uint64_t addr;
	uint32_t rkey;
	uint32_t read_rkey;
	uint32_t len;
	uint32_t reserved;
	uint64_t bad_addr;
	uint32_t bad_rkey;
	uint32_t bad_len;
};

static uint8_t pat(uint32_t seed, uint64_t i)
{
	return (uint8_t)(i * 131 + seed + (i >> 9) * 7);
}

static void fill(uint8_t *buf, size_t len, uint32_t seed, uint64_t off)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = pat(seed, off + i);
}

/* Check buf against the pattern from message offset off; a result line. */
static bool verify(const char *what, const uint8_t *buf, size_t len,
		   uint32_t seed, uint64_t off)
{
	size_t i;

	for (i = 0; i < len && buf[i] == pat(seed, off + i); i++)
		;
	result(i == len, what, "byte %zu of %zu is %#x, expected %#x", i,
	       len, i < len ? buf[i] : 0, i < len ? pat(seed, off + i) : 0);
	return i == len;
}

static void *xalloc(size_t len)
{
	void *p = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);

	if (!p) {
		result(false, "allocate buffers", "%s", strerror(errno));
		exit(exit_status());
	}
	memset(p, 0, len);
	return p;
}

/* A setup step that must succeed for anything else to be tested. */
static void must(bool ok, const char *what)
{
	int err = errno;

	result(ok, what, "%s", strerror(err ? err : EIO));
	if (!ok)
		exit(exit_status());
}

/* One completion; checks its status, opcode and (if nonzero) length. */
static bool comp(struct rdma_cm_id *id, bool send, const char *what,
		 enum ibv_wc_status status, enum ibv_wc_opcode opcode,
		 uint32_t len)
{
	struct ibv_wc wc;
	int n;

	n = send ? rdma_get_send_comp(id, &wc) : rdma_get_recv_comp(id, &wc);
	if (n != 1) {
		result(false, what, "rdma_get_%s_comp returned %d (%s)",
		       send ? "send" : "recv", n, strerror(errno));
		return false;
	}
	if (wc.status != status || (status == IBV_WC_SUCCESS &&
				    (wc.opcode != opcode ||
				     (len && wc.byte_len != len)))) {
		result(false, what,
		       "status %s, opcode %d, byte_len %u; expected %s, opcode %d, byte_len %u",
		       ibv_wc_status_str(wc.status), wc.opcode, wc.byte_len,
		       ibv_wc_status_str(status), opcode, len);
		return false;
	}
	result(true, what, "%s", "");
	return true;
}

static struct ibv_qp_init_attr qp_attr(void)
{
	struct ibv_qp_init_attr attr = {
		.cap = {
			.max_send_wr = 8,
			.max_recv_wr = 8,
			.max_send_sge = 1,
			.max_recv_sge = 3,
		},
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};

	return attr;
}

static struct rdma_addrinfo *resolve(const char *addr, const char *port,
				     bool passive)
{
	struct rdma_addrinfo hints = {
		.ai_flags = passive ? RAI_PASSIVE : 0,
		.ai_port_space = RDMA_PS_TCP,
	};
	struct rdma_addrinfo *res = NULL;
	int ret;

	ret = rdma_getaddrinfo(addr, port, &hints, &res);
	errno = ret ? errno : 0;
	must(!ret, "rdma_getaddrinfo");
	return res;
}

static void server(const char *addr, const char *port)
{
	struct rdma_addrinfo *res = resolve(addr, port, true);
	struct ibv_qp_init_attr attr = qp_attr();
	struct rdma_cm_id *lid, *id;
	struct ibv_mr *mr_piece[3], *mr_target, *mr_read, *mr_bad, *mr_info;
	struct ibv_mr *mr_ctl;
	struct ibv_sge sgl[3];
	struct info *info;
	uint8_t *piece[3], *target, *bad, *ctl;
	uint64_t off = 0;
	bool ok;
	int i;

	must(!rdma_create_ep(&lid, res, NULL, &attr), "server: rdma_create_ep");
	must(!rdma_listen(lid, 1), "server: rdma_listen");
	printf("listening\n");
	fflush(stdout);
	must(!rdma_get_request(lid, &id), "server: rdma_get_request");
	must(id->qp != NULL, "server: the request's endpoint has a QP");

	for (i = 0; i < 3; i++) {
		piece[i] = xalloc(piece_len[i]);
		mr_piece[i] = rdma_reg_msgs(id, piece[i], piece_len[i]);
		must(mr_piece[i] != NULL, "server: rdma_reg_msgs (receive piece)");
		sgl[i].addr = (uintptr_t)piece[i];
		sgl[i].length = piece_len[i];
		sgl[i].lkey = mr_piece[i]->lkey;
	}
	target = xalloc(TARGET_LEN);
	mr_target = rdma_reg_write(id, target, TARGET_LEN);
	must(mr_target != NULL, "server: rdma_reg_write (write target)");
	mr_read = rdma_reg_read(id, target, TARGET_LEN);
	must(mr_read != NULL, "server: rdma_reg_read (the same memory)");
	bad = xalloc(BAD_LEN);
	mr_bad = rdma_reg_msgs(id, bad, BAD_LEN);
	must(mr_bad != NULL, "server: rdma_reg_msgs (message-only area)");
	info = xalloc(sizeof(*info));
	mr_info = rdma_reg_msgs(id, info, sizeof(*info));
	must(mr_info != NULL, "server: rdma_reg_msgs (info)");
	ctl = xalloc(64);
	mr_ctl = rdma_reg_msgs(id, ctl, 64);
	must(mr_ctl != NULL, "server: rdma_reg_msgs (control)");

	must(!rdma_post_recvv(id, NULL, sgl, 3),
	     "server: rdma_post_recvv with three SGEs");
	must(!rdma_post_recv(id, NULL, ctl + 32, 4, mr_ctl),
	     "server: rdma_post_recv (done)");
	must(!rdma_post_recv(id, NULL, ctl + 48, 4, mr_ctl),
	     "server: rdma_post_recv (flushed at the end)");
	must(!rdma_accept(id, NULL), "server: rdma_accept");

	info->addr = htobe64((uintptr_t)target);
	info->rkey = htobe32(mr_target->rkey);
	info->read_rkey = htobe32(mr_read->rkey);
	info->len = htobe32(TARGET_LEN);
	info->bad_addr = htobe64((uintptr_t)bad);
	info->bad_rkey = htobe32(mr_bad->rkey);
	info->bad_len = htobe32(BAD_LEN);
	must(!rdma_post_send(id, NULL, info, sizeof(*info), mr_info, 0),
	     "server: rdma_post_send (info)");
	comp(id, true, "server: info sent", IBV_WC_SUCCESS, IBV_WC_SEND, 0);

	ok = comp(id, false, "server: the three-SGE receive completes",
		  IBV_WC_SUCCESS, IBV_WC_RECV, SEND_LEN);
	for (i = 0; i < 3; i++) {
		ok &= verify(i == 0 ? "server: receive SGE 0 holds its part" :
			     i == 1 ? "server: receive SGE 1 holds its part" :
				      "server: receive SGE 2 holds its part",
			     piece[i], piece_len[i], SEED_SEND, off);
		off += piece_len[i];
	}
	ok &= verify("server: the WRITE landed in the rdma_reg_write area",
		     target, TARGET_LEN, SEED_WRITE, 0);
	ctl[0] = ok;
	must(!rdma_post_send(id, NULL, ctl, 1, mr_ctl, 0),
	     "server: rdma_post_send (verdict)");
	comp(id, true, "server: verdict sent", IBV_WC_SUCCESS, IBV_WC_SEND, 0);
	comp(id, false, "server: the client says done", IBV_WC_SUCCESS,
	     IBV_WC_RECV, 4);
	comp(id, false, "server: the refused WRITE flushes the last receive",
	     IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0);
	for (i = 0; i < BAD_LEN && !bad[i]; i++)
		;
	result(i == BAD_LEN, "server: the message-only area was not written",
	       "byte %d is %#x", i, i < BAD_LEN ? bad[i] : 0);

	rdma_disconnect(id);
	for (i = 0; i < 3; i++)
		rdma_dereg_mr(mr_piece[i]);
	rdma_dereg_mr(mr_target);
	rdma_dereg_mr(mr_read);
	rdma_dereg_mr(mr_bad);
	rdma_dereg_mr(mr_info);
	rdma_dereg_mr(mr_ctl);
	rdma_destroy_ep(id);
	rdma_destroy_ep(lid);
	rdma_freeaddrinfo(res);
}

static void client(const char *addr, const char *port)
{
	struct rdma_addrinfo *res = resolve(addr, port, false);
	struct ibv_qp_init_attr attr = qp_attr();
	struct ibv_mr *mr_src, *mr_back, *mr_msg, *mr_info, *mr_ctl;
	uint8_t *src, *back, *msg, *ctl;
	struct rdma_cm_id *id;
	struct info *info;
	uint64_t raddr, bad_addr;
	uint32_t rkey, read_rkey, bad_rkey;

	must(!rdma_create_ep(&id, res, NULL, &attr), "client: rdma_create_ep");
	src = xalloc(TARGET_LEN);
	mr_src = rdma_reg_msgs(id, src, TARGET_LEN);
	back = xalloc(TARGET_LEN);
	mr_back = rdma_reg_msgs(id, back, TARGET_LEN);
	msg = xalloc(SEND_LEN);
	mr_msg = rdma_reg_msgs(id, msg, SEND_LEN);
	info = xalloc(sizeof(*info));
	mr_info = rdma_reg_msgs(id, info, sizeof(*info));
	ctl = xalloc(64);
	mr_ctl = rdma_reg_msgs(id, ctl, 64);
	must(mr_src && mr_back && mr_msg && mr_info && mr_ctl,
	     "client: rdma_reg_msgs");
	must(!rdma_post_recv(id, NULL, info, sizeof(*info), mr_info),
	     "client: rdma_post_recv (info)");
	must(!rdma_post_recv(id, NULL, ctl, 1, mr_ctl),
	     "client: rdma_post_recv (verdict)");
	must(!rdma_connect(id, NULL), "client: rdma_connect");

	if (!comp(id, false, "client: info received", IBV_WC_SUCCESS,
		  IBV_WC_RECV, sizeof(*info)))
		exit(exit_status());
	raddr = be64toh(info->addr);
	rkey = be32toh(info->rkey);
	read_rkey = be32toh(info->read_rkey);
	bad_addr = be64toh(info->bad_addr);
	bad_rkey = be32toh(info->bad_rkey);
	result(be32toh(info->len) == TARGET_LEN, "client: the target's length",
	       "%u", be32toh(info->len));

	fill(src, TARGET_LEN, SEED_WRITE, 0);
	must(!rdma_post_write(id, NULL, src, TARGET_LEN, mr_src, 0, raddr,
			      rkey), "client: rdma_post_write");
	comp(id, true, "client: the WRITE completes", IBV_WC_SUCCESS,
	     IBV_WC_RDMA_WRITE, 0);
	fill(msg, SEND_LEN, SEED_SEND, 0);
	must(!rdma_post_send(id, NULL, msg, SEND_LEN, mr_msg, 0),
	     "client: rdma_post_send");
	comp(id, true, "client: the SEND completes", IBV_WC_SUCCESS,
	     IBV_WC_SEND, 0);
	if (comp(id, false, "client: the server's verdict arrives",
		 IBV_WC_SUCCESS, IBV_WC_RECV, 1))
		result(ctl[0] == 1, "client: the server found every byte",
		       "verdict %u", ctl[0]);

	must(!rdma_post_read(id, NULL, back, TARGET_LEN, mr_back, 0, raddr,
			     read_rkey), "client: rdma_post_read");
	if (comp(id, true, "client: the READ completes", IBV_WC_SUCCESS,
		 IBV_WC_RDMA_READ, TARGET_LEN))
		verify("client: the READ brought the written bytes back", back,
		       TARGET_LEN, SEED_WRITE, 0);

	memcpy(ctl + 8, "done", 4);
	must(!rdma_post_send(id, NULL, ctl + 8, 4, mr_ctl, 0),
	     "client: rdma_post_send (done)");
	comp(id, true, "client: done sent", IBV_WC_SUCCESS, IBV_WC_SEND, 0);
	must(!rdma_post_write(id, NULL, src, 64, mr_src, 0, bad_addr,
			      bad_rkey),
	     "client: rdma_post_write into the message-only area");
	comp(id, true, "client: that WRITE fails with a remote access error",
	     IBV_WC_REM_ACCESS_ERR, IBV_WC_RDMA_WRITE, 0);

	rdma_disconnect(id);
	rdma_dereg_mr(mr_src);
	rdma_dereg_mr(mr_back);
	rdma_dereg_mr(mr_msg);
	rdma_dereg_mr(mr_info);
	rdma_dereg_mr(mr_ctl);
	rdma_destroy_ep(id);
	rdma_freeaddrinfo(res);
}

int main(int argc, char **argv)
{
	const char *port = argc > 3 ? argv[3] : DEFAULT_PORT;

	if (argc < 3 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: %s server|client ADDR [PORT]\n", argv[0]);
		return 2;
	}
	ktap_header();
	/* rdma_get_*_comp block: a lost completion must not hang the test. */
	alarm(TIMEOUT_S);
	if (!strcmp(argv[1], "server"))
		server(argv[2], port);
	else
		client(argv[2], port);
	return exit_status();
}
