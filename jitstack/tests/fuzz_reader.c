/* SPDX-License-Identifier: MIT */
/* fuzz_reader.c - libFuzzer target for what jitstack reads from a target:
 * the GDB JIT descriptor and its list (desc.c) and the ELF images it points
 * at (jitimage.c and below).  Built with clang-19 -fsanitize=fuzzer,address
 * by `make fuzz-jitstack`.
 *
 * An input starting with the ELF magic is an image: it is rewritten, and a
 * rewrite that succeeds must be an ELF file libelf and libdw read cleanly
 * (our output, so any trouble there is our bug).  Any other input is a
 * target's memory: the descriptor at its start, entries and images
 * anywhere in it (pointers are offsets from FUZZ_BASE), read as from a core.
 * An input starting with "PMAP" is a perf map (perfmap.c): fed in two
 * pieces split where its first byte after the magic says, with lookups
 * after each, and its ranges must come out disjoint and sorted.  It is
 * read again as a dump reads it, for a few of those pcs only, and must
 * name each of them as the whole map does.
 * An input starting with "JDMP" is a jitdump (jitdump.c), fed the same way:
 * its code is looked up, and each module its unwinding info makes must be
 * an image as good as a rewrite's.  Read again for a few pcs only (its
 * records read back from a memfd), its code at those pcs must be the
 * whole dump's.
 *
 * With JS_FUZZ_SAY set in the environment, each image rewritten says on
 * stderr how it came out ("image: 2 functions" or "image: rejected:
 * WHY"), for tests that run the target on chosen inputs.
 *
 * JS_FUZZ_ONLY=pmap|jdmp|image|mem gives every input to that one reader,
 * as if it had its prefix, so that a campaign counts its executions per
 * parser (docs/FUZZING.md).
 */
#include "target/machine.h"
#include "jit/desc.h"
#include "jit/jitdump.h"
#include "jit/jitimage.h"
#include "target/mem.h"
#include "jit/perfmap.h"
#include "base/bounds.h"

#include <elf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FUZZ_BASE 0x10000u

/* Read the rewritten image back: sections, symbols, and the CFI at a few
 * addresses of its code. */
static void check_output(const js_img_out *o)
{
	Elf *e = elf_memory((char *)o->elf, o->elf_size);
	if (!e)
		abort(); /* we wrote something libelf cannot open */
	GElf_Ehdr eh;
	if (!gelf_getehdr(e, &eh) || eh.e_type != ET_EXEC)
		abort();
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			abort();
		if (sh.sh_type != SHT_NOBITS && !elf_getdata(scn, NULL) && sh.sh_size)
			abort();
	}
	Dwarf_CFI *cfi = dwarf_getcfi_elf(e);
	for (uint64_t pc = o->lo; cfi && pc < o->hi && pc < o->lo + 4096; pc += 7) {
		Dwarf_Frame *f;
		if (dwarf_cfi_addrframe(cfi, pc, &f) == 0)
			free(f);
	}
	if (cfi)
		dwarf_cfi_end(cfi);
	elf_end(e);
}

/* The symbols of other images: those the input's images export (a list),
 * or for a lone image any name, at an address made from its bytes, so
 * that relocations against other images' symbols land anywhere. */
typedef struct fuzz_syms {
	js_exports x[16];
	size_t n;
} fuzz_syms;

