# SPDX-License-Identifier: MIT
# jitstack record (perf events) on tinyjit running progs/deep.tj at the
# bottom of a 64-frame stack, its stack copies started at 1 KiB
# (JITSTACK_STACK_COPY), less than the unwind needs: record finds its unwinds run
# off the copy's end, grows the copy, and then unwinds whole stacks -- of
# the samples whose copy was not cut short, at least 90 % reach _start and
# hold tj:leaf (those cut short were taken before the copy grew: how many
# depends on how fast record drains its first ring, slower under ASan or
# load) -- and reports the samples it could unwind only partly, on stderr
# and as a pprof comment.
# And on tests/latethread.c, spinning a few frames deep, copies started at
# 32 KiB shrink, and its stacks are still unwound whole.
. "$(dirname "$0")/lib.sh"
need_file "$TJ" "make tinyjit"
need_file "$JTB/pprofdump" "make jitstack-check"
case " $RECORD_MODES " in *" perf "*) ;; *) skip "perf mode is not among RECORD_MODES ($RECORD_MODES)" ;; esac
"$TJ" --frames=fp --cfi=region --publish=gdb "$ROOT/jitstack/tests/progs/deep.tj" 15 100000000000 > /dev/null 2>&1 &
pid=$!
CLEANUP_PIDS="${CLEANUP_PIDS:-} $pid"
sleep 0.3
JITSTACK_STACK_COPY=1024 limit 60 "$JS" record --mode perf -p $pid -F 500 -d 2 --stats -o prof.txt 2> rec.err ||
	{ cat rec.err; fail "record exited $?"; }
grown=$(sed -n 's/.*, \([0-9]*\) grown,.*/\1/p' rec.err)
trunc=$(sed -n 's/.* \([0-9]*\) truncated stack copies.*/\1/p' rec.err)
[ "${grown:-0}" -ge 1 ] || { cat rec.err; fail "the stack copy never grew"; }
[ "${trunc:-0}" -ge 1 ] || { cat rec.err; fail "no sample counted as truncated, from a 1 KiB copy"; }
grep -q "unwound only partly: the stack ran past its copy" rec.err || { cat rec.err; fail "stderr does not say so"; }
read total whole <<EOT
$(awk '{ t += $NF } /^[^;]*;_start;.*;tj:leaf [0-9]+$/ { w += $NF } END { print t + 0, w + 0 }' prof.txt)
EOT
[ "$total" -ge 50 ] || { cat rec.err; fail "only $total samples"; }
full=$((total - trunc))
[ "$full" -ge 50 ] || { cat rec.err; fail "only $full of $total samples had a whole stack copy"; }
[ $((100 * whole)) -ge $((90 * full)) ] ||
	{ cat prof.txt rec.err; fail "$whole of the $full samples with a whole copy ($total in all) unwound whole"; }
JITSTACK_STACK_COPY=1024 limit 60 "$JS" record --mode perf -p $pid -F 500 -d 0.5 --format pprof -o prof.pb.gz 2> rec.err ||
	{ cat rec.err; fail "pprof record exited $?"; }
"$JTB/pprofdump" prof.pb.gz > dump || { cat dump; fail "the pprof file does not decode"; }
grep -q "^comment jitstack: [0-9]* samples unwound only partly" dump || { cat dump; fail "no pprof comment on the partly unwound samples"; }
kill_tree $pid

need_file "$JTB/latethread" "make jitstack-check"
start_child lt.out "$JTB/latethread" -1 0 0
JITSTACK_STACK_COPY=32768 limit 60 "$JS" record --mode perf -p "$CHILD_PID" -F 500 -d 2.5 --stats -o prof.txt 2> rec.err ||
	{ cat rec.err; fail "record exited $?"; }
shrunk=$(sed -n 's/.* grown, \([0-9]*\) shrunk.*/\1/p' rec.err)
[ "${shrunk:-0}" -ge 1 ] || { cat rec.err; fail "a 32 KiB copy of a shallow stack never shrank"; }
read total2 whole2 <<EOT
$(awk '{ t += $NF } /^latethread;_start;.*;main_spin/ { w += $NF } END { print t + 0, w + 0 }' prof.txt)
EOT
[ "$total2" -ge 50 ] && [ $((100 * whole2)) -ge $((99 * total2)) ] ||
	{ cat prof.txt rec.err; fail "after shrinking, $whole2 of $total2 samples unwound whole"; }
pass "a short stack copy grows ($grown times; $trunc samples truncated), $whole of the other $full samples unwound whole; a long one shrinks ($shrunk times), $whole2 of $total2 whole"
