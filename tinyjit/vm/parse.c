/* SPDX-License-Identifier: MIT */
/* parse.c - the .tj program text format, read into a tj_program.
 *
 * A program is a list of functions; one statement per line:
 *
 *     # comment (also ';' to end of line)
 *     func fib(n)          start a function with its arguments
 *         var a, b         declare variables (zero on entry)
 *     loop:                a label
 *         load n           an instruction and its operand
 *         call fib 1       call a function (or host function) with 1 argument
 *     end
 *
 * Operands: push takes an integer (decimal, optionally negative, or 0x hex
 * giving the 64-bit pattern); load/store a local name; jmp/jz/jnz a label;
 * fn a function name (pushes its index, for host callbacks); call a
 * function name and the argument count.
 *
 * The input is untrusted (the fuzz target feeds it bytes): every failure is a
 * diagnostic "file:line:col: error: expected ...", the first one stops the
 * parse, and sizes are bounded by the TJ_MAX_* limits.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm.h"

const tj_opinfo tj_opinfo_table[TJ_OP_COUNT] = {
#define OP(name, mn, opnd, pops, pushes) { #name, mn, opnd, pops, pushes },
#include "opcodes.def"
#undef OP
};

typedef enum { T_EOF, T_NL, T_IDENT, T_INT, T_LPAREN, T_RPAREN, T_COMMA, T_COLON, T_BAD } tok_kind;

typedef struct {
	tok_kind kind;
	const char *s; /* start in the source */
	size_t len;
	uint32_t line, col;
} token;

/* A forward reference resolved when the function (labels) or the program
 * (calls, fn) is complete. */
typedef struct {
	uint32_t insn;
	char *name;
	uint32_t line, col;
} fixup;

typedef struct {
	const char *file;
	const char *p, *end;
	uint32_t line, col;
	token tok; /* current token */
	tj_diag *d;
	bool failed;
	tj_program *prog;
	uint32_t cap_insns, cap_funcs;
	/* the function being parsed */
	tj_func *fn;
	uint32_t cap_slots;
	fixup *labels, *jumps, *calls;
	size_t n_labels, n_jumps, n_calls, cap_labels, cap_jumps, cap_calls;
} parser;

static void fail_at(parser *ps, uint32_t line, uint32_t col, const char *fmt, ...)
{
	if (ps->failed)
		return;
	ps->failed = true;
	int n = snprintf(ps->d->msg, sizeof ps->d->msg, "%s:%u:%u: error: ", ps->file, line, col);
	if (n < 0 || (size_t)n >= sizeof ps->d->msg)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ps->d->msg + n, sizeof ps->d->msg - (size_t)n, fmt, ap);
	va_end(ap);
}

/* Describe the current token for "expected X, found Y" messages. */
static const char *tok_desc(const token *t, char *buf, size_t n)
{
	switch (t->kind) {
	case T_EOF: return "end of file";
	case T_NL: return "end of line";
	case T_BAD:
		if (isprint((unsigned char)*t->s))
			snprintf(buf, n, "'%c'", *t->s);
		else
			snprintf(buf, n, "byte 0x%02x", (unsigned char)*t->s);
		return buf;
	default: snprintf(buf, n, "'%.*s'", (int)(t->len > 40 ? 40 : t->len), t->s); return buf;
	}
}

static void expected(parser *ps, const char *what)
{
	char buf[64];
	fail_at(ps, ps->tok.line, ps->tok.col, "expected %s, found %s", what,
		tok_desc(&ps->tok, buf, sizeof buf));
}

static void oom(parser *ps)
{
	fail_at(ps, ps->tok.line, ps->tok.col, "out of memory");
}

/* ---- lexer ---- */

static bool ident_start(int c)
{
	return isalpha(c) || c == '_';
}
static bool ident_char(int c)
{
	return isalnum(c) || c == '_' || c == '.';
}

static void advance(parser *ps, size_t n)
{
	ps->p += n;
	ps->col += (uint32_t)n;
}

