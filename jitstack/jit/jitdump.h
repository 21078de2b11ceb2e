/* SPDX-License-Identifier: MIT */
/* jitdump.h - a target's perf jitdump (jit-<pid>.dump) as a source of
 * names, source lines and CFI for its JIT code.
 *
 * The format is perf's (formats/jitdump.h; the specification is perf's
 * tools/perf/Documentation/jitdump-specification.txt): a header, then
 * records in time order.  What each gives us:
 *   CODE_LOAD       a name for [code_addr, code_addr + code_size); the code
 *                   bytes that follow are never looked at (the file is read
 *                   in large pieces; code that reaches past a piece is
 *                   stepped over without reading it)
 *   CODE_MOVE       the same code, now at new_code_addr
 *   DEBUG_INFO      source lines of the next CODE_LOAD
 *   UNWINDING_INFO  .eh_frame (+ .eh_frame_hdr) of the next CODE_LOAD,
 *                   written for the ELF file `perf inject --jit` makes of it:
 *                   .text at 0x80, .eh_frame at the next multiple of 8 after
 *                   the code.  We make that file's twin at the code's real
 *                   address (jitimage.c rewrites it as it does a GDB JIT
 *                   image) and report it to libdwfl as a module, so code
 *                   that keeps no frame pointer is unwound with its CFI.
 *
 * As for the perf map (perfmap.h), whose level structure holds the ranges
 * here too: the file is untrusted and being appended to while we read it.
 * It is read from the offset reached last time; a record is used once its
 * head is complete (a CODE_LOAD's name, the whole of the other kinds); a
 * record whose size cannot be right ends the reading of the file (no later
 * record can be found) with a warning; a record that breaks a bound is
 * skipped and counted.  A later CODE_LOAD wins over earlier ones for the
 * addresses it covers.
 *
 * A dump reads it for the pcs of its stacks only (js_jitdump_read_for):
 * every record's head is still read, in one pass, but only the CODE_LOADs
 * and CODE_MOVEs whose code overlaps those pcs, or code kept before them,
 * are kept; the DEBUG_INFO and UNWINDING_INFO before each are noted by
 * their offset and read (by offset, bounded as before) only for a load
 * kept.  At those pcs the result is what reading all of it gives: every
 * load covering them is kept, so is every later load overlapping a kept
 * one (which decides whether a kept load is still the latest).
 *
 * Where it is: the writer maps the file executable so that perf sees it
 * (its MMAP event); that mapping is in /proc/PID/maps, and in a core's
 * NT_FILE note.  For a core only records written before the core count
 * (js_jitdump.until_ns).
 */
#ifndef JS_JITDUMP_H
#define JS_JITDUMP_H

