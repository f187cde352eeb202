// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* inet6_clear_bit() on IPv6 socket flags (6.6) */
#include <linux/ipv6.h>

static void __maybe_unused probe(struct sock *sk)
{
	inet6_clear_bit(MC6_LOOP, sk);
}
