/* SPDX-License-Identifier: MIT */
/* tj_gen.c - turn compiled stencils into a C header of code bytes and holes
 * (build time).
 *
 *   tj_gen --set NAME --out HEADER --shim SHIM.o
 *          --omit OBJ DIS [--frame OBJ DIS LIST] [--check-fp]
 *
 * OBJ is stencils.c compiled with -fomit-frame-pointer; DIS its
 * `llvm-objdump -dr` listing, copied into the header as comments.  With
 * --frame, the stencils named in LIST come from a second build with a frame
 * pointer.  --check-fp applies the frame-pointer rule again to the final
 * choice, so a header that breaks it is never written.
 *
 * From SHIM.o the generator derives the region rule: the shim's own CFI at
 * its one indirect call, the call into JIT code.
 *
 * For every opcode of vm/opcodes.def the header holds tj_op_<NAME>'s code,
 * its holes (one per relocation, named after the symbol the runtime
 * supplies), and its .eh_frame FDE instructions for exact CFI, as they
 * read after the CIE the jitunwind API assumes (eh_fde_rebase).  A final
 * `jmp _JIT_CONTINUE` (AArch64: `b _JIT_CONTINUE`) is dropped: the next
 * stencil is copied right after.  The objects may be x86-64 or AArch64
 * (isa.h); all must be of the same one.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../runtime/stencil.h"
#include "../vm/vm.h" /* enum tj_op, for TJ_OP_COUNT */
#include "stencil_cfi.h"
#include "elfobj.h"
#include "fpcheck.h"
#include "isa.h"

static const char *const op_names[] = {
#define OP(name, mn, opnd, pops, pushes) #name,
#include "../vm/opcodes.def"
#undef OP
};

static const char *const hole_names[] = {
#define X(name) "_JIT_" #name,
	TJ_HOLE_VALUES(X)
#undef X
};

static const char *const ext_names[] = {
#define X(name) #name,
	TJ_STENCIL_EXTERNS(X)
#undef X
};

static const char *prog = "tj_gen";

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* ---- the llvm-objdump listing ---- */

typedef struct {
	char *text;
	size_t len;
} listing;

static listing read_listing(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		die("cannot open %s", path);
	listing l = { 0 };
	size_t cap = 0;
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
		if (l.len + n + 1 > cap) {
			cap = (l.len + n + 1) * 2;
			l.text = realloc(l.text, cap);
			if (!l.text)
				die("out of memory");
		}
		memcpy(l.text + l.len, buf, n);
		l.len += n;
	}
	fclose(f);
	if (!l.text)
		die("%s is empty", path);
	l.text[l.len] = 0;
	return l;
}

/* The lines of function `name` in the listing: from its "<name>:" line to
 * the next blank line. */
static const char *listing_find(const listing *l, const char *name, const char **end)
{
	char key[300];
	snprintf(key, sizeof key, " <%s>:\n", name);
	const char *p = strstr(l->text, key);
	if (!p)
		return NULL;
	p = strchr(p, '\n') + 1;
	const char *e = strstr(p, "\n\n");
	*end = e ? e : l->text + l->len;
	return p;
}

/* Copy one listing line into a C comment, defusing comment terminators. */
static void put_comment_line(FILE *out, const char *s, const char *e)
{
	fputs(" *  ", out);
	int col = 4;
	for (; s < e; s++) {
		if (*s == '\t') {
			do
				fputc(' ', out);
			while (++col % 8);
			continue;
		}
		if (*s == '/' && s[-1] == '*')
			fputc(' ', out);
		fputc(*s, out);
		col++;
	}
	fputc('\n', out);
}

/* The instruction text of the listing line that holds code offset `at`.
 * Instruction lines are "  OFF: BYTES\tMNEMONIC\tOPERANDS"; relocation
 * lines "\t\tOFF:  R_X86_64_..." (R_AARCH64_...) are skipped. */
