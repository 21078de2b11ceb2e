/* SPDX-License-Identifier: MIT */
/* child.c - the workload of the library's tests: a known stack through
 * hand-written JIT code (x86-64, or AArch64 when cross-built), checked from
 * inside or left for outside tools.
 *
 *   main -> run_stack -> c_outer -> jit:fp -> c_middle -> jit:cfi -> c_mid2 -> shim_region
 *        -> jit:region -> c_inner -> (ACTION)
 *
 * jit:fp     builds a standard frame-pointer frame      (JU_FRAME_FP)
 * jit:cfi    moves the stack pointer and never touches the frame pointer
 *            (JU_FRAME_CFI)
 * jit:region runs under shim_region's frame, as CPython's JIT code runs
 *            under its shim: the shim's frame *is* the JIT frame, so the
 *            shim itself is not expected on the stack    (JU_FRAME_REGION)
 * With --depth N the chain from c_outer to c_inner repeats N times.
 *
 * The expected frames are derived here from the chain above and the blobs'
 * real addresses (C functions' extents come from the dynamic symbol table),
 * never from a tool's output.  An unwinder that walks frame pointers only
 * cannot see c_middle (its caller jit:cfi keeps no frame record, so the
 * frame-pointer chain skips from c_mid2's record to jit:fp's); "fp" lines
 * mark what such an unwinder must still show.
 *
 * Actions (argv[1]):
 *   backtrace   glibc backtrace()               (in-process, checks itself)
 *   unwind      _Unwind_Backtrace of whichever unwinder the binary linked
 *   unw         nongnu libunwind unw_backtrace  (child-nongnu only)
 *   unwstep     nongnu libunwind unw_step loop  (child-nongnu only)
 *   throw       a C++ exception from the innermost frame, caught in main
 *   wait        write the expect file, print "ready PID", sleep until killed
 *   abort       write the expect file, then abort() (for a core dump)
 *   trap        write the expect file, then trap in c_inner itself (a core
 *               whose innermost frame is ours, not the C library's)
 *   spin SECS   write the expect file, busy-loop in c_inner (for perf)
 *   crash       fault in c_inner; a SIGSEGV handler (on its own stack, as
 *               crash reporters install one) unwinds with _Unwind_Backtrace
 *               through the signal frame and checks the stack
 *   malloc      malloc and free one block in c_inner (allocation profilers)
 *   uaf         a heap use-after-free in c_inner (child-asan only)
 *   libbacktrace  libbacktrace's backtrace_full (child-libbacktrace only)
 * Options: --depth N, --expect FILE (default child.expect), --spaced (blobs
 * 1 KiB apart at unaligned offsets instead of 64 bytes apart), --apart
 * (jit:fp in a page of its own below the C library's mappings, jit:cfi and
 * jit:region in one above them, published in one batch: JIT code in two
 * mmaps with a shared library between them).
 * Channels: ju_open(NULL), the library's default (the in-memory channels, no
 * file); JITUNWIND chooses others: the perf tests set JITUNWIND=perf for the
 * perf map and the jitdump.
 * Exit: 0 when an in-process check passes, 1 when it fails, 2 on usage or
 * setup errors.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "jitunwind.h"
#include "unwind_pcs.h"

#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>

#ifdef CHILD_NONGNU
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif
#ifdef CHILD_LIBBACKTRACE
#include <backtrace.h>
#endif

#define NOINLINE __attribute__((noinline, used))
#define BARRIER() __asm__ volatile("" ::: "memory")

/* ---- the C side of the stack ----------------------------------------------- */

static const char *action;
static int depth = 1;
static double spin_secs = 2;
static const char *expect_path = "child.expect";
static void (*jit_fp)(void), (*jit_cfi)(void), (*jit_region)(void);
static int run_action(void);
/* A static link has no dynamic symbol table to take the C functions' extents
 * from: each goes into a section of its own, which the linker brackets with
 * __start_ and __stop_ symbols. */
