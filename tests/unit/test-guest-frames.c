/* SPDX-License-Identifier: MIT */
/* test-guest-frames.c - guest frames (ju_blob.inlines), as the library takes
 * them and as an independent reader (libdw) finds them in the images.
 *
 *   - every rule of the tree is enforced: a refused blob gets JU_EINLINE
 *     (JU_ENAME for a bad name or file) with a message naming the inline,
 *     and nothing of its batch is published;
 *   - in every arena image, at every offset of every blob, libdw's scopes
 *     are the inline chain the tree gives (names, call files and lines),
 *     innermost first, under the blob's subprogram, and the line row there
 *     is in the file of the innermost inline over the row; through batches,
 *     merges, rebuilds and freed slots taken by new blobs;
 *   - a blob without a tree keeps exactly the DWARF it had (no inline DIE,
 *     one file), in an image beside blobs with trees too;
 *   - no guest name is left in gdb's images once its blob is unpublished
 *     and other code took its place;
 *   - a caller built with the shorter ju_blob of 0.2 still publishes.
 * The images are written to guest-N.o for
 * t-guest-frames-read-cleanly-by-independent-readers.sh.
 */
#include "formats/gdbjit.h"
#include "image.h"
#include "internal.h"
#include "unit.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

extern gdbjit_descriptor __jit_debug_descriptor;

static uint8_t *R; /* an inaccessible reservation: addresses, never run */
static ju_ctx *ctx;
enum { SLOT = 64, SIZE = 64, N = 300 };

/* ---- the model: a few tree shapes, picked by slot ----------------------------- */

typedef struct model {
	bool live;
	char name[32];
	ju_inline in[16];
	size_t n_in;
	char names[8][32];
} model;
static model M[N];
static ju_line rows[SIZE / 4];
static const char blob_file[] = "blob.py";

/* Shape s of slot k (named after both, so a stale name shows where from):
 * 0 no tree; 1 one inline in the blob's file; 2 three deep with a sibling,
 * files and call files given, a function inlined twice; 3 two siblings of
 * one function at the top; 4 fourteen, one over the blob and thirteen
 * siblings under it: two names in three files, so six guest functions,
 * each inlined two or three times (more files and functions than the
 * library numbers pairwise: it sorts them). */
static void shape(size_t k, int s, const char *tag)
{
	model *m = &M[k];
	memset(m, 0, sizeof *m);
	snprintf(m->name, sizeof m->name, "%s:%zu", tag, k);
	for (int i = 0; i < 8; i++)
		snprintf(m->names[i], sizeof m->names[i], "%s%d:%zu", tag, i, k);
	ju_inline *in = m->in;
	switch (s) {
	case 1:
		in[0] = (ju_inline){ 8, 40, 0, 11, m->names[0], NULL, NULL };
		m->n_in = 1;
		break;
	case 2:
		in[0] = (ju_inline){ 4, 60, 0, 5, m->names[0], "a.py", NULL };
		in[1] = (ju_inline){ 8, 40, 1, 21, m->names[1], "b.py", "a.py" };
		in[2] = (ju_inline){ 12, 20, 2, 31, m->names[2], NULL, NULL };
		in[3] = (ju_inline){ 24, 28, 2, 33, m->names[1], "b.py", "elsewhere.py" };
		in[4] = (ju_inline){ 44, 56, 1, 22, m->names[1], "b.py", NULL };
		m->n_in = 5;
		break;
	case 3:
		in[0] = (ju_inline){ 0, 16, 0, 7, m->names[3], "c.py", NULL };
		in[1] = (ju_inline){ 16, 64, 0, 8, m->names[3], "c.py", NULL };
		m->n_in = 2;
		break;
	case 4:
		in[0] = (ju_inline){ 0, 64, 0, 3, m->names[0], "d.py", NULL };
		for (uint32_t j = 0; j < 13; j++) {
			static const char *const file[] = { "d.py", "e.py", NULL };
			in[1 + j] = (ju_inline){ 4 + 4 * j,
						 8 + 4 * j,
						 1,
						 40 + j,
						 m->names[1 + j % 2],
						 file[j % 3],
						 j % 4 ? NULL : "elsewhere.py" };
		}
		m->n_in = 14;
		break;
	}
}