static void insn_at(const char *s, const char *e, uint64_t at, char *out, size_t n)
{
	snprintf(out, n, "?");
	while (s < e) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		if (!nl)
			nl = e;
		char line[512];
		size_t len = (size_t)(nl - s) < sizeof line - 1 ? (size_t)(nl - s) : sizeof line - 1;
		memcpy(line, s, len);
		line[len] = 0;
		s = nl + 1;
		char *colon;
		unsigned long long off = strtoull(line, &colon, 16);
		char *tab = strchr(line, '\t');
		if (colon == line || *colon != ':' || !tab || strstr(line, "R_X86_64") ||
		    strstr(line, "R_AARCH64") || off > at)
			continue;
		for (char *c = tab + 1; *c; c++)
			if (*c == '\t')
				*c = ' ';
		snprintf(out, n, "%s", tab + 1);
	}
}

/* ---- stencils ---- */

typedef struct {
	const eo_func *f;
	const listing *dis;
	const char *obj;
	int framed;
	size_t size;   /* after dropping the final jmp */
	size_t nholes; /* relocations kept */
	unsigned uses; /* bit mask of enum tj_extern */
	eh_fde fde;
	uint8_t cfi[512]; /* fde's instructions after the API's CIE */
	size_t cfi_len;
} stencil;

/* The relocations the runtime applies: enum tj_reloc, in its order. */
/* clang-format off */
#define RELOCS(X) \
	X(EM_X86_64, R_X86_64_64) \
	X(EM_X86_64, R_X86_64_32) \
	X(EM_X86_64, R_X86_64_32S) \
	X(EM_X86_64, R_X86_64_PC32) \
	X(EM_X86_64, R_X86_64_PLT32) \
	X(EM_AARCH64, R_AARCH64_CALL26) \
	X(EM_AARCH64, R_AARCH64_JUMP26) \
	X(EM_AARCH64, R_AARCH64_MOVW_UABS_G0_NC) \
	X(EM_AARCH64, R_AARCH64_MOVW_UABS_G1_NC) \
	X(EM_AARCH64, R_AARCH64_MOVW_UABS_G2_NC) \
	X(EM_AARCH64, R_AARCH64_MOVW_UABS_G3) \
	X(EM_AARCH64, R_AARCH64_ADR_PREL_PG_HI21) \
	X(EM_AARCH64, R_AARCH64_ADD_ABS_LO12_NC) \
	X(EM_AARCH64, R_AARCH64_LDST8_ABS_LO12_NC) \
	X(EM_AARCH64, R_AARCH64_LDST16_ABS_LO12_NC) \
	X(EM_AARCH64, R_AARCH64_LDST32_ABS_LO12_NC) \
	X(EM_AARCH64, R_AARCH64_LDST64_ABS_LO12_NC) \
	X(EM_AARCH64, R_AARCH64_LDST128_ABS_LO12_NC)
/* clang-format on */

static int reloc_kind(unsigned machine, uint32_t type)
{
#define X(m, r)                                                                                              \
	if (machine == (m) && type == (r))                                                                   \
		return TJ_##r;
	RELOCS(X)
#undef X
	return -1;
}

static const char *reloc_name(int kind)
{
	static const char *const n[] = {
#define X(m, r) #r,
		RELOCS(X)
#undef X
	};
	return n[kind];
}

/* What a relocation's symbol asks the runtime for. */
static void classify(const stencil *s, const eo_reloc *r, int *value, int *ext)
{
	*ext = 0;
	for (int i = 0; i < TJ_HOLE_EXTERN; i++)
		if (strcmp(r->sym, hole_names[i]) == 0 && !r->sym_defined) {
			*value = i;
			return;
		}
	for (int i = 0; i < TJ_EXT_COUNT; i++)
		if (strcmp(r->sym, ext_names[i]) == 0 && !r->sym_defined) {
			*value = TJ_HOLE_EXTERN;
			*ext = i;
			return;
		}
	die("%s: %s at 0x%llx: relocation against '%s'; stencils may only use the _JIT_* holes "
	    "and the functions of TJ_STENCIL_EXTERNS (no data, no other calls)",
	    s->obj, s->f->name, (unsigned long long)r->offset, r->sym);
}

