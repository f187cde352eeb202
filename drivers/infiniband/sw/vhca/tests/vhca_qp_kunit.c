// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite of QP validation: the modify-QP state machine as a table of
 * legal transitions and their required attributes per QP type (written
 * from the IB specification, independently of the core's table), refusal
 * of every other transition, of missing and of foreign attributes, the
 * attribute values vhca accepts, and queue sizing from the requested caps.
 */
#include <kunit/test.h>

#include "../vhca_qp_attr.c"

struct qp_transition {
	enum ib_qp_state cur, next;
	int required;
};

#define S IB_QP_STATE

static const struct qp_transition rc_legal[] = {
	{ IB_QPS_RESET, IB_QPS_INIT,
	  S | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_ACCESS_FLAGS },
	{ IB_QPS_INIT, IB_QPS_INIT, S },
	{ IB_QPS_INIT, IB_QPS_RTR,
	  S | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
	  IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER },
	{ IB_QPS_RTR, IB_QPS_RTS,
	  S | IB_QP_SQ_PSN | IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
	  IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC },
	{ IB_QPS_RTS, IB_QPS_RTS, S },
	{ IB_QPS_RTS, IB_QPS_SQD, S },
	{ IB_QPS_SQD, IB_QPS_SQD, S },
	{ IB_QPS_SQD, IB_QPS_RTS, S },
};

static const struct qp_transition ud_legal[] = {
	{ IB_QPS_RESET, IB_QPS_INIT,
	  S | IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_QKEY },
	{ IB_QPS_INIT, IB_QPS_INIT, S },
	{ IB_QPS_INIT, IB_QPS_RTR, S },
	{ IB_QPS_RTR, IB_QPS_RTS, S | IB_QP_SQ_PSN },
	{ IB_QPS_RTS, IB_QPS_RTS, S },
	{ IB_QPS_RTS, IB_QPS_SQD, S },
	{ IB_QPS_SQD, IB_QPS_SQD, S },
	{ IB_QPS_SQD, IB_QPS_RTS, S },
	{ IB_QPS_SQE, IB_QPS_RTS, S },
};

/* QP1's port is fixed at creation: no IB_QP_PORT. */
static const struct qp_transition gsi_legal[] = {
	{ IB_QPS_RESET, IB_QPS_INIT, S | IB_QP_PKEY_INDEX | IB_QP_QKEY },
	{ IB_QPS_INIT, IB_QPS_INIT, S },
	{ IB_QPS_INIT, IB_QPS_RTR, S },
	{ IB_QPS_RTR, IB_QPS_RTS, S | IB_QP_SQ_PSN },
	{ IB_QPS_RTS, IB_QPS_RTS, S },
	{ IB_QPS_RTS, IB_QPS_SQD, S },
	{ IB_QPS_SQD, IB_QPS_SQD, S },
	{ IB_QPS_SQD, IB_QPS_RTS, S },
	{ IB_QPS_SQE, IB_QPS_RTS, S },
};

static const struct {
	enum ib_qp_type type;
	const struct qp_transition *legal;
	int n;
} qp_tables[] = {
	{ IB_QPT_RC, rc_legal, ARRAY_SIZE(rc_legal) },
	{ IB_QPT_UD, ud_legal, ARRAY_SIZE(ud_legal) },
	{ IB_QPT_GSI, gsi_legal, ARRAY_SIZE(gsi_legal) },
};

static struct ib_gid_attr fake_sgid;

/* Attributes with a valid value for every field. */
static void valid_attr(struct ib_qp_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->pkey_index = 0;
	a->port_num = 1;
	a->qkey = 0x11111111;
	a->qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ;
	a->path_mtu = IB_MTU_1024;
	a->dest_qp_num = 0x123456;
	a->rq_psn = 0xabcdef;
	a->sq_psn = 0x654321;
	a->max_dest_rd_atomic = 16;
	a->max_rd_atomic = 16;
	a->min_rnr_timer = 31;
	a->timeout = 31;
	a->retry_cnt = 7;
	a->rnr_retry = 7;
	a->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	a->ah_attr.ah_flags = IB_AH_GRH;
	a->ah_attr.port_num = 1;
	a->ah_attr.grh.sgid_attr = &fake_sgid;
}

static const struct qp_transition *find_legal(int t, enum ib_qp_state cur,
					      enum ib_qp_state next)
{
	int i;

	for (i = 0; i < qp_tables[t].n; i++)
		if (qp_tables[t].legal[i].cur == cur &&
		    qp_tables[t].legal[i].next == next)
			return &qp_tables[t].legal[i];
	return NULL;
}

/* Every legal transition with exactly its required attributes works. */
static void vhca_qp_legal_transitions(struct kunit *test)
{
	struct ib_qp_attr a;
	int t, i, s, rc;

	valid_attr(&a);
	for (t = 0; t < ARRAY_SIZE(qp_tables); t++) {
		for (i = 0; i < qp_tables[t].n; i++) {
			const struct qp_transition *tr = &qp_tables[t].legal[i];

			rc = vhca_qp_check_modify(qp_tables[t].type, tr->cur,
						  tr->next, &a, tr->required);
			KUNIT_EXPECT_EQ_MSG(test, rc, 0, "type %d %d->%d",
					    qp_tables[t].type, tr->cur, tr->next);
		}
		/*
		 * Any state may go to RESET, and any but RESET to ERR, with
		 * the state alone.
		 */
		for (s = IB_QPS_RESET; s <= IB_QPS_ERR; s++) {
			rc = vhca_qp_check_modify(qp_tables[t].type, s,
						  IB_QPS_RESET, &a, S);
			KUNIT_EXPECT_EQ(test, rc, 0);
			rc = vhca_qp_check_modify(qp_tables[t].type, s,
						  IB_QPS_ERR, &a, S);
			KUNIT_EXPECT_EQ(test, rc, s == IB_QPS_RESET ? -EINVAL : 0);
		}
	}
}

/* Leaving out any one required attribute is refused. */
static void vhca_qp_missing_required(struct kunit *test)
{
	struct ib_qp_attr a;
	int t, i, bit, rc;

	valid_attr(&a);
	for (t = 0; t < ARRAY_SIZE(qp_tables); t++) {
		for (i = 0; i < qp_tables[t].n; i++) {
			const struct qp_transition *tr = &qp_tables[t].legal[i];

			for (bit = 1; bit < 31; bit++) {
				int m = 1 << bit;

				if (!(tr->required & m))
					continue;
				rc = vhca_qp_check_modify(qp_tables[t].type,
							  tr->cur, tr->next, &a,
							  tr->required & ~m);
				KUNIT_EXPECT_EQ_MSG(test, rc, -EINVAL,
						    "type %d %d->%d without %#x",
						    qp_tables[t].type, tr->cur,
						    tr->next, m);
			}
		}
	}
}

/*
 * Every transition not in the table (other than to RESET/ERR) is refused.
 * An RC QP never is in SQE (no transition leads there), so that row is not
 * RC's to test.
 */
static void vhca_qp_illegal_transitions(struct kunit *test)
{
	struct ib_qp_attr a;
	int t, cur, next, rc, refused = 0;

	valid_attr(&a);
	for (t = 0; t < ARRAY_SIZE(qp_tables); t++) {
		for (cur = IB_QPS_RESET; cur <= IB_QPS_ERR; cur++) {
			if (qp_tables[t].type == IB_QPT_RC && cur == IB_QPS_SQE)
				continue;
			for (next = IB_QPS_RESET; next <= IB_QPS_ERR; next++) {
				if (next == IB_QPS_RESET || next == IB_QPS_ERR ||
				    find_legal(t, cur, next))
					continue;
				rc = vhca_qp_check_modify(qp_tables[t].type,
							  cur, next, &a, S);
				KUNIT_EXPECT_EQ_MSG(test, rc, -EINVAL,
						    "type %d %d->%d",
						    qp_tables[t].type, cur, next);
				refused++;
			}
		}
	}
	/* 7 x 5 candidate pairs per type (6 x 5 for RC), minus the legal. */
	KUNIT_EXPECT_EQ(test, refused, 30 - 8 + 35 - 9 + 35 - 9);
}

/* Attributes that do not belong to a transition or QP type are refused. */
static void vhca_qp_foreign_attributes(struct kunit *test)
{
	struct ib_qp_attr a;

#define EXPECT(type, cur, next, mask, want)				\
	KUNIT_EXPECT_EQ_MSG(test, vhca_qp_check_modify(type, cur, next, &a, \
			    mask), want, #type " " #cur "->" #next)

	valid_attr(&a);
	/* RC has no Q_Key; UD has no access flags, path or PSN of a peer. */
	EXPECT(IB_QPT_RC, IB_QPS_RESET, IB_QPS_INIT,
	       rc_legal[0].required | IB_QP_QKEY, -EINVAL);
	EXPECT(IB_QPT_UD, IB_QPS_RESET, IB_QPS_INIT,
	       ud_legal[0].required | IB_QP_ACCESS_FLAGS, -EINVAL);
	EXPECT(IB_QPT_UD, IB_QPS_INIT, IB_QPS_RTR, S | IB_QP_AV, -EINVAL);
	EXPECT(IB_QPT_UD, IB_QPS_RTR, IB_QPS_RTS,
	       S | IB_QP_SQ_PSN | IB_QP_RETRY_CNT, -EINVAL);
	/* The GSI QP's port cannot change. */
	EXPECT(IB_QPT_GSI, IB_QPS_RESET, IB_QPS_INIT,
	       gsi_legal[0].required | IB_QP_PORT, -EINVAL);
	/*
	 * RC RTS->RTS may change access flags and the RNR timer; not the
	 * timeout nor the destination QP.
	 */
	EXPECT(IB_QPT_RC, IB_QPS_RTS, IB_QPS_RTS,
	       S | IB_QP_MIN_RNR_TIMER | IB_QP_ACCESS_FLAGS, 0);
	EXPECT(IB_QPT_RC, IB_QPS_RTS, IB_QPS_RTS, S | IB_QP_TIMEOUT, -EINVAL);
	EXPECT(IB_QPT_RC, IB_QPS_RTS, IB_QPS_RTS, S | IB_QP_DEST_QPN, -EINVAL);
	/* Alternate paths are not implemented. */
	EXPECT(IB_QPT_RC, IB_QPS_INIT, IB_QPS_RTR,
	       rc_legal[2].required | IB_QP_ALT_PATH, -EOPNOTSUPP);
#undef EXPECT
}

/* Each attribute value out of its range is refused where it is legal. */
static void vhca_qp_attribute_values(struct kunit *test)
{
	int init = rc_legal[0].required, rtr = rc_legal[2].required;
	int rts = rc_legal[3].required;
	struct ib_qp_attr a;

#define BAD(field, value, cur, next, mask) do {				\
		valid_attr(&a);						\
		a.field = value;					\
		KUNIT_EXPECT_EQ_MSG(test, vhca_qp_check_modify(IB_QPT_RC, \
				    cur, next, &a, mask), -EINVAL,	\
				    #field " = " #value);		\
	} while (0)

	BAD(port_num, 2, IB_QPS_RESET, IB_QPS_INIT, init);
	BAD(port_num, 0, IB_QPS_RESET, IB_QPS_INIT, init);
	BAD(pkey_index, 1, IB_QPS_RESET, IB_QPS_INIT, init);
	BAD(qp_access_flags, IB_ACCESS_MW_BIND, IB_QPS_RESET, IB_QPS_INIT, init);
	BAD(path_mtu, 0, IB_QPS_INIT, IB_QPS_RTR, rtr);
	BAD(path_mtu, IB_MTU_4096 + 1, IB_QPS_INIT, IB_QPS_RTR, rtr);
	BAD(dest_qp_num, 1 << 24, IB_QPS_INIT, IB_QPS_RTR, rtr);
	BAD(rq_psn, 1 << 24, IB_QPS_INIT, IB_QPS_RTR, rtr);
	BAD(max_dest_rd_atomic, VHCA_MAX_QP_RD_ATOM + 1, IB_QPS_INIT,
	    IB_QPS_RTR, rtr);
	BAD(min_rnr_timer, 32, IB_QPS_INIT, IB_QPS_RTR, rtr);
	BAD(ah_attr.port_num, 2, IB_QPS_INIT, IB_QPS_RTR, rtr);
	BAD(ah_attr.ah_flags, 0, IB_QPS_INIT, IB_QPS_RTR, rtr);
	BAD(ah_attr.type, RDMA_AH_ATTR_TYPE_IB, IB_QPS_INIT, IB_QPS_RTR, rtr);
	BAD(ah_attr.grh.sgid_attr, NULL, IB_QPS_INIT, IB_QPS_RTR, rtr);
	BAD(sq_psn, 1 << 24, IB_QPS_RTR, IB_QPS_RTS, rts);
	BAD(timeout, 32, IB_QPS_RTR, IB_QPS_RTS, rts);
	BAD(retry_cnt, 8, IB_QPS_RTR, IB_QPS_RTS, rts);
	BAD(rnr_retry, 8, IB_QPS_RTR, IB_QPS_RTS, rts);
	BAD(max_rd_atomic, VHCA_MAX_QP_INIT_RD_ATOM + 1, IB_QPS_RTR, IB_QPS_RTS, rts);
#undef BAD

	/* Every right a verbs user may set on an RC QP (rdma-core 56's tests). */
	valid_attr(&a);
	a.qp_access_flags = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			    IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC |
			    IB_ACCESS_FLUSH_GLOBAL | IB_ACCESS_FLUSH_PERSISTENT;
	KUNIT_EXPECT_EQ(test, vhca_qp_check_modify(IB_QPT_RC, IB_QPS_RESET,
						   IB_QPS_INIT, &a, init), 0);
}

static void vhca_qp_caps(struct kunit *test)
{
	struct vhca_qp_geometry g;
	struct ib_qp_cap cap;

	cap = (struct ib_qp_cap){ .max_send_wr = 100, .max_recv_wr = 500,
				  .max_send_sge = 3, .max_recv_sge = 5,
				  .max_inline_data = 100 };
	KUNIT_ASSERT_EQ(test, vhca_qp_size_caps(&cap, false, &g), 0);
	KUNIT_EXPECT_EQ(test, g.sq_count, 128U);
	KUNIT_EXPECT_EQ(test, g.rq_count, 512U);
	KUNIT_EXPECT_TRUE(test, is_power_of_2(g.sq_stride));
	KUNIT_EXPECT_TRUE(test, is_power_of_2(g.rq_stride));
	KUNIT_EXPECT_GE(test, cap.max_send_sge, 3U);
	KUNIT_EXPECT_GE(test, cap.max_recv_sge, 5U);
	KUNIT_EXPECT_GE(test, cap.max_inline_data, 100U);
	KUNIT_EXPECT_LE(test, sizeof(struct vhca_send_wqe) +
			cap.max_send_sge * sizeof(struct vhca_sge), g.sq_stride);
	KUNIT_EXPECT_LE(test, sizeof(struct vhca_send_wqe) + cap.max_inline_data,
			g.sq_stride);
	KUNIT_EXPECT_LE(test, sizeof(struct vhca_recv_wqe) +
			cap.max_recv_sge * sizeof(struct vhca_sge), g.rq_stride);
	KUNIT_EXPECT_EQ(test, cap.max_send_wr, 128U);
	KUNIT_EXPECT_EQ(test, cap.max_recv_wr, 512U);

	/* On an SRQ the QP has no receive queue. */
	cap = (struct ib_qp_cap){ .max_send_wr = 1, .max_recv_wr = 99999 };
	KUNIT_ASSERT_EQ(test, vhca_qp_size_caps(&cap, true, &g), 0);
	KUNIT_EXPECT_EQ(test, g.rq_count, 0U);
	KUNIT_EXPECT_EQ(test, cap.max_recv_wr, 0U);
	KUNIT_EXPECT_EQ(test, g.sq_count, 1U);

	/* At the limits, and one past each. */
	cap = (struct ib_qp_cap){ .max_send_wr = VHCA_MAX_QP_WR,
				  .max_recv_wr = VHCA_MAX_QP_WR,
				  .max_send_sge = VHCA_MAX_SGE,
				  .max_recv_sge = VHCA_MAX_SGE,
				  .max_inline_data = VHCA_MAX_INLINE };
	KUNIT_EXPECT_EQ(test, vhca_qp_size_caps(&cap, false, &g), 0);
	KUNIT_EXPECT_EQ(test, cap.max_send_sge, (u32)VHCA_MAX_SGE);
	KUNIT_EXPECT_EQ(test, cap.max_inline_data, (u32)VHCA_MAX_INLINE);
	cap = (struct ib_qp_cap){ .max_send_wr = VHCA_MAX_QP_WR + 1 };
	KUNIT_EXPECT_EQ(test, vhca_qp_size_caps(&cap, false, &g), -EINVAL);
	cap = (struct ib_qp_cap){ .max_recv_wr = VHCA_MAX_QP_WR + 1 };
	KUNIT_EXPECT_EQ(test, vhca_qp_size_caps(&cap, false, &g), -EINVAL);
	cap = (struct ib_qp_cap){ .max_send_sge = VHCA_MAX_SGE + 1 };
	KUNIT_EXPECT_EQ(test, vhca_qp_size_caps(&cap, false, &g), -EINVAL);
	cap = (struct ib_qp_cap){ .max_recv_sge = VHCA_MAX_SGE + 1 };
	KUNIT_EXPECT_EQ(test, vhca_qp_size_caps(&cap, false, &g), -EINVAL);
	cap = (struct ib_qp_cap){ .max_inline_data = VHCA_MAX_INLINE + 1 };
	KUNIT_EXPECT_EQ(test, vhca_qp_size_caps(&cap, false, &g), -EINVAL);

	/* No work requests: no ring. */
	cap = (struct ib_qp_cap){ 0 };
	KUNIT_EXPECT_EQ(test, vhca_qp_size_caps(&cap, false, &g), 0);
	KUNIT_EXPECT_EQ(test, g.sq_count, 0U);
	KUNIT_EXPECT_EQ(test, g.rq_count, 0U);
}

static struct kunit_case vhca_qp_cases[] = {
	KUNIT_CASE(vhca_qp_legal_transitions),
	KUNIT_CASE(vhca_qp_missing_required),
	KUNIT_CASE(vhca_qp_illegal_transitions),
	KUNIT_CASE(vhca_qp_foreign_attributes),
	KUNIT_CASE(vhca_qp_attribute_values),
	KUNIT_CASE(vhca_qp_caps),
	{}
};

static struct kunit_suite vhca_qp_suite = {
	.name = "vhca_qp",
	.test_cases = vhca_qp_cases,
};

kunit_test_suite(vhca_qp_suite);
