/* SPDX-License-Identifier: MIT */
/* fpcheck.h - the frame-pointer rule for stencils (build time).
 *
 * clang-19 accepts -mframe-pointer=reserved but still allocates rbp (x29 on
 * AArch64, where -ffixed-x29 is rejected) under register pressure, so the
 * rule is checked on the machine code instead: a stencil either never
 * writes the frame pointer (it runs under the shim's frame), or it was
 * rebuilt with a frame pointer and writes it only in the standard prologue
 * (push %rbp; mov %rsp,%rbp -- stp x29, x30, [sp, #K]; add x29, sp, #K)
 * and epilogues (pop %rbp / leave -- ldp x29, x30, [sp...]).
 */
#ifndef TJ_FPCHECK_H
#define TJ_FPCHECK_H

#include "elfobj.h"

/* 1 if f writes the frame pointer at all, 0 if not, -1 on a decode error (message in err). */
int fp_writes_any(const eo_func *f, char *err, size_t errlen);

/* 0 if f has the standard frame and no other frame-pointer write; -1 with the
 * offending instruction in err otherwise. */
int fp_check_standard_frame(const eo_func *f, char *err, size_t errlen);

/* 1 if the file at path (one stencil name per line: those rebuilt with a
 * frame pointer) lists name, 0 if not or if it cannot be read. */
int fp_listed(const char *path, const char *name);

#endif
