/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 packet layer: the InfiniBand transport headers vhca puts in UDP
 * datagrams (port 4791), their builder and parser, the ICRC, 24-bit PSN
 * arithmetic and path-MTU segmentation.  Pure functions on byte buffers:
 * no device, no skb.
 *
 * A packet is the UDP payload: BTH, the extension headers of its opcode,
 * payload, 0-3 pad bytes (payload + pad is a multiple of 4) and the 4-byte
 * ICRC.  Header fields are big-endian; the ICRC is stored least significant
 * byte first (the Ethernet FCS convention rdma_rxe and RoCE NICs use).
 */
#ifndef VHCA_PKT_H
#define VHCA_PKT_H

#include <linux/bitfield.h>
#include <linux/bitops.h>
#include <linux/build_bug.h>
#include <linux/compiler_attributes.h>
#include <linux/types.h>
#include <rdma/ib_pack.h>

#define VHCA_PKT_PKEY		0xffff	/* the one P_Key vhca sends */
#define VHCA_PKT_QPN_MASK	0xffffffU
#define VHCA_PSN_MASK		0xffffffU

/* Base Transport Header */
struct vhca_bth {
	u8 opcode;
	u8 flags;		/* SE, M, PadCnt, TVer */
	__be16 pkey;
	__be32 qpn;		/* 31-24: F, B, resv6; 23-0: DestQP */
	__be32 apsn;		/* 31: AckReq; 30-24: resv7; 23-0: PSN */
} __packed;

/* The fields of flags and apsn (FIELD_GET(), FIELD_PREP()). */
#define VHCA_BTH_SE		BIT(7)
#define VHCA_BTH_MIG		BIT(6)
#define VHCA_BTH_PAD_MASK	GENMASK(5, 4)
#define VHCA_BTH_TVER_MASK	GENMASK(3, 0)
#define VHCA_BTH_ACKREQ		BIT(31)

/* RDMA Extended Transport Header */
struct vhca_reth {
	__be64 va;
	__be32 rkey;
	__be32 len;
} __packed;

/* ACK Extended Transport Header */
struct vhca_aeth {
	__be32 smsn;		/* 31-24: syndrome; 23-0: MSN */
} __packed;

/* Immediate data, opaque */
struct vhca_immdt {
	__be32 imm;
} __packed;

/* Invalidate Extended Transport Header (SEND with Invalidate) */
struct vhca_ieth {
	__be32 rkey;
} __packed;

/* Atomic Extended Transport Header (CMP_SWAP, FETCH_ADD requests) */
struct vhca_atmeth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;	/* swap, or add */
	__be64 compare;
} __packed;

/* Atomic ACK Extended Transport Header: the value found before */
struct vhca_atmack {
	__be64 orig;
} __packed;

/*
 * FLUSH Extended Transport Header: the selectivity level and placement
 * type of a FLUSH, whose RETH follows
 */
struct vhca_feth {
	__be32 sel_plt;		/* 31-6: reserved; 5-4: level; 3-0: type */
} __packed;

#define VHCA_FETH_SEL_MASK	GENMASK(5, 4)
#define VHCA_FETH_PLT_MASK	GENMASK(3, 0)

/* XRC Extended Transport Header: the XRC SRQ a request is for */
struct vhca_xrceth {
	__be32 srqn;		/* 31-24: reserved; 23-0: XRC SRQ number */
} __packed;

/* Datagram Extended Transport Header (UD) */
struct vhca_deth {
	__be32 qkey;
	__be32 sqpn;		/* 31-24: reserved; 23-0: source QP */
} __packed;

static_assert(sizeof(struct vhca_bth) == IB_BTH_BYTES);
static_assert(sizeof(struct vhca_reth) == 16);
static_assert(sizeof(struct vhca_aeth) == 4);
static_assert(sizeof(struct vhca_immdt) == 4);
static_assert(sizeof(struct vhca_ieth) == 4);
static_assert(sizeof(struct vhca_atmeth) == IB_EXT_ATOMICETH_BYTES);
static_assert(sizeof(struct vhca_atmack) == 8);
static_assert(sizeof(struct vhca_deth) == IB_DETH_BYTES);
static_assert(sizeof(struct vhca_xrceth) == IB_EXT_XRC_BYTES);
static_assert(sizeof(struct vhca_feth) == 4);

