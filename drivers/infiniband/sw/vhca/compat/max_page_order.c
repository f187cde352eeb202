// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* MAX_PAGE_ORDER (6.8; MAX_ORDER before) */
#include <linux/mmzone.h>

static int probe __maybe_unused = MAX_PAGE_ORDER;
