/* SPDX-License-Identifier: MIT */
/* patch.c - the relocations of stencils, applied at run time: x86-64
 * (System V ABI, x86-64 supplement, "Relocation Types") and AArch64 (ELF for
 * the Arm 64-bit Architecture, "Static AArch64 relocations"; the instruction
 * fields from the Arm ARM).  Writes go through memcpy: x86-64 holes are not
 * aligned.
 */
#include <string.h>

#include "patch.h"
#include "stencil.h"

static void put32(uint8_t *loc, uint32_t v)
{
	memcpy(loc, &v, sizeof v);
}

int tj_patch_x86_64_64(uint8_t *loc, uint64_t sa)
{
	memcpy(loc, &sa, sizeof sa);
	return TJ_PATCH_OK;
}

/* the field is zero-extended to 64 bits by the instruction */
int tj_patch_x86_64_32(uint8_t *loc, uint64_t sa)
{
	if (sa > UINT32_MAX)
		return TJ_PATCH_RANGE;
	put32(loc, (uint32_t)sa);
	return TJ_PATCH_OK;
}

/* the field is sign-extended to 64 bits by the instruction */
int tj_patch_x86_64_32s(uint8_t *loc, uint64_t sa)
{
	int64_t v = (int64_t)sa;
	if (v < INT32_MIN || v > INT32_MAX)
		return TJ_PATCH_RANGE;
	put32(loc, (uint32_t)v);
	return TJ_PATCH_OK;
}

int tj_patch_x86_64_pc32(uint8_t *loc, uint64_t p, uint64_t sa)
{
	int64_t v = (int64_t)(sa - p);
	if (v < INT32_MIN || v > INT32_MAX)
		return TJ_PATCH_RANGE;
	put32(loc, (uint32_t)v);
	return TJ_PATCH_OK;
}

/* There is no PLT in JIT code: external calls already go through the
 * function's trampolines, so L = S. */
int tj_patch_x86_64_plt32(uint8_t *loc, uint64_t p, uint64_t sa)
{
	return tj_patch_x86_64_pc32(loc, p, sa);
}

/* ---- AArch64: a field inside one little-endian instruction word ---- */

static uint32_t get_insn(const uint8_t *loc)
{
	uint32_t w;
	memcpy(&w, loc, sizeof w);
	return w;
}

/* Replace bits [lsb, lsb + width) of the instruction with v. */
static void set_field(uint8_t *loc, unsigned lsb, unsigned width, uint64_t v)
{
	uint32_t mask = (uint32_t)(((1ull << width) - 1) << lsb);
	put32(loc, (get_insn(loc) & ~mask) | ((uint32_t)(v << lsb) & mask));
}

/* b / bl: imm26 words from P, so the target must be 4-aligned and within
 * +-128 MiB. */
static int branch26(uint8_t *loc, uint64_t p, uint64_t sa)
{
	int64_t d = (int64_t)(sa - p);
	if (d & 3 || d < -(1ll << 27) || d >= (1ll << 27))
		return TJ_PATCH_RANGE;
	set_field(loc, 0, 26, (uint64_t)(d >> 2));
	return TJ_PATCH_OK;
}

int tj_patch_aarch64_call26(uint8_t *loc, uint64_t p, uint64_t sa)
{
	return branch26(loc, p, sa);
}

int tj_patch_aarch64_jump26(uint8_t *loc, uint64_t p, uint64_t sa)
{
	return branch26(loc, p, sa);
}

/* movz/movk imm16 (bits 5..20) with group g's 16 bits of S + A.  The _NC
 * groups 0..2 do not check: the next movk supplies the higher bits; group
 * 3 holds the top bits, so nothing can overflow either. */
int tj_patch_aarch64_movw_uabs(uint8_t *loc, unsigned group, uint64_t sa)
{
	if (group > 3)
		return TJ_PATCH_TYPE;
	set_field(loc, 5, 16, (sa >> (16 * group)) & 0xffff);
	return TJ_PATCH_OK;
}

/* adrp: the signed 21-bit page delta, immlo in bits 29..30, immhi in
 * 5..23; the target page must be within +-4 GiB. */
