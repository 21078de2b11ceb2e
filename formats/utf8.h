/* SPDX-License-Identifier: MIT */
/* utf8.h - the one rule of the tree for what is UTF-8: the library's name
 * check, jitstack's output and its jitdump reader all ask utf8_len.
 *
 * It is the table of RFC 3629 section 4 (UTF8-octets), byte by byte:
 *
 *   UTF8-1 = %x00-7F
 *   UTF8-2 = %xC2-DF UTF8-tail
 *   UTF8-3 = %xE0 %xA0-BF UTF8-tail / %xE1-EC 2( UTF8-tail ) /
 *            %xED %x80-9F UTF8-tail / %xEE-EF 2( UTF8-tail )
 *   UTF8-4 = %xF0 %x90-BF 2( UTF8-tail ) / %xF1-F3 3( UTF8-tail ) /
 *            %xF4 %x80-8F 2( UTF8-tail )
 *   UTF8-tail = %x80-BF
 *
 * so overlong forms (C0, C1, E0 80-9F, F0 80-8F), the surrogates D800-DFFF
 * (ED A0-BF) and values past U+10FFFF (F4 90-BF, F5-FF) are not UTF-8, nor
 * is a sequence cut short.  Which bytes a caller then allows (control
 * characters, NUL) and what it does with the rest is its own policy.
 */
#ifndef FMT_UTF8_H
#define FMT_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The most bytes one character takes. */
#define UTF8_MAX 4

/* The length (1-4) of the well-formed UTF-8 sequence that starts at p, of
 * the n bytes there, or 0 when there is none (n == 0 too).  Nothing past
 * p + n is read. */
static inline size_t utf8_len(const uint8_t *p, size_t n)
{
	if (n == 0)
		return 0;
	uint8_t c = p[0];
	if (c < 0x80)
		return 1;
	size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (len == 0 || n < len)
		return 0;
	/* the second byte's range: narrower after E0 and F0 (overlong), ED
	 * (surrogates) and F4 (past U+10FFFF) */
	uint8_t lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
	uint8_t hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* The same at s in a NUL-terminated string: its NUL ends a sequence early. */
static inline size_t utf8_len_str(const char *s)
{
	return utf8_len((const uint8_t *)s, strnlen(s, UTF8_MAX));
}

#endif
