/* SPDX-License-Identifier: MIT */
/* svg.c - a profile as a flame graph (writers.h): one self-contained SVG
 * file (no network, no other file), drawn in full for any viewer and
 * interactive in a browser: hovering a frame shows its name and share of
 * the samples, clicking one zooms to it ("Reset zoom" goes back), and a
 * search box (regular expression; Ctrl-F) colours the frames whose names
 * match and shows their share.  JIT frames are coloured apart from native
 * ones.  Its title says which processes, how many samples, how long and
 * at what rate.
 *
 * The samples become a tree of frames, root first: "all", then each
 * process ("comm-PID", when the profile holds them by process), then each
 * thread, then the stack's frames, merged by name as the collapsed format
 * merges them (so the graph and `--format collapsed` agree to the sample).
 * Siblings are in name order, as flamegraph.pl puts them.  Each frame is
 * drawn at its place for the whole graph, so viewers without scripts
 * (image viewers, a README) show it too; the script re-lays frames out
 * from their data-s (first sample), data-n (samples) and data-d (depth)
 * when a frame is clicked, and colours what the search box matches.  A
 * function inlined into its caller is a frame of its own above it, its
 * label in italics (data-i).
 */
#include "out/writers.h"
#include "base/grow.h"
#include "base/hash.h"
#include "formats/utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { K_ROOT, K_THREAD, K_NATIVE, K_JIT, K_UNKNOWN, K_PROCESS, K_PYTHON };

enum {
	WIDTH = 1200,    /* px */
	FRAME_H = 16,    /* px per stack level */
	PAD_X = 10,      /* left and right margins */
	PAD_TOP = 66,    /* title, legend, search box */
	PAD_BOTTOM = 34, /* the details line */
	FONT_PX = 12,
};
#define MIN_WIDTH_PX 0.1         /* narrower frames are not drawn (flamegraph.pl's --minwidth) */
#define CHAR_PX (FONT_PX * 0.59) /* average advance of the sans-serif font at FONT_PX */

typedef struct fnode {
	uint32_t name;   /* string index; NO_NAME: "[unknown]", or the root "all" */
	uint32_t parent; /* index (the root's is its own) */
	uint32_t depth;
	uint8_t kind;
	bool inlined;   /* first seen as a function inlined into the frame below */
	uint64_t count; /* samples in this frame and above it */
	uint64_t start; /* first sample, in the whole graph's order */
	uint32_t child; /* first child + 1 (in name order once sorted) */
	uint32_t next;  /* next sibling + 1 */
} fnode;

#define NO_NAME UINT32_MAX

typedef struct ftree {
	const js_profile *p;
	fnode *v;
	size_t n, cap;
	js_htab index; /* (parent, name) -> node + 1 */
	uint32_t max_depth;
} ftree;

/* The child of parent named name, made (of kind) if missing: its index, or
 * -1 when out of memory.  Frames merge by name alone, as in the collapsed
 * format; a frame keeps the kind it was first seen with. */
static long child_of(ftree *t, uint32_t parent, uint32_t name, uint8_t kind, bool inlined)
{
	uint64_t key = (uint64_t)parent << 32 | name;
	uint32_t found = js_htab_get(&t->index, key);
	if (found)
		return (long)found - 1;
	if (js_htab_reserve(&t->index, 1) || t->n >= UINT32_MAX - 1 ||
	    !js_grow(&t->v, &t->cap, t->n, sizeof *t->v))
		return -1;
	uint32_t id = (uint32_t)t->n++;
	fnode *pa = &t->v[parent];
	t->v[id] = (fnode){
		.name = name,
		.parent = parent,
		.depth = pa->depth + 1,
		.kind = kind,
		.inlined = inlined,
		.next = pa->child,
	};
	pa->child = id + 1;
	js_htab_put(&t->index, key, id + 1); /* room reserved: cannot fail */
	if (t->v[id].depth > t->max_depth)
		t->max_depth = t->v[id].depth;
	return (long)id;
}

static const char *name_of(const ftree *t, const fnode *x)
{
	if (x->name != NO_NAME)
		return t->p->str[x->name];
	return x->kind == K_ROOT ? "all" : "[unknown]";
}

