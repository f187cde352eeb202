// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_peer: only an RC QP's peer may talk to it.
 *
 *   vhca_peer VICTIM GID_INDEX PEER GID_INDEX [NETNS]
 *
 * Connects RC QP pairs between the ports VICTIM and PEER (RoCE v2 IPv4
 * GIDs; both devices in this process), each victim QP with a remote-write
 * MR region of known contents, and attacks one pair per way in, with the
 * real QPN, rkey, VA and next PSN (what a guess would have to find):
 *
 *   socket  an unprivileged process (uid and gid 65534, no groups) binds
 *           a UDP socket to the peer's address and sends a crafted WRITE
 *           (roce.h), then a forged ACK and a forged NAK, to the victim;
 *   bound   the same, the socket also bound to the peer's netdev
 *           (SO_BINDTODEVICE, unprivileged since Linux 5.7): the datagrams
 *           leave by the peer's netdev and arrive on the victim's, from
 *           the peer's address, which only local delivery may bring;
 *   netns   the same from network namespace NETNS (a path such as
 *           /run/netns/evil), another host: root there, the peer's
 *           address spoofed (IP_TRANSPARENT);
 *   qp      another QP of the peer's port, connected to the victim QP
 *           with the peer's addresses, posts an RDMA WRITE.
 *
 * Each must leave the victim's region unchanged; the socket and netns
 * packets must reach VICTIM (rx_packets) and be counted in rx_wrong_peer
 * there.  Then every pair must still work: a WRITE and a SEND each way,
 * every byte verified.  KTAP on stdout (ktap.h); exit status: failures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "roce.h"
#include "vhca_test.h"

#define PORT		1
#define REGION		256		/* bytes of a pair's MR region */
#define LEN		64		/* bytes each attack writes */
#define CANARY		0xa5
#define NOBODY		65534
#define WC_WAIT_MS	60000

enum { A_SOCKET, A_BOUND, A_NETNS, A_QP, N_PAIRS };
static const char *const attack_names[N_PAIRS] = {
	"socket", "bound", "netns", "qp"
};

struct port {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int gid_index;
	union ibv_gid gid;
	char ip[INET_ADDRSTRLEN];
	char ndev[64];			/* the GID's netdev */
	uint8_t *buf;			/* N_PAIRS regions, then a receive area */
	struct ibv_mr *mr;
};

struct pair {
	struct ibv_qp *v, *p;		/* victim's, peer's */
	uint32_t v_psn, p_psn;		/* their first send PSNs */
};

static void __attribute__((noreturn)) fatal(const char *what, int err)
{
	result(false, what, "%s", strerror(err ? err : EIO));
	exit(exit_status());
}

/* A hardware counter of the port, -1 when it does not exist. */
static long long counter(const struct port *pt, const char *name)
{
	return hw_counter(pt->name, PORT, name);
}

/* Wait up to 5 s until counter name has grown by want since from. */
static long long counter_grew(const struct port *pt, const char *name,
			      long long from, long long want)
{
	double end = now_ms() + 5000;
	long long v;

	do {
		v = counter(pt, name);
		if (v >= 0 && v - from >= want)
			break;
		usleep(20000);
	} while (now_ms() < end);
	return v < 0 ? v : v - from;
}

static void port_open(struct port *pt, const char *name, const char *gidx)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct in_addr a;
	char path[256];
	FILE *f;
	int i;

	pt->name = name;
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			pt->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!pt->ctx)
		fatal("open the device", ENODEV);
	pt->gid_index = atoi(gidx);
	if (ibv_query_gid(pt->ctx, PORT, pt->gid_index, &pt->gid))
		fatal("query the GID", errno);
	memcpy(&a, pt->gid.raw + 12, 4);
	inet_ntop(AF_INET, &a, pt->ip, sizeof(pt->ip));
	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/%d/gid_attrs/ndevs/%d", name,
		 PORT, pt->gid_index);
	f = fopen(path, "r");
	if (!f || !fgets(pt->ndev, sizeof(pt->ndev), f))
		fatal("read the GID's netdev", errno);
	pt->ndev[strcspn(pt->ndev, "\n")] = '\0';
	fclose(f);
	pt->pd = ibv_alloc_pd(pt->ctx);
	pt->cq = pt->pd ? ibv_create_cq(pt->ctx, 64, NULL, NULL, 0) : NULL;
	if (!pt->cq)
		fatal("allocate a PD and a CQ", errno);
	pt->buf = aligned_alloc(4096, 4096);
	if (!pt->buf)
		fatal("allocate the buffer", ENOMEM);
	memset(pt->buf, CANARY, 4096);
	pt->mr = ibv_reg_mr(pt->pd, pt->buf, 4096, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_WRITE);
	if (!pt->mr)
		fatal("register the remote-write MR", errno);
}

