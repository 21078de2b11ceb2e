/* SPDX-License-Identifier: MIT */
/* jit.c - copy and patch stencils into executable memory (run time).
 *
 * Layout: all functions of a program share one mapping; each starts on a
 * 16-byte boundary (perf's libdw unwinder wanted aligned code) and is
 *     ENTER stencil | one stencil per instruction | trampolines
 * followed by room for the function's unwind tables, left unwritten (pages
 * never touched cost no memory): `perf inject --jit` places a function's
 * .eh_frame_hdr and .eh_frame right after its code in the ELF file it makes,
 * and maps them only if that does not run into the next function (see
 * src/ch_jitdump.c); without them perf's DWARF unwinder stops there.
 * A stencil's final `jmp _JIT_CONTINUE` was dropped by the generator, so
 * straight-line code runs from one stencil into the next.  Calls to run-time
 * functions go through a trampoline (jmp *0(%rip); .quad addr -- on
 * AArch64 ldr x16, 8; br x16; .quad addr) at the end of the function: the
 * mapping is rarely within the ±2 GiB a rel32 (±128 MiB a bl) reaches.
 *
 * W^X: code is never writable and executable at once, and never comes
 * from malloc (perf symbolizes only anonymous executable mappings).  By
 * default (TJ_WX_FLIP) one private mapping is filled RW, then mprotect'ed
 * RX.  The dual modes write through a RW view and run through a RX view of
 * the same pages at another address, as JITs whose code must never be
 * made writable in place do (.NET since 7, Firefox): every address patched
 * into the code, and every address published, is the RX view's; the RW
 * view is unmapped once the code is written.  TJ_WX_DUAL shares a memfd
 * (/memfd:NAME in /proc/PID/maps, which perf 6.1 does not take for
 * anonymous memory, so it ignores the perf map there); TJ_WX_DUAL_ANON
 * shares anonymous memory, its second view made by mremap with an old
 * size of 0 (/dev/zero in maps, which perf counts as anonymous).  The
 * instruction cache is synchronised with the written code before it runs
 * (a no-op on x86-64, required on AArch64).
 */
#define _GNU_SOURCE 1 /* memfd_create, mremap */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../vm/ops.h"
#include "inline.h"
#include "jit.h"
#include "patch.h"

struct tj_jit {
	const tj_stencil_set *set;
	uint8_t *mem;  /* where the code runs */
	uint8_t *wmem; /* where it is written: mem, or the RW view while compiling */
	size_t mem_size, code_bytes;
	uint32_t n_funcs;
	tj_jit_func *funcs;
	void **entries;
	tj_line *lines;
	tj_cfi_range *cfi;
	tj_jit_inline *inlines;
	/* the units copied (inline.h): function fi's are [fn_unit[fi],
	 * fn_unit[fi + 1]) and its instances [fn_inst[fi], fn_inst[fi + 1]);
	 * off[u] is where unit u's code goes, off[n_units] the end */
	tj_expansion x;
	uint32_t *fn_unit, *fn_inst, *off, *tramp;
	unsigned *uses;
};

/* The shim is preserve_none (shim.c); C code here only needs its address. */
void tj_shim_call(void);

static const uint64_t ext_addr[TJ_EXT_COUNT] = {
#define X(name) (uint64_t)(uintptr_t)&name,
	TJ_STENCIL_EXTERNS(X)
#undef X
};

const tj_stencil_set *tj_jit_stencils(const tj_jit *j)
{
	return j->set;
}
uint32_t tj_jit_nfuncs(const tj_jit *j)
{
	return j->n_funcs;
}
const tj_jit_func *tj_jit_func_info(const tj_jit *j, uint32_t fn)
{
	return &j->funcs[fn];
}
size_t tj_jit_code_bytes(const tj_jit *j)
{
	return j->code_bytes;
}
size_t tj_jit_inlined(const tj_jit *j)
{
	return j->x.n_insts - j->n_funcs;
}

void tj_jit_free(tj_jit *j)
{
	if (!j)
		return;
	if (j->wmem && j->wmem != j->mem)
		munmap(j->wmem, j->mem_size);
	if (j->mem)
		munmap(j->mem, j->mem_size);
	free(j->funcs);
	free(j->entries);
	free(j->lines);
	free(j->cfi);
	free(j->inlines);
	tj_expansion_free(&j->x);
	free(j->fn_unit);
	free(j->fn_inst);
	free(j->off);
	free(j->tramp);
	free(j->uses);
	free(j);
}

