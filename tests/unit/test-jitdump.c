/* SPDX-License-Identifier: MIT */
/* test-jitdump.c - the jitdump a process writes, read back with
 * test-jitdump-reader.h (formats/jitdump.h) and checked against what was
 * published and against the in-process unwind tables:
 *
 *   - every record is well formed; UNWINDING_INFO (and DEBUG_INFO exactly
 *     when the blob has lines) comes before each CODE_LOAD; CLOSE ends the
 *     file once the last context closes; the code bytes are the memory's;
 *   - the unwind tables, laid out as perf's genelf.c lays them out, give
 *     libdw the same CFA and register rules at every pc as the library's
 *     in-process .eh_frame gives for the real address;
 *   - a synthesized mapping never reaches the next published blob: tables
 *     are mapped and the salt added only where the gap after a blob has room;
 *   - the file is marked by an executable mapping while open, shared by the
 *     process's contexts, never written through a symbolic link or when it
 *     belongs to someone else, and a failed publish leaves it as it was.
 *
 * For t-perf-inject-jit-unwinds-through-jit-frames.sh it has two more modes:
 *   --check-elf FILE...  ELF files `perf inject --jit` wrote: libdw must find
 *                        a frame, through their .eh_frame_hdr, at the start
 *                        of the symbol, with a CFA on rsp or rbp wherever it
 *                        finds one;
 *   --list DUMP          check a dump like the tests here do, then print one
 *                        line per CODE_LOAD: "name code_size mapped_size".
 */
#include "internal.h"
#include "test-jitdump-reader.h"
#include "unit.h"

#include <elf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void ju__fault_after(long n);
long ju__fault_remaining(void);

static char top[256]; /* scratch directory */
static uint8_t *R;    /* the code region */
enum { REGION = 1 << 16 };

/* ---- blobs ------------------------------------------------------------------- */

static const ju_range fp_epi[] = { { 38, 39 } };
static const ju_line fp_lines[] = { { 0, 7 }, { 4, 8 }, { 20, 30 } };
static const ju_line leaf_lines[] = { { 0, 100 } };
static const uint8_t cfi_a[] = { 0x44, 0x0e, 32 }; /* adv 4; cfa rsp+32 */
static const uint8_t cfi_b[] = { 0x42, 0x0e, 16, 0x83, 0x02, 0x48, 0x0a, 0x0e, 8, 0x42, 0x0b };
static const ju_cfi_range cfi_ranges[] = {
	{ 0, 10, cfi_a, sizeof cfi_a },
	{ 12, 30, cfi_b, sizeof cfi_b },
};

typedef struct tblob {
	ju_blob b;
	bool published;
	int batch; /* publish step; a mapping may only avoid blobs of earlier or the same steps */
} tblob;

static tblob blobs[32];
static size_t n_blobs;

static ju_blob fp_blob(uint32_t at, uint32_t size, const char *name)
{
	return (ju_blob){ .sz = sizeof(ju_blob),
			  .start = R + at,
			  .size = size,
			  .name = name,
			  .frame = { .kind = JU_FRAME_FP, .u.fp = { 1, 4, fp_epi, 1 } },
			  .file = "fp.src",
			  .lines = fp_lines,
			  .n_lines = 3 };
}

static ju_blob other_blob(uint32_t at, uint32_t size, const char *name, enum ju_frame_kind k)
{
	ju_blob b = {
		.sz = sizeof(ju_blob), .start = R + at, .size = size, .name = name, .frame = { .kind = k }
	};
	if (k == JU_FRAME_REGION)
		b.frame.u.region.cfa_offset = 16, b.frame.u.region.fp_offset = -16,
		b.frame.u.region.ra_offset = -8;
	if (k == JU_FRAME_CFI)
		b.frame.u.cfi.ranges = cfi_ranges, b.frame.u.cfi.n = 2;
	if (k == JU_FRAME_LEAF)
		b.file = "leaf.src", b.lines = leaf_lines, b.n_lines = 1;
	return b;
}

static int publish(ju_ctx *ctx, int step, const ju_blob *b, size_t n)
{
	int rc = ju_publish_batch(ctx, b, n);
	if (rc == 0)
		for (size_t i = 0; i < n; i++)
			blobs[n_blobs++] = (tblob){ b[i], true, step };
	return rc;
}

static const tblob *blob_at(uint64_t addr)
{
	for (size_t i = 0; i < n_blobs; i++)
		if ((uintptr_t)blobs[i].b.start == addr)
			return &blobs[i];
	return NULL;
}

/* Where the next blob that existed when `t` was logged starts. */
static uint64_t next_blob(const tblob *t)
{
	uint64_t end = (uintptr_t)t->b.start + t->b.size, next = UINT64_MAX;
	for (size_t i = 0; i < n_blobs; i++) {
		uint64_t s = (uintptr_t)blobs[i].b.start;
		if (blobs[i].batch <= t->batch && s >= end && s < next)
			next = s;
	}
	return next;
}

/* ---- the in-process tables versus the dumped ones, through libdw ----------- */

/* A file laid out as perf's genelf.c lays out its jitted-<pid>-<n>.so, as far
 * as unwinding is concerned: .text at 0x80, .eh_frame and .eh_frame_hdr at
 * the addresses formats/jitdump.h names, file offsets equal to addresses. */
