# SPDX-License-Identifier: MIT
# PHP 8.2's opcache tracing JIT, registering its traces through the GDB JIT
# interface (opcache.jit_debug=0x100) and keeping its code in shared
# memory: jitstack -p names the trace of progs/hot.php's hot function
# (PHP calls it TRACE-N$innermost_php$M) and unwinds past it to the
# program's start; jitstack record finds that trace the hottest frame.
. "$(dirname "$0")/lib.sh"
need_cmd php8.2
# (Debian's php.ini loads opcache once php8.2-opcache is installed)
PHP="php8.2 -d opcache.enable_cli=1 -d opcache.jit=tracing -d opcache.jit_buffer_size=64M
	-d opcache.jit_debug=0x100"
# shellcheck disable=SC2086
$PHP -r 'exit(function_exists("opcache_get_status") ? 0 : 1);' 2>/dev/null ||
	skip "PHP's opcache extension cannot be loaded (php8.2-opcache)"
trace='TRACE-[0-9]+\$innermost_php\$[0-9]+'

# shellcheck disable=SC2086
start_child php.out $PHP "$ROOT/jitstack/tests/progs/hot.php"
found=
for _ in 1 2 3 4 5 6 7 8 9 10; do # until the trace is compiled and a stop lands in it
	limit 30 "$JS" -p "$CHILD_PID" > text 2> err || { cat err; fail "jitstack exited $?"; }
	grep -qE "^#0 .* $trace\+0x" text && { found=1; break; }
	sleep 0.3
done
[ -n "$found" ] || { cat text err; fail "no stop in the hot trace named $trace"; }
grep -qE ' (_start|__libc_start_main[^ ]*)\+0x' text || { cat text; fail "the stack does not reach the program's start"; }
grep -q 'rejected' err && { cat err; fail "a JIT image was rejected"; }
for mode in $RECORD_MODES; do
	limit 30 "$JS" record --mode $mode -p "$CHILD_PID" -F 200 -d 1 -o prof.txt 2> err || { cat err; fail "[$mode] record exited $?"; }
	top=$(awk '{ n = $NF; $NF = ""; k = split($0, f, ";"); sub(/ +$/, "", f[k]); c[f[k]] += n }
		END { for (l in c) print c[l], l }' prof.txt | sort -rn | head -1)
	echo "$top" | grep -qE " $trace\$" || { cat prof.txt; fail "[$mode] the hottest frame is not the trace: $top"; }
	note "live: $(grep -E "^#0" text); record ($mode): hottest $top"
done
pass "PHP's opcache JIT: its trace named live, the stack reaches the start, record finds it hottest"
