/* SPDX-License-Identifier: MIT */
/* reuse_spin.c - code freed and published again at the same address, for
 * perf: `reuse-spin SECONDS [overlap]` publishes a spin loop as old_spin,
 * unpublishes it, publishes the same bytes as new_spin (at the same start,
 * or with `overlap` 16 bytes further in, inside the freed range) and spins
 * there for SECONDS.  The perf map channel is opened explicitly.
 */
#include "jitunwind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static void die(const char *what, int err)
{
	fprintf(stderr, "reuse-spin: %s: %s: %s\n", what, ju_strerror(err), ju_errmsg());
	exit(1);
}

/* mov rdi, deadline; loop: rdtsc-free spin on a counter, ret when it hits 0:
 *   48 b8 imm64   movabs rax, count
 *   48 ff c8      dec rax
 *   75 fb         jnz -5
 *   c3            ret */
static void put_spin(uint8_t *p, uint64_t count)
{
	p[0] = 0x48, p[1] = 0xb8;
	memcpy(p + 2, &count, 8);
	p[10] = 0x48, p[11] = 0xff, p[12] = 0xc8;
	p[13] = 0x75, p[14] = 0xfb;
	p[15] = 0xc3;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	double seconds = atof(argv[1]);
	int overlap = argc > 2 && !strcmp(argv[2], "overlap");
	uint8_t *code =
		mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	ju_options o = { .sz = sizeof(ju_options),
			 .channels = JU_CH_DEFAULT | JU_CH_PERFMAP,
			 .flags = JU_OPT_NO_ENV };
	ju_ctx *ctx;
	int err = ju_open(&o, &ctx);
	if (err)
		die("ju_open", err);
	if (!(ju_channels(ctx) & JU_CH_PERFMAP))
		die("the perf map channel is off", JU_ENOCONSUMER);
	put_spin(code, 1);
	ju_blob old = { .sz = sizeof(ju_blob),
			.start = code,
			.size = 64,
			.name = "old_spin",
			.frame = { .kind = JU_FRAME_LEAF } };
	if ((err = ju_publish(ctx, &old)))
		die("publish old_spin", err);
	((void (*)(void))code)();
	if ((err = ju_unpublish(ctx, code)))
		die("unpublish old_spin", err);
	uint8_t *at = code + (overlap ? 16 : 0);
	put_spin(at, 1000000);
	ju_blob fresh = { .sz = sizeof(ju_blob),
			  .start = at,
			  .size = 16,
			  .name = "new_spin",
			  .frame = { .kind = JU_FRAME_LEAF } };
	if ((err = ju_publish(ctx, &fresh)))
		die("publish new_spin", err);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		((void (*)(void))at)();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
	/* the map stays as it is for perf report (unpublish_all leaves it) */
	ju_unpublish_all(ctx);
	ju_close(ctx);
	printf("%p\n", (void *)at);
	return 0;
}
