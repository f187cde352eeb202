// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 packet layer: opcode table, header builder and parser, ICRC and
 * segmentation.  See vhca_pkt.h.
 */
#include <linux/errno.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/udp.h>

#include "vhca_compat.h"
#include "vhca_crc.h"
#include "vhca_pkt.h"

#define BTH_LEN		sizeof(struct vhca_bth)
#define RETH_LEN	sizeof(struct vhca_reth)
#define AETH_LEN	sizeof(struct vhca_aeth)
#define IMMDT_LEN	sizeof(struct vhca_immdt)
#define DETH_LEN	sizeof(struct vhca_deth)
#define IETH_LEN	sizeof(struct vhca_ieth)
#define ATMETH_LEN	sizeof(struct vhca_atmeth)
#define ATMACK_LEN	sizeof(struct vhca_atmack)
#define XRCETH_LEN	sizeof(struct vhca_xrceth)
#define FETH_LEN	sizeof(struct vhca_feth)

/*
 * An opcode: its place in a message and what follows its BTH (up to three
 * of PAYLOAD, RETH, AETH, DETH, IMMDT, IETH, ATMETH, ATMACK, FETH, or
 * NONE), each a flag (F_) and a header length (L_): the length is the sum
 * of the headers it names.
 */
#define OP(op, place, a, b, c) \
	[IB_OPCODE_##op] = { \
		.flags = VHCA_PKT_##place | F_##a | F_##b | F_##c, \
		.hdr_len = BTH_LEN + L_##a + L_##b + L_##c, \
	}

#define F_NONE		0
#define L_NONE		0
#define F_PAYLOAD	VHCA_PKT_PAYLOAD
#define L_PAYLOAD	0
#define F_RETH		VHCA_PKT_RETH
#define L_RETH		RETH_LEN
#define F_AETH		VHCA_PKT_AETH
#define L_AETH		AETH_LEN
#define F_DETH		VHCA_PKT_DETH
#define L_DETH		DETH_LEN
#define F_IMMDT		VHCA_PKT_IMMDT
#define L_IMMDT		IMMDT_LEN
#define F_IETH		VHCA_PKT_IETH
#define L_IETH		IETH_LEN
#define F_ATMETH	VHCA_PKT_ATMETH
#define L_ATMETH	ATMETH_LEN
#define F_ATMACK	VHCA_PKT_ATMACK
#define L_ATMACK	ATMACK_LEN
#define F_FETH		VHCA_PKT_FETH
#define L_FETH		FETH_LEN

