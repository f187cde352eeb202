#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make load: insert a built vhca.ko that is not installed.  insmod does not
# resolve dependencies, so first every module that "modinfo -F depends"
# names (udp_tunnel, ip6_udp_tunnel, ib_core, ib_uverbs, and crypto_hash
# where the kernel builds it as a module) is loaded with
# modprobe from the running kernel's modules; one that cannot be is named,
# with modprobe's own message, and nothing is inserted.  An installed
# module needs none of this: "modprobe vhca".
#
# usage: pkg-load.sh KO [PARAM=VALUE...]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || die "usage: pkg-load.sh KO [PARAM=VALUE...]"
KO=$1
shift
[ -r "$KO" ] || die "$KO not found: build it first (make module, or make KDIR=...)"
MODPROBE=${MODPROBE:-modprobe}
INSMOD=${INSMOD:-insmod}

kver=$(uname -r)
vermagic=$(modinfo -F vermagic "$KO")
[ "${vermagic%% *}" = "$kver" ] ||
	die "$KO is built for kernel ${vermagic%% *}, this one runs $kver: build with make KDIR=/lib/modules/$kver/build"
if [ -d /sys/module/vhca ]; then
	log "vhca is loaded already (rmmod vhca first to load $KO)"
	exit 0
fi

deps=$(modinfo -F depends "$KO" | tr ',' ' ')
for d in $deps; do
	[ -d "/sys/module/$d" ] && continue
	if ! msg=$(as_root "$MODPROBE" "$d" 2>&1); then
		die "vhca needs the module $d, which modprobe cannot load${msg:+: $msg}"
	fi
done
as_root "$INSMOD" "$KO" "$@" || die "insmod $KO failed (dmesg says why)"
log "loaded $KO (after: ${deps:-nothing})"
