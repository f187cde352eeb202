#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Boot a kernel in QEMU with the host root shared read-only over 9p (tmpfs
# overlay on top), the kernel's modules tree and a writable results folder;
# run one guest script as root; return its exit status.
#
# usage: vm-run.sh [-k stock|stock-6.1|stock-7.2|trixie|sid|debug]
#                  [-t SECONDS] [-o OUTDIR] [-T PATTERNS] [-v] [-2]
#                  SCRIPT [ARG...]
#   -k  kernel: Debian's stock 6.12 kernel (default), Debian 12's default
#       kernel (6.1), Debian sid's (7.2), or the debug test kernel; trixie
#       and sid: 6.12 and 7.2 with the trixie or the sid root
#       (scripts/distro-root.sh) as the root filesystem instead of the
#       host's, the repository shared at its own path (read-only) and the
#       provider built for that root's rdma-core (scripts/root-provider.sh)
#   -t  wall-clock limit for the whole VM (default 900)
#   -T  run only the scenarios these globs select (VHCA_T, tests/runner/select.sh),
#       e.g. -T 'rc/lossy cm'; tests/guest/suite.sh runs several scripts
#       in one boot: vm-run.sh -T 'rc/lossy' tests/guest/suite.sh rc
#   -o  results folder (default: a new one under build/vm/); the guest sees
#       it as /mnt/out; console.log, dmesg.txt (and kmemleak.txt) land there
#   -v  also copy the console to standard output
#   -2  a pair of guests, two hosts on one wire (below)
# Exit status: the guest script's, or 124 on timeout, 125 when the guest
# died before reporting (panic, hang in init), 126 when the kernel log has a
# KASAN, UBSAN, lockdep, kmemleak, WARN, BUG or DMA-API report.
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"

KIND=stock
TMO=900
OUT=
VERBOSE=0
PAIR=0
SEL=${VHCA_T:-}
while getopts "k:t:o:T:v2" opt; do
	case $opt in
	k) KIND=$OPTARG ;;
	t) TMO=$OPTARG ;;
	o) OUT=$OPTARG ;;
	T) SEL=$OPTARG ;;
	2) PAIR=1 ;;
	v) VERBOSE=1 ;;
	*) die "usage: vm-run.sh [-k stock|stock-6.1|stock-7.2|trixie|sid|debug] [-t SECONDS] [-o OUTDIR] [-T PATTERNS] [-v] [-2] SCRIPT [ARG...]" ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || die "vm-run.sh: no guest script given"
SCRIPT=$(readlink -f "$1")
shift
[ -r "$SCRIPT" ] || die "guest script $SCRIPT not found"

# The root filesystem (the host's, or a distro root), the module's build
# and the provider the guest loads.
GROOT=/
MODKIND=$KIND
PROVIDER=$VHCA_TOP/build/provider/libvhca
case $KIND in
trixie | sid)
	GROOT=$("$VHCA_TOP/scripts/distro-root.sh" "$KIND") || [ $? = 77 ] ||
		die "no $KIND root"
	PROVIDER=$VHCA_TOP/build/provider-$KIND/libvhca
	[ -e "$VHCA_TOP/build/provider-$KIND" ] ||
		die "no provider for the $KIND root: scripts/root-provider.sh $KIND"
	MODKIND=stock
	[ "$KIND" = sid ] && MODKIND=stock-7.2
	;;
esac

case $MODKIND in
stock | stock-6.1 | stock-7.2)
	KD=$("$VHCA_TOP/scripts/stock-kernel.sh" "$(echo "${MODKIND#stock}" | tr -d -)")
	KVER=$(cat "$KD/kernel.release")
	KIMG=$KD/root/boot/vmlinuz-$KVER
	KMODS=$KD/root/lib/modules
	APPEND="quiet loglevel=4"
	;;
debug)
	KD=$("$VHCA_TOP/scripts/test-kernel.sh")
	KVER=$(cat "$KD/kernel.release")
	KIMG=$KD/linux/arch/x86/boot/bzImage
	KMODS=$KD/modroot/lib/modules
	APPEND="loglevel=4 kasan_multi_shot"
	;;
*) die "unknown kernel kind '$KIND' (stock, stock-6.1, stock-7.2, trixie, sid or debug)" ;;
esac
# VHCA_APPEND: more kernel parameters for this boot (make fuzz's, which
# make a hang panic with its evidence: tests/runner/fuzz.sh).
APPEND="$APPEND${VHCA_APPEND:+ $VHCA_APPEND}"
# VHCA_MONITOR: a path; a single guest's QEMU monitor is then on the FIFOs
# PATH.in and PATH.out (make fuzz's: `echo nmi >PATH.in` stops a silent
# guest, whose kernel's unknown_nmi_panic then dumps what ran).  Nothing
# need read PATH.out: QEMU holds both open read-write.
MONITOR=()
if [ -n "${VHCA_MONITOR:-}" ] && [ $PAIR = 0 ]; then
	rm -f "$VHCA_MONITOR.in" "$VHCA_MONITOR.out"
	mkfifo "$VHCA_MONITOR.in" "$VHCA_MONITOR.out"
	MONITOR=(-monitor "pipe:$VHCA_MONITOR")
