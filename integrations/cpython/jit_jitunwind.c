/* jit_jitunwind.c - CPython's JIT executors published through libjitunwind.
 *
 * Compiled into the interpreter as Python/jit_jitunwind.c (build.sh copies
 * it there; patches/0003 adds it to Makefile.pre.in and calls it from
 * Python/jit.c).  Python/jit.c calls _PyJIT_Publish once an executor's
 * memory is executable and _PyJIT_Unpublish before it unmaps it.
 *
 * An executor is one mapping: a trampoline (_ENTRY, the C entry point that
 * saves the callee-saved registers), one stencil copy per micro-op, the
 * _FATAL_ERROR stencil, then data.  Its frame is described with the
 * compiler's own call frame instructions, one range per stencil copy
 * (Tools/jit/_unwind.py keeps them in jit_stencils.h): the stencils use the
 * GHC convention, rbp is the Python stack pointer and not a frame pointer,
 * and each stencil moves rsp around its C calls as it likes.  Each copy is
 * entered with the return address into the trampoline of the executor that
 * was entered at [rsp], also after a side exit into another executor: its
 * frame is the trampoline's callee, whichever mapping it lies in.
 *
 * The executor is named after the Python function the trace starts in
 * ("py:QUALNAME (FILE:LINE)", FILE its base name and LINE where the trace
 * enters), each micro-op gets the line of its bytecode (its target, which
 * for micro-ops that can leave the trace is kept by the exit stub or the
 * exit data), and the Python functions inlined into the trace (_PUSH_FRAME
 * .. _POP_FRAME) are guest inline frames, called at the CALL's line.
 *
 * The cold exits, the 200 one-micro-op executors CPython compiles when the
 * JIT is turned on, wait and are published in one batch just before the
 * first trace: their code runs only when a trace leaves through a side
 * exit, so none can be on a stack before a trace is published, and a
 * program that never makes a trace (python -c pass) publishes nothing.
 * One batch costs far less than 200 publishes (docs/BENCHMARKS.md).
 *
 * The context is opened with the first trace; JITUNWIND picks its
 * channels as for any client (docs/API.md).  A context that cannot be
 * opened, or a publish that fails, is reported once on stderr; the JIT goes
 * on unpublished.
 *
 * SPDX-License-Identifier: MIT
 */
#include "Python.h"

/* in the order Python/jit.c includes them: pycore_jit.h last */
#include "pycore_code.h"
#include "pycore_frame.h"
#include "pycore_opcode_metadata.h"
#include "pycore_optimizer.h"
#include "pycore_uop_ids.h"
#include "pycore_uop_metadata.h"
#include "pycore_jit.h"

#include <jitunwind.h>
#include <stdio.h>
#include <string.h>

#ifdef _Py_JIT

static ju_ctx *ju;
static int ju_state; /* 0: not opened yet; 1: open; -1: failed, or off */
static int ju_warned;

static void warn_once(const char *what, int err)
{
	if (ju_warned)
		return;
	ju_warned = 1;
	fprintf(stderr, "python: jitunwind: %s: %s (%s); JIT code may be unnamed to debuggers\n", what,
		ju_strerror(err), ju_errmsg());
}

static ju_ctx *context(void)
{
	if (ju_state == 0) {
		int err = ju_open(NULL, &ju);
		ju_state = err ? -1 : 1;
		if (err)
			warn_once("ju_open", err);
	}
	return ju_state > 0 ? ju : NULL;
}

/* A Python frame of the trace: the root function (0) or one that
 * _PUSH_FRAME entered, with the line of the CALL in its caller. */
typedef struct {
	PyCodeObject *code;
	int parent; /* index of the caller's frame; -1 for the root */
	int call_line;
	int depth;
} trace_frame;

/* Enough for every _PUSH_FRAME of a trace (at most one a micro-op). */
#define MAX_FRAMES (UOP_MAX_TRACE_LENGTH + 1)
#define MAX_TEXT 512

