// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_rdma: the RC data path between two ports, every byte verified.
 *
 *   vhca_rdma server DEVICE GID_INDEX TCP_PORT
 *   vhca_rdma client DEVICE GID_INDEX SERVER_IPV4 TCP_PORT [TEST...]
 *   vhca_rdma list
 *
 * The server listens on the IPv4 address of its GID (a RoCE v2 GID of port
 * 1, so a loopback or veth address) and serves one client.  The client runs
 * the tests (all of them, or those named, in the order given); for each it
 * tells the server which, and both create a fresh CQ and RC QP and exchange
 * QPN, PSN, GID and the server's MRs over TCP before connecting the QPs, so
 * a test that leaves a QP in the error state does not disturb the next.
 * The data are a pattern of a per-test seed and the byte's index in its
 * message; destination buffers start out filled with CANARY, and what the
 * operation must not touch has to keep it.
 *
 * The server's memory regions:
 *   rbuf    receive buffers, LOCAL_WRITE;
 *   MR_RW   RW_LEN bytes at wbuf + RW_OFF, LOCAL_WRITE | REMOTE_WRITE (what
 *           rdma_reg_write asks for); wbuf is larger, to see stray writes;
 *   MR_RD   RD_LEN bytes of pattern SEED_RD, REMOTE_READ only;
 *   MR_NOWR NOWR_LEN bytes, LOCAL_WRITE | REMOTE_READ: no remote write.
 *
 * Every check prints one KTAP result line (ktap.h) on the side that can
 * see it; lines starting with '#' are information.  Each side exits with its
 * number of failures (at most 255).
 *
 * The parts, one file a concern (vhca_rdma/): pattern.c (the data pattern,
 * scatter/gather layouts and their checks), ctl.c (the control channel),
 * session.c (the per-test CQ and QP, posts and completions), and the tests:
 * data.c (every byte verified) and errors.c (access violations).
 */
#define KTAP_STATE_HERE
#include "vhca_rdma/rdma.h"

void __attribute__((noreturn)) fatal(const char *what, int err)
{
	result(false, what, "%s", strerror(err ? err : EIO));
	exit(exit_status());
}

static const struct test tests[] = {
	{ "sge", sge_client, sge_server_prep, sge_server_check },
	{ "imm", imm_client, imm_server_prep, imm_server_check },
	{ "send-1m", send1m_client, send1m_server_prep, send1m_server_check },
	{ "write-1m", write1m_client, write1m_server_prep,
	  write1m_server_check },
	{ "write-imm", wimm_client, wimm_server_prep, wimm_server_check },
	{ "read", read_client, NULL, read_server_check },
	{ "err-write-noperm", noperm_client, NULL, noperm_server_check },
	{ "err-write-rkey", wrkey_client, NULL, wbuf_server_check },
	{ "err-write-rkey2", wrkey2_client, NULL, wbuf_server_check },
	{ "err-read-rkey", rrkey_client, NULL, NULL },
	{ "err-write-oob", woob_client, NULL, woob_server_check },
	{ "err-read-oob", roob_client, NULL, NULL },
	{ "err-lkey", lkey_client, recv256_server_prep, lkey_server_check },
	{ "err-len", len_client, len_server_prep, len_server_check },
};
#define NUM_TESTS	(sizeof(tests) / sizeof(tests[0]))

/* ---- the two sides ---- */

static struct ibv_mr *reg(struct env *e, void *addr, size_t len, int access,
			  const char *what)
{
	struct ibv_mr *mr = ibv_reg_mr(e->pd, addr, len, access);

	result(mr, what, "%s", strerror(errno));
	if (!mr)
		exit(exit_status());
	return mr;
}

static void *alloc_buf(size_t size)
{
	void *p = aligned_alloc(PAGE, size);

	if (!p)
		fatal("allocate buffers", ENOMEM);
	memset(p, CANARY, size);
	return p;
}

