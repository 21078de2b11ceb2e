/* SPDX-License-Identifier: MIT */
/* window.c - a profile through a sliding window of time (window.h). */
#include "out/window.h"
#include "base/grow.h"
#include "out/color.h"

#include <stdlib.h>
#include <string.h>

void js_window_init(js_window *w, const js_profile *p)
{
	memset(w, 0, sizeof *w);
	w->p = p;
}

void js_window_free(js_window *w)
{
	free(w->seen);
	free(w->fn);
	free(w->th);
	free(w->pair);
	free(w->stamp);
	js_htab_free(&w->fn_index);
	js_htab_free(&w->th_index);
	js_htab_free(&w->pair_index);
	memset(w, 0, sizeof *w);
}

typedef struct table {
	jw_row **v;
	size_t *n, *cap;
	js_htab *index;
} table;

/* The row of key in t, made (zeroed) when missing; NULL when out of memory. */
static jw_row *row_of(js_window *w, table t, uint64_t key)
{
	uint32_t i = js_htab_get(t.index, key);
	if (i)
		return &(*t.v)[i - 1];
	if (*t.n >= UINT32_MAX - 1 || !js_grow(t.v, t.cap, *t.n, sizeof **t.v) ||
	    js_htab_put(t.index, key, (uint32_t)*t.n + 1)) {
		w->oom = true;
		return NULL;
	}
	jw_row *r = &(*t.v)[(*t.n)++];
	memset(r, 0, sizeof *r);
	return r;
}

#define TABLE(w, name) ((table){ &(w)->name, &(w)->n_##name, &(w)->cap_##name, &(w)->name##_index })

/* The row of function fn (index + 1) at location l (NULL: no location). */
static jw_row *function_row(js_window *w, uint32_t fn, const pr_location *l, bool inlined)
{
	size_t before = w->n_fn;
	/* (a new row's stamp first: the row must not exist without one) */
	if (!js_grow(&w->stamp, &w->cap_stamp, before, sizeof *w->stamp)) {
		w->oom = true;
		return NULL;
	}
	jw_row *r = row_of(w, TABLE(w, fn), fn);
	if (!r)
		return NULL;
	if (w->n_fn > before) {
		r->fn = fn;
		r->jit = l && l->jit;
		r->python = l && l->python;
		r->source = l ? l->source : 0;
		w->stamp[before] = 0;
	}
	r->inlined |= inlined;
	return r;
}

/* Count d samples of stack x in the newest slot: its leaf's innermost
 * function self, each function on it total (once), the thread's share and
 * its leaf. */
static void count_stack(js_window *w, const pr_sample *x, uint32_t d)
{
	const js_profile *p = w->p;
	unsigned s = w->slot;
	jw_row *th = row_of(w, TABLE(w, th), (uint64_t)x->proc << 32 | x->thread);
	if (!th)
		return;
	th->proc = x->proc;
	th->thread = x->thread;
	th->total[s] += d;
	size_t th_i = (size_t)(th - w->th);
	if (++w->stamp_now == 0) { /* wrapped: no row may look counted */
		memset(w->stamp, 0, w->n_fn * sizeof *w->stamp);
		w->stamp_now = 1;
	}
	for (uint32_t k = 0; k < x->n; k++) {
		const pr_location *l = x->loc[k] ? &p->loc[x->loc[k] - 1] : NULL;
		uint32_t n_logical = l ? l->n_inl + 1 : 1;
		for (uint32_t j = 0; j < n_logical; j++) { /* innermost first */
			bool inlined = l && j < l->n_inl;
			uint32_t fn = !l ? 0 : inlined ? p->inl[l->inl + j].function : l->function;
			jw_row *r = function_row(w, fn, l, inlined);
			if (!r)
				return;
			size_t i = (size_t)(r - w->fn);
			if (k == 0 && j == 0) {
				r->self[s] += d;
				jw_row *pr = row_of(w, TABLE(w, pair), (uint64_t)th_i << 32 | i);
				if (pr) {
					pr->thread = (uint32_t)th_i;
					pr->fn = (uint32_t)i;
					pr->self[s] += d;
				}
			}
			if (w->stamp[i] != w->stamp_now) {
				w->stamp[i] = w->stamp_now;
				r->total[s] += d;
			}
		}
	}
}

static void clear_slot(jw_row *v, size_t n, unsigned s)
{
	for (size_t i = 0; i < n; i++)
		v[i].self[s] = v[i].total[s] = 0;
}

