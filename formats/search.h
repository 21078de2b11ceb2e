/* SPDX-License-Identifier: MIT */
/* search.h - the one binary search over the tree's sorted tables: FDEs by
 * their start (as .eh_frame_hdr's table is searched), address ranges,
 * line rows, memory segments.
 *
 * fmt_count_le(base, n, stride, off, key): of the n elements of `stride`
 * bytes at base, sorted by the uint64_t at byte offset `off` in each, how
 * many have that field <= key.  The element holding key, if any, is the
 * one before that count (count - 1; none when the count is 0).  Inline, so
 * that with a constant stride and offset it compiles to the loop one would
 * write for the type.
 */
#ifndef FMT_SEARCH_H
#define FMT_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline size_t fmt_count_le(const void *base, size_t n, size_t stride, size_t off, uint64_t key)
{
	const unsigned char *b = base;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t v;
		memcpy(&v, b + mid * stride + off, sizeof v);
		if (v <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* fmt_count_le over an array of a struct type by one of its fields. */
#define FMT_COUNT_LE(array, n, field, key)                                                                   \
	fmt_count_le((array), (n), sizeof *(array), offsetof(__typeof__(*(array)), field), (key))

#endif