#ifdef CHILD_STATIC
#define CFRAME(n) __attribute__((section("cf_" #n)))
#define CFRAME_BOUNDS(n) extern char __start_cf_##n[], __stop_cf_##n[];
#else
#define CFRAME(n)
#define CFRAME_BOUNDS(n)
#endif
CFRAME_BOUNDS(c_inner)
CFRAME_BOUNDS(c_mid2)
CFRAME_BOUNDS(c_middle)
CFRAME_BOUNDS(c_outer)
CFRAME_BOUNDS(run_stack)
CFRAME_BOUNDS(main)
NOINLINE CFRAME(run_stack) void run_stack(void);
static volatile int result = 2;

NOINLINE CFRAME(c_inner) void c_inner(void);
NOINLINE CFRAME(c_mid2) void c_mid2(void);
NOINLINE CFRAME(c_middle) void c_middle(void);
NOINLINE CFRAME(c_outer) void c_outer(void);
NOINLINE void shim_region(void (*blob)(void));

#ifdef CHILD_CXX
extern void cxx_throw(void);
extern int cxx_catch(void (*fn)(void));
#endif

static int levels_left;

NOINLINE void c_inner(void)
{
	if (--levels_left > 0)
		c_outer();
	else
		result = run_action();
	BARRIER();
}

/* The shim sets the frame pointer for code that never writes it. */
NOINLINE void shim_region(void (*blob)(void))
{
	blob();
	BARRIER();
}

NOINLINE void c_mid2(void)
{
	shim_region(jit_region);
	BARRIER();
}

NOINLINE void c_middle(void)
{
	jit_cfi();
	BARRIER();
}

NOINLINE void c_outer(void)
{
	jit_fp();
	BARRIER();
}

/* ---- the JIT side ---------------------------------------------------------- */

static uint8_t *code;
static uint8_t *code_apart; /* --apart: the page above the C library */
static int apart;
static const size_t code_size = 4096;
/* Where the blobs go: packed 64 bytes apart, or (--spaced) at odd offsets
 * with a kilobyte after each, room for perf inject to map each blob's
 * unwind tables (see t-perf-inject-jit-unwinds-through-jit-frames.sh). */
static size_t AT_FP = 0x00, AT_CFI = 0x40, AT_REGION = 0x80;

#if defined(__aarch64__)
/* AArch64 encodings, one 32-bit word each, spelled out so the offsets in the
 * frame descriptions can be read off them. */
static size_t put(uint8_t *p, uint32_t insn)
{
	memcpy(p, &insn, 4);
	return 4;
}

/* movz/movk x16, #target (four halves); blr x16 */
static size_t emit_call_abs(uint8_t *p, void *target)
{
	uint64_t t = (uintptr_t)target;
	size_t n = 0;
	for (uint32_t hw = 0; hw < 4; hw++) {
		uint32_t half = (uint32_t)(t >> (16 * hw)) & 0xffff;
		n += put(p + n, (hw ? 0xf2800010u : 0xd2800010u) | hw << 21 | half << 5);
	}
	n += put(p + n, 0xd63f0200u); /* blr x16 */
	return n;
}

/* jit:fp: stp x29, x30, [sp, #-16]!; mov x29, sp; call c_middle;
 * ldp x29, x30, [sp], #16; ret */
static size_t emit_fp(uint8_t *p, ju_range *epilogue)
{
	size_t n = 0;
	n += put(p + n, 0xa9bf7bfdu); /* stp x29, x30, [sp, #-16]! -> 4 */
	n += put(p + n, 0x910003fdu); /* mov x29, sp               -> 8 */
	n += emit_call_abs(p + n, (void *)c_middle);
	n += put(p + n, 0xa8c17bfdu); /* ldp x29, x30, [sp], #16 */
	epilogue->start = (uint32_t)n;
	n += put(p + n, 0xd65f03c0u); /* ret */
	epilogue->end = (uint32_t)n;
	return n;
}

