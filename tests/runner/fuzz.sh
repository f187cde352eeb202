#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make fuzz: the fuzzers' scenarios (those of tests/guest/fuzz.sh and
# inject.sh) on the debug kernel, each fuzzing SECS seconds, dealt out
# over BOOTS debug guests that run at once (a debug guest keeps about one
# CPU busy; the fuzzers are bounded in time, so a guest that shares the
# host's cores fuzzes fewer steps in the same seconds, never longer).
#
# usage: fuzz.sh SECS BOOTS [SEED] [PATTERNS]
#   SEED      every scenario's seed (default: a random one each, printed)
#   PATTERNS  the scenarios to run (make check's T= globs: inject/packets)
# Results in build/vm/fuzz-N; the exit status is 0 when every boot's is.
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"
. "$VHCA_TOP/tests/runner/select.sh"

secs=${1:?SECS}
boots=${2:?BOOTS}
seed=${3:-}
VHCA_T=${4:-}

# The debug kernel's scenarios of the fuzzers' scripts, as debug/SCRIPT/NAME.
all=()
for g in fuzz inject; do
	while read -r name; do
		t_selected "debug/$g/$name" && all+=("debug/$g/$name")
	done < <(sed -n 's/^scenario \([a-z-]*\) .* debug$/\1/p' "tests/guest/$g.sh")
done
[ ${#all[@]} -gt 0 ] || die "fuzz: no scenario selected by '$VHCA_T'"
[ "$boots" -le ${#all[@]} ] || boots=${#all[@]}

# A guest whose CPU a kernel loop keeps (the debug kernel brings up one
# of its two vCPUs: it has no ACPI, and SeaBIOS's MP table lists one CPU
# per package, which QEMU's -smp 2 makes one package of two cores), where
# no userspace watchdog runs, must not sit silent until the VM's limit:
# an RCU stall (a CPU or the grace-period kthread without a quiescent
# state for 65 s: 60 and PROVE_RCU's 5; the default 26 s is within what
# an overloaded host's TCG guest may lose) panics.  The panic prints the
# stack the stall interrupted, every task's stack (0x1), the locks held
# (0x8), the other CPUs' backtraces (0x40) and the whole kernel log again
# (0x20) at full verbosity: loglevel=4 keeps stack dumps, lockdep and
# WARN splats off the console until then, and log_buf_len keeps the log
# whole.  panic=-1 then ends the VM.  A CPU spinning with interrupts off
# stops the RCU stall check with everything else: a boot whose console
# has been silent longer than any scenario's limit (whose watchdog would
# have spoken) gets an NMI from its QEMU monitor (fuzz_watch), which
# unknown_nmi_panic turns into the same panic, with the stack the NMI
# interrupted.
hang_args="sysctl.kernel.panic_on_rcu_stall=1 rcupdate.rcu_cpu_stall_timeout=60 unknown_nmi_panic panic_print=0x69 log_buf_len=8M"

# fuzz_watch OUT QUIET PID: while PID (the boot's vm-run.sh) runs, an NMI
# to the guest whose results are in OUT once its console has been silent
# for QUIET s.
fuzz_watch() {
	local out=$1 quiet=$2 pid=$3 age
	while kill -0 "$pid" 2>/dev/null; do
		sleep 30
		[ -s "$out/console.log" ] || continue
		age=$(($(date +%s) - $(stat -c %Y "$out/console.log")))
		[ "$age" -ge "$quiet" ] || continue
		log "fuzz: ${out##*/}: console silent for $age s, an NMI"
		# A FIFO that QEMU no longer holds would block the open.
		timeout 10 sh -c 'echo nmi >"$1"' - "$out/monitor.in" || true
		return 0
	done
}

# Round robin: boot i runs the scenarios i, i + BOOTS, ...
pids=() outs=() dogs=()
for ((b = 0; b < boots; b++)); do
	sel= scripts=
	for ((i = b; i < ${#all[@]}; i += boots)); do
		sel="$sel ${all[i]}"
		g=${all[i]#debug/}
		g=${g%%/*}
		case " $scripts " in *" $g "*) ;; *) scripts="$scripts $g" ;; esac
	done
	out=$VHCA_TOP/build/vm/fuzz-$b
	rm -rf "$out"
	mkdir -p "$out"
	outs+=("$out")
	log "fuzz: boot $b:$sel (results in $out)"
	# The VM's limit: the boot, and per scenario SECS and its setup,
	# tripled on the debug kernel (lib.sh's tmo).
	n=$(echo $sel | wc -w)
	FUZZ_SECS=$secs FUZZ_SEED=${seed:-${FUZZ_SEED:-}} VHCA_APPEND=$hang_args \
		VHCA_MONITOR=$out/monitor tests/runner/vm-run.sh -k debug \
		-t $((600 + 3 * n * (secs + 120))) -T "${sel# }" -o "$out" \
		tests/guest/suite.sh $scripts >"$out/vm-run.log" 2>&1 &
	pids+=($!)
	fuzz_watch "$out" $((3 * (secs + 120) + 300)) $! &
	dogs+=($!)
done

bad=0
for ((b = 0; b < boots; b++)); do
	rc=0
	wait "${pids[b]}" || rc=$?
	out=${outs[b]}
	echo "# boot $b: exit $rc (${out#"$VHCA_TOP"/})"
	# The seeds, the verdicts and the kernel checkers' findings.
	tr -d '\r' <"$out/console.log" |
		grep -E '^ *(#.*seed=|(not )?ok |# replay)' || true
	[ $rc = 0 ] || {
		tail -n 40 "$out/vm-run.log"
		bad=$((bad + 1))
	}
done
kill "${dogs[@]}" 2>/dev/null || true
[ $bad = 0 ] || die "fuzz: $bad of $boots boots failed"
echo "fuzz: ${#all[@]} scenarios, $secs s each, in $boots boots: clean"
