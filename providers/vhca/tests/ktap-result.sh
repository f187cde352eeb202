# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Sourced by provider-abis.sh and provider-abis-run.sh: one KTAP result.
# result RC NAME [WHY]: "ok N NAME" for RC 0, "ok N NAME # WHY" for RC
# skip (WHY starting "SKIP"), else "# NAME: WHY" and "not ok N NAME"; n
# counts the results, failed the failures, skipped the skips.
n=0 failed=0 skipped=0
result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	elif [ "$1" = skip ]; then
		skipped=$((skipped + 1))
		echo "ok $n $2 # ${3:-SKIP}"
	else
		failed=$((failed + 1))
		echo "# $2: ${3:-failed}"
		echo "not ok $n $2"
	fi
}
