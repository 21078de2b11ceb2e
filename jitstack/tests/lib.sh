# SPDX-License-Identifier: MIT
# lib.sh - sourced by jitstack's test drivers (jitstack/tests/t-*.sh).
#
# The conventions are tests/driver.sh's.  Programs:
#   $JS   the jitstack binary         $TB   the library's test programs
#   $JTB  jitstack's test programs    $TJ   tinyjit
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SCRATCH=jitstack-test
. "$ROOT/tests/driver.sh"
JS=$BUILD/jitstack/jitstack
JTB=$BUILD/jitstack/tests
TJ=$BUILD/tinyjit/tinyjit
# SAN=1 builds: leaks inside system libraries are not ours (lsan.supp)
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$ROOT/jitstack/tests/lsan.supp:print_suppressions=0"
note() { echo "  $*"; }

need_file "$JS" "make jitstack"

# The sampling mechanisms of `jitstack record` a record test runs in
# (jitstack(1), --mode); JS_RECORD_MODES=ptrace (say) narrows them.
RECORD_MODES=${JS_RECORD_MODES:-perf ptrace}

# Start a program that prints "ready PID" (or tinyjit's probe line) and
# waits; sets CHILD_PID.  Usage: start_child OUT PROGRAM ARGS...
start_child() {
	out=$1; shift
	start_ready "$out" '^ready|waiting .* to be attached' "$1" "$@"
}

# Run jitstack (COMMAND, for at most 60 s) where it must refuse: it must
# exit CODE with a message on stderr matching MESSAGE-REGEX (grep -E).  Its
# output is left in out and err.  Usage: expect_exit CODE MESSAGE-REGEX COMMAND...
expect_exit() {
	code=$1 re=$2; shift 2
	limit 60 "$@" > out 2> err
	rc=$?
	[ $rc -eq "$code" ] || { cat out err; fail "'$*': exit $rc, expected $code"; }
	grep -qE -e "$re" err || { cat err; fail "'$*': no message matching '$re'"; }
}

# bounded COMMAND...: COMMAND within 96 MiB of address space (ulimit -v).
# Not under SAN=1: AddressSanitizer reserves terabytes of address space for
# its shadow and cannot start under any such bound (the test still runs,
# unbounded, and says so).
bounded() {
	if [ "${SAN:-}" = 1 ]; then
		note "SAN=1: no address-space bound (AddressSanitizer's shadow)"
		"$@"
	else
		(ulimit -v 98304 && "$@")
	fi
}

# A zombie: a process whose parent (python, alive for 60 s) never reaps
# it; sets ZOMBIE to its pid once it is one.
start_zombie() {
	python3 -c '
import os, sys, time
pid = os.fork()
if pid == 0: os._exit(0)
print(pid, flush=True); time.sleep(60)' > zombie.pid &
	CLEANUP_PIDS="${CLEANUP_PIDS:-} $!"
	for _ in $(seq 50); do [ -s zombie.pid ] && break; sleep 0.1; done
	ZOMBIE=$(cat zombie.pid)
	# the child's exit may not have happened yet
	sleep 0.3
}

# Have strace trace PID; sets TRACER to strace's pid once the kernel shows
# PID traced (/proc/PID/status: TracerPid).  Usage: start_tracer PID
start_tracer() {
	strace -p "$1" -o /dev/null &
	TRACER=$!
	CLEANUP_PIDS="${CLEANUP_PIDS:-} $TRACER"
	for _ in $(seq 50); do grep -q "TracerPid:[[:space:]]*[1-9]" /proc/"$1"/status && break; sleep 0.1; done
}

# Run a program that aborts; sets CORE (skips when no core appears).
make_core() { # PROGRAM ARGS...
	case $(cat /proc/sys/kernel/core_pattern) in
	core|core.*|core-*) ;;
	*) skip "core_pattern is '$(cat /proc/sys/kernel/core_pattern)', not a file in the cwd" ;;
	esac
	rm -f core core.*
	# (ASan turns core dumps off unless told otherwise: SAN=1 builds)
	(ulimit -c unlimited && ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}disable_coredump=0" exec "$@") \
		> core-run.out 2>&1
	CORE=$(ls core core.* 2>/dev/null | head -1)
	[ -n "$CORE" ] || { cat core-run.out; skip "no core file was written (ulimit or core_pattern)"; }
}

# jitstack --json -> one frame per line for check_frames.py: "0xPC NAME"
# (NAME "?" when unknown), innermost first, for the thread TID (default:
# the first thread).  A function inlined at a frame's pc is "NAME" alone:
# it has no address of its own (gdb prints none for it either), so
# --by-address judges it by its name.  Usage: json_frames FILE [TID]
json_frames() {
	python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
tid = int(sys.argv[2]) if len(sys.argv) > 2 else None
th = [t for t in d["threads"] if tid is None or t["tid"] == tid][0]
for f in th["frames"]:
    print(f["function"] or "?") if f.get("inlined") else print(f["pc"], f["function"] or "?")
PY
}

