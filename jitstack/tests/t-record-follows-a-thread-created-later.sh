# SPDX-License-Identifier: MIT
# jitstack record on tests/latethread.c, whose thread "late" is created
# 400 ms after record is seen watching the process (its perf events open,
# or the process traced), spins in late_spin for 800 ms and exits while
# the main thread goes on spinning in main_spin: in each record mode the
# profile holds late_spin under the thread "late" and main_spin under the
# main thread (the name the thread gives itself once it runs, in most of
# its samples), and record goes on after the thread vanished.  In perf mode
# the thread is followed from its clone (--stats).
. "$(dirname "$0")/lib.sh"
need_file "$JTB/latethread" "make jitstack-check"

# watching TIMEOUT-PID TARGET-PID: record (the child of timeout) has perf events open or traces the
# target (a slow start, under SAN=1 say, must not see the thread as one
# that was there before it)
watching() {
	ls -l /proc/"$(pgrep -P "$1" | head -1)"/fd 2>/dev/null | grep -q 'perf_event' ||
		! grep -q '^TracerPid:[[:space:]]*0$' /proc/"$2"/status 2>/dev/null
}

for mode in $RECORD_MODES; do
	start_child lt.out "$JTB/latethread" 400 800 0 usr1
	# timeout itself, not a shell around it: its child is record
	timeout -k 5 60 "$JS" record --mode $mode -p "$CHILD_PID" -F 200 -d 3 --stats -o prof.txt 2> rec.err &
	rec=$!
	tries=0
	until watching $rec "$CHILD_PID"; do
		tries=$((tries + 1))
		[ $tries -lt 600 ] && kill -0 $rec 2>/dev/null || { cat rec.err; fail "[$mode] record never watched the process"; }
		sleep 0.05
	done
	sleep 0.2 # perf events are enabled after all are open
	kill -USR1 "$CHILD_PID"
	wait $rec
	rc=$?
	[ $rc -eq 0 ] || { cat rec.err; fail "[$mode] record exited $rc"; }
	late=$(awk '/^late;.*;late_spin / {n += $NF} END {print n + 0}' prof.txt)
	# the thread names itself once it runs: only the samples taken before
	# record read the name again (100 ms at most) may carry the old one
	anywhere=$(awk '/;late_spin / {n += $NF} END {print n + 0}' prof.txt)
	[ $((late * 2)) -ge "$anywhere" ] || { cat prof.txt; fail "[$mode] only $late of $anywhere samples of late_spin under the name the thread gave itself"; }
	main=$(awk '/^latethread;.*;main_spin / {n += $NF} END {print n + 0}' prof.txt)
	[ "$late" -ge 5 ] || { cat prof.txt rec.err; fail "[$mode] $late samples of late_spin in the thread 'late'"; }
	[ "$main" -ge 5 ] || { cat prof.txt rec.err; fail "[$mode] $main samples of main_spin in the main thread"; }
	grep -q "^late;.*main_spin" prof.txt && fail "[$mode] main_spin under the thread 'late'"
	if [ $mode = perf ]; then
		forks=$(sed -n 's/.* \([0-9]*\) threads followed from their clone.*/\1/p' rec.err)
		[ "${forks:-0}" -ge 1 ] || { cat rec.err; fail "[perf] the new thread was not followed from its clone"; }
	fi
	note "[$mode] late_spin $late samples in 'late' (of $anywhere), main_spin $main"
	kill_tree "$CHILD_PID"
done
pass "record follows a thread created after it started and goes on after it exits ($RECORD_MODES)"