/* jit:cfi: sub sp, sp, #32; str x30, [sp, #16]; call c_mid2;
 * ldr x30, [sp, #16]; add sp, sp, #32; ret -- x29 never touched */
static size_t emit_cfi(uint8_t *p, uint8_t *insns, size_t *n_insns)
{
	size_t n = 0;
	n += put(p + n, 0xd10083ffu); /* sub sp, sp, #32 */
	size_t after_sub = n;
	n += put(p + n, 0xf9000bfeu); /* str x30, [sp, #16] */
	size_t after_str = n;
	n += emit_call_abs(p + n, (void *)c_mid2);
	n += put(p + n, 0xf9400bfeu); /* ldr x30, [sp, #16] */
	size_t after_ldr = n;
	n += put(p + n, 0x910083ffu); /* add sp, sp, #32 */
	size_t after_add = n;
	n += put(p + n, 0xd65f03c0u); /* ret */
	/* DWARF, advances in units of 4 bytes (the CIE's code alignment):
	 * CFA = sp+32 after the sub; x30 saved at CFA-16 after the str (data
	 * alignment -8: factored 2); x30 live again after the ldr; CFA = sp
	 * after the add. */
	size_t k = 0;
	insns[k++] = 0x40 | (uint8_t)(after_sub / 4); /* DW_CFA_advance_loc */
	insns[k++] = 0x0e, insns[k++] = 32;           /* DW_CFA_def_cfa_offset 32 */
	insns[k++] = 0x40 | (uint8_t)((after_str - after_sub) / 4);
	insns[k++] = 0x80 | 30, insns[k++] = 2; /* DW_CFA_offset x30, CFA-16 */
	insns[k++] = 0x40 | (uint8_t)((after_ldr - after_str) / 4);
	insns[k++] = 0x08, insns[k++] = 30; /* DW_CFA_same_value x30 */
	insns[k++] = 0x40 | (uint8_t)((after_add - after_ldr) / 4);
	insns[k++] = 0x0e, insns[k++] = 0; /* DW_CFA_def_cfa_offset 0 */
	*n_insns = k;
	return n;
}

/* jit:region: str x30, [sp, #-16]!; call c_inner; ldr x30, [sp], #16; ret
 * -- under the shim's frame; the region rule describes that frame. */
static size_t emit_region(uint8_t *p)
{
	size_t n = 0;
	n += put(p + n, 0xf81f0ffeu); /* str x30, [sp, #-16]! */
	n += emit_call_abs(p + n, (void *)c_inner);
	n += put(p + n, 0xf84107feu); /* ldr x30, [sp], #16 */
	n += put(p + n, 0xd65f03c0u); /* ret */
	return n;
}

/* Frame-pointer frame: the save ends at 4, x29 is set at 8. */
#define FP_PUSH_END 4
#define FP_SET_END 8
#define FILL_BYTE 0x00 /* udf #0 between blobs */
#define SPACED_AT 0x04, 0x404, 0x80c
#define FP_LINES { { 0, 10 }, { 8, 11 }, { 28, 12 } }
#elif defined(__x86_64__)
/* x86-64 encodings, spelled out so the offsets in the frame descriptions can
 * be read off them. */
static size_t emit_call_abs(uint8_t *p, void *target)
{
	uint64_t t = (uintptr_t)target;
	p[0] = 0x48, p[1] = 0xb8; /* movabs $target, %rax */
	memcpy(p + 2, &t, 8);
	p[10] = 0xff, p[11] = 0xd0; /* call *%rax */
	return 12;
}

