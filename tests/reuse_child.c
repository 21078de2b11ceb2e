/* SPDX-License-Identifier: MIT */
/* reuse_child.c - JIT code freed and its addresses reused, for the
 * stale-name tests of the debuggers and jitstack (t-*-dead-blob*.sh).
 *
 * 2000 blobs old_0 .. old_1999 are published in one batch, 64 bytes apart
 * (one large arena, one image).  Then, in the middle of them:
 *   1. some are unpublished, and new code with new names (new_<i>) is
 *      written and published where they were: at the same start with the
 *      same size, at the same start and smaller, and starting inside the
 *      freed range; some singly, some as a batch;
 *   2. others are unpublished and left free: some before the new code is
 *      published, some after it.
 * One thread per new blob then calls into it; the new code calls
 * c_park(), which waits:
 *
 *   start_thread -> park_caller -> new_<i> -> c_park -> (wait)
 *
 * The old blobs build a frame-pointer frame; the new ones only move the
 * stack pointer (JU_FRAME_CFI), so the code at a reused address really is
 * different.
 *
 * The expect file (--expect FILE, default reuse.expect) says what a
 * consumer must show, derived from the blobs' real addresses:
 *   park TID NAME LO HI        thread TID waits in blob NAME, [LO, HI)
 *   caller NAME LO HI          the C function that called the blob
 *   live NAME LO HI            a new blob
 *   reused ADDR NAME OLD       ADDR was OLD's and is NAME's now
 *   freed ADDR OLD             ADDR was OLD's and is in no blob now
 *   kept ADDR NAME             ADDR is in an old blob never unpublished
 *                              (the control: a lookup there must name it)
 *
 * Actions (argv[1]): wait (print "ready PID", wait until killed) or abort
 * (abort once every thread waits, for a core).  Exit 2 on setup errors.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "jitunwind.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, used))
#define BARRIER() __asm__ volatile("" ::: "memory")

enum { N_OLD = 2000, SLOT = 64, OLD_SIZE = 48, SMALL_SIZE = 24, INSIDE_AT = 16 };

/* How each reused slot gets its new code. */
enum reuse_kind { SAME, SMALLER, INSIDE };

typedef struct reuse {
	int slot;
	enum reuse_kind kind;
	int in_batch; /* published with the others of the batch, not singly */
} reuse;

static const reuse reuses[] = {
	{ 1000, SAME, 0 }, { 1002, SMALLER, 0 }, { 1004, INSIDE, 0 },
	{ 1040, SAME, 1 }, { 1042, SMALLER, 1 }, { 1044, INSIDE, 1 },
};
enum { N_NEW = sizeof reuses / sizeof reuses[0] };
/* Freed before the new code is published, and after it. */
static const int freed_early[] = { 996, 1006, 1041 };
static const int freed_late[] = { 998, 1001, 1008, 1043, 1500 };
/* Never unpublished: lookups there must still name them. */
static const int kept[] = { 0, 999, 1003, 1005, 1039, 1045, 1999 };

static uint8_t *code;
static ju_ctx *ctx;
static char old_names[N_OLD][16];

typedef struct new_blob {
	char name[16];
	uint8_t *start;
	size_t size;
	ju_cfi_range cr;
	uint8_t insns[8];
	pid_t tid;
} new_blob;

static new_blob news[N_NEW];
static atomic_int n_parked;

/* ---- the C side ------------------------------------------------------------ */

NOINLINE void c_park(new_blob *b)
{
	b->tid = gettid();
	atomic_fetch_add(&n_parked, 1);
	for (;;)
		pause();
}

NOINLINE void park_caller(new_blob *b)
{
	((void (*)(new_blob *))(void *)b->start)(b);
	BARRIER();
}

static void *park_thread(void *arg)
{
	park_caller(arg);
	return NULL;
}

/* ---- the JIT side (x86-64) --------------------------------------------------- */

static size_t emit_call_park(uint8_t *p)
{
	uint64_t t = (uintptr_t)c_park;
	p[0] = 0x48, p[1] = 0xb8; /* movabs $c_park, %rax */
	memcpy(p + 2, &t, 8);
	p[10] = 0xff, p[11] = 0xd0; /* call *%rax (%rdi passes through) */
	return 12;
}

