# jitstack record on tests/latethread.c, whose thread "late" is created
# 400 ms after record starts, spins in late_spin for 800 ms and exits while
# the main thread goes on spinning in main_spin: in each record mode the
# profile holds late_spin under the thread "late" and main_spin under the
# main thread, and record goes on after the thread vanished.  In perf mode
# the thread is followed from its clone (--stats).
. "$(dirname "$0")/lib.sh"
need_file "$JTB/latethread" "make jitstack-check"
for mode in $RECORD_MODES; do
	start_child lt.out "$JTB/latethread" 400 800 0
	limit 60 "$JS" record --mode $mode -p "$CHILD_PID" -F 200 -d 2.5 --stats -o prof.txt 2> rec.err
	rc=$?
	[ $rc -eq 0 ] || { cat rec.err; fail "[$mode] record exited $rc"; }
	late=$(awk '/^late;.*;late_spin / {n += $NF} END {print n + 0}' prof.txt)
	main=$(awk '/^latethread;.*;main_spin / {n += $NF} END {print n + 0}' prof.txt)
	[ "$late" -ge 5 ] || { cat prof.txt rec.err; fail "[$mode] $late samples of late_spin in the thread 'late'"; }
	[ "$main" -ge 5 ] || { cat prof.txt rec.err; fail "[$mode] $main samples of main_spin in the main thread"; }
	grep -q "^late;.*main_spin" prof.txt && fail "[$mode] main_spin under the thread 'late'"
	if [ $mode = perf ]; then
		forks=$(sed -n 's/.* \([0-9]*\) threads followed from their clone.*/\1/p' rec.err)
		[ "${forks:-0}" -ge 1 ] || { cat rec.err; fail "[perf] the new thread was not followed from its clone"; }
	fi
	note "[$mode] late_spin $late samples in 'late', main_spin $main"
	kill_tree "$CHILD_PID"
done
pass "record follows a thread created after it started and goes on after it exits ($RECORD_MODES)"
