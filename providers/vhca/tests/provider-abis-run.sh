#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# usage: provider-abis-run.sh PROVIDER_DIR BUILD_DIR RDMA_CORE_GIT CACHE
#
# Runs the provider of each private ABI under the real libibverbs of the
# releases it is for: the dispatch test (built against the installed
# libibverbs; the public ABI is compatible) with LD_LIBRARY_PATH at that
# release's libibverbs.so.1, built once by rdma-core-libibverbs.sh into
# CACHE/vR, and RDMAV_DRIVERS at the provider built by provider-abis.sh's
# rules (BUILD_DIR/pabiN-rdma-core-R/), and R (the provider built for 36-43
# has no ATOMIC WRITE: the test checks that it refuses it).  A wrong
# provider next to each shows that the test tells: the one built for 44
# (PABI 34) loses ibv_qp_to_qp_ex() under 43 and 56 (ibv_qp_ex grew in 44
# and 45) and is never loaded by 57 and later, and the one built for 59
# (59-61) cannot open a device under 62 (same PABI, verbs_context grew).
# Needs root (the dispatch test's namespace).
#
# Prints KTAP: one result per run; logs in BUILD_DIR.
set -uo pipefail
src=$1 build=$2 git_dir=$3 cache=$4
# PABI:R:LIBIBVERBS:WRONG (WRONG: pabiN-rdma-core-R that must fail there)
RUNS=(34:36:43:pabi34-rdma-core-44 34:45:56:pabi34-rdma-core-44
      57:57:57:pabi34-rdma-core-44
      59:59:59:pabi34-rdma-core-44 59:62:62:pabi59-rdma-core-59
      64:64:64:pabi34-rdma-core-44)

mkdir -p "$build"
hdrs=$build/rdma-core
. "$(dirname "$0")/ktap-result.sh"

# provider PABI R: builds BUILD_DIR/pabiPABI-rdma-core-R/.
provider() {
	make -s -f "$src/Makefile" PABI="$1" RDMA_CORE="$2" \
		O="$build/pabi$1-rdma-core-$2" RDMA_CORE_GIT="$git_dir" \
		RDMA_CORE_HDRS="$hdrs" XFLAGS=-Werror all \
		>"$build/pabi$1-rdma-core-$2.build.log" 2>&1
}

# dispatch LIB NAME LOG: the dispatch test of NAME's provider
# (pabiN-rdma-core-R) under LIB.
dispatch() {
	LD_LIBRARY_PATH=$cache/v$1/lib "$build/native/tests/dispatch_test" \
		"$2@$1" "$build/$2/libvhca" "${2##*-}" >"$3" 2>&1
}

echo "KTAP version 1"
make -s -f "$src/Makefile" O="$build/native" XFLAGS=-Werror tests \
	>"$build/native.build.log" 2>&1
result $? "dispatch test built" "see $build/native.build.log"
provider 34 44
result $? "pabi34-rdma-core-44 built" "see $build/pabi34-rdma-core-44.build.log"

for run in "${RUNS[@]}"; do
	IFS=: read -r pabi r lib wrong <<<"$run"
	name=pabi$pabi-rdma-core-$r
	if ! "$src/tests/rdma-core-libibverbs.sh" "$git_dir" "$lib" \
			"$cache/v$lib"; then
		result 1 "libibverbs $lib built" "see $cache/v$lib/build.log"
		continue
	fi
	if ! provider "$pabi" "$r"; then
		result 1 "$name built" "see $build/$name.build.log"
		continue
	fi
	log=$build/$name@$lib.log
	dispatch "$lib" "$name" "$log"
	rc=$?
	result $rc "$name under libibverbs $lib: dispatch" \
		"exit $rc, $(grep -c '^not ok' "$log") failed: see $log"
	[ "$wrong" != - ] || continue
	log=$build/$wrong@$lib.log
	dispatch "$lib" "$wrong" "$log"
	rc=$?
	[ $rc != 0 ]
	result $? "$wrong under libibverbs $lib: dispatch fails" \
		"passed: the test cannot tell the ABIs apart"
done

echo "1..$n"
echo "# provider-abis-run: $((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
