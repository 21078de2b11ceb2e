# SPDX-License-Identifier: MIT
# scripts/reap-perf-maps.sh removes the perf maps of the run's own
# processes that are gone, and no other: when several trees test at once,
# a map whose process is gone may be another run's (a core test of theirs
# reads it after its process died).  A run -- a driver-like script under
# the reaper, as tests/run.sh runs every test -- starts a process that
# writes /tmp/perf-PID.map and exits, and one that writes its map and is
# still running when the run reaps; meanwhile a process the run did not
# start (this test's own) writes its map and exits.  The run's reaping
# removes its exited process's map only: the outsider's map and the
# running process's map are left.
. "$(dirname "$0")/lib.sh"
R=$BUILD/tools/reaper
need_file "$R" "make test-tools builds it"

# A process that writes its own perf map (its pid to the file $1) and
# lives on a moment, as any JIT does, then exits.
writer='echo "1000 10 w" > /tmp/perf-$$.map; echo $$ > "$1"; exec sleep'

cat > run.sh <<EOF
touch .start
sh -c '$writer 0.3' own own.pid
sh -c '$writer 30' alive alive.pid &
alive=\$!
touch ready
for _ in \$(seq 200); do [ -e outsider.done ] && break; sleep 0.05; done
sh "$ROOT/scripts/reap-perf-maps.sh" .start
kill \$alive
wait \$alive 2> /dev/null
exit 0
EOF
limit 60 "$R" -n run -- sh run.sh > run.out 2>&1 &
run=$!
for _ in $(seq 200); do [ -e ready ] && break; sleep 0.05; done
[ -e ready ] || { cat run.out; fail "the run did not start"; }
sh -c "$writer 0.3" outsider outsider.pid
touch outsider.done
wait $run || { rc=$?; cat run.out; fail "the run exited $rc"; }

own=/tmp/perf-$(cat own.pid).map alive=/tmp/perf-$(cat alive.pid).map
outsider=/tmp/perf-$(cat outsider.pid).map
# (this test's own reaping would remove them too, but not under an old reaper)
left_own=$([ -e "$own" ] && echo 1) left_alive=$([ -e "$alive" ] && echo 1)
left_outsider=$([ -e "$outsider" ] && echo 1)
rm -f "$own" "$alive" "$outsider"
kill -0 "$(cat outsider.pid)" 2>/dev/null && fail "the outsider is still running: the check proves nothing"
[ -z "$left_own" ] || { cat run.out; fail "the map of the run's exited process was left"; }
[ -n "$left_alive" ] || fail "the map of the run's running process was removed"
[ -n "$left_outsider" ] || fail "the map of a process the run did not start was removed (it had exited too)"
pass "the run's reaping removes its exited process's map, keeps its running process's and an outsider's"
