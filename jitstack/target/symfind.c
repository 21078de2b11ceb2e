/* SPDX-License-Identifier: MIT */
/* symfind.c - symbol lookup by name (see symfind.h).  Hash table layouts:
 * the GNU hash section as glibc's dl-lookup.c reads it, the SysV hash from
 * the gABI ("Hash Table").  The file may be corrupt, so every index is
 * checked against its table and every chain walk is bounded by the symbol
 * count.
 */
#include "target/symfind.h"
#include "base/bounds.h"

#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A file read with pread, a few bytes at a time: a hash lookup touches a
 * handful of words, and reading whole tables, or mapping the file, would
 * cost more than the lookup.  Its first page is read once: it holds the
 * ELF and program headers, and often the GNU hash's header and bloom
 * filter, which the linker places right after them. */
typedef struct file {
	int fd;
	uint64_t size;
	uint8_t head[4096];
	size_t head_len;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh;
	size_t nsh;
} file;

static bool file_bytes(const file *f, uint64_t off, void *buf, size_t n)
{
	if (off <= f->head_len && n <= f->head_len - off) {
		memcpy(buf, f->head + off, n);
		return true;
	}
	return pread(f->fd, buf, n, (off_t)off) == (ssize_t)n;
}

/* A symbol table and its strings: sections libelf holds in memory, or
 * byte ranges of a file. */
typedef struct table {
	Elf_Data *syms, *strs; /* in memory, or NULL: */
	const file *f;         /* ... in this file */
	uint64_t sym_off, str_off, str_size;
	size_t count;
} table;

/* Words of a hash section, in memory (d) or in the file at off. */
typedef struct words {
	const Elf_Data *d;
	const file *f;
	uint64_t off, size;
} words;

static bool load_table(Elf *elf, Elf_Scn *scn, table *t)
{
	GElf_Shdr sh;
	if (!gelf_getshdr(scn, &sh) || sh.sh_entsize != sizeof(Elf64_Sym) || sh.sh_type == SHT_NOBITS)
		return false;
	t->syms = elf_getdata(scn, NULL);
	Elf_Scn *str = elf_getscn(elf, sh.sh_link);
	t->strs = str ? elf_getdata(str, NULL) : NULL;
	if (!t->syms || !t->strs || !t->syms->d_buf || !t->strs->d_buf)
		return false;
	t->str_size = t->strs->d_size;
	t->count = t->syms->d_size / sizeof(Elf64_Sym);
	if (t->count > JS_MAX_SYMBOLS)
		t->count = JS_MAX_SYMBOLS;
	return true;
}

/* Symbol i of t if it is named `name` and defined. */
static bool match(const table *t, size_t i, const char *name, GElf_Addr *value, GElf_Xword *size)
{
	GElf_Sym s;
	Elf64_Sym fs;
	if (i >= t->count)
		return false;
	if (t->syms) {
		if (!gelf_getsym(t->syms, (int)i, &s))
			return false;
	} else {
		if (!file_bytes(t->f, t->sym_off + i * sizeof fs, &fs, sizeof fs))
			return false;
		s = (GElf_Sym){ fs.st_name, fs.st_info, fs.st_other, fs.st_shndx, fs.st_value, fs.st_size };
	}
	if (s.st_shndx == SHN_UNDEF || s.st_name >= t->str_size)
		return false;
	size_t len = strlen(name);
	if (t->str_size - s.st_name <= len)
		return false;
	char buf[64];
	const char *n = buf;
	if (t->strs)
		n = (const char *)t->strs->d_buf + s.st_name;
	else if (len + 1 > sizeof buf || !file_bytes(t->f, t->str_off + s.st_name, buf, len + 1))
		return false;
	if (memcmp(n, name, len + 1))
		return false;
	*value = s.st_value;
	*size = s.st_size;
	return true;
}

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;
	for (; *s; s++)
		h = h * 33 + (uint8_t)*s;
	return h;
}