/* The bytes of a final jump to _JIT_CONTINUE, which the runtime replaces
 * by placing the next stencil right there, or 0: on x86-64 `jmp rel32`
 * (e9, PLT32/PC32 at -4), on AArch64 `b imm26` (JUMP26, addend 0). */
static size_t continue_jump(const eo_func *f)
{
	if (!f->n_relocs)
		return 0;
	const eo_reloc *r = &f->relocs[f->n_relocs - 1];
	if (strcmp(r->sym, "_JIT_CONTINUE") != 0)
		return 0;
	if (f->machine == EM_X86_64)
		return f->size >= 5 && f->code[f->size - 5] == 0xe9 && r->offset == f->size - 4 &&
				       (r->type == R_X86_64_PLT32 || r->type == R_X86_64_PC32) &&
				       r->addend == -4
			       ? 5
			       : 0;
	if (f->machine == EM_AARCH64 && f->size >= 4 && r->offset == f->size - 4) {
		uint32_t w;
		memcpy(&w, f->code + f->size - 4, 4);
		return (w & 0xfc000000u) == 0x14000000u && r->type == R_AARCH64_JUMP26 && r->addend == 0 ? 4
													 : 0;
	}
	return 0;
}

static void emit_stencil(FILE *out, const char *set, int op, stencil *s)
{
	const eo_func *f = s->f;
	const char *name = op_names[op];
	size_t jump = continue_jump(f);
	int dropped = jump != 0;
	s->size = f->size - jump;
	size_t nholes = s->nholes = f->n_relocs - (size_t)dropped;
	const char *ls, *le;
	ls = listing_find(s->dis, f->name, &le);
	if (!ls)
		die("%s: the disassembly listing has no %s", s->obj, f->name);

	fprintf(out, "/* ---- %s: %zu bytes", name, s->size);
	if (dropped)
		fprintf(out, " (the final jmp to _JIT_CONTINUE dropped)");
	fprintf(out, "%s, from %s\n", s->framed ? ", rebuilt with a frame pointer" : "", s->obj);
	for (const char *p = ls; p < le;) {
		const char *nl = memchr(p, '\n', (size_t)(le - p));
		if (!nl)
			nl = le;
		put_comment_line(out, p, nl);
		p = nl + 1;
	}
	fprintf(out, " */\n");

	fprintf(out, "static const uint8_t tj_%s_%s_code[] = {", set, name);
	for (size_t i = 0; i < s->size; i++)
		fprintf(out, "%s0x%02x,", i % 12 ? " " : "\n\t", f->code[i]);
	fprintf(out, "\n};\n");

	unsigned uses = 0;
	if (nholes) {
		fprintf(out, "static const tj_hole tj_%s_%s_holes[] = {\n", set, name);
		for (size_t i = 0; i < nholes; i++) {
			const eo_reloc *r = &f->relocs[i];
			int kind = reloc_kind(f->machine, r->type), value, ext;
			if (kind < 0)
				die("%s: %s at 0x%llx: relocation type %u is not supported", s->obj, f->name,
				    (unsigned long long)r->offset, r->type);
			classify(s, r, &value, &ext);
			if (value == TJ_HOLE_EXTERN)
				uses |= 1u << ext;
			char insn[160];
			insn_at(ls, le, r->offset, insn, sizeof insn);
			fprintf(out, "\t/* 0x%llx: %s %s%+lld, in `%s` */\n", (unsigned long long)r->offset,
				reloc_name(kind), r->sym, (long long)r->addend, insn);
			fprintf(out, "\t{ 0x%llx, TJ_%s, TJ_HOLE_%s, %d, %lld },\n",
				(unsigned long long)r->offset, reloc_name(kind),
				value == TJ_HOLE_EXTERN ? "EXTERN" : hole_names[value] + 5, ext,
				(long long)r->addend);
		}
		fprintf(out, "};\n");
	}

	fprintf(out, "/* its FDE's call frame instructions (after the standard CIE) */\n");
	fprintf(out, "static const uint8_t tj_%s_%s_cfi[] = {", set, name);
	for (size_t i = 0; i < s->cfi_len; i++)
		fprintf(out, "%s0x%02x,", i % 12 ? " " : "\n\t", s->cfi[i]);
	fprintf(out, "%s};\n\n", s->cfi_len ? "\n" : " 0 ");
	s->uses = uses;
}

