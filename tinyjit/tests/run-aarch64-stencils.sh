#!/bin/sh
# SPDX-License-Identifier: MIT
# run-aarch64-stencils.sh - the AArch64 stencils at build time, through the
# same script the build uses (gen/build-stencils.sh) with clang-19
# --target=aarch64-linux-gnu:
#  - a stencil that writes x29 outside a frame record must fail the build;
#  - a stencil that keeps values live across the preserve_none shim call
#    gets x29 allocated, is flagged, and its frame rebuild is accepted;
#  - clang-19 does not reserve x29 when asked (-mframe-pointer=reserved is
#    ignored, -ffixed-x29 rejected), so the build uses neither;
#  - the generated headers hold AArch64 code and only AArch64 holes, and
#    record how many stencils needed a frame;
#  - the rule costs no stencil an instruction (fp set against nofp set),
#    and CALL needs no frame while its plain shape keeps a value in x29;
#  - a relocation the runtime cannot apply fails the build.
# Needs no qemu: it checks the build, not the run.
. "$(dirname "$0")/lib.sh"
[ -f "$TJ_A64_B/stencils_fp.h" ] || skip_all "$TJ_A64_B/stencils_fp.h is not built (make tinyjit-aarch64)"
OUT=$TJ_TEST_B/a64-validator
SHIM=$TJ_A64_B/runtime/shim.o
VALIDATE=$TJ_TEST_B/../gen/tj_validate
TJ_STENCIL_CFLAGS=$TJ_A64_STENCIL_CFLAGS
export TJ_STENCIL_CFLAGS
rm -rf "$OUT"
mkdir -p "$OUT"

if sh tinyjit/gen/build-stencils.sh fp tinyjit/stencils/test/writes_x29.c "$OUT/bad" \
	"$OUT/bad.h" "$SHIM" --check-only 2>"$OUT/bad.err"; then
	fail "the build of a stencil that writes x29 succeeded"
else
	check validator_names_the_x29_write grep -q \
		"tj_op_CLOBBER writes x29 outside its frame prologue/epilogue at .*mov x29, x21" "$OUT/bad.err"
	check the_clobbering_stencil_was_flagged_first grep -qx tj_op_CLOBBER "$OUT/bad/needs-frame.txt"
fi

if sh tinyjit/gen/build-stencils.sh fp tinyjit/stencils/test/pressure_call.c "$OUT/pressure" \
	"$OUT/pressure.h" "$SHIM" --check-only 2>"$OUT/pressure.err"; then
	check pressure_stencil_needed_a_frame grep -qx tj_op_PRESSURE_CALL "$OUT/pressure/needs-frame.txt"
	check its_rebuild_has_the_standard_frame "$VALIDATE" frames \
		"$OUT/pressure/frame.o" "$OUT/pressure/needs-frame.txt"
else
	fail "the build of the pressure stencil failed: $(cat "$OUT/pressure.err")"
fi

# The configure check's verdict, shown on the machine code: with the
# reserved flag clang-19 still writes x29 in the pressure stencil.
$TJ_CLANG $TJ_A64_STENCIL_CFLAGS -fomit-frame-pointer -Xclang -mframe-pointer=reserved \
	-c tinyjit/stencils/test/pressure_call.c -o "$OUT/reserved.o"
$TJ_OBJDUMP -d "$OUT/reserved.o" >"$OUT/reserved.dis"
writes=$(grep -E '	(mov|add|sub|ldr|orr)	x29, ' "$OUT/reserved.dis" | head -1)
if [ -n "$writes" ]; then
	echo "-mframe-pointer=reserved, AArch64: still writes x29: $writes"
	expect_eq the_build_does_not_use_the_ignored_flag "" "$(cat "$TJ_A64_B/reserved.flag")"
else
	skip "this clang reserves x29 with -mframe-pointer=reserved; the build may use it"
fi
if $TJ_CLANG $TJ_A64_STENCIL_CFLAGS -ffixed-x29 -c tinyjit/stencils/test/pressure_call.c \
	-o "$OUT/fixed.o" 2>"$OUT/fixed.err"; then
	echo "-ffixed-x29 is accepted by $TJ_CLANG"
else
	echo "-ffixed-x29: $(head -n 1 "$OUT/fixed.err")"
fi

for set in fp nofp; do
	h=$TJ_A64_B/stencils_$set.h
	check "header_${set}_holds_aarch64_code" grep -q '^ \* Machine code for AArch64\.$' "$h"
	check "header_${set}_has_only_aarch64_holes" sh -c "grep -q 'TJ_R_AARCH64_' '$h' && ! grep -q 'TJ_R_X86_64_' '$h'"
	check "header_${set}_names_the_machine" grep -q "^	\"$set\", 183, " "$h"
done
# what the objects say, as run-generator.sh checks on x86-64: every opcode
# has its stencil, a final `b _JIT_CONTINUE` is dropped (4 bytes), a 64-bit
# operand is a movz/movk group, holes carry their disassembly, calls out go
# through an extern hole, and each hole's offset is one of the object's
# relocations
H=$TJ_A64_B/stencils_fp.h
DIS=$TJ_A64_B/stencils/fp/omit.dis
missing=
for op in $(sed -n 's/^OP(\([A-Z]*\),.*/\1/p' tinyjit/vm/opcodes.def); do
	grep -q "^/\* ---- $op: " "$H" || missing="$missing $op"
