/* SPDX-License-Identifier: MIT */
/* ljprobe.c - the C side of the LuaJIT workloads (libljprobe.so, loaded
 * with ffi.load): the function a compiled trace calls through the FFI, and
 * what it does once the trace is surely running.
 *
 *   int ljp_probe(int i)   returns i & 1; when i is LJP_AT (default 10000,
 *                          far past LuaJIT's hotloop of 56 iterations, so
 *                          the call comes from the loop's trace) it calls
 *                          ljp_inner, which does LJP_MODE:
 *     backtrace  print glibc backtrace()'s frames
 *     unwind     print libgcc _Unwind_Backtrace's frames
 *     wait       print "ready PID" and sleep LJP_WAIT seconds (default 60)
 *                for a debugger or jitstack to attach
 *     abort      abort(), for a core
 *   Frames print as "0xPC NAME" lines, innermost first, NAME from dladdr
 *   (which knows no JIT code: "?" there).
 *
 * With LJP_EXPECT=FILE, before acting, it writes what its own part of the
 * stack is: "c ljp_inner", "c ljp_probe", and "ret 0xADDR", the return
 * address into the trace that called it; then "module 0xBASE PATH" for
 * each object loaded (luajit itself, this library, ...), so that a judge
 * can place the C functions by their symbols.  The workload's Lua side
 * writes which trace lives where (FILE.traces); the judges (ljjudge.py,
 * the matrix's mxluajit.py) put the two together.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <link.h>
#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <unwind.h>

#define PROBE_MAX_FRAMES 128
#include "../../../tests/probe-frames.h"

static void write_expect(void *ret)
{
	const char *path = getenv("LJP_EXPECT");
	if (!path)
		return;
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fprintf(f, "c ljp_inner\nc ljp_probe\nret %p\n", ret);
	dl_iterate_phdr(probe_module, f);
	if (fclose(f)) {
		perror(path);
		exit(2);
	}
}

__attribute__((noinline)) void ljp_inner(void *ret)
{
	const char *mode = getenv("LJP_MODE");
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
		printf("_Unwind_Backtrace:\n");
		_Unwind_Backtrace(probe_frame, &n);
	} else if (!strcmp(mode, "wait")) {
		const char *s = getenv("LJP_WAIT");
		int left = s ? atoi(s) : 60;
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		while (left > 0)
			left = (int)sleep((unsigned)left);
	} else if (!strcmp(mode, "abort")) {
		fflush(stdout);
		abort();
	}
	printf("done\n");
	fflush(stdout);
	__asm__ volatile("" ::: "memory"); /* not a tail call: ljp_inner stays on the stack */
}

__attribute__((noinline)) int ljp_probe(int i)
{
	static int at = -1;
	if (at < 0) {
		const char *s = getenv("LJP_AT");
		at = s ? atoi(s) : 10000;
	}
	if (i == at)
		ljp_inner(__builtin_return_address(0));
	__asm__ volatile("" ::: "memory");
	return i & 1;
}
