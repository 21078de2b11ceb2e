/* SPDX-License-Identifier: MIT */
/* jitdump_check.c - the jitdump reader (jitdump.c) against what a target
 * can write: loads that overlap (the latest wins), moves, line tables
 * (rows in any order, "\xff" for the previous file, names that are not
 * text, or not UTF-8 as RFC 3629 has it: surrogates, overlong forms),
 * unwinding info (empty, good, garbage), records of impossible sizes, a
 * dump of another byte order, version or machine, records after a core's
 * time, a record still being written, a file appended to, replaced or
 * truncated under the reader; and against a model (the latest load
 * covering each address) on random dumps fed in random pieces.
 *
 * Usage: jitdump_check DIR (scratch files go there).  Prints one line per
 * check that fails and exits 1, else prints a summary and exits 0.
 */
#include "jit/jitdump.h"
#include "base/bounds.h"
#include "formats/jitdump.h"
#include "tests/unit/unit.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *dir;

/* ---- writing dumps ------------------------------------------------------------- */

typedef struct dump {
	uint8_t *p;
	size_t n, cap;
} dump;

static void put(dump *d, const void *p, size_t n)
{
	if (d->n + n > d->cap) {
		d->cap = (d->n + n) * 2 + 256;
		d->p = realloc(d->p, d->cap);
		if (!d->p)
			abort();
	}
	memcpy(d->p + d->n, p, n);
	d->n += n;
}

static void header(dump *d, uint32_t mach, uint64_t ts)
{
	jd_header h = { JD_MAGIC, JD_VERSION, sizeof h, mach, 0, 42, ts, 0 };
	put(d, &h, sizeof h);
}

static void load(dump *d, uint64_t ts, uint64_t addr, uint64_t size, const char *name)
{
	size_t nl = strlen(name) + 1;
	jd_code_load r = {
		{ JD_CODE_LOAD, (uint32_t)(sizeof r + nl + size), ts }, 42, 42, addr, addr, size, 0
	};
	put(d, &r, sizeof r);
	put(d, name, nl);
	for (uint64_t i = 0; i < size; i++)
		put(d, "\xcc", 1);
}

static void move(dump *d, uint64_t ts, uint64_t from, uint64_t to, uint64_t size)
{
	jd_code_move r = { { JD_CODE_MOVE, sizeof r, ts }, 42, 42, to, from, to, size, 0 };
	put(d, &r, sizeof r);
}

typedef struct row {
	uint64_t addr;
	int32_t line;
	const char *file;
} row;

static void debug(dump *d, uint64_t ts, uint64_t code, const row *rows, size_t n)
{
	uint32_t total = sizeof(jd_code_debug_info);
	for (size_t i = 0; i < n; i++)
		total += sizeof(jd_debug_entry) + (uint32_t)strlen(rows[i].file) + 1;
	jd_code_debug_info r = { { JD_CODE_DEBUG_INFO, total, ts }, code, n };
	put(d, &r, sizeof r);
	for (size_t i = 0; i < n; i++) {
		jd_debug_entry e = { rows[i].addr, rows[i].line, 0 };
		put(d, &e, sizeof e);
		put(d, rows[i].file, strlen(rows[i].file) + 1);
	}
}

static void unwind(dump *d, uint64_t ts, const uint8_t *eh, size_t n, size_t hdr)
{
	jd_code_unwinding_info r = {
		{ JD_CODE_UNWINDING_INFO, (uint32_t)(sizeof r + n + hdr), ts }, n + hdr, hdr, 0
	};
	put(d, &r, sizeof r);
	put(d, eh, n);
	for (size_t i = 0; i < hdr; i++)
		put(d, "", 1);
}

/* A .eh_frame for code [lo, lo + size) placed where perf's layout puts it:
 * one CIE (zR, pc-relative sdata4) and one FDE covering the code. */
