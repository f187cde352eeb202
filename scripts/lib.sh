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

# pin KIND NAME: the version scripts/pins gives that kernel series or root.
pin() {
	awk -v k="$1" -v n="$2" '$1 == k && $2 == n { print $3; f = 1 }
		END { exit !f }' "$VHCA_TOP/scripts/pins" ||
		die "scripts/pins has no '$1 $2' line"
}

# apt_mirror: the Debian mirror this machine's own apt sources name (the
# first URIs of a deb822 file, else the first deb line).
apt_mirror() {
	local m
	m=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v -- '-security' | head -n1)
	[ -n "$m" ] || m=$(awk '$1 == "deb" { print $2; exit }' \
		/etc/apt/sources.list 2>/dev/null)
	[ -n "$m" ] || die "no Debian mirror in /etc/apt/sources.list{,.d}"
	echo "$m"
}

# progress WHAT PID [HOW-FAR]: while PID runs, say every 30 seconds what it
# does, for how long, and how far it has got (the output of the shell
# command HOW-FAR); then wait for it and return its status.  make check
# sets VHCA_PROGRESS_FD to its console, where the lines are KTAP
# diagnostics; elsewhere they go to standard error.
progress() {
	local what=$1 pid=$2 how=${3:-} t0=$SECONDS n far line
	while kill -0 "$pid" 2>/dev/null; do
		for n in $(seq 30); do
			kill -0 "$pid" 2>/dev/null || break 2
			sleep 1
		done
		far=
		[ -n "$how" ] && far=", $(eval "$how" 2>/dev/null)"
		line="$what: $((SECONDS - t0)) s$far"
		if [ -n "${VHCA_PROGRESS_FD:-}" ]; then
			echo "# vhca: $line" >&"$VHCA_PROGRESS_FD"
		else
			log "$line"
		fi
	done
	wait "$pid"
}

# in_root ROOT COMMAND...: run COMMAND chrooted in ROOT (a distro-root.sh
# root), as root, with /proc mounted in a mount namespace of its own, gone
# when the command ends.
in_root() {
	as_root unshare --mount --propagation private -- sh -c \
		'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$@"
}
