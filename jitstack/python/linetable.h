/* SPDX-License-Identifier: MIT */
/* linetable.h - the line of one instruction, from a code object's
 * co_linetable in the location table format of CPython 3.11 and later
 * (CPython's Objects/locations.md).
 */
#ifndef JS_PY_LINETABLE_H
#define JS_PY_LINETABLE_H

#include <stddef.h>
#include <stdint.h>

/* The line of the code unit at index `unit` (the first is 0), starting
 * from the code's co_firstlineno; `unit` -1 (a frame not yet started)
 * is its first line.  0 when the table gives it no line, or is
 * malformed (a read past its end stops the walk). */
int js_py_line(const uint8_t *table, size_t n, int firstlineno, long unit);

#endif