static void next(parser *ps)
{
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r'))
		advance(ps, 1);
	if (ps->p < ps->end && (*ps->p == '#' || *ps->p == ';'))
		while (ps->p < ps->end && *ps->p != '\n')
			advance(ps, 1);
	token *t = &ps->tok;
	t->s = ps->p;
	t->line = ps->line;
	t->col = ps->col;
	t->len = 1;
	if (ps->p >= ps->end) {
		t->kind = T_EOF;
		t->len = 0;
		return;
	}
	unsigned char c = (unsigned char)*ps->p;
	if (c == '\n') {
		t->kind = T_NL;
		ps->p++;
		ps->line++;
		ps->col = 1;
		return;
	}
	if (ident_start(c) || isdigit(c) || c == '-') {
		const char *q = ps->p + 1;
		while (q < ps->end && ident_char((unsigned char)*q))
			q++;
		t->kind = ident_start(c) ? T_IDENT : T_INT;
		t->len = (size_t)(q - ps->p);
		advance(ps, t->len);
		return;
	}
	switch (c) {
	case '(': t->kind = T_LPAREN; break;
	case ')': t->kind = T_RPAREN; break;
	case ',': t->kind = T_COMMA; break;
	case ':': t->kind = T_COLON; break;
	default: t->kind = T_BAD; break;
	}
	advance(ps, 1);
}

static bool tok_is(const token *t, const char *word)
{
	return t->kind == T_IDENT && strlen(word) == t->len && memcmp(t->s, word, t->len) == 0;
}

/* Take an identifier token as a new string, or fail. */
static char *take_ident(parser *ps, const char *what)
{
	if (ps->tok.kind != T_IDENT) {
		expected(ps, what);
		return NULL;
	}
	if (ps->tok.len > TJ_MAX_IDENT) {
		fail_at(ps, ps->tok.line, ps->tok.col, "identifier longer than %d bytes", TJ_MAX_IDENT);
		return NULL;
	}
	char *s = strndup(ps->tok.s, ps->tok.len);
	if (!s)
		oom(ps);
	next(ps);
	return s;
}

/* Parse an integer literal token into *v. */
static bool take_int(parser *ps, int64_t *v)
{
	if (ps->tok.kind != T_INT) {
		expected(ps, "an integer");
		return false;
	}
	char buf[72];
	if (ps->tok.len >= sizeof buf) {
		fail_at(ps, ps->tok.line, ps->tok.col, "integer literal out of range");
		return false;
	}
	memcpy(buf, ps->tok.s, ps->tok.len);
	buf[ps->tok.len] = 0;
	bool neg = buf[0] == '-';
	const char *digits = buf + neg;
	bool hex = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X');
	const char *body = hex ? digits + 2 : digits;
	bool ok = *body != 0;
	for (const char *q = body; *q; q++)
		ok = ok && (hex ? isxdigit((unsigned char)*q) : isdigit((unsigned char)*q));
	if (!ok) {
		expected(ps, "an integer");
		return false;
	}
	errno = 0;
	uint64_t u = strtoull(body, NULL, hex ? 16 : 10);
	bool range = errno == 0 && (hex || u <= (uint64_t)INT64_MAX + neg);
	if (!range) {
		fail_at(ps, ps->tok.line, ps->tok.col, "integer literal out of range");
		return false;
	}
	*v = (int64_t)(neg ? 0 - u : u);
	next(ps);
	return true;
}

static void end_of_line(parser *ps)
{
	if (ps->tok.kind != T_NL && ps->tok.kind != T_EOF)
		expected(ps, "end of line");
}

/* ---- growing arrays ---- */

static bool grow(parser *ps, void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return true;
	size_t n = *cap ? *cap * 2 : 16;
	while (n < need)
		n *= 2;
	void *q = realloc(*arr, n * elem);
	if (!q) {
		oom(ps);
		return false;
	}
	*arr = q;
	*cap = n;
	return true;
}

static bool add_fixup(parser *ps, fixup **arr, size_t *n, size_t *cap, uint32_t insn, char *name,
		      uint32_t line, uint32_t col)
{
	if (!grow(ps, (void **)arr, cap, *n + 1, sizeof **arr)) {
		free(name);
		return false;
	}
	(*arr)[(*n)++] = (fixup){ insn, name, line, col };
	return true;
}

static tj_insn *emit(parser *ps, enum tj_op op, uint32_t line, uint32_t col)
{
	tj_program *p = ps->prog;
	if (p->n_insns >= TJ_MAX_INSNS) {
		fail_at(ps, line, col, "program longer than %u instructions", TJ_MAX_INSNS);
		return NULL;
	}
	size_t cap = ps->cap_insns;
	if (!grow(ps, (void **)&p->insns, &cap, p->n_insns + 1, sizeof *p->insns))
		return NULL;
	ps->cap_insns = (uint32_t)cap;
	tj_insn *in = &p->insns[p->n_insns++];
	*in = (tj_insn){ .op = (uint8_t)op, .line = line, .col = col };
	ps->fn->count++;
	return in;
}

