# SPDX-License-Identifier: MIT
# jitstack record -p L,B -d 2.5 on tests/latethread.c (L: spins in
# main_spin, exits 700 ms after it is ready) and tinyjit on progs/hot.tj
# (B): in each record mode, L's exit ends only its part: record says so
# and goes on for the whole duration (it does not end at L's exit), exits
# 0 and says one of the two processes exited; the profile holds L's
# main_spin and B's tj:hot, each under its process's frame, and B, sampled
# throughout, has well over twice L's samples (it ran 2.5 s to L's 0.7).
# Then with both exiting (L and a second latethread, 700 and 1000 ms)
# record ends soon after the last exit, well before -d.
. "$(dirname "$0")/lib.sh"
need_file "$TJ" "make tinyjit"
need_file "$JTB/latethread" "make jitstack-check"
"$TJ" --frames=fp --cfi=region --publish=gdb "$ROOT/jitstack/tests/progs/hot.tj" 1000000000 > /dev/null 2>&1 &
b=$!
CLEANUP_PIDS="${CLEANUP_PIDS:-} $b"
sleep 0.3
count_of() { awk -v p="$2" '{ split($0, f, ";"); if (f[1] == p) s += $NF } END { print s + 0 }' "$1"; }
for rm in $RECORD_MODES; do
	start_child lt.out "$JTB/latethread" -1 0 700
	l=$CHILD_PID
	t0=$(date +%s.%N)
	limit 60 "$JS" record --mode $rm -p $l,$b -F 200 -d 2.5 -o prof.txt 2> rec.err
	rc=$?
	took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	[ $rc -eq 0 ] || { cat rec.err; fail "[$rm] record exited $rc"; }
	grep -q "process $l (latethread) exited after .*; recording the others" rec.err || { cat rec.err; fail "[$rm] no word of L's exit"; }
	grep -q "(1 of 2 processes exited)" rec.err || { cat rec.err; fail "[$rm] the closing line does not count L's exit"; }
	awk -v t="$took" 'BEGIN { exit !(t >= 2.3) }' || { cat rec.err; fail "[$rm] record ended after $took s, before -d 2.5"; }
	grep -q "^latethread-$l;latethread;.*;main_spin " prof.txt || { head -5 prof.txt; fail "[$rm] no main_spin under L's frame"; }
	grep -q "^tinyjit-$b;tinyjit;.*;tj:hot " prof.txt || { head -5 prof.txt; fail "[$rm] no tj:hot under B's frame"; }
	nl=$(count_of prof.txt latethread-$l)
	nb=$(count_of prof.txt tinyjit-$b)
	[ "$nb" -gt $((2 * nl)) ] || fail "[$rm] B has $nb samples, L $nl: B was not sampled after L's exit"
	kill_tree $l
	note "[$rm] L exited, record went on for $took s; L $nl samples, B $nb"

	start_child lt1.out "$JTB/latethread" -1 0 700
	l1=$CHILD_PID
	start_child lt2.out "$JTB/latethread" -1 0 1000
	l2=$CHILD_PID
	t0=$(date +%s)
	limit 60 "$JS" record --mode $rm -p $l1,$l2 -F 200 -d 30 -o both.txt 2> rec.err
	rc=$?
	took=$(($(date +%s) - t0))
	[ $rc -eq 0 ] || { cat rec.err; fail "[$rm] record of two exiting processes exited $rc"; }
	[ $took -lt 10 ] || fail "[$rm] record took $took s after both processes exited"
	grep -q "(2 of 2 processes exited)" rec.err || { cat rec.err; fail "[$rm] the closing line does not count both exits"; }
	for p in $l1 $l2; do
		grep -q "^latethread-$p;.*;main_spin " both.txt || { cat both.txt; fail "[$rm] no main_spin of $p"; }
	done
	kill_tree $l1 $l2
done
pass "record -p L,B: L's exit ends its part only, B is recorded to the end; all gone ends the run ($RECORD_MODES)"
