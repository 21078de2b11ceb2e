# SPDX-License-Identifier: MIT
# driver.sh - what every test driver shares; sourced by tests/lib.sh,
# jitstack/tests/lib.sh and integrations/luajit/tests/lib.sh once they have
# set ROOT (the top of the tree) and SCRATCH (the name of the driver's
# scratch directories).
#
# A driver exits 0 when its checks pass, 1 when one fails and 77 when it
# cannot run here, after printing why (tests/run.sh counts them so).  It
# runs in a fresh scratch directory $T that is removed afterwards, with
# the processes it listed in CLEANUP_PIDS ended and the perf maps of its
# processes that are gone removed (those the reaper that runs it listed:
# scripts/reap-perf-maps.sh; never another run's).

set -u
. "$ROOT/tests/kill-tree.sh"
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
TB=$BUILD/tests
T=$(mktemp -d "${TMPDIR:-/tmp}/$SCRATCH.XXXXXX")
cleanup() {
	kill_tree ${CLEANUP_PIDS:-}
	# reap them, so that a dying child does not count as alive below
	for p in ${CLEANUP_PIDS:-}; do wait "$p" 2>/dev/null; done
	# the library writes a perf map per process; only this run's go
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
# Run a command with a time limit (seconds); a hang becomes a failure
# (exit 124).
limit() { t=$1; shift; timeout -k 5 "$t" "$@"; }

# Start a program that says when it is ready and then waits to be looked
# at: run it in the background with its output in OUT and wait (10 s at
# most) for a line matching READY (an extended regular expression); sets
# CHILD_PID, which cleanup ends.  A program that exits first or is not
# ready in time fails the driver with its output and "WHAT did not get
# ready".  READY_TRIES (default 200, 10 s) stretches the wait for a
# child that must build a lot first.  Usage: start_ready OUT READY WHAT
# PROGRAM ARGS...
start_ready() {
	sr_out=$1 sr_ready=$2 sr_what=$3; shift 3
	# a "ready" left in OUT by the previous child must not count for this one
	rm -f "$sr_out"
	"$@" > "$sr_out" 2>&1 &
	CHILD_PID=$!
	CLEANUP_PIDS="${CLEANUP_PIDS:-} $CHILD_PID"
	for _ in $(seq "${READY_TRIES:-200}"); do
		grep -qE "$sr_ready" "$sr_out" 2>/dev/null && return 0
		kill -0 "$CHILD_PID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$sr_out"
	fail "$sr_what did not get ready"
}
