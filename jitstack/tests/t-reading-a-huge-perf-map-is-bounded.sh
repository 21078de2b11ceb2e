# A target's perf map can be as large as its owner likes, and cost no disk
# (a sparse file of 16 GB): jitstack reads no more than its bounds
# (jitstack(1), --max-read, --max-read-time), says so, and answers ^C
# while it reads.
#  - a dump of threads (tests/threads.c) with such a map ends within 30 s,
#    warning of the bound on bytes; with --max-read 16G --max-read-time
#    0.2, of the bound
#    on time;
#  - record of that process and a spinning one (latethread) together ends
#    within 30 s of -d 2, and the spinning one's main_spin is in the
#    profile: one target's map does not hold the others up;
#  - SIGINT to record of that process alone while it reads the map (its
#    first read: with several processes it would be cut into pieces of a
#    round, record/targets.h) ends it within 3 s, exit 1.
# Before the bounds, the dump read the whole 16 GB (about 100 s here).
#
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
need_file "$JTB/threads" "make jitstack-check"
need_file "$JTB/latethread" "make jitstack-check"
start_child th.out "$JTB/threads"
P=$CHILD_PID
MAP=/tmp/perf-$P.map
truncate -s 16G "$MAP" || skip "cannot make a sparse file of 16 GB in /tmp"
trap 'rm -f "$MAP"; cleanup' EXIT
limit 30 "$JS" -p "$P" > out 2> err
rc=$?
[ $rc = 0 ] || { cat err; fail "the dump did not end well within 30 s (exit $rc)"; }
grep -q "read no further than 1024 MiB, the bound (--max-read)" err || { cat err; fail "no word of the bound on bytes"; }
grep -q "park" out || { cat out; fail "no stacks"; }
note "dump: $(grep -c '^TID' out) threads, $(grep -o 'read no further[^;]*' err)"
limit 30 "$JS" -p "$P" --max-read 16G --max-read-time 0.2 > out 2> err || { cat err; fail "the dump with --max-read-time 0.2 failed"; }
grep -q "still reading after 0.2 s, the bound (--max-read-time)" err || { cat err; fail "no word of the bound on time"; }
note "dump --max-read-time 0.2: $(grep -o 'still reading[^;]*' err)"
start_child lt.out "$JTB/latethread" -1 0 0
S=$CHILD_PID
t0=$(date +%s)
limit 60 "$JS" record --mode ptrace -p "$P,$S" -F 200 -d 2 -o prof 2> rec.err || { cat rec.err; fail "record failed"; }
took=$(($(date +%s) - t0))
[ $took -le 30 ] || fail "record -d 2 took $took s"
grep -q "main_spin" prof || { cat prof rec.err; fail "the spinning process was not sampled"; }
note "record of both: $took s, main_spin sampled"
# the whole 16 GB may be read: the read is under way when ^C comes
"$JS" record --mode ptrace -p "$P" -F 200 -d 30 --max-read 16G --max-read-time 60 -o prof2 2> int.err &
J=$!
sleep 0.3
kill -INT $J
t0=$(date +%s)
wait $J
rc=$?
took=$(($(date +%s) - t0))
[ $took -le 3 ] || fail "record took $took s to answer SIGINT"
[ $rc = 1 ] || { cat int.err; fail "record interrupted while reading exited $rc, want 1"; }
[ ! -e prof2 ] || fail "an interrupted record wrote its profile"
note "SIGINT while reading: exit 1 after $took s"
pass "a 16 GB perf map is read within its bounds, with a warning, and ^C is answered"