static const struct vhca_pkt_opinfo vhca_opinfo[] = {
	OP(RC_SEND_FIRST, FIRST, PAYLOAD, NONE, NONE),
	OP(RC_SEND_MIDDLE, MIDDLE, PAYLOAD, NONE, NONE),
	OP(RC_SEND_LAST, LAST, PAYLOAD, NONE, NONE),
	OP(RC_SEND_LAST_WITH_IMMEDIATE, LAST, PAYLOAD, IMMDT, NONE),
	OP(RC_SEND_ONLY, ONLY, PAYLOAD, NONE, NONE),
	OP(RC_SEND_ONLY_WITH_IMMEDIATE, ONLY, PAYLOAD, IMMDT, NONE),
	OP(RC_RDMA_WRITE_FIRST, FIRST, PAYLOAD, RETH, NONE),
	OP(RC_RDMA_WRITE_MIDDLE, MIDDLE, PAYLOAD, NONE, NONE),
	OP(RC_RDMA_WRITE_LAST, LAST, PAYLOAD, NONE, NONE),
	OP(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, LAST, PAYLOAD, IMMDT, NONE),
	OP(RC_RDMA_WRITE_ONLY, ONLY, PAYLOAD, RETH, NONE),
	OP(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, ONLY, PAYLOAD, RETH, IMMDT),
	OP(RC_RDMA_READ_REQUEST, ONLY, RETH, NONE, NONE),
	OP(RC_SEND_LAST_WITH_INVALIDATE, LAST, PAYLOAD, IETH, NONE),
	OP(RC_SEND_ONLY_WITH_INVALIDATE, ONLY, PAYLOAD, IETH, NONE),
	OP(RC_RDMA_READ_RESPONSE_FIRST, FIRST, PAYLOAD, AETH, NONE),
	OP(RC_RDMA_READ_RESPONSE_MIDDLE, MIDDLE, PAYLOAD, NONE, NONE),
	OP(RC_RDMA_READ_RESPONSE_LAST, LAST, PAYLOAD, AETH, NONE),
	OP(RC_RDMA_READ_RESPONSE_ONLY, ONLY, PAYLOAD, AETH, NONE),
	OP(RC_ACKNOWLEDGE, ONLY, AETH, NONE, NONE),
	OP(RC_ATOMIC_ACKNOWLEDGE, ONLY, AETH, ATMACK, NONE),
	OP(RC_COMPARE_SWAP, ONLY, ATMETH, NONE, NONE),
	OP(RC_FETCH_ADD, ONLY, ATMETH, NONE, NONE),
	OP(RC_ATOMIC_WRITE, ONLY, PAYLOAD, RETH, NONE),
	OP(RC_FLUSH, ONLY, FETH, RETH, NONE),
	/* UC: RC's SEND and WRITE operations, transport 1 (0x20 + op). */
	OP(UC_SEND_FIRST, FIRST, PAYLOAD, NONE, NONE),
	OP(UC_SEND_MIDDLE, MIDDLE, PAYLOAD, NONE, NONE),
	OP(UC_SEND_LAST, LAST, PAYLOAD, NONE, NONE),
	OP(UC_SEND_LAST_WITH_IMMEDIATE, LAST, PAYLOAD, IMMDT, NONE),
	OP(UC_SEND_ONLY, ONLY, PAYLOAD, NONE, NONE),
	OP(UC_SEND_ONLY_WITH_IMMEDIATE, ONLY, PAYLOAD, IMMDT, NONE),
	OP(UC_RDMA_WRITE_FIRST, FIRST, PAYLOAD, RETH, NONE),
	OP(UC_RDMA_WRITE_MIDDLE, MIDDLE, PAYLOAD, NONE, NONE),
	OP(UC_RDMA_WRITE_LAST, LAST, PAYLOAD, NONE, NONE),
	OP(UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, LAST, PAYLOAD, IMMDT, NONE),
	OP(UC_RDMA_WRITE_ONLY, ONLY, PAYLOAD, RETH, NONE),
	OP(UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, ONLY, PAYLOAD, RETH, IMMDT),
	OP(UD_SEND_ONLY, ONLY, PAYLOAD, DETH, NONE),
	OP(UD_SEND_ONLY_WITH_IMMEDIATE, ONLY, PAYLOAD, DETH, IMMDT),
};

#undef OP

/*
 * XRC: RC's operations at VHCA_OPCODE_XRC + op; its requests carry an
 * XRCETH, its responses (ACKs, READ responses) do not.
 */
#define XREQ(op, place, a, b, c) \
	[IB_OPCODE_##op] = { \
		.flags = VHCA_PKT_##place | VHCA_PKT_XRCETH | \
			 F_##a | F_##b | F_##c, \
		.hdr_len = BTH_LEN + XRCETH_LEN + L_##a + L_##b + L_##c, \
	}
#define XRSP(op, place, a, b) \
	[IB_OPCODE_##op] = { \
		.flags = VHCA_PKT_##place | F_##a | F_##b, \
		.hdr_len = BTH_LEN + L_##a + L_##b, \
	}

