#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# usage: provider-abis.sh PROVIDER_DIR BUILD_DIR RDMA_CORE_GIT
#
# Builds the provider for every recorded private ABI and proves each
# layout against the real headers of the releases it claims, from the
# rdma-core clone RDMA_CORE_GIT (tags vN.0).  For each ABI (a PABI and the
# release whose layout is recorded, tests/pabiPABI-layout-rdma-core-R.txt):
#
#   build          libvhca-rdmavPABI.so and the layout test with -Werror,
#                  against release R's headers (the installed ones for the
#                  installed release), linked as the Makefile links it
#   layout         the layout test: vhca_pabi.h against the record
#   imports        every symbol the provider imports is versioned
#                  IBVERBS_PRIVATE_PABI, verbs_register_driver_PABI among them
#   probe vP       for R and the first and the last release P of the ones
#                  it claims: layout_probe.c built against P's real driver.h
#                  prints the facts, which must equal the record
#   in-tree vP     the provider's sources compile with -Werror against P's
#                  real driver.h (VHCA_IN_TREE, as in an rdma-core checkout):
#                  every call and op has the release's own prototype
#
# Two ABIs are checked at a time.  Prints KTAP: one result per check,
# "not ok" with a "# why" line before it; logs in BUILD_DIR.  Exits
# non-zero if any check failed.
set -uo pipefail
src=$1 build=$2 git_dir=$3
if ! git -C "$git_dir" rev-parse -q --verify refs/tags/v64.0 >/dev/null; then
	echo "provider-abis.sh: no rdma-core clone with tag v64.0 at" \
		"$git_dir (RDMA_CORE_GIT)" >&2
	exit 1
fi
CC=${CC:-gcc}
# PABI:R:RELEASES
# shellcheck disable=SC2054 # the commas are within the elements
ABIS=(34:36:36,43 34:44:44 34:45:45,56 57:57:57,58 59:59:59,61 59:62:62,63
      64:64:64)
SRCS=(vhca.c vhca_verbs.c vhca_post.c vhca_qpex.c vhca_cqex.c vhca_srq.c)
RDMA_CORE_WARNINGS=(-Wall -Wextra -Wno-sign-compare -Wno-unused-parameter
	-Wmissing-prototypes -Wmissing-declarations -Wwrite-strings -Wformat=2
	-Wcast-function-type -Wformat-nonliteral -Wdate-time -Wnested-externs
	-Wshadow -Wstrict-prototypes -Wold-style-definition -Wredundant-decls)

mkdir -p "$build"
hdrs=$build/rdma-core

# save_result OK NAME [WHY]: one check, into the current ABI's results.
save_result() {
	printf '%s\t%s\t%s\n' "$1" "$2" "${3:-failed}" >>"$results"
}

# release P: its headers under $hdrs/vP (cached across runs).
release() {
	"$src/rdma-core-headers.sh" "$git_dir" "$1" "$hdrs/v$1" \
		>"$build/headers-v$1.log" 2>&1
}

# probe P RECORD: the real layout of P against RECORD.
probe() {
	local p=$1 record=$2 out
	out=$build/probe-v$p
	"$CC" -std=gnu11 -Wall -Wextra -Werror -DVHCA_RDMA_CORE="$p" \
		-isystem "$hdrs/v$p/full" -isystem "$hdrs/v$p/pub" \
		-o "$out" "$src/tests/layout_probe.c" >"$out.log" 2>&1 &&
		"$out" >"$out.txt" || return 1
	diff <(awk '{print $1, $2, $3}' "$record") "$out.txt" >"$out.diff"
}

# intree P: the sources against P's real driver.h, its headers included as
# an rdma-core build includes them (-I) and with the warnings rdma-core 64's
# CMake enables, as errors.
intree() {
	local p=$1 f
	for f in "${SRCS[@]}"; do
		"$CC" -std=gnu11 "${RDMA_CORE_WARNINGS[@]}" -Werror -O2 \
			-fsyntax-only -DVHCA_IN_TREE -DVHCA_RDMA_CORE="$p" \
			-I"$src/../../include/uapi" -I"$hdrs/v$p/full" \
			-I"$hdrs/v$p/pub" "$src/$f" || return 1
	done >"$build/intree-v$p.log" 2>&1
}

# check_abi PABI:R:RELEASES: every check of one ABI, into $results.
check_abi() {
	local pabi r releases name out record so rc imports bad p
	IFS=: read -r pabi r releases <<<"$1"
	name=pabi$pabi-rdma-core-$r
	out=$build/$name
	record=$src/tests/pabi$pabi-layout-rdma-core-$r.txt
	so=$out/libvhca-rdmav$pabi.so
	results=$build/$name.results
	: >"$results"

	make -s -f "$src/Makefile" PABI="$pabi" RDMA_CORE="$r" O="$out" \
		RDMA_CORE_GIT="$git_dir" RDMA_CORE_HDRS="$hdrs" \
		XFLAGS=-Werror layout-test >"$out.build.log" 2>&1
	rc=$?
	save_result $rc "$name: build" "see $out.build.log"
	if [ $rc = 0 ]; then
		"$out/tests/layout_test" "$name" "$record" >"$out.layout.log" 2>&1
		rc=$?
		save_result $rc "$name: layout" "failed checks: $(grep -c '^not ok' \
			"$out.layout.log"), see $out.layout.log"

		imports=$(nm -D --undefined-only "$so" |
			awk '$1 == "U" {print $2}' | grep -v '@GLIBC_')
		bad=$(grep -v "@IBVERBS_PRIVATE_$pabi\$" <<<"$imports" | xargs)
		grep -qx "verbs_register_driver_$pabi@IBVERBS_PRIVATE_$pabi" \
			<<<"$imports"
		rc=$?
		[ -z "$bad" ] || rc=1
		save_result $rc "$name: imports" "not IBVERBS_PRIVATE_$pabi: ${bad:-}"
	fi

	for p in ${releases//,/ }; do
		if ! release "$p"; then
			save_result 1 "$name: release v$p" "see $build/headers-v$p.log"
			continue
		fi
		probe "$p" "$record"
		save_result $? "$name: probe v$p" \
			"differs from the record, see $build/probe-v$p.diff"
		intree "$p"
		save_result $? "$name: in-tree v$p" "see $build/intree-v$p.log"
	done
}

# Two ABIs at a time (their releases are disjoint), then the results in
# order.
for abi in "${ABIS[@]}"; do
	[ "$(jobs -rp | wc -l)" -lt 2 ] || wait -n
	check_abi "$abi" &
done
wait

echo "KTAP version 1"
. "$(dirname "$0")/ktap-result.sh"
for abi in "${ABIS[@]}"; do
	IFS=: read -r pabi r _ <<<"$abi"
	while IFS=$'\t' read -r rc what why; do
		result "$rc" "$what" "$why"
	done <"$build/pabi$pabi-rdma-core-$r.results"
done
echo "1..$n"
echo "# provider-abis: $((n - failed)) passed, $failed failed"
[ "$n" -gt 0 ] && [ "$failed" = 0 ]
