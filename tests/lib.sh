# lib.sh - sourced by every test driver (tests/t-*.sh).
#
# A driver exits 0 when its check passes, 1 when it fails and 77 when it
# cannot run here, after printing why.  It runs in a fresh temporary
# directory that is removed afterwards; $TB holds the built test programs.

set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/tests/kill-tree.sh"
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
TB=$BUILD/tests
T=$(mktemp -d "${TMPDIR:-/tmp}/jitunwind-test.XXXXXX")
cleanup() {
	# children we started, the perf maps of processes that ran during the
	# test and are gone (the library writes one per process), the directory
	kill_tree ${CLEANUP_PIDS:-}
	# reap them, so that a dying child does not count as alive below
	for p in ${CLEANUP_PIDS:-}; do wait "$p" 2>/dev/null; done
	sh "$ROOT/scripts/reap-perf-maps.sh" "$T/.start"
	rm -rf "$T"
}
trap cleanup EXIT INT TERM
touch "$T/.start"
cd "$T" || exit 1
# Children's jitdumps go here, not into $HOME/.debug/jit (ch_jitdump.c).
export JITDUMPDIR=$T

pass() { echo "pass: $*"; exit 0; }
fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "skip: $*"; exit 77; }
need_cmd() { command -v "$1" >/dev/null 2>&1 || skip "$1 is not installed"; }
need_file() { [ -e "$1" ] || skip "$1 is missing${2:+ ($2)}"; }

# Run a command with a time limit (seconds); a hang becomes a failure.
limit() { t=$1; shift; timeout -k 5 "$t" "$@"; }

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
