# SPDX-License-Identifier: MIT
# The file channels are opt-in.  The child opens its context with
# ju_open(NULL), as a JIT that chose nothing does:
#  1. by default it writes no /tmp/perf-<pid>.map, no jitdump, and makes no
#     .debug directory under $HOME (a directory of this test's own), though
#     its blobs are published in memory (glibc backtrace() walks through them);
#  2. with JITUNWIND=perf it writes both: the perf map lists exactly the
#     blobs of its expect file, and jit-<pid>.dump, in perf's default place
#     under $HOME/.debug/jit, holds one code load for each of them.
# The files are checked while the child runs, so that no cleanup of gone
# processes' maps can take them away meanwhile.
. "$(dirname "$0")/lib.sh"
need_cmd python3
need_file "$TB/test-jitdump" "make tests"
# The jitdump goes to its default place, under a $HOME of our own.
unset JITDUMPDIR JITUNWIND
export HOME="$T/home"
mkdir "$HOME"

# The blobs of the expect file, as perf map lines.
expected_map() {
	python3 -c 'for l in open("child.expect"):
    name, lo, hi, kind, fp = l.split()
    if kind != "c": print("%x %x %s" % (int(lo, 16), int(hi, 16) - int(lo, 16), name))' | sort
}

# 1. The default.
limit 30 "$TB/child" backtrace > bt.out 2>&1 || { cat bt.out; fail "backtrace() did not walk through the JIT frames by default"; }
start_child "$TB/child" wait
map=/tmp/perf-$CHILD_PID.map
# a map older than this test is an earlier process's with the same pid
[ ! -e "$map" ] || [ "$map" -ot "$T/.start" ] || fail "the default wrote $map"
grep -q "jit-$CHILD_PID\.dump" "/proc/$CHILD_PID/maps" && fail "the default mapped a jitdump"
[ ! -e "$HOME/.debug" ] || { find "$HOME/.debug"; fail "the default made $HOME/.debug"; }
find "$T" -name 'jit-*.dump' | grep . && fail "the default wrote a jitdump"
kill_tree "$CHILD_PID"
echo "default: the JIT frames are published in memory; no perf map, no jitdump, no $HOME/.debug"

# 2. JITUNWIND=perf.
JITUNWIND=perf start_child "$TB/child" wait
map=/tmp/perf-$CHILD_PID.map
[ -f "$map" ] && [ "$map" -nt "$T/.start" ] || fail "JITUNWIND=perf wrote no $map"
expected_map > want.map
sort "$map" > got.map
diff want.map got.map > map.diff || { cat map.diff; fail "$map does not list exactly the published blobs"; }
dump=$(find "$HOME/.debug/jit" -path "*/jitunwind-*/jit-$CHILD_PID.dump" 2>/dev/null)
[ -n "$dump" ] || { find "$HOME" "$T" -name '*.dump'; fail "JITUNWIND=perf wrote no jit-$CHILD_PID.dump under $HOME/.debug/jit"; }
grep -q "jit-$CHILD_PID\.dump" "/proc/$CHILD_PID/maps" || fail "the jitdump is not mapped (perf would not find it)"
"$TB/test-jitdump" --list "$dump" > loads.txt || { cat loads.txt; fail "the dump does not read back"; }
cut -d' ' -f3 want.map | sort > want.names
cut -d' ' -f1 loads.txt | sort > got.names
diff want.names got.names || fail "the jitdump's code loads are not the published blobs"
kill_tree "$CHILD_PID"
rm -f "$map"
echo "JITUNWIND=perf: $map lists the $(wc -l < got.map) blobs; $dump loads them"
pass "the perf map and the jitdump are written only when asked for (JITUNWIND=perf)"
