// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* the UDP tunnel socket helpers take a struct sock (7.1; a socket before) */
#include <net/udp_tunnel.h>

static void __maybe_unused probe(struct net *net, struct sock *sk,
				 struct udp_tunnel_sock_cfg *cfg)
{
	setup_udp_tunnel_sock(net, sk, cfg);
	udp_tunnel_sock_release(sk);
}
