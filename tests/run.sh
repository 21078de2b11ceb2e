#!/bin/sh
# run.sh BUILD - run every test: unit programs ($BUILD/tests/test-*) and
# drivers (tests/t-*.sh).  Prints one line per test and a summary; exits 1 if
# any test failed.  Logs are kept in $BUILD/test-logs.
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
export BUILD
LOGS=$BUILD/test-logs
rm -rf "$LOGS"; mkdir -p "$LOGS"
pass=0; fail=0; skip=0; failed=""
# Each test runs under the reaper: what it leaves running fails it.
REAPER=${JU_REAPER:-$BUILD/tools/reaper}
[ -x "$REAPER" ] || REAPER=

run_one() { # name command...
	name=$1; shift
	log=$LOGS/$name.log
	${REAPER:+"$REAPER" -n "$name" --} timeout -k 10 600 "$@" > "$log" 2>&1
	rc=$?
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS  %s\n' "$name" ;;
	77) skip=$((skip + 1)); printf 'SKIP  %s: %s\n' "$name" "$(grep -i '^skip' "$log" | tail -1 | cut -d' ' -f2-)" ;;
	*) fail=$((fail + 1)); failed="$failed $name"
	   printf 'FAIL  %s (exit %s)\n' "$name" "$rc"; sed 's/^/      | /' "$log" | tail -25 ;;
	esac
}

# Unit programs run in a scratch directory of their own.
for t in "$BUILD"/tests/test-*; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" sh "$ROOT/tests/in-scratch.sh" "$t"
done
for t in "$ROOT"/tests/t-*.sh; do
	[ -f "$t" ] || continue
	run_one "$(basename "$t" .sh)" sh "$t"
done
echo "---- $pass passed, $fail failed, $skip skipped"
[ -n "$failed" ] && echo "---- failed:$failed"
[ $fail -eq 0 ]
