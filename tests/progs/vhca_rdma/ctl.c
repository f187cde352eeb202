// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* vhca_rdma: the control channel, fixed records, big-endian on the wire. */
#include "rdma.h"

static const char *const ctl_names[] = {
	[CTL_TEST] = "TEST", [CTL_INFO] = "INFO", [CTL_READY] = "READY",
	[CTL_DONE] = "DONE", [CTL_QUIT] = "QUIT",
};

struct wire {
	uint32_t type, arg, qpn, psn;
	uint8_t gid[16];
	uint64_t addr[NUM_RMR];
	uint32_t rkey[NUM_RMR], len[NUM_RMR];
} __attribute__((packed));

void send_ctl(int fd, const struct ctl *c)
{
	struct wire w = {
		.type = htobe32(c->type), .arg = htobe32(c->arg),
		.qpn = htobe32(c->qpn), .psn = htobe32(c->psn),
	};
	const char *p = (const char *)&w;
	size_t left = sizeof(w);
	ssize_t n;
	int i;

	memcpy(w.gid, c->gid.raw, sizeof(w.gid));
	for (i = 0; i < NUM_RMR; i++) {
		w.addr[i] = htobe64(c->addr[i]);
		w.rkey[i] = htobe32(c->rkey[i]);
		w.len[i] = htobe32(c->len[i]);
	}
	while (left) {
		n = send(fd, p, left, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			fatal("control channel: send", errno);
		p += n;
		left -= n;
	}
}

/*
 * Receives a record of type @want; false on an orderly close before one
 * (only when @eof_ok), fatal otherwise.
 */
bool recv_ctl(int fd, struct ctl *c, uint32_t want, bool eof_ok)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct wire w;
	char *p = (char *)&w, msg[96];
	size_t got = 0;
	ssize_t n;
	int i;

	while (got < sizeof(w)) {
		if (poll(&pfd, 1, CTL_WAIT_MS) != 1)
			fatal("control channel: peer silent", ETIMEDOUT);
		n = recv(fd, p + got, sizeof(w) - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 && !got && eof_ok)
			return false;
		if (n <= 0)
			fatal("control channel: closed early", n ? errno :
			      ECONNRESET);
		got += n;
	}
	c->type = be32toh(w.type);
	c->arg = be32toh(w.arg);
	c->qpn = be32toh(w.qpn);
	c->psn = be32toh(w.psn);
	memcpy(c->gid.raw, w.gid, sizeof(w.gid));
	for (i = 0; i < NUM_RMR; i++) {
		c->addr[i] = be64toh(w.addr[i]);
		c->rkey[i] = be32toh(w.rkey[i]);
		c->len[i] = be32toh(w.len[i]);
	}
	if (c->type == want)
		return true;
	if (want == CTL_TEST && c->type == CTL_QUIT)
		return false;
	snprintf(msg, sizeof(msg), "control channel: got %s, expected %s",
		 c->type < CTL_QUIT + 1 && c->type ? ctl_names[c->type] : "?",
		 ctl_names[want]);
	fatal(msg, EPROTO);
}

void send_simple(int fd, uint32_t type, uint32_t arg)
{
	struct ctl c = { .type = type, .arg = arg };

	send_ctl(fd, &c);
}
