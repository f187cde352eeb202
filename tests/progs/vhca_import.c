// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_import: parent domains, and the import verbs across processes.
 *
 *   vhca_import DEV GID
 *
 * First a parent domain over the PD with an allocator that counts: a CQ
 * (ibv_create_cq_ex with the parent domain) and two RC QPs created in it,
 * connected to each other on port 1, move a page by RDMA WRITE from an MR
 * registered in the parent domain into one of the PD; the allocator must
 * have been asked for the CQ's and both QPs' memory, nothing else, and
 * have freed each of them once they are destroyed; the parent domain
 * refuses dealloc (EBUSY) while it has objects.
 *
 * Then a child process (fork(), so it shares the command fd) imports the
 * context (ibv_import_device on a duplicate fd), the PD and the MR of its
 * parent by handle, creates a CQ, two connected RC QPs and an MR of its
 * own in the imported PD, and, once the parent has written a pattern into
 * its buffer after the fork: READs the imported MR by its rkey (it must
 * see the parent's new bytes, which the child's own copy of the buffer
 * does not have), WRITEs its own bytes into the imported MR, and WRITEs
 * from the imported MR (its lkey) into the imported MR.  The parent finds
 * both writes in its buffer.  The child destroys its objects and
 * unimports; the parent's MR and PD must then still deregister and
 * deallocate.  Handles that name nothing are refused.
 *
 * The GID is an index of a RoCE v2 GID of port 1.  KTAP results (the
 * child's too); the exit status counts the failures of both.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "vhca_test.h"

#define PORT		1
#define PAGE		4096
#define LEN		(2 * PAGE)
#define WAIT_MS		30000
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

/* The provider's resource types (vhca-provider(7)). */
enum { RES_QP = 1, RES_CQ = 2, RES_SRQ = 3, RES_N };

struct counts {
	int allocs[RES_N + 1], frees[RES_N + 1];	/* [RES_N]: others */
};

static int res_index(uint64_t type)
{
	return type >= RES_QP && type < RES_N ? (int)type : RES_N;
}

static void *count_alloc(struct ibv_pd *pd, void *pd_context, size_t size,
			 size_t alignment, uint64_t type)
{
	struct counts *c = pd_context;
	void *p;

	(void)pd;
	if (posix_memalign(&p, alignment, size))
		return NULL;
	c->allocs[res_index(type)]++;
	return p;
}

static void count_free(struct ibv_pd *pd, void *pd_context, void *ptr,
		       uint64_t type)
{
	struct counts *c = pd_context;

	(void)pd;
	c->frees[res_index(type)]++;
	free(ptr);
}

static struct port_info {
	const char *name;
	int gid_index;
	union ibv_gid gid;
	struct ibv_port_attr attr;
} port;

/* Two RC QPs on cq in pd, connected to each other; 0 or an errno. */
static int qp_pair(struct ibv_pd *pd, struct ibv_cq *cq, struct ibv_qp **qp)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct qp_path path = {
		.port = PORT, .sgid_index = port.gid_index, .dgid = port.gid,
		.mtu = IBV_MTU_1024, .access = ACCESS, .rd_atomic = 1,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};
	int i, err;

	for (i = 0; i < 2; i++) {
		qp[i] = ibv_create_qp(pd, &ia);
		if (!qp[i])
			return errno;
	}
	for (i = 0; i < 2; i++) {
		path.dqpn = qp[!i]->qp_num;
		err = qp_rts(qp[i], &path);
		if (err)
			return err;
	}
	return 0;
}

/* One signaled RDMA op of len bytes; 0, or what went wrong. */
static int rdma_op(struct ibv_qp *qp, struct ibv_cq *cq,
		   enum ibv_wr_opcode op, void *addr, uint32_t len,
		   uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)addr, .length = len,
			       .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	struct ibv_wc wc;
	int err;

	err = ibv_post_send(qp, &wr, &bad);
	if (err)
		return err;
	if (!poll1(cq, &wc, WAIT_MS))
		return ETIMEDOUT;
	return wc.status == IBV_WC_SUCCESS && wc.wr_id == 7 ? 0 : EIO;
}

static bool all(const uint8_t *p, size_t n, uint8_t v)
{
	while (n--)
		if (*p++ != v)
			return false;
	return true;
}

