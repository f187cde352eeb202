#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make bench: vhca against rdma_rxe and the guest's memcpy, in one boot of
# Debian's stock kernel in QEMU (tools/bench/guest-bench.sh does the measuring),
# then fio over NVMe over RDMA, vhca against rdma_rxe, in a second boot
# (tests/guest/ulp.sh bench).  Prints the tables (also kept in
# build/vm/bench/bench.txt and build/vm/bench/nvme/nvme-bench.txt).  Fails
# only when a tool fails to run, never because of a figure.
#   BENCH_BW_ITERS   iterations of the 64 KiB bandwidth tests (default 1000;
#                    the 64-byte message rate test runs 20 times as many)
#   BENCH_LAT_ITERS  iterations of the 2-byte latency tests (default 2000)
#   BENCH_FIO_SECS   seconds of each fio job (default 15)
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"
cd "$VHCA_TOP"
make -s module provider tests >/dev/null
OUT=$VHCA_TOP/build/vm/bench
rm -rf "$OUT"
mkdir -p "$OUT"
T0=$(date +%s)
set +e
tests/runner/vm-run.sh -k stock -t 900 -o "$OUT" tools/bench/guest-bench.sh \
	"${BENCH_BW_ITERS:-1000}" "${BENCH_LAT_ITERS:-2000}"
rc=$?
set -e
log "bench: VM exit $rc after $(($(date +%s) - T0)) s; console in $OUT/console.log"
tr -d '\r' <"$OUT/console.log" | grep -E '^(PASS|FAIL): ' || true

T1=$(date +%s)
set +e
tests/runner/vm-run.sh -k stock -t 900 -o "$OUT/nvme" tests/guest/ulp.sh bench \
	"${BENCH_FIO_SECS:-15}"
nrc=$?
set -e
log "bench nvme: VM exit $nrc after $(($(date +%s) - T1)) s; console in $OUT/nvme/console.log"
tr -d '\r' <"$OUT/nvme/console.log" | grep -E '^(not )?ok [0-9]+ ' || true
for f in "$OUT/bench.txt" "$OUT/nvme/nvme-bench.txt"; do
	if [ -s "$f" ]; then
		echo
		cat "$f"
	fi
done
[ $rc = 0 ] || exit $rc
exit $nrc
