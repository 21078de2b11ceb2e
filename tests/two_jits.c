/* SPDX-License-Identifier: MIT */
/* two_jits.c - libjitunwind beside a second JIT that implements the GDB JIT
 * interface itself, the way LLVM ORC does (second_jit.c): the program links
 * the static library and the second JIT's own strong definitions of
 * __jit_debug_descriptor and __jit_debug_register_code.
 *
 * Two threads churn for a while, each JIT under its own lock: one publishes
 * and unpublishes blobs through libjitunwind ("ju:f<slot>"), the other
 * registers and unregisters functions through the second JIT
 * ("orc:f<slot>").  Then both stop, the program writes every function still
 * live to the expect file ("0xADDR NAME" per line), prints "ready PID" and
 * waits to be killed, so that gdb, lldb and jitstack can be asked for the
 * name at each address.
 *
 * Usage: two_jits [--seconds S] [--sequential] [--expect FILE]; exit 2 on
 * setup errors.  --sequential runs the second JIT's churn first, then ours.
 * Built as two-jits-shared it links libjitunwind.so and a second JIT that
 * defines no descriptor: the dynamic linker binds its references to the
 * library's, and it writes that list without the sequence lock.
 */
#include "jitunwind.h"
#include "second_jit.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { SLOTS = 512, SLOT = 64, JU_LIVE = 120, ORC_LIVE = 60 };

static double seconds = 1;
static bool sequential;
static ju_ctx *ctx;
static uint8_t *ju_code, *orc_code;
static bool ju_live[SLOTS];
static char ju_names[SLOTS][16];
static second_fn orc_fns[SLOTS];
static char orc_names[SLOTS][16];
static char gdb_mode[200];
static atomic_int failures;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static void on_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	if (!strncmp(msg, "gdb channel:", 12))
		snprintf(gdb_mode, sizeof gdb_mode, "%s", msg);
	if (strstr(msg, "without its sequence lock"))
		printf("%s\n", msg);
}

static unsigned next_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void *ju_thread(void *arg)
{
	(void)arg;
	unsigned seed = 1;
	size_t live = 0;
	for (double end = now() + seconds; now() < end;) {
		size_t i = next_rand(&seed) % SLOTS;
		if (!ju_live[i] && live < JU_LIVE) {
			ju_blob b = { .sz = sizeof(ju_blob),
				      .start = ju_code + i * SLOT,
				      .size = 16,
				      .name = ju_names[i],
				      .frame = { .kind = JU_FRAME_LEAF } };
			int rc = ju_publish(ctx, &b);
			if (rc) {
				fprintf(stderr, "ju_publish %s: %s\n", ju_names[i], ju_errmsg());
				failures++;
				break;
			}
			ju_live[i] = true;
			live++;
		} else if (ju_live[i]) {
			if (ju_unpublish(ctx, ju_code + i * SLOT)) {
				fprintf(stderr, "ju_unpublish %s: %s\n", ju_names[i], ju_errmsg());
				failures++;
				break;
			}
			ju_live[i] = false;
			live--;
		}
	}
	return NULL;
}

static void *orc_thread(void *arg)
{
	(void)arg;
	unsigned seed = 2;
	size_t live = 0;
	for (double end = now() + seconds; now() < end;) {
		size_t i = next_rand(&seed) % SLOTS;
		second_fn *f = &orc_fns[i];
		if (!f->entry && live < ORC_LIVE) {
			*f = (second_fn){ .code = orc_code + i * SLOT, .size = 16, .name = orc_names[i] };
			if (second_jit_register(f)) {
				failures++;
				break;
			}
			live++;
		} else if (f->entry) {
			second_jit_unregister(f);
			live--;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *expect = "two-jits.expect";
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--expect") && i + 1 < argc)
			expect = argv[++i];
		else if (!strcmp(argv[i], "--sequential"))
			sequential = true;
		else if (strcmp(argv[i], "wait"))
			return fprintf(stderr,
				       "usage: two_jits [wait] [--seconds S] [--sequential] [--expect FILE]\n"),
			       2;
	}
	ju_code = mmap(NULL, SLOTS * SLOT, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	orc_code = mmap(NULL, SLOTS * SLOT, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ju_code == MAP_FAILED || orc_code == MAP_FAILED)
		return perror("mmap"), 2;
	for (size_t i = 0; i < SLOTS; i++) {
		snprintf(ju_names[i], sizeof ju_names[i], "ju:f%zu", i);
		snprintf(orc_names[i], sizeof orc_names[i], "orc:f%zu", i);
	}
	ju_options o = {
		.sz = sizeof(ju_options), .channels = JU_CH_GDB, .flags = JU_OPT_NO_ENV, .log = on_log
	};
	if (ju_open(&o, &ctx))
		return fprintf(stderr, "ju_open: %s\n", ju_errmsg()), 2;
	printf("%s\n", gdb_mode);
	if (sequential) { /* one JIT at a time; ours last, so it sees the other's entries */
		orc_thread(NULL);
		ju_thread(NULL);
	} else {
		pthread_t a, b;
		pthread_create(&a, NULL, ju_thread, NULL);
		pthread_create(&b, NULL, orc_thread, NULL);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
	}
	if (failures)
		return 2;

	FILE *f = fopen(expect, "w");
	if (!f)
		return perror(expect), 2;
	size_t n_ju = 0, n_orc = 0;
	for (size_t i = 0; i < SLOTS; i++) {
		if (ju_live[i])
			fprintf(f, "%p %s\n", (void *)(ju_code + i * SLOT), ju_names[i]), n_ju++;
		if (orc_fns[i].entry)
			fprintf(f, "%p %s\n", (void *)(orc_code + i * SLOT), orc_names[i]), n_orc++;
	}
	fclose(f);
	/* Every one of the second JIT's entries, and ours behind them. */
	size_t listed = second_jit_list_length();
	printf("%zu libjitunwind blobs and %zu second-JIT functions live; %zu entries on the list\n", n_ju,
	       n_orc, listed);
	if (listed < n_orc + 1)
		return fprintf(stderr, "the list lost entries\n"), 1;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
