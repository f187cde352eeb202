#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make check: every test of vhca, in pyramid order.  Installs what it needs
# (make deps), builds the stock and debug kernels' modules, runs the static
# checks, the KUnit suites in the debug kernel, and the guest integration
# scripts on the stock and the debug kernel.  Every check prints PASS/FAIL;
# the last line is "N passed, N failed, N skipped".  Logs: build/check/.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

LOGS=$VHCA_TOP/build/check
rm -rf "$LOGS"
mkdir -p "$LOGS"
NPASS=0
NFAIL=0
NSKIP=0
T0=$(date +%s)

pass() {
	echo "PASS: $*"
	NPASS=$((NPASS + 1))
}

fail() {
	echo "FAIL: $*"
	NFAIL=$((NFAIL + 1))
}

summary() {
	log "make check took $(($(date +%s) - T0)) s; logs in $LOGS"
	echo "$NPASS passed, $NFAIL failed, $NSKIP skipped"
	[ $NFAIL = 0 ]
	exit
}

# run NAME LOGFILE COMMAND...: run, keep the output, show its tail on error.
run() {
	local name=$1 logf=$2 t=$(date +%s)
	shift 2
	if "$@" >"$logf" 2>&1; then
		log "$name: done in $(($(date +%s) - t)) s"
		return 0
	fi
	log "$name: failed after $(($(date +%s) - t)) s; end of $logf:"
	tail -25 "$logf" >&2
	return 1
}

# no_warnings NAME LOGFILE: the build log has no compiler/sparse diagnostics.
no_warnings() {
	if grep -Eq 'warning:|error:' "$2"; then
		grep -E 'warning:|error:' "$2" | head -20 >&2
		fail "$1"
	else
		pass "$1"
	fi
}

cd "$VHCA_TOP"
if ! run "make deps" "$LOGS/deps.log" make -s deps; then
	fail "make deps"
	summary
fi

# ---- 1. host: builds and static checks
rm -rf build/stock build/sparse build/debug build/sparse-debug
if run "stock module build" "$LOGS/module-stock.log" make module; then
	no_warnings "vhca.ko builds against the stock kernel headers with W=1, no warnings" "$LOGS/module-stock.log"
else
	fail "vhca.ko builds against the stock kernel headers"
fi
if run "sparse" "$LOGS/sparse.log" make sparse; then
	no_warnings "sparse (C=2) reports nothing" "$LOGS/sparse.log"
else
	fail "sparse build"
fi
if run "checkpatch" "$LOGS/checkpatch.log" scripts/checkpatch.sh &&
	! grep '^total:' "$LOGS/checkpatch.log" | grep -vq 'total: 0 errors, 0 warnings, 0 checks'; then
	pass "checkpatch.pl --strict is clean"
else
	grep -E '^(ERROR|WARNING|CHECK)' "$LOGS/checkpatch.log" | head -20 >&2
	fail "checkpatch.pl --strict is clean"
fi

# The provider and the test programs: -Wall -Wextra, no warnings.
rm -rf build/provider build/tests
if run "provider and test programs" "$LOGS/userspace.log" make provider tests; then
	no_warnings "provider and test programs build with -Wall -Wextra, no warnings" "$LOGS/userspace.log"
else
	fail "provider and test programs build"
fi
# Host tests of the provider: one PASS/FAIL line per check.
run "provider host tests" "$LOGS/provider-check.log" make -s provider-check
prc=$?
while IFS= read -r line; do
	case "$line" in
	PASS:*) pass "provider: ${line#PASS: }" ;;
	FAIL:*) fail "provider: ${line#FAIL: }" ;;
	SKIP:*)
		echo "SKIP: provider: ${line#SKIP: }"
		NSKIP=$((NSKIP + 1))
		;;
	esac
done <"$LOGS/provider-check.log"
[ $prc = 0 ] || fail "provider host tests exit $prc"

# ---- 2. the debug test kernel and KUnit
if run "debug test kernel" "$LOGS/test-kernel.log" scripts/test-kernel.sh; then
	pass "debug test kernel (KUnit, KASAN, lockdep, kmemleak, UBSAN) is built"
	DEBUG_OK=1
else
	fail "debug test kernel (KUnit, KASAN, lockdep, kmemleak, UBSAN) is built"
	DEBUG_OK=0