static void parent_domain(struct ibv_context *ctx, struct ibv_pd *pd,
			  struct ibv_mr *mr, uint8_t *buf)
{
	struct counts c = {};
	struct ibv_parent_domain_init_attr pa = {
		.pd = pd,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = count_alloc, .free = count_free, .pd_context = &c,
	};
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
	};
	struct ibv_qp *qp[2] = {};
	struct ibv_mr *smr = NULL;
	struct ibv_cq_ex *cqx;
	struct ibv_pd *dom;
	uint8_t *src;
	int err, i;

	dom = ibv_alloc_parent_domain(ctx, &pa);
	result(dom, "ibv_alloc_parent_domain with allocators", "errno %d",
	       errno);
	if (!dom)
		return;
	ca.parent_domain = dom;
	cqx = ibv_create_cq_ex(ctx, &ca);
	src = aligned_alloc(PAGE, PAGE);
	err = cqx && src ? qp_pair(dom, ibv_cq_ex_to_cq(cqx), qp) : errno;
	result(!err, "a CQ and two connected RC QPs in the parent domain",
	       "errno %d", err);
	if (!err) {
		memset(src, 'P', PAGE);
		smr = ibv_reg_mr(dom, src, PAGE, IBV_ACCESS_LOCAL_WRITE);
		err = smr ? rdma_op(qp[0], ibv_cq_ex_to_cq(cqx),
				    IBV_WR_RDMA_WRITE, src, PAGE, smr->lkey,
				    (uintptr_t)buf, mr->rkey) : errno;
		result(!err && all(buf, PAGE, 'P'),
		       "RDMA WRITE from an MR of the parent domain into one of the PD",
		       "err %d", err);
	}
	result(c.allocs[RES_QP] == 2 && c.allocs[RES_CQ] == 1 &&
	       !c.allocs[RES_SRQ] && !c.allocs[RES_N],
	       "the allocator was asked for the CQ's and the QPs' memory",
	       "QP %d, CQ %d, SRQ %d, other %d", c.allocs[RES_QP],
	       c.allocs[RES_CQ], c.allocs[RES_SRQ], c.allocs[RES_N]);
	err = ibv_dealloc_pd(dom);
	result(err == EBUSY, "dealloc of the parent domain with objects: EBUSY",
	       "%d", err);
	if (smr)
		ibv_dereg_mr(smr);
	for (i = 0; i < 2; i++)
		if (qp[i])
			ibv_destroy_qp(qp[i]);
	if (cqx)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
	result(!memcmp(c.allocs, c.frees, sizeof(c.allocs)),
	       "destroyed: each allocation freed through the parent domain",
	       "frees QP %d, CQ %d", c.frees[RES_QP], c.frees[RES_CQ]);
	err = ibv_dealloc_pd(dom);
	result(!err, "ibv_dealloc_pd of the parent domain", "%d", err);
	free(src);
}

/*
 * The child: imports its parent's context, PD (pd_handle) and MR (the
 * parent's mr, a copy), and uses the MR from its own QPs once the parent
 * says so on @go; tells the parent on @ready.  Returns its failures.
 */
