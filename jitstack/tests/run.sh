#!/bin/sh
# run.sh BUILD - run jitstack's test drivers (jitstack/tests/t-*.sh), one
# line each, logs in $BUILD/jitstack/test-logs; the last line reads
# "jitstack: N passed, N failed, N skipped".  Exit 1 if any failed.
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
export BUILD
LOGS=$BUILD/jitstack/test-logs
rm -rf "$LOGS"; mkdir -p "$LOGS"
pass=0; fail=0; skip=0; failed=""
# Each test runs under the reaper: what it leaves running fails it.
REAPER=${JU_REAPER:-$BUILD/tools/reaper}
[ -x "$REAPER" ] || REAPER=
for t in "$ROOT"/jitstack/tests/t-*.sh; do
	name=$(basename "$t" .sh)
	log=$LOGS/$name.log
	${REAPER:+"$REAPER" -n "$name" --} timeout -k 10 600 sh "$t" > "$log" 2>&1
	rc=$?
	case $rc in
	0) pass=$((pass + 1)); printf 'PASS  %s\n' "$name" ;;
	77) skip=$((skip + 1)); printf 'SKIP  %s: %s\n' "$name" "$(grep '^skip' "$log" | tail -1 | cut -d' ' -f2-)" ;;
	*) fail=$((fail + 1)); failed="$failed $name"
	   printf 'FAIL  %s (exit %s)\n' "$name" "$rc"; sed 's/^/      | /' "$log" | tail -30 ;;
	esac
done
echo "jitstack: $pass passed, $fail failed, $skip skipped"
[ -n "$failed" ] && echo "jitstack: failed:$failed"
[ $fail -eq 0 ]
