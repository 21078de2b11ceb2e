/* SPDX-License-Identifier: MIT */
/* test-threads.c - threads publish and unpublish JIT code while other
 * threads run it and unwind through it, and every backtrace is complete.
 *
 * A code region holds N_SLOTS small x86-64 functions ("blobs"), each of which
 * calls back into C: half build a frame-pointer frame, half only move the
 * stack pointer (no frame pointer, so only real CFI gets past them).  The
 * code is written once; publishing and unpublishing only change what the
 * unwinders know.
 *
 * Ownership: each slot has a read-write lock.  A caller holds it for reading
 * for the whole call, and calls only a published blob; a publisher needs it
 * for writing to publish or unpublish the blob.  So the blob being executed
 * is published for the whole call, while everything around it changes: other
 * blobs come and go in the same arenas, which are merged, split, rebuilt and
 * tombstoned under the running code.
 *
 * From inside each blob the caller takes a backtrace with glibc backtrace(),
 * _Unwind_Backtrace and, in a second process that has nongnu libunwind
 * loaded (so the libunwind channel is on and arena images are mmap'ed near
 * the code), unw_backtrace and an unw_step loop.  Each must show the
 * callback, the blob, the C function that called it, the thread's worker
 * function and something beyond.  Freed memory is filled (glibc M_PERTURB,
 * ASan's free fill) so an unwinder reading a retired image reads garbage.
 *
 * libgcc's walks must all be complete.  libunwind's may miss a frame when a
 * lookup stands on an entry of its lock-free list as it is cancelled (see
 * ch_libunwind.c); none in 5 * 10^6 walks of each kind here, with two busy
 * loops competing for the CPUs.
 * unw_backtrace keeps what one such walk guessed for the pc in a per-thread
 * cache, for the thread's lifetime, so its misses are counted as the
 * (thread, slot) pairs where they happened.  More misses than one in
 * LIBUNWIND_MISS_LIMIT walks fails the test (a wrong table would make
 * nearly every walk fail).
 *
 * Deterministic seeds; each phase runs for PHASE_SECONDS; the last one has
 * the gdb channel on as well.
 */
#include "internal.h"
#include "tests/unwind_pcs.h"
#include "unit.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>

#if defined(__x86_64__) && __has_include(<libunwind.h>)
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#define HAVE_LIBUNWIND_H 1
#endif

#define NOINLINE __attribute__((noinline))
#define BARRIER() __asm__ volatile("" ::: "memory")

enum { N_SLOTS = 256, SLOT = 64, N_CALLERS = 3, N_PUBLISHERS = 2, MAX_PCS = 64 };
#ifndef PHASE_SECONDS
#define PHASE_SECONDS 1.5
#endif
#define LIBUNWIND_MISS_LIMIT 5000

/* ASan: fill freed memory, so a stale read of a freed image sees garbage. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "max_free_fill_size=1048576:free_fill_byte=165";
}

/* ---- the code region ----------------------------------------------------------- */

typedef struct call call;
typedef void (*blob_fn)(call *);

typedef struct slot {
	pthread_rwlock_t lock;
	bool published; /* changed only with the lock held for writing */
	uint32_t size;
	ju_frame frame;
	ju_range epilogue; /* FP blobs */
	ju_cfi_range cr;   /* CFI blobs */
	uint8_t insns[8];
} slot;

static uint8_t *code;
static slot slots[N_SLOTS];
static ju_ctx *ctx;

/* Where the caller is: filled in by the thread, checked by the callback. */
struct call {
	size_t slot;
	int method;
	bool ok;
	char why[200];
};

static void callback(call *c);

static size_t emit_call_callback(uint8_t *p)
{
	uint64_t t = (uintptr_t)callback;
	p[0] = 0x48, p[1] = 0xb8; /* movabs $callback, %rax */
	memcpy(p + 2, &t, 8);
	p[10] = 0xff, p[11] = 0xd0; /* call *%rax (%rdi passes through) */
	return 12;
}

