/* SPDX-License-Identifier: MIT */
/* jitunwind.h - publish JIT-compiled code to native unwinders, debuggers and
 * profilers.
 *
 * A JIT writes machine code into anonymous memory; without help, glibc
 * backtrace(), C++ exceptions, libunwind, gdb, lldb and perf cannot see through
 * it.  One ju_publish() call describes a blob of code (where it is, its name,
 * how its frame is laid out, optionally its source lines) and libjitunwind
 * hands that to every consumer through the channel each one reads:
 *
 *   JU_CH_UNWINDER   libgcc and LLVM libunwind frame registration (glibc
 *                    backtrace, C++ exceptions, _Unwind_Backtrace)
 *   JU_CH_LIBUNWIND  nongnu libunwind's _U_dyn_register (memray, heaptrack)
 *   JU_CH_GDB        the GDB JIT interface, in-memory ELF images (gdb, lldb,
 *                    jitstack; live and in core files)
 *   JU_CH_PERFMAP    /tmp/perf-<pid>.map (perf, eBPF profilers)
 *   JU_CH_JITDUMP    jit-<pid>.dump for `perf inject --jit`
 *
 * By default only the first three, which live in memory, are on: the two
 * files (the jitdump holds a copy of all the code) are written only when
 * asked for, in ju_options.channels or with JITUNWIND=perf.
 *
 * Every function returns 0 or a negative JU_E* code; ju_strerror() names the
 * code and ju_errmsg() gives the calling thread's detailed message for the last
 * failure.  The library never aborts, exits or prints on its own.
 *
 * Thread safety: all calls on one context may be made from any thread; they
 * are serialised internally.  Other threads may unwind through published code
 * at any time.  Code one context published is refused to the others
 * (JU_EOVERLAP).
 *
 * Compatibility: the structs a caller fills (ju_options, ju_blob) start with
 * `sz`, their size as the caller compiled them: sizeof the struct (JU_OPTIONS()
 * and JU_BLOB() set it), or 0, which the functions below read as the size
 * this header gives them (their macros pass it beside the pointer), so that
 * `{0}`, designated initializers and memset-then-fill, as source written for
 * 0.1 has them, work unchanged.  A later library reads only the fields inside
 * that size, so a binary keeps working against every later version; a
 * library older than the binary refuses a struct with non-zero bytes past
 * what it knows (JU_ENOTSUP).  Structs grow only at their end.  Binaries
 * built before `sz` (version 0.1) keep the entry points they were linked
 * with (symbol version JITUNWIND_0.1).  See docs/API.md, "Compatibility".
 */
#ifndef JITUNWIND_H
#define JITUNWIND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define JU_API __attribute__((visibility("default")))
#else
#define JU_API
#endif

#define JU_VERSION_MAJOR 0
#define JU_VERSION_MINOR 2
#define JU_VERSION_PATCH 0
/* The version this header belongs to, as ju_version() encodes it. */
#define JU_VERSION_NUMBER(major, minor, patch)                                                               \
	((uint32_t)(major) << 16 | (uint32_t)(minor) << 8 | (uint32_t)(patch))
#define JU_VERSION JU_VERSION_NUMBER(JU_VERSION_MAJOR, JU_VERSION_MINOR, JU_VERSION_PATCH)

/* Error codes.  All are negative; 0 is success. */
enum {
	JU_OK = 0,
	JU_EINVAL = -1,      /* an argument is malformed (NULL, zero size, ...) */
	JU_ENOMEM = -2,      /* out of memory */
	JU_EOVERLAP = -3,    /* the range overlaps code already published */
	JU_ENOENT = -4,      /* nothing is published at that address */
	JU_EBUSY = -5,       /* the context still has published blobs */
	JU_ENOCONSUMER = -6, /* a requested channel's consumer is absent */
	JU_EIO = -7,         /* writing a perf map or jitdump file failed */
	JU_EPERM = -8,       /* a file exists that we must not write (owner, type) */
	JU_ERANGE = -9,      /* an address or offset does not fit the format */
	JU_ECFI = -10,       /* the frame description is invalid */
	JU_ENAME = -11,      /* the name is empty, too long, or not UTF-8 text */
	JU_ELINES = -12,     /* the line table is invalid */
	JU_EENV = -13,       /* the JITUNWIND environment variable is malformed */
	JU_ENOTSUP = -14,    /* a struct sets a field this library does not know */
	JU_EINLINE = -15,    /* the guest frames (inline ranges) are invalid */
};