void tj_jit_attach(tj_jit *j, tj_vm *vm)
{
	vm->jit = j;
	vm->entries = j->entries;
	vm->run = tj_jit_run;
}

tj_res tj_jit_run(tj_vm *vm, uint32_t fn, int64_t *locals)
{
	return tj_jit_enter(vm->entries[fn], locals, vm);
}

static size_t align_up(size_t x, size_t a)
{
	return (x + a - 1) & ~(a - 1);
}

static unsigned popcount(unsigned x)
{
	return (unsigned)__builtin_popcount(x);
}

/* An upper bound of the unwind tables libjitunwind's jitdump writes for a
 * function in either CFI mode: header, CIE and FDE (~100 bytes), plus each
 * stencil's instructions and the few bytes that reset the state between
 * stencils in exact mode. */
static size_t unwind_room(const tj_jit *j, uint32_t fi)
{
	size_t room = 128;
	for (uint32_t u = j->fn_unit[fi]; u < j->fn_unit[fi + 1]; u++)
		room += j->set->ops[j->x.units[u].op].cfi_len + 16;
	return room;
}

/* Where each unit's code goes (j->off), each function's trampolines
 * (j->tramp) and which externs they reach (j->uses).  Returns the bytes
 * needed. */
static size_t plan(tj_jit *j)
{
	size_t at = 0;
	for (uint32_t fi = 0; fi < j->n_funcs; fi++) {
		at = align_up(at, 16);
		j->uses[fi] = 0;
		for (uint32_t u = j->fn_unit[fi]; u < j->fn_unit[fi + 1]; u++) {
			const tj_stencil *s = &j->set->ops[j->x.units[u].op];
			j->off[u] = (uint32_t)at;
			at += s->size;
			j->uses[fi] |= s->uses_ext;
			if (at > UINT32_MAX)
				return at;
		}
		at = align_up(at, 8);
		j->tramp[fi] = (uint32_t)at;
		at += popcount(j->uses[fi]) * TJ_TRAMPOLINE_SIZE;
		at += unwind_room(j, fi);
		if (at > UINT32_MAX)
			return at;
	}
	j->off[j->x.n_units] = (uint32_t)at;
	return at;
}

/* jmp *0(%rip) -- FF /4 with a RIP-relative operand; the target; int3s */
static void trampoline_x86_64(uint8_t *at, uint64_t target)
{
	static const uint8_t jmp_rip[6] = { 0xff, 0x25, 0, 0, 0, 0 };
	memcpy(at, jmp_rip, sizeof jmp_rip);
	memcpy(at + 6, &target, 8);
	memset(at + 14, 0xcc, TJ_TRAMPOLINE_SIZE - 14);
}

/* ldr x16, #8 (LDR literal, 0x58000000 | imm19 2 << 5 | Rt 16); br x16;
 * the target */
static void trampoline_aarch64(uint8_t *at, uint64_t target)
{
	static const uint32_t insns[2] = { 0x58000050u, 0xd61f0200u };
	memcpy(at, insns, sizeof insns);
	memcpy(at + 8, &target, 8);
}

/* Write the trampolines at `at`, which runs at `run`. */
static void write_trampolines(const tj_stencil_set *set, uint8_t *at, const uint8_t *run, unsigned uses,
			      uint64_t *addr_of_ext)
{
	for (int e = 0; e < TJ_EXT_COUNT; e++) {
		if (!(uses & (1u << e)))
			continue;
		if (set->elf_machine == EM_AARCH64)
			trampoline_aarch64(at, ext_addr[e]);
		else
			trampoline_x86_64(at, ext_addr[e]);
		addr_of_ext[e] = (uint64_t)(uintptr_t)run;
		at += TJ_TRAMPOLINE_SIZE;
		run += TJ_TRAMPOLINE_SIZE;
	}
}

/* Where unit u's code runs. */
static uint64_t run_addr(const tj_jit *j, uint32_t u)
{
	return (uint64_t)(uintptr_t)(j->mem + j->off[u]);
}

/* An inlined callee's POP_FRAME: the caller's locals lie that many bytes
 * below the callee's (see stencils.c), and the caller goes on after the
 * call. */
