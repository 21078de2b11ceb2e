#!/bin/sh
# SPDX-License-Identifier: MIT
# run-inline.sh - with --inline the JIT inlines what its policy says, and the
# tree it publishes is what debuggers show:
#   - fib inlines itself to the depth bound and no further, a callee of
#     TJ_INLINE_SMALL instructions is inlined and one more is not, bad
#     --inline values are usage errors (counts from the programs' calls);
#   - gdb, live and in a core, shows each inlined call of nested.tj as an
#     inline frame (no address of its own) at its .tj line, and the same
#     guest frames as without inlining;
#   - jitstack, live and in a core, shows them marked inlined;
#   - the GDB images pass llvm-dwarfdump --verify and hold one
#     DW_TAG_inlined_subroutine per inlined call.
# Expected frames come from nested.tj's marked lines and the depth bound.
. "$(dirname "$0")/lib.sh"
NESTED=tinyjit/tests/nested.tj
W=$TJ_TEST_B/inline
mkdir -p "$W"

# calls_in FILE CALLER CALLEE: the calls of CALLEE in CALLER's body
calls_in() {
	awk -v f="$2" -v g="$3" '$1 == "func" { inside = index($2, f "(") == 1 }
		inside && $1 == "call" && $2 == g { n++ } END { print n + 0 }' "$1"
}
# want_inlined FILE F N: main calls F, F calls itself; each level to N
# inlines main's calls in main's code and F's in F's, in every copy
want_inlined() {
	m=$(calls_in "$1" main "$2") f=$(calls_in "$1" "$2" "$2") c=1 n=0 l=1
	while [ $l -le "$3" ]; do
		n=$((n + (m + f) * c))
		c=$((c * f))
		l=$((l + 1))
	done
	echo $n
}
inlined() { $TJ --stats --publish=none "$@" 2>&1 >/dev/null | sed -n 's/.* \([0-9]*\) calls inlined.*/\1/p'; }

# ---- the policy ----
fib20=$($TJ --jit=off "$EX/fib.tj" 20)
for n in 0 1 2 3 4; do
	expect_eq "fib_inlines_itself_to_the_bound [--inline=$n]" "$(want_inlined "$EX/fib.tj" fib $n)" \
		"$(inlined --inline=$n "$EX/fib.tj" 20)"
	expect_eq "fib_computes_the_same [--inline=$n]" "$fib20" "$($TJ --inline=$n --publish=none "$EX/fib.tj" 20)"
done
# a callee of `size` instructions (its ENTER included): load, negs, ret
small=$(sed -n 's/^#define TJ_INLINE_SMALL \([0-9]*\)$/\1/p' tinyjit/runtime/inline.h)
for size in "$small" $((small + 1)); do
	{
		printf 'func main()\n    push 7\n    call f 1\n    ret\nend\nfunc f(x)\n    load x\n'
		i=3
		while [ $i -lt "$size" ]; do echo "    neg" && i=$((i + 1)); done
		printf '    ret\nend\n'
	} >"$W/size.tj"
	want=$([ "$size" -le "$small" ] && echo 1 || echo 0)
	expect_eq "a_callee_of_${size}_instructions_is_inlined_${want}_times" "$want" "$(inlined --inline "$W/size.tj")"
done
for bad in --inline=17 --inline=-1 --inline=x --inline=; do
	$TJ $bad "$EX/fib.tj" 3 >/dev/null 2>&1
	expect_eq "bad_option_is_a_usage_error [$bad]" 2 $?
done

# ---- the published tree ----
line_of() { grep -n "# nested: $1" "$NESTED" | cut -d: -f1; }
main_line=$(line_of "main calls down")
self_line=$(line_of "down calls down")
bottom_line=$(line_of "the bottom")
depth=5

# want_frames N: the guest frames innermost first, NAME:LINE:GDB:JITSTACK.
# Frame j of the chain is main (j = 0) or down (j = 1 .. depth + 1); with
# --inline=N the call into frame j was inlined unless j is a multiple of
# N + 1 (a real call after N inlined ones).  gdb prints an address for the
# innermost guest frame of each native frame ("pc"), none for the frames
# inlined around it ("inline"); jitstack marks every guest frame but the
# outermost of its native frame.
want_frames() {
	j=$((depth + 1)) out=""
	while [ $j -ge 0 ]; do
		if [ $j -eq 0 ]; then fl=main:$main_line; elif [ $j -eq $((depth + 1)) ]; then fl=down:$bottom_line; else
			fl=down:$self_line; fi
		gdb=inline js=own
		if [ $j -eq $((depth + 1)) ] || [ $(((j + 1) % ($1 + 1))) -eq 0 ]; then gdb=pc; fi
		[ $((j % ($1 + 1))) -ne 0 ] && js=inlined
		out="$out $fl:$gdb:$js"
		j=$((j - 1))
	done
	echo "${out# }"
}
# gdb_frames FILE: NAME:LINE:pc|inline of each nested.tj frame of `bt`
gdb_frames() {
	sed -n -e 's/^#[0-9]* *0x[0-9a-f]* in tj:\([A-Za-z0-9_]*\) () at [^ ]*nested\.tj:\([0-9]*\)$/\1:\2:pc/p' \
		-e 's/^#[0-9]* *tj:\([A-Za-z0-9_]*\) () at [^ ]*nested\.tj:\([0-9]*\)$/\1:\2:inline/p' "$1" | paste -sd' ' -
}
# js_frames FILE (jitstack --json): NAME:LINE:own|inlined of each tj: frame
js_frames() {
	python3 - "$1" <<'PY'
import json, sys
frames = json.load(open(sys.argv[1]))["threads"][0]["frames"]
print(" ".join("%s:%s:%s" % (f["function"][3:], f.get("line"), "inlined" if f.get("inlined") else "own")
               for f in frames if (f.get("function") or "").startswith("tj:")))
PY
}
# the frames with the jitstack column (4th) or the gdb column (3rd) only
cols() { echo "$1" | tr ' ' '\n' | cut -d: -f"$2" | paste -sd' ' -; }

