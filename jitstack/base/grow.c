/* grow.c - the growing arrays of grow.h. */
#include "base/grow.h"

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
	char data[];
};

const char *js_strs_keep(struct js_strchunk **head, const char *s, size_t n, size_t chunk)
{
	struct js_strchunk *c = *head;
	if (!c || c->cap - c->used < n + 1) {
		size_t cap = n + 1 > chunk ? n + 1 : chunk;
		if (!(c = malloc(sizeof *c + cap)))
			return NULL;
		c->next = *head;
		c->used = 0;
		c->cap = cap;
		*head = c;
	}
	char *out = c->data + c->used;
	for (size_t i = 0; i < n; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	out[n] = 0;
	c->used += n + 1;
	return out;
}

void js_strs_free(struct js_strchunk **head)
{
	while (*head) {
		struct js_strchunk *next = (*head)->next;
		free(*head);
		*head = next;
	}
}
