# SPDX-License-Identifier: MIT
# lib.sh - sourced by the LuaJIT integration's test drivers
# (integrations/luajit/tests/t-*.sh).
#
# The conventions are tests/driver.sh's.  Every check runs the workload
# twice: with the module (luajit -l jitunwind) and without it (stock
# luajit), the baseline, which must fail the same check.  The workloads
# (*.lua) are copied into the scratch directory and run from there, so that
# their chunk names are their own file names.
#   $LJB   the module and libljprobe.so      $LJT  this directory
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
SCRATCH=jitunwind-luajit-test
. "$ROOT/tests/driver.sh"
LJT=$ROOT/integrations/luajit/tests
LJB=$BUILD/luajit

need_cmd luajit
need_cmd python3
need_file "$LJB/jitunwind.so" "make luajit"
need_file "$LJB/libljprobe.so" "make luajit"
export LUA_CPATH="$LJB/?.so;;"
export LJP_LIB="$LJB/libljprobe.so"
cp "$LJT"/*.lua .

# A SAN=1 build's module and probe carry AddressSanitizer and UBSan, whose
# runtimes must be the first libraries of the process: Debian's luajit is
# not built with them, so a `luajit` on the PATH of the tests preloads them
# (into luajit only: gdb, perf and jitstack run as they are).  LuaJIT's own
# allocator and machine code are not instrumented; leaks of the stock
# interpreter are not ours.  $LUAJIT is the real binary (a core's program).
LUAJIT=$(command -v luajit)
case $BUILD in
*-san*)
	asan=$(gcc -print-file-name=libasan.so) ubsan=$(gcc -print-file-name=libubsan.so)
	[ -e "$asan" ] && [ -e "$ubsan" ] || skip "SAN build: the sanitizer runtimes are not installed"
	mkdir -p "$T/bin"
	printf '#!/bin/sh\nASAN_OPTIONS=detect_leaks=0:disable_coredump=0 LD_PRELOAD=%s:%s exec %s "$@"\n' \
		"$asan" "$ubsan" "$LUAJIT" > "$T/bin/luajit"
	chmod +x "$T/bin/luajit"
	PATH=$T/bin:$PATH ;;
esac

# SAN=1 builds of jitstack and mx-dwfl: leaks inside system libraries
# (libdw's) are not ours (jitstack's suppressions)
export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$ROOT/jitstack/tests/lsan.supp:print_suppressions=0"

judge() { python3 "$LJT/ljjudge.py" "$@"; }

# Run probe.lua (or $PROBE_SCRIPT) with or without the module, LJP_MODE=$1 (backtrace, unwind,
# abort: run to the end; wait: in the background until it is ready, sets
# PROBE_PID).  The expect file is $T/expect.  Usage: probe with|without MODE [ENV...]
probe() {
	how=$1 mode=$2; shift 2
	SCRIPT=${PROBE_SCRIPT:-probe.lua}
	set -- env LJP_MODE="$mode" LJP_EXPECT="$T/expect" "$@" luajit
	[ "$how" = with ] && set -- "$@" -l jitunwind
	rm -f expect expect.traces probe.out
	if [ "$mode" = wait ]; then
		start_ready probe.out '^ready' "$SCRIPT ($how the module)" "$@" "$SCRIPT"
		PROBE_PID=$CHILD_PID
	elif [ "$mode" = abort ]; then
		case $(cat /proc/sys/kernel/core_pattern) in
		core|core.*|core-*) ;;
		*) skip "core_pattern is '$(cat /proc/sys/kernel/core_pattern)', not a file in the cwd" ;;
		esac
		rm -f core core.*
		(ulimit -c unlimited && exec "$@" "$SCRIPT") > probe.out 2>&1
		CORE=$(ls core core.* 2>/dev/null | head -1)
		[ -n "$CORE" ] || { cat probe.out; skip "no core file was written (ulimit or core_pattern)"; }
	else
		"$@" "$SCRIPT" > probe.out 2>&1
		PROBE_RC=$?
	fi
}

# judge_frames TOOL FILE [--by-address]: the tool's output against the
# stack probe.lua built; prints the verdict, returns 0 on PASS.
judge_frames() {
	tool=$1 out=$2; shift 2
	judge frames "$tool" < "$out" > frames.txt || return 1
	judge check expect "${PROBE_SCRIPT:-probe.lua}" "$@" < frames.txt
}

# The baseline must fail: judge_frames on the run without the module.
# Usage: baseline_fails WHAT TOOL FILE [--by-address]
baseline_fails() {
	what=$1; shift
	if judge_frames "$@" > baseline.judge 2>&1; then
		cat baseline.judge
		fail "$what: the check passes without the module too, so it proves nothing"
	fi
	echo "$what: FAIL as it must ($(grep '^got:' baseline.judge | cut -c11-170))"
}

# guest_marks: the lines of guest.lua's marks: def (where step is defined),
# call (where hot calls it) and start (where hot's trace starts).
guest_marks() {
	def=$(grep -n -- '--> guest: step' guest.lua | cut -d: -f1)
	call=$(grep -n -- '--> call: step' guest.lua | cut -d: -f1)
	start=$(grep -n -- '--> trace: hot' guest.lua | cut -d: -f1)
	[ -n "$def" ] && [ -n "$call" ] && [ -n "$start" ] || fail "guest.lua lost its marks"
}