/* jit:fp: push %rbp; mov %rsp,%rbp; call c_middle; pop %rbp; ret */
static size_t emit_fp(uint8_t *p, ju_range *epilogue)
{
	size_t n = 0;
	p[n++] = 0x55;                               /* push %rbp          -> 1 */
	p[n++] = 0x48, p[n++] = 0x89, p[n++] = 0xe5; /* mov %rsp,%rbp -> 4 */
	n += emit_call_abs(p + n, (void *)c_middle);
	p[n++] = 0x5d; /* pop %rbp */
	epilogue->start = (uint32_t)n;
	p[n++] = 0xc3; /* ret */
	epilogue->end = (uint32_t)n;
	return n;
}

/* jit:cfi: sub $24,%rsp; call c_mid2; add $24,%rsp; ret */
static size_t emit_cfi(uint8_t *p, uint8_t *insns, size_t *n_insns)
{
	size_t n = 0;
	p[n++] = 0x48, p[n++] = 0x83, p[n++] = 0xec, p[n++] = 24; /* sub $24,%rsp */
	size_t after_sub = n;
	n += emit_call_abs(p + n, (void *)c_mid2);
	p[n++] = 0x48, p[n++] = 0x83, p[n++] = 0xc4, p[n++] = 24; /* add $24,%rsp */
	size_t after_add = n;
	p[n++] = 0xc3;
	/* DWARF: from after the sub the CFA is rsp+32, after the add rsp+8. */
	size_t k = 0;
	insns[k++] = 0x40 | (uint8_t)after_sub;               /* DW_CFA_advance_loc */
	insns[k++] = 0x0e, insns[k++] = 32;                   /* DW_CFA_def_cfa_offset 32 */
	insns[k++] = 0x40 | (uint8_t)(after_add - after_sub); /* DW_CFA_advance_loc */
	insns[k++] = 0x0e, insns[k++] = 8;                    /* DW_CFA_def_cfa_offset 8 */
	*n_insns = k;
	return n;
}

/* jit:region: sub $8,%rsp; call c_inner; add $8,%rsp; ret -- under the
 * shim's frame; the region rule describes that frame. */
static size_t emit_region(uint8_t *p)
{
	size_t n = 0;
	p[n++] = 0x48, p[n++] = 0x83, p[n++] = 0xec, p[n++] = 8;
	n += emit_call_abs(p + n, (void *)c_inner);
	p[n++] = 0x48, p[n++] = 0x83, p[n++] = 0xc4, p[n++] = 8;
	p[n++] = 0xc3;
	return n;
}

/* Frame-pointer frame: push %rbp ends at 1, mov %rsp,%rbp at 4. */
#define FP_PUSH_END 1
#define FP_SET_END 4
#define FILL_BYTE 0xcc /* int3 between blobs */
#define SPACED_AT 0x03, 0x405, 0x80b
#define FP_LINES { { 0, 10 }, { 4, 11 }, { 16, 12 } }
#else
#error "child.c: no JIT encodings for this architecture"
#endif

typedef struct frame_def {
	const char *name;
	uintptr_t lo, hi;
	const char *kind; /* c, fp, cfi, region */
	int fp_visible;   /* a frame-pointer walk shows it */
} frame_def;

static frame_def blob_defs[3];
/* jit:fp's line table, published with it (offset in the blob -> line). */
static const char fp_file[] = "child.jit";
static const ju_line fp_lines[] = FP_LINES;
static ju_ctx *ctx;

/* A page of code at exactly `at`, or NULL when something is there. */
static uint8_t *map_at(uintptr_t at)
{
	void *p = mmap((void *)at, code_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (p != (void *)at) { /* a kernel without MAP_FIXED_NOREPLACE takes it as a hint */
		munmap(p, code_size);
		return NULL;
	}
	return p;
}

/* --apart: the free page right below the run of mappings that holds the C
 * library, and the one right above it, from /proc/self/maps. */
static int map_apart(void)
{
	uintptr_t in_libc = (uintptr_t)(void *)&fclose, lo = 0, hi = 0, prev_hi = 0;
	int found = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		uintptr_t a, b;
		if (sscanf(line, "%lx-%lx", &a, &b) != 2)
			continue;
		if (!found) {
			if (a != prev_hi) /* a gap: the run starts here */
				lo = a;
			if (a <= in_libc && in_libc < b)
				found = 1;
		} else if (a != prev_hi) { /* the run ends at prev_hi */
			break;
		}
		prev_hi = b;
	}
	fclose(f);
	hi = prev_hi;
	if (!found || !lo || hi - lo > (1u << 28))
		return -1;
	code = map_at(lo - code_size);
	code_apart = map_at(hi);
	return code && code_apart ? 0 : -1;
}

