# SPDX-License-Identifier: MIT
# perf names a sample after the first perf map line that holds its address,
# so a blob published where a freed one was must leave the freed one's line
# out of perf's view: `reuse-spin` publishes old_spin, frees it and spins in
# new_spin at the same start (then 16 bytes into the freed range); perf
# report must name the samples new_spin and never old_spin.  Counter-check:
# the map still holds old_spin's line, tombstoned ('#' first), so the
# library wrote it and took it out of perf's view.
. "$(dirname "$0")/lib.sh"
need_cmd perf
need_file "$TB/reuse-spin" "make tests"
trap 'rm -f ${CLEANUP_MAPS:-}; cleanup' EXIT INT TERM

for how in same overlap; do
	perf record -q -e cpu-clock -o "$how.data" -- "$TB/reuse-spin" 1 $how > "$how.out" 2>&1 ||
		{ cat "$how.out"; skip "perf record failed (permissions? perf_event_paranoid)"; }
	pid=$(perf script -i "$how.data" -F pid 2>/dev/null | head -1 | tr -d ' ')
	[ -n "$pid" ] || fail "$how: no samples"
	map=/tmp/perf-$pid.map
	CLEANUP_MAPS="${CLEANUP_MAPS:-} $map"
	[ -f "$map" ] || fail "$how: no $map"
	perf report -i "$how.data" --stdio --sort sym 2>/dev/null > "$how.report"
	grep -q 'new_spin' "$how.report" || { cat "$how.report"; fail "$how: perf names no sample new_spin"; }
	! grep -q 'old_spin' "$how.report" || { cat "$how.report"; fail "$how: perf names samples after the freed old_spin"; }
	grep -q '^#.* old_spin$' "$map" || { cat "$map"; fail "$how: old_spin's line is not tombstoned in the map"; }
done
pass "perf names the reused address new_spin, at the same start and overlapping"
