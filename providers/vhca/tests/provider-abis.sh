#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# usage: provider-abis.sh PROVIDER_DIR BUILD_DIR RDMA_CORE_GIT
#
# Builds the provider for every recorded private ABI and proves each
# layout against the real headers of the releases it claims.  For each ABI
# (a PABI and the release R whose layout is recorded,
# tests/pabiPABI-layout-rdma-core-R.txt):
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
# A release's headers come from Debian's source package where a root of
# scripts/distro-root.sh has that release installed (trixie: 56, sid: 65;
# fetched once by debian-rdma-core.sh into $VHCA_CACHE/rdma-core-source,
# and taken from there after the root moved to another release), else
# from the rdma-core clone RDMA_CORE_GIT (tag vP.0).  A check whose
# release has neither is skipped, but for build, layout and imports, which
# then use the other release of the ones the ABI claims when that one has
# a source ("# NAME: built against vP" says so).
#
# Two ABIs are checked at a time.  Prints KTAP: one result per check,
# "not ok" with a "# why" line before it, "ok ... # SKIP why" for a check
# without its release; logs in BUILD_DIR.  Exits non-zero if any check
# failed.
set -uo pipefail
src=$1 build=$2 git_dir=$3
. "$src/../../scripts/lib.sh"
CC=${CC:-gcc}
# PABI:R:RELEASES
# shellcheck disable=SC2054 # the commas are within the elements
ABIS=(34:36:36,43 34:44:44 34:45:45,56 57:57:57,58 59:59:59,61 59:62:62,63
      64:64:64 65:65:65)
# The Debian roots whose rdma-core source can serve a release.
SUITES=(trixie sid)
SRCS=(vhca.c vhca_verbs.c vhca_post.c vhca_qpex.c vhca_cqex.c vhca_srq.c)
RDMA_CORE_WARNINGS=(-Wall -Wextra -Wno-sign-compare -Wno-unused-parameter
	-Wmissing-prototypes -Wmissing-declarations -Wwrite-strings -Wformat=2
	-Wcast-function-type -Wformat-nonliteral -Wdate-time -Wnested-externs
	-Wshadow -Wstrict-prototypes -Wold-style-definition -Wredundant-decls)

mkdir -p "$build"
host=$(pkg-config --modversion libibverbs 2>/dev/null | cut -d. -f3)

# Every release a check needs, in order.
needed=$(for abi in "${ABIS[@]}"; do
	IFS=: read -r _ r releases <<<"$abi"
	echo "$r" "${releases//,/ }"
done | tr ' ' '\n' | sort -nu)

# Where each release's headers come from: FROM[P], a source tree or the
# clone, for rdma-core-headers.sh, which extracts them into HDRS[P]/vP;
# ORIGIN[P] says which; BROKEN[P] names the log of a Debian source that
# should have been there and failed.
declare -A FROM=() HDRS=() ORIGIN=() BROKEN=()
for suite in "${SUITES[@]}"; do
	root=$VHCA_CACHE/root-$suite
	[ -e "$root/.done" ] || continue
	version=$(dpkg-query --admindir="$root/var/lib/dpkg" -W \
		-f='${Version}' libibverbs-dev 2>/dev/null) || continue
	p=${version#*:}
	p=${p%%.*}
	grep -qx "$p" <<<"$needed" || continue
	[ -z "${FROM[$p]:-}${BROKEN[$p]:-}" ] || continue
	log=$build/debian-$suite.log
	tree=$("$src/tests/debian-rdma-core.sh" "$root" \
		"$VHCA_CACHE/rdma-core-source" 2>"$log")
	case $? in
	0)
		FROM[$p]=$tree HDRS[$p]=$build/debian
		ORIGIN[$p]="Debian $suite's source package $version"
		;;
	77) ;;
	*) BROKEN[$p]=$log ;;
	esac
