// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The vhca_pkt suite's headers (vhca_pkt_kunit.c includes this file): the
 * opcode table, AETH syndromes, byte-exact layouts, round trips, refusals
 * of the builder and the parser, PSN and MSN arithmetic, segmentation.
 */

static void vhca_pkt_opcodes(struct kunit *test)
{
	const struct vhca_pkt_opinfo *oi;
	unsigned int i, op, known = 0;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		KUNIT_EXPECT_EQ(test, ops[i].opcode, ops[i].ib);
		oi = vhca_pkt_opinfo(ops[i].opcode);
		KUNIT_ASSERT_NOT_NULL(test, oi);
		KUNIT_EXPECT_EQ_MSG(test, oi->flags, ops[i].flags,
				    "opcode 0x%02x", ops[i].opcode);
		KUNIT_EXPECT_EQ_MSG(test, oi->hdr_len, ops[i].hdr_len,
				    "opcode 0x%02x", ops[i].opcode);
	}
	/* Nothing else: RD, CNP, RC's reserved 0x1e, ... */
	for (op = 0; op < 256; op++)
		known += !!vhca_pkt_opinfo(op);
	KUNIT_EXPECT_EQ(test, known, ARRAY_SIZE(ops));
}

static void vhca_pkt_aeth_syndromes(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID), 0x1f);
	KUNIT_EXPECT_EQ(test, vhca_aeth_ack(0), 0x00);
	KUNIT_EXPECT_EQ(test, vhca_aeth_rnr_nak(0), 0x20);
	KUNIT_EXPECT_EQ(test, vhca_aeth_rnr_nak(14), 0x2e);
	KUNIT_EXPECT_EQ(test, vhca_aeth_rnr_nak(31), 0x3f);
	KUNIT_EXPECT_EQ(test, vhca_aeth_nak(VHCA_NAK_PSN_SEQ_ERR), 0x60);
	KUNIT_EXPECT_EQ(test, vhca_aeth_nak(VHCA_NAK_INVALID_REQ), 0x61);
	KUNIT_EXPECT_EQ(test, vhca_aeth_nak(VHCA_NAK_REM_ACCESS_ERR), 0x62);
	KUNIT_EXPECT_EQ(test, vhca_aeth_nak(VHCA_NAK_REM_OP_ERR), 0x63);
	KUNIT_EXPECT_EQ(test, vhca_aeth_rnr_nak(14) & VHCA_AETH_TYPE_MASK,
			VHCA_AETH_RNR_NAK);
	KUNIT_EXPECT_EQ(test, vhca_aeth_nak(VHCA_NAK_REM_OP_ERR) &
			VHCA_AETH_VALUE_MASK, VHCA_NAK_REM_OP_ERR);
}