static void pop_frame_values(const tj_jit *j, const tj_program *p, uint32_t inst, uint64_t v[TJ_HOLE_NVALUES])
{
	const tj_inst *in = &j->x.insts[inst];
	const tj_insn *call = &p->insns[in->call_insn];
	const tj_func *caller = &p->funcs[j->x.insts[in->parent].fn];
	v[TJ_HOLE_OPARG] =
		((uint64_t)caller->nslots + (uint64_t)call->depth + 1 - (uint64_t)call->b) * sizeof(int64_t);
	v[TJ_HOLE_TARGET] = run_addr(j, tj_unit_of(&j->x, p, in->parent, in->call_insn + 1));
}

/* The values of unit u's holes (see stencils/stencils.c). */
static void hole_values(const tj_jit *j, const tj_program *p, uint32_t u, uint64_t v[TJ_HOLE_NVALUES])
{
	const tj_unit *un = &j->x.units[u];
	const tj_insn *in = &p->insns[un->insn];
	const tj_func *f;
	v[TJ_HOLE_INSN] = un->insn;
	v[TJ_HOLE_CONTINUE] = run_addr(j, u + 1);
	switch (un->op) {
	case TJ_OP_PUSH: v[TJ_HOLE_OPERAND] = (uint64_t)in->a; break;
	case TJ_OP_LOAD:
	case TJ_OP_STORE: v[TJ_HOLE_OPARG] = (uint64_t)in->a * sizeof(int64_t); break;
	case TJ_OP_FN: v[TJ_HOLE_OPARG] = (uint64_t)in->a; break;
	case TJ_OP_JMP:
	case TJ_OP_JZ:
	case TJ_OP_JNZ:
		v[TJ_HOLE_TARGET] = run_addr(j, tj_unit_of(&j->x, p, un->inst, (uint32_t)in->a));
		break;
	case TJ_OP_CALL:
		v[TJ_HOLE_OPARG] = (uint64_t)in->b * sizeof(int64_t);
		v[TJ_HOLE_OPARG2] = (uint64_t)in->a * sizeof(void *);
		break;
	case TJ_OP_HOST:
		v[TJ_HOLE_OPARG] = (uint64_t)in->b * sizeof(int64_t);
		v[TJ_HOLE_OPARG2] = (uint64_t)in->a;
		break;
	case TJ_OP_ENTER:
		f = &p->funcs[in->a];
		v[TJ_HOLE_OPERAND] = (uint64_t)TJ_FRAME_SLOTS(f->nslots, f->max_stack);
		v[TJ_HOLE_OPARG] = f->nargs;
		v[TJ_HOLE_OPARG2] = f->nslots;
		break;
	case TJ_OP_PUSH_FRAME: v[TJ_HOLE_OPARG] = (uint64_t)in->b * sizeof(int64_t); break;
	case TJ_OP_POP_FRAME: pop_frame_values(j, p, un->inst, v); break;
	}
}

/* Copy and patch unit u into the RW view; its addresses are the RX
 * view's. */
static int emit_unit(const tj_jit *j, const tj_program *p, uint32_t u, const uint64_t *ext, char *err,
		     size_t errlen)
{
	const tj_stencil *s = &j->set->ops[j->x.units[u].op];
	uint8_t *dst = j->wmem + j->off[u];
	memcpy(dst, s->code, s->size);
	uint64_t v[TJ_HOLE_NVALUES] = { 0 };
	hole_values(j, p, u, v);
	for (unsigned h = 0; h < s->n_holes; h++) {
		const tj_hole *hole = &s->holes[h];
		uint64_t sym = hole->value == TJ_HOLE_EXTERN ? ext[hole->ext] : v[hole->value];
		uint64_t where = run_addr(j, u) + hole->offset;
		int rc = tj_patch(hole->reloc, dst + hole->offset, where, sym + (uint64_t)hole->addend);
		if (rc) {
			const tj_insn *in = &p->insns[j->x.units[u].insn];
			snprintf(
				err, errlen,
				"%s:%u:%u: cannot patch %s (hole at +0x%x): the value does not fit the field",
				p->file, in->line, in->col, tj_opinfo_table[j->x.units[u].op].name,
				hole->offset);
			return -1;
		}
	}
	return 0;
}

/* Function fi's inlined calls, in pre-order: each instance's code range,
 * and its parent as ju_inline counts (0: the blob's own function). */