/* What follows the BTH of an opcode, and its place in a message. */
#define VHCA_PKT_RETH		BIT(0)
#define VHCA_PKT_AETH		BIT(1)
#define VHCA_PKT_IMMDT		BIT(2)
#define VHCA_PKT_DETH		BIT(3)
#define VHCA_PKT_PAYLOAD	BIT(4)	/* may carry payload */
#define VHCA_PKT_FIRST		BIT(5)
#define VHCA_PKT_MIDDLE		BIT(6)
#define VHCA_PKT_LAST		BIT(7)
#define VHCA_PKT_ONLY		(VHCA_PKT_FIRST | VHCA_PKT_LAST)
#define VHCA_PKT_IETH		BIT(8)
#define VHCA_PKT_ATMETH		BIT(9)
#define VHCA_PKT_ATMACK		BIT(10)
#define VHCA_PKT_XRCETH		BIT(11)	/* right after the BTH */
#define VHCA_PKT_FETH		BIT(12)	/* before the RETH */

/*
 * An opcode is its transport (IB_OPCODE_RC, IB_OPCODE_UC, IB_OPCODE_UD,
 * VHCA_OPCODE_XRC) plus its operation (IB_OPCODE_SEND_FIRST, ...): UC's
 * SEND and WRITE opcodes are RC's with the UC transport; XRC has all of
 * RC's operations, its requests with an XRCETH after the BTH.
 */
#define VHCA_PKT_TRANSPORT_MASK	0xe0
#define VHCA_PKT_OP_MASK	0x1f
/* The IBTA's XRC transport, 101b (<rdma/ib_pack.h> has no name for it). */
#define VHCA_OPCODE_XRC		0xa0

/*
 * The RC opcode of an XRC one (the engine runs XRC QPs as RC QPs once the
 * XRCETH is read); any other opcode as it is.
 */
static inline u8 vhca_pkt_xrc_to_rc(u8 opcode)
{
	if ((opcode & VHCA_PKT_TRANSPORT_MASK) != VHCA_OPCODE_XRC)
		return opcode;
	return IB_OPCODE_RC | (opcode & VHCA_PKT_OP_MASK);
}

struct vhca_pkt_opinfo {
	u16 flags;		/* VHCA_PKT_* */
	u8 hdr_len;		/* BTH + extension headers, bytes */
};

/* NULL for an opcode vhca does not speak. */
const struct vhca_pkt_opinfo *vhca_pkt_opinfo(u8 opcode);

/* The AETH's one word: the syndrome (bits 31-24) and the MSN. */
#define VHCA_AETH_SYNDROME	GENMASK(31, 24)
#define VHCA_AETH_MSN		GENMASK(23, 0)

/*
 * AETH syndrome: bit 7 zero, bits 6-5 type, bits 4-0 value (ACK: credit
 * count; RNR NAK: timer code; NAK: code).
 */
#define VHCA_AETH_TYPE_MASK	0x60
#define VHCA_AETH_VALUE_MASK	0x1f
#define VHCA_AETH_ACK		0x00
#define VHCA_AETH_RNR_NAK	0x20
#define VHCA_AETH_NAK		0x60
#define VHCA_AETH_CREDIT_INVALID 0x1f	/* no credit count (what rxe sends) */

enum vhca_nak_code {
	VHCA_NAK_PSN_SEQ_ERR	= 0,
	VHCA_NAK_INVALID_REQ	= 1,
	VHCA_NAK_REM_ACCESS_ERR	= 2,
	VHCA_NAK_REM_OP_ERR	= 3,
};

static inline u8 vhca_aeth_ack(u8 credit)
{
	return VHCA_AETH_ACK | (credit & VHCA_AETH_VALUE_MASK);
}

static inline u8 vhca_aeth_rnr_nak(u8 timer)
{
	return VHCA_AETH_RNR_NAK | (timer & VHCA_AETH_VALUE_MASK);
}

static inline u8 vhca_aeth_nak(enum vhca_nak_code code)
{
	return VHCA_AETH_NAK | code;
}

/*
 * 24-bit PSNs.  vhca_psn_diff() is a - b as a signed 24-bit number: a is
 * after b if it lies in the 2^23 PSNs following b, before b if in the
 * 2^23 preceding it (b - 2^23 counts as before).
 */
static inline u32 vhca_psn_add(u32 psn, u32 n)
{
	return (psn + n) & VHCA_PSN_MASK;
}

