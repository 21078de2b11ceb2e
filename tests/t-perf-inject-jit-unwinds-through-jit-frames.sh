# SPDX-License-Identifier: MIT
# perf record -k 1 --call-graph dwarf + perf inject --jit: the jitdump lets
# perf (6.1 here; it unwinds with libunwind) unwind through JIT code and name
# it from the jitted-<pid>-<n>.so files inject writes.
#
# What perf can do depends on room after each blob.  perf reads a blob's
# unwind tables through the mapping it synthesizes for it, and that mapping
# covers the tables only if the dump's mapped_size says so; the library sets
# it only when the gap before the next blob has room, because a mapping that
# reached the next blob would steal its first bytes.  So:
#
#  1. `child spin 2` packs its blobs 64 bytes apart: jit:fp and jit:cfi have
#     no room for their tables (the dump says mapped_size 0 for both; the last
#     blob, jit:region, has them).  perf then falls back, in those frames, to
#     the frame-pointer chain, as libunwind does without unwind info: every
#     sample shows the frame-pointer-visible sequence, JIT frames named from
#     the .so files (check_frames.py --fp), but not c_middle.
#  2. The same workload with its blobs 1 KiB apart (and not 16-byte aligned:
#     perf 6.1's libunwind path does not need it) gets all tables mapped, and
#     perf shows the full sequence, c_middle included: the tables are used.
#  3. Without the jitdump (JITUNWIND=default,perfmap) the DWARF
#     callchains stop at the first JIT frame (DESIGN.md): the jitdump is what
#     makes 1 and 2 work.
# The .so files inject writes are also read by libdw through their
# .eh_frame_hdr (test-jitdump --check-elf) and by readelf without a warning.
# The perf files are opt-in: 1 and 2 ask for them with JITUNWIND=perf.
. "$(dirname "$0")/lib.sh"
need_cmd perf
need_cmd python3
need_cmd readelf
need_cmd cc
need_file "$TB/test-jitdump" "make tests"
# lib.sh points JITDUMPDIR at $T: the jitdumps land there.

chains() {
	awk 'NF == 0 { if (s ~ / c_inner( |$)/) print substr(s, 2); s = ""; next }
	     { s = s " " $2 }
	     END { if (s ~ / c_inner( |$)/) print substr(s, 2) }'
}
judge() { # FILE ARGS: "passed total" samples of FILE by check_frames.py ARGS
	f=$1; shift
	ok=0; total=0
	sort "$f" | uniq -c > uniq.txt
	while read -r n chain; do
		total=$((total + n))
		echo "$chain" | tr ' ' '\n' | check_frames child.expect "$@" > judge.out && ok=$((ok + n))
	done < uniq.txt
	echo "$ok $total"
}
CLEANUP_MAPS=
trap 'rm -f $CLEANUP_MAPS; cleanup' EXIT INT TERM

# record NAME CHILD ENV...: perf record and inject; sets pid, dumpdir.
record() {
	name=$1 child=$2; shift 2
	env "$@" perf record -q -F 999 -e cpu-clock -k 1 --call-graph dwarf -o "$name.data" -- \
		"$child" spin 2 ${CHILD_ARGS:-} > child.out 2>&1 ||
		{ cat child.out; skip "perf record failed (permissions? perf_event_paranoid)"; }
	pid=$(perf script -i "$name.data" -F pid 2>/dev/null | head -1 | tr -d ' ')
	[ -n "$pid" ] || fail "$name: no samples"
	CLEANUP_MAPS="$CLEANUP_MAPS /tmp/perf-$pid.map"
	perf inject --jit -i "$name.data" -o "$name.jit.data" 2> inject.err ||
		{ cat inject.err; fail "$name: perf inject --jit"; }
	dump=$(find "$T/.debug/jit" -name "jit-$pid.dump" 2>/dev/null)
}

# 1. The test workload as it is.
record packed "$TB/child" JITUNWIND=perf
[ -n "$dump" ] || fail "no jit-$pid.dump under $T/.debug/jit"
"$TB/test-jitdump" --list "$dump" > loads.txt || { cat loads.txt; fail "the dump does not read back"; }
cat loads.txt
dir=$(dirname "$dump")
n=$(ls "$dir"/jitted-"$pid"-*.so 2>/dev/null | wc -l)
[ "$n" = 3 ] || fail "perf inject wrote $n jitted .so files, want 3"
"$TB/test-jitdump" --check-elf "$dir"/jitted-"$pid"-*.so || fail "libdw on the jitted .so files"
for so in "$dir"/jitted-"$pid"-*.so; do
	readelf -W --debug-dump=frames,rawline "$so" > re.out 2> re.err
	grep -v 'local symbol' re.err | grep -qi . && { cat re.err; fail "readelf complained about $so"; }
	grep -qi 'warning' re.out && fail "readelf warned on $so"
done
awk '$1 == "jit:fp" || $1 == "jit:cfi" { if ($3 != 0) bad = 1 } $1 == "jit:region" { if ($3 == 0) bad = 1 }
     END { exit bad }' loads.txt || fail "mapped_size is not what the gaps allow"
perf script -i packed.jit.data -F ip,sym,dso 2>/dev/null | grep -E ' jit:(fp|cfi|region) ' > dsos.txt
[ -s dsos.txt ] || fail "no JIT frame in any sample"
grep -v "jitted-$pid-[0-9]*\.so" dsos.txt | head -3 | grep . && fail "JIT frames not named from the jitted .so files"
perf script -i packed.jit.data -F ip,sym 2>/dev/null | chains > packed.txt
set -- $(judge packed.txt --fp)
echo "packed blobs: $1 of $2 samples in c_inner show the frame-pointer-visible sequence"; head -1 packed.txt
[ "$2" -ge 50 ] || fail "only $2 samples reached c_inner"
[ $(($1 * 10)) -ge $(($2 * 9)) ] || { cat judge.out; fail "fewer than 90% of the callchains match"; }
grep -q c_middle packed.txt && fail "c_middle appeared although jit:cfi's tables are not mapped"

# 2. The same workload with room after each blob.
CHILD_ARGS=--spaced record padded "$TB/child" JITUNWIND=perf
"$TB/test-jitdump" --list "$dump" > loads.txt || { cat loads.txt; fail "the dump does not read back"; }
cat loads.txt
awk '$3 == 0 { bad = 1 } END { exit bad }' loads.txt || fail "a padded blob has no mapped tables"
perf script -i padded.jit.data -F ip,sym 2>/dev/null | chains > padded.txt
set -- $(judge padded.txt)
echo "padded blobs: $1 of $2 samples in c_inner show the full sequence"; head -1 padded.txt
[ "$2" -ge 50 ] || fail "only $2 samples reached c_inner"
[ $(($1 * 10)) -ge $(($2 * 9)) ] || { cat judge.out; fail "fewer than 90% of the callchains match"; }

# 3. No jitdump: DWARF unwinding stops in the JIT code.
record nodump "$TB/child" JITUNWIND=default,perfmap
[ -z "$dump" ] || fail "a jitdump was written with the channel off"
perf script -i nodump.jit.data -F ip,sym 2>/dev/null | chains > nodump.txt
grep -q c_outer nodump.txt && fail "perf unwound past the JIT code without a jitdump"
echo "without the jitdump: $(wc -l < nodump.txt) callchains, none reaching c_outer; e.g."
head -1 nodump.txt
pass "perf inject --jit: JIT frames named from the jitdump; full DWARF unwinding where blobs have room"
