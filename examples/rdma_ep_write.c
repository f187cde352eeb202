// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma_ep_write: one RDMA WRITE and one scattered SEND over an RC
 * connection, with librdmacm's endpoint API (rdma_cma.h, rdma_verbs.h).
 * It runs on any RDMA device; with vhca, see Documentation/examples.md.
 *
 *   rdma_ep_write server ADDR            listen on ADDR, port 7471
 *   rdma_ep_write client ADDR [SOURCE]   connect to the server at ADDR,
 *                                        from the address SOURCE if given
 *
 * What happens, step by step:
 *
 *  server                                  client
 *  ------                                  ------
 *  rdma_create_ep (passive), rdma_listen   rdma_create_ep (active): the
 *                                            address and route resolved,
 *                                            the QP created
 *                                          rdma_reg_msgs: its buffers;
 *                                            rdma_post_recv: a receive for
 *                                            the server's verdict
 *                                          rdma_connect
 *  rdma_get_request: the client's
 *    request, with a QP of its own
 *  rdma_reg_write: REGION_LEN bytes the
 *    client may write into
 *  rdma_reg_msgs, rdma_post_recvv: one
 *    receive, three buffers (three SGEs)
 *  rdma_accept, with the region's address  rdma_connect returns: address
 *    and rkey in its private data            and rkey in the reply's
 *                                            private data
 *                                          rdma_post_write: REGION_LEN
 *                                            bytes of a pattern (its seed
 *                                            picked at random) into the
 *                                            region; rdma_get_send_comp
 *                                          rdma_post_send: a message of
 *                                            MSG_LEN bytes holding the seed
 *  rdma_get_recv_comp: the message,
 *    scattered over the three buffers.
 *    An RC QP delivers in order: the
 *    WRITE's bytes are in place too.
 *    Check both, byte by byte;
 *    rdma_post_send: the verdict     ->    rdma_get_recv_comp: the verdict
 *  rdma_disconnect, deregister, destroy    the same
 *
 * Every call's failure is reported with what failed and why; the exit
 * status is 0 only when every byte arrived as sent (both sides).
 *
 * Build: cc -Wall -O2 -o rdma_ep_write rdma_ep_write.c -lrdmacm -libverbs
 */
#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define PORT		"7471"
#define REGION_LEN	(64 * 1024)	/* the WRITE: many packets */

/* The server's receive: three buffers, which the client's message fills. */
#define NPIECES		3
static const size_t piece_len[NPIECES] = { 16, 240, 1792 };
#define MSG_LEN		(16 + 240 + 1792)

/*
 * Server -> client, in rdma_accept's private data (at most 196 bytes on
 * RC): where the client may write.  Big-endian, as on the wire.
 */
struct region_info {
	__be64 addr;
	__be32 rkey;
	__be32 len;
};

/* The message's first 16 bytes, its first piece: the pattern's seed. */
struct msg_head {
	__be32 seed;
	__be32 msg_len;
	__be64 reserved;	/* zero */
};

static_assert(sizeof(struct msg_head) == 16, "the head fills the first piece");

/* Server -> client: how many bytes did not match (0: all arrived). */
struct verdict {
	__be32 bad_bytes;
};

static const char *role = "rdma_ep_write";

/* die(WHAT): report the failed call and errno's reason, then exit 1. */
static void die(const char *what)
{
	fprintf(stderr, "%s: %s failed: %s\n", role, what, strerror(errno));
	exit(1);
}

/*
 * getaddrinfo_or_die(NODE, SERVICE, HINTS, RES, WHAT): rdma_getaddrinfo,
 * which returns getaddrinfo's error codes as they are, or -1 and errno.
 */
static void getaddrinfo_or_die(const char *node, const char *service,
			       const struct rdma_addrinfo *hints,
			       struct rdma_addrinfo **res, const char *what)
{
	int ret = rdma_getaddrinfo(node, service, hints, res);

	if (ret) {
		fprintf(stderr, "%s: rdma_getaddrinfo (%s %s) failed: %s\n", role,
			what, node, ret == -1 ? strerror(errno) : gai_strerror(ret));
		exit(1);
	}
}

/*
 * wait_comp(ID, SEND, WHAT): the next send (or receive) completion of the
 * endpoint's QP, which must be successful; its byte count (of a receive).
 */
static uint32_t wait_comp(struct rdma_cm_id *id, int send, const char *what)
{
	struct ibv_wc wc;
	int n;

	n = send ? rdma_get_send_comp(id, &wc) : rdma_get_recv_comp(id, &wc);
	if (n < 0)
		die(send ? "rdma_get_send_comp" : "rdma_get_recv_comp");
	if (wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "%s: %s completed with an error: %s (%d)\n",
			role, what, ibv_wc_status_str(wc.status), wc.status);
		exit(1);
	}
	return wc.byte_len;
}

/* The pattern: byte I of a buffer sent with SEED. */
static uint8_t pattern(uint32_t seed, size_t i)
{
	return (uint8_t)(seed + i * 131 + (i >> 8));
}