static int make_jit(void)
{
	if (apart) {
		if (map_apart()) {
			fprintf(stderr, "child: --apart: no free page on both sides of the C library\n");
			return -1;
		}
	} else {
		code = mmap(NULL, code_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (code == MAP_FAILED)
			return -1;
	}
	uint8_t *code2 = apart ? code_apart : code; /* jit:cfi's and jit:region's page */
	memset(code, FILL_BYTE, code_size);
	memset(code2, FILL_BYTE, code_size);
	static ju_range epi;
	static uint8_t insns[16];
	static ju_cfi_range cr;
	size_t n_insns;
	size_t fp_size = emit_fp(code + AT_FP, &epi);
	size_t cfi_size = emit_cfi(code2 + AT_CFI, insns, &n_insns);
	size_t region_size = emit_region(code2 + AT_REGION);
	__builtin___clear_cache((char *)code, (char *)code + code_size);
	__builtin___clear_cache((char *)code2, (char *)code2 + code_size);
	if (mprotect(code, code_size, PROT_READ | PROT_EXEC) ||
	    mprotect(code2, code_size, PROT_READ | PROT_EXEC))
		return -1;
	jit_fp = (void (*)(void))(void *)(code + AT_FP);
	jit_cfi = (void (*)(void))(void *)(code2 + AT_CFI);
	jit_region = (void (*)(void))(void *)(code2 + AT_REGION);

	cr = (ju_cfi_range){ 0, (uint32_t)cfi_size, insns, n_insns };
	ju_blob b[3] = {
		{ .sz = sizeof(ju_blob),
		  .start = code + AT_FP,
		  .size = fp_size,
		  .name = "jit:fp",
		  .frame = { .kind = JU_FRAME_FP, .u.fp = { FP_PUSH_END, FP_SET_END, &epi, 1 } },
		  .file = fp_file,
		  .lines = fp_lines,
		  .n_lines = 3 },
		{ .sz = sizeof(ju_blob),
		  .start = code2 + AT_CFI,
		  .size = cfi_size,
		  .name = "jit:cfi",
		  .frame = { .kind = JU_FRAME_CFI, .u.cfi = { &cr, 1 } } },
		{ .sz = sizeof(ju_blob),
		  .start = code2 + AT_REGION,
		  .size = region_size,
		  .name = "jit:region",
		  .frame = { .kind = JU_FRAME_REGION, .u.region = { 16, -16, -8 } } },
	};
	blob_defs[0] =
		(frame_def){ "jit:fp", (uintptr_t)b[0].start, (uintptr_t)b[0].start + fp_size, "fp", 1 };
	blob_defs[1] =
		(frame_def){ "jit:cfi", (uintptr_t)b[1].start, (uintptr_t)b[1].start + cfi_size, "cfi", 1 };
	blob_defs[2] = (frame_def){ "jit:region", (uintptr_t)b[2].start, (uintptr_t)b[2].start + region_size,
				    "region", 1 };

	int err = ju_open(NULL, &ctx); /* the default channels, or $JITUNWIND's */
	if (err) {
		fprintf(stderr, "child: ju_open: %s: %s\n", ju_strerror(err), ju_errmsg());
		return -1;
	}
	err = ju_publish_batch(ctx, b, 3);
	if (err) {
		fprintf(stderr, "child: ju_publish_batch: %s: %s\n", ju_strerror(err), ju_errmsg());
		return -1;
	}
	return 0;
}

/* ---- expected frames ------------------------------------------------------- */

static frame_def expected[64];
static size_t n_expected;

#ifndef CHILD_STATIC
static frame_def c_frame(const char *name, void *fn)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	frame_def f = { name, (uintptr_t)fn, (uintptr_t)fn + 1, "c", 1 };
	if (dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size)
		f.hi = f.lo + sym->st_size;
	return f;
}
#endif

