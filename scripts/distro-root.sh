#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Make (once) and cache a Debian userland root for the test matrix, with
# debootstrap from the mirror this machine's apt sources name:
#   trixie: rdma-core 56 and its pyverbs suite
#   sid:    rdma-core 65 and its pyverbs suite, plus the kernel headers of
#           the pinned 7.2 kernel and sparse, for the module's build and
#           static check inside the root (sid's gcc and kbuild do not run
#           on bookworm)
# Both hold the toolchain and Debian packaging tools (make deb), and a
# deb-src line, so `apt-get source rdma-core` works inside them.
# Result: $VHCA_CACHE/root-<suite>/ (prints that folder).  When the root's
# rdma-core is not the version scripts/pins gives, the root is still made,
# but ROOT/.pin-mismatch says what it holds instead, and exit status is 77.
#
# usage: distro-root.sh trixie|sid
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SUITE=${1:-}
case "$SUITE" in
trixie | sid) ;;
*) die "usage: distro-root.sh trixie|sid" ;;
esac
OUT=$VHCA_CACHE/root-$SUITE
RDMA_PIN=$(pin root "$SUITE")

# finish: report the root, and whether its rdma-core is the pinned one.
finish() {
	echo "$OUT"
	if [ -e "$OUT/.pin-mismatch" ]; then
		log "$(cat "$OUT/.pin-mismatch")"
		exit 77
	fi
	exit 0
}

PKGS=(
	# the module build (headers added below) and make deb
	build-essential bc bison flex libelf-dev kmod pkg-config
	debhelper dh-dkms dkms dpkg-dev fakeroot lintian
	# the provider build and the userland under test, with what the
	# guest scripts of its smoke set run (NVMe over RDMA: nvme-cli, fio)
	rdma-core ibverbs-utils ibverbs-providers libibverbs-dev librdmacm-dev
	rdmacm-utils perftest python3-pyverbs iproute2 nvme-cli fio
)
if [ "$SUITE" = sid ]; then
	PKGS+=(sparse "linux-headers-$(pin kernel 7.2)-amd64")
fi

# missing: those of PKGS the root has not installed.
missing() {
	local p
	for p in "${PKGS[@]}"; do
		[ "$(as_root chroot "$OUT" dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null)" = installed ] ||
			echo "$p"
	done
}

# install PACKAGE...: apt-get install into the root, with progress lines.
install() {
	as_root chroot "$OUT" sh -c "apt-get update -q && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends $* && apt-get clean" \
		>>"$OUT.log" 2>&1 &
	progress "apt-get install in the $SUITE root" $! "echo \$(du -smx '$OUT' | cut -f1) MB" ||
		die "installing into the $SUITE root failed; the last lines of $OUT.log:
$(tail -n 5 "$OUT.log")"
	rm -f "$OUT.log"
}

# A root made before PKGS grew gets what it lacks.
if [ -e "$OUT/.done" ] && [ -z "$(missing)" ]; then
	finish
fi
command -v debootstrap >/dev/null || die "debootstrap missing: run 'make deps'"
mkdir -p "$VHCA_CACHE"
exec 9>"$VHCA_CACHE/.root-$SUITE.lock"
flock 9
if [ -e "$OUT/.done" ]; then
	add=$(missing)
	if [ -n "$add" ]; then
		log "adding to the $SUITE root: $(echo $add)"
		install $add
	fi
	finish
fi

MIRROR=$(apt_mirror)
log "making the $SUITE root in $OUT: debootstrap, then ${#PKGS[@]} packages and their dependencies"
as_root rm -rf "$OUT"
mkdir -p "$OUT"
# debootstrap's own resolver knows no virtual packages (perl-openssl-abi-3),
# so it makes the base only and apt installs the rest.
as_root debootstrap --variant=minbase "$SUITE" "$OUT" "$MIRROR" \
	>"$OUT.log" 2>&1 &
progress "debootstrap $SUITE" $! "echo \$(du -smx '$OUT' | cut -f1) MB" ||
	die "debootstrap $SUITE failed; the last lines of $OUT.log:
$(tail -n 5 "$OUT.log")"
printf 'deb %s %s main\ndeb-src %s %s main\n' "$MIRROR" "$SUITE" "$MIRROR" "$SUITE" |
	as_root tee "$OUT/etc/apt/sources.list" >/dev/null
# The root's apt checks release dates as the host's does (a mirror that
# serves a snapshot has expired Valid-Until dates).
apt-config dump | grep -E '^Acquire::Check-(Valid-Until|Date) ' |
	as_root tee "$OUT/etc/apt/apt.conf.d/50vhca-host" >/dev/null
# Nothing the packages carry may start a service.
printf '#!/bin/sh\nexit 101\n' | as_root tee "$OUT/usr/sbin/policy-rc.d" >/dev/null
as_root chmod 755 "$OUT/usr/sbin/policy-rc.d"
install "${PKGS[@]}"

have=$(chroot "$OUT" dpkg-query -W -f='${Version}' rdma-core)
if [ "$have" != "$RDMA_PIN" ]; then
	echo "the $SUITE root holds rdma-core $have, scripts/pins says $RDMA_PIN: 'make matrix-update' moves the pin" |
		as_root tee "$OUT/.pin-mismatch" >/dev/null
fi
as_root touch "$OUT/.done"
log "$SUITE root ready: rdma-core $have, $(du -smx "$OUT" | cut -f1) MB"
finish
