/* cpyprobe.c - _cpyprobe, the C side of the unwind matrix's CPython workload
 * (cpyprobe.py; tests/matrix/mxcpython.py): a C extension whose probe() the
 * trace of a hot loop calls directly (CALL_BUILTIN_O), and what it does
 * once that trace is surely running.
 *
 *   setup(code)    the code object of the function whose loop is traced
 *                  (hot); its executors are where the probe looks for the
 *                  one it returns into
 *   probe(i)       returns i & 1; when i is CPYP_AT (default 1000, far past
 *                  the 16 iterations after which a loop is traced) it calls
 *                  cpyp_inner, which does CPYP_MODE:
 *     backtrace  print glibc backtrace()'s frames
 *     unwind     print _Unwind_Backtrace's frames (libgcc's, or LLVM
 *                libunwind's when it is preloaded ahead of everything),
 *                after a line "_Unwind_Backtrace from FILE" (whose it is)
 *     unw        print nongnu libunwind's unw_backtrace (-DCPYP_NONGNU)
 *     unwstep    the same with unw_step (-DCPYP_NONGNU)
 *     wait       print "ready PID" and sleep CPYP_WAIT seconds (default
 *                60) for a debugger or jitstack to attach
 *     abort      abort(), for a core
 *     spin       print "spinning PID" and spin in cpyp_inner for CPYP_SPIN
 *                seconds (default 2) of wall time, for the samplers
 *   Frames print as "0xPC NAME" lines, innermost first, NAME from dladdr
 *   ("?" for what it cannot name: JIT code, static functions).
 *
 * With CPYP_EXPECT=FILE it first writes its part of the stack, all from
 * its own view of the process: "c cpyp_inner", "c cpyp_probe", "ret
 * 0xADDR" (its return address, into the executor that called it), "code
 * QUALNAME FILE" (the traced function, from its code object), "executor
 * 0xLO 0xHI" (the machine code of the executor of that code holding the
 * return address, from CPython's own _PyExecutorObject: jit_code,
 * jit_size; "executor none" when none holds it), then "module 0xBASE PATH"
 * for each object loaded (python, this extension, ...), so that a judge
 * can place the C functions by their symbols.
 *
 * Built against the interpreter's own headers, internal ones included
 * (Py_BUILD_CORE_MODULE), with frame pointers.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#ifndef Py_BUILD_CORE_MODULE
#define Py_BUILD_CORE_MODULE
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "internal/pycore_code.h"
#include "internal/pycore_optimizer.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>
#ifdef CPYP_NONGNU
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif

enum { PROBE_MAX_FRAMES = 256 };
#include "../../../tests/probe-frames.h"

static PyCodeObject *traced; /* setup(code) */

/* The executor of the traced code whose machine code holds pc. */
static _PyExecutorObject *executor_at(uintptr_t pc)
{
	_PyExecutorArray *ex = traced ? traced->co_executors : NULL;
	for (int i = 0; ex && i < ex->size; i++) {
		_PyExecutorObject *e = ex->executors[i];
		uintptr_t lo = (uintptr_t)e->jit_code;
		if (lo && lo <= pc && pc < lo + e->jit_size)
			return e;
	}
	return NULL;
}