/* old_<i>: push %rbp; mov %rsp,%rbp; call c_park; pop %rbp; ret */
static ju_blob emit_old(int i, ju_range *epilogue)
{
	uint8_t *p = code + (size_t)i * SLOT;
	size_t n = 0;
	p[n++] = 0x55;
	p[n++] = 0x48, p[n++] = 0x89, p[n++] = 0xe5;
	n += emit_call_park(p + n);
	p[n++] = 0x5d;
	*epilogue = (ju_range){ (uint32_t)n, (uint32_t)n + 1 };
	p[n++] = 0xc3;
	snprintf(old_names[i], sizeof old_names[i], "old_%d", i);
	return (ju_blob){ .sz = sizeof(ju_blob),
			  .start = p,
			  .size = OLD_SIZE,
			  .name = old_names[i],
			  .frame = { .kind = JU_FRAME_FP, .u.fp = { 1, 4, epilogue, 1 } } };
}

/* new_<i>: sub $24,%rsp; call c_park; add $24,%rsp; ret -- no frame pointer */
static ju_blob emit_new(const reuse *r, new_blob *b)
{
	uint8_t *slot = code + (size_t)r->slot * SLOT;
	b->start = slot + (r->kind == INSIDE ? INSIDE_AT : 0);
	b->size = r->kind == SAME ? OLD_SIZE : SMALL_SIZE;
	memset(slot, 0xcc, SLOT); /* int3: nothing of the old code is left */
	uint8_t *p = b->start;
	size_t n = 0;
	p[n++] = 0x48, p[n++] = 0x83, p[n++] = 0xec, p[n++] = 24;
	size_t after_sub = n;
	n += emit_call_park(p + n);
	p[n++] = 0x48, p[n++] = 0x83, p[n++] = 0xc4, p[n++] = 24;
	size_t after_add = n;
	p[n++] = 0xc3;
	uint8_t *k = b->insns;
	k[0] = 0x40 | (uint8_t)after_sub;               /* DW_CFA_advance_loc */
	k[1] = 0x0e, k[2] = 32;                         /* DW_CFA_def_cfa_offset 32 */
	k[3] = 0x40 | (uint8_t)(after_add - after_sub); /* DW_CFA_advance_loc */
	k[4] = 0x0e, k[5] = 8;                          /* DW_CFA_def_cfa_offset 8 */
	b->cr = (ju_cfi_range){ 0, (uint32_t)b->size, b->insns, 6 };
	snprintf(b->name, sizeof b->name, "new_%d", r->slot);
	return (ju_blob){ .sz = sizeof(ju_blob),
			  .start = b->start,
			  .size = b->size,
			  .name = b->name,
			  .frame = { .kind = JU_FRAME_CFI, .u.cfi = { &b->cr, 1 } } };
}

static int fail_rc(const char *what, int rc)
{
	fprintf(stderr, "reuse-child: %s: %s: %s\n", what, ju_strerror(rc), ju_errmsg());
	return -1;
}

static int unpublish_slots(const int *slots, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc = ju_unpublish(ctx, code + (size_t)slots[i] * SLOT);
		if (rc)
			return fail_rc("ju_unpublish", rc);
	}
	return 0;
}

static int set_code_writable(int writable)
{
	return mprotect(code, (size_t)N_OLD * SLOT,
			writable ? PROT_READ | PROT_WRITE : PROT_READ | PROT_EXEC);
}

/* Free the reused slots and the early ones, write and publish the new code,
 * then free the late ones. */
static int churn(void)
{
	for (size_t i = 0; i < N_NEW; i++) {
		int rc = ju_unpublish(ctx, code + (size_t)reuses[i].slot * SLOT);
		if (rc)
			return fail_rc("ju_unpublish", rc);
	}
	if (unpublish_slots(freed_early, sizeof freed_early / sizeof freed_early[0]))
		return -1;
	ju_blob blob[N_NEW], batch[N_NEW];
	size_t n_batch = 0;
	if (set_code_writable(1))
		return -1;
	for (size_t i = 0; i < N_NEW; i++) {
		blob[i] = emit_new(&reuses[i], &news[i]);
		if (reuses[i].in_batch)
			batch[n_batch++] = blob[i];
	}
	__builtin___clear_cache((char *)code, (char *)code + (size_t)N_OLD * SLOT);
	if (set_code_writable(0))
		return -1;
	for (size_t i = 0; i < N_NEW; i++) {
		if (reuses[i].in_batch)
			continue;
		int rc = ju_publish(ctx, &blob[i]);
		if (rc)
			return fail_rc("ju_publish", rc);
	}
	int rc = ju_publish_batch(ctx, batch, n_batch);
	if (rc)
		return fail_rc("ju_publish_batch", rc);
	return unpublish_slots(freed_late, sizeof freed_late / sizeof freed_late[0]);
}

