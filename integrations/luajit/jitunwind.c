/* SPDX-License-Identifier: MIT */
/* jitunwind.c - the Lua module `jitunwind` for LuaJIT: every trace LuaJIT
 * compiles is published through libjitunwind when it stops, and unpublished
 * when it is flushed or its number is taken by a new trace.
 *
 *   luajit -l jitunwind app.lua      (or require "jitunwind" once)
 *
 * This file is the mechanics: one libjitunwind context per Lua state, what
 * each trace number has published, the frame read from the trace's code
 * (traceframe.c) and the time each publish takes.  The policy -- which trace
 * events mean what, names, line rows, which flushes kill which traces -- is
 * Lua, in jitunwind.lua, compiled into this module as text
 * (jitunwind_lua.h) and run by luaopen_jitunwind with the table of the
 * functions below as its argument.
 *
 * The module is linked against libjitunwind.a, so that loading it needs no
 * other file (Lua finds a C module by package.cpath, not by the dynamic
 * linker's path); it does not link LuaJIT: the lua_* functions are the
 * running luajit's own, as for every Lua C module.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>

#include <jitunwind.h>

#include "formats/ehframe.h"
#include "jitunwind_lua.h"
#include "traceframe.h"

#define STATE_META "jitunwind.state"

/* What one trace number has published. */
typedef struct trace_slot {
	uintptr_t start;
	int32_t spadj; /* its T->spadjust: its side traces are entered with it */
	uint8_t live;
} trace_slot;

typedef struct module_state {
	ju_ctx *ctx;
	trace_slot *slots; /* indexed by trace number */
	size_t nslots;
	struct {
		uint64_t publishes, unpublishes, failures;
		uint64_t publish_ns, publish_ns_max, unpublish_ns;
		uint64_t guest_publishes, inlines; /* traces with guest frames; their frames */
	} st;
	char last_error[256];
} module_state;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static module_state *state(lua_State *L)
{
	return luaL_checkudata(L, lua_upvalueindex(1), STATE_META);
}

/* nil and a message, as Lua functions fail; the message is kept for stats(). */
static int failure(lua_State *L, module_state *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	lua_pushnil(L);
	lua_pushvfstring(L, fmt, ap);
	va_end(ap);
	snprintf(s->last_error, sizeof s->last_error, "%s", lua_tostring(L, -1));
	s->st.failures++;
	return 2;
}

static trace_slot *slot(module_state *s, lua_Integer tr)
{
	if (tr <= 0 || (uint64_t)tr >= (uint64_t)s->nslots)
		return NULL;
	return &s->slots[tr];
}

/* Make room for trace numbers up to `tr` (LuaJIT allows 65535: lj_jit.h
 * LJ_MAX_TRACE would be the source, jit.util does not give it). */
static trace_slot *slot_grow(module_state *s, lua_Integer tr)
{
	if (tr <= 0 || tr > UINT16_MAX)
		return NULL;
	if ((size_t)tr >= s->nslots) {
		size_t n = s->nslots ? s->nslots : 64;
		while (n <= (size_t)tr)
			n *= 2;
		trace_slot *p = realloc(s->slots, n * sizeof *p);
		if (!p)
			return NULL;
		memset(p + s->nslots, 0, (n - s->nslots) * sizeof *p);
		s->slots = p, s->nslots = n;
	}
	return &s->slots[tr];
}

static int unpublish_slots(module_state *s, trace_slot **which, size_t n)
{
	const void **starts = malloc((n ? n : 1) * sizeof *starts);
	if (!starts)
		return JU_ENOMEM;
	for (size_t i = 0; i < n; i++)
		starts[i] = (const void *)which[i]->start;
	uint64_t t0 = now_ns();
	int err = ju_unpublish_batch(s->ctx, starts, n);
	s->st.unpublish_ns += now_ns() - t0;
	free(starts);
	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		which[i]->live = 0;
	s->st.unpublishes += n;
	return 0;
}

/* ---- LuaJIT's personality for its machine code ------------------------------- */

