#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Guest: load the KUnit test module (its suites run at load) and save the
# kernel log holding their KTAP output for kunit.py parse on the host.
. "$VHCA_TOP/scripts/guest/lib.sh"

KO=$VHCA_BUILD/kunit/vhca_kunit.ko
dmesg -C
check "insmod vhca_kunit.ko" insmod "$KO"
dmesg >"$VHCA_OUT/kunit.log"
check "rmmod vhca_kunit" rmmod vhca_kunit
finish