typedef struct {
	trace_frame frames[MAX_FRAMES];
	int n_frames;
	int frame_of[UOP_MAX_TRACE_LENGTH]; /* the frame each micro-op runs in */
	ju_cfi_range cfi[UOP_MAX_TRACE_LENGTH + 2];
	ju_line lines[UOP_MAX_TRACE_LENGTH + 1];
	ju_inline inlines[UOP_MAX_TRACE_LENGTH];
	char names[MAX_FRAMES][MAX_TEXT];
	int open[UOP_MAX_TRACE_LENGTH]; /* open inline entries, outermost first */
} publish_work;

static const char *utf8(PyObject *s)
{
	const char *r = s ? PyUnicode_AsUTF8(s) : NULL;
	if (!r)
		PyErr_Clear();
	return r ? r : "?";
}

/* The code object a _PUSH_FRAME enters or a _POP_FRAME returns to: its
 * operand is a function, a code object with the low bit set, or 0. */
static PyCodeObject *operand_code(const _PyUOpInstruction *inst)
{
	uintptr_t op = (uintptr_t)inst->operand;
	if (op == 0)
		return NULL;
	if (op & 1) {
		PyObject *co = (PyObject *)(op & ~(uintptr_t)1);
		return PyCode_Check(co) ? (PyCodeObject *)co : NULL;
	}
	PyObject *f = (PyObject *)op;
	if (!PyFunction_Check(f))
		return NULL;
	PyObject *co = PyFunction_GET_CODE(f);
	return PyCode_Check(co) ? (PyCodeObject *)co : NULL;
}

/* The bytecode index a micro-op stands for.  Micro-ops that can leave the
 * trace lost their target when prepare_for_execution gave them a jump to a
 * stub: it is the _DEOPT stub's target, the exit's (an _EXIT_TRACE stub's
 * exit data) or the _ERROR_POP_N stub's operand.  -1 if unknown. */
static int bytecode_index(const _PyExecutorObject *ex, const _PyUOpInstruction trace[], size_t length,
			  size_t i)
{
	const _PyUOpInstruction *in = &trace[i];
	switch (in->format) {
	case UOP_FORMAT_TARGET:
		if (in->opcode == _ERROR_POP_N)
			return (int)in->operand;
		return (int)in->target;
	case UOP_FORMAT_EXIT:
		return in->exit_index < ex->exit_count ? (int)ex->exits[in->exit_index].target : -1;
	case UOP_FORMAT_JUMP:
		if (in->jump_target > i && in->jump_target < length)
			return bytecode_index(ex, trace, length, in->jump_target);
		if (in->error_target > i && in->error_target < length)
			return bytecode_index(ex, trace, length, in->error_target);
		return -1;
	}
	return -1;
}

/* Which Python frame each micro-op runs in: _PUSH_FRAME (the call) runs in
 * the caller, the micro-ops after it in the callee, _POP_FRAME and the
 * micro-ops before it in the callee.  Exit and error stubs (after the
 * trace's body, reached only through jumps) run in the frame of the first
 * micro-op that jumps to them. */
static void assign_frames(publish_work *w, const _PyExecutorObject *ex, PyCodeObject *root,
			  const _PyUOpInstruction trace[], size_t length)
{
	w->frames[0] = (trace_frame){ root, -1, 0, 0 };
	w->n_frames = 1;
	for (size_t i = 0; i < length; i++)
		w->frame_of[i] = -1;
	int cur = 0;
	for (size_t i = 0; i < length; i++) {
		const _PyUOpInstruction *in = &trace[i];
		if (w->frame_of[i] >= 0) /* a stub, seen from its first jump */
			continue;
		w->frame_of[i] = cur;
		if (in->format == UOP_FORMAT_JUMP || in->format == UOP_FORMAT_EXIT) {
			if (in->format == UOP_FORMAT_JUMP && in->jump_target > i &&
			    in->jump_target < length && w->frame_of[in->jump_target] < 0)
				w->frame_of[in->jump_target] = cur;
			if ((_PyUop_Flags[in->opcode] & HAS_ERROR_FLAG) && in->error_target > i &&
			    in->error_target < length && w->frame_of[in->error_target] < 0)
				w->frame_of[in->error_target] = cur;
		}
		if (in->opcode == _PUSH_FRAME && w->n_frames < MAX_FRAMES) {
			PyCodeObject *callee = operand_code(in);
			PyCodeObject *caller = w->frames[cur].code;
			int at = bytecode_index(ex, trace, length, i);
			int line = at >= 0 ? PyCode_Addr2Line(caller, at * (int)sizeof(_Py_CODEUNIT)) : -1;
			if (!callee) /* unknown: the callee's micro-ops stay in the caller */
				continue;
			w->frames[w->n_frames] =
				(trace_frame){ callee, cur, line > 0 ? line : 1, w->frames[cur].depth + 1 };
			cur = w->n_frames++;
		} else if ((in->opcode == _POP_FRAME || in->opcode == _RETURN_GENERATOR ||
			    in->opcode == _YIELD_VALUE) &&
			   w->frames[cur].parent >= 0) {
			cur = w->frames[cur].parent;
		}
	}
}

