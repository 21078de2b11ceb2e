/* SPDX-License-Identifier: MIT */
/* foreignjit.c - a JIT that is not jitunwind, registering images shaped
 * the way other JITs shape them, for jitstack's tests.
 *
 * It defines its own plain GDB JIT descriptor (no outside-reader
 * extension, like LLVM or LuaJIT) and registers two images:
 *
 *   an LLVM-style relocatable object: jitobj.o (or jitobj-df.o, whose CFI
 *     is a .debug_frame) loaded the way MCJIT/ORC load one: .text copied to
 *     executable memory and relocated there (calls to the host through
 *     stubs), .eh_frame copied too, and the *original* object registered
 *     with only its section addresses set: its .eh_frame/.debug_frame and
 *     DWARF still need their relocations, which the reader must apply;
 *
 *   a LuaJIT-style image for a hand-written trace: ET_REL, .text NOBITS at
 *     the code, an .eh_frame whose FDE addresses are DW_EH_PE_textrel
 *     (offsets from .text, as lj_gdbjit.c writes them), a section-relative
 *     symbol, DWARF 2 line info and no .debug_aranges.
 *
 * The stack it builds (innermost first), neither JIT keeping frame
 * pointers:
 *   c_inner <- TRACE_1 <- host_middle <- jitobj_inner <- jitobj_outer
 *     <- run_chain <- main
 * Usage: foreignjit wait|abort OBJECT [--expect FILE]
 * It writes the expected frames (tests/child.c's format, for
 * tests/check_frames.py), then waits ("ready PID") or aborts for a core.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#include "formats/gdbjit.h"

#define NOINLINE __attribute__((noinline, used))
#define BARRIER() __asm__ volatile("" ::: "memory")

/* ---- the GDB JIT interface, plain (GDB manual, "JIT Compilation Interface") */

struct jit_descriptor __jit_debug_descriptor = { GDBJIT_VERSION, GDBJIT_NOACTION, 0, 0 };

NOINLINE void __jit_debug_register_code(void)
{
	__asm__ volatile("");
}

static void register_image(const void *img, size_t size)
{
	struct jit_code_entry *e = calloc(1, sizeof *e);
	e->symfile_addr = img;
	e->symfile_size = size;
	gdbjit_plain_link(&__jit_debug_descriptor, e);
	__jit_debug_register_code();
}

/* ---- the host side of the stack -------------------------------------------- */

static const char *action = "wait";
static void (*trace_1)(void);
static int (*jitobj_outer)(int);

NOINLINE void c_inner(void)
{
	if (!strcmp(action, "abort"))
		abort();
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}

NOINLINE void host_middle(int depth)
{
	(void)depth;
	trace_1();
	BARRIER();
}

NOINLINE void run_chain(void)
{
	jitobj_outer(1);
	BARRIER();
}

/* ---- executable memory ---------------------------------------------------------- */

static uint8_t *code;
static size_t code_used;
enum { CODE_SIZE = 1 << 16 };

static uint8_t *code_alloc(size_t n, size_t align)
{
	code_used = (code_used + align - 1) & ~(align - 1);
	uint8_t *p = code + code_used;
	code_used += n;
	return p;
}

/* movabs $target, %r11; jmp *%r11: a far call's landing pad, as
 * RuntimeDyld's stubs are. */
static uint8_t *stub_to(void *target)
{
	uint8_t *s = code_alloc(13, 16);
	uint64_t t = (uintptr_t)target;
	s[0] = 0x49, s[1] = 0xbb;
	memcpy(s + 2, &t, 8);
	s[10] = 0x41, s[11] = 0xff, s[12] = 0xe3;
	return s;
}

/* ---- the LLVM-style object --------------------------------------------------------- */

static int fail(const char *what)
{
	fprintf(stderr, "foreignjit: %s\n", what);
	exit(2);
}

typedef struct loaded {
	uint64_t inner_lo, inner_hi, outer_lo, outer_hi;
} loaded;