/* push %rbp; mov %rsp,%rbp; call callback; pop %rbp; ret */
static void emit_fp(slot *s, uint8_t *p)
{
	size_t n = 0;
	p[n++] = 0x55;
	p[n++] = 0x48, p[n++] = 0x89, p[n++] = 0xe5;
	n += emit_call_callback(p + n);
	p[n++] = 0x5d;
	s->epilogue.start = (uint32_t)n;
	p[n++] = 0xc3;
	s->epilogue.end = (uint32_t)n;
	s->size = (uint32_t)n;
	s->frame = (ju_frame){ .kind = JU_FRAME_FP, .u.fp = { 1, 4, &s->epilogue, 1 } };
}

/* sub $24,%rsp; call callback; add $24,%rsp; ret -- no frame pointer */
static void emit_cfi(slot *s, uint8_t *p)
{
	size_t n = 0;
	p[n++] = 0x48, p[n++] = 0x83, p[n++] = 0xec, p[n++] = 24;
	size_t after_sub = n;
	n += emit_call_callback(p + n);
	p[n++] = 0x48, p[n++] = 0x83, p[n++] = 0xc4, p[n++] = 24;
	size_t after_add = n;
	p[n++] = 0xc3;
	s->size = (uint32_t)n;
	uint8_t *i = s->insns;
	i[0] = 0x40 | (uint8_t)after_sub;               /* DW_CFA_advance_loc */
	i[1] = 0x0e, i[2] = 32;                         /* DW_CFA_def_cfa_offset 32 */
	i[3] = 0x40 | (uint8_t)(after_add - after_sub); /* DW_CFA_advance_loc */
	i[4] = 0x0e, i[5] = 8;                          /* DW_CFA_def_cfa_offset 8 */
	s->cr = (ju_cfi_range){ 0, s->size, s->insns, 6 };
	s->frame = (ju_frame){ .kind = JU_FRAME_CFI, .u.cfi = { &s->cr, 1 } };
}

