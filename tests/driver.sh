# driver.sh - what every test driver shares; sourced by tests/lib.sh and
# jitstack/tests/lib.sh once they have set ROOT (the top of the tree) and
# SCRATCH (the name of the driver's scratch directories).
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
