/* SPDX-License-Identifier: MIT */
/* hash.h - jitstack's one hash function and its one hash table.
 *
 * js_hash_bytes is FNV-1a (64-bit) over bytes: names, strings.  Arrays of
 * 32-bit words (a sample's locations) go through js_hash_words, a word at
 * a step.  js_hash_mix spreads a key over the table's bits, so integer keys
 * (pcs, pairs of indexes) need no hash of their own.
 *
 * js_htab maps a 64-bit hash to a 32-bit value by open addressing with
 * linear probing, grown to twice its size at half full.  A value is the
 * caller's index + 1 (0 marks an empty slot).  Two ways to use it:
 *  - the key is the hash (a pc, or two indexes side by side): js_htab_get
 *    and js_htab_put, equal hashes are equal keys;
 *  - the key is a string or an array hashed to 64 bits: walk the slots of
 *    a hash with js_htab_first/js_htab_next, compare what the values index,
 *    and js_htab_put_at the empty slot the walk ended on (after
 *    js_htab_reserve, which may move the slots).
 */
#ifndef JS_HASH_H
#define JS_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JS_HASH_SEED 0xcbf29ce484222325ull /* FNV-1a's offset basis */

static inline uint64_t js_hash_bytes(const void *p, size_t n, uint64_t h)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static inline uint64_t js_hash_str(const char *s)
{
	uint64_t h = JS_HASH_SEED;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

static inline uint64_t js_hash_words(const uint32_t *w, size_t n, uint64_t h)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ w[i]) * 0x100000001b3ull;
	return h;
}

static inline uint64_t js_hash_mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

typedef struct js_htab {
	uint64_t *hash;
	uint32_t *val; /* index + 1; 0: empty */
	size_t cap, n; /* cap: 0 or a power of two */
} js_htab;

static inline size_t js_htab_first(const js_htab *t, uint64_t h)
{
	return (size_t)js_hash_mix(h) & (t->cap - 1);
}

static inline size_t js_htab_next(const js_htab *t, size_t i)
{
	return (i + 1) & (t->cap - 1);
}

/* The value of the key that is its own hash, or 0. */
static inline uint32_t js_htab_get(const js_htab *t, uint64_t key)
{
	if (!t->cap)
		return 0;
	for (size_t i = js_htab_first(t, key); t->val[i]; i = js_htab_next(t, i))
		if (t->hash[i] == key)
			return t->val[i];
	return 0;
}

/* Room for `more` entries under half full (the slots move when it grows).
 * -1 when out of memory; the table is then as it was. */
int js_htab_reserve(js_htab *t, size_t more);
/* Fill the empty slot i (found by a walk after js_htab_reserve). */
static inline void js_htab_put_at(js_htab *t, size_t i, uint64_t h, uint32_t v)
{
	t->hash[i] = h;
	t->val[i] = v;
	t->n++;
}
/* Set the value of the key that is its own hash.  -1 when out of memory. */
int js_htab_put(js_htab *t, uint64_t key, uint32_t v);
/* Keep only the entries whose value `keep` accepts. */
void js_htab_filter(js_htab *t, bool (*keep)(const void *ctx, uint32_t v), const void *ctx);
/* Empty it, keeping its size. */
void js_htab_clear(js_htab *t);
void js_htab_free(js_htab *t);

#endif
