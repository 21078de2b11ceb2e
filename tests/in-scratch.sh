#!/bin/sh
# in-scratch.sh PROGRAM ARGS... - run a unit program in a fresh scratch
# directory, remove the directory afterwards, keep the program's exit code.
d=$(mktemp -d "${TMPDIR:-/tmp}/jitunwind-unit.XXXXXX") || exit 2
cd "$d" || exit 2
touch .start
# jitdumps of tests that open every channel land here, not in ~/.debug/jit
export JITDUMPDIR="$d"
"$@"
rc=$?
# perf maps of this program and the processes it forked, once they are gone
for m in $(find /tmp -maxdepth 1 -name 'perf-*.map' -newer "$d/.start" 2>/dev/null); do
	p=${m#/tmp/perf-}; p=${p%.map}
	kill -0 "$p" 2>/dev/null || rm -f "$m"
done
cd / && rm -rf "$d"
exit $rc