typedef struct fake_so {
	uint8_t *p;
	size_t size;
} fake_so;

static fake_so build_so(const jd_load *l)
{
	static const char names[] = "\0.text\0.eh_frame\0.eh_frame_hdr\0.shstrtab";
	uint64_t eh_size = l->u.unwinding_size - l->u.eh_frame_hdr_size;
	uint64_t E = JD_ELF_EH_FRAME_ADDR(l->h.code_size), H = E + eh_size;
	uint64_t strtab = H + l->u.eh_frame_hdr_size, shoff = (strtab + sizeof names + 7) & ~7ull;
	fake_so so = { calloc(1, shoff + 5 * sizeof(Elf64_Shdr)), shoff + 5 * sizeof(Elf64_Shdr) };
	Elf64_Ehdr eh = { .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
				       EV_CURRENT },
			  .e_type = ET_DYN,
			  .e_machine = EM_X86_64,
			  .e_version = EV_CURRENT,
			  .e_entry = JD_ELF_TEXT_ADDR,
			  .e_shoff = shoff,
			  .e_ehsize = sizeof eh,
			  .e_shentsize = sizeof(Elf64_Shdr),
			  .e_shnum = 5,
			  .e_shstrndx = 4 };
	memcpy(so.p, &eh, sizeof eh);
	memcpy(so.p + JD_ELF_TEXT_ADDR, l->code, l->h.code_size);
	memcpy(so.p + E, l->unwinding, l->u.unwinding_size);
	memcpy(so.p + strtab, names, sizeof names);
	Elf64_Shdr sh[5] = {
		{ 0 },
		{ 1, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, JD_ELF_TEXT_ADDR, JD_ELF_TEXT_ADDR,
		  l->h.code_size, 0, 0, 16, 0 },
		{ 7, SHT_PROGBITS, SHF_ALLOC, E, E, eh_size, 0, 0, 8, 0 },
		{ 17, SHT_PROGBITS, SHF_ALLOC, H, H, l->u.eh_frame_hdr_size, 0, 0, 4, 0 },
		{ 31, SHT_STRTAB, 0, 0, strtab, sizeof names, 0, 0, 1, 0 },
	};
	memcpy(so.p + shoff, sh, sizeof sh);
	return so;
}

static bool same_ops(const Dwarf_Op *a, size_t na, const Dwarf_Op *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++)
		if (a[i].atom != b[i].atom || a[i].number != b[i].number || a[i].number2 != b[i].number2)
			return false;
	return true;
}

/* The rules at one pc of each CFI, compared.  Returns 0 if equal, 1 if
 * neither has a frame there, -1 if they differ. */
static int compare_at(Dwarf_CFI *want, uint64_t want_pc, Dwarf_CFI *got, uint64_t got_pc)
{
	Dwarf_Frame *fw = NULL, *fg = NULL;
	int rw = dwarf_cfi_addrframe(want, want_pc, &fw), rg = dwarf_cfi_addrframe(got, got_pc, &fg);
	int result = -1;
	if (rw != 0 || rg != 0) {
		result = rw != 0 && rg != 0 ? 1 : -1;
		goto out;
	}
	Dwarf_Op *ow, *og;
	size_t nw, ng;
	if (dwarf_frame_cfa(fw, &ow, &nw) || dwarf_frame_cfa(fg, &og, &ng) || !same_ops(ow, nw, og, ng))
		goto out;
	for (int reg = 0; reg <= 16; reg++) {
		Dwarf_Op mw[3], mg[3];
		if (dwarf_frame_register(fw, reg, mw, &ow, &nw) ||
		    dwarf_frame_register(fg, reg, mg, &og, &ng))
			goto out;
		if ((ow == NULL) != (og == NULL) || (ow && !same_ops(ow, nw, og, ng)))
			goto out;
	}
	result = 0;
out:
	free(fw);
	free(fg);
	return result;
}

static ju_ctx *ctxs[3]; /* the contexts whose arenas hold the published blobs */

/* Every pc of the blob (and the salt after it) through both tables. */
static void tables_match_in_process(const jd_load *l, const tblob *t)
{
	arena *a = NULL;
	for (size_t i = 0; i < 3 && !a; i++)
		if (ctxs[i] && !arena_find(ctxs[i], l->h.code_addr, &a))
			a = NULL;
	CHECK(a, "%s is not published", l->name);
	if (!a)
		return;
	Elf *ea = elf_memory((char *)a->image, a->image_size);
	fake_so so = build_so(l);
	Elf *eg = elf_memory((char *)so.p, so.size);
	Dwarf_CFI *cw = ea ? dwarf_getcfi_elf(ea) : NULL, *cg = eg ? dwarf_getcfi_elf(eg) : NULL;
	CHECK(cw && cg, "%s: libdw cannot read the tables: %s", l->name, dwarf_errmsg(-1));
	for (uint64_t off = 0; cw && cg && off < l->h.code_size; off++) {
		int r = compare_at(cw, l->h.code_addr + off, cg, JD_ELF_TEXT_ADDR + off);
		if (off >= t->b.size) {
			CHECK(r == 1, "%s: the salt at +%llu has a frame", l->name, (unsigned long long)off);
			continue;
		}
		/* CFI ranges share one FDE from the first range's start to the last
		 * one's end (gaps inside it included) */
		bool has_fde = t->b.frame.kind != JU_FRAME_CFI ||
			       (off >= t->b.frame.u.cfi.ranges[0].start &&
				off < t->b.frame.u.cfi.ranges[t->b.frame.u.cfi.n - 1].end);
		CHECK(r == (has_fde ? 0 : 1), "%s at +%llu: the dumped tables say %s", l->name,
		      (unsigned long long)off,
		      r < 0 ? "something else"
		      : r   ? "no frame"
			    : "a frame");
	}
	if (cg)
		dwarf_cfi_end(cg);
	if (cw)
		dwarf_cfi_end(cw);
	elf_end(eg);
	elf_end(ea);
	free(so.p);
}

