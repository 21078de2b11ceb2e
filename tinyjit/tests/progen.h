/* SPDX-License-Identifier: MIT */
/* progen.h - random .tj programs for differential testing and fuzzing.
 *
 * tj_progen(seed, ...) writes a program whose every run terminates: calls go
 * only to later functions, except one self-call per function that passes
 * a smaller first argument (capped at entry), and loops count down from
 * small constants.  Programs do use division (by zero too), wrapping
 * arithmetic at the extremes, locals, jumps, calls and host callbacks, so
 * run-time errors are part of what is compared.
 */
#ifndef TJ_PROGEN_H
#define TJ_PROGEN_H

#include <stddef.h>
#include <stdint.h>

/* Write a program for `seed` into buf (NUL-terminated); returns its length,
 * or 0 if buf is too small. */
size_t tj_progen(uint64_t seed, char *buf, size_t cap);

/* Deterministic arguments for main(a, b) of the program of `seed`. */
void tj_progen_args(uint64_t seed, int64_t args[2]);

#endif