static size_t eh_frame(uint8_t *out, uint64_t lo, uint64_t size)
{
	static const uint8_t cie[] = {
		0x14, 0,    0,   0,    0, 0,    0,  0, /* length 20, CIE id 0 */
		1,    'z',  'R', 0,    1, 0x78, 16,    /* version, augmentation, code 1, data -8, ra 16 */
		1,    0x1b,                            /* augmentation data: FDE pointers pcrel|sdata4 */
		0x0c, 7,    8,   0x90, 1, 0,    0      /* def_cfa rsp+8; ra at cfa-8; nops */
	};
	uint64_t eh_addr = lo - JD_ELF_TEXT_ADDR + JD_ELF_EH_FRAME_ADDR(size);
	memcpy(out, cie, sizeof cie);
	size_t f = sizeof cie;
	uint32_t len = 20, cie_ptr = (uint32_t)(f + 4);
	int32_t pc = (int32_t)(lo - (eh_addr + f + 8));
	uint32_t range = (uint32_t)size;
	memcpy(out + f, &len, 4);
	memcpy(out + f + 4, &cie_ptr, 4);
	memcpy(out + f + 8, &pc, 4);
	memcpy(out + f + 12, &range, 4);
	memset(out + f + 16, 0, 8); /* augmentation length 0, nops */
	memset(out + f + 24, 0, 4); /* terminator */
	return f + 28;
}

/* ---- reading them --------------------------------------------------------------- */

/* Feed d whole (pieces of at most step bytes when step), as the file
 * reader does: bytes not consumed are fed again with what follows. */
static void feed(js_jitdump *jd, const dump *d, size_t step)
{
	size_t at = 0, have = 0;
	uint8_t *buf = malloc(d->n + 1);
	while (at + have < d->n || have) {
		size_t more = step ? step : d->n;
		if (more > d->n - at - have)
			more = d->n - at - have;
		memcpy(buf + have, d->p + at + have, more);
		have += more;
		size_t want;
		ssize_t used = js_jitdump_feed(jd, buf, have, &want);
		CHECK(used >= 0, "feed: out of memory");
		if (used < 0)
			break;
		jd->file.off += (uint64_t)used;
		at += (size_t)used;
		memmove(buf, buf + used, have - (size_t)used);
		have -= (size_t)used;
		if (jd->file.skip && !have) { /* as js_follow_read: stepped over */
			uint64_t n = d->n - at < jd->file.skip ? d->n - at : jd->file.skip;
			at += n, jd->file.off += n, jd->file.skip -= n;
		}
		if (!more && (size_t)used == 0)
			break; /* the rest is a record still being written */
		if (jd->ended)
			break;
	}
	free(buf);
	CHECK(js_jitdump_commit(jd) == 0, "commit");
}

static const char *name_at(js_jitdump *jd, uint64_t pc)
{
	const js_jd_code *c = js_jitdump_find(jd, pc);
	return c ? c->name : "";
}

static void names_the_latest_load_at_each_address(void)
{
	dump d = { 0 };
	header(&d, EM_X86_64, 1);
	load(&d, 2, 0x1000, 0x100, "first");
	load(&d, 3, 0x1080, 0x10, "second");
	load(&d, 4, 0x2000, 0x10, "na\x01me");
	js_jitdump jd;
	js_jitdump_init(&jd, NULL, EM_X86_64);
	feed(&jd, &d, 0);
	CHECK(!strcmp(name_at(&jd, 0x1000), "first") && !strcmp(name_at(&jd, 0x10ff), "first"), "first");
	CHECK(!strcmp(name_at(&jd, 0x1080), "second") && !strcmp(name_at(&jd, 0x108f), "second") &&
		      !strcmp(name_at(&jd, 0x1090), "first"),
	      "second wins");
	CHECK(!*name_at(&jd, 0x1100) && !*name_at(&jd, 0xfff), "outside");
	CHECK(!strcmp(name_at(&jd, 0x2000), "na?me"), "a control byte shown as '?': '%s'",
	      name_at(&jd, 0x2000));
	CHECK(jd.loads == 3 && jd.bad == 0 && !jd.ended, "3 loads, %lu, bad %lu", jd.loads, jd.bad);
	js_jitdump_free(&jd);
	free(d.p);
}

static void moves_code_with_its_lines(void)
{
	dump d = { 0 };
	header(&d, EM_X86_64, 1);
	row rows[] = { { 0x1010, 7, "b.js" }, { 0x1000, 5, "a.js" }, { 0x1008, 6, "\xff" } };
	debug(&d, 2, 0x1000, rows, 3);
	load(&d, 3, 0x1000, 0x20, "fn");
	move(&d, 4, 0x1000, 0x5000, 0x20);
	move(&d, 5, 0x9999, 0x6000, 0x20); /* nothing there */
	js_jitdump jd;
	js_jitdump_init(&jd, NULL, EM_X86_64);
	feed(&jd, &d, 0);
	js_jd_code *c = js_jitdump_find(&jd, 0x500c);
	CHECK(c && !strcmp(c->name, "fn"), "moved code named: '%s'", c ? c->name : "");
	const js_jd_line *l = c ? js_jitdump_line(c, 0x500c) : NULL;
	CHECK(l && l->line == 6 && !strcmp(l->file, "a.js"), "moved line: %d %s", l ? l->line : 0,
	      l ? l->file : "");
	c = js_jitdump_find(&jd, 0x1012);
	l = c ? js_jitdump_line(c, 0x1012) : NULL;
	CHECK(l && l->line == 7 && !strcmp(l->file, "b.js"), "rows sorted by address: %d", l ? l->line : 0);
	CHECK(jd.moves == 1 && jd.bad == 1, "one move, one bad: %lu %lu", jd.moves, jd.bad);
	js_jitdump_free(&jd);
	free(d.p);
}

