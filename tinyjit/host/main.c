/* SPDX-License-Identifier: MIT */
/* main.c - the tinyjit command line.
 *
 *   tinyjit [--jit=on|off] [--frames=fp|nofp] [--cfi=region|exact]
 *           [--wx=flip|dual|dual-anon] [--publish=all|default|none|LIST]
 *           [--inline[=N]] [--max-depth=N] [--stats] prog.tj [args...]
 *
 * Loads prog.tj, compiles it (unless --jit=off), publishes the code through
 * libjitunwind, calls main(args...) and prints its result.
 *
 * Exit status: 0 success; 1 a run-time VM error (division by zero, call
 * depth, ...); 2 usage, I/O or load error (syntax, unknown function, wrong
 * arity, stack under/overflow); 3 the JIT or publishing failed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../runtime/jit.h"
#include "../runtime/publish.h"
#include "../vm/vm.h"
#include "host.h"

enum { EXIT_VM = 1, EXIT_USAGE = 2, EXIT_JIT = 3 };

#define MAX_SOURCE (64u << 20)

typedef struct {
	int jit;
	enum tj_frames frames;
	enum tj_cfi_mode cfi;
	enum tj_wx wx;
	const char *publish; /* NULL: library default */
	int64_t max_depth;
	tj_inline_policy inl; /* depth 0: no inlining */
	int stats;
	const char *path;
	int nargs;
	char **args;
} options;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tinyjit [--jit=on|off] [--frames=fp|nofp] [--cfi=region|exact]\n"
		"               [--wx=flip|dual|dual-anon] [--publish=all|default|none|LIST]\n"
		"               [--inline[=N]] [--max-depth=N] [--stats] prog.tj [args...]\n"
		"  --wx: code made RX in place (flip), or written through a RW view and run\n"
		"  through a RX view of a memfd (dual) or of anonymous shared memory (dual-anon)\n"
		"  default: unwinder,libunwind,gdb where they can open (no perf files); all: every\n"
		"  channel where it can open; LIST: comma-separated channels, each must open:\n"
		"  unwinder,libunwind,gdb,perfmap,jitdump.  Without --publish: the library's\n"
		"  default, or JITUNWIND (JITUNWIND=perf adds the perf map and the jitdump)\n"
		"  --inline: compile calls of small functions into the caller's code, N levels\n"
		"  deep (default %d, at most %d)\n",
		TJ_INLINE_DEPTH, TJ_INLINE_DEPTH_MAX);
}

static int pick(const char *arg, const char *opt, const char *a, const char *b, int *out)
{
	size_t n = strlen(opt);
	if (strncmp(arg, opt, n) != 0)
		return 0;
	if (strcmp(arg + n, a) == 0)
		*out = 0;
	else if (strcmp(arg + n, b) == 0)
		*out = 1;
	else {
		fprintf(stderr, "tinyjit: %s expects %s or %s, got '%s'\n", opt, a, b, arg + n);
		exit(EXIT_USAGE);
	}
	return 1;
}

static int parse_int(const char *s, int64_t *v)
{
	char *end;
	errno = 0;
	long long x = strtoll(s, &end, 0);
	if (errno || end == s || *end)
		return -1;
	*v = x;
	return 0;
}