/* Indexed by the operation (the opcode's low 5 bits). */
static const struct vhca_pkt_opinfo vhca_xrc_opinfo[] = {
	XREQ(SEND_FIRST, FIRST, PAYLOAD, NONE, NONE),
	XREQ(SEND_MIDDLE, MIDDLE, PAYLOAD, NONE, NONE),
	XREQ(SEND_LAST, LAST, PAYLOAD, NONE, NONE),
	XREQ(SEND_LAST_WITH_IMMEDIATE, LAST, PAYLOAD, IMMDT, NONE),
	XREQ(SEND_ONLY, ONLY, PAYLOAD, NONE, NONE),
	XREQ(SEND_ONLY_WITH_IMMEDIATE, ONLY, PAYLOAD, IMMDT, NONE),
	XREQ(RDMA_WRITE_FIRST, FIRST, PAYLOAD, RETH, NONE),
	XREQ(RDMA_WRITE_MIDDLE, MIDDLE, PAYLOAD, NONE, NONE),
	XREQ(RDMA_WRITE_LAST, LAST, PAYLOAD, NONE, NONE),
	XREQ(RDMA_WRITE_LAST_WITH_IMMEDIATE, LAST, PAYLOAD, IMMDT, NONE),
	XREQ(RDMA_WRITE_ONLY, ONLY, PAYLOAD, RETH, NONE),
	XREQ(RDMA_WRITE_ONLY_WITH_IMMEDIATE, ONLY, PAYLOAD, RETH, IMMDT),
	XREQ(RDMA_READ_REQUEST, ONLY, RETH, NONE, NONE),
	XREQ(SEND_LAST_WITH_INVALIDATE, LAST, PAYLOAD, IETH, NONE),
	XREQ(SEND_ONLY_WITH_INVALIDATE, ONLY, PAYLOAD, IETH, NONE),
	XRSP(RDMA_READ_RESPONSE_FIRST, FIRST, PAYLOAD, AETH),
	XRSP(RDMA_READ_RESPONSE_MIDDLE, MIDDLE, PAYLOAD, NONE),
	XRSP(RDMA_READ_RESPONSE_LAST, LAST, PAYLOAD, AETH),
	XRSP(RDMA_READ_RESPONSE_ONLY, ONLY, PAYLOAD, AETH),
	XRSP(ACKNOWLEDGE, ONLY, AETH, NONE),
	XRSP(ATOMIC_ACKNOWLEDGE, ONLY, AETH, ATMACK),
	XREQ(COMPARE_SWAP, ONLY, ATMETH, NONE, NONE),
	XREQ(FETCH_ADD, ONLY, ATMETH, NONE, NONE),
	XREQ(ATOMIC_WRITE, ONLY, PAYLOAD, RETH, NONE),
	XREQ(FLUSH, ONLY, FETH, RETH, NONE),
};

#undef XREQ
#undef XRSP

const struct vhca_pkt_opinfo *vhca_pkt_opinfo(u8 opcode)
{
	u8 op = opcode & VHCA_PKT_OP_MASK;

	if ((opcode & VHCA_PKT_TRANSPORT_MASK) == VHCA_OPCODE_XRC)
		return op < ARRAY_SIZE(vhca_xrc_opinfo) &&
		       vhca_xrc_opinfo[op].hdr_len ? &vhca_xrc_opinfo[op] :
						     NULL;
	if (opcode >= ARRAY_SIZE(vhca_opinfo) || !vhca_opinfo[opcode].hdr_len)
		return NULL;
	return &vhca_opinfo[opcode];
}

u32 vhca_pkt_msn_next(u32 msn, u8 opcode)
{
	const struct vhca_pkt_opinfo *oi;

	opcode = vhca_pkt_xrc_to_rc(opcode);
	oi = vhca_pkt_opinfo(opcode);

	/*
	 * RC requests: the opcodes up to READ_REQUEST, IETH, AtomicETH,
	 * ATOMIC WRITE, FLUSH.
	 */
	if (!oi || (opcode > IB_OPCODE_RC_RDMA_READ_REQUEST &&
		    opcode != IB_OPCODE_RC_ATOMIC_WRITE &&
		    opcode != IB_OPCODE_RC_FLUSH &&
		    !(oi->flags & (VHCA_PKT_IETH | VHCA_PKT_ATMETH))) ||
	    !(oi->flags & VHCA_PKT_LAST))
		return msn & VHCA_PSN_MASK;
	return vhca_psn_add(msn, 1);
}

u32 vhca_pkt_npkts(u32 len, u32 mtu)
{
	if (!len)
		return 1;
	return len / mtu + !!(len % mtu);
}

u32 vhca_pkt_seg_len(u32 len, u32 mtu, u32 i)
{
	u64 off = (u64)i * mtu;

	if (off >= len)
		return 0;
	return min_t(u64, len - off, mtu);
}

