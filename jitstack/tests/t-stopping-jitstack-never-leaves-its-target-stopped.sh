# ^Z on jitstack must never freeze its target (jitstack(1), SIGNALS):
#
# SPDX-License-Identifier: MIT
# SIGTSTP, SIGTTIN and SIGTTOU are sent to each command -- a dump,
# record in ptrace and in perf mode, top in ptrace mode -- at random
# moments, many times over; once jitstack is stopped, no thread of its
# targets may be in a stop.  SIGSTOP cannot be caught: once jitstack is
# continued, no thread may stay held past the bound (--max-hold).
# Then ^Z on top in a terminal (tmux, an interactive bash): the
# alternate screen is left, the target is not traced while jitstack is
# stopped, and fg brings the screen and the tracing back.
# The targets: hostile big, whose JIT list (no seqlock: read only while
# its threads are stopped) holds three images of 64 MB, and threads, four
# threads and its main thread parked.
. "$(dirname "$0")/lib.sh"
need_file "$JTB/hostile" "make jitstack-check"
need_file "$JTB/threads" "make jitstack-check"
need_cmd python3
start_child big.out env HOSTILE_IMAGES=3 "$JTB/hostile" big wait
BIG=$CHILD_PID
start_child th.out "$JTB/threads"
TH=$CHILD_PID
export TARGETS="$BIG $TH" HOLD_MS=100
# 16 rounds of each command: each signal four times; 60 s at most in all
run() { # WHAT SECONDS COMMAND...
	what=$1 secs=$2; shift 2
	limit $((secs + 20)) python3 "$ROOT/jitstack/tests/stopjs.py" 16 "$secs" -- "$@" > "$what.log" 2>&1
	rc=$?
	cat "$what.log" | sed "s/^/  [$what] /"
	[ $rc -eq 0 ] || fail "$what: a stopped jitstack left a target thread stopped (or never stopped)"
}
run dump-big 8 "$JS" -p "$BIG"
run record-ptrace 12 "$JS" record --mode ptrace -F 1000 -p "$BIG,$TH" -o /dev/null
run record-perf 12 "$JS" record --mode perf -F 1000 -p "$BIG,$TH" -o /dev/null
run top-ptrace 12 "$JS" top --mode ptrace -F 1000 -p "$BIG,$TH" -d 30
if command -v tmux > /dev/null; then
	S=$T/tmux.sock
	tmux -S "$S" new-session -d -x 120 -y 40 "bash --norc -i" || fail "tmux did not start"
	trap 'tmux -S "$S" kill-server 2>/dev/null; cleanup' EXIT
	tmux -S "$S" send-keys "exec 2>top.err; $JS top --mode ptrace -F 200 -p $TH -d 60" Enter
	alt() { tmux -S "$S" display -p '#{alternate_on}'; }
	tracer() { awk '/^TracerPid/{print $2}' /proc/"$TH"/status; }
	for _ in $(seq 100); do [ "$(alt)" = 1 ] && break; sleep 0.05; done
	[ "$(alt)" = 1 ] || fail "top did not take the screen"
	J=$(tracer)
	[ "$J" != 0 ] || fail "top does not trace its target"
	tmux -S "$S" send-keys C-z
	for _ in $(seq 100); do [ "$(awk '{print $3}' /proc/"$J"/stat)" = T ] && break; sleep 0.05; done
	[ "$(awk '{print $3}' /proc/"$J"/stat)" = T ] || fail "^Z did not stop top"
	[ "$(alt)" = 0 ] || fail "top stopped by ^Z left the alternate screen up"
	[ "$(tracer)" = 0 ] || fail "top stopped by ^Z still traces its target"
	tmux -S "$S" send-keys fg Enter
	for _ in $(seq 100); do [ "$(alt)" = 1 ] && [ "$(tracer)" = "$J" ] && break; sleep 0.05; done
	[ "$(alt)" = 1 ] || fail "top continued did not put its screen back"
	[ "$(tracer)" = "$J" ] || fail "top continued does not trace its target again"
	tmux -S "$S" send-keys q
	note "[top in a terminal] ^Z left the screen and the target, fg took both back"
else
	note "tmux is not installed: ^Z on top in a terminal not checked"
fi
pass "no target thread is left stopped by a stopped jitstack (dump, record ptrace and perf, top)"