fi
# A distro root holds no repository: it comes as a share of its own, which
# init mounts at the same path (vhca_top=).
TOPFS=()
if [ "$GROOT" != / ]; then
	TOPFS=(-virtfs "local,path=$VHCA_TOP,mount_tag=top,security_model=none,readonly=on,multidevs=remap")
	APPEND="$APPEND vhca_top=$VHCA_TOP"
fi
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing: run 'make deps'"
[ -x /bin/busybox ] || die "/bin/busybox missing: run 'make deps' (busybox-static)"

# mod_closure NAME...: the files (modules.dep's paths) of the named modules
# of the stock kernel and of every module they need, dependencies first.
mod_closure() {
	awk -v want="$*" '
		{ sub(/:$/, "", $1); f = $1; n = f; sub(/.*\//, "", n)
		  sub(/\.ko(\.[a-z]+)?$/, "", n); file[n] = f; deps[n] = ""
		  for (i = 2; i <= NF; i++) { d = $i; sub(/.*\//, "", d)
			sub(/\.ko(\.[a-z]+)?$/, "", d); deps[n] = deps[n] " " d } }
		function visit(n,   k, a, i) {
			if (n in seen || !(n in file)) return
			seen[n] = 1; k = split(deps[n], a, " ")
			for (i = 1; i <= k; i++) visit(a[i])
			print file[n]
		}
		END { k = split(want, w, " "); for (i = 1; i <= k; i++) visit(w[i]) }
	' "$KMODS/$KVER/modules.dep"
}

# The initramfs: busybox, init and (stock kernels) the modules needed to
# reach the host root, those of them not built in (6.12 builds virtio in,
# 6.1 has it as modules).  Rebuilt when init, busybox or ROOT_MODS change.
INITRD=$KD/initramfs.cpio.gz
ROOT_MODS="virtio_pci 9pnet_virtio 9p overlay"
stamp=$( (cat "$VHCA_TOP/tests/runner/vm/init" /bin/busybox; echo "$ROOT_MODS") |
	sha256sum | cut -c1-16)
if [ "$(cat "$KD/initramfs.stamp" 2>/dev/null)" != "$stamp" ]; then
	ird=$(mktemp -d)
	mkdir -p "$ird"/{bin,proc,sys,dev,mods}
	cp /bin/busybox "$ird/bin/busybox"
	for a in $(/bin/busybox --list); do
		[ "$a" = busybox ] || ln -s busybox "$ird/bin/$a"
	done
	if [ "$KIND" != debug ]; then
		for f in $(mod_closure $ROOT_MODS); do
			m=$(basename "$f")
			m=${m%%.ko*}
			case "$f" in
			*.xz) xz -dc "$KMODS/$KVER/$f" >"$ird/mods/$m.ko" ;;
			*) cp "$KMODS/$KVER/$f" "$ird/mods/$m.ko" ;;
			esac
			echo "$m" >>"$ird/mods/order"
		done
	fi
	install -m 755 "$VHCA_TOP/tests/runner/vm/init" "$ird/init"
	(cd "$ird" && find . | cpio -o -H newc --quiet) | gzip -1 >"$INITRD.$$"
	mv "$INITRD.$$" "$INITRD"
	echo "$stamp" >"$KD/initramfs.stamp"
	rm -rf "$ird"
fi

if [ -z "$OUT" ]; then
	mkdir -p "$VHCA_TOP/build/vm"
	OUT=$(mktemp -d "$VHCA_TOP/build/vm/$(basename "$SCRIPT" .sh)-$KIND-XXXX")
