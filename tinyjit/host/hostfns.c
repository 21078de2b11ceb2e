/* SPDX-License-Identifier: MIT */
/* hostfns.c - the C functions a .tj program can call (run time).
 *
 *   print(x)            print x on a line, return x
 *   invoke0(f)          call VM function f (from `fn NAME`) from C: these
 *   invoke1(f, a)       make native stacks interleave C -> JIT -> C -> JIT
 *   invoke2(f, a, b)
 *   invoke3(f, a, b, c)
 *   probe(mode)         what the unwinder matrix inspects, at the bottom of
 *                       a deep mixed stack:
 *                         0 nothing; 1 print glibc backtrace();
 *                         2 print the pid and wait to be attached to;
 *                         3 abort() for a core file;
 *                         4 throw a C++ exception, caught near main;
 *                         5 spin (TJ_PROBE_SPIN seconds, default 2) for
 *                           sampling profilers;
 *                         6 print _Unwind_Backtrace's frames (libgcc, or
 *                           LLVM libunwind when linked ahead of it);
 *                         7 print nongnu libunwind's unw_backtrace and
 *                         8 an unw_step loop (tinyjit-libunwind only);
 *                         9 raise SIGTRAP for a tracer (tests/matrix);
 *                        10 crash: a SIGSEGV whose handler (on its own
 *                           stack, as crash reporters install it) prints
 *                           _Unwind_Backtrace's frames through the signal
 *                           frame and exits;
 *                        11 a heap use-after-free (AddressSanitizer builds
 *                           only: tinyjit-asan);
 *                        12 malloc and free one block, for allocation
 *                           profilers;
 *                        13 print libbacktrace's backtrace_full (builds
 *                           with TJ_LIBBACKTRACE only: tinyjit-libbacktrace);
 *                        14 trap in its own code for a core file, with no
 *                           libc frame on top (qemu-user's cores name no
 *                           library: a reader given only the program must
 *                           start in it).
 *
 * With TJ_PROBE_EXPECT=FILE, probe(1..14) first writes FILE: every published
 * function's code range, and the native frames the stack must hold, derived
 * from the VM's own transitions (see write_expect), never from an unwinder.
 * With TJ_PROBE_REPEAT=N, modes 1, 6, 7, 8, 10 and 13 unwind N times and
 * print the median time of one unwind.
 *
 * Compiled with -fexceptions: a C++ exception thrown by probe(4) unwinds
 * through these frames and the JIT's.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <execinfo.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>

#ifdef TJ_LIBBACKTRACE
#include <backtrace.h>
#endif

#if __has_include(<libunwind.h>)
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#define TJ_HAVE_LIBUNWIND_H 1
#endif

#include "formats/clock.h"
#include "../runtime/jit.h"
#include "../vm/vm.h"
#include "host.h"

/* Weak: the loader's fuzz target links this file without the JIT runtime
 * (and never runs the probe). */
#pragma weak tj_jit_func_info
#pragma weak tj_jit_inlined

#define NOINLINE __attribute__((noinline))
/* Code after a call keeps the call from becoming a jump (a tail call would
 * take the caller's frame off the stack the expect file describes). */
#define NOT_A_TAIL_CALL() __asm__ volatile("" ::: "memory")
#define MAX_PCS 512

static tj_res ok(int64_t v)
{
	return (tj_res){ v, 0 };
}

static tj_res h_print(tj_vm *vm, const int64_t *a)
{
	(void)vm;
	printf("%" PRId64 "\n", a[0]);
	return ok(a[0]);
}

/* ---- host -> VM transitions, remembered for the expect file ---------------- */

/* The native stack between two host transitions is JIT code only, one frame
 * per VM frame; which VM functions those are is known at the transitions:
 * the caller is the function of the HOST instruction, the callee the
 * function invoked, and vm->depth counts the frames in between. */
typedef struct transition {
	int64_t depth;  /* live VM frames when the host called back */
	int64_t caller; /* VM function running the HOST instruction */
	int64_t callee; /* VM function invoked */
	uint32_t nargs; /* through h_invoke<nargs> */
	uint32_t at;    /* the HOST instruction */
} transition;

enum { MAX_TRANSITIONS = 256 };
static transition transitions[MAX_TRANSITIONS];
static int n_transitions; /* may exceed MAX_TRANSITIONS: then not recorded */

