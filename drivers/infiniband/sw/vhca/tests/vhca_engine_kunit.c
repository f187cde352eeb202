// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The KUnit suites of the protocol engine, one translation unit: the
 * engine's sources (static functions included), the stand-in network
 * layer (vhca_net_stub.c), the fixture (vhca_engine_fixture.h) and one
 * file per suite or area, vhca_engine_<area>_kunit.c, which the module's
 * Makefile does not compile on their own.  Each suite runs alone by name
 * (make check T=kunit/vhca_engine_hostile).
 */
#include <kunit/test.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

#include "../vhca_qp.c"
#include "../vhca_tx.c"
#include "../vhca_engine.c"
#include "../vhca_wqe.c"
#include "../vhca_req.c"
#include "../vhca_send.c"
#include "../vhca_comp.c"
#include "../vhca_resp.c"
#include "../vhca_resp_rd.c"
#include "../vhca_db.c"
#include "../vhca_linger.c"
#include "../vhca_rx.c"
#include "../vhca_ud.c"
#include "../vhca_handle.c"
#include "vhca_net_stub.c"

#include "vhca_engine_fixture.h"

#include "vhca_engine_req_kunit.c"
#include "vhca_engine_resp_kunit.c"
#include "vhca_engine_frwr_kunit.c"
#include "vhca_engine_atomic_kunit.c"
#include "vhca_engine_flush_kunit.c"
#include "vhca_engine_uc_kunit.c"
#include "vhca_engine_xrc_kunit.c"
#include "vhca_engine_direct_kunit.c"
#include "vhca_engine_hostile_kunit.c"
#include "vhca_engine_handle_kunit.c"
#if VHCA_ODP
#include "vhca_engine_odp_kunit.c"
#endif

kunit_test_suites(&vhca_engine_req_suite, &vhca_engine_retry_suite,
		  &vhca_engine_wrap_suite, &vhca_engine_resp_suite,
		  &vhca_engine_frwr_suite, &vhca_engine_atomic_suite,
		  &vhca_engine_flush_suite,
		  &vhca_engine_uc_suite, &vhca_engine_xrc_suite,
		  &vhca_engine_direct_suite, &vhca_engine_hostile_suite,
		  &vhca_engine_handle_suite);
#if VHCA_ODP
kunit_test_suites(&vhca_engine_odp_suite);
#endif