/* Channels, as a bit mask. */
enum {
	JU_CH_UNWINDER = 1u << 0,
	JU_CH_LIBUNWIND = 1u << 1,
	JU_CH_GDB = 1u << 2,
	JU_CH_PERFMAP = 1u << 3,
	JU_CH_JITDUMP = 1u << 4,
	JU_CH_ALL = (1u << 5) - 1,
	/* What ju_open turns on when not told otherwise: the in-memory channels.
	 * The file channels (perf map, jitdump) are opt-in. */
	JU_CH_DEFAULT = JU_CH_UNWINDER | JU_CH_LIBUNWIND | JU_CH_GDB,
};

/* Option flags. */
enum {
	/* Ignore the JITUNWIND environment variable. */
	JU_OPT_NO_ENV = 1u << 0,
	/* Fail ju_open() if any channel in `channels` cannot be opened (its
	 * consumer is absent: JU_ENOCONSUMER; its file cannot be written), instead
	 * of leaving that channel off.  Channels named one by one (see
	 * ju_options.channels) are always strict.  When JITUNWIND overrides the
	 * options, its own spelling decides. */
	JU_OPT_STRICT = 1u << 1,
};

/* Log levels passed to the optional log callback. */
enum { JU_LOG_ERROR = 0, JU_LOG_WARN = 1, JU_LOG_INFO = 2, JU_LOG_DEBUG = 3 };

typedef struct ju_options {
	/* sizeof(ju_options) as the caller compiled it (JU_OPTIONS() sets it),
	 * or 0: the size this header gives it (see "Compatibility" above). */
	size_t sz;
	/* Channels wanted (JU_CH_* mask); 0 means JU_CH_DEFAULT.  The groups 0,
	 * JU_CH_DEFAULT and JU_CH_ALL open each of their channels where it can
	 * and leave the others off (ju_channels() tells).  Any other mask names
	 * its channels, and each must open or ju_open fails; but a mask holding
	 * all of JU_CH_DEFAULT (JU_CH_DEFAULT | JU_CH_PERFMAP) opens those three
	 * as the default does and requires only the others.
	 *
	 * The environment variable JITUNWIND, when set and not empty, overrides
	 * it: "none", or a comma separated list of words, each a group or a
	 * channel name: "default" (the in-memory channels, where they can open),
	 * "all" (every channel, where it can open), "perf" (short for
	 * "default,perfmap,jitdump"), or "unwinder", "libunwind", "gdb",
	 * "perfmap", "jitdump" (required).  Anything else fails ju_open with
	 * JU_EENV. */
	uint32_t channels;
	uint32_t flags; /* JU_OPT_*; other bits fail ju_open with JU_EINVAL */
	/* Directory for jit-<pid>.dump.  NULL means a new directory
	 * $JITDUMPDIR/.debug/jit/jitunwind-<YYYYMMDD>.XXXXXX, as perf's agents
	 * make it, with $HOME (then ".") in place of $JITDUMPDIR when unset. */
	const char *jitdump_dir;
	/* Optional log sink; called with the context lock held, must not call
	 * back into the library. */
	void (*log)(void *arg, int level, const char *msg);
	void *log_arg;
	/* The most bytes the jitdump may grow to: a context whose next blob would
	 * take the file past it logs a warning once and dumps no more blobs (its
	 * publishes still succeed; the other channels go on).  0 means
	 * JU_JITDUMP_MAX_DEFAULT; UINT64_MAX means no cap.  The environment
	 * variable JITUNWIND_JITDUMP_MAX (bytes, with an optional K, M, G or T
	 * suffix of powers of 1024, or "unlimited") overrides it unless
	 * JU_OPT_NO_ENV is set; a malformed value fails ju_open with JU_EENV. */
	uint64_t jitdump_max_bytes;
	/* New fields go here, at the end (see "Compatibility" above). */
} ju_options;

