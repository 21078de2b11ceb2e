/* SPDX-License-Identifier: MIT */
/* forstacks.c - the perf map and the jitdump read for a dump's stacks
 * only (see forstacks.h). */
#include "unwind/forstacks.h"
#include "formats/clock.h"
#include "base/grow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct spanv {
	js_span *v;
	size_t n, cap;
} spanv;

static bool add_span(spanv *o, uint64_t lo, uint64_t hi)
{
	if (!js_grow(&o->v, &o->cap, o->n, sizeof *o->v))
		return false;
	o->v[o->n++] = (js_span){ lo, hi };
	return true;
}

/* Every frame's lookup pc, a span of one byte each, normalized. */
static bool stack_spans(const js_stack *st, size_t n, spanv *o)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < st[i].n; k++) {
			uint64_t pc = js_lookup_pc(&st[i].f[k]);
			if (pc + 1 > pc && !add_span(o, pc, pc + 1))
				return false;
		}
	o->n = js_spans_normalize(o->v, o->n);
	return true;
}

/* The pieces of one function lie side by side: a chain's gap has the map
 * read again this far below it, which holds the pieces of any function
 * jitstack has seen at once. */
enum { CHAIN_REACH = 1 << 16, MAX_ROUNDS = 1024 };

void js_perfmap_for_stacks(js_session *s, const js_stack *st, size_t n)
{
	if (!s->pm_on)
		return;
	spanv w = { 0 };
	uint64_t t0 = now_ns();
	bool ok = stack_spans(st, n, &w);
	for (unsigned round = 0; ok && round < MAX_ROUNDS; round++) {
		js_err why = { 0 };
		if (js_perfmap_read_for(&s->pm, w.v, w.n, &why)) {
			/* no map is the usual case (a JIT that writes none) unless one was named */
			if (why.errnum != ENOENT || s->opt->perf_map)
				js_warn(s, "perf map %s; JIT frames are not named from it", why.msg);
			break;
		}
		bool more = false;
		for (size_t i = 0; ok && i < n; i++)
			for (size_t k = 0; ok && k < st[i].n; k++) {
				uint64_t gap = js_chain_gap(s, js_lookup_pc(&st[i].f[k]));
				if (gap)
					more = ok = add_span(&w, gap > CHAIN_REACH ? gap - CHAIN_REACH : 0,
							     gap + 1);
			}
		if (!more)
			break;
		w.n = js_spans_normalize(w.v, w.n);
	}
	if (!ok)
		js_warn(s, "out of memory reading the perf map for the stacks: JIT frames may be unnamed");
	js_source_of(s, &js_source_perfmap)->ns += now_ns() - t0;
	free(w.v);
}

bool js_jitdump_for_stacks(js_session *s, const js_stack *st, size_t n)
{
	if (!s->jd_on)
		return false;
	spanv w = { 0 };
	bool ok = stack_spans(st, n, &w), fresh = false;
	for (size_t i = 0; ok && i < w.n && !fresh; i++)
		fresh = !s->jd.want || !js_spans_overlap(s->jd.want, s->jd.n_want, w.v[i].lo, w.v[i].hi);
	for (size_t i = 0; ok && fresh && s->jd.want && i < s->jd.n_want; i++)
		ok = add_span(&w, s->jd.want[i].lo, s->jd.want[i].hi); /* what it was read for before */
	if (!ok)
		js_warn(s, "out of memory reading the jitdump for the stacks: JIT frames may be unnamed");
	if (!ok || !fresh) {
		free(w.v);
		return false;
	}
	w.n = js_spans_normalize(w.v, w.n);
	uint64_t t0 = now_ns();
	for (unsigned round = 0; round < MAX_ROUNDS; round++) {
		js_err why = { 0 };
		if (js_jitdump_read_for(&s->jd, w.v, w.n, &why)) {
			if (why.errnum != ENOENT || s->opt->jitdump)
				js_warn(s, "jitdump %s; JIT frames are not named from it", why.msg);
			break;
		}
		/* a CODE_MOVE of code not kept: read again for the old code too */
		uint64_t gap = s->jd.gap;
		if (!gap || js_spans_overlap(w.v, w.n, gap, gap + 1) || !add_span(&w, gap, gap + 1))
			break;
		w.n = js_spans_normalize(w.v, w.n);
	}
	js_source_of(s, &js_source_jitdump)->ns += now_ns() - t0;
	free(w.v);
	if (s->dwfl)
		js_refresh_modules(s); /* the images of the code read before are gone */
	return s->jd.with_cfi > 0;
}

bool js_stack_in_jitdump_cfi(js_session *s, const js_stack *st)
{
	for (size_t k = 0; s->jd_on && k < st->n; k++) {
		const js_jd_code *c = js_jitdump_find(&s->jd, js_lookup_pc(&st->f[k]));
		if (c && c->img && c->img->reported)
			return true;
	}
	return false;
}
