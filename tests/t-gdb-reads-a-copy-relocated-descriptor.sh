# SPDX-License-Identifier: MIT
# A program that refers to __jit_debug_descriptor directly gets a copy
# relocation: the list lives in the executable's copy while the library's
# own definition (next to __jit_debug_register_code) stays empty.  gdb must
# still find the JIT code the program published there.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_gdb
P=$TB/test-gdb-copy-relocation
need_file "$P"
readelf -rW "$P" | grep -q 'R_X86_64_COPY.*__jit_debug_descriptor' ||
	skip "the test program has no copy relocation of the descriptor (compiler default)"
limit 120 "$GDB" -nx -batch -ex run -ex 'p (void *)region' -ex 'info symbol region + 7 * 64' \
	--args "$P" trap > gdb.out 2>&1
grep -q 'SIGTRAP\|SIGILL' gdb.out || { cat gdb.out; fail "the program did not stop in its trap"; }
want=$(sed -n 's/^blob 0x[0-9a-f]* \(b[0-9a-f_]*\)$/\1/p' gdb.out)
[ -n "$want" ] || { cat gdb.out; fail "the program did not print its blob"; }
grep -q "^$want in section .text of <in-memory@" gdb.out || { cat gdb.out; fail "gdb does not name the blob $want"; }
pass "gdb names JIT code published through a copy-relocated descriptor ($want)"
