/* SPDX-License-Identifier: MIT */
/* grow.h - jitstack's growing arrays. */
#ifndef JS_GROW_H
#define JS_GROW_H

#include <stdbool.h>
#include <stddef.h>

/* Room for element n of the array at *(T **)arrayp, *cap elements of size
 * bytes: the capacity doubles (from 16) when n reaches it.  false when out
 * of memory; the array is then kept as it was. */
bool js_grow(void *arrayp, size_t *cap, size_t n, size_t size);

/* Strings copied into chunks that never move, so pointers into them stay
 * good until js_strs_free; chunks double from 4 KiB up to chunk bytes
 * (one string larger than that gets a chunk of its own size).  Control
 * characters become '?': the strings come from a target, and a name must
 * not drive a terminal. */
struct js_strchunk;
const char *js_strs_keep(struct js_strchunk **head, const char *s, size_t n, size_t chunk);
/* n bytes, aligned for any object, in the same chunks (NULL when out of
 * memory): arrays that must not move, freed with the strings. */
void *js_strs_alloc(struct js_strchunk **head, size_t n, size_t chunk);
void js_strs_free(struct js_strchunk **head);

#endif
