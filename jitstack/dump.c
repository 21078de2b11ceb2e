/* SPDX-License-Identifier: MIT */
/* dump.c - `jitstack -p PID` and `jitstack --core FILE`: every thread's
 * stack, once.
 *
 * Live, the order keeps the target stopped as briefly as possible: modules
 * and (with the extension) the JIT list and images are read while it runs;
 * then every thread is stopped, the list re-read only if its seq moved (or
 * it has no extension, whose list may only be read stopped), the stacks
 * unwound, and the threads released.  Naming and printing come after.
 * The perf map and the jitdump are read for the stacks alone
 * (forstacks.h): the jitdump, whose CFI the unwind may need, while the
 * target is stopped, after a first unwind gave the pcs; the perf map,
 * which only names, after the target is let go, as it was at the stop
 * (held open then).  With --images they are read whole while it runs.
 */
#include "dump.h"
#include "formats/clock.h"
#include "base/grow.h"
#include "out/output.h"
#include "target/hold.h"
#include "unwind/forstacks.h"
#include "unwind/interp.h"
#include "unwind/stack.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Test hook (jitstack(1), TESTING): JITSTACK_FAULT=kill-after-stop kills
 * the target once its threads are stopped, to test a target that exits
 * in the middle of being read. */
static bool fault(const char *what)
{
	const char *f = getenv("JITSTACK_FAULT");
	return f && !strcmp(f, what);
}

/* Each thread's stack as it was at the stop, from its stack pointer up
 * (the used stack: its mapping ends above).  The threads are let go when
 * a hold passes its bound or jitstack is stopped (target/hold.h), and the
 * unwinds go on from these copies; a frame above a copy is read live. */
enum { STACK_COPY = 512 << 10, STACK_COPIES = 256 << 20 };

typedef struct stack_copy {
	uint8_t *bytes;
	size_t len;
} stack_copy;

static stack_copy *copy_stacks(js_session *s)
{
	stack_copy *c = calloc(s->proc.n ? s->proc.n : 1, sizeof *c);
	size_t total = 0;
	for (size_t i = 0; c && i < s->proc.n && total < STACK_COPIES; i++) {
		js_thread *t = &s->proc.t[i];
		if (!t->have_regs || !(c[i].bytes = malloc(STACK_COPY)))
			continue;
		c[i].len = js_mem_copy(s->mem, js_regs_sp(&t->regs), c[i].bytes, STACK_COPY);
		total += c[i].len;
	}
	return c;
}

static void free_copies(stack_copy *c, size_t n)
{
	for (size_t i = 0; c && i < n; i++)
		free(c[i].bytes);
	free(c);
}

static void unwind_thread(js_session *s, const stack_copy *c, size_t i, js_stack *st)
{
	js_thread *t = &s->proc.t[i];
	if (!c || !c[i].len || !t->have_regs) {
		js_unwind_live(s, t, st);
		return;
	}
	/* reach 0: a frame above the copy is read from the target */
	js_sample x = {
		.tid = t->tid, .idle = t->idle, .regs = &t->regs, .stack = c[i].bytes, .len = c[i].len
	};
	memcpy(x.comm, t->comm, sizeof x.comm);
	js_unwind(s, &x, st, NULL);
}

/* The jitdump read for the n stacks, and those with a pc in its code with
 * CFI unwound again, until no pc is new (each round finds at least one
 * more frame's code, as unwind/stack.c's rounds for GDB JIT images). */
enum { MAX_JITDUMP_ROUNDS = 256 };
static void jitdump_rounds(js_session *s, js_stack *st, size_t n, const stack_copy *c, bool live)
{
	for (unsigned round = 0; round < MAX_JITDUMP_ROUNDS && js_jitdump_for_stacks(s, st, n); round++)
		for (size_t i = 0; i < n; i++)
			if (js_stack_in_jitdump_cfi(s, &st[i])) {
				if (live)
					unwind_thread(s, c, i, &st[i]);
				else
					js_unwind_core_tid(s, &st[i]);
			}
}

