#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The host half of the package path on sid's kernel (7.2) with the sid
# root as the guest's userland (tests/guest/pkg.sh is the guest's; the
# host's release has tests/host/pkg-host.sh), inside the sid root:
#   1. make deb SUITE=sid: both packages, built and lintian clean in the
#      root, in build/deb-sid/ (scripts/pkg-deb.sh sid);
#   2. in a throwaway copy of the root (an overlay: the cached root is
#      never written), holding the pinned 7.2 kernel's headers and two
#      kernels outside the supported range, 5.10.0-30-amd64 and
#      8.0.0-1-amd64 (copies of the 7.2 headers' tree reporting those
#      releases, each linked as /lib/modules/KVER/build): dpkg -i
#      vhca-dkms, whose postinst has DKMS build and install the module for
#      7.2 and skip the other two with its BUILD_EXCLUSIVE notice.  dpkg
#      must exit 0 with the package installed, not half-configured;
#   3. dkms mktarball --binaries-only of the 7.2 module:
#      build/deb-sid/vhca-<v>-<kver>.dkms.tar.gz, which the 7.2 guest
#      installs (it has no headers, and compiling under TCG is slow);
#   4. dpkg -i ibverbs-provider-vhca (the root's libibverbs meets its
#      dependencies), then dpkg --purge of both: DKMS keeps nothing.
# The output of dpkg -i vhca-dkms is in build/deb-sid/dpkg-dkms.log.
#
# usage: pkg-root.sh sid
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"

[ "${1:-}" = sid ] || die "usage: pkg-root.sh sid"
cd "$VHCA_TOP"
scripts/pkg-deb.sh sid
V=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' dkms.conf)
OUT=$VHCA_TOP/build/deb-sid
S=$(scripts/stock-kernel.sh 7.2)
KVER=$(cat "$S/kernel.release")
ROOT=$(cat "$S/chroot")
OUTSIDE="5.10.0-30-amd64 8.0.0-1-amd64"

# The overlay's layers under build/, and the packages at /tmp/deb in it.
O=$VHCA_TOP/build/pkg-root
as_root rm -rf "$O"
mkdir -p "$O/upper/tmp/deb" "$O/work" "$O/merged"
cp "$OUT/vhca-dkms_${V}_all.deb" "$OUT/ibverbs-provider-vhca_${V}_amd64.deb" "$O/upper/tmp/deb/"
cat >"$O/upper/tmp/deb/run.sh" <<'SH'
# In the overlay: V KVER OUTSIDE from the arguments.
set -u
V=$1 KVER=$2
shift 2
H=/usr/src/linux-headers-$KVER
for k in "$@"; do
	cp -a "$H" "/usr/src/linux-headers-$k"
	echo "$k" >"/usr/src/linux-headers-$k/include/config/kernel.release"
	echo "#define UTS_RELEASE \"$k\"" >"/usr/src/linux-headers-$k/include/generated/utsrelease.h"
	mkdir -p "/lib/modules/$k"
	ln -s "$(readlink -f "/usr/src/linux-headers-$k")" "/lib/modules/$k/build"
done
echo "== dpkg -i vhca-dkms_${V}_all.deb"
dpkg -i "/tmp/deb/vhca-dkms_${V}_all.deb" >/tmp/deb/dpkg-dkms.log 2>&1
echo "dpkg exit status: $?" >>/tmp/deb/dpkg-dkms.log
cat /tmp/deb/dpkg-dkms.log
echo "== dpkg-query: $(dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${Version}' vhca-dkms)"
echo "== dkms status"
dkms status -m vhca
echo "== dkms mktarball -k $KVER"
dkms mktarball -m vhca -v "$V" -k "$KVER" --binaries-only >/tmp/deb/mktarball.log 2>&1 ||
	{ cat /tmp/deb/mktarball.log; exit 1; }
mv /var/lib/dkms/vhca/"$V"/tarball/*.tar.gz "/tmp/deb/vhca-$V-$KVER.dkms.tar.gz"
echo "== dpkg -i ibverbs-provider-vhca_${V}_amd64.deb"
dpkg -i "/tmp/deb/ibverbs-provider-vhca_${V}_amd64.deb" 2>&1
echo "dpkg exit status: $?"
echo "== dpkg --purge ibverbs-provider-vhca vhca-dkms"
dpkg --purge ibverbs-provider-vhca vhca-dkms 2>&1
echo "dpkg exit status: $?"
echo "== left in DKMS: $(ls /var/lib/dkms/vhca 2>/dev/null | wc -l) entries; /lib/modules/$KVER/updates: $(find "/lib/modules/$KVER/updates" -type f 2>/dev/null | wc -l) files"
SH
log "dpkg -i in an overlay of $ROOT: DKMS for $KVER and, outside the range, $OUTSIDE"
as_root unshare --mount --propagation private -- sh -c '
	mount -t overlay overlay -o "lowerdir=$1,upperdir=$2/upper,workdir=$2/work" "$2/merged" &&
	mount -t proc proc "$2/merged/proc" && shift 2 && exec chroot "$@"' \
	sh "$ROOT" "$O" "$O/merged" sh /tmp/deb/run.sh "$V" "$KVER" $OUTSIDE >"$OUT/pkg-root.log" 2>&1 || {
	cat "$OUT/pkg-root.log" >&2
	die "the package checks in the $(basename "$ROOT") overlay failed (log: $OUT/pkg-root.log)"
}
cat "$OUT/pkg-root.log"
cp "$O/upper/tmp/deb/dpkg-dkms.log" "$O/upper/tmp/deb/vhca-$V-$KVER.dkms.tar.gz" "$OUT/"
as_root rm -rf "$O"

# dpkg -i vhca-dkms: exit 0, installed, 7.2 built and installed, the others skipped.
grep -qx "dpkg exit status: 0" "$OUT/dpkg-dkms.log" ||
	die "dpkg -i vhca-dkms failed: $(tail -n1 "$OUT/dpkg-dkms.log")"
grep -q "^== dpkg-query: ii  vhca-dkms $V\$" "$OUT/pkg-root.log" ||
	die "vhca-dkms is not installed after dpkg -i: $(grep '^== dpkg-query' "$OUT/pkg-root.log")"
grep -qxF "vhca/$V, $KVER, x86_64: installed" "$OUT/pkg-root.log" ||
	die "dkms status does not say installed for $KVER"
for k in $OUTSIDE; do
	grep -A1 -F "Warning: The /var/lib/dkms/vhca/$V/$k/x86_64/dkms.conf" "$OUT/dpkg-dkms.log" |
		grep -q "includes a BUILD_EXCLUSIVE directive" ||
		die "dpkg -i vhca-dkms did not show DKMS skipping $k for BUILD_EXCLUSIVE"
	! grep -qF "vhca/$V, $k, x86_64:" "$OUT/pkg-root.log" ||
		die "dkms built for $k, outside the supported range"
done
[ "$(grep -c '^dpkg exit status: 0$' "$OUT/pkg-root.log")" = 3 ] ||
	die "dpkg -i ibverbs-provider-vhca or dpkg --purge failed"
grep -q "^== left in DKMS: 0 entries; /lib/modules/$KVER/updates: 0 files" "$OUT/pkg-root.log" ||
	die "dpkg --purge left DKMS state or modules behind"
log "dkms: built for $KVER by vhca-dkms's postinst, $(basename "$OUT/vhca-$V-$KVER.dkms.tar.gz"); $OUTSIDE skipped, dpkg exit 0"
