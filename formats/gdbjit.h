/* SPDX-License-Identifier: MIT */
/* gdbjit.h - the GDB JIT interface as jitunwind lays it out in memory: the
 * standard descriptor and entry (GDB manual, "JIT Compilation Interface"),
 * and jitunwind's outside-reader extension appended to both.
 *
 * Shared by the writer (src/ch_gdb.c) and every reader (jitstack, tests), so
 * the layout is defined once.  docs/OUTSIDE_READER.md gives the reading
 * protocol; in short:
 *
 *   - The standard part is what gdb and lldb read.  Pointers are stored as
 *     64-bit values: the library supports LP64 targets only (x86-64,
 *     AArch64), where this is exactly the C struct gdb expects.
 *   - The extension follows the standard fields, so old readers never see it.
 *     `magic` says it is there; `sizeof_descriptor` and `sizeof_entry` let
 *     later versions append fields (a reader uses the fields it knows and
 *     steps over entries by `sizeof_entry`).
 *   - `seq` is a sequence lock: odd while the list changes, advanced by two
 *     per change.  A snapshot read between two equal even values is
 *     consistent.
 *   - Unlinked entries (and the images they point to) are not freed at once:
 *     they wait in a graveyard.  `reclaim_seq` is the newest change whose
 *     unlinked entries have been freed; bytes copied after a snapshot taken
 *     at seq S are good if `reclaim_seq` <= S when read after the copy.
 *
 * All values are in the target's byte order (little-endian on both supported
 * machines); times are CLOCK_MONOTONIC nanoseconds.
 */
#ifndef JU_FORMATS_GDBJIT_H
#define JU_FORMATS_GDBJIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus /* C++ tests include it too */
#define _Static_assert static_assert
#endif

/* jit_actions_t of the GDB manual. */
enum {
	GDBJIT_NOACTION = 0,
	GDBJIT_REGISTER_FN = 1,
	GDBJIT_UNREGISTER_FN = 2,
};

/* The only descriptor version gdb and lldb accept. */
#define GDBJIT_VERSION 1

/* Extension marker: the 8 bytes right after the standard descriptor. */
#define GDBJIT_EXT_MAGIC "JITUNWND"
#define GDBJIT_EXT_MAGIC_LEN 8
/* Version of the extension's protocol; bumped only for incompatible changes
 * (new fields are announced by larger sizes instead). */
#define GDBJIT_EXT_VERSION 1

/* Descriptor flags. */
enum {
	/* Someone else writes this list without taking `seq` (another JIT with
	 * a lock of its own): the sequence lock no longer covers the list, and
	 * not every entry carries the extension.  Read the list as without the
	 * extension (docs/OUTSIDE_READER.md). */
	GDBJIT_FLAG_FOREIGN_WRITER = 1u << 0,
};

/* The symbols a process exports (default visibility, one per process after
 * the dynamic linker's interposition). */
#define GDBJIT_DESCRIPTOR_SYMBOL "__jit_debug_descriptor"
#define GDBJIT_REGISTER_SYMBOL "__jit_debug_register_code"

/* struct jit_code_entry, then the extension. */
typedef struct gdbjit_entry {
	/* standard (GDB manual) */
	uint64_t next_entry;   /* struct jit_code_entry * */
	uint64_t prev_entry;   /* struct jit_code_entry * */
	uint64_t symfile_addr; /* const char *: the in-memory ELF image */
	uint64_t symfile_size;
	/* extension */
	uint64_t reg_seq;     /* descriptor seq after the change that linked the entry:
				 with the entry's address, a unique name for it */
	uint64_t reg_time_ns; /* CLOCK_MONOTONIC when it was linked */
	uint64_t code_lo;     /* hull of the code the image describes: [lo, hi) */
	uint64_t code_hi;
} gdbjit_entry;

/* struct jit_descriptor, then the extension. */
typedef struct gdbjit_descriptor {
	/* standard (GDB manual) */
	uint32_t version;        /* GDBJIT_VERSION */
	uint32_t action_flag;    /* GDBJIT_* action of the last change */
	uint64_t relevant_entry; /* struct jit_code_entry *: entry of that action */
	uint64_t first_entry;    /* struct jit_code_entry *: head of the list */
	/* extension */
	char magic[GDBJIT_EXT_MAGIC_LEN]; /* GDBJIT_EXT_MAGIC, no NUL */
	uint32_t ext_version;             /* GDBJIT_EXT_VERSION */
	uint32_t flags;                   /* GDBJIT_FLAG_* */
	uint32_t sizeof_descriptor;       /* sizeof(gdbjit_descriptor) of the writer */
	uint32_t sizeof_entry;            /* sizeof(gdbjit_entry) of the writer */
	uint64_t seq;                     /* sequence lock: odd while the list changes */
	uint64_t timestamp_ns;            /* CLOCK_MONOTONIC when the last change began */
	uint64_t reclaim_seq;             /* entries unlinked by changes up to this seq may be freed */
	uint64_t n_entries;               /* entries on the list (consistent with seq) */
	uint64_t grace_ns;                /* policy: unlinked entries normally live this long */
} gdbjit_descriptor;