/* LuaJIT registers one FDE over each machine code area with libgcc
 * (lj_mcode.c mcode_allocarea calls lj_err.c lj_err_register_mcode), whose
 * CIE ("zPR") carries the personality err_unwind_jit: a Lua error thrown
 * while a trace is on the C stack (out of memory in a helper the trace
 * calls) is caught there and leaves the trace through its exit stub.  A
 * trace published with the unwinder channel shadows that FDE (libgcc finds
 * the trace's own first), so each trace is published with the same
 * personality, and LSDA if there is one.  err_unwind_jit is static in
 * LuaJIT: the module reads it from the FDE libgcc finds for the first
 * trace's code, before anything of the module is registered (once ours are,
 * libgcc 12 may stop at our arena and find nothing for an address between
 * our blobs).  It is one function for every area and state of the process,
 * so it is looked up once per process. */
typedef struct luajit_eh {
	int state; /* 0: not looked up; 1: found (or none: LuaJIT registered no FDE) */
	const void *personality, *lsda;
} luajit_eh;
static luajit_eh lj_eh;

struct dwarf_eh_bases_ {
	void *tbase, *dbase, *func;
};

/* The personality and LSDA of the FDE at `fde`, as found by libgcc's
 * _Unwind_Find_FDE: its CIE and it, read in place (they are LuaJIT's
 * template, in its own memory). */
static void read_fde_eh(const uint8_t *fde, luajit_eh *out)
{
	uint32_t len, back;
	memcpy(&len, fde, 4);
	memcpy(&back, fde + 4, 4);
	const uint8_t *cie = fde + 4 - back;
	if (len == 0 || len == DWARF64_ESCAPE || cie >= fde)
		return; /* LuaJIT writes its CIE right before the FDE */
	eh_section sec = { cie, (size_t)(fde + 4 + len - cie), (uintptr_t)cie, 0 };
	size_t off = (size_t)(fde - cie);
	eh_rec rec;
	eh_cie_info c;
	eh_fde_info f;
	uint64_t pers;
	bool indirect;
	if (eh_next(&sec, &off, &rec) != 1 || rec.is_cie || rec.cie_off != 0 || !eh_cie_read(&sec, 0, &c) ||
	    !eh_fde_read(&sec, &rec, &c, &f) || !eh_cie_personality(&sec, &c, &pers, &indirect))
		return;
	if (indirect) /* a pointer to the routine: in this process, read it */
		memcpy(&pers, (const void *)(uintptr_t)pers, sizeof pers);
	out->personality = (const void *)(uintptr_t)pers;
	out->lsda = (c.lsda_enc & DW_EH_PE_indirect) && f.lsda ? *(const void *const *)(uintptr_t)f.lsda
							       : (const void *)(uintptr_t)f.lsda;
}

/* Look LuaJIT's personality up at the first trace, `addr`. */
static void find_luajit_eh(uintptr_t addr)
{
	if (lj_eh.state)
		return;
	lj_eh.state = 1;
	const void *(*find)(void *, struct dwarf_eh_bases_ *) =
		(const void *(*)(void *, struct dwarf_eh_bases_ *))dlsym(RTLD_DEFAULT, "_Unwind_Find_FDE");
	struct dwarf_eh_bases_ bases;
	const uint8_t *fde = find ? find((void *)(addr + 1), &bases) : NULL;
	if (fde)
		read_fde_eh(fde, &lj_eh);
}

/* The guest frames and line rows core.publish takes from Lua, in arrays
 * that live until the publish returns (the library copies what it keeps;
 * the strings stay on the Lua stack, in the caller's tables). */
typedef struct guest_args {
	ju_line *rows;
	size_t n_rows;
	ju_inline *inlines;
	size_t n_inlines;
} guest_args;

static lua_Integer field_int(lua_State *L, int t, int i)
{
	lua_rawgeti(L, t, i);
	lua_Integer v = lua_tointeger(L, -1);
	lua_pop(L, 1);
	return v;
}

static const char *field_str(lua_State *L, int t, int i)
{
	lua_rawgeti(L, t, i);
	const char *v = lua_tostring(L, -1); /* held by the table t */
	lua_pop(L, 1);
	return v;
}

/* rows: {offset, line, offset, line, ...}; inlines: {{start, end, parent,
 * call_line, name, file}, ...}, both already in the library's order (the
 * library checks them).  0, or -1 out of memory. */