/* ---- functions and locals ---- */

static int find_slot(const tj_func *f, const token *t)
{
	for (uint32_t i = 0; i < f->nslots; i++)
		if (strlen(f->slot_names[i]) == t->len && memcmp(f->slot_names[i], t->s, t->len) == 0)
			return (int)i;
	return -1;
}

static bool declare_slot(parser *ps)
{
	tj_func *f = ps->fn;
	uint32_t line = ps->tok.line, col = ps->tok.col;
	if (ps->tok.kind == T_IDENT && find_slot(f, &ps->tok) >= 0) {
		fail_at(ps, line, col, "'%.*s' is already declared in function '%s'", (int)ps->tok.len,
			ps->tok.s, f->name);
		return false;
	}
	if (f->nslots >= TJ_MAX_SLOTS) {
		fail_at(ps, line, col, "more than %d locals in function '%s'", TJ_MAX_SLOTS, f->name);
		return false;
	}
	char *name = take_ident(ps, "a local name");
	if (!name)
		return false;
	size_t cap = ps->cap_slots;
	if (!grow(ps, (void **)&f->slot_names, &cap, f->nslots + 1, sizeof(char *))) {
		free(name);
		return false;
	}
	ps->cap_slots = (uint32_t)cap;
	f->slot_names[f->nslots++] = name;
	return true;
}

static void parse_func_header(parser *ps)
{
	uint32_t line = ps->tok.line, col = ps->tok.col;
	next(ps); /* func */
	tj_program *p = ps->prog;
	if (p->n_funcs >= TJ_MAX_FUNCS) {
		fail_at(ps, line, col, "more than %d functions", TJ_MAX_FUNCS);
		return;
	}
	size_t cap = ps->cap_funcs;
	if (!grow(ps, (void **)&p->funcs, &cap, p->n_funcs + 1, sizeof *p->funcs))
		return;
	ps->cap_funcs = (uint32_t)cap;
	char *name = take_ident(ps, "a function name after 'func'");
	if (!name)
		return;
	for (uint32_t i = 0; i < p->n_funcs; i++)
		if (strcmp(p->funcs[i].name, name) == 0) {
			fail_at(ps, line, col, "function '%s' is already defined at line %u", name,
				p->funcs[i].line);
			free(name);
			return;
		}
	tj_func *f = &p->funcs[p->n_funcs++];
	*f = (tj_func){ .name = name, .first = p->n_insns, .line = line, .col = col };
	ps->fn = f;
	ps->cap_slots = 0;
	if (ps->tok.kind != T_LPAREN) {
		expected(ps, "'(' after the function name");
		return;
	}
	next(ps);
	if (ps->tok.kind != T_RPAREN) {
		for (;;) {
			if (!declare_slot(ps))
				return;
			if (ps->tok.kind == T_RPAREN)
				break;
			if (ps->tok.kind != T_COMMA) {
				expected(ps, "',' or ')' in the argument list");
				return;
			}
			next(ps);
		}
	}
	next(ps); /* ) */
	f->nargs = f->nslots;
	end_of_line(ps);
	tj_insn *in = emit(ps, TJ_OP_ENTER, line, col);
	if (in)
		in->a = p->n_funcs - 1;
}

static void parse_var(parser *ps)
{
	next(ps); /* var */
	for (;;) {
		if (!declare_slot(ps))
			return;
		if (ps->tok.kind != T_COMMA)
			break;
		next(ps);
	}
	end_of_line(ps);
}

static void free_fixups(fixup *arr, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(arr[i].name);
}

/* At `end`: bind every jump of the function to its label. */
static void finish_func(parser *ps)
{
	for (size_t i = 0; i < ps->n_jumps && !ps->failed; i++) {
		fixup *j = &ps->jumps[i];
		size_t k = 0;
		while (k < ps->n_labels && strcmp(ps->labels[k].name, j->name) != 0)
			k++;
		if (k == ps->n_labels)
			fail_at(ps, j->line, j->col, "undefined label '%s' in function '%s'", j->name,
				ps->fn->name);
		else
			ps->prog->insns[j->insn].a = ps->labels[k].insn;
	}
	free_fixups(ps->labels, ps->n_labels);
	free_fixups(ps->jumps, ps->n_jumps);
	ps->n_labels = ps->n_jumps = 0;
	ps->fn = NULL;
}