static int64_t func_of_insn(const tj_vm *vm, uint32_t insn)
{
	const tj_func *f = tj_func_of(vm->prog, insn);
	return f ? f - vm->prog->funcs : -1;
}

/* Not a tail call (it pops after the call), so h_invokeN stays a frame. */
static inline __attribute__((always_inline)) tj_res invoke(tj_vm *vm, const int64_t *a, uint32_t n)
{
	if (n_transitions < MAX_TRANSITIONS)
		transitions[n_transitions] =
			(transition){ vm->depth, func_of_insn(vm, vm->host_insn), a[0], n, vm->host_insn };
	n_transitions++;
	tj_res r = tj_vm_invoke(vm, a[0], a + 1, n, vm->host_insn);
	n_transitions--;
	return r;
}

static tj_res h_invoke0(tj_vm *vm, const int64_t *a)
{
	return invoke(vm, a, 0);
}
static tj_res h_invoke1(tj_vm *vm, const int64_t *a)
{
	return invoke(vm, a, 1);
}
static tj_res h_invoke2(tj_vm *vm, const int64_t *a)
{
	return invoke(vm, a, 2);
}
static tj_res h_invoke3(tj_vm *vm, const int64_t *a)
{
	return invoke(vm, a, 3);
}

/* ---- the expect file ------------------------------------------------------- */

/* The one CALL in function `caller` that calls `callee`, or -1 when there
 * is none or more than one (the VM keeps no return sites, so only a call
 * the callee's identity pins down can be named). */
static int64_t the_call(const tj_program *p, int64_t caller, int64_t callee)
{
	const tj_func *f = &p->funcs[caller];
	int64_t at = -1;
	for (uint32_t i = f->first; i < f->first + f->count; i++) {
		if (p->insns[i].op != TJ_OP_CALL || p->insns[i].a != callee)
			continue;
		if (at >= 0)
			return -1;
		at = i;
	}
	return at;
}

/* Whether function caller's own code inlines its call at `line` of callee
 * (an inline right under the function itself: the calls a segment of two
 * VM frames makes). */
static bool inlined_at(const tj_jit_func *jf, int64_t callee, uint32_t line)
{
	for (size_t k = 0; k < jf->n_inlines; k++)
		if (!jf->inlines[k].parent && jf->inlines[k].fn == callee && jf->inlines[k].call_line == line)
			return true;
	return false;
}

/* One VM segment, innermost first: `bottom` (running the instruction `at`
 * that left the segment), n-2 frames whose functions the host cannot know
 * ("*": any published function), `top` (entered from C).
 *
 * Native frames ("frame" lines): one per VM frame, except that a call the
 * JIT inlined runs in its caller's frame.  Between JIT frames sits the
 * shim, which the region rule and frame-pointer walks fold into the frame
 * above it and exact CFI shows: optional.
 *
 * Guest frames ("guest" lines, written to g): every VM frame at its .tj
 * line, "inline" where it runs inside its caller's code.  Known only for
 * segments of one or two frames whose call is pinned down (the_call);
 * otherwise *guests_known is cleared.  With inlining on, a segment whose
 * native frames cannot be told is an error (-1). */
static int expect_segment(FILE *f, FILE *g, const tj_program *p, tj_jit *jit, int64_t bottom, int64_t top,
			  int64_t n, uint32_t at, bool *guests_known)
{
	int64_t call = n == 2 ? the_call(p, top, bottom) : -1;
	bool inline_on = tj_jit_inlined && tj_jit_inlined(jit);
	if (n > 2 || (n == 2 && call < 0)) {
		*guests_known = false;
		if (inline_on)
			return -1;
	}
	bool folded = n == 2 && call >= 0 &&
		      inlined_at(tj_jit_func_info(jit, (uint32_t)top), bottom, p->insns[call].line);
	if (*guests_known) {
		fprintf(g, "guest tj:%s %s:%u%s\n", p->funcs[bottom].name, p->file, p->insns[at].line,
			folded ? " inline" : "");
		if (n == 2)
			fprintf(g, "guest tj:%s %s:%u\n", p->funcs[top].name, p->file, p->insns[call].line);
	}
	for (int64_t i = folded ? 1 : 0; i < n; i++) {
		int64_t fn = i == 0 ? bottom : i == n - 1 ? top : -1;
		if (fn >= 0)
			fprintf(f, "frame tj:%s jit\n", p->funcs[fn].name);
		else
			fprintf(f, "frame * jit\n");
		fprintf(f, "frame tj_shim_call c opt\n");
	}
	return 0;
}

