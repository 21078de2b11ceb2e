# perf record on hot.py with the perf map (JITUNWIND=default,perfmap): the
# map names hot's trace "py:hot (hot.py:ENTER)", ENTER the line the trace
# starts at ("# mark: enter": the loop's backward jump), and the code of
# small() inlined into it "py:small <- py:hot (hot.py:ENTER)"; at least
# 50 user-space samples are named from it (the rest of the loop's time is
# the C of os.getpid and the allocator's), and fewer than 1 % are [unknown]
# (none in most runs; a SAN=1 run once had 2 of 900).  Baseline, which
# must fail: the stock JIT writes no map, no sample names a Python function
# and its trace's samples, at least 5 %, are [unknown].  Samples are the
# leaves (perf script -G): the executors keep no frame pointer.
#
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
need_cmd perf
enter=$(mark enter)
CLEANUP_MAPS=
trap 'rm -f $CLEANUP_MAPS; cleanup' EXIT INT TERM

record() { # NAME PYTHON: perf.data as NAME.data, samples as NAME.txt; sets pid
	JITUNWIND=default,perfmap perf record -q -e cpu-clock:u -F 999 -o "$1.data" -- "$2" hot.py 1000000 \
		> hot.out 2>&1 || { cat hot.out; skip "perf record failed (permissions? perf_event_paranoid)"; }
	pid=$(perf script -i "$1.data" -F pid 2>/dev/null | head -1 | tr -d ' ')
	[ -n "$pid" ] || fail "$1: no samples"
	CLEANUP_MAPS="$CLEANUP_MAPS /tmp/perf-$pid.map"
	perf script -G -i "$1.data" -F ip,sym 2>/dev/null > "$1.txt"
}
count() { # FILE: "named unknown all"
	awk -v h="py:hot (hot.py:$enter)" '{ all++ } index($0, h) { named++ } NF < 2 || /\[unknown\]/ { unknown++ }
		END { print named + 0, unknown + 0, all + 0 }' "$1"
}

record with "$PYRUN"
map=/tmp/perf-$pid.map
[ -f "$map" ] || fail "no $map"
grep -q " py:hot (hot.py:$enter)\$" "$map" || { cat "$map"; fail "hot's trace is not in $map"; }
grep -q " py:small <- py:hot (hot.py:$enter)\$" "$map" || { cat "$map"; fail "small() inlined in hot's trace is not in $map"; }
echo "$map: $(wc -l < "$map") entries"
set -- $(count with.txt)
echo "samples naming hot's trace: $1 of $3, unknown: $2"
[ "$3" -ge 100 ] || fail "only $3 samples"
[ "$1" -ge 50 ] || fail "only $1 samples name hot's trace"
[ $(($2 * 100)) -lt "$3" ] || { awk 'NF < 2 || /\[unknown\]/' with.txt | head; fail "$2 samples are [unknown]"; }

touch started
record without "$PY_STOCK"
[ ! "/tmp/perf-$pid.map" -nt started ] || fail "the stock JIT wrote /tmp/perf-$pid.map"
set -- $(count without.txt)
[ "$1" = 0 ] && ! grep -q 'py:' without.txt || fail "stock JIT: a sample names a Python function"
[ $(($2 * 20)) -ge "$3" ] || fail "stock JIT: only $2 samples are [unknown]: the trace did not run"
echo "stock JIT: none of $3 samples names a Python function, $2 are [unknown], as it must"
pass "perf names the samples in hot's trace from the perf map; the stock JIT's are unnamed"