/* ---- checking a dump -------------------------------------------------------- */

static void path_of_dump(char *path, size_t len, const char *dir, pid_t pid)
{
	snprintf(path, len, "%s/jit-%d.dump", dir, (int)pid);
}

static long file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) ? -1 : (long)st.st_size;
}

/* The file of the row at `off`: the innermost guest frame's over it (the
 * last in pre-order that covers it), else the blob's. */
static const char *file_at(const ju_blob *b, uint32_t off)
{
	const char *file = b->file;
	for (size_t i = 0; i < b->n_inlines; i++)
		if (b->inlines[i].start <= off && off < b->inlines[i].end)
			file = b->inlines[i].file ? b->inlines[i].file : b->file;
	return file;
}

static void check_load(const jd_load *l, bool live)
{
	const tblob *t = blob_at(l->h.code_addr);
	CHECK(t, "a CODE_LOAD for %#llx, where nothing was published", (unsigned long long)l->h.code_addr);
	if (!t)
		return;
	const ju_blob *b = &t->b;
	CHECK(!strcmp(l->name, b->name), "name %s, want %s", l->name, b->name);
	CHECK(l->h.vma == l->h.code_addr && l->h.pid == (uint32_t)getpid(), "%s: vma or pid", b->name);
	CHECK(l->h.code_size == b->size || l->h.code_size == b->size + 8, "%s: code_size %llu for %zu bytes",
	      b->name, (unsigned long long)l->h.code_size, b->size);
	CHECK(!memcmp(l->code, b->start, b->size), "%s: the dumped code differs from memory", b->name);
	/* How far perf will map it, and what the gap after it allowed. */
	uint64_t reach = l->u.mapped_size ? JD_ALIGN8(l->h.code_size) + l->u.mapped_size : l->h.code_size;
	uint64_t room = next_blob(t) - ((uintptr_t)b->start + b->size);
	CHECK(reach - b->size <= room, "%s: perf's mapping reaches %llu bytes past it, the gap is %llu",
	      b->name, (unsigned long long)(reach - b->size), (unsigned long long)room);
	uint64_t want_mapped = JD_ALIGN8(l->u.unwinding_size);
	bool tables_fit = JD_ALIGN8(b->size) - b->size + want_mapped <= room;
	CHECK(l->u.mapped_size == (tables_fit ? want_mapped : 0), "%s: mapped_size %llu with a gap of %llu",
	      b->name, (unsigned long long)l->u.mapped_size, (unsigned long long)room);
	bool salt_fits = tables_fit ? JD_ALIGN8(b->size + 8) - b->size + want_mapped <= room : 8 <= room;
	CHECK(l->h.code_size == b->size + (salt_fits ? 8 : 0), "%s: code_size %llu with a gap of %llu",
	      b->name, (unsigned long long)l->h.code_size, (unsigned long long)room);
	/* Line rows at absolute addresses, closed by a row at the end. */
	CHECK(l->has_debug == (b->n_lines > 0), "%s: DEBUG_INFO %s", b->name,
	      l->has_debug ? "without lines" : "missing");
	if (l->has_debug && b->n_lines) {
		CHECK(l->d.nr_entry == b->n_lines + 1, "%s: %llu rows", b->name,
		      (unsigned long long)l->d.nr_entry);
		for (size_t i = 0; i < l->d.nr_entry && i <= b->n_lines; i++) {
			jd_debug_entry e;
			const char *file;
			jd_entry(l, i, &e, &file);
			const ju_line *want = &b->lines[i < b->n_lines ? i : b->n_lines - 1];
			uint64_t at = (uintptr_t)b->start + (i < b->n_lines ? want->offset : b->size);
			const char *want_file = file_at(b, want->offset);
			CHECK(e.addr == at && e.lineno == (int32_t)want->line && !strcmp(file, want_file),
			      "%s row %zu: %#llx line %d %s, want line %u %s", b->name, i,
			      (unsigned long long)e.addr, e.lineno, file, want->line, want_file);
		}
	}
	char err[200];
	size_t n_fdes = 0;
	int rc = jd_check_tables(l, b->size, &n_fdes, err, sizeof err);
	CHECK(rc == 0, "%s", err);
	/* one FDE per blob, whatever its frame kind (CFI ranges are merged) */
	CHECK(rc || n_fdes == 1, "%s: %zu FDEs, want 1", b->name, n_fdes);
	if (!rc && live)
		tables_match_in_process(l, t);
}

/* Read the dump, check every load (against the in-process tables too while
 * the blobs are `live`); returns the number of loads. */
