# SPDX-License-Identifier: MIT
# A JIT image registered while record samples is read when a sample's pc
# falls in it: bench/scale/scalejit late publishes 100,000 functions,
# then, half a second after record started, one more (late_fn), under
# which it spins for 3 s.  The lazy reader knew late_fn's entry only after
# the descriptor's seq moved, and copies its image at the first sample in
# it; the samples in spin must be named late_fn below, in every mode.
. "$(dirname "$0")/lib.sh"
SJ=$BUILD/bench/scalejit
need_file "$SJ" "make bench-scale-build"
for mode in $RECORD_MODES; do
	start_child sj.out "$SJ" late 100000
	limit 60 "$JS" record --mode $mode -p "$CHILD_PID" -F 1000 -d 2.5 --stats -o prof.txt 2> rec.err
	rc=$?
	kill_tree "$CHILD_PID"
	[ $rc -eq 0 ] || { cat rec.err; fail "[$mode] record exited $rc"; }
	named=$(awk '/;late_fn;spin / {s += $NF} END {print s + 0}' prof.txt)
	inspin=$(awk '/;spin / {s += $NF} END {print s + 0}' prof.txt)
	[ "$inspin" -ge 100 ] || { cat prof.txt rec.err; fail "[$mode] only $inspin samples in spin"; }
	[ $((100 * named / inspin)) -ge 90 ] ||
		{ head -20 prof.txt; fail "[$mode] $named of $inspin samples in spin are under late_fn"; }
	note "[$mode] $named of $inspin samples in spin named late_fn"
done
pass "an image registered between samples names them ($RECORD_MODES)"