int vhca_pkt_build(void *buf, size_t size, const struct vhca_pkt *pkt)
{
	const struct vhca_pkt_opinfo *oi = vhca_pkt_opinfo(pkt->opcode);
	struct vhca_bth *bth = buf;
	u8 *p = buf + BTH_LEN;

	if (!oi || size < oi->hdr_len)
		return -EINVAL;
	if (pkt->dqpn & ~VHCA_PKT_QPN_MASK || pkt->psn & ~VHCA_PSN_MASK ||
	    pkt->aeth_msn & ~VHCA_PSN_MASK ||
	    pkt->deth_sqpn & ~VHCA_PKT_QPN_MASK ||
	    pkt->xrc_srqn & ~VHCA_PKT_QPN_MASK)
		return -EINVAL;
	if (pkt->paylen && !(oi->flags & VHCA_PKT_PAYLOAD))
		return -EINVAL;

	bth->opcode = pkt->opcode;
	bth->flags = (pkt->se ? VHCA_BTH_SE : 0) |
		     (pkt->mig ? VHCA_BTH_MIG : 0) |
		     FIELD_PREP(VHCA_BTH_PAD_MASK, vhca_pkt_pad(pkt->paylen));
	bth->pkey = cpu_to_be16(VHCA_PKT_PKEY);
	bth->qpn = cpu_to_be32(pkt->dqpn);
	bth->apsn = cpu_to_be32((pkt->ackreq ? VHCA_BTH_ACKREQ : 0) | pkt->psn);

	if (oi->flags & VHCA_PKT_XRCETH) {
		struct vhca_xrceth *xrceth = (void *)p;

		xrceth->srqn = cpu_to_be32(pkt->xrc_srqn);
		p += XRCETH_LEN;
	}
	if (oi->flags & VHCA_PKT_DETH) {
		struct vhca_deth *deth = (void *)p;

		deth->qkey = cpu_to_be32(pkt->deth_qkey);
		deth->sqpn = cpu_to_be32(pkt->deth_sqpn);
		p += DETH_LEN;
	}
	if (oi->flags & VHCA_PKT_FETH) {
		struct vhca_feth *feth = (void *)p;

		feth->sel_plt = cpu_to_be32(FIELD_PREP(VHCA_FETH_SEL_MASK,
						       pkt->feth_level) |
					    FIELD_PREP(VHCA_FETH_PLT_MASK,
						       pkt->feth_type));
		p += FETH_LEN;
	}
	if (oi->flags & VHCA_PKT_RETH) {
		struct vhca_reth *reth = (void *)p;

		reth->va = cpu_to_be64(pkt->reth_va);
		reth->rkey = cpu_to_be32(pkt->reth_rkey);
		reth->len = cpu_to_be32(pkt->reth_len);
		p += RETH_LEN;
	}
	if (oi->flags & VHCA_PKT_ATMETH) {
		struct vhca_atmeth *atm = (void *)p;

		atm->va = cpu_to_be64(pkt->reth_va);
		atm->rkey = cpu_to_be32(pkt->reth_rkey);
		atm->swap_add = cpu_to_be64(pkt->atm_swap_add);
		atm->compare = cpu_to_be64(pkt->atm_compare);
	}
	if (oi->flags & VHCA_PKT_AETH) {
		struct vhca_aeth *aeth = (void *)p;

		aeth->smsn = cpu_to_be32(FIELD_PREP(VHCA_AETH_SYNDROME,
						    pkt->aeth_syndrome) |
					 FIELD_PREP(VHCA_AETH_MSN,
						    pkt->aeth_msn));
		p += AETH_LEN;
	}
	if (oi->flags & VHCA_PKT_ATMACK) {
		struct vhca_atmack *ack = (void *)p;

		ack->orig = cpu_to_be64(pkt->atm_orig);
	}
	if (oi->flags & VHCA_PKT_IMMDT) {
		struct vhca_immdt *immdt = (void *)p;

		immdt->imm = pkt->imm;
	}
	if (oi->flags & VHCA_PKT_IETH) {
		struct vhca_ieth *ieth = (void *)p;

		ieth->rkey = cpu_to_be32(pkt->ieth_rkey);
	}
	return oi->hdr_len;
}

