// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz mtu: the MTU of DEV0's netdev moved among values around the
 * IB MTUs and below the smallest (68 to 9000) while an RC pair (DEV0 to
 * DEV1) carries SEND, RDMA WRITE and RDMA READ, half the batches over
 * the wire (vhca's force_wire parameter: ports of one namespace deliver
 * in the kernel otherwise, where no netdev MTU applies).  After every
 * change
 * query_port's active_mtu is the largest IB MTU whose packets fit the
 * netdev, 256 when none does (never 0); a UD SEND one byte to 4 KiB
 * longer than it fails (refused at post or an error completion, never
 * SUCCESS); every RC operation that completes SUCCESS moved its bytes
 * exactly, the others fail with an error completion within the stall
 * limit, and the pair is reconnected with the MTU of the moment.  The
 * netdev's MTU is put back at the end.
 */
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "fuzz.h"

#define RC_LEN		8192
#define RC_BATCH	4
#define ROCE_HDRS	96	/* what iboe_get_mtu() takes from a netdev MTU */

static const int mtus[] = { 68, 300, 351, 352, 353, 1023, 1024, 1119, 1120,
			    1280, 1500, 2143, 2144, 4191, 4192, 4200, 9000 };
#define NMTU	((int)(sizeof(mtus) / sizeof(mtus[0])))

enum { RC_SUCCESS, RC_ERROR, RC_CORRUPT, RC_STALL, NRCRES };

struct mtu_fuzz {
	struct port a, b;
	char ndev[IF_NAMESIZE];
	int sock, mtu0;
	struct ibv_pd *pa, *pb;
	struct ibv_cq *ca, *cb;
	struct ibv_qp *qa, *qb, *ua, *ub;
	struct ibv_ah *ah;
	struct ibv_mr *ma, *mb;
	uint8_t *bufa, *bufb;	/* RC_BATCH areas of RC_LEN each, and UD */
	uint32_t psn;
	int wire0;		/* force_wire before, -1: not there */
	bool bad;
	uint64_t set[NMTU], active[6], rc[3][NRCRES], ud_refused, ud_err, ud_ok,
		 reconnects, batches[2];
};


static int ndev_mtu(struct mtu_fuzz *f)
{
	struct ifreq r = { 0 };

	snprintf(r.ifr_name, sizeof(r.ifr_name), "%s", f->ndev);
	return ioctl(f->sock, SIOCGIFMTU, &r) ? -1 : r.ifr_mtu;
}

static int set_mtu(struct mtu_fuzz *f, int mtu)
{
	struct ifreq r = { .ifr_mtu = mtu };

	snprintf(r.ifr_name, sizeof(r.ifr_name), "%s", f->ndev);
	return ioctl(f->sock, SIOCSIFMTU, &r);
}

/* The netdev of DEV's GID gid (sysfs). */
static bool find_ndev(struct mtu_fuzz *f, const char *dev, int gid)
{
	char path[256];
	FILE *fp;
	bool ok;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/gid_attrs/ndevs/%d", dev, gid);
	fp = fopen(path, "r");
	if (!fp)
		return false;
	ok = fscanf(fp, "%15s", f->ndev) == 1;
	fclose(fp);
	return ok;
}

static int mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128 << m : 0;
}

/* What active_mtu must be for a netdev MTU. */
static enum ibv_mtu want_mtu(int ndev)
{
	enum ibv_mtu m;

	for (m = IBV_MTU_4096; m > IBV_MTU_256; m--)
		if (mtu_bytes(m) + ROCE_HDRS <= ndev)
			return m;
	return IBV_MTU_256;
}

static void fail(struct mtu_fuzz *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct mtu_fuzz *f, const char *fmt, ...)
{
	char s[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s, sizeof(s), fmt, ap);
	va_end(ap);
	ktap_diag("mtu: %s", s);
	f->bad = true;
}

/*
 * The RC pair reset and connected with the path MTU of the moment (the
 * smaller of the ports' active MTUs), fresh PSNs.
 */