extern CFRAME(main) int main(int, char **);

#ifdef CHILD_STATIC
#define C_FRAME(n) ((frame_def){ #n, (uintptr_t)__start_cf_##n, (uintptr_t)__stop_cf_##n, "c", 1 })
#else
#define C_FRAME(n) c_frame(#n, (void *)n)
#endif

static void build_expected(void)
{
	n_expected = 0;
	for (int d = 0; d < depth; d++) {
		expected[n_expected++] = C_FRAME(c_inner);
		expected[n_expected++] = blob_defs[2]; /* jit:region */
		expected[n_expected++] = C_FRAME(c_mid2);
		expected[n_expected++] = blob_defs[1]; /* jit:cfi */
		frame_def mid = C_FRAME(c_middle);
		mid.fp_visible = 0; /* its caller jit:cfi keeps no frame pointer */
		expected[n_expected++] = mid;
		expected[n_expected++] = blob_defs[0]; /* jit:fp */
		expected[n_expected++] = C_FRAME(c_outer);
	}
	expected[n_expected++] = C_FRAME(run_stack);
	expected[n_expected++] = C_FRAME(main);
}

static int write_expect(void)
{
	FILE *f = fopen(expect_path, "w");
	if (!f)
		return -1;
	for (size_t i = 0; i < n_expected; i++)
		fprintf(f, "%s %#lx %#lx %s %s\n", expected[i].name, (unsigned long)expected[i].lo,
			(unsigned long)expected[i].hi, expected[i].kind, expected[i].fp_visible ? "fp" : "-");
	if (fclose(f))
		return -1;
	/* and beside it, EXPECT.lines: "jit:fp FILE OFFSET LINE" per row of the
	 * line table the child publishes, for the debuggers' line checks */
	char path[4096];
	if (snprintf(path, sizeof path, "%s.lines", expect_path) >= (int)sizeof path)
		return -1;
	f = fopen(path, "w");
	if (!f)
		return -1;
	for (size_t i = 0; i < sizeof fp_lines / sizeof fp_lines[0]; i++)
		fprintf(f, "jit:fp %s %u %u\n", fp_file, (unsigned)fp_lines[i].offset,
			(unsigned)fp_lines[i].line);
	return fclose(f);
}

static const char *name_of(uintptr_t pc)
{
	for (size_t i = 0; i < n_expected; i++)
		if (pc >= expected[i].lo && pc < expected[i].hi)
			return expected[i].name;
	return NULL;
}

/* Compare the return addresses an unwinder reported (innermost first) with
 * the expected frames: from the first frame in c_inner on, they must match
 * one for one down to main. */
static int judge(const char *who, void *const *pcs, int n)
{
	printf("%s:", who);
	int first = -1;
	for (int i = 0; i < n; i++) {
		/* Return addresses point after the call; look up the call itself. */
		uintptr_t pc = (uintptr_t)pcs[i] - (i ? 1 : 0);
		const char *name = name_of(pc);
		printf(" %s", name ? name : "?");
		if (first < 0 && name && !strcmp(name, "c_inner"))
			first = i;
	}
	printf("\nexpected:");
	for (size_t i = 0; i < n_expected; i++)
		printf(" %s", expected[i].name);
	printf("\n");
	int ok = first >= 0 && (size_t)(n - first) >= n_expected;
	for (size_t i = 0; ok && i < n_expected; i++) {
		uintptr_t pc = (uintptr_t)pcs[first + i] - (first + i ? 1 : 0);
		ok = pc >= expected[i].lo && pc < expected[i].hi;
	}
	printf("result: %s\n", ok ? "PASS" : "FAIL");
	fflush(stdout);
	return ok ? 0 : 1;
}

