#!/bin/sh
# run-validator.sh - the frame-pointer validator, through the same script
# the build uses (gen/build-stencils.sh):
#  - a stencil that writes rbp outside a frame prologue must fail the build;
#  - a stencil that uses rbp under register pressure is flagged and its
#    frame-pointer rebuild accepted;
#  - the real stencil set records how many stencils needed a frame.
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
finish
