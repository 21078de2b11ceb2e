# gdb runs hot.py and stops in os.getpid called from the trace of hot's
# loop, which inlined small(): below the C frames of the call, the
# backtrace shows the inline frame py:small at the line that calls
# os.getpid ("# mark: getpid"), then the executor "py:hot (hot.py:ENTER)"
# at the line that calls small ("# mark: call"), ENTER the line the trace
# starts at ("# mark: enter": the loop's backward jump), and goes on to
# Py_BytesMain with no frame it cannot name (lib.sh gdb_check).  The
# callee-saved registers gdb unwinds through the executor into
# _PyEval_EvalFrameDefault's frame equal the ones that frame has when the
# executor returns to it.  Baseline, which must fail: the stock JIT (the
# executor is "??" and gdb loses the stack).
#
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/debuggers.sh"
need_gdb
getpid=$(mark getpid) enter=$(mark enter) call=$(mark call)

# run_gdb PYTHON: gdb.out; once hot.py has warmed its loop up (os.getppid),
# the 11th os.getpid (the first runs before hot's loop enters its trace).
run_gdb() {
	cat > hot.gdb <<G
set pagination off
set confirm off
set startup-with-shell off
$GDB_ENV
break os_getppid
run
break os_getpid
ignore 2 10
continue
bt
frame function _PyEval_EvalFrameDefault
info registers rbx rbp r12 r13 r14 r15 rsp
delete
tbreak *\$pc
continue
info registers rbx rbp r12 r13 r14 r15 rsp
kill
G
	limit 180 "$GDB" -nx -batch -x hot.gdb --args "$1" hot.py 1000 > gdb.out 2>&1
}

run_gdb "$PY"
if ! gdb_check hot.py "$getpid" "$enter" "$call" < gdb.out > why.txt; then
	cat gdb.out
	fail "$(cat why.txt)"
fi
cat bt.txt
awk '/^(rbx|rbp|r1[2-5]|rsp) / { print $1, $2 }' gdb.out > regs.txt
[ "$(wc -l < regs.txt)" = 14 ] || { cat gdb.out; fail "gdb printed no registers"; }
head -7 regs.txt > unwound.txt; tail -7 regs.txt > real.txt
diff unwound.txt real.txt > regs.diff ||
	{ cat regs.diff; fail "registers unwound through the executor differ from _PyEval_EvalFrameDefault's own"; }
echo "_PyEval_EvalFrameDefault's callee-saved registers, unwound and real: $(tr '\n' ' ' < real.txt)"

run_gdb "$PY_STOCK"
if gdb_check hot.py "$getpid" "$enter" "$call" < gdb.out > why.txt; then
	cat bt.txt
	fail "the stock JIT passes the check too, so it proves nothing"
fi
echo "stock JIT: FAIL as it must ($(cat why.txt))"
pass "gdb shows py:small at hot.py:$getpid inlined into py:hot (hot.py:$enter) at hot.py:$call, and reaches main; the stock JIT does not"
