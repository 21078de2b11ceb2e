/* SPDX-License-Identifier: MIT */
/* frames.c - CPython's interpreters, threads and frame chains, read from
 * outside the process (frames.h). */
#include "python/frames.h"

#include "base/bounds.h"
#include "base/grow.h"
#include "python/linetable.h"
#include "target/symfind.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 3.13 and later: _Py_DebugOffsets at the start of _PyRuntime. */
#define DEBUG_OFFSETS_COOKIE "xdebugpy"

/* 3.11's PyASCIIObject.state: interned:2, kind:3, compact:1, ascii:1,
 * ready:1, from bit 0 (Include/cpython/unicodeobject.h). */
#define STATE_KIND(s) (((s) >> 2) & 7u)
#define STATE_COMPACT(s) (((s) >> 5) & 1u)
#define STATE_ASCII(s) (((s) >> 6) & 1u)
#define STATE_READY(s) (((s) >> 7) & 1u)

/* _PyInterpreterFrame.owner of a generator's or coroutine's frame; 3.13:
 * of the shim frame an activation of the eval loop pushes first, behind
 * its entry frame. */
#define FRAME_OWNED_BY_GENERATOR 1
#define FRAME_OWNED_BY_CSTACK 3
/* sizeof(_Py_CODEUNIT) */
#define CODEUNIT 2

/* The most bytes of a frame, a code object's head or a string's head read
 * at once: the layout's offsets must fall inside. */
enum { HEAD_MAX = 256, STRS_CHUNK = 64 << 10 };

/* A frame a read of a running thread's chain went through (frames.h). */
struct js_py_seen {
	uint64_t addr, code, previous, instr;
	bool unreadable; /* the frame a read stopped at, unreadable itself */
};

/* A code object decoded, kept across walks: a code object never changes
 * what is read here, but it may be freed and its memory reused, so a
 * later walk reads its head again (one read) and keeps what was decoded
 * only when the head still points to the same name, file and line table
 * and holds the same numbers. */
struct js_py_code {
	uint64_t addr; /* 0: an empty slot */
	uint64_t walk; /* the walk that last read its head */
	uint64_t qualname_at, filename_at, linetable_at;
	const char *qualname, *filename;
	const uint8_t *linetable;
	size_t linetable_n;
	int firstlineno, firsttraceable;
	long units; /* of bytecode */
};

/* Brent's cycle detection: a chain that comes back to an address it has
 * passed is caught within twice its length, in constant memory. */
typedef struct cycle {
	uint64_t saved;
	unsigned long power, lam;
} cycle;

static bool cycle_step(cycle *c, uint64_t addr)
{
	if (addr == c->saved)
		return true;
	if (++c->lam == c->power) {
		c->saved = addr;
		c->power *= 2;
		c->lam = 0;
	}
	return false;
}

static int64_t off(const js_py *py, enum js_py_field f)
{
	return py->lay.off[f];
}

/* A read of the target's memory within the walk's budget: 0 or an errno
 * value.  Frames live in a thread's data stack, a few pages that hold the
 * whole chain: they are read through the page cache (`cached`), which
 * reads a run of pages at a time.  The rest (thread states, code objects,
 * strings) lies scattered over the heap, where a run of pages a read
 * would copy pages no other read wants: it is read exactly. */
static int rd_how(js_py *py, uint64_t addr, void *buf, size_t len, bool cached)
{
	if (py->stats.reads >= JS_PY_MAX_READS)
		return E2BIG;
	py->stats.reads++;
	py->stats.bytes += len;
	if (!addr)
		return EFAULT;
	return cached ? js_mem_read_cached(py->mem, addr, buf, len) : js_mem_read(py->mem, addr, buf, len);
}

static int rd(js_py *py, uint64_t addr, void *buf, size_t len)
{
	return rd_how(py, addr, buf, len, false);
}

