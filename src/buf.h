/* buf.h - typed byte emitters shared by the CFI, ELF and DWARF writers.
 *
 * A ju_buf writes little-endian values into a fixed region (or, with
 * buf_init_grow, a growing heap region).  Every write is bounds-checked; the
 * first overflow sets a sticky error and later writes are ignored, so a writer
 * emits a whole structure and checks buf_ok() once at the end.  Length fields
 * are written as slots and patched when the length is known.
 */
#ifndef JU_BUF_H
#define JU_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ju_buf {
	uint8_t *p;   /* start of the region */
	size_t len;   /* bytes written so far */
	size_t cap;   /* size of the region */
	bool grow;    /* region is heap memory owned by the buffer */
	bool failed;  /* sticky: an overflow or allocation failure happened */
} ju_buf;

void buf_init(ju_buf *b, void *p, size_t cap);
void buf_init_grow(ju_buf *b);      /* starts empty; free with buf_free */
void buf_free(ju_buf *b);
static inline bool buf_ok(const ju_buf *b) { return !b->failed; }

/* Reserve n bytes and return where they start, or NULL after a failure. */
uint8_t *buf_reserve(ju_buf *b, size_t n);
void buf_bytes_slow(ju_buf *b, const void *src, size_t n);
void buf_zeros(ju_buf *b, size_t n);

/* The two emitters everything else goes through, inline for their fast path
 * (room available); the slow path grows or records the overflow. */
static inline void buf_bytes(ju_buf *b, const void *src, size_t n)
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

static inline void buf_u8(ju_buf *b, uint8_t v)
{
	if (__builtin_expect(b->len < b->cap && !b->failed, 1))
		b->p[b->len++] = v;
	else
		buf_bytes_slow(b, &v, 1);
}
void buf_u16(ju_buf *b, uint16_t v);
void buf_u32(ju_buf *b, uint32_t v);
void buf_u64(ju_buf *b, uint64_t v);
void buf_uleb(ju_buf *b, uint64_t v);
void buf_sleb(ju_buf *b, int64_t v);
void buf_str(ju_buf *b, const char *s);   /* with its NUL */
/* Pad with `fill` bytes to a multiple of `align` (a power of two). */
void buf_align(ju_buf *b, size_t align, uint8_t fill);

/* A 4-byte length slot: buf_len32_begin writes a placeholder and returns its
 * offset; buf_len32_end patches it with the byte count written since the slot
 * ended (the DWARF "unit_length" convention). */
size_t buf_len32_begin(ju_buf *b);
void buf_len32_end(ju_buf *b, size_t slot);
/* Overwrite already-written bytes at `off`. */
void buf_put_u32(ju_buf *b, size_t off, uint32_t v);
void buf_put_u64(ju_buf *b, size_t off, uint64_t v);

size_t uleb_size(uint64_t v);
size_t sleb_size(int64_t v);

/* Little-endian loads from untrusted or unaligned bytes. */
static inline uint32_t load_u32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t load_u64(const uint8_t *p)
{
	return (uint64_t)load_u32(p) | (uint64_t)load_u32(p + 4) << 32;
}

#endif
