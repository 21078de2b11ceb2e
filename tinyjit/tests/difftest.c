/* SPDX-License-Identifier: MIT */
/* difftest.c - differential test: the interpreter defines the semantics;
 * the JIT, with both stencil sets, must agree on every generated program:
 * same result, or the same error at the same instruction.
 *
 *   difftest [--seeds N] [--start S] [--inline] [--verbose]
 *
 * Every fourth program runs with a call depth limit of 3, so depth errors
 * are compared too.  With --inline the JIT inlines every call it may (no
 * size bound, the budget of --inline) 1 to 4 levels deep, changing with
 * the seed, so errors and depth limits are met inside inlined callees.  On a mismatch the program is printed
 * to stderr. Ends with the line "difftest: N passed, N failed".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../host/host.h"
#include "../runtime/jit.h"
#include "../vm/vm.h"
#include "progen.h"

typedef struct {
	int64_t status, value;
	int err;
	uint32_t insn;
} outcome;

static outcome run(const tj_program *p, tj_jit *jit, const int64_t args[2], int64_t max_depth)
{
	tj_vm vm;
	outcome o = { -1, 0, 0, 0 };
	if (tj_vm_init(&vm, p, max_depth, 1u << 16))
		return o;
	if (jit)
		tj_jit_attach(jit, &vm);
	tj_res r = tj_vm_invoke(&vm, tj_find_func(p, "main"), args, 2, UINT32_MAX);
	o = (outcome){ r.status, r.status ? 0 : r.value, vm.err, vm.err_insn };
	tj_vm_fini(&vm);
	return o;
}

static int same(outcome a, outcome b)
{
	return a.status == b.status && a.value == b.value && a.err == b.err && a.insn == b.insn;
}

int main(int argc, char **argv)
{
	uint64_t seeds = 1000, start = 1;
	int verbose = 0, inline_calls = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
			seeds = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--start") && i + 1 < argc)
			start = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--inline"))
			inline_calls = 1;
		else if (!strcmp(argv[i], "--verbose"))
			verbose = 1;
		else {
			fprintf(stderr, "usage: difftest [--seeds N] [--start S] [--inline] [--verbose]\n");
			return 2;
		}
	}
	static char text[1 << 20];
	unsigned long passed = 0, failed = 0, errors[8] = { 0 };
	uint64_t insns = 0, inlined = 0;
	int anon_views = 1;
	for (uint64_t seed = start; seed < start + seeds; seed++) {
		size_t len = tj_progen(seed, text, sizeof text);
		tj_diag d;
		tj_program *p = len ? tj_load("generated.tj", text, len, tj_hosts, tj_n_hosts, &d) : NULL;
		if (!p) {
			fprintf(stderr, "seed %" PRIu64 ": generated program does not load: %s\n%s", seed,
				len ? d.msg : "too long", text);
			failed++;
			continue;
		}
		insns += p->n_insns;
		int64_t args[2];
		tj_progen_args(seed, args);
		int64_t depth = seed % 4 == 0 ? 3 : TJ_DEFAULT_MAX_DEPTH;
		outcome want = run(p, NULL, args, depth);
		int ok = want.status >= 0;
		/* both frame kinds; the W^X way changes with the seed (every
		 * address patched in must be the RX view's) */
		enum tj_wx wx = (enum tj_wx)(seed % 3);
		if (wx == TJ_WX_DUAL_ANON && !anon_views)
			wx = TJ_WX_DUAL;
		tj_inline_policy inl = { 1 + (uint32_t)(seed / 4 % 4), UINT32_MAX, TJ_INLINE_BUDGET };
		const tj_inline_policy *pol = inline_calls ? &inl : NULL;
		for (int f = 0; f < 2 && ok; f++) {
			tj_jit *jit;
			char err[256];
			int rc = tj_jit_compile(p, f ? TJ_FRAMES_NOFP : TJ_FRAMES_FP, wx, pol, &jit, err,
						sizeof err);
			if (rc && wx == TJ_WX_DUAL_ANON && strstr(err, "mremap")) {
				/* valgrind and qemu-user cannot make the second view */
				printf("difftest: no --wx=dual-anon here (%s); those seeds run dual\n", err);
				anon_views = 0;
				wx = TJ_WX_DUAL;
				rc = tj_jit_compile(p, f ? TJ_FRAMES_NOFP : TJ_FRAMES_FP, wx, pol, &jit, err,
						    sizeof err);
			}
			if (rc) {
				fprintf(stderr, "seed %" PRIu64 ": JIT compile failed: %s\n", seed, err);
				ok = 0;
				break;
			}
			inlined += tj_jit_inlined(jit);
			outcome got = run(p, jit, args, depth);
			tj_jit_free(jit);
			if (!same(want, got)) {
				fprintf(stderr,
					"seed %" PRIu64
					" frames=%s wx=%d inline=%u: interpreter status %" PRId64
					" value %" PRId64 " err %d at %u; JIT status %" PRId64
					" value %" PRId64 " err %d at %u\n%s",
					seed, f ? "nofp" : "fp", (int)wx, pol ? pol->depth : 0, want.status,
					want.value, want.err, want.insn, got.status, got.value, got.err,
					got.insn, text);
				ok = 0;
			}
		}
		if (verbose)
			printf("seed %" PRIu64 ": %s err %d value %" PRId64 "\n", seed,
			       ok ? "ok" : "MISMATCH", want.err, want.value);
		errors[want.err & 7]++;
		ok ? passed++ : failed++;
		tj_program_free(p);
	}
	printf("difftest: %" PRIu64 " instructions; outcomes: %lu values, %lu division by zero, "
	       "%lu call depth\n",
	       insns, errors[TJ_OK], errors[TJ_ERR_DIV0], errors[TJ_ERR_DEPTH]);
	if (inline_calls)
		printf("difftest: %llu calls inlined\n", (unsigned long long)inlined);
	printf("difftest: %lu passed, %lu failed\n", passed, failed);
	return failed != 0;
}