/* Writes TJ_PROBE_EXPECT (if set) for a probe whose innermost frame is the
 * C function `action`.  Format, one item a line:
 *   base ADDR                 load address of this executable
 *   blob NAME LO HI TRAMP     a published function: code [LO, HI), its
 *                             trampolines from TRAMP on (they jump, so a
 *                             pc there has the blob's call site as caller)
 *   frame NAME c|jit [opt]    the native frames, innermost first, down to
 *                             main; C frames by symbol name, "opt" where
 *                             the compiler or the frame description
 *                             decides whether the frame shows
 *   guest NAME FILE:LINE [inline]
 *                             the VM's frames, innermost first, each at
 *                             its line (the call it makes, or the host
 *                             instruction running), "inline" where the
 *                             JIT inlined it into its caller's code; all
 *                             of them or none (expect_segment)
 * Returns 0, or -1 when the file cannot be written (or the stack is too
 * deep to describe, or holds inlined calls the file cannot place). */
static int write_expect(tj_vm *vm, const char *action)
{
	const char *path = getenv("TJ_PROBE_EXPECT");
	if (!path)
		return 0;
	if (!vm->jit || !tj_jit_func_info || n_transitions > MAX_TRANSITIONS)
		return -1;
	FILE *f = fopen(path, "w");
	char *guests = NULL;
	size_t guests_len = 0;
	FILE *g = open_memstream(&guests, &guests_len);
	if (!f || !g) {
		if (f)
			fclose(f);
		if (g)
			fclose(g);
		free(guests);
		return -1;
	}
	const tj_program *p = vm->prog;
	Dl_info dl;
	if (dladdr((void *)tj_rt_host, &dl))
		fprintf(f, "base %p\n", dl.dli_fbase);
	for (uint32_t i = 0; i < p->n_funcs; i++) {
		const tj_jit_func *jf = tj_jit_func_info(vm->jit, i);
		uint32_t tramp = jf->size;
		for (size_t k = 0; k < jf->n_cfi; k++)
			if (!jf->cfi[k].insns)
				tramp = jf->cfi[k].start;
		fprintf(f, "blob tj:%s %p %p %p\n", p->funcs[i].name, (void *)jf->code,
			(void *)(jf->code + jf->size), (void *)(jf->code + tramp));
	}
	fprintf(f, "frame %s c\nframe h_probe c\nframe tj_rt_host c\n", action);
	int64_t bottom = func_of_insn(vm, vm->host_insn), depth = vm->depth;
	uint32_t at = vm->host_insn;
	bool guests_known = true;
	int rc = 0;
	for (int t = n_transitions - 1; t >= -1 && !rc; t--) {
		int64_t top = t >= 0 ? transitions[t].callee : tj_find_func(p, "main");
		int64_t base = t >= 0 ? transitions[t].depth : 0;
		rc = expect_segment(f, g, p, vm->jit, bottom, top, depth - base, at, &guests_known);
		/* tj_jit_run tail-calls tj_jit_enter at -O2: whether it shows is the
		 * compiler's choice */
		fprintf(f, "frame tj_jit_enter c\nframe tj_jit_run c opt\nframe tj_vm_invoke c\n");
		if (t >= 0) {
			fprintf(f, "frame h_invoke%u c\nframe tj_rt_host c\n", transitions[t].nargs);
			bottom = transitions[t].caller;
			at = transitions[t].at;
			depth = base;
		}
	}
	fprintf(f, "frame run_main c\nframe tj_cxx_guard c\nframe main c\n");
	if (fclose(g))
		rc = -1;
	if (!rc && guests_known && guests_len)
		fputs(guests, f);
	free(guests);
	return fclose(f) || rc ? -1 : 0;
}

/* ---- the probe's actions --------------------------------------------------- */

typedef int (*unwind_fn)(void **pcs, int max);

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Print the frames `fn` reports ("[0xADDR]" a line, innermost first), or
 * with TJ_PROBE_REPEAT=N the median time of N calls. */
