#!/bin/sh
# SPDX-License-Identifier: MIT
# reap-perf-maps.sh MARKER - remove the /tmp/perf-PID.map files written
# since MARKER (a file whose modification time marks the start) by this
# run's processes that are gone.  The library writes one map per process
# and, as perf expects, leaves it behind; the tests, benchmarks and the
# demo run many short processes and clean up after them with this.
#
# "This run's": several trees may run their tests at once, and a map whose
# process is gone may be another run's, which a core test of theirs still
# reads.  So only the PIDs listed in the file JU_PERF_MAP_PIDS names count:
# tests/tools/reaper, which runs every test (tests/run.sh) and the scripts
# that call this one, lists there each process below it that had a perf
# map, while that process lived.  Without the list, nothing is removed.
[ -e "${1:-}" ] || { echo "usage: reap-perf-maps.sh MARKER" >&2; exit 2; }
list=${JU_PERF_MAP_PIDS:-}
if [ -z "$list" ] || [ ! -r "$list" ]; then
	echo "reap-perf-maps.sh: no list of this run's processes (JU_PERF_MAP_PIDS: run under tests/tools/reaper): perf maps left in /tmp" >&2
	exit 0
fi
# File times tick in jiffies: a map created within a tick of MARKER has the
# same time, so compare with a second before it.
ref=$(mktemp) || exit 1
touch -r "$1" -d "-1 second" "$ref"
for p in $(sort -u "$list"); do
	m=/tmp/perf-$p.map
	[ -n "$(find "$m" -maxdepth 0 -newer "$ref" 2>/dev/null)" ] || continue
	# alive: /proc shows it (kill -0 fails on another user's process) or
	# kill -0 reaches it (/proc may hide others' processes)
	[ -e "/proc/$p" ] || kill -0 "$p" 2>/dev/null || rm -f "$m"
done
rm -f "$ref"
exit 0