fi
mkdir -p "$OUT"
OUT=$(readlink -f "$OUT")

# prepare DIR ROLE ARG...: a guest's results folder, with the stage2.sh
# and run.sh it runs.
prepare() {
	local dir=$1 role=$2 a
	shift 2
	mkdir -p "$dir"
	rm -f "$dir"/{console.log,dmesg.txt,kmemleak.txt,run.sh,stage2.sh}
	cp "$VHCA_TOP/tests/runner/vm/stage2.sh" "$dir/stage2.sh"
	{
		echo "#!/bin/sh"
		echo "export VHCA_TOP='$VHCA_TOP' VHCA_KERNEL='$KIND' VHCA_KVER='$KVER'"
		echo "export VHCA_BUILD='$VHCA_TOP/build/$MODKIND' VHCA_OUT=/mnt/out"
		echo "export VHCA_PROVIDER='$PROVIDER'"
		printf 'export VHCA_T=%q VHCA_ROLE=%q\n' "$SEL" "$role"
		# The fuzzers' time and seed (tests/guest/fuzz.sh), when set.
		[ -z "${FUZZ_SECS:-}" ] || printf 'export FUZZ_SECS=%q\n' "$FUZZ_SECS"
		[ -z "${FUZZ_SEED:-}" ] || printf 'export FUZZ_SEED=%q\n' "$FUZZ_SEED"
		echo "cd '$VHCA_TOP'"
		printf 'exec /bin/sh %q' "$SCRIPT"
		for a in "$@"; do printf ' %q' "$a"; done
		echo
	} >"$dir/run.sh"
}

# KVM when /dev/kvm is there and works: some hosts (nested virtualization)
# offer a /dev/kvm that cannot run a kernel.  Probed once per machine by
# booting the stock kernel without a root (it must reach the VFS panic);
# VHCA_ACCEL=tcg or kvm overrides.
kvm_works() {
	local probe=$VHCA_CACHE/kvm-probe-$(qemu-system-x86_64 --version | head -1 | tr -dc '0-9.')
	if [ ! -e "$probe" ]; then
		if timeout 60 qemu-system-x86_64 -accel kvm -cpu host -machine pc -m 256 \
			-nographic -no-reboot -nic none -kernel "$KIMG" \
			-append "console=ttyS0 panic=-1" </dev/null 2>&1 |
			grep -q 'VFS: Unable to mount root'; then
			echo yes >"$probe"
		else
			echo no >"$probe"
		fi
	fi
	[ "$(cat "$probe")" = yes ]
}
ACCEL_KIND=${VHCA_ACCEL:-auto}
if [ "$ACCEL_KIND" = auto ]; then
	ACCEL_KIND=tcg
	if [ -w /dev/kvm ] && kvm_works; then
		ACCEL_KIND=kvm
	fi
fi
if [ "$ACCEL_KIND" = kvm ]; then
	ACCEL=(-accel kvm -cpu host)
else
	ACCEL=(-accel tcg -cpu max)
	# Processes' address spaces not randomized (norandmaps): this QEMU's
	# TCG finds code it translated by virtual address as well as
	# physical, so a library mapped at another address in every process
	# is translated again for every process, and a fork and exec costs
	# twice as much.  The kernel's own addresses stay randomized; the
	# checks that one process cannot reach another's memory fork their
	# victims (one layout with or without) or attack over the network.
	APPEND="$APPEND norandmaps"
fi

