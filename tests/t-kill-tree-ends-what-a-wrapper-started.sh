# SPDX-License-Identifier: MIT
# kill_tree (tests/kill-tree.sh, used by every test's clean-up) ends a
# background process and what it started: killing the `timeout` wrapper
# around a qemu gdb stub used to leave qemu running, re-parented to init.
. "$(dirname "$0")/lib.sh"
need_cmd pgrep
m=tree-$$-$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
# the shape of start_a64_stub: a subshell that execs timeout, which forks
# the real process
(exec timeout -k 5 120 sh -c "sleep 300; : $m") &
w=$!
for _ in $(seq 100); do pgrep -f "$m" >/dev/null && break; sleep 0.05; done
pgrep -f "$m" >/dev/null || fail "the wrapped process did not start"
kill_tree $w
wait $w 2>/dev/null
for _ in $(seq 40); do pgrep -f "$m" >/dev/null || break; sleep 0.05; done
pgrep -f "$m" >/dev/null && fail "the wrapped process outlived kill_tree of its wrapper"
pass "kill_tree of a wrapper ends the process it wraps"