static void format_name(char *buf, size_t n, PyCodeObject *co, int line)
{
	const char *file = utf8(co->co_filename);
	const char *base = strrchr(file, '/');
	snprintf(buf, n, "py:%s (%s:%d)", utf8(co->co_qualname), base ? base + 1 : file, line);
}

/* The inline entries for [start, end) running in frame f: close the open
 * entries that are not f's ancestors, open the ones that are missing. */
static int enter_frame(publish_work *w, int *n_open, size_t *n_inl, int f, uint32_t start)
{
	int chain[JU_INLINE_DEPTH_MAX + 1], depth = 0;
	for (int k = f; k > 0 && depth <= JU_INLINE_DEPTH_MAX; k = w->frames[k].parent)
		chain[depth++] = k;
	if (depth > JU_INLINE_DEPTH_MAX)
		return -1;
	/* chain[depth-1] is the outermost inlined frame */
	int keep = 0;
	while (keep < *n_open && keep < depth) {
		const ju_inline *e = &w->inlines[w->open[keep]];
		if (e->name != w->names[chain[depth - 1 - keep]])
			break;
		keep++;
	}
	for (int k = keep; k < *n_open; k++)
		w->inlines[w->open[k]].end = start;
	*n_open = keep;
	for (int k = keep; k < depth; k++) {
		const trace_frame *tf = &w->frames[chain[depth - 1 - k]];
		ju_inline *e = &w->inlines[*n_inl];
		*e = (ju_inline){
			.start = start,
			.end = start,
			.parent = k ? (uint32_t)w->open[k - 1] + 1 : 0,
			.call_line = (uint32_t)tf->call_line,
			.name = w->names[chain[depth - 1 - k]],
			.file = utf8(tf->code->co_filename),
		};
		w->open[k] = (int)(*n_inl)++;
	}
	*n_open = depth;
	return 0;
}

static publish_work work;

/* The cold exits waiting for the first trace (see the top).  Their ranges'
 * CFI is the stencils' own (static); the ranges themselves are copied. */
#define MAX_PENDING 256
#define PENDING_RANGES 4
typedef struct {
	const unsigned char *memory;
	size_t code_size;
	ju_cfi_range cfi[PENDING_RANGES];
	size_t n_cfi;
	char name[32];
} pending_exit;

static pending_exit pending[MAX_PENDING];
static ju_blob pending_blobs[MAX_PENDING];
static size_t n_pending;
static int traces_seen; /* a trace was published: nothing waits any more */

static void publish_pending(ju_ctx *ctx)
{
	for (size_t i = 0; i < n_pending; i++) {
		const pending_exit *p = &pending[i];
		pending_blobs[i] = JU_BLOB(.start = p->memory, .size = p->code_size, .name = p->name,
					   .frame.kind = JU_FRAME_CFI, .frame.u.cfi = { p->cfi, p->n_cfi });
	}
	int err = n_pending ? ju_publish_batch(ctx, pending_blobs, n_pending) : 0;
	if (err)
		warn_once("the cold exits", err);
	n_pending = 0;
}

