/* hostfns.c - the C functions a .tj program can call (run time).
 *
 *   print(x)            print x on a line, return x
 *   invoke0(f)          call VM function f (from `fn NAME`) from C: these
 *   invoke1(f, a)       make native stacks interleave C -> JIT -> C -> JIT
 *   invoke2(f, a, b)
 *   invoke3(f, a, b, c)
 *   probe(mode)         what the unwinder matrix inspects, at the bottom of
 *                       a deep mixed stack:
 *                         0 nothing; 1 print glibc backtrace();
 *                         2 print the pid and wait to be attached to;
 *                         3 abort() for a core file;
 *                         4 throw a C++ exception, caught near main
 *
 * Compiled with -fexceptions: a C++ exception thrown by probe(4) unwinds
 * through these frames and the JIT's.
 */
#include <execinfo.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../vm/vm.h"
#include "host.h"

#define NOINLINE __attribute__((noinline))

static tj_res ok(int64_t v) { return (tj_res){ v, 0 }; }

static tj_res h_print(tj_vm *vm, const int64_t *a)
{
	(void)vm;
	printf("%" PRId64 "\n", a[0]);
	return ok(a[0]);
}

static tj_res h_invoke0(tj_vm *vm, const int64_t *a) { return tj_vm_invoke(vm, a[0], a + 1, 0, vm->host_insn); }
static tj_res h_invoke1(tj_vm *vm, const int64_t *a) { return tj_vm_invoke(vm, a[0], a + 1, 1, vm->host_insn); }
static tj_res h_invoke2(tj_vm *vm, const int64_t *a) { return tj_vm_invoke(vm, a[0], a + 1, 2, vm->host_insn); }
static tj_res h_invoke3(tj_vm *vm, const int64_t *a) { return tj_vm_invoke(vm, a[0], a + 1, 3, vm->host_insn); }

static NOINLINE int probe_backtrace(void)
{
	void *pcs[512];
	int n = backtrace(pcs, 512);
	printf("tinyjit probe: backtrace of %d frames\n", n);
	fflush(stdout);
	backtrace_symbols_fd(pcs, n, STDOUT_FILENO);
	return n;
}

static NOINLINE void probe_wait(void)
{
	const char *env = getenv("TJ_PROBE_WAIT");
	long secs = env ? strtol(env, NULL, 10) : 60;
	printf("tinyjit probe: pid %ld waiting %ld s to be attached to\n", (long)getpid(), secs);
	fflush(stdout);
	for (long i = 0; i < secs * 10; i++)
		usleep(100000);
}

static NOINLINE void probe_abort(void)
{
	printf("tinyjit probe: aborting for a core file\n");
	fflush(stdout);
	abort();
}

static NOINLINE tj_res h_probe(tj_vm *vm, const int64_t *a)
{
	switch (a[0]) {
	case 0: return ok(0);
	case 1: return ok(probe_backtrace());
	case 2: probe_wait(); return ok(0);
	case 3: probe_abort(); break;
	case 4: tj_cxx_throw(a[0]); break;
	}
	return tj_vm_fail(vm, TJ_ERR_HOST, vm->host_insn, "probe: mode must be 0..4");
}

const tj_host tj_hosts[] = {
	{ "print", 1, h_print },
	{ "invoke0", 1, h_invoke0 },
	{ "invoke1", 2, h_invoke1 },
	{ "invoke2", 3, h_invoke2 },
	{ "invoke3", 4, h_invoke3 },
	{ "probe", 1, h_probe },
};
const uint32_t tj_n_hosts = sizeof tj_hosts / sizeof tj_hosts[0];

int tj_find_host(const char *name)
{
	for (uint32_t i = 0; i < tj_n_hosts; i++)
		if (strcmp(tj_hosts[i].name, name) == 0)
			return (int)i;
	return -1;
}
