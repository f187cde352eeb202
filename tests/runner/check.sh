#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make check: every test of vhca, in pyramid order: dependencies (make
# deps), the builds and the provider's host tests on the host; one boot of
# the stock kernel running every guest script and a pair of stock guests,
# while in the background, niced, the modules for 6.1 and 7.2 (inside a
# sid root), the trixie and sid roots with the provider built in each, the
# debug kernel and its module are built and sparse and checkpatch run,
# and, one after another beside the stock guests, boots of Debian 12's
# default kernel (6.1), of sid's (7.2) with the sid userland and of 6.12
# with trixie's, for a smoke set and rdma-core's pyverbs suite each,
# once each one's builds are done; then two boots of the debug kernel at
# once, running
# the KUnit suites and the guest scripts again.  Every
# level prints KTAP; this script flattens it
# (tests/runner/ktap.awk) into one "ok N name" or "not ok N name # why" per
# result, ends with a table of each stage's time against its budget and
# the line "N passed, N failed, N skipped".  Logs: build/check/, VM
# results build/vm/BOOT/ (stock, pair, stock-pkg, stock-6.1, sid, trixie,
# debug-a, debug-b).
#
# usage: check.sh [--quick]
#   VHCA_T='GLOBS' (make check T=...): run only what they select
#   (tests/runner/select.sh): host/STAGE, kunit/SUITE/CASE, stock/SCRIPT/SCENARIO,
#   debug/..., or SCRIPT/SCENARIO on both kernels.  The builds a selected
#   test needs always run.
#   --quick (make check-quick): the host stages, KUnit and the stock
#   kernel's smoke set (QUICK below).
set -uo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"
. "$VHCA_TOP/tests/runner/select.sh"

# The smoke set of make check-quick: one scenario of each guest script's
# main path, on the stock kernel.
QUICK="host kunit stock/link/veth-pair stock/device/devinfo stock/objects/cycles
	stock/net/rdma-wire stock/rc/perftest stock/rdma/one-ns stock/local/runs
	stock/cm/rping stock/doorbell/streams"
if [ "${1:-}" = --quick ]; then
	VHCA_T=$(echo $QUICK)
fi
export VHCA_T=${VHCA_T:-}

# The guest scripts, in the order each boot runs them; PAIRED runs in a
# pair of stock-kernel guests (vm-run.sh -2), two hosts on one wire.
GUESTS="link device objects net rc rdma doorbell local cm interop pyverbs fuzz inject ulp ucx middleware pkg demo"
PAIRED=hosts

# Budgets per stage, in seconds, on this 2-core machine under TCG with the
# kernel caches warm (Documentation/testing.md): what each stage may cost,
# about a third over what it takes; twice a boot's scripts'
# budgets is its VM's time limit.  The cold extras (packages, the stock
# kernel download, the debug kernel build, which runs beside the stock
# guests) come on top.
declare -A BUDGET=(
	[deps]=30 [stock-kernel]=60 [host/build-stock]=90 [host/sparse]=160
	[host/checkpatch]=160 [host/userspace]=60 [host/provider]=60 [host/kbuild]=10
	[host/build-6.1]=200 [stock-6.1]=650
	[stock-6.1/pyverbs]=300 [stock-kernel-6.1]=10 [stock-kernel-7.2]=10
	[host/build-7.2]=300 [root-trixie]=30 [root-sid]=30
	[host/provider-trixie]=60 [host/provider-sid]=60 [sid]=700 [trixie]=450
	[sid/pyverbs]=300 [trixie/pyverbs]=300
	[host/pkg]=200 [host/pkg-sid]=100 [host/provider-abis]=90
	[debug-kernel]=1800 [host/build-debug]=200 [host/sparse-debug]=200
	[stock]=1500 [pair]=120 [stock-pkg]=200 [debug-a]=1500 [debug-b]=1500
)
# The guest scripts.
BUDGET+=(
	[stock/link]=60 [stock/device]=90 [stock/objects]=60 [stock/net]=60
	[stock/rc]=300 [stock/rdma]=90 [stock/doorbell]=90 [stock/local]=120
	[stock/cm]=130 [stock/interop]=240 [stock/hosts]=90 [stock/ulp]=260
	[stock/ucx]=240 [stock/middleware]=320
	[stock/pkg]=150 [stock/demo]=60 [stock/pyverbs]=300
	[kunit]=60 [debug/link]=180 [debug/device]=160 [debug/objects]=200
	[debug/net]=360 [debug/rc]=500 [debug/rdma]=240 [debug/doorbell]=300
	[debug/local]=400 [debug/cm]=330 [debug/interop]=220 [debug/fuzz]=320
	[debug/inject]=220 [debug/ulp]=450 [debug/ucx]=80 [debug/middleware]=60
)