static int make_code(void)
{
	code = mmap(NULL, N_SLOTS * SLOT, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return -1;
	memset(code, 0xcc, N_SLOTS * SLOT);
	for (size_t i = 0; i < N_SLOTS; i++) {
		pthread_rwlock_init(&slots[i].lock, NULL);
		if (i % 2)
			emit_cfi(&slots[i], code + i * SLOT);
		else
			emit_fp(&slots[i], code + i * SLOT);
	}
	return mprotect(code, N_SLOTS * SLOT, PROT_READ | PROT_EXEC);
}

static ju_blob blob_of(size_t i)
{
	return (ju_blob){ .sz = sizeof(ju_blob),
			  .start = code + i * SLOT,
			  .size = slots[i].size,
			  .name = "stress",
			  .frame = slots[i].frame };
}

/* ---- the C frames around a blob ---------------------------------------------- */

/* Each in a section of its own, so its extent is known (__start_/__stop_). */
#define IN_SECTION(name) __attribute__((noinline, section(name)))
extern const uint8_t __start_ju_call_blob[], __stop_ju_call_blob[];
extern const uint8_t __start_ju_caller_loop[], __stop_ju_caller_loop[];

IN_SECTION("ju_call_blob") void call_blob(call *c)
{
	((blob_fn)(void *)(code + c->slot * SLOT))(c);
	BARRIER();
}

/* ---- unwinding from inside ---------------------------------------------------- */

enum { M_BACKTRACE, M_UNWIND, M_UNW_BACKTRACE, M_UNW_STEP, N_METHODS };
static const char *const method_name[N_METHODS] = { "backtrace", "_Unwind_Backtrace", "unw_backtrace",
						    "unw_step" };
static int n_methods = 2;

#ifdef HAVE_LIBUNWIND_H
static int (*lu_backtrace)(void **, int);
static int (*lu_getcontext)(unw_context_t *);
static int (*lu_init_local)(unw_cursor_t *, unw_context_t *);
static int (*lu_step)(unw_cursor_t *);
static int (*lu_get_reg)(unw_cursor_t *, unw_regnum_t, unw_word_t *);
#endif

static NOINLINE int take(int method, void **pcs)
{
	switch (method) {
	case M_BACKTRACE: return backtrace(pcs, MAX_PCS);
	case M_UNWIND: {
		struct ub_state s = { pcs, 0, MAX_PCS };
		_Unwind_Backtrace(ub_step, &s);
		return s.n;
	}
#ifdef HAVE_LIBUNWIND_H
	case M_UNW_BACKTRACE: return lu_backtrace(pcs, MAX_PCS);
	case M_UNW_STEP: {
		unw_context_t uc;
		unw_cursor_t cur;
		int n = 0;
		lu_getcontext(&uc);
		if (lu_init_local(&cur, &uc) < 0)
			return 0;
		do {
			unw_word_t ip;
			lu_get_reg(&cur, UNW_REG_IP, &ip);
			pcs[n++] = (void *)ip;
		} while (n < MAX_PCS && lu_step(&cur) > 0);
		return n;
	}
#endif
	default: return 0;
	}
}

static bool within(const void *ret, const void *lo, const void *hi)
{
	uintptr_t pc = (uintptr_t)ret - 1; /* a return address: the call is before it */
	return pc >= (uintptr_t)lo && pc < (uintptr_t)hi;
}

/* The frames from the blob outwards must be: blob, call_blob, caller_loop,
 * then at least the thread's start. */
static NOINLINE void callback(call *c)
{
	void *pcs[MAX_PCS];
	int n = take(c->method, pcs);
	const uint8_t *blob = code + c->slot * SLOT;
	int j = 1;
	while (j < n && !within(pcs[j], blob, blob + slots[c->slot].size))
		j++;
	if (j >= n) {
		snprintf(c->why, sizeof c->why, "the blob is missing (%d frames)", n);
		return;
	}
	if (j + 1 >= n || !within(pcs[j + 1], __start_ju_call_blob, __stop_ju_call_blob)) {
		snprintf(c->why, sizeof c->why, "frame %d after the blob is %p, not call_blob (%d frames)",
			 j + 1, j + 1 < n ? pcs[j + 1] : NULL, n);
		return;
	}
	if (j + 2 >= n || !within(pcs[j + 2], __start_ju_caller_loop, __stop_ju_caller_loop)) {
		snprintf(c->why, sizeof c->why, "frame %d is %p, not caller_loop (%d frames)", j + 2,
			 j + 2 < n ? pcs[j + 2] : NULL, n);
		return;
	}
	if (j + 3 >= n) {
		snprintf(c->why, sizeof c->why, "the walk stops at caller_loop");
		return;
	}
	c->ok = true;
	BARRIER();
}

/* ---- threads ------------------------------------------------------------------ */

static atomic_bool stop;
static atomic_long n_calls[N_METHODS], n_bad[N_METHODS], n_publishes, n_unpublishes, n_api_errors;
static atomic_long n_bad_pairs; /* (thread, slot) pairs where unw_backtrace missed */
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static int n_reported;

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void report(const char *fmt, const char *a, const char *b)
{
	pthread_mutex_lock(&report_lock);
	if (n_reported++ < 10)
		printf(fmt, a, b);
	pthread_mutex_unlock(&report_lock);
}

IN_SECTION("ju_caller_loop") void *caller_loop(void *arg)
{
	uint64_t seed = 0x1234567 + (uintptr_t)arg * 0x9e3779b97f4a7c15u;
	unsigned k = 0;
	bool missed_at[N_SLOTS] = { false }; /* unw_backtrace missed in this slot */
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		size_t i = next_rand(&seed) % N_SLOTS;
		if (pthread_rwlock_tryrdlock(&slots[i].lock))
			continue;
		if (slots[i].published) {
			call c = { .slot = i, .method = (int)(k++ % (unsigned)n_methods) };
			call_blob(&c);
			atomic_fetch_add(&n_calls[c.method], 1);
			if (!c.ok) {
				atomic_fetch_add(&n_bad[c.method], 1);
				if (c.method == M_UNW_BACKTRACE && !missed_at[i]) {
					missed_at[i] = true;
					atomic_fetch_add(&n_bad_pairs, 1);
				}
				report("incomplete %s: %s\n", method_name[c.method], c.why);
			}
		}
		pthread_rwlock_unlock(&slots[i].lock);
	}
	BARRIER();
	return NULL;
}

