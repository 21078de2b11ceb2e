/* patch.h - apply one relocation to copied stencil code (run time).
 *
 * One function per relocation type, named after it.  `loc` is where the
 * hole is in the copied code, `p` its run-time address, `sa` the value S + A.
 * Each checks that the result fits the field and returns TJ_PATCH_RANGE
 * (without writing) when it does not: in every build, not only in debug.
 */
#ifndef TJ_PATCH_H
#define TJ_PATCH_H

#include <stdint.h>

enum { TJ_PATCH_OK = 0, TJ_PATCH_RANGE = -1, TJ_PATCH_TYPE = -2 };

int tj_patch_x86_64_64(uint8_t *loc, uint64_t sa);
int tj_patch_x86_64_32(uint8_t *loc, uint64_t sa);
int tj_patch_x86_64_32s(uint8_t *loc, uint64_t sa);
int tj_patch_x86_64_pc32(uint8_t *loc, uint64_t p, uint64_t sa);
int tj_patch_x86_64_plt32(uint8_t *loc, uint64_t p, uint64_t sa);

/* Dispatch on enum tj_reloc. */
int tj_patch(int reloc, uint8_t *loc, uint64_t p, uint64_t sa);

#endif
