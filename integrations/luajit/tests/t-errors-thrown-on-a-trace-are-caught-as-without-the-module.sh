# SPDX-License-Identifier: MIT
# Lua errors caught by pcall give the same output, exit and no PANIC with
# the module as with stock luajit, with libgcc's registry (the unwinder
# channel) holding the traces: by default, and named (JITUNWIND=unwinder,gdb).
#   - trace_error.lua: the error is thrown while a trace is on the C stack
#     (the string.rep helper the trace calls runs out of room), three times;
#   - programs/errors.lua: error() in a function a hot traced loop calls,
#     error objects, xpcall handlers, coroutines.
# LuaJIT's own FDE over its machine code has the personality (lj_err.c
# err_unwind_jit) that leaves a trace through its exit stub; libgcc finds a
# published trace's FDE first, so the module publishes each trace with that
# personality, read from LuaJIT's FDE (jitunwind.c find_luajit_eh).  Without
# it (a module publishing traces with no personality to libgcc) LuaJIT
# panics in trace_error.lua, which this test would report.
. "$(dirname "$0")/lib.sh"
cp -r "$LJT/programs" .
chans='io.stderr:write("channels: ", require("jitunwind").channels(), "\n")'
caught() { grep -c '^pcall	[0-9]	false	not enough memory$' "$1"; }
for p in trace_error.lua programs/errors.lua; do
	limit 120 luajit -e "dofile('$p')" > stock.out 2> stock.err
	rc0=$?
	[ $rc0 = 0 ] || { cat stock.err; fail "$p: stock luajit exits $rc0: the workload is wrong"; }
	if [ $p = trace_error.lua ] && [ "$(caught stock.out)" != 3 ]; then
		cat stock.out
		fail "stock luajit does not catch the 3 errors: the workload is wrong"
	fi
	for env in "" unwinder,gdb; do
		JITUNWIND=$env limit 120 luajit -l jitunwind -e "$chans" -e "dofile('$p')" > mod.out 2> mod.err
		rc=$?
		what="$p with the module${env:+ (JITUNWIND=$env)}"
		grep -q PANIC mod.out mod.err && { cat mod.out mod.err; fail "$what: LuaJIT panics"; }
		[ $rc = 0 ] || { cat mod.err; fail "$what: exit $rc"; }
		grep -q '^channels: .*unwinder' mod.err || { cat mod.err; fail "$what: the unwinder channel is off"; }
		cmp -s stock.out mod.out || { diff stock.out mod.out | head; fail "$what: the output differs"; }
		echo "$what: $(sed -n 's/^channels: //p' mod.err), same output as stock luajit ($(wc -l < mod.out) lines)"
	done
done
pass "Lua errors thrown on traces and in traced loops are caught as without the module, with libgcc holding the traces"