static size_t check_dump(const char *path, bool live, bool want_closed)
{
	jd_dump d;
	char err[200];
	int rc = jd_dump_read(path, &d, err, sizeof err);
	CHECK(rc == 0, "%s: %s", path, err);
	if (rc)
		return 0;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	CHECK(d.h.elf_mach == arch_host()->elf_machine && d.h.pid == (uint32_t)getpid() &&
		      d.h.total_size == sizeof(jd_header) &&
		      d.h.timestamp <= (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec,
	      "header: mach %u pid %u", d.h.elf_mach, d.h.pid);
	CHECK(d.closed == want_closed, "the dump %s with CLOSE", d.closed ? "ends" : "does not end");
	for (size_t i = 0; i < d.n_loads; i++)
		check_load(&d.loads[i], live);
	size_t n = d.n_loads;
	jd_dump_free(&d);
	return n;
}

static ju_ctx *open_dump(const char *dir, int want_rc)
{
	ju_options o = { .sz = sizeof(ju_options),
			 .channels = JU_CH_JITDUMP,
			 .flags = JU_OPT_NO_ENV,
			 .jitdump_dir = dir };
	ju_ctx *ctx = NULL;
	CHECK_RC(ju_open(&o, &ctx), want_rc);
	return ctx;
}

/* ---- the tests --------------------------------------------------------------- */

static void default_directory_is_like_perfs_agents(void)
{
	char base[300];
	snprintf(base, sizeof base, "%s/home", top);
	mkdir(base, 0755);
	setenv("JITDUMPDIR", base, 1);
	ju_ctx *ctx = open_dump(NULL, 0);
	char first[400], second[400];
	jd_marker_dir(first, sizeof first);
	char pattern[400], date[16];
	time_t t = time(NULL);
	strftime(date, sizeof date, "%Y%m%d", localtime(&t));
	snprintf(pattern, sizeof pattern, "%s/.debug/jit/jitunwind-%s.", base, date);
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4200], *hit = NULL;
	while (f && !hit && fgets(line, sizeof line, f))
		hit = strstr(line, pattern);
	if (f)
		fclose(f);
	char tail[64];
	snprintf(tail, sizeof tail, "/jit-%d.dump\n", (int)getpid());
	size_t plen = strlen(pattern);
	CHECK(hit && strlen(hit) == plen + 6 + strlen(tail) && !strcmp(hit + plen + 6, tail),
	      "no mapping of %sXXXXXX%s", pattern, tail);
	CHECK_RC(ju_close(ctx), 0);
	/* A later session of the same process gets a dump of its own. */
	ctx = open_dump(NULL, 0);
	jd_marker_dir(second, sizeof second);
	CHECK(second[0] && strcmp(first, second), "the second session reuses %s", first);
	CHECK_RC(ju_close(ctx), 0);
	char path[500];
	path_of_dump(path, sizeof path, first, getpid());
	check_dump(path, false, true);
	path_of_dump(path, sizeof path, second, getpid());
	check_dump(path, false, true);
	unsetenv("JITDUMPDIR");
}

static void symlinks_and_foreign_files_are_refused(void)
{
	char dir[300], path[400], target[400];
	snprintf(dir, sizeof dir, "%s/refuse", top);
	mkdir(dir, 0755);
	path_of_dump(path, sizeof path, dir, getpid());
	snprintf(target, sizeof target, "%s/target", top);
	FILE *f = fopen(target, "w");
	fputs("precious\n", f);
	fclose(f);
	CHECK(symlink(target, path) == 0, "symlink: %s", strerror(errno));
	open_dump(dir, JU_EPERM);
	CHECK(strstr(ju_errmsg(), "symbolic link"), "message: %s", ju_errmsg());
	CHECK(file_size(target) == 9, "the symlink's target was written");
	unlink(path);
	if (geteuid() == 0) {
		f = fopen(path, "w");
		fputs("someone's\n", f);
		fclose(f);
		CHECK(chown(path, 65534, 65534) == 0, "chown: %s", strerror(errno));
		open_dump(dir, JU_EPERM);
		CHECK(strstr(ju_errmsg(), "belongs to uid 65534"), "message: %s", ju_errmsg());
		CHECK(file_size(path) == 10, "another user's file was written");
		unlink(path);
	} else {
		printf("note: not root, the foreign-owner case is checked by test-perfmap only if root\n");
	}
}

/* A symbolic link at any step of the jitdump directory's path is refused,
 * not only at the file: a directory on the way swapped for a link must not
 * send the dump elsewhere. */
static void symlink_on_the_directory_path_is_refused(void)
{
	char real[300], link[300], via[400], path[500];
	snprintf(real, sizeof real, "%s/real", top);
	snprintf(link, sizeof link, "%s/link", top);
	mkdir(real, 0755);
	snprintf(via, sizeof via, "%s/sub", real);
	mkdir(via, 0755);
	CHECK(symlink(real, link) == 0, "symlink: %s", strerror(errno));
	snprintf(via, sizeof via, "%s/sub", link);
	open_dump(via, JU_EPERM);
	CHECK(strstr(ju_errmsg(), "symbolic link") && strstr(ju_errmsg(), link),
	      "message should name %s as a symbolic link: %s", link, ju_errmsg());
	open_dump(link, JU_EPERM); /* the last component too */
	path_of_dump(path, sizeof path, real, getpid());
	CHECK(file_size(path) < 0, "a dump was made through the link");
	snprintf(path, sizeof path, "%s/sub/jit-%d.dump", real, (int)getpid());
	CHECK(file_size(path) < 0, "a dump was made through the link in the middle");
	/* and $JITDUMPDIR through a link: the default directory is not made */
	setenv("JITDUMPDIR", link, 1);
	open_dump(NULL, JU_EPERM);
	snprintf(path, sizeof path, "%s/.debug", real);
	CHECK(file_size(path) < 0, "%s was made through the link", path);
	unsetenv("JITDUMPDIR");
	unlink(link);
}

