/* SPDX-License-Identifier: MIT */
/* demangle.c - demangled names, kept per session (demangle.h). */
#include "unwind/demangle.h"
#include "base/grow.h"
#include "base/hash.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

/* mangled -> demangled: the pairs in the order met, indexed by a hash
 * table of the mangled names. */
struct demangle_cache {
	struct dm_pair {
		char *mangled, *plain;
	} *v;
	size_t n, cap;
	js_htab index;
};

/* Itanium C++ (and Rust's legacy scheme, which wraps it) start with _Z,
 * Rust's v0 scheme with _R; nothing else is worth asking. */
static bool mangled(const char *name)
{
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

const char *js_demangle(js_session *s, const char *name)
{
	if (!name || s->opt->no_demangle || !mangled(name))
		return name;
	struct demangle_cache *c = s->demangled;
	if (!c && !(c = s->demangled = calloc(1, sizeof *c)))
		return name;
	uint64_t h = js_hash_str(name);
	if (js_htab_reserve(&c->index, 1))
		return name;
	size_t i = js_htab_first(&c->index, h);
	for (; c->index.val[i]; i = js_htab_next(&c->index, i)) {
		const struct dm_pair *x = &c->v[c->index.val[i] - 1];
		if (c->index.hash[i] == h && !strcmp(x->mangled, name))
			return x->plain ? x->plain : name;
	}
	if (!js_grow(&c->v, &c->cap, c->n, sizeof *c->v))
		return name;
	char *key = strdup(name);
	if (!key)
		return name;
	/* NULL for what is not a valid mangled name: keep it as it is */
	struct dm_pair *x = &c->v[c->n++];
	*x = (struct dm_pair){ key, cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO) };
	js_htab_put_at(&c->index, i, h, (uint32_t)c->n);
	return x->plain ? x->plain : name;
}

void js_demangle_free(js_session *s)
{
	struct demangle_cache *c = s->demangled;
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].mangled);
		free(c->v[i].plain);
	}
	free(c->v);
	js_htab_free(&c->index);
	free(c);
	s->demangled = NULL;
}