/* The extension headers after the BTH, as the opcode's flags have them. */
static void vhca_pkt_parse_ext(const u8 *p, u16 flags, struct vhca_pkt *pkt)
{
	if (flags & VHCA_PKT_XRCETH) {
		const struct vhca_xrceth *xrceth = (const void *)p;

		pkt->xrc_srqn = be32_to_cpu(xrceth->srqn) & VHCA_PKT_QPN_MASK;
		p += XRCETH_LEN;
	}
	if (flags & VHCA_PKT_DETH) {
		const struct vhca_deth *deth = (const void *)p;

		pkt->deth_qkey = be32_to_cpu(deth->qkey);
		pkt->deth_sqpn = be32_to_cpu(deth->sqpn) & VHCA_PKT_QPN_MASK;
		p += DETH_LEN;
	}
	if (flags & VHCA_PKT_FETH) {
		u32 sel_plt = be32_to_cpu(((const struct vhca_feth *)p)->sel_plt);

		pkt->feth_level = FIELD_GET(VHCA_FETH_SEL_MASK, sel_plt);
		pkt->feth_type = FIELD_GET(VHCA_FETH_PLT_MASK, sel_plt);
		p += FETH_LEN;
	}
	if (flags & VHCA_PKT_RETH) {
		const struct vhca_reth *reth = (const void *)p;

		pkt->reth_va = be64_to_cpu(reth->va);
		pkt->reth_rkey = be32_to_cpu(reth->rkey);
		pkt->reth_len = be32_to_cpu(reth->len);
		p += RETH_LEN;
	}
	if (flags & VHCA_PKT_ATMETH) {
		const struct vhca_atmeth *atm = (const void *)p;

		pkt->reth_va = be64_to_cpu(atm->va);
		pkt->reth_rkey = be32_to_cpu(atm->rkey);
		pkt->reth_len = sizeof(u64);
		pkt->atm_swap_add = be64_to_cpu(atm->swap_add);
		pkt->atm_compare = be64_to_cpu(atm->compare);
	}
	if (flags & VHCA_PKT_AETH) {
		const struct vhca_aeth *aeth = (const void *)p;
		u32 smsn = be32_to_cpu(aeth->smsn);

		pkt->aeth_syndrome = FIELD_GET(VHCA_AETH_SYNDROME, smsn);
		pkt->aeth_msn = FIELD_GET(VHCA_AETH_MSN, smsn);
		p += AETH_LEN;
	}
	if (flags & VHCA_PKT_ATMACK) {
		const struct vhca_atmack *ack = (const void *)p;

		pkt->atm_orig = be64_to_cpu(ack->orig);
	}
	if (flags & VHCA_PKT_IMMDT) {
		const struct vhca_immdt *immdt = (const void *)p;

		pkt->imm = immdt->imm;
	}
	if (flags & VHCA_PKT_IETH) {
		const struct vhca_ieth *ieth = (const void *)p;

		pkt->ieth_rkey = be32_to_cpu(ieth->rkey);
	}
}

int vhca_pkt_parse(const void *buf, size_t len, struct vhca_pkt *pkt)
{
	const struct vhca_pkt_opinfo *oi;
	const struct vhca_bth *bth = buf;
	size_t rem;
	u32 pad;

	if (len < BTH_LEN + IB_ICRC_BYTES)
		return -EINVAL;
	oi = vhca_pkt_opinfo(bth->opcode);
	if (!oi || len < oi->hdr_len + IB_ICRC_BYTES)
		return -EINVAL;
	/* TVer 0; a P_Key matching 0xffff (limited or full member). */
	if (bth->flags & VHCA_BTH_TVER_MASK ||
	    (be16_to_cpu(bth->pkey) & 0x7fff) != 0x7fff)
		return -EINVAL;
	/* QP 0 does not exist on RoCE. */
	if (!(be32_to_cpu(bth->qpn) & VHCA_PKT_QPN_MASK))
		return -EINVAL;
	/* Payload + pad: a multiple of 4, none for header-only opcodes. */
	rem = len - oi->hdr_len - IB_ICRC_BYTES;
	pad = FIELD_GET(VHCA_BTH_PAD_MASK, bth->flags);
	if (rem % 4 || pad > rem ||
	    (rem && !(oi->flags & VHCA_PKT_PAYLOAD)))
		return -EINVAL;

	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = bth->opcode;
	pkt->se = bth->flags & VHCA_BTH_SE;
	pkt->mig = bth->flags & VHCA_BTH_MIG;
	pkt->dqpn = be32_to_cpu(bth->qpn) & VHCA_PKT_QPN_MASK;
	pkt->ackreq = be32_to_cpu(bth->apsn) & VHCA_BTH_ACKREQ;
	pkt->psn = be32_to_cpu(bth->apsn) & VHCA_PSN_MASK;
	pkt->paylen = rem - pad;

	vhca_pkt_parse_ext(buf + BTH_LEN, oi->flags, pkt);
	return 0;
}