static void drops_lines_whose_file_names_are_not_text(void)
{
	dump d = { 0 };
	header(&d, EM_X86_64, 1);
	row rows[] = { { 0x1000, 5, "a.js" }, { 0x1008, 6, "Q\xfe\x0f" } };
	row utf[] = { { 0x2000, 5, "caf\xc3\xa9.js" }, { 0x2008, 6, "Q\xfe\xa5" }, { 0x2010, 7, "b.js" } };
	row out[] = { { 0x3000, 5, "a.js" }, { 0x9000, 6, "a.js" } };
	debug(&d, 2, 0x1000, rows, 2);
	load(&d, 3, 0x1000, 0x20, "fn");
	js_jitdump jd;
	js_jitdump_init(&jd, NULL, EM_X86_64);
	feed(&jd, &d, 0);
	js_jd_code *c = js_jitdump_find(&jd, 0x1000);
	CHECK(c && !c->n_lines && jd.bad == 1, "rows of a broken table kept: %zu", c ? c->n_lines : 0);
	dump e = { 0 };
	header(&e, EM_X86_64, 1);
	debug(&e, 2, 0x2000, utf, 1);
	load(&e, 3, 0x2000, 0x20, "utf8");
	debug(&e, 4, 0x2000, utf, 3);
	load(&e, 5, 0x2100, 0x20, "not-utf8");
	debug(&e, 6, 0x3000, out, 2);
	load(&e, 7, 0x3000, 0x20, "rows-outside");
	js_jitdump je;
	js_jitdump_init(&je, NULL, EM_X86_64);
	feed(&je, &e, 0);
	c = js_jitdump_find(&je, 0x2000);
	CHECK(c && c->n_lines == 1 && !strcmp(c->lines[0].file, "caf\xc3\xa9.js"), "a UTF-8 name is kept");
	c = js_jitdump_find(&je, 0x2100);
	CHECK(c && !c->n_lines, "bytes that are not UTF-8: the table is dropped");
	c = js_jitdump_find(&je, 0x3000);
	CHECK(c && c->n_lines == 1, "a row outside the code is dropped: %zu rows", c ? c->n_lines : 0);
	js_jitdump_free(&je);
	free(e.p);
	js_jitdump_free(&jd);
	free(d.p);
}

/* File names the library would refuse as not UTF-8 (formats/utf8.h, RFC
 * 3629) but an older rule of the reader let through: a surrogate, overlong
 * forms, a value past U+10FFFF, a character cut short by the name's end.
 * Each breaks its table as bytes that are not UTF-8 at all do; a
 * character of each length is kept. */
