#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a long, quiet command (a kernel or QEMU build) and show that it is
# alive: a line on stderr when it starts, one every KPKEYS_ALIVE_INTERVAL
# seconds (default 60) with the time elapsed, and one when it ends.  Its
# own output and exit status pass through unchanged (stdout included, so
# that $(alive.sh ...) captures what the command prints there).
#
# usage: alive.sh <what> -- <command> [<argument> ...]
set -uo pipefail

[ $# -ge 3 ] && [ "$2" = -- ] || { echo "usage: $0 <what> -- <command> [<argument> ...]" >&2; exit 2; }
what=$1
shift 2
interval=${KPKEYS_ALIVE_INTERVAL:-60}
[[ $interval =~ ^[1-9][0-9]*$ ]] ||
	{ echo "alive.sh: KPKEYS_ALIVE_INTERVAL=$interval: expected a number of seconds" >&2; exit 2; }

start=$(date +%s)
elapsed() {
	local s=$(( $(date +%s) - start ))
	if [ "$s" -ge 60 ]; then
		printf '%d min %02d s' $((s / 60)) $((s % 60))
	else
		printf '%d s' "$s"
	fi
}

echo "$what ..." >&2
me=$$
# The ticker writes to stderr only, and its sleep is killed with it, so
# that nothing of it holds the command's stdout (a $(...) around this
# script) or stderr (a pipe) open after the command ends.
(
	exec >/dev/null
	trap 'kill "$nap" 2>/dev/null; exit 0' TERM
	while :; do
		sleep "$interval" &
		nap=$!
		wait "$nap"
		kill -0 "$me" 2>/dev/null || exit 0
		echo "$what: still running, $(elapsed)" >&2
	done
) &
ticker=$!
trap 'kill "$ticker" 2>/dev/null' EXIT

"$@"
rc=$?
kill "$ticker" 2>/dev/null
wait "$ticker" 2>/dev/null
if [ "$rc" = 0 ]; then
	echo "$what: done in $(elapsed)" >&2
else
	echo "$what: failed (exit status $rc) after $(elapsed)" >&2
fi
exit "$rc"
