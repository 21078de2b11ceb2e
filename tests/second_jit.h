/* SPDX-License-Identifier: MIT */
/* second_jit.h - a second JIT that implements the GDB JIT interface the way
 * LLVM ORC does (second_jit.c). */
#ifndef SECOND_JIT_H
#define SECOND_JIT_H

#include <stddef.h>
#include <stdint.h>

typedef struct second_fn {
	const void *code;
	uint64_t size;
	const char *name;
	/* set by second_jit_register */
	void *entry;
	uint8_t *image;
	size_t image_size;
} second_fn;

/* Build f's image and link it on the descriptor's list; 0 or -1. */
int second_jit_register(second_fn *f);
/* Unlink and free what second_jit_register made. */
void second_jit_unregister(second_fn *f);
/* Entries on the descriptor's list now (everyone's). */
size_t second_jit_list_length(void);

#endif