LOGS=$VHCA_TOP/build/check
rm -rf "$LOGS"
mkdir -p "$LOGS"
NPASS=0
NFAIL=0
NSKIP=0
NRES=0
T0=$(date +%s)
# The long silent phases (apt, kernel downloads, debootstrap, the debug
# kernel's build) say how far they are every 30 s, on this console
# (scripts/lib.sh's progress), from inside the stages that log elsewhere.
exec {VHCA_PROGRESS_FD}>&1
export VHCA_PROGRESS_FD
STAGES=()
declare -A SECS=() ENDED=() CPU=()
FAILED=()

echo "KTAP version 1"
[ -z "$VHCA_T" ] || echo "# selected: $VHCA_T"

# result pass|fail|skip NAME [DIAGNOSTIC]: one flattened result line.
# In a stage running in the background (REC set), recorded for replay.
result() {
	local d=${3:-}
	if [ -n "${REC:-}" ]; then
		printf '%s\t%s\t%s\n' "$1" "$2" "$d" >>"$REC"
		return
	fi
	NRES=$((NRES + 1))
	case $1 in
	pass)
		NPASS=$((NPASS + 1))
		echo "ok $NRES $2${d:+ # $d}"
		;;
	skip)
		NSKIP=$((NSKIP + 1))
		echo "ok $NRES $2 # ${d:-SKIP}"
		;;
	*)
		NFAIL=$((NFAIL + 1))
		FAILED+=("$2${d:+ # $d}")
		echo "not ok $NRES $2${d:+ # $d}"
		;;
	esac
}

