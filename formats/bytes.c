/* SPDX-License-Identifier: MIT */
/* bytes.c - the byte emitter of bytes.h (the reader is inline there). */
#include "bytes.h"

#include <endian.h>
#include <stdlib.h>
#include <string.h>

/* A part may route the growth of its buffers through its own allocator: the
 * library compiles this file with -DBYTES_REALLOC=ju__realloc, so that a
 * growing buffer asks its fault injector like every other allocation. */
#ifdef BYTES_REALLOC
void *BYTES_REALLOC(void *p, size_t n);
#else
#define BYTES_REALLOC realloc
#endif

void buf_init(byte_buf *b, void *p, size_t cap)
{
	*b = (byte_buf){ .p = p, .cap = cap, .limit = cap };
}

void buf_init_grow(byte_buf *b, size_t limit)
{
	*b = (byte_buf){ .limit = limit < BUF_UNBOUNDED ? limit : BUF_UNBOUNDED, .grow = true };
}

void buf_free(byte_buf *b)
{
	if (b->grow)
		free(b->p);
	*b = (byte_buf){ 0 };
}

static bool make_room(byte_buf *b, size_t n)
{
	if (b->failed)
		return false;
	if (n <= b->cap - b->len)
		return true;
	if (!b->grow || n > b->limit - b->len) {
		b->failed = true;
		return false;
	}
	size_t cap = b->cap ? b->cap : 256;
	while (cap - b->len < n)
		cap = cap > b->limit / 2 ? b->limit : cap * 2;
	uint8_t *p = BYTES_REALLOC(b->p, cap);
	if (!p) {
		b->failed = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

uint8_t *buf_reserve(byte_buf *b, size_t n)
{
	if (!make_room(b, n))
		return NULL;
	uint8_t *at = b->p + b->len;
	b->len += n;
	return at;
}

void buf_bytes_slow(byte_buf *b, const void *src, size_t n)
{
	uint8_t *at = buf_reserve(b, n);
	if (at && n)
		memcpy(at, src, n);
}

void buf_zeros(byte_buf *b, size_t n)
{
	uint8_t *at = buf_reserve(b, n);
	if (at && n)
		memset(at, 0, n);
}

void buf_u16(byte_buf *b, uint16_t v)
{
	v = htole16(v);
	buf_bytes(b, &v, 2);
}

void buf_u32(byte_buf *b, uint32_t v)
{
	v = htole32(v);
	buf_bytes(b, &v, 4);
}

void buf_u64(byte_buf *b, uint64_t v)
{
	v = htole64(v);
	buf_bytes(b, &v, 8);
}

void buf_uleb(byte_buf *b, uint64_t v)
{
	do {
		uint8_t byte = v & 0x7f;
		v >>= 7;
		buf_u8(b, byte | (v ? 0x80 : 0));
	} while (v);
}

void buf_sleb(byte_buf *b, int64_t v)
{
	for (;;) {
		uint8_t byte = v & 0x7f;
		v >>= 7; /* arithmetic shift: gcc and clang define it */
		bool done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
		buf_u8(b, byte | (done ? 0 : 0x80));
		if (done)
			return;
	}
}

void buf_str(byte_buf *b, const char *s)
{
	buf_bytes(b, s, strlen(s) + 1);
}

void buf_align(byte_buf *b, size_t align, uint8_t fill)
{
	size_t pad = (align - (b->len & (align - 1))) & (align - 1);
	uint8_t *at = buf_reserve(b, pad);
	if (at && pad)
		memset(at, fill, pad);
}

size_t buf_len32_begin(byte_buf *b)
{
	size_t slot = b->len;
	buf_u32(b, 0);
	return slot;
}

void buf_len32_end(byte_buf *b, size_t slot)
{
	size_t n = b->len - slot - 4;
	if (n > UINT32_MAX - 16) { /* 0xfffffff0.. are reserved escape values */
		b->failed = true;
		return;
	}
	buf_put_u32(b, slot, (uint32_t)n);
}

void buf_put(byte_buf *b, size_t off, const void *src, size_t n)
{
	if (b->failed || off > b->len || b->len - off < n) {
		b->failed = true;
		return;
	}
	memcpy(b->p + off, src, n);
}

void buf_put_u32(byte_buf *b, size_t off, uint32_t v)
{
	v = htole32(v);
	buf_put(b, off, &v, 4);
}

void buf_put_u64(byte_buf *b, size_t off, uint64_t v)
{
	buf_put_u32(b, off, (uint32_t)v);
	buf_put_u32(b, off + 4, (uint32_t)(v >> 32));
}

size_t uleb_size(uint64_t v)
{
	size_t n = 1;
	while (v >>= 7)
		n++;
	return n;
}

size_t sleb_size(int64_t v)
{
	size_t n = 0;
	for (;;) {
		uint8_t byte = v & 0x7f;
		v >>= 7;
		n++;
		if ((v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40)))
			return n;
	}
}