static int rd_u64(js_py *py, uint64_t addr, uint64_t *v)
{
	return rd(py, addr, v, sizeof *v);
}

static uint64_t u64_at(const uint8_t *b, int64_t o)
{
	uint64_t v;
	memcpy(&v, b + o, sizeof v);
	return v;
}

static uint32_t u32_at(const uint8_t *b, int64_t o)
{
	uint32_t v;
	memcpy(&v, b + o, sizeof v);
	return v;
}

/* An object pointer must be aligned and, when its type object is known,
 * point to an object of that type: what tells a wild pointer from one. */
static bool object_ok(const uint8_t *head, uint64_t addr, uint64_t type, const js_py *py)
{
	return addr % 8 == 0 && (!type || u64_at(head, off(py, JS_PY_OB_TYPE)) == type);
}

/* UCS-1/2/4 character c as UTF-8 into out (room for 4); its length. */
static size_t utf8(uint32_t c, char *out)
{
	if (c < 0x80) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	if (c > 0x10ffff)
		c = 0xfffd;
	out[0] = (char)(0xf0 | c >> 18);
	out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* The str at addr (a compact one: every name and file name of a code
 * object is), cut at JS_PY_MAX_STRING characters, as UTF-8 kept in the
 * walk's strings.  NULL with why[n] when it is not such a str. */
static const char *read_str(js_py *py, uint64_t addr, char *why, size_t n)
{
	uint8_t head[HEAD_MAX];
	size_t ascii_size = (size_t)off(py, JS_PY_STR_ASCII_SIZE);
	int e = rd(py, addr, head, ascii_size);
	if (e) {
		js_note(why, n, "str at 0x%llx unreadable (%s)", (unsigned long long)addr, strerror(e));
		return NULL;
	}
	uint32_t state = u32_at(head, off(py, JS_PY_STR_STATE));
	uint64_t length = u64_at(head, off(py, JS_PY_STR_LENGTH));
	bool ready = py->lay.minor >= 12 || STATE_READY(state); /* 3.12 has no ready bit */
	if (!object_ok(head, addr, py->unicode_type, py) || !STATE_COMPACT(state) || !ready ||
	    length > INT64_MAX) {
		js_note(why, n, "0x%llx is not a compact str", (unsigned long long)addr);
		return NULL;
	}
	unsigned kind = STATE_KIND(state);
	if ((STATE_ASCII(state) && kind != 1) || (kind != 1 && kind != 2 && kind != 4)) {
		js_note(why, n, "str at 0x%llx has kind %u", (unsigned long long)addr, kind);
		return NULL;
	}
	size_t chars = length < JS_PY_MAX_STRING ? (size_t)length : JS_PY_MAX_STRING;
	uint64_t data = addr + (STATE_ASCII(state) ? ascii_size : (size_t)off(py, JS_PY_STR_COMPACT_SIZE));
	uint8_t raw[JS_PY_MAX_STRING * 4];
	e = chars ? rd(py, data, raw, chars * kind) : 0;
	if (e) {
		js_note(why, n, "str data at 0x%llx unreadable (%s)", (unsigned long long)data, strerror(e));
		return NULL;
	}
	char out[JS_PY_MAX_STRING * 4 + 1];
	size_t len = 0;
	for (size_t i = 0; i < chars; i++) {
		uint32_t c = kind == 1   ? raw[i]
			     : kind == 2 ? (uint32_t)raw[2 * i] | (uint32_t)raw[2 * i + 1] << 8
					 : u32_at(raw, 4 * (int64_t)i);
		len += utf8(c, out + len);
	}
	out[len] = 0;
	const char *s = js_strs_keep(&py->strs, out, len, STRS_CHUNK);
	py->kept += len + 1;
	if (!s)
		js_note(why, n, "out of memory");
	return s;
}

/* The bytes object at addr (a code object's co_linetable), kept. */
static const uint8_t *read_bytes(js_py *py, uint64_t addr, size_t *len, char *why, size_t n)
{
	uint8_t head[HEAD_MAX];
	int e = rd(py, addr, head, (size_t)off(py, JS_PY_BYTES_SVAL));
	if (e) {
		js_note(why, n, "bytes at 0x%llx unreadable (%s)", (unsigned long long)addr, strerror(e));
		return NULL;
	}
	uint64_t size = u64_at(head, off(py, JS_PY_VAR_SIZE));
	if (!object_ok(head, addr, py->bytes_type, py) || size > JS_PY_MAX_LINETABLE) {
		js_note(why, n, "0x%llx is not a line table", (unsigned long long)addr);
		return NULL;
	}
	uint8_t *b = js_strs_alloc(&py->strs, size ? (size_t)size : 1, STRS_CHUNK);
	py->kept += (size_t)size;
	if (!b) {
		js_note(why, n, "out of memory");
		return NULL;
	}
	e = size ? rd(py, addr + (uint64_t)off(py, JS_PY_BYTES_SVAL), b, (size_t)size) : 0;
	if (e) {
		js_note(why, n, "line table at 0x%llx unreadable (%s)", (unsigned long long)addr,
			strerror(e));
		return NULL;
	}
	*len = (size_t)size;
	return b;
}

/* The code object at addr, read once a walk. */
static const struct js_py_code *read_code(js_py *py, uint64_t addr, char *why, size_t n)
{
	struct js_py_code *c = &py->codes[(addr >> 4) % JS_PY_CODE_CACHE];
	if (c->addr == addr && addr && c->walk == py->walks) {
		py->stats.code_hits++;
		return c;
	}
	uint8_t head[HEAD_MAX];
	int e = rd(py, addr, head, (size_t)off(py, JS_PY_CO_CODE));
	if (e) {
		js_note(why, n, "code object at 0x%llx unreadable (%s)", (unsigned long long)addr,
			strerror(e));
		return NULL;
	}
	if (!object_ok(head, addr, py->code_type, py)) {
		js_note(why, n, "0x%llx is not a code object", (unsigned long long)addr);
		return NULL;
	}
	struct js_py_code k = {
		.addr = addr,
		.walk = py->walks,
		.qualname_at = u64_at(head, off(py, JS_PY_CO_QUALNAME)),
		.filename_at = u64_at(head, off(py, JS_PY_CO_FILENAME)),
		.linetable_at = u64_at(head, off(py, JS_PY_CO_LINETABLE)),
		.firstlineno = (int)u32_at(head, off(py, JS_PY_CO_FIRSTLINENO)),
		.firsttraceable = off(py, JS_PY_CO_FIRSTTRACEABLE) < 0
					  ? 0
					  : (int)u32_at(head, off(py, JS_PY_CO_FIRSTTRACEABLE)),
		.units = (long)u64_at(head, off(py, JS_PY_VAR_SIZE)),
	};
	if (c->addr == addr && c->qualname_at == k.qualname_at && c->filename_at == k.filename_at &&
	    c->linetable_at == k.linetable_at && c->firstlineno == k.firstlineno &&
	    c->firsttraceable == k.firsttraceable && c->units == k.units) {
		c->walk = py->walks;
		py->stats.code_kept++;
		return c;
	}
	c->addr = 0;
	k.qualname = read_str(py, k.qualname_at, why, n);
	k.filename = k.qualname ? read_str(py, k.filename_at, why, n) : NULL;
	k.linetable = k.filename ? read_bytes(py, k.linetable_at, &k.linetable_n, why, n) : NULL;
	if (!k.linetable)
		return NULL;
	*c = k;
	return c;
}

/* The bytes of a frame read: up to the last field read. */
static size_t frame_span(const js_py *py)
{
	static const enum js_py_field fields[] = { JS_PY_FR_CODE, JS_PY_FR_PREVIOUS, JS_PY_FR_PREV_INSTR,
						   JS_PY_FR_IS_ENTRY, JS_PY_FR_OWNER };
	int64_t end = 0;
	for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
		if (off(py, fields[i]) + 8 > end)
			end = off(py, fields[i]) + 8;
	return (size_t)end;
}

/* One frame of a chain into f; *previous is the next one out.  0, 1 to
 * leave it out (not started yet, as CPython's own walkers do), 2 for
 * 3.13's shim frame (left out too: the frame before it is an entry
 * frame), -1 with why[n] (-2 when the frame itself is unreadable).  raw
 * (or NULL) gets the frame's bytes as read. */
static int read_frame(js_py *py, uint64_t addr, js_py_frame *f, uint64_t *previous, char *why, size_t n,
		      uint8_t *raw)
{
	uint8_t buf[HEAD_MAX], *b = raw ? raw : buf;
	int e = addr % 8 ? EFAULT : rd_how(py, addr, b, frame_span(py), true);
	if (e) {
		js_note(why, n, "frame at 0x%llx unreadable (%s)", (unsigned long long)addr, strerror(e));
		return -2;
	}
	*previous = u64_at(b, off(py, JS_PY_FR_PREVIOUS));
	uint8_t owner = b[off(py, JS_PY_FR_OWNER)];
	if (off(py, JS_PY_FR_IS_ENTRY) < 0 && owner == FRAME_OWNED_BY_CSTACK)
		return 2;
	const struct js_py_code *c = read_code(py, u64_at(b, off(py, JS_PY_FR_CODE)), why, n);
	if (!c)
		return -1;
	uint64_t code = c->addr + (uint64_t)off(py, JS_PY_CO_CODE);
	uint64_t instr = u64_at(b, off(py, JS_PY_FR_PREV_INSTR));
	long unit = (long)((int64_t)(instr - code) / CODEUNIT);
	if (owner != FRAME_OWNED_BY_GENERATOR && unit < c->firsttraceable)
		return 1;
	*f = (js_py_frame){ .qualname = c->qualname,
			    .filename = c->filename,
			    .entry = off(py, JS_PY_FR_IS_ENTRY) >= 0 && b[off(py, JS_PY_FR_IS_ENTRY)] != 0,
			    .addr = addr };
	f->line = unit >= -1 && unit < c->units
			  ? js_py_line(c->linetable, c->linetable_n, c->firstlineno, unit)
			  : 0;
	return 0;
}

/* A thread's chain, from its innermost frame; on any failure the thread
 * keeps no frame and says why. */
static void read_chain(js_py *py, js_py_thread *t, uint64_t frame)
{
	cycle cy = { 0, 1, 0 };
	t->first = py->n_frames;
	py->n_seen = 0;
	for (unsigned depth = 0; frame; depth++) {
		const char *fail = NULL;
		if (depth >= JS_PY_MAX_FRAMES)
			fail = "deeper than the bound";
		else if (cycle_step(&cy, frame))
			fail = "loops";
		else if (!js_grow(&py->frames, &py->cap_frames, py->n_frames, sizeof *py->frames))
			fail = "out of memory";
		else if (py->running && !js_grow(&py->seen, &py->cap_seen, py->n_seen, sizeof *py->seen))
			fail = "out of memory";
		char why[160] = "";
		uint8_t raw[HEAD_MAX];
		uint64_t at = frame;
		int r = fail ? -1
			     : read_frame(py, frame, &py->frames[py->n_frames], &frame, why, sizeof why, raw);
		/* a read that stopped at a frame checks that frame too: a
		 * chunk of the stack mapped again reads as zeros until the
		 * thread fills it, and the frames around it may be the same
		 * as before by the time of the check */
		if (r < 0 && !fail && py->running)
			py->seen[py->n_seen++] = (struct js_py_seen){
				.addr = at,
				.code = r == -2 ? 0 : u64_at(raw, off(py, JS_PY_FR_CODE)),
				.previous = r == -2 ? 0 : u64_at(raw, off(py, JS_PY_FR_PREVIOUS)),
				.instr = r == -2 ? 0 : u64_at(raw, off(py, JS_PY_FR_PREV_INSTR)),
				.unreadable = r == -2,
			};
		if (r < 0) {
			snprintf(t->warning, sizeof t->warning, "frame chain dropped at frame %u: %s", depth,
				 fail ? fail : why);
			py->n_frames = t->first;
			t->n = 0;
			return;
		}
		if (py->running)
			py->seen[py->n_seen++] = (struct js_py_seen){
				.addr = at,
				.code = u64_at(raw, off(py, JS_PY_FR_CODE)),
				.previous = u64_at(raw, off(py, JS_PY_FR_PREVIOUS)),
				.instr = u64_at(raw, off(py, JS_PY_FR_PREV_INSTR)),
			};
		if (r == 0)
			py->n_frames++;
		if (r == 2 && py->n_frames > t->first)
			py->frames[py->n_frames - 1].entry = true;
	}
	t->n = py->n_frames - t->first;
}

/* The innermost frame of thread state ts, now (not through the page
 * cache): 0 or an errno value. */
/* The innermost frame, from a thread state's cframe field (3.11: the C
 * frame that points to it; 3.13: the frame itself). */
static int frame_of_cframe(js_py *py, uint64_t cframe, uint64_t *frame)
{
	*frame = 0;
	if (cframe && off(py, JS_PY_CF_CURRENT_FRAME) >= 0)
		return rd_u64(py, cframe + (uint64_t)off(py, JS_PY_CF_CURRENT_FRAME), frame);
	*frame = cframe; /* 3.13: the thread state holds the frame itself */
	return 0;
}

static int current_frame(js_py *py, uint64_t ts, uint64_t *frame)
{
	uint64_t cframe = 0;
	*frame = 0;
	int e = rd_u64(py, ts + (uint64_t)off(py, JS_PY_TS_CFRAME), &cframe);
	return e ? e : frame_of_cframe(py, cframe, frame);
}

/* The fields of a thread state the walk reads. */
typedef struct ts_fields {
	uint64_t next, cframe, tid;
} ts_fields;

/* Thread state ts's fields: in one read when they lie within HEAD_MAX
 * bytes of its start (3.11's and 3.13's do), else one read each. */
static int read_ts(js_py *py, uint64_t ts, ts_fields *f)
{
	int64_t o[3] = { off(py, JS_PY_TS_NEXT), off(py, JS_PY_TS_CFRAME), off(py, JS_PY_TS_NATIVE_TID) };
	uint64_t *v[3] = { &f->next, &f->cframe, &f->tid };
	int64_t end = 0;
	for (int i = 0; i < 3; i++)
		end = o[i] + 8 > end ? o[i] + 8 : end;
	if (o[0] >= 0 && o[1] >= 0 && o[2] >= 0 && end <= HEAD_MAX) {
		uint8_t h[HEAD_MAX];
		int e = rd(py, ts, h, (size_t)end);
		for (int i = 0; !e && i < 3; i++)
			*v[i] = u64_at(h, o[i]);
		return e;
	}
	int e = 0;
	for (int i = 0; !e && i < 3; i++)
		e = rd_u64(py, ts + (uint64_t)o[i], v[i]);
	return e;
}

/* Whether the chain just read (py->seen) is still the thread's, or the
 * outer part of it: walking out from the thread's innermost frame now,
 * past the frames called since, to the first one read, then through every
 * frame read, each runs the same code with the same caller and (but for
 * the innermost, still running) is at the same instruction, and the
 * frame a failed read stopped at reads as it did (first: the innermost
 * frame the read began at).  Read through
 * the page cache, emptied first: the pages as they are now. */
static bool chain_unchanged(js_py *py, uint64_t ts, uint64_t first)
{
	uint64_t at;
	uint8_t b[HEAD_MAX];
	js_mem_flush(py->mem);
	if (current_frame(py, ts, &at))
		return false;
	if (!py->n_seen)
		return at == first; /* no frame, or one that could not be read, then and now */
	for (unsigned step = 0; at != py->seen[0].addr; step++) {
		if (!at || step == JS_PY_RECHECK_FRAMES || at % 8 || rd_how(py, at, b, frame_span(py), true))
			return false;
		at = u64_at(b, off(py, JS_PY_FR_PREVIOUS));
	}
	for (size_t i = 0; i < py->n_seen; i++) {
		const struct js_py_seen *f = &py->seen[i];
		int e = rd_how(py, f->addr, b, frame_span(py), true);
		if (f->unreadable)
			return e != 0 && i + 1 == py->n_seen;
		if (e || u64_at(b, off(py, JS_PY_FR_CODE)) != f->code ||
		    u64_at(b, off(py, JS_PY_FR_PREVIOUS)) != f->previous ||
		    (i && u64_at(b, off(py, JS_PY_FR_PREV_INSTR)) != f->instr))
			return false;
	}
	return true;
}

/* Thread state ts's chain; f: its fields, as just read. */
static void read_thread(js_py *py, uint64_t ts, const ts_fields *f)
{
	if (!js_grow(&py->threads, &py->cap_threads, py->n_threads, sizeof *py->threads))
		return;
	js_py_thread *t = &py->threads[py->n_threads++];
	*t = (js_py_thread){ .tstate = ts, .native_tid = f->tid };
	uint64_t frame = 0;
	int e = 0;
	for (unsigned tries = 0; !e; tries++) {
		/* the first read from the fields read with the thread's id */
		e = tries ? current_frame(py, ts, &frame) : frame_of_cframe(py, f->cframe, &frame);
		if (e)
			break;
		read_chain(py, t, frame);
		/* the frames read, or the reason the read stopped, are the
		 * thread's when what was read is still there (a chain that
		 * leads to unmapped memory now as then); a read that failed
		 * because the chain changed under it (a chunk of its stack
		 * freed) is done again */
		if (!py->running || chain_unchanged(py, ts, frame))
			return;
		if (tries + 1 == JS_PY_REREADS) {
			py->stats.changed++;
			snprintf(t->warning, sizeof t->warning,
				 "frame chain dropped: it changed while it was read, %u times",
				 JS_PY_REREADS);
			return;
		}
		py->n_frames = t->first;
		t->n = 0;
		t->warning[0] = '\0';
		py->stats.rereads++;
		js_mem_flush(py->mem);
	}
	snprintf(t->warning, sizeof t->warning, "thread state at 0x%llx unreadable (%s)",
		 (unsigned long long)ts, strerror(e));
}

static void read_runtime(js_py *py);

void js_py_forget(js_py *py)
{
	js_strs_free(&py->strs);
	py->kept = 0;
	if (py->codes)
		memset(py->codes, 0, JS_PY_CODE_CACHE * sizeof *py->codes);
}

void js_py_walk(js_py *py)
{
	if (py->kept > JS_PY_MAX_KEPT)
		js_py_forget(py);
	py->walks++;
	py->n_threads = py->n_frames = 0;
	py->warning_walk[0] = 0;
	py->stats = (js_py_stats){ 0 };
	if (!py->known)
		return;
	js_mem_flush(py->mem);
	unsigned long syscalls = js_mem_syscalls(py->mem);
	read_runtime(py);
	py->stats.syscalls = js_mem_syscalls(py->mem) - syscalls;
}

void js_py_walk_thread(js_py *py, uint64_t native_tid)
{
	py->only_tid = native_tid;
	js_py_walk(py);
	py->only_tid = 0;
}

/* The interpreters, their threads and each thread's chain (py->only_tid's
 * alone, when set: first at the thread state where the last walk of that
 * thread found it, when it still holds that thread's id). */
static void read_runtime(js_py *py)
{
	uint64_t interp = 0;
	cycle ci = { 0, 1, 0 };
	size_t slot = py->only_tid % (sizeof py->ts_memo / sizeof py->ts_memo[0]);
	ts_fields f;
	if (py->only_tid && py->ts_memo[slot].tid == py->only_tid && !read_ts(py, py->ts_memo[slot].ts, &f) &&
	    f.tid == py->only_tid) {
		read_thread(py, py->ts_memo[slot].ts, &f);
		return;
	}
	int e = rd_u64(py, py->runtime + (uint64_t)off(py, JS_PY_RT_INTERP_HEAD), &interp);
	for (unsigned i = 0; !e && interp; i++) {
		if (i >= JS_PY_MAX_INTERPRETERS || cycle_step(&ci, interp)) {
			snprintf(py->warning_walk, sizeof py->warning_walk, "the list of interpreters loops");
			return;
		}
		uint64_t ts = 0;
		cycle ct = { 0, 1, 0 };
		e = rd_u64(py, interp + (uint64_t)off(py, JS_PY_IS_THREADS_HEAD), &ts);
		for (unsigned j = 0; !e && ts; j++) {
			if (j >= JS_MAX_THREADS || cycle_step(&ct, ts)) {
				snprintf(py->warning_walk, sizeof py->warning_walk,
					 "the list of threads loops");
				return;
			}
			if ((e = read_ts(py, ts, &f)))
				break;
			if (!py->only_tid) {
				read_thread(py, ts, &f);
			} else if (f.tid == py->only_tid) {
				py->ts_memo[slot].tid = f.tid;
				py->ts_memo[slot].ts = ts;
				read_thread(py, ts, &f);
				return;
			}
			ts = f.next;
		}
		if (!e)
			e = rd_u64(py, interp + (uint64_t)off(py, JS_PY_IS_NEXT), &interp);
	}
	if (e)
		snprintf(py->warning_walk, sizeof py->warning_walk,
			 "the interpreters' lists are unreadable (%s)", strerror(e));
}

static uint64_t symbol(Elf *elf, const char *name, uint64_t bias)
{
	GElf_Addr v;
	GElf_Xword size;
	return js_find_symbol(elf, name, &v, &size) ? v + bias : 0;
}

/* The 4 bytes at vaddr in the file's sections: Py_Version is constant,
 * and a core (gdb's gcore) leaves out the read-only pages that hold it. */
static bool file_u32(Elf *elf, uint64_t vaddr, uint32_t *v)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || vaddr < sh.sh_addr ||
		    vaddr - sh.sh_addr + sizeof *v > sh.sh_size)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || vaddr - sh.sh_addr + sizeof *v > d->d_size)
			return false;
		memcpy(v, (const uint8_t *)d->d_buf + (vaddr - sh.sh_addr), sizeof *v);
		return true;
	}
	return false;
}

