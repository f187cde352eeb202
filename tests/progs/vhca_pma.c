// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_pma: query a port's performance management agent (PMA) over the
 * wire, as a management tool on another host would: performance MADs sent
 * through the kernel's user MAD interface (/dev/infiniband/umadN, the
 * kernel's <rdma/ib_user_mad.h>) from a port's GSI QP to the GSI QP of the
 * port that owns a GID, with a GRH, as RoCE requires.  (perfquery cannot
 * do this on RoCE: it registers an SMP agent, which needs QP0, and RoCE
 * ports have none; it addresses by LID, without a GRH.)
 *
 *   vhca_pma DEV SGID_INDEX DGID
 *
 * From DEV's port 1 (its GID SGID_INDEX) to the port of DGID (an IPv6
 * address, as the GID table shows it; with IPv4 GIDs the kernel's MAD
 * layer does not match an answer to its request): Get ClassPortInfo,
 * PortCounters and PortCountersExtended, and a Set of PortCounters (a
 * reset, which the agent may refuse).  Each answer is a check (a GetResp
 * with the request's TID, the status expected); the fields print as
 * diagnostics, "# pc PortXmitData N", "# pcx PortXmitData N",
 * "# cpi CapMask 0xN", "# set status 0xN", for the script to compare with
 * rdma statistic.  The exit status is the number of failed checks.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <rdma/ib_user_mad.h>

#include "ktap.h"

#define MAD_SIZE		256
#define PMA_CLASS		0x04
#define METHOD_GET		0x01
#define METHOD_SET		0x02
#define METHOD_GET_RESP		0x81
#define ATTR_CLASS_PORT_INFO	0x0001
#define ATTR_PORT_COUNTERS	0x0012
#define ATTR_PORT_COUNTERS_EXT	0x001d
#define QP1_QKEY		0x80010000u
/* PMA attributes begin after the MAD header and 40 reserved octets. */
#define PMA_DATA		(24 + 40)

struct umad_buf {
	struct ib_user_mad_hdr hdr;
	uint8_t mad[MAD_SIZE];
};

static int fd, agent;
static uint8_t sgid_index, dgid[16];
static uint32_t next_tid = 0x1000;

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* open_umad DEV: the user MAD device of DEV's port 1, or -1. */
static int open_umad(const char *dev)
{
	char path[PATH_MAX], name[64];
	int found = -1;
	glob_t g;
	size_t i;

	if (glob("/sys/class/infiniband_mad/umad*", 0, NULL, &g))
		return -1;
	for (i = 0; i < g.gl_pathc && found < 0; i++) {
		int port = 0;
		FILE *f;

		snprintf(path, sizeof(path), "%s/ibdev", g.gl_pathv[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(name, sizeof(name), f))
			name[0] = 0;
		fclose(f);
		name[strcspn(name, "\n")] = 0;
		if (strcmp(name, dev))
			continue;
		snprintf(path, sizeof(path), "%s/port", g.gl_pathv[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%d", &port) != 1)
			port = 0;
		fclose(f);
		if (port != 1)
			continue;
		snprintf(path, sizeof(path), "/dev/infiniband/%s",
			 strrchr(g.gl_pathv[i], '/') + 1);
		found = open(path, O_RDWR);
		if (found < 0)
			ktap_diag("open %s: %s", path, strerror(errno));
	}
	globfree(&g);
	return found;
}

/*
 * request METHOD ATTR PORT_SELECT OUT: one MAD to DGID's GSI QP and its
 * answer in OUT (the MAD); 0, or -1 when none came (the reason printed).
 */
static int request(uint8_t method, uint16_t attr, uint8_t port_select,
		   uint8_t *out)
{
	struct umad_buf req, resp;
	uint32_t tid = next_tid++;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;

	memset(&req, 0, sizeof(req));
	req.hdr.id = agent;
	req.hdr.timeout_ms = 1000;
	req.hdr.retries = 3;
	req.hdr.qpn = htonl(1);
	req.hdr.qkey = htonl(QP1_QKEY);
	req.hdr.grh_present = 1;
	req.hdr.gid_index = sgid_index;
	req.hdr.hop_limit = 64;
	memcpy(req.hdr.gid, dgid, sizeof(dgid));
	req.mad[0] = 1;			/* BaseVersion */
	req.mad[1] = PMA_CLASS;
	req.mad[2] = 1;			/* ClassVersion */
	req.mad[3] = method;
	req.mad[12] = tid >> 24;	/* TID: the kernel sets its high half */
	req.mad[13] = tid >> 16;
	req.mad[14] = tid >> 8;
	req.mad[15] = tid;
	req.mad[16] = attr >> 8;
	req.mad[17] = attr;
	req.mad[PMA_DATA + 1] = port_select;
	if (method == METHOD_SET) {	/* CounterSelect: all of them */
		req.mad[PMA_DATA + 2] = 0xff;
		req.mad[PMA_DATA + 3] = 0xff;
	}
	if (write(fd, &req, sizeof(req)) != sizeof(req)) {
		ktap_diag("write: %s", strerror(errno));
		return -1;
	}
	if (poll(&pfd, 1, 10000) != 1) {
		ktap_diag("no answer within 10 s");
		return -1;
	}
	n = read(fd, &resp, sizeof(resp));
	if (n < (ssize_t)sizeof(resp.hdr)) {
		ktap_diag("read: %zd, %s", n, strerror(errno));
		return -1;
	}
	if (resp.hdr.status) {
		ktap_diag("send failed: status %u (%s)", resp.hdr.status,
			  strerror(resp.hdr.status));
		return -1;
	}
	if (n != sizeof(resp)) {
		ktap_diag("answer of %zd bytes", n);
		return -1;
	}
	memcpy(out, resp.mad, MAD_SIZE);
	if (get32(out + 12) != tid) {
		ktap_diag("answer to TID %#llx, asked %#x",
			  (unsigned long long)get64(out + 8), tid);
		return -1;
	}
	return 0;
}

/*
 * query NAME METHOD ATTR PORT_SELECT OUT STATUS: one request, answered by a
 * GetResp of the class with STATUS (any status when STATUS is -1); its
 * answer in OUT.  0 if so.
 */
static int query(const char *name, uint8_t method, uint16_t attr,
		 uint8_t port_select, uint8_t *out, int status)
{
	bool ok;

	if (request(method, attr, port_select, out)) {
		ktap_result(false, name, NULL);
		return -1;
	}
	ok = out[1] == PMA_CLASS && out[3] == METHOD_GET_RESP &&
	     (status < 0 || get16(out + 4) == status);
	ktap_result(ok, name, "class %#x method %#x status %#x", out[1], out[3],
		    get16(out + 4));
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct ib_user_mad_reg_req2 reg = { .qpn = 1 };
	uint8_t out[MAD_SIZE];
	const uint8_t *d = out + PMA_DATA;
	struct in6_addr a;

	if (argc != 4 || inet_pton(AF_INET6, argv[3], &a) != 1) {
		fprintf(stderr, "usage: vhca_pma DEV SGID_INDEX DGID\n");
		return 255;
	}
	memcpy(dgid, &a, sizeof(dgid));
	sgid_index = (uint8_t)atoi(argv[2]);
	fd = open_umad(argv[1]);
	if (fd < 0) {
		ktap_result(false, "the user MAD device of the port opens",
			    "none for %s port 1 (ib_umad loaded?)", argv[1]);
		return ktap_exit_status();
	}
	/* A client agent: no class registered, it gets its answers only. */
	if (ioctl(fd, IB_USER_MAD_REGISTER_AGENT2, &reg)) {
		ktap_result(false, "a MAD agent registers", "%s", strerror(errno));
		return ktap_exit_status();
	}
	agent = reg.id;

	if (!query("Get ClassPortInfo is answered", METHOD_GET,
		   ATTR_CLASS_PORT_INFO, 0, out, 0))
		ktap_diag("cpi CapMask %#06x", get16(d + 2));
	if (!query("Get PortCounters is answered", METHOD_GET,
		   ATTR_PORT_COUNTERS, 1, out, 0)) {
		ktap_diag("pc PortRcvErrors %u", get16(d + 8));
		ktap_diag("pc PortXmitData %u", get32(d + 24));
		ktap_diag("pc PortRcvData %u", get32(d + 28));
		ktap_diag("pc PortXmitPkts %u", get32(d + 32));
		ktap_diag("pc PortRcvPkts %u", get32(d + 36));
	}
	if (!query("Get PortCountersExtended is answered", METHOD_GET,
		   ATTR_PORT_COUNTERS_EXT, 1, out, 0)) {
		ktap_diag("pcx PortXmitData %llu", (unsigned long long)get64(d + 8));
		ktap_diag("pcx PortRcvData %llu", (unsigned long long)get64(d + 16));
		ktap_diag("pcx PortXmitPkts %llu", (unsigned long long)get64(d + 24));
		ktap_diag("pcx PortRcvPkts %llu", (unsigned long long)get64(d + 32));
	}
	/* A reset: answered, whatever the status; the script judges it. */
	if (!query("Set PortCounters is answered", METHOD_SET,
		   ATTR_PORT_COUNTERS, 1, out, -1))
		ktap_diag("set status %#06x", get16(out + 4));
	close(fd);
	return ktap_exit_status();
}
