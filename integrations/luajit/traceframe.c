/* SPDX-License-Identifier: MIT */
/* traceframe.c - a LuaJIT trace's stack frame, from its head and tail
 * instructions, as CFI rows (see traceframe.h for why the frame is what it
 * is).
 *
 * The instructions come from LuaJIT 2.1's x86 backend, which assembles a
 * trace backwards, so what it emits last comes first:
 *   head  [register moves of a side trace] [add rsp, -delta] [mov dword vmstate, traceno] ...
 *         (lj_asm.c asm_head_root / asm_head_side: emit_setvmstate, then emit_spsub)
 *   tail  ... [add rsp, spadjust] jmp target
 *         (lj_asm_x86.h asm_tail_fixup, for a trace that leaves to the
 *         interpreter or links to another trace; a looping trace ends in its
 *         loop branch and adjusts nothing)
 * The store of the trace number into vmstate is the anchor: no other
 * instruction of a trace stores that constant there.
 */
#include "traceframe.h"

#include <dwarf.h>
#include <string.h>

#include "formats/bytes.h"

/* x86-64 encodings (Intel SDM vol. 2): ADD r/m64, imm8 is REX.W 83 /0 ib and
 * ADD r/m64, imm32 is REX.W 81 /0 id; with rsp as the register operand the
 * ModRM byte is 0xc4 (mod 11, reg /0, rm 100).  lj_emit_x86.h emit_spsub
 * emits exactly these (emit_addptr -> emit_gri with REX_64). */
#define X86_REX_W 0x48
#define X86_ARITH_IMM8 0x83
#define X86_ARITH_IMM32 0x81
#define X86_MODRM_ADD_RSP 0xc4
#define X86_JMP_REL32 0xe9
#define X86_JMP_REL32_LEN 5
#define X86_JCC_REL32_0 0x0f /* 0F 80+cc rel32 */
#define X86_JCC_REL32_1 0x80
#define X86_JCC_REL32_LEN 6
/* MOV r/m32, imm32 is C7 /0 id.  emit_setvmstate addresses vmstate through
 * emit_rma: relative to DISPATCH (r14 in vm_x64.dasc: REX.B 41, ModRM 0x86,
 * [r14+disp32]) when in reach, else rip-relative (ModRM 0x05) or absolute
 * (ModRM 0x04, SIB 0x25). */
#define X86_REX_B 0x41
#define X86_MOV_IMM32 0xc7
#define X86_MODRM_R14_DISP32 0x86
#define X86_MODRM_RIP 0x05
#define X86_MODRM_SIB 0x04
#define X86_SIB_ABS32 0x25

/* DWARF register numbers, x86-64 psABI 3.38. */
enum { DW_RBX = 3, DW_RBP = 6, DW_RSP = 7, DW_R12 = 12, DW_R13 = 13, DW_R14 = 14, DW_R15 = 15 };
#define X64_DATA_ALIGN (-8)

/* Where the interpreter's frame keeps the caller's callee-saved registers,
 * as offsets from the CFA (the caller's rsp after the call into the VM):
 * vm_x64.dasc saveregs pushes rbp, rbx, r15, r14 below the return address
 * (its own .eh_frame, emit_asm_debug, says the same: offsets 2..5 of -8),
 * and BC_JLOOP stores r12 at the interpreter's rsp and r13 below it (at
 * CFA - CFRAME_SIZE and 8 further down; vm_exit_interp reads them back). */
static const struct {
	uint8_t reg;
	int8_t cfa_offset;
} saved[] = {
	{ DW_RBP, -16 },
	{ DW_RBX, -24 },
	{ DW_R15, -32 },
	{ DW_R14, -40 },
	{ DW_R12, -LJTF_CFRAME_SIZE },
	{ DW_R13, -LJTF_CFRAME_SIZE - 8 },
};

static int32_t load_i32(const uint8_t *p)
{
	return (int32_t)load_u32(p);
}

/* The offset of the vmstate store of `traceno`, or -1: the first
 * instruction, in any of its three addressing forms, whose immediate is the
 * trace number.  The store is 10 bytes (C7 05 disp32 imm32, rip-relative)
 * or 11 (41 C7 86 disp32 imm32, or C7 04 25 disp32 imm32). */
static long find_vmstate_store(const uint8_t *code, uint32_t size, uint32_t traceno)
{
	for (uint32_t imm = 6; imm + 4 <= size; imm++) {
		if (load_u32(code + imm) != traceno)
			continue;
		const uint8_t *op = code + imm - 6;
		if (op[0] == X86_MOV_IMM32 && op[1] == X86_MODRM_RIP)
			return (long)(imm - 6);
		if (imm < 7)
			continue;
		op = code + imm - 7;
		if (op[0] == X86_REX_B && op[1] == X86_MOV_IMM32 && op[2] == X86_MODRM_R14_DISP32)
			return (long)(imm - 7);
		if (op[0] == X86_MOV_IMM32 && op[1] == X86_MODRM_SIB && op[2] == X86_SIB_ABS32)
			return (long)(imm - 7);
	}
	return -1;
}

