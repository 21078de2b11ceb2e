/* SPDX-License-Identifier: MIT */
/* linetable.c - CPython's location table, read for lines only.
 *
 * An entry starts with a byte whose top bit is set: bits 3-6 are its
 * code, bits 0-2 the number of code units it covers less one.  What
 * follows depends on the code (Objects/locations.md):
 *   15  no location: the units have no line;
 *   14  long form: line delta (signed varint), end line delta, column + 1,
 *       end column + 1 (varints);
 *   13  no column: line delta (signed varint);
 *   10-12  one line form: line delta code - 10, then column, end column
 *       (a byte each);
 *   0-9 short form: line delta 0, one byte of columns.
 * A varint is little-endian 6-bit chunks, bit 6 set when another follows;
 * a signed one keeps its sign in bit 0.
 */
#include "python/linetable.h"

#include <stdbool.h>

enum {
	ENTRY_START = 0x80,
	CODE_NONE = 15,
	CODE_LONG = 14,
	CODE_NO_COLUMN = 13,
	CODE_ONE_LINE_2 = 12,
	CODE_ONE_LINE_1 = 11,
	CODE_ONE_LINE_0 = 10,
	VARINT_MORE = 0x40,
	VARINT_BITS = 0x3f,
};

typedef struct rd {
	const uint8_t *p, *end;
	bool bad;
} rd;

static unsigned byte(rd *r)
{
	if (r->p >= r->end) {
		r->bad = true;
		return 0;
	}
	return *r->p++;
}

static unsigned long varint(rd *r)
{
	unsigned long v = 0;
	for (unsigned shift = 0; shift < 8 * sizeof v - 6; shift += 6) {
		unsigned b = byte(r);
		v |= (unsigned long)(b & VARINT_BITS) << shift;
		if (!(b & VARINT_MORE))
			return v;
	}
	r->bad = true;
	return v;
}

static long svarint(rd *r)
{
	unsigned long v = varint(r);
	return v & 1 ? -(long)(v >> 1) : (long)(v >> 1);
}

int js_py_line(const uint8_t *table, size_t n, int firstlineno, long unit)
{
	rd r = { table, table + n, false };
	long line = firstlineno, at = 0;
	if (unit < 0)
		return firstlineno;
	while (r.p < r.end && !r.bad) {
		unsigned first = byte(&r);
		if (!(first & ENTRY_START))
			return 0;
		unsigned code = (first >> 3) & 15, len = (first & 7) + 1;
		bool none = false;
		switch (code) {
		case CODE_NONE: none = true; break;
		case CODE_LONG:
			line += svarint(&r);
			varint(&r);
			varint(&r);
			varint(&r);
			break;
		case CODE_NO_COLUMN: line += svarint(&r); break;
		case CODE_ONE_LINE_0:
		case CODE_ONE_LINE_1:
		case CODE_ONE_LINE_2:
			line += code - 10;
			byte(&r);
			byte(&r);
			break;
		default: byte(&r); break;
		}
		if (r.bad)
			return 0;
		if (unit < at + (long)len)
			return none || line <= 0 || line > INT32_MAX ? 0 : (int)line;
		at += len;
	}
	return 0;
}
