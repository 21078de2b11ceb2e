/* SPDX-License-Identifier: MIT */
/* test-traceframe.c - traceframe.c on trace code written by hand, in the
 * shapes LuaJIT's x86-64 backend emits (lj_asm.c asm_head_root and
 * asm_head_side, lj_asm_x86.h asm_tail_fixup): a root trace with and
 * without a spill area, 8- and 32-bit adjustments, a side trace whose head
 * moves registers first, the three addressing forms of the vmstate store,
 * and code that is no trace head.  Prints one line per case; exit 1 if any
 * case is wrong.
 */
#include <stdio.h>
#include <string.h>

#include "traceframe.h"

static int failures;

static void expect(const char *what, int ok)
{
	printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
	failures += !ok;
}

/* The CFA offset a row defines: DW_CFA_def_cfa rsp (0x0c 7), then a ULEB128. */
static unsigned cfa(const ju_cfi_range *r)
{
	if (r->len < 3 || r->insns[0] != 0x0c || r->insns[1] != 7)
		return 0;
	unsigned v = 0, shift = 0;
	for (size_t i = 2; i < r->len; i++, shift += 7) {
		v |= (unsigned)(r->insns[i] & 0x7f) << shift;
		if (!(r->insns[i] & 0x80))
			break;
	}
	return v;
}

/* Code built from pieces: a byte buffer with its length. */
typedef struct {
	uint8_t b[256];
	uint32_t n;
} code;

static void put(code *c, const void *p, uint32_t n)
{
	memcpy(c->b + c->n, p, n);
	c->n += n;
}

#define PUT(c, ...)                                                                                          \
	do {                                                                                                 \
		const uint8_t bytes_[] = { __VA_ARGS__ };                                                    \
		put(c, bytes_, sizeof bytes_);                                                               \
	} while (0)

/* mov dword [r14-0xec8], traceno: as in the first trace of probe.lua */
static void vmstate_r14(code *c, uint8_t traceno)
{
	PUT(c, 0x41, 0xc7, 0x86, 0x38, 0xf1, 0xff, 0xff, traceno, 0, 0, 0);
}

static void body(code *c)
{
	PUT(c, 0x89, 0xef);             /* mov %ebp,%edi */
	PUT(c, 0x41, 0xff, 0xd4);       /* call *%r12 */
	PUT(c, 0x83, 0xc5, 0x01);       /* add $1,%ebp */
	PUT(c, 0x0f, 0x8e, 0, 0, 0, 0); /* jle (the loop) */
}

