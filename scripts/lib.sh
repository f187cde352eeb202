# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Shared settings of vhca's scripts; sourced, never run.

VHCA_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VHCA_CACHE=${VHCA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vhca}

die() {
	echo "vhca: $*" >&2
	exit 1
}

log() {
	echo "vhca: $*" >&2
}

# Run a command as root: directly when we are root, else through sudo.
as_root() {
	if [ "$(id -u)" = 0 ]; then
		"$@"
	else
		sudo "$@"
	fi
}
