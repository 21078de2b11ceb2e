/* SPDX-License-Identifier: MIT */
/* desc.c - reading the GDB JIT descriptor and its list (see desc.h and
 * docs/OUTSIDE_READER.md, "Reading a snapshot").
 */
#include "jit/desc.h"
#include "formats/clock.h"
#include "base/grow.h"
#include "formats/gdbjit.h"
#include "base/bounds.h"
#include "base/err.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void sleep_ns(uint64_t ns)
{
	struct timespec t = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
	nanosleep(&t, NULL);
}

/* What was wrong with the list, one clause of the descriptor's note. */
#define dnote(d, ...) js_note((d)->note, sizeof(d)->note, __VA_ARGS__)

/* ---- the set of entries seen, for cycle detection ---------------------------- */

typedef struct aset {
	uint64_t *v; /* 0 = empty slot (entry addresses are never 0) */
	size_t cap, n;
} aset;

static size_t slot_of(uint64_t a, size_t cap)
{
	return (size_t)((a * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

/* 1 added, 0 already there, -1 out of memory */
static int aset_add(aset *s, uint64_t a)
{
	if (2 * (s->n + 1) > s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		uint64_t *v = calloc(cap, sizeof *v);
		if (!v)
			return -1;
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->v[i])
				continue;
			size_t k = slot_of(s->v[i], cap);
			while (v[k])
				k = (k + 1) & (cap - 1);
			v[k] = s->v[i];
		}
		free(s->v);
		s->v = v;
		s->cap = cap;
	}
	size_t k = slot_of(a, s->cap);
	while (s->v[k]) {
		if (s->v[k] == a)
			return 0;
		k = (k + 1) & (s->cap - 1);
	}
	s->v[k] = a;
	s->n++;
	return 1;
}

/* ---- the walk ------------------------------------------------------------------- */

static int push(js_desc *d, const js_entry *e)
{
	if (!js_grow(&d->ents, &d->cap, d->n, sizeof *d->ents))
		return -1;
	d->ents[d->n++] = *e;
	return 0;
}

enum { WALK_OK = 0, WALK_TORN = 1, WALK_OOM = -1 };

/* Walk the list from `first`, at most `max` entries.  Entries carry the
 * extension's fields when `ext`.  WALK_TORN (with a note) when an entry is
 * unreadable, the list is longer than max, or it loops.  `counted`: max is
 * the length the list claims (the extension's n_entries, under its
 * sequence lock), so a loop shows as a list longer than max and needs no
 * set of the entries seen; the arrays are sized for max at once (at a
 * million blobs the set and the doublings were a third of the walk). */
static int walk(js_mem *m, js_desc *d, uint64_t first, size_t max, bool ext, bool counted)
{
	aset seen = { 0 };
	int rc = WALK_OK;
	d->n = 0;
	if (counted) {
		js_entry *v = d->cap < max + 1 ? realloc(d->ents, (max + 1) * sizeof *v) : NULL;
		if (v) {
			d->ents = v;
			d->cap = max + 1;
		}
	}
	js_mem_flush(m); /* entries sit close together: read them by pages, as they are now */
	for (uint64_t p = first; p;) {
		if (d->n >= max) {
			dnote(d, "the entry list is longer than %zu entries: read up to there", max);
			rc = WALK_TORN;
			break;
		}
		int added = counted ? 1 : aset_add(&seen, p);
		if (added < 0) {
			rc = WALK_OOM;
			break;
		}
		if (!added) {
			dnote(d, "the entry list loops back to %#" PRIx64 ": read up to there", p);
			rc = WALK_TORN;
			break;
		}
		gdbjit_entry e;
		memset(&e, 0, sizeof e);
		if (js_mem_read_cached(m, p, &e, ext ? sizeof e : GDBJIT_STD_ENTRY_SIZE)) {
			dnote(d, "entry at %#" PRIx64 " is unreadable: read up to there", p);
			rc = WALK_TORN;
			break;
		}
		js_entry je = { p, e.symfile_addr, e.symfile_size, ext, e.reg_seq, e.code_lo, e.code_hi };
		if (push(d, &je)) {
			rc = WALK_OOM;
			break;
		}
		p = e.next_entry;
	}
	free(seen.v);
	return rc;
}

static bool has_extension(const js_desc *d, const gdbjit_descriptor *h)
{
	return (d->sym_size == 0 || d->sym_size >= sizeof *h) &&
	       !memcmp(h->magic, GDBJIT_EXT_MAGIC, GDBJIT_EXT_MAGIC_LEN) &&
	       h->ext_version == GDBJIT_EXT_VERSION && h->sizeof_descriptor >= sizeof *h &&
	       h->sizeof_entry >= sizeof(gdbjit_entry);
}

/* The target's memory cannot be read (st: js_mem_read's errno value): the
 * message the run fails with, when no descriptor can be read. */
static int unreadable(js_err *why, int st)
{
	if (st == ENOMEM)
		return js_fail(why, JS_EXIT_FAILURE, ENOMEM, "out of memory");
	return js_fail(why, st == ESRCH ? JS_EXIT_NO_PROCESS : JS_EXIT_FAILURE, st, "%s", strerror(st));
}

/* Read once, accepting whatever the list holds now. */
static int read_as_is(js_mem *m, js_desc *d, const gdbjit_descriptor *h, desc_state state, js_err *why)
{
	d->first_entry = h->first_entry;
	d->seq = h->seq;
	d->reclaim_seq = h->reclaim_seq;
	d->n_claimed = h->n_entries;
	d->state = state;
	if (walk(m, d, h->first_entry, JS_MAX_ENTRIES, d->ext, false) == WALK_OOM)
		return unreadable(why, ENOMEM);
	return 0;
}

static int read_seqlocked(js_mem *m, js_desc *d, gdbjit_descriptor *h, js_err *why)
{
	uint64_t deadline = now_ns() + (d->budget_ns ? d->budget_ns : JS_SNAPSHOT_BUDGET_NS);
	const uint64_t seq_at = d->addr + offsetof(gdbjit_descriptor, seq);
	bool saw_odd = false;
	for (int tries = 0; tries < JS_SNAPSHOT_TRIES && now_ns() < deadline; tries++) {
		uint64_t s1, s2;
		int st = js_mem_read_u64(m, seq_at, &s1);
		if (st)
			return unreadable(why, st);
		if (s1 & 1) { /* a change is under way: back off rather than spin */
			saw_odd = true;
			sleep_ns(JS_ODD_SEQ_BACKOFF_NS);
			continue;
		}
		if ((st = js_mem_read(m, d->addr, h, sizeof *h)))
			return unreadable(why, st);
		if (h->seq != s1)
			continue;
		size_t max = h->n_entries < JS_MAX_ENTRIES ? (size_t)h->n_entries : JS_MAX_ENTRIES;
		char keep[sizeof d->note];
		memcpy(keep, d->note, sizeof keep);
		int w = walk(m, d, h->first_entry, max, true, true);
		if (w == WALK_OOM)
			return unreadable(why, ENOMEM);
		memcpy(d->note, keep, sizeof keep); /* a torn walk's note is not news */
		/* Separate system calls are ordered: this read follows the walk's. */
		if ((st = js_mem_read_u64(m, seq_at, &s2)))
			return unreadable(why, st);
		if (s2 != s1 || w != WALK_OK)
			continue;
		d->first_entry = h->first_entry;
		d->seq = s1;
		d->reclaim_seq = h->reclaim_seq;
		d->n_claimed = h->n_entries;
		d->state = DESC_VALIDATED;
		if (d->n != h->n_entries)
			dnote(d, "n_entries says %" PRIu64 ", the list has %zu", h->n_entries, d->n);
		return 0;
	}
	/* A debugger holding the writer in __jit_debug_register_code keeps seq
	 * odd, and so does a writer that died mid-change: read it as it is. */
	int st = js_mem_read(m, d->addr, h, sizeof *h);
	if (st)
		return unreadable(why, st);
	if ((st = read_as_is(m, d, h, DESC_BEST_EFFORT, why)))
		return st;
	if (!d->note[0])
		dnote(d, saw_odd ? "seq stayed odd (a change under way, a debugger holding the writer, or a "
				   "writer that died mid-change): read without validation"
				 : "no consistent snapshot within the retry budget: read without validation");
	return 0;
}

int js_desc_read(js_mem *m, js_desc *d, read_mode mode, js_err *why)
{
	gdbjit_descriptor h;
	memset(&h, 0, sizeof h);
	d->note[0] = 0;
	d->n = 0;
	d->state = DESC_EMPTY;
	d->ext = false;
	int st = js_mem_read(m, d->addr, &h, GDBJIT_STD_DESCRIPTOR_SIZE);
	if (st)
		return unreadable(why, st);
	d->version = h.version;
	if (h.version != GDBJIT_VERSION) {
		dnote(d, "descriptor version %u (only 1 exists): not read", h.version);
		return 0;
	}
	/* The extension, when the symbol is big enough and the read succeeds. */
	gdbjit_descriptor full;
	bool foreign_writer = false;
	if (!js_mem_read(m, d->addr, &full, sizeof full) && has_extension(d, &full)) {
		/* Another JIT writes the list without the sequence lock, and its
		 * entries lack the extension: read it as a plain list. */
		foreign_writer = full.flags & GDBJIT_FLAG_FOREIGN_WRITER;
		d->ext = !foreign_writer;
		d->sizeof_entry = full.sizeof_entry;
		if (d->ext)
			h = full;
	}
	if (!d->ext)
		h.seq = h.reclaim_seq = h.n_entries = 0;
	if (foreign_writer)
		dnote(d, "another JIT writes this jitunwind descriptor's list without its sequence lock "
			 "(descriptor flags): read as a plain GDB JIT list, with the process stopped");
	if (!d->ext && mode == READ_RUNNING) {
		/* A list without the seqlock is read with the target stopped
		 * (js_jit_has_plain tells the caller); walking it now would be
		 * work thrown away. */
		return 0;
	}
	if (!d->ext)
		return read_as_is(m, d, &h, DESC_STOPPED, why);
	if (mode == READ_RUNNING)
		return read_seqlocked(m, d, &h, why);
	if ((st = read_as_is(m, d, &h, (h.seq & 1) ? DESC_BEST_EFFORT : DESC_STOPPED, why)))
		return st;
	if ((h.seq & 1) && !d->note[0])
		dnote(d,
		      "seq %" PRIu64 " is odd: the writer was stopped in the middle of a change; read as is",
		      h.seq);
	return 0;
}

int js_desc_seq(js_mem *m, const js_desc *d, uint64_t *seq)
{
	return js_mem_read_u64(m, d->addr + offsetof(gdbjit_descriptor, seq), seq);
}

bool js_desc_copies_valid(js_mem *m, const js_desc *d)
{
	if (!d->ext || d->state != DESC_VALIDATED)
		return true;
	uint64_t reclaim;
	if (js_mem_read_u64(m, d->addr + offsetof(gdbjit_descriptor, reclaim_seq), &reclaim))
		return false;
	return reclaim <= d->seq;
}

void js_desc_free(js_desc *d)
{
	free(d->ents);
	d->ents = NULL;
	d->n = d->cap = 0;
}

const char *js_desc_state_name(desc_state s)
{
	switch (s) {
	case DESC_EMPTY: return "empty";
	case DESC_VALIDATED: return "validated";
	case DESC_STOPPED: return "stopped";
	case DESC_BEST_EFFORT: return "best-effort";
	}
	return "?";
}
