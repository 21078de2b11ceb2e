#!/bin/sh
# run.sh - run every tinyjit test driver and sum their results.
#   run.sh DRIVER...      (each exits 0 pass, 77 skipped entirely, else fail)
# A driver that runs longer than TJ_TEST_TIMEOUT seconds (default 600) is
# killed and counts as failed: a hang (an unwinder looping on bad CFI, say)
# must not stall the whole check.
: "${TJ_TEST_B:?}"
rm -rf "$TJ_TEST_B/results"
status=0
# Each driver runs under the reaper (JU_REAPER, set by make): what it
# leaves running fails it.
REAPER=${JU_REAPER:-}
[ -x "$REAPER" ] || REAPER=
for d in "$@"; do
	${REAPER:+"$REAPER" -n "$(basename "$d" .sh)" --} timeout -k 10 "${TJ_TEST_TIMEOUT:-600}" sh "$d"
	rc=$?
	[ $rc -eq 124 ] && echo "$(basename "$d" .sh): killed after ${TJ_TEST_TIMEOUT:-600} s" >&2
	name=$(basename "$d" .sh)
	if [ $rc -eq 77 ]; then
		mkdir -p "$TJ_TEST_B/results"
		echo "0 0 1" >"$TJ_TEST_B/results/$name"
	elif [ $rc -ne 0 ]; then
		status=1
		[ -f "$TJ_TEST_B/results/$name" ] || echo "0 1 0" >"$TJ_TEST_B/results/$name"
	fi
done
cat "$TJ_TEST_B"/results/* | awk '{p+=$1; f+=$2; s+=$3} END {printf "tinyjit: %d passed, %d failed, %d skipped\n", p, f, s}'
exit $status
