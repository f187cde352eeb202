#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: vhca as users install it (stock kernels only).  The Debian packages
# and the DKMS binary tarball of the module for this kernel
# (vhca-<v>-<kver>.dkms.tar.gz) come from the host: the guest has no kernel
# headers, and compiling under TCG is slow.  With the host's userland
# (6.12, 6.1) they are the host release's, from tests/host/pkg-host.sh in
# build/deb/; with the sid root (7.2) sid's, built in that root by
# tests/host/pkg-root.sh in build/deb-sid/.
#   deb:  dpkg -i vhca-dkms (its postinst adds the source to DKMS and skips
#         the build: no headers), the host's build put where dkms build
#         puts it (the tarball's dkms_main_tree, what dkms ldtarball loads;
#         ldtarball itself refuses a module whose source is added already),
#         dkms install, modprobe vhca, vhca-links adds the links a
#         links.conf lists, ibv_devinfo (only with ibverbs-provider-vhca
#         installed) and ibv_rc_pingpong between the two ports; then
#         dpkg --purge of both, and nothing of them is left.
#   load: make load of the built module, and with a dependency made
#         unloadable (a modprobe.d "install ip6_udp_tunnel /bin/false"),
#         its message naming that module.
# dpkg writes into the guest's overlay of the host root; the modules tree
# (a read-only share) is a tmpfs of the modules it loads for the scenario
# (mods_writable).
# dkms needs /dev/fd (bash's <(...)), which udev links on a real host.
. "$VHCA_TOP/tests/lib/guest.sh"