# timed NAME SECONDS [ENDED]: a stage's time, for the table (stages and
# scripts; every scenario's time goes to build/check/times.txt), and when
# it ended, in seconds since make check started: now, unless given ("-"
# for a guest script, whose times come in when its boot ends).
timed() {
	local end=${3:-$(($(date +%s) - T0))}
	if [ -n "${REC:-}" ]; then
		printf 'time\t%s\t%s\t%s\n' "$1" "$2" "$end" >>"$REC"
		return
	fi
	echo "$2 $1" >>"$LOGS/times.txt"
	case $1 in
	*/*/*) return ;;
	esac
	[ -n "${SECS[$1]+x}" ] || STAGES+=("$1")
	SECS[$1]=$2
	ENDED[$1]=$end
}

# cputime NAME SECONDS: the CPU time (user and system) a stage's commands,
# a boot's QEMU or (the guest's own count) a guest script took, for the
# table; every scenario's goes to build/check/cpu.txt.  Against the
# stage's time, it shows what waited and what kept a CPU busy.
cputime() {
	if [ -n "${REC:-}" ]; then
		printf 'cpu\t%s\t%s\n' "$1" "$2" >>"$REC"
		return
	fi
	echo "$2 $1" >>"$LOGS/cpu.txt"
	case $1 in
	*/*/*) return ;;
	esac
	CPU[$1]=$2
}

# reaped_cpu STATUS: "STATUS SECONDS", the CPU time of the children this
# (sub)shell has waited for, descendants they waited for included
# (/proc/PID/stat's cutime and cstime, in USER_HZ: 100 on Linux).
reaped_cpu() {
	local st
	read -ra st <"/proc/$BASHPID/stat"
	echo "$1 $(((st[15] + st[16]) / 100))"
}

# merge PREFIX FILE: the results of a KTAP stream, flattened.
merge() {
	local kind name diag
	while IFS=$'\t' read -r kind name diag; do
		# KUnit runs in the debug kernel, and is named kunit/SUITE/CASE.
		name=${name/#debug\/kunit/kunit}
		case $kind in
		time) timed "$name" "$diag" - ;;
		cpu) cputime "$name" "$diag" ;;
		*) result "$kind" "$name" "$diag" ;;
		esac
	done < <(awk -v prefix="$1" -f "$VHCA_TOP/tests/runner/ktap.awk" "$2")
}

table() {
	local s b mark
	# ended: seconds since the start, where the run's critical path shows.
	echo "# stage                          seconds     cpu  budget   ended"
	for s in "${STAGES[@]}"; do
		b=${BUDGET[$s]:-}
		mark=
		[ -n "$b" ] && [ "${SECS[$s]}" -gt "$b" ] && mark="  over budget"
		printf '# %-30s %7s  %6s  %6s  %6s%s\n' "$s" "${SECS[$s]}" \
			"${CPU[$s]:--}" "${b:--}" "${ENDED[$s]}" "$mark"
	done
	# A warm run stays under 45 minutes on this machine.
	printf '# %-30s %7s  %6s\n' "make check" "$(($(date +%s) - T0))" 2700
}

summary() {
	echo "1..$NRES"
	table
	if [ ${#FAILED[@]} -gt 0 ]; then
		echo "# failed:"
		printf '#   %s\n' "${FAILED[@]}"
	fi
	log "make check took $(($(date +%s) - T0)) s; logs in $LOGS"
	echo "$NPASS passed, $NFAIL failed, $NSKIP skipped"
	[ $NFAIL = 0 ]
	exit
}

# stage NAME LOGFILE COMMAND...: run, keep the output, time it, show its
# tail on error.
stage() {
	local name=$1 logf=$2 t=$(date +%s) rc cpu
	shift 2
	read -r rc cpu < <(
		"$@" >"$logf" 2>&1
		reaped_cpu $?
	)
	timed "$name" $(($(date +%s) - t))
	cputime "$name" "$cpu"
	if [ $rc != 0 ]; then
		echo "# $name failed (exit $rc); end of $logf:"
		tail -25 "$logf" | sed 's/^/# /'
	fi
	return $rc
}

# built NAME LOGFILE COMMAND...: a build stage that must succeed with no
# compiler or sparse diagnostic in its log.
built() {
	local name=$1 logf=$2
	if ! stage "$@"; then
		result fail "$name" "exit status"
		return 1
	fi
	if grep -Eq 'warning:|error:' "$logf"; then
		grep -E 'warning:|error:' "$logf" | head -20 | sed 's/^/# /'
		result fail "$name" "diagnostics in $logf"
	else
		result pass "$name"
	fi
}

cd "$VHCA_TOP"
if ! stage deps "$LOGS/deps.log" make -s deps; then
	result fail "host/deps"
	summary
fi
stage stock-kernel "$LOGS/stock-kernel.log" scripts/stock-kernel.sh ||
	result fail "host/stock-kernel"

# Which kernels boot, and which scripts each boot runs.
declare -A RUN=()
for k in stock debug pair; do
	RUN[$k]=
	gs=$GUESTS
	[ $k = pair ] && gs=$PAIRED
	for g in $gs; do
		# The debug kernel boots for the scenarios not marked stock,
		# the stock kernel for those not marked debug.
		not=' debug$'
		[ $k = debug ] && not=' stock$'
		for s in $(sed -n "/$not/!s/^scenario \([^ ]*\) .*/\1/p" "tests/guest/$g.sh"); do
			if t_selected "${k/pair/stock}/$g/$s"; then
				RUN[$k]="${RUN[$k]} $g"
				break
			fi
		done
	done
done
# The other boots, each for a smoke set of the guest scenarios and
# rdma-core's pyverbs suite (on vhca; on sid also on the kernel's own rxe,
# the reference): Debian 12's default kernel (6.1) with this host's userland
# (bookworm's rdma-core 44); sid's kernel (7.2) with the sid root as its
# userland (rdma-core 65); 6.12 with the trixie root's (rdma-core 56).
# The smoke set: link and device, ibv_rc_pingpong and perftest, the rdma
# set, rping, interop with the kernel's own rxe, NVMe over RDMA; on 6.1 and
# 7.2 also the packages (DKMS's module for 6.1 from the package checks' host
# half, host/pkg; sid's packages and DKMS's module for 7.2 built inside the
# sid root, host/pkg-sid).
# OTHERS are the kernels built besides 6.12, ROOTS the userland roots, sid's
# first: 7.2's build has made it already, and the matrix's sid boot waits
# for the packages built in it (a cold trixie root before it held them back
# 280 s, past the stock boots' end).
OTHERS="6.1 7.2"
ROOTS="sid trixie"
SMOKE="link/veth-pair device/devinfo rc/pingpong rc/perftest rdma/one-ns
	cm/rping interop/rxe-server-verbs ulp/nvme"
PYV="pyverbs/vhca pyverbs/rxe"
EXTRA="stock-6.1 sid trixie"
declare -A SERIES_OF=([stock-6.1]=6.1 [sid]=7.2 [trixie]=6.12)
declare -A ROOT_OF=([stock-6.1]= [sid]=sid [trixie]=trixie)
# rxe's reference suite runs where its figures are asked for: rdma-core
# 44's on 6.12 (the stock boot) and 65's on 7.2 (sid); on 6.1 and under 56
# it would cost CPU beside the stock boot and judge nothing of vhca's.
declare -A SET_OF=([stock-6.1]="$SMOKE pyverbs/vhca pkg/deb" [sid]="$SMOKE $PYV pkg/deb"
	[trixie]="device/devinfo rc/pingpong rc/perftest pyverbs/vhca")
declare -A RUN_K=() T_K=() NEED_K=([6.1]=0 [7.2]=0) NEED_R=([trixie]=0 [sid]=0)
for k in $EXTRA; do
	RUN_K[$k]= T_K[$k]=
	for s in ${SET_OF[$k]}; do
		if t_selected "$k/$s"; then
			T_K[$k]="${T_K[$k]} $k/$s"
			case " ${RUN_K[$k]} " in
			*" ${s%%/*} "*) ;;
			*) RUN_K[$k]="${RUN_K[$k]} ${s%%/*}" ;;
			esac
		fi
	done
	if [ -n "${RUN_K[$k]}" ]; then
		[ "${SERIES_OF[$k]}" = 6.12 ] || NEED_K[${SERIES_OF[$k]}]=1
		[ -z "${ROOT_OF[$k]}" ] || NEED_R[${ROOT_OF[$k]}]=1
	fi
