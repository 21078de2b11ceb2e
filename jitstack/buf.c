/* buf.c - the growable byte buffer of buf.h. */
#include "buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void jbuf_init(jbuf *b, size_t limit)
{
	*b = (jbuf){ .limit = limit };
}

void jbuf_free(jbuf *b)
{
	free(b->p);
	*b = (jbuf){ 0 };
}

bool jbuf_reserve(jbuf *b, size_t n)
{
	if (b->err)
		return false;
	if (n > b->limit || b->len > b->limit - n) {
		b->err = true;
		return false;
	}
	if (b->len + n <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->len + n)
		cap = cap > b->limit / 2 ? b->limit : cap * 2;
	uint8_t *p = realloc(b->p, cap);
	if (!p) {
		b->err = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void jbuf_bytes(jbuf *b, const void *p, size_t n)
{
	if (!n || !jbuf_reserve(b, n))
		return;
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

void jbuf_zeros(jbuf *b, size_t n)
{
	if (!n || !jbuf_reserve(b, n))
		return;
	memset(b->p + b->len, 0, n);
	b->len += n;
}

void jbuf_u8(jbuf *b, uint8_t v)
{
	jbuf_bytes(b, &v, 1);
}

void jbuf_u16(jbuf *b, uint16_t v)
{
	uint8_t x[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	jbuf_bytes(b, x, 2);
}

void jbuf_u32(jbuf *b, uint32_t v)
{
	uint8_t x[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	jbuf_bytes(b, x, 4);
}

void jbuf_u64(jbuf *b, uint64_t v)
{
	jbuf_u32(b, (uint32_t)v);
	jbuf_u32(b, (uint32_t)(v >> 32));
}

void jbuf_uleb(jbuf *b, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;
		v >>= 7;
		jbuf_u8(b, (uint8_t)(byte | (v ? 0x80 : 0)));
	} while (v);
}

void jbuf_sleb(jbuf *b, int64_t v)
{
	for (;;) {
		uint8_t byte = (uint8_t)(v & 0x7f);
		v >>= 7; /* arithmetic shift on every compiler we build with */
		bool done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
		jbuf_u8(b, (uint8_t)(byte | (done ? 0 : 0x80)));
		if (done)
			return;
	}
}

void jbuf_str(jbuf *b, const char *s)
{
	jbuf_bytes(b, s, strlen(s) + 1);
}

void jbuf_align(jbuf *b, size_t a, uint8_t fill)
{
	while (!b->err && b->len % a)
		jbuf_u8(b, fill);
}

void jbuf_put(jbuf *b, size_t at, const void *p, size_t n)
{
	if (b->err || at > b->len || n > b->len - at) {
		b->err = true;
		return;
	}
	memcpy(b->p + at, p, n);
}

void jbuf_put_u32(jbuf *b, size_t at, uint32_t v)
{
	uint8_t x[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	jbuf_put(b, at, x, 4);
}

void jbuf_put_u64(jbuf *b, size_t at, uint64_t v)
{
	jbuf_put_u32(b, at, (uint32_t)v);
	jbuf_put_u32(b, at + 4, (uint32_t)(v >> 32));
}

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