static int guest_args_read(lua_State *L, int rows, int inlines, guest_args *g)
{
	*g = (guest_args){ 0 };
	g->n_rows = lua_objlen(L, rows) / 2;
	g->n_inlines = lua_objlen(L, inlines);
	g->rows = calloc(g->n_rows ? g->n_rows : 1, sizeof *g->rows);
	g->inlines = calloc(g->n_inlines ? g->n_inlines : 1, sizeof *g->inlines);
	if (!g->rows || !g->inlines)
		return -1;
	for (size_t i = 0; i < g->n_rows; i++)
		g->rows[i] = (ju_line){ .offset = (uint32_t)field_int(L, rows, (int)(2 * i + 1)),
					.line = (uint32_t)field_int(L, rows, (int)(2 * i + 2)) };
	for (size_t i = 0; i < g->n_inlines; i++) {
		lua_rawgeti(L, inlines, (int)(i + 1));
		int t = lua_gettop(L);
		g->inlines[i] = (ju_inline){ .start = (uint32_t)field_int(L, t, 1),
					     .end = (uint32_t)field_int(L, t, 2),
					     .parent = (uint32_t)field_int(L, t, 3),
					     .call_line = (uint32_t)field_int(L, t, 4),
					     .name = field_str(L, t, 5),
					     .file = field_str(L, t, 6) };
		lua_pop(L, 1);
	}
	return 0;
}

static void guest_args_free(guest_args *g)
{
	free(g->rows);
	free(g->inlines);
}

/* core.publish(tr, parent, addr, size, name, file, line[, rows, inlines])
 * -> spadjust
 * Publishes trace `tr` (its code at addr, size bytes), entered from trace
 * `parent` (0: from the interpreter), named `name`, with one line row for
 * its start when `file` is given, or the line rows and guest frames given
 * (guest_args_read).  A trace number still published (a number LuaJIT gave
 * to a new trace) is unpublished first. */
static int l_publish(lua_State *L)
{
	module_state *s = state(L);
	lua_Integer tr = luaL_checkinteger(L, 1), parent = luaL_checkinteger(L, 2);
	uintptr_t addr = (uintptr_t)luaL_checknumber(L, 3);
	lua_Integer size = luaL_checkinteger(L, 4);
	const char *name = luaL_checkstring(L, 5);
	const char *file = luaL_optstring(L, 6, NULL);
	lua_Integer line = luaL_optinteger(L, 7, 0);
	if (size <= 0 || size > UINT32_MAX || !addr)
		return failure(L, s, "trace %d: no code", (int)tr);
	trace_slot *t = slot_grow(s, tr);
	if (!t)
		return failure(L, s, "trace %d: cannot keep its record", (int)tr);
	if (t->live && unpublish_slots(s, &t, 1))
		return failure(L, s, "trace %d: unpublishing its number's old trace: %s", (int)tr,
			       ju_errmsg());
	int32_t parent_spadj = 0;
	if (parent) {
		trace_slot *p = slot(s, parent);
		if (!p || !p->live)
			return failure(L, s, "trace %d: its parent trace %d is not published", (int)tr,
				       (int)parent);
		parent_spadj = p->spadj;
	}
	ljtf_frame f;
	int err = ljtf_decode((const uint8_t *)addr, (uint32_t)size, (uint32_t)tr, parent_spadj, &f);
	if (err)
		return failure(L, s, "trace %d: %s", (int)tr, ljtf_strerror(err));
	ljtf_cfi cfi;
	if (ljtf_cfi_build(&f, &cfi))
		return failure(L, s, "trace %d: CFI does not fit", (int)tr);
	ju_line row = { .offset = 0, .line = (uint32_t)line };
	int with_line = file && line > 0 && line <= UINT32_MAX;
	guest_args g = { 0 };
	if (with_line && lua_istable(L, 8) && lua_istable(L, 9) && guest_args_read(L, 8, 9, &g)) {
		guest_args_free(&g);
		return failure(L, s, "trace %d: out of memory", (int)tr);
	}
	if (!lj_eh.state && ju_count(s->ctx) == 0)
		find_luajit_eh(addr);
	ju_blob b = JU_BLOB(.start = (const void *)addr, .size = (size_t)size, .name = name,
			    .frame = { .kind = JU_FRAME_CFI, .u.cfi = { .ranges = cfi.ranges, .n = cfi.n } },
			    .file = with_line ? file : NULL,
			    .lines = g.n_rows    ? g.rows
				     : with_line ? &row
						 : NULL,
			    .n_lines = g.n_rows    ? g.n_rows
				       : with_line ? 1
						   : 0,
			    .inlines = g.n_inlines ? g.inlines : NULL, .n_inlines = g.n_inlines,
			    .personality = lj_eh.personality, .lsda = lj_eh.personality ? lj_eh.lsda : NULL);
	uint64_t t0 = now_ns();
	err = ju_publish(s->ctx, &b);
	uint64_t dt = now_ns() - t0;
	guest_args_free(&g);
	if (err)
		return failure(L, s, "trace %d: %s", (int)tr, ju_errmsg());
	s->st.publishes++;
	s->st.guest_publishes += g.n_inlines > 0;
	s->st.inlines += g.n_inlines;
	s->st.publish_ns += dt;
	if (dt > s->st.publish_ns_max)
		s->st.publish_ns_max = dt;
	*t = (trace_slot){ .start = addr, .spadj = f.spadj, .live = 1 };
	lua_pushinteger(L, f.spadj);
	return 1;
}

