/* SPDX-License-Identifier: MIT */
/* mx-remote.c - print the stack of a live process or a core as one remote
 * unwinder sees it (linked with remote_dwfl.c or remote_unw.c: mx-dwfl,
 * mx-unw-ptrace).
 *
 *   mx-dwfl|mx-unw-ptrace -p PID [--jit] [--repeat N]
 *   mx-dwfl --core FILE --exe PATH [--jit] [--repeat N]
 *
 * --jit gives the unwinder the GDB JIT interface's images (remote.h).
 * Output: "# ..." comment lines, then one frame a line, innermost first:
 * "0xPC NAME" (NAME "??" when unknown).  With --repeat N the stack is
 * unwound N times and the median time of one unwind is printed.
 * Exit: 0 frames printed, 1 the unwinder failed, 2 usage.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats/clock.h"
#include "remote.h"

enum { MAX_FRAMES = 1024 };

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int usage(void)
{
	fprintf(stderr,
		"usage: %s -p PID [--jit] [--inline] [--repeat N]\n"
		"       %s --core FILE --exe PATH [--jit] [--inline] [--repeat N]\n",
		mx_remote_name, mx_remote_name);
	return 2;
}

int main(int argc, char **argv)
{
	pid_t pid = 0;
	const char *core = NULL, *exe = NULL;
	int flags = 0;
	long repeat = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-p") && i + 1 < argc)
			pid = (pid_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--core") && i + 1 < argc)
			core = argv[++i];
		else if (!strcmp(argv[i], "--exe") && i + 1 < argc)
			exe = argv[++i];
		else if (!strcmp(argv[i], "--jit"))
			flags |= MX_JIT_IMAGES;
		else if (!strcmp(argv[i], "--inline"))
			flags |= MX_INLINE;
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atol(argv[++i]);
		else
			return usage();
	}
	if ((pid <= 0) == !core || repeat < 0 || repeat > 100000)
		return usage();

	char err[512] = "";
	int64_t t0 = now_ns();
	mx_remote *r = core ? mx_open_core(core, exe, flags, err, sizeof err)
			    : mx_open_live(pid, flags, err, sizeof err);
	if (!r) {
		fprintf(stderr, "%s: %s\n", mx_remote_name, err);
		return 1;
	}
	static mx_frame frames[MAX_FRAMES];
	int64_t t_open = now_ns() - t0;
	int n = mx_unwind(r, 0, frames, MAX_FRAMES, err, sizeof err);
	int64_t t_first = now_ns() - t0;
	printf("# %s: %s, JIT images: %d\n", mx_remote_name, core ? "core" : "live", mx_n_images(r));
	if (n < 0) {
		fprintf(stderr, "%s: %s\n", mx_remote_name, err);
		mx_close(r);
		return 1;
	}
	if (repeat) {
		int64_t *t = malloc((size_t)repeat * sizeof *t);
		for (long i = 0; t && i < repeat; i++) {
			int64_t s = now_ns();
			n = mx_unwind(r, 0, frames, MAX_FRAMES, err, sizeof err);
			t[i] = now_ns() - s;
		}
		if (t) {
			qsort(t, (size_t)repeat, sizeof *t, cmp_i64);
			printf("# open %ld ns, open + first unwind %ld ns, median unwind %ld ns over %ld\n",
			       (long)t_open, (long)t_first, (long)t[repeat / 2], repeat);
			free(t);
		}
	}
	for (int i = 0; i < n; i++)
		printf("%s%#lx %s%s\n", frames[i].inlined, (unsigned long)frames[i].pc,
		       frames[i].name[0] ? frames[i].name : "??", frames[i].where);
	mx_close(r);
	return 0;
}
