#!/bin/sh
# SPDX-License-Identifier: MIT
# run-generator.sh - the generated stencil header says what the objects say:
# every opcode has its stencil, a final jmp to _JIT_CONTINUE is dropped
# (the size shrinks by its 5 bytes), holes carry their relocation and
# disassembly, and the region rule is that of a push %rbp; mov %rsp,%rbp
# frame (System V x86-64: CFA = rbp+16, rbp at CFA-16, return address at
# CFA-8), which is what the shim's code is.
. "$(dirname "$0")/lib.sh"
G=$TJ_TEST_B/..
H=$G/stencils_fp.h
DIS=$G/stencils/fp/omit.dis

missing=
for op in $(sed -n 's/^OP(\([A-Z]*\),.*/\1/p' tinyjit/vm/opcodes.def); do
	grep -q "^/\* ---- $op: " "$H" || missing="$missing $op"
done
expect_eq every_opcode_has_a_stencil "" "$missing"

# ADD ends in `jmp _JIT_CONTINUE`: its last instruction's offset is its new size
last=$(sed -n '/<tj_op_ADD>:/,/^$/p' "$DIS" | grep -E '^ +[0-9a-f]+:' | tail -n 1 | sed 's/^ *\([0-9a-f]*\):.*/\1/')
size=$(sed -n 's|^/\* ---- ADD: \([0-9]*\) bytes (the final jmp to _JIT_CONTINUE dropped).*|\1|p' "$H")
expect_eq final_continue_jump_is_dropped "$((0x$last))" "$size"

check push_operand_is_a_64_bit_hole grep -q '{ 0x[0-9a-f]*, TJ_R_X86_64_64, TJ_HOLE_OPERAND, 0, 0 }' "$H"
check holes_carry_their_disassembly grep -q 'R_X86_64_64 _JIT_OPERAND+0, in `movabsq $0x0, %r' "$H"
check calls_out_go_through_an_extern_hole grep -q 'TJ_HOLE_EXTERN, [0-9], -4 }' "$H"

$TJ_OBJDUMP -d "$G/runtime/shim.o" | sed -n '/<tj_shim_call>:/,/^$/p' >"$TJ_TEST_B/shim.dis"
check shim_builds_a_standard_frame sh -c "sed -n 2p '$TJ_TEST_B/shim.dis' | grep -q 'pushq.*%rbp' &&
	sed -n 3p '$TJ_TEST_B/shim.dis' | grep -q 'movq.*%rsp, %rbp'"
check region_rule_is_the_shim_frame grep -q 'CFA = rbp+16, rbp at CFA-16, return address at CFA-8' "$H"
check region_rule_reaches_the_table grep -q '^	16, -16, -8,$' "$H"
finish
