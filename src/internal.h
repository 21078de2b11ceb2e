/* SPDX-License-Identifier: MIT */
/* internal.h - the library's internal model, shared by the core and channels.
 *
 * Published blobs live in *arenas*: groups of blobs whose address hulls are
 * disjoint, kept sorted by address.  Each arena owns one in-memory ELF image
 * (see image.c) holding the blobs' .eh_frame, symbols and line tables; the
 * in-process unwinders, libunwind and the GDB JIT interface all register that
 * one image (or its .eh_frame section).  Why arenas:
 *   - libgcc <= 12 walks a list of registered objects on every lookup and
 *     stops at the first object whose lowest pc is <= the pc it looks for
 *     ("we expect objects to be non-overlapping"), so objects must be few and
 *     their hulls disjoint; GCC 13's b-tree has the same disjointness rule.
 *   - gdb builds an objfile per JIT entry; few big images are far cheaper.
 * Small arenas are merged with their neighbours like a binary counter (see
 * arena.c), so there are O(log n) arenas and each blob is copied O(log n)
 * times over its life.
 *
 * Unpublishing tombstones a blob in place: the range of its FDEs becomes 0,
 * so libgcc and libunwind stop matching it at once; the arena is rebuilt
 * without dead blobs when they become a quarter of it.
 */
#ifndef JU_INTERNAL_H
#define JU_INTERNAL_H

#include "arch.h"
#include "formats/bytes.h"
#include "jitunwind.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define JU_HIDDEN __attribute__((visibility("hidden")))

/* A retired arena (image and channel states) is freed at the first change at
 * least this long after it was swapped out, or earlier, oldest first, while
 * retired images hold more than max(JU_GRAVE_MIN_BYTES, the live images):
 * in-process unwinders read an FDE after unlocking their registry, libunwind
 * reads its list with no lock, and outside readers copy images while the
 * process runs.  See arena.c (sweep) and docs/OUTSIDE_READER.md. */
#define JU_GRACE_NS 100000000ull /* 100 ms */
#define JU_GRAVE_MIN_BYTES ((size_t)32 << 20)

/* ---- errors (error.c) ---------------------------------------------------- */

/* The one place errors are made: records the thread's message and returns
 * code.  Debug builds prefix the source position. */
