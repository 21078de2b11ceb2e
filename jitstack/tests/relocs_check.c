/* SPDX-License-Identifier: MIT */
/* relocs_check.c - images whose DWARF relocations name symbols another
 * image defines (LLVM's lazy ORC JIT: one image per function, one for the
 * globals), read through jitmodules.c from a memory holding a plain GDB
 * JIT list, as jitstack reads a target's, in two refreshes:
 *
 *   1. the list holds the function image alone: its DWARF waits for the
 *      global it names (the note says which, and no lines are claimed);
 *   2. the globals image is registered (at the head, as LLVM links it):
 *      the refresh rewrites the function image again, now with its lines
 *      and nothing undefined, as a new image under a new module name (the
 *      old one waits in j->dead for libdwfl to let go).
 *
 * Usage: relocs_check FUNCTION_IMAGE GLOBALS_IMAGE.  Prints what it saw;
 * exit 0 when every check holds.
 */
#include "formats/gdbjit.h"
#include "jit/jitmodules.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BASE 0x10000u
#define ENTRY_FN 0x100u
#define ENTRY_GLOBALS 0x140u
#define IMAGES 0x1000u

static int failures;

static void check(bool ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAILED", what);
	failures += !ok;
}

static uint8_t *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = NULL;
	long n = -1;
	if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (b = malloc((size_t)n)) && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	if (f)
		fclose(f);
	*size = b ? (size_t)n : 0;
	return b;
}

/* The plain GDB JIT structures, at their offsets in mem. */
static void put_entry(uint8_t *mem, size_t at, uint64_t next, uint64_t prev, uint64_t image, uint64_t size)
{
	uint64_t e[4] = { next, prev, image, size };
	memcpy(mem + at, e, sizeof e);
}

static void put_descriptor(uint8_t *mem, uint64_t first)
{
	uint32_t head[2] = { GDBJIT_VERSION, GDBJIT_NOACTION };
	uint64_t ptrs[2] = { first, first };
	memcpy(mem, head, sizeof head);
	memcpy(mem + 8, ptrs, sizeof ptrs);
}

static js_image *image_of(js_jit *j, uint64_t entry)
{
	for (size_t i = 0; i < j->n_img; i++)
		if (j->img[i]->entry == entry)
			return j->img[i];
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: relocs_check FUNCTION_IMAGE GLOBALS_IMAGE\n");
		return 2;
	}
	elf_version(EV_CURRENT);
	size_t fn_size, gl_size;
	uint8_t *fn = slurp(argv[1], &fn_size), *gl = slurp(argv[2], &gl_size);
	if (!fn || !gl) {
		fprintf(stderr, "relocs_check: cannot read the images\n");
		return 2;
	}
	size_t gl_at = IMAGES + ((fn_size + 15) & ~(size_t)15), mem_size = gl_at + gl_size;
	uint8_t *mem = calloc(1, mem_size);
	js_mem *m = mem ? js_mem_buffer(mem, mem_size, BASE) : NULL;
	if (!m)
		return 2;
	memcpy(mem + IMAGES, fn, fn_size);
	memcpy(mem + gl_at, gl, gl_size);
	js_jit j;
	js_jit_init(&j, EM_X86_64);
	j.n_desc = 1;
	j.desc[0].addr = BASE;
	snprintf(j.desc[0].module, sizeof j.desc[0].module, "relocs_check");
	js_err err = { 0 };

	/* 1. the function image alone */
	put_entry(mem, ENTRY_FN, 0, 0, BASE + IMAGES, fn_size);
	put_descriptor(mem, BASE + ENTRY_FN);
	check(js_jit_refresh(&j, m, READ_CORE, &err) == 0, "the list with the function image is read");
	js_image *before = image_of(&j, BASE + ENTRY_FN);
	check(before && before->out.elf, "the function image is rewritten");
	if (!before || !before->out.elf)
		return 1;
	printf("  alone: %s; note: %s\n", before->out.has_lines ? "lines" : "no lines", before->out.note);
	check(before->out.n_undefined > 0 && strstr(before->out.note, "which no JIT image defines"),
	      "alone, its DWARF waits for a symbol no image defines, and the note says so");
	check(!before->out.has_lines, "alone, it claims no lines");
	char modname[sizeof before->modname];
	memcpy(modname, before->modname, sizeof modname);

	/* 2. the globals image registered at the head of the list */
	put_entry(mem, ENTRY_GLOBALS, BASE + ENTRY_FN, 0, BASE + gl_at, gl_size);
	put_entry(mem, ENTRY_FN, 0, BASE + ENTRY_GLOBALS, BASE + IMAGES, fn_size);
	put_descriptor(mem, BASE + ENTRY_GLOBALS);
	check(js_jit_refresh(&j, m, READ_CORE, &err) == 0, "the list with both images is read");
	js_image *after = image_of(&j, BASE + ENTRY_FN), *globals = image_of(&j, BASE + ENTRY_GLOBALS);
	check(globals && globals->out.no_code && globals->exports.n > 0,
	      "the globals image holds no code and exports symbols");
	check(after && after != before && after->out.elf,
	      "the function image is rewritten again, as a new image");
	if (!after || !after->out.elf)
		return 1;
	printf("  with the globals: %s; note: %s; module %s (was %s)\n",
	       after->out.has_lines ? "lines" : "no lines", after->out.note[0] ? after->out.note : "(none)",
	       after->modname, modname);
	check(after->out.n_undefined == 0 && !after->out.note[0], "its relocations are all applied");
	check(after->out.has_lines, "it has lines");
	check(strcmp(after->modname, modname) != 0, "it has a new module name");
	check(j.n_dead == 1, "the old image waits in the dead list");
	js_jit_reap(&j);
	js_jit_free(&j);
	js_mem_free(m);
	free(mem);
	free(fn);
	free(gl);
	printf("%s\n", failures ? "FAILED" : "all checks hold");
	return failures ? 1 : 0;
}