int main(void)
{
	ljtf_frame f;
	ljtf_cfi cfi;

	/* A looping root trace with a 16-byte spill area. */
	code c = { 0 };
	PUT(&c, 0x48, 0x83, 0xc4, 0xf0); /* add $-16,%rsp */
	vmstate_r14(&c, 1);
	body(&c);
	expect("root, add rsp imm8: decodes", ljtf_decode(c.b, c.n, 1, 0, &f) == LJTF_OK);
	expect("root, add rsp imm8: spadjust 16 after the head at 4, no tail",
	       f.spadj == 16 && f.entry_adj == 0 && f.head_end == 4 && f.tail_start == c.n);
	expect("root, add rsp imm8: two CFI rows",
	       !ljtf_cfi_build(&f, &cfi) && cfi.n == 2 && cfi.ranges[0].end == 4 && cfi.ranges[1].start == 4);
	/* DW_CFA_def_cfa rsp, 96 before the head; 112 after */
	expect("root: CFA = rsp+96, then rsp+112", cfa(&cfi.ranges[0]) == 96 && cfa(&cfi.ranges[1]) == 112);

	/* The same trace leaving to the interpreter: add rsp,16; jmp. */
	PUT(&c, 0x48, 0x83, 0xc4, 0x10, 0xe9, 0, 0, 0, 0);
	ljtf_decode(c.b, c.n, 1, 0, &f);
	expect("root with a tail: the jmp runs at the interpreter's level",
	       f.tail_start == c.n - 5 && !ljtf_cfi_build(&f, &cfi) && cfi.n == 3 &&
		       cfa(&cfi.ranges[2]) == 96);

	/* A 32-bit adjustment, rip-relative vmstate. */
	c = (code){ 0 };
	PUT(&c, 0x48, 0x81, 0xc4, 0x00, 0xfe, 0xff, 0xff);                /* add $-512,%rsp */
	PUT(&c, 0xc7, 0x05, 0x10, 0x20, 0x30, 0x00, 300 & 0xff, 1, 0, 0); /* mov dword [rip+x], 300 */
	body(&c);
	expect("root, add rsp imm32, rip-relative vmstate: spadjust 512",
	       ljtf_decode(c.b, c.n, 300, 0, &f) == LJTF_OK && f.spadj == 512 && f.head_end == 7);

	/* No spill area: the trace starts with the vmstate store. */
	c = (code){ 0 };
	PUT(&c, 0xc7, 0x04, 0x25, 0x00, 0x10, 0x00, 0x00, 7, 0, 0, 0); /* mov dword [abs], 7 */
	body(&c);
	expect("root without a spill area: one row at the interpreter's trace level",
	       ljtf_decode(c.b, c.n, 7, 0, &f) == LJTF_OK && f.spadj == 0 && f.head_end == 0 &&
		       !ljtf_cfi_build(&f, &cfi) && cfi.n == 1 && cfa(&cfi.ranges[0]) == 96);

	/* A side trace of a parent with spadjust 16: register moves, a reload
	 * from the parent's spill slot, then 32 more bytes; its tail gives back
	 * all 48. */
	c = (code){ 0 };
	PUT(&c, 0x48, 0x89, 0xc3);             /* mov %rax,%rbx */
	PUT(&c, 0x48, 0x8b, 0x44, 0x24, 0x08); /* mov 8(%rsp),%rax */
	PUT(&c, 0x48, 0x83, 0xc4, 0xe0);       /* add $-32,%rsp */
	vmstate_r14(&c, 3);
	body(&c);
	PUT(&c, 0x48, 0x83, 0xc4, 0x30, 0xe9, 0, 0, 0, 0); /* add $48,%rsp; jmp */
	expect("side trace: entered at the parent's 16, then 48, tail at 0",
	       ljtf_decode(c.b, c.n, 3, 16, &f) == LJTF_OK && f.entry_adj == 16 && f.spadj == 48 &&
		       f.head_end == 12 && f.tail_start == c.n - 5);
	ljtf_cfi_build(&f, &cfi);
	expect("side trace: rows rsp+112, rsp+144, rsp+96", cfi.n == 3 && cfa(&cfi.ranges[0]) == 112 &&
								    cfa(&cfi.ranges[1]) == 144 &&
								    cfa(&cfi.ranges[2]) == 96);

	/* A side trace that needs no more room than its parent. */
	c = (code){ 0 };
	vmstate_r14(&c, 4);
	body(&c);
	expect("side trace without its own adjustment keeps the parent's",
	       ljtf_decode(c.b, c.n, 4, 32, &f) == LJTF_OK && f.spadj == 32 && f.head_end == 0 &&
		       !ljtf_cfi_build(&f, &cfi) && cfi.n == 1 && cfa(&cfi.ranges[0]) == 128);

	/* The store of another trace's number, and code with no store. */
	c = (code){ 0 };
	vmstate_r14(&c, 5);
	body(&c);
	expect("a vmstate store of another number is no head of this trace",
	       ljtf_decode(c.b, c.n, 6, 0, &f) == LJTF_ENOHEAD);
	c = (code){ 0 };
	body(&c);
	expect("code without a vmstate store is refused", ljtf_decode(c.b, c.n, 1, 0, &f) == LJTF_ENOHEAD);

	/* A head that gives stack back is not LuaJIT's. */
	c = (code){ 0 };
	PUT(&c, 0x48, 0x83, 0xc4, 0x10);
	vmstate_r14(&c, 1);
	expect("a head adding to rsp is refused", ljtf_decode(c.b, c.n, 1, 0, &f) == LJTF_EADJUST);

	/* Every row says where the six registers are: rbp at CFA-16 ... r13 at CFA-88. */
	c = (code){ 0 };
	vmstate_r14(&c, 1);
	ljtf_decode(c.b, c.n, 1, 0, &f);
	ljtf_cfi_build(&f, &cfi);
	static const uint8_t regs[] = { 0x86, 2, 0x83, 3, 0x8f, 4, 0x8e, 5, 0x8c, 10, 0x8d, 11 };
	expect("rows: rbp, rbx, r15, r14, r12, r13 at CFA-16, -24, -32, -40, -80, -88",
	       cfi.ranges[0].len == 3 + sizeof regs && !memcmp(cfi.ranges[0].insns + 3, regs, sizeof regs));

	printf("test-traceframe: %d failed\n", failures);
	return failures ? 1 : 0;
}
