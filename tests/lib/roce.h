/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 packet crafting for the test programs: build a packet from its
 * fields, compute its ICRC, send it from an ordinary UDP socket bound to
 * an address of this host (no privilege needed) or, with CAP_NET_ADMIN,
 * to any address (a spoofed source).  The wire format is RoCEv2's (the
 * IBTA's, as Linux's rdma_rxe speaks it): BTH, then the extended headers
 * the fields ask for in their wire order (DETH, RETH, AETH, ImmDt),
 * payload, pad to 4 bytes, ICRC.
 *
 *   struct roce_pkt p = { .opcode = ROCE_RC_WRITE_ONLY, .dqpn = qpn,
 *                         .psn = psn, .ackreq = true, .has_reth = true,
 *                         .va = va, .rkey = rkey, .dmalen = 8,
 *                         .payload = data, .paylen = 8 };
 *   struct roce_sock s;
 *
 *   roce_open(&s, "10.0.0.2", false);          bound source, any port
 *   roce_send(&s, "10.0.0.1", &p);             to 10.0.0.1:4791
 *   roce_close(&s);
 *
 * roce_build() alone gives the bytes BTH through pad; roce_icrc() the ICRC
 * of such bytes for given IP and UDP headers (what a receiver checks), so
 * a fuzzer can corrupt any part before or after it.  The ICRC covers the
 * IP header the kernel writes: for IPv4, roce_open() sets DF
 * (IP_PMTUDISC_DO) and the datagrams go unconnected, for which Linux
 * writes IP ID 0; TOS, TTL and the checksums are masked out of the ICRC,
 * so the socket's own values do not matter.  Functions return a negative
 * errno on failure.
 */
#ifndef VHCA_ROCE_H
#define VHCA_ROCE_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ROCE_UDP_PORT		4791
#define ROCE_BTH_LEN		12
#define ROCE_DETH_LEN		8
#define ROCE_RETH_LEN		16
#define ROCE_AETH_LEN		4
#define ROCE_IMM_LEN		4
#define ROCE_ICRC_LEN		4
/* The most roce_build() writes: headers, 4096 payload bytes, pad, ICRC. */
#define ROCE_MAX_PKT		(ROCE_BTH_LEN + ROCE_DETH_LEN + ROCE_RETH_LEN + \
				 ROCE_AETH_LEN + ROCE_IMM_LEN + 4096 + 3 + \
				 ROCE_ICRC_LEN)

/* Some opcodes: transport (RC 0x00, UD 0x60) plus operation. */
enum {
	ROCE_RC_SEND_ONLY		= 0x04,
	ROCE_RC_SEND_ONLY_IMM		= 0x05,
	ROCE_RC_WRITE_FIRST		= 0x06,
	ROCE_RC_WRITE_LAST		= 0x08,
	ROCE_RC_WRITE_ONLY		= 0x0a,
	ROCE_RC_WRITE_ONLY_IMM		= 0x0b,
	ROCE_RC_READ_REQUEST		= 0x0c,
	ROCE_RC_READ_RESP_ONLY		= 0x10,
	ROCE_RC_ACK			= 0x11,
	ROCE_UD_SEND_ONLY		= 0x64,
	ROCE_UD_SEND_ONLY_IMM		= 0x65,
};

/* AETH syndromes: an ACK without credits, the NAK codes. */
#define ROCE_AETH_ACK		0x1f
#define ROCE_AETH_NAK_PSN	0x60
#define ROCE_AETH_NAK_INV	0x61
#define ROCE_AETH_NAK_ACCESS	0x62
#define ROCE_AETH_NAK_OP	0x63

/*
 * A packet's fields.  The extended headers present are those whose has_*
 * is set, whatever the opcode says (a fuzzer may want a wrong one).  pad is
 * added for paylen automatically; tver and resv7 are sent as given.
 */
struct roce_pkt {
	uint8_t opcode;
	bool se, migreq, ackreq;
	uint8_t tver;			/* 0 for a valid packet */
	uint16_t pkey;			/* 0 means 0xffff, the default */
	uint32_t dqpn;			/* 24 bits */
	uint32_t psn;			/* 24 bits */
	uint8_t resv7;
	bool has_deth;
	uint32_t qkey, sqpn;
	bool has_reth;
	uint64_t va;
	uint32_t rkey, dmalen;
	bool has_aeth;
	uint8_t syndrome;
	uint32_t msn;			/* 24 bits */
	bool has_imm;
	uint32_t imm;			/* sent as given, big-endian */
	const void *payload;
	size_t paylen;
};

static inline uint8_t *roce_put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
	return p + 4;
}

