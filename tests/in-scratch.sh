#!/bin/sh
# SPDX-License-Identifier: MIT
# in-scratch.sh PROGRAM ARGS... - run a unit program in a fresh scratch
# directory, remove the directory afterwards, keep the program's exit code.
here=$(cd "$(dirname "$0")" && pwd)
d=$(mktemp -d "${TMPDIR:-/tmp}/jitunwind-unit.XXXXXX") || exit 2
cd "$d" || exit 2
touch .start
# jitdumps of tests that open every channel land here, not in ~/.debug/jit
export JITDUMPDIR="$d"
"$@"
rc=$?
# perf maps of this program and the processes it forked, once they are
# gone (the reaper that runs it lists them: never another run's)
sh "$here/../scripts/reap-perf-maps.sh" "$d/.start"
cd / && rm -rf "$d"
exit $rc