done
for v in $OTHERS; do
	t_selected "host/build-$v" && NEED_K[$v]=1
done
for r in $ROOTS; do
	t_selected "host/provider-$r" && NEED_R[$r]=1
done
if t_selected host/pkg-sid || t_selected sid/pkg/deb; then
	NEED_K[7.2]=1 NEED_R[sid]=1
fi
KUNIT=0
t_selected kunit && KUNIT=1
NEED_DEBUG=0
[ -n "${RUN[debug]}" ] || [ $KUNIT = 1 ] || t_selected host/build-debug ||
	t_selected host/sparse-debug || t_selected host/debug-kernel && NEED_DEBUG=1

# ---- 1. host: the builds the stock kernel's guests need, and the
# provider's host tests; the static checks run in the background (2.).
rm -rf build/stock build/debug build/provider build/tests \
	build/stock-6.1 build/stock-7.2 \
	build/provider-trixie build/provider-sid \
	build/examples build/deb build/deb-sid
built host/build-stock "$LOGS/build-stock.log" make module
# The provider and the test programs: -Wall -Wextra, no warnings.
built host/userspace "$LOGS/userspace.log" make provider tests
if t_selected host/provider; then
	stage host/provider "$LOGS/provider.log" make -s provider-check
	prc=$?
	merge host/provider "$LOGS/provider.log"
	[ $prc = 0 ] || result fail host/provider "exit $prc"
fi
# The top-level Kbuild refuses every kernel but x86_64, read dry.
if t_selected host/kbuild; then
	stage host/kbuild "$LOGS/kbuild.log" make -s kbuild-check
	krc=$?
	merge host/kbuild "$LOGS/kbuild.log"
	[ $krc = 0 ] || result fail host/kbuild "exit $krc"
fi
# The packages, DKMS on the host, the unit and man pages
# (tests/host/pkg-host.sh, about 95 s warm) in the background at nice 19,
# recorded for replay: pkg.sh installs what this builds, in a boot of its
# own after the stock boot and the pair, which waits for it.
PKGPID=
if t_selected host/pkg || t_selected stock/pkg/deb ||
	t_selected stock-6.1/pkg/deb; then
	: >"$LOGS/pkg.rec"
	(
		renice -n 19 $BASHPID >/dev/null
		if REC=$LOGS/pkg.rec stage host/pkg "$LOGS/pkg.log" tests/host/pkg-host.sh; then
			REC=$LOGS/pkg.rec result pass host/pkg
		else
			REC=$LOGS/pkg.rec result fail host/pkg "exit status"
		fi
	) >"$LOGS/pkg.out" 2>&1 &
	PKGPID=$!