static void describe_inlines(tj_jit *j, const tj_program *p, uint32_t fi, uint32_t base, size_t *ni)
{
	tj_jit_func *jf = &j->funcs[fi];
	uint32_t root = j->fn_inst[fi];
	jf->inlines = j->inlines + *ni;
	for (uint32_t k = root + 1; k < j->fn_inst[fi + 1]; k++) {
		const tj_inst *in = &j->x.insts[k];
		j->inlines[(*ni)++] = (tj_jit_inline){
			.start = j->off[in->first] - base,
			.end = j->off[in->end] - base,
			.parent = in->parent - root,
			.fn = in->fn,
			.call_line = p->insns[in->call_insn].line,
		};
	}
	jf->n_inlines = (size_t)(j->inlines + *ni - jf->inlines);
}

/* Line table, CFI ranges and inlines of function fi; rows, ranges and
 * inlines are appended at *nl, *nc and *ni.  A unit's line is its
 * instruction's, so inside inlined code the rows give the callee's lines. */
static void describe(tj_jit *j, const tj_program *p, uint32_t fi, size_t *nl, size_t *nc, size_t *ni)
{
	uint32_t base = j->off[j->fn_unit[fi]];
	tj_jit_func *jf = &j->funcs[fi];
	jf->code = j->mem + base;
	jf->size = j->tramp[fi] + popcount(j->uses[fi]) * TJ_TRAMPOLINE_SIZE - base;
	jf->lines = j->lines + *nl;
	jf->cfi = j->cfi + *nc;
	for (uint32_t u = j->fn_unit[fi]; u < j->fn_unit[fi + 1]; u++) {
		const tj_stencil *s = &j->set->ops[j->x.units[u].op];
		uint32_t start = j->off[u] - base, line = p->insns[j->x.units[u].insn].line;
		if (!s->size)
			continue;
		size_t n = (size_t)(j->lines + *nl - jf->lines);
		if (!n || jf->lines[n - 1].line != line)
			j->lines[(*nl)++] = (tj_line){ start, line };
		j->cfi[(*nc)++] = (tj_cfi_range){ start, start + s->size, s->cfi, s->cfi_len };
	}
	if (j->uses[fi])
		/* trampolines only jump: the function-entry rule, no instructions */
		j->cfi[(*nc)++] = (tj_cfi_range){ j->tramp[fi] - base, jf->size, NULL, 0 };
	jf->n_lines = (size_t)(j->lines + *nl - jf->lines);
	jf->n_cfi = (size_t)(j->cfi + *nc - jf->cfi);
	describe_inlines(j, p, fi, base, ni);
}

