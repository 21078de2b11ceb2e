# SPDX-License-Identifier: MIT
# jitstack record on tests/latethread.c (spinning in main_spin), writing
# its profile where it cannot: a missing directory (the file cannot be
# opened) and /dev/full (every write fails, ENOSPC), in each format.  It
# must exit 1 (JS_EXIT_FAILURE) with "cannot write FILE: REASON", after it
# sampled: the failure is in writing, not in recording.
. "$(dirname "$0")/lib.sh"
need_file "$JTB/latethread" "make jitstack-check"
start_child lt.out "$JTB/latethread" -1 0 0
for fmt in collapsed pprof svg; do
	expect_exit 1 "cannot write $T/none/prof: No such file or directory" \
		"$JS" record --mode ptrace -p "$CHILD_PID" -F 200 -d 0.3 --format $fmt -o "$T/none/prof"
	grep -qE "[1-9][0-9]* samples" err || { cat err; fail "[$fmt] no samples taken before the write"; }
	expect_exit 1 "cannot write /dev/full: No space left on device" \
		"$JS" record --mode ptrace -p "$CHILD_PID" -F 200 -d 0.3 --format $fmt -o /dev/full
	note "[$fmt] $(grep 'cannot write' err)"
done
kill_tree "$CHILD_PID"
pass "record says which file it cannot write and why, in every format, and exits 1"