static void load_object(const char *path, loaded *out)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		fail("cannot open the object");
	off_t size = lseek(fd, 0, SEEK_END);
	char *obj = malloc((size_t)size);
	if (pread(fd, obj, (size_t)size, 0) != size)
		fail("cannot read the object");
	close(fd);
	elf_version(EV_CURRENT);
	Elf *e = elf_memory(obj, (size_t)size);
	size_t shstrndx;
	if (!e || elf_getshdrstrndx(e, &shstrndx))
		fail("not an ELF object");
	Elf_Scn *scn = NULL, *text = NULL, *symtab = NULL, *rela_text = NULL, *eh = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!strcmp(name, ".text"))
			text = scn;
		else if (!strcmp(name, ".rela.text"))
			rela_text = scn;
		else if (!strcmp(name, ".eh_frame"))
			eh = scn;
		else if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
	}
	if (!text || !symtab)
		fail("the object lacks .text or .symtab");
	GElf_Shdr tsh;
	gelf_getshdr(text, &tsh);
	uint8_t *load = code_alloc(tsh.sh_size, 16);
	memcpy(load, obj + tsh.sh_offset, tsh.sh_size);
	size_t text_ndx = elf_ndxscn(text);
	Elf_Data *syms = elf_getdata(symtab, NULL);
	GElf_Shdr ssh;
	gelf_getshdr(symtab, &ssh);
	/* relocate the loaded code: local targets directly, the host through stubs */
	if (rela_text) {
		Elf_Data *r = elf_getdata(rela_text, NULL);
		GElf_Shdr rsh;
		gelf_getshdr(rela_text, &rsh);
		for (size_t i = 0; i < rsh.sh_size / rsh.sh_entsize; i++) {
			GElf_Rela rel;
			GElf_Sym sym;
			gelf_getrela(r, (int)i, &rel);
			gelf_getsym(syms, (int)GELF_R_SYM(rel.r_info), &sym);
			uint64_t S;
			if (sym.st_shndx == text_ndx)
				S = (uintptr_t)load + sym.st_value;
			else if (!strcmp(elf_strptr(e, ssh.sh_link, sym.st_name), "host_middle"))
				S = (uintptr_t)stub_to((void *)host_middle);
			else
				fail("unexpected relocation in .text");
			uint32_t type = GELF_R_TYPE(rel.r_info);
			if (type != R_X86_64_PC32 && type != R_X86_64_PLT32)
				fail("unexpected relocation type in .text");
			int64_t v = (int64_t)(S + (uint64_t)rel.r_addend - ((uintptr_t)load + rel.r_offset));
			int32_t v32 = (int32_t)v;
			if (v != v32)
				fail("relocation out of range");
			memcpy(load + rel.r_offset, &v32, 4);
		}
	}
	/* the functions' addresses, for the call and the expect file */
	for (size_t i = 0; i < ssh.sh_size / ssh.sh_entsize; i++) {
		GElf_Sym sym;
		gelf_getsym(syms, (int)i, &sym);
		const char *name = elf_strptr(e, ssh.sh_link, sym.st_name);
		uint64_t lo = (uintptr_t)load + sym.st_value, hi = lo + sym.st_size;
		if (!strcmp(name, "jitobj_outer")) {
			jitobj_outer = (int (*)(int))(uintptr_t)lo;
			out->outer_lo = lo, out->outer_hi = hi;
		} else if (!strcmp(name, "jitobj_inner")) {
			out->inner_lo = lo, out->inner_hi = hi;
		}
	}
	if (!jitobj_outer || !out->inner_lo)
		fail("the object lacks jitobj_outer or jitobj_inner");
	/* What MCJIT hands to gdb: the object with the loaded sections'
	 * addresses written in, relocations left for the debugger. */
	GElf_Shdr sh;
	gelf_getshdr(text, &sh);
	sh.sh_addr = (uintptr_t)load;
	gelf_update_shdr(text, &sh);
	if (eh) {
		gelf_getshdr(eh, &sh);
		uint8_t *eh_copy = malloc(sh.sh_size);
		memcpy(eh_copy, obj + sh.sh_offset, sh.sh_size);
		sh.sh_addr = (uintptr_t)eh_copy;
		gelf_update_shdr(eh, &sh);
	}
	elf_flagelf(e, ELF_C_SET, ELF_F_LAYOUT);
	/* elf_memory images cannot be written back; patch the headers by hand */
	GElf_Ehdr eh_hdr;
	gelf_getehdr(e, &eh_hdr);
	Elf64_Shdr *shdrs = (Elf64_Shdr *)(obj + eh_hdr.e_shoff);
	shdrs[text_ndx].sh_addr = (uintptr_t)load;
	if (eh) {
		gelf_getshdr(eh, &sh);
		shdrs[elf_ndxscn(eh)].sh_addr = sh.sh_addr;
	}
	elf_end(e);
	register_image(obj, (size_t)size);
}

