# SPDX-License-Identifier: MIT
# jitstack record where perf_event_open(2) fails with EACCES (tests/noperf.c:
# a seccomp filter, as containers install): record says perf events were
# refused and that it samples with ptrace instead, exits 0, and its profile
# still finds tj:hot the hottest JIT function of progs/hot.tj.  Without the
# filter it samples with perf events (no such message).
. "$(dirname "$0")/lib.sh"
need_file "$TJ" "make tinyjit"
need_file "$JTB/noperf" "make jitstack-check"
"$TJ" --frames=fp --cfi=region --publish=gdb "$ROOT/jitstack/tests/progs/hot.tj" 100000000 > /dev/null 2>&1 &
pid=$!
CLEANUP_PIDS="${CLEANUP_PIDS:-} $pid"
sleep 0.3
"$JTB/noperf" true || skip "seccomp filters cannot be installed here"
limit 60 "$JTB/noperf" "$JS" record -p $pid -F 200 -d 1 --stats -o prof.txt 2> rec.err
rc=$?
[ $rc -eq 0 ] || { cat rec.err; fail "record under the filter exited $rc"; }
grep -q "perf_event_open on process $pid refused" rec.err || { cat rec.err; fail "no word of the refusal"; }
grep -q "sampling with ptrace instead" rec.err || { cat rec.err; fail "no word of the fallback"; }
grep -q "thread stopped (interrupt" rec.err || { cat rec.err; fail "--stats are not ptrace's"; }
top=$(awk '{ n = $NF; $NF = ""; k = split($0, f, ";"); l = f[k]; sub(/ +$/, "", l); if (l ~ /^tj:/) c[l] += n }
	END { for (l in c) print c[l], l }' prof.txt | sort -rn | head -1 | cut -d' ' -f2)
[ "$top" = tj:hot ] || { cat prof.txt; fail "after the fallback the hottest JIT leaf is '$top'"; }
limit 60 "$JS" record -p $pid -F 200 -d 0.5 --stats -o prof2.txt 2> rec2.err || { cat rec2.err; fail "record exited $?"; }
grep -q "ptrace instead" rec2.err && { cat rec2.err; fail "without the filter, record fell back too"; }
grep -q "stats: perf events" rec2.err || { cat rec2.err; fail "without the filter, no perf events"; }
pass "perf_event_open refused (seccomp, EACCES): record says so, samples with ptrace, finds tj:hot"
