/* SPDX-License-Identifier: MIT */
/* probe-frames.h - what the workloads' C probes (the LuaJIT tests'
 * ljprobe.c, the CPython tests' cpyprobe.c) print of their own stack and
 * of the objects loaded, for the judges: included by each, after
 * <dlfcn.h>, <link.h>, <stdio.h>, <unistd.h> and <unwind.h> with
 * _GNU_SOURCE, and after PROBE_MAX_FRAMES (how many frames an unwind
 * prints at most) is defined.
 *
 *   print_frame(pc)       "0xPC NAME", NAME from dladdr ("?": JIT code)
 *   probe_frame           an _Unwind_Backtrace callback printing each
 *                         frame; its argument counts them (an int, 0)
 *   probe_module          a dl_iterate_phdr callback writing "module
 *                         0xBASE PATH" of each object with a path to the
 *                         FILE * it is given (the executable by
 *                         /proc/self/exe, which dl_iterate_phdr leaves
 *                         unnamed)
 */
#ifndef PROBE_FRAMES_H
#define PROBE_FRAMES_H

static void print_frame(void *pc)
{
	Dl_info di;
	const char *name = "?";
	if (dladdr(pc, &di) && di.dli_sname)
		name = di.dli_sname;
	printf("%p %s\n", pc, name);
}

static _Unwind_Reason_Code probe_frame(struct _Unwind_Context *uc, void *arg)
{
	int *n = arg;
	print_frame((void *)_Unwind_GetIP(uc));
	return ++*n < PROBE_MAX_FRAMES ? _URC_NO_REASON : _URC_END_OF_STACK;
}

static int probe_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	FILE *f = arg;
	char exe[4096];
	const char *path = info->dlpi_name;
	(void)size;
	if (!path[0]) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		if (n <= 0)
			return 0;
		exe[n] = 0;
		path = exe;
	}
	if (path[0] == '/')
		fprintf(f, "module %#lx %s\n", (unsigned long)info->dlpi_addr, path);
	return 0;
}

#endif
