// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ipv6_stub, IPv6's entry points while IPv6 could be a module (gone in 7.1) */
#include <net/ipv6_stubs.h>

static const struct ipv6_stub * __maybe_unused probe(void)
{
	return ipv6_stub;
}
