/* SPDX-License-Identifier: MIT */
/* vm.c - VM state, entry from host code, and error records.
 *
 * Both execution engines (interp.c and the JIT in ../runtime) report errors
 * here and enter functions through tj_vm_invoke, so the checks made when
 * host code calls into the VM, and the messages, are the same in both.
 * Which engine runs is vm->run: the interpreter, or the JIT once attached.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vm.h"

int tj_vm_init(tj_vm *vm, const tj_program *p, int64_t max_depth, size_t stack_slots)
{
	memset(vm, 0, sizeof *vm);
	vm->stack = calloc(stack_slots, sizeof *vm->stack);
	if (!vm->stack)
		return -1;
	vm->stack_end = vm->stack + stack_slots;
	vm->stack_top = vm->stack;
	vm->max_depth = max_depth;
	vm->prog = p;
	vm->run = tj_interp;
	vm->err_insn = UINT32_MAX;
	return 0;
}

void tj_vm_fini(tj_vm *vm)
{
	free(vm->stack);
	vm->stack = NULL;
}

tj_res tj_vm_fail(tj_vm *vm, int err, uint32_t insn, const char *detail)
{
	if (!vm->err) {
		vm->err = err;
		vm->err_insn = insn;
		snprintf(vm->err_detail, sizeof vm->err_detail, "%s", detail ? detail : "");
	}
	return (tj_res){ 0, err };
}

static const char *err_text(int err)
{
	switch (err) {
	case TJ_ERR_DIV0: return "division by zero";
	case TJ_ERR_DEPTH: return "call depth limit exceeded";
	case TJ_ERR_STACK: return "value stack overflow";
	case TJ_ERR_ARITY: return "wrong arity";
	case TJ_ERR_NOFN: return "unknown function";
	case TJ_ERR_HOST: return "host function failed";
	default: return "no error";
	}
}

void tj_vm_describe_error(const tj_vm *vm, char *out, size_t n)
{
	const tj_program *p = vm->prog;
	const char *sep = vm->err_detail[0] ? ": " : "";
	if (vm->err_insn >= p->n_insns) {
		snprintf(out, n, "%s: error: %s%s%s", p->file, err_text(vm->err), sep, vm->err_detail);
		return;
	}
	const tj_insn *in = &p->insns[vm->err_insn];
	const tj_func *f = tj_func_of(p, vm->err_insn);
	snprintf(out, n, "%s:%u:%u: error: %s%s%s (in function '%s')", p->file, in->line, in->col,
		 err_text(vm->err), sep, vm->err_detail, f ? f->name : "?");
}

tj_res tj_vm_invoke(tj_vm *vm, int64_t fn, const int64_t *args, uint32_t nargs, uint32_t at)
{
	const tj_program *p = vm->prog;
	char why[96];
	if (fn < 0 || fn >= p->n_funcs) {
		snprintf(why, sizeof why, "no function has index %lld", (long long)fn);
		return tj_vm_fail(vm, TJ_ERR_NOFN, at, why);
	}
	const tj_func *f = &p->funcs[fn];
	if (nargs != f->nargs) {
		snprintf(why, sizeof why, "function '%s' takes %u argument%s, called with %u", f->name,
			 f->nargs, f->nargs == 1 ? "" : "s", nargs);
		return tj_vm_fail(vm, TJ_ERR_ARITY, at, why);
	}
	int64_t *locals = vm->stack_top;
	if (vm->stack_end - locals < (ptrdiff_t)nargs)
		return tj_vm_fail(vm, TJ_ERR_STACK, at, NULL);
	if (nargs)
		memcpy(locals, args, nargs * sizeof *args);
	tj_res r = vm->run(vm, (uint32_t)fn, locals);
	vm->stack_top = locals;
	return r;
}

tj_res tj_rt_host(tj_vm *vm, int64_t *args, int64_t host, int64_t insn)
{
	const tj_host *h = &vm->prog->hosts[host];
	int64_t *saved_top = vm->stack_top;
	uint32_t saved_insn = vm->host_insn;
	vm->stack_top = args + h->nargs;
	vm->host_insn = (uint32_t)insn;
	tj_res r = h->fn(vm, args);
	vm->stack_top = saved_top;
	vm->host_insn = saved_insn;
	if (r.status && !vm->err)
		return tj_vm_fail(vm, TJ_ERR_HOST, (uint32_t)insn, h->name);
	return r;
}
