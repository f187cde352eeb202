# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Test selection, shared by check.sh (bash, on the host) and the guest
# library (sh, in the VM); sourced, never run.
#
# VHCA_T holds space-separated shell globs (make check T='rc/* cm'), matched
# against the names the results print: host/STAGE, kunit/SUITE/CASE,
# stock/SCRIPT/SCENARIO, stock-6.1/SCRIPT/SCENARIO and
# stock-7.2/SCRIPT/SCENARIO (the smoke sets of Debian 12's default kernel
# and of sid's), trixie/SCRIPT/SCENARIO and sid/SCRIPT/SCENARIO (6.12 and
# 7.2 with the trixie and sid userlands) and debug/SCRIPT/SCENARIO.  A
# pattern that names no kind (host, kunit, stock, stock-6.1, stock-7.2,
# trixie, sid, debug) matches on every kernel,
# against SCRIPT/SCENARIO.  A name is selected when a pattern matches it or a name
# above it (rc selects rc/lossy), or something below it (kunit/vhca_qp/x
# selects kunit, which must run for it).  An empty VHCA_T selects all.

# t_selected NAME: NAME (host/..., kunit/..., stock/rc, stock/rc/lossy) is
# selected by VHCA_T.
t_selected() {
	[ -n "${VHCA_T:-}" ] || return 0
	_ts_hit=1
	set -f
	for _ts_p in $VHCA_T; do
		_ts_n=$1
		case "$_ts_p" in
		host | host/* | kunit | kunit/* | stock | stock/* | stock-[0-9]* | \
			trixie | trixie/* | sid | sid/* | debug | debug/*) ;;
		*)
			case "$1" in
			stock/* | stock-[0-9]*/* | trixie/* | sid/* | debug/*) _ts_n=${1#*/} ;;
			stock | stock-[0-9]* | trixie | sid | debug) _ts_n= ;;
			*) continue ;;
			esac
			;;
		esac
		# As many leading components of the pattern as NAME has
		# (without a process: the guest scripts select every scenario).
		_ts_head= _ts_rest=$_ts_p _ts_m=$_ts_n
		while :; do
			_ts_head=${_ts_head:+$_ts_head/}${_ts_rest%%/*}
			case "$_ts_m" in
			*/*) _ts_m=${_ts_m#*/} ;;
			*) break ;;
			esac
			case "$_ts_rest" in
			*/*) _ts_rest=${_ts_rest#*/} ;;
			*) break ;;
			esac
		done
		# shellcheck disable=SC2254
		case "$_ts_n" in
		"" | $_ts_p | $_ts_p/* | $_ts_head)
			_ts_hit=0
			break
			;;
		esac
	done
	set +f
	return $_ts_hit
}