/* The layout is the protocol: pin every offset. */
_Static_assert(sizeof(void *) == 8, "the GDB JIT layout here is for LP64 targets");
_Static_assert(offsetof(gdbjit_entry, next_entry) == 0, "entry layout");
_Static_assert(offsetof(gdbjit_entry, prev_entry) == 8, "entry layout");
_Static_assert(offsetof(gdbjit_entry, symfile_addr) == 16, "entry layout");
_Static_assert(offsetof(gdbjit_entry, symfile_size) == 24, "entry layout");
_Static_assert(offsetof(gdbjit_entry, reg_seq) == 32, "entry layout");
_Static_assert(offsetof(gdbjit_entry, reg_time_ns) == 40, "entry layout");
_Static_assert(offsetof(gdbjit_entry, code_lo) == 48, "entry layout");
_Static_assert(offsetof(gdbjit_entry, code_hi) == 56, "entry layout");
_Static_assert(sizeof(gdbjit_entry) == 64, "entry layout");

_Static_assert(offsetof(gdbjit_descriptor, version) == 0, "descriptor layout");
_Static_assert(offsetof(gdbjit_descriptor, action_flag) == 4, "descriptor layout");
_Static_assert(offsetof(gdbjit_descriptor, relevant_entry) == 8, "descriptor layout");
_Static_assert(offsetof(gdbjit_descriptor, first_entry) == 16, "descriptor layout");
_Static_assert(offsetof(gdbjit_descriptor, magic) == 24, "descriptor layout");
_Static_assert(offsetof(gdbjit_descriptor, ext_version) == 32, "descriptor layout");
_Static_assert(offsetof(gdbjit_descriptor, flags) == 36, "descriptor layout");
_Static_assert(offsetof(gdbjit_descriptor, sizeof_descriptor) == 40, "descriptor layout");
_Static_assert(offsetof(gdbjit_descriptor, sizeof_entry) == 44, "descriptor layout");
_Static_assert(offsetof(gdbjit_descriptor, seq) == 48, "descriptor layout");
_Static_assert(offsetof(gdbjit_descriptor, timestamp_ns) == 56, "descriptor layout");
_Static_assert(offsetof(gdbjit_descriptor, reclaim_seq) == 64, "descriptor layout");
_Static_assert(offsetof(gdbjit_descriptor, n_entries) == 72, "descriptor layout");
_Static_assert(offsetof(gdbjit_descriptor, grace_ns) == 80, "descriptor layout");
_Static_assert(sizeof(gdbjit_descriptor) == 88, "descriptor layout");

/* Size of the standard part, all a foreign descriptor is known to have. */
#define GDBJIT_STD_DESCRIPTOR_SIZE offsetof(gdbjit_descriptor, magic)
#define GDBJIT_STD_ENTRY_SIZE offsetof(gdbjit_entry, reg_seq)

/* ---- the standard part alone, as a JIT without the extension writes it ---- */

/* The GDB manual's own declarations, with its pointer types: what LLVM,
 * CPython and the tree's test and bench JITs that stand for them define
 * (they never carry the extension). */
struct jit_code_entry {
	struct jit_code_entry *next_entry;
	struct jit_code_entry *prev_entry;
	const char *symfile_addr;
	uint64_t symfile_size;
};

struct jit_descriptor {
	uint32_t version;     /* GDBJIT_VERSION */
	uint32_t action_flag; /* GDBJIT_* */
	struct jit_code_entry *relevant_entry;
	struct jit_code_entry *first_entry;
};

_Static_assert(sizeof(struct jit_code_entry) == GDBJIT_STD_ENTRY_SIZE, "plain entry layout");
_Static_assert(sizeof(struct jit_descriptor) == GDBJIT_STD_DESCRIPTOR_SIZE, "plain descriptor layout");

/* Put e at the head of d's list as the entry of a GDBJIT_REGISTER_FN, as
 * LLVM's GDBRegistrationListener does; the caller then calls
 * __jit_debug_register_code, under whatever lock its JIT holds. */
static inline void gdbjit_plain_link(struct jit_descriptor *d, struct jit_code_entry *e)
{
	e->prev_entry = NULL;
	e->next_entry = d->first_entry;
	if (e->next_entry)
		e->next_entry->prev_entry = e;
	d->first_entry = e;
	d->relevant_entry = e;
	d->action_flag = GDBJIT_REGISTER_FN;
}

#endif