static int report(const char *what, unwind_fn fn)
{
	void *pcs[MAX_PCS];
	const char *env = getenv("TJ_PROBE_REPEAT");
	long reps = env ? strtol(env, NULL, 10) : 0;
	if (reps > 0) {
		int64_t *t = malloc((size_t)reps * sizeof *t);
		int n = 0;
		for (long i = 0; t && i < reps; i++) {
			int64_t t0 = now_ns();
			n = fn(pcs, MAX_PCS);
			t[i] = now_ns() - t0;
		}
		if (!t)
			return -1;
		qsort(t, (size_t)reps, sizeof *t, cmp_i64);
		printf("tinyjit probe: %s: %d frames, median %" PRId64 " ns over %ld runs\n", what, n,
		       t[reps / 2], reps);
		free(t);
		fflush(stdout);
		return n;
	}
	int n = fn(pcs, MAX_PCS);
	printf("tinyjit probe: %s of %d frames\n", what, n);
	for (int i = 0; i < n; i++)
		printf("[%p]\n", pcs[i]);
	fflush(stdout);
	return n;
}

static int glibc_backtrace(void **pcs, int max)
{
	return backtrace(pcs, max);
}

static NOINLINE int probe_backtrace(void)
{
	if (getenv("TJ_PROBE_REPEAT")) {
		int n = report("backtrace", glibc_backtrace);
		NOT_A_TAIL_CALL();
		return n;
	}
	void *pcs[MAX_PCS];
	int n = backtrace(pcs, MAX_PCS);
	printf("tinyjit probe: backtrace of %d frames\n", n);
	fflush(stdout);
	backtrace_symbols_fd(pcs, n, STDOUT_FILENO);
	return n;
}

struct ub_state {
	void **pcs;
	int n, max;
};

static _Unwind_Reason_Code ub_step(struct _Unwind_Context *uc, void *arg)
{
	struct ub_state *s = arg;
	if (s->n >= s->max)
		return _URC_END_OF_STACK;
	s->pcs[s->n++] = (void *)_Unwind_GetIP(uc);
	return _URC_NO_REASON;
}

static int unwind_backtrace(void **pcs, int max)
{
	struct ub_state s = { pcs, 0, max };
	_Unwind_Backtrace(ub_step, &s);
	return s.n;
}

static NOINLINE int probe_unwind(void)
{
	int n = report("_Unwind_Backtrace", unwind_backtrace);
	NOT_A_TAIL_CALL();
	return n;
}

/* nongnu libunwind by dlsym: only tinyjit-libunwind links it (linking it
 * here would replace glibc's backtrace() in every build). */
#ifdef TJ_HAVE_LIBUNWIND_H
#define TJ_STR_(x) #x
#define TJ_STR(x) TJ_STR_(x)
static int (*p_unw_backtrace)(void **, int);
/* libunwind-aarch64.h's unw_tdep_getcontext is inline assembly, not a
 * symbol of the library: unw_step_loop uses it as it is there */
#ifndef __aarch64__
#define TJ_UNW_GETCONTEXT_SYMBOL 1
static int (*p_getcontext)(unw_context_t *);
#endif
static int (*p_init_local)(unw_cursor_t *, unw_context_t *);
static int (*p_step)(unw_cursor_t *);
static int (*p_get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);

static int have_libunwind(void)
{
	p_unw_backtrace = (int (*)(void **, int))dlsym(RTLD_DEFAULT, "unw_backtrace");
#ifdef TJ_UNW_GETCONTEXT_SYMBOL
	p_getcontext = (int (*)(unw_context_t *))dlsym(RTLD_DEFAULT, TJ_STR(unw_tdep_getcontext));
#endif
	p_init_local = (int (*)(unw_cursor_t *, unw_context_t *))dlsym(RTLD_DEFAULT, TJ_STR(unw_init_local));
	p_step = (int (*)(unw_cursor_t *))dlsym(RTLD_DEFAULT, TJ_STR(unw_step));
	p_get_reg =
		(int (*)(unw_cursor_t *, unw_regnum_t, unw_word_t *))dlsym(RTLD_DEFAULT, TJ_STR(unw_get_reg));
#ifdef TJ_UNW_GETCONTEXT_SYMBOL
	if (!p_getcontext)
		return 0;
#endif
	return p_unw_backtrace && p_init_local && p_step && p_get_reg;
}

