# SPDX-License-Identifier: MIT
# A process whose million functions are named by a perf map of a million
# lines (bench/scale/scalejit perfmap: 32 MB), or by a jitdump of a
# million loads, each with its CFI (scalejit jitdump: 224 MB), and that
# sleeps under one of them: jitstack -p names that JIT frame and reaches
# main, within 96 MiB of address space (ulimit -v), keeping only the
# line or load that holds the frame.  Reading them whole took 90 MB for
# the map and 2.7 GB (and a minute) for the dump: those dumps fail here.
. "$(dirname "$0")/lib.sh"
SJ=$BUILD/bench/scalejit
need_file "$SJ" "make bench-scale-build"
N=1000000
# writing 224 MB of jitdump takes scalejit seconds, and many more under
# AddressSanitizer on a busy machine: up to a minute
READY_TRIES=1200
for kind in perfmap jitdump; do
	start_child sj-$kind.out "$SJ" $kind $N
	bounded limit 60 "$JS" -p "$CHILD_PID" --stats > out 2> err
	rc=$?
	[ $rc -eq 0 ] || { cat out err; fail "[$kind] jitstack exited $rc within 96 MiB"; }
	[ $kind = perfmap ] && tag=perf-map || tag=jitdump
	grep -Eq "^#[0-9]+ +0x[0-9a-f]+ scale_fn_$((N / 2))\+0x[0-9a-f]+ .*\[$tag\]" out ||
		{ cat out err; fail "[$kind] the JIT frame is not named scale_fn_$((N / 2)) from the $tag"; }
	grep -Eq ' park\+0x[0-9a-f]+ \(scalejit\)' out && grep -Eq ' main\+0x[0-9a-f]+ \(scalejit\)' out ||
		{ cat out; fail "[$kind] the stack does not reach park and main below the JIT frame"; }
	# the summary counts what was not kept: all but the one over the pc
	unread=$(sed -n "s/^JIT: .*[ (]\([0-9]*\) not read.*/\1/p" out)
	[ "$unread" = $((N - 1)) ] || { grep '^JIT' out; fail "[$kind] $unread entries not read, expected $((N - 1))"; }
	if [ $kind = jitdump ]; then
		# unwound with the load's own CFI: the frame is in its module, and
		# park below it was not found by frame pointers
		grep -Eq "scale_fn_$((N / 2))\+0x[0-9a-f]+ \(\[jitdump 0x" out ||
			{ cat out; fail "[jitdump] the JIT frame is not in a module made of its CFI"; }
		grep -E ' park\+' out | grep -q '\[fp\]' && { cat out; fail "[jitdump] park found by frame pointers"; }
	fi
	kill_tree "$CHILD_PID"
	rm -f jit-*.dump
	note "[$kind] scale_fn_$((N / 2)) named, main reached, $unread of $N not read"
done
pass "a million-line perf map and a million-load jitdump: the frame named, main reached, in 96 MiB"
