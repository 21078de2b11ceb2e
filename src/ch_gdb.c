/* SPDX-License-Identifier: MIT */
/* ch_gdb.c - channel for the GDB JIT interface (gdb, lldb, and outside
 * readers such as jitstack).  Each arena's ELF image is one jit_code_entry on
 * the list of __jit_debug_descriptor; __jit_debug_register_code is the
 * function debuggers break on to hear about changes (GDB manual, "JIT
 * Compilation Interface").  Layout and the outside-reader extension are in
 * formats/gdbjit.h; the reading protocol in docs/OUTSIDE_READER.md.
 *
 * One descriptor per process.  Ours has default visibility, so if the host
 * program (or a library loaded before us, e.g. LLVM's) defines one too, the
 * dynamic linker binds every reference to the first definition and all JITs
 * share it.  We therefore reach it through the interposable symbol, and tell
 * whose it is by comparing with a hidden alias of our own definition:
 *   own      ours: standard fields plus the extension.
 *   shared   a jitunwind descriptor defined elsewhere (same magic, layout
 *            and symbol size): another copy of the library, or the copy a
 *            program's copy relocation made of ours when it refers to the
 *            descriptor directly.  Used like our own; the sequence lock
 *            doubles as the writers' lock between copies.
 *   foreign  anyone else's (LLVM): standard fields only; nothing is written
 *            past them.  The owner's own writes cannot be serialised with
 *            ours -- a limit of the interface that every JIT shares.
 *
 * Images are per chunk: the records of an arena are cut into chunks of
 * CHUNK consecutive records, each registered as an ELF image of its own
 * (built from the arena's records, FDEs, symbols and lines copied), so that
 * when a blob dies or a freed slot takes a new one, only its chunk's image
 * is built again and swapped: gdb and lldb copy an image when it is
 * registered and keep what they copied, so an image that still held a dead
 * blob would name freed code after it.  Images never change once
 * registered.  A swap unlinks the entries of retired arenas; arena.c keeps a
 * retired arena for its grace period (JU_GRACE_NS, internal.h) and then
 * calls our arena_discard, which first tells outside readers (reclaim_seq)
 * and then frees the chunks.  A chunk replaced on its own waits in the
 * context's grave here, by the same rules (docs/OUTSIDE_READER.md).
 *
 * An image's code range, from its first blob's start to its last blob's
 * end, is what debuggers and outside readers take as its extent, and what
 * they check against the process's other mappings: a range that crosses a
 * shared library makes jitstack refuse the image, and gdb may give the
 * library's addresses to it.  Blobs that lie far apart (a JIT mapping each
 * piece of code on its own, as CPython does its cold exits) share an arena
 * and a chunk all the same, so a chunk is cut into runs, one image each:
 * a run ends where a whole page lies between one blob's end and the next
 * one's start.  Mappings are made of whole pages, so no other mapping, now
 * or later, can lie inside a run's range: every page of it holds a byte of
 * one of its blobs.  JITs that pack their code (the common case) keep one
 * image per chunk.
 *
 * When arenas are merged or split, a run whose blobs all come through keeps
 * its entry and image: the new arena adopts it (adoptable_run) rather than
 * building the same bytes again, and debuggers hear only of what changed.
 */
#include "formats/clock.h"
#include "formats/elfhdr.h"
#include "formats/gdbjit.h"
#include "image.h"
#include "internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* ---- the process-wide symbols --------------------------------------------- */

/* The storage is ours and hidden; the interface's names are weak aliases of
 * default visibility, so that a program linking the static library beside
 * another JIT that defines the interface (LLVM ORC, CPython 3.15) links, and
 * one definition wins; which one is told at open (detect_mode).  (The other
 * way round -- a weak definition with a hidden alias -- makes clang's
 * AddressSanitizer report the two names as an ODR violation.) */
__attribute__((visibility("hidden"), used)) gdbjit_descriptor ju__gdb_own_descriptor = {
	.version = GDBJIT_VERSION,
	.action_flag = GDBJIT_NOACTION,
	.magic = { 'J', 'I', 'T', 'U', 'N', 'W', 'N', 'D' },
	.ext_version = GDBJIT_EXT_VERSION,
	.sizeof_descriptor = sizeof(gdbjit_descriptor),
	.sizeof_entry = sizeof(gdbjit_entry),
	.grace_ns = JU_GRACE_NS,
};
_Static_assert(sizeof GDBJIT_EXT_MAGIC - 1 == GDBJIT_EXT_MAGIC_LEN, "magic length");

extern gdbjit_descriptor __jit_debug_descriptor
	__attribute__((weak, alias("ju__gdb_own_descriptor"), visibility("default")));

/* Debuggers put a breakpoint here; the asm keeps the compiler from deciding
 * the call does nothing. */
__attribute__((visibility("default"), used, weak, noinline)) void __jit_debug_register_code(void)
{
	__asm__ volatile("" ::: "memory");
}

/* ---- channel state ---------------------------------------------------------- */

enum desc_mode { DESC_OWN, DESC_SHARED, DESC_FOREIGN };

/* Process-wide, like the descriptor.  gdb_lock serialises this copy's
 * writers (a fork handler below keeps fork() from copying it held). */
static pthread_mutex_t gdb_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t slab_lock = PTHREAD_MUTEX_INITIALIZER; /* where chunks live, below */
static unsigned long n_open;                                  /* contexts with the channel on (atomic) */
static int mode;                                              /* enum desc_mode (atomic) */
static bool told_foreign_writer; /* logged that another JIT writes our list (gdb_lock) */

/* On a foreign descriptor our entries hang behind an anchor of our own, the
 * last entry of the list (see link_anchor).  Its image is an ELF header and a
 * section-name table: debuggers load it as an empty object. */
