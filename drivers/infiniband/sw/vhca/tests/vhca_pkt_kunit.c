// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit suite of the RoCEv2 packet layer (vhca_pkt), one translation unit
 * with the source it tests (static functions included) and the opcode
 * table, then one file per area, vhca_pkt_<area>_kunit.c, which the
 * module's Makefile does not compile on their own: vhca_pkt_hdr_kunit.c,
 * the opcode table against the IB values and header layouts, byte-exact
 * headers, build/parse round trips for every opcode, refusal of malformed
 * packets (each truncation in an allocation of exactly its size, so KASAN
 * sees any over-read), 24-bit PSN arithmetic across the wrap and MTU
 * segmentation; vhca_pkt_icrc_kunit.c, ICRC known answers: a packet
 * captured from a ConnectX-4 Lx NIC and packets whose ICRC was computed
 * outside the kernel (Python's zlib.crc32), each also checked with a
 * bitwise reference CRC-32 written here.
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <rdma/ib_pack.h>

#include "../vhca_pkt.c"

#define F_RETH		VHCA_PKT_RETH
#define F_AETH		VHCA_PKT_AETH
#define F_IMM		VHCA_PKT_IMMDT
#define F_DETH		VHCA_PKT_DETH
#define F_PAY		VHCA_PKT_PAYLOAD
#define F_XRC		VHCA_PKT_XRCETH
#define XRC(op)		(VHCA_OPCODE_XRC | IB_OPCODE_##op)

/* Every opcode vhca speaks: IB value, headers and place (IBA 9.2, 9.3). */
static const struct {
	u8 opcode;
	u8 ib;		/* the kernel's IB_OPCODE_* */
	u16 flags;
	u8 hdr_len;
} ops[] = {
	{ IB_OPCODE_RC_SEND_FIRST, IB_OPCODE_RC_SEND_FIRST,
	  F_PAY | VHCA_PKT_FIRST, 12 },
	{ IB_OPCODE_RC_SEND_MIDDLE, IB_OPCODE_RC_SEND_MIDDLE,
	  F_PAY | VHCA_PKT_MIDDLE, 12 },
	{ IB_OPCODE_RC_SEND_LAST, IB_OPCODE_RC_SEND_LAST,
	  F_PAY | VHCA_PKT_LAST, 12 },
	{ IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE,
	  IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE,
	  F_IMM | F_PAY | VHCA_PKT_LAST, 16 },
	{ IB_OPCODE_RC_SEND_ONLY, IB_OPCODE_RC_SEND_ONLY,
	  F_PAY | VHCA_PKT_ONLY, 12 },
	{ IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE,
	  IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE,
	  F_IMM | F_PAY | VHCA_PKT_ONLY, 16 },
	{ IB_OPCODE_RC_RDMA_WRITE_FIRST, IB_OPCODE_RC_RDMA_WRITE_FIRST,
	  F_RETH | F_PAY | VHCA_PKT_FIRST, 28 },
	{ IB_OPCODE_RC_RDMA_WRITE_MIDDLE, IB_OPCODE_RC_RDMA_WRITE_MIDDLE,
	  F_PAY | VHCA_PKT_MIDDLE, 12 },
	{ IB_OPCODE_RC_RDMA_WRITE_LAST, IB_OPCODE_RC_RDMA_WRITE_LAST,
	  F_PAY | VHCA_PKT_LAST, 12 },
	{ IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
	  IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
	  F_IMM | F_PAY | VHCA_PKT_LAST, 16 },
	{ IB_OPCODE_RC_RDMA_WRITE_ONLY, IB_OPCODE_RC_RDMA_WRITE_ONLY,
	  F_RETH | F_PAY | VHCA_PKT_ONLY, 28 },
	{ IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
	  IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
	  F_RETH | F_IMM | F_PAY | VHCA_PKT_ONLY, 32 },
	{ IB_OPCODE_RC_RDMA_READ_REQUEST, IB_OPCODE_RC_RDMA_READ_REQUEST,
	  F_RETH | VHCA_PKT_ONLY, 28 },
	{ IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE,
	  IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE,
	  VHCA_PKT_IETH | F_PAY | VHCA_PKT_LAST, 16 },
	{ IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE,
	  IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE,
	  VHCA_PKT_IETH | F_PAY | VHCA_PKT_ONLY, 16 },
	{ IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST,
	  IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST,
	  F_AETH | F_PAY | VHCA_PKT_FIRST, 16 },
	{ IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE,
	  IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE,
	  F_PAY | VHCA_PKT_MIDDLE, 12 },
	{ IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST,
	  IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST,
	  F_AETH | F_PAY | VHCA_PKT_LAST, 16 },
	{ IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY,
	  IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY,
	  F_AETH | F_PAY | VHCA_PKT_ONLY, 16 },
	{ IB_OPCODE_RC_ACKNOWLEDGE, IB_OPCODE_RC_ACKNOWLEDGE,
	  F_AETH | VHCA_PKT_ONLY, 16 },
	{ IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE, IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE,
	  F_AETH | VHCA_PKT_ATMACK | VHCA_PKT_ONLY, 24 },
	{ IB_OPCODE_RC_COMPARE_SWAP, IB_OPCODE_RC_COMPARE_SWAP,
	  VHCA_PKT_ATMETH | VHCA_PKT_ONLY, 40 },
	{ IB_OPCODE_RC_FETCH_ADD, IB_OPCODE_RC_FETCH_ADD,
	  VHCA_PKT_ATMETH | VHCA_PKT_ONLY, 40 },
	{ IB_OPCODE_RC_ATOMIC_WRITE, IB_OPCODE_RC_ATOMIC_WRITE,
	  F_RETH | F_PAY | VHCA_PKT_ONLY, 28 },
	{ IB_OPCODE_RC_FLUSH, IB_OPCODE_RC_FLUSH,
	  VHCA_PKT_FETH | F_RETH | VHCA_PKT_ONLY, 32 },
	/* UC: the IBA's values, 0x20 to 0x2b. */
	{ 0x20, IB_OPCODE_UC_SEND_FIRST, F_PAY | VHCA_PKT_FIRST, 12 },
	{ 0x21, IB_OPCODE_UC_SEND_MIDDLE, F_PAY | VHCA_PKT_MIDDLE, 12 },
	{ 0x22, IB_OPCODE_UC_SEND_LAST, F_PAY | VHCA_PKT_LAST, 12 },
	{ 0x23, IB_OPCODE_UC_SEND_LAST_WITH_IMMEDIATE,
	  F_IMM | F_PAY | VHCA_PKT_LAST, 16 },
	{ 0x24, IB_OPCODE_UC_SEND_ONLY, F_PAY | VHCA_PKT_ONLY, 12 },
	{ 0x25, IB_OPCODE_UC_SEND_ONLY_WITH_IMMEDIATE,
	  F_IMM | F_PAY | VHCA_PKT_ONLY, 16 },
	{ 0x26, IB_OPCODE_UC_RDMA_WRITE_FIRST,
	  F_RETH | F_PAY | VHCA_PKT_FIRST, 28 },
	{ 0x27, IB_OPCODE_UC_RDMA_WRITE_MIDDLE, F_PAY | VHCA_PKT_MIDDLE, 12 },
	{ 0x28, IB_OPCODE_UC_RDMA_WRITE_LAST, F_PAY | VHCA_PKT_LAST, 12 },
	{ 0x29, IB_OPCODE_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
	  F_IMM | F_PAY | VHCA_PKT_LAST, 16 },
	{ 0x2a, IB_OPCODE_UC_RDMA_WRITE_ONLY,
	  F_RETH | F_PAY | VHCA_PKT_ONLY, 28 },
	{ 0x2b, IB_OPCODE_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
	  F_RETH | F_IMM | F_PAY | VHCA_PKT_ONLY, 32 },
	{ IB_OPCODE_UD_SEND_ONLY, IB_OPCODE_UD_SEND_ONLY,
	  F_DETH | F_PAY | VHCA_PKT_ONLY, 20 },
	{ IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE, IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE,
	  F_DETH | F_IMM | F_PAY | VHCA_PKT_ONLY, 24 },
	/*
	 * XRC: the IBA's values, 0xa0 to 0xb7 (transport 101b): RC's
	 * operations, the requests with an XRCETH after the BTH.
	 */
	{ 0xa0, XRC(SEND_FIRST), F_XRC | F_PAY | VHCA_PKT_FIRST, 16 },
	{ 0xa1, XRC(SEND_MIDDLE), F_XRC | F_PAY | VHCA_PKT_MIDDLE, 16 },
	{ 0xa2, XRC(SEND_LAST), F_XRC | F_PAY | VHCA_PKT_LAST, 16 },
	{ 0xa3, XRC(SEND_LAST_WITH_IMMEDIATE),
	  F_XRC | F_IMM | F_PAY | VHCA_PKT_LAST, 20 },
	{ 0xa4, XRC(SEND_ONLY), F_XRC | F_PAY | VHCA_PKT_ONLY, 16 },
	{ 0xa5, XRC(SEND_ONLY_WITH_IMMEDIATE),
	  F_XRC | F_IMM | F_PAY | VHCA_PKT_ONLY, 20 },
	{ 0xa6, XRC(RDMA_WRITE_FIRST),
	  F_XRC | F_RETH | F_PAY | VHCA_PKT_FIRST, 32 },
	{ 0xa7, XRC(RDMA_WRITE_MIDDLE), F_XRC | F_PAY | VHCA_PKT_MIDDLE, 16 },
	{ 0xa8, XRC(RDMA_WRITE_LAST), F_XRC | F_PAY | VHCA_PKT_LAST, 16 },
	{ 0xa9, XRC(RDMA_WRITE_LAST_WITH_IMMEDIATE),
	  F_XRC | F_IMM | F_PAY | VHCA_PKT_LAST, 20 },
	{ 0xaa, XRC(RDMA_WRITE_ONLY),
	  F_XRC | F_RETH | F_PAY | VHCA_PKT_ONLY, 32 },
	{ 0xab, XRC(RDMA_WRITE_ONLY_WITH_IMMEDIATE),
	  F_XRC | F_RETH | F_IMM | F_PAY | VHCA_PKT_ONLY, 36 },
	{ 0xac, XRC(RDMA_READ_REQUEST), F_XRC | F_RETH | VHCA_PKT_ONLY, 32 },
	{ 0xad, XRC(RDMA_READ_RESPONSE_FIRST),
	  F_AETH | F_PAY | VHCA_PKT_FIRST, 16 },
	{ 0xae, XRC(RDMA_READ_RESPONSE_MIDDLE), F_PAY | VHCA_PKT_MIDDLE, 12 },
	{ 0xaf, XRC(RDMA_READ_RESPONSE_LAST),
	  F_AETH | F_PAY | VHCA_PKT_LAST, 16 },
	{ 0xb0, XRC(RDMA_READ_RESPONSE_ONLY),
	  F_AETH | F_PAY | VHCA_PKT_ONLY, 16 },
	{ 0xb1, XRC(ACKNOWLEDGE), F_AETH | VHCA_PKT_ONLY, 16 },
	{ 0xb2, XRC(ATOMIC_ACKNOWLEDGE),
	  F_AETH | VHCA_PKT_ATMACK | VHCA_PKT_ONLY, 24 },
	{ 0xb3, XRC(COMPARE_SWAP), F_XRC | VHCA_PKT_ATMETH | VHCA_PKT_ONLY, 44 },
	{ 0xb4, XRC(FETCH_ADD), F_XRC | VHCA_PKT_ATMETH | VHCA_PKT_ONLY, 44 },
	{ 0xb6, XRC(SEND_LAST_WITH_INVALIDATE),
	  F_XRC | VHCA_PKT_IETH | F_PAY | VHCA_PKT_LAST, 20 },
	{ 0xb7, XRC(SEND_ONLY_WITH_INVALIDATE),
	  F_XRC | VHCA_PKT_IETH | F_PAY | VHCA_PKT_ONLY, 20 },
	{ 0xbc, XRC(FLUSH), F_XRC | VHCA_PKT_FETH | F_RETH | VHCA_PKT_ONLY, 36 },
	{ 0xbd, XRC(ATOMIC_WRITE), F_XRC | F_RETH | F_PAY | VHCA_PKT_ONLY, 32 },
};

#include "vhca_pkt_hdr_kunit.c"
#include "vhca_pkt_icrc_kunit.c"

static struct kunit_case vhca_pkt_cases[] = {
	KUNIT_CASE(vhca_pkt_opcodes),
	KUNIT_CASE(vhca_pkt_aeth_syndromes),
	KUNIT_CASE(vhca_pkt_layout),
	KUNIT_CASE(vhca_pkt_round_trip),
	KUNIT_CASE(vhca_pkt_build_refusals),
	KUNIT_CASE(vhca_pkt_parse_truncated),
	KUNIT_CASE(vhca_pkt_parse_refusals),
	KUNIT_CASE(vhca_pkt_psn),
	KUNIT_CASE(vhca_pkt_msn),
	KUNIT_CASE(vhca_pkt_segments),
	KUNIT_CASE(vhca_pkt_icrc_known),
	KUNIT_CASE(vhca_pkt_icrc_built),
	KUNIT_CASE(vhca_pkt_icrc_fields),
	{}
};

/* The ICRC's CRC-32 routine, as the module picks it at load. */
static int vhca_pkt_suite_init(struct kunit_suite *suite)
{
	return vhca_crc_init();
}

static void vhca_pkt_suite_exit(struct kunit_suite *suite)
{
	vhca_crc_exit();
}

static struct kunit_suite vhca_pkt_suite = {
	.name = "vhca_pkt",
	.suite_init = vhca_pkt_suite_init,
	.suite_exit = vhca_pkt_suite_exit,
	.test_cases = vhca_pkt_cases,
};

kunit_test_suite(vhca_pkt_suite);