/* Headers laid out by hand from IBA 9.2-9.3, against the builder. */
static void vhca_pkt_layout(struct kunit *test)
{
	static const u8 write_imm[32] = {
		0x0b, 0xb0, 0xff, 0xff, 0x00, 0x12, 0x34, 0x56,
		0x80, 0xab, 0xcd, 0xef,
		0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
		0x11, 0x22, 0x33, 0x44, 0x80, 0x00, 0x00, 0x01,
		0xde, 0xad, 0xbe, 0xef,
	};
	static const u8 ud_imm[24] = {
		0x65, 0x40, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01,
		0x00, 0x00, 0x00, 0x07,
		0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
		0xca, 0xfe, 0xf0, 0x0d,
	};
	static const u8 nak[16] = {
		0x11, 0x00, 0xff, 0xff, 0x00, 0xff, 0xff, 0xfe,
		0x00, 0x00, 0x00, 0x00,
		0x62, 0x00, 0x01, 0x02,
	};
	/* AtomicETH: VA, R_Key, Swap (Add) Data, Compare Data. */
	static const u8 cmp_swap[40] = {
		0x13, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x09,
		0x80, 0x00, 0x00, 0x05,
		0x00, 0x00, 0x7f, 0xff, 0x12, 0x34, 0x56, 0x78,
		0xaa, 0xbb, 0xcc, 0xdd,
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
		0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8,
	};
	/* AETH, then AtomicAckETH: the original remote data. */
	static const u8 atomic_ack[24] = {
		0x12, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x09,
		0x00, 0x00, 0x00, 0x05,
		0x1f, 0x00, 0x00, 0x03,
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
	};
	/*
	 * FETH (IBA 1.5: selectivity level in bits 5-4, placement type in
	 * 3-0), then the RETH of the range.
	 */
	static const u8 flush[32] = {
		0x1c, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x09,
		0x80, 0x00, 0x00, 0x05,
		0x00, 0x00, 0x00, 0x11,
		0x00, 0x00, 0x7f, 0xff, 0x12, 0x34, 0x56, 0x78,
		0xaa, 0xbb, 0xcc, 0xdd, 0x00, 0x00, 0x10, 0x00,
	};
	/* Not static: vhca_aeth_nak() and vhca_aeth_ack() are no constants. */
	const struct {
		const char *name;
		struct vhca_pkt p;
		const u8 *want;
		int len;
	} layouts[] = {
		{ "RC WRITE_ONLY_WITH_IMMEDIATE", {
			.opcode = IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
			.se = true, .ackreq = true, .dqpn = 0x123456,
			.psn = 0xabcdef, .paylen = 5,
			.reth_va = 0x0123456789abcdefULL,
			.reth_rkey = 0x11223344, .reth_len = 0x80000001,
			.imm = cpu_to_be32(0xdeadbeef),
		  }, write_imm, sizeof(write_imm) },
		{ "UD SEND_ONLY_WITH_IMMEDIATE", {
			.opcode = IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE,
			.mig = true, .dqpn = 1, .psn = 7, .paylen = 256,
			.deth_qkey = 0x80010000, .deth_sqpn = 2,
			.imm = cpu_to_be32(0xcafef00d),
		  }, ud_imm, sizeof(ud_imm) },
		{ "RC ACKNOWLEDGE (NAK)", {
			.opcode = IB_OPCODE_RC_ACKNOWLEDGE, .dqpn = 0xfffffe,
			.psn = 0,
			.aeth_syndrome = vhca_aeth_nak(VHCA_NAK_REM_ACCESS_ERR),
			.aeth_msn = 0x102,
		  }, nak, sizeof(nak) },
		{ "RC COMPARE_SWAP", {
			.opcode = IB_OPCODE_RC_COMPARE_SWAP, .ackreq = true,
			.dqpn = 9, .psn = 5, .reth_va = 0x7fff12345678ULL,
			.reth_rkey = 0xaabbccdd,
			.atm_swap_add = 0x0102030405060708ULL,
			.atm_compare = 0xf1f2f3f4f5f6f7f8ULL,
		  }, cmp_swap, sizeof(cmp_swap) },
		{ "RC ATOMIC_ACKNOWLEDGE", {
			.opcode = IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE, .dqpn = 9,
			.psn = 5,
			.aeth_syndrome = vhca_aeth_ack(VHCA_AETH_CREDIT_INVALID),
			.aeth_msn = 3, .atm_orig = 0x1122334455667788ULL,
		  }, atomic_ack, sizeof(atomic_ack) },
		{ "RC FLUSH", {
			.opcode = IB_OPCODE_RC_FLUSH, .ackreq = true,
			.dqpn = 9, .psn = 5, .reth_va = 0x7fff12345678ULL,
			.reth_rkey = 0xaabbccdd, .reth_len = 4096,
			.feth_type = IB_FLUSH_GLOBAL, .feth_level = IB_FLUSH_MR,
		  }, flush, sizeof(flush) },
	};
	unsigned int i;
	u8 buf[64];

	/* Each header exactly, and not a byte past it. */
	for (i = 0; i < ARRAY_SIZE(layouts); i++) {
		memset(buf, 0xaa, sizeof(buf));
		KUNIT_ASSERT_EQ_MSG(test, vhca_pkt_build(buf, sizeof(buf),
							 &layouts[i].p),
				    layouts[i].len, "%s", layouts[i].name);
		KUNIT_EXPECT_MEMEQ_MSG(test, buf, layouts[i].want,
				       layouts[i].len, "%s", layouts[i].name);
		KUNIT_EXPECT_EQ_MSG(test, buf[layouts[i].len], 0xaa, "%s",
				    layouts[i].name);
	}
}

