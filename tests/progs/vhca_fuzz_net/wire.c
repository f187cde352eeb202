// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vhca_fuzz_net's wire: the ICRC of captured and crafted IPv4 packets, the
 * RoCEv2 packet of a captured frame, the capturing socket.
 */
#include "net.h"

/*
 * ---- the ICRC (RoCEv2 annex: masked IPv4/UDP/BTH, 8 bytes of ones first),
 * over a whole IPv4 packet as captured or crafted here (roce.h's CRC-32)
 */

/* The ICRC of an IPv4 packet ip whose IB part (BTH to ICRC) is iblen bytes. */
static uint32_t icrc_of(const uint8_t *ip, size_t iblen)
{
	uint8_t h[20 + 8 + 12];
	uint32_t crc = 0xffffffff;
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0xff };

	memcpy(h, ip, sizeof(h));
	h[1] = 0xff;			/* TOS */
	h[8] = 0xff;			/* TTL */
	h[10] = h[11] = 0xff;		/* IP checksum */
	h[26] = h[27] = 0xff;		/* UDP checksum */
	h[32] = 0xff;			/* BTH F, B, resv6 */
	crc = roce_crc32(crc, ones, 8);
	crc = roce_crc32(crc, h, sizeof(h));
	crc = roce_crc32(crc, ip + sizeof(h), iblen - 12 - 4);
	return ~crc;
}

bool icrc_ok(const uint8_t *ip, size_t iblen)
{
	uint32_t c;

	if (iblen < 16)
		return false;
	c = icrc_of(ip, iblen);
	return ip[28 + iblen - 4] == (c & 0xff) &&
	       ip[28 + iblen - 3] == ((c >> 8) & 0xff) &&
	       ip[28 + iblen - 2] == ((c >> 16) & 0xff) &&
	       ip[28 + iblen - 1] == (c >> 24);
}

void icrc_put(uint8_t *ip, size_t iblen)
{
	uint32_t c = icrc_of(ip, iblen);
	uint8_t *p = ip + 28 + iblen - 4;

	p[0] = c;
	p[1] = c >> 8;
	p[2] = c >> 16;
	p[3] = c >> 24;
}

/* The IPv4 RoCEv2 packet of frame f (n bytes), its IB length in *iblen. */
const uint8_t *roce_of(const uint8_t *f, size_t n, size_t *iblen)
{
	const uint8_t *ip = f + 14;
	size_t tot, udp;

	if (n < 14 + 28 + 16 || f[12] != 0x08 || f[13] != 0x00 ||
	    ip[0] != 0x45 || ip[9] != 17)
		return NULL;
	tot = (size_t)ip[2] << 8 | ip[3];
	udp = (size_t)ip[24] << 8 | ip[25];
	if ((((size_t)ip[22] << 8) | ip[23]) != ROCE_PORT || tot > n - 14 ||
	    tot < 28 + 16 || udp != tot - 20)
		return NULL;
	*iblen = udp - 8;
	return ip;
}

int packet_socket(const char *ifname)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
		.sll_ifindex = (int)if_nametoindex(ifname),
	};
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	int sz = 8 << 20;

	if (fd < 0 || !sll.sll_ifindex ||
	    bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
		fatal("AF_PACKET socket on the interface");
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
	return fd;
}
