/* SPDX-License-Identifier: MIT */
/* jitdump.c - reading a perf jitdump for names, lines and CFI (see jitdump.h). */
#include "jit/jitdump.h"
#include "formats/search.h"
#include "base/bounds.h"
#include "formats/elfhdr.h"
#include "formats/jitdump.h"
#include "formats/utf8.h"
#include "base/grow.h"
#include "base/maps.h"

#include <elf.h>
#include <gelf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- file names ---------------------------------------------------------------- */

/* Source file names live in chunks that never move; lines point into them. */
enum { CHUNK = 1 << 16 };

static const char *keep_str(js_jitdump *jd, const char *s, size_t n)
{
	return js_strs_keep(&jd->strs, s, n, CHUNK);
}

/* ---- the state ------------------------------------------------------------------- */

void js_jitdump_init(js_jitdump *jd, const char *path, uint16_t machine)
{
	memset(jd, 0, sizeof *jd);
	snprintf(jd->path, sizeof jd->path, "%s", path ? path : "");
	jd->owner = -1;
	jd->machine = machine;
	js_perfmap_init(&jd->ranges, NULL);
}

/* Let go of an image (NULL: none).  libdwfl holds the module of one in the
 * latest report until the next report: it waits in jd->dead until
 * js_jitdump_reap. */
static void retire_image(js_jitdump *jd, js_image *im)
{
	if (!im)
		return;
	if (!im->reported)
		js_image_free(im);
	else if (!js_grow(&jd->dead, &jd->cap_dead, jd->n_dead, sizeof *jd->dead))
		im->magic = 0; /* out of memory: leaked, but no longer taken for ours */
	else
		jd->dead[jd->n_dead++] = im;
}

static void free_code(js_jitdump *jd, js_jd_code *c)
{
	free(c->lines);
	free(c->eh);
	retire_image(jd, c->img);
}

void js_jitdump_reap(js_jitdump *jd)
{
	for (size_t i = 0; i < jd->n_dead; i++)
		js_image_free(jd->dead[i]);
	jd->n_dead = 0;
}

/* Forget every record: the file is read again from its start.  (libdwfl
 * may still hold modules of the images: the caller reports the modules
 * again before it unwinds.) */
static void reset(js_jitdump *jd)
{
	for (size_t i = 0; i < jd->n_code; i++)
		free_code(jd, &jd->code[i]);
	free(jd->code);
	jd->code = NULL;
	jd->n_code = jd->cap_code = 0;
	free(jd->pend_lines);
	free(jd->pend_eh);
	jd->pend_lines = NULL, jd->pend_eh = NULL;
	jd->pend_n_lines = jd->pend_eh_size = 0;
	js_strs_free(&jd->strs);
	js_perfmap_free(&jd->ranges);
	js_perfmap_init(&jd->ranges, NULL);
	jd->file.off = jd->file.skip = 0;
	jd->have_header = jd->ended = jd->cut = false;
	jd->why[0] = 0;
	jd->cfi_bytes = jd->line_rows = 0;
	jd->loads = jd->moves = jd->debug = jd->unwind = jd->with_cfi = 0;
	jd->bad = jd->over_limit = jd->late = jd->unknown = jd->unkept = 0;
	jd->n_kept = 0;
	jd->gap = jd->doubt = 0;
	jd->pend_debug_len = jd->pend_unwind_len = 0;
	jd->changes++;
	jd->resets++;
}

void js_jitdump_free(js_jitdump *jd)
{
	reset(jd);
	js_jitdump_reap(jd);
	free(jd->dead);
	js_perfmap_free(&jd->ranges);
	free(jd->want);
	free(jd->kept);
	jd->want = jd->kept = NULL;
	jd->n_want = jd->n_kept = jd->cap_kept = 0;
}

/* The file cannot be read past this point. */
static void give_up(js_jitdump *jd, uint64_t at, const char *fmt, unsigned long long v)
{
	char what[160];
	snprintf(what, sizeof what, fmt, v);
	snprintf(jd->why, sizeof jd->why, "at offset %" PRIu64 ": %s", at, what);
	jd->ended = true;
}

/* ---- records ----------------------------------------------------------------------- */