fi

# static: sparse over the module (6.12, in build-stock's tree, no file
# compiled again; the other kernels' builds have theirs), checkpatch --strict over the tree, the provider built and its layouts
# proved for rdma-core's other private ABIs (57, 59, 64, 65, and 34 of
# 45-56) against their releases' headers.
static_checks() {
	# The provider's ABIs: each release's headers from the Debian roots'
	# rdma-core source packages (trixie's 56, sid's 65; the roots made
	# once, here when missing), else from an rdma-core clone
	# (RDMA_CORE_GIT); the checks of a release with neither are skipped.
	if t_selected host/provider-abis; then
		for suite in trixie sid; do
			stage "provider-abis-root-$suite" \
				"$LOGS/provider-abis-root-$suite.log" \
				scripts/distro-root.sh "$suite" || [ $? = 77 ] ||
				echo "# no $suite root: its release's ABI checks skip; see $LOGS/provider-abis-root-$suite.log"
		done
		stage host/provider-abis "$LOGS/provider-abis.log" \
			make -s provider-abis \
			RDMA_CORE_GIT="${RDMA_CORE_GIT:-/work/.mirror/linux-rdma+rdma-core/repo}"
		parc=$?
		merge host/provider-abis "$LOGS/provider-abis.log"
		[ $parc = 0 ] || result fail host/provider-abis "exit $parc"
	fi
	if t_selected host/sparse; then
		built host/sparse "$LOGS/sparse.log" make sparse
	fi
	if t_selected host/checkpatch; then
		if stage host/checkpatch "$LOGS/checkpatch.log" scripts/checkpatch.sh &&
			! grep '^total:' "$LOGS/checkpatch.log" | grep -vq 'total: 0 errors, 0 warnings, 0 checks'; then
			result pass host/checkpatch
		else
			grep -E '^(ERROR|WARNING|CHECK)' "$LOGS/checkpatch.log" | head -20 | sed 's/^/# /'
			result fail host/checkpatch "checkpatch.pl --strict is not clean"
		fi
	fi
}

# boot KIND TAG SCRIPT...: one boot of KIND running the scripts (suite.sh),
# results in build/vm/TAG;
# when the guest dies before the end, the scripts it never reached run in
# another boot (the one that was running is not run again).
boot() {
	local kind=$1 tag=$2 t=$(date +%s) n=0 rc done todo cpu sum=0
	shift 2
	todo="$*"
	while [ -n "$todo" ]; do
		n=$((n + 1))
		out=$VHCA_TOP/build/vm/$tag${n#1}
		rm -rf "$out"
		# The limit: the budgets of the scripts, twice over, and the boot.
		tmo=120
		for g in $todo; do
			tmo=$((tmo + 2 * ${BUDGET[$kind/$g]:-${BUDGET[$g]:-300}}))
		done
		read -r rc cpu < <(
			tests/runner/vm-run.sh -k "$kind" -t $tmo -o "$out" \
				tests/guest/suite.sh $todo >"$LOGS/vm-$tag$n.log" 2>&1
			reaped_cpu $?
		)
		sum=$((sum + cpu))
		tr -d '\r' <"$out/console.log" >"$out/ktap.log" 2>/dev/null
		merge "$kind" "$out/ktap.log"
		# Below 124 the suite's own status: failed scripts, counted
		# already.  124 timeout, 125 the guest died, 126 a kernel checker
		# report (kmemleak's last scan, a report outside any scenario).
		if [ $rc -lt 124 ]; then
			break
		fi
		sed 's/^/# /' "$LOGS/vm-$tag$n.log" | tail -30
		result fail "$tag/vm$n" "VM exit $rc (see $out/console.log)"
		# The scripts with a result at the top level are done.
		done=$(sed -n 's/^\(not \)\{0,1\}ok [0-9]* \([a-z]*\)\( #.*\)\{0,1\}$/\2/p' "$out/ktap.log")
		local rest= first=1 g
		for g in $todo; do
			if echo "$done" | grep -qx "$g"; then
				continue
			fi
			if [ $first = 1 ]; then
				first=0
				echo "# $kind: the guest died in $g; the scripts after it boot again"
				continue
			fi
			rest="$rest $g"
		done
		todo=$rest
	done
	timed "$tag" $(($(date +%s) - t))
	cputime "$tag" $sum
}

# pair SCRIPT...: one boot of a pair of stock-kernel guests.
pair() {
	local t=$(date +%s) out=$VHCA_TOP/build/vm/pair rc r tmo=120 g cpu
	rm -rf "$out"
	for g in "$@"; do
		tmo=$((tmo + 2 * ${BUDGET[stock/$g]}))
	done
	read -r rc cpu < <(
		tests/runner/vm-run.sh -2 -k stock -t $tmo -o "$out" \
			tests/guest/suite.sh "$@" >"$LOGS/vm-pair.log" 2>&1
		reaped_cpu $?
	)
	for r in a b; do
		tr -d '\r' <"$out/$r/console.log" >"$out/$r/ktap.log" 2>/dev/null
		merge stock "$out/$r/ktap.log"
	done
	if [ $rc -ge 124 ]; then
		sed 's/^/# /' "$LOGS/vm-pair.log" | tail -30
		result fail "stock/pair" "VM exit $rc (see $out/{a,b}/console.log)"
	fi
	timed pair $(($(date +%s) - t))
	cputime pair "$cpu"
}

# replay FILE: the results and times a background stage recorded.
replay() {
	local kind name diag end
	while IFS=$'\t' read -r kind name diag end; do
		case $kind in
		time) timed "$name" "$diag" "$end" ;;
		cpu) cputime "$name" "$diag" ;;
		*) result "$kind" "$name" "$diag" ;;
		esac
	done <"$1"
}

