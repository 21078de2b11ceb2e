/* SPDX-License-Identifier: MIT */
/* hostile.c - a process whose GDB JIT descriptor is broken on purpose,
 * for jitstack's bad-input tests.
 *
 * It runs one frame-pointer JIT blob between C frames
 *   c_inner <- jit:blob <- c_outer <- run_stack <- main
 * so that whatever the descriptor says, the stack can still be walked
 * through frame pointers, and registers it through a descriptor that is
 * wrong in one way per mode:
 *
 *   cycle      a valid entry, then a list that loops back on itself
 *   huge       an entry claiming a 2^60-byte image
 *   unmapped   first_entry points at a page that is not mapped
 *   garbage    images of random bytes, and one valid image cut short
 *   badcfi     a valid image whose CFI makes the blob its own caller
 *   hugereg    a valid image whose CFI names DWARF register 0x7000000 (libdw
 *              would size its register table by it)
 *   outside    a valid image whose FDE lies outside its code
 *   twice      the extension, the code registered twice: the newer entry
 *              names it jit:blob, the older jit:olde (a JIT that registers
 *              new code before it unregisters the old lists both a moment);
 *              HOSTILE_ORDER=reverse lists the newer one first
 *   badname    a valid image whose symbol's name is not UTF-8
 *   markup     a valid image whose symbol's name holds XML's markup
 *              characters (jit:<&>")
 *   version    descriptor version 2
 *   long       a list of 1.2 million entries (more than jitstack reads)
 *   odd        the jitunwind extension with seq odd forever (a writer
 *              that died in the middle of a change)
 *   absurd     the extension, claiming 2^40 entries
 *   churn      the extension, a thread relinking the list non-stop
 *              (seqlock kept, entries unmapped right after unlinking)
 *   torn       the extension, a thread changing the list without moving
 *              seq (a broken writer)
 *   big        HOSTILE_IMAGES (200) images of 64 MB on a list without the
 *              extension (read only while the threads are stopped): the
 *              first valid, the others not ELF, so each is copied whole
 *
 * Usage: hostile MODE wait|abort [--expect FILE]
 * The expect file (tests/child.c's format) lists the frames; the JIT blob
 * is there but only an image that survives the mode can name it.
 */
#define _GNU_SOURCE
#include "formats/gdbjit.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, used))
#define BARRIER() __asm__ volatile("" ::: "memory")

/* The descriptor, with room for the extension (size 88 either way). */
gdbjit_descriptor __jit_debug_descriptor = { .version = GDBJIT_VERSION };

NOINLINE void __jit_debug_register_code(void)
{
	__asm__ volatile("");
}

static const char *action = "wait";
static void (*jit_blob)(void);

NOINLINE void c_inner(void)
{
	if (!strcmp(action, "abort"))
		abort();
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}

NOINLINE void c_outer(void)
{
	jit_blob();
	BARRIER();
}

NOINLINE void run_stack(void)
{
	c_outer();
	BARRIER();
}

/* ---- the blob: push %rbp; mov %rsp,%rbp; movabs $c_inner,%rax; call *%rax; pop %rbp; ret */

enum { BLOB_SIZE = 19 };
static uint8_t *code;

static void emit_blob(void)
{
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t b[BLOB_SIZE] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8 };
	uint64_t t = (uintptr_t)c_inner;
	memcpy(b + 6, &t, 8);
	b[14] = 0xff, b[15] = 0xd0, b[16] = 0x5d, b[17] = 0xc3, b[18] = 0xcc;
	memcpy(code, b, BLOB_SIZE);
	mprotect(code, 4096, PROT_READ | PROT_EXEC);
	jit_blob = (void (*)(void))(void *)code;
}

/* ---- a valid image for the blob (ET_REL, NOBITS .text, a symbol, and an
 * .eh_frame with the CFA rule given by the caller's instructions) ----------- */

typedef struct img {
	uint8_t *p;
	size_t n;
} img;

static void put(img *m, const void *p, size_t n)
{
	memcpy(m->p + m->n, p, n);
	m->n += n;
}

static void align8(img *m)
{
	while (m->n % 8)
		m->p[m->n++] = 0;
}

