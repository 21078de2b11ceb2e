#!/bin/sh
# in-scratch.sh PROGRAM ARGS... - run a unit program in a fresh scratch
# directory, remove the directory afterwards, keep the program's exit code.
d=$(mktemp -d "${TMPDIR:-/tmp}/jitunwind-unit.XXXXXX") || exit 2
cd "$d" || exit 2
# jitdumps of tests that open every channel land here, not in ~/.debug/jit
export JITDUMPDIR="$d"
"$@"
rc=$?
cd / && rm -rf "$d"
exit $rc