#include "base/err.h"
#include "base/follow.h"
#include "jit/jitmodules.h"
#include "jit/perfmap.h"

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* js_image.desc of the modules made from a jitdump (not a descriptor's). */
#define JS_IMAGE_FROM_JITDUMP 0xffffffffu

typedef struct js_jd_line {
	uint64_t addr;
	int32_t line, col;
	const char *file;
} js_jd_line;

/* One piece of code, from its CODE_LOAD (or CODE_MOVE). */
typedef struct js_jd_code {
	uint64_t lo, hi;
	uint64_t ts;
	const char *name;  /* as the range map keeps it */
	js_jd_line *lines; /* by address; NULL when none */
	size_t n_lines;
	uint8_t *eh; /* its .eh_frame for perf's layout (at JD_ELF_EH_FRAME_ADDR), or NULL */
	size_t eh_size;
	js_image *img; /* the module made of it, once tried (NULL: none) */
	bool img_tried;
	bool was; /* its module was in the report before this one */
} js_jd_code;

typedef struct js_jitdump {
	char path[4200];
	long owner;        /* as js_perfmap.owner */
	uint16_t machine;  /* the target's e_machine; a dump for another is not read */
	uint64_t until_ns; /* records stamped later are not used (a core's time); 0: all */
	bool found, ended; /* ended: the file cannot be read further (why) */
	char why[200];
	/* the file's last record (or its header) runs past its end, as the
	 * last read that reached the end found it: what was not read (cut) */
	bool cut;
	char cut_what[160];
	uint64_t last_at; /* the last record whose prefix was read: where, its kind and size */
	uint32_t last_id, last_size;
	/* file.off: bytes consumed (records used or stepped over); file.skip:
	 * bytes of the current record still to step over */
	js_follow file;
	bool have_header;
	uint64_t flags, start_ns;
	uint32_t pid;
	js_perfmap ranges; /* code ranges, .start = index in code[] */
	/* js_jitdump_read_for: the spans whose code is kept (NULL: all), and the
	 * code kept (what overlaps it is kept too) */
	js_span *want;
	size_t n_want;
	js_span *kept;
	size_t n_kept, cap_kept;
	/* the DEBUG_INFO and UNWINDING_INFO records pending, by offset and size
	 * (size 0: none), when they are read only for a load kept */
	uint64_t pend_debug_at, pend_unwind_at;
	uint32_t pend_debug_len, pend_unwind_len;
	uint64_t gap; /* a CODE_MOVE's old address whose code was not kept (0: none) */
	/* a CODE_MOVE not kept drops the pending records only if code starts at
	 * its old address: that address, while pending records wait (0: none) */
	uint64_t doubt;
	js_jd_code *code;
	size_t n_code, cap_code;
	/* DEBUG_INFO and UNWINDING_INFO wait for the CODE_LOAD they describe */
	js_jd_line *pend_lines;
	size_t pend_n_lines;
	uint8_t *pend_eh;
	size_t pend_eh_size;
	struct js_strchunk *strs; /* file names */
	js_image **dead;          /* images of a file read again, freed after libdwfl let go */
	size_t n_dead, cap_dead;
	uint64_t changes;           /* bumped when names, lines or CFI changed */
	unsigned long reported_cfi; /* with_cfi at the last report of its modules */
	unsigned long resets;       /* times what was read was forgotten (its modules' names differ) */
	uint64_t cfi_bytes, line_rows;
	/* counters: the summary and warnings */
	unsigned long loads, moves, debug, unwind, with_cfi, bad, over_limit, late, unknown, reads, rereads;
	unsigned long unkept; /* loads and moves not kept (js_jitdump_read_for), counted in them too */
	uint64_t bytes;       /* read from the file */
} js_jitdump;

void js_jitdump_init(js_jitdump *jd, const char *path, uint16_t machine);
void js_jitdump_free(js_jitdump *jd);

/* Read what was appended since the last call.  1 when names, lines or CFI
 * changed, 0 when not, -1 with *why when the file cannot be read (ENOENT:
 * it does not exist). */
int js_jitdump_refresh(js_jitdump *jd, js_err *why);

/* Forget what was read and read the file again from its start, keeping
 * only the code that overlaps one of the n spans.  0, or -1 with *why as
 * js_jitdump_refresh.  (libdwfl may still hold modules of the images
 * forgotten: report the modules again before unwinding.) */
int js_jitdump_read_for(js_jitdump *jd, const js_span *want, size_t n, js_err *why);

/* Parse bytes that follow those consumed before.  Returns how many were
 * consumed; when fewer than len, *want is how many bytes, from the first
 * not consumed, the next record needs (the caller reads that many before it
 * feeds again).  Then js_jitdump_commit makes them visible.  -1 when out of
 * memory. */
ssize_t js_jitdump_feed(js_jitdump *jd, const uint8_t *buf, size_t len, size_t *want);
int js_jitdump_commit(js_jitdump *jd);

/* The code holding pc (the latest load covering it), or NULL. */
js_jd_code *js_jitdump_find(js_jitdump *jd, uint64_t pc);
/* The line row of pc in c, or NULL. */
const js_jd_line *js_jitdump_line(const js_jd_code *c, uint64_t pc);

/* The module image of c: its CFI (and name) as an ELF file libdwfl loads
 * (jitimage.h), made on first use.  NULL when c has no CFI or it was
 * rejected. */
js_image *js_jitdump_image(js_jitdump *jd, js_jd_code *c);

/* Report, as modules, the code that has CFI and is still the latest at its
 * addresses, unless a native module or a GDB JIT image (j) covers some of
 * it; between dwfl_report_begin* and dwfl_report_end, after the others.
 * Returns true when a module reported before is left out now (a report
 * that only adds must then be redone in full). */
bool js_jitdump_report(js_jitdump *jd, const js_jit *j, Dwfl *dwfl);

/* Drop the CFI of the code at pc (it made a frame its own caller): its
 * frames are then unwound by frame pointers.  Report the modules again
 * afterwards.  false when that code has no module. */
bool js_jitdump_drop_cfi(js_jitdump *jd, uint64_t pc);
/* Free the images a re-read dropped; call after dwfl_report_end. */
void js_jitdump_reap(js_jitdump *jd);

/* The marker mapping of a live process's dump in /proc/PID/maps, as a path
 * seen from here: through /proc/PID/root, or for a dump its writer unlinked
 * through /proc/PID/map_files (root may follow those links).  false when
 * there is none. */
bool js_jitdump_path_live(pid_t pid, char *out, size_t len);
/* Does the path name a jitdump (jit-<digits>.dump)? */
bool js_jitdump_name_ok(const char *path);

#endif