/* cfa_insns: the FDE's instructions; pc_begin: where the FDE says it starts. */
static img make_image(const uint8_t *cfa_insns, size_t n_insns, uint64_t pc_begin)
{
	img m = { calloc(1, 4096), 0 };
	enum { TEXT = 1, EH = 2, SYMTAB = 3, STRTAB = 4, SHSTR = 5, NSEC = 6 };
	Elf64_Shdr sh[NSEC];
	memset(sh, 0, sizeof sh);
	m.n = sizeof(Elf64_Ehdr);
	align8(&m);
	/* .eh_frame: a CIE (zR, absolute pointers) and one FDE */
	size_t eh = m.n;
	static const uint8_t cie[] = { 0x14, 0,    0,  0, 0,    0,    0, 0, 1,    'z', 'R', 0,
				       1,    0x78, 16, 1, 0x00, 0x0c, 7, 8, 0x90, 1,   0,   0 };
	put(&m, cie, sizeof cie);
	size_t fde = m.n;
	uint32_t zero = 0, cie_ptr = (uint32_t)(fde + 4 - eh);
	put(&m, &zero, 4);
	put(&m, &cie_ptr, 4);
	uint64_t range = BLOB_SIZE;
	put(&m, &pc_begin, 8);
	put(&m, &range, 8);
	m.p[m.n++] = 0; /* augmentation data length */
	put(&m, cfa_insns, n_insns);
	align8(&m);
	uint32_t len = (uint32_t)(m.n - fde - 4);
	memcpy(m.p + fde, &len, 4);
	put(&m, &zero, 4);
	sh[EH] = (Elf64_Shdr){ 7, SHT_PROGBITS, SHF_ALLOC, 0, eh, m.n - eh, 0, 0, 8, 0 };
	align8(&m);
	Elf64_Sym syms[2] = { { 0 },
			      { .st_name = 1,
				.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				.st_shndx = TEXT,
				.st_size = BLOB_SIZE } };
	sh[SYMTAB] = (Elf64_Shdr){ 17, SHT_SYMTAB, 0, 0, m.n, sizeof syms, STRTAB, 1, 8, sizeof(Elf64_Sym) };
	put(&m, syms, sizeof syms);
	static const char str[] = "\0jit:blob";
	sh[STRTAB] = (Elf64_Shdr){ 25, SHT_STRTAB, 0, 0, m.n, sizeof str, 0, 0, 1, 0 };
	put(&m, str, sizeof str);
	static const char shstr[] = "\0.text\0.eh_frame\0.symtab\0.strtab\0.shstrtab";
	sh[SHSTR] = (Elf64_Shdr){ 33, SHT_STRTAB, 0, 0, m.n, sizeof shstr, 0, 0, 1, 0 };
	put(&m, shstr, sizeof shstr);
	sh[TEXT] =
		(Elf64_Shdr){ 1,  SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, (uintptr_t)code, 0, BLOB_SIZE, 0, 0,
			      16, 0 };
	align8(&m);
	size_t shoff = m.n;
	put(&m, sh, sizeof sh);
	Elf64_Ehdr h = { .e_type = ET_REL,
			 .e_machine = EM_X86_64,
			 .e_version = EV_CURRENT,
			 .e_shoff = shoff,
			 .e_ehsize = sizeof h,
			 .e_shentsize = sizeof(Elf64_Shdr),
			 .e_shnum = NSEC,
			 .e_shstrndx = SHSTR };
	memcpy(h.e_ident, ELFMAG, SELFMAG);
	h.e_ident[EI_CLASS] = ELFCLASS64, h.e_ident[EI_DATA] = ELFDATA2LSB,
	h.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(m.p, &h, sizeof h);
	sh[EH].sh_addr = (uintptr_t)m.p + eh;
	memcpy(m.p + shoff + EH * sizeof(Elf64_Shdr), &sh[EH], sizeof sh[EH]);
	return m;
}

/* The blob's true CFI: CFA = rsp+8 at entry, rsp+16 after the push, then
 * rbp+16 once rbp is set. */
static const uint8_t good_cfi[] = { 0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6 };
/* A rule under which the blob is its own caller: CFA = rsp, the return
 * address "same value". */
static const uint8_t loop_cfi[] = { 0x0c, 7, 0, 0x08, 16 };
/* The true CFI, then DW_CFA_undefined for register 0x7000000. */
static const uint8_t hugereg_cfi[] = { 0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6, 0x07, 0x80, 0x80, 0x80, 0x38 };

/* ---- lists --------------------------------------------------------------------------- */

