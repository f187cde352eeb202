#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Install every Debian package vhca needs (idempotent; as root or through
# sudo).  The stock kernel packages are not installed: stock-kernel.sh
# downloads and unpacks them into the cache.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PKGS=(
	# toolchain, kernel builds, style and static checks
	build-essential bc bison flex libelf-dev libssl-dev dwarves cpio
	xz-utils gzip kmod perl python3 sparse git pkg-config
	# the debug test kernel's source
	linux-source-6.12
	# the test VM, and the trixie and sid roots (scripts/distro-root.sh)
	qemu-system-x86 busybox-static iproute2 debootstrap
	# RDMA userspace: provider build, tools, tests (infiniband-diags:
	# perfquery, tried against the port's performance management agent)
	rdma-core ibverbs-utils ibverbs-providers libibverbs-dev librdmacm-dev
	rdmacm-utils perftest python3-pyverbs infiniband-diags
	# the kernel's RDMA consumers in the guest (tests/guest/ulp.sh):
	# NVMe over RDMA and NFS over RDMA; none of their services may run
	# on this host (below)
	nvme-cli fio nfs-kernel-server
	# iSCSI over RDMA (iSER): the initiator and the LIO target's shell;
	# their services may not run on this host either
	open-iscsi targetcli-fb
	# the middleware users run over RDMA: UCX, Open MPI (pml ucx),
	# libfabric's verbs provider, qperf, NetPIPE over TCP and MPI
	ucx-utils openmpi-bin libfabric-bin qperf netpipe-tcp netpipe-openmpi
	# packaging (Documentation/building.md): DKMS, the Debian packages and
	# their checks, systemd-analyze for the vhca-links unit
	dkms dh-dkms debhelper dpkg-dev lintian fakeroot man-db systemd
)
# The daemons these packages' scripts would start on this host.
DAEMONS='nfsd rpcbind rpc.mountd rpc.statd rpc.idmapd nfsdcld blkmapd
	iscsid targetclid'

missing=()
for p in "${PKGS[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} = 0 ]; then
	log "all ${#PKGS[@]} packages present"
	exit 0
fi

# running_daemons: those of DAEMONS that run on this host.
running_daemons() {
	local d
	for d in $DAEMONS; do
		pgrep -x "$d" >/dev/null && echo "$d"
	done
	return 0
}
before=$(running_daemons)

# Nothing may start on this host while packages install (nfs-kernel-server
# and rpcbind would start their services, open-iscsi iscsid and
# open-iscsi.service, python3-rtslib-fb rtslib-fb-targetctl, which restores
# a saved LIO configuration and loads the target modules): invoke-rc.d and
# deb-systemd-invoke ask /usr/sbin/policy-rc.d, and 101 forbids.  An
# existing policy (a container's) is left as it is; ours is removed after.
POLICY=/usr/sbin/policy-rc.d
own_policy=0
if [ ! -e $POLICY ]; then
	as_root sh -c "printf '#!/bin/sh\\nexit 101\\n' >$POLICY && chmod 755 $POLICY"
	own_policy=1
fi
drop_policy() {
	[ $own_policy = 1 ] && as_root rm -f $POLICY
	return 0
}
trap drop_policy EXIT

log "installing: ${missing[*]}"
as_root apt-get update -q >/dev/null &
progress "apt-get update" $! || die "apt-get update failed"
as_root env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null &
progress "installing ${#missing[@]} packages" $! \
	"echo \$(ls /var/cache/apt/archives/*.deb 2>/dev/null | wc -l) downloaded" ||
	die "apt-get install failed"
log "installed ${#missing[@]} packages"
after=$(running_daemons)
[ "$after" = "$before" ] ||
	die "the install started on this host: $(echo $after) (was: $(echo $before))"
