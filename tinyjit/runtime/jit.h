/* SPDX-License-Identifier: MIT */
/* jit.h - the copy-and-patch JIT's run-time interface.
 *
 * tj_jit_compile copies each instruction's stencil into one mmap'ed region
 * (written RW, then made RX, or written through a RW view and run through
 * a RX one: never writable and executable at once), patches
 * the holes, and records for every function what an unwinder needs: its
 * code range, a line table (code offset -> .tj line) and CFI ranges.
 */
#ifndef TJ_JIT_H
#define TJ_JIT_H

#include <stddef.h>
#include <stdint.h>

#include "../vm/vm.h"
#include "inline.h"
#include "stencil.h"

enum tj_frames { TJ_FRAMES_FP, TJ_FRAMES_NOFP };
/* How code is made writable, then executable (jit.c, "W^X"):
 *   TJ_WX_FLIP       one private mapping, written RW then made RX
 *   TJ_WX_DUAL       two views of a memfd, written through a RW view and
 *                    run through a RX view at another address, as .NET
 *                    and Firefox do
 *   TJ_WX_DUAL_ANON  the same with anonymous shared memory, the RX view a
 *                    second mapping of the same pages (mremap) */
enum tj_wx { TJ_WX_FLIP, TJ_WX_DUAL, TJ_WX_DUAL_ANON };
enum tj_cfi_mode { TJ_CFI_REGION, TJ_CFI_EXACT };

extern const tj_stencil_set tj_stencils_fp, tj_stencils_nofp;

/* A line-table row: code from `offset` on comes from .tj line `line`. */
typedef struct tj_line {
	uint32_t offset, line;
} tj_line;

/* The compiler's CFI for [start, end) of a function's code. */
typedef struct tj_cfi_range {
	uint32_t start, end;
	const uint8_t *insns;
	size_t len;
} tj_cfi_range;

/* A call inlined into a function's code: callee fn runs in [start, end),
 * called at .tj line call_line of its parent (0: the function itself,
 * k: the function's inlines[k - 1]).  A function's inlines are in
 * pre-order, as ju_inline wants them. */
typedef struct tj_jit_inline {
	uint32_t start, end;
	uint32_t parent;
	uint32_t fn;
	uint32_t call_line;
} tj_jit_inline;

typedef struct tj_jit_func {
	const uint8_t *code;
	uint32_t size;
	const tj_line *lines; /* inside inlined code, the callee's lines */
	size_t n_lines;
	const tj_cfi_range *cfi; /* every stencil and the trampolines, in order */
	size_t n_cfi;
	const tj_jit_inline *inlines;
	size_t n_inlines;
} tj_jit_func;

typedef struct tj_jit tj_jit;

/* Compile every function of p, inlining calls as `inl` allows (NULL: no
 * inlining; inline.h).  Returns 0, or -1 with a message.  The code
 * addresses it gives (tj_jit_func.code) are where the code runs. */
int tj_jit_compile(const tj_program *p, enum tj_frames frames, enum tj_wx wx, const tj_inline_policy *inl,
		   tj_jit **out, char *err, size_t errlen);
void tj_jit_free(tj_jit *j);

/* Let vm run p's functions as JIT code: vm->run becomes tj_jit_run. */
void tj_jit_attach(tj_jit *j, tj_vm *vm);

const tj_stencil_set *tj_jit_stencils(const tj_jit *j);
uint32_t tj_jit_nfuncs(const tj_jit *j);
const tj_jit_func *tj_jit_func_info(const tj_jit *j, uint32_t fn);
size_t tj_jit_code_bytes(const tj_jit *j);
/* The calls inlined, over all functions. */
size_t tj_jit_inlined(const tj_jit *j);

/* Run function fn (frame at locals, arguments in place) as JIT code; the
 * VM calls it through vm->run.  The probe's expected frames name it
 * (host/hostfns.c). */
tj_res tj_jit_run(tj_vm *vm, uint32_t fn, int64_t *locals);

/* Enter JIT code `code` from C with the frame at locals (runtime/shim.c). */
tj_res tj_jit_enter(void *code, int64_t *locals, tj_vm *vm);

/* Called by stencils to report a run-time error. */
tj_res tj_rt_fail(tj_vm *vm, int64_t err, int64_t insn);

#endif