static ju_blob blob_of(size_t k)
{
	return JU_BLOB(.start = R + k * SLOT, .size = SIZE, .name = M[k].name,
		       .frame = { .kind = JU_FRAME_LEAF }, .file = blob_file, .lines = rows,
		       .n_lines = SIZE / 4, .inlines = M[k].n_in ? M[k].in : NULL, .n_inlines = M[k].n_in);
}

static const char *own_file(const model *m, uint32_t k)
{
	return k && m->in[k - 1].file ? m->in[k - 1].file : blob_file;
}

static const char *call_file(const model *m, uint32_t k)
{
	const ju_inline *x = &m->in[k - 1];
	return x->call_file ? x->call_file : own_file(m, x->parent);
}

/* The inlines over offset `off`, outermost first (index + 1); their count. */
static size_t chain_at(const model *m, uint32_t off, uint32_t *chain)
{
	size_t d = 0;
	for (size_t i = 0; i < m->n_in; i++)
		if (m->in[i].start <= off && off < m->in[i].end)
			chain[d++] = (uint32_t)i + 1;
	return d;
}

/* ---- libdw's view ----------------------------------------------------------------- */

static const char *die_file(Dwarf_Die *cu, Dwarf_Die *die, int at)
{
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Files *files;
	size_t nfiles;
	if (!dwarf_attr_integrate(die, at, &a) || dwarf_formudata(&a, &idx) ||
	    dwarf_getsrcfiles(cu, &files, &nfiles) || idx >= nfiles)
		return "?";
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static Dwarf_Word die_udata(Dwarf_Die *die, int at)
{
	Dwarf_Attribute a;
	Dwarf_Word v = 0;
	if (!dwarf_attr(die, at, &a) || dwarf_formudata(&a, &v))
		return 0;
	return v;
}

/* Count of DW_TAG_inlined_subroutine DIEs in a unit. */
static size_t count_inlined(Dwarf_Die *die)
{
	size_t n = dwarf_tag(die) == DW_TAG_inlined_subroutine;
	Dwarf_Die kid;
	if (dwarf_child(die, &kid) == 0)
		do
			n += count_inlined(&kid);
		while (dwarf_siblingof(&kid, &kid) == 0);
	return n;
}

static void check_blob_dwarf(Dwarf *dw, size_t k)
{
	const model *m = &M[k];
	uint64_t base = (uintptr_t)R + k * SLOT;
	Dwarf_Die cu;
	if (!dwarf_addrdie(dw, base, &cu)) {
		CHECK(0, "%s: no unit covers it", m->name);
		return;
	}
	CHECK(count_inlined(&cu) == m->n_in, "%s: %zu inlined DIEs, want %zu", m->name, count_inlined(&cu),
	      m->n_in);
	Dwarf_Files *files;
	size_t nfiles;
	if (!m->n_in)
		CHECK(dwarf_getsrcfiles(&cu, &files, &nfiles) == 0 && nfiles == 2,
		      "%s: a blob without a tree has one file (and libdw's 0th): %zu", m->name, nfiles);
	for (uint32_t off = 0; off < SIZE; off++) {
		uint32_t chain[8];
		size_t d = chain_at(m, off, chain);
		/* the innermost scope at the pc, then its chain of containing
		 * DIEs, as eu-addr2line -i and eu-stack -i walk it */
		Dwarf_Die *scopes = NULL, inner;
		int n = dwarf_getscopes(&cu, base + off, &scopes);
		CHECK(n > 0, "%s+%u: no scope", m->name, off);
		if (n <= 0)
			continue;
		inner = scopes[0];
		free(scopes);
		scopes = NULL;
		n = dwarf_getscopes_die(&inner, &scopes);
		/* innermost first: the inlines, the blob's subprogram, the unit */
		CHECK(n == (int)d + 2, "%s+%u: %d scopes, want %zu", m->name, off, n, d + 2);
		for (int s = 0; s <= (int)d && s < n; s++) {
			Dwarf_Die *die = &scopes[s];
			if (s == (int)d) {
				CHECK(dwarf_tag(die) == DW_TAG_subprogram &&
					      !strcmp(dwarf_diename(die), m->name),
				      "%s+%u: outermost scope %s", m->name, off, dwarf_diename(die));
				continue;
			}
			uint32_t want = chain[d - 1 - (size_t)s];
			const ju_inline *x = &m->in[want - 1];
			CHECK(dwarf_tag(die) == DW_TAG_inlined_subroutine &&
				      !strcmp(dwarf_diename(die), x->name),
			      "%s+%u: scope %d is %s, want %s", m->name, off, s, dwarf_diename(die), x->name);
			CHECK(die_udata(die, DW_AT_call_line) == x->call_line,
			      "%s+%u: %s call_line %llu, want %u", m->name, off, x->name,
			      (unsigned long long)die_udata(die, DW_AT_call_line), x->call_line);
			CHECK(!strcmp(die_file(&cu, die, DW_AT_call_file), call_file(m, want)),
			      "%s+%u: %s call_file %s, want %s", m->name, off, x->name,
			      die_file(&cu, die, DW_AT_call_file), call_file(m, want));
			CHECK(!strcmp(die_file(&cu, die, DW_AT_decl_file), own_file(m, want)),
			      "%s+%u: %s decl_file %s, want %s", m->name, off, x->name,
			      die_file(&cu, die, DW_AT_decl_file), own_file(m, want));
		}
		free(scopes);
		/* the row: the last at or before off, in the file of the
		 * innermost inline over the row's own offset */
		const ju_line *row = &rows[off / 4];
		size_t rd = chain_at(m, row->offset, chain);
		const char *want_file = own_file(m, rd ? chain[rd - 1] : 0);
		Dwarf_Line *line = dwarf_getsrc_die(&cu, base + off);
		int lineno = 0;
		CHECK(line && dwarf_lineno(line, &lineno) == 0 && lineno == (int)row->line,
		      "%s+%u: line %d, want %u", m->name, off, lineno, row->line);
		const char *got = line ? dwarf_linesrc(line, NULL, NULL) : "?";
		CHECK(!strcmp(got, want_file), "%s+%u: row in %s, want %s", m->name, off, got, want_file);
	}
}

static int n_saved;

/* Check the live blobs found in one image; mark them in seen[]. */
static void check_image(const uint8_t *img, size_t size, bool *seen)
{
	char *copy = malloc(size);
	memcpy(copy, img, size);
	Elf *elf = elf_memory(copy, size);
	Dwarf *dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	for (size_t k = 0; dw && k < N; k++) {
		Dwarf_Die cu;
		Dwarf_Addr lo;
		if (M[k].live && dwarf_addrdie(dw, (uintptr_t)R + k * SLOT, &cu) &&
		    dwarf_lowpc(&cu, &lo) == 0 && lo == (uintptr_t)R + k * SLOT) {
			check_blob_dwarf(dw, k);
			seen[k] = true;
		}
	}
	char path[32];
	snprintf(path, sizeof path, "guest-%d.o", n_saved++);
	FILE *f = fopen(path, "wb");
	CHECK(f && fwrite(img, 1, size, f) == size && fclose(f) == 0, "writing %s", path);
	if (dw)
		dwarf_end(dw);
	if (elf)
		elf_end(elf);
	free(copy);
}

/* Every live blob, read back from the images gdb and lldb read (the gdb
 * channel's, per chunk of an arena) and, while no freed slot was taken,
 * from the arena images (which keep a reused slot's old DWARF: only the
 * unwinders read them, and those only their .eh_frame). */
static void check_images(const char *when, bool arenas_too)
{
	bool seen[N] = { false }, seen_a[N] = { false };
	size_t n_img = 0, live = 0, found = 0, found_a = 0;
	for (uint64_t e = __jit_debug_descriptor.first_entry; e; n_img++) {
		const gdbjit_entry *en = (const gdbjit_entry *)(uintptr_t)e;
		check_image((const uint8_t *)(uintptr_t)en->symfile_addr, en->symfile_size, seen);
		e = en->next_entry;
	}
	for (size_t i = 0; arenas_too && i < ctx->n_arenas; i++)
		check_image(ctx->arenas[i]->image, ctx->arenas[i]->image_size, seen_a);
	for (size_t k = 0; k < N; k++) {
		live += M[k].live;
		found += seen[k];
		found_a += seen_a[k];
	}
	CHECK(found == live && live == ju_count(ctx), "%s: %zu blobs found in gdb's images, %zu live", when,
	      found, live);
	CHECK(!arenas_too || found_a == live, "%s: %zu blobs found in the arena images, %zu live", when,
	      found_a, live);
	printf("%s: %zu gdb images, %zu arenas, %zu blobs checked\n", when, n_img, ctx->n_arenas, live);
}

/* Whether `s` is in an image registered with gdb. */
static bool in_gdb_images(const char *s)
{
	for (uint64_t e = __jit_debug_descriptor.first_entry; e;) {
		const gdbjit_entry *en = (const gdbjit_entry *)(uintptr_t)e;
		if (memmem((const void *)(uintptr_t)en->symfile_addr, en->symfile_size, s, strlen(s)))
			return true;
		e = en->next_entry;
	}
	return false;
}

/* ---- publishing ------------------------------------------------------------------- */

static void publish_range(size_t k0, size_t k1, size_t step, bool batch)
{
	ju_blob b[N];
	size_t n = 0;
	for (size_t k = k0; k < k1; k += step) {
		b[n++] = blob_of(k);
		M[k].live = true;
	}
	if (batch) {
		CHECK_RC(ju_publish_batch(ctx, b, n), 0);
		return;
	}
	for (size_t i = 0; i < n; i++)
		CHECK_RC(ju_publish(ctx, &b[i]), 0);
}

static void unpublish_every(size_t k0, size_t k1, size_t step)
{
	for (size_t k = k0; k < k1; k += step) {
		CHECK_RC(ju_unpublish(ctx, R + k * SLOT), 0);
		M[k].live = false;
	}
}

/* Merges and rebuilds reproduce the trees. */
static void through_arena_changes(void)
{
	for (size_t k = 0; k < N; k++)
		shape(k, (int)(k % 5), "g");
	publish_range(0, 200, 1, true); /* one arena of 200 */
	publish_range(200, 232, 1, false);
	publish_range(232, N, 1, true); /* merges */
	check_images("published", true);
	unpublish_every(3, N, 7); /* tombstones, and rebuilds of small arenas */
	check_images("after unpublishing every 7th", true);
}

/* Freed slots taken by new blobs, with trees and without; then the slots
 * freed again and taken by blobs without trees: no guest name survives. */
static void through_slot_reuse(void)
{
	/* every 7th from 3 is free: take them with other shapes and names */
	for (size_t k = 3; k < N; k += 7)
		shape(k, (int)(k % 4) + 1, "reused");
	publish_range(3, N, 7, true);
	bool side = false;
	for (size_t i = 0; i < ctx->n_arenas; i++)
		side |= ctx->arenas[i]->side != NULL;
	CHECK(side, "the publish should take freed slots in place (arena side blocks)");
	check_images("slots reused with trees", false);
	CHECK(in_gdb_images("reused0:3"), "a reused slot's guest name is in an image");

	unpublish_every(3, N, 7);
	for (size_t k = 3; k < N; k += 7)
		shape(k, 0, "plain");
	publish_range(3, N, 7, true);
	check_images("slots reused without trees", false);
	char name[32];
	size_t stale = 0;
	for (size_t k = 3; k < N; k += 7)
		for (int i = 0; i < 8; i++) {
			snprintf(name, sizeof name, "reused%d:%zu", i, k);
			stale += in_gdb_images(name);
		}
	CHECK(stale == 0, "%zu guest names of unpublished blobs are left in images", stale);
	CHECK(ju_unpublish_all(ctx) == 0, "unpublish all");
	for (size_t k = 0; k < N; k++)
		M[k].live = false;
}

/* ---- validation ------------------------------------------------------------------- */

static void refused(ju_inline *in, size_t n, int want, const char *part, const char *what)
{
	shape(0, 0, "bad");
	shape(1, 0, "fine");
	ju_blob b[2] = { blob_of(1), blob_of(0) };
	b[1].inlines = in;
	b[1].n_inlines = n;
	int rc = ju_publish_batch(ctx, b, 2);
	CHECK(rc == want, "%s: got %d (%s), want %d", what, rc, ju_errmsg(), want);
	CHECK(strstr(ju_errmsg(), part), "%s: message \"%s\" should mention \"%s\"", what, ju_errmsg(), part);
	CHECK(ju_count(ctx) == 0, "%s: nothing of the batch is published: %zu", what, ju_count(ctx));
}

static void validation(void)
{
	ju_inline in[JU_INLINE_DEPTH_MAX + 2];
	static const char *nm = "f";
#define IN(s, e, p) ((ju_inline){ (s), (e), (p), 3, nm, NULL, NULL })
	in[0] = IN(8, 8, 0);
	refused(in, 1, JU_EINLINE, "inline 0 (f): range [8, 8) is empty", "an empty range");
	in[0] = IN(8, SIZE + 1, 0);
	refused(in, 1, JU_EINLINE, "beyond the blob (64 bytes)", "a range outside the blob");
	in[0] = IN(8, 40, 0), in[1] = IN(4, 20, 1);
	refused(in, 2, JU_EINLINE, "inline 1 (f): [4, 20) is not inside its parent's range [8, 40)",
		"a child not inside its parent");
	in[0] = IN(8, 40, 0), in[1] = IN(30, 50, 0);
	refused(in, 2, JU_EINLINE, "starts before its previous sibling ends (40)", "overlapping siblings");
	in[0] = IN(30, 40, 0), in[1] = IN(8, 20, 0);
	refused(in, 2, JU_EINLINE, "increasing start", "siblings out of order");
	in[0] = IN(8, 40, 2), in[1] = IN(4, 60, 0);
	refused(in, 2, JU_EINLINE, "parent 2 is not before it", "a parent after its child");
	in[0] = IN(8, 20, 0), in[1] = IN(10, 15, 1), in[2] = IN(30, 40, 0), in[3] = IN(32, 34, 2);
	refused(in, 4, JU_EINLINE, "not in pre-order: its parent, inline 1, is neither inline 2",
		"a child after its parent's subtree ended");
	in[0] = IN(8, 40, 1);
	refused(in, 1, JU_EINLINE, "parent 1 is not before it", "its own parent");
	in[0] = IN(8, 40, 0), in[0].call_line = 0;
	refused(in, 1, JU_EINLINE, "call_line 0 is not in 1..", "no call line");
	for (uint32_t d = 0; d <= JU_INLINE_DEPTH_MAX; d++)
		in[d] = IN(d, SIZE, d);
	refused(in, JU_INLINE_DEPTH_MAX + 1, JU_EINLINE, "nested more than 32 deep", "too deep");
	shape(0, 0, "deep");
	ju_blob ok = blob_of(0);
	ok.inlines = in, ok.n_inlines = JU_INLINE_DEPTH_MAX;
	CHECK_RC(ju_publish(ctx, &ok), 0); /* exactly the limit */
	CHECK_RC(ju_unpublish(ctx, ok.start), 0);
	refused(in, JU_INLINE_MAX + 1, JU_EINLINE, "inlines (max 65536)", "too many");
	refused(NULL, 1, JU_EINLINE, "n_inlines is 1 but inlines is NULL", "no array");

	in[0] = IN(8, 40, 0), in[0].name = NULL;
	refused(in, 1, JU_ENAME, "inline 0: name is NULL", "no name");
	in[0].name = "";
	refused(in, 1, JU_ENAME, "inline 0: name is empty", "an empty name");
	in[0].name = "bad\nname";
	refused(in, 1, JU_ENAME, "inline 0: name is not valid UTF-8", "a control character");
	in[0].name = "\xc3\x28";
	refused(in, 1, JU_ENAME, "inline 0: name is not valid UTF-8", "bad UTF-8");
	in[0].name = nm, in[0].file = "a\x7f";
	refused(in, 1, JU_ENAME, "inline 0: file is not valid UTF-8", "a bad file");
	in[0].file = NULL, in[0].call_file = "";
	refused(in, 1, JU_ENAME, "inline 0: call_file is empty", "an empty call file");
	static char longname[JU_NAME_MAX + 2];
	memset(longname, 'x', JU_NAME_MAX + 1);
	in[0].call_file = NULL, in[0].name = longname;
	refused(in, 1, JU_ENAME, "inline 0: name is longer than 1024 bytes", "a long name");

	in[0] = IN(8, 40, 0);
	shape(0, 0, "nolines");
	ju_blob nolines = blob_of(0);
	nolines.file = NULL, nolines.lines = NULL, nolines.n_lines = 0;
	nolines.inlines = in, nolines.n_inlines = 1;
	CHECK_RC(ju_publish(ctx, &nolines), JU_EINLINE);
	CHECK(strstr(ju_errmsg(), "need a line table"), "no line table: %s", ju_errmsg());
	size_t room;
	CHECK_RC(ju_room_after(ctx, &nolines, &room), JU_EINLINE);
	CHECK(!strcmp(ju_strerror(JU_EINLINE), "invalid guest frames (inline ranges)"), "JU_EINLINE: %s",
	      ju_strerror(JU_EINLINE));
	CHECK(ju_count(ctx) == 0, "nothing published: %zu", ju_count(ctx));
#undef IN
}

/* A caller compiled against 0.2's ju_blob, which ends at n_lines. */
static void older_caller(void)
{
	shape(5, 0, "old");
	ju_blob b[2] = { blob_of(5), blob_of(6) };
	size_t old_sz = offsetof(ju_blob, n_lines) + sizeof(size_t);
	uint8_t arr[2 * sizeof(ju_blob)];
	memset(arr, 0xee, sizeof arr); /* what lies past a short struct is not read */
	shape(6, 0, "old");
	b[1] = blob_of(6);
	for (int i = 0; i < 2; i++) {
		b[i].sz = old_sz;
		memcpy(arr + i * old_sz, &b[i], old_sz);
	}
	/* A 0.2 binary calls the plain symbol, which knows no size but sz. */
	CHECK_RC((ju_publish_batch)(ctx, (const ju_blob *)(void *)arr, 2), 0);
	CHECK(ju_count(ctx) == 2, "a 0.2 caller's batch is published: %zu", ju_count(ctx));
	CHECK_RC(ju_unpublish_all(ctx), 0);
}

int main(void)
{
	R = mmap(NULL, (size_t)N * SLOT, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (R == MAP_FAILED)
		UNIT_SKIP("no address space for the reservation");
	elf_version(EV_CURRENT);
	for (uint32_t r = 0; r < SIZE / 4; r++)
		rows[r] = (ju_line){ r * 4, 100 + r };
	CHECK_RC(ju_open(&JU_OPTIONS(.channels = JU_CH_UNWINDER | JU_CH_GDB, .flags = JU_OPT_NO_ENV), &ctx),
		 0);
	validation();
	older_caller();
	through_arena_changes();
	through_slot_reuse();
	CHECK_RC(ju_close(ctx), 0);
	return unit_done("test-guest-frames");
}
