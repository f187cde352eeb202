#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make matrix-update: move scripts/pins to what the registry offers today
# (the newest kernel of each series with a complete package set, each
# root's candidate rdma-core), remake the roots whose rdma-core moved, and
# print the old and new pins.  make matrix-update then reruns the matrix's
# stages (make check T='<the other kernels' stages>').
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PINS=$VHCA_TOP/scripts/pins

# newest SERIES: the newest version of a series with a complete package
# set, by stock-kernel.sh's own check (VHCA_STOCK_VERSION, exit 77 when
# incomplete).
newest() {
	local series=$1 pat cand search=(apt-cache)
	case $series in
	6.12) pat='6\.12\.[0-9]+\+deb12' ;;
	6.1) pat='6\.1\.0-[0-9]+' ;;
	7.2)
		pat='7\.2\.[0-9]+\+deb14'
		search=(in_root "$("$VHCA_TOP/scripts/distro-root.sh" sid || true)" apt-cache)
		;;
	esac
	for cand in $("${search[@]}" search --names-only "^linux-(image|binary)-$pat-amd64(-unsigned)?\$" |
		sed -En "s/^linux-(image|binary)-($pat)-amd64.*/\2/p" | sort -ruV); do
		if [ -e "$VHCA_CACHE/stock-$cand/.done" ] ||
			VHCA_STOCK_VERSION=$cand "$VHCA_TOP/scripts/stock-kernel.sh" "$series" >/dev/null 2>&1; then
			echo "$cand"
			return
		fi
	done
	die "no complete linux $series package set in the registry"
}

# candidate SUITE: the rdma-core version the suite's registry offers.
candidate() {
	local root
	root=$("$VHCA_TOP/scripts/distro-root.sh" "$1") || [ $? = 77 ] ||
		die "no $1 root"
	in_root "$root" apt-get update -q >/dev/null
	in_root "$root" apt-cache policy rdma-core | sed -n 's/^ *Candidate: //p'
}

as_root apt-get update -q >/dev/null
new=$(mktemp)
cp "$PINS" "$new"
for series in 6.1 6.12 7.2; do
	v=$(newest "$series")
	sed -i -E "s/^(kernel +${series//./\\.} +).*/\\1$v/" "$new"
done
for suite in trixie sid; do
	v=$(candidate "$suite")
	sed -i -E "s/^(root +$suite +).*/\\1$v/" "$new"
done
if cmp -s "$PINS" "$new"; then
	log "scripts/pins is what the registry offers"
	rm -f "$new"
	exit 0
fi
diff -u "$PINS" "$new" | sed -n 's/^\([-+][a-z]\)/\1/p' >&2 || true
mv "$new" "$PINS"
# A root whose rdma-core moved is made again, with the new one.
for suite in trixie sid; do
	root=$VHCA_CACHE/root-$suite
	[ -e "$root/.done" ] || continue
	have=$(chroot "$root" dpkg-query -W -f='${Version}' rdma-core)
	if [ "$have" != "$(pin root "$suite")" ]; then
		log "remaking the $suite root (rdma-core $have -> $(pin root "$suite"))"
		as_root rm -rf "$root"
		"$VHCA_TOP/scripts/distro-root.sh" "$suite" >/dev/null
	fi
done
log "scripts/pins moved; commit it with the matrix's results"