/* ---- the region rule from the shim ---- */

static eh_row shim_region(const char *path, unsigned machine)
{
	char err[512];
	eo_object o;
	if (eo_open(path, &o, err, sizeof err))
		die("%s", err);
	const isa_ops *isa = isa_for(o.machine);
	if (o.machine != machine || !isa)
		die("%s: the shim is not built for the stencils' machine (%u, not %u)", path, o.machine,
		    machine);
	const eo_func *f = eo_find(&o, "tj_shim_call");
	if (!f)
		die("%s: no tj_shim_call", path);
	size_t len;
	long call = isa_only_indirect_call(isa, f->code, f->size, &len);
	if (call < 0)
		die("%s: tj_shim_call must contain exactly one indirect call (the call into JIT code)", path);
	eh_fde fde;
	eh_row row;
	if (eh_find_fde(&o, f, &fde, err, sizeof err) ||
	    eh_row_at(&fde, (uint64_t)call, &row, err, sizeof err))
		die("%s: %s", path, err);
	if (row.cfa_reg != isa->dw_fp || !row.has_fp || !row.has_ra)
		die("%s: at its call into JIT code (0x%lx) tj_shim_call's CFA is not %s-based with %s "
		    "and the return address saved; compile it with -mframe-pointer=all",
		    path, call, isa->fp_name, isa->fp_name);
	eo_close(&o);
	return row;
}

/* ---- main ---- */

