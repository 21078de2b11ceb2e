/* SPDX-License-Identifier: MIT */
/* grow.c - the growing arrays of grow.h. */
#include "base/grow.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

struct js_strchunk {
	struct js_strchunk *next;
	size_t used, cap;
	_Alignas(max_align_t) char data[];
};

/* n bytes at an offset aligned to align in the newest chunk, or in a new
 * one: twice the newest's size, from FIRST_CHUNK up to chunk bytes (or n,
 * when more).  A perf map read for a few pcs keeps a few names, and its
 * first chunk is small. */
enum { FIRST_CHUNK = 4096 };
static char *take(struct js_strchunk **head, size_t n, size_t align, size_t chunk)
{
	struct js_strchunk *c = *head;
	size_t at = c ? (c->used + align - 1) / align * align : 0;
	if (!c || at > c->cap || c->cap - at < n) {
		size_t grown = c && c->cap <= chunk / 2 ? c->cap * 2 : chunk;
		size_t cap = c ? grown : FIRST_CHUNK < chunk ? FIRST_CHUNK : chunk;
		cap = n > cap ? n : cap;
		if (cap > SIZE_MAX - sizeof *c || !(c = malloc(sizeof *c + cap)))
			return NULL;
		c->next = *head;
		c->used = 0;
		c->cap = cap;
		*head = c;
		at = 0;
	}
	c->used = at + n;
	return c->data + at;
}

const char *js_strs_keep(struct js_strchunk **head, const char *s, size_t n, size_t chunk)
{
	char *out = n < SIZE_MAX ? take(head, n + 1, 1, chunk) : NULL;
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	out[n] = 0;
	return out;
}

void *js_strs_alloc(struct js_strchunk **head, size_t n, size_t chunk)
{
	return take(head, n, _Alignof(max_align_t), chunk);
}

void js_strs_free(struct js_strchunk **head)
{
	while (*head) {
		struct js_strchunk *next = (*head)->next;
		free(*head);
		*head = next;
	}
}
