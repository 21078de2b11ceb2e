/* SPDX-License-Identifier: MIT */
/* perfmap.c - reading a perf map and naming pcs from it (see perfmap.h). */
#include "jit/perfmap.h"
#include "formats/search.h"
#include "base/bounds.h"
#include "base/grow.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- names ------------------------------------------------------------------ */

/* Names live in chunks that never move, so ranges point into them. */
enum { CHUNK = 1 << 20 };

static const char *keep_name(js_perfmap *pm, const char *s, size_t n)
{
	return js_strs_keep(&pm->names, s, n, CHUNK);
}

static void free_names(js_perfmap *pm)
{
	js_strs_free(&pm->names);
}

/* ---- lines ------------------------------------------------------------------ */

/* A parsed line; seq is its order in the batch (later wins). */
typedef struct pm_line {
	uint64_t lo, hi;
	const char *name;
	size_t seq;
	uint64_t start; /* what its ranges carry as js_pm_seg.start */
} pm_line;

struct pm_lines {
	pm_line *v;
	size_t n, cap;
};

/* A hex digit's value plus one, 0 for any other byte (a table: the digits
 * of a million-line map are most of the time a dump spends on it). */
static const uint8_t hex_digit[256] = {
	['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
	['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* Hex digits (an optional 0x first), at most 16.  Returns the bytes used,
 * 0 when there is no number. */
static inline size_t hex(const char *p, size_t len, uint64_t *v)
{
	size_t i = len >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') ? 2 : 0, first = i;
	size_t end = len - i > 16 ? i + 17 : len; /* a 17th digit is one too many */
	uint64_t x = 0;
	unsigned d;
	for (; i < end && (d = hex_digit[(uint8_t)p[i]]); i++)
		x = x << 4 | (d - 1);
	if (i == first || i - first > 16)
		return 0; /* no number, or more than 64 bits */
	*v = x;
	return i;
}

static size_t blanks(const char *p, size_t len)
{
	size_t i = 0;
	while (i < len && (p[i] == ' ' || p[i] == '\t'))
		i++;
	return i;
}

/* Keep the line's name and queue it for the next commit.  NULL when out of
 * memory. */
static const char *add_line(js_perfmap *pm, uint64_t lo, uint64_t size, const char *s, size_t n,
			    uint64_t start)
{
	if (!pm->pending && !(pm->pending = calloc(1, sizeof *pm->pending)))
		return NULL;
	const char *name = keep_name(pm, s, n);
	if (!name || !js_grow(&pm->pending->v, &pm->pending->cap, pm->pending->n, sizeof(pm_line)))
		return NULL;
	pm->pending->v[pm->pending->n] = (pm_line){ lo, lo + size, name, pm->pending->n, start };
	pm->pending->n++;
	pm->lines++;
	return name;
}

const char *js_perfmap_add(js_perfmap *pm, uint64_t lo, uint64_t size, const char *name, size_t len,
			   uint64_t start)
{
	if (!size || lo + size <= lo)
		return NULL;
	return add_line(pm, lo, size, name, len, start);
}

static int span_cmp(const void *a, const void *b)
{
	const js_span *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int js_spans_set(js_span **want, size_t *n_want, const js_span *v, size_t n)
{
	js_span *w = malloc((n ? n : 1) * sizeof *w);
	if (!w)
		return -1;
	if (n)
		memcpy(w, v, n * sizeof *w);
	free(*want);
	*want = w, *n_want = js_spans_normalize(w, n);
	return 0;
}

size_t js_spans_normalize(js_span *v, size_t n)
{
	qsort(v, n, sizeof *v, span_cmp);
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i].hi <= v[i].lo)
			continue;
		if (w && v[i].lo <= v[w - 1].hi) {
			if (v[i].hi > v[w - 1].hi)
				v[w - 1].hi = v[i].hi;
			continue;
		}
		v[w++] = v[i];
	}
	return w;
}

bool js_spans_overlap(const js_span *v, size_t n, uint64_t lo, uint64_t hi)
{
	size_t k = FMT_COUNT_LE(v, n, lo, hi - 1); /* the spans that start before hi */
	return k && v[k - 1].hi > lo;
}

/* Does [lo, hi) overlap what a dump wants (anything, when it wants all)? */
static bool covers_wanted(const js_perfmap *pm, uint64_t lo, uint64_t hi)
{
	return !pm->want || js_spans_overlap(pm->want, pm->n_want, lo, hi);
}

bool js_perfmap_wanted(const js_perfmap *pm, uint64_t x)
{
	return covers_wanted(pm, x, x + 1);
}

/* One line without its newline.  0 (parsed or skipped), -1 out of memory. */
static int parse_line(js_perfmap *pm, const char *p, size_t len)
{
	if (len && p[len - 1] == '\r')
		len--;
	if (!len)
		return 0;
	if (p[0] == '#') {
		pm->tombstones++;
		return 0;
	}
	uint64_t start, size;
	size_t i = hex(p, len, &start), b;
	if (!i || !(b = blanks(p + i, len - i)))
		goto bad;
	i += b;
	size_t n = hex(p + i, len - i, &size);
	if (!n || !(b = blanks(p + i + n, len - i - n)))
		goto bad;
	i += n + b;
	/* perf's own reader (dso__load_perf_map) skips these too */
	if (i == len || !size || start + size <= start)
		goto bad;
	if (pm->lines >= JS_MAX_PERFMAP_LINES) {
		pm->over_limit++;
		return 0;
	}
	if (!covers_wanted(pm, start, start + size)) {
		pm->lines++, pm->unkept++;
		return 0;
	}
	return add_line(pm, start, size, p + i, len - i, start) ? 0 : -1;
bad:
	pm->bad++;
	return 0;
}

ssize_t js_perfmap_feed(js_perfmap *pm, const char *buf, size_t len)
{
	if (!pm->pending && !(pm->pending = calloc(1, sizeof *pm->pending)))
		return -1;
	size_t i = 0;
	while (i < len) {
		const char *nl = memchr(buf + i, '\n', len - i);
		size_t end = nl ? (size_t)(nl - buf) : len;
		if (pm->skipping || end - i > JS_MAX_PERFMAP_LINE) {
			/* an overlong line: dropped, though its end is not here yet */
			if (!pm->skipping)
				pm->bad++;
			pm->skipping = !nl;
			i = nl ? end + 1 : len;
			continue;
		}
		if (!nl)
			break; /* a line still being written */
		if (parse_line(pm, buf + i, end - i))
			return -1;
		i = end + 1;
	}
	return (ssize_t)i;
}

/* ---- ranges -------------------------------------------------------------------- */

typedef struct segs {
	js_pm_seg *v;
	size_t n, cap;
} segs;

/* Append [lo, hi) of the line (start, name), joining it to the range before
 * when that is the same line's and touches it. */
static bool emit(segs *o, uint64_t lo, uint64_t hi, uint64_t start, const char *name)
{
	if (o->n && o->v[o->n - 1].hi == lo && o->v[o->n - 1].name == name && o->v[o->n - 1].start == start) {
		o->v[o->n - 1].hi = hi;
		return true;
	}
	if (!js_grow(&o->v, &o->cap, o->n, sizeof *o->v))
		return false;
	o->v[o->n++] = (js_pm_seg){ lo, hi, start, name };
	return true;
}

/* Sort by start, lines with the same start in file order: an LSD radix
 * sort (stable) over the bits in which the starts differ, a few passes for
 * a JIT's code region; qsort was most of a cold read of a large map. */
static bool sort_by_lo(pm_line *v, size_t n)
{
	enum { BITS = 11, DIGITS = 1 << BITS };
	pm_line *tmp = malloc(n * sizeof *tmp), *src = v, *dst = tmp;
	size_t *count = malloc(DIGITS * sizeof *count);
	if (!tmp || !count) {
		free(tmp);
		free(count);
		return false;
	}
	uint64_t diff = 0;
	for (size_t i = 1; i < n; i++)
		diff |= v[i].lo ^ v[0].lo;
	for (unsigned shift = 0; shift < 64; shift += BITS) {
		if (!((diff >> shift) & (DIGITS - 1)))
			continue;
		memset(count, 0, DIGITS * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[(src[i].lo >> shift) & (DIGITS - 1)]++;
		for (size_t d = 0, at = 0; d < DIGITS; d++) {
			size_t c = count[d];
			count[d] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i].lo >> shift) & (DIGITS - 1)]++] = src[i];
		pm_line *t = src;
		src = dst, dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof *v);
	free(tmp);
	free(count);
	return true;
}