int tj_patch_aarch64_adr_prel_pg_hi21(uint8_t *loc, uint64_t p, uint64_t sa)
{
	int64_t d = (int64_t)((sa & ~0xfffull) - (p & ~0xfffull)) >> 12;
	if (d < -(1ll << 20) || d >= (1ll << 20))
		return TJ_PATCH_RANGE;
	uint64_t u = (uint64_t)d;
	uint32_t w = get_insn(loc) & ~((3u << 29) | (0x7ffffu << 5));
	put32(loc, w | (uint32_t)(u & 3) << 29 | (uint32_t)((u >> 2) & 0x7ffff) << 5);
	return TJ_PATCH_OK;
}

/* add imm12 (bits 10..21): the low 12 bits of S + A, never out of range. */
int tj_patch_aarch64_add_abs_lo12_nc(uint8_t *loc, uint64_t sa)
{
	set_field(loc, 10, 12, sa & 0xfff);
	return TJ_PATCH_OK;
}

/* ldr/str unsigned offset (imm12, bits 10..21) scaled by the access size:
 * a low 12 bits that are not a multiple of it cannot be encoded. */
int tj_patch_aarch64_ldst_abs_lo12_nc(uint8_t *loc, unsigned log2_size, uint64_t sa)
{
	uint64_t lo = sa & 0xfff;
	if (log2_size > 4)
		return TJ_PATCH_TYPE;
	if (lo & ((1u << log2_size) - 1))
		return TJ_PATCH_RANGE;
	set_field(loc, 10, 12, lo >> log2_size);
	return TJ_PATCH_OK;
}

int tj_patch(int reloc, uint8_t *loc, uint64_t p, uint64_t sa)
{
	switch (reloc) {
	case TJ_R_X86_64_64: return tj_patch_x86_64_64(loc, sa);
	case TJ_R_X86_64_32: return tj_patch_x86_64_32(loc, sa);
	case TJ_R_X86_64_32S: return tj_patch_x86_64_32s(loc, sa);
	case TJ_R_X86_64_PC32: return tj_patch_x86_64_pc32(loc, p, sa);
	case TJ_R_X86_64_PLT32: return tj_patch_x86_64_plt32(loc, p, sa);
	case TJ_R_AARCH64_CALL26: return tj_patch_aarch64_call26(loc, p, sa);
	case TJ_R_AARCH64_JUMP26: return tj_patch_aarch64_jump26(loc, p, sa);
	case TJ_R_AARCH64_MOVW_UABS_G0_NC: return tj_patch_aarch64_movw_uabs(loc, 0, sa);
	case TJ_R_AARCH64_MOVW_UABS_G1_NC: return tj_patch_aarch64_movw_uabs(loc, 1, sa);
	case TJ_R_AARCH64_MOVW_UABS_G2_NC: return tj_patch_aarch64_movw_uabs(loc, 2, sa);
	case TJ_R_AARCH64_MOVW_UABS_G3: return tj_patch_aarch64_movw_uabs(loc, 3, sa);
	case TJ_R_AARCH64_ADR_PREL_PG_HI21: return tj_patch_aarch64_adr_prel_pg_hi21(loc, p, sa);
	case TJ_R_AARCH64_ADD_ABS_LO12_NC: return tj_patch_aarch64_add_abs_lo12_nc(loc, sa);
	case TJ_R_AARCH64_LDST8_ABS_LO12_NC: return tj_patch_aarch64_ldst_abs_lo12_nc(loc, 0, sa);
	case TJ_R_AARCH64_LDST16_ABS_LO12_NC: return tj_patch_aarch64_ldst_abs_lo12_nc(loc, 1, sa);
	case TJ_R_AARCH64_LDST32_ABS_LO12_NC: return tj_patch_aarch64_ldst_abs_lo12_nc(loc, 2, sa);
	case TJ_R_AARCH64_LDST64_ABS_LO12_NC: return tj_patch_aarch64_ldst_abs_lo12_nc(loc, 3, sa);
	case TJ_R_AARCH64_LDST128_ABS_LO12_NC: return tj_patch_aarch64_ldst_abs_lo12_nc(loc, 4, sa);
	default: return TJ_PATCH_TYPE;
	}
}