/* ---- the LuaJIT-style trace ---------------------------------------------------------- */

/* A little-endian byte writer.  Its room is set once (w_room), before any
 * address inside it is taken: it never moves after that. */
typedef struct wbuf {
	uint8_t *b;
	size_t n, cap;
} wbuf;

static void w_room(wbuf *w, size_t cap)
{
	if (!(w->b = calloc(1, cap)))
		fail("out of memory");
	w->cap = cap;
}

static size_t w_bytes(wbuf *w, const void *p, size_t n)
{
	size_t at = w->n;
	if (n > w->cap - w->n)
		fail("the image outgrew its buffer");
	memcpy(w->b + w->n, p, n);
	w->n += n;
	return at;
}
static void w_u8(wbuf *w, uint8_t v)
{
	w_bytes(w, &v, 1);
}
static void w_u16(wbuf *w, uint16_t v)
{
	w_bytes(w, &v, 2);
}
static void w_u32(wbuf *w, uint32_t v)
{
	w_bytes(w, &v, 4);
}
static void w_u64(wbuf *w, uint64_t v)
{
	w_bytes(w, &v, 8);
}
static void w_str(wbuf *w, const char *s)
{
	w_bytes(w, s, strlen(s) + 1);
}
static void w_uleb(wbuf *w, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		w_u8(w, b | (v ? 0x80 : 0));
	} while (v);
}
static void w_sleb(wbuf *w, int64_t v)
{
	for (;;) {
		uint8_t b = v & 0x7f;
		v >>= 7;
		int done = (v == 0 && !(b & 0x40)) || (v == -1 && (b & 0x40));
		w_u8(w, b | (done ? 0 : 0x80));
		if (done)
			return;
	}
}
static void w_align(wbuf *w, size_t a, uint8_t fill)
{
	while (w->n % a)
		w_u8(w, fill);
}
static void w_put32(wbuf *w, size_t at, uint32_t v)
{
	memcpy(w->b + at, &v, 4);
}

/* The trace: sub $24,%rsp; movabs $c_inner,%rax; call *%rax; add $24,%rsp; ret */
enum { T_AFTER_SUB = 4, T_CALL_END = 16, T_AFTER_ADD = 20, T_SIZE = 21 };

static uint8_t *emit_trace(void)
{
	uint8_t *p = code_alloc(T_SIZE, 16);
	uint64_t t = (uintptr_t)c_inner;
	uint8_t insn[T_SIZE] = { 0x48, 0x83, 0xec, 0x18, 0x48, 0xb8 };
	memcpy(insn + 6, &t, 8);
	insn[14] = 0xff, insn[15] = 0xd0;
	insn[16] = 0x48, insn[17] = 0x83, insn[18] = 0xc4, insn[19] = 0x18, insn[20] = 0xc3;
	memcpy(p, insn, T_SIZE);
	return p;
}

