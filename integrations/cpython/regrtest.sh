#!/bin/sh
# regrtest.sh - CPython's own test suite (regrtest, `python -m test`) on a
# build of make cpython or make cpython-stock, with the JIT on, and the
# comparison of two runs.
#
#   regrtest.sh [-b BUILD] [-j N] [-l] [-t SECONDS] [-u RESOURCES] KIND OUT [TEST...] [-- ARG...]
#       KIND cpython (our patches) or cpython-stock; OUT a directory for the
#       results; TESTs as regrtest takes them (none: the whole suite);
#       ARGs go to regrtest as they are (e.g. -- -x test_gdb).
#   regrtest.sh compare A B
#       the test files and test cases whose results differ between the
#       runs in A and B; exits 1 when some do.
#
# A run leaves in OUT: log.txt (regrtest's output), junit.xml
# (--junit-xml), probe.txt (what the JIT and the channels did in a probe
# run first), files.txt ("TEST_FILE STATE"), cases.txt ("TEST_ID STATUS"),
# counts.txt and status (regrtest's exit status).  regrtest_results.py
# says what the states are.
#
# Both builds run with PYTHON_JIT=1 and JITUNWIND=perf: the default
# channels (libgcc's unwinder, nongnu libunwind, gdb) and the perf map and
# the jitdump, required; the stock build links no libjitunwind and ignores
# JITUNWIND, so the two runs see the same environment.  The probe fails
# the run when the JIT is off, or, for cpython, when an executor did not
# reach the perf map, the jitdump and gdb's list.
#
# As root, the run is in a private mount namespace: its own /tmp (OUT/tmp,
# removed afterwards: the perf maps and jitdumps of thousands of
# processes, regrtest's scratch files), and its own ld.so.cache that finds
# BUILD's libjitunwind.so.0 as an installed library is found, so the tests
# that start Python with an empty environment (no LD_LIBRARY_PATH) load it.
# With -l the library is found through LD_LIBRARY_PATH=BUILD instead, as
# the project's own tests find it.  Not root: LD_LIBRARY_PATH too, and
# TMPDIR=OUT/tmp; the tests that empty the environment then fail on
# cpython only, and the perf maps are left in /tmp.
#
# Defaults: -j 2, -t 1800 (regrtest's --timeout, per test file), -u
# all,-network,-urlfetch,-largefile,-extralargefile,-cpu,-gui,-audio (no
# network, nothing that needs gigabytes or minutes of CPU, no display).
# Tests that run perf or gdb (test_perf_profiler, test_gdb) must be run
# under flock /tmp/ju-heavy.lock; a whole-suite run excludes them with
# -- -x test_gdb test_perf_profiler and they are run alone.
#
# SPDX-License-Identifier: MIT
set -eu
CY=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$CY/../.." && pwd)
RESULTS="/usr/bin/python3 $CY/regrtest_results.py"

die() { printf 'regrtest.sh: %s\n' "$*" >&2; exit 2; }

# The run itself, inside the namespace (or not): regrtest.sh --inner OUT
# PY NS ARG...; the environment is set.
if [ "${1:-}" = --inner ]; then
	OUT=$2 PY=$3 NS=$4
	shift 4
	if [ "$NS" = 1 ]; then
		# A cached build moved after it was built (its cache key
		# changed) still names the directory it was built in
		# (sysconfig's abs_builddir, where regrtest's workers make their
		# directories, and srcdir); it is seen at that name too.
		real=$(dirname "$PY")
		built=$(sed -n 's/^abs_builddir=[[:space:]]*//p' "$real/Makefile")
		top=$(dirname "$(dirname "$real")")
		if [ -n "$built" ] && [ "$built" != "$real" ] && [ ! -e "$built" ] &&
			[ "${built#"$top"/}" != "$built" ]; then
			mkdir -p "$OUT/src"
			mount --bind "$real" "$OUT/src"
			mount -t tmpfs regrtest "$top"
			mkdir -p "$real" "$built"
			mount --bind "$OUT/src" "$real"
			mount --bind "$OUT/src" "$built"
			echo "built in $built, now $real: seen at both names" > "$OUT/moved"
		fi
		mount --bind "$OUT/tmp" /tmp
		[ ! -f "$OUT/ld.so.cache" ] || mount --bind "$OUT/ld.so.cache" /etc/ld.so.cache
		TMPDIR=/tmp
	else
		TMPDIR=$OUT/tmp
	fi
	export TMPDIR JITDUMPDIR="$TMPDIR"
	# regrtest's workers start in its directory: their files (and the
	# cores of the tests that crash a child on purpose) go there
	mkdir "$TMPDIR/cwd"
	cd "$TMPDIR/cwd"
	# the probe: the JIT compiles the loop of f(); for cpython its
	# executor is in the perf map, the jitdump and gdb's list
	"$PY" - "$KIND" > "$OUT/probe.txt" 2>&1 <<-'EOF' || { cat "$OUT/probe.txt" >&2; exit 3; }
	import ctypes, os, sys, _opcode, _testinternalcapi
	opt = _testinternalcapi.get_optimizer()
	print("optimizer:", opt)
	def f():
	    x = 0
	    for i in range(20000):
	        x += i
	    return x
	f()
	n = 0
	for o in range(0, len(f.__code__.co_code), 2):
	    try:
	        _opcode.get_executor(f.__code__, o)
	        n += 1
	    except (ValueError, RuntimeError):
	        pass
	print("executors in f:", n)
	if opt is None or n == 0:
	    sys.exit("the JIT is off")
	if sys.argv[1] == "cpython":
	    names = [l.split(None, 2)[2].strip() for l in open(f"/tmp/perf-{os.getpid()}.map")]
	    print("perf map:", len(names), "symbols, e.g.", [x for x in names if x.startswith("py:f ")][:1])
	    dumps = {l.split()[-1] for l in open("/proc/self/maps") if "/jit-%d.dump" % os.getpid() in l}
	    print("jitdump mapped:", sorted(dumps))
	    d = ctypes.c_void_p.in_dll(ctypes.CDLL(None), "__jit_debug_descriptor")
	    first = ctypes.c_void_p.from_address(ctypes.addressof(d) + 16).value
	    print("gdb's list: first entry", hex(first or 0))
	    if not any(x.startswith("py:f ") for x in names) or not dumps or not first:
	        sys.exit("an executor is missing from a channel")
	EOF
	set +e
	# SIGINT and SIGQUIT as a program started by hand has them: a shell
	# that runs this in the background ignores them, and the tests that
	# interrupt themselves (_thread.interrupt_main, signal SIGINT) would
	# then run until the timeout
	env --default-signal=INT,QUIT "$PY" -m test --tempdir "$TMPDIR/regrtest" --junit-xml "$OUT/junit.xml" "$@" > "$OUT/log.txt" 2>&1
	echo $? > "$OUT/status"
	set -e
	# what the channels wrote (cpython), before the private /tmp goes
	printf 'perf maps: %s, jitdumps: %s\n' \
		"$(find "$TMPDIR" -maxdepth 1 -name 'perf-*.map' | wc -l)" \
		"$(find "$TMPDIR/.debug" -name 'jit-*.dump' 2>/dev/null | wc -l)" >> "$OUT/probe.txt"
	exit 0
