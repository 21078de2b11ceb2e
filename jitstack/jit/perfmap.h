/* SPDX-License-Identifier: MIT */
/* perfmap.h - a target's perf map (/tmp/perf-<pid>.map) as a naming source.
 *
 * The format is perf's (tools/perf/Documentation/jit-interface.txt): one
 * line "START SIZE name" per piece of code, START and SIZE in hex.  node
 * (--perf-basic-prof), OpenJDK (jcmd Compiler.perfmap), .NET, LuaJIT and
 * libjitunwind's perfmap channel write it; most JITs write nothing else.
 * Names are kept as they are; libjitunwind's names for code with inlined
 * guest functions ("leaf <- mid <- run") become inline frames when a frame
 * is named (unwind/name.c).
 *
 * The file is the target's, so its content is untrusted, and it is being
 * written while we read it:
 * - it is read in pieces (never held whole in memory), from the offset
 *   reached last time; a last line without its newline is not read until
 *   it is complete;
 * - a line that does not parse (bad hex, a zero size, a range that wraps,
 *   no name, longer than JS_MAX_PERFMAP_LINE) is counted and skipped; a line
 *   whose first byte is '#' is a tombstone (libjitunwind marks a dead
 *   blob's line so when new code is published over it) and is skipped;
 * - a later line wins over earlier ones for the addresses it covers: JITs
 *   reuse addresses and append the new code's line, never removing the old.
 *
 * The lines become a set of disjoint ranges sorted by address, each naming
 * the line that owns it (the latest covering it).  They are kept in a few
 * levels, as a log-structured merge tree keeps its runs: level 0 holds the
 * newest ranges and at most JS_PM_LEVEL0 of them, each level eight times as
 * many as the one before, the last (the base) any number.  Appended lines
 * are painted over level 0; a level that outgrows its size is painted over
 * the next and emptied.  A read of a few new lines thus costs in proportion
 * to them and to level 0, not to the whole map, and a lookup searches each
 * level, newest first.
 *
 * js_perfmap_refresh follows the file by path (follow.h): a new inode (the
 * writer replaced the file, as libjitunwind's compaction does) or a file
 * shorter than the offset reached (truncated: a new process with the same
 * pid) makes it start again from the beginning.
 *
 * A dump needs the names of a few pcs, not the map: js_perfmap_read_for
 * reads the whole file once and keeps only the lines that overlap the
 * spans it is given (the pcs of the stacks) (the others are parsed for their range and counted, their
 * names never copied), so that its memory does not grow with the map.  At
 * a pc the map so read names exactly what the whole map names: every line
 * that covers it is kept, and the latest of them wins as before.  The file
 * may be held open first (js_perfmap_pin, while the target is stopped) and
 * read later as it was then.
 */
#ifndef JS_PERFMAP_H
#define JS_PERFMAP_H

#include "base/err.h"
#include "base/follow.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define JS_PM_LEVELS 4
#ifndef JS_PM_LEVEL0 /* (the test makes it small, to take every level) */
#define JS_PM_LEVEL0 4096u
#endif

/* [lo, hi): what a dump wants read (a pc is [pc, pc + 1)). */
typedef struct js_span {
	uint64_t lo, hi;
} js_span;

/* Sort spans by lo and join those that overlap or touch; empty ones go.
 * Returns how many are left. */
size_t js_spans_normalize(js_span *v, size_t n);
/* *want (freed) becomes a normalized copy of v[0..n), *n_want its count.
 * 0, or -1 when out of memory (then *want is as it was). */
int js_spans_set(js_span **want, size_t *n_want, const js_span *v, size_t n);
/* Does [lo, hi) overlap one of the n spans (normalized)? */
bool js_spans_overlap(const js_span *v, size_t n, uint64_t lo, uint64_t hi);

/* One range of the map: [lo, hi) belongs to the line that starts at start. */
typedef struct js_pm_seg {
	uint64_t lo, hi;
	uint64_t start;   /* the owning line's START (lo may be past it), or the
			   * value js_perfmap_add was given */
	const char *name; /* NUL-terminated; control bytes replaced by '?' */
} js_pm_seg;