/* Add one sample's path, root first. */
static int add_sample(ftree *t, const pr_sample *x)
{
	const js_profile *p = t->p;
	long at = 0;
	t->v[0].count += x->count;
	if (p->by_process && x->proc < p->n_proc) {
		if ((at = child_of(t, 0, p->proc[x->proc].frame, K_PROCESS, false)) < 0)
			return -1;
		t->v[at].count += x->count;
	}
	if ((at = child_of(t, (uint32_t)at, x->thread, K_THREAD, false)) < 0)
		return -1;
	t->v[at].count += x->count;
	for (size_t k = x->n; k-- > 0;) {
		const pr_location *l = x->loc[k] ? &p->loc[x->loc[k] - 1] : NULL;
		/* the physical function, then what was inlined into it */
		for (uint32_t j = 0; j <= (l ? l->n_inl : 0); j++) {
			uint32_t fn = !l ? 0 : j ? p->inl[l->inl + l->n_inl - j].function : l->function;
			uint32_t name = fn ? p->fn[fn - 1].name : NO_NAME;
			uint8_t kind = name == NO_NAME ? K_UNKNOWN
				       : l->python     ? K_PYTHON
				       : l->jit        ? K_JIT
						       : K_NATIVE;
			if ((at = child_of(t, (uint32_t)at, name, kind, j > 0)) < 0)
				return -1;
			t->v[at].count += x->count;
		}
	}
	return 0;
}

static int cmp_child(const void *a, const void *b, void *tree)
{
	const ftree *t = tree;
	const fnode *x = &t->v[*(const uint32_t *)a], *y = &t->v[*(const uint32_t *)b];
	return strcmp(name_of(t, x), name_of(t, y));
}

/* Children in name order, and every frame's first sample.  A child is made
 * after its parent, so index order reaches every parent first. */
static int lay_out(ftree *t)
{
	uint32_t *kids = malloc(t->n * sizeof *kids);
	if (!kids)
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		size_t m = 0;
		for (uint32_t k = t->v[i].child; k; k = t->v[k - 1].next)
			kids[m++] = k - 1;
		qsort_r(kids, m, sizeof *kids, cmp_child, t);
		uint64_t at = t->v[i].start;
		t->v[i].child = m ? kids[0] + 1 : 0;
		for (size_t j = 0; j < m; j++) {
			fnode *c = &t->v[kids[j]];
			c->next = j + 1 < m ? kids[j + 1] + 1 : 0;
			c->start = at;
			at += c->count;
		}
	}
	free(kids);
	return 0;
}

/* ---- writing ------------------------------------------------------------------- */

/* Code points in s, counting each byte that is not UTF-8 as one. */
static size_t cp_len(const char *s)
{
	size_t n = 0;
	for (const unsigned char *q = (const unsigned char *)s; *q; n++) {
		size_t k = utf8_len_str((const char *)q);
		q += k ? k : 1;
	}
	return n;
}

/* XML character data of at most max code points of s: markup escaped,
 * bytes that are not UTF-8 and control characters (which XML 1.0 does not
 * allow) written as U+FFFD. */
static void xml_text(FILE *f, const char *s, size_t max)
{
	const unsigned char *q = (const unsigned char *)s;
	for (size_t n = 0; *q && n < max; n++) {
		if (*q >= 0x80) {
			size_t k = utf8_len_str((const char *)q);
			if (k)
				fwrite(q, 1, k, f), q += k;
			else
				fputs("\xef\xbf\xbd", f), q++;
			continue;
		}
		switch (*q) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: *q < 0x20 || *q == 0x7f ? fputs("\xef\xbf\xbd", f) : fputc(*q, f);
		}
		q++;
	}
}

/* HSL to RGB (CSS Color 3, section 4.2.4); h in [0, 360). */
static void hsl_rgb(double h, double s, double l, int rgb[3])
{
	double c = (1 - fabs(2 * l - 1)) * s, hp = h / 60;
	double x = c * (1 - fabs(hp - 2.0 * (int)(hp / 2) - 1)), m = l - c / 2;
	const double by_sector[6][3] = { { c, x, 0 }, { x, c, 0 }, { 0, c, x },
					 { 0, x, c }, { x, 0, c }, { c, 0, x } };
	const double *v = by_sector[(int)hp % 6];
	for (int i = 0; i < 3; i++)
		rgb[i] = (int)((v[i] + m) * 255 + 0.5);
}

/* A frame's fill: a warm hue for native code, a cool green one for JIT
 * code, a blue one for a Python function, each varied by a hash of the
 * name so neighbours stand apart. */
