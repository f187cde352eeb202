// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* <linux/unaligned.h> (6.12; <asm/unaligned.h> before) */
#include <linux/unaligned.h>
