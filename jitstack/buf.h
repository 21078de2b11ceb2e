/* buf.h - a growable byte buffer with typed little-endian emitters.
 *
 * The image rewriter emits ELF and DWARF bytes through these, one field per
 * call, so the emitting code reads like the format.  Allocation failure and
 * size overflow set a sticky error checked once at the end (the writer's
 * output is only used when buf_ok()).  Length slots are reserved and patched
 * later, as LuaJIT's gdbjit writer does.
 */
#ifndef JS_BUF_H
#define JS_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct jbuf {
	uint8_t *p;
	size_t len, cap;
	size_t limit; /* the most bytes it may grow to */
	bool err;
} jbuf;

void jbuf_init(jbuf *b, size_t limit);
void jbuf_free(jbuf *b);
/* Make room for n more bytes; false (and the sticky error) if impossible. */
bool jbuf_reserve(jbuf *b, size_t n);
void jbuf_bytes(jbuf *b, const void *p, size_t n);
void jbuf_zeros(jbuf *b, size_t n);
void jbuf_u8(jbuf *b, uint8_t v);
void jbuf_u16(jbuf *b, uint16_t v);
void jbuf_u32(jbuf *b, uint32_t v);
void jbuf_u64(jbuf *b, uint64_t v);
void jbuf_uleb(jbuf *b, uint64_t v);
void jbuf_sleb(jbuf *b, int64_t v);
void jbuf_str(jbuf *b, const char *s); /* with its NUL */
void jbuf_align(jbuf *b, size_t a, uint8_t fill);
/* Overwrite bytes already written. */
void jbuf_put_u32(jbuf *b, size_t at, uint32_t v);
void jbuf_put_u64(jbuf *b, size_t at, uint64_t v);
void jbuf_put(jbuf *b, size_t at, const void *p, size_t n);

static inline bool jbuf_ok(const jbuf *b)
{
	return !b->err;
}

/* Room for element n of the array at *(T **)arrayp, *cap elements of size
 * bytes: the capacity doubles (from 16) when n reaches it.  false when out
 * of memory; the array is then kept as it was. */
bool js_grow(void *arrayp, size_t *cap, size_t n, size_t size);

#endif