/* A max-heap of lines by seq: the latest line covering the sweep's point. */
typedef struct heap {
	const pm_line **v;
	size_t n;
} heap;

static void heap_push(heap *h, const pm_line *l)
{
	size_t i = h->n++;
	while (i && h->v[(i - 1) / 2]->seq < l->seq) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = l;
}

static void heap_pop(heap *h)
{
	const pm_line *l = h->v[--h->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1]->seq > h->v[c]->seq)
			c++;
		if (h->v[c]->seq <= l->seq)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = l;
}

/* Lines sorted and disjoint: each is a range of its own (a JIT that only
 * adds writes such a map). */
static bool is_plain(const pm_line *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (v[i].lo < v[i - 1].hi)
			return false;
	return true;
}

/* A large plain batch made its ranges where its lines are, so that a cold
 * read of a large map (record's) holds each line once, not its line and
 * its range: each range is written over the bytes of the line it comes
 * from or of those before (a range is smaller than a line), then the
 * array shrunk.  The batch gives its array away. */
static segs in_place(struct pm_lines *p)
{
	_Static_assert(sizeof(js_pm_seg) <= sizeof(pm_line), "a range fits where its line was");
	unsigned char *b = (unsigned char *)p->v;
	size_t n = p->n;
	for (size_t i = 0; i < n; i++) {
		pm_line l;
		memcpy(&l, b + i * sizeof l, sizeof l);
		js_pm_seg g = { l.lo, l.hi, l.start, l.name };
		memcpy(b + i * sizeof g, &g, sizeof g);
	}
	void *shrunk = realloc(b, (n ? n : 1) * sizeof(js_pm_seg));
	p->v = NULL, p->n = p->cap = 0;
	return (segs){ shrunk ? shrunk : (void *)b, n, n };
}