static int room_warnings;

static void count_room_warning(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level == JU_LOG_WARN && strstr(msg, "ju_room_after"))
		room_warnings++;
}

static const jd_load *load_at(const jd_dump *d, const void *start)
{
	for (size_t i = d->n_loads; i-- > 0;)
		if (d->loads[i].h.code_addr == (uintptr_t)start)
			return &d->loads[i];
	return NULL;
}

/* ju_room_after says how much room perf needs after a blob: with exactly
 * that much before the next blob the dump maps the blob's unwind tables after
 * its salted code; with a byte less it cannot have both; with too little for
 * the tables a warning is logged, once per context. */
static void room_after_is_what_perf_needs(void)
{
	char dir[300], path[400];
	snprintf(dir, sizeof dir, "%s/room", top);
	mkdir(dir, 0755);
	ju_options o = { .sz = sizeof(ju_options),
			 .channels = JU_CH_JITDUMP,
			 .flags = JU_OPT_NO_ENV,
			 .jitdump_dir = dir,
			 .log = count_room_warning };
	ju_ctx *ctx = NULL;
	CHECK_RC(ju_open(&o, &ctx), 0);
	if (!ctx)
		return;
	const uint32_t base = 0x8000, size = 40;
	ju_blob a = fp_blob(base, size, "room:exact");
	size_t room = 0;
	CHECK_RC(ju_room_after(ctx, &a, &room), 0);
	CHECK(room >= 8 + 16 && room < 4096, "room %zu for a 40-byte FP blob", room);
	ju_blob after_a = other_blob(base + size + (uint32_t)room, 16, "room:after-exact", JU_FRAME_LEAF);
	ju_blob b = fp_blob(base + 0x1000, size, "room:short");
	ju_blob after_b =
		other_blob(base + 0x1000 + size + (uint32_t)room - 1, 16, "room:after-short", JU_FRAME_LEAF);
	ju_blob c = fp_blob(base + 0x2000, size, "room:tight");
	ju_blob after_c = other_blob(base + 0x2000 + size + 4, 16, "room:after-tight", JU_FRAME_LEAF);
	ju_blob d = fp_blob(base + 0x3000, size, "room:tight-again");
	ju_blob after_d = other_blob(base + 0x3000 + size, 16, "room:after-tight-again", JU_FRAME_LEAF);
	ju_blob nexts[] = { after_a, after_b, after_c, after_d };
	CHECK_RC(ju_publish_batch(ctx, nexts, 4), 0);
	CHECK(room_warnings == 0, "%d warnings before any blob was short of room", room_warnings);
	CHECK_RC(ju_publish(ctx, &a), 0);
	CHECK_RC(ju_publish(ctx, &b), 0);
	CHECK(room_warnings == 0, "%d warnings, but a and b had room for their tables", room_warnings);
	CHECK_RC(ju_publish(ctx, &c), 0);
	CHECK(room_warnings == 1, "%d warnings after a blob without room for its tables, want 1",
	      room_warnings);
	CHECK_RC(ju_publish(ctx, &d), 0);
	CHECK(room_warnings == 1, "%d warnings after a second one, want still 1", room_warnings);
	size_t c_room = 1;
	CHECK_RC(ju_room_after(ctx, &(ju_blob){ .sz = sizeof(ju_blob), .start = NULL }, &c_room), JU_EINVAL);
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);

	path_of_dump(path, sizeof path, dir, getpid());
	jd_dump dd;
	char err[200];
	if (jd_dump_read(path, &dd, err, sizeof err)) {
		CHECK(0, "%s: %s", path, err);
		return;
	}
	const jd_load *la = load_at(&dd, a.start), *lb = load_at(&dd, b.start), *lc = load_at(&dd, c.start);
	CHECK(la && la->u.mapped_size && la->h.code_size == size + 8,
	      "with the room it asked for, a's tables are %smapped and its code is %llu bytes (want salted)",
	      la && la->u.mapped_size ? "" : "not ", la ? (unsigned long long)la->h.code_size : 0ull);
	CHECK(lb && !(lb->u.mapped_size && lb->h.code_size == size + 8),
	      "a byte less than the room still gave b both its salt and mapped tables: the room is not minimal");
	CHECK(lc && !lc->u.mapped_size, "c had 4 bytes of room, yet its tables are mapped");
	jd_dump_free(&dd);
	printf("a 40-byte FP blob needs %zu bytes of room\n", room);
}

/* A directory on the way that another user could change is refused: one
 * of theirs (here nobody's, uid 65534) at JITDUMPDIR or at its .debug, and
 * one any user may write without the sticky bit; a sticky one of ours, as
 * /tmp is, is taken.  Root only (chown). */
