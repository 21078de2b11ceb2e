#!/bin/sh
# SPDX-License-Identifier: MIT
# check.sh BUILD COMMAND... - what `make check` runs around the test suites.
#
# COMMAND (make check-run: the build, then tests/run.sh) runs
#  - under the reaper, so a process it leaves running fails the check
#    (the runner also puts every single test under one);
#  - under opentrace, which lists every file the build and the tests open.
# scripts/check-deps.py then fails if one of those files belongs to a
# package that install-deps.sh does not install (a fresh machine would lack
# it), and shows that it would catch a package dropped from the list.  The
# files of this run join those of earlier runs in the same build directory
# (BUILD/deps/all.txt), so an incremental check still covers the build;
# after removing a dependency, check from a clean tree.
#
# The closing line sums the runner's tests and these two checks:
# "check: N passed, N failed, N skipped".
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$1; shift
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
D=$BUILD/deps
mkdir -p "$D"
rm -f "$D/run.txt" "$D/counts"

rc=0
JU_TEST_COUNTS=$D/counts "$BUILD/tools/opentrace" -o "$D/run.txt" -- \
	"$BUILD/tools/reaper" -n "make check" -- "$@" || rc=1
# shellcheck disable=SC2046
set -- $(cat "$D/counts" 2>/dev/null || echo 0 0 0)
p=$1 f=$2 s=$3
# a build that failed, or a process left running: one more failure
[ $rc -eq 0 ] || [ "$f" -gt 0 ] || f=$((f + 1))

# Keep what a later, incremental run would not see again: not the scratch
# files, not the tree.
if ! grep -q '^#' "$D/run.txt"; then
	cat "$D/run.txt" "$D/all.txt" 2>/dev/null | grep -v -e '^/tmp/' -e "^$ROOT/" | sort -u > "$D/all.tmp" &&
		mv "$D/all.tmp" "$D/all.txt"
fi
count() {
	case $1 in
	0) p=$((p + 1)) ;;
	77) s=$((s + 1)) ;;
	*) f=$((f + 1)); rc=1 ;;
	esac
}
traces="$D/run.txt"
[ -f "$D/all.txt" ] && traces="$traces $D/all.txt"
# shellcheck disable=SC2086
python3 "$ROOT/scripts/check-deps.py" $traces
count $?
# shellcheck disable=SC2086
python3 "$ROOT/scripts/check-deps.py" --drop libclang-rt-19-dev --expect-missing libclang-rt-19-dev $traces
count $?
echo "check: $p passed, $f failed, $s skipped"
exit $rc