/* The batch's lines as disjoint ranges, each owned by the latest line that
 * covers it: sorted by start, then swept with the covering lines in a heap.
 * A batch already sorted and disjoint (a JIT that only adds) is copied. */
static bool flatten(pm_line *v, size_t n, segs *o)
{
	if (is_plain(v, n)) {
		for (size_t i = 0; i < n; i++)
			if (!emit(o, v[i].lo, v[i].hi, v[i].start, v[i].name))
				return false;
		return true;
	}
	if (!sort_by_lo(v, n))
		return false;
	heap h = { malloc(n * sizeof *h.v), 0 };
	if (!h.v)
		return false;
	size_t i = 0;
	uint64_t cur = 0;
	bool ok = true;
	while (ok && (i < n || h.n)) {
		if (!h.n)
			cur = v[i].lo;
		while (i < n && v[i].lo <= cur)
			heap_push(&h, &v[i++]);
		while (h.n && h.v[0]->hi <= cur)
			heap_pop(&h);
		if (!h.n)
			continue;
		const pm_line *top = h.v[0];
		uint64_t end = i < n && v[i].lo < top->hi ? v[i].lo : top->hi;
		ok = emit(o, cur, end, top->start, top->name);
		cur = end;
	}
	free(h.v);
	return ok;
}

/* old with new painted over it: both disjoint and sorted, new wins where
 * they overlap.  Linear in both. */
static bool paint(const js_pm_seg *old, size_t n_old, const js_pm_seg *new, size_t n_new, segs *o)
{
	size_t j = 0;
	for (size_t i = 0; i < n_old; i++) {
		uint64_t lo = old[i].lo, hi = old[i].hi;
		while (lo < hi) {
			for (; j < n_new && new[j].hi <= lo; j++)
				if (!emit(o, new[j].lo, new[j].hi, new[j].start, new[j].name))
					return false;
			if (j == n_new || new[j].lo >= hi) {
				if (!emit(o, lo, hi, old[i].start, old[i].name))
					return false;
				break;
			}
			if (new[j].lo > lo && !emit(o, lo, new[j].lo, old[i].start, old[i].name))
				return false;
			lo = new[j].hi; /* new[j] itself goes out once the sweep is past it */
		}
	}
	for (; j < n_new; j++)
		if (!emit(o, new[j].lo, new[j].hi, new[j].start, new[j].name))
			return false;
	return true;
}