static struct ibv_qp *qp_new(struct port *pt)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.send_cq = pt->cq, .recv_cq = pt->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(pt->pd, &ia);

	if (!qp)
		fatal("create an RC QP", errno);
	return qp;
}

/*
 * qp of port from to qpn of port to: INIT, RTR (expecting rq_psn), RTS
 * (sending from sq_psn), retry_cnt retries of 2^12 x 4.096 us each.
 */
static void qp_connect(struct ibv_qp *qp, const struct port *from,
		       const struct port *to, uint32_t qpn, uint32_t rq_psn,
		       uint32_t sq_psn, int retry_cnt)
{
	const struct qp_path path = {
		.port = PORT, .sgid_index = from->gid_index, .dgid = to->gid,
		.mtu = IBV_MTU_1024, .dqpn = qpn,
		.rq_psn = rq_psn, .sq_psn = sq_psn,
		.access = IBV_ACCESS_REMOTE_WRITE,
		.rd_atomic = 1, .timeout = 12, .retry_cnt = retry_cnt,
		.rnr_retry = 7,
	};
	int ret = qp_rts(qp, &path);

	if (ret)
		fatal("connect a QP (RESET to RTS)", ret);
}

/* The next completion of cq within WC_WAIT_MS: false on timeout. */
static bool wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	double end = now_ms() + WC_WAIT_MS;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n > 0;
		usleep(1000);
	} while (now_ms() < end);
	return false;
}

static bool post_write(struct ibv_qp *qp, void *src, uint32_t lkey,
		       uint64_t va, uint32_t rkey, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)src, LEN, lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = va, .rkey = rkey },
	}, *bad;

	return !ibv_post_send(qp, &wr, &bad);
}

static bool region_is(const uint8_t *p, uint8_t v, size_t n)
{
	while (n--)
		if (*p++ != v)
			return false;
	return true;
}

/*
 * The attacker of the socket, bound and netns ways: in a child, enter
 * netns (and stay root, spoofing the source) or else drop to nobody, bind
 * to the peer's netdev for bound, and send what an attacker would: a WRITE of LEN
 * bytes 0x5a to the victim's region at the PSN it expects, a forged ACK
 * of the victim's next PSN and a forged NAK (invalid request).  The
 * packets it sent, or -1.
 */
static int inject(const struct port *v, const struct port *p,
		  const struct pair *pr, int region, const char *netns)
{
	const char *dev = region == A_BOUND ? p->ndev : NULL;
	uint8_t data[LEN];
	struct roce_pkt w = {
		.opcode = ROCE_RC_WRITE_ONLY, .dqpn = pr->v->qp_num,
		.psn = pr->p_psn, .ackreq = true, .has_reth = true,
		.va = (uintptr_t)v->buf + region * REGION, .rkey = v->mr->rkey,
		.dmalen = LEN, .payload = data, .paylen = LEN,
	};
	struct roce_pkt ack = {
		.opcode = ROCE_RC_ACK, .dqpn = pr->v->qp_num,
		.psn = pr->v_psn, .has_aeth = true,
		.syndrome = ROCE_AETH_ACK, .msn = 1,
	};
	struct roce_sock s;
	int status, fd;
	pid_t pid;

	memset(data, 0x5a, sizeof(data));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (netns) {
			fd = open(netns, O_RDONLY);
			if (fd < 0 || setns(fd, CLONE_NEWNET))
				_exit(101);
			close(fd);
		} else if (setgroups(0, NULL) ||
			   setresgid(NOBODY, NOBODY, NOBODY) ||
			   setresuid(NOBODY, NOBODY, NOBODY) ||
			   geteuid() != NOBODY) {
			_exit(102);
		}
		if (roce_open(&s, p->ip, netns != NULL) ||
		    (dev && setsockopt(s.fd, SOL_SOCKET, SO_BINDTODEVICE, dev,
				       strlen(dev))))
			_exit(103);
		if (roce_send(&s, v->ip, &w))
			_exit(104);
		if (roce_send(&s, v->ip, &ack))
			_exit(105);
		ack.syndrome = ROCE_AETH_NAK_INV;
		if (roce_send(&s, v->ip, &ack))
			_exit(106);
		roce_close(&s);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		ktap_diag("attacker exit status %d", WEXITSTATUS(status));
		return -1;
	}
	return 3;
}

