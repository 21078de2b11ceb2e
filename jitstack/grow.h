/* grow.h - jitstack's growing arrays. */
#ifndef JS_GROW_H
#define JS_GROW_H

#include <stdbool.h>
#include <stddef.h>

/* Room for element n of the array at *(T **)arrayp, *cap elements of size
 * bytes: the capacity doubles (from 16) when n reaches it.  false when out
 * of memory; the array is then kept as it was. */
bool js_grow(void *arrayp, size_t *cap, size_t n, size_t size);

#endif