static void parse_label(parser *ps, char *name, uint32_t line, uint32_t col)
{
	for (size_t k = 0; k < ps->n_labels; k++)
		if (strcmp(ps->labels[k].name, name) == 0) {
			fail_at(ps, line, col, "label '%s' is already defined at line %u", name,
				ps->labels[k].line);
			free(name);
			return;
		}
	add_fixup(ps, &ps->labels, &ps->n_labels, &ps->cap_labels, ps->prog->n_insns, name, line, col);
}

static int find_mnemonic(const token *t)
{
	for (int op = 0; op < TJ_OP_COUNT; op++) {
		const char *m = tj_opinfo_table[op].mnemonic;
		if (m && tok_is(t, m))
			return op;
	}
	return -1;
}

static void parse_insn(parser *ps)
{
	uint32_t line = ps->tok.line, col = ps->tok.col;
	int op = find_mnemonic(&ps->tok);
	if (op < 0) {
		fail_at(ps, line, col, "expected an instruction, found unknown '%.*s'",
			(int)(ps->tok.len > 40 ? 40 : ps->tok.len), ps->tok.s);
		return;
	}
	next(ps);
	tj_insn *in = emit(ps, (enum tj_op)op, line, col);
	if (!in)
		return;
	uint32_t at = ps->prog->n_insns - 1;
	uint32_t oline = ps->tok.line, ocol = ps->tok.col;
	char *name;
	int slot;
	switch (tj_opinfo_table[op].operand) {
	case TJ_OPND_NONE: break;
	case TJ_OPND_INT: take_int(ps, &in->a); break;
	case TJ_OPND_LOCAL:
		if (ps->tok.kind != T_IDENT) {
			expected(ps, "a local name");
			return;
		}
		slot = find_slot(ps->fn, &ps->tok);
		if (slot < 0) {
			fail_at(ps, oline, ocol, "unknown local '%.*s' in function '%s'",
				(int)(ps->tok.len > 40 ? 40 : ps->tok.len), ps->tok.s, ps->fn->name);
			return;
		}
		in->a = slot;
		next(ps);
		break;
	case TJ_OPND_LABEL:
		if ((name = take_ident(ps, "a label name")))
			add_fixup(ps, &ps->jumps, &ps->n_jumps, &ps->cap_jumps, at, name, oline, ocol);
		break;
	case TJ_OPND_FUNC:
	case TJ_OPND_CALL:
		if (!(name = take_ident(ps, "a function name")))
			return;
		if (!add_fixup(ps, &ps->calls, &ps->n_calls, &ps->cap_calls, at, name, oline, ocol))
			return;
		if (tj_opinfo_table[op].operand == TJ_OPND_CALL) {
			if (ps->tok.kind != T_INT) {
				expected(ps, "the argument count after the function name");
				return;
			}
			uint32_t cline = ps->tok.line, ccol = ps->tok.col;
			if (take_int(ps, &in->b) && (in->b < 0 || in->b > TJ_MAX_SLOTS))
				fail_at(ps, cline, ccol, "argument count must be 0..%d", TJ_MAX_SLOTS);
		}
		break;
	}
	end_of_line(ps);
}

static void parse_statement(parser *ps)
{
	if (ps->tok.kind == T_NL)
		return;
	if (!ps->fn) {
		if (tok_is(&ps->tok, "func"))
			parse_func_header(ps);
		else
			expected(ps, "'func'");
		return;
	}
	if (ps->tok.kind != T_IDENT) {
		expected(ps, "an instruction, a label, 'var' or 'end'");
		return;
	}
	if (tok_is(&ps->tok, "end")) {
		next(ps);
		end_of_line(ps);
		if (!ps->failed)
			finish_func(ps);
		return;
	}
	if (tok_is(&ps->tok, "var")) {
		parse_var(ps);
		return;
	}
	if (tok_is(&ps->tok, "func")) {
		fail_at(ps, ps->tok.line, ps->tok.col,
			"expected 'end' before a new function (function '%s' opened at line %u)",
			ps->fn->name, ps->fn->line);
		return;
	}
	/* a label is an identifier followed by ':' */
	const char *save_p = ps->p;
	uint32_t save_line = ps->line, save_col = ps->col;
	token save_tok = ps->tok;
	char *name = take_ident(ps, "a label");
	if (!name)
		return;
	if (ps->tok.kind == T_COLON) {
		next(ps);
		end_of_line(ps);
		parse_label(ps, name, save_tok.line, save_tok.col);
		return;
	}
	free(name);
	ps->p = save_p;
	ps->line = save_line;
	ps->col = save_col;
	ps->tok = save_tok;
	parse_insn(ps);
}