/* 3.13's layout, from the _Py_DebugOffsets at the start of _PyRuntime;
 * false with py->warning for another version's or a free-threaded
 * build's. */
static bool read_debug_offsets(js_py *py)
{
	uint8_t bytes[JS_PY_DEBUG_OFFSETS_313_SIZE];
	char why[128] = "";
	if (py->lay.major != 3 || py->lay.minor != 13) {
		snprintf(py->warning, sizeof py->warning,
			 "CPython %s: no layout known for its _Py_DebugOffsets", py->version);
		return false;
	}
	int e = js_mem_read(py->mem, py->runtime, bytes, sizeof bytes);
	if (e || js_py_layout_debug_offsets_313(bytes, &py->lay, why, sizeof why)) {
		snprintf(py->warning, sizeof py->warning, "CPython %s: its _Py_DebugOffsets are %s",
			 py->version, e ? "unreadable" : why);
		return false;
	}
	return true;
}

/* Which CPython it is, into py->version; false with py->warning when its
 * frames are not read. */
static bool tell_version(js_py *py, Elf *elf, uint64_t bias)
{
	uint8_t head[16];
	int e = js_mem_read(py->mem, py->runtime, head, sizeof head);
	if (e) {
		snprintf(py->warning, sizeof py->warning, "CPython's _PyRuntime is unreadable (%s)",
			 strerror(e));
		return false;
	}
	uint64_t hex = 0;
	bool debug_offsets = memcmp(head, DEBUG_OFFSETS_COOKIE, 8) == 0;
	if (debug_offsets) {
		memcpy(&hex, head + 8, sizeof hex);
	} else {
		uint64_t at = symbol(elf, "Py_Version", bias);
		uint32_t v;
		if (!at) {
			snprintf(py->warning, sizeof py->warning,
				 "a CPython older than 3.11 (no Py_Version): its Python frames are not read");
			return false;
		}
		if (js_mem_read(py->mem, at, &v, sizeof v) && !file_u32(elf, at - bias, &v)) {
			snprintf(py->warning, sizeof py->warning, "CPython's Py_Version is unreadable");
			return false;
		}
		hex = v;
	}
	py->lay.major = (unsigned)(hex >> 24) & 0xff;
	py->lay.minor = (unsigned)(hex >> 16) & 0xff;
	snprintf(py->version, sizeof py->version, "%u.%u.%u", py->lay.major, py->lay.minor,
		 (unsigned)(hex >> 8) & 0xff);
	if (debug_offsets)
		return read_debug_offsets(py);
	if (py->lay.major != 3 || py->lay.minor != 11) {
		snprintf(py->warning, sizeof py->warning, "CPython %s: no layout known for its frames",
			 py->version);
		return false;
	}
	return true;
}