static int unw_bt(void **pcs, int max)
{
	return p_unw_backtrace(pcs, max);
}

static NOINLINE int unw_step_loop(void **pcs, int max)
{
	unw_context_t uc;
	unw_cursor_t cur;
	int n = 0;
#ifdef TJ_UNW_GETCONTEXT_SYMBOL
	if (p_getcontext(&uc) || p_init_local(&cur, &uc) < 0)
		return 0;
#else
	if (unw_tdep_getcontext(&uc) || p_init_local(&cur, &uc) < 0)
		return 0;
#endif
	do {
		unw_word_t ip;
		p_get_reg(&cur, UNW_REG_IP, &ip);
		pcs[n++] = (void *)ip;
	} while (n < max && p_step(&cur) > 0);
	return n;
}
#else
static int have_libunwind(void)
{
	return 0;
}
static int unw_bt(void **pcs, int max)
{
	(void)pcs, (void)max;
	return 0;
}
static int unw_step_loop(void **pcs, int max)
{
	(void)pcs, (void)max;
	return 0;
}
#endif

static NOINLINE int probe_unw_backtrace(void)
{
	int n = report("unw_backtrace", unw_bt);
	NOT_A_TAIL_CALL();
	return n;
}

static NOINLINE int probe_unw_step(void)
{
	int n = report("unw_step", unw_step_loop);
	NOT_A_TAIL_CALL();
	return n;
}

static NOINLINE void probe_wait(void)
{
	const char *env = getenv("TJ_PROBE_WAIT");
	long secs = env ? strtol(env, NULL, 10) : 60;
	printf("tinyjit probe: pid %ld waiting %ld s to be attached to\n", (long)getpid(), secs);
	fflush(stdout);
	for (long i = 0; i < secs * 10; i++)
		usleep(100000);
}

static NOINLINE void probe_abort(void)
{
	printf("tinyjit probe: aborting for a core file\n");
	fflush(stdout);
	abort();
}

/* Busy in this frame, for sampling profilers: the clock is read rarely, so
 * nearly every sample lands here rather than in the vDSO. */
static NOINLINE int64_t probe_spin(void)
{
	const char *env = getenv("TJ_PROBE_SPIN");
	double secs = env ? strtod(env, NULL) : 2;
	printf("tinyjit probe: pid %ld spinning %.1f s\n", (long)getpid(), secs);
	fflush(stdout);
	volatile uint64_t x = 0;
	uint64_t end = now_ns() + (uint64_t)(secs > 0 ? secs * 1e9 : 0);
	do {
		for (int i = 0; i < 1000000; i++)
			x += (uint64_t)i * 2654435761u;
	} while (now_ns() < end);
	return (int64_t)(x & 1);
}

static NOINLINE void probe_trap(void)
{
	raise(SIGTRAP);
	NOT_A_TAIL_CALL();
}

static NOINLINE void probe_fault(void)
{
	printf("tinyjit probe: trapping for a core file\n");
	fflush(stdout);
	__builtin_trap(); /* ud2 (SIGILL), brk (SIGTRAP): both dump core */
}

/* ---- a crash reporter ------------------------------------------------------ */

/* What an in-process crash reporter does (Sentry native's inproc backend,
 * Breakpad's in-process fallback): a SIGSEGV handler on an alternate stack
 * unwinds with _Unwind_Backtrace from its own frame, through the kernel's
 * signal frame (glibc's __restore_rt carries CFI that restores the
 * interrupted registers from the ucontext), into the frames that faulted.
 * It writes with write(2) alone: printf is not async-signal-safe. */
static char crash_stack[64 * 1024];

static void put_str(char *buf, size_t *n, size_t cap, const char *s)
{
	while (*s && *n < cap)
		buf[(*n)++] = *s++;
}

static void put_hex(char *buf, size_t *n, size_t cap, uintptr_t v)
{
	char tmp[2 + 2 * sizeof v];
	size_t k = sizeof tmp;
	do
		tmp[--k] = "0123456789abcdef"[v & 15];
	while ((v >>= 4) && k > 2);
	tmp[--k] = 'x';
	tmp[--k] = '0';
	while (k < sizeof tmp && *n < cap)
		buf[(*n)++] = tmp[k++];
}

