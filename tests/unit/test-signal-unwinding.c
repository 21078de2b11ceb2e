/* SPDX-License-Identifier: MIT */
/* test-signal-unwinding.c - an in-process sampling profiler: a 1 kHz
 * ITIMER_PROF handler unwinds whichever thread it lands in while two threads
 * publish and unpublish, and nothing deadlocks and no stack is torn.
 *
 *   test-signal-unwinding unw [SECONDS]
 *       the handler calls nongnu libunwind's unw_backtrace; the publishers
 *       churn freely: freed places reused, blobs moved inside a freed
 *       place, places left free and filled, batches; so arenas are
 *       rebuilt, split and merged meanwhile;
 *   test-signal-unwinding backtrace [SECONDS]
 *       the handler calls glibc's backtrace() (libgcc), under the rules of
 *       docs/API.md ("Unwinding from signal handlers"): backtrace() called
 *       once before the handler is installed, and churn that reuses freed
 *       places (nothing is registered or deregistered with libgcc while the
 *       handler may run).  JU_SIGNAL_FREE_CHURN=1 churns freely here too,
 *       outside the rules.
 *
 * Two runner threads execute real JIT code: runner_loop -> enter -> an
 * outer blob (frame pointer) -> c_between -> an inner blob (raw CFI, no
 * frame pointer) -> on_top, which spins.  A sample that lands in a runner
 * must show, from the first of those frames it meets, every frame below it
 * down to runner_loop, in order: otherwise the stack is torn.  Samples that
 * land elsewhere (a publisher, inside the library or malloc) need only
 * finish.  A watchdog fails the test when no sample finishes for 10 s: a
 * deadlock (the stuck threads' stacks are then in a core or gdb, not here).
 * The duration comes from SECONDS, else JU_SIGNAL_SECONDS, else 60 (unw)
 * and 20 (backtrace); `make stress` runs 600 each.  Without arguments both
 * run, each in a process of its own.
 */
#define UNW_LOCAL_ONLY
#include "jitunwind.h"
#include "unit.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <libunwind.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BARRIER() __asm__ volatile("" ::: "memory")
#define IN_SECTION(name) __attribute__((noinline, section(name)))

enum {
	N_SLOTS = 1024,
	SLOT = 64,
	N_RUNNERS = 2,
	N_PUBLISHERS = 2,
	MAX_PCS = 64,
	BATCH = 8,
};

enum { M_UNW, M_BACKTRACE };
static int method;
/* glibc's backtrace(): nongnu libunwind, linked for unw_backtrace, exports a
 * backtrace() of its own that the plain name would bind to. */
static int (*glibc_backtrace)(void **, int);
static bool free_churn; /* every kind of change, or only reuse of freed places */

static uint8_t *code;
static ju_ctx *ctx;
/* Slots 0 and 1 hold the runners' outer and inner blobs; the others churn. */
static uint32_t outer_size, inner_size;
static ju_range outer_epilogue;
static uint8_t inner_insns[8];
static ju_cfi_range inner_cfi;

static uint8_t *slot_at(size_t s)
{
	return code + s * SLOT;
}

void c_between(void);
void on_top(void);

static size_t emit_call(uint8_t *p, void (*target)(void))
{
	uint64_t t = (uintptr_t)target;
	p[0] = 0x48, p[1] = 0xb8; /* movabs $target, %rax */
	memcpy(p + 2, &t, 8);
	p[10] = 0xff, p[11] = 0xd0; /* call *%rax */
	return 12;
}