static void fill_of(const ftree *t, const fnode *x, int rgb[3])
{
	uint64_t h = js_hash_str(name_of(t, x));
	double u = (double)(h >> 40 & 0xffff) / 65535, v = (double)(h >> 20 & 0xfff) / 4095;
	switch (x->kind) {
	case K_JIT: hsl_rgb(140 + 45 * u, 0.55 + 0.25 * v, 0.52 + 0.1 * v, rgb); break;
	case K_NATIVE: hsl_rgb(5 + 45 * u, 0.75 + 0.2 * v, 0.56 + 0.08 * v, rgb); break;
	case K_PYTHON: hsl_rgb(190 + 30 * u, 0.6 + 0.2 * v, 0.58 + 0.08 * v, rgb); break;
	case K_THREAD: hsl_rgb(215, 0.3, 0.72, rgb); break;
	case K_PROCESS: hsl_rgb(265, 0.25, 0.74, rgb); break;
	case K_UNKNOWN: rgb[0] = rgb[1] = rgb[2] = 190; break;
	default: rgb[0] = rgb[1] = rgb[2] = 215; break;
	}
}

static const char *kind_word(uint8_t kind)
{
	static const char *const w[] = { "root", "thread", "native", "jit", "unknown", "process", "python" };
	return w[kind];
}

/* The label that fits w px: the name, cut with ".." when it is longer. */
static void write_label(FILE *f, const char *name, double w)
{
	size_t fit = w > 6 ? (size_t)((w - 6) / CHAR_PX) : 0;
	if (fit < 3)
		return;
	size_t n = cp_len(name);
	if (n <= fit) {
		xml_text(f, name, n);
	} else {
		xml_text(f, name, fit - 2);
		fputs("..", f);
	}
}

static void write_frame(FILE *f, const ftree *t, const fnode *x, int height)
{
	const double avail = WIDTH - 2 * PAD_X, total = (double)t->v[0].count;
	double w = (double)x->count / total * avail;
	if (w < MIN_WIDTH_PX)
		return;
	double xpos = PAD_X + (double)x->start / total * avail;
	int y = height - PAD_BOTTOM - ((int)x->depth + 1) * FRAME_H;
	int rgb[3];
	fill_of(t, x, rgb);
	const char *name = name_of(t, x);
	fprintf(f,
		"<g class=\"f\" data-s=\"%" PRIu64 "\" data-n=\"%" PRIu64
		"\" data-d=\"%u\" data-k=\"%s\"%s><title>",
		x->start, x->count, x->depth, kind_word(x->kind), x->inlined ? " data-i=\"1\"" : "");
	xml_text(f, name, SIZE_MAX);
	fprintf(f, " (%" PRIu64 " sample%s, %.2f%%)</title>", x->count, x->count == 1 ? "" : "s",
		100.0 * (double)x->count / total);
	fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" rx=\"2\"/>",
		xpos, y, w, FRAME_H - 1, rgb[0], rgb[1], rgb[2]);
	fprintf(f, "<text x=\"%.2f\" y=\"%.1f\">", xpos + 3, y + FRAME_H - 4.5);
	write_label(f, name, w);
	fputs("</text></g>\n", f);
}

/* The page's behaviour: details on hover, zoom on click, the search box.
 * Positions are recomputed from each frame's data-s/n/d. */