int main(int argc, char **argv)
{
	const char *set = NULL, *outpath = NULL, *shim = NULL, *omit = NULL, *omit_dis = NULL;
	const char *frame = NULL, *frame_dis = NULL, *frame_list = NULL;
	int check_fp = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--set") && i + 1 < argc)
			set = argv[++i];
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			outpath = argv[++i];
		else if (!strcmp(argv[i], "--shim") && i + 1 < argc)
			shim = argv[++i];
		else if (!strcmp(argv[i], "--omit") && i + 2 < argc) {
			omit = argv[++i];
			omit_dis = argv[++i];
		} else if (!strcmp(argv[i], "--frame") && i + 3 < argc) {
			frame = argv[++i];
			frame_dis = argv[++i];
			frame_list = argv[++i];
		} else if (!strcmp(argv[i], "--check-fp"))
			check_fp = 1;
		else
			die("usage: tj_gen --set NAME --out HEADER --shim SHIM.o --omit OBJ DIS "
			    "[--frame OBJ DIS LIST] [--check-fp]");
	}
	if (!set || !outpath || !shim || !omit)
		die("--set, --out, --shim and --omit are required");

	char err[512];
	eo_object o_omit, o_frame;
	if (eo_open(omit, &o_omit, err, sizeof err))
		die("%s", err);
	if (frame && eo_open(frame, &o_frame, err, sizeof err))
		die("%s", err);
	listing l_omit = read_listing(omit_dis), l_frame = { 0 };
	if (frame)
		l_frame = read_listing(frame_dis);
	if (frame && o_frame.machine != o_omit.machine)
		die("%s and %s are built for different machines", omit, frame);
	const isa_ops *isa = isa_for(o_omit.machine);
	eh_row region = shim_region(shim, o_omit.machine);

	stencil st[TJ_OP_COUNT];
	unsigned n_framed = 0;
	for (int op = 0; op < TJ_OP_COUNT; op++) {
		char fname[64];
		snprintf(fname, sizeof fname, "tj_op_%s", op_names[op]);
		stencil *s = &st[op];
		s->framed = frame && frame_list && fp_listed(frame_list, fname);
		const eo_object *o = s->framed ? &o_frame : &o_omit;
		s->f = eo_find(o, fname);
		s->dis = s->framed ? &l_frame : &l_omit;
		s->obj = o->path;
		if (!s->f)
			die("%s: no stencil %s for opcode %s", o->path, fname, op_names[op]);
		if (s->f->size > UINT16_MAX || s->f->n_relocs > UINT16_MAX)
			die("%s: %s is too large", o->path, fname);
		if (eh_find_fde(o, s->f, &s->fde, err, sizeof err))
			die("%s", err);
		if (eh_fde_rebase(&s->fde, s->cfi, sizeof s->cfi, &s->cfi_len, err, sizeof err))
			die("%s: %s: %s", o->path, fname, err);
		n_framed += (unsigned)s->framed;
		if (check_fp) {
			int bad = s->framed ? fp_check_standard_frame(s->f, err, sizeof err)
					    : fp_writes_any(s->f, err, sizeof err) != 0;
			if (bad)
				die("%s: frame-pointer rule broken: %s", o->path, err);
		}
	}
	if (o_omit.n_funcs != TJ_OP_COUNT)
		die("%s has %zu functions for %d opcodes; every function must be an opcode's stencil", omit,
		    o_omit.n_funcs, TJ_OP_COUNT);

	char tmppath[4096];
	snprintf(tmppath, sizeof tmppath, "%s.tmp", outpath);
	FILE *out = fopen(tmppath, "w");
	if (!out)
		die("cannot write %s", tmppath);
	fprintf(out,
		"/* %s - stencil set '%s', generated by tj_gen from %s; do not edit.\n *\n"
		" * Machine code for %s.\n"
		" * Stencils rebuilt with a frame pointer: %u of %d.\n"
		" * Region rule, from tj_shim_call's CFI at its call into JIT code (%s):\n"
		" *   CFA = %s%+lld, %s at CFA%+lld, return address at CFA%+lld.\n */\n"
		"#include \"runtime/stencil.h\"\n#include \"vm/vm.h\"\n\n",
		outpath, set, omit, isa->name, n_framed, TJ_OP_COUNT, shim, isa->fp_name,
		(long long)region.cfa_offset, isa->fp_name, (long long)region.fp_offset,
		(long long)region.ra_offset);
	for (int op = 0; op < TJ_OP_COUNT; op++)
		emit_stencil(out, set, op, &st[op]);

	fprintf(out, "static const tj_stencil tj_%s_ops[] = {\n", set);
	for (int op = 0; op < TJ_OP_COUNT; op++) {
		const stencil *s = &st[op];
		char holes[128] = "NULL";
		if (s->nholes)
			snprintf(holes, sizeof holes, "tj_%s_%s_holes", set, op_names[op]);
		fprintf(out, "\t[TJ_OP_%s] = { tj_%s_%s_code, %zu, %zu, %s, tj_%s_%s_cfi, %zu, %d, 0x%x },\n",
			op_names[op], set, op_names[op], s->size, s->nholes, holes, set, op_names[op],
			s->cfi_len, s->framed, s->uses);
	}
	fprintf(out,
		"};\n\nconst tj_stencil_set tj_stencils_%s = {\n\t\"%s\", %u, tj_%s_ops, %d, %u,\n\t%lld, %lld, %lld,\n};\n",
		set, set, (unsigned)o_omit.machine, set, TJ_OP_COUNT, n_framed, (long long)region.cfa_offset,
		(long long)region.fp_offset, (long long)region.ra_offset);
	if (fclose(out) != 0 || rename(tmppath, outpath) != 0)
		die("cannot write %s", outpath);
	fprintf(stderr, "%s: set %s: %d stencils, %u rebuilt with a frame pointer\n", prog, set, TJ_OP_COUNT,
		n_framed);
	/* freed so a sanitizer build of the generator reports real leaks only */
	eo_close(&o_omit);
	if (frame)
		eo_close(&o_frame);
	free(l_omit.text);
	free(l_frame.text);
	return 0;
}
