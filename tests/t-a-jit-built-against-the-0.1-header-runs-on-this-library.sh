# SPDX-License-Identifier: MIT
# A JIT compiled against the 0.1 header (tests/abi/0.1/jitunwind.h: no sz
# in ju_options or ju_blob) and linked as a 0.1 binary was, with
# unversioned references, runs against this tree's shared library: its
# calls reach the JITUNWIND_0.1 entry points, so it opens, publishes one
# blob and a batch, unpublishes in all three ways, and glibc backtrace()
# and gdb see through its JIT frames (tests/abi/old_client.c).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
C=$TB/abi/old-client
need_file "$C" "make tests"
need_cmd readelf
# a 0.1 binary: its references to the library carry no version
readelf --dyn-syms -W "$C" | grep -E ' UND ju_' > refs || fail "the client references no ju_ function"
grep -q '@' refs && { cat refs; fail "the client's references are versioned: it is not linked as a 0.1 binary"; }
export LD_LIBRARY_PATH=$BUILD
limit 60 "$C" check > check.out 2>&1
rc=$?
cat check.out
[ $rc = 77 ] && skip "$(tail -1 check.out)"
[ $rc = 0 ] || fail "the 0.1 client's checks against this library"
need_gdb
start_child "$C" wait
gdb_bt_live "$CHILD_PID"
kill_tree "$CHILD_PID"
check_frames old-client.expect < frames || { cat gdb.out; fail "gdb bt of the 0.1 client"; }
pass "a 0.1 binary publishes, batches and unpublishes on this library; backtrace() and gdb see its JIT frames"
