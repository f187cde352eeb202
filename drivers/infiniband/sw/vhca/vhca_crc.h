/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The CRC-32 the ICRC is made of (IEEE 802.3's polynomial, bit-reflected:
 * what crc32_le() computes), by the fastest routine of this kernel and
 * CPU, timed when the module loads.
 */
#ifndef VHCA_CRC_H
#define VHCA_CRC_H

#include <linux/types.h>

int vhca_crc_init(void);
void vhca_crc_exit(void);
u32 vhca_crc(u32 crc, const void *p, size_t len);

#endif
