/* SPDX-License-Identifier: MIT */
/* fault.c - allocation wrappers and the fault-injection countdown.
 *
 * Every allocation, mmap and file write of the library first asks
 * ju__fault(); tests set a countdown with ju__fault_after(n) so the n-th one
 * fails, and check that the library reports an error and changes nothing
 * (SQLite's approach).  Costs one relaxed load when unused.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static long fault_countdown; /* 0: off; n: the n-th check from now fails */

JU_HIDDEN void ju__fault_after(long n);
JU_HIDDEN long ju__fault_remaining(void);

void ju__fault_after(long n)
{
	__atomic_store_n(&fault_countdown, n, __ATOMIC_RELAXED);
}

long ju__fault_remaining(void)
{
	return __atomic_load_n(&fault_countdown, __ATOMIC_RELAXED);
}

bool ju__fault(void)
{
	if (__builtin_expect(__atomic_load_n(&fault_countdown, __ATOMIC_RELAXED) == 0, 1))
		return false;
	return __atomic_sub_fetch(&fault_countdown, 1, __ATOMIC_RELAXED) == 0;
}

void *ju__malloc(size_t n)
{
	return ju__fault() ? NULL : malloc(n ? n : 1);
}

void *ju__calloc(size_t n, size_t size)
{
	return ju__fault() ? NULL : calloc(n ? n : 1, size ? size : 1);
}

void *ju__realloc(void *p, size_t n)
{
	return ju__fault() ? NULL : realloc(p, n ? n : 1);
}

char *ju__strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = ju__malloc(n);
	return p ? memcpy(p, s, n) : NULL;
}