# ---- 2. in the background at nice 19, beside the stock kernel's guests
# (3.): the debug test kernel (built on a cold machine, cached after) and
# the module for it, then the static checks, sparse over the KUnit suites
# too; recorded for replay.  Niced, they take little from the stock
# guests, whose checks count on timing (retransmit timeouts, doorbell
# kicks).  The debug kernel's guests do not run beside them: this
# machine's two CPUs are hyperthreads of one core, and a debug guest there
# slowed the stock guest's RC runs by 70% and itself ran at a tenth of its
# speed.
# The two boots' halves, about even (CI's cold run: 1470 s and 1440 s of
# scripts): debug-b has the longest script (ulp), so UCX's, rsockets' and
# local's scenarios go to debug-a.
DEBUG_A="kunit rc interop link fuzz inject ucx middleware local"
DEBUG_OK=0
debug_build() {
	if stage debug-kernel "$LOGS/debug-kernel.log" scripts/test-kernel.sh; then
		result pass host/debug-kernel
		built host/build-debug "$LOGS/build-debug.log" make module-debug &&
			echo 1 >"$LOGS/debug-ok"
	else
		result fail host/debug-kernel "KUnit, KASAN, lockdep, kmemleak, UBSAN kernel not built"
	fi
	: >"$LOGS/debug-built"
}

# The other kernels, 6.1 and 7.2: each one's module, W=1 and sparse clean
# (SPARSE=1: both in one pass), first, for its boot.  The kernel comes first (for 7.2
# the sid root too, on a cold machine): a pinned kernel that has left the
# registry skips its stages (kV-ok says "skip").
build_others() {
	local v rc
	for v in $OTHERS; do
		[ "${NEED_K[$v]}" = 1 ] || continue
		stage "stock-kernel-$v" "$LOGS/stock-kernel-$v.log" \
			scripts/stock-kernel.sh "$v"
		rc=$?
		if [ $rc = 77 ]; then
			result skip "host/build-$v" "SKIP $(tail -n1 "$LOGS/stock-kernel-$v.log")"
			echo skip >"$LOGS/k$v-ok"
		elif [ $rc != 0 ]; then
			result fail "host/build-$v" "no $v kernel (stock-kernel.sh $v)"
		else
			built "host/build-$v" "$LOGS/build-$v.log" make module KERNEL="$v" \
				SPARSE=1 && echo 1 >"$LOGS/k$v-ok"
		fi
		: >"$LOGS/k$v-built"
	done
}

