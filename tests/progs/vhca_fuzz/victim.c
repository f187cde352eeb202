// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz: the victim, a process of its own beside every fuzzer: an RC
 * QP on DEV0 connected to one on DEV1, SEND, RDMA WRITE and RDMA READ in
 * turn, every completion a success, every byte checked, no operation
 * taking longer than VICTIM_STALL_S.
 */
#include <poll.h>
#include <sys/wait.h>

#include "fuzz.h"

struct victim_report {
	uint64_t iterations;
	uint64_t bytes;
	char why[240];		/* empty: all well */
};

struct victim {
	struct port a, b;
	struct ibv_pd *pa, *pb;
	struct ibv_cq *ca, *cb;
	struct ibv_qp *qa, *qb;
	struct ibv_mr *ma, *mb;
	uint8_t *bufa, *bufb;	/* 4 areas of VICTIM_LEN each */
	struct victim_report r;
};

static uint8_t pattern(uint64_t it, uint32_t i, uint32_t salt)
{
	return (uint8_t)(it * 131 + i * 7 + (i >> 8) + salt * 61);
}

/* One completion on cq with wr_id id; false with r.why set otherwise. */
static bool victim_wait(struct victim *v, struct ibv_cq *cq, uint64_t id,
			uint32_t len, const char *what)
{
	double end = now_s() + VICTIM_STALL_S;
	struct ibv_wc wc;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0) {
			snprintf(v->r.why, sizeof(v->r.why),
				 "%s: poll_cq failed", what);
			return false;
		}
		if (n) {
			if (wc.status != IBV_WC_SUCCESS || wc.wr_id != id ||
			    (len && wc.byte_len != len)) {
				snprintf(v->r.why, sizeof(v->r.why),
					 "%s at iteration %" PRIu64 ": status %s, wr_id %" PRIu64 " (want %" PRIu64 "), byte_len %u (want %u)",
					 what, v->r.iterations,
					 ibv_wc_status_str(wc.status),
					 (uint64_t)wc.wr_id, id, wc.byte_len,
					 len);
				return false;
			}
			return true;
		}
	} while (now_s() < end);
	snprintf(v->r.why, sizeof(v->r.why),
		 "%s at iteration %" PRIu64 ": no completion in %d s", what,
		 v->r.iterations, VICTIM_STALL_S);
	return false;
}

static bool victim_check(struct victim *v, const uint8_t *p, uint32_t len,
			 uint32_t salt, const char *what)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern(v->r.iterations, i, salt)) {
			snprintf(v->r.why, sizeof(v->r.why),
				 "%s at iteration %" PRIu64 ": byte %u of %u is 0x%02x, want 0x%02x",
				 what, v->r.iterations, i, len, p[i],
				 pattern(v->r.iterations, i, salt));
			return false;
		}
	return true;
}

static bool victim_setup(struct victim *v, char **argv)
{
	size_t sz = 4 * VICTIM_LEN;
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ;

	if (port_open(&v->a, argv[0], atoi(argv[1])) ||
	    port_open(&v->b, argv[2], atoi(argv[3])))
		return false;
	v->bufa = calloc(1, sz);
	v->bufb = calloc(1, sz);
	v->pa = ibv_alloc_pd(v->a.ctx);
	v->pb = ibv_alloc_pd(v->b.ctx);
	if (!v->bufa || !v->bufb || !v->pa || !v->pb)
		return false;
	v->ma = ibv_reg_mr(v->pa, v->bufa, sz, acc);
	v->mb = ibv_reg_mr(v->pb, v->bufb, sz, acc);
	v->ca = ibv_create_cq(v->a.ctx, 64, NULL, NULL, 0);
	v->cb = ibv_create_cq(v->b.ctx, 64, NULL, NULL, 0);
	if (!v->ma || !v->mb || !v->ca || !v->cb)
		return false;
	v->qa = qp_new(v->pa, v->ca, NULL, IBV_QPT_RC, 16, 1);
	v->qb = qp_new(v->pb, v->cb, NULL, IBV_QPT_RC, 16, 1);
	return v->qa && v->qb &&
	       !qp_connect(v->qa, &v->a, &v->b, v->qb->qp_num) &&
	       !qp_connect(v->qb, &v->b, &v->a, v->qa->qp_num);
}

