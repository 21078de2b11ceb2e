#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh [-b BUILD] [SUITE | TEST]... - the one test runner of the tree.
#
# Suites:
#   lib       the library: unit programs ($BUILD/tests/test-*, built from
#             tests/unit/) and drivers (tests/t-*.sh)
#   tinyjit   tinyjit/tests/run-*.sh
#   jitstack  jitstack/tests/t-*.sh
#   luajit    integrations/luajit/tests/t-*.sh (the LuaJIT module)
#   cpython   integrations/cpython/tests/t-*.sh (CPython's JIT, make cpython)
#   matrix    the unwind matrix in its check form (tests/matrix/check.sh)
# With no argument every suite runs, in that order.  Any other argument
# names one test of any suite, as it is listed: tests/run.sh
# t-gdb-names-jit-frames-live.  `make check` builds what the tests need.
#
# A test passes when it exits 0, is skipped when it exits 77 (its last line
# that starts with "skip" says why) and fails otherwise; it also fails when
# it runs past its time limit or leaves a process running (the reaper).
# One line per test, the log's tail for a failure; logs in
# $BUILD/test-logs/SUITE/NAME.log.  The closing line reads
# "WORD: N passed, N failed, N skipped" (WORD: the suite or test named
# alone, else "tests"), and JU_TEST_COUNTS, if set, names a file that gets
# "PASSED FAILED SKIPPED".  Exit 1 if any test failed.
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=build
if [ "${1:-}" = -b ]; then BUILD=$2; shift 2; fi
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
export BUILD
TIMEOUT=${JU_TEST_TIMEOUT:-600}
REAPER=${JU_REAPER:-$BUILD/tools/reaper}
[ -x "$REAPER" ] || REAPER=
SUITES="lib tinyjit jitstack luajit cpython matrix"
cd "$ROOT" || exit 2

# The tests of a suite, one "NAME COMMAND..." line each.
list() {
	case $1 in
	lib)
		for t in "$BUILD"/tests/test-*; do
			[ -x "$t" ] && echo "${t##*/} sh $ROOT/tests/in-scratch.sh $t"
		done
		for t in tests/t-*.sh; do echo "$(basename "$t" .sh) sh $t"; done ;;
	tinyjit) for t in tinyjit/tests/run-*.sh; do echo "$(basename "$t" .sh) sh $t"; done ;;
	jitstack) for t in jitstack/tests/t-*.sh; do echo "$(basename "$t" .sh) sh $t"; done ;;
	luajit) for t in integrations/luajit/tests/t-*.sh; do echo "$(basename "$t" .sh) sh $t"; done ;;
	cpython) for t in integrations/cpython/tests/t-*.sh; do echo "$(basename "$t" .sh) sh $t"; done ;;
	matrix) echo "matrix-check sh tests/matrix/check.sh" ;;
	esac
}

pass=0; fail=0; skip=0; failed=""
run_one() { # SUITE NAME COMMAND...
	suite=$1 name=$2; shift 2
	mkdir -p "$BUILD/test-logs/$suite"
	log=$BUILD/test-logs/$suite/$name.log
	${REAPER:+"$REAPER" -n "$name" --} timeout -k 10 "$TIMEOUT" "$@" > "$log" 2>&1
	rc=$?
	[ $rc -eq 124 ] && echo "run.sh: killed after $TIMEOUT s" >> "$log"
	case $rc in
	0) pass=$((pass + 1))
	   # a driver that counts its own checks (tinyjit's) says how many
	   n=$(sed -n "s/^$name: \([0-9]*\) passed, 0 failed, \([0-9]*\) skipped\$/\1 checks, \2 skipped/p" "$log" |
		tail -1 | sed 's/, 0 skipped//')
	   part=$(grep -i '^skip' "$log" | head -1)
	   printf 'PASS  %s%s%s\n' "$name" "${n:+ ($n)}" "${part:+ (in part: $part)}" ;;
	77) skip=$((skip + 1))
	    printf 'SKIP  %s: %s\n' "$name" "$(grep -i '^skip' "$log" | tail -1 | cut -d' ' -f2-)" ;;
	*) fail=$((fail + 1)); failed="$failed $name"
	   printf 'FAIL  %s (exit %s)\n' "$name" "$rc"; sed 's/^/      | /' "$log" | tail -30 ;;
	esac
}

run_suite() { # SUITE [NAME]: every test of SUITE, or the one called NAME
	# a list of its own: two runs on one build directory do not share it
	lst=$(mktemp "$BUILD/test-logs/.list.XXXXXX") || return
	list "$1" > "$lst" || { rm -f "$lst"; return 1; }
	while read -r name cmd; do
		[ -z "${2:-}" ] || [ "$name" = "$2" ] || continue
		# shellcheck disable=SC2086
		run_one "$1" "$name" $cmd < /dev/null
		found=1
	done < "$lst"
	rm -f "$lst"
}

mkdir -p "$BUILD/test-logs"
[ $# -eq 0 ] && set -- $SUITES
word=tests
[ $# -eq 1 ] && word=$1
for arg in "$@"; do
	case " $SUITES " in
	*" $arg "*) rm -rf "$BUILD/test-logs/$arg"; run_suite "$arg"; continue ;;
	esac
	found=
	for s in $SUITES; do
		[ -z "$found" ] && run_suite "$s" "$arg"
	done
	[ -n "$found" ] || { echo "run.sh: no test or suite called '$arg'" >&2; fail=$((fail + 1)); }
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$word: $pass passed, $fail failed, $skip skipped"
# make check adds its own checks to these and closes with the sum
[ -n "${JU_TEST_COUNTS:-}" ] && echo "$pass $fail $skip" > "$JU_TEST_COUNTS"
[ $fail -eq 0 ]