static void write_expect(void *ret)
{
	const char *path = getenv("CPYP_EXPECT");
	if (!path)
		return;
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fprintf(f, "c cpyp_inner\nc cpyp_probe\nret %p\n", ret);
	if (traced)
		fprintf(f, "code %s %s\n", PyUnicode_AsUTF8(traced->co_qualname),
			PyUnicode_AsUTF8(traced->co_filename));
	_PyExecutorObject *e = executor_at((uintptr_t)ret - 1);
	if (e)
		fprintf(f, "executor %p %p\n", e->jit_code, (void *)((char *)e->jit_code + e->jit_size));
	else
		fprintf(f, "executor none\n");
	dl_iterate_phdr(probe_module, f);
	if (fclose(f)) {
		perror(path);
		exit(2);
	}
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

#ifdef CPYP_NONGNU
static void unw_frames(int step)
{
	if (!step) {
		void *pcs[PROBE_MAX_FRAMES];
		int n = unw_backtrace(pcs, PROBE_MAX_FRAMES);
		printf("unw_backtrace: %d frames\n", n);
		for (int i = 0; i < n; i++)
			print_frame(pcs[i]);
		return;
	}
	unw_context_t uc;
	unw_cursor_t cur;
	unw_getcontext(&uc);
	unw_init_local(&cur, &uc);
	printf("unw_step:\n");
	for (int n = 0; n < PROBE_MAX_FRAMES; n++) {
		unw_word_t ip;
		unw_get_reg(&cur, UNW_REG_IP, &ip);
		print_frame((void *)ip);
		if (unw_step(&cur) <= 0)
			break;
	}
}
#endif

__attribute__((noinline)) void cpyp_inner(void *ret)
{
	const char *mode = getenv("CPYP_MODE");
	mode = mode ? mode : "backtrace";
	write_expect(ret);
	if (!strcmp(mode, "backtrace")) {
		void *pcs[PROBE_MAX_FRAMES];
		int n = backtrace(pcs, PROBE_MAX_FRAMES);
		printf("backtrace: %d frames\n", n);
		for (int i = 0; i < n; i++)
			print_frame(pcs[i]);
	} else if (!strcmp(mode, "unwind")) {
		int n = 0;
		Dl_info di;
		printf("_Unwind_Backtrace from %s\n",
		       dladdr((void *)_Unwind_Backtrace, &di) && di.dli_fname ? di.dli_fname : "?");
		_Unwind_Backtrace(probe_frame, &n);
#ifdef CPYP_NONGNU
	} else if (!strcmp(mode, "unw") || !strcmp(mode, "unwstep")) {
		unw_frames(!strcmp(mode, "unwstep"));
#endif
	} else if (!strcmp(mode, "wait")) {
		const char *s = getenv("CPYP_WAIT");
		int left = s ? atoi(s) : 60;
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		while (left > 0)
			left = (int)sleep((unsigned)left);
	} else if (!strcmp(mode, "abort")) {
		fflush(stdout);
		abort();
	} else if (!strcmp(mode, "spin")) {
		const char *s = getenv("CPYP_SPIN");
		double end = now() + (s ? atof(s) : 2.0);
		volatile unsigned long x = 0;
		printf("spinning %d\n", (int)getpid());
		fflush(stdout);
		while (now() < end)
			for (int i = 0; i < 100000; i++)
				x += (unsigned long)i;
	} else {
		fprintf(stderr, "cpyprobe: unknown CPYP_MODE %s\n", mode);
		exit(2);
	}
	printf("done\n");
	fflush(stdout);
	__asm__ volatile("" ::: "memory"); /* not a tail call: cpyp_inner stays on the stack */
}

static long probe_at = -1;

__attribute__((noinline)) PyObject *cpyp_probe(PyObject *self, PyObject *arg)
{
	(void)self;
	long i = PyLong_AsLong(arg);
	if (i == -1 && PyErr_Occurred())
		return NULL;
	if (probe_at < 0) {
		const char *s = getenv("CPYP_AT");
		probe_at = s ? atol(s) : 1000;
	}
	if (i == probe_at)
		cpyp_inner(__builtin_return_address(0));
	__asm__ volatile("" ::: "memory");
	return PyLong_FromLong(i & 1);
}

static PyObject *setup(PyObject *self, PyObject *code)
{
	(void)self;
	if (!PyCode_Check(code)) {
		PyErr_SetString(PyExc_TypeError, "setup() takes a code object");
		return NULL;
	}
	Py_XSETREF(traced, (PyCodeObject *)Py_NewRef(code));
	Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
	{ "probe", cpyp_probe, METH_O, "i & 1; at CPYP_AT, what CPYP_MODE says" },
	{ "setup", setup, METH_O, "the code object whose executors the probe returns into" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "_cpyprobe", NULL, -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__cpyprobe(void)
{
	return PyModule_Create(&module);
}
