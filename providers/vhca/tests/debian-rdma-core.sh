#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# usage: debian-rdma-core.sh ROOT CACHE
#
# The source of the rdma-core release a Debian root (scripts/distro-root.sh:
# trixie, sid) has installed, for rdma-core-headers.sh: fetched once with
# `apt-get source` inside ROOT (whose apt verifies it against the suite's
# signed Sources index), its upstream tarball (rdma-core_V.orig.tar.gz, the
# release as rdma-core tagged it) unpacked into CACHE/VERSION/rdma-core
# (VERSION is the root's libibverbs-dev version, e.g. 65.0-1.1).  The
# headers that tree publishes (libibverbs/CMakeLists.txt's list) must be
# byte for byte those ROOT's libibverbs-dev installed in
# /usr/include/infiniband.  Debian's own patches (debian/patches) are not
# applied: rdma-core-headers.sh needs only the upstream headers.
#
# Prints the tree's path.  Exit status 77, with the reason on stderr, when
# ROOT is no finished root or lacks libibverbs-dev, or its suite's Sources
# no longer list that version (a skip); any other failure is 1.
set -euo pipefail
. "$(dirname "$0")/../../../scripts/lib.sh"
root=$1 cache=$2

skip() {
	echo "debian-rdma-core.sh: $*" >&2
	exit 77
}

[ -e "$root/.done" ] || skip "no root at $root (scripts/distro-root.sh)"
version=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Version}' \
	libibverbs-dev 2>/dev/null) || skip "$root has no libibverbs-dev"
out=$cache/$version
if [ -e "$out/.done" ]; then
	echo "$out/rdma-core"
	exit 0
fi
as_root chroot "$root" apt-cache showsrc rdma-core 2>/dev/null |
	grep -qx "Version: $version" ||
	skip "$root's Sources list no rdma-core $version (apt-get update there?)"

# The upstream version: no epoch, no Debian revision.
upstream=${version#*:}
upstream=${upstream%-*}
tmp=/tmp/vhca-rdma-core-source.$$
as_root rm -rf "$root$tmp"
as_root mkdir -p "$root$tmp"
trap 'as_root rm -rf "$root$tmp"' EXIT
# The .dsc and the Debian tarball may be missing from a mirror that has the
# upstream tarball: what arrived is checked, not apt-get's status.
in_root "$root" sh -c "cd $tmp && apt-get source -q --download-only \
	rdma-core=$version" >&2 || true
tarball=$root$tmp/rdma-core_$upstream.orig.tar.gz
[ -s "$tarball" ] || {
	echo "debian-rdma-core.sh: apt-get source rdma-core=$version in" \
		"$root fetched no rdma-core_$upstream.orig.tar.gz" >&2
	exit 1
}

rm -rf "$out"
mkdir -p "$out/rdma-core"
tar -xzf "$tarball" -C "$out/rdma-core" --strip-components=1 \
	--no-same-owner
tree=$out/rdma-core
if ! grep -qx "set(PACKAGE_VERSION \"$upstream\")" "$tree/CMakeLists.txt"; then
	echo "debian-rdma-core.sh: $tarball is not rdma-core $upstream" >&2
	exit 1
fi
pub=$(sed -n '/^publish_headers(infiniband/,/)/p' \
	"$tree/libibverbs/CMakeLists.txt" | grep -o '[a-z_-]*\.h')
for h in $pub; do
	if ! cmp -s "$tree/libibverbs/$h" "$root/usr/include/infiniband/$h"; then
		echo "debian-rdma-core.sh: $tarball: libibverbs/$h is not" \
			"$root's /usr/include/infiniband/$h" >&2
		exit 1
	fi
done
echo "$version $(sha256sum <"$tarball" | cut -d' ' -f1)" >"$out/.done"
echo "$tree"