static inline s32 vhca_psn_diff(u32 a, u32 b)
{
	return sign_extend32(a - b, 23);
}

static inline bool vhca_psn_before(u32 a, u32 b)
{
	return vhca_psn_diff(a, b) < 0;
}

static inline bool vhca_psn_after(u32 a, u32 b)
{
	return vhca_psn_diff(a, b) > 0;
}

/* Pad bytes after a payload of len bytes. */
static inline u32 vhca_pkt_pad(u32 len)
{
	return -len & 3;
}

/*
 * The MSN (message sequence number) a responder puts in its AETHs counts
 * the requests it has completed: after executing a request packet of
 * opcode, it is vhca_pkt_msn_next(msn, opcode), one more at the end of a
 * SEND or WRITE message (its LAST or ONLY packet) and for a READ request
 * (counted when accepted, before its responses: IBA C9-148), else the same.
 */
u32 vhca_pkt_msn_next(u32 msn, u8 opcode);

/*
 * Segmentation of a len-byte message at a path MTU of mtu payload bytes
 * (256..4096): vhca_pkt_npkts() packets (a 0-byte message is one), of
 * which packet i carries vhca_pkt_seg_len() bytes.
 */
u32 vhca_pkt_npkts(u32 len, u32 mtu);
u32 vhca_pkt_seg_len(u32 len, u32 mtu, u32 i);

/*
 * A packet's transport fields.  Only the fields of the opcode's extension
 * headers are used (vhca_pkt_build) or set (vhca_pkt_parse).  TVer is
 * always 0 and the P_Key 0xffff.
 */
struct vhca_pkt {
	u8 opcode;
	bool se;		/* solicited event */
	bool mig;		/* MigReq */
	bool ackreq;
	u32 dqpn;
	u32 psn;
	u32 paylen;		/* payload bytes, pad excluded */
	u64 reth_va;
	u32 reth_rkey;
	u32 reth_len;
	u8 aeth_syndrome;
	u32 aeth_msn;
	__be32 imm;		/* opaque: kept in wire order */
	u32 ieth_rkey;
	u64 atm_swap_add;	/* AtomicETH; its VA and R_Key in reth_* */
	u64 atm_compare;
	u64 atm_orig;		/* AtomicAckETH */
	u32 deth_qkey;
	u32 deth_sqpn;
	u32 xrc_srqn;		/* XRCETH */
	u8 feth_type;		/* FETH: IB_FLUSH_GLOBAL, _PERSISTENT */
	u8 feth_level;		/* IB_FLUSH_RANGE, IB_FLUSH_MR */
};

/*
 * Write the BTH and extension headers of pkt into buf (size bytes), with
 * PadCnt for pkt->paylen.  The caller appends payload, vhca_pkt_pad()
 * zero bytes and the ICRC.  Returns the header length, or -EINVAL.
 */
int vhca_pkt_build(void *buf, size_t size, const struct vhca_pkt *pkt);

/* Set the AckReq bit of the BTH at buf, a packet vhca_pkt_build() wrote. */
static inline void vhca_pkt_set_ackreq(void *buf)
{
	struct vhca_bth *bth = buf;

	bth->apsn |= cpu_to_be32(VHCA_BTH_ACKREQ);
}

/*
 * Parse a received packet: buf holds len bytes, BTH through ICRC (the UDP
 * length less 8).  Validates it against everything a peer can get wrong
 * without knowing our QPs; the payload is at buf +
 * vhca_pkt_opinfo(pkt->opcode)->hdr_len.  The ICRC is not checked here.
 * Returns 0 or -EINVAL.
 */
int vhca_pkt_parse(const void *buf, size_t len, struct vhca_pkt *pkt);

/*
 * ICRC of a RoCEv2 packet.  nh: the IPv4 (20 bytes, no options) or IPv6
 * header as sent; uh: the UDP header; ib: len bytes, BTH through the ICRC
 * (the last 4 bytes, not covered).  vhca_pkt_icrc_set() writes it,
 * vhca_pkt_icrc_check() returns 0 if it matches, -EBADMSG if not; both
 * return -EINVAL for another IP version, IPv4 options or len too short.
 */
int vhca_pkt_icrc_set(const void *nh, const void *uh, void *ib, size_t len);
int vhca_pkt_icrc_check(const void *nh, const void *uh, const void *ib,
			size_t len);

#endif /* VHCA_PKT_H */