static bool rc_reconnect(struct mtu_fuzz *f)
{
	enum ibv_mtu pmtu = f->a.attr.active_mtu < f->b.attr.active_mtu ?
			    f->a.attr.active_mtu : f->b.attr.active_mtu;
	struct ibv_qp_attr r = { .qp_state = IBV_QPS_RESET };
	struct ibv_qp_attr rtr = {
		.qp_state = IBV_QPS_RTR, .path_mtu = pmtu,
		.max_dest_rd_atomic = 4, .min_rnr_timer = 1,
	};
	struct ibv_qp_attr rts = {
		.qp_state = IBV_QPS_RTS, .timeout = 8, .retry_cnt = 2,
		.rnr_retry = 2, .max_rd_atomic = 4,
	};
	struct ibv_qp_attr init = {
		.qp_state = IBV_QPS_INIT, .port_num = PORT,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};
	int rtr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	int rts_mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
		       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		       IBV_QP_MAX_QP_RD_ATOMIC;
	int init_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			IBV_QP_ACCESS_FLAGS;
	uint32_t pa = f->psn, pb = f->psn + 0x1000;

	f->psn += 0x10000;
	f->reconnects++;
	if (ibv_modify_qp(f->qa, &r, IBV_QP_STATE) ||
	    ibv_modify_qp(f->qb, &r, IBV_QP_STATE) ||
	    ibv_modify_qp(f->qa, &init, init_mask) ||
	    ibv_modify_qp(f->qb, &init, init_mask))
		return false;
	rtr.ah_attr = av_to(&f->a, &f->b);
	rtr.dest_qp_num = f->qb->qp_num;
	rtr.rq_psn = pb & 0xffffff;
	if (ibv_modify_qp(f->qa, &rtr, rtr_mask))
		return false;
	rtr.ah_attr = av_to(&f->b, &f->a);
	rtr.dest_qp_num = f->qa->qp_num;
	rtr.rq_psn = pa & 0xffffff;
	if (ibv_modify_qp(f->qb, &rtr, rtr_mask))
		return false;
	rts.sq_psn = pa & 0xffffff;
	if (ibv_modify_qp(f->qa, &rts, rts_mask))
		return false;
	rts.sq_psn = pb & 0xffffff;
	return !ibv_modify_qp(f->qb, &rts, rts_mask);
}

static uint8_t pat(uint64_t it, uint32_t i)
{
	return (uint8_t)(it * 37 + i * 11 + (i >> 9));
}

static const char *const op_name[3] = { "SEND", "RDMA WRITE", "RDMA READ" };

/*
 * A batch of RC operations while the MTU moves (after the first is
 * posted, when move >= 0), then every completion checked: bytes exact on
 * SUCCESS.
 */
