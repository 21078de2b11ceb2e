# SPDX-License-Identifier: MIT
# jitstack record -p A,B on two tinyjit processes: A runs progs/hot.tj
# (tj:hot ten times the work of tj:cool), B progs/boil.tj (tj:boil ten
# times tj:steam).  Both run with address-space randomisation off, so
# their JIT functions sit at the same addresses: each process must be
# named from its own JIT images.  In each record mode (perf events,
# ptrace):
# - collapsed: every stack starts with its process's frame, "tinyjit-A" or
#   "tinyjit-B" (stackcollapse-perf.pl --pid's form); within A's stacks
#   the hottest JIT leaf is tj:hot and no frame is boil.tj's, within B's
#   tj:boil and none is hot.tj's;
# - pprof: every sample carries the labels pid and comm (pprofdump), both
#   pids are there with comm tinyjit, and each pid's hottest JIT leaf is its
#   own program's hot function;
# - svg: the flame graph has both process frames;
# - --stats has a line per process;
# and `-p A` alone still writes today's collapsed stacks (no process frame).
. "$(dirname "$0")/lib.sh"
need_file "$TJ" "make tinyjit"
need_file "$JTB/pprofdump" "make jitstack-check"
PROGS=$ROOT/jitstack/tests/progs
# the same layout in both processes (setarch -R: no ASLR), where it can be had
norand=
setarch "$(uname -m)" -R true 2>/dev/null && norand="setarch $(uname -m) -R"

$norand "$TJ" --frames=fp --cfi=region --publish=gdb "$PROGS/hot.tj" 1000000000 > /dev/null 2>&1 &
a=$!
$norand "$TJ" --frames=fp --cfi=region --publish=gdb "$PROGS/boil.tj" 1000000000 > /dev/null 2>&1 &
b=$!
CLEANUP_PIDS="${CLEANUP_PIDS:-} $a $b"
sleep 0.3
if [ -n "$norand" ]; then
	"$JS" -p $a --images | awk '$NF ~ /^tj:/ { print $1, $NF }' > a.images
	"$JS" -p $b --images | awk '$NF ~ /^tj:/ { print $1, $NF }' > b.images
	ha=$(awk '$2 == "tj:hot" { print $1 }' a.images)
	hb=$(awk '$2 == "tj:boil" { print $1 }' b.images)
	[ -n "$ha" ] && [ "$ha" = "$hb" ] && note "tj:hot and tj:boil are both at $ha"
fi

# collapsed stacks of one process (its frame cut off) -> "count leaf" of
# JIT leaves, hottest first
leaves_of() { # FILE PROCESS-FRAME
	awk -v p="$2" '{ n = $NF; $NF = ""; k = split($0, f, ";"); if (f[1] != p) next
	       leaf = f[k]; sub(/ +$/, "", leaf); if (leaf ~ /^tj:/) c[leaf] += n }
	     END { for (l in c) print c[l], l }' "$1" | sort -rn
}

for rm in $RECORD_MODES; do
	limit 60 "$JS" record --mode $rm -p $a,$b -F 250 -d 2 --stats -o prof.txt 2> rec.err
	rc=$?
	[ $rc -eq 0 ] || { cat rec.err; fail "[$rm] record -p A,B exited $rc"; }
	bad=$(grep -cvE "^tinyjit-($a|$b);tinyjit;" prof.txt)
	[ "$bad" -eq 0 ] || { grep -vE "^tinyjit-($a|$b);" prof.txt | head -3; fail "[$rm] $bad stacks do not start with their process"; }
	leaves_of prof.txt "tinyjit-$a" > a.leaves
	leaves_of prof.txt "tinyjit-$b" > b.leaves
	[ "$(head -1 a.leaves | cut -d' ' -f2)" = tj:hot ] || { cat a.leaves; fail "[$rm] A's hottest JIT leaf is not tj:hot"; }
	[ "$(head -1 b.leaves | cut -d' ' -f2)" = tj:boil ] || { cat b.leaves; fail "[$rm] B's hottest JIT leaf is not tj:boil"; }
	grep "^tinyjit-$a;" prof.txt | grep -qE ';tj:(boil|steam)( |;)' && fail "[$rm] A's stacks hold B's functions"
	grep "^tinyjit-$b;" prof.txt | grep -qE ';tj:(hot|cool)( |;)' && fail "[$rm] B's stacks hold A's functions"
	for p in $a $b; do
		grep -q "stats: process $p (tinyjit): [1-9][0-9]* samples in the profile" rec.err ||
			{ cat rec.err; fail "[$rm] --stats has no line for process $p"; }
	done

	limit 60 "$JS" record --mode $rm -p $a,$b -F 250 -d 1.5 --format pprof -o prof.pb.gz 2> rec.err ||
		{ cat rec.err; fail "[$rm] record -p A,B --format pprof exited $?"; }
	"$JTB/pprofdump" prof.pb.gz > dump || { cat dump; fail "[$rm] the pprof file does not decode"; }
	for p in $a $b; do
		grep -qE "^process $p tinyjit [1-9]" dump || { cat dump; fail "[$rm] pprof: no samples labelled pid $p, comm tinyjit"; }
	done
	[ "$(awk '$1 == "process"' dump | wc -l)" -eq 2 ] || { cat dump; fail "[$rm] pprof: other processes than A and B"; }
	top_a=$(awk -v p=$a '$1 == "pleaf" && $2 == p && $3 ~ /^tj:/ { print $4, $3 }' dump | sort -rn | head -1 | cut -d' ' -f2)
	top_b=$(awk -v p=$b '$1 == "pleaf" && $2 == p && $3 ~ /^tj:/ { print $4, $3 }' dump | sort -rn | head -1 | cut -d' ' -f2)
	[ "$top_a" = tj:hot ] && [ "$top_b" = tj:boil ] || { cat dump; fail "[$rm] pprof: hottest JIT leaf of A is '$top_a', of B '$top_b'"; }

	limit 60 "$JS" record --mode $rm -p $a,$b -F 250 -d 0.5 --format svg -o prof.svg 2> rec.err ||
		{ cat rec.err; fail "[$rm] record -p A,B --format svg exited $?"; }
	for p in $a $b; do
		grep -q "data-k=\"process\"><title>tinyjit-$p (" prof.svg || fail "[$rm] svg: no frame for process tinyjit-$p"
	done
	note "[$rm] A: $(head -1 a.leaves), B: $(head -1 b.leaves); pprof: A $top_a, B $top_b"
done

limit 60 "$JS" record -p $a -F 250 -d 0.5 -o one.txt 2> rec.err || { cat rec.err; fail "record -p A exited $?"; }
grep -q "^tinyjit-$a;" one.txt && fail "record -p A gives its stacks a process frame"
grep -q "^tinyjit;.*;tj:hot [0-9]*$" one.txt || { head -3 one.txt; fail "record -p A: stacks are not 'thread;...;leaf count'"; }
pass "record -p A,B: each process's stacks are under its own frame and named from its own JIT ($RECORD_MODES)"
