/* SPDX-License-Identifier: MIT */
/* jitimages.c - read the GDB JIT interface of a stopped process or a core,
 * and take apart each in-memory ELF image: .text (the code it describes),
 * function symbols, and the FDEs of .eh_frame.  See jitimages.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "jitimages.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "formats/ehframe.h"
#include "formats/gdbjit.h"

/* Bounds on what the target may make us do. */
enum { MAX_ENTRIES = 100000, MAX_SYMS = 1 << 20 };
#define MAX_IMAGE_SIZE ((size_t)256 << 20)

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

int mx_read_live(void *ctx, uint64_t addr, void *buf, size_t len)
{
	pid_t pid = *(pid_t *)ctx;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

/* ---- .eh_frame ------------------------------------------------------------- */

static int cmp_fde(const void *a, const void *b)
{
	const mx_fde *x = a, *y = b;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

static int push_fde(mx_image *img, size_t *cap, mx_fde f)
{
	if (img->n_fdes == *cap) {
		mx_fde *n = realloc(img->fdes, (*cap *= 2) * sizeof *n);
		if (!n)
			return -1;
		img->fdes = n;
	}
	img->fdes[img->n_fdes++] = f;
	return 0;
}

/* Every FDE of the image's .eh_frame, its pointers absolute or relative to
 * the section at img->eh_addr; any record that cannot be read fails the
 * image. */
static int read_fdes(mx_image *img, const uint8_t *eh, size_t size)
{
	size_t cap = 16, off = 0;
	img->fdes = malloc(cap * sizeof *img->fdes);
	if (!img->fdes)
		return -1;
	eh_section s = { .data = eh, .size = size, .addr = img->eh_addr };
	eh_rec rec;
	int got;
	while ((got = eh_next(&s, &off, &rec)) == 1) {
		if (rec.is_cie)
			continue;
		eh_cie_info c;
		eh_fde_info f;
		if (!eh_cie_read(&s, rec.cie_off, &c) || !eh_fde_read(&s, &rec, &c, &f))
			return -1;
		/* range 0: unpublished (docs/OUTSIDE_READER.md) */
		mx_fde fde = { f.pc_begin, f.pc_begin + f.pc_range, img->eh_addr + rec.off };
		if (f.pc_range && push_fde(img, &cap, fde))
			return -1;
	}
	if (got < 0)
		return -1;
	qsort(img->fdes, img->n_fdes, sizeof *img->fdes, cmp_fde);
	return 0;
}

/* ---- the image -------------------------------------------------------------- */

static int cmp_sym(const void *a, const void *b)
{
	const mx_sym *x = a, *y = b;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

static int read_syms(mx_image *img, Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, size_t text_ndx)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !sh->sh_entsize)
		return -1;
	size_t n = sh->sh_size / sh->sh_entsize;
	if (n > MAX_SYMS)
		return -1;
	img->syms = calloc(n ? n : 1, sizeof *img->syms);
	if (!img->syms)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym s;
		if (!gelf_getsym(d, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
		    s.st_shndx != text_ndx)
			continue;
		const char *name = elf_strptr(e, sh->sh_link, s.st_name);
		if (!name)
			continue;
		/* symbols are relative to .text (gdb prints ?? otherwise) */
		uint64_t lo = img->text_lo + s.st_value;
		img->syms[img->n_syms++] = (mx_sym){ lo, lo + s.st_size, strdup(name) };
	}
	qsort(img->syms, img->n_syms, sizeof *img->syms, cmp_sym);
	return 0;
}

static int parse_image(mx_image *img)
{
	Elf *e = elf_memory((char *)img->bytes, img->size);
	size_t shstrndx, text_ndx = 0;
	Elf_Scn *symtab = NULL, *eh = NULL;
	GElf_Shdr symtab_sh = { 0 }, eh_sh = { 0 };
	int rc = -1;
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx))
		goto out;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			goto out;
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!strcmp(name, ".text")) {
			text_ndx = elf_ndxscn(scn);
			img->text_lo = sh.sh_addr;
			img->text_hi = sh.sh_addr + sh.sh_size;
		} else if (!strcmp(name, ".symtab")) {
			symtab = scn;
			symtab_sh = sh;
		} else if (!strcmp(name, ".eh_frame")) {
			eh = scn;
			eh_sh = sh;
		}
	}
	if (!text_ndx)
		goto out;
	if (symtab && read_syms(img, e, symtab, &symtab_sh, text_ndx))
		goto out;
	if (eh) {
		Elf_Data *d = elf_getdata(eh, NULL);
		img->eh_addr = eh_sh.sh_addr;
		if (!d || read_fdes(img, d->d_buf, d->d_size))
			goto out;
	}
	rc = 0;