static void fill_pkt(struct vhca_pkt *p, u8 opcode, u16 flags, u32 i,
		     u32 paylen)
{
	memset(p, 0, sizeof(*p));
	p->opcode = opcode;
	p->se = i & 1;
	p->mig = i & 2;
	p->ackreq = i & 4;
	p->dqpn = (0xabcdef + i) & VHCA_PKT_QPN_MASK;
	p->psn = vhca_psn_add(0xfffff0, i * 3);
	p->paylen = paylen;
	if (flags & F_RETH) {
		p->reth_va = 0xfedcba9876543210ULL + i;
		p->reth_rkey = 0x89abcdef ^ i;
		p->reth_len = 0x80000000U - i;
	}
	if (flags & F_AETH) {
		p->aeth_syndrome = 0x1f + i;
		p->aeth_msn = (0xfffffe + i) & VHCA_PSN_MASK;
	}
	if (flags & F_IMM)
		p->imm = cpu_to_be32(0x01020304 * (i + 1));
	if (flags & F_DETH) {
		p->deth_qkey = 0x80010000 | i;
		p->deth_sqpn = 0xfffffe - i;
	}
	if (flags & VHCA_PKT_IETH)
		p->ieth_rkey = 0x76543210 + i;
	if (flags & VHCA_PKT_ATMETH) {
		p->reth_va = 0xfedcba9876543210ULL + 8 * i;
		p->reth_rkey = 0x89abcdef ^ i;
		p->reth_len = sizeof(u64);	/* what the parser sets */
		p->atm_swap_add = 0x0102030405060708ULL * (i + 1);
		p->atm_compare = ~0ULL - i;
	}
	if (flags & VHCA_PKT_ATMACK)
		p->atm_orig = 0x8877665544332211ULL + i;
	if (flags & VHCA_PKT_FETH) {
		p->feth_type = (3 + i) & 0xf;
		p->feth_level = i & 3;
	}
}

static void expect_same(struct kunit *test, const struct vhca_pkt *a,
			const struct vhca_pkt *b)
{
	KUNIT_EXPECT_EQ(test, a->opcode, b->opcode);
	KUNIT_EXPECT_EQ(test, a->se, b->se);
	KUNIT_EXPECT_EQ(test, a->mig, b->mig);
	KUNIT_EXPECT_EQ(test, a->ackreq, b->ackreq);
	KUNIT_EXPECT_EQ(test, a->dqpn, b->dqpn);
	KUNIT_EXPECT_EQ(test, a->psn, b->psn);
	KUNIT_EXPECT_EQ(test, a->paylen, b->paylen);
	KUNIT_EXPECT_EQ(test, a->reth_va, b->reth_va);
	KUNIT_EXPECT_EQ(test, a->reth_rkey, b->reth_rkey);
	KUNIT_EXPECT_EQ(test, a->reth_len, b->reth_len);
	KUNIT_EXPECT_EQ(test, a->aeth_syndrome, b->aeth_syndrome);
	KUNIT_EXPECT_EQ(test, a->aeth_msn, b->aeth_msn);
	KUNIT_EXPECT_EQ(test, (__force u32)a->imm, (__force u32)b->imm);
	KUNIT_EXPECT_EQ(test, a->deth_qkey, b->deth_qkey);
	KUNIT_EXPECT_EQ(test, a->deth_sqpn, b->deth_sqpn);
	KUNIT_EXPECT_EQ(test, a->ieth_rkey, b->ieth_rkey);
	KUNIT_EXPECT_EQ(test, a->atm_swap_add, b->atm_swap_add);
	KUNIT_EXPECT_EQ(test, a->atm_compare, b->atm_compare);
	KUNIT_EXPECT_EQ(test, a->atm_orig, b->atm_orig);
	KUNIT_EXPECT_EQ(test, a->feth_type, b->feth_type);
	KUNIT_EXPECT_EQ(test, a->feth_level, b->feth_level);
}