/* The most ranges level i may hold (the last level: any number). */
static size_t level_cap(unsigned i)
{
	return i == JS_PM_LEVELS - 1 ? SIZE_MAX : (size_t)JS_PM_LEVEL0 << (3 * i);
}

int js_perfmap_commit(js_perfmap *pm)
{
	if (!pm->pending || !pm->pending->n)
		return 0;
	segs fresh = { 0 }, carry = { 0 };
	int rc = -1;
	unsigned i = 0;
	if (pm->pending->n > JS_PM_LEVEL0 && is_plain(pm->pending->v, pm->pending->n))
		fresh = in_place(pm->pending);
	else if (!flatten(pm->pending->v, pm->pending->n, &fresh))
		goto out;
	/* paint the new ranges over level 0; while the result outgrows its
	 * level, carry it over the next one (an empty level is passed by) */
	carry = fresh;
	for (;; i++) {
		if (!pm->n_lvl[i] && carry.n > level_cap(i))
			continue;
		if (pm->n_lvl[i]) {
			segs m = { 0 };
			if (!paint(pm->lvl[i], pm->n_lvl[i], carry.v, carry.n, &m)) {
				free(m.v);
				goto out;
			}
			if (carry.v != fresh.v)
				free(carry.v);
			carry = m;
		}
		if (carry.n <= level_cap(i))
			break;
	}
	for (unsigned k = 0; k <= i; k++) {
		free(pm->lvl[k]);
		pm->lvl[k] = NULL, pm->n_lvl[k] = pm->cap_lvl[k] = 0;
	}
	pm->lvl[i] = carry.v, pm->n_lvl[i] = carry.n, pm->cap_lvl[i] = carry.cap;
	if (carry.v == fresh.v)
		fresh = (segs){ 0 };
	carry = (segs){ 0 };
	pm->changes++;
	rc = 0;
out:
	if (carry.v != fresh.v)
		free(carry.v);
	free(fresh.v);
	pm->pending->n = 0;
	if (pm->pending->cap > JS_PM_LEVEL0) { /* a cold read's lines: not kept for the next few */
		free(pm->pending->v);
		pm->pending->v = NULL;
		pm->pending->cap = 0;
	}
	return rc;
}

static const js_pm_seg *search(const js_pm_seg *v, size_t n, uint64_t pc)
{
	size_t lo = FMT_COUNT_LE(v, n, lo, pc); /* the first range that starts after pc */
	return lo && pc < v[lo - 1].hi ? &v[lo - 1] : NULL;
}

const js_pm_seg *js_perfmap_find(const js_perfmap *pm, uint64_t pc)
{
	for (unsigned i = 0; i < JS_PM_LEVELS; i++) {
		const js_pm_seg *s = search(pm->lvl[i], pm->n_lvl[i], pc);
		if (s)
			return s;
	}
	return NULL;
}

size_t js_perfmap_size(const js_perfmap *pm)
{
	size_t n = 0;
	for (unsigned i = 0; i < JS_PM_LEVELS; i++)
		n += pm->n_lvl[i];
	return n;
}

/* ---- the file -------------------------------------------------------------------- */

void js_perfmap_init(js_perfmap *pm, const char *path)
{
	memset(pm, 0, sizeof *pm);
	snprintf(pm->path, sizeof pm->path, "%s", path ? path : "");
	pm->owner = -1;
	pm->pin_fd = -1;
}

/* Forget every line: the file is read again from its start. */
static void reset(js_perfmap *pm)
{
	for (unsigned i = 0; i < JS_PM_LEVELS; i++) {
		free(pm->lvl[i]);
		pm->lvl[i] = NULL, pm->n_lvl[i] = pm->cap_lvl[i] = 0;
	}
	if (pm->pending)
		pm->pending->n = 0;
	free_names(pm);
	pm->file.off = 0;
	pm->skipping = false;
	pm->lines = pm->unkept = pm->bad = pm->tombstones = pm->over_limit = 0;
	pm->changes++; /* names handed out before point into freed chunks */
}

void js_perfmap_free(js_perfmap *pm)
{
	reset(pm);
	if (pm->pending)
		free(pm->pending->v);
	free(pm->pending);
	pm->pending = NULL;
	free(pm->want);
	pm->want = NULL, pm->n_want = 0;
	if (pm->pin_fd >= 0)
		close(pm->pin_fd);
	pm->pin_fd = -1;
}