int js_py_open(js_py *py, js_mem *mem, Elf *elf, uint64_t bias, Dwarf *dw, js_err *err)
{
	*py = (js_py){ .mem = mem };
	py->runtime = symbol(elf, "_PyRuntime", bias);
	if (!py->runtime)
		return js_fail(err, JS_EXIT_FAILURE, 0, "no _PyRuntime: not a CPython");
	py->codes = calloc(JS_PY_CODE_CACHE, sizeof *py->codes);
	if (!py->codes)
		return js_fail(err, JS_EXIT_FAILURE, ENOMEM, "out of memory");
	if (!tell_version(py, elf, bias))
		return 0;
	char why[200] = "";
	GElf_Addr eval;
	GElf_Xword size;
	js_py_layout d = py->lay;
	bool dwarf = py->lay.minor == 11 && dw && js_find_symbol(elf, "PyEval_EvalCode", &eval, &size) &&
		     js_py_layout_dwarf(dw, eval, &d, why, sizeof why) == 0;
	if (dwarf)
		py->lay = d;
	else if (py->lay.minor == 11)
		js_py_layout_table(py->lay.minor, &py->lay);
	/* the fields from the frame's on are read out of one read of a head */
	for (int f = JS_PY_FR_CODE; f < JS_PY_NFIELDS; f++) {
		if (py->lay.off[f] + 8 > HEAD_MAX) {
			snprintf(py->warning, sizeof py->warning,
				 "CPython %s: its %s layout is past what is read", py->version, py->lay.from);
			return 0;
		}
	}
	py->code_type = symbol(elf, "PyCode_Type", bias);
	py->unicode_type = symbol(elf, "PyUnicode_Type", bias);
	py->bytes_type = symbol(elf, "PyBytes_Type", bias);
	py->known = true;
	return 0;
}

void js_py_free(js_py *py)
{
	js_strs_free(&py->strs);
	free(py->codes);
	free(py->threads);
	free(py->frames);
	free(py->seen);
	*py = (js_py){ 0 };
}
