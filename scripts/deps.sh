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
	# the test VM
	qemu-system-x86 busybox-static iproute2
	# RDMA userspace: provider build, tools, tests
	rdma-core ibverbs-utils ibverbs-providers libibverbs-dev librdmacm-dev
	rdmacm-utils perftest python3-pyverbs
)

missing=()
for p in "${PKGS[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
if [ ${#missing[@]} = 0 ]; then
	log "all ${#PKGS[@]} packages present"
	exit 0
fi

log "installing: ${missing[*]}"
as_root apt-get update -q >/dev/null
as_root env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
log "installed ${#missing[@]} packages"