static void server_setup(struct env *e)
{
	static const struct span sp = { 0, RD_LEN };

	e->rbuf = alloc_buf(RBUF_SIZE);
	e->wbuf = alloc_buf(WBUF_SIZE + PAGE);
	e->rdbuf = alloc_buf(RD_LEN + PAGE);
	e->nwbuf = alloc_buf(NOWR_LEN);
	fill_spans(e->rdbuf, &sp, 1, SEED_RD, 0);
	e->rmr = reg(e, e->rbuf, RBUF_SIZE, IBV_ACCESS_LOCAL_WRITE,
		     "server: register the receive buffers (LOCAL_WRITE)");
	e->mr[MR_RW] = reg(e, e->wbuf + RW_OFF, RW_LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
			   "server: register an MR with LOCAL_WRITE | "
			   "REMOTE_WRITE");
	e->mr[MR_RD] = reg(e, e->rdbuf, RD_LEN, IBV_ACCESS_REMOTE_READ,
			   "server: register an MR with REMOTE_READ only");
	e->mr[MR_NOWR] = reg(e, e->nwbuf, NOWR_LEN, IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_READ, "server: register an MR "
			     "with LOCAL_WRITE | REMOTE_READ");
}

/* The IPv4 address of a RoCE v2 GID (::ffff:a.b.c.d). */
static bool gid_ipv4(const union ibv_gid *gid, struct in_addr *a)
{
	static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

	if (memcmp(gid->raw, prefix, sizeof(prefix)))
		return false;
	memcpy(&a->s_addr, gid->raw + 12, 4);
	return true;
}

static int listen_accept(const struct env *e, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	struct pollfd pfd = { .events = POLLIN };
	char addr[INET_ADDRSTRLEN];
	int one = 1, fd, c;

	if (!gid_ipv4(&e->gid, &sa.sin_addr))
		fatal("server: the GID is not an IPv4 one", EINVAL);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		fatal("server: socket", errno);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1))
		fatal("server: bind and listen", errno);
	ktap_diag("server: listening on %s:%d",
		  inet_ntop(AF_INET, &sa.sin_addr, addr, sizeof(addr)), port);
	pfd.fd = fd;
	if (poll(&pfd, 1, CTL_WAIT_MS) != 1)
		fatal("server: no client connected", ETIMEDOUT);
	c = accept(fd, NULL, NULL);
	if (c < 0)
		fatal("server: accept", errno);
	close(fd);
	return c;
}

static void run_server(struct env *e, int port)
{
	struct session s;
	struct ctl c;
	int served = 0;

	server_setup(e);
	e->fd = listen_accept(e, port);
	while (recv_ctl(e->fd, &c, CTL_TEST, true)) {
		const struct test *t;

		if (c.arg >= NUM_TESTS)
			fatal("server: the client asked for an unknown test",
			      EINVAL);
		t = &tests[c.arg];
		memset(e->rbuf, CANARY, RBUF_SIZE);
		memset(e->wbuf, CANARY, WBUF_SIZE + PAGE);
		memset(e->nwbuf, CANARY, NOWR_LEN);
		memset(&s, 0, sizeof(s));
		session_open(e, &s);
		if (t->server_prep)
			t->server_prep(e, &s);
		session_info(e, &s, &c);
		send_ctl(e->fd, &c);
		recv_ctl(e->fd, &s.peer, CTL_INFO, false);
		session_connect(e, &s);
		send_simple(e->fd, CTL_READY, 0);
		recv_ctl(e->fd, &c, CTL_DONE, false);
		ktap_diag("server: test %s", t->name);
		if (t->server_check)
			t->server_check(e, &s);
		session_close(&s);
		send_simple(e->fd, CTL_DONE, 0);
		served++;
	}
	ktap_diag("server: %d tests served", served);
	close(e->fd);
}

