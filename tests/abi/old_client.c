/* SPDX-License-Identifier: MIT */
/* old_client.c - a JIT written against version 0.1 of jitunwind.h (the copy
 * in tests/abi/0.1/), whose ju_options and ju_blob have no `sz`, linked as
 * a 0.1 binary was: against a library without symbol versions
 * (stub_0.1.c), so its references are unversioned.  It runs against the
 * library of this tree, which must bind them to the 0.1 entry points.
 *
 * It publishes two x86-64 functions, one with ju_publish and one in a
 * ju_publish_batch of two (so a wrong stride would misread the second),
 * and calls through them:
 *
 *   main -> jit_outer (frame pointer) -> host_callback -> jit_inner (CFI)
 *        -> c_inner -> ACTION
 *
 *   check   glibc backtrace() in c_inner sees every frame down to main;
 *           ju_count, ju_room_after, ju_unpublish, ju_unpublish_batch and
 *           ju_unpublish_all behave; after unpublishing, backtrace() stops
 *           at jit_inner, as libgcc does without an FDE.  Prints one line
 *           per check, exit 0 when all hold.
 *   wait    write the frames a debugger must show (old-client.expect, as
 *           tests/check_frames.py reads it), print "ready PID", sleep.
 */
#define _GNU_SOURCE 1
#include <jitunwind.h>

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if !defined(__x86_64__)
int main(void)
{
	printf("skip: the client's JIT emits x86-64 code\n");
	return 77;
}
#else

#define NOINLINE __attribute__((noinline))

static uint8_t *code;
static size_t outer_size, inner_size;
static void (*jit_outer)(void), (*jit_inner)(void);
static int (*action)(void);
static int failures;

static void check(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	failures += !ok;
}

NOINLINE void c_inner(void)
{
	if (action() != 0)
		failures++;
	__asm__ volatile("" ::: "memory");
}

NOINLINE void host_callback(void)
{
	jit_inner();
	__asm__ volatile("" ::: "memory");
}

/* What backtrace() saw, by name: JIT code by its blob, C by dladdr. */
static int frames_seen(const char **names, int max)
{
	void *pcs[32];
	int n = backtrace(pcs, 32), k = 0;
	for (int i = 0; i < n && k < max; i++) {
		uint8_t *pc = (uint8_t *)pcs[i] - (i ? 1 : 0);
		Dl_info d;
		if (pc >= code && pc < code + outer_size)
			names[k++] = "jit_outer";
		else if (pc >= code + 0x40 && pc < code + 0x40 + inner_size)
			names[k++] = "jit_inner";
		else if (dladdr(pc, &d) && d.dli_sname)
			names[k++] = d.dli_sname;
		else
			names[k++] = "?";
	}
	return k;
}

/* The frames from c_inner on, as one string. */
static void stack_from_c_inner(char *out, size_t size)
{
	const char *names[32];
	int n = frames_seen(names, 32), i = 0;
	while (i < n && strcmp(names[i], "c_inner"))
		i++;
	out[0] = 0;
	for (int first = i; i < n; i++) {
		if (i > first)
			strncat(out, " ", size - strlen(out) - 1);
		strncat(out, names[i], size - strlen(out) - 1);
		if (!strcmp(names[i], "main"))
			break;
	}
}

static int expect_all(void)
{
	char got[512];
	stack_from_c_inner(got, sizeof got);
	printf("backtrace: %s\n", got);
	check(!strcmp(got, "c_inner jit_inner host_callback jit_outer main"),
	      "glibc backtrace() walks through both JIT frames to main");
	return 0;
}

static int expect_stop(void)
{
	char got[512];
	stack_from_c_inner(got, sizeof got);
	printf("backtrace: %s\n", got);
	check(!strcmp(got, "c_inner jit_inner"), "after unpublishing, backtrace() stops at jit_inner");
	return 0;
}

static void write_expect(FILE *f, const char *name, const void *lo, size_t size, const char *kind)
{
	fprintf(f, "%s %#lx %#lx %s fp\n", name, (unsigned long)(uintptr_t)lo,
		(unsigned long)((uintptr_t)lo + size), kind);
}