/* js_follow's reader: the lines in buf, counted as read. */
static ssize_t feed_file(void *ctx, const uint8_t *buf, size_t len, size_t fresh, size_t *need, bool *stop)
{
	js_perfmap *pm = ctx;
	(void)fresh, (void)need, (void)stop; /* a line always fits the first buffer */
	pm->reads++;
	ssize_t used = js_perfmap_feed(pm, (const char *)buf, len);
	if (used > 0)
		pm->bytes += (uint64_t)used;
	return used;
}
_Static_assert(JS_FOLLOW_BUF > JS_MAX_PERFMAP_LINE + 1, "a line that may be kept fits the buffer");

/* The map's own path: a symbolic link planted in a shared /tmp is not
 * followed (the user's own --perf-map FILE is). */
static js_follow_path follow_path(const js_perfmap *pm)
{
	return (js_follow_path){ pm->path, pm->owner < 0, pm->owner, "--perf-map FILE" };
}

int js_perfmap_refresh(js_perfmap *pm, js_err *why)
{
	js_follow_path p = follow_path(pm);
	struct stat st;
	enum js_follow_news news;
	if (js_follow_look(&pm->file, &p, pm->found, false, &st, &news, why))
		return -1;
	if (news == JS_FOLLOW_NOTHING)
		return 0;
	if (news == JS_FOLLOW_NEW_FILE) {
		if (pm->found)
			pm->rereads++;
		reset(pm);
	}
	/* counted from here: a file read again that adds nothing returns 0, as
	 * it always has (the jitdump counts the forgetting too; no caller looks) */
	uint64_t before = pm->changes;
	int rc = js_follow_read(&pm->file, &p, &st, &pm->found, feed_file, pm, why);
	if (js_perfmap_commit(pm))
		rc = js_fail(why, JS_EXIT_FAILURE, ENOMEM, "%s: %s", pm->path, strerror(ENOMEM));
	if (rc)
		return -1;
	return pm->changes != before;
}

int js_perfmap_pin(js_perfmap *pm, js_err *why)
{
	js_follow_path p = follow_path(pm);
	struct stat st;
	enum js_follow_news news;
	if (pm->pin_fd >= 0)
		close(pm->pin_fd);
	pm->pin_fd = -1;
	if (js_follow_look(&pm->file, &p, pm->found, false, &st, &news, why))
		return -1;
	return js_follow_open(&pm->file, &p, &st, &pm->found, &pm->pin_fd, &pm->pin_size, why) ? -1 : 0;
}

int js_perfmap_read_for(js_perfmap *pm, const js_span *v, size_t n, js_err *why)
{
	if (js_spans_set(&pm->want, &pm->n_want, v, n))
		return js_fail(why, JS_EXIT_FAILURE, ENOMEM, "%s: %s", pm->path, strerror(ENOMEM));
	reset(pm);
	/* as pinned, or from the path as a refresh reads it the first time */
	js_follow_path p = follow_path(pm);
	int rc = js_follow_reread(&pm->file, &p, pm->pin_fd, pm->pin_size, &pm->found, feed_file, pm, why);
	if (js_perfmap_commit(pm))
		rc = js_fail(why, JS_EXIT_FAILURE, ENOMEM, "%s: %s", pm->path, strerror(ENOMEM));
	return rc ? -1 : 0;
}

/* ---- where it is ---------------------------------------------------------------- */

/* The pid in the innermost pid namespace: the last field of NSpid. */
static pid_t ns_pid(pid_t pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if (js_read_small(path, buf, sizeof buf) <= 0)
		return pid;
	const char *l = strstr(buf, "\nNSpid:");
	if (!l)
		return pid; /* kernels before 4.1 */
	l += 7;
	size_t len = strcspn(l, "\n");
	pid_t last = pid;
	for (const char *p = l; p < l + len;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p)
			break;
		if (v > 0)
			last = (pid_t)v;
		p = end;
	}
	return last;
}

void js_perfmap_path_live(pid_t pid, char *out, size_t len)
{
	snprintf(out, len, "/proc/%d/root/tmp/perf-%d.map", (int)pid, (int)ns_pid(pid));
}