static void write_all(const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(STDOUT_FILENO, buf, n);
		if (w <= 0)
			return;
		buf += w, n -= (size_t)w;
	}
}

static void crash_report(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	if (getenv("TJ_PROBE_REPEAT")) { /* timing, where stdio is safe enough */
		report("crash reporter _Unwind_Backtrace", unwind_backtrace);
		_exit(0);
	}
	void *pcs[MAX_PCS];
	int n = unwind_backtrace(pcs, MAX_PCS);
	char line[128];
	size_t k = 0;
	put_str(line, &k, sizeof line, "tinyjit probe: crash reporter: SIGSEGV at ");
	put_hex(line, &k, sizeof line, (uintptr_t)si->si_addr);
	put_str(line, &k, sizeof line, ", _Unwind_Backtrace from the handler\n");
	write_all(line, k);
	for (int i = 0; i < n; i++) {
		k = 0;
		put_str(line, &k, sizeof line, "[");
		put_hex(line, &k, sizeof line, (uintptr_t)pcs[i]);
		put_str(line, &k, sizeof line, "]\n");
		write_all(line, k);
	}
	_exit(0);
}

/* Null, and volatile so that the compiler cannot see it (a store through a
 * known null pointer would become a trap instruction, not a SIGSEGV). */
static int *volatile crash_ptr;

static NOINLINE void probe_crash(void)
{
	stack_t ss = { .ss_sp = crash_stack, .ss_size = sizeof crash_stack };
	struct sigaction sa = { .sa_sigaction = crash_report,
				.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND };
	sigemptyset(&sa.sa_mask);
	if (sigaltstack(&ss, NULL) || sigaction(SIGSEGV, &sa, NULL)) {
		perror("tinyjit probe: crash reporter");
		return;
	}
	printf("tinyjit probe: faulting with a crash reporter installed\n");
	fflush(stdout);
	*crash_ptr = 1;
	NOT_A_TAIL_CALL();
}

/* ---- sanitizers and allocation profilers ------------------------------------ */

#if defined(__SANITIZE_ADDRESS__)
#define TJ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TJ_ASAN 1
#endif
#endif

/* Volatile: the compiler must neither see the use after free (GCC 12 warns
 * of it) nor drop the malloc and free as a pair with no use. */
static char *volatile heap_block;

/* Allocated, freed, read: AddressSanitizer reports the read with three
 * stacks, the access (its fatal unwinder) and the block's allocation and
 * free (its malloc unwinder), each with this function innermost. */
static NOINLINE int probe_use_after_free(void)
{
	heap_block = malloc(48);
	if (heap_block)
		heap_block[0] = 1;
	free(heap_block);
	int v = heap_block[7];
	NOT_A_TAIL_CALL();
	return v;
}

/* One block of a size no other allocation in tinyjit has, allocated and
 * freed here: the allocation profiler's stack of it starts in this frame. */
enum { PROBE_MALLOC_SIZE = 123457 };

static NOINLINE int probe_malloc(void)
{
	heap_block = malloc(PROBE_MALLOC_SIZE);
	if (!heap_block)
		return -1;
	heap_block[0] = 1;
	free(heap_block);
	printf("tinyjit probe: malloc(%d) and free\n", PROBE_MALLOC_SIZE);
	fflush(stdout);
	return 0;
}

/* ---- libbacktrace ------------------------------------------------------------ */

#ifdef TJ_LIBBACKTRACE
/* GCC's libbacktrace (the one std::stacktrace is built on where libstdc++
 * ships it): backtrace_full unwinds with _Unwind_Backtrace and names each
 * pc from the executable's DWARF and symbol table. */
static void lbt_error(void *data, const char *msg, int errnum)
{
	(void)data;
	printf("tinyjit probe: libbacktrace: %s (%d)\n", msg, errnum);
}

static int lbt_frame(void *data, uintptr_t pc, const char *file, int line, const char *fn)
{
	(void)file, (void)line;
	int *n = data;
	printf("%s [%#" PRIxPTR "]\n", fn ? fn : "??", pc);
	return ++*n >= MAX_PCS;
}

static struct backtrace_state *lbt_state;

struct lbt_pcs {
	void **pcs;
	int n, max;
};