fi

BUILD=$ROOT/build JOBS=2 TIMEOUT=1800 LDPATH=
RES=all,-network,-urlfetch,-largefile,-extralargefile,-cpu,-gui,-audio
while getopts b:j:lt:u: o; do
	case $o in
	b) BUILD=$OPTARG ;;
	j) JOBS=$OPTARG ;;
	l) LDPATH=1 ;;
	t) TIMEOUT=$OPTARG ;;
	u) RES=$OPTARG ;;
	*) die "usage: regrtest.sh [-b BUILD] [-j N] [-l] [-t SECONDS] [-u RESOURCES] KIND OUT [TEST...] [-- ARG...]" ;;
	esac
done
shift $((OPTIND - 1))
if [ "${1:-}" = compare ]; then
	[ $# = 3 ] || die "usage: regrtest.sh compare A B"
	exec $RESULTS compare "$2" "$3"
fi
[ $# -ge 2 ] || die "usage: regrtest.sh [-b BUILD] [-j N] [-l] [-t SECONDS] [-u RESOURCES] KIND OUT [TEST...] [-- ARG...]"
KIND=$1 OUT=$2
shift 2
case $KIND in cpython | cpython-stock) ;; *) die "KIND is cpython or cpython-stock, not '$KIND'" ;; esac
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
[ -f "$BUILD/$KIND/dir" ] || die "$BUILD/$KIND/dir is missing (make $KIND)"
PY=$(cat "$BUILD/$KIND/dir")/python
[ -x "$PY" ] || die "$PY is missing (make $KIND)"
[ -e "$BUILD/libjitunwind.so.0" ] || die "$BUILD/libjitunwind.so.0 is missing (make lib)"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
rm -rf "$OUT/tmp"
rm -f "$OUT/moved" "$OUT/log.txt" "$OUT/junit.xml" "$OUT/probe.txt" "$OUT/files.txt" "$OUT/cases.txt" "$OUT/counts.txt" "$OUT/status"
mkdir "$OUT/tmp"

# the tests, then regrtest's own arguments
set -- "$@" --END--
tests="" args=""
while [ "$1" != --END-- ]; do
	if [ "$1" = -- ]; then
		shift
		while [ "$1" != --END-- ]; do args="$args $1"; shift; done
		break
	fi
	tests="$tests $1"
	shift
done

export PYTHON_JIT=1 JITUNWIND=perf KIND
NS=0
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
	NS=1
fi
if [ "$NS" = 1 ] && [ -z "$LDPATH" ]; then
	printf 'include /etc/ld.so.conf.d/*.conf\n%s\n' "$BUILD" > "$OUT/ld.so.conf"
	ldconfig -X -C "$OUT/ld.so.cache" -f "$OUT/ld.so.conf"
	unset LD_LIBRARY_PATH
elif [ "$NS" = 1 ]; then
	export LD_LIBRARY_PATH="$BUILD"
else
	echo "regrtest.sh: no private namespace (not root): LD_LIBRARY_PATH=$BUILD, perf maps left in /tmp" >&2
	export LD_LIBRARY_PATH="$BUILD"
fi
echo "regrtest.sh: $KIND: $PY -m test -j $JOBS --timeout $TIMEOUT -u $RES$tests$args (log: $OUT/log.txt)"
# shellcheck disable=SC2086
if [ "$NS" = 1 ]; then
	unshare -m --propagation private sh "$0" --inner "$OUT" "$PY" 1 \
		-j "$JOBS" --timeout "$TIMEOUT" -u "$RES" $tests $args
else
	sh "$0" --inner "$OUT" "$PY" 0 -j "$JOBS" --timeout "$TIMEOUT" -u "$RES" $tests $args
fi
rm -rf "$OUT/tmp" "$OUT/ld.so.cache" "$OUT/ld.so.conf"
rmdir "$OUT/src" 2>/dev/null || true
sed -n 's/^/probe: /p' "$OUT/probe.txt"
[ ! -f "$OUT/moved" ] || echo "regrtest.sh: $(cat "$OUT/moved")"
echo "regrtest: exit status $(cat "$OUT/status")"
$RESULTS parse "$OUT"
