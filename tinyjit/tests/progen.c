/* SPDX-License-Identifier: MIT */
/* progen.c - generate random terminating .tj programs (see progen.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "../vm/vm.h"
#include "progen.h"

typedef struct {
	uint64_t s;
	char *buf;
	size_t cap, len;
	int overflow;
	int nfuncs, func; /* function count, current function */
	int labels;       /* label counter */
	int loop_depth;
	int calls_left;
	const char *binops[TJ_OP_COUNT]; /* the binary operators' mnemonics */
	unsigned n_binops;
} gen;

static uint64_t rnd(gen *g)
{
	/* xorshift64* */
	g->s ^= g->s >> 12;
	g->s ^= g->s << 25;
	g->s ^= g->s >> 27;
	return g->s * 0x2545F4914F6CDD1DULL;
}

static unsigned pick(gen *g, unsigned n)
{
	return (unsigned)(rnd(g) % n);
}

__attribute__((format(printf, 2, 3))) static void out(gen *g, const char *fmt, ...)
{
	if (g->overflow)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(g->buf + g->len, g->cap - g->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= g->cap - g->len) {
		g->overflow = 1;
		return;
	}
	g->len += (size_t)n;
}

static const char *const locals[] = { "a", "b", "x", "y" };

static int64_t constant(gen *g)
{
	static const int64_t edge[] = {
		0, 1, -1, 2, 3, 7, 63, 64, -64, INT64_MAX, INT64_MIN, INT32_MAX, (int64_t)1 << 32
	};
	switch (pick(g, 3)) {
	case 0: return edge[pick(g, sizeof edge / sizeof edge[0])];
	case 1: return (int64_t)pick(g, 200) - 100;
	default: return (int64_t)rnd(g);
	}
}

static void expr(gen *g, int depth);

static void call_expr(gen *g, int depth)
{
	int callee = g->func + 1 + (int)pick(g, (unsigned)(g->nfuncs - g->func - 1));
	g->calls_left--;
	if (pick(g, 3) == 0) {
		/* back through the C host: C -> JIT -> C -> JIT */
		out(g, "    fn f%d\n", callee);
		expr(g, depth + 1);
		expr(g, depth + 1);
		out(g, "    call invoke2 3\n");
		return;
	}
	expr(g, depth + 1);
	expr(g, depth + 1);
	out(g, "    call f%d 2\n", callee);
}

static void expr(gen *g, int depth)
{
	unsigned k = depth >= 3 ? pick(g, 2) : pick(g, 9);
	switch (k) {
	case 0: out(g, "    push %lld\n", (long long)constant(g)); return;
	case 1: out(g, "    load %s\n", locals[pick(g, 4)]); return;
	case 2:
	case 3:
	case 4: {
		const char *op = g->binops[pick(g, g->n_binops)];
		expr(g, depth + 1);
		expr(g, depth + 1);
		/* most divisors are made odd, so most programs run to the end */
		if ((op[0] == 'd' || op[0] == 'm') && op[1] != 'u' && pick(g, 8))
			out(g, "    push 1\n    or\n");
		out(g, "    %s\n", op);
		return;
	}
	case 5:
		expr(g, depth + 1);
		out(g, "    %s\n", pick(g, 2) ? "neg" : "not");
		return;
	case 6: /* stack shuffles */
		expr(g, depth + 1);
		expr(g, depth + 1);
		out(g, "    %s\n", pick(g, 2) ? "swap\n    sub" : "dup\n    pop\n    pop");
		return;
	case 7:
		expr(g, depth + 1);
		out(g, "    dup\n    mul\n");
		return;
	default:
		if (g->func + 1 < g->nfuncs && g->calls_left > 0)
			call_expr(g, depth);
		else
			out(g, "    push %lld\n", (long long)constant(g));
	}
}

static void stmts(gen *g, int n);

/* A statement: an assignment, an if/else, or (outside loops) a counted
 * loop whose counter is the variable c. */
static void stmt(gen *g)
{
	int l = g->labels;
	switch (pick(g, g->loop_depth ? 3 : 4)) {
	case 0:
	case 1:
		expr(g, 0);
		out(g, "    store %s\n", locals[2 + pick(g, 2)]);
		return;
	case 2:
		g->labels += 2;
		expr(g, 1);
		out(g, "    %s L%d\n", pick(g, 2) ? "jz" : "jnz", l);
		stmts(g, 1 + (int)pick(g, 2));
		out(g, "    jmp L%d\nL%d:\n", l + 1, l);
		stmts(g, 1);
		out(g, "L%d:\n", l + 1);
		return;
	default:
		g->labels += 2;
		g->loop_depth++;
		out(g, "    push %u\n    store c\nL%d:\n    load c\n    jz L%d\n", 1 + pick(g, 3), l, l + 1);
		stmts(g, 1 + (int)pick(g, 2));
		out(g, "    load c\n    push 1\n    sub\n    store c\n    jmp L%d\nL%d:\n", l, l + 1);
		g->loop_depth--;
	}
}

static void stmts(gen *g, int n)
{
	for (int i = 0; i < n; i++)
		stmt(g);
}

/* f<k>(a, b): a is capped to 0..3 at entry and is what the function's one
 * optional self-call decreases, so self-recursion is at most 4 deep. */
static void function(gen *g, int k)
{
	g->func = k;
	g->calls_left = 2;
	g->loop_depth = 0;
	out(g, "func f%d(a, b)\n    var x, y, c\n    load a\n    push 3\n    and\n    store a\n", k);
	if (pick(g, 3) == 0) {
		out(g, "    load a\n    jz S%d\n    load a\n    push 1\n    sub\n", k);
		expr(g, 2);
		out(g, "    call f%d 2\n    store y\nS%d:\n", k, k);
	}
	stmts(g, 1 + (int)pick(g, 4));
	expr(g, 0);
	out(g, "    ret\nend\n\n");
}

/* The binary operators of the source language, div and mod included, in
 * opcodes.def's order: the opcodes that pop two values, push one and take
 * no operand. */
static void list_binops(gen *g)
{
	for (int op = 0; op < TJ_OP_COUNT; op++) {
		const tj_opinfo *o = &tj_opinfo_table[op];
		if (o->mnemonic && o->operand == TJ_OPND_NONE && o->pops == 2 && o->pushes == 1)
			g->binops[g->n_binops++] = o->mnemonic;
	}
}

size_t tj_progen(uint64_t seed, char *buf, size_t cap)
{
	gen g = { .s = seed * 0x9E3779B97F4A7C15ULL + 1, .buf = buf, .cap = cap };
	if (!cap)
		return 0;
	list_binops(&g);
	g.nfuncs = 2 + (int)pick(&g, 4);
	out(&g, "# generated by progen, seed %llu\n", (unsigned long long)seed);
	out(&g, "func main(a, b)\n    load a\n    load b\n    call f0 2\n    ret\nend\n\n");
	for (int k = 0; k < g.nfuncs; k++)
		function(&g, k);
	return g.overflow ? 0 : g.len;
}

void tj_progen_args(uint64_t seed, int64_t args[2])
{
	gen g = { .s = seed * 0xD1B54A32D192ED03ULL + 7 };
	args[0] = (int64_t)pick(&g, 20);
	args[1] = constant(&g);
}
