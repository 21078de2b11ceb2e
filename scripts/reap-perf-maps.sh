#!/bin/sh
# reap-perf-maps.sh MARKER - remove the /tmp/perf-PID.map files written
# since MARKER (a file whose modification time marks the start) by
# processes that are gone.  The library writes one map per process and, as
# perf expects, leaves it behind; the tests, benchmarks and the demo run
# many short processes and clean up after them with this.
[ -e "${1:-}" ] || { echo "usage: reap-perf-maps.sh MARKER" >&2; exit 2; }
# File times tick in jiffies: a map created within a tick of MARKER has the
# same time, so compare with a second before it.
ref=$(mktemp) || exit 1
touch -r "$1" -d "-1 second" "$ref"
for m in $(find /tmp -maxdepth 1 -name 'perf-*.map' -newer "$ref" 2>/dev/null); do
	p=${m#/tmp/perf-}
	p=${p%.map}
	kill -0 "$p" 2>/dev/null || rm -f "$m"
done
rm -f "$ref"
exit 0