if ! command -v gdb >/dev/null; then
	skip "gdb is not installed: no gdb checks"
elif ! $TJ --publish=gdb "$EX/fib.tj" 1 >/dev/null 2>&1; then
	skip "this tinyjit cannot publish to gdb (built without libjitunwind?)"
else
	# the GDB images, dumped from the JIT list as gdb reads it
	cat >"$W/dump.gdb" <<GDB
set \$e = ((unsigned long *)&__jit_debug_descriptor)[2]
set \$i = 0
while \$e
  eval "dump binary memory $W/image%d.o %lu %lu", \$i, ((unsigned long *)\$e)[2], ((unsigned long *)\$e)[2] + ((unsigned long *)\$e)[3]
  set \$e = ((unsigned long *)\$e)[0]
  set \$i = \$i + 1
end
GDB
	# gcore writes every readable mapping, AddressSanitizer's shadow
	# included (tens of GB): no core of an instrumented tinyjit
	gcore="gcore $W/core"
	if readelf -d $TJ 2>/dev/null | grep -q 'libasan'; then
		gcore="echo no gcore: AddressSanitizer's shadow"
	fi
	for n in 0 2; do
		for cfi in region exact; do
			rm -f "$W"/image*.o "$W/core"
			gdb -q -nx -batch -ex run -ex bt -ex "$gcore" -x "$W/dump.gdb" \
				--args $TJ --inline=$n --cfi=$cfi --publish=gdb "$NESTED" 3 $depth >"$W/gdb.out" 2>&1
			want=$(cols "$(want_frames $n)" 1-3)
			got=$(gdb_frames "$W/gdb.out")
			expect_eq "gdb_shows_inlined_calls_as_inline_frames_at_their_lines [--inline=$n --cfi=$cfi]" \
				"$want" "$got"
			if [ -s "$W/core" ]; then
				gdb -q -nx -batch -ex bt $TJ "$W/core" >"$W/gdb-core.out" 2>&1
				expect_eq "gdb_shows_them_in_a_core [--inline=$n --cfi=$cfi]" "$want" \
					"$(gdb_frames "$W/gdb-core.out")"
			else
				skip "gdb wrote no core (gcore; none under AddressSanitizer) [--inline=$n --cfi=$cfi]"
			fi
			if ! command -v llvm-dwarfdump-19 >/dev/null; then
				skip "llvm-dwarfdump-19 is not installed"
				continue
			fi
			nsub=0 bad=""
			for img in "$W"/image*.o; do
				[ -f "$img" ] || { bad="no image was dumped"; break; }
				llvm-dwarfdump-19 --verify "$img" >"$W/verify.out" 2>&1 && grep -q '^No errors' "$W/verify.out" ||
					bad="$bad $(basename "$img"): $(tail -n 3 "$W/verify.out")"
				nsub=$((nsub + $(llvm-dwarfdump-19 --debug-info "$img" | grep -c DW_TAG_inlined_subroutine)))
			done
			expect_eq "the_images_verify [--inline=$n --cfi=$cfi]" "" "$bad"
			expect_eq "one_inlined_subroutine_per_inlined_call [--inline=$n --cfi=$cfi]" \
				"$(want_inlined "$NESTED" down $n)" "$nsub"
		done
	done
fi

JS=$(dirname "$TJ")/../jitstack/jitstack
if [ ! -x "$JS" ]; then
	skip "$JS is not built (make jitstack): no jitstack checks"
else
	n=2
	want=$(cols "$(want_frames $n)" 1,2,4)
	TJ_PROBE_WAIT=30 $TJ --inline=$n --publish=gdb "$NESTED" 2 $depth >"$W/wait.out" 2>&1 &
	pid=$!
	i=0
	while [ $i -lt 100 ] && ! grep -q waiting "$W/wait.out"; do sleep 0.1 && i=$((i + 1)); done
	timeout 60 "$JS" -p $pid --json >"$W/js.json" 2>"$W/js.err"
	timeout 60 "$JS" -p $pid >"$W/js.txt" 2>&1
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	expect_eq "jitstack_marks_the_inlined_calls_live [--inline=$n]" "$want" "$(js_frames "$W/js.json" 2>&1)"
	check "jitstack_text_says_inlined" grep -q " tj:down (.*) at [^ ]*nested\.tj:$self_line \[inlined\]\$" "$W/js.txt"
	if [ -s "$W/core" ]; then
		# the last core gdb wrote: --inline=2 --cfi=exact
		timeout 60 "$JS" --core "$W/core" --exe $TJ --json >"$W/js-core.json" 2>"$W/js.err"
		expect_eq "jitstack_marks_them_in_a_core [--inline=$n]" "$want" "$(js_frames "$W/js-core.json" 2>&1)"
	else
		skip "no core to read (gdb's gcore)"
	fi
fi
finish
