#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: vhca as users install it (stock kernel only; the packages are the
# stock kernel's).  scripts/pkg-host.sh builds, on the host, the Debian
# packages (build/deb/*.deb) and the DKMS binary tarball of the module for
# this kernel (build/deb/vhca-<v>-<kver>.dkms.tar.gz): the guest has no
# kernel headers, and compiling under TCG is slow.
#   deb:  dpkg -i vhca-dkms (its postinst adds the source to DKMS and skips
#         the build: no headers), dkms ldtarball and dkms install of the
#         host's build, modprobe vhca, vhca-links adds the links a
#         links.conf lists, ibv_devinfo (only with ibverbs-provider-vhca
#         installed) and ibv_rc_pingpong between the two ports; then
#         dpkg --purge of both, and nothing of them is left.
#   load: make load of the built module, and with a dependency made
#         unloadable (a modprobe.d "install ip6_udp_tunnel /bin/false"),
#         its message naming that module.
# dpkg writes into the guest's overlay of the host root; the modules tree
# (a read-only share) gets a tmpfs overlay of its own for the scenario.
. "$VHCA_TOP/scripts/guest/lib.sh"

T=/tmp/pkg-test
mkdir -p $T
DEB=$VHCA_TOP/build/deb
KVER=$VHCA_KVER
MODS=/usr/lib/modules

# mods_writable: a tmpfs overlay on the modules tree, as a real host's is
# writable.  mods_restore: gone again.
mods_writable() {
	mkdir -p /run/pkg-mods &&
		mount -t tmpfs tmpfs /run/pkg-mods &&
		mkdir /run/pkg-mods/upper /run/pkg-mods/work &&
		mount -t overlay overlay -o lowerdir=$MODS,upperdir=/run/pkg-mods/upper,workdir=/run/pkg-mods/work $MODS
}

mods_restore() {
	umount $MODS 2>/dev/null
	umount /run/pkg-mods 2>/dev/null
	return 0
}

# pkg_gone NAME: dpkg knows nothing of package NAME any more.
pkg_gone() {
	! dpkg-query -W -f='${db:Status-Status}\n' "$1" 2>/dev/null | grep -qv '^not-installed$'
}

# nothing_left: no file of either package, no DKMS state, no module.
nothing_left() {
	_nl=0
	for _f in /usr/src/vhca-$V /var/lib/dkms/vhca /etc/vhca \
		/usr/libexec/vhca /lib/systemd/system/vhca-links@.service \
		/usr/lib/x86_64-linux-gnu/libibverbs/libvhca-rdmav34.so \
		/etc/libibverbs.d/vhca.driver /usr/share/man/man7/vhca.7.gz \
		/usr/share/doc/vhca-dkms /usr/share/doc/ibverbs-provider-vhca; do
		[ -e "$_f" ] && echo "# left: $_f" && _nl=1
	done
	for _f in $MODS/$KVER/updates/dkms/vhca.ko*; do
		[ -e "$_f" ] && echo "# left: $_f" && _nl=1
	done
	# modules.dep no longer names it.
	modinfo -k "$KVER" vhca >/dev/null 2>&1 && echo "# left: modinfo finds vhca" && _nl=1
	[ $_nl = 0 ]
}