static void drops_lines_whose_file_names_are_not_utf8_by_rfc_3629(void)
{
	static const char *refused[] = {
		"\xed\xa0\x80.js",     /* U+D800, a surrogate */
		"a\xed\xbf\xbf.js",    /* U+DFFF */
		"\xe0\x80\x80.js",     /* NUL in three bytes */
		"\xc0\xae.js",         /* '.' in two bytes */
		"\xf0\x80\x80\xaf.js", /* '/' in four bytes */
		"\xf4\x90\x80\x80.js", /* U+110000 */
		"\xe2\x82",            /* cut short by the end of the name */
	};
	static const char *kept[] = { "caf\xc3\xa9.js", "\xe2\x82\xac.js", "\xed\x9f\xbf.js",
				      "\xf0\x9f\x98\x80.js", "\xf4\x8f\xbf\xbf.js" };
	enum { NR = sizeof refused / sizeof *refused, NK = sizeof kept / sizeof *kept };
	dump d = { 0 };
	header(&d, EM_X86_64, 1);
	uint64_t ts = 2;
	for (size_t i = 0; i < NR + NK; i++) {
		uint64_t at = 0x1000 * (i + 1);
		row r[] = { { at, 5, "a.js" }, { at + 8, 6, i < NR ? refused[i] : kept[i - NR] } };
		debug(&d, ts++, at, r, 2);
		load(&d, ts++, at, 0x20, "fn");
	}
	js_jitdump jd;
	js_jitdump_init(&jd, NULL, EM_X86_64);
	feed(&jd, &d, 0);
	for (size_t i = 0; i < NR + NK; i++) {
		uint64_t at = 0x1000 * (i + 1);
		js_jd_code *c = js_jitdump_find(&jd, at);
		const js_jd_line *l = c ? js_jitdump_line(c, at + 8) : NULL;
		if (i < NR)
			CHECK(c && !c->n_lines, "file name %zu (not UTF-8) passed through as '%s'", i,
			      l ? l->file : "");
		else
			CHECK(c && c->n_lines == 2 && l && !strcmp(l->file, kept[i - NR]),
			      "UTF-8 file name %zu not kept: %zu rows", i - NR, c ? c->n_lines : 0);
	}
	CHECK(jd.bad == NR, "%lu tables counted broken, want %d", jd.bad, (int)NR);
	js_jitdump_free(&jd);
	free(d.p);
}

static void makes_a_module_of_unwinding_info(void)
{
	dump d = { 0 };
	uint8_t eh[64], junk[40];
	header(&d, EM_X86_64, 1);
	unwind(&d, 2, eh, eh_frame(eh, 0x10000, 0x40), 20);
	load(&d, 3, 0x10000, 0x40, "with-cfi");
	unwind(&d, 4, eh, 0, 20); /* V8's empty table */
	load(&d, 5, 0x20000, 0x40, "empty");
	memset(junk, 0xff, sizeof junk);
	unwind(&d, 6, junk, sizeof junk, 0);
	load(&d, 7, 0x30000, 0x40, "junk");
	js_jitdump jd;
	js_jitdump_init(&jd, NULL, EM_X86_64);
	feed(&jd, &d, 0);
	js_jd_code *c = js_jitdump_find(&jd, 0x10000);
	js_image *im = c ? js_jitdump_image(&jd, c) : NULL;
	CHECK(im && im->out.n_fdes == 1 && im->out.lo == 0x10000 && im->out.hi == 0x10040,
	      "a module with one FDE");
	c = js_jitdump_find(&jd, 0x20000);
	CHECK(c && !c->eh && !js_jitdump_image(&jd, c), "an empty table gives no module");
	c = js_jitdump_find(&jd, 0x30000);
	CHECK(c && c->eh && !js_jitdump_image(&jd, c), "a garbage table gives no module");
	CHECK(jd.with_cfi == 2 && jd.unwind == 3, "with CFI %lu of %lu", jd.with_cfi, jd.unwind);
	CHECK(js_jitdump_drop_cfi(&jd, 0x10010) && !js_jitdump_image(&jd, js_jitdump_find(&jd, 0x10000)) &&
		      !js_jitdump_drop_cfi(&jd, 0x10010),
	      "CFI that loops is dropped, once");
	js_jitdump_free(&jd);
	free(d.p);
}

/* A dump whose header says out: reading ends with why containing want. */
static void refuses(const char *what, uint32_t magic, uint32_t version, uint32_t size, uint32_t mach,
		    uint64_t until, const char *want)
{
	jd_header h = { magic, version, size, mach, 0, 1, 100, 0 };
	dump d = { 0 };
	put(&d, &h, sizeof h);
	load(&d, 200, 0x1000, 0x10, "x");
	js_jitdump jd;
	js_jitdump_init(&jd, NULL, EM_X86_64);
	jd.until_ns = until;
	feed(&jd, &d, 7);
	CHECK(jd.ended && strstr(jd.why, want) && !js_jitdump_find(&jd, 0x1000), "%s: '%s'", what, jd.why);
	js_jitdump_free(&jd);
	free(d.p);
}

