/* guest_spin.c - a JIT blob with guest frames that spends its time in the
 * innermost one, for profilers to sample there:
 *
 *   main -> spin_guest -> guest:run -> [guest:mid -> [guest:leaf: a loop]]
 *
 * guest:run (guest.py) is one blob of x86-64 code with a frame-pointer
 * frame.  Its bytes [8, 40) are guest:mid (mid.py), inlined at guest.py:11,
 * and [12, 28) of those are guest:leaf (leaf.py), inlined at mid.py:25;
 * guest:leaf counts a register down from LOOP_COUNT.  The rows give the
 * innermost line at each offset, in the file of the innermost inline.
 *
 * Usage: guest-spin SECONDS [--expect FILE]
 * publishes through the channels JITUNWIND chooses (ju_open(NULL)), calls
 * guest:run until SECONDS have passed, and writes FILE (guest-spin.expect)
 * first: "NAME FILE:LINE" of the loop's row, derived from the tables below,
 * e.g. "guest:run leaf.py:31".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "jitunwind.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, used))
#define LOOP_COUNT 1000000

static const char blob_file[] = "guest.py";
static const ju_inline tree[] = {
	{ .start = 8, .end = 40, .parent = 0, .call_line = 11, .name = "guest:mid", .file = "mid.py" },
	{ .start = 12, .end = 28, .parent = 1, .call_line = 25, .name = "guest:leaf", .file = "leaf.py" },
};
/* the loop [17, 22) is leaf.py:31 */
static const ju_line rows[] = { { 0, 10 },  { 8, 20 },  { 12, 30 }, { 17, 31 },
				{ 22, 32 }, { 28, 26 }, { 40, 12 } };
enum { N_TREE = sizeof tree / sizeof tree[0], N_ROWS = sizeof rows / sizeof rows[0] };
enum { LOOP_AT = 17 };

#if defined(__x86_64__)
/* push %rbp; mov %rsp,%rbp; 8 nops | guest:mid: | guest:leaf: mov
 * $LOOP_COUNT,%ecx | 1: dec %rcx; jnz 1b | nops | nops; pop %rbp; ret */
static size_t emit(uint8_t *p, ju_range *epilogue)
{
	size_t n = 0;
	p[n++] = 0x55;                               /* push %rbp     -> 1 */
	p[n++] = 0x48, p[n++] = 0x89, p[n++] = 0xe5; /* mov %rsp,%rbp -> 4 */
	while (n < 12)
		p[n++] = 0x90;
	uint32_t count = LOOP_COUNT;
	p[n++] = 0xb9; /* mov $LOOP_COUNT, %ecx */
	memcpy(p + n, &count, 4);
	n += 4;
	/* LOOP_AT: */
	p[n++] = 0x48, p[n++] = 0xff, p[n++] = 0xc9; /* dec %rcx */
	p[n++] = 0x75, p[n++] = 0xfb;                /* jnz LOOP_AT */
	while (n < 44)
		p[n++] = 0x90;
	p[n++] = 0x5d; /* pop %rbp */
	epilogue->start = (uint32_t)n;
	p[n++] = 0xc3; /* ret */
	epilogue->end = (uint32_t)n;
	return n;
}
#define FP_PUSH_END 1
#define FP_SET_END 4
#else
static size_t emit(uint8_t *p, ju_range *epilogue)
{
	(void)p, (void)epilogue;
	return 0;
}
#define FP_PUSH_END 0
#define FP_SET_END 0
#endif

static void (*guest_run)(void);

static int make_jit(ju_ctx **ctx)
{
	size_t room = 4096;
	uint8_t *code = mmap(NULL, room, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return -1;
	static ju_range epi;
	size_t size = emit(code, &epi);
	if (!size) {
		printf("skip: guest_spin has x86-64 code only\n");
		exit(77);
	}
	if (mprotect(code, room, PROT_READ | PROT_EXEC))
		return -1;
	guest_run = (void (*)(void))(void *)code;
	ju_blob b = JU_BLOB(.start = code, .size = size, .name = "guest:run",
			    .frame = { .kind = JU_FRAME_FP, .u.fp = { FP_PUSH_END, FP_SET_END, &epi, 1 } },
			    .file = blob_file, .lines = rows, .n_lines = N_ROWS, .inlines = tree,
			    .n_inlines = N_TREE);
	int err = ju_open(NULL, ctx);
	if (!err)
		err = ju_publish(*ctx, &b);
	if (err) {
		fprintf(stderr, "guest_spin: %s: %s\n", ju_strerror(err), ju_errmsg());
		return -1;
	}
	return 0;
}

/* The loop's row and the file of the innermost inline over it. */
static int write_expect(const char *path)
{
	uint32_t line = 0;
	const char *file = blob_file;
	for (size_t r = 0; r < N_ROWS; r++)
		if (rows[r].offset <= LOOP_AT)
			line = rows[r].line;
	for (size_t k = 0; k < N_TREE; k++) /* pre-order: the last over it is the innermost */
		if (tree[k].start <= LOOP_AT && LOOP_AT < tree[k].end)
			file = tree[k].file ? tree[k].file : blob_file;
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "guest:run %s:%u\n", file, line);
	return fclose(f);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

NOINLINE void spin_guest(double seconds)
{
	double end = now() + seconds;
	while (now() < end)
		guest_run();
}

int main(int argc, char **argv)
{
	const char *expect_path = "guest-spin.expect";
	double seconds = argc > 1 ? atof(argv[1]) : 0;
	if (argc > 3 && !strcmp(argv[2], "--expect"))
		expect_path = argv[3];
	if (seconds <= 0 || (argc != 2 && argc != 4)) {
		fprintf(stderr, "usage: guest-spin SECONDS [--expect FILE]\n");
		return 2;
	}
	ju_ctx *ctx = NULL;
	if (make_jit(&ctx) || write_expect(expect_path)) {
		perror("guest_spin");
		return 2;
	}
	spin_guest(seconds);
	if (ju_unpublish_all(ctx) || ju_close(ctx))
		return 2;
	return 0;
}