static void directories_another_user_can_change_are_refused(void)
{
	if (geteuid() != 0) {
		printf("note: not root, cannot make another user's directory; not checked\n");
		return;
	}
	const char *old = getenv("JITDUMPDIR");
	char saved[400] = "", base[300], sub[340];
	if (old)
		snprintf(saved, sizeof saved, "%s", old);
	snprintf(base, sizeof base, "%s/theirs", top);
	CHECK(mkdir(base, 0755) == 0 && chown(base, 65534, 65534) == 0, "%s: %s", base, strerror(errno));
	setenv("JITDUMPDIR", base, 1);
	open_dump(NULL, JU_EPERM);
	CHECK(strstr(ju_errmsg(), "belongs to user 65534"), "their JITDUMPDIR: %s", ju_errmsg());
	snprintf(base, sizeof base, "%s/theirs-inside", top);
	snprintf(sub, sizeof sub, "%s/.debug", base);
	CHECK(mkdir(base, 0755) == 0 && mkdir(sub, 0755) == 0 && chown(sub, 65534, 65534) == 0, "%s: %s", sub,
	      strerror(errno));
	setenv("JITDUMPDIR", base, 1);
	open_dump(NULL, JU_EPERM);
	CHECK(strstr(ju_errmsg(), "at .debug, belongs to user 65534"), "their .debug: %s", ju_errmsg());
	snprintf(base, sizeof base, "%s/open", top);
	CHECK(mkdir(base, 0700) == 0 && chmod(base, 0777) == 0, "%s: %s", base, strerror(errno));
	setenv("JITDUMPDIR", base, 1);
	open_dump(NULL, JU_EPERM);
	CHECK(strstr(ju_errmsg(), "no sticky bit"), "a directory anyone may write: %s", ju_errmsg());
	CHECK(chmod(base, 01777) == 0, "chmod: %s", strerror(errno));
	ju_ctx *ctx = open_dump(NULL, 0);
	CHECK(ctx, "a sticky directory of ours, as /tmp, is refused: %s", ju_errmsg());
	if (ctx)
		CHECK_RC(ju_close(ctx), 0);
	if (saved[0])
		setenv("JITDUMPDIR", saved, 1);
	else
		unsetenv("JITDUMPDIR");
}

/* The main round trip: batches in any order, neighbours with and without
 * room, unpublishing, a second context, a failed publish, closing. */
