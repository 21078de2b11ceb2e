# SPDX-License-Identifier: MIT
# jitstack record (perf events) on tinyjit running progs/hot.tj at 2 kHz,
# held still with SIGSTOP for a second so the kernel's ring buffer fills:
# the kernel drops samples, and record counts them (PERF_RECORD_LOST) in
# --stats and on stderr, says so in the pprof profile's comments, and
# otherwise carries on: exit 0, a profile with tj:hot the hottest leaf.
. "$(dirname "$0")/lib.sh"
need_file "$TJ" "make tinyjit"
need_file "$JTB/pprofdump" "make jitstack-check"
case " $RECORD_MODES " in *" perf "*) ;; *) skip "perf mode is not among RECORD_MODES ($RECORD_MODES)" ;; esac
"$TJ" --frames=fp --cfi=region --publish=gdb "$ROOT/jitstack/tests/progs/hot.tj" 100000000 > /dev/null 2>&1 &
pid=$!
CLEANUP_PIDS="${CLEANUP_PIDS:-} $pid"
sleep 0.3
# (not under limit: SIGSTOP must reach jitstack itself; it ends after -d)
"$JS" record --mode perf -p $pid -F 2000 -d 3 --stats --format pprof -o prof.pb.gz 2> rec.err &
rec=$!
CLEANUP_PIDS="$CLEANUP_PIDS $rec"
sleep 0.8
kill -STOP $rec
sleep 1.2
kill -CONT $rec
wait $rec
rc=$?
[ $rc -eq 0 ] || { cat rec.err; fail "record exited $rc"; }
lost=$(sed -n 's/.* samples, \([0-9]*\) lost (.*/\1/p' rec.err)
[ "${lost:-0}" -ge 20 ] || { cat rec.err; fail "no sample counted as lost while record stood still"; }
grep -q "^jitstack: $lost samples lost" rec.err || { cat rec.err; fail "stderr does not say samples were lost"; }
"$JTB/pprofdump" prof.pb.gz > dump || { cat dump; fail "the pprof file does not decode"; }
grep -q "^comment jitstack: $lost samples lost" dump || { cat dump; fail "no pprof comment on the lost samples"; }
top=$(awk '$1 == "leaf" && $2 ~ /^tj:/ {print $3, $2}' dump | sort -rn | head -1 | cut -d' ' -f2)
[ "$top" = tj:hot ] || { cat dump; fail "the hottest JIT leaf is '$top'"; }
pass "$lost samples lost to a full ring, counted and said (stderr, pprof comment); the profile is still right"