/* A ju_options with `sz` set and the given fields:
 *   ju_options o = JU_OPTIONS(.channels = JU_CH_ALL); */
#define JU_OPTIONS(...) ((ju_options){ .sz = sizeof(ju_options), __VA_ARGS__ })

/* The jitdump's default cap: 1 GiB, some 4 million small blobs' code and
 * tables -- more than perf inject, which writes one ELF file per blob, is
 * asked to handle in practice, and a bound on what a long-running JIT that
 * keeps replacing code leaves on the disk. */
#define JU_JITDUMP_MAX_DEFAULT ((uint64_t)1 << 30)

typedef struct ju_ctx ju_ctx;

/* A sub-range of a blob, as byte offsets from its start: [start, end). */
typedef struct ju_range {
	uint32_t start, end;
} ju_range;

/* Raw DWARF call frame instructions for [start, end) of a blob.  Each range
 * starts from the CIE's (function-entry) state, whatever the range before it
 * did.  They are read as if they followed the architecture's standard CIE (see
 * docs/API.md): x86-64 code alignment 1, data alignment -8, return address
 * column 16, initial CFA rsp+8; AArch64 code alignment 4, data alignment -8,
 * return address column 30, initial CFA sp+0.  Advance opcodes are relative to
 * `start`.  Exactly what a compiler emits in an FDE. */
typedef struct ju_cfi_range {
	uint32_t start, end;
	const uint8_t *insns;
	size_t len;
} ju_cfi_range;

enum ju_frame_kind {
	JU_FRAME_INVALID = 0, /* a zeroed description is rejected */
	/* The blob never touches the stack pointer or return address: the frame is
	 * in the function-entry state at every instruction (thunks, leaves). */
	JU_FRAME_LEAF,
	/* A standard frame-pointer frame built by the blob itself. */
	JU_FRAME_FP,
	/* One rule for the whole blob: CFA = frame pointer + cfa_offset, the
	 * caller's frame pointer saved at CFA + fp_offset and the return address
	 * at CFA + ra_offset.  Code that runs under a frame set up by a shim (the
	 * shim sets the frame pointer; the blob never writes it). */
	JU_FRAME_REGION,
	/* Compiler-derived CFI, one instruction list per sub-range. */
	JU_FRAME_CFI,
};

/* A callee-saved register a frame-pointer frame's prologue saves after the
 * frame pointer is set (asmjit's `push rbx; push r12`), or that the shim
 * under a region frame saved: its DWARF number
 * (x86-64: rbx 3, r12..r15 12..15; AArch64: x19..x28 19..28), where it is
 * saved as an offset from the CFA (x86-64: the first push after `mov
 * %rsp,%rbp` saves at -24), and the offset just after the instruction that
 * saves it. */
typedef struct ju_saved_reg {
	uint32_t reg;
	int32_t cfa_offset;
	uint32_t saved_end;
} ju_saved_reg;

