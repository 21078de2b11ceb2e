# SPDX-License-Identifier: MIT
# perf on spin.lua (hot's loop does ten times the work of cool's):
#  1. perf record -g with the perf map (JITUNWIND=gdb,perfmap): the samples
#     whose pc is in trace code carry the trace's name, hot's the most, at
#     least three times cool's; the map lists exactly the traces published;
#  2. perf record -k 1 --call-graph dwarf with the jitdump
#     (JITUNWIND=gdb,jitdump) and perf inject --jit: the same, named from
#     the jitted-PID-N.so files inject writes.
# Baselines, which must fail: stock luajit writes neither file, and no
# sample names a trace.  (The unwinder channel stays off: the files do not
# need it.)  Samples are the leaves (perf script -G): a trace keeps no frame
# pointer, so the kernel's walk (-g) goes nowhere past it; perf's DWARF
# unwinder gets the trace's CFI only where perf inject could map it after
# the code, and LuaJIT packs traces with no room (API.md, "Room after a
# blob").
. "$(dirname "$0")/lib.sh"
need_cmd perf
hot_line=$(grep -n -- '--> trace: hot' spin.lua | cut -d: -f1)
cool_line=$(grep -n -- '--> trace: cool' spin.lua | cut -d: -f1)
CLEANUP_MAPS=
trap 'rm -f $CLEANUP_MAPS; cleanup' EXIT INT TERM

# record NAME PERFARGS... -- ENV...: perf record spin.lua 2 s; sets pid
record() {
	name=$1; shift
	args=
	while [ "$1" != -- ]; do args="$args $1"; shift; done
	shift
	# shellcheck disable=SC2086
	env "$@" perf record -q -e cpu-clock -F 499 $args -o "$name.data" -- luajit ${MOD:-} spin.lua 2 \
		> spin.out 2>&1 || { cat spin.out; skip "perf record failed (permissions? perf_event_paranoid)"; }
	pid=$(perf script -i "$name.data" -F pid 2>/dev/null | head -1 | tr -d ' ')
	[ -n "$pid" ] || fail "$name: no samples"
	CLEANUP_MAPS="$CLEANUP_MAPS /tmp/perf-$pid.map"
}
# count FILE: "hot cool all" samples by leaf name
count() {
	awk -v h="lua:hot@spin.lua:$hot_line (trace " -v c="lua:cool@spin.lua:$cool_line (trace " '
		{ all++ } index($0, h) { hot++ } index($0, c) { cool++ }
		END { print hot + 0, cool + 0, all + 0 }' "$1"
}
judge_counts() { # WHAT FILE
	set -- "$1" $(count "$2")
	echo "$1: hot's trace $2 samples, cool's $3, of $4"
	[ "$4" -ge 100 ] || fail "$1: only $4 samples"
	[ $(($2 * 2)) -ge "$4" ] || fail "$1: fewer than half the samples name hot's trace"
	[ "$2" -gt $((3 * $3)) ] || fail "$1: hot's trace is not three times cool's"
}

# 1. perf -g and the perf map
MOD="-l jitunwind" record fp -g -- JITUNWIND=gdb,perfmap
map=/tmp/perf-$pid.map
[ -f "$map" ] || fail "no $map"
grep -q "lua:hot@spin.lua:$hot_line (trace [0-9]*)\$" "$map" || { cat "$map"; fail "hot's trace is not in $map"; }
echo "$map: $(wc -l < "$map") traces"
perf script -G -i fp.data -F ip,sym 2>/dev/null > fp.txt
judge_counts "perf -g + perf map" fp.txt

# a perf map older than this is another process's, at a reused pid
touch started
MOD= record fpnone -g -- JITUNWIND=gdb,perfmap
[ ! "/tmp/perf-$pid.map" -nt started ] || fail "stock luajit wrote /tmp/perf-$pid.map"
perf script -G -i fpnone.data -F ip,sym 2>/dev/null > fpnone.txt
set -- $(count fpnone.txt)
[ "$1" = 0 ] && ! grep -q 'lua:' fpnone.txt || fail "stock luajit: a sample names a trace"
echo "perf -g, stock luajit: none of $3 samples names a trace, as it must"

# 2. perf --call-graph dwarf, the jitdump, perf inject --jit
inject() { # NAME
	perf inject --jit -i "$1.data" -o "$1.jit.data" 2> inject.err || { cat inject.err; fail "$1: perf inject --jit"; }
	perf script -G -i "$1.jit.data" -F ip,sym,dso 2>/dev/null > "$1.txt"
}
MOD="-l jitunwind" record dw -k 1 --call-graph dwarf -- JITUNWIND=gdb,jitdump
dump=$(find "$T/.debug/jit" -name "jit-$pid.dump" 2>/dev/null)
[ -n "$dump" ] || fail "no jit-$pid.dump under $T/.debug/jit"
inject dw
judge_counts "perf --call-graph dwarf + jitdump" dw.txt
grep "lua:hot@" dw.txt | grep -qv "jitted-$pid-[0-9]*\.so" && fail "hot's samples not named from the jitted .so files"

MOD= record dwnone -k 1 --call-graph dwarf -- JITUNWIND=gdb,jitdump
inject dwnone
set -- $(count dwnone.txt)
[ "$1" = 0 ] && ! grep -q 'lua:' dwnone.txt || fail "stock luajit: a sample names a trace"
echo "perf --call-graph dwarf, stock luajit: none of $3 samples names a trace, as it must"
pass "perf names the samples in traces from the perf map and from the jitdump, hot's the hottest; stock luajit names none"