static void c_expect(FILE *f, const char *name, void *fn)
{
	Dl_info d;
	const ElfW(Sym) *sym = NULL;
	size_t size =
		dladdr1(fn, &d, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size ? sym->st_size : 1;
	write_expect(f, name, fn, size, "c");
}

int main(int, char **);

static int wait_here(void)
{
	FILE *f = fopen("old-client.expect", "w");
	if (!f)
		return 1;
	c_expect(f, "c_inner", (void *)c_inner);
	write_expect(f, "jit_inner", code + 0x40, inner_size, "cfi");
	c_expect(f, "host_callback", (void *)host_callback);
	write_expect(f, "jit_outer", code, outer_size, "fp");
	c_expect(f, "main", (void *)main);
	fclose(f);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}

static size_t emit_call(uint8_t *p, void (*target)(void))
{
	uint64_t t = (uintptr_t)target;
	p[0] = 0x48, p[1] = 0xb8; /* movabs $target, %rax */
	memcpy(p + 2, &t, 8);
	p[10] = 0xff, p[11] = 0xd0; /* call *%rax */
	return 12;
}

/* jit_outer: push %rbp; mov %rsp,%rbp; call host_callback; pop %rbp; ret
 * jit_inner: sub $8,%rsp; call c_inner; add $8,%rsp; ret
 * and a leaf at +0x80 for the batch: ret */
static int emit(void)
{
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return -1;
	uint8_t *p = code;
	size_t n = 0;
	p[n++] = 0x55;
	p[n++] = 0x48, p[n++] = 0x89, p[n++] = 0xe5;
	n += emit_call(p + n, host_callback);
	p[n++] = 0x5d;
	p[n++] = 0xc3;
	outer_size = n;
	p = code + 0x40;
	n = 0;
	p[n++] = 0x48, p[n++] = 0x83, p[n++] = 0xec, p[n++] = 8;
	n += emit_call(p + n, c_inner);
	p[n++] = 0x48, p[n++] = 0x83, p[n++] = 0xc4, p[n++] = 8;
	p[n++] = 0xc3;
	inner_size = n;
	code[0x80] = 0xc3;
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		return -1;
	jit_outer = (void (*)(void))(void *)code;
	jit_inner = (void (*)(void))(void *)(code + 0x40);
	return 0;
}

static int rc_check(int rc, const char *what)
{
	if (rc)
		printf("  %s: %s: %s\n", what, ju_strerror(rc), ju_errmsg());
	check(rc == 0, what);
	return rc;
}

int main(int argc, char **argv)
{
	int wait = argc > 1 && !strcmp(argv[1], "wait");
	if (emit())
		return 2;
	/* 0.1's ju_options: channels first, where 0.2's has sz */
	ju_options o = { .channels = JU_CH_UNWINDER | JU_CH_GDB, .flags = JU_OPT_NO_ENV | JU_OPT_STRICT };
	ju_ctx *ctx;
	if (rc_check(ju_open(&o, &ctx), "ju_open with 0.1's ju_options"))
		return 1;
	check(ju_channels(ctx) == (JU_CH_UNWINDER | JU_CH_GDB), "the channels asked for are on");

	static const ju_range epilogue = { 17, 18 };
	static const uint8_t inner_cfi[] = {
		0x44, 0x0e, 16, /* DW_CFA_advance_loc 4; DW_CFA_def_cfa_offset 16 */
		0x50, 0x0e, 8,  /* DW_CFA_advance_loc 16; DW_CFA_def_cfa_offset 8 */
	};
	const ju_cfi_range cfi = { 0, (uint32_t)inner_size, inner_cfi, sizeof inner_cfi };
	ju_blob inner = { .start = code + 0x40,
			  .size = inner_size,
			  .name = "jit_inner",
			  .frame = { .kind = JU_FRAME_CFI, .u.cfi = { &cfi, 1 } } };
	ju_blob batch[2] = {
		{ .start = code,
		  .size = outer_size,
		  .name = "jit_outer",
		  .frame = { .kind = JU_FRAME_FP, .u.fp = { 1, 4, &epilogue, 1 } } },
		{ .start = code + 0x80, .size = 1, .name = "jit_leaf", .frame = { .kind = JU_FRAME_LEAF } },
	};
	size_t room = 0;
	rc_check(ju_room_after(ctx, &inner, &room), "ju_room_after with 0.1's ju_blob");
	if (rc_check(ju_publish(ctx, &inner), "ju_publish with 0.1's ju_blob") ||
	    rc_check(ju_publish_batch(ctx, batch, 2), "ju_publish_batch of two 0.1 ju_blobs"))
		return 1;
	check(ju_count(ctx) == 3, "three blobs are published");
	if (wait) {
		action = wait_here;
		jit_outer();
	}
	action = expect_all;
	jit_outer();

	rc_check(ju_unpublish(ctx, code + 0x80), "ju_unpublish of the batch's second blob");
	check(ju_count(ctx) == 2, "two blobs are left");
	const void *starts[1] = { code };
	rc_check(ju_unpublish_batch(ctx, starts, 1), "ju_unpublish_batch");
	rc_check(ju_unpublish_all(ctx), "ju_unpublish_all");
	check(ju_count(ctx) == 0, "nothing is left published");
	action = expect_stop;
	jit_outer();
	rc_check(ju_close(ctx), "ju_close");
	printf("%s\n", failures ? "FAILED" : "all checks hold");
	return failures ? 1 : 0;
}
#endif
