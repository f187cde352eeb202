// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_mcast: UD multicast between two ports, every byte checked.  One
 * process drives both (RDMA devices are visible from every namespace):
 *
 *   vhca_mcast DEV0 GID_INDEX0 DEV1 GID_INDEX1
 *   vhca_mcast send DEV GID_INDEX IPV4_GROUP COUNT
 *
 * The second form only sends COUNT datagrams of 100 bytes to a group with
 * the RDMA CM's Q_Key for UDP ids, as mckey -s does, but waits for each
 * to complete: mckey's sender posts them unsignaled and leaves, and a
 * device that sends from a work item (rdma_rxe) loses what it had not
 * sent yet when the QP goes.
 *
 * Checks: the multicast limits are reported; a sender QP on DEV0 sends
 * datagrams to a group (the MGID of an IPv4 group for an IPv4 GID, else an
 * IPv6 one; DQPN 0xFFFFFF) with QPs of both ports attached: each attached
 * QP gets every datagram in a receive WQE of its own, GRH first (the
 * group's address as its destination), IBV_WC_GRH, src_qp the sender's,
 * every payload byte; the sender, attached too, gets its own copy; a QP
 * of DEV0 not attached gets nothing; a detached QP gets nothing more.
 * Refusals: attaching an RC QP or a unicast GID, and detaching a group the
 * QP is not in (EINVAL); the per-group, group and total limits (ENOMEM);
 * destroying a QP still attached (EBUSY, the core's); and a child that
 * fills the total and exits without detaching leaves the parent all of it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "vhca_test.h"

#define QKEY		0x11110000u
#define MCAST_QPN	0xffffffu
#define GRH_LEN		40
#define MSG_LEN		300
#define SLOT		512		/* a receive buffer: GRH and message */
#define NMSG		8
#define WAIT_MS		10000
#define QUIET_MS	1000
#define MAX_QPS		64

struct port {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	int gid_index;
};

/* A UD QP with CQs and NMSG receive slots of its own. */
struct member {
	struct port *p;
	struct ibv_cq *scq;		/* sends */
	struct ibv_cq *cq;		/* receives */
	struct ibv_qp *qp;
	uint32_t base;			/* its slots in p->buf */
};

static void __attribute__((noreturn)) fatal(const char *what)
{
	result(false, what, "%s", strerror(errno ? errno : EIO));
	exit(exit_status());
}

static void port_open(struct port *p, const char *name, int gid_index)
{
	struct ibv_port_attr attr;

	p->gid_index = gid_index;
	p->ctx = open_port(name, 1, gid_index, &attr, &p->gid);
	if (!p->ctx) {
		errno = errno ? errno : ENODEV;
		fatal(name);
	}
	p->pd = ibv_alloc_pd(p->ctx);
	p->buf = calloc(MAX_QPS, NMSG * SLOT);
	p->mr = p->pd && p->buf ? ibv_reg_mr(p->pd, p->buf, MAX_QPS * NMSG * SLOT,
					     IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!p->mr)
		fatal("PD, MR");
}

static struct ibv_qp *ud_qp(struct port *p, struct ibv_cq *scq,
			    struct ibv_cq *cq, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr init = {
		.qp_type = type, .sq_sig_all = 1, .send_cq = scq, .recv_cq = cq,
		.cap = { .max_send_wr = NMSG + 1, .max_recv_wr = NMSG + 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(p->pd, &init);
}

static void open_member(struct member *m, struct port *p, uint32_t index)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = QKEY };

	m->p = p;
	m->base = index * NMSG * SLOT;
	m->scq = ibv_create_cq(p->ctx, NMSG + 1, NULL, NULL, 0);
	m->cq = ibv_create_cq(p->ctx, NMSG + 1, NULL, NULL, 0);
	m->qp = m->scq && m->cq ? ud_qp(p, m->scq, m->cq, IBV_QPT_UD) : NULL;
	if (!m->qp)
		fatal("CQ and UD QP");
	if (ibv_modify_qp(m->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		fatal("UD QP to INIT");
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(m->qp, &a, IBV_QP_STATE))
		fatal("UD QP to RTR");
	a.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(m->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		fatal("UD QP to RTS");
}

static void close_member(struct member *m)
{
	ibv_destroy_qp(m->qp);
	ibv_destroy_cq(m->scq);
	ibv_destroy_cq(m->cq);
}

static uint8_t pat(uint32_t seed, uint32_t i)
{
	return (uint8_t)(i * 13 + seed * 101 + 7);
}

static void post_recvs(struct member *m)
{
	struct ibv_sge sge = { .length = SLOT, .lkey = m->p->mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;
	uint32_t i;

	for (i = 0; i < NMSG; i++) {
		memset(m->p->buf + m->base + i * SLOT, 0xee, SLOT);
		sge.addr = (uintptr_t)m->p->buf + m->base + i * SLOT;
		wr.wr_id = i;
		if (ibv_post_recv(m->qp, &wr, &bad))
			fatal("ibv_post_recv");
	}
}

/*
 * n datagrams received by m, in order, from QP src of address sgid to
 * group mgid, seeds first..first+n-1: false and one result saying why if
 * any is missing or wrong.
 */
static bool received(struct member *m, const char *who, uint32_t src,
		     const union ibv_gid *sgid, const union ibv_gid *mgid,
		     uint32_t first, uint32_t n)
{
	bool v4 = !memcmp(mgid->raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12);
	const uint8_t *slot, *grh;
	struct ibv_wc wc;
	char what[96];
	uint32_t i, k;

	snprintf(what, sizeof(what), "%s gets its copy of each of %u datagrams",
		 who, n);
	for (i = 0; i < n; i++) {
		if (poll1(m->cq, &wc, WAIT_MS) != 1) {
			result(false, what, "datagram %u: no completion", i);
			return false;
		}
		slot = m->p->buf + m->base + wc.wr_id * SLOT;
		grh = slot;
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
		    wc.byte_len != GRH_LEN + MSG_LEN ||
		    !(wc.wc_flags & IBV_WC_GRH) || wc.src_qp != src ||
		    wc.qp_num != m->qp->qp_num) {
			result(false, what,
			       "datagram %u: %s opcode %d byte_len %u flags %#x src_qp %u qp_num %u",
			       i, ibv_wc_status_str(wc.status), wc.opcode,
			       wc.byte_len, wc.wc_flags, wc.src_qp, wc.qp_num);
			return false;
		}
		if (v4 ? grh[20] != 0x45 || memcmp(grh + 32, sgid->raw + 12, 4) ||
			 memcmp(grh + 36, mgid->raw + 12, 4) :
			 (grh[0] >> 4) != 6 || memcmp(grh + 8, sgid->raw, 16) ||
			 memcmp(grh + 24, mgid->raw, 16)) {
			result(false, what,
			       "datagram %u: the GRH is not from the sender to the group",
			       i);
			return false;
		}
		for (k = 0; k < MSG_LEN; k++)
			if (slot[GRH_LEN + k] != pat(first + i, k)) {
				result(false, what,
				       "datagram %u (seed %u): byte %u is %#x, expected %#x",
				       i, first + i, k, slot[GRH_LEN + k],
				       pat(first + i, k));
				return false;
			}
	}
	result(true, what, "%s", "");
	return true;
}

static void nothing(struct member *m, const char *what)
{
	struct ibv_wc wc = { 0 };

	result(poll1(m->cq, &wc, QUIET_MS) == 0, what, "wr_id %llu status %s",
	       (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
}

/* Send n datagrams of seeds first.. from m to the group (ah). */
static void send_group(struct member *m, struct ibv_ah *ah, uint32_t first,
		       uint32_t n)
{
	uint32_t at = (MAX_QPS - 1) * NMSG * SLOT, i, k;
	struct ibv_sge sge = { .length = MSG_LEN, .lkey = m->p->mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.wr.ud = { .ah = ah, .remote_qpn = MCAST_QPN,
			   .remote_qkey = QKEY },
	}, *bad;
	struct ibv_wc wc;

	for (i = 0; i < n; i++) {
		sge.addr = (uintptr_t)m->p->buf + at + i * SLOT;
		for (k = 0; k < MSG_LEN; k++)
			m->p->buf[at + i * SLOT + k] = pat(first + i, k);
		wr.wr_id = 1000 + first + i;
		if (ibv_post_send(m->qp, &wr, &bad))
			fatal("ibv_post_send");
	}
	for (i = 0; i < n; i++)
		if (poll1(m->scq, &wc, WAIT_MS) != 1 ||
		    wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_SEND) {
			result(false, "the sends to the group complete",
			       "send %u: %s", i, ibv_wc_status_str(wc.status));
			return;
		}
	result(true, "the sends to the group complete", "%s", "");
}

/* Group number i: an administratively scoped IPv4 group, or IPv6 one. */
static union ibv_gid group(const struct port *p, uint32_t i)
{
	union ibv_gid g = { 0 };

	if (!memcmp(p->gid.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12)) {
		g.raw[10] = g.raw[11] = 0xff;
		g.raw[12] = 239;
		g.raw[13] = 77;
		g.raw[14] = i >> 8;
		g.raw[15] = i;
	} else {
		g.raw[0] = 0xff;
		g.raw[1] = 0x15;
		g.raw[14] = i >> 8;
		g.raw[15] = i;
	}
	return g;
}

/*
 * Attach QPs qps[0..nq) to groups 1..ng of p until total are attached or
 * one is refused (its errno in *err).  Returns the number attached.
 */
static uint32_t attach_n(const struct port *p, struct ibv_qp **qps,
			 uint32_t nq, uint32_t ng, uint32_t total, int *err)
{
	union ibv_gid g;
	uint32_t n = 0, q, i;

	*err = 0;
	for (i = 1; i <= ng && n < total && !*err; i++)
		for (q = 0; q < nq && n < total && !*err; q++) {
			g = group(p, i);
			*err = ibv_attach_mcast(qps[q], &g, 0);
			n += !*err;
		}
	return n;
}

/*
 * attach_n() up to total: all must succeed, and one more (a new QP-group
 * pair) must be refused with ENOMEM.
 */
static void fill_total(struct port *p, struct ibv_qp **qps, uint32_t nq,
		       uint32_t ng, uint32_t total)
{
	uint32_t n, q;
	union ibv_gid g;
	int err;

	n = attach_n(p, qps, nq, ng, total, &err);
	if (err) {
		result(false, "attachments up to max_total_mcast_qp_attach",
		       "attachment %u: %s", n, strerror(err));
		return;
	}
	result(n == total, "attachments up to max_total_mcast_qp_attach",
	       "%u of %u", n, total);
	g = group(p, ng);
	err = ibv_attach_mcast(qps[nq - 1], &g, 0);
	if (!err)
		err = -1;
	for (q = 0; q < nq && err == -1; q++) {
		err = ibv_attach_mcast(qps[q], &g, 0);
		if (!err)
			err = -1;
	}
	result(err == ENOMEM, "... and one more: ENOMEM", "%s",
	       err == -1 ? "accepted" : strerror(err));
}

static void limits(struct port *p, const struct ibv_device_attr *da)
{
	uint32_t a = da->max_mcast_qp_attach, m = da->max_mcast_grp;
	uint32_t t = da->max_total_mcast_qp_attach, nq, i;
	struct ibv_qp *qps[MAX_QPS];
	struct ibv_cq *cq;
	union ibv_gid g;
	pid_t child;
	int err, st;

	nq = a + 1;
	if (nq > MAX_QPS || t > (uint64_t)a * m) {
		result(false, "the limits fit this test", "%u %u %u", a, m, t);
		return;
	}
	cq = ibv_create_cq(p->ctx, 16, NULL, NULL, 0);
	for (i = 0; cq && i < nq; i++)
		if (!(qps[i] = ud_qp(p, cq, cq, IBV_QPT_UD)))
			fatal("UD QPs for the limits");

	/* max_mcast_qp_attach QPs in one group, then one too many. */
	g = group(p, 1);
	for (i = 0, err = 0; i < a && !err; i++)
		err = ibv_attach_mcast(qps[i], &g, 0);
	result(!err, "max_mcast_qp_attach QPs attach to one group", "%s",
	       strerror(err));
	err = ibv_attach_mcast(qps[a], &g, 0);
	result(err == ENOMEM, "... and one QP more: ENOMEM", "%s",
	       err ? strerror(err) : "accepted");
	for (i = 0, err = 0; i < a && !err; i++)
		err = ibv_detach_mcast(qps[i], &g, 0);
	result(!err, "... all detach again", "%s", strerror(err));

	/* One QP in max_mcast_grp groups, then one group too many. */
	for (i = 1, err = 0; i <= m && !err; i++) {
		g = group(p, i);
		err = ibv_attach_mcast(qps[0], &g, 0);
	}
	result(!err, "one QP attaches to max_mcast_grp groups", "%s",
	       strerror(err));
	g = group(p, m + 1);
	err = ibv_attach_mcast(qps[0], &g, 0);
	result(err == ENOMEM, "... and to one group more: ENOMEM", "%s",
	       err ? strerror(err) : "accepted");
	for (i = 1, err = 0; i <= m && !err; i++) {
		g = group(p, i);
		err = ibv_detach_mcast(qps[0], &g, 0);
	}
	result(!err, "... and detaches from all", "%s", strerror(err));

	/* The total, in a child that exits attached; then here. */
	fflush(stdout);
	child = fork();
	if (child == 0) {
		struct port c = { 0 };
		struct ibv_cq *ccq;

		c.ctx = open_named(ibv_get_device_name(p->ctx->device));
		c.pd = c.ctx ? ibv_alloc_pd(c.ctx) : NULL;
		c.gid = p->gid;
		ccq = c.pd ? ibv_create_cq(c.ctx, 16, NULL, NULL, 0) : NULL;
		for (i = 0; ccq && i < nq; i++)
			if (!(qps[i] = ud_qp(&c, ccq, ccq, IBV_QPT_UD)))
				_exit(2);
		_exit(ccq && attach_n(&c, qps, nq - 1, m, t, &err) == t ? 0 : 1);
	}
	st = -1;
	if (child > 0)
		waitpid(child, &st, 0);
	result(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	       "a process fills max_total_mcast_qp_attach and exits attached",
	       "status %#x", st);
	fill_total(p, qps, nq - 1, m, t);
	err = ibv_destroy_qp(qps[0]);
	result(err == EBUSY, "destroying a QP still attached: EBUSY", "%s",
	       err ? strerror(err) : "destroyed");
	/* Left attached: the process's exit detaches them. */
}

/* The second form: see the top comment. */
static int send_only(const char *dev, int gid_index, const char *group,
		     uint32_t count)
{
	struct ibv_ah_attr av = { .is_global = 1, .port_num = 1,
				  .grh = { .hop_limit = 64 } };
	struct ibv_sge sge = { .length = 100 };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.wr.ud = { .remote_qpn = MCAST_QPN, .remote_qkey = 0x01234567 },
	}, *bad;
	struct member m = { 0 };
	struct port p = { 0 };
	struct ibv_wc wc;
	uint32_t i;

	port_open(&p, dev, gid_index);
	open_member(&m, &p, 0);
	av.grh.sgid_index = gid_index;
	av.grh.dgid.raw[10] = av.grh.dgid.raw[11] = 0xff;
	if (inet_pton(AF_INET, group, av.grh.dgid.raw + 12) != 1) {
		errno = EINVAL;
		fatal(group);
	}
	wr.wr.ud.ah = ibv_create_ah(p.pd, &av);
	if (!wr.wr.ud.ah)
		fatal("ibv_create_ah to the group");
	sge.addr = (uintptr_t)p.buf;
	sge.lkey = p.mr->lkey;
	for (i = 0; i < count; i++) {
		if (ibv_post_send(m.qp, &wr, &bad))
			fatal("ibv_post_send");
		if (poll1(m.scq, &wc, WAIT_MS) != 1 ||
		    wc.status != IBV_WC_SUCCESS) {
			printf("vhca_mcast: send %u did not complete (%s)\n",
			       i, ibv_wc_status_str(wc.status));
			return 1;
		}
	}
	printf("vhca_mcast: %u datagrams sent\n", count);
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_ah_attr av = { .is_global = 1, .port_num = 1,
				  .grh = { .hop_limit = 64 } };
	struct member s = { 0 }, in0 = { 0 }, out0 = { 0 }, in1 = { 0 },
		      in2 = { 0 };
	struct port p0 = { 0 }, p1 = { 0 };
	struct ibv_device_attr da;
	struct ibv_qp *rc;
	struct ibv_ah *ah;
	union ibv_gid g;
	int err;

	/* Its output in mckey's company: plain lines, no KTAP. */
	if (argc == 6 && !strcmp(argv[1], "send"))
		return send_only(argv[2], atoi(argv[3]), argv[4], atoi(argv[5]));
	if (argc != 5) {
		fprintf(stderr, "usage: %s DEV0 GID0 DEV1 GID1\n", argv[0]);
		return 2;
	}
	ktap_header();
	port_open(&p0, argv[1], atoi(argv[2]));
	port_open(&p1, argv[3], atoi(argv[4]));
	if (ibv_query_device(p1.ctx, &da))
		fatal("ibv_query_device");
	result(da.max_mcast_grp > 0 && da.max_mcast_qp_attach > 0 &&
	       da.max_total_mcast_qp_attach >= da.max_mcast_qp_attach,
	       "multicast limits reported", "grp %d qp_attach %d total %d",
	       da.max_mcast_grp, da.max_mcast_qp_attach,
	       da.max_total_mcast_qp_attach);

	open_member(&s, &p0, 0);
	open_member(&in0, &p0, 1);
	open_member(&out0, &p0, 2);
	open_member(&in1, &p1, 3);
	open_member(&in2, &p1, 4);
	g = group(&p0, 0);
	err = ibv_attach_mcast(s.qp, &g, 0) ?: ibv_attach_mcast(in0.qp, &g, 0) ?:
	      ibv_attach_mcast(in1.qp, &g, 0) ?: ibv_attach_mcast(in2.qp, &g, 0);
	result(!err, "four UD QPs of two ports attach to a group", "%s",
	       strerror(err));
	av.grh.dgid = g;
	av.grh.sgid_index = p0.gid_index;
	ah = ibv_create_ah(p0.pd, &av);
	if (!ah)
		fatal("ibv_create_ah to the group");
	post_recvs(&s);
	post_recvs(&in0);
	post_recvs(&out0);
	post_recvs(&in1);
	post_recvs(&in2);

	send_group(&s, ah, 0, NMSG - 1);
	received(&in1, "a QP of the other port", s.qp->qp_num, &p0.gid, &g, 0,
		 NMSG - 1);
	received(&in2, "a second QP of the other port", s.qp->qp_num, &p0.gid,
		 &g, 0, NMSG - 1);
	received(&in0, "a QP of the sender's port", s.qp->qp_num, &p0.gid, &g,
		 0, NMSG - 1);
	/*
	 * Multicast loopback: a member gets what it sends, as with rdma_rxe
	 * (IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK exists to turn it off).
	 */
	received(&s, "the sending QP, attached,", s.qp->qp_num, &p0.gid, &g, 0,
		 NMSG - 1);
	nothing(&out0, "a QP not attached gets nothing");

	err = ibv_detach_mcast(in2.qp, &g, 0);
	result(!err, "detach one QP", "%s", strerror(err));
	err = ibv_detach_mcast(in2.qp, &g, 0);
	result(err == EINVAL, "... detaching it again: EINVAL", "%s",
	       err ? strerror(err) : "accepted");
	send_group(&s, ah, NMSG - 1, 1);
	received(&in1, "after the detach, an attached QP", s.qp->qp_num,
		 &p0.gid, &g, NMSG - 1, 1);
	nothing(&in2, "... and the detached one gets nothing");

	rc = ud_qp(&p1, in1.scq, in1.cq, IBV_QPT_RC);
	err = rc ? ibv_attach_mcast(rc, &g, 0) : errno;
	result(err == EINVAL, "attaching an RC QP: EINVAL", "%s",
	       err ? strerror(err) : "accepted");
	if (rc)
		ibv_destroy_qp(rc);
	err = ibv_attach_mcast(in2.qp, &p1.gid, 0);
	result(err == EINVAL, "attaching to a unicast GID: EINVAL", "%s",
	       err ? strerror(err) : "accepted");

	ibv_detach_mcast(s.qp, &g, 0);
	ibv_detach_mcast(in0.qp, &g, 0);
	ibv_detach_mcast(in1.qp, &g, 0);
	ibv_destroy_ah(ah);
	close_member(&s);
	close_member(&in0);
	close_member(&out0);
	close_member(&in1);
	close_member(&in2);

	limits(&p1, &da);
	return exit_status();
}