/* An `add rsp, imm` ending exactly at `end`: its length, and the immediate
 * in *imm; 0 when there is none. */
static uint32_t add_rsp_before(const uint8_t *code, uint32_t end, int32_t *imm)
{
	if (end >= 4 && code[end - 4] == X86_REX_W && code[end - 3] == X86_ARITH_IMM8 &&
	    code[end - 2] == X86_MODRM_ADD_RSP) {
		*imm = (int8_t)code[end - 1];
		return 4;
	}
	if (end >= 7 && code[end - 7] == X86_REX_W && code[end - 6] == X86_ARITH_IMM32 &&
	    code[end - 5] == X86_MODRM_ADD_RSP) {
		*imm = load_i32(code + end - 4);
		return 7;
	}
	return 0;
}

int ljtf_decode(const uint8_t *code, uint32_t size, uint32_t traceno, int32_t parent_spadj, ljtf_frame *out)
{
	*out = (ljtf_frame){
		.size = size, .entry_adj = parent_spadj, .spadj = parent_spadj, .tail_start = size
	};
	long head = find_vmstate_store(code, size, traceno);
	if (head < 0)
		return LJTF_ENOHEAD;
	int32_t imm = 0;
	/* asm_head_root/asm_head_side subtract the spill area (a positive
	 * delta) and never give stack back in the head. */
	if (add_rsp_before(code, (uint32_t)head, &imm)) {
		if (imm >= 0 || parent_spadj > INT32_MAX + imm)
			return LJTF_EADJUST;
		out->spadj = parent_spadj - imm;
		out->head_end = (uint32_t)head;
	}
	/* asm_tail_fixup: `add rsp, spadjust; jmp` at the very end. */
	if (out->spadj != 0 && size >= X86_JMP_REL32_LEN && code[size - X86_JMP_REL32_LEN] == X86_JMP_REL32) {
		uint32_t jmp = size - X86_JMP_REL32_LEN;
		if (add_rsp_before(code, jmp, &imm) && imm == out->spadj)
			out->tail_start = jmp;
	}
	return LJTF_OK;
}

/* One row: CFA = rsp + CFRAME_SIZE_JIT + adj, and the saved registers. */
static int row(ljtf_cfi *c, uint32_t start, uint32_t end, int32_t adj)
{
	byte_buf b;
	uint8_t *at = c->insns[c->n];
	buf_init(&b, at, LJTF_INSNS_MAX);
	buf_u8(&b, DW_CFA_def_cfa);
	buf_uleb(&b, DW_RSP);
	buf_uleb(&b, (uint64_t)(LJTF_CFRAME_SIZE_JIT + adj));
	for (size_t i = 0; i < sizeof saved / sizeof saved[0]; i++) {
		buf_u8(&b, (uint8_t)(DW_CFA_offset | saved[i].reg));
		buf_uleb(&b, (uint64_t)(saved[i].cfa_offset / X64_DATA_ALIGN));
	}
	if (!buf_ok(&b))
		return -1;
	c->ranges[c->n++] = (ju_cfi_range){ .start = start, .end = end, .insns = at, .len = b.len };
	return 0;
}

int ljtf_cfi_build(const ljtf_frame *f, ljtf_cfi *out)
{
	out->n = 0;
	uint32_t body = f->head_end;
	if (body > 0 && row(out, 0, body, f->entry_adj))
		return -1;
	if (f->tail_start > body && row(out, body, f->tail_start, f->spadj))
		return -1;
	if (f->tail_start < f->size && row(out, f->tail_start, f->size, 0))
		return -1;
	return 0;
}

const char *ljtf_strerror(int err)
{
	switch (err) {
	case LJTF_OK: return "no error";
	case LJTF_ENOHEAD: return "no vmstate store of the trace number (not a LuaJIT x64 trace head)";
	case LJTF_EADJUST: return "the head's stack adjustment gives stack back";
	}
	return "unknown error";
}

size_t ljtf_far_branches(const uint8_t *code, uint32_t size, uintptr_t addr, uintptr_t lo, uintptr_t hi,
			 ljtf_branch *out, size_t max)
{
	size_t n = 0;
	for (uint32_t i = 0; i + X86_JMP_REL32_LEN <= size; i++) {
		uint32_t len = 0;
		if (code[i] == X86_JMP_REL32)
			len = X86_JMP_REL32_LEN;
		else if (code[i] == X86_JCC_REL32_0 && i + X86_JCC_REL32_LEN <= size &&
			 (code[i + 1] & 0xf0) == X86_JCC_REL32_1)
			len = X86_JCC_REL32_LEN;
		if (!len)
			continue;
		uintptr_t target = addr + i + len + (uintptr_t)(intptr_t)load_i32(code + i + len - 4);
		if (target < lo || target >= hi)
			continue;
		if (n < max)
			out[n] = (ljtf_branch){ .end = i + len, .target = target };
		n++;
	}
	return n;
}
