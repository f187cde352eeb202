#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# PID 1 of the test VM after switch_root (copied into the results share by
# vm-run.sh).  Runs the guest script, records its exit status, the kernel
# log and (on the debug kernel) a kmemleak scan, then reboots, which ends
# QEMU (-no-reboot).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
OUT=/mnt/out
KML=/sys/kernel/debug/kmemleak
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
ip link set lo up
# Leak suspects from boot are not ours: report and clear them before the
# test.  Then no scan until the end: the scanning thread's, every 10
# minutes, cost about 10 s of a CPU each and name no scenario anyway (a
# leak stays unreferenced until the final scans below report it).
if [ -w $KML ]; then
	echo scan >$KML
	echo clear >$KML
	echo scan=off >$KML
fi

echo "VHCA-VM: guest script start at $(cut -d' ' -f1 /proc/uptime) s"
/bin/sh $OUT/run.sh </dev/null >/dev/console 2>&1
rc=$?
echo "VHCA-VM: EXIT=$rc at $(cut -d' ' -f1 /proc/uptime) s"

if [ -w $KML ]; then
	# kmemleak reports only objects older than 5 s; two scans settle it.
	sleep 6
	echo scan >$KML
	echo scan >$KML
	cat $KML >$OUT/kmemleak.txt
fi
dmesg >$OUT/dmesg.txt
sync
echo b >/proc/sysrq-trigger
sleep 30