static int publish_old(void)
{
	static ju_blob b[N_OLD];
	static ju_range epi[N_OLD];
	code = mmap(NULL, (size_t)N_OLD * SLOT, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return -1;
	memset(code, 0xcc, (size_t)N_OLD * SLOT);
	for (int i = 0; i < N_OLD; i++)
		b[i] = emit_old(i, &epi[i]);
	__builtin___clear_cache((char *)code, (char *)code + (size_t)N_OLD * SLOT);
	if (set_code_writable(0))
		return -1;
	ju_options o = { .sz = sizeof(ju_options),
			 .channels = JU_CH_UNWINDER | JU_CH_GDB,
			 .flags = JU_OPT_NO_ENV };
	int rc = ju_open(&o, &ctx);
	if (rc)
		return fail_rc("ju_open", rc);
	rc = ju_publish_batch(ctx, b, N_OLD);
	return rc ? fail_rc("ju_publish_batch", rc) : 0;
}

/* ---- the expect file ------------------------------------------------------- */

static void put_old_range(FILE *f, const char *what, int slot, size_t lo, size_t hi)
{
	uintptr_t base = (uintptr_t)code + (size_t)slot * SLOT;
	/* its first and last byte, and one in the middle */
	size_t at[3] = { lo, lo + (hi - lo) / 2, hi - 1 };
	for (size_t i = 0; i < 3; i++)
		fprintf(f, "%s %#lx old_%d\n", what, (unsigned long)(base + at[i]), slot);
}

static int write_expect(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	if (!dladdr1((void *)park_caller, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || !sym->st_size) {
		fclose(f);
		return -1;
	}
	fprintf(f, "caller park_caller %#lx %#lx\n", (unsigned long)(uintptr_t)park_caller,
		(unsigned long)((uintptr_t)park_caller + sym->st_size));
	for (size_t i = 0; i < N_NEW; i++) {
		const new_blob *b = &news[i];
		uintptr_t lo = (uintptr_t)b->start, hi = lo + b->size;
		fprintf(f, "park %d %s %#lx %#lx\n", (int)b->tid, b->name, (unsigned long)lo,
			(unsigned long)hi);
		fprintf(f, "live %s %#lx %#lx\n", b->name, (unsigned long)lo, (unsigned long)hi);
		size_t at[3] = { 0, b->size / 2, b->size - 1 };
		for (size_t k = 0; k < 3; k++)
			fprintf(f, "reused %#lx %s old_%d\n", (unsigned long)(lo + at[k]), b->name,
				reuses[i].slot);
		/* what of the old blob's range the new code left free */
		size_t off = (size_t)(b->start - (code + (size_t)reuses[i].slot * SLOT));
		if (off)
			put_old_range(f, "freed", reuses[i].slot, 0, off);
		if (off + b->size < OLD_SIZE)
			put_old_range(f, "freed", reuses[i].slot, off + b->size, OLD_SIZE);
	}
	for (size_t i = 0; i < sizeof freed_early / sizeof freed_early[0]; i++)
		put_old_range(f, "freed", freed_early[i], 0, OLD_SIZE);
	for (size_t i = 0; i < sizeof freed_late / sizeof freed_late[0]; i++)
		put_old_range(f, "freed", freed_late[i], 0, OLD_SIZE);
	for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++)
		fprintf(f, "kept %#lx old_%d\n",
			(unsigned long)((uintptr_t)code + (size_t)kept[i] * SLOT + 8), kept[i]);
	return fclose(f);
}

int main(int argc, char **argv)
{
	const char *expect = "reuse.expect";
	if (argc < 2 || (strcmp(argv[1], "wait") && strcmp(argv[1], "abort"))) {
		fprintf(stderr, "usage: reuse-child wait|abort [--expect FILE]\n");
		return 2;
	}
	if (argc == 4 && !strcmp(argv[2], "--expect"))
		expect = argv[3];
	if (publish_old() || churn())
		return 2;
	size_t want =
		N_OLD - sizeof freed_early / sizeof freed_early[0] - sizeof freed_late / sizeof freed_late[0];
	if (ju_count(ctx) != want) {
		fprintf(stderr, "reuse-child: %zu blobs published, want %zu\n", ju_count(ctx), want);
		return 2;
	}
	pthread_t th;
	for (size_t i = 0; i < N_NEW; i++)
		if (pthread_create(&th, NULL, park_thread, &news[i]))
			return 2;
	while (atomic_load(&n_parked) < N_NEW)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	if (write_expect(expect)) {
		perror("reuse-child: expect file");
		return 2;
	}
	if (!strcmp(argv[1], "abort"))
		abort();
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