int ju__fail(int code, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define JU_FAIL(code, ...) ju__fail((code), __FILE__, __LINE__, __VA_ARGS__)
void ju__clear_error(void);
/* Log through the context's callback, if any. */
struct ju_ctx;
void ju__log(const struct ju_ctx *ctx, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- blobs and arenas ---------------------------------------------------- */

enum { REC_DEAD = 1u << 0 };

/* A published blob.  Offsets point into the image of the arena holding it
 * (or, while a batch is being staged, into the staging buffer). */
typedef struct blob_rec {
	uint64_t start;
	uint32_t size;
	uint32_t fde_off; /* its FDEs (CFI_ENC_ABS8), back to back */
	uint32_t fde_len;
	uint32_t name_off; /* NUL-terminated name */
	uint32_t line_off; /* its .debug_line unit, 0 if it has no lines */
	uint32_t line_len;
	/* Its compile unit, written once when it has guest frames (the unit
	 * is copied into each image as it is, but for DW_AT_stmt_list: see
	 * image.c); 0 otherwise, and the image writes the unit itself. */
	uint32_t info_off;
	uint32_t info_len;
	/* Its CIE: 0, the image's standard one; k, the CIE of ctx->cies[k - 1]
	 * (a personality routine).  Its FDE's augmentation data follows. */
	uint32_t cie;
	uint16_t name_len;
	uint16_t flags; /* REC_* */
} blob_rec;

/* A CIE beyond the standard one: a blob's personality routine, and whether
 * its FDEs carry an LSDA pointer ("zPLR"; "zPR" without). */
typedef struct cie_key {
	uint64_t personality;
	bool lsda;
} cie_key;

/* The CIEs an image's records may name (blob_rec.cie), by index + 1. */
typedef struct cie_set {
	const cie_key *keys;
	size_t n;
} cie_set;

/* Per-arena state of each arena channel. */
struct fde_reg; /* ch_unwinder.c: registered with libgcc and/or LLVM libunwind */
struct lu_reg;
struct gdb_reg;

typedef struct arena {
	uint64_t lo, hi; /* hull of all records, live and dead */
	blob_rec *recs;  /* sorted by start */
	uint32_t n, n_dead;
	uint8_t *image; /* the ELF image; see image.h for its layout */
	uint8_t **side; /* NULL, or per record: its name and line unit when
			 * its slot was reused (offsets point there) */
	size_t image_size;
	bool image_mapped; /* allocated with mmap near the code (libunwind) */
	uint32_t eh_off;   /* .eh_frame section: CIE, FDEs, 4-byte terminator */
	uint32_t eh_size;
	uint32_t symtab_off;     /* .symtab, one symbol per record after the null one */
	struct fde_reg *fde_reg; /* channel states, NULL when the channel is off */
	struct lu_reg *lu;
	struct gdb_reg *gdb;
	struct arena *grave_next; /* once retired: the next retired arena */
	uint64_t retired_ns;      /* CLOCK_MONOTONIC time it was swapped out */
} arena;

/* A blob as the file channels (perf map, jitdump) need it. */
typedef struct blob_view {
	uint64_t start, size;
	const char *name;
	size_t name_len;
	const uint8_t *fde; /* its FDEs in CFI_ENC_ABS8 */
	size_t fde_len;
	const char *file; /* NULL when there are no lines */
	const ju_line *lines;
	size_t n_lines;
	/* Per row, its file: the innermost guest frame's (ju_inline).  NULL
	 * when every row is in `file` (a blob without guest frames). */
	const char *const *row_file;
	/* Its guest frames: ranges, parents and names (files may be NULL). */
	const ju_inline *inlines;
	size_t n_inlines;
} blob_view;

/* A file channel's sink for blob views: its log_blobs, or a collector. */
typedef int ju_log_fn(struct ju_ctx *ctx, const blob_view *v, size_t n);

/* What the channels read of a context's live blobs.  arena.c drives
 * the channels through the channel table, so they do not call it back by
 * name: ju_open hands each context arena.c's table (ctx->live). */
typedef struct ju_live_ops {
	/* Hand every live blob, in address order and a chunk at a time, to
	 * `log` (a forked child's new perf map or jitdump, a compacted map). */
	int (*relog)(struct ju_ctx *ctx, ju_log_fn *log);
	/* The start of the first live blob at or after addr, or UINT64_MAX.
	 * (Other contexts' blobs are not known here.) */
	uint64_t (*next_live)(const struct ju_ctx *ctx, uint64_t addr);
	/* The live blob that starts at `start` and its arena (arena_find): a
	 * channel building a new arena's state looks there for what an arena
	 * it replaces already has. */
	blob_rec *(*find)(struct ju_ctx *ctx, uint64_t start, arena **where);
} ju_live_ops;

/* A publish that reuses freed slots in place (arena.c, "Reusing FDE
 * slots" in docs/ARCHITECTURE.md): each new blob takes the tombstoned record
 * k of a committed arena. */
typedef struct reuse_item {
	arena *a;
	uint32_t k;
	const blob_rec *rec; /* the new blob, staged */
	uint8_t *side;       /* its name and line unit, for a->side[k] */
} reuse_item;

typedef struct reuse_set {
	reuse_item *it; /* in address order */
	size_t n;
	const uint8_t *stage; /* what the staged records' offsets point into */
	void *gdb;            /* the gdb channel's prepared images */
} reuse_set;

/* ---- channels ------------------------------------------------------------ */

typedef struct ju_channel_ops {
	uint32_t bit;
	const char *name;
	/* Find the consumer and set up; JU_ENOCONSUMER if it is absent. */
	int (*open)(struct ju_ctx *ctx);
	void (*close)(struct ju_ctx *ctx);
	/* Arena channels.  prepare allocates the arena's state (may fail);
	 * discard frees a state never swapped in, or one swapped out, when
	 * arena.c frees the retired arena after its grace period (unwinders may
	 * read it just after it was unregistered; the libunwind channel keeps
	 * replaced entries registered until then, and unregisters them here).
	 * swap registers `add` and unregisters `del` as one step that cannot
	 * fail; the channel picks the order its consumer needs (libgcc: add
	 * first, so every published pc stays findable). */
	int (*arena_prepare)(struct ju_ctx *ctx, arena *a);
	void (*arena_discard)(struct ju_ctx *ctx, arena *a);
	void (*arena_swap)(struct ju_ctx *ctx, arena *const *add, size_t n_add, arena *const *del,
			   size_t n_del);
	/* Records ks[0..n) of a committed arena were tombstoned.  Cannot fail
	 * (a channel that cannot keep up says less, never something stale). */
	void (*blobs_dead)(struct ju_ctx *ctx, arena *a, const uint32_t *ks, size_t n);
	/* Slot reuse: reuse_prepare allocates what the commit needs (may
	 * fail); reuse_commit runs twice, phase 0 before the slots are
	 * rewritten and phase 1 after, and cannot fail; reuse_abort frees what
	 * prepare made when the publish does not go ahead. */
	int (*reuse_prepare)(struct ju_ctx *ctx, reuse_set *rs);
	void (*reuse_commit)(struct ju_ctx *ctx, reuse_set *rs, int phase);
	void (*reuse_abort)(struct ju_ctx *ctx, reuse_set *rs);
	/* File channels: append records for n new blobs; on failure leave the
	 * file as it was and return an error. */
	int (*log_blobs)(struct ju_ctx *ctx, const blob_view *v, size_t n);
	/* Take back what this context's last successful log_blobs appended (a
	 * file channel after it failed).  Called with core.c's file lock held
	 * since that log_blobs, so no other context wrote in between. */
	void (*unlog_last)(struct ju_ctx *ctx);
	/* File channels: n blobs were unpublished and the arena set no longer
	 * holds them (ctx->live->relog sees the live set).  Housekeeping that cannot
	 * fail the unpublish (a perf map compacts itself here).  `all`: by
	 * ju_unpublish_all, the way a program ends. */
	void (*blobs_gone)(struct ju_ctx *ctx, size_t n, bool all);
	/* The same, for a channel that needs to know which blobs went: their
	 * starts, sorted (NULL with `all`).  Called instead of blobs_gone. */
	void (*blobs_gone_at)(struct ju_ctx *ctx, const uint64_t *starts, size_t n, bool all);
	/* In a forked child: start this process's own files. */
	int (*after_fork)(struct ju_ctx *ctx);
	/* Bytes after the blob's end that its consumer needs free of other
	 * published code (ju_room_after); NULL when it needs none.  A property
	 * of the consumer, so asked whether the channel is on or not. */
	int (*room_after)(const struct ju_ctx *ctx, const blob_view *v, uint64_t *room);
} ju_channel_ops;

extern const ju_channel_ops ju_ch_unwinder;  /* ch_unwinder.c: libgcc, LLVM libunwind */
extern const ju_channel_ops ju_ch_libunwind; /* ch_libunwind.c: nongnu libunwind */
extern const ju_channel_ops ju_ch_gdb;       /* ch_gdb.c: GDB JIT interface */
extern const ju_channel_ops ju_ch_perfmap;   /* ch_perfmap.c */
extern const ju_channel_ops ju_ch_jitdump;   /* ch_jitdump.c */

/* ---- the context --------------------------------------------------------- */

struct ju_ctx {
	pthread_mutex_t lock;
	const ju_arch *arch;
	uint32_t channels; /* active JU_CH_* */
	ju_options opt;
	char *jitdump_dir; /* owned copy of opt.jitdump_dir */
	arena **arenas;    /* sorted by lo, hulls disjoint */
	size_t n_arenas, cap_arenas;
	arena *grave_head, *grave_tail; /* retired arenas, oldest first (arena.c) */
	size_t grave_bytes;             /* their images' bytes */
	size_t n_live;                  /* published blobs */
	bool no_reuse;                  /* NOREUSE was set at open: no blob takes a freed slot */
	struct cfi_memo *cfi_memo;      /* raw CFI lists checked (cfi.h); made at the first */
	pid_t pid;                      /* process the files belong to */
	struct ju_ctx *next;            /* all contexts, for fork handling */
	struct ju_ctx *cross_next;      /* all contexts, for overlap checks (core.c) */
	/* channel private state */
	struct fde_reg_state *fde_reg;
	struct lu_state *lu;
	struct pm_state *pm;
	struct jd_state *jd;
	struct gdb_state *gdb;   /* images replaced one chunk at a time (ch_gdb.c) */
	bool near_code_images;   /* allocate images within 2 GiB of code (libunwind) */
	const ju_live_ops *live; /* the live blobs, for the channels */
	/* The personality CIEs its blobs have used (blob_rec.cie), in the
	 * order first used; never shrinks (JU_PERSONALITY_MAX at most). */
	cie_key *cies;
	size_t n_cies;
	/* File channels turned off by a failed write (core.c, log_files), by
	 * channel index: the error, and the blobs published since that the
	 * channel did not get (ju_channel_error). */
	int file_err[8];
	size_t file_missed[8];
};

/* ---- arena operations (arena.c) ------------------------------------------ */

/* Publishing is two steps so the file channels can write in between:
 * arena_prepare_publish plans the new arena set for staged records (sorted by
 * start, offsets into `stage`), builds the images and prepares channel state
 * (all fallible, nothing visible); then arena_commit_publish swaps them in
 * (cannot fail) or arena_abort_publish drops them. */
struct arena_plan;
int arena_prepare_publish(struct ju_ctx *ctx, const blob_rec *recs, size_t n, const uint8_t *stage,
			  struct arena_plan **plan);
void arena_commit_publish(struct ju_ctx *ctx, struct arena_plan *plan);
void arena_abort_publish(struct ju_ctx *ctx, struct arena_plan *plan);
/* Find the live record starting exactly at `start`. */
blob_rec *arena_find(struct ju_ctx *ctx, uint64_t start, arena **where);
/* Check [start, end) against live records; true if it overlaps one. */
bool arena_overlaps(struct ju_ctx *ctx, uint64_t start, uint64_t end);
/* Unpublish the live blobs starting at starts[0..n) (distinct, all live:
 * the caller checked); cannot fail. */
void arena_unpublish(struct ju_ctx *ctx, const uint64_t *starts, size_t n);
/* Retire every arena. */
void arena_retire_all(struct ju_ctx *ctx);
/* Free every retired arena now, grace period or not (ju_close). */
void arena_reclaim_all(struct ju_ctx *ctx);
/* The live blobs as the file channels read them (ju_live_ops). */
extern const ju_live_ops arena_live;

/* ---- signals (signals.c) --------------------------------------------------- */

/* Block the asynchronous signals of the calling thread around a consumer's
 * registry call (a handler that unwinds would take the lock it holds). */
void ju__signals_block(sigset_t *old);
void ju__signals_restore(const sigset_t *old);

/* ---- memory and fault injection (fault.c) -------------------------------- */

/* abi.c: a caller's struct, of the size it was compiled with, as one of
 * this version (the size rule); 0 or JU_FAIL's code.  caller_sz is the
 * sizeof the caller's header gave the struct (what jitunwind.h's macros
 * pass), 0 when the call came through a plain symbol. */
int ju__options_in(const ju_options *user, size_t caller_sz, ju_options *out);
int ju__blob_in(const ju_blob *user, size_t caller_sz, size_t i, ju_blob *out);
/* An array whose stride is caller_sz (or, without it, blobs[0].sz), as
 * this version's blobs: *out is blobs itself or *owned, which the caller
 * frees. */
int ju__blobs_in(const ju_blob *blobs, size_t caller_sz, size_t n, const ju_blob **out, ju_blob **owned);

void *ju__malloc(size_t n);
void *ju__calloc(size_t n, size_t size);
void *ju__realloc(void *p, size_t n);
char *ju__strdup(const char *s);
/* Every allocation and file write asks here first; tests set a countdown so
 * the n-th one fails (SQLite-style fault injection). */
bool ju__fault(void);

#endif