/* A 24-bit field after a byte of its own (DestQP, PSN, MSN, SrcQP). */
static inline uint8_t *roce_put8_24(uint8_t *p, uint8_t b, uint32_t v)
{
	return roce_put32(p, (uint32_t)b << 24 | (v & 0xffffff));
}

/*
 * The bytes BTH through pad of p into buf (size bytes, ROCE_MAX_PKT is
 * always enough): their count, or -EMSGSIZE.  No ICRC yet.
 */
static inline int roce_build(const struct roce_pkt *p, uint8_t *buf,
			     size_t size)
{
	size_t pad = (4 - (p->paylen & 3)) & 3;
	size_t len = ROCE_BTH_LEN + p->paylen + pad;
	uint8_t *q = buf;

	len += p->has_deth ? ROCE_DETH_LEN : 0;
	len += p->has_reth ? ROCE_RETH_LEN : 0;
	len += p->has_aeth ? ROCE_AETH_LEN : 0;
	len += p->has_imm ? ROCE_IMM_LEN : 0;
	if (len > size)
		return -EMSGSIZE;

	*q++ = p->opcode;
	*q++ = (p->se ? 0x80 : 0) | (p->migreq ? 0x40 : 0) | pad << 4 |
	       (p->tver & 0xf);
	*q++ = (p->pkey ? p->pkey : 0xffff) >> 8;
	*q++ = p->pkey ? p->pkey & 0xff : 0xff;
	q = roce_put8_24(q, 0, p->dqpn);
	q = roce_put8_24(q, (p->ackreq ? 0x80 : 0) | (p->resv7 & 0x7f), p->psn);
	if (p->has_deth) {
		q = roce_put32(q, p->qkey);
		q = roce_put8_24(q, 0, p->sqpn);
	}
	if (p->has_reth) {
		q = roce_put32(q, p->va >> 32);
		q = roce_put32(q, p->va);
		q = roce_put32(q, p->rkey);
		q = roce_put32(q, p->dmalen);
	}
	if (p->has_aeth)
		q = roce_put8_24(q, p->syndrome, p->msn);
	if (p->has_imm)
		q = roce_put32(q, p->imm);
	if (p->paylen)
		memcpy(q, p->payload, p->paylen);
	memset(q + p->paylen, 0, pad);
	return len;
}

/* CRC-32 of Ethernet and zlib (reflected 0xedb88320), state in, state out. */
static inline uint32_t roce_crc32(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = crc >> 1 ^ (0xedb88320 & -(crc & 1));
	}
	return crc;
}

/*
 * The ICRC of len bytes BTH through pad (from roce_build()) sent from src
 * to dst (both AF_INET or both AF_INET6, sin_port/sin6_port the UDP ports,
 * network order) as Linux sends an unconnected datagram of a socket from
 * roce_open(): a value to store least significant byte first.
 */
static inline uint32_t roce_icrc(const struct sockaddr *src,
				 const struct sockaddr *dst,
				 const uint8_t *bth, size_t len)
{
	uint8_t ph[40 + 8], ff[8];
	size_t udp_len = 8 + len + ROCE_ICRC_LEN, n;
	uint32_t crc;

	memset(ff, 0xff, sizeof(ff));
	memset(ph, 0, sizeof(ph));
	if (src->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)src;
		const struct sockaddr_in *d = (const void *)dst;

		ph[0] = 0x45;
		ph[1] = 0xff;				/* TOS, masked */
		ph[2] = (20 + udp_len) >> 8;
		ph[3] = 20 + udp_len;
		/* ID 0 (bytes 4-5): DF, unconnected. */
		ph[6] = 0x40;
		ph[8] = 0xff;				/* TTL, masked */
		ph[9] = IPPROTO_UDP;
		ph[10] = ph[11] = 0xff;			/* checksum, masked */
		memcpy(ph + 12, &s->sin_addr, 4);
		memcpy(ph + 16, &d->sin_addr, 4);
		memcpy(ph + 20, &s->sin_port, 2);
		memcpy(ph + 22, &d->sin_port, 2);
		n = 20;
	} else {
		const struct sockaddr_in6 *s = (const void *)src;
		const struct sockaddr_in6 *d = (const void *)dst;

		memset(ph, 0xff, 4);			/* TC, flow label */
		ph[0] = 0x6f;
		ph[4] = udp_len >> 8;
		ph[5] = udp_len;
		ph[6] = IPPROTO_UDP;
		ph[7] = 0xff;				/* hop limit, masked */
		memcpy(ph + 8, &s->sin6_addr, 16);
		memcpy(ph + 24, &d->sin6_addr, 16);
		memcpy(ph + 40, &s->sin6_port, 2);
		memcpy(ph + 42, &d->sin6_port, 2);
		n = 40;
	}
	ph[n + 4] = udp_len >> 8;
	ph[n + 5] = udp_len;
	ph[n + 6] = ph[n + 7] = 0xff;			/* UDP checksum, masked */

	crc = roce_crc32(0xffffffff, ff, sizeof(ff));	/* the masked LRH */
	crc = roce_crc32(crc, ph, n + 8);
	crc = roce_crc32(crc, bth, 4);
	crc = roce_crc32(crc, ff, 1);			/* F, B, resv6 */
	crc = roce_crc32(crc, bth + 5, len - 5);
	return ~crc;
}

