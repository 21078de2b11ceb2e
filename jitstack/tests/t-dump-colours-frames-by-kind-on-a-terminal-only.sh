# SPDX-License-Identifier: MIT
# jitstack -p on a terminal (tmux) colours each function name by its kind,
# as the SVG flame graph does: JIT functions (tinyjit's tj:*) green, native
# ones (tinyjit's own tj_jit_enter) yellow, and with --no-jit the JIT
# frames, left unnamed, grey.  No colour code with --color=never, with
# NO_COLOR set, or when stdout is a pipe; --color=always colours a pipe.
. "$(dirname "$0")/lib.sh"
need_file "$TJ" "make tinyjit"
need_tmux
HOT=$ROOT/jitstack/tests/progs/hot.tj
ESC=$(printf '\033')

"$TJ" "$HOT" 100000000 > /dev/null 2>&1 &
pid=$!
CLEANUP_PIDS="${CLEANUP_PIDS:-} $pid"
for _ in $(seq 100); do
	limit 60 "$JS" -p $pid 2> /dev/null | grep -q ' tj:main+' && break
	sleep 0.1
done
limit 60 "$JS" -p $pid > plain.txt 2>&1
rc=$?
[ $rc -eq 0 ] || { cat plain.txt; fail "jitstack -p exited $rc"; }
grep -q ' tj:main+' plain.txt || { cat plain.txt; fail "no JIT frame named in the dump"; }
if grep -q "$ESC" plain.txt; then fail "colour codes in a pipe (--color=auto)"; fi

# on_terminal NAME ARGS...: the dump as a terminal shows it, with its
# colours (tmux capture-pane -e), in NAME.txt
on_terminal() {
	name=$1; shift
	tmux_start "$name" 200 60 "$*"
	tmux_wait "$name" '^exit [0-9]+' 60 -e || { cat screen.txt; fail "[$name] jitstack did not finish"; }
	grep -q '^exit 0' screen.txt || { cat screen.txt; fail "[$name] jitstack failed"; }
	cp screen.txt "$name.txt"
}

on_terminal auto "$JS" -p $pid
grep -q "${ESC}\[32mtj:main+" auto.txt || { cat -v auto.txt; fail "a JIT frame is not green on a terminal"; }
grep -q "${ESC}\[33mtj_jit_enter+" auto.txt || { cat -v auto.txt; fail "a native frame is not yellow on a terminal"; }

on_terminal nojit "$JS" -p $pid --no-jit
grep -q "${ESC}\[90m??" nojit.txt || { cat -v nojit.txt; fail "an unnamed frame is not grey on a terminal"; }

on_terminal never "$JS" -p $pid --color=never
grep -q ' tj:main+' never.txt || { cat never.txt; fail "[--color=never] no JIT frame on the screen"; }
if grep -q "$ESC" never.txt; then cat -v never.txt; fail "colour codes on a terminal with --color=never"; fi

on_terminal nocolor env NO_COLOR=1 "$JS" -p $pid
grep -q ' tj:main+' nocolor.txt || { cat nocolor.txt; fail "[NO_COLOR] no JIT frame on the screen"; }
if grep -q "$ESC" nocolor.txt; then cat -v nocolor.txt; fail "colour codes on a terminal with NO_COLOR set"; fi

limit 60 "$JS" -p $pid --color=always > always.txt 2>&1 || fail "jitstack --color=always exited $?"
grep -q "${ESC}\[32mtj:main+" always.txt || { cat -v always.txt; fail "--color=always does not colour a pipe"; }
expect_exit 2 'expected auto, always or never' "$JS" -p $pid --color=sometimes
pass "JIT frames green, native yellow, unnamed grey on a terminal; none with --color=never, NO_COLOR or a pipe"
