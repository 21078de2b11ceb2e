/* SPDX-License-Identifier: MIT */
/* hash.c - the hash table of hash.h. */
#include "base/hash.h"

#include <stdlib.h>
#include <string.h>

/* Enter every entry of the old slots into the (empty) new ones. */
static void refill(js_htab *t, const uint64_t *hash, const uint32_t *val, size_t cap)
{
	for (size_t i = 0; i < cap; i++) {
		if (!val[i])
			continue;
		size_t j = js_htab_first(t, hash[i]);
		while (t->val[j])
			j = js_htab_next(t, j);
		js_htab_put_at(t, j, hash[i], val[i]);
	}
}

int js_htab_reserve(js_htab *t, size_t more)
{
	if (2 * (t->n + more) <= t->cap)
		return 0;
	size_t cap = t->cap ? t->cap * 2 : 256;
	while (2 * (t->n + more) > cap)
		cap *= 2;
	uint64_t *hash = calloc(cap, sizeof *hash);
	uint32_t *val = calloc(cap, sizeof *val);
	if (!hash || !val) {
		free(hash);
		free(val);
		return -1;
	}
	js_htab old = *t;
	*t = (js_htab){ hash, val, cap, 0 };
	refill(t, old.hash, old.val, old.cap);
	free(old.hash);
	free(old.val);
	return 0;
}

int js_htab_put(js_htab *t, uint64_t key, uint32_t v)
{
	if (js_htab_reserve(t, 1))
		return -1;
	size_t i = js_htab_first(t, key);
	for (; t->val[i]; i = js_htab_next(t, i))
		if (t->hash[i] == key) {
			t->val[i] = v;
			return 0;
		}
	js_htab_put_at(t, i, key, v);
	return 0;
}

void js_htab_filter(js_htab *t, bool (*keep)(const void *ctx, uint32_t v), const void *ctx)
{
	size_t n = 0;
	for (size_t i = 0; i < t->cap; i++) /* the kept entries to the front: n <= i */
		if (t->val[i] && keep(ctx, t->val[i])) {
			t->hash[n] = t->hash[i];
			t->val[n++] = t->val[i];
		}
	for (size_t i = n; i < t->cap; i++)
		t->val[i] = 0;
	t->n = 0;
	/* each entered again; those not yet taken still hold their slots */
	for (size_t i = 0; i < n; i++) {
		uint64_t h = t->hash[i];
		uint32_t v = t->val[i];
		t->val[i] = 0;
		size_t j = js_htab_first(t, h);
		while (t->val[j])
			j = js_htab_next(t, j);
		js_htab_put_at(t, j, h, v);
	}
}

void js_htab_clear(js_htab *t)
{
	if (t->cap)
		memset(t->val, 0, t->cap * sizeof *t->val);
	t->n = 0;
}

void js_htab_free(js_htab *t)
{
	free(t->hash);
	free(t->val);
	*t = (js_htab){ 0 };
}