/* ---- actions ---------------------------------------------------------------- */

static NOINLINE int do_unwind(void)
{
	void *pcs[128];
	struct ub_state s = { pcs, 0, 128 };
	_Unwind_Backtrace(ub_step, &s);
	return judge("_Unwind_Backtrace", pcs, s.n);
}

static NOINLINE int do_backtrace(void)
{
	void *pcs[128];
	int n = backtrace(pcs, 128);
	return judge("backtrace", pcs, n);
}

#ifdef CHILD_NONGNU
static NOINLINE int do_unw_backtrace(void)
{
	void *pcs[128];
	int n = unw_backtrace(pcs, 128);
	return judge("unw_backtrace", pcs, n);
}

static NOINLINE int do_unw_step(void)
{
	void *pcs[128];
	int n = 0;
	unw_context_t uc;
	unw_cursor_t cur;
	unw_getcontext(&uc);
	if (unw_init_local(&cur, &uc) < 0)
		return 2;
	do {
		unw_word_t ip;
		unw_get_reg(&cur, UNW_REG_IP, &ip);
		pcs[n++] = (void *)ip;
	} while (n < 128 && unw_step(&cur) > 0);
	return judge("unw_step", pcs, n);
}
#endif

/* A crash reporter: the handler runs on an alternate stack and unwinds from
 * there through the kernel's signal frame into c_inner, which faulted.
 * (judge() uses stdio, which a real handler must not; the fault here is
 * synchronous, in code that holds no stdio lock.) */
static char crash_stack[64 * 1024];
static int *volatile crash_ptr; /* null, unseen by the compiler */

static void crash_handler(int sig)
{
	(void)sig;
	void *pcs[128];
	struct ub_state s = { pcs, 0, 128 };
	_Unwind_Backtrace(ub_step, &s);
	_exit(judge("crash", pcs, s.n));
}

static NOINLINE int do_crash(void)
{
	stack_t ss = { .ss_sp = crash_stack, .ss_size = sizeof crash_stack };
	struct sigaction sa = { .sa_handler = crash_handler, .sa_flags = SA_ONSTACK | SA_RESETHAND };
	sigemptyset(&sa.sa_mask);
	if (sigaltstack(&ss, NULL) || sigaction(SIGSEGV, &sa, NULL))
		return 2;
	*crash_ptr = 1;
	BARRIER();
	return 2; /* not reached: the handler exits */
}

/* Volatile: neither the malloc/free pair nor the use after free may be
 * seen (and removed, or warned of) by the compiler. */
static char *volatile heap_block;

static NOINLINE int do_malloc(void)
{
	heap_block = malloc(123457);
	if (!heap_block)
		return 2;
	heap_block[0] = 1;
	free(heap_block);
	BARRIER();
	return 0;
}

#ifdef CHILD_ASAN
static NOINLINE int do_uaf(void)
{
	heap_block = malloc(48);
	if (heap_block)
		heap_block[0] = 1;
	free(heap_block);
	int v = heap_block[7]; /* AddressSanitizer reports here and exits */
	BARRIER();
	return v < 0 ? 2 : 1; /* reached only if nothing noticed */
}
#endif

#ifdef CHILD_LIBBACKTRACE
struct lbt_state {
	void **pcs;
	int n, max;
};

static void lbt_error(void *data, const char *msg, int errnum)
{
	(void)data;
	fprintf(stderr, "child: libbacktrace: %s (%d)\n", msg, errnum);
}