static const char script[] =
	"'use strict';\n"
	"var W = %d, PX = %d, CH = %.2f, frames = [], total = 0, details, matched, unzoom, search, zoomed = null;\n"
	"function el(id) { return document.getElementById(id); }\n"
	"function init() {\n"
	"  details = el('details'); matched = el('matched'); unzoom = el('unzoom'); search = el('search');\n"
	"  total = +el('frames').getAttribute('data-total');\n"
	"  var g = document.querySelectorAll('g.f');\n"
	"  for (var i = 0; i < g.length; i++) {\n"
	"    var e = g[i], t = e.querySelector('title').textContent, r = e.querySelector('rect');\n"
	"    var f = { e: e, r: r, t: e.querySelector('text'), s: +e.getAttribute('data-s'),\n"
	"      n: +e.getAttribute('data-n'), d: +e.getAttribute('data-d'), title: t,\n"
	"      name: t.slice(0, t.lastIndexOf(' (')), fill: r.getAttribute('fill') };\n"
	"    frames.push(f);\n"
	"    e.addEventListener('mouseover', show.bind(null, f));\n"
	"    e.addEventListener('mouseout', show.bind(null, null));\n"
	"    e.addEventListener('click', zoom.bind(null, f));\n"
	"  }\n"
	"  unzoom.addEventListener('click', function () { zoom(frames[0]); });\n"
	"  if (search) search.addEventListener('input', function () { find(search.value); });\n"
	"  document.addEventListener('keydown', function (ev) {\n"
	"    if ((ev.ctrlKey || ev.metaKey) && ev.key === 'f' && search) { ev.preventDefault(); search.focus(); }\n"
	"    if (ev.key === 'Escape') { if (search) search.value = ''; find(''); }\n"
	"  });\n"
	"}\n"
	"function show(f) {\n"
	"  details.textContent = f ? f.title : zoomed && zoomed.d ? 'Zoomed: ' + zoomed.title : ' ';\n"
	"}\n"
	"function label(f, w) {\n"
	"  var fit = Math.floor((w - 6) / CH), s = f.name;\n"
	"  f.t.textContent = fit < 3 ? '' : s.length <= fit ? s : s.slice(0, fit - 2) + '..';\n"
	"}\n"
	"function place(f, x, w) {\n"
	"  f.r.setAttribute('x', x.toFixed(2)); f.r.setAttribute('width', w.toFixed(2));\n"
	"  f.t.setAttribute('x', (x + 3).toFixed(2)); label(f, w);\n"
	"}\n"
	"function zoom(z) {\n"
	"  var avail = W - 2 * PX;\n"
	"  zoomed = z;\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var f = frames[i], inside = f.d >= z.d && f.s >= z.s && f.s + f.n <= z.s + z.n;\n"
	"    var below = f.d < z.d && f.s <= z.s && f.s + f.n >= z.s + z.n;\n"
	"    var w = inside ? f.n / z.n * avail : avail;\n"
	"    if ((inside && w >= 0.1) || below) {\n"
	"      f.e.style.display = '';\n"
	"      f.e.setAttribute('opacity', below ? '0.55' : '1');\n"
	"      place(f, inside ? PX + (f.s - z.s) / z.n * avail : PX, w);\n"
	"    } else {\n"
	"      f.e.style.display = 'none';\n"
	"    }\n"
	"  }\n"
	"  unzoom.style.display = z.d ? '' : 'none';\n"
	"  show(null);\n"
	"}\n"
	"function find(q) {\n"
	"  var re = null, spans = [];\n"
	"  if (q) { try { re = new RegExp(q); } catch (e) { re = new RegExp(q.replace(/[.*+?^${}()|[\\]\\\\]/g, '\\\\$&')); } }\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var f = frames[i], hit = re && f.d > 0 && re.test(f.name);\n"
	"    f.r.setAttribute('fill', hit ? 'rgb(230,0,230)' : f.fill);\n"
	"    if (hit) spans.push([f.s, f.s + f.n]);\n"
	"  }\n"
	"  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
	"  var sum = 0, end = -1;\n"
	"  for (var j = 0; j < spans.length; j++) {\n"
	"    if (spans[j][0] >= end) { sum += spans[j][1] - spans[j][0]; end = spans[j][1]; }\n"
	"    else if (spans[j][1] > end) { sum += spans[j][1] - end; end = spans[j][1]; }\n"
	"  }\n"
	"  matched.textContent = re ? 'Matched: ' + (100 * sum / total).toFixed(2) + '%%' : '';\n"
	"}\n";

static bool any_inlined(const ftree *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].inlined)
			return true;
	return false;
}

static bool any_python(const ftree *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].kind == K_PYTHON)
			return true;
	return false;
}

