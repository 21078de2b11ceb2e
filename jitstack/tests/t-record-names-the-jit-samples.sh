# SPDX-License-Identifier: MIT
# jitstack record -F 1000 --addresses on tinyjit running progs/hot.tj, in
# two JIT modes (frame pointers with the region rule; no frame pointers,
# exact CFI): of the samples whose leaf pc lies in the target's JIT code
# (its anonymous executable mappings, read from /proc/PID/maps), at least
# 99 % are named after a tinyjit function (tj:NAME), in each record mode.
. "$(dirname "$0")/lib.sh"
need_file "$TJ" "make tinyjit"
HOT=$ROOT/jitstack/tests/progs/hot.tj
for jm in "fp region" "nofp exact"; do
	set -- $jm
	"$TJ" --frames=$1 --cfi=$2 --publish=gdb "$HOT" 100000000 > /dev/null 2>&1 &
	pid=$!
	CLEANUP_PIDS="${CLEANUP_PIDS:-} $pid"
	sleep 0.3
	# anonymous r-x mappings: "lo-hi r-xp 00000000 00:00 0" with no path
	awk '$2 ~ /^r.x/ && $5 == 0 && NF == 5 { split($1, a, "-"); print a[1], a[2] }' /proc/$pid/maps > jit.ranges
	[ -s jit.ranges ] || { cat /proc/$pid/maps; fail "[$jm] tinyjit has no anonymous executable mapping"; }
	for mode in $RECORD_MODES; do
		limit 60 "$JS" record --mode $mode -p $pid -F 1000 -d 2 --addresses -o prof.txt 2> rec.err ||
			{ cat rec.err; fail "[$jm $mode] record exited $?"; }
		python3 - jit.ranges prof.txt > counts <<'PY'
import re, sys
ranges = [tuple(int(x, 16) for x in l.split()) for l in open(sys.argv[1])]
jit = named = 0
for line in open(sys.argv[2]):
    stack, count = line.rstrip("\n").rsplit(" ", 1)
    m = re.match(r"(.*) \[(0x[0-9a-f]+)\]$", stack.split(";")[-1])
    if not m:
        continue
    pc = int(m.group(2), 16)
    if any(lo <= pc < hi for lo, hi in ranges):
        jit += int(count)
        named += int(count) if m.group(1).startswith("tj:") else 0
print(jit, named)
PY
		read jit named < counts
		[ "$jit" -ge 100 ] || { cat prof.txt rec.err; fail "[$jm $mode] only $jit samples in JIT code"; }
		[ $((100 * named)) -ge $((99 * jit)) ] || { grep -v ';tj:[^;]* \[[^;]*$' prof.txt | head; fail "[$jm $mode] $named of $jit JIT samples named"; }
		note "[$jm $mode] $named of $jit samples in JIT code named"
	done
	kill_tree $pid
done
pass "at least 99% of the samples in JIT code are named, in every record mode"
