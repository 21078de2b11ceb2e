/* patch.c - the x86-64 relocations of stencils (System V ABI, x86-64
 * supplement, "Relocation Types"), applied at run time.  Writes go through
 * memcpy: holes are not aligned.
 */
#include <string.h>

#include "patch.h"
#include "stencil.h"

static void put32(uint8_t *loc, uint32_t v) { memcpy(loc, &v, sizeof v); }

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

int tj_patch(int reloc, uint8_t *loc, uint64_t p, uint64_t sa)
{
	switch (reloc) {
	case TJ_R_X86_64_64: return tj_patch_x86_64_64(loc, sa);
	case TJ_R_X86_64_32: return tj_patch_x86_64_32(loc, sa);
	case TJ_R_X86_64_32S: return tj_patch_x86_64_32s(loc, sa);
	case TJ_R_X86_64_PC32: return tj_patch_x86_64_pc32(loc, p, sa);
	case TJ_R_X86_64_PLT32: return tj_patch_x86_64_plt32(loc, p, sa);
	default: return TJ_PATCH_TYPE;
	}
}