static void write_head(FILE *f, const ftree *t, int height, const char *title)
{
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\" onload=\"init()\">\n",
		WIDTH, height, WIDTH, height);
	fprintf(f,
		"<style>\n"
		"text { font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: %dpx; fill: #000; }\n"
		"#title { font-size: 17px; }\n"
		"g.f text { pointer-events: none; }\n"
		"g.f[data-i] text, #inlined { font-style: italic; }\n"
		"g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }\n"
		"#unzoom { cursor: pointer; fill: #0645ad; }\n"
		"#search { font: 12px sans-serif; width: 236px; padding: 2px 4px; }\n"
		"</style>\n<script><![CDATA[\n",
		FONT_PX);
	fprintf(f, script, WIDTH, PAD_X, CHAR_PX);
	fputs("]]></script>\n", f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f4\"/>\n", WIDTH, height);
	fprintf(f, "<text id=\"title\" x=\"%d\" y=\"24\" text-anchor=\"middle\">", WIDTH / 2);
	xml_text(f, title, SIZE_MAX);
	fputs("</text>\n", f);
	fprintf(f, "<text id=\"unzoom\" x=\"%d\" y=\"24\" style=\"display:none\">Reset zoom</text>\n", PAD_X);
	/* the legend: what the colours mean */
	static const struct {
		uint8_t kind;
		const char *what;
	} legend[] = {
		{ K_JIT, "JIT code" },    { K_NATIVE, "native code" }, { K_THREAD, "thread" },
		{ K_UNKNOWN, "unknown" }, { K_PROCESS, "process" },    { K_PYTHON, "Python" },
	};
	int lx = PAD_X;
	/* (the process entry only when the graph has process frames, the
	 * Python one when it has Python frames) */
	bool process = t->p->by_process, python = any_python(t);
	for (size_t i = 0; i < sizeof legend / sizeof *legend; i++) {
		if ((legend[i].kind == K_PROCESS && !process) || (legend[i].kind == K_PYTHON && !python))
			continue;
		fnode x = { .name = NO_NAME, .kind = legend[i].kind };
		int rgb[3];
		fill_of(t, &x, rgb);
		fprintf(f,
			"<rect x=\"%d\" y=\"40\" width=\"12\" height=\"12\" rx=\"2\" fill=\"rgb(%d,%d,%d)\"/>",
			lx, rgb[0], rgb[1], rgb[2]);
		fprintf(f, "<text x=\"%d\" y=\"50\">%s</text>\n", lx + 16, legend[i].what);
		lx += 16 + (int)(strlen(legend[i].what) * CHAR_PX) + 18;
	}
	if (any_inlined(t))
		fprintf(f,
			"<text id=\"inlined\" x=\"%d\" y=\"50\">inlined (a function compiled into its caller)</text>\n",
			lx);
	fprintf(f,
		"<foreignObject x=\"%d\" y=\"8\" width=\"250\" height=\"28\">"
		"<input xmlns=\"http://www.w3.org/1999/xhtml\" id=\"search\" type=\"search\" "
		"placeholder=\"Search (regular expression)\"/></foreignObject>\n",
		WIDTH - PAD_X - 250);
	fprintf(f, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", PAD_X, height - 12);
	fprintf(f, "<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"></text>\n", WIDTH - PAD_X,
		height - 12);
}

/* The title: the process (or how many), samples, time and rate. */
static void svg_title(const js_profile *p, char *title, size_t len)
{
	/* the rate sampled at: perf events may have lowered -F to the kernel's maximum */
	double hz = p->period_ns ? 1e9 / (double)p->period_ns : 0;
	char who[300];
	if (!p->by_process) {
		const char *exe = p->main_exe && *p->main_exe ? p->main_exe : "?";
		const char *base = strrchr(exe, '/');
		snprintf(who, sizeof who, "%.200s (PID %d)", base ? base + 1 : exe,
			 p->n_proc ? (int)p->proc[0].pid : 0);
	} else {
		int at = snprintf(who, sizeof who, "%zu processes (PID", p->n_proc);
		for (size_t i = 0; i < p->n_proc && at > 0 && (size_t)at < sizeof who - 40; i++)
			at += snprintf(who + at, sizeof who - (size_t)at, "%s %d", i ? "," : "",
				       (int)p->proc[i].pid);
		if (at > 0 && (size_t)at < sizeof who - 40)
			snprintf(who + at, sizeof who - (size_t)at, ")");
		else if (at > 0 && (size_t)at < sizeof who)
			snprintf(who + at, sizeof who - (size_t)at, "...)");
	}
	snprintf(title, len, "%s: %" PRIu64 " samples in %.1f s at %g Hz", who, p->total,
		 p->duration_ns / 1e9, hz);
}

int js_write_svg(const js_profile *p, const js_write_opts *o, FILE *f, const char *name, js_err *err)
{
	(void)o;
	char title[512];
	svg_title(p, title, sizeof title);
	ftree t = { .p = p };
	int rc = 0;
	if (js_grow(&t.v, &t.cap, 0, sizeof *t.v)) {
		t.v[0] = (fnode){ .name = NO_NAME, .kind = K_ROOT };
		t.n = 1;
	} else {
		rc = -1;
	}
	for (size_t i = 0; !rc && i < p->n_smp; i++)
		rc = add_sample(&t, &p->smp[i]);
	if (!rc)
		rc = lay_out(&t);
	if (!rc) {
		int height = PAD_TOP + ((int)t.max_depth + 1) * FRAME_H + PAD_BOTTOM;
		write_head(f, &t, height, title);
		fprintf(f, "<g id=\"frames\" data-total=\"%" PRIu64 "\">\n", t.v[0].count);
		if (t.v[0].count)
			for (size_t i = 0; i < t.n; i++)
				write_frame(f, &t, &t.v[i], height);
		else
			fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">no samples</text>\n",
				WIDTH / 2, height - PAD_BOTTOM - 4);
		fputs("</g>\n</svg>\n", f);
	}
	free(t.v);
	js_htab_free(&t.index);
	return js_profile_flushed(f, rc, name, err);
}