check_frames() { python3 "$ROOT/tests/check_frames.py" "$@"; }

# The npm packages the browser tests use, installed once per build tree
# under $BUILD/tools/node (no lock file is written: versions are pinned
# here).  Sets NODE_MODULES; skips when npm cannot fetch them.
NPM_PACKAGES="playwright-core@1.49.1 speedscope@1.22.2"
need_node_modules() {
	need_cmd node
	need_cmd npm
	NODE_MODULES=$BUILD/tools/node/node_modules
	stamp=$BUILD/tools/node/installed
	[ "$(cat "$stamp" 2>/dev/null)" = "$NPM_PACKAGES" ] && return 0
	mkdir -p "$BUILD/tools/node"
	# node trusts its own list of authorities; the system's may add some
	# (a proxy's), which is what apt trusts here
	[ -f /etc/ssl/certs/ca-certificates.crt ] && export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
	# shellcheck disable=SC2086
	limit 300 npm install --prefix "$BUILD/tools/node" --no-audit --no-fund --no-package-lock --no-save \
		$NPM_PACKAGES > npm.out 2>&1 || { tail -5 npm.out; skip "npm cannot install $NPM_PACKAGES"; }
	echo "$NPM_PACKAGES" > "$stamp"
}

# Google's pprof, built from Debian's packaged source
# (golang-github-google-pprof-dev) with Debian's Go, once per build tree.
# Sets PPROF.
need_pprof() {
	PPROF=$BUILD/tools/pprof
	[ -x "$PPROF" ] && return 0
	need_cmd go
	[ -d /usr/share/gocode/src/github.com/google/pprof ] ||
		skip "pprof's source is not installed (golang-github-google-pprof-dev)"
	mkdir -p "$BUILD/tools"
	GOPATH=/usr/share/gocode GO111MODULE=off GOFLAGS= GOCACHE=$BUILD/tools/gocache \
		limit 600 go build -o "$PPROF.new" github.com/google/pprof > go.out 2>&1 ||
		{ tail -5 go.out; fail "pprof does not build from its Debian source"; }
	mv "$PPROF.new" "$PPROF"
}

# A chromium that runs headless here (Debian's /usr/bin/chromium).
need_chromium() {
	CHROMIUM=$(command -v chromium || true)
	[ -n "$CHROMIUM" ] || skip "chromium is not installed"
}

# A terminal for the tests that need one: tmux, on a server of the test's
# own (its socket in $T, no configuration file read), which cleanup ends
# with everything running in it.  need_tmux skips without tmux
# (scripts/install-deps.sh installs it: jitstack/PACKAGES).
need_tmux() {
	command -v tmux >/dev/null 2>&1 || skip "tmux is not installed (scripts/install-deps.sh test installs it)"
	unset TMUX
}
tm() { tmux -S "$T/tmux.sock" -f /dev/null "$@"; }
# Run a shell command line in a new window of WIDTH x HEIGHT (session NAME);
# when it ends, the window shows "exit N" (its status) and stays.
# Usage: tmux_start NAME WIDTH HEIGHT COMMAND-LINE
tmux_start() {
	ts_name=$1 ts_w=$2 ts_h=$3; shift 3
	if tm has-session 2>/dev/null; then
		tm new-session -d -s "$ts_name" -x "$ts_w" -y "$ts_h" "$*; echo \"exit \$?\"; exec sleep 600"
	else
		tm new-session -d -s "$ts_name" -x "$ts_w" -y "$ts_h" "$*; echo \"exit \$?\"; exec sleep 600" ||
			fail "tmux cannot start a session"
		CLEANUP_PIDS="${CLEANUP_PIDS:-} $(tm display-message -p '#{pid}')"
	fi
}
# The screen of session NAME as text (tmux capture-pane; -e: with its
# colours as escape sequences).  Usage: tmux_screen NAME [-e]
tmux_screen() { tm capture-pane -p -t "$1" ${2:-}; }
# Wait (polling, SECONDS at most) until the screen of NAME has a line
# matching the extended regular expression RE; the screen is left in
# screen.txt.  Usage: tmux_wait NAME RE SECONDS [-e]
tmux_wait() {
	tw_end=$(($(date +%s%N) / 1000000 + $3 * 1000))
	while :; do
		tmux_screen "$1" ${4:-} > screen.txt 2>/dev/null
		grep -qE -e "$2" screen.txt && return 0
		[ $(($(date +%s%N) / 1000000)) -lt $tw_end ] || return 1
		sleep 0.1
	done
}