static void vhca_pkt_round_trip(struct kunit *test)
{
	static const u32 lens[] = { 0, 1, 2, 3, 4, 5, 255, 256, 4096 };
	struct vhca_pkt in, out;
	unsigned int i, j, n = 0;
	size_t len;
	int hlen;
	u8 *buf;

	buf = kunit_kmalloc(test, 64 + 4096 + 8, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		for (j = 0; j < ARRAY_SIZE(lens); j++, n++) {
			if (lens[j] && !(ops[i].flags & F_PAY))
				break;
			fill_pkt(&in, ops[i].opcode, ops[i].flags, n, lens[j]);
			hlen = vhca_pkt_build(buf, 64, &in);
			KUNIT_ASSERT_EQ(test, hlen, ops[i].hdr_len);
			/* PadCnt makes payload + pad a multiple of 4. */
			KUNIT_EXPECT_EQ(test, buf[1] >> 4 & 3,
					(4 - lens[j] % 4) % 4);
			KUNIT_EXPECT_EQ(test, buf[1] & 0xf, 0);
			KUNIT_EXPECT_EQ(test, buf[4], 0);
			len = hlen + lens[j] + vhca_pkt_pad(lens[j]) +
			      IB_ICRC_BYTES;
			KUNIT_EXPECT_EQ(test, len % 4, 0);
			memset(&out, 0x5a, sizeof(out));
			KUNIT_ASSERT_EQ(test, vhca_pkt_parse(buf, len, &out), 0);
			expect_same(test, &in, &out);
		}
	}
}

static void vhca_pkt_build_refusals(struct kunit *test)
{
	struct vhca_pkt p = {
		.opcode = IB_OPCODE_RC_RDMA_WRITE_FIRST, .dqpn = 1, .psn = 1,
	};
	u8 buf[64];

	KUNIT_EXPECT_EQ(test, vhca_pkt_build(buf, 27, &p), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_pkt_build(buf, 28, &p), 28);
	p.psn = 0x1000000;
	KUNIT_EXPECT_EQ(test, vhca_pkt_build(buf, sizeof(buf), &p), -EINVAL);
	p.psn = 0;
	p.dqpn = 0x1000000;
	KUNIT_EXPECT_EQ(test, vhca_pkt_build(buf, sizeof(buf), &p), -EINVAL);
	p.dqpn = 1;
	p.opcode = IB_OPCODE_RC + 0x1e;	/* reserved */
	KUNIT_EXPECT_EQ(test, vhca_pkt_build(buf, sizeof(buf), &p), -EINVAL);
	p.opcode = IB_OPCODE_RD_SEND_ONLY;
	KUNIT_EXPECT_EQ(test, vhca_pkt_build(buf, sizeof(buf), &p), -EINVAL);
	/* Payload on a header-only packet. */
	p.opcode = IB_OPCODE_RC_ACKNOWLEDGE;
	p.paylen = 4;
	KUNIT_EXPECT_EQ(test, vhca_pkt_build(buf, sizeof(buf), &p), -EINVAL);
	p.paylen = 0;
	p.aeth_msn = 0x1000000;
	KUNIT_EXPECT_EQ(test, vhca_pkt_build(buf, sizeof(buf), &p), -EINVAL);
	p.aeth_msn = 0;
	KUNIT_EXPECT_EQ(test, vhca_pkt_build(buf, sizeof(buf), &p), 16);
	p.opcode = IB_OPCODE_UD_SEND_ONLY;
	p.deth_sqpn = 0x1000000;
	KUNIT_EXPECT_EQ(test, vhca_pkt_build(buf, sizeof(buf), &p), -EINVAL);
}

/* Parse a copy in an allocation of exactly len bytes. */
static int parse_exact(struct kunit *test, const u8 *pkt, size_t len)
{
	struct vhca_pkt out;
	u8 *copy;
	int ret;

	copy = kmalloc(len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, copy);
	memcpy(copy, pkt, len);
	ret = vhca_pkt_parse(copy, len, &out);
	kfree(copy);
	return ret;
}