# TCG trips over the kernel's live code patching now and then: another vCPU
# executes the int3 that text_poke_bp() planted after the patch is done, and
# the kernel dies of an "Oops: int3" (seen in sched_clock_cpu()).  The
# patching that happens while tests run comes from the clocksource watchdog:
# under TCG it finds the TSC skewed against a watchdog that lags behind (the
# guest's timers fire late), marks the TSC unstable 10 to 40 s into the run
# and so flips the __sched_clock_stable static key.  TCG's TSC follows the
# host's clock on every vCPU, so tsc=reliable is true here and keeps the
# watchdog off it.  The static key is still set once at boot (a late
# initcall): a boot that dies before the guest script starts is not a test
# result and is retried, twice at most.
#
# guest DIR SMP MEMORY NET...: boot one guest on the results folder DIR
# with the QEMU network options NET (-nic none for none); its status.
guest() {
	local dir=$1 smp=$2 mem=$3 attempt qrc rc logf pat
	shift 3
	for attempt in 1 2 3; do
		set +e
		timeout --foreground -k 10 "$TMO" qemu-system-x86_64 \
			"${ACCEL[@]}" -machine pc -smp "$smp" -m "$mem" \
			-nographic -no-reboot "$@" \
			-kernel "$KIMG" -initrd "$INITRD" \
			-append "console=ttyS0 panic=-1 mitigations=off tsc=reliable $APPEND" \
			-virtfs local,path="$GROOT",mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
			"${TOPFS[@]}" \
			-virtfs local,path="$KMODS",mount_tag=kmods,security_model=none,readonly=on \
			-virtfs local,path="$dir",mount_tag=outdir,security_model=none \
			-device virtio-rng-pci "${MONITOR[@]}" </dev/null 2>&1 |
			if [ $VERBOSE = 1 ]; then tee "$dir/console.log"; else cat >"$dir/console.log"; fi
		qrc=${PIPESTATUS[0]}
		set -e
		grep -q 'VHCA-VM: guest script start' "$dir/console.log" && break
		[ $attempt = 3 ] && break
		cp "$dir/console.log" "$dir/console-boot-failure-$attempt.log"
		log "VM: the kernel died during boot (attempt $attempt); booting again"
	done

	rc=$(sed -n 's/^VHCA-VM: EXIT=\([0-9]*\).*/\1/p' "$dir/console.log" | tail -1)
	if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
		log "VM: timed out after $TMO s (console: $dir/console.log)"
		rc=124
	elif [ -z "$rc" ]; then
		log "VM: the guest died before reporting (console: $dir/console.log):"
		grep -E 'Kernel panic|BUG:|Oops|VHCA-VM:' "$dir/console.log" | head -20 >&2 || true
		rc=125
	fi

	# Any report of the kernel's checkers (or a WARN/BUG anywhere) fails the run.
	LOGF=$dir/dmesg.txt
	[ -s "$LOGF" ] || LOGF=$dir/console.log
	. "$VHCA_TOP/tests/runner/vm/checkers.sh"
	pat=$CHECKERS
	if grep -Eq "$pat" "$LOGF" || [ -s "$dir/kmemleak.txt" ]; then
		log "VM: kernel checkers reported problems:"
		{
			grep -E "$pat" "$LOGF" | head -40
			head -40 "$dir/kmemleak.txt" 2>/dev/null
			# The first report whole (RIP, call trace), so that a CI log
			# that only shows this much still says where it happened.
			log "VM: the first report with what follows it:"
			grep -E -m1 -A40 "$pat" "$LOGF"
		} >&2 || true
		[ "$rc" != 0 ] || rc=126
	fi
	return "$rc"
}

# A pair of guests (-2): two kernels joined by a QEMU datagram backend on
# the host's loopback, each with one vCPU (two guests must not put four
# vCPUs on two cores) and an eth0; the guest script runs in both, with
# VHCA_ROLE a and b.  Results in OUT/a and OUT/b; the status is the first
# that is not 0.  UDP needs no start order: each guest sends to the
# other's port whether or not it is up yet.
if [ $PAIR = 1 ]; then
	log "VM: a pair of $KIND kernels $KVER ($ACCEL_KIND), $(basename "$SCRIPT"), results in $OUT/a and $OUT/b"
	prepare "$OUT/a" a "$@"
	prepare "$OUT/b" b "$@"
	port=$((20000 + RANDOM % 20000))
	dgram() {
		echo "dgram,id=wire,local.type=inet,local.host=127.0.0.1,local.port=$1,remote.type=inet,remote.host=127.0.0.1,remote.port=$2"
	}
	guest "$OUT/a" 1 1536M -netdev "$(dgram $port $((port + 1)))" \
		-device virtio-net-pci,netdev=wire,mac=52:54:00:00:00:0a &
	pa=$!
	guest "$OUT/b" 1 1536M -netdev "$(dgram $((port + 1)) $port)" \
		-device virtio-net-pci,netdev=wire,mac=52:54:00:00:00:0b &
	pb=$!
	set +e
	wait $pa
	ra=$?
	wait $pb
	rb=$?
	set -e
	[ $ra != 0 ] && exit $ra
	exit $rb
fi
log "VM: $KIND kernel $KVER ($ACCEL_KIND), $(basename "$SCRIPT"), results in $OUT"
prepare "$OUT" "" "$@"
set +e
guest "$OUT" 2 2G -nic none
exit
