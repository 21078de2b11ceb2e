/* SPDX-License-Identifier: MIT */
/* bounds.h - every bound jitstack puts on data it does not trust.
 *
 * The target's memory and the files it names are untrusted: a JIT with a
 * bug, a corrupted core or a hostile process can put anything there.  Every
 * loop over such data is bounded by one of these, and every size read from
 * it is checked against one before anything is allocated (STYLE.md item 14).
 * They are generous for real JITs (a million functions, a 64 MiB image) and
 * small enough that the worst case is a fraction of a second of work.
 */
#ifndef JS_BOUNDS_H
#define JS_BOUNDS_H

/* ---- the GDB JIT descriptor and its list -------------------------------- */
#define JS_MAX_DESCRIPTORS 8               /* definitions of __jit_debug_descriptor read */
#define JS_MAX_ENTRIES 1000000u            /* entries walked on one list */
#define JS_SNAPSHOT_TRIES 1000             /* seqlock retries before giving up */
#define JS_SNAPSHOT_BUDGET_NS 200000000ull /* and the time they may take */
#define JS_SNAPSHOT_RECOPIES 8             /* new snapshots when copies were reclaimed under us */
#define JS_ODD_SEQ_BACKOFF_NS 1000000ull   /* sleep while a change is under way */

/* ---- images ---------------------------------------------------------------- */
#define JS_MAX_IMAGE_SIZE ((size_t)64 << 20)  /* one in-memory ELF image */
#define JS_MAX_IMAGES 65536u                  /* images kept from one target */
#define JS_MAX_IMAGES_TOTAL ((size_t)1 << 30) /* all images copied from one target */
#define JS_MAX_SECTIONS 4096u                 /* checked before libelf allocates for each (elfin.c) */
#define JS_MAX_SYMBOLS 4000000u
#define JS_MAX_NAME 4096u                    /* a symbol or section name */
#define JS_MAX_CODE_SPAN ((uint64_t)1 << 30) /* hull of an image's code */
#define JS_MAX_CFI_RECORDS 4000000u          /* CIEs + FDEs of one image */
#define JS_MAX_CIES 4096u                    /* distinct CIEs of one image */
#define JS_MAX_CFA_INSNS 100000u             /* instructions of one CIE or FDE */
/* DWARF register numbers CFI may name: x86-64's and AArch64's stop below 256.
 * libdw sizes an unwinder's register table by the highest one named, so
 * an absurd number would make it allocate gigabytes. */
#define JS_MAX_CFA_REG 1024u

/* ---- perf maps ---------------------------------------------------------------- */
#define JS_MAX_PERFMAP_LINE 16384u       /* bytes of one line; longer ones are skipped */
#define JS_MAX_PERFMAP_LINES (16u << 20) /* lines kept from one map (~1 GB of text) */

/* ---- jitdumps ------------------------------------------------------------------ */
#define JS_MAX_JITDUMP_HEADER 4096u            /* a header's total_size */
#define JS_MAX_JITDUMP_INFO ((size_t)16 << 20) /* one DEBUG_INFO or UNWINDING_INFO record */
#define JS_MAX_JITDUMP_LOADS (4u << 20)        /* CODE_LOADs and CODE_MOVEs kept */
#define JS_MAX_JITDUMP_CFI ((size_t)256 << 20) /* .eh_frame bytes kept from one dump */
#define JS_MAX_JITDUMP_ROWS (32u << 20)        /* line rows kept from one dump */

/* ---- unwinding ---------------------------------------------------------------- */
#define JS_DEFAULT_MAX_FRAMES 256u /* frames per thread unless --max-frames */
#define JS_MAX_FRAMES 65536u       /* the largest --max-frames accepted */
#define JS_MAX_THREADS 65536u      /* threads of one target */
#define JS_MAX_MODULES 65536u      /* modules reported to libdwfl */
/* Inline frames kept at one pc: its DWARF's DW_TAG_inlined_subroutine
 * scopes around it, innermost first (deep C++ inlining reaches a few
 * dozen; a chain past this keeps its innermost frames). */
#define JS_MAX_INLINE_DEPTH 128u
/* How deep a unit's DIEs may nest for its scopes to be looked up: libdw
 * (0.188) walks scopes by recursion, a call a level, so a JIT image nesting
 * DIEs millions deep would overflow our stack.  A unit is measured once
 * (iteratively) before its scopes are asked for. */
#define JS_MAX_DIE_DEPTH 1024u

/* ---- record over several processes (targets.c) --------------------------------- */
#define JS_MAX_TARGETS 4096u              /* processes one record run samples */
#define JS_MAX_SKIPPED_KEPT 256u          /* of those left out, the ones --stats names */
#define JS_TARGET_FD_RESERVE 64           /* descriptors kept free when adding a process */
#define JS_RING_BUDGET ((size_t)64 << 20) /* perf ring bytes shared by all sampled threads */

/* ---- CPython's frames, read from outside (python/) ------------------------------- */
#define JS_PY_MAX_INTERPRETERS 256u      /* interpreters of one runtime */
#define JS_PY_MAX_FRAMES 8192u           /* Python frames of one thread (its recursion limit is 1000) */
#define JS_PY_MAX_STRING 1024u           /* characters of a name or file name; longer ones are cut */
#define JS_PY_MAX_LINETABLE (1u << 20)   /* bytes of one code object's co_linetable */
#define JS_PY_MAX_READS 1000000ul        /* reads of the target's memory in one walk */
#define JS_PY_CODE_CACHE 256u            /* code objects remembered, by address */
#define JS_PY_MAX_KEPT ((size_t)8 << 20) /* bytes of names and line tables kept across walks */
#define JS_PY_MAX_OFFSET (1u << 20)      /* an offset _Py_DebugOffsets gives */
#define JS_PY_REREADS 3u                 /* reads of a running thread's chain that changed as it was read */
#define JS_PY_RECHECK_FRAMES 64u         /* frames called since a running thread's chain was read, followed */

#endif