typedef struct ju_frame {
	enum ju_frame_kind kind;
	union {
		struct {
			/* Offset just after the instruction that saves the caller's frame
			 * pointer (x86-64 `push %rbp`; AArch64 `stp x29, x30, [sp, #-16]!`). */
			uint32_t push_end;
			/* Offset just after the frame pointer is set (`mov %rsp, %rbp`;
			 * `mov x29, sp`). */
			uint32_t set_end;
			/* Ranges where the frame is torn down again: from just after the
			 * restore of the frame pointer (`pop %rbp`, `leave`, `ldp`) to just
			 * after the return or tail jump.  May be NULL/0. */
			const ju_range *epilogues;
			size_t n_epilogues;
			/* Callee-saved registers saved in the frame, sorted by
			 * saved_end, all saved before the first epilogue; the caller's
			 * values are found there from saved_end on (and are back in
			 * the registers inside the epilogues).  May be NULL/0. */
			const ju_saved_reg *saved;
			size_t n_saved;
		} fp;
		struct {
			int32_t cfa_offset; /* x86-64 shim frame: 16 */
			int32_t fp_offset;  /* x86-64 shim frame: -16 */
			int32_t ra_offset;  /* x86-64 shim frame: -8 */
			/* Callee-saved registers the shim saved in its frame, for
			 * the whole blob: offsets from the CFA, saved_end 0.  May
			 * be NULL/0. */
			const ju_saved_reg *saved;
			size_t n_saved;
		} region;
		struct {
			const ju_cfi_range *ranges; /* sorted, non-overlapping */
			size_t n;
		} cfi;
	} u;
} ju_frame;

/* One row of a line table: code at byte `offset` of the blob (and up to the
 * next row) comes from source line `line` (1-based). */
typedef struct ju_line {
	uint32_t offset;
	uint32_t line;
} ju_line;

/* Longest name accepted, in bytes (without the terminating NUL). */
#define JU_NAME_MAX 1024

/* A guest function inlined into a blob (a trace or a method that a JIT
 * compiled across guest calls): debuggers show it as an inline frame over
 * [start, end) of the blob, called from its parent at call_file:call_line.
 * A blob's inlines form a tree under the blob's own function; the array
 * lists it in pre-order, children after their parent and siblings by
 * increasing start:
 *   - start < end <= the blob's size, inside the parent's range;
 *   - siblings do not overlap;
 *   - parent is 0 (the blob's own function) or the index + 1 of the
 *     entry just before this one or of one of that entry's ancestors;
 *   - at most JU_INLINE_DEPTH_MAX levels and JU_INLINE_MAX entries.
 * The blob needs a line table: its rows give the innermost line at each
 * offset, in the file of the innermost inline covering it.  Breaking a
 * rule is JU_EINLINE; a bad name or file JU_ENAME.  See docs/API.md,
 * "Guest frames".  Like ju_line, this type never changes. */
typedef struct ju_inline {
	uint32_t start, end;   /* [start, end): byte offsets in the blob */
	uint32_t parent;       /* index + 1 of the enclosing inline; 0: the blob itself */
	uint32_t call_line;    /* the line of the call in the parent, >= 1 */
	const char *name;      /* the guest function: UTF-8 like ju_blob.name */
	const char *file;      /* its source file; NULL: the blob's file */
	const char *call_file; /* the file of the call; NULL: the parent's file */
} ju_inline;

/* The deepest nesting of inlines, and the most a blob may have. */
#define JU_INLINE_DEPTH_MAX 32
#define JU_INLINE_MAX 65536

/* The types a blob points to or embeds (ju_range, ju_cfi_range,
 * ju_saved_reg, ju_frame, ju_line, ju_inline) never change: what a later version adds
 * to a blob's description comes as new fields at the end of ju_blob. */