done
expect_eq every_opcode_has_a_stencil "" "$missing"
last=$(sed -n '/<tj_op_ADD>:/,/^$/p' "$DIS" | grep -E '^ +[0-9a-f]+:' | tail -n 1 | sed 's/^ *\([0-9a-f]*\):.*/\1/')
check add_ends_in_b_continue sh -c "sed -n '/<tj_op_ADD>:/,/^\$/p' '$DIS' | tail -n 2 | grep -q 'R_AARCH64_JUMP26.*_JIT_CONTINUE'"
size=$(sed -n 's|^/\* ---- ADD: \([0-9]*\) bytes (the final jmp to _JIT_CONTINUE dropped).*|\1|p' "$H")
expect_eq final_continue_jump_is_dropped "$((0x$last))" "$size"
for g in G0_NC G1_NC G2_NC G3; do
	check "push_operand_has_its_movw_$g" grep -q "TJ_R_AARCH64_MOVW_UABS_$g, TJ_HOLE_OPERAND, 0, 0 }" "$H"
done
check holes_carry_their_disassembly grep -q 'R_AARCH64_MOVW_UABS_G3 _JIT_OPERAND+0, in `movk x[0-9]*, #0x0, lsl #48`' "$H"
check calls_out_go_through_an_extern_hole grep -q 'TJ_R_AARCH64_CALL26, TJ_HOLE_EXTERN, [0-9], 0 }' "$H"
want=$(sed -n '/<tj_op_CALL>:/,/^$/p' "$DIS" | grep -c 'R_AARCH64_')
got=$(sed -n '/^static const tj_hole tj_fp_CALL_holes/,/^};/p' "$H" | grep -c '^	{ ')
# the fp set's CALL is the framed rebuild if it needed a frame: compare with
# the relocations of the object it was taken from
fpdis=$DIS
grep -qx tj_op_CALL "$TJ_A64_B/stencils/fp/needs-frame.txt" && fpdis=$TJ_A64_B/stencils/fp/frame.dis
wantf=$(sed -n '/<tj_op_CALL>:/,/^$/p' "$fpdis" | grep -c 'R_AARCH64_')
expect_eq fp_call_keeps_every_relocation_but_the_final_jump "$((wantf - 1))" "$got"
echo "CALL: $want relocations, $wantf in the object the fp set took it from; $got holes in the header"

# a relocation the runtime cannot apply is a build error naming it, never a
# silent hole: -fpic turns the holes into GOT loads (ADR_GOT_PAGE = 311)
pic=$(echo "$TJ_A64_STENCIL_CFLAGS" | sed 's/-fno-pic -mcmodel=large/-fpic/')
if TJ_STENCIL_CFLAGS=$pic sh tinyjit/gen/build-stencils.sh nofp \
	tinyjit/stencils/stencils.c "$OUT/pic" "$OUT/pic.h" "$SHIM" 2>"$OUT/pic.err"; then
	fail "a -fpic stencil set with GOT relocations was accepted"
else
	check unsupported_relocation_is_named grep -q \
		'tj_op_PUSH at 0x0: relocation type 311 is not supported' "$OUT/pic.err"
	check no_header_is_written sh -c "! test -e '$OUT/pic.h'"
fi

# the region rule read from the shim's CFI at its blr: the frame record
# stp x29, x30, [sp, #-16]!; mov x29, sp
check region_rule_is_the_shims_frame_record grep -q \
	'^ \*   CFA = x29+16, x29 at CFA-16, return address at CFA-8\.$' "$TJ_A64_B/stencils_fp.h"

listed=$(grep -c . "$TJ_A64_B/stencils/fp/needs-frame.txt")
header=$(sed -n 's/^ \* Stencils rebuilt with a frame pointer: \([0-9]*\) of.*/\1/p' "$TJ_A64_B/stencils_fp.h")
expect_eq generated_header_counts_the_framed_stencils "$listed" "$header"
echo "AArch64 stencils needing a frame: $listed of $(sed -n 's/^ \* Stencils rebuilt with a frame pointer: [0-9]* of \([0-9]*\).*/\1/p' "$TJ_A64_B/stencils_fp.h") ($(tr '\n' ' ' <"$TJ_A64_B/stencils/fp/needs-frame.txt"))"

frame_cost "$TJ_A64_B" >"$OUT/cost"
total=$(sed -n 's/^ \* Stencils rebuilt with a frame pointer: [0-9]* of \([0-9]*\)\..*/\1/p' "$TJ_A64_B/stencils_fp.h")
expect_eq every_stencil_is_counted_in_both_sets "$total" "$(grep -c . "$OUT/cost")"
check frame_pointer_rule_costs_no_stencil_an_instruction awk '$2 > $3 {
	print "  " $1 ": " $2 " instructions in fp, " $3 " in nofp" >"/dev/stderr"; bad = 1 } END { exit bad }' "$OUT/cost"
check call_needs_no_frame sh -c "! grep -qx tj_op_CALL '$TJ_A64_B/stencils/fp/needs-frame.txt'"
check nofp_call_keeps_a_value_in_x29 sh -c "'$VALIDATE' list '$TJ_A64_B/stencils/nofp/omit.o' 2>/dev/null | grep -qx tj_op_CALL"
echo "CALL: $(awk '$1 == "CALL" {print $2 " instructions in fp, " $3 " in nofp"}' "$OUT/cost")"
finish
