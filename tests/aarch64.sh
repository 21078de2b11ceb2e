# SPDX-License-Identifier: MIT
# aarch64.sh - sourced by the AArch64 drivers (t-aarch64-*.sh) after lib.sh:
# the child cross-built for AArch64 ($BUILD/aarch64/child, make
# tests-aarch64) runs under qemu-user; debuggers reach it through qemu's
# gdb stub.

A64_CHILD=$BUILD/aarch64/child
QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}
export QEMU_LD_PREFIX

need_aarch64() {
	need_cmd qemu-aarch64
	need_file "$A64_CHILD" "make tests-aarch64 builds it"
	need_file "$QEMU_LD_PREFIX/lib/ld-linux-aarch64.so.1" "libc6-arm64-cross"
}

# Run the AArch64 child (no core files: qemu would write its own).
a64_child() { # ARGS...
	(ulimit -c 0 && exec timeout -k 5 60 qemu-aarch64 "$A64_CHILD" "$@")
}

# Is TCP port $1 in LISTEN state on this machine?
port_listening() {
	hex=$(printf '%04X' "$1")
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v p=":$hex" '$2 ~ p"$" && $4 == "0A" { f = 1 } END { exit !f }'
}

# Start the child under qemu with its gdb stub on a free port; the child
# waits for the debugger before its first instruction.  Sets GDB_PORT and
# QEMU_PID.  Usage: start_a64_stub ARGS...
start_a64_stub() {
	for _ in 1 2 3 4 5; do
		GDB_PORT=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom) % 40000 ))
		port_listening "$GDB_PORT" && continue
		(ulimit -c 0 && exec timeout -k 5 120 qemu-aarch64 -g "$GDB_PORT" "$A64_CHILD" "$@") \
			> child.out 2>&1 &
		QEMU_PID=$!
		CLEANUP_PIDS="${CLEANUP_PIDS:-} $QEMU_PID"
		for _ in $(seq 100); do
			port_listening "$GDB_PORT" && return 0
			kill -0 "$QEMU_PID" 2>/dev/null || break
			sleep 0.05
		done
		kill_tree "$QEMU_PID"
		wait "$QEMU_PID" 2>/dev/null
	done
	cat child.out
	fail "qemu-aarch64 -g did not start listening"
}