fi
if [ $DEBUG_OK = 1 ] && run "debug module build" "$LOGS/module-debug.log" make module-debug; then
	no_warnings "vhca.ko and vhca_kunit.ko build against the debug kernel with W=1, no warnings" "$LOGS/module-debug.log"
else
	fail "vhca.ko and vhca_kunit.ko build against the debug kernel"
	DEBUG_OK=0
fi
if [ $DEBUG_OK = 1 ] && run "sparse (debug)" "$LOGS/sparse-debug.log" make sparse-debug; then
	no_warnings "sparse (C=2) on the driver and the KUnit suites reports nothing" "$LOGS/sparse-debug.log"
else
	fail "sparse on the driver and the KUnit suites"
fi

# guest KIND SCRIPT: run a guest script; count its checks and the VM's own
# verdict (exit status, kernel checkers).
guest() {
	local kind=$1 script=$2 name out rc tmo=1200
	name=$(basename "$script" .sh)
	# interop.sh took 20 minutes on the debug kernel on a loaded machine.
	[ "$name" = interop ] && tmo=2400
	out=$VHCA_TOP/build/vm/$name-$kind
	rm -rf "$out"
	run "VM $kind $name" "$LOGS/vm-$name-$kind.log" \
		scripts/vm-run.sh -k "$kind" -t $tmo -o "$out" "$script"
	rc=$?
	while IFS= read -r line; do
		case "$line" in
		PASS:*) pass "[$kind] $name: ${line#PASS: }" ;;
		FAIL:*) fail "[$kind] $name: ${line#FAIL: }" ;;
		esac
	done < <(tr -d '\r' <"$out/console.log" 2>/dev/null | grep -E '^(PASS|FAIL): ')
	if [ $rc = 0 ]; then
		pass "[$kind] $name: VM ran to the end, no kernel checker report"
	else
		fail "[$kind] $name: VM exit $rc (see $out/console.log)"
	fi
	return $rc
}

KUNIT_PY=$("$VHCA_TOP/scripts/test-kernel.sh" --print-dir)/linux/tools/testing/kunit/kunit.py
if [ $DEBUG_OK = 1 ]; then
	guest debug scripts/guest/kunit.sh
	klog=$VHCA_TOP/build/vm/kunit-debug/kunit.log
	if [ -s "$klog" ]; then
		/usr/bin/python3 "$KUNIT_PY" parse "$klog" >"$LOGS/kunit-parse.log" 2>&1
		krc=$?
		cat "$LOGS/kunit-parse.log"
		# One PASS/FAIL per KUnit case, from kunit.py's parse.
		while IFS= read -r line; do
			case "$line" in
			*"[PASSED] "*) pass "kunit: ${line##*\[PASSED\] }" ;;
			*"[FAILED] "* | *"[CRASHED] "*) fail "kunit: ${line##*\] }" ;;
			*"[SKIPPED] "*)
				echo "SKIP: kunit: ${line##*\[SKIPPED\] }"
				NSKIP=$((NSKIP + 1))
				;;
			esac
		done < <(grep -E '\[(PASSED|FAILED|CRASHED|SKIPPED)\] [a-z0-9_]+$' "$LOGS/kunit-parse.log" |
			grep -v '\] =')
		if [ $krc = 0 ]; then
			pass "kunit.py parse: all suites passed"
		else
			fail "kunit.py parse: suites failed (exit $krc)"
		fi
	else
		fail "KUnit produced no output"
	fi
else
	fail "KUnit suites (no debug kernel)"
fi

# ---- 3. integration in the VM: stock kernel, then the debug kernel
GUESTS="scripts/guest/link.sh scripts/guest/device.sh scripts/guest/objects.sh scripts/guest/net.sh
	scripts/guest/rc.sh scripts/guest/rdma.sh scripts/guest/doorbell.sh scripts/guest/local.sh
	scripts/guest/cm.sh scripts/guest/interop.sh"
for g in $GUESTS; do
	guest stock "$g"
done
for g in $GUESTS; do
	if [ $DEBUG_OK = 1 ]; then
		guest debug "$g"
	else
		fail "[debug] $(basename "$g" .sh): no debug kernel"
	fi
done

summary
