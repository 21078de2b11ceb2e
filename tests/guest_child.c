/* SPDX-License-Identifier: MIT */
/* guest_child.c - a JIT blob that inlines guest functions, calling back into C
 * from the innermost one, for the debuggers to show its guest frames:
 *
 *   main -> run_guest -> guest:run -> [guest:mid -> [guest:leaf]] -> c_callback -> (ACTION)
 *
 * guest:run is one blob of x86-64 code with a frame-pointer frame.  Its
 * bytes [8, 40) are guest:mid, inlined at guest.py:11, and [12, 28) of
 * those are guest:leaf, inlined into guest:mid at mid.py:25; guest:leaf
 * calls c_callback.  A debugger must show three frames for the one native
 * frame.
 *
 * The expected frames are derived here from the published tree, line table
 * and the call's return address, never from a tool's output: EXPECT
 * (guest.expect) gets one line per frame, innermost first, "NAME" for a C
 * frame and "NAME FILE:LINE" for a guest frame: at the call, or for spin at
 * the loop (guest frames first, no c_callback).
 *
 * Actions: wait (write the expect file, print "ready PID", sleep until
 * killed), abort (write it and abort, for a core), dump (write it, the
 * image the GDB JIT interface holds to guest.o and the address of the call
 * to guest.addr, for readers of files), spin (write it, print "ready PID",
 * return from c_callback into guest:leaf, whose code then loops on the spot
 * until SECONDS (default 2) have passed, for profilers that sample it).
 * With --no-inlines the blob is published without its tree (the test's
 * control: only guest:run).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "formats/gdbjit.h"
#include "jitunwind.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, used))
#define BARRIER() __asm__ volatile("" ::: "memory")

static const char *action = "wait";
static const char *expect_path = "guest.expect";
static int with_inlines = 1;
static unsigned spin_seconds = 2;

/* ---- the tree, as a JIT would describe what it compiled ---------------------- */

static const char blob_file[] = "guest.py";
static const ju_inline tree[] = {
	{ .start = 8, .end = 40, .parent = 0, .call_line = 11, .name = "guest:mid", .file = "mid.py" },
	{ .start = 12, .end = 28, .parent = 1, .call_line = 25, .name = "guest:leaf", .file = "leaf.py" },
};
/* the innermost line at each offset, in the file of the innermost inline */
static const ju_line rows[] = { { 0, 10 }, { 8, 20 }, { 12, 30 }, { 28, 26 }, { 40, 12 } };
enum { N_TREE = sizeof tree / sizeof tree[0], N_ROWS = sizeof rows / sizeof rows[0] };

static uint8_t *code;
static const size_t code_size = 4096;
static ju_ctx *ctx;
static uint32_t call_ret; /* offset of the call's return address in the blob */

NOINLINE void c_callback(void);
NOINLINE void run_guest(void);

#if defined(__x86_64__)
/* push %rbp; mov %rsp,%rbp; 4 nops | guest:mid: 4 nops | guest:leaf:
 * movabs $c_callback,%rax; call *%rax; 4 nops | 12 nops | 4 nops; pop %rbp;
 * ret.  For spin, guest:leaf's first two nops after the call are a jump to
 * itself: the loop profilers sample. */
