/* symfind.c - symbol lookup by name (see symfind.h).  Hash table layouts:
 * the GNU hash section as glibc's dl-lookup.c reads it, the SysV hash from
 * the gABI ("Hash Table").  The file may be corrupt, so every index is
 * checked against its table and every chain walk is bounded by the symbol
 * count.
 */
#include "target/symfind.h"
#include "base/bounds.h"

#include <elf.h>
#include <string.h>

typedef struct table {
	Elf_Data *syms, *strs;
	size_t count;
} table;

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
	t->count = t->syms->d_size / sizeof(Elf64_Sym);
	if (t->count > JS_MAX_SYMBOLS)
		t->count = JS_MAX_SYMBOLS;
	return true;
}

/* Symbol i of t if it is named `name` and defined. */
static bool match(const table *t, size_t i, const char *name, GElf_Addr *value, GElf_Xword *size)
{
	GElf_Sym s;
	if (i >= t->count || !gelf_getsym(t->syms, (int)i, &s) || s.st_shndx == SHN_UNDEF)
		return false;
	if (s.st_name >= t->strs->d_size)
		return false;
	const char *n = (const char *)t->strs->d_buf + s.st_name;
	size_t len = strlen(name);
	if (t->strs->d_size - s.st_name <= len || memcmp(n, name, len + 1))
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

static bool u32_at(const Elf_Data *d, size_t i, uint32_t *v)
{
	if (i >= d->d_size / 4)
		return false;
	memcpy(v, (const uint8_t *)d->d_buf + i * 4, 4);
	return true;
}

/* -1: not usable, 0: absent, 1: found */
static int gnu_lookup(const Elf_Data *h, const table *t, const char *name, GElf_Addr *v, GElf_Xword *sz)
{
	uint32_t nbuckets, symoff, bloom_size, shift;
	if (!u32_at(h, 0, &nbuckets) || !u32_at(h, 1, &symoff) || !u32_at(h, 2, &bloom_size) ||
	    !u32_at(h, 3, &shift) || !nbuckets || !bloom_size || bloom_size > h->d_size / 8)
		return -1;
	uint32_t hash = gnu_hash(name);
	size_t bloom = 4; /* in 32-bit words; 64-bit bloom words on ELFCLASS64 */
	uint32_t lo, hi;
	size_t w = bloom + 2 * ((hash / 64) % bloom_size);
	if (!u32_at(h, w, &lo) || !u32_at(h, w + 1, &hi))
		return -1;
	uint64_t word = (uint64_t)hi << 32 | lo;
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

static int sysv_lookup(const Elf_Data *h, const table *t, const char *name, GElf_Addr *v, GElf_Xword *sz)
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

bool js_find_symbol(Elf *elf, const char *name, GElf_Addr *value, GElf_Xword *size)
{
	Elf_Scn *scn = NULL, *dynsym = NULL, *symtab = NULL, *gnu = NULL, *sysv = NULL;
	size_t nscn = 0;
	while ((scn = elf_nextscn(elf, scn)) && nscn++ < JS_MAX_SECTIONS) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
		else if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
		else if (sh.sh_type == SHT_GNU_HASH)
			gnu = scn;
		else if (sh.sh_type == SHT_HASH)
			sysv = scn;
	}
	table t;
	if (dynsym && load_table(elf, dynsym, &t)) {
		int r = -1;
		Elf_Data *h;
		if (gnu && (h = elf_getdata(gnu, NULL)) && h->d_buf)
			r = gnu_lookup(h, &t, name, value, size);
		if (r < 0 && sysv && (h = elf_getdata(sysv, NULL)) && h->d_buf)
			r = sysv_lookup(h, &t, name, value, size);
		if (r < 0)
			r = linear(&t, name, value, size);
		if (r > 0)
			return true;
	}
	return symtab && load_table(elf, symtab, &t) && linear(&t, name, value, size);
}