/* The endpoint's QP: RC, few work requests, three SGEs per receive. */
static void qp_attr(struct ibv_qp_init_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->qp_type = IBV_QPT_RC;
	attr->cap.max_send_wr = 2;
	attr->cap.max_recv_wr = 2;
	attr->cap.max_send_sge = 1;
	attr->cap.max_recv_sge = NPIECES;
}

static void *alloc(size_t len)
{
	void *p = calloc(1, len);

	if (!p)
		die("calloc");
	return p;
}

static int run_server(const char *addr)
{
	struct rdma_addrinfo hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
	struct rdma_cm_id *listen_id, *id;
	struct ibv_mr *region_mr, *piece_mr[NPIECES], *verdict_mr;
	struct ibv_sge sgl[NPIECES];
	struct rdma_conn_param param;
	struct ibv_qp_init_attr attr;
	struct rdma_addrinfo *res;
	struct region_info info;
	struct verdict *verdict;
	struct msg_head *head;
	uint8_t *region, *piece[NPIECES];
	uint32_t seed, len, bad, bad_msg, bad_region;
	size_t i, j, off;

	role = "server";
	getaddrinfo_or_die(addr, PORT, &hints, &res, "listen on");
	qp_attr(&attr);
	/* Passive: an id to listen on; each request comes with its own QP. */
	if (rdma_create_ep(&listen_id, res, NULL, &attr))
		die("rdma_create_ep");
	if (rdma_listen(listen_id, 1))
		die("rdma_listen");
	printf("server: listening on %s port %s\n", addr, PORT);
	fflush(stdout);
	if (rdma_get_request(listen_id, &id))
		die("rdma_get_request");

	/* Memory the client may write into (and nothing else). */
	region = alloc(REGION_LEN);
	region_mr = rdma_reg_write(id, region, REGION_LEN);
	if (!region_mr)
		die("rdma_reg_write");

	/* One receive, before accepting: it scatters over three buffers. */
	for (i = 0; i < NPIECES; i++) {
		piece[i] = alloc(piece_len[i]);
		piece_mr[i] = rdma_reg_msgs(id, piece[i], piece_len[i]);
		if (!piece_mr[i])
			die("rdma_reg_msgs");
		sgl[i].addr = (uintptr_t)piece[i];
		sgl[i].length = piece_len[i];
		sgl[i].lkey = piece_mr[i]->lkey;
	}
	if (rdma_post_recvv(id, NULL, sgl, NPIECES))
		die("rdma_post_recvv");
	verdict = alloc(sizeof(*verdict));
	verdict_mr = rdma_reg_msgs(id, verdict, sizeof(*verdict));
	if (!verdict_mr)
		die("rdma_reg_msgs");

	/* Accept, telling the client where the region is. */
	info.addr = htobe64((uintptr_t)region);
	info.rkey = htobe32(region_mr->rkey);
	info.len = htobe32(REGION_LEN);
	memset(&param, 0, sizeof(param));
	param.private_data = &info;
	param.private_data_len = sizeof(info);
	param.responder_resources = 1;
	param.initiator_depth = 1;
	param.retry_count = 7;
	param.rnr_retry_count = 7;
	if (rdma_accept(id, &param))
		die("rdma_accept");
	printf("server: connected on %s; %d bytes at %p (rkey 0x%x) offered for writing\n",
	       ibv_get_device_name(id->verbs->device), REGION_LEN, (void *)region,
	       region_mr->rkey);

	len = wait_comp(id, 0, "the receive of the message");
	head = (struct msg_head *)piece[0];
	seed = be32toh(head->seed);
	/* The message: its head, then a pattern from byte 16 on. */
	bad_msg = len == MSG_LEN && be32toh(head->msg_len) == MSG_LEN ? 0 : 1;
	off = 0;
	for (i = 0; i < NPIECES; i++)
		for (j = 0; j < piece_len[i]; j++, off++)
			if (off >= sizeof(*head) && piece[i][j] != pattern(~seed, off))
				bad_msg++;
	printf("server: message of %u bytes received in %d pieces (%zu + %zu + %zu): %u bytes wrong\n",
	       len, NPIECES, piece_len[0], piece_len[1], piece_len[2], bad_msg);
	bad_region = 0;
	for (i = 0; i < REGION_LEN; i++)
		if (region[i] != pattern(seed, i))
			bad_region++;
	printf("server: the %d bytes written against the client's pattern (seed 0x%08x): %u wrong\n",
	       REGION_LEN, seed, bad_region);
	bad = bad_msg + bad_region;

	verdict->bad_bytes = htobe32(bad);
	if (rdma_post_send(id, NULL, verdict, sizeof(*verdict), verdict_mr,
			   IBV_SEND_SIGNALED))
		die("rdma_post_send");
	wait_comp(id, 1, "the send of the verdict");

	rdma_disconnect(id);
	rdma_dereg_mr(verdict_mr);
	for (i = 0; i < NPIECES; i++) {
		rdma_dereg_mr(piece_mr[i]);
		free(piece[i]);
	}
	rdma_dereg_mr(region_mr);
	free(region);
	free(verdict);
	rdma_destroy_ep(id);
	rdma_destroy_ep(listen_id);
	rdma_freeaddrinfo(res);
	return bad ? 1 : 0;
}