static void api_error(const char *what, int rc)
{
	atomic_fetch_add(&n_api_errors, 1);
	char msg[600];
	snprintf(msg, sizeof msg, "%s: %s", ju_strerror(rc), ju_errmsg());
	report("FAIL %s: %s\n", what, msg);
}

/* Lock up to `want` random slots for writing; flip each: the unpublished
 * ones are published as one batch, the published ones unpublished singly. */
static void flip_some(uint64_t *seed, size_t want)
{
	size_t held[64], n_held = 0;
	ju_blob batch[64];
	size_t n_batch = 0;
	for (size_t t = 0; t < want * 2 && n_held < want; t++) {
		size_t i = next_rand(seed) % N_SLOTS;
		if (pthread_rwlock_trywrlock(&slots[i].lock))
			continue;
		held[n_held++] = i;
		if (!slots[i].published)
			batch[n_batch++] = blob_of(i);
	}
	bool batch_ok = false;
	if (n_batch) {
		int rc = ju_publish_batch(ctx, batch, n_batch);
		if (rc)
			api_error("publish", rc);
		batch_ok = rc == 0;
		atomic_fetch_add(&n_publishes, (long)n_batch);
	}
	for (size_t k = 0; k < n_held; k++) {
		slot *s = &slots[held[k]];
		if (s->published) {
			int rc = ju_unpublish(ctx, code + held[k] * SLOT);
			if (rc)
				api_error("unpublish", rc);
			s->published = false;
			atomic_fetch_add(&n_unpublishes, 1);
		} else if (batch_ok) {
			s->published = true;
		}
		pthread_rwlock_unlock(&s->lock);
	}
}

static void *publisher(void *arg)
{
	uint64_t seed = 0xabcdef + (uintptr_t)arg * 0x9e3779b97f4a7c15u;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		uint64_t r = next_rand(&seed) % 100;
		flip_some(&seed, r < 60 ? 1 : r < 90 ? 8 : 48);
	}
	return NULL;
}

/* ---- a phase -------------------------------------------------------------------- */

static void sleep_seconds(double s)
{
	struct timespec t = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&t, &t))
		;
}

static void reset_counters(void)
{
	atomic_store(&stop, false);
	for (int m = 0; m < N_METHODS; m++) {
		atomic_store(&n_calls[m], 0);
		atomic_store(&n_bad[m], 0);
	}
	atomic_store(&n_publishes, 0);
	atomic_store(&n_unpublishes, 0);
	atomic_store(&n_api_errors, 0);
	atomic_store(&n_bad_pairs, 0);
}