# The userland roots (made once, cached) and the provider built in each for
# its rdma-core: a root whose rdma-core is not its pin skips its stages.
build_roots() {
	local r rc
	for r in $ROOTS; do
		[ "${NEED_R[$r]}" = 1 ] || continue
		stage "root-$r" "$LOGS/root-$r.log" scripts/distro-root.sh "$r"
		rc=$?
		if [ $rc = 77 ]; then
			result skip "host/provider-$r" "SKIP $(tail -n1 "$LOGS/root-$r.log")"
			echo skip >"$LOGS/r$r-ok"
		elif [ $rc != 0 ]; then
			result fail "host/provider-$r" "no $r root (distro-root.sh $r)"
		else
			built "host/provider-$r" "$LOGS/provider-$r.log" \
				scripts/root-provider.sh "$r" && echo 1 >"$LOGS/r$r-ok"
		fi
		: >"$LOGS/r$r-built"
	done
}

background() {
	local dbg=
	# The debug kernel, the longest build (about 20 minutes on a cold
	# machine), from the start, beside the other kernels, the roots
	# (downloads and dpkg, mostly) and the static checks, which are done
	# before the debug kernel's boots start (debug-built, which
	# debug_build leaves).
	if [ $NEED_DEBUG = 1 ]; then
		debug_build &
		dbg=$!
	else
		: >"$LOGS/debug-built"
	fi
	build_others
	build_roots
	static_checks
	[ -z "$dbg" ] || wait $dbg
	# sparse in the debug module's tree: no file compiled again.
	if [ -e "$LOGS/debug-ok" ] && t_selected host/sparse-debug; then
		built host/sparse-debug "$LOGS/sparse-debug.log" make sparse-debug
	fi
}

# debug_boots: the debug kernel's guests, KUnit and every guest script
# (those marked stock-only aside) in two boots at once, DEBUG_A and the
# rest (a debug guest keeps about one CPU busy: KASAN, lockdep and
# kmemleak under TCG are slow and mostly serial), each recording into
# debug-a.rec or debug-b.rec.
debug_boots() {
	local dbg=${RUN[debug]} da= db= g half list pids=
	[ $KUNIT = 1 ] && dbg="kunit $dbg"
	[ -n "$(echo $dbg)" ] || return 0
	if [ $DEBUG_OK = 0 ]; then
		result fail "debug" "no debug kernel or module: KUnit and the debug guest runs did not run"
		return
	fi
	for g in $dbg; do
		case " $DEBUG_A " in
		*" $g "*) da="$da $g" ;;
		*) db="$db $g" ;;
		esac
	done
	for half in a b; do
		list=$da
		[ $half = b ] && list=$db
		[ -n "$list" ] || continue
		REC=$LOGS/debug-$half.rec boot debug debug-$half $list \
			>"$LOGS/debug-$half.out" 2>&1 &
		pids="$pids $!"
	done
	# These two only: the background job is waited for below.
	wait $pids
}

# ---- 3. the stock kernel's boot and the pair of stock guests, with the
# matrix's boots one after another beside them (4.), then the debug
# kernel's two boots, once its module is built.
for f in background matrix debug-a debug-b; do
	: >"$LOGS/$f.rec"
done
for v in $OTHERS $ROOTS; do
	rm -f "$LOGS/k$v-built" "$LOGS/k$v-ok" "$LOGS/r$v-built" "$LOGS/r$v-ok"
done
(
	renice -n 19 $BASHPID >/dev/null
	REC=$LOGS/background.rec background
) >"$LOGS/background.out" 2>&1 &
BGPID=$!
# ready KIND: KIND's kernel module and root are built: "1", "skip" (a pin
# the registry no longer has) or "" (a build failed).
ready() {
	local v=${SERIES_OF[$1]} r=${ROOT_OF[$1]} ok=1
	if [ "$v" != 6.12 ]; then
		while [ ! -e "$LOGS/k$v-built" ] && kill -0 $BGPID 2>/dev/null; do
			sleep 2
		done
		ok=$(cat "$LOGS/k$v-ok" 2>/dev/null)
	fi
	if [ -n "$r" ] && [ "$ok" = 1 ]; then
		while [ ! -e "$LOGS/r$r-built" ] && kill -0 $BGPID 2>/dev/null; do
			sleep 2
		done
		ok=$(cat "$LOGS/r$r-ok" 2>/dev/null)
	fi
	echo "$ok"
}
# sid's packages and DKMS's module for 7.2, built inside the sid root
# (tests/host/pkg-root.sh, about 70 s warm, also dpkg -i against kernels
# outside the supported range) once the background has the 7.2 module and
# the sid root, in the background at nice 19 beside the stock boot,
# recorded for replay: the sid boot's pkg.sh installs what this builds.
PKGSIDPID=
if t_selected host/pkg-sid || t_selected sid/pkg/deb; then
	: >"$LOGS/pkg-sid.rec"
	(
		renice -n 19 $BASHPID >/dev/null
		REC=$LOGS/pkg-sid.rec
		case $(ready sid) in
		1)
			if stage host/pkg-sid "$LOGS/pkg-sid.log" tests/host/pkg-root.sh sid; then
				result pass host/pkg-sid
			else
				result fail host/pkg-sid "exit status"
			fi
			;;
		skip) result skip host/pkg-sid "SKIP a pin of sid is not in the registry (scripts/pins)" ;;
		*) result fail host/pkg-sid "the 7.2 module or the sid root did not build" ;;
		esac
	) >"$LOGS/pkg-sid.out" 2>&1 &
	PKGSIDPID=$!
