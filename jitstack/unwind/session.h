/* SPDX-License-Identifier: MIT */
/* session.h - one target (a live process or a core file) opened for
 * unwinding: its libdwfl session with the native modules and the JIT
 * images reported, the memory reader, and for a live process the ptrace
 * state of its threads.
 *
 * Exit codes (err.h, documented in jitstack(1)) are decided here, where
 * the failures are recognised.
 */
#ifndef JS_SESSION_H
#define JS_SESSION_H

#include "base/err.h"
#include "base/hash.h"
#include "jit/jitdump.h"
#include "jit/jitmodules.h"
#include "target/mem.h"
#include "target/modules.h"
#include "jit/perfmap.h"
#include "jit/source.h"
#include "target/proc.h"
#include "unwind/symindex.h"

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct js_opts {
	unsigned max_frames;
	bool source_all;      /* -s: source lines of every frame (loads separate debuginfo) */
	bool no_jit;          /* --no-jit: ignore the JIT interface (frame pointers only) */
	bool no_demangle;     /* --no-demangle: names as the symbol tables hold them */
	const char *perf_map; /* --perf-map FILE: the perf map to name JIT code from */
	bool no_perf_map;     /* --no-perf-map: read none */
	const char *jitdump;  /* --jitdump FILE: the jitdump to name and unwind JIT code from */
	bool no_jitdump;      /* --no-jitdump: read none */
	bool no_python;       /* --no-python: read no Python frames */
	bool stats;
	const char *debuginfo_path; /* --debuginfo-path: where separate debuginfo is looked for */
	bool no_ptrace;             /* list the threads, do not seize them (perf event sampling) */
	bool all_images;            /* copy every JIT image, not only those holding pcs of the stacks */
	bool for_stacks; /* a dump: the perf map and jitdump are read for its stacks (forstacks.h) */
} js_opts;

typedef struct js_session {
	bool core;
	pid_t pid;
	uint16_t machine;
	const js_opts *opt;
	Dwfl *dwfl;
	js_mem *mem;
	js_proc proc; /* live only */
	/* The one unwind in flight (stack.c, js_unwind), or NULL.  libdwfl hands
	 * its memory_read callback only the Dwfl's own argument (this session),
	 * not the thread's, so the thread's memory is found through here. */
	struct js_unwinding *unwinding;
	/* the sources of JIT code (source.h), in the order their modules are
	 * reported: src[i].r points at one of the readers below */
	js_source src[JS_MAX_SOURCES];
	size_t n_src;
	js_jit jit;
	js_perfmap pm; /* the target's perf map, when pm_on */
	bool pm_on;
	js_jitdump jd; /* the target's jitdump, when jd_on */
	bool jd_on;
	js_memelf vdso;
	int exe_fd, core_fd;
	Elf *exe_elf, *core_elf;
	char exe_path[4096];
	const char *core_exe; /* --exe made absolute, or NULL */
	char comm[32];
	/* warnings gathered while reading (js_warn), printed at the end */
	char **warn;
	size_t n_warn;
	/* the failure, when a call returns nonzero */
	js_err err;
	/* module -> "its main file carries DWARF" memo for line lookups;
	 * emptied when modules may have been removed */
	struct dwarf_memo *memo;
	size_t n_memo, cap_memo;
	js_symindexes syms; /* native modules' symbols by address (symindex.h) */
	/* pc -> name memo (name.c): deep stacks repeat their return addresses */
	struct sym_memo *names;
	size_t names_cap, names_n;
	js_htab names_index;
	uint64_t names_changes; /* jit.changes it was filled under */
	/* inline frames (js_sym.inl) of the names in the memo, and of those
	 * named since the last js_name_stack that the memo could not keep */
	struct js_strchunk *inl_kept, *inl_scratch;
	/* units measured for the depth of their DIEs (inline.c): the address
	 * of a unit's DIE -> 1 shallow enough, 2 too deep; forgotten when the
	 * JIT images change (an image's memory may be another's later) */
	js_htab unit_depth;
	uint64_t unit_depth_changes;
	struct demangle_cache *demangled; /* demangle.c */
} js_session;

/* Open a live process: attach to its threads (seized, not stopped), report
 * its modules and read its JIT descriptor when it has the extension.
 * Returns 0, or a js_exit code with s->err. */
int js_open_live(js_session *s, pid_t pid, const js_opts *opt);
/* Open a core file (exe: the executable, or NULL to use the core's notes). */
int js_open_core(js_session *s, const char *core, const char *exe, const js_opts *opt);
void js_close(js_session *s);

/* Re-read the JIT lists and report what changed (mode as desc.h).
 * Returns 0, or a js_exit code with s->err. */
int js_refresh_jit(js_session *s, read_mode mode);
/* Read the JIT lists without the extension (gdb's way: every thread
 * stopped), also for a session that does not keep its threads seized
 * (perf events): seize, stop, read, detach.  Returns js_refresh_jit's code. */
int js_refresh_jit_stopped(js_session *s);
/* Copy the JIT images (deferred by the lazy reader, jitmodules.h) whose
 * code holds any of the n pcs, and report them.  Returns how many were
 * added: the stacks these pcs came from must then be unwound again. */
size_t js_load_jit_for(js_session *s, const uint64_t *pcs, size_t n);

/* Report the native modules again (after the target mapped new files). */
int js_refresh_modules(js_session *s);

/* Read what was appended to the perf map, the jitdump and any source
 * read from a file (all of it at first; a live process's jitdump is found
 * through its mapping, looked for again now and then until it appears),
 * and report the modules that adds.  Returns true when names changed.  A
 * file that cannot be read leaves a warning (none when the target simply
 * has none, unless the user named it). */
bool js_refresh_sources(js_session *s);
/* Read the frames of their own of the sources that have some (the Python
 * frames, source.h: js_source_ops.walk), now: every thread's, or (tid not
 * 0) that one's; while the threads are stopped, or with `running` when
 * they may have run on. */
void js_walk_sources(js_session *s, bool running, pid_t tid);
/* The source of row ops (source.h). */
static inline js_source *js_source_of(js_session *s, const js_source_ops *ops)
{
	return js_sources_find(s->src, s->n_src, ops);
}

/* Bumped whenever a source of names changed (the JIT images, the perf map,
 * the jitdump): names remembered under another value may be stale. */
static inline uint64_t js_names_epoch(const js_session *s)
{
	return js_sources_changes(s->src, s->n_src);
}

/* Gather a warning about the target: each distinct message once (the
 * first 1000), kept in s->warn until the end, when the dump prints them
 * after its stacks and record after its profile. */
void js_warn(js_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Gather the warnings that only the state at the end tells: descriptor
 * notes, rejected JIT images (the first few), malformed perf map lines
 * and jitdump records, entries over the bounds. */
void js_warn_jit_data(js_session *s);
/* Each gathered warning on stderr, "jitstack: warning: " + who + the
 * message (who: "" for one process; record of several names the process). */
void js_print_warnings(const js_session *s, const char *who);

#endif