/* One phase: open with `channels`, run the threads, check, unpublish all. */
static int run_phase(const char *name, uint32_t channels)
{
	reset_counters();
	ju_options o = { .sz = sizeof(ju_options), .channels = channels, .flags = JU_OPT_NO_ENV };
	int rc = ju_open(&o, &ctx);
	if (rc) {
		printf("FAIL %s: ju_open: %s: %s\n", name, ju_strerror(rc), ju_errmsg());
		return 1;
	}
	/* Start half published. */
	for (size_t i = 0; i < N_SLOTS; i += 2) {
		ju_blob b = blob_of(i);
		CHECK_RC(ju_publish(ctx, &b), 0);
		slots[i].published = true;
	}
	pthread_t th[N_CALLERS + N_PUBLISHERS];
	for (uintptr_t t = 0; t < N_CALLERS; t++)
		pthread_create(&th[t], NULL, caller_loop, (void *)t);
	for (uintptr_t t = 0; t < N_PUBLISHERS; t++)
		pthread_create(&th[N_CALLERS + t], NULL, publisher, (void *)t);
	sleep_seconds(PHASE_SECONDS);
	atomic_store(&stop, true);
	for (size_t t = 0; t < N_CALLERS + N_PUBLISHERS; t++)
		pthread_join(th[t], NULL);

	printf("%s: %ld blobs published, %ld unpublished, %zu arenas at the end\n", name,
	       atomic_load(&n_publishes), atomic_load(&n_unpublishes), ctx->n_arenas);
	for (int m = 0; m < n_methods; m++) {
		long calls = atomic_load(&n_calls[m]), bad = atomic_load(&n_bad[m]);
		printf("%s: %-18s %7ld backtraces from inside a blob, %ld incomplete", name, method_name[m],
		       calls, bad);
		if (m == M_UNW_BACKTRACE) {
			bad = atomic_load(&n_bad_pairs);
			printf(" (in %ld thread-slot pairs)", bad);
		}
		printf("\n");
		long allowed = m < M_UNW_BACKTRACE ? 0 : calls / LIBUNWIND_MISS_LIMIT;
		CHECK(calls > 0, "%s: no backtraces with %s", name, method_name[m]);
		CHECK(bad <= allowed, "%s: %ld%s of %ld backtraces with %s were incomplete (%ld allowed)",
		      name, bad, m == M_UNW_BACKTRACE ? " thread-slot pairs" : "", calls, method_name[m],
		      allowed);
	}
	CHECK(atomic_load(&n_api_errors) == 0, "%s: %ld publish/unpublish calls failed", name,
	      atomic_load(&n_api_errors));
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
	for (size_t i = 0; i < N_SLOTS; i++)
		slots[i].published = false;
	return unit_failures ? 1 : 0;
}

/* The libunwind phase, in a child process so that loading libunwind cannot
 * change which unwinder the other phases measure. */
static int libunwind_phase(void)
{
#ifdef HAVE_LIBUNWIND_H
	if (!dlopen("libunwind.so.8", RTLD_NOW | RTLD_GLOBAL)) {
		printf("note: nongnu libunwind is not loadable; its phase is skipped\n");
		return 0;
	}
	lu_backtrace = (int (*)(void **, int))dlsym(RTLD_DEFAULT, "unw_backtrace");
	lu_getcontext = (int (*)(unw_context_t *))dlsym(RTLD_DEFAULT, "_Ux86_64_getcontext");
	lu_init_local = (int (*)(unw_cursor_t *, unw_context_t *))dlsym(RTLD_DEFAULT, "_ULx86_64_init_local");
	lu_step = (int (*)(unw_cursor_t *))dlsym(RTLD_DEFAULT, "_ULx86_64_step");
	lu_get_reg =
		(int (*)(unw_cursor_t *, unw_regnum_t, unw_word_t *))dlsym(RTLD_DEFAULT, "_ULx86_64_get_reg");
	if (!lu_backtrace || !lu_getcontext || !lu_init_local || !lu_step || !lu_get_reg) {
		printf("FAIL: libunwind.so.8 lacks the functions this test calls\n");
		return 1;
	}
	n_methods = N_METHODS;
	return run_phase("libunwind+libgcc", JU_CH_UNWINDER | JU_CH_LIBUNWIND);
#else
	printf("note: built without libunwind.h; the libunwind phase is skipped\n");
	return 0;
#endif
}

int main(void)
{
#ifndef __x86_64__
	UNIT_SKIP("the blobs are x86-64 code");
#endif
	mallopt(M_PERTURB, 0xa5);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (make_code())
		UNIT_SKIP("cannot map executable memory");
	pid_t pid = fork();
	if (pid == 0) /* exit, not _exit: LeakSanitizer checks this process too */
		exit(libunwind_phase());
	int st = 0;
	int lu_failed = pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st);
	if (lu_failed)
		printf("FAIL: the libunwind phase %s %d\n", WIFSIGNALED(st) ? "died of signal" : "exited",
		       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	CHECK(!lu_failed, "libunwind phase");
	run_phase("libgcc", JU_CH_UNWINDER);
	/* With the gdb channel on too: its entries share the arenas' images and
	 * grace period, so retired images outlive descheduled unwinders. */
	run_phase("libgcc+gdb", JU_CH_UNWINDER | JU_CH_GDB);
	return unit_done("backtraces_through_jit_code_stay_complete_while_other_threads_publish");
}