static options parse_options(int argc, char **argv)
{
	options o = { .jit = 1, .max_depth = TJ_DEFAULT_MAX_DEPTH };
	int i = 1, v;
	for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		const char *a = argv[i];
		if (pick(a, "--jit=", "off", "on", &o.jit))
			continue;
		if (pick(a, "--frames=", "fp", "nofp", &v)) {
			o.frames = v ? TJ_FRAMES_NOFP : TJ_FRAMES_FP;
			continue;
		}
		if (pick(a, "--cfi=", "region", "exact", &v)) {
			o.cfi = v ? TJ_CFI_EXACT : TJ_CFI_REGION;
			continue;
		}
		if (strncmp(a, "--wx=", 5) == 0) {
			static const char *const wx[] = { "flip", "dual", "dual-anon" };
			size_t k = 0;
			while (k < 3 && strcmp(a + 5, wx[k]))
				k++;
			if (k == 3) {
				fprintf(stderr, "tinyjit: --wx= expects flip, dual or dual-anon, got '%s'\n",
					a + 5);
				exit(EXIT_USAGE);
			}
			o.wx = (enum tj_wx)k;
			continue;
		}
		if (strncmp(a, "--publish=", 10) == 0) {
			o.publish = a + 10;
			continue;
		}
		if (strncmp(a, "--max-depth=", 12) == 0) {
			if (parse_int(a + 12, &o.max_depth) || o.max_depth < 1 || o.max_depth > 1000000) {
				fprintf(stderr, "tinyjit: --max-depth expects 1..1000000\n");
				exit(EXIT_USAGE);
			}
			continue;
		}
		if (strcmp(a, "--inline") == 0 || strncmp(a, "--inline=", 9) == 0) {
			int64_t n = TJ_INLINE_DEPTH;
			if (a[8] && (parse_int(a + 9, &n) || n < 0 || n > TJ_INLINE_DEPTH_MAX)) {
				fprintf(stderr, "tinyjit: --inline= expects 0..%d\n", TJ_INLINE_DEPTH_MAX);
				exit(EXIT_USAGE);
			}
			o.inl = (tj_inline_policy){ (uint32_t)n, TJ_INLINE_SMALL, TJ_INLINE_BUDGET };
			continue;
		}
		if (strcmp(a, "--stats") == 0) {
			o.stats = 1;
			continue;
		}
		if (strcmp(a, "--help") == 0) {
			usage(stdout);
			exit(0);
		}
		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		fprintf(stderr, "tinyjit: unknown option '%s'\n", a);
		usage(stderr);
		exit(EXIT_USAGE);
	}
	if (i >= argc) {
		usage(stderr);
		exit(EXIT_USAGE);
	}
	o.path = argv[i];
	o.args = argv + i + 1;
	o.nargs = argc - i - 1;
	return o;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t n = 0, cap = 0, got;
	do {
		if (n + 4096 > cap) {
			cap = cap ? cap * 2 : 65536;
			char *b = cap <= MAX_SOURCE ? realloc(buf, cap + 1) : NULL;
			if (!b) {
				free(buf);
				fclose(f);
				errno = EFBIG;
				return NULL;
			}
			buf = b;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got > 0);
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct {
	tj_vm *vm;
	int fn;
	int64_t *args;
	int nargs;
	tj_res res;
} run_ctx;

static int run_main(void *arg)
{
	run_ctx *r = arg;
	r->res = tj_vm_invoke(r->vm, r->fn, r->args, (uint32_t)r->nargs, UINT32_MAX);
	return 0;
}

int main(int argc, char **argv)
{
	options o = parse_options(argc, argv);
	double t0 = now();
	size_t len = 0;
	char *src = read_file(o.path, &len);
	if (!src) {
		fprintf(stderr, "tinyjit: %s: %s\n", o.path, strerror(errno));
		return EXIT_USAGE;
	}
	tj_diag d;
	tj_program *p = tj_load(o.path, src, len, tj_hosts, tj_n_hosts, &d);
	free(src);
	if (!p) {
		fprintf(stderr, "%s\n", d.msg);
		return EXIT_USAGE;
	}
	int fn = tj_find_func(p, "main");
	if (fn < 0 || p->funcs[fn].nargs != (uint32_t)o.nargs) {
		if (fn < 0)
			fprintf(stderr, "%s: error: no function 'main'\n", o.path);
		else
			fprintf(stderr, "%s:%u:%u: error: wrong arity: main takes %u argument%s, %d given\n",
				o.path, p->funcs[fn].line, p->funcs[fn].col, p->funcs[fn].nargs,
				p->funcs[fn].nargs == 1 ? "" : "s", o.nargs);
		tj_program_free(p);
		return EXIT_USAGE;
	}
	int64_t *args = calloc((size_t)o.nargs + 1, sizeof *args);
	for (int i = 0; args && i < o.nargs; i++)
		if (parse_int(o.args[i], &args[i])) {
			fprintf(stderr, "tinyjit: argument '%s' is not an integer\n", o.args[i]);
			free(args);
			tj_program_free(p);
			return EXIT_USAGE;
		}
	double t1 = now();

	int status = 0;
	char err[512];
	tj_vm vm;
	tj_jit *jit = NULL;
	tj_publisher *pub = NULL;
	double t2 = t1, t3 = t1;
	if (!args || tj_vm_init(&vm, p, o.max_depth, TJ_DEFAULT_STACK_SLOTS)) {
		fprintf(stderr, "tinyjit: out of memory\n");
		free(args);
		tj_program_free(p);
		return EXIT_JIT;
	}
	if (o.jit) {
		if (tj_jit_compile(p, o.frames, o.wx, &o.inl, &jit, err, sizeof err)) {
			fprintf(stderr, "tinyjit: %s\n", err);
			status = EXIT_JIT;
			goto out;
		}
		tj_jit_attach(jit, &vm);
		t2 = now();
		if (tj_publish_open(o.publish, &pub, err, sizeof err) ||
		    tj_publish_program(pub, jit, p, o.cfi, err, sizeof err)) {
			fprintf(stderr, "tinyjit: %s\n", err);
			status = EXIT_JIT;
			goto out;
		}
		t3 = now();
	}

	run_ctx r = { &vm, fn, args, o.nargs, { 0, 0 } };
	if (tj_cxx_guard(run_main, &r) == TJ_CAUGHT) {
		status = 0;
	} else if (r.res.status) {
		char msg[768];
		tj_vm_describe_error(&vm, msg, sizeof msg);
		fprintf(stderr, "%s\n", msg);
		status = EXIT_VM;
	} else {
		printf("%" PRId64 "\n", r.res.value);
	}
	double t4 = now();
	if (o.stats) {
		char ch[128];
		tj_publish_describe(pub, ch, sizeof ch);
		fprintf(stderr,
			"tinyjit stats: %u instructions, %u functions; load %.3f ms, compile %.3f ms "
			"(%zu bytes, stencils %s, %u with a frame, %zu calls inlined), publish %.3f ms [%s], "
			"run %.3f ms\n",
			p->n_insns, p->n_funcs, (t1 - t0) * 1e3, (t2 - t1) * 1e3,
			jit ? tj_jit_code_bytes(jit) : 0, jit ? tj_jit_stencils(jit)->name : "-",
			jit ? tj_jit_stencils(jit)->n_with_frame : 0, jit ? tj_jit_inlined(jit) : 0,
			(t3 - t2) * 1e3, ch, (t4 - t3) * 1e3);
	}
out:
	fflush(stdout);
	tj_publish_close(pub);
	tj_jit_free(jit);
	tj_vm_fini(&vm);
	free(args);
	tj_program_free(p);
	return status;
}