/* core.exit_branches(addr, size, lo, hi) -> {end, target, end, target, ...}:
 * the trace's jumps into [lo, hi), where its exit stubs are
 * (ljtf_far_branches), in code order. */
static int l_exit_branches(lua_State *L)
{
	module_state *s = state(L);
	uintptr_t addr = (uintptr_t)luaL_checknumber(L, 1);
	lua_Integer size = luaL_checkinteger(L, 2);
	uintptr_t lo = (uintptr_t)luaL_checknumber(L, 3), hi = (uintptr_t)luaL_checknumber(L, 4);
	if (!addr || size <= 0 || size > UINT32_MAX)
		return failure(L, s, "no code");
	size_t n = ljtf_far_branches((const uint8_t *)addr, (uint32_t)size, addr, lo, hi, NULL, 0);
	ljtf_branch *br = malloc((n ? n : 1) * sizeof *br);
	if (!br)
		return failure(L, s, "out of memory");
	ljtf_far_branches((const uint8_t *)addr, (uint32_t)size, addr, lo, hi, br, n);
	lua_createtable(L, (int)(2 * n), 0);
	for (size_t i = 0; i < n; i++) {
		lua_pushinteger(L, (lua_Integer)br[i].end);
		lua_rawseti(L, -2, (int)(2 * i + 1));
		lua_pushnumber(L, (lua_Number)br[i].target);
		lua_rawseti(L, -2, (int)(2 * i + 2));
	}
	free(br);
	return 1;
}

/* core.unpublish({tr, ...}) -> true: the traces given that are published,
 * in one batch (a flush of a root trace takes its side traces with it). */
static int l_unpublish(lua_State *L)
{
	module_state *s = state(L);
	luaL_checktype(L, 1, LUA_TTABLE);
	size_t n = lua_objlen(L, 1), k = 0;
	trace_slot **which = malloc((n ? n : 1) * sizeof *which);
	if (!which)
		return failure(L, s, "out of memory");
	for (size_t i = 1; i <= n; i++) {
		lua_rawgeti(L, 1, (int)i);
		trace_slot *t = slot(s, lua_tointeger(L, -1));
		lua_pop(L, 1);
		int dup = 0;
		for (size_t j = 0; t && j < k; j++)
			dup |= which[j] == t;
		if (t && t->live && !dup)
			which[k++] = t;
	}
	int err = unpublish_slots(s, which, k);
	free(which);
	if (err)
		return failure(L, s, "unpublishing %d traces: %s", (int)k, ju_errmsg());
	lua_pushboolean(L, 1);
	return 1;
}

/* core.unpublish_all() -> true: after LuaJIT flushed every trace. */
static int l_unpublish_all(lua_State *L)
{
	module_state *s = state(L);
	size_t n = ju_count(s->ctx);
	uint64_t t0 = now_ns();
	int err = ju_unpublish_all(s->ctx);
	s->st.unpublish_ns += now_ns() - t0;
	if (err)
		return failure(L, s, "unpublishing everything: %s", ju_errmsg());
	for (size_t i = 0; i < s->nslots; i++)
		s->slots[i].live = 0;
	s->st.unpublishes += n;
	lua_pushboolean(L, 1);
	return 1;
}

/* core.published(tr) -> start address, or nil. */
static int l_published(lua_State *L)
{
	trace_slot *t = slot(state(L), luaL_checkinteger(L, 1));
	if (!t || !t->live)
		return 0;
	lua_pushnumber(L, (lua_Number)t->start);
	return 1;
}

