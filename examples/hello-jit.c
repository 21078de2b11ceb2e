/* SPDX-License-Identifier: MIT */
/* hello-jit.c - the smallest complete use of libjitunwind.
 *
 * A toy JIT writes two x86-64 functions into anonymous memory:
 *
 *   jit_outer: push %rbp; mov %rsp,%rbp; call host_callback; pop %rbp; ret
 *   jit_inner: sub $8,%rsp; call show_stack; add $8,%rsp; ret   (no frame pointer)
 *
 * and publishes them with one ju_publish_batch() call.  main calls
 * jit_outer, which calls back into C, which calls jit_inner, which calls
 * show_stack: C -> JIT -> C -> JIT -> C.  show_stack prints what glibc's
 * backtrace() sees.  Run it under gdb (`break show_stack`, `bt`) to see the
 * debugger name the JIT frames; run it with JITUNWIND=none to see both stop
 * at the first JIT frame.  It writes no file by default; JITUNWIND=perf adds
 * /tmp/perf-<pid>.map and a jitdump for perf.
 *
 * Build: cc -O1 -fno-omit-frame-pointer -rdynamic hello-jit.c $(pkg-config --cflags --libs jitunwind)
 */
#include <jitunwind.h>

#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static uint8_t *code;
static void (*jit_outer)(void), (*jit_inner)(void);

/* What backtrace() returns, with JIT addresses named by the JIT itself
 * (backtrace_symbols only knows ELF files). */
static const char *jit_name(void *pc)
{
	uint8_t *p = pc;
	if (p > code && p <= code + 0x40)
		return "jit_outer (JIT code)";
	if (p > code + 0x40 && p <= code + 0x80)
		return "jit_inner (JIT code)";
	return NULL;
}

__attribute__((noinline)) void show_stack(void)
{
	void *pcs[32];
	int n = backtrace(pcs, 32);
	char **syms = backtrace_symbols(pcs, n);
	printf("glibc backtrace() from inside the JIT-called code, %d frames:\n", n);
	for (int i = 0; i < n; i++) {
		const char *jit = jit_name(pcs[i]);
		printf("  #%-2d %p  %s\n", i, pcs[i], jit ? jit : syms ? syms[i] : "?");
	}
	free(syms);
	fflush(stdout);
}

__attribute__((noinline)) void host_callback(void)
{
	jit_inner();
	__asm__ volatile("" ::: "memory");
}

static size_t emit_call(uint8_t *p, void (*target)(void))
{
	uint64_t t = (uintptr_t)target;
	p[0] = 0x48, p[1] = 0xb8; /* movabs $target, %rax */
	memcpy(p + 2, &t, 8);
	p[10] = 0xff, p[11] = 0xd0; /* call *%rax */
	return 12;
}

int main(void)
{
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;

	/* jit_outer, with a frame pointer frame: offsets 1 (after push) and 4
	 * (after mov); the epilogue's pop ends at 17, its ret at 18. */
	uint8_t *p = code;
	size_t n = 0;
	p[n++] = 0x55;
	p[n++] = 0x48, p[n++] = 0x89, p[n++] = 0xe5;
	n += emit_call(p + n, host_callback);
	p[n++] = 0x5d;
	p[n++] = 0xc3;
	size_t outer_size = n;

	/* jit_inner, no frame pointer: raw CFI says the CFA is rsp+16 after the
	 * sub (offset 4) and rsp+8 again after the add (offset 20). */
	p = code + 0x40;
	n = 0;
	p[n++] = 0x48, p[n++] = 0x83, p[n++] = 0xec, p[n++] = 8;
	n += emit_call(p + n, show_stack);
	p[n++] = 0x48, p[n++] = 0x83, p[n++] = 0xc4, p[n++] = 8;
	p[n++] = 0xc3;
	size_t inner_size = n;
	static const uint8_t inner_cfi[] = {
		0x44, 0x0e, 16, /* DW_CFA_advance_loc 4; DW_CFA_def_cfa_offset 16 */
		0x50, 0x0e, 8,  /* DW_CFA_advance_loc 16; DW_CFA_def_cfa_offset 8 */
	};

	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		return 1;
	jit_outer = (void (*)(void))(void *)code;
	jit_inner = (void (*)(void))(void *)(code + 0x40);

	/* Publish both: the default channels are the in-memory ones whose
	 * consumer is present (unwinder, libunwind, gdb); $JITUNWIND may choose
	 * others (JITUNWIND=perf: the perf map and the jitdump too). */
	ju_ctx *ctx;
	int err = ju_open(NULL, &ctx);
	if (err) {
		fprintf(stderr, "ju_open: %s: %s\n", ju_strerror(err), ju_errmsg());
		return 1;
	}
	static const ju_range epilogue = { 17, 18 };
	static const ju_line lines[] = { { 0, 1 }, { 4, 2 }, { 16, 3 } };
	const ju_cfi_range cfi = { 0, (uint32_t)inner_size, inner_cfi, sizeof inner_cfi };
	ju_blob blobs[2] = {
		{ .sz = sizeof(ju_blob),
		  .start = code,
		  .size = outer_size,
		  .name = "jit_outer",
		  .frame = { .kind = JU_FRAME_FP, .u.fp = { 1, 4, &epilogue, 1 } },
		  .file = "hello.jit",
		  .lines = lines,
		  .n_lines = 3 },
		{ .sz = sizeof(ju_blob),
		  .start = code + 0x40,
		  .size = inner_size,
		  .name = "jit_inner",
		  .frame = { .kind = JU_FRAME_CFI, .u.cfi = { &cfi, 1 } } },
	};
	err = ju_publish_batch(ctx, blobs, 2);
	if (err) {
		fprintf(stderr, "ju_publish_batch: %s: %s\n", ju_strerror(err), ju_errmsg());
		return 1;
	}
	printf("published 2 JIT functions; channels:");
	for (uint32_t bit = 1; bit < JU_CH_ALL; bit <<= 1)
		if (ju_channels(ctx) & bit)
			printf(" %s", ju_channel_name(bit));
	printf("\n");

	jit_outer();

	ju_unpublish_all(ctx);
	ju_close(ctx);
	munmap(code, 4096);
	return 0;
}
