#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make bench: vhca against rdma_rxe and the guest's memcpy, in one boot of
# Debian's stock kernel in QEMU (tools/bench/guest-bench.sh does the measuring),
# then fio over NVMe over RDMA, vhca against rdma_rxe, in a second boot
# (tests/guest/ulp.sh bench), then the scale section, vhca against rdma_rxe,
# in a third (tools/bench/guest-scale.sh).  Prints the tables (also kept in
# build/vm/bench/bench.txt, build/vm/bench/nvme/nvme-bench.txt and
# build/vm/bench/scale/scale.txt).  Fails only when a tool fails to run,
# never because of a figure.
#   BENCH_BW_ITERS   iterations of the 64 KiB bandwidth tests (default 1000;
#                    the 64-byte message rate test runs 20 times as many)
#   BENCH_LAT_ITERS  iterations of the 2-byte latency tests (default 2000)
#   BENCH_FIO_SECS   seconds of each fio job (default 15)
#   BENCH_SCALE      1 (default): the scale boot too; 0: not; only: the
#                    scale boot alone (the other results are kept)
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"
cd "$VHCA_TOP"
make -s module provider tests >/dev/null
OUT=$VHCA_TOP/build/vm/bench
SCALE=${BENCH_SCALE:-1}
rc=0
nrc=0
src=0
if [ "$SCALE" = only ]; then
	rm -rf "$OUT/scale"
	mkdir -p "$OUT"
else
	rm -rf "$OUT"
	mkdir -p "$OUT"
fi

if [ "$SCALE" != only ]; then
	T0=$(date +%s)
	set +e
	tests/runner/vm-run.sh -k stock -t 900 -o "$OUT" tools/bench/guest-bench.sh \
		"${BENCH_BW_ITERS:-1000}" "${BENCH_LAT_ITERS:-2000}"
	rc=$?
	set -e
	log "bench: VM exit $rc after $(($(date +%s) - T0)) s; console in $OUT/console.log"
	tr -d '\r' <"$OUT/console.log" | grep -E '^(not )?ok [0-9]+ ' || true

	T1=$(date +%s)
	set +e
	tests/runner/vm-run.sh -k stock -t 900 -o "$OUT/nvme" tests/guest/ulp.sh bench \
		"${BENCH_FIO_SECS:-15}"
	nrc=$?
	set -e
	log "bench nvme: VM exit $nrc after $(($(date +%s) - T1)) s; console in $OUT/nvme/console.log"
	tr -d '\r' <"$OUT/nvme/console.log" | grep -E '^(not )?ok [0-9]+ ' || true
fi

if [ "$SCALE" != 0 ]; then
	T2=$(date +%s)
	set +e
	tests/runner/vm-run.sh -k stock -t 900 -o "$OUT/scale" tools/bench/guest-scale.sh
	src=$?
	set -e
	log "bench scale: VM exit $src after $(($(date +%s) - T2)) s; console in $OUT/scale/console.log"
	tr -d '\r' <"$OUT/scale/console.log" | grep -E '^(not )?ok [0-9]+ ' || true
fi
TABLES="$OUT/bench.txt $OUT/nvme/nvme-bench.txt $OUT/scale/scale.txt"
[ "$SCALE" != only ] || TABLES=$OUT/scale/scale.txt
for f in $TABLES; do
	if [ -s "$f" ]; then
		echo
		cat "$f"
	fi
done
[ $rc = 0 ] || exit $rc
[ $nrc = 0 ] || exit $nrc
exit $src