static void vhca_pkt_parse_truncated(struct kunit *test)
{
	struct vhca_pkt p;
	unsigned int i;
	size_t len;
	u8 buf[64];

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		fill_pkt(&p, ops[i].opcode, ops[i].flags, i, 0);
		KUNIT_ASSERT_GT(test, vhca_pkt_build(buf, sizeof(buf), &p), 0);
		memset(buf + ops[i].hdr_len, 0, IB_ICRC_BYTES);
		for (len = 0; len < ops[i].hdr_len + IB_ICRC_BYTES; len++)
			KUNIT_EXPECT_EQ_MSG(test, parse_exact(test, buf, len),
					    -EINVAL, "opcode 0x%02x len %zu",
					    ops[i].opcode, len);
		KUNIT_EXPECT_EQ(test, parse_exact(test, buf, len), 0);
	}
}

static void vhca_pkt_parse_refusals(struct kunit *test)
{
	struct vhca_pkt p = {
		.opcode = IB_OPCODE_RC_SEND_ONLY, .dqpn = 0x11, .psn = 5,
	};
	struct vhca_pkt out;
	unsigned int op, tver;
	u8 buf[64] = {};

	KUNIT_ASSERT_EQ(test, vhca_pkt_build(buf, sizeof(buf), &p), 12);
	/* 8 payload bytes and the ICRC. */
	KUNIT_ASSERT_EQ(test, parse_exact(test, buf, 24), 0);

	/* Unknown opcodes, even with room for any header. */
	for (op = 0; op < 256; op++) {
		if (vhca_pkt_opinfo(op))
			continue;
		buf[0] = op;
		KUNIT_EXPECT_EQ_MSG(test, vhca_pkt_parse(buf, 64, &out),
				    -EINVAL, "opcode 0x%02x", op);
	}
	buf[0] = IB_OPCODE_RC_SEND_ONLY;

	for (tver = 1; tver < 16; tver++) {
		buf[1] = tver;
		KUNIT_EXPECT_EQ(test, vhca_pkt_parse(buf, 24, &out), -EINVAL);
	}
	buf[1] = 0;

	/* Pad: up to the payload + pad bytes present, never beyond. */
	buf[1] = FIELD_PREP(VHCA_BTH_PAD_MASK, 3);
	KUNIT_EXPECT_EQ(test, vhca_pkt_parse(buf, 20, &out), 0);
	KUNIT_EXPECT_EQ(test, out.paylen, 1);
	KUNIT_EXPECT_EQ(test, vhca_pkt_parse(buf, 16, &out), -EINVAL);
	buf[1] = FIELD_PREP(VHCA_BTH_PAD_MASK, 1);
	KUNIT_EXPECT_EQ(test, vhca_pkt_parse(buf, 16, &out), -EINVAL);
	buf[1] = 0;
	KUNIT_EXPECT_EQ(test, vhca_pkt_parse(buf, 16, &out), 0);
	KUNIT_EXPECT_EQ(test, out.paylen, 0);
	/* Payload + pad not a multiple of 4. */
	KUNIT_EXPECT_EQ(test, vhca_pkt_parse(buf, 17, &out), -EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_pkt_parse(buf, 19, &out), -EINVAL);

	/* P_Key: 0xffff or 0x7fff only. */
	buf[2] = 0x7f;
	KUNIT_EXPECT_EQ(test, vhca_pkt_parse(buf, 24, &out), 0);
	buf[3] = 0xfe;
	KUNIT_EXPECT_EQ(test, vhca_pkt_parse(buf, 24, &out), -EINVAL);
	buf[2] = 0x80;
	buf[3] = 0x01;
	KUNIT_EXPECT_EQ(test, vhca_pkt_parse(buf, 24, &out), -EINVAL);
	buf[2] = 0xff;
	buf[3] = 0xff;

	/* Destination QP 0; F/B/resv6 and resv7 are ignored. */
	buf[7] = 0;
	KUNIT_EXPECT_EQ(test, vhca_pkt_parse(buf, 24, &out), -EINVAL);
	buf[4] = 0xff;
	buf[7] = 0x11;
	buf[8] = 0x7f;
	KUNIT_EXPECT_EQ(test, vhca_pkt_parse(buf, 24, &out), 0);
	KUNIT_EXPECT_EQ(test, out.dqpn, 0x11);
	KUNIT_EXPECT_FALSE(test, out.ackreq);
	KUNIT_EXPECT_EQ(test, out.psn, 5);

	/* Payload on header-only opcodes. */
	p = (struct vhca_pkt){ .opcode = IB_OPCODE_RC_ACKNOWLEDGE, .dqpn = 1 };
	KUNIT_ASSERT_EQ(test, vhca_pkt_build(buf, sizeof(buf), &p), 16);
	KUNIT_EXPECT_EQ(test, vhca_pkt_parse(buf, 20, &out), 0);
	KUNIT_EXPECT_EQ(test, vhca_pkt_parse(buf, 24, &out), -EINVAL);
	p.opcode = IB_OPCODE_RC_RDMA_READ_REQUEST;
	KUNIT_ASSERT_EQ(test, vhca_pkt_build(buf, sizeof(buf), &p), 28);
	KUNIT_EXPECT_EQ(test, vhca_pkt_parse(buf, 32, &out), 0);
	KUNIT_EXPECT_EQ(test, vhca_pkt_parse(buf, 36, &out), -EINVAL);
}

