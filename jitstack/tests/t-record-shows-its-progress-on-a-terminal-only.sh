# SPDX-License-Identifier: MIT
# jitstack record on a terminal (tmux) keeps one progress line on stderr,
# rewritten in place while it samples (elapsed and remaining time,
# samples, rate, lost samples, processes), and erases it before its closing
# line; ^C ends the recording and the profile is written, exit 0.  With
# stderr a pipe there is no progress line at all (no "recording", no \r,
# no escape code).  In every record mode.
. "$(dirname "$0")/lib.sh"
need_file "$TJ" "make tinyjit"
need_tmux
HOT=$ROOT/jitstack/tests/progs/hot.tj
ESC=$(printf '\033')
CR=$(printf '\r')
LINE='^jitstack: recording [0-9.]+ s, ([0-9.]+ s left|\^C to stop): [0-9]+ samples, [0-9]+/s, [0-9]+ lost, 1 process$'

"$TJ" "$HOT" 100000000 > /dev/null 2>&1 &
pid=$!
CLEANUP_PIDS="${CLEANUP_PIDS:-} $pid"
sleep 0.3

# the elapsed time on the progress line of screen.txt
elapsed() { sed -n 's/^jitstack: recording \([0-9.]*\) s,.*/\1/p' screen.txt; }

for rm in $RECORD_MODES; do
	tmux_start "d-$rm" 150 20 "$JS" record --mode $rm -p $pid -d 4 -o "$T/d-$rm.txt"
	tmux_wait "d-$rm" "$LINE" 10 || { cat screen.txt; fail "[$rm] no progress line on the terminal"; }
	grep -q ' s left: ' screen.txt || { cat screen.txt; fail "[$rm] -d 4: the line does not say the time left"; }
	first=$(elapsed)
	for _ in $(seq 100); do
		tmux_screen "d-$rm" > screen.txt
		[ -n "$(elapsed)" ] && [ "$(elapsed)" != "$first" ] && break
		sleep 0.1
	done
	[ -n "$(elapsed)" ] && [ "$(elapsed)" != "$first" ] || { cat screen.txt; fail "[$rm] the progress line is not updated"; }
	[ "$(grep -c 'recording' screen.txt)" -eq 1 ] || { cat screen.txt; fail "[$rm] the progress line is not rewritten in place"; }
	tmux_wait "d-$rm" '^exit [0-9]+' 30 || { cat screen.txt; fail "[$rm] record -d 4 did not end"; }
	grep -q '^exit 0' screen.txt || { cat screen.txt; fail "[$rm] record failed"; }
	grep -qE '^jitstack: [0-9]+ samples in ' screen.txt || { cat screen.txt; fail "[$rm] no closing line"; }
	if grep -q 'recording' screen.txt; then cat screen.txt; fail "[$rm] the progress line is left on the screen"; fi
	grep -q 'tj:hot' "d-$rm.txt" || fail "[$rm] the profile has no tj:hot"
	note "[$rm] $(grep samples screen.txt)"
done

# ^C: the recording ends, the profile is written
tmux_start ctrlc 150 20 "$JS" record -p $pid -o "$T/c.txt"
tmux_wait ctrlc "$LINE" 10 || { cat screen.txt; fail "[^C] no progress line on the terminal"; }
grep -q '\^C to stop' screen.txt || { cat screen.txt; fail "[^C] without -d, the line does not say how to stop"; }
tm send-keys -t ctrlc C-c
tmux_wait ctrlc '^exit [0-9]+' 30 || { cat screen.txt; fail "^C did not end the recording"; }
grep -q '^exit 0' screen.txt || { cat screen.txt; fail "record ended by ^C failed"; }
grep -q 'tj:hot' c.txt || fail "record ended by ^C wrote no profile with tj:hot"

# a pipe: nothing but the closing line
for rm in $RECORD_MODES; do
	limit 60 "$JS" record --mode $rm -p $pid -d 1 -o p.txt 2>&1 | cat > pipe.err
	grep -qE '^jitstack: [0-9]+ samples in ' pipe.err || { cat pipe.err; fail "[$rm pipe] no closing line"; }
	if grep -q -e recording -e "$ESC" -e "$CR" pipe.err; then cat -v pipe.err; fail "[$rm pipe] a progress line in a pipe"; fi
done
pass "record: a progress line rewritten in place on a terminal, erased at the end, none in a pipe; ^C writes the profile ($RECORD_MODES)"
