/* SPDX-License-Identifier: MIT */
/* bytes.h - little-endian bytes written and read by hand: the typed emitter
 * every writer of the tree goes through, the bounds-checked reader every
 * parser of untrusted bytes goes through, and LEB128 both ways.
 *
 * Both carry a sticky error, in every build: the first overflow (or failed
 * allocation) sets `failed`, later writes are ignored and later reads return
 * zeros, so a writer emits a whole structure and a parser reads a whole
 * record one field per line, as the format's specification lists them, and
 * each checks the flag once at the end.
 */
#ifndef FMT_BYTES_H
#define FMT_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- the emitter ----------------------------------------------------------- */

/* A byte_buf writes into a fixed region (buf_init) or a heap region that
 * grows up to a limit (buf_init_grow).  Length fields are written as slots
 * and patched when the length is known. */
typedef struct byte_buf {
	uint8_t *p;   /* start of the region */
	size_t len;   /* bytes written so far */
	size_t cap;   /* size of the region */
	size_t limit; /* the most bytes it may hold */
	bool grow;    /* region is heap memory owned by the buffer */
	bool failed;  /* sticky: an overflow or allocation failure happened */
} byte_buf;

/* A limit for a growing buffer that only memory bounds. */
#define BUF_UNBOUNDED (SIZE_MAX / 2)

void buf_init(byte_buf *b, void *p, size_t cap);
void buf_init_grow(byte_buf *b, size_t limit); /* starts empty; free with buf_free */
void buf_free(byte_buf *b);
static inline bool buf_ok(const byte_buf *b)
{
	return !b->failed;
}

/* Reserve n bytes and return where they start, or NULL after a failure. */
uint8_t *buf_reserve(byte_buf *b, size_t n);
void buf_bytes_slow(byte_buf *b, const void *src, size_t n);
void buf_zeros(byte_buf *b, size_t n);

/* The two emitters everything else goes through, inline for their fast path
 * (room available); the slow path grows or records the overflow. */
static inline void buf_bytes(byte_buf *b, const void *src, size_t n)
{
	if (n == 0) /* src may be NULL then, and memcpy must not see it */
		return;
	if (__builtin_expect(n <= b->cap - b->len && !b->failed, 1)) {
		__builtin_memcpy(b->p + b->len, src, n);
		b->len += n;
	} else {
		buf_bytes_slow(b, src, n);
	}
}

static inline void buf_u8(byte_buf *b, uint8_t v)
{
	if (__builtin_expect(b->len < b->cap && !b->failed, 1))
		b->p[b->len++] = v;
	else
		buf_bytes_slow(b, &v, 1);
}
void buf_u16(byte_buf *b, uint16_t v);
void buf_u32(byte_buf *b, uint32_t v);
void buf_u64(byte_buf *b, uint64_t v);
void buf_uleb(byte_buf *b, uint64_t v);
void buf_sleb(byte_buf *b, int64_t v);
void buf_str(byte_buf *b, const char *s); /* with its NUL */
/* Pad with `fill` bytes to a multiple of `align` (a power of two). */
void buf_align(byte_buf *b, size_t align, uint8_t fill);

/* A 4-byte length slot: buf_len32_begin writes a placeholder and returns its
 * offset; buf_len32_end patches it with the byte count written since the slot
 * ended (the DWARF "unit_length" convention). */
size_t buf_len32_begin(byte_buf *b);
void buf_len32_end(byte_buf *b, size_t slot);
/* Overwrite already-written bytes at `off`. */
void buf_put(byte_buf *b, size_t off, const void *src, size_t n);
void buf_put_u32(byte_buf *b, size_t off, uint32_t v);
void buf_put_u64(byte_buf *b, size_t off, uint64_t v);

size_t uleb_size(uint64_t v);
size_t sleb_size(int64_t v);

/* ---- loads and stores -------------------------------------------------------- */

/* Little-endian loads from unaligned bytes the caller has bounds-checked. */
static inline uint32_t load_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t load_u64(const uint8_t *p)
{
	return (uint64_t)load_u32(p) | (uint64_t)load_u32(p + 4) << 32;
}
static inline void store_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline void store_u64(uint8_t *p, uint64_t v)
{
	store_u32(p, (uint32_t)v);
	store_u32(p + 4, (uint32_t)(v >> 32));
}

/* ---- the reader ----------------------------------------------------------------- */

/* A cursor over untrusted bytes.  LEB128 values longer than ten bytes are
 * errors (a 64-bit value never needs more); bits past the 64th are dropped. */
typedef struct byte_rd {
	const uint8_t *base, *p, *end;
	bool failed;
} byte_rd;

/* A NULL buffer is an empty one that is already in error. */
static inline byte_rd rd_make(const uint8_t *p, size_t n)
{
	if (!p)
		return (byte_rd){ p, p, p, true };
	return (byte_rd){ p, p, p + n, false };
}

static inline size_t rd_left(const byte_rd *r)
{
	return r->failed ? 0 : (size_t)(r->end - r->p);
}

static inline size_t rd_pos(const byte_rd *r)
{
	return (size_t)(r->p - r->base);
}

static inline bool rd_need(byte_rd *r, size_t n)
{
	if (r->failed || (size_t)(r->end - r->p) < n) {
		r->failed = true;
		return false;
	}
	return true;
}

static inline void rd_bytes(byte_rd *r, void *out, size_t n)
{
	if (!rd_need(r, n)) {
		memset(out, 0, n);
		return;
	}
	memcpy(out, r->p, n);
	r->p += n;
}

/* Step over n bytes; returns where they start, or NULL past the end. */
static inline const uint8_t *rd_skip(byte_rd *r, size_t n)
{
	if (!rd_need(r, n))
		return NULL;
	const uint8_t *at = r->p;
	r->p += n;
	return at;
}

static inline uint8_t rd_u8(byte_rd *r)
{
	if (!rd_need(r, 1))
		return 0;
	return *r->p++;
}

/* An n-byte little-endian value, n at most 8. */
static inline uint64_t rd_le(byte_rd *r, unsigned n)
{
	const uint8_t *p = rd_skip(r, n);
	uint64_t v = 0;
	for (unsigned i = 0; p && i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static inline uint16_t rd_u16(byte_rd *r)
{
	return (uint16_t)rd_le(r, 2);
}

static inline uint32_t rd_u32(byte_rd *r)
{
	return (uint32_t)rd_le(r, 4);
}

static inline uint64_t rd_u64(byte_rd *r)
{
	return rd_le(r, 8);
}

/* LEB128 (DWARF 4 section 7.6): seven bits a byte, lowest first, the high
 * bit set on all but the last; a signed value's last byte carries its sign
 * in bit 6. */
static inline uint64_t rd_leb(byte_rd *r, bool is_signed)
{
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		uint8_t b = rd_u8(r);
		if (r->failed)
			return 0;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (is_signed && shift + 7 < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << (shift + 7);
			return v;
		}
	}
	r->failed = true;
	return 0;
}

static inline uint64_t rd_uleb(byte_rd *r)
{
	return rd_leb(r, false);
}

static inline int64_t rd_sleb(byte_rd *r)
{
	return (int64_t)rd_leb(r, true);
}

/* A NUL-terminated string of at most `max` bytes before its NUL. */
static inline const char *rd_cstr(byte_rd *r, size_t max)
{
	size_t left = rd_left(r);
	const uint8_t *nul = left ? memchr(r->p, 0, left < max + 1 ? left : max + 1) : NULL;
	if (!nul) {
		r->failed = true;
		return NULL;
	}
	const char *s = (const char *)r->p;
	r->p = nul + 1;
	return s;
}

#endif