static void survives_hostile_records(void)
{
	refuses("magic", 0x12345678, 1, 40, EM_X86_64, 0, "not a jitdump");
	refuses("byte order", __builtin_bswap32(JD_MAGIC), 1, 40, EM_X86_64, 0, "other byte order");
	refuses("version", JD_MAGIC, 2, 40, EM_X86_64, 0, "version 2");
	refuses("header size", JD_MAGIC, 1, 8, EM_X86_64, 0, "header of 8");
	refuses("huge header", JD_MAGIC, 1, 1u << 30, EM_X86_64, 0, "header of");
	refuses("machine", JD_MAGIC, 1, 40, EM_AARCH64, 0, "machine 183");
	refuses("after the core", JD_MAGIC, 1, 40, EM_X86_64, 50, "after the core");

	dump d = { 0 };
	header(&d, EM_X86_64, 1);
	load(&d, 2, 0x1000, 0x10, "good");
	jd_code_load r = {
		{ JD_CODE_LOAD, sizeof r + 2, 3 }, 1, 1, 0, 0x2000, 100, 0
	}; /* code past its end */
	put(&d, &r, sizeof r);
	put(&d, "a", 2);
	r = (jd_code_load){
		{ JD_CODE_LOAD, sizeof r + 2 + 8, 3 }, 1, 1, 0, UINT64_MAX - 4, 8, 0
	}; /* wraps */
	put(&d, &r, sizeof r);
	put(&d, "b\0\0\0\0\0\0\0\0", 10);
	jd_code_debug_info di = { { JD_CODE_DEBUG_INFO, sizeof di, 4 },
				  0x1000,
				  1u << 30 }; /* rows past its end */
	put(&d, &di, sizeof di);
	jd_code_unwinding_info ui = { { JD_CODE_UNWINDING_INFO, sizeof ui, 5 }, 1u << 20, 0, 0 };
	put(&d, &ui, sizeof ui);
	jd_prefix unknown = { 77, sizeof unknown + 3, 6 };
	put(&d, &unknown, sizeof unknown);
	put(&d, "xyz", 3);
	char name[JS_MAX_NAME + 100];
	memset(name, 'n', sizeof name - 1);
	name[sizeof name - 1] = 0;
	load(&d, 7, 0x3000, 0x10, name); /* a name past the bound: cut */
	load(&d, 8, 0x4000, 0x10, "after");
	jd_prefix tiny = { JD_CODE_LOAD, 8, 9 }; /* no way past it */
	put(&d, &tiny, sizeof tiny);
	load(&d, 10, 0x5000, 0x10, "unreachable");
	for (size_t step = 0; step < 64; step += step < 8 ? 1 : 13) {
		js_jitdump jd;
		js_jitdump_init(&jd, NULL, EM_X86_64);
		feed(&jd, &d, step);
		CHECK(!strcmp(name_at(&jd, 0x1000), "good") && !strcmp(name_at(&jd, 0x4000), "after"),
		      "step %zu: good records among bad ones", step);
		CHECK(strlen(name_at(&jd, 0x3000)) == JS_MAX_NAME, "step %zu: long name cut to %zu", step,
		      strlen(name_at(&jd, 0x3000)));
		CHECK(jd.bad == 4 && jd.unknown == 1 && jd.ended && strstr(jd.why, "a record of 8 bytes") &&
			      !*name_at(&jd, 0x5000),
		      "step %zu: bad %lu unknown %lu why '%s'", step, jd.bad, jd.unknown, jd.why);
		js_jitdump_free(&jd);
	}
	free(d.p);
}

static void uses_only_records_before_the_core(void)
{
	dump d = { 0 };
	header(&d, EM_X86_64, 10);
	load(&d, 20, 0x1000, 0x10, "before");
	load(&d, 40, 0x1000, 0x10, "after");
	js_jitdump jd;
	js_jitdump_init(&jd, NULL, EM_X86_64);
	jd.until_ns = 30;
	feed(&jd, &d, 0);
	CHECK(!strcmp(name_at(&jd, 0x1000), "before") && jd.late == 1, "the core's view: '%s', late %lu",
	      name_at(&jd, 0x1000), jd.late);
	js_jitdump_free(&jd);
	free(d.p);
}

/* Random dumps, fed whole and in random pieces, against the model: the
 * latest load covering each address names it. */
