// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* inet_set_bit() and inet_clear_bit() on IPv4 socket flags (6.6) */
#include <net/inet_sock.h>

static void __maybe_unused probe(struct sock *sk)
{
	inet_set_bit(MC_ALL, sk);
	inet_clear_bit(MC_LOOP, sk);
}