static int lbt_pc(void *data, uintptr_t pc, const char *file, int line, const char *fn)
{
	(void)file, (void)line, (void)fn;
	struct lbt_pcs *s = data;
	s->pcs[s->n++] = (void *)pc;
	return s->n >= s->max;
}

/* backtrace_full as an unwind_fn, for TJ_PROBE_REPEAT: unwinding and the
 * lookup of every pc's function, as a caller of it pays. */
static int lbt_unwind(void **pcs, int max)
{
	struct lbt_pcs s = { pcs, 0, max };
	backtrace_full(lbt_state, 0, lbt_pc, lbt_error, &s);
	return s.n;
}

static NOINLINE int probe_libbacktrace(void)
{
	if (!lbt_state)
		lbt_state = backtrace_create_state(NULL, 0, lbt_error, NULL);
	if (lbt_state && getenv("TJ_PROBE_REPEAT")) {
		int n = report("libbacktrace backtrace_full", lbt_unwind);
		NOT_A_TAIL_CALL();
		return n;
	}
	int n = 0;
	printf("tinyjit probe: libbacktrace backtrace_full\n");
	if (lbt_state)
		backtrace_full(lbt_state, 0, lbt_frame, lbt_error, &n);
	fflush(stdout);
	return n;
}
#endif

static const char *const actions[] = {
	[1] = "probe_backtrace", [2] = "probe_wait",
	[3] = "probe_abort",     [5] = "probe_spin",
	[6] = "probe_unwind",    [7] = "probe_unw_backtrace",
	[8] = "probe_unw_step",  [9] = "probe_trap",
	[10] = "probe_crash",    [11] = "probe_use_after_free",
	[12] = "probe_malloc",   [13] = "probe_libbacktrace",
	[14] = "probe_fault",
};
enum { MAX_MODE = sizeof actions / sizeof actions[0] - 1 };

static NOINLINE tj_res h_probe(tj_vm *vm, const int64_t *a)
{
	int64_t mode = a[0];
	if ((mode == 7 || mode == 8) && !have_libunwind())
		return tj_vm_fail(vm, TJ_ERR_HOST, vm->host_insn,
				  "probe: nongnu libunwind is not linked in (run tinyjit-libunwind)");
#ifndef TJ_ASAN
	if (mode == 11)
		return tj_vm_fail(vm, TJ_ERR_HOST, vm->host_insn,
				  "probe: a use-after-free needs AddressSanitizer (run tinyjit-asan)");
#endif
#ifndef TJ_LIBBACKTRACE
	if (mode == 13)
		return tj_vm_fail(vm, TJ_ERR_HOST, vm->host_insn,
				  "probe: libbacktrace is not linked in (run tinyjit-libbacktrace)");
#endif
	if (mode >= 1 && mode <= MAX_MODE && actions[mode] && write_expect(vm, actions[mode]))
		return tj_vm_fail(vm, TJ_ERR_HOST, vm->host_insn, "probe: cannot write TJ_PROBE_EXPECT");
	switch (mode) {
	case 0: return ok(0);
	case 1: return ok(probe_backtrace());
	case 2: probe_wait(); return ok(0);
	case 3: probe_abort(); break;
	case 4: tj_cxx_throw(mode); break;
	case 5: return ok(probe_spin());
	case 6: return ok(probe_unwind());
	case 7: return ok(probe_unw_backtrace());
	case 8: return ok(probe_unw_step());
	case 9: probe_trap(); return ok(0);
	case 10: probe_crash(); break;
	case 11: return ok(probe_use_after_free());
	case 12: return ok(probe_malloc());
#ifdef TJ_LIBBACKTRACE
	case 13: return ok(probe_libbacktrace());
#endif
	case 14: probe_fault(); break;
	}
	if (mode == 10)
		return tj_vm_fail(vm, TJ_ERR_HOST, vm->host_insn, "probe: the crash reporter did not run");
	return tj_vm_fail(vm, TJ_ERR_HOST, vm->host_insn, "probe: mode must be 0..14");
}

const tj_host tj_hosts[] = {
	{ "print", 1, h_print },     { "invoke0", 1, h_invoke0 }, { "invoke1", 2, h_invoke1 },
	{ "invoke2", 3, h_invoke2 }, { "invoke3", 4, h_invoke3 }, { "probe", 1, h_probe },
};
const uint32_t tj_n_hosts = sizeof tj_hosts / sizeof tj_hosts[0];