deb() {
	V=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$VHCA_TOP/dkms.conf")
	TAR=$DEB/vhca-$V-$KVER.dkms.tar.gz
	if [ ! -r "$DEB/vhca-dkms_${V}_all.deb" ] || [ ! -r "$TAR" ]; then
		fail "packages built on the host" "no $DEB/vhca-dkms_${V}_all.deb or $TAR: run scripts/pkg-host.sh"
		return
	fi
	unset RDMAV_DRIVERS
	check "modules tree writable (tmpfs overlay)" mods_writable
	# The man-db trigger would index every manual page under TCG.
	rm -f /var/lib/man-db/auto-update
	check "dpkg -i vhca-dkms" dpkg -i "$DEB/vhca-dkms_${V}_all.deb"
	check "dkms status: vhca/$V added" sh -c "dkms status -m vhca -v $V | grep -q added"
	check "dkms ldtarball (the host's dkms build for $KVER)" dkms ldtarball --archive="$TAR"
	check "dkms install -k $KVER" dkms install -m vhca -v "$V" -k "$KVER"
	check "vhca.ko in updates/dkms" sh -c "ls $MODS/$KVER/updates/dkms/vhca.ko*"
	check "modprobe vhca (its dependencies by modules.dep)" modprobe vhca
	check "ib_core, udp_tunnel loaded with it" test -d /sys/module/ib_core -a -d /sys/module/udp_tunnel
	modprobe ib_uverbs
	local_pair
	printf '# test links\nvhca0 veth0\n\nvhca1 veth1\n' >$T/links.conf
	check "vhca-links add (links.conf: vhca0 veth0, vhca1 veth1)" \
		env VHCA_LINKS_CONF=$T/links.conf /usr/libexec/vhca/vhca-links add
	check "vhca-links add again: they exist, no error" \
		env VHCA_LINKS_CONF=$T/links.conf /usr/libexec/vhca/vhca-links add veth0
	port_gids
	refuse "ibv_devinfo -d vhca0 without the provider package" ibv_devinfo -d vhca0
	check "dpkg -i ibverbs-provider-vhca" dpkg -i "$DEB/ibverbs-provider-vhca_${V}_amd64.deb"
	check "ibv_devinfo -d vhca0 (the packaged provider)" sh -c 'ibv_devinfo -d vhca0 >/dev/null'
	check "ibv_rc_pingpong vhca0 <-> vhca1" pair pingpong \
		"ibv_rc_pingpong -d vhca0 -g $G0 -n 100" \
		"ibv_rc_pingpong -d vhca1 -g $G1 -n 100 10.0.0.1"
	check "vhca-links delete veth1" env VHCA_LINKS_CONF=$T/links.conf /usr/libexec/vhca/vhca-links delete veth1
	check "vhca1 gone, vhca0 stays" test ! -e /sys/class/infiniband/vhca1 -a -e /sys/class/infiniband/vhca0
	check "vhca-links delete" env VHCA_LINKS_CONF=$T/links.conf /usr/libexec/vhca/vhca-links delete
	check "modprobe -r vhca" modprobe -r vhca
	check "dpkg --purge ibverbs-provider-vhca vhca-dkms" dpkg --purge ibverbs-provider-vhca vhca-dkms
	check "dpkg: vhca-dkms gone" pkg_gone vhca-dkms
	check "dpkg: ibverbs-provider-vhca gone" pkg_gone ibverbs-provider-vhca
	check "nothing of them left" nothing_left
	mods_restore
}

load() {
	printf 'install ip6_udp_tunnel /bin/false\n' >/etc/modprobe.d/pkg-test.conf
	[ ! -d /sys/module/ip6_udp_tunnel ] || rmmod ip6_udp_tunnel
	refuse "make load with ip6_udp_tunnel unloadable" sh -c "make -s load >$T/load.out 2>&1"
	cat $T/load.out
	check "its message names ip6_udp_tunnel" grep -q "vhca needs the module ip6_udp_tunnel, which modprobe cannot load" $T/load.out
	check "vhca not inserted" test ! -d /sys/module/vhca
	rm -f /etc/modprobe.d/pkg-test.conf
	check "make load" sh -c "make -s load >$T/load.out 2>&1"
	cat $T/load.out
	check "vhca and its dependencies loaded" test -d /sys/module/vhca -a -d /sys/module/ip6_udp_tunnel -a -d /sys/module/ib_uverbs
	check "make load again: loaded already" sh -c "make -s load 2>&1 | grep -q 'loaded already'"
}

scenario deb deb 300 stock
scenario load load 120 stock
run_scenarios "$@"
