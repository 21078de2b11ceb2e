/* rd.h - a cursor over untrusted little-endian bytes.
 *
 * Every read is bounds-checked; a read past the end sets a sticky error and
 * returns zeros, so parsing code reads like the format's specification and
 * checks `r.err` once per record instead of after every field.  LEB128
 * values longer than ten bytes are errors (a 64-bit value never needs more).
 */
#ifndef JS_RD_H
#define JS_RD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct rd {
	const uint8_t *base, *p, *end;
	bool err;
} rd;

/* A NULL buffer is an empty one that is already in error. */
static inline rd rd_make(const uint8_t *p, size_t n)
{
	if (!p)
		return (rd){ p, p, p, true };
	return (rd){ p, p, p + n, false };
}

static inline size_t rd_left(const rd *r)
{
	return r->err ? 0 : (size_t)(r->end - r->p);
}

static inline size_t rd_pos(const rd *r)
{
	return (size_t)(r->p - r->base);
}

static inline bool rd_need(rd *r, size_t n)
{
	if (r->err || (size_t)(r->end - r->p) < n) {
		r->err = true;
		return false;
	}
	return true;
}

static inline void rd_bytes(rd *r, void *out, size_t n)
{
	if (!rd_need(r, n)) {
		memset(out, 0, n);
		return;
	}
	memcpy(out, r->p, n);
	r->p += n;
}

static inline const uint8_t *rd_skip(rd *r, size_t n)
{
	if (!rd_need(r, n))
		return NULL;
	const uint8_t *at = r->p;
	r->p += n;
	return at;
}

static inline uint8_t rd_u8(rd *r)
{
	uint8_t v;
	rd_bytes(r, &v, 1);
	return v;
}

static inline uint16_t rd_u16(rd *r)
{
	uint8_t b[2];
	rd_bytes(r, b, 2);
	return (uint16_t)(b[0] | b[1] << 8);
}

static inline uint32_t rd_u32(rd *r)
{
	uint8_t b[4];
	rd_bytes(r, b, 4);
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static inline uint64_t rd_u64(rd *r)
{
	uint64_t lo = rd_u32(r);
	return lo | (uint64_t)rd_u32(r) << 32;
}

static inline uint64_t rd_uleb(rd *r)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		uint8_t b = rd_u8(r);
		if (r->err)
			return 0;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->err = true;
	return 0;
}

static inline int64_t rd_sleb(rd *r)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		uint8_t b = rd_u8(r);
		if (r->err)
			return 0;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (shift + 7 < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << (shift + 7);
			return (int64_t)v;
		}
	}
	r->err = true;
	return 0;
}

/* A NUL-terminated string of at most `max` bytes before its NUL. */
static inline const char *rd_cstr(rd *r, size_t max)
{
	size_t left = rd_left(r);
	const uint8_t *nul = memchr(r->p, 0, left < max + 1 ? left : max + 1);
	if (!nul) {
		r->err = true;
		return NULL;
	}
	const char *s = (const char *)r->p;
	r->p = nul + 1;
	return s;
}

/* Unaligned loads from bytes already bounds-checked by the caller. */
static inline uint32_t ld_u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static inline uint64_t ld_u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline void st_u32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static inline void st_u64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

#endif