typedef struct js_perfmap {
	char path[4200];
	/* the uid the file may have besides ours and root's; -1: any, and a
	 * symbolic link is followed (a path the user gave) */
	long owner;
	bool found;     /* the file was opened at least once */
	js_follow file; /* file.off: bytes read, up to the end of the last complete line */
	bool skipping;  /* off is inside an overlong line: drop through its newline */
	/* each level disjoint, by address; a lower level is newer */
	js_pm_seg *lvl[JS_PM_LEVELS];
	size_t n_lvl[JS_PM_LEVELS], cap_lvl[JS_PM_LEVELS];
	struct pm_lines *pending;  /* lines parsed but not yet painted */
	struct js_strchunk *names; /* where the names live */
	uint64_t changes;          /* bumped whenever a refresh painted lines */
	/* js_perfmap_read_for: the spans whose lines are kept (normalized;
	 * NULL: every line), and the file held open by js_perfmap_pin */
	js_span *want;
	size_t n_want;
	int pin_fd; /* -1: none */
	uint64_t pin_size;
	/* counters, for the summary and --stats; unkept: lines parsed but not
	 * kept (no wanted pc in them), counted in lines too */
	unsigned long lines, unkept, bad, tombstones, over_limit, reads, rereads;
	uint64_t bytes;
} js_perfmap;

void js_perfmap_init(js_perfmap *pm, const char *path);
void js_perfmap_free(js_perfmap *pm);

/* Read what was appended to the file since the last call (all of it the
 * first time, or when it was replaced or truncated).  Returns 1 when the
 * names changed, 0 when not, -1 with *why when the file cannot be read
 * (ENOENT: it does not exist; the ranges read before are kept). */
int js_perfmap_refresh(js_perfmap *pm, js_err *why);

/* Hold the file open as it is now (its size too), for js_perfmap_read_for.
 * 0, or -1 with *why as js_perfmap_refresh. */
int js_perfmap_pin(js_perfmap *pm, js_err *why);
/* Forget what was read and read the file again from its start (the one
 * pinned, up to its size then; else the path's), keeping only the lines
 * that overlap one of the n spans.  0, or -1 with *why as
 * js_perfmap_refresh. */
int js_perfmap_read_for(js_perfmap *pm, const js_span *want, size_t n, js_err *why);
/* Is x in a span given to js_perfmap_read_for (or is every line kept)? */
bool js_perfmap_wanted(const js_perfmap *pm, uint64_t x);

/* Parse bytes that follow what was fed before (a file's content in pieces).
 * Returns how many were consumed: up to the end of the last complete line
 * (with a partial line left over, the caller feeds it again with what
 * follows).  Then js_perfmap_commit paints what was parsed.  -1 when out of
 * memory. */
ssize_t js_perfmap_feed(js_perfmap *pm, const char *buf, size_t len);
/* Add one range [lo, lo + size) named name (len bytes, no NUL needed) as
 * a line that follows those fed before, whose ranges carry start as their
 * .start (another source of ranges, the jitdump, names its records so).
 * Returns the name as kept, or NULL when out of memory or the range is
 * empty or wraps (not added). */
const char *js_perfmap_add(js_perfmap *pm, uint64_t lo, uint64_t size, const char *name, size_t len,
			   uint64_t start);
/* Paint the lines fed since the last commit over the map.  0, or -1 when out
 * of memory (the map is then as before the commit). */
int js_perfmap_commit(js_perfmap *pm);

/* The range holding pc, or NULL. */
const js_pm_seg *js_perfmap_find(const js_perfmap *pm, uint64_t pc);
/* Ranges in the map (over every level, counting overlaps once each). */
size_t js_perfmap_size(const js_perfmap *pm);

/* The path of the perf map of a live process, as seen from here: the
 * target's /tmp through /proc/PID/root (its mount namespace: a container's
 * own /tmp), named after its pid in its own pid namespace (NSpid in
 * /proc/PID/status, the last field), as the JIT inside knows itself. */
void js_perfmap_path_live(pid_t pid, char *out, size_t len);

#endif
