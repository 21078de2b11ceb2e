/* SPDX-License-Identifier: MIT */
/* x86.h - the instruction-level facts the stencil tools check, decoded
 * with capstone (build time).
 */
#ifndef TJ_X86_H
#define TJ_X86_H

#include <stddef.h>
#include <stdint.h>

#include "isa.h"

/* 1 (the offset of its mov) if code starts with the standard prologue
 * push %rbp; mov %rsp,%rbp, else -1. */
long x86_fp_prologue_set(const uint8_t *code, size_t size);

#endif
