/* demangle.c - demangled names, kept per session (demangle.h). */
#include "unwind/demangle.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

/* An open-addressing table of mangled -> demangled, grown at half full. */
struct demangle_cache {
	struct dm_slot {
		char *mangled, *plain;
	} *slot;
	size_t n, cap;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603u; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211u;
	return h;
}

static struct dm_slot *find(struct demangle_cache *c, const char *name)
{
	for (size_t i = hash(name) & (c->cap - 1);; i = (i + 1) & (c->cap - 1))
		if (!c->slot[i].mangled || !strcmp(c->slot[i].mangled, name))
			return &c->slot[i];
}

static bool grow(struct demangle_cache *c)
{
	struct demangle_cache bigger = { calloc(c->cap ? c->cap * 2 : 256, sizeof *c->slot), c->n,
					 c->cap ? c->cap * 2 : 256 };
	if (!bigger.slot)
		return false;
	for (size_t i = 0; i < c->cap; i++)
		if (c->slot[i].mangled)
			*find(&bigger, c->slot[i].mangled) = c->slot[i];
	free(c->slot);
	*c = bigger;
	return true;
}

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
	if ((c->n + 1) * 2 > c->cap && !grow(c))
		return name;
	struct dm_slot *x = find(c, name);
	if (x->mangled)
		return x->plain ? x->plain : name;
	char *key = strdup(name);
	if (!key)
		return name;
	/* NULL for what is not a valid mangled name: keep it as it is */
	*x = (struct dm_slot){ key, cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO) };
	c->n++;
	return x->plain ? x->plain : name;
}

void js_demangle_free(js_session *s)
{
	struct demangle_cache *c = s->demangled;
	if (!c)
		return;
	for (size_t i = 0; i < c->cap; i++) {
		free(c->slot[i].mangled);
		free(c->slot[i].plain);
	}
	free(c->slot);
	free(c);
	s->demangled = NULL;
}