[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd

T=/tmp/pkg-test
mkdir -p $T
DEB=$VHCA_TOP/build/deb
[ "${VHCA_KERNEL:-stock}" = sid ] && DEB=$VHCA_TOP/build/deb-sid
KVER=$VHCA_KVER
MODS=/usr/lib/modules

# mods_writable: a writable modules tree for the scenario (a real host's
# is; here it is a read-only share), holding the modules the scenario
# loads: those vhca depends on, ib_uverbs and veth, with their own
# dependencies (modprobe --show-depends), depmod'ed.  Not the whole stock
# tree: depmod reads every module of it (4230, xz-compressed: 8.5 s on
# the host, minutes under TCG), and dkms runs it at install and at removal.
# mods_restore: the share again.
mods_writable() {
	_mw=/run/pkg-mods/$KVER
	mkdir -p /run/pkg-mods &&
		mount -t tmpfs tmpfs /run/pkg-mods &&
		mkdir -p $_mw &&
		cp $MODS/$KVER/modules.builtin $MODS/$KVER/modules.builtin.modinfo \
			$MODS/$KVER/modules.order $_mw/ || return 1
	for _p in $(modprobe -a --show-depends $VHCA_DEPS ib_uverbs veth |
		sed -n "s|^insmod /lib/modules/$KVER/||p"); do
		mkdir -p "$_mw/${_p%/*}" && cp "$MODS/$KVER/$_p" "$_mw/$_p" || return 1
	done
	mount --bind /run/pkg-mods $MODS && MODS_BOUND=1 && depmod -a "$KVER"
}

# (Only what mods_writable mounted: with nothing bound, $MODS is the
# modules share itself, which every later scenario needs.)
MODS_BOUND=0
mods_restore() {
	[ $MODS_BOUND = 1 ] && umount $MODS 2>/dev/null
	umount /run/pkg-mods 2>/dev/null
	MODS_BOUND=0
	return 0
}

# stamp WHAT: the guest's uptime before a step, for the budget.
stamp() {
	read -r _st _ </proc/uptime
	echo "# at ${_st%.*} s: $1"
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
		/usr/lib/x86_64-linux-gnu/libibverbs/libvhca-rdmav*.so \
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

deb_run() {
	V=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$VHCA_TOP/dkms.conf")
	TAR=$DEB/vhca-$V-$KVER.dkms.tar.gz
	if [ ! -r "$DEB/vhca-dkms_${V}_all.deb" ] || [ ! -r "$TAR" ]; then
		fail "packages built on the host" "no $DEB/vhca-dkms_${V}_all.deb or $TAR: run tests/host/pkg-host.sh (pkg-root.sh sid for the sid root)"
		return
	fi
	unset RDMAV_DRIVERS
	must "modules tree writable (tmpfs, the modules loaded here)" mods_writable || return
	# The man-db trigger would index every manual page under TCG.
	rm -f /var/lib/man-db/auto-update
	stamp "dpkg -i vhca-dkms"
	must "dpkg -i vhca-dkms" dpkg -i "$DEB/vhca-dkms_${V}_all.deb" || return
	# Every dkms run costs seconds here (a bash script of many processes):
	# dkms status only once, after the install.
	check "postinst's dkms add: /var/lib/dkms/vhca/$V/source" \
		test "$(readlink /var/lib/dkms/vhca/$V/source)" = /usr/src/vhca-$V
	must "the host's dkms build for $KVER into /var/lib/dkms" \
		tar -xzf "$TAR" -C /var/lib/dkms/vhca/$V --strip-components=2 ./dkms_main_tree/$KVER || return
	stamp "dkms install -k"
	must "dkms install -k $KVER" dkms install -m vhca -v "$V" -k "$KVER" || return
	check "dkms status: installed" sh -c "dkms status -m vhca -v $V -k $KVER | grep -q ': installed'"
	check "vhca.ko in updates/dkms" sh -c "ls $MODS/$KVER/updates/dkms/vhca.ko*"
	stamp "modprobe vhca"
	must "modprobe vhca (its dependencies by modules.dep)" modprobe vhca || return
	check "ib_core, udp_tunnel loaded with it" test -d /sys/module/ib_core -a -d /sys/module/udp_tunnel
	modprobe ib_uverbs
	local_pair
	printf '# test links\nvhca0 veth0\n\nvhca1 veth1\n' >$T/links.conf
	must "vhca-links add (links.conf: vhca0 veth0, vhca1 veth1)" \
		env VHCA_LINKS_CONF=$T/links.conf /usr/libexec/vhca/vhca-links add || return
	check "vhca-links add again: they exist, no error" \
		env VHCA_LINKS_CONF=$T/links.conf /usr/libexec/vhca/vhca-links add veth0
	port_gids
	must "GIDs of both ports" test -n "$G0" -a -n "$G1" || return
	refuse "ibv_devinfo -d vhca0 without the provider package" ibv_devinfo -d vhca0
	stamp "dpkg -i ibverbs-provider-vhca"
	must "dpkg -i ibverbs-provider-vhca" dpkg -i "$DEB/ibverbs-provider-vhca_${V}_amd64.deb"
	must "ibv_devinfo -d vhca0 (the packaged provider)" sh -c 'ibv_devinfo -d vhca0 >/dev/null' || return
	stamp "ibv_rc_pingpong"
	check "ibv_rc_pingpong vhca0 <-> vhca1" pair pingpong \
		"ibv_rc_pingpong -d vhca0 -g $G0 -n 100" \
		"ibv_rc_pingpong -d vhca1 -g $G1 -n 100 10.0.0.1"
	check "vhca-links delete veth1" env VHCA_LINKS_CONF=$T/links.conf /usr/libexec/vhca/vhca-links delete veth1
	check "vhca1 gone, vhca0 stays" test ! -e /sys/class/infiniband/vhca1 -a -e /sys/class/infiniband/vhca0
	check "vhca-links delete" env VHCA_LINKS_CONF=$T/links.conf /usr/libexec/vhca/vhca-links delete
	check "modprobe -r vhca" modprobe -r vhca
	stamp "dpkg --purge"
	check "dpkg --purge ibverbs-provider-vhca vhca-dkms" dpkg --purge ibverbs-provider-vhca vhca-dkms
	check "dpkg: vhca-dkms gone" pkg_gone vhca-dkms
	check "dpkg: ibverbs-provider-vhca gone" pkg_gone ibverbs-provider-vhca
	stamp "nothing of them left"
	check "nothing of them left" nothing_left
}

# deb: deb_run, and after a step that failed, what it left.
deb() {
	deb_run
	pkg_gone vhca-dkms && pkg_gone ibverbs-provider-vhca ||
		dpkg --purge ibverbs-provider-vhca vhca-dkms >/dev/null 2>&1
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