static int32_t ld_i32(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

static uint64_t ld_u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* The header; returns the bytes consumed, 0 when more are needed (*need)
 * or the file is not one we read (jd->ended). */
static size_t header(js_jitdump *jd, const uint8_t *p, size_t len, size_t *need)
{
	if (len < sizeof(jd_header)) {
		*need = sizeof(jd_header);
		return 0;
	}
	jd_header h;
	memcpy(&h, p, sizeof h);
	if (h.magic != JD_MAGIC) {
		give_up(jd, 0,
			__builtin_bswap32(h.magic) == JD_MAGIC
				? "written in the other byte order (magic %#llx)"
				: "not a jitdump (magic %#llx)",
			h.magic);
		return 0;
	}
	if (h.version != JD_VERSION) {
		give_up(jd, 4, "version %llu (jitstack reads version 1)", h.version);
		return 0;
	}
	if (h.total_size < sizeof h || h.total_size > JS_MAX_JITDUMP_HEADER) {
		give_up(jd, 8, "a header of %llu bytes", h.total_size);
		return 0;
	}
	if (jd->machine && h.elf_mach != jd->machine) {
		give_up(jd, 12, "code for machine %llu, not the target's", h.elf_mach);
		return 0;
	}
	if (h.flags & JD_FLAGS_ARCH_TIMESTAMP)
		jd->until_ns = 0; /* the CPU's clock: the records cannot be set against a core's time */
	if (jd->until_ns && h.timestamp > jd->until_ns) {
		give_up(jd, 24, "begun after the core (by another process with that pid; %llu ns later)",
			h.timestamp - jd->until_ns);
		return 0;
	}
	jd->have_header = true;
	jd->flags = h.flags;
	jd->start_ns = h.timestamp;
	jd->pid = h.pid;
	jd->file.skip = h.total_size - sizeof h;
	return sizeof h;
}

static void drop_pending(js_jitdump *jd)
{
	free(jd->pend_lines);
	free(jd->pend_eh);
	jd->pend_lines = NULL, jd->pend_eh = NULL;
	jd->pend_n_lines = jd->pend_eh_size = 0;
	jd->pend_debug_len = jd->pend_unwind_len = 0;
	jd->doubt = 0;
}

/* ---- reading for some pcs only ----------------------------------------------------- */

/* Is the code [lo, hi) one a dump keeps: over a span it wants, or over
 * code kept before (a later load there decides whether that one is still
 * the latest)? */
static bool keeps(const js_jitdump *jd, uint64_t lo, uint64_t hi)
{
	return !jd->want || js_spans_overlap(jd->want, jd->n_want, lo, hi) ||
	       js_spans_overlap(jd->kept, jd->n_kept, lo, hi);
}

/* Code not kept: counted, and the records that waited for it dropped. */
static int not_kept(js_jitdump *jd)
{
	jd->unkept++;
	drop_pending(jd);
	return 0;
}

/* A CODE_MOVE not kept.  Read whole, a move drops the records pending
 * when code starts at its old address (it takes that code's lines and
 * CFI) and keeps them otherwise (a malformed move): known here when that
 * address is wanted (every load there is kept), else a doubt on what the
 * next load takes. */
static int move_not_kept(js_jitdump *jd, uint64_t old_addr)
{
	jd->moves++;
	jd->unkept++;
	bool pending = jd->pend_debug_len || jd->pend_unwind_len || jd->pend_lines || jd->pend_eh;
	if (!pending)
		return 0;
	if (!js_spans_overlap(jd->want, jd->n_want, old_addr, old_addr + 1)) {
		jd->doubt = old_addr;
		return 0;
	}
	if (js_jitdump_commit(jd))
		return -1;
	const js_jd_code *old = js_jitdump_find(jd, old_addr);
	if (old && old->lo == old_addr)
		drop_pending(jd);
	return 0;
}

/* Add [lo, hi) to the code kept, a set of spans kept normalized: a JIT
 * that loads code at the same addresses again and again keeps one. */
static int keep_range(js_jitdump *jd, uint64_t lo, uint64_t hi)
{
	if (!jd->want)
		return 0;
	js_span *v = jd->kept;
	size_t n = jd->n_kept, at = FMT_COUNT_LE(v, n, lo, lo); /* the spans that start at or before lo */
	size_t first = at && v[at - 1].hi >= lo ? at - 1 : at, end = at;
	while (end < n && v[end].lo <= hi)
		end++;
	if (first == end) { /* touches none: inserted at its place */
		if (!js_grow(&jd->kept, &jd->cap_kept, n, sizeof *v))
			return -1;
		v = jd->kept;
		memmove(v + at + 1, v + at, (n - at) * sizeof *v);
		v[at] = (js_span){ lo, hi };
		jd->n_kept++;
		return 0;
	}
	/* joins spans first..end-1 */
	v[first] = (js_span){ v[first].lo < lo ? v[first].lo : lo, v[end - 1].hi > hi ? v[end - 1].hi : hi };
	memmove(v + first + 1, v + end, (n - end) * sizeof *v);
	jd->n_kept -= end - first - 1;
	return 0;
}

/* The record of len bytes at offset at, read again for a load kept: the
 * same kind and size as its head said, else NULL (the file changed under
 * us; counted malformed).  The caller frees it. */
static uint8_t *read_back(js_jitdump *jd, uint64_t at, uint32_t len, uint32_t id)
{
	uint8_t *p = malloc(len);
	jd_prefix pf;
	if (p && pread(jd->file.fd, p, len, (off_t)at) == (ssize_t)len) {
		memcpy(&pf, p, sizeof pf);
		if (pf.id == id && pf.total_size == len)
			return p;
	}
	if (p)
		jd->bad++;
	free(p);
	return NULL;
}

static int debug_info(js_jitdump *jd, const uint8_t *p, size_t total);
static int unwinding_info(js_jitdump *jd, const uint8_t *p, size_t total);

/* A load is kept: the DEBUG_INFO and UNWINDING_INFO noted before it are
 * read now and checked whole, as a full read checks them (counted when
 * noted).  0, or -1 when out of memory. */
static int read_pending(js_jitdump *jd)
{
	uint64_t d_at = jd->pend_debug_at, u_at = jd->pend_unwind_at;
	uint32_t d_len = jd->pend_debug_len, u_len = jd->pend_unwind_len;
	drop_pending(jd);
	int rc = 0;
	uint8_t *p;
	unsigned long debug = jd->debug, unwind = jd->unwind;
	if (d_len && (p = read_back(jd, d_at, d_len, JD_CODE_DEBUG_INFO))) {
		rc = debug_info(jd, p, d_len);
		free(p);
	}
	if (!rc && u_len && (p = read_back(jd, u_at, u_len, JD_CODE_UNWINDING_INFO))) {
		rc = unwinding_info(jd, p, u_len);
		free(p);
	}
	jd->debug = debug, jd->unwind = unwind;
	return rc;
}

/* A new piece of code [lo, lo + size) named name; takes the pending lines
 * and CFI.  0, or -1 when out of memory. */
static int add_code(js_jitdump *jd, uint64_t lo, uint64_t size, const char *name, size_t n, uint64_t ts)
{
	if (jd->n_code >= JS_MAX_JITDUMP_LOADS) {
		jd->over_limit++;
		drop_pending(jd);
		return 0;
	}
	if (!js_grow(&jd->code, &jd->cap_code, jd->n_code, sizeof *jd->code))
		return -1;
	const char *kept = js_perfmap_add(&jd->ranges, lo, size, name, n, jd->n_code);
	if (!kept)
		return -1;
	/* rows outside the code describe none of it */
	size_t w = 0;
	for (size_t i = 0; i < jd->pend_n_lines; i++)
		if (jd->pend_lines[i].addr >= lo && jd->pend_lines[i].addr - lo < size)
			jd->pend_lines[w++] = jd->pend_lines[i];
	jd->pend_n_lines = w;
	jd->code[jd->n_code++] = (js_jd_code){ .lo = lo,
					       .hi = lo + size,
					       .ts = ts,
					       .name = kept,
					       .lines = jd->pend_lines,
					       .n_lines = jd->pend_n_lines,
					       .eh = jd->pend_eh,
					       .eh_size = jd->pend_eh_size };
	jd->with_cfi += jd->pend_eh != NULL;
	jd->pend_lines = NULL, jd->pend_eh = NULL;
	jd->pend_n_lines = jd->pend_eh_size = 0;
	return 0;
}

/* Code ranges perf would accept (util/jitdump.c skips none, but a range
 * that wraps or is absurdly large names nothing real). */
static bool range_ok(uint64_t lo, uint64_t size)
{
	return size && size <= JS_MAX_CODE_SPAN && lo + size > lo;
}

static int code_load(js_jitdump *jd, const uint8_t *p, size_t head, uint32_t total)
{
	jd_code_load r;
	memcpy(&r, p, sizeof r);
	(void)total;
	if (!range_ok(r.code_addr, r.code_size)) {
		jd->bad++;
		drop_pending(jd);
		return 0;
	}
	jd->loads++;
	if (!keeps(jd, r.code_addr, r.code_addr + r.code_size))
		return not_kept(jd); /* (its name is not looked at) */
	size_t name_max = head - sizeof r;
	const char *name = (const char *)p + sizeof r;
	size_t n = strnlen(name, name_max);
	if (n > JS_MAX_NAME)
		n = JS_MAX_NAME;
	if (jd->doubt && !jd->gap)
		jd->gap = jd->doubt; /* what this load takes is known once that code is read */
	if (keep_range(jd, r.code_addr, r.code_addr + r.code_size) || (jd->want && read_pending(jd)))
		return -1;
	return add_code(jd, r.code_addr, r.code_size, name, n, r.p.timestamp);
}

static int lines_cmp(const void *a, const void *b)
{
	const js_jd_line *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* CODE_MOVE: the code at old_code_addr, at new_code_addr now. */
static int code_move(js_jitdump *jd, const uint8_t *p)
{
	jd_code_move r;
	memcpy(&r, p, sizeof r);
	if (!range_ok(r.new_code_addr, r.code_size)) {
		jd->bad++;
		return 0;
	}
	if (!keeps(jd, r.new_code_addr, r.new_code_addr + r.code_size))
		return move_not_kept(jd, r.old_code_addr);
	if (js_jitdump_commit(jd)) /* the old code may be among the records of this read */
		return -1;
	js_jd_code *old = js_jitdump_find(jd, r.old_code_addr);
	if (!old || old->lo != r.old_code_addr) {
		if (jd->want && !js_spans_overlap(jd->want, jd->n_want, r.old_code_addr, r.old_code_addr + 1))
			jd->gap = r.old_code_addr; /* not kept: to be read again for it */
		jd->bad++;                         /* nothing loaded there */
		return 0;
	}
	if (keep_range(jd, r.new_code_addr, r.new_code_addr + r.code_size))
		return -1;
	size_t at = (size_t)(old - jd->code);
	drop_pending(jd);
	uint64_t delta = r.new_code_addr - old->lo;
	if (old->n_lines && jd->line_rows + old->n_lines <= JS_MAX_JITDUMP_ROWS &&
	    (jd->pend_lines = malloc(old->n_lines * sizeof *jd->pend_lines))) {
		for (size_t i = 0; i < old->n_lines; i++) {
			jd->pend_lines[i] = old->lines[i];
			jd->pend_lines[i].addr += delta;
		}
		jd->pend_n_lines = old->n_lines;
		jd->line_rows += old->n_lines;
	}
	/* the CFI is relative to the code (perf's layout): it moves as it is */
	if (old->eh && jd->cfi_bytes + old->eh_size <= JS_MAX_JITDUMP_CFI &&
	    (jd->pend_eh = malloc(old->eh_size))) {
		memcpy(jd->pend_eh, old->eh, old->eh_size);
		jd->pend_eh_size = old->eh_size;
		jd->cfi_bytes += old->eh_size;
	}
	jd->moves++;
	const js_jd_code *o = &jd->code[at];
	return add_code(jd, r.new_code_addr, r.code_size, o->name, strlen(o->name), r.p.timestamp);
}

/* A file name, as a writer that works writes one: UTF-8 text (RFC 3629,
 * formats/utf8.h), no control bytes. */
static bool plain_name(const char *s, size_t n)
{
	const uint8_t *p = (const uint8_t *)s;
	for (size_t i = 0; i < n;) {
		size_t k = utf8_len(p + i, n - i);
		if (!k || p[i] < 0x20 || p[i] == 0x7f)
			return false;
		i += k;
	}
	return n > 0;
}

/* DEBUG_INFO: nr_entry rows, each a jd_debug_entry and a file name
 * ("\xff" alone: the previous row's, as the specification allows). */
static int debug_info(js_jitdump *jd, const uint8_t *p, size_t total)
{
	jd_code_debug_info r;
	memcpy(&r, p, sizeof r);
	size_t most = (total - sizeof r) / (sizeof(jd_debug_entry) + 1);
	if (r.nr_entry > most || jd->line_rows + r.nr_entry > JS_MAX_JITDUMP_ROWS) {
		jd->bad += r.nr_entry > most;
		jd->over_limit += r.nr_entry <= most;
		return 0;
	}
	drop_pending(jd);
	jd->debug++;
	if (!r.nr_entry)
		return 0;
	js_jd_line *v = malloc(r.nr_entry * sizeof *v);
	if (!v)
		return -1;
	size_t at = sizeof r, n = 0;
	const char *prev = NULL, *prev_raw = NULL;
	size_t prev_len = 0;
	bool sorted = true, broken = false;
	for (uint64_t i = 0; i < r.nr_entry; i++) {
		if (total - at < sizeof(jd_debug_entry) + 1) {
			broken = true;
			break;
		}
		const uint8_t *e = p + at;
		const char *name = (const char *)e + sizeof(jd_debug_entry);
		size_t room = total - at - sizeof(jd_debug_entry), len = strnlen(name, room);
		if (len == room) {
			broken = true; /* no NUL before the record's end */
			break;
		}
		at += sizeof(jd_debug_entry) + len + 1;
		const char *file = prev;
		bool same = len == 1 && (uint8_t)name[0] == 0xff;
		if (!same && !plain_name(name, len)) {
			/* node 20 writes file names whose first 16 bytes are
			 * freed heap (pointers, NULs among them): every row after
			 * such a name is out of step */
			n = 0;
			broken = true;
			break;
		}
		if (!same && !(prev_raw && prev_len == len && !memcmp(prev_raw, name, len))) {
			if (!(file = keep_str(jd, name, len > JS_MAX_NAME ? JS_MAX_NAME : len))) {
				free(v);
				return -1;
			}
			prev_raw = name, prev_len = len;
		}
		prev = file;
		int32_t line = ld_i32(e + 8), col = ld_i32(e + 12);
		if (!file || line <= 0)
			continue;
		v[n] = (js_jd_line){ ld_u64(e), line, col, file };
		sorted &= !n || v[n].addr >= v[n - 1].addr;
		n++;
	}
	if (broken)
		jd->bad++;
	if (!n) {
		free(v);
		return 0;
	}
	if (!sorted) /* stable enough: rows at one address keep no meaning of order */
		qsort(v, n, sizeof *v, lines_cmp);
	jd->pend_lines = v;
	jd->pend_n_lines = n;
	jd->line_rows += n;
	return 0;
}

/* UNWINDING_INFO: the .eh_frame part of its tables (the search table
 * after it is rebuilt from the FDEs). */
/* An UNWINDING_INFO's head into *r, checked against the record's size:
 * false (counted bad) when its sizes do not fit; else the pending tables
 * the record replaces are dropped and it is counted. */
static bool unwinding_head(js_jitdump *jd, const uint8_t *p, size_t total, jd_code_unwinding_info *r)
{
	memcpy(r, p, sizeof *r);
	if (r->unwinding_size > total - sizeof *r || r->eh_frame_hdr_size > r->unwinding_size) {
		jd->bad++;
		return false;
	}
	free(jd->pend_eh);
	jd->pend_eh = NULL, jd->pend_eh_size = 0;
	jd->unwind++;
	return true;
}

static int unwinding_info(js_jitdump *jd, const uint8_t *p, size_t total)
{
	jd_code_unwinding_info r;
	if (!unwinding_head(jd, p, total, &r))
		return 0;
	size_t eh = (size_t)(r.unwinding_size - r.eh_frame_hdr_size);
	if (eh < 8)
		return 0; /* no FDE (V8 writes an empty table for code without CFI) */
	if (jd->cfi_bytes + eh > JS_MAX_JITDUMP_CFI) {
		jd->over_limit++;
		return 0;
	}
	if (!(jd->pend_eh = malloc(eh)))
		return -1;
	memcpy(jd->pend_eh, p + sizeof r, eh);
	jd->pend_eh_size = eh;
	jd->cfi_bytes += eh;
	return 0;
}

/* A dump's DEBUG_INFO or UNWINDING_INFO (js_jitdump_read_for): its head
 * checked as debug_info and unwinding_info check it, and the record noted
 * by offset, to be read if the load it describes is kept. */
static int note_info(js_jitdump *jd, const uint8_t *p, uint32_t id, uint32_t total, uint64_t at)
{
	if (id == JD_CODE_DEBUG_INFO) {
		jd_code_debug_info r;
		memcpy(&r, p, sizeof r);
		if (r.nr_entry > (total - sizeof r) / (sizeof(jd_debug_entry) + 1)) {
			jd->bad++;
			return 0;
		}
		drop_pending(jd);
		jd->debug++;
		jd->pend_debug_at = at, jd->pend_debug_len = r.nr_entry ? total : 0;
		return 0;
	}
	jd_code_unwinding_info r;
	if (unwinding_head(jd, p, total, &r))
		jd->pend_unwind_at = at, jd->pend_unwind_len = total;
	return 0;
}

/* How much of a record of this kind must be at hand to use it; 0: none
 * (stepped over), SIZE_MAX: the record is malformed. */
static size_t head_size(const jd_prefix *pf, const uint8_t *p, size_t len)
{
	switch (pf->id) {
	case JD_CODE_LOAD: {
		if (pf->total_size < sizeof(jd_code_load) + 1)
			return SIZE_MAX;
		if (len < sizeof(jd_code_load))
			return sizeof(jd_code_load);
		uint64_t code_size = ld_u64(p + offsetof(jd_code_load, code_size));
		/* perf takes the code as the record's last code_size bytes */
		if (code_size > pf->total_size - sizeof(jd_code_load) - 1)
			return SIZE_MAX;
		uint64_t name_end = pf->total_size - code_size, cap = sizeof(jd_code_load) + JS_MAX_NAME + 1;
		return (size_t)(name_end < cap ? name_end : cap);
	}
	case JD_CODE_MOVE: return pf->total_size < sizeof(jd_code_move) ? SIZE_MAX : sizeof(jd_code_move);
	case JD_CODE_DEBUG_INFO:
		return pf->total_size < sizeof(jd_code_debug_info) ? SIZE_MAX : pf->total_size;
	case JD_CODE_UNWINDING_INFO:
		return pf->total_size < sizeof(jd_code_unwinding_info) ? SIZE_MAX : pf->total_size;
	default: return 0;
	}
}

/* One record at p (at file offset at).  Returns the bytes consumed (the
 * rest of the record goes to jd->file.skip), 0 when more are needed (*need) or
 * reading ends (jd->ended), -1 when out of memory. */
static ssize_t record(js_jitdump *jd, const uint8_t *p, size_t len, uint64_t at, size_t *need)
{
	if (len < sizeof(jd_prefix)) {
		*need = sizeof(jd_prefix);
		return 0;
	}
	jd_prefix pf;
	memcpy(&pf, p, sizeof pf);
	jd->last_at = at, jd->last_id = pf.id, jd->last_size = pf.total_size;
	if (pf.total_size < sizeof pf) {
		/* no way to the next record: perf stops here too */
		give_up(jd, at, "a record of %llu bytes", pf.total_size);
		return 0;
	}
	size_t head = head_size(&pf, p, len);
	bool info = pf.id == JD_CODE_DEBUG_INFO || pf.id == JD_CODE_UNWINDING_INFO;
	if (head == SIZE_MAX || (info && head > JS_MAX_JITDUMP_INFO) || head == 0 ||
	    (jd->until_ns && pf.timestamp > jd->until_ns && pf.id <= JD_CODE_UNWINDING_INFO)) {
		if (head == SIZE_MAX)
			jd->bad++;
		else if (head && info && head > JS_MAX_JITDUMP_INFO)
			jd->over_limit++;
		else if (head)
			jd->late++, drop_pending(jd);
		else if (pf.id != JD_CODE_CLOSE)
			jd->unknown++;
		jd->file.skip = pf.total_size - sizeof pf;
		return sizeof pf;
	}
	if (info && jd->want) /* a dump: the rest is read by offset, for a load kept */
		head = pf.id == JD_CODE_DEBUG_INFO ? sizeof(jd_code_debug_info)
						   : sizeof(jd_code_unwinding_info);
	if (len < head) {
		*need = head;
		return 0;
	}
	int rc = 0;
	switch (pf.id) {
	case JD_CODE_LOAD: rc = code_load(jd, p, head, pf.total_size); break;
	case JD_CODE_MOVE: rc = code_move(jd, p); break;
	case JD_CODE_DEBUG_INFO:
		rc = jd->want ? note_info(jd, p, pf.id, pf.total_size, at) : debug_info(jd, p, head);
		break;
	case JD_CODE_UNWINDING_INFO:
		rc = jd->want ? note_info(jd, p, pf.id, pf.total_size, at) : unwinding_info(jd, p, head);
		break;
	}
	if (rc)
		return -1;
	jd->file.skip = pf.total_size - head;
	return (ssize_t)head;
}

ssize_t js_jitdump_feed(js_jitdump *jd, const uint8_t *buf, size_t len, size_t *want)
{
	size_t i = 0;
	*want = 0;
	while (i < len && !jd->ended) {
		if (jd->file.skip) {
			size_t n = jd->file.skip < len - i ? (size_t)jd->file.skip : len - i;
			i += n;
			jd->file.skip -= n;
			continue;
		}
		size_t need = 0;
		ssize_t used = jd->have_header ? record(jd, buf + i, len - i, jd->file.off + i, &need)
					       : (ssize_t)header(jd, buf + i, len - i, &need);
		if (used < 0)
			return -1;
		if (!used) {
			*want = need;
			break;
		}
		i += (size_t)used;
	}
	return (ssize_t)i;
}

int js_jitdump_commit(js_jitdump *jd)
{
	uint64_t before = jd->ranges.changes;
	if (js_perfmap_commit(&jd->ranges))
		return -1;
	if (jd->ranges.changes != before)
		jd->changes++;
	return 0;
}

js_jd_code *js_jitdump_find(js_jitdump *jd, uint64_t pc)
{
	const js_pm_seg *g = js_perfmap_find(&jd->ranges, pc);
	return g && g->start < jd->n_code ? &jd->code[g->start] : NULL;
}

const js_jd_line *js_jitdump_line(const js_jd_code *c, uint64_t pc)
{
	size_t lo = FMT_COUNT_LE(c->lines, c->n_lines, addr, pc); /* the first row past pc */
	return lo && pc >= c->lo && pc < c->hi ? &c->lines[lo - 1] : NULL;
}

/* ---- CFI as a module ------------------------------------------------------------------ */

enum { S_NULL, S_TEXT, S_EH_FRAME, S_SYMTAB, S_STRTAB, S_SHSTRTAB, S_COUNT };

/* The ELF file `perf inject --jit` would write for c (genelf.c: .text at
 * 0x80, .eh_frame right after it, one symbol), moved to the code's real
 * address so that the .eh_frame's pc-relative pointers reach the code. */
static void write_twin(byte_buf *b, const js_jd_code *c, uint16_t machine)
{
	uint64_t bias = c->lo - JD_ELF_TEXT_ADDR, size = c->hi - c->lo;
	static const char shstr[] = "\0.text\0.eh_frame\0.symtab\0.strtab\0.shstrtab";
	size_t name_len = strlen(c->name) + 1;
	size_t eh_off = sizeof(Elf64_Ehdr), sym_off = (eh_off + c->eh_size + 7) & ~(size_t)7;
	size_t str_off = sym_off + 2 * sizeof(Elf64_Sym), shs_off = str_off + 1 + name_len;
	size_t sh_off = (shs_off + sizeof shstr + 7) & ~(size_t)7;
	elf_write_ehdr(b, &(elf_ehdr_desc){ .type = ET_EXEC,
					    .machine = machine,
					    .shoff = sh_off,
					    .shnum = S_COUNT,
					    .shstrndx = S_SHSTRTAB });
	buf_bytes(b, c->eh, c->eh_size);
	buf_zeros(b, sym_off - b->len);
	Elf64_Sym sym[2] = { { 0 } };
	sym[1] = (Elf64_Sym){ .st_name = 1,
			      .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			      .st_shndx = S_TEXT,
			      .st_value = c->lo,
			      .st_size = size };
	buf_bytes(b, sym, sizeof sym);
	buf_u8(b, 0);
	buf_bytes(b, c->name, name_len);
	buf_bytes(b, shstr, sizeof shstr);
	buf_zeros(b, sh_off - b->len);
	const Elf64_Shdr sh[S_COUNT] = {
		[S_TEXT] = { 1, SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, c->lo, 0, size, 0, 0, 16, 0 },
		[S_EH_FRAME] = { 7, SHT_PROGBITS, SHF_ALLOC, bias + JD_ELF_EH_FRAME_ADDR(size), eh_off,
				 c->eh_size, 0, 0, 8, 0 },
		[S_SYMTAB] = { 17, SHT_SYMTAB, 0, 0, sym_off, sizeof sym, S_STRTAB, 1, 8, sizeof(Elf64_Sym) },
		[S_STRTAB] = { 25, SHT_STRTAB, 0, 0, str_off, 1 + name_len, 0, 0, 1, 0 },
		[S_SHSTRTAB] = { 33, SHT_STRTAB, 0, 0, shs_off, sizeof shstr, 0, 0, 1, 0 },
	};
	buf_bytes(b, sh, sizeof sh);
}

js_image *js_jitdump_image(js_jitdump *jd, js_jd_code *c)
{
	if (c->img_tried || !c->eh)
		return c->img;
	c->img_tried = true;
	js_image *im = calloc(1, sizeof *im);
	if (!im)
		return NULL;
	byte_buf b;
	buf_init_grow(&b, JS_MAX_JITDUMP_CFI + (1 << 20));
	write_twin(&b, c, jd->machine);
	if (!buf_ok(&b)) {
		buf_free(&b);
		free(im);
		return NULL;
	}
	*im = (js_image){ .magic = JS_IMAGE_MAGIC,
			  .code_lo = c->lo,
			  .code_hi = c->hi,
			  .desc = JS_IMAGE_FROM_JITDUMP,
			  .live = true };
	/* a name of its own: libdwfl keeps the module of an earlier report
	 * with the same name and range, and the image of this code read before
	 * (then forgotten: jd->dead) would stay in use, freed */
	size_t idx = (size_t)(c - jd->code);
	snprintf(im->modname, sizeof im->modname, "[jitdump@%" PRIx64 ".%zu.%lu]", c->lo, idx, jd->resets);
	snprintf(im->label, sizeof im->label, "[jitdump %#" PRIx64 "]", c->lo);
	js_img_in in = { .bytes = b.p,
			 .size = b.len,
			 .addr = c->lo,
			 .hint_lo = c->lo,
			 .hint_hi = c->hi,
			 .machine = jd->machine };
	js_image_rewrite(&in, &im->out);
	buf_free(&b);
	if (!im->out.elf || !im->out.n_fdes) {
		js_image_free(im);
		return NULL;
	}
	c->img = im;
	return im;
}

bool js_jitdump_drop_cfi(js_jitdump *jd, uint64_t pc)
{
	js_jd_code *c = js_jitdump_find(jd, pc);
	if (!c || !c->img)
		return false;
	retire_image(jd, c->img);
	c->img = NULL; /* img_tried stays: it is not made again */
	free(c->eh);
	c->eh = NULL;
	c->eh_size = 0;
	jd->changes++;
	return true;
}

/* ---- reporting ------------------------------------------------------------------------ */

typedef struct span {
	uint64_t lo, hi;
	js_jd_code *code; /* NULL: another module's */
} span;

typedef struct spans {
	span *v;
	size_t n, cap;
} spans;

static bool add_span(spans *s, uint64_t lo, uint64_t hi, js_jd_code *c)
{
	if (!js_grow(&s->v, &s->cap, s->n, sizeof *s->v))
		return false;
	s->v[s->n++] = (span){ lo, hi, c };
	return true;
}

/* Another module's extent.  A module read from maps spans from its file's
 * first mapping to its last, and a file mapped twice far apart (node maps
 * its own text again, onto huge pages) spans much that is not its own: its
 * loadable segments are what it holds there. */
static int other_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
	(void)name, (void)start;
	const js_image *im = *userdata; /* (js_jit_of, without the rest of jitmodules.c) */
	if (im &&
	    im->magic == JS_IMAGE_MAGIC) /* GDB JIT images come from their list; ours are being chosen */
		return DWARF_CB_OK;
	Dwarf_Addr lo, hi, bias;
	dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	enum { HUGE_SPAN = 1u << 30 }; /* larger than any one library's segments */
	Elf *elf = hi - lo > HUGE_SPAN ? dwfl_module_getelf(mod, &bias) : NULL;
	size_t nph = 0, loads = 0;
	if (elf && !elf_getphdrnum(elf, &nph)) {
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			loads++;
			if (!add_span(arg, ph.p_vaddr + bias, ph.p_vaddr + bias + ph.p_memsz, NULL))
				return DWARF_CB_ABORT;
		}
	}
	if (loads)
		return DWARF_CB_OK;
	return add_span(arg, lo, hi, NULL) ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* By address; at one address the others' modules first, then the newest load. */
static int span_cmp(const void *a, const void *b)
{
	const span *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (!x->code || !y->code)
		return !y->code - !x->code;
	return x->code > y->code ? -1 : x->code < y->code;
}

/* Is c still the latest load at both its ends? */
static bool latest(js_jitdump *jd, const js_jd_code *c)
{
	return js_jitdump_find(jd, c->lo) == c && js_jitdump_find(jd, c->hi - 1) == c;
}

bool js_jitdump_report(js_jitdump *jd, const js_jit *j, Dwfl *dwfl)
{
	jd->reported_cfi = jd->with_cfi;
	spans s = { 0 };
	bool lost = false;
	dwfl_getmodules(dwfl, other_module, &s, 0);
	for (size_t i = 0; j && i < j->n_img; i++)
		if (j->img[i]->reported)
			add_span(&s, j->img[i]->out.lo, j->img[i]->out.hi, NULL);
	for (size_t i = 0; i < jd->n_code; i++) {
		js_jd_code *c = &jd->code[i];
		if (c->img) {
			c->was = c->img->reported;
			c->img->reported = false;
		}
		if (c->eh && latest(jd, c) && js_jitdump_image(jd, c))
			add_span(&s, c->lo, c->hi, c);
	}
	if (s.n > 1)
		qsort(s.v, s.n, sizeof *s.v, span_cmp);
	/* a sweep: a load is reported when it overlaps nothing kept before it
	 * (others' modules are always kept) and nothing after it */
	uint64_t reach = 0;
	size_t reported = 0;
	for (size_t i = 0; i < s.n; i++) {
		span *x = &s.v[i];
		bool free_here = x->lo >= reach && (i + 1 == s.n || s.v[i + 1].lo >= x->hi);
		if (x->hi > reach)
			reach = x->hi;
		if (!x->code || !free_here || reported >= JS_MAX_MODULES)
			continue;
		js_image *im = x->code->img;
		Dwfl_Module *mod = dwfl_report_module(dwfl, im->modname, im->out.lo, im->out.hi);
		if (!mod)
			continue;
		void **ud;
		dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
		*ud = im;
		im->reported = true;
		reported++;
	}
	free(s.v);
	for (size_t i = 0; i < jd->n_code; i++)
		lost |= jd->code[i].img && jd->code[i].was && !jd->code[i].img->reported;
	return lost;
}

/* ---- the file --------------------------------------------------------------------------- */

static const char *kind_name(uint32_t id)
{
	static const char *const names[] = { "CODE_LOAD", "CODE_MOVE", "CODE_DEBUG_INFO", "CODE_CLOSE",
					     "CODE_UNWINDING_INFO" };
	return id < sizeof names / sizeof names[0] ? names[id] : "unknown";
}

/* After a read that reached the end of the file: does its last record run
 * past that end, not read?  (A CODE_LOAD's name read, its code cut, is
 * used: its code is never read.  A DEBUG_INFO or UNWINDING_INFO a dump
 * steps over, to read it by offset for a load after it, has no load.) */
static void note_cut(js_jitdump *jd)
{
	const js_follow *f = &jd->file;
	jd->cut = false;
	if (!f->at_end || jd->ended)
		return;
	if (!jd->have_header && f->off < f->size) {
		jd->cut = true;
		snprintf(jd->cut_what, sizeof jd->cut_what,
			 "its header is cut short at byte %" PRIu64 ": the file is not read", f->size);
		return;
	}
	bool info = jd->last_id == JD_CODE_DEBUG_INFO || jd->last_id == JD_CODE_UNWINDING_INFO;
	if (f->off < f->size && !f->skip) { /* a record whose head is not all there */
		jd->cut = true;
		if (f->size - f->off < sizeof(jd_prefix) || jd->last_at != f->off)
			snprintf(jd->cut_what, sizeof jd->cut_what,
				 "the record at byte %" PRIu64 " is cut short at byte %" PRIu64 ": not read",
				 f->off, f->size);
		else
			snprintf(jd->cut_what, sizeof jd->cut_what,
				 "the %s record of %" PRIu32 " bytes at byte %" PRIu64
				 " runs past the end of the file at byte %" PRIu64 ": not read",
				 kind_name(jd->last_id), jd->last_size, jd->last_at, f->size);
	} else if (f->skip && info && jd->want) {
		jd->cut = true;
		snprintf(jd->cut_what, sizeof jd->cut_what,
			 "the %s record of %" PRIu32 " bytes at byte %" PRIu64
			 " runs past the end of the file at byte %" PRIu64 ": not read",
			 kind_name(jd->last_id), jd->last_size, jd->last_at, f->size);
	}
}

/* js_follow's reader: the records in buf, counted as read. */
static ssize_t feed_file(void *ctx, const uint8_t *buf, size_t len, size_t fresh, size_t *need, bool *stop)
{
	js_jitdump *jd = ctx;
	jd->reads++;
	jd->bytes += fresh;
	ssize_t used = js_jitdump_feed(jd, buf, len, need);
	*stop = jd->ended;
	return used;
}

/* A symbolic link is followed only in a path the user gave, or the
 * kernel's own link to a mapped file (/proc/PID/map_files). */
static js_follow_path follow_path(const js_jitdump *jd)
{
	return (js_follow_path){ jd->path, jd->owner < 0 || strstr(jd->path, "/map_files/"), jd->owner,
				 "--jitdump FILE" };
}

int js_jitdump_refresh(js_jitdump *jd, js_err *why)
{
	js_follow_path p = follow_path(jd);
	struct stat st;
	enum js_follow_news news;
	if (js_follow_look(&jd->file, &p, jd->found, jd->ended, &st, &news, why))
		return -1;
	uint64_t before = jd->changes; /* a re-read from the start is a change too */
	if (news == JS_FOLLOW_NOTHING)
		return 0;
	if (news == JS_FOLLOW_NEW_FILE) {
		if (jd->found)
			jd->rereads++;
		reset(jd);
	}
	int rc = js_follow_read(&jd->file, &p, &st, &jd->found, feed_file, jd, why);
	note_cut(jd);
	if (js_jitdump_commit(jd))
		rc = js_fail(why, JS_EXIT_FAILURE, ENOMEM, "%s: %s", jd->path, strerror(ENOMEM));
	if (rc)
		return -1;
	return jd->changes != before;
}

int js_jitdump_read_for(js_jitdump *jd, const js_span *v, size_t n, js_err *why)
{
	if (js_spans_set(&jd->want, &jd->n_want, v, n))
		return js_fail(why, JS_EXIT_FAILURE, ENOMEM, "%s: %s", jd->path, strerror(ENOMEM));
	reset(jd); /* read from the start, as the first time */
	js_follow_path p = follow_path(jd);
	int rc = js_follow_reread(&jd->file, &p, -1, 0, &jd->found, feed_file, jd, why);
	note_cut(jd);
	if (js_jitdump_commit(jd))
		rc = js_fail(why, JS_EXIT_FAILURE, ENOMEM, "%s: %s", jd->path, strerror(ENOMEM));
	return rc ? -1 : 0;
}

/* ---- where it is ------------------------------------------------------------------------- */

bool js_jitdump_name_ok(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (strncmp(base, "jit-", 4))
		return false;
	size_t digits = strspn(base + 4, "0123456789");
	return digits && !strcmp(base + 4 + digits, ".dump");
}

bool js_jitdump_path_live(pid_t pid, char *out, size_t len)
{
	char path[64], want[40] = "", pm[4200];
	/* the pid the writer knows itself by names its file (NSpid) */
	js_perfmap_path_live(pid, pm, sizeof pm);
	int ns;
	const char *b = strrchr(pm, '/');
	if (b && sscanf(b, "/perf-%d.map", &ns) == 1)
		snprintf(want, sizeof want, "/jit-%d.dump", ns);
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	static const char deleted[] = " (deleted)";
	char line[4400], best[sizeof line] = "", range[64] = "";
	bool exact = false, gone = false;
	while (fgets(line, sizeof line, f)) {
		js_maps_line m;
		line[strcspn(line, "\n")] = 0;
		if (!js_maps_parse(line, strlen(line), &m) || m.perms[2] != 'x')
			continue;
		char *file = (char *)m.path; /* into line */
		int end = (int)m.range_len;
		size_t n = strlen(file), d = sizeof deleted - 1;
		/* a dump its writer unlinked (node --perf-prof-delete-file) is
		 * still there through the mapping */
		bool unlinked = n > d && !strcmp(file + n - d, deleted);
		if (unlinked)
			file[n -= d] = 0;
		if (file[0] != '/' || !js_jitdump_name_ok(file))
			continue;
		size_t w = strlen(want);
		bool is_ours = w && n >= w && !strcmp(file + n - w, want);
		if (exact && !is_ours)
			continue;
		exact |= is_ours;
		gone = unlinked;
		snprintf(best, sizeof best, "%s", file);
		snprintf(range, sizeof range, "%.*s", end, line);
	}
	fclose(f);
	if (!best[0])
		return false;
	if (gone)
		snprintf(out, len, "/proc/%d/map_files/%s", (int)pid, range);
	else
		snprintf(out, len, "/proc/%d/root%s", (int)pid, best);
	return true;
}
