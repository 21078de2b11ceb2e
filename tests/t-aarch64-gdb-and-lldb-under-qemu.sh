# SPDX-License-Identifier: MIT
# AArch64, under qemu-user: gdb-multiarch and lldb, connected to qemu's gdb
# stub, follow the child's GDB JIT interface registrations and show its
# aborted stack with every frame named, JIT frames of all three kinds
# included, and jit:fp at the line of the table the child published.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
. "$ROOT/tests/aarch64.sh"
need_aarch64
need_cmd gdb-multiarch
need_lldb

for d in 1 3; do
	start_a64_stub abort --depth $d
	limit 120 gdb-multiarch -nx -batch -ex "set pagination off" -ex "set sysroot $QEMU_LD_PREFIX" \
		-ex "file $A64_CHILD" -ex "target remote localhost:$GDB_PORT" -ex continue -ex bt \
		> gdb.out 2>&1
	kill_tree "$QEMU_PID"
	grep -q 'SIGABRT' gdb.out || { cat gdb.out child.out; fail "gdb: the child did not reach its abort"; }
	gdb_frames < gdb.out > frames
	check_frames child.expect < frames || { cat gdb.out; fail "gdb-multiarch bt at depth $d"; }
	want=$(jit_fp_line frames child.expect) || fail "cannot derive jit:fp's line"
	grep -q " in jit:fp () at $want\$" gdb.out || { grep 'jit:' gdb.out; fail "gdb: jit:fp is not shown at $want"; }
	echo "gdb-multiarch, depth $d: frames match, jit:fp at $want"

	start_a64_stub abort --depth $d
	limit 120 "$LLDB" --no-lldbinit -b -o "platform select remote-linux" \
		-o "target create --arch aarch64-unknown-linux-gnu $A64_CHILD" \
		-o "settings set target.exec-search-paths $QEMU_LD_PREFIX/lib" \
		-o "gdb-remote localhost:$GDB_PORT" -o continue -k bt -k kill > lldb.out 2>&1
	kill_tree "$QEMU_PID"
	# the backtrace only: lldb also prints a frame at each stop
	sed -n '/^(lldb) bt/,$p' lldb.out | lldb_frames > frames
	check_frames child.expect < frames || { cat lldb.out; fail "lldb bt at depth $d"; }
	grep -q "jit:fp at $want\$" lldb.out || { grep 'jit:' lldb.out; fail "lldb: jit:fp is not shown at $want"; }
	echo "lldb, depth $d: frames match, jit:fp at $want"
done
grep 'jit:' gdb.out
pass "AArch64 under qemu: gdb-multiarch and lldb name fp, cfi and region JIT frames and jit:fp's line"
