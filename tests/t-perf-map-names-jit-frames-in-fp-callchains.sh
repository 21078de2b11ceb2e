# SPDX-License-Identifier: MIT
# perf record -g (the kernel walks frame pointers) names JIT frames from
# /tmp/perf-<pid>.map: in `child spin 2`, samples in c_inner show
# jit:region, jit:cfi and jit:fp in the order the child built them (a
# frame-pointer walk cannot see c_middle, whose caller jit:cfi keeps no frame
# pointer; check_frames.py --fp).  The map holds exactly the blobs the child
# published, as its expect file describes them.  The perf map is opt-in:
# the child asks for it with JITUNWIND=perf.  Counter-check: with
# JITUNWIND=none there is no perf map and no JIT name in any sample.
. "$(dirname "$0")/lib.sh"
need_cmd perf
need_cmd python3
# lib.sh points JITDUMPDIR at $T: the jitdump JITUNWIND=perf asks for lands there.

# One line per sample whose callchain reaches c_inner: its frame names,
# innermost first (perf script prints one frame per line, a blank line
# after each sample).
chains() {
	awk 'NF == 0 { if (s ~ / c_inner( |$)/) print substr(s, 2); s = ""; next }
	     { s = s " " $2 }
	     END { if (s ~ / c_inner( |$)/) print substr(s, 2) }'
}
# judge FILE ARGS: "passed total" samples of FILE by check_frames.py ARGS.
judge() {
	f=$1; shift
	ok=0; total=0
	sort "$f" | uniq -c > uniq.txt
	while read -r n chain; do
		total=$((total + n))
		echo "$chain" | tr ' ' '\n' | check_frames child.expect "$@" > judge.out && ok=$((ok + n))
	done < uniq.txt
	echo "$ok $total"
}

record() { # OUT ENV...: perf record -g of `child spin 2`
	out=$1; shift
	env "$@" perf record -q -e cpu-clock -g -o "$out" -- "$TB/child" spin 2 > child.out 2>&1 ||
		{ cat child.out; skip "perf record failed (permissions? perf_event_paranoid)"; }
	pid=$(perf script -i "$out" -F pid 2>/dev/null | head -1 | tr -d ' ')
	[ -n "$pid" ] || fail "no samples in $out"
	CLEANUP_MAPS="${CLEANUP_MAPS:-} /tmp/perf-$pid.map"
}
trap 'rm -f ${CLEANUP_MAPS:-}; cleanup' EXIT INT TERM

record perf.data JITUNWIND=perf
map=/tmp/perf-$pid.map
[ -f "$map" ] || fail "no $map"
# The map's lines, against the JIT blobs of the expect file.
python3 -c 'for l in open("child.expect"):
    name, lo, hi, kind, fp = l.split()
    if kind != "c": print("%x %x %s" % (int(lo, 16), int(hi, 16) - int(lo, 16), name))' | sort > want.map
sort "$map" > got.map
diff want.map got.map > map.diff || { cat map.diff; fail "$map does not list exactly the published blobs"; }
echo "$map lists the $(wc -l < got.map) published blobs:"; cat got.map

perf script -i perf.data -F ip,sym 2>/dev/null | chains > chains.txt
set -- $(judge chains.txt --fp)
echo "frame-pointer callchains through the JIT code: $1 of $2 samples in c_inner match"
echo "example:"; head -1 chains.txt
[ "$2" -ge 50 ] || fail "only $2 samples reached c_inner"
[ $(($1 * 10)) -ge $(($2 * 9)) ] || { cat judge.out; fail "fewer than 90% of the callchains match"; }

# Counter-check: nothing published, nothing named.
record perf.none JITUNWIND=none
[ ! -e "/tmp/perf-$pid.map" ] || [ "/tmp/perf-$pid.map" -ot child.expect ] ||
	fail "JITUNWIND=none still wrote /tmp/perf-$pid.map"
perf script -i perf.none -F ip,sym 2>/dev/null | chains > none.txt
[ -s none.txt ] || fail "no callchain reached c_inner without publishing"
grep -q 'jit:' none.txt && fail "JIT frames were named without a perf map"
set -- $(judge none.txt --fp)
[ "$1" -eq 0 ] || fail "$1 callchains matched without a perf map"
echo "without publishing: no perf map, and none of $2 callchains names a JIT frame"
pass "perf -g names jit:region, jit:cfi and jit:fp from the perf map, in order"
