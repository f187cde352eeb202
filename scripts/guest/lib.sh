# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Helpers of the guest scripts (run as root inside the test VM, sourced).
# Each check prints "PASS: what" or "FAIL: what"; finish prints the counts
# and returns non-zero when anything failed.

NPASS=0
NFAIL=0
VHCA_KO=$VHCA_BUILD/drivers/infiniband/sw/vhca/vhca.ko

pass() {
	echo "PASS: $*"
	NPASS=$((NPASS + 1))
}

fail() {
	echo "FAIL: $*"
	NFAIL=$((NFAIL + 1))
}

# check DESCRIPTION COMMAND...: the command must succeed.
check() {
	_d=$1
	shift
	if "$@"; then pass "$_d"; else fail "$_d (rc=$?)"; fi
}

# refuse DESCRIPTION COMMAND...: the command must fail.
refuse() {
	_d=$1
	shift
	if "$@"; then fail "$_d (succeeded)"; else pass "$_d"; fi
}

# wait_for SECONDS COMMAND...: poll until the command succeeds.
wait_for() {
	_n=$(($1 * 10))
	shift
	while [ $_n -gt 0 ]; do
		"$@" && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}

# Load vhca.ko with the modules it depends on, and ib_uverbs, which udev
# (absent here) loads on a real host when an RDMA device appears.
load_vhca() {
	_deps=$(modinfo -F depends "$VHCA_KO" | tr ',' ' ')
	modprobe -a $_deps ib_uverbs || return 1
	insmod "$VHCA_KO"
}

# dmesg_has PATTERN: the kernel log since the last mark_dmesg matches.
mark_dmesg() {
	_mark=$(dmesg | wc -l)
}

dmesg_has() {
	dmesg | tail -n +$((_mark + 1)) | grep -Eq "$1"
}

finish() {
	echo "GUEST-SUMMARY: $NPASS passed, $NFAIL failed"
	[ $NFAIL = 0 ]
}