static bool fuzz_resolve(void *arg, const char *name, uint64_t *addr)
{
	const fuzz_syms *fs = arg;
	for (size_t i = 0; fs && i < fs->n; i++)
		for (size_t k = 0; k < fs->x[i].n; k++)
			if (!strcmp(fs->x[i].v[k].name, name)) {
				*addr = fs->x[i].v[k].addr;
				return true;
			}
	if (fs || !name[0] || name[0] == 'u')
		return false; /* undefined: the relocation fails */
	uint64_t h = 0xcbf29ce484222325ull;
	for (const char *p = name; *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
	*addr = h;
	return true;
}

static void rewrite(const uint8_t *bytes, size_t size, uint64_t addr, uint64_t lo, uint64_t hi, fuzz_syms *fs)
{
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return;
	memcpy(copy, bytes, size);
	/* the target's machine is the image's own when jitstack knows it, so
	 * every machine's relocation rules are fuzzed */
	uint16_t m = size >= 20 ? (uint16_t)(bytes[18] | bytes[19] << 8) : EM_X86_64;
	js_img_in in = { copy, size, addr, lo, hi, js_arch_for(m) ? m : EM_X86_64, fuzz_resolve, fs };
	js_img_out out;
	int rc = js_image_rewrite(&in, &out);
	if (rc == 0)
		check_output(&out);
	if (getenv("JS_FUZZ_SAY") && rc == 0)
		fprintf(stderr, "image: %lu functions\n", out.n_funcs);
	else if (getenv("JS_FUZZ_SAY"))
		fprintf(stderr, "image: rejected: %s\n", out.why.msg);
	js_img_out_free(&out);
	free(copy);
}

/* The pcs a dump is taken to want: the input's first words, then the
 * ends of ranges the whole read found (lo[i], hi[i] - 1; m of them), every
 * few so that some code is left. */
enum { WANT = 16 };
static size_t wanted_pcs(const uint8_t *data, size_t size, const uint64_t *lo, const uint64_t *hi, size_t m,
			 js_span *v)
{
	size_t n = 0;
	for (size_t i = 0; i + 8 <= size && n < WANT / 4; i += 8, n++) {
		memcpy(&v[n].lo, data + i, 8);
		v[n].hi = v[n].lo + 1;
	}
	size_t step = 1 + (size ? data[size - 1] % 4 : 0);
	for (size_t i = 0; i < m && n + 2 <= WANT; i += step) {
		v[n++] = (js_span){ lo[i], lo[i] + 1 };
		v[n++] = (js_span){ hi[i] - 1, hi[i] };
	}
	return n;
}

/* Feed the map whole, or (want: the spans, n of them) as a dump keeps it. */
static void perf_map_feed(js_perfmap *pm, const uint8_t *data, size_t size, const js_span *want, size_t n)
{
	if (want) {
		pm->want = malloc((n ? n : 1) * sizeof *pm->want);
		if (!pm->want)
			return;
		memcpy(pm->want, want, n * sizeof *want);
		pm->n_want = js_spans_normalize(pm->want, n);
	}
	if (js_perfmap_feed(pm, (const char *)data, size) >= 0)
		js_perfmap_commit(pm);
}

/* At each pc a dump wants, the map it keeps names what the whole map names. */
static void perf_map_for_pcs(const uint8_t *data, size_t size)
{
	js_span want[WANT];
	js_perfmap all, some;
	js_perfmap_init(&all, NULL);
	js_perfmap_init(&some, NULL);
	perf_map_feed(&all, data, size, NULL, 0);
	uint64_t lo[WANT], hi[WANT];
	size_t m = 0;
	for (unsigned l = 0; l < JS_PM_LEVELS; l++)
		for (size_t i = 0; i < all.n_lvl[l] && m < WANT; i++, m++)
			lo[m] = all.lvl[l][i].lo, hi[m] = all.lvl[l][i].hi;
	size_t n = wanted_pcs(data, size, lo, hi, m, want);
	perf_map_feed(&some, data, size, want, n);
	for (size_t i = 0; i < n; i++) {
		const js_pm_seg *a = js_perfmap_find(&all, want[i].lo),
				*b = js_perfmap_find(&some, want[i].lo);
		if (!a != !b || (a && (a->start != b->start || strcmp(a->name, b->name))))
			abort();
	}
	js_perfmap_free(&all);
	js_perfmap_free(&some);
}

static void perf_map(const uint8_t *data, size_t size)
{
	perf_map_for_pcs(data, size);
	js_perfmap pm;
	js_perfmap_init(&pm, NULL);
	size_t split = size ? data[0] * size / 256 : 0, at = 0;
	for (int piece = 0; piece < 2; piece++) {
		size_t end = piece ? size : split;
		ssize_t used = js_perfmap_feed(&pm, (const char *)data + at, end - at);
		if (used < 0)
			break;
		at += (size_t)used;
		js_perfmap_commit(&pm);
		for (size_t i = 0; i + 8 <= size && i < 256; i += 8) {
			uint64_t pc;
			memcpy(&pc, data + i, 8);
			const js_pm_seg *g = js_perfmap_find(&pm, pc);
			if (g && (pc < g->lo || pc >= g->hi || strlen(g->name) > JS_MAX_PERFMAP_LINE))
				abort();
		}
	}
	for (unsigned l = 0; l < JS_PM_LEVELS; l++)
		for (size_t i = 0; i < pm.n_lvl[l]; i++)
			if (pm.lvl[l][i].lo >= pm.lvl[l][i].hi ||
			    (i && pm.lvl[l][i].lo < pm.lvl[l][i - 1].hi))
				abort();
	js_perfmap_free(&pm);
}

/* Feed the dump as the file reader does, in two pieces. */
static void jit_dump_feed(js_jitdump *jd, const uint8_t *data, size_t size)
{
	size_t split = 1 + (size - 1) * data[0] / 256, at = 1;
	for (int piece = 0; piece < 2 && !jd->ended; piece++) {
		size_t end = piece ? size : split;
		while (at < end && !jd->ended) {
			if (jd->file.skip) {
				size_t n = jd->file.skip < end - at ? (size_t)jd->file.skip : end - at;
				at += n, jd->file.skip -= n, jd->file.off += n;
				continue;
			}
			size_t want;
			ssize_t used = js_jitdump_feed(jd, data + at, end - at, &want);
			if (used <= 0)
				break;
			at += (size_t)used;
			jd->file.off += (uint64_t)used;
		}
		js_jitdump_commit(jd);
	}
}

/* At each pc a dump wants, the code it keeps is the whole dump's: the same
 * range, name, lines and CFI.  The records it reads back by offset come
 * from a memfd holding the dump. */
static void jit_dump_for_pcs(const uint8_t *data, size_t size)
{
	int fd = memfd_create("jitdump", MFD_CLOEXEC);
	if (fd < 0 || write(fd, data + 1, size - 1) != (ssize_t)(size - 1)) {
		if (fd >= 0)
			close(fd);
		return;
	}
	js_span want[WANT];
	js_jitdump all, some;
	js_jitdump_init(&all, NULL, EM_X86_64);
	js_jitdump_init(&some, NULL, EM_X86_64);
	jit_dump_feed(&all, data, size);
	uint64_t lo[WANT], hi[WANT];
	size_t m = 0;
	for (; m < all.n_code && m < WANT; m++)
		lo[m] = all.code[m].lo, hi[m] = all.code[m].hi;
	size_t n = wanted_pcs(data + 1, size - 1, lo, hi, m, want);
	if ((some.want = malloc(sizeof want))) {
		memcpy(some.want, want, sizeof want);
		some.n_want = js_spans_normalize(some.want, n);
		some.file.fd = fd;
		jit_dump_feed(&some, data, size);
	}
	for (size_t i = 0; some.want && !some.gap && i < n; i++) { /* (a gap is read again) */
		const js_jd_code *a = js_jitdump_find(&all, want[i].lo),
				 *b = js_jitdump_find(&some, want[i].lo);
		if (!a != !b)
			abort();
		if (a && (a->lo != b->lo || a->hi != b->hi || strcmp(a->name, b->name) ||
			  a->n_lines != b->n_lines || a->eh_size != b->eh_size ||
			  (a->eh_size && memcmp(a->eh, b->eh, a->eh_size))))
			abort();
		for (size_t k = 0; a && k < a->n_lines; k++)
			if (a->lines[k].addr != b->lines[k].addr || a->lines[k].line != b->lines[k].line ||
			    a->lines[k].col != b->lines[k].col || strcmp(a->lines[k].file, b->lines[k].file))
				abort();
	}
	js_jitdump_free(&all);
	js_jitdump_free(&some);
	close(fd);
}

static void jit_dump(const uint8_t *data, size_t size)
{
	if (!size)
		return;
	jit_dump_for_pcs(data, size);
	js_jitdump jd;
	js_jitdump_init(&jd, NULL, EM_X86_64);
	jit_dump_feed(&jd, data, size);
	for (size_t i = 0; i < jd.n_code && i < 64; i++) {
		js_jd_code *c = &jd.code[i];
		if (js_jitdump_find(&jd, c->lo) == NULL)
			abort(); /* every load covers its start, by it or a later one */
		js_jitdump_line(c, c->lo);
		js_image *im = js_jitdump_image(&jd, c);
		if (im)
			check_output(&im->out);
	}
	js_jitdump_free(&jd);
}

enum { ONLY_ANY, ONLY_PMAP, ONLY_JDMP, ONLY_IMAGE, ONLY_MEM };

static int only_reader(void)
{
	static const char *const names[] = { "", "pmap", "jdmp", "image", "mem" };
	const char *v = getenv("JS_FUZZ_ONLY");
	for (int i = 1; v && i < 5; i++)
		if (!strcmp(v, names[i]))
			return i;
	return ONLY_ANY;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int once, only;
	if (!once++) {
		elf_version(EV_CURRENT);
		only = only_reader();
	}
	/* a prefix is dropped where it is there, so one corpus seeds them all */
	bool pm = size >= 4 && !memcmp(data, "PMAP", 4), jd = size >= 4 && !memcmp(data, "JDMP", 4);
	if (only == ONLY_PMAP || (only == ONLY_ANY && pm)) {
		perf_map(data + (pm ? 4 : 0), size - (pm ? 4 : 0));
		return 0;
	}
	if (only == ONLY_JDMP || (only == ONLY_ANY && jd)) {
		jit_dump(data + (jd ? 4 : 0), size - (jd ? 4 : 0));
		return 0;
	}
	if (only == ONLY_IMAGE || (only == ONLY_ANY && size >= 4 && !memcmp(data, ELFMAG, SELFMAG))) {
		/* its exports (what other images' relocations may name), then
		 * the image rewritten */
		uint8_t *copy = malloc(size ? size : 1);
		js_exports x;
		if (copy && (memcpy(copy, data, size), js_image_exports(copy, size, &x) == 0))
			js_exports_free(&x);
		free(copy);
		rewrite(data, size, FUZZ_BASE, 0, 0, NULL);
		return 0;
	}
	js_mem *m = js_mem_buffer(data, size, FUZZ_BASE);
	if (!m)
		return 0;
	js_desc d;
	memset(&d, 0, sizeof d);
	d.addr = FUZZ_BASE;
	/* as jitmodules.c does: every image's exports first, then each image
	 * rewritten with the others' symbols */
	fuzz_syms fs = { .n = 0 };
	uint8_t *img[16] = { 0 };
	if (js_desc_read(m, &d, READ_CORE, NULL) == 0) {
		size_t budget = 1 << 20;
		for (size_t i = 0; i < d.n && i < 16; i++) {
			const js_entry *e = &d.ents[i];
			if (!e->symfile_size || e->symfile_size > budget)
				continue;
			img[i] = malloc(e->symfile_size);
			if (img[i] && js_mem_read(m, e->symfile_addr, img[i], e->symfile_size) == 0 &&
			    js_image_exports(img[i], e->symfile_size, &fs.x[fs.n]) == 0)
				fs.n++;
			else
				free(img[i]), img[i] = NULL;
			budget -= e->symfile_size;
		}
		for (size_t i = 0; i < d.n && i < 16; i++)
			if (img[i])
				rewrite(img[i], d.ents[i].symfile_size, d.ents[i].symfile_addr,
					d.ents[i].code_lo, d.ents[i].code_hi, &fs);
	}
	for (size_t i = 0; i < 16; i++)
		free(img[i]);
	for (size_t i = 0; i < fs.n; i++)
		js_exports_free(&fs.x[i]);
	js_desc_free(&d);
	js_mem_free(m);
	return 0;
}