static int child(int cmd_fd, uint32_t pd_handle, const struct ibv_mr *mr,
		 uint8_t *buf, int ready, int go)
{
	struct ibv_context *ictx;
	struct ibv_qp *qp[2] = {};
	struct ibv_mr *imr, *omr = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_pd *ipd;
	uint8_t *own;
	char b = 0;
	int err, i;

	ictx = ibv_import_device(dup(cmd_fd));
	result(ictx, "child: ibv_import_device on the shared command fd",
	       "errno %d", errno);
	ipd = ictx ? ibv_import_pd(ictx, pd_handle) : NULL;
	result(ipd && ipd->handle == pd_handle, "child: ibv_import_pd",
	       "errno %d", errno);
	imr = ipd ? ibv_import_mr(ipd, mr->handle) : NULL;
	result(imr && imr->lkey == mr->lkey && imr->rkey == mr->rkey &&
	       imr->length == LEN, "child: ibv_import_mr: its keys and length",
	       "errno %d", errno);
	own = aligned_alloc(PAGE, LEN);
	if (!imr || !own)
		goto out;
	memset(own, 'C', LEN);
	omr = ibv_reg_mr(ipd, own, LEN, IBV_ACCESS_LOCAL_WRITE);
	cq = ibv_create_cq(ictx, 16, NULL, NULL, 0);
	err = omr && cq ? qp_pair(ipd, cq, qp) : errno;
	result(!err, "child: an MR, a CQ and two connected RC QPs in the imported PD",
	       "errno %d", err);
	if (write(ready, "r", 1) != 1 || read(go, &b, 1) != 1 || err)
		goto out;

	err = rdma_op(qp[0], cq, IBV_WR_RDMA_READ, own, PAGE, omr->lkey,
		      (uintptr_t)buf, imr->rkey);
	result(!err && all(own, PAGE, 'B'),
	       "child: RDMA READ by the imported rkey sees the parent's bytes",
	       "err %d, first byte %c", err, own[0]);
	err = rdma_op(qp[0], cq, IBV_WR_RDMA_WRITE, own + PAGE, PAGE / 2,
		      omr->lkey, (uintptr_t)buf + PAGE, imr->rkey);
	result(!err, "child: RDMA WRITE into the imported MR", "err %d", err);
	err = rdma_op(qp[1], cq, IBV_WR_RDMA_WRITE, buf, PAGE / 2, imr->lkey,
		      (uintptr_t)buf + PAGE + PAGE / 2, imr->rkey);
	result(!err, "child: RDMA WRITE from the imported MR (its lkey)",
	       "err %d", err);
out:
	for (i = 0; i < 2; i++)
		if (qp[i])
			ibv_destroy_qp(qp[i]);
	if (cq)
		ibv_destroy_cq(cq);
	if (omr)
		ibv_dereg_mr(omr);
	if (imr)
		ibv_unimport_mr(imr);
	if (ipd)
		ibv_unimport_pd(ipd);
	if (ictx)
		result(!ibv_close_device(ictx), "child: imported context closed",
		       "errno %d", errno);
	free(own);
	return exit_status();
}

static void imports(struct ibv_context *ctx, struct ibv_pd *pd,
		    struct ibv_mr *mr, uint8_t *buf)
{
	int ready[2], go[2], status = 0, failures;
	struct ibv_pd *bad_pd;
	struct ibv_mr *bad_mr;
	pid_t pid;
	char b;

	bad_pd = ibv_import_pd(ctx, pd->handle + 1000);
	bad_mr = ibv_import_mr(pd, mr->handle + 1000);
	result(!bad_pd && !bad_mr, "imports of handles that name nothing fail",
	       "pd %p, mr %p", (void *)bad_pd, (void *)bad_mr);

	memset(buf, 'A', LEN);
	if (pipe(ready) || pipe(go)) {
		result(false, "pipes", "errno %d", errno);
		return;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		result(false, "fork", "errno %d", errno);
		return;
	}
	if (!pid)
		_exit(child(ctx->cmd_fd, pd->handle, mr, buf, ready[1], go[0]));
	if (read(ready[0], &b, 1) == 1) {
		/* After the fork: the child's copy of buf still has 'A'. */
		memset(buf, 'B', PAGE);
		if (write(go[1], "g", 1) != 1)
			kill(pid, SIGKILL);
	}
	close(go[1]);
	waitpid(pid, &status, 0);
	failures = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	result(!failures, "the child passed", "status %#x", status);
	result(all(buf + PAGE, PAGE / 2, 'C') &&
	       all(buf + PAGE + PAGE / 2, PAGE / 2, 'B'),
	       "the child's two WRITEs are in the parent's buffer",
	       "bytes %c, %c", buf[PAGE], buf[PAGE + PAGE / 2]);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: vhca_import DEV GID\n");
		return 2;
	}
	ktap_header();
	port.name = argv[1];
	port.gid_index = atoi(argv[2]);
	ctx = open_port(port.name, PORT, port.gid_index, &port.attr,
			&port.gid);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	buf = aligned_alloc(PAGE, LEN);
	mr = pd && buf ? ibv_reg_mr(pd, buf, LEN, ACCESS) : NULL;
	result(mr, "open, PD and MR", "errno %d", errno);
	if (!mr)
		return exit_status();

	parent_domain(ctx, pd, mr, buf);
	imports(ctx, pd, mr, buf);

	err = ibv_dereg_mr(mr);
	result(!err, "the parent's MR deregisters after the child's unimport",
	       "%d", err);
	err = ibv_dealloc_pd(pd);
	result(!err, "the parent's PD deallocates after the child's unimport",
	       "%d", err);
	ibv_close_device(ctx);
	free(buf);
	return exit_status();
}