/* One SEND, one WRITE and one READ, each verified; false on a failure. */
static bool victim_round(struct victim *v)
{
	uint32_t len = 1 + (uint32_t)(v->r.iterations * 2749 % VICTIM_LEN);
	uint8_t *send = v->bufa, *rdst = v->bufa + VICTIM_LEN;
	uint8_t *recv = v->bufb, *wdst = v->bufb + VICTIM_LEN;
	struct ibv_sge s = { .lkey = v->ma->lkey, .length = len };
	struct ibv_sge rs = { .addr = (uintptr_t)recv, .lkey = v->mb->lkey,
			      .length = VICTIM_LEN };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rs, .num_sge = 1 };
	struct ibv_send_wr wr = { .sg_list = &s, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr *rbad;
	uint32_t i;

	for (i = 0; i < len; i++) {
		send[i] = pattern(v->r.iterations, i, 0);
		send[VICTIM_LEN * 2 + i] = pattern(v->r.iterations, i, 1);
	}
	memset(recv, 0, len);
	memset(wdst, 0, len);
	memset(rdst, 0, len);

	if (ibv_post_recv(v->qb, &rwr, &rbad)) {
		snprintf(v->r.why, sizeof(v->r.why), "post_recv: %s",
			 strerror(errno));
		return false;
	}
	s.addr = (uintptr_t)send;
	wr.wr_id = 1;
	wr.opcode = IBV_WR_SEND;
	if (ibv_post_send(v->qa, &wr, &bad)) {
		snprintf(v->r.why, sizeof(v->r.why), "post SEND: %s",
			 strerror(errno));
		return false;
	}
	if (!victim_wait(v, v->ca, 1, 0, "SEND") ||
	    !victim_wait(v, v->cb, 2, len, "receive") ||
	    !victim_check(v, recv, len, 0, "received"))
		return false;

	s.addr = (uintptr_t)(v->bufa + VICTIM_LEN * 2);
	wr.wr_id = 3;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)wdst;
	wr.wr.rdma.rkey = v->mb->rkey;
	if (ibv_post_send(v->qa, &wr, &bad)) {
		snprintf(v->r.why, sizeof(v->r.why), "post WRITE: %s",
			 strerror(errno));
		return false;
	}
	if (!victim_wait(v, v->ca, 3, 0, "WRITE") ||
	    !victim_check(v, wdst, len, 1, "written"))
		return false;

	s.addr = (uintptr_t)rdst;
	wr.wr_id = 4;
	wr.opcode = IBV_WR_RDMA_READ;
	if (ibv_post_send(v->qa, &wr, &bad)) {
		snprintf(v->r.why, sizeof(v->r.why), "post READ: %s",
			 strerror(errno));
		return false;
	}
	if (!victim_wait(v, v->ca, 4, len, "READ") ||
	    !victim_check(v, rdst, len, 1, "read"))
		return false;
	v->r.bytes += 3 * (uint64_t)len;
	return true;
}

/*
 * The victim's process: ready (one byte) on out once connected, then
 * rounds until stop is readable (closed), then its report on out.
 */
static void victim_main(char **argv, int stop, int out)
{
	struct victim v = { 0 };
	struct pollfd pfd = { .fd = stop, .events = POLLIN };
	char ok = 1;

	if (!victim_setup(&v, argv)) {
		snprintf(v.r.why, sizeof(v.r.why), "setup failed: %s",
			 strerror(errno));
		ok = 0;
	}
	if (write(out, &ok, 1) != 1)
		_exit(1);
	while (ok && poll(&pfd, 1, 0) == 0) {
		if (!victim_round(&v))
			break;
		v.r.iterations++;
	}
	if (write(out, &v.r, sizeof(v.r)) != sizeof(v.r))
		_exit(1);
	_exit(0);
}


/* Starts the victim; false if it could not connect. */
bool victim_start(struct victim_proc *vp, char **argv)
{
	int s[2], o[2];
	char ok = 0;

	if (pipe(s) || pipe(o))
		return false;
	fflush(stdout);
	vp->pid = fork();
	if (vp->pid < 0)
		return false;
	if (!vp->pid) {
		close(s[1]);
		close(o[0]);
		victim_main(argv, s[0], o[1]);
	}
	close(s[0]);
	close(o[1]);
	vp->stop = s[1];
	vp->in = o[0];
	return read(vp->in, &ok, 1) == 1 && ok;
}

/* Stops the victim and prints its results. */
void victim_end(struct victim_proc *vp)
{
	struct victim_report r = { 0 };
	ssize_t n;
	int st = 0;

	close(vp->stop);
	n = read(vp->in, &r, sizeof(r));
	waitpid(vp->pid, &st, 0);
	if (n != sizeof(r)) {
		result(false, "victim: RC traffic beside the fuzzer",
		       "no report (exit status 0x%x)", st);
		return;
	}
	ktap_diag("victim: %" PRIu64 " rounds of SEND, WRITE and READ, %" PRIu64 " bytes checked",
		  r.iterations, r.bytes);
	result(!r.why[0] && r.iterations, "victim: RC traffic beside the fuzzer, every completion a success, every byte right",
	       "%s", r.why[0] ? r.why : "no round completed");
}