static bool rc_batch(struct mtu_fuzz *f, uint64_t it, int move)
{
	int op[RC_BATCH], i, n, got_a = 0, want_b = 0, got_b = 0, sent = 0;
	uint32_t len[RC_BATCH];
	int st[RC_BATCH];
	bool err = false;
	double end;
	uint32_t j;

	for (i = 0; i < RC_BATCH; i++) {
		uint8_t *src, *dst;
		struct ibv_sge s = { .lkey = f->ma->lkey };
		struct ibv_send_wr wr = { .wr_id = i, .sg_list = &s,
					  .num_sge = 1,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		op[i] = below(3);
		len[i] = 1 + below(RC_LEN);
		st[i] = -1;
		src = op[i] == 2 ? f->bufb + i * RC_LEN : f->bufa + i * RC_LEN;
		dst = op[i] == 2 ? f->bufa + i * RC_LEN : f->bufb + i * RC_LEN;
		for (j = 0; j < len[i]; j++)
			src[j] = pat(it + i, j);
		memset(dst, 0xee, RC_LEN);
		s.addr = (uintptr_t)f->bufa + i * RC_LEN;
		s.length = len[i];
		if (op[i] == 0) {
			struct ibv_sge rs = { .addr = (uintptr_t)dst,
					      .length = RC_LEN,
					      .lkey = f->mb->lkey };
			struct ibv_recv_wr rw = { .wr_id = i, .sg_list = &rs,
						  .num_sge = 1 }, *rbad;

			if (ibv_post_recv(f->qb, &rw, &rbad))
				return false;
			want_b++;
			wr.opcode = IBV_WR_SEND;
		} else {
			wr.opcode = op[i] == 1 ? IBV_WR_RDMA_WRITE :
				    IBV_WR_RDMA_READ;
			wr.wr.rdma.remote_addr = (uintptr_t)f->bufb + i * RC_LEN;
			wr.wr.rdma.rkey = f->mb->rkey;
		}
		if (ibv_post_send(f->qa, &wr, &bad))
			return false;
		if (!i && move >= 0 && set_mtu(f, mtus[move]))
			fail(f, "set the MTU of %s to %d: %s", f->ndev,
			     mtus[move], strerror(errno));
	}
	end = now_s() + VICTIM_STALL_S;
	/* A SEND that completed SUCCESS has completed its receive too. */
	while ((got_a < RC_BATCH || got_b < sent) && now_s() < end) {
		struct ibv_wc wc;

		n = ibv_poll_cq(f->ca, 1, &wc);
		if (n > 0 && wc.wr_id < RC_BATCH && st[wc.wr_id] < 0) {
			st[wc.wr_id] = wc.status;
			got_a++;
			sent += !op[wc.wr_id] && wc.status == IBV_WC_SUCCESS;
		} else if (n > 0) {
			fail(f, "unexpected completion wr_id %" PRIu64,
			     (uint64_t)wc.wr_id);
			got_a++;
		}
		n = ibv_poll_cq(f->cb, 1, &wc);
		if (n > 0) {
			got_b++;
			if (wc.status == IBV_WC_SUCCESS && wc.byte_len != len[wc.wr_id])
				fail(f, "SEND of %u bytes received with byte_len %u",
				     len[wc.wr_id], wc.byte_len);
		}
	}
	if (got_a < RC_BATCH || got_b < sent) {
		fail(f, "RC batch %" PRIu64 ": %d of %d completions, %d of %d receives in %d s",
		     it, got_a, RC_BATCH, got_b, sent, VICTIM_STALL_S);
		for (i = 0; i < RC_BATCH; i++)
			if (st[i] < 0)
				f->rc[op[i]][RC_STALL]++;
		err = true;
	}
	for (i = 0; i < RC_BATCH; i++) {
		const uint8_t *dst = op[i] == 2 ? f->bufa + i * RC_LEN :
					      f->bufb + i * RC_LEN;

		if (st[i] < 0)
			continue;
		if (st[i] != IBV_WC_SUCCESS) {
			f->rc[op[i]][RC_ERROR]++;
			err = true;
			continue;
		}
		for (j = 0; j < len[i] && dst[j] == pat(it + i, j); j++)
			;
		if (j < len[i]) {
			fail(f, "%s of %u bytes completed SUCCESS with byte %u 0x%02x, want 0x%02x (netdev MTU %d)",
			     op_name[op[i]], len[i], j, dst[j], pat(it + i, j),
			     ndev_mtu(f));
			f->rc[op[i]][RC_CORRUPT]++;
		} else {
			f->rc[op[i]][RC_SUCCESS]++;
		}
	}
	if (err || got_b < want_b) {
		/* Receives left over go with the reset. */
		while (ibv_poll_cq(f->cb, 1, &(struct ibv_wc){ 0 }) > 0)
			;
		return rc_reconnect(f);
	}
	return true;
}

/* query_port after the netdev's MTU became ndev. */
static void check_port(struct mtu_fuzz *f)
{
	int ndev = ndev_mtu(f);
	enum ibv_mtu want = want_mtu(ndev);

	if (ibv_query_port(f->a.ctx, PORT, &f->a.attr)) {
		fail(f, "query_port: %s", strerror(errno));
		return;
	}
	if (f->a.attr.active_mtu <= 5)
		f->active[f->a.attr.active_mtu]++;
	if (f->a.attr.active_mtu != want)
		fail(f, "netdev MTU %d: active_mtu %d (%d bytes), want %d bytes",
		     ndev, f->a.attr.active_mtu,
		     mtu_bytes(f->a.attr.active_mtu), mtu_bytes(want));
}

/* A UD SEND longer than the port's MTU: never SUCCESS. */
static void ud_long(struct mtu_fuzz *f)
{
	uint32_t mtu = mtu_bytes(f->a.attr.active_mtu);
	struct ibv_sge s = { .addr = (uintptr_t)f->bufa + RC_BATCH * RC_LEN,
			     .length = mtu + 1 + below(4096),
			     .lkey = f->ma->lkey };
	struct ibv_send_wr wr = { .wr_id = 77, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct ibv_wc wc;

	if (!mtu)
		return;
	wr.wr.ud.ah = f->ah;
	wr.wr.ud.remote_qpn = f->ub->qp_num;
	wr.wr.ud.remote_qkey = QKEY;
	if (ibv_post_send(f->ua, &wr, &bad)) {
		f->ud_refused++;
		return;
	}
	if (poll1(f->ca, &wc, VICTIM_STALL_S * 1000) != 1) {
		fail(f, "UD SEND of %u bytes over an MTU of %u: no completion",
		     s.length, mtu);
		return;
	}
	if (wc.status == IBV_WC_SUCCESS) {
		f->ud_ok++;
		fail(f, "UD SEND of %u bytes over an MTU of %u (netdev %d) completed SUCCESS",
		     s.length, mtu, ndev_mtu(f));
		return;
	}
	f->ud_err++;
	/* The error took the QP to ERR: back to RTS. */
	if (ibv_modify_qp(f->ua, &a, IBV_QP_STATE) ||
	    qp_connect(f->ua, &f->a, &f->b, 0))
		fail(f, "UD QP back to RTS: %s", strerror(errno));
}

static bool mtu_open(struct mtu_fuzz *f, char **dev)
{
	struct ibv_ah_attr av;

	if (port_open(&f->a, dev[0], atoi(dev[1])) ||
	    port_open(&f->b, dev[2], atoi(dev[3])) ||
	    !find_ndev(f, dev[0], atoi(dev[1])))
		return false;
	f->sock = socket(AF_INET, SOCK_DGRAM, 0);
	f->mtu0 = ndev_mtu(f);
	f->pa = ibv_alloc_pd(f->a.ctx);
	f->pb = ibv_alloc_pd(f->b.ctx);
	f->ca = ibv_create_cq(f->a.ctx, 64, NULL, NULL, 0);
	f->cb = ibv_create_cq(f->b.ctx, 64, NULL, NULL, 0);
	f->bufa = calloc(RC_BATCH + 1, RC_LEN);
	f->bufb = calloc(RC_BATCH + 1, RC_LEN);
	if (f->mtu0 < 0 || !f->pa || !f->pb || !f->ca || !f->cb || !f->bufa ||
	    !f->bufb)
		return false;
	f->ma = ibv_reg_mr(f->pa, f->bufa, (RC_BATCH + 1) * RC_LEN,
			   IBV_ACCESS_LOCAL_WRITE);
	f->mb = ibv_reg_mr(f->pb, f->bufb, (RC_BATCH + 1) * RC_LEN,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ);
	f->qa = qp_new(f->pa, f->ca, NULL, IBV_QPT_RC, 16, 1);
	f->qb = qp_new(f->pb, f->cb, NULL, IBV_QPT_RC, 16, 1);
	f->ua = qp_new(f->pa, f->ca, NULL, IBV_QPT_UD, 16, 1);
	f->ub = qp_new(f->pb, f->cb, NULL, IBV_QPT_UD, 16, 1);
	av = av_to(&f->a, &f->b);
	f->ah = ibv_create_ah(f->pa, &av);
	f->psn = rnd() & 0xffffff;
	return f->ma && f->mb && f->qa && f->qb && f->ua && f->ub && f->ah &&
	       rc_reconnect(f) &&
	       !qp_connect(f->ua, &f->a, &f->b, 0) &&
	       !qp_connect(f->ub, &f->b, &f->a, 0);
}

static bool mtu_close(struct mtu_fuzz *f)
{
	bool ok = true;

	ok &= !(f->ah && ibv_destroy_ah(f->ah));
	ok &= !(f->qa && ibv_destroy_qp(f->qa));
	ok &= !(f->qb && ibv_destroy_qp(f->qb));
	ok &= !(f->ua && ibv_destroy_qp(f->ua));
	ok &= !(f->ub && ibv_destroy_qp(f->ub));
	ok &= !(f->ma && ibv_dereg_mr(f->ma));
	ok &= !(f->mb && ibv_dereg_mr(f->mb));
	ok &= !(f->ca && ibv_destroy_cq(f->ca));
	ok &= !(f->cb && ibv_destroy_cq(f->cb));
	ok &= !(f->pa && ibv_dealloc_pd(f->pa));
	ok &= !(f->pb && ibv_dealloc_pd(f->pb));
	ok &= !(f->a.ctx && ibv_close_device(f->a.ctx));
	ok &= !(f->b.ctx && ibv_close_device(f->b.ctx));
	free(f->bufa);
	free(f->bufb);
	return ok;
}

int mtu_main(char **dev, double secs, uint64_t seed)
{
	static struct mtu_fuzz f;
	double end = now_s() + secs;
	uint64_t it = 0;
	bool ok;
	int i, k;

	fuzz_rng_stream = seed;
	f.sock = -1;
	f.wire0 = force_wire(-1);
	ok = mtu_open(&f, dev);
	result(ok, "mtu: RC and UD QPs from DEV0 to DEV1", "%s",
	       strerror(errno));
	while (ok && now_s() < end) {
		int mv = chance(50) ? (int)below(NMTU) : -1;

		if (mv >= 0)
			f.set[mv]++;
		if (f.wire0 >= 0) {
			int w = below(2);

			if (force_wire(w) < 0) {
				fail(&f, "set force_wire: %s", strerror(errno));
				break;
			}
			f.batches[w]++;
		}
		/* Now and then a path MTU of the moment's. */
		if (chance(20) && !rc_reconnect(&f)) {
			fail(&f, "reconnect: %s", strerror(errno));
			break;
		}
		if (!rc_batch(&f, it, mv)) {
			fail(&f, "RC batch %" PRIu64 ": post or reconnect failed: %s",
			     it, strerror(errno));
			break;
		}
		it += RC_BATCH;
		check_port(&f);
		ud_long(&f);
	}
	if (f.wire0 >= 0 && force_wire(f.wire0) < 0)
		fail(&f, "put force_wire back: %s", strerror(errno));
	if (f.sock >= 0 && f.mtu0 > 0 && set_mtu(&f, f.mtu0))
		fail(&f, "put the MTU of %s back to %d", f.ndev, f.mtu0);
	ktap_diag("fuzz mtu: seed=%" PRIu64 ": netdev %s, %" PRIu64 " RC batches, %" PRIu64 " reconnects",
		  seed, f.ndev, it / RC_BATCH, f.reconnects);
	ktap_diag("mtu: batches delivered in the kernel %" PRIu64 ", over the wire %" PRIu64 "%s",
		  f.batches[0], f.batches[1],
		  f.wire0 < 0 ? " (no force_wire: as the kernel chose)" : "");
	for (i = 0; i < NMTU; i++)
		ktap_diag("mtu: netdev MTU %d set %" PRIu64 " times", mtus[i],
			  f.set[i]);
	ktap_diag("mtu: active_mtu seen: 256 %" PRIu64 ", 512 %" PRIu64 ", 1024 %" PRIu64 ", 2048 %" PRIu64 ", 4096 %" PRIu64,
		  f.active[1], f.active[2], f.active[3], f.active[4],
		  f.active[5]);
	for (k = 0; k < 3; k++)
		ktap_diag("mtu: RC %s: %" PRIu64 " SUCCESS with every byte right, %" PRIu64 " error completions, %" PRIu64 " corrupt, %" PRIu64 " stalled",
			  op_name[k], f.rc[k][RC_SUCCESS], f.rc[k][RC_ERROR],
			  f.rc[k][RC_CORRUPT], f.rc[k][RC_STALL]);
	ktap_diag("mtu: UD SENDs longer than the MTU: %" PRIu64 " refused at post, %" PRIu64 " error completions, %" PRIu64 " SUCCESS",
		  f.ud_refused, f.ud_err, f.ud_ok);
	result(ok && !f.bad,
	       "mtu: active_mtu truthful, long UD SENDs fail, RC bytes exact or an error",
	       NULL);
	result(mtu_close(&f), "mtu: every object destroyed", "%s",
	       strerror(errno));
	if (f.sock >= 0)
		close(f.sock);
	return exit_status();
}