static int dump_live(js_session *s, const js_dump_opts *d, js_out *o)
{
	uint64_t t0 = now_ns();
	int rc = js_refresh_jit(s, READ_RUNNING);
	if (rc)
		return rc;
	if (!s->opt->for_stacks) {
		js_refresh_sources(s);
	}
	if (d->images && !js_jit_has_plain(&s->jit)) {
		out_begin(o, s);
		out_images(o, s);
		return 0;
	}
	uint64_t t1 = now_ns();
	js_proc_stop_all(&s->proc);
	unsigned long cuts = js_hold_cuts();
	stack_copy *copies = copy_stacks(s);
	uint64_t t2 = now_ns();
	if (fault("kill-after-stop")) {
		pid_t tgid;
		kill(s->pid, SIGKILL);
		for (int i = 0; i < 1000 && js_proc_tgid(s->pid, &tgid, NULL) == 0; i++)
			usleep(1000); /* until it is a zombie: gone for good */
	}
	if (js_jit_has_plain(&s->jit) || js_jit_seq_moved(&s->jit, s->mem)) {
		if ((rc = js_refresh_jit(s, READ_STOPPED))) {
			free_copies(copies, s->proc.n);
			return rc;
		}
	}
	if (!s->opt->for_stacks) {
		js_refresh_sources(s);
	}
	size_t n = s->proc.n;
	js_stack *st = calloc(n ? n : 1, sizeof *st);
	if (!st) {
		free_copies(copies, n);
		return js_fail(&s->err, JS_EXIT_FAILURE, ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		unwind_thread(s, copies, i, &st[i]);
	if (s->opt->for_stacks)
		jitdump_rounds(s, st, n, copies, true);
	if (js_fix_loops(s, st, n))
		for (size_t i = 0; i < n; i++)
			if (st[i].loop_pc)
				unwind_thread(s, copies, i, &st[i]);
	/* the Python frames, while the threads are stopped (unless let go:
	 * then each chain read is checked) */
	js_walk_sources(s, js_hold_cuts() != cuts, 0);
	free_copies(copies, n);
	if (s->opt->for_stacks && s->pm_on) {
		js_err why = { 0 };
		js_perfmap_pin(&s->pm, &why); /* read after the release, as it is now (if absent: then) */
	}
	if (js_hold_cuts() != cuts)
		js_warn(s,
			"the threads were let go after %.0f ms (--max-hold) or as jitstack was stopped: "
			"the stacks were unwound from copies, the rest read while the process ran",
			js_hold_bound_ns() / 1e6);
	uint64_t t3 = now_ns();
	js_proc_detach(&s->proc);
	uint64_t t4 = now_ns();
	pid_t tgid;
	if (js_proc_gone(&s->proc) || js_proc_tgid(s->pid, &tgid, NULL)) {
		rc = js_fail(&s->err, JS_EXIT_NO_PROCESS, ESRCH, "process %d exited while it was being read",
			     (int)s->pid);
	} else {
		if (s->opt->for_stacks)
			js_perfmap_for_stacks(s, st, n);
		out_begin(o, s);
		if (d->images)
			out_images(o, s);
		else
			for (size_t i = 0; i < n; i++) {
				js_mark_fp(s, &st[i]);
				js_name_stack(s, &st[i]);
				js_place_interp_frames(s, &st[i]);
				out_thread(o, &st[i]);
			}
		out_end(o, s);
	}
	for (size_t i = 0; i < n; i++)
		js_stack_free(&st[i]);
	free(st);
	if (d->opt.stats)
		fprintf(stderr,
			"jitstack: stats: read JIT %.3f ms, stop %.3f ms, unwind %.3f ms, release %.3f ms, "
			"output %.3f ms; %lu images copied (%lu bytes), %lu memory reads; perf map %.3f ms, "
			"%llu bytes, %lu lines; jitdump %.3f ms, %llu bytes, %lu loads\n"
			"jitstack: stats: descriptor search: %.3f ms, %lu files read by jitstack, %lu modules opened by "
			"libdwfl, %lu looked up in separate debuginfo\n"
			"jitstack: stats: native symbols: %lu modules indexed, %lu lookups answered by the "
			"index, %lu by libdwfl\n",
			(t1 - t0) / 1e6, (t2 - t1) / 1e6, (t3 - t2) / 1e6, (t4 - t3) / 1e6,
			(now_ns() - t4) / 1e6, s->jit.copies, s->jit.copy_bytes, js_mem_syscalls(s->mem),
			js_source_of(s, &js_source_perfmap)->ns / 1e6, (unsigned long long)s->pm.bytes,
			s->pm.lines, js_source_of(s, &js_source_jitdump)->ns / 1e6,
			(unsigned long long)s->jd.bytes, s->jd.loads, s->jit.desc_ns / 1e6,
			s->jit.desc_looked, s->jit.desc_opened, s->jit.desc_debuginfo, s->syms.built,
			s->syms.fast, s->syms.slow);
	if (d->opt.stats) {
		js_source *py = js_source_of(s, &js_source_python);
		if (py && js_source_on(py))
			py->ops->stats(py, stderr);
	}
	return rc;
}

typedef struct core_stacks {
	js_stack *st;
	size_t n, cap;
} core_stacks;

/* Keep each thread's stack (js_unwind_core frees its own copy). */
static void keep_core_thread(js_stack *st, void *arg)
{
	core_stacks *c = arg;
	if (!js_grow(&c->st, &c->cap, c->n, sizeof *c->st))
		return;
	c->st[c->n++] = *st;
	*st = (js_stack){ 0 }; /* ownership of the frames moved */
}

static int dump_core(js_session *s, const js_dump_opts *d, js_out *o)
{
	core_stacks c = { 0 };
	if (!d->images) {
		js_unwind_core(s, keep_core_thread, &c);
		if (s->opt->for_stacks)
			jitdump_rounds(s, c.st, c.n, NULL, false);
		if (js_fix_loops(s, c.st, c.n))
			for (size_t i = 0; i < c.n; i++)
				if (c.st[i].loop_pc)
					js_unwind_core_tid(s, &c.st[i]);
		if (!c.n)
			js_warn(s, "the core holds no thread");
		if (s->opt->for_stacks)
			js_perfmap_for_stacks(s, c.st, c.n);
		js_walk_sources(s, false, 0);
	}
	out_begin(o, s);
	if (d->images)
		out_images(o, s);
	for (size_t i = 0; i < c.n; i++) {
		js_mark_fp(s, &c.st[i]);
		js_name_stack(s, &c.st[i]);
		js_place_interp_frames(s, &c.st[i]);
		out_thread(o, &c.st[i]);
		js_stack_free(&c.st[i]);
	}
	free(c.st);
	out_end(o, s);
	return 0;
}

int js_dump(const js_dump_opts *d)
{
	js_session s;
	js_opts opt = d->opt;
	opt.all_images |= d->images; /* --images lists them all */
	opt.for_stacks = !d->images;
	int rc = d->core ? js_open_core(&s, d->core, d->exe, &opt) : js_open_live(&s, d->pid, &opt);
	js_out o = { .f = stdout,
		     .json = d->json,
		     .color = !d->json && js_color_wanted(d->color, STDOUT_FILENO) };
	if (!rc)
		rc = d->core ? dump_core(&s, d, &o) : dump_live(&s, d, &o);
	/* what was printed must have been written (a full disk, a closed pipe) */
	if (!rc && (fflush(stdout) != 0 || ferror(stdout)))
		rc = js_fail(&s.err, JS_EXIT_FAILURE, errno, "writing the output: %s", strerror(errno));
	if (rc)
		js_err_print(&s.err);
	js_close(&s);
	return rc;
}
