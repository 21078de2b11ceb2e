# SPDX-License-Identifier: MIT
# jitstack record -p with a list, where some PIDs cannot be read (the
# behaviour jitstack(1) documents): each such PID is named on stderr with
# why ("not recording process N: ..."), the others are recorded and the
# exit status is 0; only when none can be read does record fail, with the
# first one's exit code.  The PIDs: a process that was reaped (no such
# process), a zombie, a process traced by strace (ptrace mode: not
# allowed), and, run as another user (nobody), root's process beside one
# of nobody's own (perf mode: the kernel refuses that one only, so perf
# events go on for the other).  Under a small open-file limit (ulimit -n
# 76), of six processes those that do not fit are left out and counted
# (--stats), the others recorded; a single process is still tried under
# any limit (and recorded, or a clear error names the limit).  A PID named twice is recorded once.  A list that is not one
# is a usage error.
. "$(dirname "$0")/lib.sh"
need_file "$TJ" "make tinyjit"
HOT=$ROOT/jitstack/tests/progs/hot.tj

expect_exit 2 "expected process ids separated by commas" "$JS" record -p 12,,13
expect_exit 2 "expected process ids separated by commas" "$JS" record -p 12,x
expect_exit 2 "expected process ids separated by commas" "$JS" record -p 12,
expect_exit 2 "not both" "$JS" record -p 12 --all
expect_exit 2 "--all belongs to 'jitstack record'" "$JS" --all
expect_exit 2 "record needs -p PID" "$JS" record

"$TJ" --frames=fp --cfi=region --publish=gdb "$HOT" 1000000000 > /dev/null 2>&1 &
a=$!
CLEANUP_PIDS="${CLEANUP_PIDS:-} $a"
sh -c 'exit 0' & gone=$!
wait $gone
sh -c 'exit 0' & gone2=$!
wait $gone2
start_zombie

for rm in $RECORD_MODES; do
	expect_exit 0 "not recording process $gone: no process $gone" \
		"$JS" record --mode $rm -p $gone,$a,$ZOMBIE -F 250 -d 1 --stats -o prof.txt
	grep -q "not recording process $ZOMBIE: .*zombie" err || { cat err; fail "[$rm] the zombie is not named"; }
	left=$(grep -c "not recording" err)
	grep -q "stats: processes: 1 recorded, 2 left out (2 gone" err || { cat err; fail "[$rm] --stats does not count the two left out"; }
	grep -q "^tinyjit-$a;tinyjit;.*;tj:hot [0-9]*$" prof.txt || { cat err; head -3 prof.txt; fail "[$rm] the readable process is not recorded"; }
	bad=$(grep -cv "^tinyjit-$a;" prof.txt)
	[ "$bad" -eq 0 ] || fail "[$rm] $bad stacks of other processes"

	expect_exit 3 "no process could be recorded \(the first: no process $gone\)" \
		"$JS" record --mode $rm -p $gone,$gone2 -d 1
	expect_exit 0 "stats: processes: 1 recorded, 0 left out" "$JS" record --mode $rm -p $a,$a -F 250 -d 0.5 --stats -o twice.txt
	[ "$(grep -c "stats: process $a (tinyjit)" err)" -eq 1 ] || { cat err; fail "[$rm] -p A,A records A twice"; }
	note "[$rm] $left PIDs left out, named; $(grep -c . prof.txt) stacks of $a recorded"
done

# over the open-file limit: six processes, descriptors for about three
# (64 are kept free; a process takes its perf events and the files libdwfl
# opens for it, about four: the program, and libc for its start)
pids=$a
for _ in 1 2 3 4 5; do
	"$TJ" --frames=fp --cfi=region --publish=gdb "$HOT" 1000000000 > /dev/null 2>&1 &
	pids="$pids,$!"
	CLEANUP_PIDS="$CLEANUP_PIDS $!"
