#!/bin/sh
# SPDX-License-Identifier: MIT
# run-validator.sh - the frame-pointer validator, through the same script
# the build uses (gen/build-stencils.sh):
#  - a stencil that writes rbp outside a frame prologue must fail the build;
#  - a stencil that uses rbp under register pressure is flagged and its
#    frame-pointer rebuild accepted;
#  - the real stencil set records how many stencils needed a frame;
#  - the rule costs no stencil an instruction: none has more in the fp set
#    than in the nofp set, and CALL, shaped to keep rbp free, needs no
#    frame while its plain shape (the nofp set's) keeps a value in rbp.
# Needs the TJ_STENCIL_ENV variables exported by tests.mk.
. "$(dirname "$0")/lib.sh"
OUT=$TJ_TEST_B/validator
SHIM=$TJ_TEST_B/../runtime/shim.o
rm -rf "$OUT"
mkdir -p "$OUT"

if sh tinyjit/gen/build-stencils.sh fp tinyjit/stencils/test/writes_rbp.c "$OUT/bad" \
	"$OUT/bad.h" "$SHIM" --check-only 2>"$OUT/bad.err"; then
	fail "the build of a stencil that writes rbp succeeded"
else
	check validator_names_the_rbp_write grep -q \
		"tj_op_CLOBBER writes rbp outside its frame prologue/epilogue at .*%rbp" "$OUT/bad.err"
	check the_clobbering_stencil_was_flagged_first grep -qx tj_op_CLOBBER "$OUT/bad/needs-frame.txt"
fi

if sh tinyjit/gen/build-stencils.sh fp tinyjit/stencils/test/pressure.c "$OUT/pressure" \
	"$OUT/pressure.h" "$SHIM" --check-only 2>"$OUT/pressure.err"; then
	check pressure_stencil_needed_a_frame grep -qx tj_op_PRESSURE "$OUT/pressure/needs-frame.txt"
	check its_rebuild_has_the_standard_frame "$TJ_TEST_B/../gen/tj_validate" frames \
		"$OUT/pressure/frame.o" "$OUT/pressure/needs-frame.txt"
else
	fail "the build of the register-pressure stencil failed: $(cat "$OUT/pressure.err")"
fi

# the generated fp set says how many stencils it rebuilt, and that count is
# the validator's list for the real stencils
listed=$(grep -c . "$TJ_TEST_B/../stencils/fp/needs-frame.txt")
header=$(sed -n 's/^ \* Stencils rebuilt with a frame pointer: \([0-9]*\) of.*/\1/p' "$TJ_TEST_B/../stencils_fp.h")
expect_eq generated_header_counts_the_framed_stencils "$listed" "$header"
echo "stencils needing a frame: $listed ($(tr '\n' ' ' <"$TJ_TEST_B/../stencils/fp/needs-frame.txt"))"

frame_cost "$TJ_TEST_B/.." >"$OUT/cost"
total=$(sed -n 's/^ \* Stencils rebuilt with a frame pointer: [0-9]* of \([0-9]*\)\..*/\1/p' "$TJ_TEST_B/../stencils_fp.h")
expect_eq every_stencil_is_counted_in_both_sets "$total" "$(grep -c . "$OUT/cost")"
check frame_pointer_rule_costs_no_stencil_an_instruction awk '$2 > $3 {
	print "  " $1 ": " $2 " instructions in fp, " $3 " in nofp" >"/dev/stderr"; bad = 1 } END { exit bad }' "$OUT/cost"
check call_needs_no_frame sh -c "! grep -qx tj_op_CALL '$TJ_TEST_B/../stencils/fp/needs-frame.txt'"
check nofp_call_keeps_a_value_in_rbp sh -c "'$TJ_TEST_B/../gen/tj_validate' list '$TJ_TEST_B/../stencils/nofp/omit.o' 2>/dev/null | grep -qx tj_op_CALL"
echo "CALL: $(awk '$1 == "CALL" {print $2 " instructions in fp, " $3 " in nofp"}' "$OUT/cost")"
finish