/* The RW view (j->wmem) and the RX one (j->mem, still RW in TJ_WX_FLIP). */
static int map_code(tj_jit *j, enum tj_wx wx, char *err, size_t errlen)
{
	size_t n = j->mem_size;
	void *w = MAP_FAILED, *x = MAP_FAILED;
	const char *how = "mmap";
	if (wx == TJ_WX_FLIP) {
		w = x = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	} else if (wx == TJ_WX_DUAL) {
		int fd = memfd_create("tinyjit-code", MFD_CLOEXEC);
		if (fd >= 0 && ftruncate(fd, (off_t)n) == 0) {
			w = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			x = mmap(NULL, n, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
		}
		if (fd >= 0)
			close(fd);
	} else {
		w = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		/* old size 0: a second mapping of the same shared pages (which
		 * valgrind and qemu-user refuse) */
		how = w == MAP_FAILED ? "mmap" : "mremap for a second view";
		x = w == MAP_FAILED ? MAP_FAILED : mremap(w, 0, n, MREMAP_MAYMOVE);
		if (x != MAP_FAILED && mprotect(x, n, PROT_READ | PROT_EXEC) != 0) {
			munmap(x, n);
			x = MAP_FAILED;
		}
	}
	if (w == MAP_FAILED || x == MAP_FAILED) {
		int e = errno;
		if (w != MAP_FAILED)
			munmap(w, n);
		if (x != MAP_FAILED && x != w)
			munmap(x, n);
		snprintf(err, errlen, "mapping %zu bytes for JIT code failed: %s: %s", n, how, strerror(e));
		return -1;
	}
	j->wmem = w;
	j->mem = x;
	return 0;
}

/* The code is written: make it executable, and writable nowhere. */
static int seal_code(tj_jit *j, char *err, size_t errlen)
{
	__builtin___clear_cache((char *)j->mem, (char *)j->mem + j->code_bytes);
	if (j->wmem != j->mem) {
		munmap(j->wmem, j->mem_size);
		j->wmem = j->mem;
		return 0;
	}
	if (mprotect(j->mem, j->mem_size, PROT_READ | PROT_EXEC) != 0) {
		snprintf(err, errlen, "mprotect of JIT code to read+execute failed");
		return -1;
	}
	return 0;
}

/* Expand every function (inline.h) and plan the layout. */
static int expand_all(tj_jit *j, const tj_program *p, const tj_inline_policy *inl)
{
	j->fn_unit = malloc(((size_t)p->n_funcs + 1) * sizeof *j->fn_unit);
	j->fn_inst = malloc(((size_t)p->n_funcs + 1) * sizeof *j->fn_inst);
	j->tramp = malloc(((size_t)p->n_funcs + 1) * sizeof *j->tramp);
	j->uses = malloc(((size_t)p->n_funcs + 1) * sizeof *j->uses);
	if (!j->fn_unit || !j->fn_inst || !j->tramp || !j->uses ||
	    tj_expansion_reserve(&j->x, p->n_insns, p->n_funcs))
		return -1;
	for (uint32_t fi = 0; fi < p->n_funcs; fi++) {
		j->fn_unit[fi] = (uint32_t)j->x.n_units;
		j->fn_inst[fi] = (uint32_t)j->x.n_insts;
		if (tj_expand(&j->x, p, fi, inl))
			return -1;
	}
	j->fn_unit[p->n_funcs] = (uint32_t)j->x.n_units;
	j->fn_inst[p->n_funcs] = (uint32_t)j->x.n_insts;
	j->off = malloc((j->x.n_units + 1) * sizeof *j->off);
	return j->off ? 0 : -1;
}

int tj_jit_compile(const tj_program *p, enum tj_frames frames, enum tj_wx wx, const tj_inline_policy *inl,
		   tj_jit **out, char *err, size_t errlen)
{
	tj_jit *j = calloc(1, sizeof *j);
	int rc = -1;
	if (!j)
		goto oom;
	j->set = frames == TJ_FRAMES_NOFP ? &tj_stencils_nofp : &tj_stencils_fp;
	j->n_funcs = p->n_funcs;
	if (expand_all(j, p, inl))
		goto oom;
	size_t total = plan(j);
	if (total > UINT32_MAX) {
		snprintf(err, errlen, "%s: program too large for the JIT (%zu bytes of code)", p->file,
			 total);
		goto out;
	}
	j->code_bytes = total;
	j->mem_size = align_up(total ? total : 1, (size_t)sysconf(_SC_PAGESIZE));
	if (map_code(j, wx, err, errlen))
		goto out;
	size_t nu = j->x.n_units, ni = j->x.n_insts;
	j->funcs = calloc(p->n_funcs ? p->n_funcs : 1, sizeof *j->funcs);
	j->entries = calloc(p->n_funcs ? p->n_funcs : 1, sizeof *j->entries);
	j->lines = malloc((nu + 1) * sizeof *j->lines);
	j->cfi = malloc((nu + p->n_funcs + 1) * sizeof *j->cfi);
	j->inlines = malloc((ni + 1) * sizeof *j->inlines);
	if (!j->funcs || !j->entries || !j->lines || !j->cfi || !j->inlines)
		goto oom;

	size_t nl = 0, nc = 0, nin = 0;
	for (uint32_t fi = 0; fi < p->n_funcs; fi++) {
		uint64_t ext[TJ_EXT_COUNT] = { 0 };
		write_trampolines(j->set, j->wmem + j->tramp[fi], j->mem + j->tramp[fi], j->uses[fi], ext);
		for (uint32_t u = j->fn_unit[fi]; u < j->fn_unit[fi + 1]; u++)
			if (emit_unit(j, p, u, ext, err, errlen))
				goto out;
		j->entries[fi] = j->mem + j->off[j->fn_unit[fi]];
		describe(j, p, fi, &nl, &nc, &nin);
	}
	if (seal_code(j, err, errlen))
		goto out;
	*out = j;
	j = NULL;
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory while compiling %s", p->file);
out:
	tj_jit_free(j);
	return rc;
}
