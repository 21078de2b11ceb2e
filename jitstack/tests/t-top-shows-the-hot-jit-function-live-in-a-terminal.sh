# SPDX-License-Identifier: MIT
# jitstack top in a terminal (tmux) on tinyjit running progs/hot.tj, whose
# `hot` does ten times the work of `cool`: within 3 s the top row is tj:hot,
# named from its GDB JIT image and marked JIT; `t` sorts by total (a
# function on every stack comes first, at the largest total), `s` by self
# again; `v` shows the threads, with tj:hot as the thread's hottest; `p`
# pauses (the screen stays still), and while it is paused a smaller and
# then a larger window are redrawn to their size (the footer on the last
# row, no line wider); `q` exits 0, and so
# does ^C.  In every record mode.  Without a terminal (a pipe) it prints
# one table without escape codes, tj:hot first; what it does not take is
# refused with exit 2.
. "$(dirname "$0")/lib.sh"
need_file "$TJ" "make tinyjit"
need_tmux
HOT=$ROOT/jitstack/tests/progs/hot.tj
ESC=$(printf '\033')

"$TJ" "$HOT" 100000000 > /dev/null 2>&1 &
pid=$!
CLEANUP_PIDS="${CLEANUP_PIDS:-} $pid"
sleep 0.3

# the functions table's first row in screen.txt: "SOURCE MARK NAME"
top_row() { awk '/ SOURCE / { getline; print $(NF - 2), $(NF - 1), $NF; exit }' screen.txt; }
# its rows' TOTAL 10s column, one number a line, in the order shown
totals() { awk '/ SOURCE / { on = 1; next } /^s: by self/ { on = 0 } on && NF { v = $4; sub(/%/, "", v); print v }' screen.txt; }
# wait (at most SECONDS, polling) until the screen of NAME passes the test CHECK
wait_for() { # NAME SECONDS CHECK...
	wf_name=$1 wf_end=$(($(date +%s%N) / 1000000 + $2 * 1000)); shift 2
	while :; do
		tmux_screen "$wf_name" > screen.txt 2>/dev/null
		"$@" && return 0
		[ $(($(date +%s%N) / 1000000)) -lt $wf_end ] || return 1
		sleep 0.1
	done
}
hot_on_top() { [ "$(top_row)" = "gdb-jit J tj:hot" ]; }
by_total() {
	grep -q 'functions by total' screen.txt && [ -n "$(totals)" ] &&
		[ "$(totals | head -1)" = "$(totals | sort -rn | head -1)" ] && [ "$(top_row | cut -d' ' -f3)" != tj:hot ]
}
threads_view() { grep -qE "^ +[0-9.]+% +[0-9.]+% +$pid  tinyjit +tj:hot\$" screen.txt; }
footer_last() { # the footer on row ROWS of the screen
	[ "$(wc -l < screen.txt)" -eq "$1" ] && tail -1 screen.txt | grep -q '^s: by self' && head -1 screen.txt | grep -q '^jitstack top: '
}
screen_lines() { footer_last "$1"; }

for rm in $RECORD_MODES; do
	s=top-$rm
	tmux_start $s 110 30 "$JS" top --mode $rm -p $pid
	wait_for $s 3 hot_on_top || { cat screen.txt; fail "[$rm] tj:hot is not the top row within 3 s"; }
	grep -q 'functions by self' screen.txt || { cat screen.txt; fail "[$rm] the header does not say the sort"; }
	tm send-keys -t $s t
	wait_for $s 10 by_total || { cat screen.txt; fail "[$rm] 't' does not sort by total"; }
	tm send-keys -t $s s
	wait_for $s 10 hot_on_top || { cat screen.txt; fail "[$rm] 's' does not sort by self again"; }
	tm send-keys -t $s v
	wait_for $s 10 threads_view || { cat screen.txt; fail "[$rm] 'v': no thread row with tj:hot its hottest"; }
	tm send-keys -t $s v
	wait_for $s 10 hot_on_top || { cat screen.txt; fail "[$rm] 'v' again: not the functions"; }
	tm send-keys -t $s p
	wait_for $s 10 grep -q '\[paused\]' screen.txt || { cat screen.txt; fail "[$rm] 'p' does not pause"; }
	cp screen.txt paused.txt
	sleep 2
	tmux_screen $s > screen.txt
	cmp -s paused.txt screen.txt || { diff paused.txt screen.txt; fail "[$rm] the screen changed while paused"; }
	# while paused only a key or a new size redraws: the resizes are seen
	tm resize-window -t $s -x 64 -y 12
	wait_for $s 10 screen_lines 12 || { cat screen.txt; fail "[$rm] not redrawn to 64x12"; }
	if awk 'length > 64' screen.txt | grep -q .; then cat screen.txt; fail "[$rm] lines wider than 64 columns"; fi
	tm resize-window -t $s -x 120 -y 40
	wait_for $s 10 screen_lines 40 || { cat screen.txt; fail "[$rm] not redrawn to 120x40"; }
	tm send-keys -t $s p
	wait_for $s 10 eval '! grep -q "\[paused\]" screen.txt' || { cat screen.txt; fail "[$rm] 'p' again does not resume"; }
	wait_for $s 10 hot_on_top || { cat screen.txt; fail "[$rm] after the resizes tj:hot is not on top"; }
	tm send-keys -t $s q
	tmux_wait $s '^exit [0-9]+' 30 || { cat screen.txt; fail "[$rm] 'q' does not quit"; }
	grep -q '^exit 0' screen.txt || { cat screen.txt; fail "[$rm] 'q': top failed"; }
	note "[$rm] tj:hot on top, re-sorted, threads, paused, resized, q: exit 0"
done

tmux_start ctrlc 110 30 "$JS" top -p $pid
wait_for ctrlc 10 hot_on_top || { cat screen.txt; fail "[^C] tj:hot is not the top row"; }
tm send-keys -t ctrlc C-c
tmux_wait ctrlc '^exit [0-9]+' 30 || { cat screen.txt; fail "^C does not quit"; }
grep -q '^exit 0' screen.txt || { cat screen.txt; fail "^C: top failed"; }

limit 60 "$JS" top -p $pid -d 1.5 > once.txt 2> once.err
rc=$?
[ $rc -eq 0 ] || { cat once.err; fail "top in a pipe exited $rc"; }
cp once.txt screen.txt
[ "$(top_row)" = "gdb-jit J tj:hot" ] || { cat once.txt; fail "top in a pipe: tj:hot is not the first row"; }
if grep -q "$ESC" once.txt; then cat -v once.txt; fail "escape codes in top's table in a pipe"; fi
[ "$(grep -c SOURCE once.txt)" -eq 1 ] || { cat once.txt; fail "top in a pipe: not one table"; }
expect_exit 2 'top needs -p PID' "$JS" top
expect_exit 2 "belong to 'jitstack record'" "$JS" top -p $pid -o top.txt
expect_exit 2 "--once belongs to 'jitstack top'" "$JS" record -p $pid --once
pass "top: tj:hot on top within 3 s, keys re-sort, switch views and pause, resizes redraw, q and ^C exit 0; one table in a pipe ($RECORD_MODES)"