/*
 * CRC-32 (crc32_le) state after eight 0xff bytes from ~0: the masked LRH
 * the IB ICRC starts with, which RoCEv2 does not send.
 */
#define VHCA_ICRC_SEED	0xdebb20e3

/*
 * CRC-32 over the masked invariant fields: the IP header with its
 * variant fields (IPv4 TOS, TTL, checksum; IPv6 traffic class, flow label,
 * hop limit), the UDP header with its checksum and the BTH with byte 4
 * (F, B, resv6) all ones, then the rest through the pad.
 */
static int vhca_pkt_icrc(const void *nh, const void *uh, const void *ib,
			 size_t len, u32 *icrc)
{
	u8 ph[sizeof(struct ipv6hdr) + sizeof(struct udphdr) + BTH_LEN]
		__aligned(8);
	const u8 *ip = nh;
	struct ipv6hdr *ip6;
	struct udphdr *udp;
	struct iphdr *ip4;
	size_t nlen;
	u32 crc;

	if (len < BTH_LEN + IB_ICRC_BYTES)
		return -EINVAL;

	switch (ip[0]) {
	case 0x45:		/* IPv4, 20 bytes */
		ip4 = (struct iphdr *)ph;
		nlen = sizeof(*ip4);
		memcpy(ph, nh, nlen);
		ip4->tos = 0xff;
		ip4->ttl = 0xff;
		ip4->check = (__force __sum16)0xffff;
		break;
	case 0x60 ... 0x6f:	/* IPv6 */
		ip6 = (struct ipv6hdr *)ph;
		nlen = sizeof(*ip6);
		memcpy(ph, nh, nlen);
		ip6->priority = 0xf;
		memset(ip6->flow_lbl, 0xff, sizeof(ip6->flow_lbl));
		ip6->hop_limit = 0xff;
		break;
	default:
		return -EINVAL;
	}

	udp = (struct udphdr *)(ph + nlen);
	memcpy(udp, uh, sizeof(*udp));
	udp->check = (__force __sum16)0xffff;

	memcpy(ph + nlen + sizeof(*udp), ib, BTH_LEN);
	ph[nlen + sizeof(*udp) + offsetof(struct vhca_bth, qpn)] = 0xff;

	crc = vhca_crc(VHCA_ICRC_SEED, ph, nlen + sizeof(*udp) + BTH_LEN);
	crc = vhca_crc(crc, ib + BTH_LEN, len - BTH_LEN - IB_ICRC_BYTES);
	*icrc = ~crc;
	return 0;
}

int vhca_pkt_icrc_set(const void *nh, const void *uh, void *ib, size_t len)
{
	u32 icrc;
	int err;

	err = vhca_pkt_icrc(nh, uh, ib, len, &icrc);
	if (err)
		return err;
	put_unaligned_le32(icrc, ib + len - IB_ICRC_BYTES);
	return 0;
}

int vhca_pkt_icrc_check(const void *nh, const void *uh, const void *ib,
			size_t len)
{
	u32 icrc;
	int err;

	err = vhca_pkt_icrc(nh, uh, ib, len, &icrc);
	if (err)
		return err;
	if (icrc != get_unaligned_le32(ib + len - IB_ICRC_BYTES))
		return -EBADMSG;
	return 0;
}