static int run_client(const char *addr, const char *source)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo src_hints = { .ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP };
	struct rdma_addrinfo *res, *src = NULL;
	struct ibv_mr *src_mr, *msg_mr, *verdict_mr;
	struct rdma_cm_id *id;
	const struct region_info *info;
	struct ibv_qp_init_attr attr;
	struct verdict *verdict;
	struct msg_head *head;
	uint8_t *buf, *msg;
	uint64_t raddr;
	uint32_t rkey, seed, bad;
	size_t i;

	role = "client";
	if (source) {
		getaddrinfo_or_die(source, NULL, &src_hints, &src, "connect from");
		hints.ai_src_addr = src->ai_src_addr;
		hints.ai_src_len = src->ai_src_len;
	}
	getaddrinfo_or_die(addr, PORT, &hints, &res, "connect to");
	qp_attr(&attr);
	/* Active: resolves the address and route and creates the QP. */
	if (rdma_create_ep(&id, res, NULL, &attr))
		die("rdma_create_ep");

	/* The local buffers: what is written, the message, the verdict. */
	buf = alloc(REGION_LEN);
	msg = alloc(MSG_LEN);
	verdict = alloc(sizeof(*verdict));
	src_mr = rdma_reg_msgs(id, buf, REGION_LEN);
	msg_mr = rdma_reg_msgs(id, msg, MSG_LEN);
	verdict_mr = rdma_reg_msgs(id, verdict, sizeof(*verdict));
	if (!src_mr || !msg_mr || !verdict_mr)
		die("rdma_reg_msgs");
	/* The server's verdict can come any time after the connection. */
	if (rdma_post_recv(id, NULL, verdict, sizeof(*verdict), verdict_mr))
		die("rdma_post_recv");

	if (rdma_connect(id, NULL))
		die("rdma_connect");
	/* The server's private data comes with the connection's event. */
	if (!id->event || id->event->param.conn.private_data_len < sizeof(*info)) {
		fprintf(stderr, "client: the server sent no region address\n");
		return 1;
	}
	info = id->event->param.conn.private_data;
	raddr = be64toh(info->addr);
	rkey = be32toh(info->rkey);
	if (be32toh(info->len) < REGION_LEN) {
		fprintf(stderr, "client: the server's region has %u bytes, not %d\n",
			be32toh(info->len), REGION_LEN);
		return 1;
	}
	printf("client: connected from %s; the server's region: 0x%llx, rkey 0x%x\n",
	       ibv_get_device_name(id->verbs->device), (unsigned long long)raddr, rkey);

	/* The WRITE: a pattern that differs from run to run. */
	seed = (uint32_t)time(NULL) ^ ((uint32_t)getpid() << 16);
	for (i = 0; i < REGION_LEN; i++)
		buf[i] = pattern(seed, i);
	if (rdma_post_write(id, NULL, buf, REGION_LEN, src_mr, IBV_SEND_SIGNALED,
			    raddr, rkey))
		die("rdma_post_write");
	wait_comp(id, 1, "the RDMA WRITE");
	printf("client: RDMA WRITE of %d bytes completed\n", REGION_LEN);

	/* The SEND: the seed first, then another pattern. */
	head = (struct msg_head *)msg;
	head->seed = htobe32(seed);
	head->msg_len = htobe32(MSG_LEN);
	for (i = sizeof(*head); i < MSG_LEN; i++)
		msg[i] = pattern(~seed, i);
	if (rdma_post_send(id, NULL, msg, MSG_LEN, msg_mr, IBV_SEND_SIGNALED))
		die("rdma_post_send");
	wait_comp(id, 1, "the SEND");
	printf("client: SEND of %d bytes completed\n", MSG_LEN);

	if (wait_comp(id, 0, "the receive of the verdict") != sizeof(*verdict)) {
		fprintf(stderr, "client: the verdict has the wrong size\n");
		return 1;
	}
	bad = be32toh(verdict->bad_bytes);
	printf("client: the server's verdict: %u bytes wrong\n", bad);

	rdma_disconnect(id);
	rdma_dereg_mr(verdict_mr);
	rdma_dereg_mr(msg_mr);
	rdma_dereg_mr(src_mr);
	free(verdict);
	free(msg);
	free(buf);
	rdma_destroy_ep(id);
	rdma_freeaddrinfo(res);
	if (src)
		rdma_freeaddrinfo(src);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "server"))
		return run_server(argv[2]);
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], "client"))
		return run_client(argv[2], argc == 4 ? argv[3] : NULL);
	fprintf(stderr, "usage: %s server ADDR | %s client ADDR [SOURCE]\n",
		argv[0], argv[0]);
	return 2;
}
