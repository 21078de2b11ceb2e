# lib.sh - sourced by every test driver (tests/t-*.sh).
#
# The conventions are tests/driver.sh's; $TB holds the built test programs.

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=jitunwind-test
. "$ROOT/tests/driver.sh"

# Start the child in the background with an action that waits; sets
# CHILD_PID once it printed "ready".  Usage: start_child BINARY ARGS...
start_child() {
	# a "ready" left by the previous child must not count for this one
	rm -f child.out
	"$@" > child.out 2>&1 &
	CHILD_PID=$!
	CLEANUP_PIDS="${CLEANUP_PIDS:-} $CHILD_PID"
	for _ in $(seq 100); do
		grep -q '^ready' child.out 2>/dev/null && return 0
		kill -0 "$CHILD_PID" 2>/dev/null || break
		sleep 0.05
	done
	cat child.out
	fail "child did not get ready"
}

# Compare a tool's frames (one name per line, innermost first, on stdin)
# with child.expect.  See check_frames.py for the rules.
check_frames() { python3 "$ROOT/tests/check_frames.py" "$@"; }