static gdbjit_entry *entry(const void *image, size_t size)
{
	gdbjit_entry *e = calloc(1, sizeof *e);
	e->symfile_addr = (uintptr_t)image;
	e->symfile_size = size;
	return e;
}

static void link_list(gdbjit_entry **v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		v[i]->next_entry = i + 1 < n ? (uintptr_t)v[i + 1] : 0;
		v[i]->prev_entry = i ? (uintptr_t)v[i - 1] : 0;
	}
	__jit_debug_descriptor.first_entry = n ? (uintptr_t)v[0] : 0;
}

static void set_extension(uint64_t seq, uint64_t n_entries)
{
	gdbjit_descriptor *d = &__jit_debug_descriptor;
	memcpy(d->magic, GDBJIT_EXT_MAGIC, GDBJIT_EXT_MAGIC_LEN);
	d->ext_version = GDBJIT_EXT_VERSION;
	d->sizeof_descriptor = sizeof *d;
	d->sizeof_entry = sizeof(gdbjit_entry);
	d->seq = seq;
	d->n_entries = n_entries;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

/* A writer that keeps the seqlock but changes the list all the time and
 * unmaps what it unlinked at once (no grace period): every read either
 * validates or fails cleanly. */
static void *churn(void *arg)
{
	int torn = arg != NULL;
	img good = make_image(good_cfi, sizeof good_cfi, (uintptr_t)code);
	gdbjit_descriptor *d = &__jit_debug_descriptor;
	for (;;) {
		gdbjit_entry *e =
			mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		*e = (gdbjit_entry){ .symfile_addr = (uintptr_t)good.p, .symfile_size = good.n };
		gdbjit_entry *old = (gdbjit_entry *)(uintptr_t)d->first_entry;
		if (!torn)
			__atomic_store_n(&d->seq, d->seq + 1, __ATOMIC_RELEASE);
		e->reg_seq = d->seq + 1;
		__atomic_store_n(&d->first_entry, (uintptr_t)e, __ATOMIC_RELEASE);
		d->n_entries = 1;
		if (!torn)
			__atomic_store_n(&d->seq, d->seq + 1, __ATOMIC_RELEASE);
		if (old)
			munmap(old, 4096);
	}
	return NULL;
}

static void setup(const char *mode)
{
	img good = make_image(good_cfi, sizeof good_cfi, (uintptr_t)code);
	gdbjit_entry *v[8];
	if (!strcmp(mode, "cycle")) {
		v[0] = entry(good.p, good.n);
		v[1] = entry(good.p, 16);
		v[2] = entry(NULL, 0);
		link_list(v, 3);
		v[2]->next_entry = (uintptr_t)v[1]; /* back to the second entry */
	} else if (!strcmp(mode, "huge")) {
		v[0] = entry(good.p, (size_t)1 << 60);
		link_list(v, 1);
	} else if (!strcmp(mode, "unmapped")) {
		void *hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		__jit_debug_descriptor.first_entry = (uintptr_t)hole;
	} else if (!strcmp(mode, "garbage")) {
		size_t n = 0;
		for (; n < 5; n++) {
			size_t size = 64 + next_rand() % 4000;
			uint8_t *g = malloc(size);
			for (size_t i = 0; i < size; i++)
				g[i] = (uint8_t)next_rand();
			if (n >= 2)
				memcpy(g, good.p, 64 < size ? 64 : size); /* a valid header over garbage */
			v[n] = entry(g, size);
		}
		v[n++] = entry(good.p, good.n / 2); /* cut short */
		link_list(v, n);
	} else if (!strcmp(mode, "badcfi")) {
		img bad = make_image(loop_cfi, sizeof loop_cfi, (uintptr_t)code);
		v[0] = entry(bad.p, bad.n);
		link_list(v, 1);
	} else if (!strcmp(mode, "hugereg")) {
		img bad = make_image(hugereg_cfi, sizeof hugereg_cfi, (uintptr_t)code);
		v[0] = entry(bad.p, bad.n);
		link_list(v, 1);
	} else if (!strcmp(mode, "twice")) {
		img old = make_image(good_cfi, sizeof good_cfi, (uintptr_t)code);
		char *name = memmem(old.p, old.n, "jit:blob", 8);
		if (name)
			memcpy(name, "jit:olde", 8);
		/* HOSTILE_ORDER=reverse lists the newer first */
		int rev = getenv("HOSTILE_ORDER") && !strcmp(getenv("HOSTILE_ORDER"), "reverse");
		gdbjit_entry *older = entry(old.p, old.n), *newer = entry(good.p, good.n);
		older->reg_seq = 4;
		newer->reg_seq = 6;
		v[0] = rev ? newer : older;
		v[1] = rev ? older : newer;
		link_list(v, 2);
		set_extension(8, 2);
	} else if (!strcmp(mode, "badname")) {
		char *name = memmem(good.p, good.n, "jit:blob", 8);
		if (name)
			memcpy(name,
			       "jit:\xff\xfe\x80"
			       "b",
			       8); /* a lead byte, a non-byte, a lone continuation */
		v[0] = entry(good.p, good.n);
		link_list(v, 1);
	} else if (!strcmp(mode, "markup")) {
		char *name = memmem(good.p, good.n, "jit:blob", 8);
		if (name)
			memcpy(name, "jit:<&>\"", 8);
		v[0] = entry(good.p, good.n);
		link_list(v, 1);
	} else if (!strcmp(mode, "outside")) {
		img bad = make_image(good_cfi, sizeof good_cfi, (uintptr_t)code + 0x100000);
		v[0] = entry(bad.p, bad.n);
		link_list(v, 1);
	} else if (!strcmp(mode, "version")) {
		v[0] = entry(good.p, good.n);
		link_list(v, 1);
		__jit_debug_descriptor.version = 2;
	} else if (!strcmp(mode, "long")) {
		size_t n = 1200000;
		gdbjit_entry *all = calloc(n, sizeof *all);
		for (size_t i = 0; i < n; i++)
			all[i].next_entry = i + 1 < n ? (uintptr_t)&all[i + 1] : 0;
		all[0].symfile_addr = (uintptr_t)good.p, all[0].symfile_size = good.n;
		__jit_debug_descriptor.first_entry = (uintptr_t)all;
	} else if (!strcmp(mode, "odd")) {
		v[0] = entry(good.p, good.n);
		link_list(v, 1);
		set_extension(7, 1);
	} else if (!strcmp(mode, "absurd")) {
		v[0] = entry(good.p, good.n);
		link_list(v, 1);
		set_extension(4, (uint64_t)1 << 40);
	} else if (!strcmp(mode, "churn") || !strcmp(mode, "torn")) {
		set_extension(2, 0);
		pthread_t t;
		pthread_create(&t, NULL, churn, !strcmp(mode, "torn") ? (void *)1 : NULL);
		usleep(10000);
	} else if (!strcmp(mode, "big")) {
		const char *env = getenv("HOSTILE_IMAGES");
		size_t n = env ? strtoul(env, NULL, 10) : 200, size = (size_t)64 << 20;
		gdbjit_entry **all = calloc(n ? n : 1, sizeof *all);
		for (size_t i = 0; i < n; i++) {
			uint8_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
			if (p == MAP_FAILED)
				exit(2);
			if (!i)
				memcpy(p, good.p, good.n);
			all[i] = entry(p, size);
		}
		link_list(all, n);
	} else {
		fprintf(stderr, "hostile: unknown mode %s\n", mode);
		exit(2);
	}
	__jit_debug_descriptor.action_flag = GDBJIT_REGISTER_FN;
	__jit_debug_register_code();
}

/* ---- expected frames ------------------------------------------------------------------ */

static void c_range(FILE *f, const char *name, void *fn)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	uintptr_t lo = (uintptr_t)fn, hi = lo + 1;
	if (dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size)
		hi = lo + sym->st_size;
	fprintf(f, "%s %#lx %#lx c fp\n", name, (unsigned long)lo, (unsigned long)hi);
}

extern int main(int, char **);

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: hostile MODE wait|abort [--expect FILE]\n");
		return 2;
	}
	action = argv[2];
	const char *expect = argc > 4 && !strcmp(argv[3], "--expect") ? argv[4] : "child.expect";
	emit_blob();
	FILE *f = fopen(expect, "w");
	if (!f)
		return 2;
	c_range(f, "c_inner", (void *)c_inner);
	fprintf(f, "jit:blob %#lx %#lx fp fp\n", (unsigned long)(uintptr_t)code,
		(unsigned long)(uintptr_t)code + BLOB_SIZE);
	c_range(f, "c_outer", (void *)c_outer);
	c_range(f, "run_stack", (void *)run_stack);
	c_range(f, "main", (void *)main);
	fclose(f);
	setup(argv[1]);
	run_stack();
	return 0;
}
