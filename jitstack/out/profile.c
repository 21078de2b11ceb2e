/* SPDX-License-Identifier: MIT */
/* profile.c - sample aggregation (profile.h). */
#include "out/profile.h"
#include "base/grow.h"
#include "base/hash.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- strings, mappings, functions ---------------------------------------------- */

/* The index of a string in the table, adding it; 0 ("") on failure. */
static uint32_t intern(js_profile *p, const char *s)
{
	if (!s || !*s)
		return 0;
	js_htab *t = &p->str_index;
	uint64_t h = js_hash_str(s);
	if (js_htab_reserve(t, 1))
		goto oom;
	size_t i = js_htab_first(t, h);
	for (; t->val[i]; i = js_htab_next(t, i))
		if (t->hash[i] == h && !strcmp(p->str[t->val[i] - 1], s))
			return t->val[i] - 1;
	if (!js_grow(&p->str, &p->cap_str, p->n_str, sizeof *p->str))
		goto oom;
	char *copy = strdup(s);
	if (!copy)
		goto oom;
	p->str[p->n_str++] = copy;
	js_htab_put_at(t, i, h, (uint32_t)p->n_str);
	return (uint32_t)p->n_str - 1;
oom:
	p->oom = true;
	return 0;
}

void js_profile_init(js_profile *p)
{
	memset(p, 0, sizeof *p);
	intern(p, "x"); /* string 0 must be "": make room for it */
	if (p->n_str)
		p->str[0][0] = 0;
	/* the names pprof's sample types and labels use */
	static const char *const names[] = {
		"samples", "count", "cpu", "nanoseconds", "thread", "pid", "comm"
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		intern(p, names[i]);
}

uint32_t js_profile_process(js_profile *p, pid_t pid, const char *comm)
{
	if (!js_grow(&p->proc, &p->cap_proc, p->n_proc, sizeof *p->proc)) {
		p->oom = true;
		return 0;
	}
	pr_process *x = &p->proc[p->n_proc];
	memset(x, 0, sizeof *x);
	x->pid = pid;
	x->comm = intern(p, comm && *comm ? comm : "?");
	char frame[64];
	snprintf(frame, sizeof frame, "%.32s-%d", comm && *comm ? comm : "?", (int)pid);
	x->frame = intern(p, frame);
	return (uint32_t)p->n_proc++;
}

void js_profile_comment(js_profile *p, const char *text)
{
	if (p->n_comment >= sizeof p->comment / sizeof p->comment[0])
		return;
	uint32_t i = intern(p, text);
	if (i)
		p->comment[p->n_comment++] = i;
}

void js_profile_free(js_profile *p)
{
	for (size_t i = 0; i < p->n_str; i++)
		free(p->str[i]);
	free(p->str);
	for (size_t i = 0; i < p->n_smp; i++)
		free(p->smp[i].loc);
	free(p->smp);
	free(p->loc);
	free(p->inl);
	free(p->fn);
	free(p->map);
	js_htab_free(&p->str_index);
	js_htab_free(&p->smp_index);
	for (size_t i = 0; i < p->n_proc; i++) {
		js_htab_free(&p->proc[i].pc_memo);
		js_htab_free(&p->proc[i].map_index);
	}
	free(p->proc);
	js_htab_free(&p->fn_index);
	js_htab_free(&p->py_index);
	free(p->scratch);
	memset(p, 0, sizeof *p);
}

/* The mapping of the module the frame at pc is in (y: its name), added
 * the first time: the module's extent as the unwind stage found it. */
static uint32_t mapping_of(js_profile *p, pr_process *proc, const js_sym *y, uint64_t pc)
{
	if (!y->module)
		return 0;
	uint32_t file = intern(p, y->module);
	uint32_t m = js_htab_get(&proc->map_index, file);
	if (m)
		return m;
	if (!js_grow(&p->map, &p->cap_map, p->n_map, sizeof *p->map)) {
		p->oom = true;
		return 0;
	}
	pr_mapping pm = { pc - y->module_off, y->module_end ? y->module_end : pc + 1, file, y->jit != NULL };
	p->map[p->n_map++] = pm;
	js_htab_put(&proc->map_index, file, (uint32_t)p->n_map);
	return (uint32_t)p->n_map;
}

static uint32_t function_of(js_profile *p, const char *func, const char *file)
{
	if (!func)
		return 0;
	uint32_t name = intern(p, func), src = intern(p, file);
	uint64_t key = (uint64_t)name << 32 | src;
	uint32_t f = js_htab_get(&p->fn_index, key);
	if (f)
		return f;
	if (!js_grow(&p->fn, &p->cap_fn, p->n_fn, sizeof *p->fn)) {
		p->oom = true;
		return 0;
	}
	p->fn[p->n_fn++] = (pr_function){ name, src };
	js_htab_put(&p->fn_index, key, (uint32_t)p->n_fn);
	return (uint32_t)p->n_fn;
}

/* The functions inlined at the location l (y's), kept in p->inl. */
static void inline_lines(js_profile *p, pr_location *l, const js_sym *y)
{
	if (!y->n_inl || p->n_inl > UINT32_MAX - y->n_inl)
		return;
	l->inl = (uint32_t)p->n_inl;
	for (uint32_t j = 0; j < y->n_inl; j++) {
		if (!js_grow(&p->inl, &p->cap_inl, p->n_inl, sizeof *p->inl)) {
			p->oom = true;
			return;
		}
		const js_inline *in = &y->inl[j];
		p->inl[p->n_inl++] = (pr_line){ function_of(p, in->func, in->file), in->line };
		l->n_inl++;
	}
}

/* A new location for the frame at pc named sym; kept out of the loop of
 * js_profile_add, which finds most pcs in the memo. */
__attribute__((noinline)) static uint32_t new_location(js_profile *p, pr_process *proc, const js_frame *f,
						       const js_sym *sym)
{
	uint64_t pc = js_lookup_pc(f);
	const js_sym y = *sym;
	if (!js_grow(&p->loc, &p->cap_loc, p->n_loc, sizeof *p->loc)) {
		p->oom = true;
		return 0;
	}
	/* named from JIT data: named again when that changes */
	bool jit = y.jit || y.source == JS_SRC_PERFMAP || y.source == JS_SRC_JITDUMP;
	pr_location loc = { .address = pc,
			    .mapping = mapping_of(p, proc, &y, f->pc),
			    .function = function_of(p, y.func, y.file),
			    .line = y.line,
			    .jit = jit,
			    .source = (uint8_t)y.source };
	if (!loc.function && y.module) {
		/* no symbol: name it after its module and offset, as perf does */
		char buf[300];
		const char *slash = strrchr(y.module, '/');
		snprintf(buf, sizeof buf, "[%s+%#" PRIx64 "]", slash ? slash + 1 : y.module, y.module_off);
		loc.function = function_of(p, buf, NULL);
	}
	inline_lines(p, &loc, &y);
	p->loc[p->n_loc++] = loc;
	js_htab_put(&proc->pc_memo, pc, (uint32_t)p->n_loc);
	return (uint32_t)p->n_loc;
}

/* The location of Python frame f: its function at its line. */
static uint32_t python_location(js_profile *p, const js_py_frame *f)
{
	uint32_t fn = function_of(p, f->qualname ? f->qualname : "?", f->filename);
	uint64_t key = (uint64_t)fn << 32 | (uint32_t)f->line;
	uint32_t l = js_htab_get(&p->py_index, key);
	if (l || p->oom)
		return l;
	if (!js_grow(&p->loc, &p->cap_loc, p->n_loc, sizeof *p->loc)) {
		p->oom = true;
		return 0;
	}
	p->loc[p->n_loc++] =
		(pr_location){ .function = fn, .line = f->line, .python = true, .source = JS_SRC_PYTHON };
	js_htab_put(&p->py_index, key, (uint32_t)p->n_loc);
	return (uint32_t)p->n_loc;
}

/* A pc inside a native module.  A pc no module covered may be JIT code
 * caught between two registrations: it is named again too. */
static bool native_location(const void *ctx, uint32_t v)
{
	const js_profile *p = ctx;
	return !p->loc[v - 1].jit && p->loc[v - 1].mapping;
}

void js_profile_add(js_profile *p, uint32_t pi, uint64_t names_epoch, const js_stack *st)
{
	if (p->oom || !st->n || pi >= p->n_proc)
		return;
	pr_process *proc = &p->proc[pi];
	if (proc->jit_changes != names_epoch) {
		/* JIT code may have been replaced: forget what its pcs (and pcs
		 * in no module) were named; native pcs keep their locations. */
		js_htab_filter(&proc->pc_memo, native_location, p);
		proc->jit_changes = names_epoch;
	}
	/* the locations, in a buffer kept from sample to sample: a sample
	 * seen before only adds to its count; the Python frames placed in
	 * the stack before the native frames they go before */
	size_t n = st->n;
	for (size_t a = 0; a < st->n_py_at; a++)
		n += st->py_at[a].n;
	if (p->cap_scratch < n) {
		uint32_t *v = realloc(p->scratch, n * sizeof *v);
		if (!v) {
			p->oom = true;
			return;
		}
		p->scratch = v;
		p->cap_scratch = n;
	}
	uint32_t *loc = p->scratch;
	size_t k = 0, a = 0;
	for (size_t i = 0; i <= st->n; i++) {
		for (; a < st->n_py_at && st->py_at[a].before == i; a++)
			for (size_t j = 0; j < st->py_at[a].n; j++)
				loc[k++] = python_location(p, &st->py[st->py_at[a].first + j]);
		if (i == st->n)
			break;
		uint32_t l = js_htab_get(&proc->pc_memo, js_lookup_pc(&st->f[i]));
		loc[k++] = l ? l : new_location(p, proc, &st->f[i], &st->sym[i]);
	}
	uint32_t thread = intern(p, st->comm[0] ? st->comm : "?");
	uint32_t who[2] = { pi, thread };
	uint64_t h = js_hash_words(loc, n, js_hash_words(who, 2, JS_HASH_SEED));
	js_htab *t = &p->smp_index;
	if (js_htab_reserve(t, 1)) {
		p->oom = true;
		return;
	}
	size_t i = js_htab_first(t, h);
	for (; t->val[i]; i = js_htab_next(t, i)) {
		pr_sample *x = &p->smp[t->val[i] - 1];
		if (t->hash[i] == h && x->proc == pi && x->thread == thread && x->n == n &&
		    !memcmp(x->loc, loc, n * sizeof *loc)) {
			x->count++;
			p->total++;
			proc->total++;
			return;
		}
	}
	uint32_t *kept = malloc(n * sizeof *kept);
	if (!kept || !js_grow(&p->smp, &p->cap_smp, p->n_smp, sizeof *p->smp)) {
		free(kept);
		p->oom = true;
		return;
	}
	memcpy(kept, loc, n * sizeof *kept);
	p->smp[p->n_smp++] = (pr_sample){ pi, thread, (uint32_t)n, kept, 1 };
	js_htab_put_at(t, i, h, (uint32_t)p->n_smp);
	p->total++;
	proc->total++;
}

int js_profile_flushed(FILE *f, int failed, const char *name, js_err *err)
{
	int e = failed ? ENOMEM : fflush(f) || ferror(f) ? errno : 0;
	if (failed)
		fflush(f);
	return e ? js_fail(err, JS_EXIT_FAILURE, e, "cannot write %s: %s", name, strerror(e)) : 0;
}
