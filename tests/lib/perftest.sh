# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# perftest for the guest's benchmark scripts (tools/bench/guest-bench.sh and
# guest-scale.sh; sourced after tests/lib/guest.sh): one server and client
# pair, and the figures of its result table.

PORT=18515
# The time limit of each perftest process (seconds), unless set.
PT_TMO=${PT_TMO:-120}

# perftest converts its time stamps with a CPU frequency it calibrates at
# start (rdtsc against gettimeofday).  On a loaded host the vCPU can be
# descheduled while it samples: it then says so on standard error and its
# figures are wrong (0.00 MB/s, inf or a latency many times too long).
CALIB='differs from nominal|Correlation coefficient|Conflicting CPU frequency'

# pt_column FILE NAME: the value in column NAME (BW_average, MsgRate,
# t_typical) of the first row of perftest's result table: the header starts
# with "#bytes"; names made of two words are joined first.
pt_column() {
	awk -v want="$2" '
	/^ *#bytes/ {
		h = $0
		gsub(/BW peak/, "BW_peak", h)
		gsub(/BW average/, "BW_average", h)
		gsub(/% percentile/, "%_percentile", h)
		n = split(h, f, " ")
		col = 0
		for (i = 1; i <= n; i++)
			if (index(f[i], want) == 1)
				col = i
		next
	}
	col && $1 ~ /^[0-9]+$/ && $col ~ /^[0-9.]+$/ { print $col; exit }' "$1"
}

# run_pt FILE SERVER_DEV SERVER_GID CLIENT_PREFIX CLIENT_DEV CLIENT_GID TOOL
# ARGS: one server and one client, each stopped after PT_TMO seconds;
# FILE.srv and FILE.cli keep their output, _s and _c their exit statuses
# (124: stopped).
run_pt() {
	timeout $PT_TMO $7 -F -p $PORT -d "$2" -x "$3" $8 >$1.srv 2>&1 &
	_p=$!
	wait_for 20 listening $PORT
	timeout $PT_TMO $4 $7 -F -p $PORT -d "$5" -x "$6" $8 10.0.0.1 >$1.cli 2>&1
	_c=$?
	wait $_p
	_s=$?
}