out:
	elf_end(e);
	return rc;
}

int mx_images_read(mx_read_fn rd_mem, void *ctx, uint64_t desc, mx_images *out, char *err, size_t errlen)
{
	gdbjit_descriptor d;
	out->v = NULL;
	out->n = 0;
	elf_version(EV_CURRENT);
	if (rd_mem(ctx, desc, &d, GDBJIT_STD_DESCRIPTOR_SIZE))
		return fail(err, errlen, "cannot read the descriptor at %#lx", (unsigned long)desc);
	if (d.version != GDBJIT_VERSION)
		return fail(err, errlen, "descriptor version %u", d.version);
	uint64_t at = d.first_entry;
	for (int i = 0; at && i < MAX_ENTRIES; i++) {
		gdbjit_entry en;
		if (rd_mem(ctx, at, &en, GDBJIT_STD_ENTRY_SIZE))
			return fail(err, errlen, "cannot read entry %d at %#lx", i, (unsigned long)at);
		at = en.next_entry;
		if (!en.symfile_size || en.symfile_size > MAX_IMAGE_SIZE)
			return fail(err, errlen, "entry %d: image size %lu", i,
				    (unsigned long)en.symfile_size);
		mx_image *v = realloc(out->v, (out->n + 1) * sizeof *v);
		if (!v)
			return fail(err, errlen, "out of memory");
		out->v = v;
		mx_image *img = memset(&out->v[out->n++], 0, sizeof *img);
		img->size = en.symfile_size;
		if (!(img->bytes = malloc(img->size)))
			return fail(err, errlen, "out of memory");
		if (rd_mem(ctx, en.symfile_addr, img->bytes, img->size))
			return fail(err, errlen, "cannot read image %d at %#lx", i,
				    (unsigned long)en.symfile_addr);
		if (parse_image(img))
			return fail(err, errlen, "image %d at %#lx is not a JIT image we understand", i,
				    (unsigned long)en.symfile_addr);
	}
	return 0;
}

void mx_images_free(mx_images *imgs)
{
	for (size_t i = 0; i < imgs->n; i++) {
		mx_image *img = &imgs->v[i];
		for (size_t k = 0; k < img->n_syms; k++)
			free(img->syms[k].name);
		free(img->syms);
		free(img->fdes);
		free(img->bytes);
	}
	free(imgs->v);
	imgs->v = NULL;
	imgs->n = 0;
}

const mx_image *mx_image_at(const mx_images *imgs, uint64_t pc)
{
	for (size_t i = 0; i < imgs->n; i++)
		if (pc >= imgs->v[i].text_lo && pc < imgs->v[i].text_hi)
			return &imgs->v[i];
	return NULL;
}

const char *mx_image_name(const mx_images *imgs, uint64_t pc)
{
	const mx_image *img = mx_image_at(imgs, pc);
	for (size_t k = 0; img && k < img->n_syms; k++)
		if (pc >= img->syms[k].lo && pc < img->syms[k].hi)
			return img->syms[k].name;
	return NULL;
}

/* ---- finding the descriptor in a live process ------------------------------- */

/* The address of `name` in the ELF file `path` mapped at `map_start` with
 * file offset 0, or 0. */
static uint64_t symbol_in(const char *path, uint64_t map_start, const char *name)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	uint64_t found = 0;
	GElf_Ehdr eh;
	size_t nph;
	if (!e || !gelf_getehdr(e, &eh) || elf_getphdrnum(e, &nph))
		goto out;
	/* the load bias: where the first PT_LOAD went, less its p_vaddr */
	uint64_t bias = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD) {
			bias = eh.e_type == ET_EXEC ? 0 : map_start - (ph.p_vaddr & ~(uint64_t)0xfff);
			break;
		}
	}
	for (Elf_Scn *scn = NULL; !found && (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF)
				continue;
			const char *n = elf_strptr(e, sh.sh_link, s.st_name);
			if (n && !strcmp(n, name)) {
				found = bias + s.st_value;
				break;
			}
		}
	}
out:
	elf_end(e);
	close(fd);
	return found;
}

int mx_find_symbol_live(pid_t pid, const char *name, uint64_t *addrs, int max)
{
	char path[64], line[4096];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	elf_version(EV_CURRENT);
	int n = 0;
	while (n < max && fgets(line, sizeof line, f)) {
		unsigned long start, end, off;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &start, &end, perms, &off, &pos) < 4 || !pos)
			continue;
		char *file = line + pos;
		file[strcspn(file, "\n")] = 0;
		if (off != 0 || file[0] != '/')
			continue;
		uint64_t a = symbol_in(file, start, name);
		if (a)
			addrs[n++] = a;
	}
	fclose(f);
	return n;
}