typedef struct ju_blob {
	size_t sz;         /* sizeof(ju_blob) as the caller compiled it (JU_BLOB() sets it), or 0 */
	const void *start; /* first byte of the code */
	size_t size;       /* bytes of code, > 0, < 4 GiB */
	const char *name;  /* UTF-8, no control characters, 1..JU_NAME_MAX bytes */
	ju_frame frame;
	/* Optional source position: file name (UTF-8 like `name`, up to 4096
	 * bytes; JU_ENAME otherwise) and rows sorted by offset.  NULL/0 when
	 * there is none. */
	const char *file;
	const ju_line *lines;
	size_t n_lines;
	/* Optional guest functions inlined into the blob, a tree in pre-order
	 * (see ju_inline); they need a line table.  NULL/0 when there are
	 * none. */
	const ju_inline *inlines;
	size_t n_inlines;
	/* Optional personality routine and LSDA (language-specific data area)
	 * for the blob's frames, as a compiler puts them in a function's FDE:
	 * the unwinder calls the routine (_Unwind_Personality_Fn) when an
	 * exception or a forced unwind reaches a frame of the blob, and hands it
	 * `lsda` (_Unwind_GetLanguageSpecificData).  A JIT whose runtime catches
	 * its errors in its own code (LuaJIT's err_unwind_jit), or whose code
	 * has C++ handlers or cleanups, sets them; others leave them NULL.  The
	 * blob's CIE then has augmentation "zPLR" ("zPR" without an LSDA), one
	 * CIE per distinct pair, at most JU_PERSONALITY_MAX pairs a context
	 * (JU_ERANGE past it).  `lsda` without `personality` is JU_EINVAL.
	 * Both are addresses: they must stay valid while the blob is published.
	 * See docs/API.md, "Exceptions: a personality routine and an LSDA". */
	const void *personality;
	const void *lsda;
	/* New fields go here, at the end (see "Compatibility" above). */
} ju_blob;

/* The most distinct (personality, has an LSDA) pairs one context's blobs
 * may use over its life. */
#define JU_PERSONALITY_MAX 256

/* A ju_blob with `sz` set and the given fields:
 *   ju_blob b = JU_BLOB(.start = code, .size = n, .name = "f",
 *                       .frame = { .kind = JU_FRAME_LEAF }); */
#define JU_BLOB(...) ((ju_blob){ .sz = sizeof(ju_blob), __VA_ARGS__ })

/* Open a context.  `opt` may be NULL for defaults (JU_CH_DEFAULT: the
 * in-memory channels whose consumer is present; no perf map, no jitdump).  On
 * success *out is set and 0 returned. */
JU_API int ju_open(const ju_options *opt, ju_ctx **out);

/* Close a context.  Fails with JU_EBUSY, changing nothing, while blobs are
 * still published; call ju_unpublish_all() first.  NULL is accepted. */
JU_API int ju_close(ju_ctx *ctx);

/* The channels actually active in this context (JU_CH_* mask). */
JU_API uint32_t ju_channels(const ju_ctx *ctx);

/* Whether a file channel (JU_CH_PERFMAP, JU_CH_JITDUMP: one bit) was turned
 * off because its file could not be written (a full disk, an I/O error, a
 * file replaced under it): 0 if not, else the error that turned it off
 * (JU_EIO, JU_EPERM; ju_channels() no longer lists it).  *missed (may be
 * NULL) is set to the number of blobs published since then, which the
 * channel did not get; the other channels got them.  JU_EINVAL for a NULL
 * context or a value that is not one channel bit. */
JU_API int ju_channel_error(const ju_ctx *ctx, uint32_t channel, size_t *missed);

/* Publish one blob.  The code must stay mapped, unchanged, until it is
 * unpublished.  Everything the call adds becomes visible before it returns.
 * The library copies what it needs from *blob (name, frame description, line
 * table): the caller's memory may be reused as soon as the call returns. */
JU_API int ju_publish(ju_ctx *ctx, const ju_blob *blob);

/* Publish n blobs at once: all of them or, on error, none.  Far cheaper per
 * blob than n single calls.  The array's stride is sizeof(ju_blob) as this
 * header gives it (the macro below passes it); each blob's sz is 0 or that
 * size. */
JU_API int ju_publish_batch(ju_ctx *ctx, const ju_blob *blobs, size_t n);

/* How many bytes after the blob's end must stay free of other published
 * code for `perf inject --jit` to map the blob's unwind tables after it, so
 * that perf --call-graph dwarf unwinds through it (jitdump channel; the room
 * depends on the frame description, not on where the blob is).  A JIT that
 * wants that leaves the room when it allocates code.  The blob is checked as
 * ju_publish would; nothing is published.  0 or a negative JU_E* code. */