static int connect_to(const char *ip, int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	double end = now_ms() + 30000;
	int fd;

	if (inet_pton(AF_INET, ip, &sa.sin_addr) != 1)
		fatal("client: bad server address", EINVAL);
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			fatal("client: socket", errno);
		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			return fd;
		close(fd);
		if (now_ms() > end)
			fatal("client: connect to the server", errno);
		usleep(200000);
	}
}

static void run_one(struct env *e, unsigned int i)
{
	const struct test *t = &tests[i];
	double t0 = now_ms();
	struct session s = { 0 };
	struct ctl c;

	ktap_diag("test %s", t->name);
	send_simple(e->fd, CTL_TEST, i);
	recv_ctl(e->fd, &s.peer, CTL_INFO, false);
	session_open(e, &s);
	session_connect(e, &s);
	session_info(e, &s, &c);
	send_ctl(e->fd, &c);
	recv_ctl(e->fd, &c, CTL_READY, false);
	t->client(e, &s);
	send_simple(e->fd, CTL_DONE, 0);
	recv_ctl(e->fd, &c, CTL_DONE, false);
	session_close(&s);
	ktap_diag("test %s: %.2f s", t->name, (now_ms() - t0) / 1e3);
}

static void run_client(struct env *e, const char *ip, int port, int ntests,
		       char **names)
{
	unsigned int i;
	int n;

	e->cbuf = alloc_buf(CBUF_SIZE);
	e->cmr = reg(e, e->cbuf, CBUF_SIZE, IBV_ACCESS_LOCAL_WRITE,
		     "client: register the buffers (LOCAL_WRITE)");
	e->fd = connect_to(ip, port);
	if (!ntests)
		for (i = 0; i < NUM_TESTS; i++)
			run_one(e, i);
	for (n = 0; n < ntests; n++) {
		for (i = 0; i < NUM_TESTS; i++)
			if (!strcmp(names[n], tests[i].name))
				break;
		if (i == NUM_TESTS)
			result(false, names[n], "no such test");
		else
			run_one(e, i);
	}
	send_simple(e->fd, CTL_QUIT, 0);
	close(e->fd);
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s server DEVICE GID_INDEX TCP_PORT\n"
		"       %s client DEVICE GID_INDEX SERVER_IPV4 TCP_PORT "
		"[TEST...]\n       %s list\n", prog, prog, prog);
	exit(255);
}

int main(int argc, char **argv)
{
	struct env e = { 0 };
	unsigned int i;
	char *end;
	int port;

	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (i = 0; i < NUM_TESTS; i++)
			printf("%s\n", tests[i].name);
		return 0;
	}
	if (argc < 5)
		usage(argv[0]);
	if (!strcmp(argv[1], "server") && argc == 5)
		e.server = true;
	else if (strcmp(argv[1], "client") || argc < 6)
		usage(argv[0]);
	e.gid_index = strtol(argv[3], &end, 0);
	if (*end || e.gid_index < 0)
		usage(argv[0]);
	port = strtol(argv[e.server ? 4 : 5], &end, 0);
	if (*end || port <= 0 || port > 65535)
		usage(argv[0]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	ktap_header();
	srand48(getpid() ^ (long)now_ms());

	e.ctx = open_named(argv[2]);
	if (!e.ctx)
		fatal("open the device", errno);
	if (ibv_query_port(e.ctx, PORT, &e.port) ||
	    ibv_query_gid(e.ctx, PORT, e.gid_index, &e.gid))
		fatal("query the port and the GID", errno);
	e.pd = ibv_alloc_pd(e.ctx);
	if (!e.pd)
		fatal("allocate a PD", errno);
	ktap_diag("%s: %s, GID index %d, active MTU %d", argv[1], argv[2],
		  e.gid_index, 128 << e.port.active_mtu);

	if (e.server)
		run_server(&e, port);
	else
		run_client(&e, argv[4], port, argc - 6, argv + 6);
	ktap_diag("%s: %u failures", argv[1], ktap_failures());
	return exit_status();
}
