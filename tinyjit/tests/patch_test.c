/* SPDX-License-Identifier: MIT */
/* patch_test.c - the relocation patch functions write exactly the field's
 * bytes when the value fits and refuse, writing nothing, when it does not. */
#include <stdio.h>
#include <string.h>

#include "../runtime/patch.h"
#include "../runtime/stencil.h"

static int passed, failed;

static void check(const char *name, int cond)
{
	if (cond)
		passed++;
	else {
		failed++;
		printf("FAIL: %s\n", name);
	}
}

/* Patch an 8-byte field filled with 0xAA; report the result and bytes. */
static int patch(int reloc, uint64_t p, uint64_t sa, uint8_t out[8])
{
	memset(out, 0xaa, 8);
	return tj_patch(reloc, out, p, sa);
}

static int untouched(const uint8_t b[8])
{
	for (int i = 0; i < 8; i++)
		if (b[i] != 0xaa)
			return 0;
	return 1;
}

static int le32(const uint8_t b[8], uint32_t v)
{
	uint8_t w[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	return memcmp(b, w, 4) == 0 && b[4] == 0xaa;
}

/* Patch the AArch64 instruction word insn; *out is the word afterwards. */
static int patch_insn(int reloc, uint32_t insn, uint64_t p, uint64_t sa, uint32_t *out)
{
	uint8_t w[4];
	memcpy(w, &insn, 4);
	int rc = tj_patch(reloc, w, p, sa);
	memcpy(out, w, 4);
	return rc;
}

/* The words are the assembler's: bl 0 (0x94000000), b 0, movz x8, #0,
 * movk x8, #0, lsl #48, adrp x0, 0, add x0, x0, #0, ldr x0, [x0]. */
enum {
	A64_BL = 0x94000000u,
	A64_B = 0x14000000u,
	A64_MOVZ_X8 = 0xd2800008u,
	A64_MOVK_X8_48 = 0xf2e00008u,
	A64_ADRP_X0 = 0x90000000u,
	A64_ADD_X0 = 0x91000000u,
	A64_LDR_X0 = 0xf9400000u,
	A64_LDRH_W0 = 0x79400000u,
};

static void test_aarch64(void)
{
	uint32_t w;
	uint64_t p = 0x7f0000001000ULL;
	check("r_aarch64_call26_counts_words_from_the_bl",
	      patch_insn(TJ_R_AARCH64_CALL26, A64_BL, p, p + 0x100, &w) == 0 && w == (A64_BL | 0x40));
	check("r_aarch64_jump26_reaches_back",
	      patch_insn(TJ_R_AARCH64_JUMP26, A64_B, p, p - 4, &w) == 0 && w == (A64_B | 0x3ffffff));
	check("r_aarch64_jump26_reaches_the_last_word_below_128_mib",
	      patch_insn(TJ_R_AARCH64_JUMP26, A64_B, p, p + (1ull << 27) - 4, &w) == 0 &&
		      w == (A64_B | 0x1ffffff));
	check("r_aarch64_call26_refuses_128_mib",
	      patch_insn(TJ_R_AARCH64_CALL26, A64_BL, p, p + (1ull << 27), &w) == TJ_PATCH_RANGE &&
		      w == A64_BL);
	check("r_aarch64_jump26_refuses_below_minus_128_mib",
	      patch_insn(TJ_R_AARCH64_JUMP26, A64_B, p, p - (1ull << 27) - 4, &w) == TJ_PATCH_RANGE &&
		      w == A64_B);
	check("r_aarch64_call26_refuses_a_misaligned_target",
	      patch_insn(TJ_R_AARCH64_CALL26, A64_BL, p, p + 6, &w) == TJ_PATCH_RANGE && w == A64_BL);
	uint64_t v = 0x123456789abcdef0ULL;
	check("r_aarch64_movw_uabs_g0_nc_takes_bits_0_to_15",
	      patch_insn(TJ_R_AARCH64_MOVW_UABS_G0_NC, A64_MOVZ_X8, p, v, &w) == 0 &&
		      w == (A64_MOVZ_X8 | 0xdef0u << 5));
	check("r_aarch64_movw_uabs_g1_nc_takes_bits_16_to_31",
	      patch_insn(TJ_R_AARCH64_MOVW_UABS_G1_NC, A64_MOVZ_X8, p, v, &w) == 0 &&
		      w == (A64_MOVZ_X8 | 0x9abcu << 5));
	check("r_aarch64_movw_uabs_g2_nc_takes_bits_32_to_47",
	      patch_insn(TJ_R_AARCH64_MOVW_UABS_G2_NC, A64_MOVZ_X8, p, v, &w) == 0 &&
		      w == (A64_MOVZ_X8 | 0x5678u << 5));
	check("r_aarch64_movw_uabs_g3_takes_bits_48_to_63_and_keeps_the_shift",
	      patch_insn(TJ_R_AARCH64_MOVW_UABS_G3, A64_MOVK_X8_48, p, v, &w) == 0 &&
		      w == (A64_MOVK_X8_48 | 0x1234u << 5));
	check("r_aarch64_adr_prel_pg_hi21_counts_pages",
	      patch_insn(TJ_R_AARCH64_ADR_PREL_PG_HI21, A64_ADRP_X0, p, p + 0x2123, &w) == 0 &&
		      w == (A64_ADRP_X0 | 2u << 29));
	check("r_aarch64_adr_prel_pg_hi21_reaches_back",
	      patch_insn(TJ_R_AARCH64_ADR_PREL_PG_HI21, A64_ADRP_X0, p, p - 0x1000, &w) == 0 &&
		      w == (A64_ADRP_X0 | 3u << 29 | 0x7ffffu << 5));
	check("r_aarch64_adr_prel_pg_hi21_refuses_4_gib",
	      patch_insn(TJ_R_AARCH64_ADR_PREL_PG_HI21, A64_ADRP_X0, p, p + (1ull << 32), &w) ==
			      TJ_PATCH_RANGE &&
		      w == A64_ADRP_X0);
	check("r_aarch64_add_abs_lo12_nc_takes_the_page_offset",
	      patch_insn(TJ_R_AARCH64_ADD_ABS_LO12_NC, A64_ADD_X0, p, 0x12345abcULL, &w) == 0 &&
		      w == (A64_ADD_X0 | 0xabcu << 10));
	check("r_aarch64_ldst64_abs_lo12_nc_scales_by_8",
	      patch_insn(TJ_R_AARCH64_LDST64_ABS_LO12_NC, A64_LDR_X0, p, 0x5008, &w) == 0 &&
		      w == (A64_LDR_X0 | 1u << 10));
	check("r_aarch64_ldst64_abs_lo12_nc_refuses_an_offset_it_cannot_encode",
	      patch_insn(TJ_R_AARCH64_LDST64_ABS_LO12_NC, A64_LDR_X0, p, 0x5004, &w) == TJ_PATCH_RANGE &&
		      w == A64_LDR_X0);
	check("r_aarch64_ldst16_abs_lo12_nc_scales_by_2",
	      patch_insn(TJ_R_AARCH64_LDST16_ABS_LO12_NC, A64_LDRH_W0, p, 0xffe, &w) == 0 &&
		      w == (A64_LDRH_W0 | 0x7ffu << 10));
}

int main(void)
{
	uint8_t b[8];
	uint64_t v;
	check("r_x86_64_64_writes_all_eight_bytes", patch(TJ_R_X86_64_64, 0, 0x0123456789abcdefULL, b) == 0 &&
							    (memcpy(&v, b, 8), v == 0x0123456789abcdefULL));
	check("r_x86_64_32_takes_the_largest_u32",
	      patch(TJ_R_X86_64_32, 0, 0xffffffffu, b) == 0 && le32(b, 0xffffffffu));
	check("r_x86_64_32_refuses_2_to_the_32",
	      patch(TJ_R_X86_64_32, 0, 0x100000000ULL, b) == TJ_PATCH_RANGE && untouched(b));
	check("r_x86_64_32_refuses_negative",
	      patch(TJ_R_X86_64_32, 0, (uint64_t)-1, b) == TJ_PATCH_RANGE && untouched(b));
	check("r_x86_64_32s_takes_minus_one",
	      patch(TJ_R_X86_64_32S, 0, (uint64_t)-1, b) == 0 && le32(b, 0xffffffffu));
	check("r_x86_64_32s_refuses_2_to_the_31",
	      patch(TJ_R_X86_64_32S, 0, 0x80000000ULL, b) == TJ_PATCH_RANGE && untouched(b));
	check("r_x86_64_32s_takes_int32_min",
	      patch(TJ_R_X86_64_32S, 0, (uint64_t)(int64_t)INT32_MIN, b) == 0 && le32(b, 0x80000000u));
	uint64_t p = 0x7f0000001000ULL;
	check("r_x86_64_pc32_is_relative_to_the_field",
	      patch(TJ_R_X86_64_PC32, p, p + 0x10, b) == 0 && le32(b, 0x10));
	check("r_x86_64_pc32_reaches_back",
	      patch(TJ_R_X86_64_PC32, p, p - 4, b) == 0 && le32(b, 0xfffffffcu));
	check("r_x86_64_pc32_refuses_beyond_2_gib",
	      patch(TJ_R_X86_64_PC32, p, p + 0x80000000ULL, b) == TJ_PATCH_RANGE && untouched(b));
	check("r_x86_64_plt32_refuses_below_minus_2_gib",
	      patch(TJ_R_X86_64_PLT32, p, p - 0x80000001ULL, b) == TJ_PATCH_RANGE && untouched(b));
	check("an_unknown_relocation_is_an_error", patch(99, 0, 0, b) == TJ_PATCH_TYPE && untouched(b));
	test_aarch64();
	printf("patch_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
