# SPDX-License-Identifier: MIT
# kill-tree.sh - sourced by the test helpers (tests/lib.sh, jitstack/tests/
# lib.sh): end a background process together with everything it started.
#
# `kill -9 $!` is not enough: $! is often a wrapper (`timeout`, a subshell)
# whose child then runs on, re-parented to init (a qemu gdb stub waiting for
# a debugger that never comes).  Each process is stopped first, so it can
# start nothing more, then its children are ended the same way, then it.

kill_tree() ( # PID...
	for p in "$@"; do
		kill -STOP "$p" 2>/dev/null || continue
		kill_tree $(pgrep -P "$p")
		kill -KILL "$p" 2>/dev/null
	done
)