static uint32_t sysv_hash(const char *s)
{
	uint32_t h = 0;
	for (; *s; s++) {
		h = (h << 4) + (uint8_t)*s;
		uint32_t g = h & 0xf0000000u;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

/* n bytes at byte offset off of the section. */
static bool words_bytes(const words *w, uint64_t off, void *buf, size_t n)
{
	if (off > w->size || n > w->size - off)
		return false;
	if (!w->d)
		return file_bytes(w->f, w->off + off, buf, n);
	memcpy(buf, (const uint8_t *)w->d->d_buf + off, n);
	return true;
}

static bool u32_at(const words *w, size_t i, uint32_t *v)
{
	return words_bytes(w, (uint64_t)i * 4, v, 4);
}

/* -1: not usable, 0: absent, 1: found */
static int gnu_lookup(const words *h, const table *t, const char *name, GElf_Addr *v, GElf_Xword *sz)
{
	uint32_t hd[4]; /* nbuckets, symoffset, bloom_size, bloom_shift */
	if (!words_bytes(h, 0, hd, sizeof hd))
		return -1;
	uint32_t nbuckets = hd[0], symoff = hd[1], bloom_size = hd[2], shift = hd[3];
	if (!nbuckets || !bloom_size || bloom_size > h->size / 8)
		return -1;
	uint32_t hash = gnu_hash(name);
	size_t bloom = 4; /* in 32-bit words; 64-bit bloom words on ELFCLASS64 */
	uint64_t word;    /* a 64-bit bloom word of ELFCLASS64, at 32-bit word index: */
	if (!words_bytes(h, 4 * (uint64_t)(bloom + 2 * ((hash / 64) % bloom_size)), &word, sizeof word))
		return -1;
	uint64_t mask = (uint64_t)1 << (hash % 64) | (uint64_t)1 << ((hash >> (shift % 32)) % 64);
	if ((word & mask) != mask)
		return 0;
	size_t buckets = bloom + 2 * (size_t)bloom_size;
	uint32_t i;
	if (!u32_at(h, buckets + hash % nbuckets, &i))
		return -1;
	if (i < symoff)
		return 0;
	size_t chain = buckets + nbuckets;
	for (size_t steps = 0; steps < t->count; steps++, i++) {
		uint32_t h2;
		if (!u32_at(h, chain + (i - symoff), &h2))
			return -1;
		if ((h2 | 1) == (hash | 1) && match(t, i, name, v, sz))
			return 1;
		if (h2 & 1)
			return 0;
	}
	return -1;
}

static int sysv_lookup(const words *h, const table *t, const char *name, GElf_Addr *v, GElf_Xword *sz)
{
	uint32_t nbucket, nchain;
	if (!u32_at(h, 0, &nbucket) || !u32_at(h, 1, &nchain) || !nbucket)
		return -1;
	uint32_t i;
	if (!u32_at(h, 2 + sysv_hash(name) % nbucket, &i))
		return -1;
	for (size_t steps = 0; i != STN_UNDEF && steps < t->count; steps++) {
		if (match(t, i, name, v, sz))
			return 1;
		if (!u32_at(h, 2 + (size_t)nbucket + i, &i))
			return -1;
	}
	return 0;
}

static bool linear(const table *t, const char *name, GElf_Addr *v, GElf_Xword *sz)
{
	for (size_t i = 1; i < t->count; i++)
		if (match(t, i, name, v, sz))
			return true;
	return false;
}

/* `name` in a dynamic symbol table: through its GNU hash, else its SysV
 * hash, else a scan. */
static bool in_dynamic_table(const table *t, const words *gnu, const words *sysv, const char *name,
			     GElf_Addr *value, GElf_Xword *size)
{
	int r = -1;
	if (gnu)
		r = gnu_lookup(gnu, t, name, value, size);
	if (r < 0 && sysv)
		r = sysv_lookup(sysv, t, name, value, size);
	if (r < 0)
		r = linear(t, name, value, size) ? 1 : 0;
	return r > 0;
}

/* The first section of that type (bounded walk), or NULL. */
static Elf_Scn *section_of_type(Elf *elf, GElf_Word type)
{
	Elf_Scn *scn = NULL;
	size_t nscn = 0;
	GElf_Shdr sh;
	while ((scn = elf_nextscn(elf, scn)) && nscn++ < JS_MAX_SECTIONS)
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return scn;
	return NULL;
}

/* A hash section held by libelf, or NULL. */
static const words *mem_words(Elf *elf, GElf_Word type, words *w)
{
	Elf_Scn *scn = section_of_type(elf, type);
	Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
	if (!d || !d->d_buf)
		return NULL;
	*w = (words){ .d = d, .size = d->d_size };
	return w;
}

bool js_find_symbol(Elf *elf, const char *name, GElf_Addr *value, GElf_Xword *size)
{
	Elf_Scn *dynsym = section_of_type(elf, SHT_DYNSYM), *symtab;
	table t;
	words gnu, sysv;
	if (dynsym && load_table(elf, dynsym, &t) &&
	    in_dynamic_table(&t, mem_words(elf, SHT_GNU_HASH, &gnu), mem_words(elf, SHT_HASH, &sysv), name,
			     value, size))
		return true;
	return (symtab = section_of_type(elf, SHT_SYMTAB)) && load_table(elf, symtab, &t) &&
	       linear(&t, name, value, size);
}

/* ---- a file's own tables, read with pread ----------------------------------------- */

/* The section's bytes lie inside the file. */
static bool in_file(const file *f, const Elf64_Shdr *s)
{
	return s->sh_type != SHT_NOBITS && s->sh_offset <= f->size && s->sh_size <= f->size - s->sh_offset;
}

static const Elf64_Shdr *file_section(const file *f, GElf_Word type)
{
	for (size_t i = 0; i < f->nsh; i++)
		if (f->sh[i].sh_type == type && in_file(f, &f->sh[i]))
			return &f->sh[i];
	return NULL;
}

/* 1: read, 0: not an ELF file, -1: not one jitstack reads here (another
 * class or byte order, or broken headers). */
static int read_headers(file *f)
{
	ssize_t got = pread(f->fd, f->head, sizeof f->head, 0);
	f->head_len = got > 0 ? (size_t)got : 0;
	const unsigned char *id = f->head;
	if (f->head_len < sizeof f->eh || memcmp(id, ELFMAG, SELFMAG))
		return 0;
	const uint16_t one = 1;
	const int host = *(const uint8_t *)&one ? ELFDATA2LSB : ELFDATA2MSB;
	if (id[EI_CLASS] != ELFCLASS64 || id[EI_DATA] != host)
		return -1;
	memcpy(&f->eh, f->head, sizeof f->eh);
	f->nsh = f->eh.e_shnum;
	if (f->eh.e_shentsize != sizeof(Elf64_Shdr) || f->eh.e_shoff > f->size || !f->nsh ||
	    f->nsh > JS_MAX_SECTIONS || f->nsh > (f->size - f->eh.e_shoff) / sizeof(Elf64_Shdr))
		return -1; /* also e_shnum 0: the count in section 0 (extended numbering) */
	if (!(f->sh = malloc(f->nsh * sizeof *f->sh)) ||
	    !file_bytes(f, f->eh.e_shoff, f->sh, f->nsh * sizeof *f->sh))
		return -1;
	return 1;
}

static bool file_table(const file *f, const Elf64_Shdr *s, table *t)
{
	if (s->sh_entsize != sizeof(Elf64_Sym) || s->sh_link >= f->nsh || !in_file(f, &f->sh[s->sh_link]))
		return false;
	*t = (table){ .f = f,
		      .sym_off = s->sh_offset,
		      .str_off = f->sh[s->sh_link].sh_offset,
		      .str_size = f->sh[s->sh_link].sh_size,
		      .count = s->sh_size / sizeof(Elf64_Sym) };
	if (t->count > JS_MAX_SYMBOLS)
		t->count = JS_MAX_SYMBOLS;
	return true;
}

static const words *file_words(const file *f, GElf_Word type, words *w)
{
	const Elf64_Shdr *s = file_section(f, type);
	if (!s)
		return NULL;
	*w = (words){ .f = f, .off = s->sh_offset, .size = s->sh_size };
	return w;
}

static bool file_dynsym_defines(const file *f, const char *name)
{
	const Elf64_Shdr *s = file_section(f, SHT_DYNSYM);
	table t;
	words gnu, sysv;
	GElf_Addr v;
	GElf_Xword sz;
	return s && file_table(f, s, &t) &&
	       in_dynamic_table(&t, file_words(f, SHT_GNU_HASH, &gnu), file_words(f, SHT_HASH, &sysv), name,
				&v, &sz);
}

/* What the dynamic section says of the file: a DT_SONAME (a library), a
 * DF_1_PIE in DT_FLAGS_1 (a position-independent program). */
static void dynamic_flags(const file *f, bool *soname, bool *pie)
{
	const Elf64_Shdr *s = file_section(f, SHT_DYNAMIC);
	Elf64_Dyn dyn[32];
	*soname = *pie = false;
	for (uint64_t at = 0; s && at < s->sh_size && at < (uint64_t)JS_MAX_SECTIONS * sizeof *dyn;) {
		size_t n = s->sh_size - at < sizeof dyn ? (size_t)(s->sh_size - at) / sizeof *dyn : 32;
		if (!n || !file_bytes(f, s->sh_offset + at, dyn, n * sizeof *dyn))
			return;
		for (size_t i = 0; i < n; i++) {
			if (dyn[i].d_tag == DT_NULL)
				return;
			*soname |= dyn[i].d_tag == DT_SONAME;
			*pie |= dyn[i].d_tag == DT_FLAGS_1 && (dyn[i].d_un.d_val & DF_1_PIE);
		}
		at += n * sizeof *dyn;
	}
}

static bool has_interp(const file *f)
{
	const Elf64_Ehdr *eh = &f->eh;
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum > JS_MAX_SECTIONS || eh->e_phoff > f->size ||
	    eh->e_phnum > (f->size - eh->e_phoff) / sizeof(Elf64_Phdr))
		return false;
	Elf64_Phdr ph[64];
	size_t n = eh->e_phnum < 64 ? eh->e_phnum : 64;
	if (!file_bytes(f, eh->e_phoff, ph, n * sizeof *ph))
		return false;
	for (size_t i = 0; i < n; i++)
		if (ph[i].p_type == PT_INTERP)
			return true;
	return false;
}

/* An executable: ET_EXEC, or a position-independent one: DF_1_PIE, or an
 * interpreter without a DT_SONAME (glibc's libc.so.6 runs as a program
 * too, but is a library by its soname). */
static bool is_program(const file *f)
{
	if (f->eh.e_type == ET_EXEC)
		return true;
	if (f->eh.e_type != ET_DYN)
		return false;
	bool soname, pie;
	dynamic_flags(f, &soname, &pie);
	return pie || (!soname && has_interp(f));
}

/* An unstripped file's .symtab, scanned as libdwfl would have: through
 * libelf over the mapped file. */
static bool symtab_defines(int fd, const char *name)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *symtab = elf ? section_of_type(elf, SHT_SYMTAB) : NULL;
	table t;
	GElf_Addr v;
	GElf_Xword sz;
	bool found = symtab && load_table(elf, symtab, &t) && linear(&t, name, &v, &sz);
	elf_end(elf);
	return found;
}

bool js_look_in_file(const char *path, const char *name, const char *partner, js_file_look *look)
{
	memset(look, 0, sizeof *look);
	/* a device node in the maps (a GPU's) is not opened: that may act */
	struct stat st;
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return false;
	file f = { .fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), .size = (uint64_t)st.st_size };
	if (f.fd < 0)
		return false;
	int r = read_headers(&f);
	if (r > 0) {
		look->elf = true;
		look->defines = file_dynsym_defines(&f, name);
		look->has_symtab = file_section(&f, SHT_SYMTAB) != NULL;
		if (!look->defines && look->has_symtab)
			look->defines = symtab_defines(f.fd, name);
		look->partner = partner && file_dynsym_defines(&f, partner);
		look->program = is_program(&f);
	}
	free(f.sh);
	close(f.fd);
	return r >= 0; /* r == 0: a data file mapped beside the code (a locale archive) */
}
