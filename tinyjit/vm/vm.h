/* SPDX-License-Identifier: MIT */
/* vm.h - tinyjit programs, the VM state and the interfaces between the
 * loader (parse.c, verify.c), the interpreter (interp.c), the JIT runtime
 * (../runtime) and the host functions (../host).  vm/ is the bottom layer:
 * it names neither the JIT nor the host functions; the embedder hands it
 * the host table (tj_load) and the JIT attaches itself (tj_vm.run).
 *
 * Semantics (the interpreter defines them; the JIT must match):
 *  - values are int64_t; + - * neg wrap (two's complement); div/mod truncate,
 *    x/0 and x%0 are errors, INT64_MIN/-1 = INT64_MIN and INT64_MIN%-1 = 0;
 *    shift counts are taken mod 64; shr is arithmetic, ushr logical.
 *  - a call pushes a frame of nslots locals (arguments first, the rest 0) and
 *    an operand stack of at most max_stack values (computed by the verifier,
 *    so operand stack under/overflow inside a function is a load error).
 *  - entering a function fails with TJ_ERR_DEPTH when more than
 *    vm->max_depth frames would be live, with TJ_ERR_STACK when the value
 *    stack has no room for its frame.
 */
#ifndef TJ_VM_H
#define TJ_VM_H

#include <stddef.h>
#include <stdint.h>

enum tj_op {
#define OP(name, mn, opnd, pops, pushes) TJ_OP_##name,
#include "opcodes.def"
#undef OP
	TJ_OP_COUNT
};

enum tj_operand { TJ_OPND_NONE, TJ_OPND_INT, TJ_OPND_LOCAL, TJ_OPND_LABEL, TJ_OPND_FUNC, TJ_OPND_CALL };

typedef struct tj_opinfo {
	const char *name;     /* "ADD" */
	const char *mnemonic; /* "add", NULL for loader-made opcodes */
	enum tj_operand operand;
	int pops, pushes;
} tj_opinfo;

extern const tj_opinfo tj_opinfo_table[TJ_OP_COUNT];

/* One instruction.  The meaning of a and b per opcode:
 *   PUSH a=value; LOAD/STORE a=slot; FN a=function index;
 *   JMP/JZ/JNZ a=target instruction index (program-wide);
 *   CALL a=function index, b=argument count; HOST a=host index, b=argc;
 *   ENTER a=function index. */
typedef struct tj_insn {
	uint8_t op;
	int32_t depth; /* operand stack depth before it (the verifier's); -1: unreachable */
	int64_t a, b;
	uint32_t line, col;
} tj_insn;

typedef struct tj_func {
	char *name;
	uint32_t nargs;     /* arguments: the first nargs slots */
	uint32_t nslots;    /* arguments + variables */
	uint32_t max_stack; /* deepest operand stack, from the verifier */
	uint32_t first;     /* index of its ENTER instruction */
	uint32_t count;     /* instructions, ENTER included */
	uint32_t line, col; /* of the `func` keyword */
	char **slot_names;  /* nslots names */
} tj_func;

/* The result of running a function: value, or status != 0.  Returned in
 * rax:rdx by JIT code too, so the layout is part of the stencil ABI. */
typedef struct tj_res {
	int64_t value;
	int64_t status;
} tj_res;

typedef struct tj_vm tj_vm;
typedef tj_res (*tj_host_fn)(tj_vm *vm, const int64_t *args);

/* A C function a program may call.  The embedder gives the loader its
 * table (tinyjit's is host/hostfns.c); the loader links each call that names
 * no function of the program to a host function of that name. */
typedef struct tj_host {
	const char *name;
	uint32_t nargs;
	tj_host_fn fn;
} tj_host;

typedef struct tj_program {
	char *file;
	tj_insn *insns;
	uint32_t n_insns;
	tj_func *funcs;
	uint32_t n_funcs;
	const tj_host *hosts; /* the table HOST instructions index, as given to tj_load */
	uint32_t n_hosts;
} tj_program;

/* Limits on what a program may declare, so hostile input cannot make the
 * loader allocate without bound.  Each is reported as a load error. */