/* Source lines of the trace (offset, line): the call is on line 11. */
static const unsigned trace_lines[][2] = { { 0, 10 }, { 4, 11 }, { T_CALL_END, 12 } };

enum {
	S_NULL,
	S_TEXT,
	S_EH_FRAME,
	S_SHSTRTAB,
	S_STRTAB,
	S_SYMTAB,
	S_DEBUG_INFO,
	S_DEBUG_ABBREV,
	S_DEBUG_LINE,
	S_COUNT
};

static void luajit_image(uint8_t *mcode)
{
	static wbuf w; /* lives as long as the registration */
	/* FOREIGNJIT_DEEP=N: the unit's DIEs nest N lexical blocks deep inside
	 * the trace's subprogram, each covering the trace (hostile DWARF: a
	 * reader that walks scopes by recursion runs out of stack) */
	const char *deep_env = getenv("FOREIGNJIT_DEEP");
	size_t deep = deep_env ? strtoul(deep_env, NULL, 10) : 0;
	w_room(&w, 8192 + deep * 18);
	static const char shstr[] = "\0.text\0.eh_frame\0.shstrtab\0.strtab\0.symtab\0.debug_info\0"
				    ".debug_abbrev\0.debug_line";
	static const uint32_t shname[S_COUNT] = { 0, 1, 7, 17, 27, 35, 43, 55, 69 };
	Elf64_Shdr sh[S_COUNT];
	memset(sh, 0, sizeof sh);
	w.n = 0;
	w_bytes(&w, &(Elf64_Ehdr){ 0 }, sizeof(Elf64_Ehdr)); /* filled at the end */

	/* .eh_frame: FDE addresses relative to .text (DW_EH_PE_textrel) */
	w_align(&w, 8, 0);
	sh[S_EH_FRAME].sh_offset = w.n;
	size_t cie = w_bytes(&w, "\0\0\0\0", 4);
	w_u32(&w, 0);                                 /* CIE id */
	w_u8(&w, 1);                                  /* version */
	w_str(&w, "zR");                              /* augmentation */
	w_uleb(&w, 1);                                /* code alignment */
	w_sleb(&w, -8);                               /* data alignment */
	w_u8(&w, 16);                                 /* return address: rip */
	w_uleb(&w, 1);                                /* augmentation data length */
	w_u8(&w, 0x20 | 0x03);                        /* DW_EH_PE_textrel | DW_EH_PE_udata4 */
	w_u8(&w, 0x0c), w_uleb(&w, 7), w_uleb(&w, 8); /* DW_CFA_def_cfa rsp+8 */
	w_u8(&w, 0x80 | 16), w_uleb(&w, 1);           /* DW_CFA_offset rip, cfa-8 */
	w_align(&w, 8, 0);
	w_put32(&w, cie, (uint32_t)(w.n - cie - 4));
	size_t fde = w_bytes(&w, "\0\0\0\0", 4);
	w_u32(&w, (uint32_t)(w.n - cie));             /* CIE pointer */
	w_u32(&w, 0);                                 /* pc_begin: offset 0 in .text */
	w_u32(&w, T_SIZE);                            /* pc_range */
	w_uleb(&w, 0);                                /* augmentation data length */
	w_u8(&w, 0x40 | T_AFTER_SUB);                 /* DW_CFA_advance_loc */
	w_u8(&w, 0x0e), w_uleb(&w, 32);               /* DW_CFA_def_cfa_offset 32 */
	w_u8(&w, 0x40 | (T_AFTER_ADD - T_AFTER_SUB)); /* DW_CFA_advance_loc */
	w_u8(&w, 0x0e), w_uleb(&w, 8);                /* DW_CFA_def_cfa_offset 8 */
	w_align(&w, 8, 0);
	w_put32(&w, fde, (uint32_t)(w.n - fde - 4));
	w_u32(&w, 0);
	sh[S_EH_FRAME].sh_size = w.n - sh[S_EH_FRAME].sh_offset;

	sh[S_SHSTRTAB].sh_offset = w_bytes(&w, shstr, sizeof shstr);
	sh[S_SHSTRTAB].sh_size = sizeof shstr;
	static const char str[] = "\0JIT mcode\0TRACE_1";
	sh[S_STRTAB].sh_offset = w_bytes(&w, str, sizeof str);
	sh[S_STRTAB].sh_size = sizeof str;
	w_align(&w, 8, 0);
	sh[S_SYMTAB].sh_offset = w.n;
	Elf64_Sym syms[3] = {
		{ 0 },
		{ .st_name = 1, .st_info = ELF64_ST_INFO(STB_LOCAL, STT_FILE), .st_shndx = SHN_ABS },
		{ .st_name = 11,
		  .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
		  .st_shndx = S_TEXT,
		  .st_value = 0,
		  .st_size = T_SIZE },
	};
	w_bytes(&w, syms, sizeof syms);
	sh[S_SYMTAB].sh_size = sizeof syms;

	/* .debug_info: one DWARF 2 unit with the code's range */
	sh[S_DEBUG_INFO].sh_offset = w.n;
	size_t unit = w_bytes(&w, "\0\0\0\0", 4);
	w_u16(&w, 2);                         /* version */
	w_u32(&w, 0);                         /* abbrev offset */
	w_u8(&w, 8);                          /* address size */
	w_uleb(&w, 1);                        /* DW_TAG_compile_unit */
	w_str(&w, "trace.lua");               /* DW_AT_name */
	w_u32(&w, 0);                         /* DW_AT_stmt_list */
	w_u64(&w, (uintptr_t)mcode);          /* DW_AT_low_pc */
	w_u64(&w, (uintptr_t)mcode + T_SIZE); /* DW_AT_high_pc (an address in DWARF 2) */
	if (deep) {
		w_uleb(&w, 2);                        /* DW_TAG_subprogram */
		w_str(&w, "TRACE_1");                 /* DW_AT_name */
		w_u64(&w, (uintptr_t)mcode);          /* DW_AT_low_pc */
		w_u64(&w, (uintptr_t)mcode + T_SIZE); /* DW_AT_high_pc */
		for (size_t i = 0; i < deep; i++) {
			w_uleb(&w, 3); /* DW_TAG_lexical_block, around the next */
			w_u64(&w, (uintptr_t)mcode);
			w_u64(&w, (uintptr_t)mcode + T_SIZE);
		}
		for (size_t i = 0; i < deep + 2; i++)
			w_u8(&w, 0); /* the ends of the blocks, the subprogram and the unit */
	}
	w_put32(&w, unit, (uint32_t)(w.n - unit - 4));
	sh[S_DEBUG_INFO].sh_size = w.n - sh[S_DEBUG_INFO].sh_offset;
	sh[S_DEBUG_ABBREV].sh_offset = w.n;
	/* 1 the unit (children only when deep), 2 a subprogram, 3 a block */
	static const uint8_t abbrev[] = {
		1, 0x11, 0, 0x03, 0x08, 0x10, 0x06, 0x11, 0x01, 0x12, 0x01, 0, 0, 0
	};
	static const uint8_t abbrev_deep[] = { 1,    0x11, 1,    0x03, 0x08, 0x10, 0x06, 0x11, 0x01,
					       0x12, 0x01, 0,    0,    2,    0x2e, 1,    0x03, 0x08,
					       0x11, 0x01, 0x12, 0x01, 0,    0,    3,    0x0b, 1,
					       0x11, 0x01, 0x12, 0x01, 0,    0,    0 };
	sh[S_DEBUG_ABBREV].sh_size = deep ? w_bytes(&w, abbrev_deep, sizeof abbrev_deep),
	sizeof abbrev_deep                : (w_bytes(&w, abbrev, sizeof abbrev), sizeof abbrev);

	/* .debug_line: version 2, one file, the rows of trace_lines */
	sh[S_DEBUG_LINE].sh_offset = w.n;
	unit = w_bytes(&w, "\0\0\0\0", 4);
	w_u16(&w, 2);
	size_t hdr = w_bytes(&w, "\0\0\0\0", 4);
	w_u8(&w, 1);           /* minimum_instruction_length */
	w_u8(&w, 1);           /* default_is_stmt */
	w_u8(&w, (uint8_t)-5); /* line_base */
	w_u8(&w, 14);          /* line_range */
	w_u8(&w, 13);          /* opcode_base */
	static const uint8_t lens[12] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	w_bytes(&w, lens, sizeof lens);
	w_u8(&w, 0); /* no include directories */
	w_str(&w, "trace.lua"), w_uleb(&w, 0), w_uleb(&w, 0), w_uleb(&w, 0);
	w_u8(&w, 0);
	w_put32(&w, hdr, (uint32_t)(w.n - hdr - 4));
	w_u8(&w, 0), w_uleb(&w, 9), w_u8(&w, 2), w_u64(&w, (uintptr_t)mcode); /* DW_LNE_set_address */
	unsigned addr = 0, line = 1;
	for (size_t i = 0; i < sizeof trace_lines / sizeof trace_lines[0]; i++) {
		w_u8(&w, 2), w_uleb(&w, trace_lines[i][0] - addr);           /* DW_LNS_advance_pc */
		w_u8(&w, 3), w_sleb(&w, (int)trace_lines[i][1] - (int)line); /* DW_LNS_advance_line */
		w_u8(&w, 1);                                                 /* DW_LNS_copy */
		addr = trace_lines[i][0], line = trace_lines[i][1];
	}
	w_u8(&w, 2), w_uleb(&w, T_SIZE - addr);
	w_u8(&w, 0), w_uleb(&w, 1), w_u8(&w, 1); /* DW_LNE_end_sequence */
	w_put32(&w, unit, (uint32_t)(w.n - unit - 4));
	sh[S_DEBUG_LINE].sh_size = w.n - sh[S_DEBUG_LINE].sh_offset;

	sh[S_TEXT] =
		(Elf64_Shdr){ 0,  SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, (uintptr_t)mcode, 0, T_SIZE, 0, 0,
			      16, 0 };
	sh[S_EH_FRAME].sh_type = SHT_PROGBITS, sh[S_EH_FRAME].sh_flags = SHF_ALLOC,
	sh[S_EH_FRAME].sh_addralign = 8;
	sh[S_EH_FRAME].sh_addr = (uintptr_t)w.b + sh[S_EH_FRAME].sh_offset;
	sh[S_SHSTRTAB].sh_type = sh[S_STRTAB].sh_type = SHT_STRTAB;
	sh[S_SYMTAB].sh_type = SHT_SYMTAB, sh[S_SYMTAB].sh_link = S_STRTAB, sh[S_SYMTAB].sh_info = 2;
	sh[S_SYMTAB].sh_entsize = sizeof(Elf64_Sym), sh[S_SYMTAB].sh_addralign = 8;
	sh[S_DEBUG_INFO].sh_type = sh[S_DEBUG_ABBREV].sh_type = sh[S_DEBUG_LINE].sh_type = SHT_PROGBITS;
	for (int i = 0; i < S_COUNT; i++)
		sh[i].sh_name = shname[i];
	w_align(&w, 8, 0);
	size_t shoff = w_bytes(&w, sh, sizeof sh);
	Elf64_Ehdr h = { .e_type = ET_REL,
			 .e_machine = EM_X86_64,
			 .e_version = EV_CURRENT,
			 .e_shoff = shoff,
			 .e_ehsize = sizeof h,
			 .e_shentsize = sizeof(Elf64_Shdr),
			 .e_shnum = S_COUNT,
			 .e_shstrndx = S_SHSTRTAB };
	memcpy(h.e_ident, ELFMAG, SELFMAG);
	h.e_ident[EI_CLASS] = ELFCLASS64, h.e_ident[EI_DATA] = ELFDATA2LSB,
	h.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(w.b, &h, sizeof h);
	register_image(w.b, w.n);
}

