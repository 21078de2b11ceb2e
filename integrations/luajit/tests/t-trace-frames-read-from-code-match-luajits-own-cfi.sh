# SPDX-License-Identifier: MIT
# The frame traceframe.c reads from a trace's code: on hand-written code in
# every shape LuaJIT's backend emits (test-traceframe), and against the
# binary itself: the interpreter's own FDE in /usr/bin/luajit's .eh_frame
# (vm_x64.dasc emit_asm_debug) says CFA = rsp+80 with rbp, rbx, r15, r14
# at CFA-16, -24, -32, -40, which are the trace rows' numbers (80 + the 16
# BC_JLOOP adds, and the same four offsets).  The module decodes every
# trace of our programs (t-programs-... counts no failure).
. "$(dirname "$0")/lib.sh"
need_file "$LJB/test-traceframe" "make luajit"
need_cmd readelf
"$LJB/test-traceframe" || fail "test-traceframe"
# The FDE whose program is def_cfa_offset 80 and the four offsets: LuaJIT's
# interpreter (one FDE for all of lj_vm_asm_begin..).
readelf --debug-dump=frames "$LUAJIT" > frames.txt 2>/dev/null || fail "readelf on $LUAJIT"
python3 - frames.txt <<'PY' || fail "no FDE in luajit's .eh_frame describes the interpreter frame as traceframe.h does"
import re, sys
text = open(sys.argv[1]).read()
want = ["DW_CFA_def_cfa_offset: 80", "DW_CFA_offset: r6 (rbp) at cfa-16", "DW_CFA_offset: r3 (rbx) at cfa-24",
        "DW_CFA_offset: r15 (r15) at cfa-32", "DW_CFA_offset: r14 (r14) at cfa-40"]
for fde in re.split(r"\n\n", text):
    if " FDE " in fde and all(w in fde for w in want):
        print("the interpreter's FDE in luajit:", fde.splitlines()[0].strip())
        sys.exit(0)
sys.exit(1)
PY
pass "trace frames decode as LuaJIT's backend emits them, and the interpreter's own FDE has the numbers the rows use"