static size_t emit(uint8_t *p, ju_range *epilogue)
{
	size_t n = 0;
	p[n++] = 0x55;                               /* push %rbp     -> 1 */
	p[n++] = 0x48, p[n++] = 0x89, p[n++] = 0xe5; /* mov %rsp,%rbp -> 4 */
	while (n < 12)
		p[n++] = 0x90;
	uint64_t t = (uintptr_t)(void *)c_callback;
	p[n++] = 0x48, p[n++] = 0xb8; /* movabs $c_callback, %rax */
	memcpy(p + n, &t, 8);
	n += 8;
	p[n++] = 0xff, p[n++] = 0xd0; /* call *%rax */
	call_ret = (uint32_t)n;       /* 24 */
	if (!strcmp(action, "spin"))
		p[n++] = 0xeb, p[n++] = 0xfe; /* jmp . */
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
#endif

static void (*guest_run)(void);

static int make_jit(void)
{
	code = mmap(NULL, code_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return -1;
	static ju_range epi;
	size_t size = emit(code, &epi);
	if (!size) {
		printf("skip: guest_child has x86-64 code only\n");
		exit(77);
	}
	if (mprotect(code, code_size, PROT_READ | PROT_EXEC))
		return -1;
	guest_run = (void (*)(void))(void *)code;
	ju_blob b = JU_BLOB(.start = code, .size = size, .name = "guest:run",
			    .frame = { .kind = JU_FRAME_FP, .u.fp = { FP_PUSH_END, FP_SET_END, &epi, 1 } },
			    .file = blob_file, .lines = rows, .n_lines = N_ROWS,
			    .inlines = with_inlines ? tree : NULL, .n_inlines = with_inlines ? N_TREE : 0);
	int err = ju_open(NULL, &ctx);
	if (!err)
		err = ju_publish(ctx, &b);
	if (err) {
		fprintf(stderr, "guest_child: %s: %s\n", ju_strerror(err), ju_errmsg());
		return -1;
	}
	return 0;
}

/* ---- expected frames --------------------------------------------------------- */

/* The file of inline k (index + 1; 0 the blob itself). */
static const char *file_of(uint32_t k)
{
	return k && tree[k - 1].file ? tree[k - 1].file : blob_file;
}

/* The frames at the call: the inlines over its offset, innermost first,
 * each at the line its child calls from; the innermost at its row. */
static int write_expect(void)
{
	FILE *f = fopen(expect_path, "w");
	if (!f)
		return -1;
	/* the call instruction, as debuggers look it up; for spin, the loop
	 * after it, where samples land with no c_callback above */
	int spin = !strcmp(action, "spin");
	uint32_t at = spin ? call_ret : call_ret - 1;
	uint32_t chain[N_TREE + 1], depth = 0;
	for (uint32_t k = 0; with_inlines && k < N_TREE; k++)
		if (tree[k].start <= at && at < tree[k].end)
			chain[depth++] = k + 1; /* pre-order: outer ones first */
	uint32_t line = 0;
	for (size_t r = 0; r < N_ROWS; r++)
		if (rows[r].offset <= at)
			line = rows[r].line;
	if (!spin)
		fprintf(f, "c_callback\n");
	for (uint32_t d = depth + 1; d-- > 0;) {
		uint32_t k = d ? chain[d - 1] : 0;
		fprintf(f, "%s %s:%u\n", k ? tree[k - 1].name : "guest:run", file_of(k), line);
		if (k) /* the caller's line: the call site of this inline */
			line = tree[k - 1].call_line;
	}
	fprintf(f, "run_guest\nmain\n");
	return fclose(f);
}

/* The GDB JIT interface as the GDB manual defines it: what a debugger reads. */
extern struct jit_descriptor __jit_debug_descriptor;

/* The image that holds the blob, and the call's address. */
static int dump(void)
{
	const struct jit_code_entry *e = __jit_debug_descriptor.first_entry;
	FILE *f = e ? fopen("guest.o", "wb") : NULL;
	if (!f || fwrite(e->symfile_addr, 1, e->symfile_size, f) != e->symfile_size || fclose(f))
		return 2;
	f = fopen("guest.addr", "w");
	if (!f || fprintf(f, "%#lx\n", (unsigned long)(uintptr_t)(code + call_ret - 1)) < 0 || fclose(f))
		return 2;
	return 0;
}

/* ---- the C side ----------------------------------------------------------------- */

static void spin_done(int sig)
{
	(void)sig;
	_exit(0);
}

NOINLINE void c_callback(void)
{
	if (!strcmp(action, "abort"))
		abort();
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!strcmp(action, "spin")) { /* back into guest:leaf, which loops until the alarm */
		signal(SIGALRM, spin_done);
		alarm(spin_seconds);
		return;
	}
	for (;;)
		pause();
}

NOINLINE void run_guest(void)
{
	guest_run();
	BARRIER();
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--expect") && i + 1 < argc)
			expect_path = argv[++i];
		else if (!strcmp(argv[i], "--no-inlines"))
			with_inlines = 0;
		else if (!strcmp(action, "spin") && atoi(argv[i]) > 0)
			spin_seconds = (unsigned)atoi(argv[i]);
		else
			action = argv[i];
	}
	if (strcmp(action, "wait") && strcmp(action, "abort") && strcmp(action, "dump") &&
	    strcmp(action, "spin")) {
		fprintf(stderr, "usage: guest-child wait|abort|dump|spin [SECONDS] [--expect FILE] "
				"[--no-inlines]\n");
		return 2;
	}
	if (make_jit() || write_expect()) {
		perror("guest_child");
		return 2;
	}
	if (!strcmp(action, "dump"))
		return dump();
	run_guest();
	return 0;
}
