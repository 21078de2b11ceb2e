# SPDX-License-Identifier: MIT
# The reaper that runs every test (tests/tools/reaper.c) fails a command
# that passed but left a process running, names it, and ends it: what the
# suite starts cannot outlive it.
. "$(dirname "$0")/lib.sh"
R=$BUILD/tools/reaper
need_file "$R" "make test-tools builds it"

# a marker no other process on the machine has in its command line
m=leak-$$-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
limit 30 "$R" -n leaky -- sh -c "sh -c 'sleep 300; : $m' & exit 0" > reaper.out 2>&1
rc=$?
cat reaper.out
[ $rc -eq 1 ] || fail "a passing command that leaked: exit $rc, want 1"
grep -q "leaky: left running: pid [0-9]*: .*$m" reaper.out || fail "the leaked process is not named"
pgrep -f "$m" >/dev/null && fail "the leaked process is still running"

# a clean command keeps its own status and a quiet reaper
limit 30 "$R" -- sh -c 'sleep 0.1 & wait; exit 3' > clean.out 2>&1
rc=$?
[ $rc -eq 3 ] || fail "a clean command's exit 3 came back as $rc"
[ -s clean.out ] && { cat clean.out; fail "the reaper spoke about a clean command"; }

# an interrupted command: the reaper passes SIGTERM on and still cleans up
"$R" -n interrupted -- sh -c "sh -c 'sleep 300; : $m-bg' & exec sleep 300" > int.out 2>&1 &
rp=$!
for _ in $(seq 100); do pgrep -f "$m-bg" >/dev/null && break; sleep 0.05; done
kill -TERM $rp
wait $rp
rc=$?
cat int.out
[ $rc -ne 0 ] || fail "an interrupted command exited 0"
pgrep -f "$m-bg" >/dev/null && fail "the interrupted command's background process survived"
pass "a leak fails its test and is ended; exit statuses pass through; SIGTERM is forwarded"