/* Append the ICRC after len bytes: the packet's full length. */
static inline size_t roce_put_icrc(uint8_t *buf, size_t len, uint32_t icrc)
{
	buf[len] = icrc;
	buf[len + 1] = icrc >> 8;
	buf[len + 2] = icrc >> 16;
	buf[len + 3] = icrc >> 24;
	return len + ROCE_ICRC_LEN;
}

/* An ordinary UDP socket and the address it is bound to. */
struct roce_sock {
	int fd;
	struct sockaddr_storage src;	/* port as bound */
};

/* An IPv4 or IPv6 address, port in network order, into ss. */
static inline int roce_addr(struct sockaddr_storage *ss, const char *ip,
			    uint16_t port)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, ip, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(port);
		return 0;
	}
	if (inet_pton(AF_INET6, ip, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(port);
		return 0;
	}
	return -EINVAL;
}

static inline socklen_t roce_addr_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET ? sizeof(struct sockaddr_in) :
					  sizeof(struct sockaddr_in6);
}

/*
 * A UDP socket bound to src_ip (IPv4 or IPv6), an ephemeral port; spoof
 * (IP_TRANSPARENT, IPV6_TRANSPARENT: CAP_NET_ADMIN in the socket's
 * namespace) allows an address this host does not have.  IP_FREEBIND
 * would not do: it binds such an address, but routing refuses to send
 * from it.
 */
static inline int roce_open(struct roce_sock *s, const char *src_ip,
			    bool spoof)
{
	socklen_t alen = sizeof(s->src);
	int one = 1, pmtu = IP_PMTUDISC_DO;
	int err;
	bool v4;

	err = roce_addr(&s->src, src_ip, 0);
	if (err)
		return err;
	v4 = s->src.ss_family == AF_INET;
	s->fd = socket(s->src.ss_family, SOCK_DGRAM, 0);
	if (s->fd < 0)
		return -errno;
	if ((v4 && setsockopt(s->fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu,
			      sizeof(pmtu))) ||
	    (spoof && v4 &&
	     setsockopt(s->fd, IPPROTO_IP, IP_TRANSPARENT, &one, sizeof(one))) ||
	    (spoof && !v4 &&
	     setsockopt(s->fd, IPPROTO_IPV6, IPV6_TRANSPARENT, &one,
			sizeof(one))) ||
	    bind(s->fd, (struct sockaddr *)&s->src, roce_addr_len(&s->src)) ||
	    getsockname(s->fd, (struct sockaddr *)&s->src, &alen)) {
		err = -errno;
		close(s->fd);
		s->fd = -1;
	}
	return err;
}

/*
 * Send len bytes BTH through pad from buf, its ICRC appended (buf needs 4
 * more bytes), to dst_ip port 4791; icrc_xor flips ICRC bits (0: valid).
 */
static inline int roce_send_raw(struct roce_sock *s, const char *dst_ip,
				uint8_t *buf, size_t len, uint32_t icrc_xor)
{
	struct sockaddr_storage dst;
	uint32_t icrc;
	int err;

	err = roce_addr(&dst, dst_ip, ROCE_UDP_PORT);
	if (err)
		return err;
	if (dst.ss_family != s->src.ss_family)
		return -EAFNOSUPPORT;
	icrc = roce_icrc((struct sockaddr *)&s->src, (struct sockaddr *)&dst,
			 buf, len);
	len = roce_put_icrc(buf, len, icrc ^ icrc_xor);
	if (sendto(s->fd, buf, len, 0, (struct sockaddr *)&dst,
		   roce_addr_len(&dst)) != (ssize_t)len)
		return -errno;
	return 0;
}

/* Build p, add its ICRC, send it to dst_ip port 4791. */
static inline int roce_send(struct roce_sock *s, const char *dst_ip,
			    const struct roce_pkt *p)
{
	uint8_t buf[ROCE_MAX_PKT];
	int len = roce_build(p, buf, sizeof(buf) - ROCE_ICRC_LEN);

	if (len < 0)
		return len;
	return roce_send_raw(s, dst_ip, buf, len, 0);
}

static inline void roce_close(struct roce_sock *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

#endif /* VHCA_ROCE_H */