/* ---- expected frames --------------------------------------------------------------- */

static void c_range(FILE *f, const char *name, void *fn, const char *fp)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	uintptr_t lo = (uintptr_t)fn, hi = lo + 1;
	if (dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size)
		hi = lo + sym->st_size;
	fprintf(f, "%s %#lx %#lx c %s\n", name, (unsigned long)lo, (unsigned long)hi, fp);
}

extern int main(int, char **);

/* A frame-pointer walk sees a function when its caller's frame is linked:
 * neither JIT keeps rbp, so host_middle (called by jitobj_inner) and
 * jitobj_outer's frame are invisible to it. */
static void write_expect(const char *path, const loaded *l, uint8_t *trace)
{
	FILE *f = fopen(path, "w");
	if (!f)
		fail("cannot write the expect file");
	c_range(f, "c_inner", (void *)c_inner, "fp");
	fprintf(f, "TRACE_1 %#lx %#lx cfi fp\n", (unsigned long)(uintptr_t)trace,
		(unsigned long)(uintptr_t)trace + T_SIZE);
	c_range(f, "host_middle", (void *)host_middle, "-");
	fprintf(f, "jitobj_inner %#lx %#lx cfi fp\n", (unsigned long)l->inner_lo, (unsigned long)l->inner_hi);
	fprintf(f, "jitobj_outer %#lx %#lx cfi -\n", (unsigned long)l->outer_lo, (unsigned long)l->outer_hi);
	c_range(f, "run_chain", (void *)run_chain, "fp");
	c_range(f, "main", (void *)main, "fp");
	fclose(f);
}

