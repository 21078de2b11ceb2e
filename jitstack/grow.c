/* grow.c - the growing arrays of grow.h. */
#include "grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

bool js_grow(void *arrayp, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return true;
	size_t c = *cap ? *cap * 2 : 16;
	if (c > SIZE_MAX / size)
		return false;
	void *v;
	memcpy(&v, arrayp, sizeof v);
	v = realloc(v, c * size);
	if (!v)
		return false;
	memcpy(arrayp, &v, sizeof v);
	*cap = c;
	return true;
}