void js_window_step(js_window *w)
{
	const js_profile *p = w->p;
	w->slot = w->steps ? (w->slot + 1) % JS_WIN_SLOTS : 0;
	w->steps++;
	unsigned s = w->slot;
	clear_slot(w->fn, w->n_fn, s);
	clear_slot(w->th, w->n_th, s);
	clear_slot(w->pair, w->n_pair, s);
	w->samples[s] = 0;
	if (p->n_smp > w->cap_seen) {
		uint64_t *v = realloc(w->seen, p->n_smp * sizeof *v);
		if (!v) {
			w->oom = true;
			return;
		}
		memset(v + w->cap_seen, 0, (p->n_smp - w->cap_seen) * sizeof *v);
		w->seen = v;
		w->cap_seen = p->n_smp;
	}
	for (size_t i = 0; i < p->n_smp; i++) {
		uint64_t d = p->smp[i].count - w->seen[i];
		if (!d)
			continue;
		w->seen[i] = p->smp[i].count;
		w->samples[s] += d;
		count_stack(w, &p->smp[i], d > UINT32_MAX ? UINT32_MAX : (uint32_t)d);
	}
}

/* ---- the table ----------------------------------------------------------------- */

static uint64_t sum(const uint32_t *v, const js_window *w, bool whole)
{
	if (!whole || w->steps == 0)
		return w->steps ? v[w->slot] : 0;
	uint64_t n = 0;
	for (unsigned i = 0; i < JS_WIN_SLOTS; i++)
		n += v[i];
	return n;
}

uint64_t js_window_samples(const js_window *w, bool whole)
{
	if (!w->steps)
		return 0;
	if (!whole)
		return w->samples[w->slot];
	uint64_t n = 0;
	for (unsigned i = 0; i < JS_WIN_SLOTS; i++)
		n += w->samples[i];
	return n;
}

typedef struct keyed {
	uint32_t row;
	uint64_t by[2]; /* the sort key: whole window, then newest slot */
	const char *name;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
	const keyed *x = a, *y = b;
	for (int i = 0; i < 2; i++)
		if (x->by[i] != y->by[i])
			return x->by[i] > y->by[i] ? -1 : 1;
	return strcmp(x->name, y->name);
}

static const char *function_name(const js_window *w, uint32_t fn)
{
	return fn ? w->p->str[w->p->fn[fn - 1].name] : "[unknown]";
}

static const char *thread_name(const js_window *w, const jw_row *r)
{
	return w->p->str[r->thread][0] ? w->p->str[r->thread] : "?";
}

/* A share "12.3%" of n in total, in a column of 9, at the end of the row
 * being built (at: its length so far). */
static int put_share(char *row, size_t len, int at, uint64_t n, uint64_t total)
{
	if ((size_t)at >= len)
		return at;
	if (total)
		return at +
		       snprintf(row + at, len - (size_t)at, "%8.1f%% ", 100.0 * (double)n / (double)total);
	return at + snprintf(row + at, len - (size_t)at, "%9s ", "-");
}

/* s on f, cut to room columns (a UTF-8 sequence counts one). */
static void put_cut(FILE *f, const char *s, int room)
{
	const unsigned char *q = (const unsigned char *)s;
	for (; *q && room > 0; q++) {
		if ((*q & 0xc0) != 0x80)
			room--;
		fputc(*q < 0x20 || *q == 0x7f ? '?' : *q, f);
		while ((q[1] & 0xc0) == 0x80) /* the rest of the sequence */
			fputc(*++q, f);
	}
}

/* A function row's name, coloured by its kind. */
static void put_function(FILE *f, const js_window *w, const jw_row *r, int room, bool color)
{
	js_frame_kind k = !r->fn      ? JS_KIND_UNNAMED
			  : r->python ? JS_KIND_PYTHON
			  : r->jit    ? JS_KIND_JIT
				      : JS_KIND_NATIVE;
	if (color)
		fputs(js_color_of(k), f);
	put_cut(f, function_name(w, r->fn), room);
	if (color)
		fputs(JS_COLOR_OFF, f);
}

/* A row: its columns (row), then the function's name (none when r is
 * NULL), all cut to the width, then the end of the line. */
static void put_row(FILE *f, const js_window *w, const jw_show *o, const char *row, const jw_row *r)
{
	int n = (int)strlen(row), width = (int)o->width;
	put_cut(f, row, width);
	if (r && width > n)
		put_function(f, w, r, width - n, o->color);
	fputs(o->eol, f);
}

/* The column header: its text cut to the width, in reverse video with colour. */
static void put_header(FILE *f, const jw_show *o, const char *text)
{
	if (!o->color) {
		put_cut(f, text, (int)o->width);
		fputs(o->eol, f);
		return;
	}
	/* the whole width in reverse video, as top's header bar */
	char line[512];
	snprintf(line, sizeof line, "%-*s", (int)(o->width < sizeof line ? o->width : sizeof line - 1), text);
	fputs("\033[7m", f);
	put_cut(f, line, (int)o->width);
	fputs(JS_COLOR_OFF, f);
	fputs(o->eol, f);
}