void _PyJIT_Publish(_PyExecutorObject *executor, PyCodeObject *code, const _PyUOpInstruction trace[],
		    size_t length, const unsigned char *memory, size_t code_size,
		    const _PyJIT_CodeRange ranges[], size_t n_ranges)
{
	if (n_ranges > UOP_MAX_TRACE_LENGTH + 2 || length > UOP_MAX_TRACE_LENGTH || ju_state < 0)
		return;
	publish_work *w = &work;
	size_t n_cfi = 0;
	for (size_t i = 0; i < n_ranges; i++) {
		if (ranges[i].start == ranges[i].end)
			continue;
		w->cfi[n_cfi++] =
			(ju_cfi_range){ ranges[i].start, ranges[i].end, ranges[i].cfi, ranges[i].cfi_size };
	}
	int cold = !code || length == 0 || trace[0].opcode == _COLD_EXIT;
	if (cold && !traces_seen && n_pending < MAX_PENDING && n_cfi <= PENDING_RANGES) {
		pending_exit *p = &pending[n_pending++];
		p->memory = memory;
		p->code_size = code_size;
		memcpy(p->cfi, w->cfi, n_cfi * sizeof *w->cfi);
		p->n_cfi = n_cfi;
		snprintf(p->name, sizeof p->name, "py:cold exit %d", length ? (int)trace[0].oparg : 0);
		return;
	}
	ju_ctx *ctx = context();
	if (!ctx)
		return;
	if (!cold) {
		traces_seen = 1;
		publish_pending(ctx);
	}
	char name[MAX_TEXT];
	ju_blob b = JU_BLOB(.start = memory, .size = code_size, .name = name, .frame.kind = JU_FRAME_CFI,
			    .frame.u.cfi = { w->cfi, n_cfi });
	if (cold) {
		snprintf(name, sizeof name, "py:cold exit %d", length ? (int)trace[0].oparg : 0);
	} else {
		assign_frames(w, executor, code, trace, length);
		for (int f = 0; f < w->n_frames; f++)
			snprintf(w->names[f], MAX_TEXT, "py:%s", utf8(w->frames[f].code->co_qualname));
		/* ranges[0] is the trampoline; ranges[1 + i] micro-op i */
		size_t n_lines = 0, n_inl = 0;
		int n_open = 0, first_line = 0, last_frame = -1;
		for (size_t i = 0; i < length && 1 + i < n_ranges; i++) {
			int f = w->frame_of[i];
			int at = bytecode_index(executor, trace, length, i);
			int line =
				at >= 0 ? PyCode_Addr2Line(w->frames[f].code, at * (int)sizeof(_Py_CODEUNIT))
					: -1;
			uint32_t start = ranges[1 + i].start;
			if (line <= 0 || ranges[1 + i].start == ranges[1 + i].end)
				continue;
			if (enter_frame(w, &n_open, &n_inl, f, start) < 0)
				break;
			if (!first_line && f == 0)
				first_line = line;
			if (n_lines && f == last_frame && w->lines[n_lines - 1].line == (uint32_t)line)
				continue;
			if (n_lines == 0)
				start = 0; /* the trampoline runs for the first line */
			w->lines[n_lines++] = (ju_line){ start, (uint32_t)line };
			last_frame = f;
		}
		for (int k = 0; k < n_open; k++)
			w->inlines[w->open[k]].end = (uint32_t)code_size;
		/* an entry closed where it opened covers nothing: drop it (none is
		 * a parent then, as its children would be empty too) */
		size_t kept = 0;
		uint32_t remap[UOP_MAX_TRACE_LENGTH + 1];
		remap[0] = 0;
		for (size_t k = 0; k < n_inl; k++) {
			remap[k + 1] = 0;
			if (w->inlines[k].start == w->inlines[k].end)
				continue;
			w->inlines[kept] = w->inlines[k];
			w->inlines[kept].parent = remap[w->inlines[k].parent];
			remap[k + 1] = (uint32_t)++kept;
		}
		format_name(name, sizeof name, code, first_line ? first_line : code->co_firstlineno);
		b.file = utf8(code->co_filename);
		b.lines = n_lines ? w->lines : NULL;
		b.n_lines = n_lines;
		b.inlines = n_lines && kept ? w->inlines : NULL;
		b.n_inlines = n_lines ? kept : 0;
	}
	int err = ju_publish(ctx, &b);
	if (err)
		warn_once(name, err);
}

void _PyJIT_Unpublish(const unsigned char *memory)
{
	for (size_t i = 0; i < n_pending; i++)
		if (pending[i].memory == memory) {
			pending[i] = pending[--n_pending];
			return;
		}
	if (ju_state > 0)
		(void)ju_unpublish(ju, memory);
}

#endif /* _Py_JIT */
