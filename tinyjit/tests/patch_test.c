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

int main(void)
{
	uint8_t b[8];
	uint64_t v;
	check("r_x86_64_64_writes_all_eight_bytes",
	      patch(TJ_R_X86_64_64, 0, 0x0123456789abcdefULL, b) == 0 && (memcpy(&v, b, 8), v == 0x0123456789abcdefULL));
	check("r_x86_64_32_takes_the_largest_u32", patch(TJ_R_X86_64_32, 0, 0xffffffffu, b) == 0 && le32(b, 0xffffffffu));
	check("r_x86_64_32_refuses_2_to_the_32",
	      patch(TJ_R_X86_64_32, 0, 0x100000000ULL, b) == TJ_PATCH_RANGE && untouched(b));
	check("r_x86_64_32_refuses_negative", patch(TJ_R_X86_64_32, 0, (uint64_t)-1, b) == TJ_PATCH_RANGE && untouched(b));
	check("r_x86_64_32s_takes_minus_one", patch(TJ_R_X86_64_32S, 0, (uint64_t)-1, b) == 0 && le32(b, 0xffffffffu));
	check("r_x86_64_32s_refuses_2_to_the_31",
	      patch(TJ_R_X86_64_32S, 0, 0x80000000ULL, b) == TJ_PATCH_RANGE && untouched(b));
	check("r_x86_64_32s_takes_int32_min",
	      patch(TJ_R_X86_64_32S, 0, (uint64_t)(int64_t)INT32_MIN, b) == 0 && le32(b, 0x80000000u));
	uint64_t p = 0x7f0000001000ULL;
	check("r_x86_64_pc32_is_relative_to_the_field",
	      patch(TJ_R_X86_64_PC32, p, p + 0x10, b) == 0 && le32(b, 0x10));
	check("r_x86_64_pc32_reaches_back", patch(TJ_R_X86_64_PC32, p, p - 4, b) == 0 && le32(b, 0xfffffffcu));
	check("r_x86_64_pc32_refuses_beyond_2_gib",
	      patch(TJ_R_X86_64_PC32, p, p + 0x80000000ULL, b) == TJ_PATCH_RANGE && untouched(b));
	check("r_x86_64_plt32_refuses_below_minus_2_gib",
	      patch(TJ_R_X86_64_PLT32, p, p - 0x80000001ULL, b) == TJ_PATCH_RANGE && untouched(b));
	check("an_unknown_relocation_is_an_error", patch(99, 0, 0, b) == TJ_PATCH_TYPE && untouched(b));
	printf("patch_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
