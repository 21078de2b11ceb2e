/* SPDX-License-Identifier: MIT */
/* churnjit.c - a JIT that keeps replacing its code while it runs, for
 * `jitstack record`: generation N publishes a blob named gen:N at the SAME
 * address as the previous generation, runs in it (the blob calls spin(),
 * a C loop) for about 50 ms, and unpublishes it.  A profiler that kept
 * stale names or images would attribute later generations to gen:0.
 * Runs for SECS seconds (default 3); prints "ready PID" at the start.
 * It publishes through the GDB JIT interface, or with `churnjit SECS
 * perfmap` through the perf map alone (each generation's line appended), or
 * with `churnjit SECS jitdump` through a jitdump alone, in the working
 * directory (each generation's records appended).
 * With `churnjit SECS late` each generation runs 5 ms before it is
 * published (from inside spin()), as a JIT that registers code lazily.
 *
 * `churnjit edge FILE` maps FILE's first page and, right after it, a page
 * of code that loops on its first byte, unpublished: the pc is where FILE's
 * mapping ends, in no module, though libdwfl's dwfl_addrmodule answers with
 * the module that ends there.
 */
#include "jitunwind.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, used))

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static ju_ctx *late_ctx;
static ju_blob *late_blob; /* published once spin() has run LATE_S */
#define LATE_S 0.005

NOINLINE void spin(void)
{
	double start = now(), end = start + 0.05;
	volatile uint64_t x = 0;
	while (now() < end) {
		for (int i = 0; i < 10000; i++)
			x += (uint64_t)i * 2654435761u;
		if (late_blob && now() >= start + LATE_S) {
			if (ju_publish(late_ctx, late_blob))
				exit(2);
			late_blob = NULL;
		}
	}
}

/* push %rbp; mov %rsp,%rbp; movabs $spin,%rax; call *%rax; pop %rbp; ret */
static size_t emit(uint8_t *p)
{
	uint8_t b[18] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8 };
	uint64_t t = (uintptr_t)spin;
	memcpy(b + 6, &t, 8);
	b[14] = 0xff, b[15] = 0xd0, b[16] = 0x5d, b[17] = 0xc3;
	memcpy(p, b, sizeof b);
	return sizeof b;
}

static int edge(const char *file)
{
	uint8_t *at = mmap(NULL, 2 * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open(file, O_RDONLY);
	if (at == MAP_FAILED || fd < 0 ||
	    mmap(at, 4096, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED)
		return 2;
	close(fd);
	uint8_t *code = mmap(at + 4096, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (code == MAP_FAILED)
		return 2;
	code[0] = 0xeb, code[1] = 0xfe; /* jmp . */
	printf("ready %d %p\n", (int)getpid(), (void *)code);
	fflush(stdout);
	((void (*)(void))(void *)code)();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "edge"))
		return edge(argv[2]);
	double secs = argc > 1 ? atof(argv[1]) : 3;
	uint8_t *code =
		mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ju_ctx *ctx;
	const char *via = argc > 2 ? argv[2] : "gdb";
	bool late = !strcmp(via, "late");
	ju_options o = { .sz = sizeof(ju_options),
			 .channels = !strcmp(via, "perfmap")   ? JU_CH_PERFMAP
				     : !strcmp(via, "jitdump") ? JU_CH_JITDUMP
							       : JU_CH_GDB,
			 .flags = JU_OPT_NO_ENV,
			 .jitdump_dir = "." };
	if (code == MAP_FAILED || ju_open(&o, &ctx))
		return 2;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	double end = now() + secs;
	for (int gen = 0; now() < end; gen++) {
		char name[32];
		snprintf(name, sizeof name, "gen:%d", gen);
		ju_blob b = { .sz = sizeof(ju_blob),
			      .start = code,
			      .size = emit(code),
			      .name = name,
			      .frame = { .kind = JU_FRAME_FP, .u.fp = { 1, 4, NULL, 0 } } };
		if (late) {
			late_ctx = ctx;
			late_blob = &b;
		} else if (ju_publish(ctx, &b)) {
			return 2;
		}
		((void (*)(void))(void *)code)();
		if (ju_unpublish(ctx, code))
			return 2;
	}
	ju_close(ctx);
	return 0;
}