static void vhca_pkt_psn(struct kunit *test)
{
	static const struct {
		u32 psn, n, sum;
	} adds[] = {
		{ 0xffffff, 1, 0 },
		{ 0xfffffe, 5, 3 },
		{ 0x123456, 0, 0x123456 },
		{ 0, 0xffffff, 0xffffff },
		{ 1, 0xffffff, 0 },
	};
	static const struct {
		u32 a, b;
		s32 diff;
	} diffs[] = {
		{ 5, 5, 0 },
		{ 0, 0xffffff, 1 },
		{ 0xffffff, 0, -1 },
		{ 0x00000f, 0xfffff0, 0x1f },
		{ 0xfffff0, 0x00000f, -0x1f },
		/* The window: 2^23 - 1 ahead is after, 2^23 ahead is before. */
		{ 0x7fffff, 0, 0x7fffff },
		{ 0x800000, 0, -0x800000 },
		{ 0x7ffffe, 0xffffff, 0x7fffff },
		{ 0x7fffff, 0xffffff, -0x800000 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(adds); i++)
		KUNIT_EXPECT_EQ_MSG(test, vhca_psn_add(adds[i].psn, adds[i].n),
				    adds[i].sum, "%#x + %#x", adds[i].psn,
				    adds[i].n);
	for (i = 0; i < ARRAY_SIZE(diffs); i++)
		KUNIT_EXPECT_EQ_MSG(test, vhca_psn_diff(diffs[i].a, diffs[i].b),
				    diffs[i].diff, "%#x - %#x", diffs[i].a,
				    diffs[i].b);

	KUNIT_EXPECT_TRUE(test, vhca_psn_after(0, 0xffffff));
	KUNIT_EXPECT_FALSE(test, vhca_psn_before(0, 0xffffff));
	KUNIT_EXPECT_TRUE(test, vhca_psn_before(0xffffff, 0));
	KUNIT_EXPECT_FALSE(test, vhca_psn_after(0xffffff, 0));
	KUNIT_EXPECT_FALSE(test, vhca_psn_after(7, 7));
	KUNIT_EXPECT_FALSE(test, vhca_psn_before(7, 7));
	KUNIT_EXPECT_TRUE(test, vhca_psn_after(0x7ffffe, 0xffffff));
	KUNIT_EXPECT_TRUE(test, vhca_psn_before(0x7fffff, 0xffffff));
	KUNIT_EXPECT_TRUE(test, vhca_psn_after(vhca_psn_add(0xfffff8, 16),
					       0xfffff8));
}

/* The MSN of an AETH counts completed requests: which packets end one. */
static void vhca_pkt_msn(struct kunit *test)
{
	static const u8 ends[] = {
		IB_OPCODE_RC_SEND_LAST, IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE,
		IB_OPCODE_RC_SEND_ONLY, IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE,
		IB_OPCODE_RC_RDMA_WRITE_LAST,
		IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
		IB_OPCODE_RC_RDMA_WRITE_ONLY,
		IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
		IB_OPCODE_RC_RDMA_READ_REQUEST,
		IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE,
		IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE,
		IB_OPCODE_RC_COMPARE_SWAP, IB_OPCODE_RC_FETCH_ADD,
		IB_OPCODE_RC_ATOMIC_WRITE, IB_OPCODE_RC_FLUSH,
	};
	unsigned int op, i, n = 0;
	bool end;

	/* XRC's requests end one as RC's do. */
	for (op = 0; op < 256; op++) {
		end = false;
		for (i = 0; i < ARRAY_SIZE(ends); i++)
			end |= vhca_pkt_xrc_to_rc(op) == ends[i];
		n += end;
		KUNIT_EXPECT_EQ_MSG(test, vhca_pkt_msn_next(5, op), end ? 6 : 5,
				    "opcode 0x%02x", op);
	}
	KUNIT_EXPECT_EQ(test, n, 2 * ARRAY_SIZE(ends));
	/* 24 bits, wrapping; FIRST, MIDDLE, responses, ACKs, UD: no change. */
	KUNIT_EXPECT_EQ(test, vhca_pkt_msn_next(0xffffff,
						IB_OPCODE_RC_SEND_ONLY), 0);
	KUNIT_EXPECT_EQ(test, vhca_pkt_msn_next(0xfffffe,
						IB_OPCODE_RC_RDMA_READ_REQUEST),
			0xffffff);
	KUNIT_EXPECT_EQ(test, vhca_pkt_msn_next(0x123456,
						IB_OPCODE_RC_RDMA_WRITE_FIRST),
			0x123456);
	KUNIT_EXPECT_EQ(test, vhca_pkt_msn_next(7, IB_OPCODE_RC_ACKNOWLEDGE), 7);
	KUNIT_EXPECT_EQ(test, vhca_pkt_msn_next(7, IB_OPCODE_UD_SEND_ONLY), 7);
}

static void expect_segments(struct kunit *test, u32 len, u32 mtu, u32 n)
{
	u64 sum = 0;
	u32 i, seg;

	KUNIT_ASSERT_EQ_MSG(test, vhca_pkt_npkts(len, mtu), n,
			    "len %u mtu %u", len, mtu);
	for (i = 0; i < n; i++) {
		seg = vhca_pkt_seg_len(len, mtu, i);
		if (i < n - 1)
			KUNIT_EXPECT_EQ(test, seg, mtu);
		else if (len)
			KUNIT_EXPECT_TRUE(test, seg >= 1 && seg <= mtu);
		sum += seg;
	}
	KUNIT_EXPECT_EQ(test, sum, len);
	KUNIT_EXPECT_EQ(test, vhca_pkt_seg_len(len, mtu, n), 0);
}

static void vhca_pkt_segments(struct kunit *test)
{
	u32 mtu;

	for (mtu = 256; mtu <= 4096; mtu *= 2) {
		expect_segments(test, 0, mtu, 1);
		KUNIT_EXPECT_EQ(test, vhca_pkt_seg_len(0, mtu, 0), 0);
		expect_segments(test, 1, mtu, 1);
		expect_segments(test, mtu - 1, mtu, 1);
		expect_segments(test, mtu, mtu, 1);
		expect_segments(test, mtu + 1, mtu, 2);
		KUNIT_EXPECT_EQ(test, vhca_pkt_seg_len(mtu + 1, mtu, 1), 1);
		expect_segments(test, 3 * mtu, mtu, 3);
		KUNIT_EXPECT_EQ(test, vhca_pkt_seg_len(3 * mtu, mtu, 2), mtu);
	}
	/* The largest messages, without overflow. */
	KUNIT_EXPECT_EQ(test, vhca_pkt_npkts(0x80000000U, 4096), 0x80000);
	KUNIT_EXPECT_EQ(test, vhca_pkt_npkts(U32_MAX, 256), 0x1000000);
	KUNIT_EXPECT_EQ(test, vhca_pkt_seg_len(U32_MAX, 256, 0xffffff), 255);
	KUNIT_EXPECT_EQ(test, vhca_pkt_seg_len(U32_MAX, 256, U32_MAX), 0);
}
