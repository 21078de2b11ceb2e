/* x86.h - the instruction-level facts the stencil tools check, decoded
 * with capstone (build time).
 */
#ifndef TJ_X86_H
#define TJ_X86_H

#include <stddef.h>
#include <stdint.h>

/* An instruction that writes rbp (or ebp, bp, bpl). */
typedef struct x86_write {
	uint64_t offset;
	char text[192]; /* "movq %rsp, %rbp" */
	int kind;      /* X86_W_* */
} x86_write;

enum { X86_W_OTHER, X86_W_SET_FP /* mov %rsp,%rbp */, X86_W_RESTORE /* pop %rbp, leave */ };

/* Decode code[0..size) completely and list the instructions that write the
 * frame-pointer register.  Returns their count (at most max are stored),
 * or -1 with a message when the bytes do not decode. */
int x86_fp_writes(const uint8_t *code, size_t size, x86_write *out, int max, char *err,
		  size_t errlen);

/* Whether code starts with the standard prologue push %rbp; mov %rsp,%rbp. */
int x86_has_fp_prologue(const uint8_t *code, size_t size);

/* Offset of the only indirect call (call *reg / call *mem) in code, and
 * its length; -1 unless there is exactly one. */
long x86_only_indirect_call(const uint8_t *code, size_t size, size_t *len);

#endif