static void matches_the_model_on_random_dumps(void)
{
	srand(7);
	for (int round = 0; round < 200; round++) {
		dump d = { 0 };
		header(&d, EM_X86_64, 1);
		enum { N = 300, SPAN = 4096 };
		static char names[N][16];
		static uint64_t lo[N], hi[N];
		int n = 1 + rand() % N;
		for (int i = 0; i < n; i++) {
			lo[i] = 0x100000 + (uint64_t)(rand() % SPAN);
			hi[i] = lo[i] + 1 + (uint64_t)(rand() % 64);
			snprintf(names[i], sizeof names[i], "f%d", i);
			load(&d, 2 + (uint64_t)i, lo[i], hi[i] - lo[i], names[i]);
		}
		js_jitdump a, b;
		js_jitdump_init(&a, NULL, EM_X86_64);
		js_jitdump_init(&b, NULL, EM_X86_64);
		feed(&a, &d, 0);
		feed(&b, &d, 1 + (size_t)(rand() % 200));
		for (uint64_t pc = 0x100000 - 2; pc < 0x100000 + SPAN + 70; pc++) {
			const char *want = "";
			for (int i = n - 1; i >= 0; i--)
				if (pc >= lo[i] && pc < hi[i]) {
					want = names[i];
					break;
				}
			if (strcmp(name_at(&a, pc), want) || strcmp(name_at(&b, pc), want)) {
				CHECK(0, "round %d pc %#lx: '%s' / '%s', want '%s'", round, (unsigned long)pc,
				      name_at(&a, pc), name_at(&b, pc), want);
				break;
			}
		}
		js_jitdump_free(&a);
		js_jitdump_free(&b);
		free(d.p);
	}
	unit_checks++;
}

/* ---- the file ---------------------------------------------------------------------- */

static void write_file(const char *path, const void *p, size_t n, const char *mode)
{
	FILE *f = fopen(path, mode);
	CHECK(f && fwrite(p, 1, n, f) == n && fclose(f) == 0, "write %s", path);
}

static void follows_the_file_as_it_grows_and_is_replaced(void)
{
	char path[4096], tmp[4200];
	snprintf(path, sizeof path, "%s/jit-1.dump", dir);
	dump d = { 0 };
	header(&d, EM_X86_64, 1);
	load(&d, 2, 0x1000, 0x10, "one");
	size_t first = d.n;
	load(&d, 3, 0x2000, 0x1000, "two");
	size_t half = first + 40; /* two's record, cut in its head */
	write_file(path, d.p, half, "w");
	js_jitdump jd;
	js_jitdump_init(&jd, path, EM_X86_64);
	js_err why = { 0 };
	CHECK(js_jitdump_refresh(&jd, &why) == 1, "first read: %s", why.msg);
	CHECK(!strcmp(name_at(&jd, 0x1000), "one") && !*name_at(&jd, 0x2000), "a record being written waits");
	write_file(path, d.p + half, 100, "a"); /* its head, not all its code */
	CHECK(js_jitdump_refresh(&jd, &why) == 1 && !strcmp(name_at(&jd, 0x2fff), "two"), "its head arrived");
	write_file(path, d.p + half + 100, d.n - half - 100, "a");
	CHECK(js_jitdump_refresh(&jd, &why) == 0, "the rest of its code changes nothing");
	CHECK(js_jitdump_refresh(&jd, &why) == 0 && jd.rereads == 0, "nothing new");
	CHECK(jd.bytes <= d.n, "read %llu bytes of %zu", (unsigned long long)jd.bytes, d.n);

	dump e = { 0 };
	header(&e, EM_X86_64, 1);
	load(&e, 2, 0x7000, 0x10, "replaced");
	snprintf(tmp, sizeof tmp, "%s.new", path);
	write_file(tmp, e.p, e.n, "w");
	CHECK(rename(tmp, path) == 0, "rename");
	CHECK(js_jitdump_refresh(&jd, &why) == 1 && jd.rereads == 1, "a new file is read from its start");
	CHECK(!*name_at(&jd, 0x1000) && !strcmp(name_at(&jd, 0x7000), "replaced"), "the old names are gone");
	CHECK(truncate(path, 10) == 0 && js_jitdump_refresh(&jd, &why) == 1 && !*name_at(&jd, 0x7000),
	      "a truncated file is read again");
	unlink(path);
	CHECK(js_jitdump_refresh(&jd, &why) == -1 && why.errnum == ENOENT, "a file gone: ENOENT");
	js_jitdump_reap(&jd);
	js_jitdump_free(&jd);
	free(d.p);
	free(e.p);
}

int main(int argc, char **argv)
{
	dir = argc > 1 ? argv[1] : ".";
	names_the_latest_load_at_each_address();
	moves_code_with_its_lines();
	drops_lines_whose_file_names_are_not_text();
	drops_lines_whose_file_names_are_not_utf8_by_rfc_3629();
	makes_a_module_of_unwinding_info();
	survives_hostile_records();
	uses_only_records_before_the_core();
	matches_the_model_on_random_dumps();
	follows_the_file_as_it_grows_and_is_replaced();
	return unit_done("jitdump_check");
}