static void set_number(lua_State *L, const char *k, double v)
{
	lua_pushnumber(L, v);
	lua_setfield(L, -2, k);
}

/* core.stats() -> a table of counts and times (nanoseconds). */
static int l_stats(lua_State *L)
{
	module_state *s = state(L);
	lua_createtable(L, 0, 14);
	set_number(L, "published", (double)ju_count(s->ctx));
	set_number(L, "publishes", (double)s->st.publishes);
	set_number(L, "unpublishes", (double)s->st.unpublishes);
	set_number(L, "failures", (double)s->st.failures);
	set_number(L, "publish_ns", (double)s->st.publish_ns);
	set_number(L, "publish_ns_max", (double)s->st.publish_ns_max);
	set_number(L, "unpublish_ns", (double)s->st.unpublish_ns);
	set_number(L, "guest_publishes", (double)s->st.guest_publishes);
	set_number(L, "inlines", (double)s->st.inlines);
	set_number(L, "channels", (double)ju_channels(s->ctx));
	lua_pushstring(L, s->last_error);
	lua_setfield(L, -2, "last_error");
	return 1;
}

/* core.now() -> nanoseconds of CLOCK_MONOTONIC, for the handler's own time. */
static int l_now(lua_State *L)
{
	lua_pushnumber(L, (lua_Number)now_ns());
	return 1;
}

/* core.channels() -> the names of the channels in use, comma separated. */
static int l_channels(lua_State *L)
{
	uint32_t mask = ju_channels(state(L)->ctx);
	luaL_Buffer b;
	luaL_buffinit(L, &b);
	int first = 1;
	for (uint32_t bit = 1; bit & JU_CH_ALL; bit <<= 1) {
		if (!(mask & bit))
			continue;
		if (!first)
			luaL_addchar(&b, ',');
		luaL_addstring(&b, ju_channel_name(bit));
		first = 0;
	}
	luaL_pushresult(&b);
	return 1;
}

/* The Lua state closes (LuaJIT frees the machine code after the finalizers
 * ran): nothing may stay published at addresses about to be unmapped. */
static int l_gc(lua_State *L)
{
	module_state *s = luaL_checkudata(L, 1, STATE_META);
	if (s->ctx) {
		ju_unpublish_all(s->ctx);
		ju_close(s->ctx);
		s->ctx = NULL;
	}
	free(s->slots);
	s->slots = NULL, s->nslots = 0;
	return 0;
}

static const luaL_Reg core_fns[] = {
	{ "publish", l_publish },
	{ "unpublish", l_unpublish },
	{ "exit_branches", l_exit_branches },
	{ "unpublish_all", l_unpublish_all },
	{ "published", l_published },
	{ "stats", l_stats },
	{ "now", l_now },
	{ "channels", l_channels },
	{ NULL, NULL },
};

/* The channels: the library's default, each where its consumer is present
 * -- libgcc's registry (glibc backtrace() from C a trace calls), nongnu
 * libunwind's list, and gdb (gdb, lldb, jitstack) -- or what JITUNWIND
 * says.  libgcc gets each trace with LuaJIT's own personality (see "LuaJIT's
 * personality" above), so a Lua error thrown on a trace is caught as
 * without the module. */
static int open_context(ju_ctx **ctx)
{
	return ju_open(NULL, ctx);
}

__attribute__((visibility("default"))) int luaopen_jitunwind(lua_State *L)
{
	module_state *s = lua_newuserdata(L, sizeof *s);
	memset(s, 0, sizeof *s);
	if (luaL_newmetatable(L, STATE_META)) {
		lua_pushcfunction(L, l_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	int err = open_context(&s->ctx);
	if (err)
		return luaL_error(L, "jitunwind: %s (%s)", ju_strerror(err), ju_errmsg());
	int ud = lua_gettop(L);
	if (luaL_loadbuffer(L, (const char *)jitunwind_lua, sizeof jitunwind_lua, "=jitunwind.lua"))
		return lua_error(L);
	lua_createtable(L, 0, sizeof core_fns / sizeof core_fns[0]);
	for (const luaL_Reg *r = core_fns; r->name; r++) {
		lua_pushvalue(L, ud);
		lua_pushcclosure(L, r->func, 1);
		lua_setfield(L, -2, r->name);
	}
	lua_call(L, 1, 1);
	return 1;
}