done
sleep 0.3
for rm in $RECORD_MODES; do
	expect_exit 0 "not recording process [0-9]*: too few file descriptors left" \
		sh -c "ulimit -n 76 && exec \"\$0\" \"\$@\"" "$JS" record --mode $rm -p "$pids" -F 250 -d 0.5 --stats -o fds.txt
	n=$(sed -n 's/.*stats: processes: \([0-9]*\) recorded, [0-9]* left out (0 gone, 0 not allowed, \([0-9]*\) over.*/\1 \2/p' err)
	set -- $n
	[ "${1:-0}" -ge 1 ] && [ "${2:-0}" -ge 1 ] && [ $(($1 + $2)) -eq 6 ] ||
		{ cat err; fail "[$rm] ulimit -n 76: '$n' recorded and left out for the limit, not 6 in all"; }
	[ "$(cut -d';' -f1 fds.txt | sort -u | wc -l)" -eq "$1" ] || { cat err; fail "[$rm] ulimit -n 76: the profile does not hold the $1 processes recorded"; }
	note "[$rm] ulimit -n 76: $1 of 6 processes recorded, $2 left out for the limit"
done
for rm in $RECORD_MODES; do
	for n in 12 20; do
		limit 60 sh -c "ulimit -n $n && exec \"\$0\" \"\$@\"" "$JS" record --mode $rm -p $a -F 250 -d 0.3 -o one.txt 2> err
		rc=$?
		[ $rc -eq 0 ] || { [ $rc -eq 1 ] && grep -qE "ulimit -n|Too many open files" err; } ||
			{ cat err; fail "[$rm] record -p A under ulimit -n $n: exit $rc, without a word of the limit"; }
	done
done

if command -v strace > /dev/null 2>&1; then
	"$TJ" --frames=fp --cfi=region --publish=gdb "$HOT" 1000000000 > /dev/null 2>&1 &
	traced=$!
	CLEANUP_PIDS="$CLEANUP_PIDS $traced"
	start_tracer "$traced"
	expect_exit 0 "not recording process $traced: process $traced is already traced by process $TRACER" \
		"$JS" record --mode ptrace -p $traced,$a -F 250 -d 0.5 -o traced.txt
	grep -q "^tinyjit-$a;" traced.txt || fail "[ptrace] beside a traced process, the other is not recorded"
	grep -q "^tinyjit-$traced;" traced.txt && fail "[ptrace] the traced process is in the profile"
	note "[ptrace] a traced process is left out: $(grep 'not recording' err)"
	kill "$TRACER"
else
	note "skipped the traced case: no strace"
fi

if command -v setpriv > /dev/null 2>&1 && [ "$(id -u)" = 0 ] && case " $RECORD_MODES " in *" perf "*) true ;; *) false ;; esac; then
	# nobody runs and reads copies: the build tree may be where nobody
	# cannot read (under /root, made with a strict umask)
	mkdir nb && cp "$JS" ./jitstack-copy && cp "$TJ" nb/tinyjit && cp "$HOT" ./hot.tj &&
		chmod 755 . nb ./jitstack-copy nb/tinyjit && chmod 644 hot.tj
	nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
	$nobody nb/tinyjit --frames=fp --cfi=region --publish=gdb ./hot.tj 1000000000 > /dev/null 2>&1 &
	own=$!
	CLEANUP_PIDS="$CLEANUP_PIDS $own"
	sleep 0.3
	expect_exit 0 "not recording process $a: perf_event_open on process $a refused .*another user's process" \
		$nobody ./jitstack-copy record --mode perf -p $a,$own -F 250 -d 1 --stats -o -
	mv out nobody.txt
	grep -q "ptrace instead" err && { cat err; fail "[perf] one process refused made the whole run fall back to ptrace"; }
	grep -q "stats: perf events" err || { cat err; fail "[perf] the other process is not sampled with perf events"; }
	grep -q "^tinyjit-$own;tinyjit;.*;tj:hot [0-9]*$" nobody.txt || { cat err; head -3 nobody.txt; fail "[perf] nobody's own process is not recorded"; }
	note "[perf] as nobody: $(grep 'not recording' err)"
else
	note "skipped the other-user case: needs root, setpriv and the perf mode"
fi
pass "record -p with unreadable PIDs: each is named and left out, the rest recorded; none readable fails with exit 3"