static void attack_socket(const struct port *v, const struct port *p,
			  const struct pair *pr, int region, const char *netns)
{
	const char *name = attack_names[region];
	long long rx0 = counter(v, "rx_packets");
	long long wp0 = counter(v, "rx_wrong_peer");
	long long rx, wp;
	char what[256];
	int n;

	n = inject(v, p, pr, region, netns);
	snprintf(what, sizeof(what),
		 "%s: %s sends a WRITE, an ACK and a NAK from %s%s%s", name,
		 netns ? "root in another namespace" : "an unprivileged process",
		 p->ip, region == A_BOUND ? " through " : "",
		 region == A_BOUND ? p->ndev : "");
	result(n > 0, what, "the attacker failed");
	if (n <= 0)
		return;
	rx = counter_grew(v, "rx_packets", rx0, n);
	snprintf(what, sizeof(what), "%s: %s receives all %d", name, v->name, n);
	result(rx == n, what, "rx_packets grew by %lld", rx);
	wp = counter_grew(v, "rx_wrong_peer", wp0, n);
	snprintf(what, sizeof(what), "%s: rx_wrong_peer counts all %d", name, n);
	result(wp == n, what, "it grew by %lld", wp);
}

/* Another QP of the peer's port, with the peer's addresses. */
static void attack_qp(struct port *v, struct port *p, const struct pair *pr,
		      int region)
{
	struct ibv_qp *evil = qp_new(p);
	long long wp0 = counter(v, "rx_wrong_peer"), wp;
	uint8_t *src = p->buf + N_PAIRS * REGION;
	struct ibv_wc wc;
	bool ok;

	qp_connect(evil, p, v, pr->v->qp_num, pr->v_psn, pr->p_psn, 1);
	memset(src, 0x3c, LEN);
	ok = post_write(evil, src, p->mr->lkey,
			(uintptr_t)v->buf + region * REGION, v->mr->rkey, 99);
	result(ok, "qp: another QP of the peer's port posts a WRITE to the victim QP",
	       "%s", strerror(errno));
	if (!ok)
		return;
	ok = wait_wc(p->cq, &wc);
	result(ok && wc.wr_id == 99 && wc.status == IBV_WC_RETRY_EXC_ERR,
	       "qp: its WRITE fails with a retry error (never answered)",
	       "%s", ok ? ibv_wc_status_str(wc.status) : "no completion");
	wp = counter(v, "rx_wrong_peer") - wp0;
	result(wp > 0, "qp: rx_wrong_peer counts its packets",
	       "it grew by %lld", wp);
	ibv_destroy_qp(evil);
}