static int find_host(const tj_program *p, const char *name)
{
	for (uint32_t i = 0; i < p->n_hosts; i++)
		if (strcmp(p->hosts[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Resolve call and fn names to functions or host functions. */
static void link_calls(parser *ps)
{
	tj_program *p = ps->prog;
	for (size_t i = 0; i < ps->n_calls && !ps->failed; i++) {
		fixup *c = &ps->calls[i];
		tj_insn *in = &p->insns[c->insn];
		int f = tj_find_func(p, c->name);
		if (f >= 0) {
			in->a = f;
			if (in->op == TJ_OP_CALL && (uint64_t)in->b != p->funcs[f].nargs)
				fail_at(ps, c->line, c->col,
					"wrong arity: function '%s' takes %u argument%s, called with %lld",
					c->name, p->funcs[f].nargs, p->funcs[f].nargs == 1 ? "" : "s",
					(long long)in->b);
			continue;
		}
		int h = in->op == TJ_OP_CALL ? find_host(p, c->name) : -1;
		if (h < 0) {
			fail_at(ps, c->line, c->col, "unknown function '%s'", c->name);
			continue;
		}
		in->op = TJ_OP_HOST;
		in->a = h;
		if ((uint64_t)in->b != p->hosts[h].nargs)
			fail_at(ps, c->line, c->col,
				"wrong arity: host function '%s' takes %u argument%s, called with %lld",
				c->name, p->hosts[h].nargs, p->hosts[h].nargs == 1 ? "" : "s",
				(long long)in->b);
	}
}

tj_program *tj_load(const char *file, const char *src, size_t len, const tj_host *hosts, uint32_t n_hosts,
		    tj_diag *d)
{
	parser ps = { .file = file, .p = src, .end = src + len, .line = 1, .col = 1, .d = d };
	d->msg[0] = 0;
	ps.prog = calloc(1, sizeof *ps.prog);
	if (!ps.prog || !(ps.prog->file = strdup(file))) {
		snprintf(d->msg, sizeof d->msg, "%s: error: out of memory", file);
		tj_program_free(ps.prog);
		return NULL;
	}
	ps.prog->hosts = hosts;
	ps.prog->n_hosts = n_hosts;
	next(&ps);
	while (!ps.failed && ps.tok.kind != T_EOF) {
		parse_statement(&ps);
		if (!ps.failed && ps.tok.kind == T_NL)
			next(&ps);
	}
	if (!ps.failed && ps.fn)
		fail_at(&ps, ps.tok.line, ps.tok.col, "expected 'end' for function '%s' opened at line %u",
			ps.fn->name, ps.fn->line);
	if (!ps.failed)
		link_calls(&ps);
	free_fixups(ps.labels, ps.n_labels);
	free_fixups(ps.jumps, ps.n_jumps);
	free_fixups(ps.calls, ps.n_calls);
	free(ps.labels);
	free(ps.jumps);
	free(ps.calls);
	if (!ps.failed && tj_verify(ps.prog, d) == 0)
		return ps.prog;
	tj_program_free(ps.prog);
	return NULL;
}

void tj_program_free(tj_program *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->n_funcs; i++) {
		for (uint32_t k = 0; k < p->funcs[i].nslots; k++)
			free(p->funcs[i].slot_names[k]);
		free(p->funcs[i].slot_names);
		free(p->funcs[i].name);
	}
	free(p->funcs);
	free(p->insns);
	free(p->file);
	free(p);
}

int tj_find_func(const tj_program *p, const char *name)
{
	for (uint32_t i = 0; i < p->n_funcs; i++)
		if (strcmp(p->funcs[i].name, name) == 0)
			return (int)i;
	return -1;
}

const tj_func *tj_func_of(const tj_program *p, uint32_t insn)
{
	for (uint32_t i = 0; i < p->n_funcs; i++)
		if (insn >= p->funcs[i].first && insn - p->funcs[i].first < p->funcs[i].count)
			return &p->funcs[i];
	return NULL;
}