done
# A source fetched before from a root that has moved on since.
for done in "$VHCA_CACHE"/rdma-core-source/*/.done; do
	[ -e "$done" ] || continue
	version=$(basename "$(dirname "$done")")
	p=${version#*:}
	p=${p%%.*}
	grep -qx "$p" <<<"$needed" || continue
	[ -z "${FROM[$p]:-}${BROKEN[$p]:-}" ] || continue
	FROM[$p]=$(dirname "$done")/rdma-core HDRS[$p]=$build/debian
	ORIGIN[$p]="Debian's source package $version, fetched before"
done
for p in $needed; do
	[ -z "${FROM[$p]:-}${BROKEN[$p]:-}" ] || continue
	if git -C "$git_dir" rev-parse -q --verify "refs/tags/v$p.0" \
			>/dev/null 2>&1; then
		FROM[$p]=$git_dir HDRS[$p]=$build/rdma-core
		ORIGIN[$p]="tag v$p.0 of RDMA_CORE_GIT"
	fi
done

# nosource P: why P's checks are skipped.
nosource() {
	echo "SKIP no headers of rdma-core $1: no Debian root with it," \
		"no tag v$1.0 in RDMA_CORE_GIT"
}

# save_result OK|skip NAME [WHY]: one check, into the current ABI's
# results; save_result diag TEXT: a diagnostic line among them.
save_result() {
	printf '%s\t%s\t%s\n' "$1" "$2" "${3:-failed}" >>"$results"
}

# release P: its headers under HDRS[P]/vP (cached across runs).
release() {
	"$src/rdma-core-headers.sh" "${FROM[$1]}" "$1" "${HDRS[$1]}/v$1" \
		>"$build/headers-v$1.log" 2>&1
}

# probe P RECORD: the real layout of P against RECORD.
probe() {
	local p=$1 record=$2 out h=${HDRS[$1]}/v$1
	out=$build/probe-v$p
	"$CC" -std=gnu11 -Wall -Wextra -Werror -DVHCA_RDMA_CORE="$p" \
		-isystem "$h/full" -isystem "$h/pub" \
		-o "$out" "$src/tests/layout_probe.c" >"$out.log" 2>&1 &&
		"$out" >"$out.txt" || return 1
	diff <(awk '{print $1, $2, $3}' "$record") "$out.txt" >"$out.diff"
}

# intree P: the sources against P's real driver.h, its headers included as
# an rdma-core build includes them (-I) and with the warnings rdma-core 64's
# CMake enables, as errors.
intree() {
	local p=$1 f h=${HDRS[$1]}/v$1
	for f in "${SRCS[@]}"; do
		"$CC" -std=gnu11 "${RDMA_CORE_WARNINGS[@]}" -Werror -O2 \
			-fsyntax-only -DVHCA_IN_TREE -DVHCA_RDMA_CORE="$p" \
			-I"$src/../../include/uapi" -I"$h/full" -I"$h/pub" \
			"$src/$f" || return 1
	done >"$build/intree-v$p.log" 2>&1
}

# check_abi PABI:R:RELEASES: every check of one ABI, into $results.
check_abi() {
	local pabi r releases name out record so rc imports bad p b=
	IFS=: read -r pabi r releases <<<"$1"
	name=pabi$pabi-rdma-core-$r
	out=$build/$name
	record=$src/tests/pabi$pabi-layout-rdma-core-$r.txt
	results=$build/$name.results
	: >"$results"

	# The release to build for: R, else another one of the ABI's.
	if [ "$r" = "$host" ]; then
		b=$r
	else
		for p in $r ${releases//,/ }; do
			[ -z "${FROM[$p]:-}" ] || { b=$p; break; }
		done
	fi
	if [ -z "$b" ]; then
		for p in build layout imports; do
			save_result skip "$name: $p" "$(nosource "$r")"
		done
	else
		if [ "$b" != "$r" ]; then
			out=$build/$name-v$b
			save_result diag "$name: built against v$b ($(nosource \
				"$r" | sed 's/^SKIP //'))"
		fi
		so=$out/libvhca-rdmav$pabi.so
		make -s -f "$src/Makefile" PABI="$pabi" RDMA_CORE="$b" O="$out" \
			RDMA_CORE_SRC="${FROM[$b]:-$git_dir}" \
			RDMA_CORE_HDRS="${HDRS[$b]:-$build/rdma-core}" \
			XFLAGS=-Werror layout-test >"$out.build.log" 2>&1
		rc=$?
		save_result $rc "$name: build" "see $out.build.log"
	fi
	if [ -n "$b" ] && [ "$rc" = 0 ]; then
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
		if [ -n "${BROKEN[$p]:-}" ]; then
			save_result 1 "$name: release v$p" "see ${BROKEN[$p]}"
			continue
		fi
		if [ -z "${FROM[$p]:-}" ]; then
			save_result skip "$name: probe v$p" "$(nosource "$p")"
			save_result skip "$name: in-tree v$p" "$(nosource "$p")"
			continue
		fi
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
git_releases='' none=''
for p in $needed; do
	if [ -n "${BROKEN[$p]:-}" ]; then
		echo "# rdma-core $p: its Debian source failed, see ${BROKEN[$p]}"
	elif [ "${HDRS[$p]:-}" = "$build/debian" ]; then
		echo "# rdma-core $p: ${ORIGIN[$p]}"
	elif [ -n "${FROM[$p]:-}" ]; then
		git_releases+=" $p"
	else
		none+=" $p"
	fi
done
[ -z "$git_releases" ] ||
	echo "# rdma-core$git_releases: tags of RDMA_CORE_GIT ($git_dir)"
[ -z "$none" ] || echo "# rdma-core$none: no headers"
. "$(dirname "$0")/ktap-result.sh"
for abi in "${ABIS[@]}"; do
	IFS=: read -r pabi r _ <<<"$abi"
	while IFS=$'\t' read -r rc what why; do
		if [ "$rc" = diag ]; then
			echo "# $what"
		else
			result "$rc" "$what" "$why"
		fi
	done <"$build/pabi$pabi-rdma-core-$r.results"
done
echo "1..$n"
echo "# provider-abis: $((n - failed - skipped)) passed, $failed failed," \
	"$skipped skipped"
[ "$n" -gt 0 ] && [ "$failed" = 0 ]
