# SPDX-License-Identifier: MIT
# jitstack record says what its sessions found wrong, as the dump does:
# each distinct warning once on stderr ("jitstack: warning: ..."), after
# the sampling, and --stats counts them ("jitstack: stats: warnings: N").
# Two kinds, in every record mode: a perf map named with --perf-map that
# is not there (a warning raised at every round's refresh: it must still
# be printed once), and a JIT descriptor whose list loops back on itself
# (tests/hostile.c cycle: a note known at the end).  Recording two
# processes, each warning names its process.
. "$(dirname "$0")/lib.sh"
need_file "$JTB/hostile" "make jitstack-check"
start_child h.out "$JTB/hostile" cycle wait
cycle=$CHILD_PID
missing=$T/missing.map

# Usage: count PATTERN: lines of rec.err that are warnings matching PATTERN
count() { grep '^jitstack: warning: ' rec.err | grep -c -- "$1"; }

for mode in $RECORD_MODES; do
	limit 60 "$JS" record --mode $mode -p "$cycle" -F 200 -d 1 --stats --perf-map "$missing" \
		-o prof.txt 2> rec.err || { cat rec.err; fail "[$mode] record exited $?"; }
	pm=$(count "perf map $missing")
	loop=$(count 'loops back')
	all=$(grep -c '^jitstack: warning: ' rec.err)
	stats=$(sed -n 's/^jitstack: stats: warnings: \([0-9]*\)$/\1/p' rec.err)
	[ "$pm" -eq 1 ] || { cat rec.err; fail "[$mode] the missing perf map's warning printed $pm times, not once"; }
	[ "$loop" -eq 1 ] || { cat rec.err; fail "[$mode] the looping list's warning printed $loop times, not once"; }
	[ "$(grep '^jitstack: warning: ' rec.err | sort | uniq -d)" = "" ] ||
		{ cat rec.err; fail "[$mode] a warning printed twice"; }
	[ -n "$stats" ] && [ "$stats" -eq "$all" ] ||
		{ cat rec.err; fail "[$mode] --stats counts ${stats:-no} warnings, $all printed"; }
	note "[$mode] $all warnings, each once, counted by --stats"
done

# two processes: each one's warnings name it
start_child h2.out "$JTB/hostile" version wait
version=$CHILD_PID
limit 60 "$JS" record -p "$cycle,$version" -F 200 -d 1 --stats -o prof.txt 2> rec.err ||
	{ cat rec.err; fail "[two processes] record exited $?"; }
[ "$(count "process $cycle (hostile): .*loops back")" -eq 1 ] &&
	[ "$(count "process $version (hostile): .*version 2")" -eq 1 ] ||
	{ cat rec.err; fail "[two processes] the warnings do not name their process once each"; }
[ "$(sed -n 's/^jitstack: stats: warnings: //p' rec.err)" -eq "$(grep -c '^jitstack: warning: ' rec.err)" ] ||
	{ cat rec.err; fail "[two processes] --stats counts other warnings than printed"; }
pass "record prints each warning its sessions gathered once, names the process among several, and --stats counts them"
