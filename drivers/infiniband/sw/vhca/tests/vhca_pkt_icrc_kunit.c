// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The vhca_pkt suite's ICRC (vhca_pkt_kunit.c includes this file): known
 * answers, the builder's headers under them, the masked and covered
 * fields.
 */

/* Bitwise CRC-32 (reflected 0x04c11db7), independent of lib/crc32. */
static u32 ref_crc32(u32 crc, const u8 *p, size_t n)
{
	int k;

	while (n--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320 & -(crc & 1));
	}
	return crc;
}

/*
 * Reference ICRC of a contiguous IP + UDP + IB packet (ICRC last), masked
 * by byte offset as IBA Annex A17 lays it out.
 */
static u32 ref_icrc(const u8 *pkt, size_t len, bool ipv6)
{
	static const u8 lrh[8] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	size_t nlen = ipv6 ? 40 : 20;
	u8 m[128];
	u32 crc;

	memcpy(m, pkt, len);
	if (ipv6) {
		m[0] |= 0x0f;			/* traffic class, */
		memset(m + 1, 0xff, 3);		/* flow label */
		m[7] = 0xff;			/* hop limit */
	} else {
		m[1] = 0xff;			/* TOS */
		m[8] = 0xff;			/* TTL */
		memset(m + 10, 0xff, 2);	/* header checksum */
	}
	memset(m + nlen + 6, 0xff, 2);		/* UDP checksum */
	m[nlen + 8 + 4] = 0xff;			/* F, B, resv6 */
	crc = ref_crc32(~0U, lrh, sizeof(lrh));
	return ~ref_crc32(crc, m, len - 4);
}

/*
 * RoCEv2 CNP captured on a ConnectX-4 Lx (IPv4, BECN set, ICRC 82 fd 00
 * 2a on the wire), from scapy's test/contrib/roce.uts.
 */
static const u8 cx4_cnp[] = {
	0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00,
	0x40, 0x11, 0x91, 0x61, 0x0a, 0x00, 0x11, 0x01,
	0x0a, 0x00, 0x12, 0x01,
	0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00,
	0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18,
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x82, 0xfd, 0x00, 0x2a,
};

/* RC SEND_ONLY over IPv6, TC 0x1a, flow label 0x12345, "hello" + pad 3. */
static const u8 v6_send[] = {
	0x61, 0xa1, 0x23, 0x45, 0x00, 0x20, 0x11, 0x40,
	0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
	0x20, 0x01, 0x0d, 0xb8, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02,
	0xc1, 0x23, 0x12, 0xb7, 0x00, 0x20, 0x00, 0x00,
	0x04, 0xb0, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
	0x80, 0x12, 0x34, 0x56,
	'h', 'e', 'l', 'l', 'o', 0x00, 0x00, 0x00,
	0xc0, 0x1d, 0x9e, 0x17,			/* zlib.crc32 */
};

/* RC WRITE_ONLY_WITH_IMM over IPv4, ECN 2, 7 bytes + pad 1. */
static const u8 v4_write[] = {
	0x45, 0x02, 0x00, 0x48, 0x1c, 0x46, 0x40, 0x00,
	0x40, 0x11, 0x9b, 0x09, 0xc0, 0xa8, 0x01, 0x01,
	0xc0, 0xa8, 0x01, 0x02,
	0xd0, 0x01, 0x12, 0xb7, 0x00, 0x34, 0x00, 0x00,
	0x0b, 0x10, 0xff, 0xff, 0x00, 0xab, 0xcd, 0xef,
	0x80, 0xff, 0xff, 0xff,
	0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x56, 0x78,
	0xab, 0xcd, 0x12, 0x34, 0x00, 0x00, 0x00, 0x07,
	0xde, 0xad, 0xbe, 0xef,
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x00,
	0x8d, 0x83, 0x5c, 0xae,			/* zlib.crc32 */
};

static void vhca_pkt_icrc_known(struct kunit *test)
{
	static const struct {
		const u8 *pkt;
		size_t len;
		bool ipv6;
	} kat[] = {
		{ cx4_cnp, sizeof(cx4_cnp), false },
		{ v6_send, sizeof(v6_send), true },
		{ v4_write, sizeof(v4_write), false },
	};
	unsigned int i;
	size_t nlen;
	u8 buf[128];

	KUNIT_EXPECT_EQ(test, ref_crc32(~0U, (const u8 *)"\xff\xff\xff\xff"
					"\xff\xff\xff\xff", 8),
			VHCA_ICRC_SEED);

	for (i = 0; i < ARRAY_SIZE(kat); i++) {
		const u8 *pkt = kat[i].pkt;
		size_t len = kat[i].len;

		nlen = kat[i].ipv6 ? 40 : 20;
		KUNIT_EXPECT_EQ(test, ref_icrc(pkt, len, kat[i].ipv6),
				get_unaligned_le32(pkt + len - 4));
		KUNIT_EXPECT_EQ(test, vhca_pkt_icrc_check(pkt, pkt + nlen,
							  pkt + nlen + 8,
							  len - nlen - 8), 0);

		memcpy(buf, pkt, len);
		memset(buf + len - 4, 0, 4);
		KUNIT_ASSERT_EQ(test, vhca_pkt_icrc_set(buf, buf + nlen,
							buf + nlen + 8,
							len - nlen - 8), 0);
		KUNIT_EXPECT_MEMEQ(test, buf, pkt, len);
	}
}