/* The pair still works: a WRITE and a SEND each way, bytes verified. */
static void traffic(struct port *v, struct port *p, const struct pair *pr,
		    int region)
{
	const char *name = attack_names[region];
	uint8_t *vreg = v->buf + region * REGION;
	uint8_t *prcv = p->buf + N_PAIRS * REGION + 128;
	uint8_t *vrcv = v->buf + N_PAIRS * REGION;
	uint8_t *psrc = p->buf + region * REGION;
	struct ibv_sge rs = { (uintptr_t)vrcv, LEN, v->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &rs, .num_sge = 1 };
	struct ibv_sge ss = { (uintptr_t)psrc, LEN, p->mr->lkey };
	struct ibv_send_wr swr = {
		.wr_id = 8, .sg_list = &ss, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bs;
	struct ibv_recv_wr *br;
	struct ibv_wc wc;
	char what[128];
	bool ok;
	int i;

	for (i = 0; i < LEN; i++)
		psrc[i] = (uint8_t)(i * 7 + region + 1);
	memset(vrcv, CANARY, LEN);
	ok = post_write(pr->p, psrc, p->mr->lkey, (uintptr_t)vreg,
			v->mr->rkey, 1) && wait_wc(p->cq, &wc) &&
	     wc.status == IBV_WC_SUCCESS;
	ok = ok && !memcmp(vreg, psrc, LEN) &&
	     region_is(vreg + LEN, CANARY, REGION - LEN);
	snprintf(what, sizeof(what), "%s: the peer's WRITE lands, byte for byte", name);
	result(ok, what, "lost or wrong");

	ok = !ibv_post_recv(pr->v, &rwr, &br) && !ibv_post_send(pr->p, &swr, &bs) &&
	     wait_wc(p->cq, &wc) && wc.status == IBV_WC_SUCCESS &&
	     wait_wc(v->cq, &wc) && wc.status == IBV_WC_SUCCESS &&
	     wc.wr_id == 7 && wc.byte_len == LEN && !memcmp(vrcv, psrc, LEN);
	snprintf(what, sizeof(what), "%s: the peer's SEND arrives, byte for byte", name);
	result(ok, what, "lost or wrong");

	/* And the victim's requester, which got the forged ACK and NAK. */
	rs = (struct ibv_sge){ (uintptr_t)prcv, LEN, p->mr->lkey };
	ss = (struct ibv_sge){ (uintptr_t)vreg, LEN, v->mr->lkey };
	memset(prcv, CANARY, LEN);
	ok = !ibv_post_recv(pr->p, &rwr, &br) && !ibv_post_send(pr->v, &swr, &bs) &&
	     wait_wc(v->cq, &wc) && wc.status == IBV_WC_SUCCESS &&
	     wait_wc(p->cq, &wc) && wc.status == IBV_WC_SUCCESS &&
	     wc.byte_len == LEN && !memcmp(prcv, vreg, LEN);
	snprintf(what, sizeof(what), "%s: the victim's SEND arrives, byte for byte", name);
	result(ok, what, "lost or wrong");
}

int main(int argc, char **argv)
{
	struct port v = { 0 }, p = { 0 };
	struct pair pr[N_PAIRS];
	char what[128];
	int i;

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: %s VICTIM GID_INDEX PEER GID_INDEX [NETNS]\n",
			argv[0]);
		return 2;
	}
	ktap_header();
	srand48(getpid() ^ time(NULL));
	port_open(&v, argv[1], argv[2]);
	port_open(&p, argv[3], argv[4]);
	result(counter(&v, "rx_wrong_peer") >= 0,
	       "the victim's port has the rx_wrong_peer counter", "missing");
	for (i = 0; i < N_PAIRS; i++) {
		pr[i].v = qp_new(&v);
		pr[i].p = qp_new(&p);
		pr[i].v_psn = lrand48() & 0xffffff;
		pr[i].p_psn = lrand48() & 0xffffff;
		qp_connect(pr[i].v, &v, &p, pr[i].p->qp_num, pr[i].p_psn,
			   pr[i].v_psn, 7);
		qp_connect(pr[i].p, &p, &v, pr[i].v->qp_num, pr[i].v_psn,
			   pr[i].p_psn, 7);
		ktap_diag("%s: victim QPN %#x, peer QPN %#x, rkey %#x",
			  attack_names[i], pr[i].v->qp_num, pr[i].p->qp_num,
			  v.mr->rkey);
	}

	attack_socket(&v, &p, &pr[A_SOCKET], A_SOCKET, NULL);
	attack_socket(&v, &p, &pr[A_BOUND], A_BOUND, NULL);
	if (argc == 6)
		attack_socket(&v, &p, &pr[A_NETNS], A_NETNS, argv[5]);
	else
		ktap_skip("netns: the attack from another namespace", "no NETNS");
	attack_qp(&v, &p, &pr[A_QP], A_QP);
	for (i = 0; i < N_PAIRS; i++) {
		snprintf(what, sizeof(what), "%s: the victim's region is unchanged",
			 attack_names[i]);
		result(region_is(v.buf + i * REGION, CANARY, REGION), what,
		       "written");
	}
	for (i = 0; i < N_PAIRS; i++)
		traffic(&v, &p, &pr[i], i);
	return exit_status();
}
