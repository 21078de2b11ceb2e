# SPDX-License-Identifier: MIT
# lib.sh - sourced by every test driver (tests/t-*.sh).
#
# The conventions are tests/driver.sh's; $TB holds the built test programs.

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRATCH=jitunwind-test
. "$ROOT/tests/driver.sh"

# Start the child in the background with an action that waits; sets
# CHILD_PID once it printed "ready".  Usage: start_child BINARY ARGS...
start_child() { start_ready child.out '^ready' child "$@"; }

# Compare a tool's frames (one name per line, innermost first, on stdin)
# with child.expect.  See check_frames.py for the rules.
check_frames() { python3 "$ROOT/tests/check_frames.py" "$@"; }