fi
# pkg.sh boots alone, after the packages it installs were built beside
# the boots before it (host/pkg), and make demo's guest script (demo.sh:
# what a new user runs first) with it.
STOCK_RUN=" ${RUN[stock]} "
PKG_RUN=
for g in pkg demo; do
	case $STOCK_RUN in
	*" $g "*) PKG_RUN="$PKG_RUN $g" STOCK_RUN=${STOCK_RUN/ $g / } ;;
	esac
done
# ---- 4. the matrix: each boot once its kernel's module and its
# userland are built (ready), and for pkg/deb the packages it installs;
# at nice 10 beside the stock kernel's guests, which then keep most of
# the CPU they ask for, and ahead of the niced builds; recorded for
# replay.  Two stock kernels' guests fit on this machine's two CPUs: a
# stock guest keeps less than one busy.
matrix() {
	local k p t
	for k in $EXTRA; do
		[ -n "${RUN_K[$k]}" ] || continue
		case " ${RUN_K[$k]} " in
		*" pkg "*)
			p=$PKGPID
			[ "$k" = sid ] && p=$PKGSIDPID
			while [ -n "$p" ] && kill -0 "$p" 2>/dev/null; do
				sleep 2
			done
			;;
		esac
		case $(ready "$k") in
		1) VHCA_T=${T_K[$k]} boot "$k" "$k" ${RUN_K[$k]} ;;
		skip)
			for t in ${T_K[$k]}; do
				result skip "$t" "SKIP a pin of $k is not in the registry (scripts/pins)"
			done
			;;
		*) result fail "$k" "its kernel module or userland did not build: its set did not run" ;;
		esac
	done
}
MATRIXPID=
for k in $EXTRA; do
	[ -n "${RUN_K[$k]}" ] || continue
	(
		renice -n 10 $BASHPID >/dev/null
		REC=$LOGS/matrix.rec matrix
	) >"$LOGS/matrix.out" 2>&1 &
	MATRIXPID=$!
	break
done
if [ -n "$(echo $STOCK_RUN)" ]; then
	boot stock stock $STOCK_RUN
fi
if [ -n "${RUN[pair]}" ]; then
	pair ${RUN[pair]}
fi
if [ -n "$PKG_RUN" ]; then
	[ -z "$PKGPID" ] || wait $PKGPID
	boot stock stock-pkg $PKG_RUN
fi
[ -z "$MATRIXPID" ] || wait $MATRIXPID
while [ ! -e "$LOGS/debug-built" ] && kill -0 $BGPID 2>/dev/null; do
	sleep 2
done
[ -e "$LOGS/debug-ok" ] && DEBUG_OK=1
[ $NEED_DEBUG = 1 ] && debug_boots
wait $BGPID
cat "$LOGS/background.out"
replay "$LOGS/background.rec"
[ -s "$LOGS/matrix.out" ] && cat "$LOGS/matrix.out"
replay "$LOGS/matrix.rec"
if [ -n "$PKGPID" ]; then
	wait $PKGPID 2>/dev/null
	cat "$LOGS/pkg.out"
	replay "$LOGS/pkg.rec"
fi
if [ -n "$PKGSIDPID" ]; then
	wait $PKGSIDPID 2>/dev/null
	cat "$LOGS/pkg-sid.out"
	replay "$LOGS/pkg-sid.rec"
fi
for f in debug-a debug-b; do
	[ -s "$LOGS/$f.out" ] && cat "$LOGS/$f.out"
	replay "$LOGS/$f.rec"
done
summary