/* libbacktrace reports a pc once per inlined function at it: one frame. */
static int lbt_frame(void *data, uintptr_t pc, const char *file, int line, const char *fn)
{
	(void)file, (void)line, (void)fn;
	struct lbt_state *s = data;
	if (s->n > 0 && s->pcs[s->n - 1] == (void *)pc)
		return 0;
	s->pcs[s->n++] = (void *)pc;
	return s->n >= s->max;
}

static NOINLINE int do_libbacktrace(void)
{
	void *pcs[128];
	struct lbt_state s = { pcs, 0, 128 };
	struct backtrace_state *state = backtrace_create_state(NULL, 0, lbt_error, NULL);
	if (!state)
		return 2;
	backtrace_full(state, 0, lbt_frame, lbt_error, &s);
	return judge("libbacktrace", pcs, s.n);
}
#endif

static NOINLINE void wait_here(void)
{
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}

static NOINLINE void spin_here(void)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	volatile uint64_t x = 0;
	do {
		for (int i = 0; i < 100000; i++)
			x += (uint64_t)i * 2654435761u;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < spin_secs);
}

static int run_action(void)
{
	if (!strcmp(action, "backtrace"))
		return do_backtrace();
	if (!strcmp(action, "unwind"))
		return do_unwind();
#ifdef CHILD_NONGNU
	if (!strcmp(action, "unw"))
		return do_unw_backtrace();
	if (!strcmp(action, "unwstep"))
		return do_unw_step();
#endif
#ifdef CHILD_CXX
	if (!strcmp(action, "throw")) {
		cxx_throw();
		return 1; /* not reached when the exception propagates */
	}
#endif
	if (!strcmp(action, "crash"))
		return do_crash();
	if (!strcmp(action, "malloc"))
		return do_malloc();
#ifdef CHILD_ASAN
	if (!strcmp(action, "uaf"))
		return do_uaf();
#endif
#ifdef CHILD_LIBBACKTRACE
	if (!strcmp(action, "libbacktrace"))
		return do_libbacktrace();
#endif
	if (!strcmp(action, "wait"))
		wait_here();
	if (!strcmp(action, "abort"))
		abort();
	if (!strcmp(action, "trap"))
		__builtin_trap(); /* a fatal signal with c_inner itself innermost */
	if (!strcmp(action, "spin")) {
		spin_here();
		return 0;
	}
	fprintf(stderr, "child: action %s is not built into this binary\n", action);
	return 2;
}

NOINLINE void run_stack(void)
{
	levels_left = depth;
	c_outer();
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: child ACTION [--depth N] [--expect FILE] [SECS]\n");
		return 2;
	}
	action = argv[1];
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--depth") && i + 1 < argc)
			depth = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--expect") && i + 1 < argc)
			expect_path = argv[++i];
		else if (!strcmp(argv[i], "--spaced")) {
			static const size_t at[] = { SPACED_AT };
			AT_FP = at[0], AT_CFI = at[1], AT_REGION = at[2];
		} else if (!strcmp(argv[i], "--apart"))
			apart = 1;
		else
			spin_secs = atof(argv[i]);
	}
	if (depth < 1 || depth > 8) {
		fprintf(stderr, "child: --depth must be 1..8\n");
		return 2;
	}
	if (make_jit())
		return 2;
	build_expected();
	if (write_expect()) {
		perror("child: expect file");
		return 2;
	}
#ifdef CHILD_CXX
	if (!strcmp(action, "throw")) {
		int caught = cxx_catch(run_stack);
		printf("throw: %s\n", caught ? "caught in main's frame across the JIT frames" : "not caught");
		printf("result: %s\n", caught ? "PASS" : "FAIL");
		return caught ? 0 : 1;
	}
#endif
	run_stack();
	int r = result;
	if (ju_unpublish_all(ctx) || ju_close(ctx)) {
		fprintf(stderr, "child: cleanup: %s\n", ju_errmsg());
		return 2;
	}
	munmap(code, code_size);
	return r;
}
