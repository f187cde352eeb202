// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The KUnit suites of memory regions, memory windows, their copies and
 * address handles, one translation unit with the sources they test (static
 * functions included): vhca_mr (checks, keys, lookup, AHs), vhca_mr_copy
 * (the engine's data movement), vhca_mr_fast (fast registration) and
 * vhca_mr_mw (memory windows), one file each, vhca_mr_<area>_kunit.c, in
 * this order (each may use the helpers of those before it).
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "../vhca_mr.c"
#include "../vhca_mw.c"
#include "../vhca_mr_copy.c"
#include "../vhca_ah.c"
#if VHCA_ODP
#include "../vhca_odp.c"
#endif

#include "vhca_mr_core_kunit.c"
#include "vhca_mr_copy_kunit.c"
#include "vhca_mr_fast_kunit.c"
#include "vhca_mr_mw_kunit.c"

kunit_test_suites(&vhca_mr_suite, &vhca_mr_copy_suite, &vhca_mr_fast_suite,
		  &vhca_mr_mw_suite);