static void records_round_trip(void)
{
	char dir[300], path[400];
	snprintf(dir, sizeof dir, "%s/dump", top);
	mkdir(dir, 0755);
	path_of_dump(path, sizeof path, dir, getpid());
	ju_ctx *ctx = open_dump(dir, 0);
	if (!ctx)
		return;
	CHECK(jd_marker_mapped(path), "%s is not mapped executable while open", path);
	/* step 1: a batch given out of address order, lots of room */
	ju_blob b1[] = { other_blob(0x800, 24, "region", JU_FRAME_REGION), fp_blob(0x000, 40, "fp"),
			 other_blob(0x400, 30, "cfi", JU_FRAME_CFI) };
	CHECK_RC(publish(ctx, 1, b1, 3), 0);
	/* step 2: one at a time, then neighbours with no room and a little */
	ju_blob b2 = other_blob(0xc00, 16, "leaf", JU_FRAME_LEAF);
	CHECK_RC(publish(ctx, 2, &b2, 1), 0);
	ju_blob b3[] = { fp_blob(0x1028, 40, "tight-b"), fp_blob(0x1000, 40, "tight-a"),
			 other_blob(0x1058, 16, "tight-c", JU_FRAME_LEAF) };
	CHECK_RC(publish(ctx, 3, b3, 3), 0);
	/* step 4: just below a blob published earlier: its mapping must stop */
	ju_blob b4 = other_blob(0x3f8, 8, "below-cfi", JU_FRAME_LEAF);
	b4.file = NULL, b4.lines = NULL, b4.n_lines = 0;
	CHECK_RC(publish(ctx, 4, &b4, 1), 0);
	/* identical code at two addresses: distinct salts */
	memcpy(R + 0x2000, R + 0x000, 40);
	ju_blob b5 = fp_blob(0x2000, 40, "fp-copy");
	CHECK_RC(publish(ctx, 5, &b5, 1), 0);

	/* A second context shares the file; one naming another directory is refused. */
	ju_ctx *two = open_dump(NULL, 0);
	ju_ctx *other = open_dump(top, JU_EINVAL);
	(void)other;
	CHECK(strstr(ju_errmsg(), "one jitdump per process"), "message: %s", ju_errmsg());
	ju_blob b6 = other_blob(0x3000, 20, "second-context", JU_FRAME_REGION);
	CHECK_RC(publish(two, 6, &b6, 1), 0);

	/* A write the disk takes only part of (a file size limit, in a child:
	 * it writes its own dump) is cut off again. */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		unit_failures = 0;
		char mine[400];
		path_of_dump(mine, sizeof mine, dir, getpid());
		long size = file_size(mine);
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit rl = { (rlim_t)size + 100, RLIM_INFINITY };
		CHECK(size > 0 && setrlimit(RLIMIT_FSIZE, &rl) == 0, "no dump of its own, or setrlimit");
		ju_blob c[] = { fp_blob(0x4000, 40, "late-a"),
				other_blob(0x4100, 30, "late-b", JU_FRAME_CFI) };
		/* the channel turns off; the publish goes on without it */
		CHECK_RC(ju_publish_batch(ctx, c, 2), 0);
		CHECK(file_size(mine) == size, "the child's dump is %ld bytes, was %ld", file_size(mine),
		      size);
		size_t missed = 0;
		CHECK_RC(ju_channel_error(ctx, JU_CH_JITDUMP, &missed), JU_EIO);
		CHECK(missed == 2, "%zu blobs missed, want 2", missed);
		fflush(stdout);
		_exit(unit_failures ? 1 : 0);
	}
	int st = 0;
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "a write cut short in a child (status %#x)", st);

	/* Failed publishes leave the file alone, whichever write or allocation
	 * fails: a failed allocation fails the publish, a failed write turns the
	 * channel off in that context and the publish goes on (docs/API.md, "When
	 * a file cannot be written").  A context of its own for each fault
	 * point, sharing the file; the one without a fault is kept. */
	ju_blob b7[] = { fp_blob(0x4000, 40, "late-a"), other_blob(0x4100, 30, "late-b", JU_FRAME_CFI) };
	ju_ctx *three = NULL;
	long n = 1, absorbed = 0;
	for (; n < 1000; n++) {
		ju_ctx *f = open_dump(NULL, 0);
		if (!f)
			break;
		long size = file_size(path);
		ju__fault_after(n);
		int rc = ju_publish_batch(f, b7, 2);
		bool hit = ju__fault_remaining() == 0;
		ju__fault_after(0);
		if (!hit) {
			CHECK(rc == 0, "publish without a fault: %s", ju_errmsg());
			for (size_t i = 0; i < 2; i++)
				blobs[n_blobs++] = (tblob){ b7[i], true, 7 };
			three = f;
			break;
		}
		char msg[256];
		snprintf(msg, sizeof msg, "%s", ju_errmsg());
		int off = ju_channel_error(f, JU_CH_JITDUMP, NULL);
		CHECK(file_size(path) == size, "fault %ld (%s): the dump grew from %ld to %ld", n,
		      rc ? msg : "the channel turned off", size, file_size(path));
		CHECK(rc ? ju_count(f) == 0 : off == JU_EIO && ju_count(f) == 2,
		      "fault %ld: rc %d, channel error %d, %zu blobs published", n, rc, off, ju_count(f));
		absorbed += rc == 0;
		CHECK_RC(ju_unpublish_all(f), 0);
		CHECK_RC(ju_close(f), 0);
	}
	printf("a failed publish left the dump as it was at each of %ld fault points (%ld turned the "
	       "channel off)\n",
	       n - 1, absorbed);
	ctxs[2] = three;

	ctxs[0] = ctx, ctxs[1] = two;
	size_t loads = check_dump(path, true, false);
	CHECK(loads == n_blobs, "%zu loads for %zu blobs", loads, n_blobs);

	long before = file_size(path);
	CHECK_RC(ju_unpublish(ctx, R + 0x400), 0);
	CHECK(file_size(path) == before, "unpublishing wrote to the dump");

	/* Salts: the copy's dumped bytes differ from the original's. */
	jd_dump d;
	char err[200];
	if (jd_dump_read(path, &d, err, sizeof err) == 0) {
		const jd_load *a = NULL, *c = NULL;
		for (size_t i = 0; i < d.n_loads; i++) {
			if (!strcmp(d.loads[i].name, "fp"))
				a = &d.loads[i];
			if (!strcmp(d.loads[i].name, "fp-copy"))
				c = &d.loads[i];
		}
		CHECK(a && c && a->h.code_size == 48 && c->h.code_size == 48 &&
			      !memcmp(a->code, c->code, 40) && memcmp(a->code + 40, c->code + 40, 8),
		      "identical code is not salted apart");
		/* The batch came out in address order. */
		CHECK(d.n_loads >= 3 && !strcmp(d.loads[0].name, "fp") && !strcmp(d.loads[1].name, "cfi") &&
			      !strcmp(d.loads[2].name, "region"),
		      "first batch not in address order");
		jd_dump_free(&d);
	}

	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
	CHECK(jd_marker_mapped(path), "closing one of two contexts unmapped the dump");
	CHECK_RC(ju_unpublish_all(two), 0);
	CHECK_RC(ju_close(two), 0);
	if (three) {
		CHECK_RC(ju_unpublish_all(three), 0);
		CHECK_RC(ju_close(three), 0);
	}
	CHECK(!jd_marker_mapped(path), "the dump is still mapped after the last close");
	ctxs[0] = ctxs[1] = ctxs[2] = NULL;
	check_dump(path, false, true);
}

/* A blob with guest frames: guest.py's run inlines mid (mid.py), which
 * inlines leaf (leaf.py) and then tail, whose file is the blob's. */
static const ju_line guest_lines[] = { { 0, 10 }, { 8, 20 }, { 16, 30 }, { 24, 31 }, { 32, 40 }, { 40, 11 } };
static const ju_inline guest_tree[] = {
	{ 8, 40, 0, 10, "guest:mid", "mid.py", NULL },
	{ 16, 32, 1, 20, "guest:leaf", "leaf.py", NULL },
	{ 32, 40, 1, 21, "guest:tail", NULL, "mid.py" },
};

static ju_blob guest_blob(uint32_t at)
{
	ju_blob b = other_blob(at, 64, "guest:run", JU_FRAME_REGION);
	b.file = "guest.py", b.lines = guest_lines, b.n_lines = 6;
	b.inlines = guest_tree, b.n_inlines = 3;
	return b;
}

