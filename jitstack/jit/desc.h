/* SPDX-License-Identifier: MIT */
/* desc.h - reading a target's GDB JIT descriptor and its list of entries,
 * with the jitunwind outside-reader extension when the descriptor has it
 * (docs/OUTSIDE_READER.md), the way gdb does when it does not.
 *
 * With the extension a live process need not be stopped: the list is read
 * between two equal even values of the sequence lock, and retried (bounded
 * in tries and time) while a change is under way.  Without it the caller
 * stops the process first.  A core, or a process stopped while its writer
 * was in the middle of a change, is read once, best effort: the list is
 * walkable at every moment (docs/OUTSIDE_READER.md, "Cores").
 *
 * Untrusted: the walk is bounded by JS_MAX_ENTRIES and n_entries, detects
 * cycles, and any unreadable entry ends it with a note.
 */
#ifndef JS_DESC_H
#define JS_DESC_H

#include "base/err.h"
#include "target/mem.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct js_entry {
	uint64_t addr; /* the entry itself */
	uint64_t symfile_addr, symfile_size;
	bool ext; /* the fields below are valid */
	uint64_t reg_seq, code_lo, code_hi;
} js_entry;

typedef enum {
	DESC_EMPTY,       /* never read, or version != 1 */
	DESC_VALIDATED,   /* a seqlock-validated snapshot */
	DESC_STOPPED,     /* read while the target could not change it (stopped, or a core) */
	DESC_BEST_EFFORT, /* read while it may have been changing */
} desc_state;

typedef struct js_desc {
	uint64_t addr;      /* the descriptor */
	uint64_t sym_size;  /* st_size of its symbol, 0 if unknown */
	uint64_t budget_ns; /* time a seqlock read may take; 0: JS_SNAPSHOT_BUDGET_NS */
	char module[256];   /* the object that defines it (for messages) */
	/* from the last read */
	bool ext; /* the jitunwind extension is present */
	uint32_t version, sizeof_entry;
	uint64_t seq, reclaim_seq, n_claimed, first_entry;
	desc_state state;
	js_entry *ents;
	size_t n, cap;
	char note[256]; /* what went wrong, "" if nothing */
} js_desc;

typedef enum {
	READ_RUNNING, /* live, not stopped: use the seqlock, back off on odd */
	READ_STOPPED, /* live, every thread stopped: read once */
	READ_CORE,    /* a core file: read once */
} read_mode;

/* Read the descriptor at d->addr and its list.  READ_RUNNING reads only the
 * header of a descriptor without the extension (its list must be read
 * stopped).  Returns 0, or the code with *why when the target's memory
 * cannot be read at all (JS_EXIT_NO_PROCESS: the process is gone) or
 * memory ran out.  What is wrong with the list is d->note, not a failure. */
int js_desc_read(js_mem *m, js_desc *d, read_mode mode, js_err *why);
/* Only the sequence counter (extension only), read every round: 0, or
 * js_mem_read's errno value (no message). */
int js_desc_seq(js_mem *m, const js_desc *d, uint64_t *seq);
/* After copying images of a snapshot: are the copies good (reclaim_seq <=
 * the snapshot's seq)?  Always true without the extension or when stopped. */
bool js_desc_copies_valid(js_mem *m, const js_desc *d);
void js_desc_free(js_desc *d);

const char *js_desc_state_name(desc_state s);

#endif