/* The builder's headers under the known-answer ICRCs above. */
static void vhca_pkt_icrc_built(struct kunit *test)
{
	static const struct {
		const char *name;
		struct vhca_pkt p;
		const u8 *want;
		size_t len;
		unsigned int nlen;	/* the IP header's length */
		int hlen;		/* the IB headers' */
		const char *payload;	/* 8 bytes, the pad included */
	} kat[] = {
		{ "v6_send", {
			.opcode = IB_OPCODE_RC_SEND_ONLY, .se = true,
			.ackreq = true, .dqpn = 0x11, .psn = 0x123456,
			.paylen = 5,
		  }, v6_send, sizeof(v6_send), 40, 12, "hello\0\0\0" },
		{ "v4_write", {
			.opcode = IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
			.ackreq = true, .dqpn = 0xabcdef, .psn = 0xffffff,
			.paylen = 7, .reth_va = 0x7f0012345678ULL,
			.reth_rkey = 0xabcd1234, .reth_len = 7,
			.imm = cpu_to_be32(0xdeadbeef),
		  }, v4_write, sizeof(v4_write), 20, 32,
		  "\x01\x02\x03\x04\x05\x06\x07\x00" },
	};
	unsigned int i, ib;
	u8 buf[128];
	int hlen;

	/* The IP and UDP headers copied, the IB headers built. */
	for (i = 0; i < ARRAY_SIZE(kat); i++) {
		ib = kat[i].nlen + 8;
		memcpy(buf, kat[i].want, ib);
		hlen = vhca_pkt_build(buf + ib, sizeof(buf) - ib, &kat[i].p);
		KUNIT_ASSERT_EQ_MSG(test, hlen, kat[i].hlen, "%s",
				    kat[i].name);
		memcpy(buf + ib + hlen, kat[i].payload, 8);
		KUNIT_ASSERT_EQ_MSG(test, vhca_pkt_icrc_set(buf,
							    buf + kat[i].nlen,
							    buf + ib,
							    kat[i].len - ib),
				    0, "%s", kat[i].name);
		KUNIT_EXPECT_MEMEQ_MSG(test, buf, kat[i].want, kat[i].len,
				       "%s", kat[i].name);
	}
}

/* The ICRC check of the CNP above, as modified in @buf. */
static int cnp_check(const u8 *buf)
{
	return vhca_pkt_icrc_check(buf, buf + 20, buf + 28,
				   sizeof(cx4_cnp) - 28);
}

static void vhca_pkt_icrc_fields(struct kunit *test)
{
	static const int masked[] = { 1, 8, 10, 11, 26, 27, 32 };
	static const int covered[] = {
		2, 3, 4, 5, 6, 7, 9, 12, 19, 20, 21, 22, 23, 24, 25,
		28, 29, 30, 31, 33, 35, 36, 39, 40, 55,
	};
	const size_t len = sizeof(cx4_cnp);
	unsigned int i;
	u8 buf[128];

	/* Variant fields: any value, same ICRC. */
	for (i = 0; i < ARRAY_SIZE(masked); i++) {
		memcpy(buf, cx4_cnp, len);
		buf[masked[i]] ^= 0x5a;
		KUNIT_EXPECT_EQ_MSG(test, cnp_check(buf), 0, "byte %d",
				    masked[i]);
	}
	/* Any other byte (but the version/IHL): mismatch. */
	for (i = 0; i < ARRAY_SIZE(covered); i++) {
		memcpy(buf, cx4_cnp, len);
		buf[covered[i]] ^= 0x01;
		KUNIT_EXPECT_EQ_MSG(test, cnp_check(buf), -EBADMSG, "byte %d",
				    covered[i]);
	}
	memcpy(buf, cx4_cnp, len);
	buf[len - 1] ^= 0x80;
	KUNIT_EXPECT_EQ(test, cnp_check(buf), -EBADMSG);

	/* IPv6 variant fields: traffic class, flow label, hop limit. */
	memcpy(buf, v6_send, sizeof(v6_send));
	buf[0] ^= 0x0f;
	buf[1] ^= 0xff;
	buf[3] ^= 0x33;
	buf[7] = 1;
	KUNIT_EXPECT_EQ(test, vhca_pkt_icrc_check(buf, buf + 40, buf + 48, 24),
			0);
	buf[5] ^= 1;	/* payload length */
	KUNIT_EXPECT_EQ(test, vhca_pkt_icrc_check(buf, buf + 40, buf + 48, 24),
			-EBADMSG);

	/* Not IPv4 without options or IPv6; no room for BTH + ICRC. */
	memcpy(buf, cx4_cnp, len);
	buf[0] = 0x46;
	KUNIT_EXPECT_EQ(test, cnp_check(buf), -EINVAL);
	buf[0] = 0x55;
	KUNIT_EXPECT_EQ(test, vhca_pkt_icrc_set(buf, buf + 20, buf + 28,
						len - 28), -EINVAL);
	buf[0] = 0x45;
	KUNIT_EXPECT_EQ(test, vhca_pkt_icrc_check(buf, buf + 20, buf + 28, 15),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, vhca_pkt_icrc_set(buf, buf + 20, buf + 28, 15),
			-EINVAL);
	KUNIT_EXPECT_MEMEQ(test, buf, cx4_cnp, len);
}