static unsigned print_functions(const js_window *w, FILE *f, const jw_show *o, keyed *v)
{
	size_t n = 0;
	for (size_t i = 0; i < w->n_fn; i++) {
		const jw_row *r = &w->fn[i];
		const uint32_t *by = o->sort == JW_BY_SELF ? r->self : r->total;
		if (!sum(r->total, w, !o->one))
			continue;
		v[n++] = (keyed){ (uint32_t)i,
				  { sum(by, w, !o->one), sum(by, w, false) },
				  function_name(w, r->fn) };
	}
	qsort(v, n, sizeof *v, cmp_keyed);
	char head[256];
	if (o->one) {
		snprintf(head, sizeof head, "%9s %9s  %-8s %-2s %s", "SELF", "TOTAL", "SOURCE", "",
			 "FUNCTION");
	} else {
		char a[24], b[24];
		snprintf(a, sizeof a, "SELF %s", o->span);
		snprintf(b, sizeof b, "TOTAL %s", o->span);
		snprintf(head, sizeof head, "%9s %9s %9s %9s  %-8s %-2s %s", a, "SELF 10s", b, "TOTAL 10s",
			 "SOURCE", "", "FUNCTION");
	}
	put_header(f, o, head);
	unsigned lines = 1;
	uint64_t all1 = js_window_samples(w, false), all10 = js_window_samples(w, true);
	for (size_t i = 0; i < n && (!o->rows || lines < o->rows); i++, lines++) {
		const jw_row *r = &w->fn[v[i].row];
		char row[160];
		int at = put_share(row, sizeof row, 0, sum(r->self, w, false), all1);
		if (!o->one)
			at = put_share(row, sizeof row, at, sum(r->self, w, true), all10);
		at = put_share(row, sizeof row, at, sum(r->total, w, false), all1);
		if (!o->one)
			at = put_share(row, sizeof row, at, sum(r->total, w, true), all10);
		const char *src = js_source_name((js_name_source)r->source);
		snprintf(row + at, sizeof row - (size_t)at, " %-8s %c%c ", src ? src : "-",
			 r->jit ? 'J' : ' ', r->inlined ? 'i' : ' ');
		put_row(f, w, o, row, r);
	}
	return lines;
}

static unsigned print_threads(const js_window *w, FILE *f, const jw_show *o, keyed *v)
{
	/* each thread's hottest leaf over the window: its best (thread, function) pair */
	uint32_t *best = calloc(w->n_th ? w->n_th : 1, sizeof *best);
	if (!best)
		return 0;
	for (size_t i = 0; i < w->n_pair; i++) {
		const jw_row *pr = &w->pair[i];
		uint64_t n = sum(pr->self, w, !o->one);
		if (n && (!best[pr->thread] || n > sum(w->pair[best[pr->thread] - 1].self, w, !o->one)))
			best[pr->thread] = (uint32_t)i + 1;
	}
	size_t n = 0;
	for (size_t i = 0; i < w->n_th; i++) {
		const jw_row *r = &w->th[i];
		if (sum(r->total, w, !o->one))
			v[n++] = (keyed){ (uint32_t)i,
					  { sum(r->total, w, !o->one), sum(r->total, w, false) },
					  thread_name(w, r) };
	}
	qsort(v, n, sizeof *v, cmp_keyed);
	char head[256], a[24];
	snprintf(a, sizeof a, "SHARE %s", o->span);
	if (o->one)
		snprintf(head, sizeof head, "%9s %8s  %-16s %s", "SHARE", "PID", "THREAD",
			 "HOTTEST FUNCTION");
	else
		snprintf(head, sizeof head, "%9s %9s %8s  %-16s %s", a, "SHARE 10s", "PID", "THREAD",
			 "HOTTEST FUNCTION (10 s)");
	put_header(f, o, head);
	unsigned lines = 1;
	uint64_t all1 = js_window_samples(w, false), all10 = js_window_samples(w, true);
	for (size_t i = 0; i < n && (!o->rows || lines < o->rows); i++, lines++) {
		const jw_row *r = &w->th[v[i].row];
		char row[160];
		int at = put_share(row, sizeof row, 0, sum(r->total, w, false), all1);
		if (!o->one)
			at = put_share(row, sizeof row, at, sum(r->total, w, true), all10);
		snprintf(row + at, sizeof row - (size_t)at, "%8lld  %-16.16s ",
			 r->proc < w->p->n_proc ? (long long)w->p->proc[r->proc].pid : -1LL,
			 thread_name(w, r));
		put_row(f, w, o, row, best[v[i].row] ? &w->fn[w->pair[best[v[i].row] - 1].fn] : NULL);
	}
	free(best);
	return lines;
}

unsigned js_window_print(const js_window *w, FILE *f, const jw_show *o)
{
	size_t n = w->n_fn > w->n_th ? w->n_fn : w->n_th;
	keyed *v = calloc(n ? n : 1, sizeof *v);
	if (!v)
		return 0;
	unsigned lines = o->view == JW_THREADS ? print_threads(w, f, o, v) : print_functions(w, f, o, v);
	free(v);
	return lines;
}
