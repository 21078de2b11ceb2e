# jitstack record (ptrace sampling, collapsed stacks) of spin.py, whose
# time is spent in the trace of spin's loop: the leaf most samples end in
# is spin's executor, "py:spin (spin.py:ENTER)" (ENTER: "# mark: enter",
# the loop's backward jump), with a third of the samples at least, and the
# stacks reach Py_BytesMain.  Baseline, which must fail: the stock JIT
# (its executors are nameless to jitstack, so no leaf names spin).
#
# SPDX-License-Identifier: MIT
. "$(dirname "$0")/lib.sh"
JS=$BUILD/jitstack/jitstack
need_file "$JS" "make jitstack"
enter=$(mark enter spin.py)
want="py:spin (spin.py:$enter)"

# rec RUN WHAT: WHAT.txt, the collapsed profile of spin.py run by RUN;
# WHAT.leaves, "COUNT LEAF" hottest first
rec() {
	start_ready spin.out '^ready' "spin.py ($2)" "$1" spin.py 30
	limit 120 "$JS" record -p "$CHILD_PID" -d 3 -F 199 --mode ptrace -o "$2.txt" 2> "$2.err" ||
		{ cat "$2.err"; fail "jitstack record ($2)"; }
	kill_tree "$CHILD_PID"
	awk '{ n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); c[f[k]] += n; all += n }
	     END { for (l in c) print c[l], l; print all, "(all)" }' "$2.txt" | sort -rn > "$2.leaves"
}
# hottest WHAT: spin's executor is the hottest leaf, with a third of all
# samples, and a stack with it reaches Py_BytesMain
hottest() {
	all=$(awk '$2 == "(all)" { print $1 }' "$1.leaves")
	top=$(grep -v '(all)$' "$1.leaves" | head -1)
	[ "${top#* }" = "$want" ] && [ $((${top%% *} * 3)) -ge "$all" ] &&
		grep -F ";$want" "$1.txt" | grep -q ';Py_BytesMain;'
}

rec "$PYRUN" with
head -5 with.leaves
hottest with || { cat with.err; fail "the hottest leaf is not '$want' with a third of the samples"; }
rec "$PY_STOCK" stock
if hottest stock; then
	fail "the stock JIT passes the check too, so it proves nothing"
fi
echo "stock JIT: FAIL as it must (hottest leaves: $(grep -v '(all)$' stock.leaves | head -2 | tr '\n' ' '))"
pass "jitstack record finds $want the hottest function of spin.py; on the stock JIT it does not"