JU_API int ju_room_after(const ju_ctx *ctx, const ju_blob *blob, size_t *room);

/* Unpublish the blob that starts at `start`.  Before the call returns,
 * in-process unwinders stop using it and the images debuggers read no longer
 * name it; the range may then be reused for other code at once, and a blob
 * published there is known by its new name only.  The jitdump, a log, keeps
 * its record. */
JU_API int ju_unpublish(ju_ctx *ctx, const void *start);

/* Unpublish the n blobs that start at starts[0..n), as ju_unpublish does
 * each, all or nothing: if one is not published (JU_ENOENT) or appears twice
 * (JU_EINVAL), nothing is unpublished.  A code collection that frees many
 * blobs at once pays for each channel's update once per batch. */
JU_API int ju_unpublish_batch(ju_ctx *ctx, const void *const *starts, size_t n);

/* Unpublish every blob of the context. */
JU_API int ju_unpublish_all(ju_ctx *ctx);

/* Number of blobs currently published in the context. */
JU_API size_t ju_count(const ju_ctx *ctx);

/* Rewrite this process's perf map and jitdump files after fork(), with every
 * blob inherited from the parent.  Done automatically by a fork handler; call
 * it only if you fork with a raw clone() that skips pthread_atfork handlers.
 * A file channel whose file cannot be written in this process turns off (as
 * at ju_open; logged); see ju_channels(). */
JU_API int ju_after_fork(ju_ctx *ctx);

/* The version of the library running, JU_VERSION_NUMBER(major, minor,
 * patch); JU_VERSION is the header's.  A program may refuse a library older
 * than the header it was built with: ju_version() < JU_VERSION. */
JU_API uint32_t ju_version(void);

/* A fixed string describing an error code. */
JU_API const char *ju_strerror(int err);

/* The calling thread's message for its last failed call ("blob 3: name is
 * not valid UTF-8"), or "" if none. */
JU_API const char *ju_errmsg(void);

/* Name of a single channel bit ("unwinder", "gdb", ...), or NULL. */
JU_API const char *ju_channel_name(uint32_t channel);

/* The functions that take a ju_options or ju_blob, with the size of that
 * struct as the caller compiled it passed beside the pointer, last (as the
 * kernel's openat2() and clone3() take theirs).  Call them through the
 * macros below, by their plain names: ju_publish(ctx, &b) passes
 * sizeof(ju_blob) of this header, so a struct whose sz is 0 is read at that
 * size, and the fields past a smaller non-zero sz must be zero (JU_EINVAL
 * names one that is not).  A batch's stride is that size.  The plain
 * symbols (a call through a function pointer, `(ju_publish)(...)`, or from
 * another language) know no size but sz: there sz 0 reads the structs as
 * version 0.2 laid them out, the first with sz, and a batch of more than
 * one blob needs sz set.  A size of 0 here is the plain symbol's call. */
JU_API int ju_open_sz(const ju_options *opt, ju_ctx **out, size_t opt_sz);
JU_API int ju_publish_sz(ju_ctx *ctx, const ju_blob *blob, size_t blob_sz);
JU_API int ju_publish_batch_sz(ju_ctx *ctx, const ju_blob *blobs, size_t n, size_t blob_sz);
JU_API int ju_room_after_sz(const ju_ctx *ctx, const ju_blob *blob, size_t *room, size_t blob_sz);

/* Variadic, so that a compound literal's commas pass through:
 *   ju_publish(ctx, &(ju_blob){ .start = code, .size = n, ... }); */
#define ju_open(...) ju_open_sz(__VA_ARGS__, sizeof(ju_options))
#define ju_publish(...) ju_publish_sz(__VA_ARGS__, sizeof(ju_blob))
#define ju_publish_batch(...) ju_publish_batch_sz(__VA_ARGS__, sizeof(ju_blob))
#define ju_room_after(...) ju_room_after_sz(__VA_ARGS__, sizeof(ju_blob))

#ifdef __cplusplus
}
#endif
#endif