#define TJ_MAX_FUNCS 65536
#define TJ_MAX_INSNS (1u << 22)
#define TJ_MAX_SLOTS 4096
#define TJ_MAX_OPERAND_STACK 4096
#define TJ_MAX_IDENT 255

/* A diagnostic: "file:line:col: error: what". */
typedef struct tj_diag {
	char msg[512];
} tj_diag;

/* Parse, link and verify a program whose calls may also name the n_hosts
 * host functions of `hosts` (kept, not copied: the table must outlive the
 * program).  Returns NULL and fills *d on any error; never aborts on bad
 * input. */
tj_program *tj_load(const char *file, const char *src, size_t len, const tj_host *hosts, uint32_t n_hosts,
		    tj_diag *d);
void tj_program_free(tj_program *p);
int tj_find_func(const tj_program *p, const char *name);
const tj_func *tj_func_of(const tj_program *p, uint32_t insn);

/* Link-time checks shared by the parser: resolve calls, compute stack depth.
 * Internal to the loader (parse.c calls it). */
int tj_verify(tj_program *p, tj_diag *d);

/* ---- run time ---- */

/* Run-time error codes.  A function that fails returns status != 0 and the
 * VM records the first error and where it happened. */
enum tj_err {
	TJ_OK = 0,
	TJ_ERR_DIV0,  /* division or modulo by zero */
	TJ_ERR_DEPTH, /* call depth over vm->max_depth */
	TJ_ERR_STACK, /* value stack exhausted */
	TJ_ERR_ARITY, /* a host callback called a function with the wrong arity */
	TJ_ERR_NOFN,  /* a host callback named no function */
	TJ_ERR_HOST,  /* a host function failed */
};

struct tj_jit;

/* The VM state.  The JIT's stencils read the fields marked [stencil]
 * directly, so they come first and are plain words. */
struct tj_vm {
	int64_t depth;      /* [stencil] live frames */
	int64_t max_depth;  /* [stencil] */
	int64_t *stack_end; /* [stencil] one past the value stack */
	void **entries;     /* [stencil] JIT entry of each function */
	int64_t *stack_top; /* first free slot while host code runs */
	int64_t *stack;
	const tj_program *prog;
	/* What runs a function entered from host code: tj_interp, unless an
	 * engine attached itself (the JIT's tj_jit_attach), so the VM names no
	 * engine above it. */
	tj_res (*run)(tj_vm *vm, uint32_t fn, int64_t *locals);
	struct tj_jit *jit; /* the JIT attached, for host code that describes it; NULL: none */
	/* the first error */
	int err;
	uint32_t err_insn;
	char err_detail[128];
	uint32_t host_insn; /* the HOST instruction running host code */
	void *host_data;    /* for the embedder */
};

#define TJ_DEFAULT_MAX_DEPTH 10000
#define TJ_DEFAULT_STACK_SLOTS (1u << 20)

int tj_vm_init(tj_vm *vm, const tj_program *p, int64_t max_depth, size_t stack_slots);
void tj_vm_fini(tj_vm *vm);

/* Call function fn with nargs arguments, from host code (main, or a host
 * function calling back into the VM).  `at` is the instruction blamed for an
 * arity or bad-function error (UINT32_MAX: none). */
tj_res tj_vm_invoke(tj_vm *vm, int64_t fn, const int64_t *args, uint32_t nargs, uint32_t at);

/* Record an error (the first one wins) and return the failing result. */
tj_res tj_vm_fail(tj_vm *vm, int err, uint32_t insn, const char *detail);

/* Format the recorded error as "file:line:col: error: ... (in function f)". */
void tj_vm_describe_error(const tj_vm *vm, char *out, size_t n);

/* Call host function `host` whose arguments are args[0..argc-1] on the
 * value stack; shared by the interpreter and the JIT's HOST stencil. */
tj_res tj_rt_host(tj_vm *vm, int64_t *args, int64_t host, int64_t insn);

/* The interpreter: run function fn whose frame starts at `locals` (the
 * arguments are already there). */
tj_res tj_interp(tj_vm *vm, uint32_t fn, int64_t *locals);

#endif
