/* SPDX-License-Identifier: MIT */
/* scalejit.c - a JIT process of a given size, for `make bench-scale` and
 * jitstack's scale tests: N functions of code published through the
 * library, then the main thread parks under one of them.
 *
 *   scalejit gdb N       the default channels (GDB images of 64 blobs)
 *   scalejit perfmap N   the perf map alone (N lines)
 *   scalejit jitdump N   the jitdump alone, in the working directory
 *   scalejit none N      nothing published (a stack with no JIT frame)
 *   scalejit late N      the default channels; then, 0.5 s after "ready",
 *                        one more function, late_fn, is published and the
 *                        main thread spins under it for 3 s, and exits
 *   scalejit spin N      the default channels; the main thread spins under
 *                        scale_fn_K until killed (for record)
 *   scalejit spin-perfmap N, spin-jitdump N   the same, published through the
 *                        perf map alone or the jitdump alone
 *   scalejit threads N   nothing published; N - 1 more threads, each parked
 *                        in hold <- park_thread (a dump of many threads)
 *
 * The stack (innermost first): hold <- scale_fn_K <- park <- main, K =
 * N / 2.  Prints "ready PID ADDRESS-OF-K" once everything is published and
 * waits until killed.
 */
#include "jitunwind.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, used))
#define SLOT 32 /* bytes of code per function */

NOINLINE void hold(void)
{
	for (;;)
		pause();
}

static uint64_t callee; /* what the functions emitted call: hold, or spin */

/* A frame-pointer function that calls callee through an absolute address. */
static void emit(uint8_t *p)
{
	uint64_t t = callee;
#if defined(__x86_64__)
	/* push %rbp; mov %rsp,%rbp; movabs $hold,%rax; call *%rax; pop %rbp; ret */
	uint8_t b[18] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8 };
	memcpy(b + 6, &t, 8);
	b[14] = 0xff, b[15] = 0xd0, b[16] = 0x5d, b[17] = 0xc3;
	memset(p, 0xcc, SLOT);
	memcpy(p, b, sizeof b);
#elif defined(__aarch64__)
	/* stp x29,x30,[sp,#-16]!; mov x29,sp; ldr x16,lit; blr x16;
	 * ldp x29,x30,[sp],#16; ret; lit: .quad hold */
	uint32_t w[6] = { 0xa9bf7bfd, 0x910003fd, 0x58000090, 0xd63f0200, 0xa8c17bfd, 0xd65f03c0 };
	memcpy(p, w, sizeof w);
	memcpy(p + 24, &t, 8);
#else
#error "x86-64 and AArch64 only"
#endif
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static double spin_s = 3; /* how long spin spins */

NOINLINE void spin(void)
{
	volatile uint64_t x = 0;
	for (double end = now() + spin_s; now() < end;)
		for (int i = 0; i < 10000; i++)
			x += (uint64_t)i * 2654435761u;
}

NOINLINE void park(void (*fn)(void))
{
	fn();
	__asm__ volatile("");
}

NOINLINE static void *park_thread(void *arg)
{
	(void)arg;
	hold();
	return NULL;
}

/* n - 1 threads besides main, on small stacks (10k of them fit). */
static int start_threads(size_t n)
{
	pthread_attr_t a;
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 64 << 10);
	for (size_t i = 1; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, &a, park_thread, NULL)) {
			fprintf(stderr, "scalejit: thread %zu not started\n", i);
			return -1;
		}
	}
	pthread_attr_destroy(&a);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr,
			"usage: scalejit gdb|perfmap|jitdump|none|late|spin[-perfmap|-jitdump]|threads N\n");
		return 2;
	}
	const char *via = argv[1];
	size_t n = strtoul(argv[2], NULL, 0);
	if (n < 1)
		n = 1;
	const char *dash = strchr(via, '-'), *chan = dash ? dash + 1 : via;
	uint32_t ch = !strcmp(chan, "perfmap") ? JU_CH_PERFMAP : !strcmp(chan, "jitdump") ? JU_CH_JITDUMP : 0;
	bool late = !strcmp(via, "late"), spinning = !strncmp(via, "spin", 4),
	     threads = !strcmp(via, "threads");
	if (threads) {
		if (start_threads(n))
			return 2;
		printf("ready %d %p\n", (int)getpid(), (void *)hold);
		fflush(stdout);
		park_thread(NULL);
	}
	uint8_t *code = mmap(NULL, (n + 1) * SLOT, PROT_READ | PROT_WRITE | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 2;
	callee = spinning ? (uintptr_t)spin : (uintptr_t)hold;
	if (spinning)
		spin_s = 1e9;
	for (size_t i = 0; i < n; i++)
		emit(code + i * SLOT);
	__builtin___clear_cache((char *)code, (char *)code + n * SLOT);
	ju_ctx *ctx = NULL;
	ju_options o = {
		.sz = sizeof(ju_options), .channels = ch, .flags = JU_OPT_NO_ENV, .jitdump_dir = "."
	};
	if (strcmp(via, "none") && ju_open(&o, &ctx)) {
		fprintf(stderr, "scalejit: ju_open failed\n");
		return 2;
	}
	enum { BATCH = 64 };
	static char names[BATCH][32];
	ju_blob b[BATCH];
	for (size_t i = 0; ctx && i < n; i += BATCH) {
		size_t k = n - i < BATCH ? n - i : BATCH;
		for (size_t j = 0; j < k; j++) {
			snprintf(names[j], sizeof names[j], "scale_fn_%zu", i + j);
			b[j] = (ju_blob){ .sz = sizeof(ju_blob),
					  .start = code + (i + j) * SLOT,
					  .size = SLOT,
					  .name = names[j],
					  .frame = { .kind = JU_FRAME_FP, .u.fp = { 1, 4, NULL, 0 } } };
#if defined(__aarch64__)
			b[j].frame.u.fp.push_end = 4, b[j].frame.u.fp.set_end = 8;
#endif
		}
		if (ju_publish_batch(ctx, b, k)) {
			fprintf(stderr, "scalejit: publishing failed at %zu\n", i);
			return 2;
		}
	}
	uint8_t *mid = code + (n / 2) * SLOT;
	printf("ready %d %p\n", (int)getpid(), (void *)mid);
	fflush(stdout);
	if (late) {
		struct timespec half = { 0, 500000000 };
		nanosleep(&half, NULL);
		uint8_t *at = code + n * SLOT;
		callee = (uintptr_t)spin;
		emit(at);
		__builtin___clear_cache((char *)at, (char *)at + SLOT);
		b[0] = (ju_blob){ .sz = sizeof(ju_blob),
				  .start = at,
				  .size = SLOT,
				  .name = "late_fn",
				  .frame = { .kind = JU_FRAME_FP, .u.fp = { 1, 4, NULL, 0 } } };
#if defined(__aarch64__)
		b[0].frame.u.fp.push_end = 4, b[0].frame.u.fp.set_end = 8;
#endif
		if (ju_publish(ctx, &b[0]))
			return 2;
		park((void (*)(void))(void *)at);
		ju_unpublish_all(ctx);
		ju_close(ctx);
		return 0;
	}
	park((void (*)(void))(void *)mid);
	return 0;
}