/* The code's memory, of the kind FOREIGNJIT_CODE names: private anonymous
 * (unset), or shared as PHP's opcache JIT keeps it: "shared" (anonymous
 * shared, /dev/zero (deleted) in maps), "sysv" (SysV shared memory,
 * /SYSV... (deleted)) or "memfd" (/memfd:... (deleted)). */
static uint8_t *code_memory(const char *kind)
{
	void *p = MAP_FAILED;
	if (!kind || !*kind) {
		p = mmap(NULL, CODE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	} else if (!strcmp(kind, "shared")) {
		p = mmap(NULL, CODE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	} else if (!strcmp(kind, "sysv")) {
		int id = shmget(IPC_PRIVATE, CODE_SIZE, IPC_CREAT | 0600);
		p = id < 0 ? MAP_FAILED : shmat(id, NULL, SHM_EXEC);
		if (p == (void *)-1)
			p = MAP_FAILED;
		if (id >= 0)
			shmctl(id, IPC_RMID, NULL); /* gone with the last detach */
	} else if (!strcmp(kind, "memfd")) {
		int fd = memfd_create("jitcode", MFD_CLOEXEC);
		if (fd >= 0 && ftruncate(fd, CODE_SIZE) == 0)
			p = mmap(NULL, CODE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (fd >= 0)
			close(fd);
	}
	if (p == MAP_FAILED)
		fail("code memory");
	return p;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: foreignjit wait|abort OBJECT [--expect FILE]\n");
		return 2;
	}
	action = argv[1];
	const char *expect = argc > 4 && !strcmp(argv[3], "--expect") ? argv[4] : "child.expect";
	code = code_memory(getenv("FOREIGNJIT_CODE"));
	memset(code, 0xcc, CODE_SIZE);
	loaded l;
	load_object(argv[2], &l);
	uint8_t *trace = emit_trace();
	if (mprotect(code, CODE_SIZE, PROT_READ | PROT_EXEC))
		fail("mprotect");
	trace_1 = (void (*)(void))(void *)trace;
	luajit_image(trace);
	write_expect(expect, &l, trace);
	run_chain();
	return 0;
}