/* Rows inside a guest frame carry its file, when published and when a
 * forked child logs the blob again from the arenas. */
static void rows_in_guest_frames_carry_their_file(void)
{
	char dir[300], path[400];
	snprintf(dir, sizeof dir, "%s/guest", top);
	mkdir(dir, 0755);
	path_of_dump(path, sizeof path, dir, getpid());
	ju_ctx *ctx = open_dump(dir, 0);
	if (!ctx)
		return;
	ju_blob g[] = { guest_blob(0x6000), fp_blob(0x6100, 40, "no-tree") };
	CHECK_RC(publish(ctx, 8, g, 2), 0);
	ctxs[0] = ctx;
	CHECK(check_dump(path, true, false) == 2, "two loads wanted in %s", path);
	ctxs[0] = NULL;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		unit_failures = 0;
		ju_blob late = fp_blob(0x6200, 40, "late");
		CHECK_RC(ju_publish(ctx, &late), 0);
		blobs[n_blobs++] = (tblob){ late, true, 9 };
		char mine[400];
		path_of_dump(mine, sizeof mine, dir, getpid());
		CHECK(check_dump(mine, false, false) == 3, "three loads wanted in %s", mine);
		fflush(stdout);
		_exit(unit_failures ? 1 : 0);
	}
	int st = 0;
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "a forked child's dump of the guest blob (status %#x)", st);
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
}

/* ---- --check-elf ---------------------------------------------------------------- */

static int check_elf(const char *path)
{
	int fd = open(path, O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	CHECK(e, "%s: cannot read", path);
	if (!e)
		return 0;
	size_t shstr;
	elf_getshdrstrndx(e, &shstr);
	GElf_Sym fn = { 0 };
	for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));) {
		GElf_Shdr sh;
		gelf_getshdr(s, &sh);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(s, NULL);
		for (size_t i = 0; i < sh.sh_size / sizeof(Elf64_Sym); i++) {
			GElf_Sym sym;
			if (gelf_getsym(d, (int)i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC)
				fn = sym;
		}
	}
	CHECK(fn.st_value == JD_ELF_TEXT_ADDR && fn.st_size, "%s: the symbol is at %#llx", path,
	      (unsigned long long)fn.st_value);
	Dwarf_CFI *cfi = dwarf_getcfi_elf(e);
	CHECK(cfi, "%s: libdw finds no CFI: %s", path, dwarf_errmsg(-1));
	size_t pcs = 0;
	for (uint64_t pc = fn.st_value; cfi && pc < fn.st_value + fn.st_size; pc++) {
		Dwarf_Frame *f = NULL;
		int rc = dwarf_cfi_addrframe(cfi, pc, &f);
		/* The FDEs cover the code from its start; past them is the salt. */
		CHECK(rc == 0 || pc > fn.st_value, "%s: no frame at the symbol's start", path);
		if (rc == 0) {
			Dwarf_Op *ops;
			size_t n;
			CHECK(dwarf_frame_cfa(f, &ops, &n) == 0 && n >= 1 &&
				      (ops[0].atom == DW_OP_bregx || ops[0].atom == DW_OP_breg6 ||
				       ops[0].atom == DW_OP_breg7),
			      "%s: odd CFA at %#llx", path, (unsigned long long)pc);
			pcs++;
		}
		free(f);
	}
	if (cfi)
		dwarf_cfi_end(cfi);
	elf_end(e);
	close(fd);
	printf("%s: libdw finds frames for %zu of %llu pcs through .eh_frame_hdr\n", path, pcs,
	       (unsigned long long)fn.st_size);
	return 1;
}

int main(int argc, char **argv)
{
	elf_version(EV_CURRENT);
	if (argc == 3 && !strcmp(argv[1], "--list")) {
		jd_dump d;
		char err[200];
		if (jd_dump_read(argv[2], &d, err, sizeof err)) {
			printf("FAIL %s: %s\n", argv[2], err);
			return 1;
		}
		for (size_t i = 0; i < d.n_loads; i++)
			printf("%s %llu %llu\n", d.loads[i].name, (unsigned long long)d.loads[i].h.code_size,
			       (unsigned long long)d.loads[i].u.mapped_size);
		jd_dump_free(&d);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "--check-elf")) {
		for (int i = 2; i < argc; i++)
			check_elf(argv[i]);
		return unit_done("test-jitdump --check-elf");
	}
	if (!arch_host() || arch_host()->elf_machine != EM_X86_64)
		UNIT_SKIP("the fake perf ELF and register numbers are x86-64's");
	snprintf(top, sizeof top, "/tmp/test-jitdump.XXXXXX");
	if (!mkdtemp(top))
		UNIT_SKIP("cannot make a scratch directory");
	R = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (size_t i = 0; i < REGION; i++)
		R[i] = (uint8_t)(i * 7 + 3);

	default_directory_is_like_perfs_agents();
	directories_another_user_can_change_are_refused();
	symlinks_and_foreign_files_are_refused();
	symlink_on_the_directory_path_is_refused();
	room_after_is_what_perf_needs();
	records_round_trip();
	rows_in_guest_frames_carry_their_file();

	char cmd[400];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
	if (system(cmd) != 0)
		printf("note: could not remove %s\n", top);
	return unit_done("test-jitdump");
}