static gdbjit_entry anchor;
static struct {
	Elf64_Ehdr ehdr;
	Elf64_Shdr shdr[2]; /* null, .shstrtab */
	char shstrtab[16];
} anchor_image;
static int anchored; /* 0 not tried, 1 linked, -1 failed (gdb_lock) */

/* gdb_lock is taken in gdb_open, outside any context lock: fork() must not
 * copy it held. */
static void gdb_fork_prepare(void)
{
	pthread_mutex_lock(&gdb_lock);
	pthread_mutex_lock(&slab_lock);
}
static void gdb_fork_release(void)
{
	pthread_mutex_unlock(&slab_lock);
	pthread_mutex_unlock(&gdb_lock);
}

__attribute__((constructor)) static void gdb_init(void)
{
	pthread_atfork(gdb_fork_prepare, gdb_fork_release, gdb_fork_release);
}

/* The descriptor every JIT of the process uses: a reference through the
 * interposable name (-fPIC, default visibility: GOT). */
static gdbjit_descriptor *desc(void)
{
	return &__jit_debug_descriptor;
}

static enum desc_mode detect_mode(const gdbjit_descriptor *d)
{
	if (d == &ju__gdb_own_descriptor)
		return DESC_OWN;
	/* Read past the standard fields only if the symbol says they exist. */
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	if (!dladdr1(d, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    sym->st_size < sizeof(gdbjit_descriptor))
		return DESC_FOREIGN;
	if (memcmp(d->magic, GDBJIT_EXT_MAGIC, GDBJIT_EXT_MAGIC_LEN) ||
	    d->ext_version != GDBJIT_EXT_VERSION || d->sizeof_descriptor < sizeof(gdbjit_descriptor) ||
	    d->sizeof_entry != sizeof(gdbjit_entry))
		return DESC_FOREIGN;
	return DESC_SHARED;
}

/* ---- the sequence lock ---------------------------------------------------- */

/* Make seq odd; returns the even value the change will end with.  A
 * compare-and-swap rather than a store: another copy of the library sharing
 * the descriptor may be writing (our own writers hold gdb_lock). */
static uint64_t write_begin(gdbjit_descriptor *d)
{
	uint64_t s;
	for (;;) {
		s = __atomic_load_n(&d->seq, __ATOMIC_RELAXED);
		if (!(s & 1) && __atomic_compare_exchange_n(&d->seq, &s, s + 1, false, __ATOMIC_ACQUIRE,
							    __ATOMIC_RELAXED))
			break;
		sched_yield();
	}
	/* Readers that see any store of the change must see seq odd. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return s + 2;
}

static void write_end(gdbjit_descriptor *d, uint64_t end)
{
	__atomic_store_n(&d->seq, end, __ATOMIC_RELEASE);
}

/* Say that entries unlinked by changes up to `seq` are about to be freed.
 * A maximum: another copy of the library may have said more already. */
static void publish_reclaim(gdbjit_descriptor *d, uint64_t seq)
{
	uint64_t cur = __atomic_load_n(&d->reclaim_seq, __ATOMIC_RELAXED);
	while (cur < seq && !__atomic_compare_exchange_n(&d->reclaim_seq, &cur, seq, false, __ATOMIC_RELAXED,
							 __ATOMIC_RELAXED))
		;
	/* The store must be visible before the memory can be reused. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* ---- the list (GDB manual; the order of stores is LLVM's
 * GDBRegistrationListener) ------------------------------------------------------ */

static gdbjit_entry *entry_at(uint64_t p)
{
	return (gdbjit_entry *)(uintptr_t)p;
}

static void store_ptr(uint64_t *field, const void *p)
{
	__atomic_store_n(field, (uint64_t)(uintptr_t)p, __ATOMIC_RELAXED);
}

static void link_entry(gdbjit_descriptor *d, gdbjit_entry *e)
{
	uint64_t first = __atomic_load_n(&d->first_entry, __ATOMIC_RELAXED);
	e->prev_entry = 0;
	e->next_entry = first;
	if (first)
		store_ptr(&entry_at(first)->prev_entry, e);
	/* Release: a reader that finds e sees its fields. */
	__atomic_store_n(&d->first_entry, (uint64_t)(uintptr_t)e, __ATOMIC_RELEASE);
}

/* e's own links stay as they were: a reader standing on it can walk on. */
static void unlink_entry(gdbjit_descriptor *d, gdbjit_entry *e)
{
	uint64_t prev = e->prev_entry, next = e->next_entry;
	if (next)
		__atomic_store_n(&entry_at(next)->prev_entry, prev, __ATOMIC_RELAXED);
	if (prev)
		__atomic_store_n(&entry_at(prev)->next_entry, next, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&d->first_entry, next, __ATOMIC_RELEASE);
}

/* ---- beside a foreign writer ------------------------------------------------

 * The owner of a foreign descriptor (LLVM ORC's GDBRegistrationListener and
 * the like) serialises its writers with a lock nobody else can take, links
 * at the head with plain stores, unlinks by splicing its entries' neighbours
 * and frees an entry as soon as it is unlinked.  Two writers under two locks
 * corrupt a list where their stores meet: the owner's store of first_entry
 * drops an entry we linked at the head a moment before, and splices of
 * neighbouring entries by both lose one.  But the owner only ever inserts at
 * the head and writes nothing but its own entries and their neighbours' links.
 * So every entry of ours hangs behind one anchor entry of our own, linked
 * once, at the tail of the list, when the channel first opens on the
 * descriptor: the owner may then write the anchor's prev_entry (which we
 * never read) and nothing after it, and we write only the anchor's
 * next_entry and our own entries, never first_entry or the owner's entries.
 *
 * Linking the anchor walks the owner's list without its lock, once.  The walk
 * reads through process_vm_readv, so an entry freed under it fails the read
 * instead of crashing; the walk is then retried.  The link itself can still
 * meet an owner's change at that instant (then the anchor, and our entries
 * with it, are off the list): a limit of an interface that has no lock. */

static bool read_self(void *dst, uint64_t src, size_t n)
{
	struct iovec local = { dst, n }, remote = { (void *)(uintptr_t)src, n };
	ssize_t got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (got == (ssize_t)n)
		return true;
	if (got < 0 && (errno == ENOSYS || errno == EPERM)) {
		memcpy(dst, (const void *)(uintptr_t)src, n); /* all the system allows */
		return true;
	}
	return false;
}

/* The last entry of the list (0 when it is empty); false if the walk met an
 * unreadable entry or did not end. */
static bool find_tail(const gdbjit_descriptor *d, uint64_t *tail)
{
	uint64_t p = __atomic_load_n(&d->first_entry, __ATOMIC_ACQUIRE);
	*tail = 0;
	for (size_t n = 0; p; n++) {
		uint64_t next;
		if (n > (1u << 22) || !read_self(&next, p + offsetof(gdbjit_entry, next_entry), sizeof next))
			return false;
		*tail = p;
		p = next;
	}
	return true;
}

static void notify(gdbjit_descriptor *d, gdbjit_entry *e, uint32_t action);

/* With gdb_lock held.  False if no stable tail could be found: our entries
 * then go at the head, as without an anchor. */
static bool link_anchor(gdbjit_descriptor *d, uint16_t machine)
{
	byte_buf b;
	buf_init(&b, &anchor_image.ehdr, sizeof anchor_image.ehdr);
	elf_write_ehdr(&b, &(elf_ehdr_desc){ .type = ET_REL,
					     .machine = machine,
					     .shoff = offsetof(__typeof__(anchor_image), shdr),
					     .shnum = 2,
					     .shstrndx = 1 });
	memcpy(anchor_image.shstrtab, "\0.shstrtab", sizeof "\0.shstrtab");
	anchor_image.shdr[1] = (Elf64_Shdr){ .sh_name = 1,
					     .sh_type = SHT_STRTAB,
					     .sh_offset = offsetof(__typeof__(anchor_image), shstrtab),
					     .sh_size = sizeof "\0.shstrtab",
					     .sh_addralign = 1 };
	anchor = (gdbjit_entry){ .symfile_addr = (uint64_t)(uintptr_t)&anchor_image,
				 .symfile_size = sizeof anchor_image };
	for (int tries = 0; tries < 100; tries++) {
		uint64_t tail;
		if (!find_tail(d, &tail))
			continue;
		anchor.prev_entry = tail;
		if (tail) {
			uint64_t none = 0;
			if (!__atomic_compare_exchange_n(&entry_at(tail)->next_entry, &none,
							 (uint64_t)(uintptr_t)&anchor, false,
							 __ATOMIC_RELEASE, __ATOMIC_RELAXED))
				continue;
		} else {
			uint64_t none = 0;
			if (!__atomic_compare_exchange_n(&d->first_entry, &none, (uint64_t)(uintptr_t)&anchor,
							 false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
				continue;
		}
		notify(d, &anchor, GDBJIT_REGISTER_FN);
		return true;
	}
	return false;
}

static void link_behind_anchor(gdbjit_entry *e)
{
	uint64_t next = anchor.next_entry;
	e->prev_entry = (uint64_t)(uintptr_t)&anchor;
	e->next_entry = next;
	if (next)
		store_ptr(&entry_at(next)->prev_entry, e);
	__atomic_store_n(&anchor.next_entry, (uint64_t)(uintptr_t)e, __ATOMIC_RELEASE);
}

/* Entries on the list, at most max + 1: more than the descriptor's count says
 * means someone writes the list without taking its sequence lock. */
static uint64_t list_length(const gdbjit_descriptor *d, uint64_t max)
{
	uint64_t n = 0;
	for (uint64_t p = __atomic_load_n(&d->first_entry, __ATOMIC_ACQUIRE); p && n <= max; n++)
		p = __atomic_load_n(&entry_at(p)->next_entry, __ATOMIC_ACQUIRE);
	return n;
}

/* Tell an attached debugger: it stops on the call and reads relevant_entry. */
static void notify(gdbjit_descriptor *d, gdbjit_entry *e, uint32_t action)
{
	store_ptr(&d->relevant_entry, e);
	__atomic_store_n(&d->action_flag, action, __ATOMIC_RELAXED);
	/* Through the interposable name: gdb reads the descriptor of the object
	 * that defines the function it stopped in. */
	__jit_debug_register_code();
}

/* ---- chunks ------------------------------------------------------------------ */

/* Records per image: small enough that building one again is a few
 * microseconds, large enough that a million blobs make a few thousand
 * images for a debugger to load. */
enum { CHUNK = 64 };

struct gdb_chunk {
	gdbjit_entry entry;  /* what the descriptor's list links */
	uint64_t unlink_seq; /* descriptor seq after the unlinking change; 0: linked or never */
	uint8_t *image;
	size_t size;
	struct gdb_chunk *run_next; /* the chunk's next run, its own image (see above) */
	struct gdb_chunk *grave_next;
	uint64_t retired_ns;
	struct chunk_slab *slab; /* where it lives (chunk_alloc) */
	uint32_t n_recs;         /* blobs in the run's image */
	/* A run that a new arena, not yet swapped in, takes over from the arena
	 * it replaces (adoptable_run): 1 while it is also on the new arena's
	 * list, where adopt_next, not run_next, leads on; 2 once the swap took
	 * it off its old chunk's list. */
	uint8_t adopting;
	struct gdb_chunk *adopt_next;
};
_Static_assert(offsetof(struct gdb_chunk, entry) == 0, "the entry starts the block");

/* ---- where chunks live ------------------------------------------------------
 *
 * A reader outside the process walks the list one entry at a time, reading
 * the target's memory a run of pages at a time (jitstack does).  Chunks
 * allocated one by one lie each beside its own image, kilobytes apart, and
 * the walk of a million blobs' 15,625 entries then copies most of the heap.
 * So chunks are carved from slabs of 64 KiB, about 580 to a slab, each
 * aligned to its size, and the walk reads a run per slab.  A slot freed goes back to its slab; a slab
 * left empty is freed unless it is the only one with room.  slab_lock is
 * taken inside gdb_lock, never around it. */
enum { SLAB_BYTES = 65536 };

struct chunk_slab {
	struct chunk_slab *prev, *next; /* the slabs with a free slot */
	struct gdb_chunk *free;         /* freed slots, linked through entry.next_entry */
	uint32_t used, carved;
	struct gdb_chunk slot[];
};

#define SLAB_SLOTS ((SLAB_BYTES - sizeof(struct chunk_slab)) / sizeof(struct gdb_chunk))

static struct chunk_slab *open_slabs; /* slab_lock */

/* Under AddressSanitizer a free slot is poisoned but for its link (the
 * first word), so a use after free of a chunk is still caught. */
#if defined(__SANITIZE_ADDRESS__)
#define SLAB_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLAB_ASAN 1
#endif
#endif
#ifdef SLAB_ASAN
#include <sanitizer/asan_interface.h>
#define SLOT_DEAD(g) ASAN_POISON_MEMORY_REGION((char *)(g) + sizeof(void *), sizeof *(g) - sizeof(void *))
#define SLOT_LIVE(g) ASAN_UNPOISON_MEMORY_REGION((g), sizeof *(g))
#else
#define SLOT_DEAD(g) ((void)(g))
#define SLOT_LIVE(g) ((void)(g))
#endif

static void slab_unlink(struct chunk_slab *s)
{
	*(s->prev ? &s->prev->next : &open_slabs) = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
}

static void slab_push(struct chunk_slab *s)
{
	s->prev = NULL;
	s->next = open_slabs;
	if (open_slabs)
		open_slabs->prev = s;
	open_slabs = s;
}

/* A zeroed chunk, or NULL without memory. */
static struct gdb_chunk *chunk_alloc(void)
{
	pthread_mutex_lock(&slab_lock);
	struct chunk_slab *s = open_slabs;
	if (!s) {
		/* aligned, so that a reader's aligned run of pages holds one slab */
		s = ju__fault() ? NULL : aligned_alloc(SLAB_BYTES, SLAB_BYTES);
		if (!s) {
			pthread_mutex_unlock(&slab_lock);
			return NULL;
		}
		*s = (struct chunk_slab){ 0 };
		slab_push(s);
	}
	struct gdb_chunk *g = s->free;
	if (g) {
		SLOT_LIVE(g);
		s->free = (struct gdb_chunk *)(uintptr_t)g->entry.next_entry;
	} else {
		g = &s->slot[s->carved++];
	}
	if (++s->used == SLAB_SLOTS)
		slab_unlink(s);
	pthread_mutex_unlock(&slab_lock);
	*g = (struct gdb_chunk){ .slab = s };
	return g;
}

static void chunk_release(struct gdb_chunk *g)
{
	struct chunk_slab *s = g->slab;
	pthread_mutex_lock(&slab_lock);
	if (s->used-- == SLAB_SLOTS)
		slab_push(s);
	if (!s->used && (s->prev || s->next)) {
		slab_unlink(s);
		free(s);
	} else {
		g->entry.next_entry = (uint64_t)(uintptr_t)s->free;
		s->free = g;
		SLOT_DEAD(g);
	}
	pthread_mutex_unlock(&slab_lock);
}

/* Per arena: its chunks; NULL where a chunk has no live blob, or where its
 * image could not be built (no memory: its blobs go unnamed, never
 * misnamed, until it changes again). */
struct gdb_reg {
	uint32_t n_chunks;
	struct gdb_chunk *chunk[];
};

/* Per context: chunks replaced on their own, oldest first. */
struct gdb_state {
	struct gdb_chunk *grave_head, *grave_tail;
	size_t grave_bytes;
	bool told_no_memory;
};

static size_t n_chunks_of(const arena *a)
{
	return ((size_t)a->n + CHUNK - 1) / CHUNK;
}

/* Free a chunk that is not on the list, with its runs; tell outside readers
 * first if it was.  With gdb_lock held, or on a chunk never linked.  Runs a
 * new arena was to adopt stay with their arena. */
static void free_chunk(struct gdb_chunk *g)
{
	while (g) {
		struct gdb_chunk *next = g->adopting ? g->adopt_next : g->run_next;
		if (g->adopting) { /* its old arena's still */
			g->adopting = 0;
			g = next;
			continue;
		}
		if (g->unlink_seq && __atomic_load_n(&mode, __ATOMIC_RELAXED) != DESC_FOREIGN)
			publish_reclaim(desc(), g->unlink_seq);
		free(g->image);
		chunk_release(g);
		g = next;
	}
}

/* The smallest unit of a mapping: a whole page between two blobs may be
 * someone else's.  4 KiB when the system does not say. */
static uint64_t page_size(void)
{
	static uint64_t page;
	uint64_t p = __atomic_load_n(&page, __ATOMIC_RELAXED);
	if (!p) {
		long v = sysconf(_SC_PAGESIZE);
		p = v > 0 && !((uint64_t)v & ((uint64_t)v - 1)) ? (uint64_t)v : 4096;
		__atomic_store_n(&page, p, __ATOMIC_RELAXED);
	}
	return p;
}

/* Does a whole page lie between the end of one blob and the start of the
 * next (in address order)? */
static bool page_between(const blob_rec *prev, const blob_rec *next)
{
	uint64_t mask = page_size() - 1;
	uint64_t end = prev->start + prev->size;
	uint64_t after_prev = end > UINT64_MAX - mask ? UINT64_MAX : (end + mask) & ~mask;
	return (next->start & ~mask) > after_prev;
}

/* The image of one run src[0..n) (in address order), as one entry. */
static int build_run(const struct ju_ctx *ctx, const src_rec *src, size_t n, struct gdb_chunk **out)
{
	struct gdb_chunk *g = chunk_alloc();
	if (!g)
		return JU_FAIL(JU_ENOMEM, "out of memory for a gdb entry");
	int err = image_build_bytes(ctx->arch, &(cie_set){ ctx->cies, ctx->n_cies }, src, n, &g->image,
				    &g->size);
	if (err) {
		chunk_release(g);
		return err;
	}
	uint64_t hi = 0;
	for (size_t i = 0; i < n; i++)
		if (src[i].rec->start + src[i].rec->size > hi)
			hi = src[i].rec->start + src[i].rec->size;
	g->entry.symfile_addr = (uint64_t)(uintptr_t)g->image;
	g->entry.symfile_size = g->size;
	g->entry.code_lo = src[0].rec->start;
	g->entry.code_hi = hi;
	g->n_recs = (uint32_t)n;
	*out = g;
	return 0;
}

/* Where the last run adopted ended: the next run usually comes from the same
 * arena, from there on. */
typedef struct adopt_cursor {
	arena *a;
	size_t k;
	struct gdb_chunk *run; /* the run adopted last, in a */
} adopt_cursor;

/* The run of a committed arena whose image holds exactly the blobs of
 * src[0..n) (a run of an arena being built from it), or NULL.
 *
 * An image is a function of its blobs alone (their records, FDEs, names and
 * lines; the CIEs they name, which keep their order): the same blobs give
 * the same bytes, but for .eh_frame's sh_addr, the image's own address, so
 * the old image serves as it is, at its address.  Arenas are rebuilt by
 * merges (binary-counter merging rebuilds each blob about log2(n) times)
 * and splits, so most runs of a JIT whose code lies apart (CPython's cold
 * exits and traces, each its own mmap: a run each) come through unchanged,
 * and building their images again was most of a publish.  gdb and lldb are
 * told nothing about a run that stays.
 *
 * The run found starts at src[0], ends where src[n - 1] ends and was built
 * from n blobs, which were the live ones of its chunk in that range; the
 * blobs of src are n live records of the same arena in that chunk and
 * range.  Records only die (a reused slot rebuilds its chunk), so those
 * are the same n blobs. */
static struct gdb_chunk *adoptable_run(struct ju_ctx *ctx, adopt_cursor *cur, const src_rec *src, size_t n,
				       uint64_t hi)
{
	arena *a = cur->a;
	size_t k = cur->k;
	while (a && k < a->n && (a->recs[k].flags & REC_DEAD))
		k++;
	if (!a || k == a->n || a->recs[k].start != src[0].rec->start) {
		const blob_rec *first = ctx->live->find(ctx, src[0].rec->start, &a);
		if (!first)
			return NULL;
		k = (size_t)(first - a->recs);
	}
	const blob_rec *first = &a->recs[k];
	size_t c = k / CHUNK;
	if (!a->gdb)
		return NULL;
	if (c >= a->gdb->n_chunks)
		return NULL;
	struct gdb_chunk *g = cur->a == a && cur->run ? cur->run->run_next : NULL;
	if (!g || g->entry.code_lo != first->start) /* not the run after the last one */
		for (g = a->gdb->chunk[c]; g && g->entry.code_lo != first->start;)
			g = g->run_next;
	if (!g || g->adopting || g->entry.code_hi != hi || g->n_recs != n)
		return NULL;
	size_t end = (c + 1) * CHUNK < a->n ? (c + 1) * CHUNK : a->n, j = 0;
	for (; k < end && j < n; k++) {
		const blob_rec *r = &a->recs[k];
		if (r->flags & REC_DEAD)
			continue;
		if (r->start != src[j].rec->start || r->size != src[j].rec->size)
			return NULL;
		j++;
	}
	if (j < n)
		return NULL;
	*cur = (adopt_cursor){ a, k, g };
	return g;
}

/* The image of chunk c of a, with the live records and, in place of freed
 * ones, the reuse items it[0..n_it) (increasing k, all in this chunk): one
 * image per run of it (see the top of this file), linked by run_next.  With
 * `adopt` (a new arena, swapped in by gdb_swap), a run that an arena it
 * replaces has already is put on the list instead (adoptable_run), linked
 * through adopt_next until the swap. */
static int build_chunk(struct ju_ctx *ctx, const arena *a, size_t c, const reuse_item *it, size_t n_it,
		       const uint8_t *stage, adopt_cursor *adopt, struct gdb_chunk **out)
{
	*out = NULL;
	size_t k0 = c * CHUNK, k1 = k0 + CHUNK < a->n ? k0 + CHUNK : a->n;
	src_rec src[CHUNK];
	size_t n = 0, j = 0;
	for (size_t k = k0; k < k1; k++) {
		if (j < n_it && it[j].k == k)
			src[n++] = (src_rec){ it[j++].rec, stage, NULL };
		else if (!(a->recs[k].flags & REC_DEAD))
			image_src(a, k, &src[n++]);
	}
	struct gdb_chunk *first = NULL, **tail = &first;
	for (size_t i0 = 0; i0 < n;) {
		size_t i1 = i0 + 1;
		uint64_t hi = 0;
		while (i1 < n && !page_between(src[i1 - 1].rec, src[i1].rec))
			i1++;
		for (size_t i = i0; i < i1; i++)
			if (src[i].rec->start + src[i].rec->size > hi)
				hi = src[i].rec->start + src[i].rec->size;
		struct gdb_chunk *old = adopt ? adoptable_run(ctx, adopt, src + i0, i1 - i0, hi) : NULL;
		if (old) {
			old->adopting = 1;
			old->adopt_next = NULL;
			*tail = old;
			tail = &old->adopt_next;
			i0 = i1;
			continue;
		}
		int err = build_run(ctx, src + i0, i1 - i0, tail);
		if (err) {
			free_chunk(first);
			return err;
		}
		tail = &(*tail)->run_next;
		i0 = i1;
	}
	*out = first;
	return 0;
}

/* The bytes of a chunk's images, all its runs. */
static size_t chunk_bytes(const struct gdb_chunk *g)
{
	size_t n = 0;
	for (; g; g = g->run_next)
		n += g->size;
	return n;
}

/* Free the chunks in the grave whose time has come (all if `all`).  With
 * gdb_lock held. */
static void sweep_chunks(struct gdb_state *st, uint64_t now, bool all)
{
	while (st->grave_head) {
		struct gdb_chunk *g = st->grave_head;
		if (!all && st->grave_bytes <= JU_GRAVE_MIN_BYTES && now - g->retired_ns < JU_GRACE_NS)
			break;
		st->grave_head = g->grave_next;
		st->grave_bytes -= chunk_bytes(g);
		free_chunk(g);
	}
	if (!st->grave_head)
		st->grave_tail = NULL;
}

/* ---- changing the list ------------------------------------------------------- */

/* One change of the list: begun with change_begin, entries linked and
 * unlinked, ended with change_end.  With gdb_lock held. */
typedef struct change {
	gdbjit_descriptor *d;
	bool ext;
	uint64_t end, now;
	int64_t delta;
} change;

static void note_foreign_writer(struct ju_ctx *ctx, gdbjit_descriptor *d);

static void change_begin(struct ju_ctx *ctx, change *ch)
{
	ch->d = desc();
	ch->ext = __atomic_load_n(&mode, __ATOMIC_RELAXED) != DESC_FOREIGN;
	ch->end = ch->ext ? write_begin(ch->d) : 0;
	ch->now = now_ns();
	ch->delta = 0;
	if (ch->ext) {
		__atomic_store_n(&ch->d->timestamp_ns, ch->now, __ATOMIC_RELAXED);
		note_foreign_writer(ctx, ch->d);
	}
}

/* Link (unlink) the entry of one run. */
static void link_run(change *ch, struct gdb_chunk *g)
{
	g->entry.reg_seq = ch->end;
	g->entry.reg_time_ns = ch->now;
	if (!ch->ext && anchored > 0)
		link_behind_anchor(&g->entry);
	else
		link_entry(ch->d, &g->entry);
	notify(ch->d, &g->entry, GDBJIT_REGISTER_FN);
	ch->delta++;
}

static void unlink_run(change *ch, struct gdb_chunk *g)
{
	unlink_entry(ch->d, &g->entry);
	notify(ch->d, &g->entry, GDBJIT_UNREGISTER_FN);
	/* a foreign descriptor has no seq: any nonzero mark will do */
	g->unlink_seq = ch->ext ? ch->end : 1;
	ch->delta--;
}

/* Link (unlink) a chunk: the entry of each of its runs. */
static void change_link(change *ch, struct gdb_chunk *g)
{
	for (; g; g = g->run_next)
		link_run(ch, g);
}

static void change_unlink(change *ch, struct gdb_chunk *g)
{
	for (; g; g = g->run_next)
		unlink_run(ch, g);
}

static uint64_t head_left; /* see note_foreign_writer */

static void change_end(change *ch)
{
	if (ch->ext) {
		__atomic_store_n(&ch->d->n_entries, ch->d->n_entries + (uint64_t)ch->delta, __ATOMIC_RELAXED);
		head_left = __atomic_load_n(&ch->d->first_entry, __ATOMIC_RELAXED);
		write_end(ch->d, ch->end);
	}
}

/* A prepared replacement of one chunk. */
typedef struct chunk_swap {
	arena *a;
	uint32_t c;
	struct gdb_chunk *g;
} chunk_swap;

/* Swap prepared chunks in, their old ones out to the grave, as one change. */
static void swap_chunks(struct ju_ctx *ctx, chunk_swap *sw, size_t n)
{
	struct gdb_state *st = ctx->gdb;
	pthread_mutex_lock(&gdb_lock);
	change ch;
	change_begin(ctx, &ch);
	for (size_t i = 0; i < n; i++)
		change_link(&ch, sw[i].g);
	for (size_t i = 0; i < n; i++) {
		struct gdb_chunk **slot = &sw[i].a->gdb->chunk[sw[i].c];
		struct gdb_chunk *old = *slot;
		*slot = sw[i].g;
		sw[i].g = NULL;
		if (!old)
			continue;
		change_unlink(&ch, old);
		old->grave_next = NULL;
		old->retired_ns = ch.now;
		*(st->grave_tail ? &st->grave_tail->grave_next : &st->grave_head) = old;
		st->grave_tail = old;
		st->grave_bytes += chunk_bytes(old);
	}
	change_end(&ch);
	sweep_chunks(st, ch.now, false);
	pthread_mutex_unlock(&gdb_lock);
}

/* ---- the channel ------------------------------------------------------------ */

static int gdb_open(struct ju_ctx *ctx)
{
	ctx->gdb = ju__calloc(1, sizeof *ctx->gdb);
	if (!ctx->gdb)
		return JU_FAIL(JU_ENOMEM, "out of memory");
	/* The consumer is whatever debugger attaches, now or later, or reads a
	 * core: always there. */
	__atomic_store_n(&mode, (int)detect_mode(desc()), __ATOMIC_RELAXED);
	__atomic_add_fetch(&n_open, 1, __ATOMIC_RELAXED);
	if (mode == DESC_FOREIGN) {
		pthread_mutex_lock(&gdb_lock);
		if (!anchored) {
			anchored = link_anchor(desc(), ctx->arch->elf_machine) ? 1 : -1;
			if (anchored < 0)
				ju__log(ctx, JU_LOG_WARN,
					"gdb channel: the foreign descriptor's list could not be "
					"walked to its end; entries go at its head, where the other "
					"JIT's writes can drop them");
		}
		pthread_mutex_unlock(&gdb_lock);
	}
	ju__log(ctx, JU_LOG_INFO, "gdb channel: %s descriptor",
		mode == DESC_OWN      ? "own"
		: mode == DESC_SHARED ? "shared (a jitunwind descriptor defined elsewhere: another copy "
					"of the library, or the program's copy relocation)"
				      : "foreign (standard fields only)");
	return 0;
}

/* ju_close frees the context's retired arenas before closing channels, so
 * every entry of this context has been discarded by now but the chunks in
 * our own grave. */
static void gdb_close(struct ju_ctx *ctx)
{
	pthread_mutex_lock(&gdb_lock);
	sweep_chunks(ctx->gdb, 0, true);
	pthread_mutex_unlock(&gdb_lock);
	free(ctx->gdb);
	ctx->gdb = NULL;
	__atomic_sub_fetch(&n_open, 1, __ATOMIC_RELAXED);
}

/* Everything a swap needs is built here, so the swap cannot fail. */
static int gdb_prepare(struct ju_ctx *ctx, arena *a)
{
	size_t n = n_chunks_of(a);
	struct gdb_reg *r = ju__calloc(1, sizeof *r + n * sizeof *r->chunk);
	if (!r)
		return JU_FAIL(JU_ENOMEM, "out of memory for gdb entries");
	r->n_chunks = (uint32_t)n;
	adopt_cursor cur = { NULL, 0, NULL };
	for (size_t c = 0; c < n; c++) {
		int err = build_chunk(ctx, a, c, NULL, 0, NULL, &cur, &r->chunk[c]);
		if (err) {
			while (c-- > 0)
				free_chunk(r->chunk[c]);
			free(r);
			return err;
		}
	}
	a->gdb = r;
	return 0;
}

/* Free the chunks of an arena that is not on the list: one never swapped
 * in, or one a swap took out, when arena.c frees it.  Outside readers hear
 * first (free_chunk). */
static void gdb_discard(struct ju_ctx *ctx, arena *a)
{
	(void)ctx;
	struct gdb_reg *r = a->gdb;
	if (!r)
		return;
	pthread_mutex_lock(&gdb_lock);
	for (size_t c = 0; c < r->n_chunks; c++)
		free_chunk(r->chunk[c]);
	pthread_mutex_unlock(&gdb_lock);
	free(r);
	a->gdb = NULL;
}

/* Our descriptor, and a JIT that writes its list without the sequence lock
 * (one whose references the dynamic linker bound to our definition, with
 * its own lock): the lock no longer covers the list.  Say so in the
 * descriptor, so outside readers fall back to reading the list as without the
 * extension, and once in the log.  Called inside a change. */
/* head_left is the list's head as our last change left it (gdb_lock):
 * every writer links at the head, so while it is unchanged nobody else has
 * linked, and the walk below (as long as the list) is needed only when it
 * moved. */
static void note_foreign_writer(struct ju_ctx *ctx, gdbjit_descriptor *d)
{
	if (d->flags & GDBJIT_FLAG_FOREIGN_WRITER)
		return;
	if (head_left && __atomic_load_n(&d->first_entry, __ATOMIC_RELAXED) == head_left)
		return;
	uint64_t n = __atomic_load_n(&d->n_entries, __ATOMIC_RELAXED);
	if (list_length(d, n) <= n)
		return;
	__atomic_store_n(&d->flags, d->flags | GDBJIT_FLAG_FOREIGN_WRITER, __ATOMIC_RELAXED);
	if (!told_foreign_writer)
		ju__log(ctx, JU_LOG_WARN,
			"gdb channel: another JIT writes the GDB JIT list without its "
			"sequence lock; outside readers are told (descriptor flags)");
	told_foreign_writer = true;
}

/* New images first, then the old ones go: a debugger briefly sees both,
 * which is harmless, and never sees neither.  One change of seq covers the
 * whole swap, so outside readers see the arena set switch at once. */
/* The runs of arenas arr[0..n), chunk by chunk, through each run's link
 * (so that the visit may take the run out of its list or put another in its
 * place). */
#define EACH_RUN_SLOT(arr, n, pp)                                                                            \
	for (size_t i_ = 0; i_ < (n); i_++)                                                                  \
		for (size_t c_ = 0; (arr)[i_]->gdb && c_ < (arr)[i_]->gdb->n_chunks; c_++)                   \
			for (struct gdb_chunk **pp = &(arr)[i_]->gdb->chunk[c_]; *pp;)

/* Take the runs the new arenas adopt off their old chunks' lists (they stay
 * linked on the descriptor's); unlink the others. */
static void unlink_old(change *ch, arena *const *del, size_t n_del)
{
	EACH_RUN_SLOT(del, n_del, pp)
	{
		struct gdb_chunk *g = *pp;
		if (g->adopting == 1) {
			g->adopting = 2;
			*pp = g->run_next;
			continue;
		}
		unlink_run(ch, g);
		pp = &g->run_next;
	}
}

/* Link the new arenas' lists through run_next again.  A run whose old arena
 * was not in the swap (which the build never makes) is left out: its blobs
 * are unnamed, never named twice. */
static void take_adopted(arena *const *add, size_t n_add)
{
	EACH_RUN_SLOT(add, n_add, pp)
	{
		struct gdb_chunk *g = *pp;
		if (!g->adopting) {
			pp = &g->run_next;
			continue;
		}
		bool taken = g->adopting == 2;
		g->adopting = 0;
		if (taken) {
			g->run_next = g->adopt_next;
			pp = &g->run_next;
		} else {
			*pp = g->adopt_next;
		}
	}
}

static void gdb_swap(struct ju_ctx *ctx, arena *const *add, size_t n_add, arena *const *del, size_t n_del)
{
	pthread_mutex_lock(&gdb_lock);
	change ch;
	change_begin(ctx, &ch);
	EACH_RUN_SLOT(add, n_add, pp)
	{
		struct gdb_chunk *g = *pp;
		if (g->adopting) {
			pp = &g->adopt_next;
			continue;
		}
		link_run(&ch, g);
		pp = &g->run_next;
	}
	unlink_old(&ch, del, n_del);
	take_adopted(add, n_add);
	change_end(&ch);
	pthread_mutex_unlock(&gdb_lock);
}

static void say_no_memory(struct ju_ctx *ctx)
{
	if (ctx->gdb->told_no_memory)
		return;
	ctx->gdb->told_no_memory = true;
	ju__log(ctx, JU_LOG_WARN,
		"gdb channel: out of memory rebuilding an image after an unpublish; its "
		"blobs are unnamed in debuggers until it changes again");
}

/* Blobs died: their chunks are built again without them.  A chunk that
 * cannot be built goes (its live blobs unnamed), so that nothing names the
 * dead ones. */
static void gdb_blobs_dead(struct ju_ctx *ctx, arena *a, const uint32_t *ks, size_t n)
{
	if (!a->gdb)
		return;
	chunk_swap one, *sw = n > 1 ? ju__malloc(n * sizeof *sw) : &one;
	size_t m = 0;
	if (!sw)
		sw = &one;
	for (size_t q = 0; q < n; q++) {
		uint32_t c = ks[q] / CHUNK;
		if (m && sw[m - 1].c == c)
			continue;
		if (m && sw == &one) { /* no memory for the list: one chunk at a time */
			swap_chunks(ctx, sw, m);
			m = 0;
		}
		sw[m] = (chunk_swap){ a, c, NULL };
		if (build_chunk(ctx, a, c, NULL, 0, NULL, NULL, &sw[m].g))
			say_no_memory(ctx);
		m++;
	}
	swap_chunks(ctx, sw, m);
	if (sw != &one)
		free(sw);
	ju__clear_error();
}

/* What a reuse prepared: the chunks it replaces. */
typedef struct prepared {
	chunk_swap *sw;
	size_t n;
} prepared;

/* Slot reuse: the new images are built before anything changes. */
static int gdb_reuse_prepare(struct ju_ctx *ctx, reuse_set *rs)
{
	chunk_swap *sw = ju__malloc(rs->n * sizeof *sw);
	if (!sw)
		return JU_FAIL(JU_ENOMEM, "out of memory for gdb images");
	size_t m = 0;
	for (size_t j = 0; j < rs->n;) {
		arena *a = rs->it[j].a;
		uint32_t c = rs->it[j].k / CHUNK;
		size_t j1 = j + 1;
		while (j1 < rs->n && rs->it[j1].a == a && rs->it[j1].k / CHUNK == c)
			j1++;
		if (a->gdb) {
			sw[m] = (chunk_swap){ a, c, NULL };
			int err = build_chunk(ctx, a, c, &rs->it[j], j1 - j, rs->stage, NULL, &sw[m].g);
			if (err) {
				pthread_mutex_lock(&gdb_lock);
				while (m-- > 0)
					free_chunk(sw[m].g);
				pthread_mutex_unlock(&gdb_lock);
				free(sw);
				return err;
			}
			m++;
		}
		j = j1;
	}
	prepared *p = ju__malloc(sizeof *p);
	if (!p) {
		pthread_mutex_lock(&gdb_lock);
		while (m-- > 0)
			free_chunk(sw[m].g);
		pthread_mutex_unlock(&gdb_lock);
		free(sw);
		return JU_FAIL(JU_ENOMEM, "out of memory for gdb images");
	}
	p->sw = sw;
	p->n = m;
	rs->gdb = p;
	return 0;
}

static void gdb_reuse_commit(struct ju_ctx *ctx, reuse_set *rs, int phase)
{
	prepared *p = rs->gdb;
	if (phase != 1 || !p)
		return;
	swap_chunks(ctx, p->sw, p->n);
	free(p->sw);
	free(p);
	rs->gdb = NULL;
}

static void gdb_reuse_abort(struct ju_ctx *ctx, reuse_set *rs)
{
	(void)ctx;
	prepared *p = rs->gdb;
	if (!p)
		return;
	pthread_mutex_lock(&gdb_lock);
	for (size_t i = 0; i < p->n; i++)
		free_chunk(p->sw[i].g);
	pthread_mutex_unlock(&gdb_lock);
	free(p->sw);
	free(p);
	rs->gdb = NULL;
}

const ju_channel_ops ju_ch_gdb = {
	.bit = JU_CH_GDB,
	.name = "gdb",
	.open = gdb_open,
	.close = gdb_close,
	.arena_prepare = gdb_prepare,
	.arena_discard = gdb_discard,
	.arena_swap = gdb_swap,
	.blobs_dead = gdb_blobs_dead,
	.reuse_prepare = gdb_reuse_prepare,
	.reuse_commit = gdb_reuse_commit,
	.reuse_abort = gdb_reuse_abort,
};