static int make_code(void)
{
	code = mmap(NULL, N_SLOTS * SLOT, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return -1;
	memset(code, 0xcc, N_SLOTS * SLOT); /* int3: churned blobs never run */
	uint8_t *p = slot_at(0);            /* push %rbp; mov %rsp,%rbp; call c_between; pop %rbp; ret */
	size_t n = 0;
	p[n++] = 0x55;
	p[n++] = 0x48, p[n++] = 0x89, p[n++] = 0xe5;
	n += emit_call(p + n, c_between);
	p[n++] = 0x5d;
	outer_epilogue = (ju_range){ (uint32_t)n, (uint32_t)n + 1 };
	p[n++] = 0xc3;
	outer_size = (uint32_t)n;
	p = slot_at(1); /* sub $24,%rsp; call on_top; add $24,%rsp; ret */
	n = 0;
	p[n++] = 0x48, p[n++] = 0x83, p[n++] = 0xec, p[n++] = 24;
	size_t after_sub = n;
	n += emit_call(p + n, on_top);
	p[n++] = 0x48, p[n++] = 0x83, p[n++] = 0xc4, p[n++] = 24;
	size_t after_add = n;
	p[n++] = 0xc3;
	inner_size = (uint32_t)n;
	uint8_t *k = inner_insns;
	k[0] = 0x40 | (uint8_t)after_sub;               /* DW_CFA_advance_loc */
	k[1] = 0x0e, k[2] = 32;                         /* DW_CFA_def_cfa_offset 32 */
	k[3] = 0x40 | (uint8_t)(after_add - after_sub); /* DW_CFA_advance_loc */
	k[4] = 0x0e, k[5] = 8;                          /* DW_CFA_def_cfa_offset 8 */
	inner_cfi = (ju_cfi_range){ 0, inner_size, inner_insns, 6 };
	__builtin___clear_cache((char *)code, (char *)code + N_SLOTS * SLOT);
	return mprotect(code, N_SLOTS * SLOT, PROT_READ | PROT_EXEC);
}

/* ---- the runners --------------------------------------------------------- */

static atomic_int stop;
static _Thread_local volatile int running; /* this thread is a runner */

IN_SECTION("ju_on_top") void on_top(void)
{
	for (volatile int i = 0; i < 20000; i++)
		;
}

IN_SECTION("ju_c_between") void c_between(void)
{
	((void (*)(void))(void *)slot_at(1))();
	BARRIER();
}

IN_SECTION("ju_enter") void enter(void)
{
	((void (*)(void))(void *)slot_at(0))();
	BARRIER();
}

IN_SECTION("ju_runner_loop") void *runner_loop(void *arg)
{
	(void)arg;
	running = 1;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		enter();
	running = 0;
	return NULL;
}

extern const uint8_t __start_ju_on_top[], __stop_ju_on_top[];
extern const uint8_t __start_ju_c_between[], __stop_ju_c_between[];
extern const uint8_t __start_ju_enter[], __stop_ju_enter[];
extern const uint8_t __start_ju_runner_loop[], __stop_ju_runner_loop[];

/* ---- the handler ----------------------------------------------------------- */

static atomic_long n_samples, n_runner_samples, n_torn, n_deep;
static atomic_long torn_where[8];

/* Which frame of the runner's chain pc is in: 0 on_top .. 5 runner_loop, or
 * -1.  Return addresses point after their call. */
static int chain_index(uintptr_t pc, bool ret)
{
	uintptr_t at = pc - (ret ? 1 : 0);
	const struct {
		const void *lo, *hi;
	} chain[] = {
		{ __start_ju_on_top, __stop_ju_on_top },
		{ slot_at(1), slot_at(1) + inner_size },
		{ __start_ju_c_between, __stop_ju_c_between },
		{ slot_at(0), slot_at(0) + outer_size },
		{ __start_ju_enter, __stop_ju_enter },
		{ __start_ju_runner_loop, __stop_ju_runner_loop },
	};
	for (int i = 0; i < 6; i++)
		if (at >= (uintptr_t)chain[i].lo && at < (uintptr_t)chain[i].hi)
			return i;
	return -1;
}

static void on_prof(int sig)
{
	(void)sig;
	int saved = errno;
	void *pcs[MAX_PCS];
	int n = method == M_UNW ? unw_backtrace(pcs, MAX_PCS) : glibc_backtrace(pcs, MAX_PCS);
	atomic_fetch_add_explicit(&n_samples, 1, memory_order_relaxed);
	if (running) {
		atomic_fetch_add_explicit(&n_runner_samples, 1, memory_order_relaxed);
		/* The interrupted frame is the first one in the chain; it and
		 * every frame after it must follow the chain down to runner_loop. */
		int i = 0, want = -1;
		while (i < n && (want = chain_index((uintptr_t)pcs[i], false)) < 0)
			i++;
		bool ok = i < n;
		int first = want;
		for (; ok && want < 5; want++) {
			i++;
			ok = i < n && chain_index((uintptr_t)pcs[i], true) == want + 1;
		}
		if (!ok) {
			atomic_fetch_add_explicit(&n_torn, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&torn_where[first < 0 ? 6 : first], 1,
						  memory_order_relaxed);
		} else if (first <= 1) {
			atomic_fetch_add_explicit(&n_deep, 1, memory_order_relaxed);
		}
	}
	errno = saved;
}

/* ---- the publishers ------------------------------------------------------- */

typedef struct publisher {
	uint64_t seed;
	size_t first; /* it owns slots first, first + N_PUBLISHERS, ... */
	bool live[N_SLOTS];
	uint8_t off[N_SLOTS]; /* where its blob starts in the slot */
	long changes;
} publisher;

static publisher pubs[N_PUBLISHERS];
static atomic_long n_changes, n_api_errors;

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static ju_blob churn_blob(size_t s, uint8_t off)
{
	return (ju_blob){ .sz = sizeof(ju_blob),
			  .start = slot_at(s) + off,
			  .size = 32u - off,
			  .name = "churn",
			  .frame = { .kind = JU_FRAME_LEAF } };
}

static void api_error(const char *what, int rc)
{
	if (atomic_fetch_add(&n_api_errors, 1) < 5)
		fprintf(stderr, "%s: %s: %s\n", what, ju_strerror(rc), ju_errmsg());
}

static void change(publisher *p)
{
	size_t k = next_rand(&p->seed) % (N_SLOTS / N_PUBLISHERS - 1);
	size_t s = 2 + p->first + k * N_PUBLISHERS;
	if (s >= N_SLOTS)
		return;
	uint64_t r = next_rand(&p->seed) % 100;
	int rc;
	if (free_churn && r < 10) { /* a batch: unpublish some, publish them elsewhere in their places */
		const void *starts[BATCH];
		ju_blob b[BATCH];
		size_t m = 0;
		for (size_t i = 0; i < BATCH; i++) {
			size_t t = s + i * N_PUBLISHERS;
			if (t < N_SLOTS && p->live[t]) {
				starts[m] = slot_at(t) + p->off[t];
				p->off[t] = (uint8_t)(next_rand(&p->seed) % 3 * 8);
				b[m++] = churn_blob(t, p->off[t]);
			}
		}
		if ((rc = ju_unpublish_batch(ctx, starts, m)))
			return api_error("ju_unpublish_batch", rc);
		if ((rc = ju_publish_batch(ctx, b, m)))
			return api_error("ju_publish_batch", rc);
	} else if (free_churn && r < 30) { /* leave a place free, or fill one */
		if (p->live[s]) {
			if ((rc = ju_unpublish(ctx, slot_at(s) + p->off[s])))
				return api_error("ju_unpublish", rc);
			p->live[s] = false;
		} else {
			p->off[s] = (uint8_t)(next_rand(&p->seed) % 3 * 8);
			ju_blob b = churn_blob(s, p->off[s]);
			if ((rc = ju_publish(ctx, &b)))
				return api_error("ju_publish", rc);
			p->live[s] = true;
		}
	} else if (p->live[s]) { /* the freed place reused at once */
		if ((rc = ju_unpublish(ctx, slot_at(s) + p->off[s])))
			return api_error("ju_unpublish", rc);
		if (free_churn)
			p->off[s] = (uint8_t)(next_rand(&p->seed) % 3 * 8);
		ju_blob b = churn_blob(s, p->off[s]);
		if ((rc = ju_publish(ctx, &b)))
			return api_error("ju_publish", rc);
	}
	p->changes++;
	atomic_fetch_add_explicit(&n_changes, 1, memory_order_relaxed);
}

static void *publisher_loop(void *arg)
{
	publisher *p = arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		change(p);
	return NULL;
}

/* Everything in one batch: the runners' blobs and every churned slot. */
static int publish_all(void)
{
	static ju_blob all[N_SLOTS];
	size_t n = 0;
	all[n++] = (ju_blob){ .sz = sizeof(ju_blob),
			      .start = slot_at(0),
			      .size = outer_size,
			      .name = "outer",
			      .frame = { .kind = JU_FRAME_FP, .u.fp = { 1, 4, &outer_epilogue, 1 } } };
	all[n++] = (ju_blob){ .sz = sizeof(ju_blob),
			      .start = slot_at(1),
			      .size = inner_size,
			      .name = "inner",
			      .frame = { .kind = JU_FRAME_CFI, .u.cfi = { &inner_cfi, 1 } } };
	for (size_t s = 2; s < N_SLOTS; s++) {
		publisher *p = &pubs[(s - 2) % N_PUBLISHERS];
		p->live[s] = true;
		all[n++] = churn_blob(s, 0);
	}
	return ju_publish_batch(ctx, all, n);
}

/* ---- the run -------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int run(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "unw";
	method = strcmp(mode, "backtrace") ? M_UNW : M_BACKTRACE;
	const char *fc = getenv("JU_SIGNAL_FREE_CHURN");
	free_churn = method == M_UNW || (fc && !strcmp(fc, "1"));
	double seconds = method == M_UNW ? 60 : 20;
	const char *env = getenv("JU_SIGNAL_SECONDS");
	if (argc > 2)
		seconds = atof(argv[2]);
	else if (env && *env)
		seconds = atof(env);
	if (!(seconds > 0))
		UNIT_SKIP("JU_SIGNAL_SECONDS=%s is not a positive number of seconds", env);
	CHECK(make_code() == 0, "code region: %s", strerror(errno));

	ju_options o = { .sz = sizeof(ju_options),
			 .channels = method == M_UNW ? JU_CH_LIBUNWIND | JU_CH_UNWINDER : JU_CH_UNWINDER,
			 .flags = JU_OPT_NO_ENV | JU_OPT_STRICT };
	CHECK_RC(ju_open(&o, &ctx), 0);
	for (size_t t = 0; t < N_PUBLISHERS; t++)
		pubs[t] = (publisher){ .seed = 0x5eed + t * 0x9e3779b97f4a7c15u, .first = t };
	CHECK_RC(publish_all(), 0);

	/* The documented rule for backtrace(): glibc loads libgcc_s at its first
	 * call, which must not be in a handler. */
	void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	glibc_backtrace = libc ? (int (*)(void **, int))dlsym(libc, "backtrace") : NULL;
	CHECK(glibc_backtrace != NULL, "glibc's backtrace: %s", dlerror());
	if (!glibc_backtrace)
		return unit_done("test-signal-unwinding");
	void *warm[4];
	glibc_backtrace(warm, 4);
	struct sigaction sa = { .sa_handler = on_prof, .sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, NULL);
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	setitimer(ITIMER_PROF, &it, NULL);

	pthread_t th[N_RUNNERS + N_PUBLISHERS];
	size_t n_th = 0;
	for (size_t t = 0; t < N_RUNNERS; t++)
		n_th += pthread_create(&th[n_th], NULL, runner_loop, NULL) == 0;
	for (size_t t = 0; t < N_PUBLISHERS; t++)
		n_th += pthread_create(&th[n_th], NULL, publisher_loop, &pubs[t]) == 0;
	CHECK(n_th == N_RUNNERS + N_PUBLISHERS, "pthread_create: %zu of %d threads", n_th,
	      N_RUNNERS + N_PUBLISHERS);

	double t0 = now_s(), last_progress = t0;
	long last_samples = 0, last_changes = 0;
	while (now_s() - t0 < seconds) {
		struct timespec nap = { 0, 100 * 1000 * 1000 };
		nanosleep(&nap, NULL);
		long s = atomic_load(&n_samples), c = atomic_load(&n_changes);
		if (s != last_samples && c != last_changes) {
			last_progress = now_s();
			last_samples = s;
			last_changes = c;
		}
		if (now_s() - last_progress > 10) {
			fprintf(stderr,
				"FAIL deadlock: no sample and no change finished for 10 s "
				"(%ld samples, %ld changes)\n",
				s, c);
			_exit(1); /* the stuck threads cannot be joined */
		}
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_PROF, &off, NULL);
	atomic_store(&stop, 1);
	for (size_t t = 0; t < n_th; t++)
		pthread_join(th[t], NULL);

	long samples = atomic_load(&n_samples), runner = atomic_load(&n_runner_samples);
	long torn = atomic_load(&n_torn), deep = atomic_load(&n_deep), changes = atomic_load(&n_changes);
	printf("%s: %.0f s, %ld samples (%ld in runners, %ld of them in a JIT frame or above it), "
	       "%ld changes by %d publishers, %ld torn\n",
	       mode, seconds, samples, runner, deep, changes, N_PUBLISHERS, torn);
	if (torn)
		printf("  torn from: on_top %ld, inner %ld, c_between %ld, outer %ld, enter %ld, "
		       "runner_loop %ld, no chain frame %ld\n",
		       atomic_load(&torn_where[0]), atomic_load(&torn_where[1]), atomic_load(&torn_where[2]),
		       atomic_load(&torn_where[3]), atomic_load(&torn_where[4]), atomic_load(&torn_where[5]),
		       atomic_load(&torn_where[6]));
	CHECK(torn == 0, "%ld of %ld samples in runners had a torn stack", torn, runner);
	CHECK(runner > 100 && deep > 50, "too few samples in the runners (%ld, %ld in JIT frames)", runner,
	      deep);
	CHECK(changes > 1000, "too few changes while sampling (%ld)", changes);
	CHECK(atomic_load(&n_api_errors) == 0, "%ld library calls failed", atomic_load(&n_api_errors));
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
	return unit_done(method == M_UNW ? "test-signal-unwinding unw" : "test-signal-unwinding backtrace");
}

int main(int argc, char **argv)
{
	if (argc > 1)
		return run(argc, argv);
	/* both, one process each: a deadlock in one still lets the other report */
	static const char *const modes[] = { "unw", "backtrace" };
	int failed = 0;
	for (size_t i = 0; i < 2; i++) {
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			char *args[] = { argv[0], (char *)modes[i], NULL };
			_exit(run(2, args));
		}
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			printf("FAIL %s: %s\n", modes[i], pid < 0 ? "fork failed" : "the run failed");
			failed = 1;
		}
	}
	return failed;
}
