/* SPDX-License-Identifier: MIT */
/* test-gdb-reader.h - shared by the test-gdb-* programs: a code region
 * with blobs whose names say where they are, a checker for the images an
 * entry points at, a reader that follows the seqlock protocol of
 * docs/OUTSIDE_READER.md through process_vm_readv, and a writer that
 * publishes and unpublishes at random.
 *
 * Readers read through process_vm_readv, also on their own process: the
 * protocol allows a pointer read mid-change to dangle, and the syscall turns
 * that into EFAULT instead of a crash.  Symbol names encode where each blob
 * is ("b<offset>_<size>"), so any torn or stale image a validated snapshot
 * let through shows as a mismatch.
 */
#ifndef TEST_GDB_READER_H
#define TEST_GDB_READER_H

#include "formats/clock.h"
#include "formats/gdbjit.h"
#include "jitunwind.h"
#include "unit.h"

#include <elf.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* Not every program uses every helper. */
#define TG_UNUSED __attribute__((unused))

/* ---- the code region and blobs ---------------------------------------------- */

enum { SLOT = 64, N_SLOTS = 4096, MAX_ENTRIES = 4096 };
#define REGION_SIZE ((size_t)4 << 20)
static uint8_t *region; /* reserved, never executed: only addresses matter */

/* Blob in slot i: size and name derived from i, a line table on every third. */
static TG_UNUSED uint32_t slot_size(size_t i)
{
	return 16 + (uint32_t)(i * 7 % (SLOT - 16));
}

typedef struct blob_buf {
	char name[32];
	ju_line lines[2];
} blob_buf;

static TG_UNUSED ju_blob make_blob(size_t i, blob_buf *bb)
{
	uint32_t size = slot_size(i);
	snprintf(bb->name, sizeof bb->name, "b%zx_%x", i * SLOT, size);
	ju_blob b = {
		.sz = sizeof(ju_blob),
		.start = region + i * SLOT,
		.size = size,
		.name = bb->name,
		.frame = { .kind = JU_FRAME_LEAF },
	};
	if (i % 3 == 0) {
		bb->lines[0] = (ju_line){ 0, (uint32_t)i + 1 };
		bb->lines[1] = (ju_line){ size / 2, (uint32_t)i + 2 };
		b.file = "gen.jit";
		b.lines = bb->lines;
		b.n_lines = 2;
	}
	return b;
}

static TG_UNUSED ju_ctx *open_gdb_only(void)
{
	ju_options o = { .sz = sizeof(ju_options), .channels = JU_CH_GDB, .flags = JU_OPT_NO_ENV };
	ju_ctx *ctx = NULL;
	CHECK_RC(ju_open(&o, &ctx), 0);
	return ctx;
}

static TG_UNUSED int publish_slots(ju_ctx *ctx, const size_t *slots, size_t n)
{
	ju_blob b[64];
	blob_buf bb[64];
	for (size_t k = 0; k < n; k++)
		b[k] = make_blob(slots[k], &bb[k]);
	return ju_publish_batch(ctx, b, n);
}

/* ---- reading an image back ---------------------------------------------------- */

/* Check one image as a reader gets it: an ET_REL whose .text is NOBITS at
 * [code_lo, code_hi), whose .eh_frame's address is where its bytes are, and
 * whose symbols are the blobs their names say they are.  Returns the number
 * of symbols, or -1 with a message. */
static TG_UNUSED long check_image(const uint8_t *img, size_t size, uint64_t img_addr, uint64_t lo,
				  uint64_t hi, char *why, size_t whylen)
{
	Elf *e = elf_memory((char *)(uintptr_t)img, size);
	long n = -1;
	GElf_Ehdr eh;
	size_t shstrndx;
	if (!e || !gelf_getehdr(e, &eh) || eh.e_type != ET_REL || elf_getshdrstrndx(e, &shstrndx)) {
		snprintf(why, whylen, "not an ET_REL ELF image: %s", elf_errmsg(-1));
		goto out;
	}
	bool text = false, eh_frame = false;
	Elf_Scn *symtab = NULL, *scn = NULL;
	size_t text_ndx = 0;
	GElf_Shdr sh, text_sh = { 0 };
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".text")) {
			text = sh.sh_type == SHT_NOBITS && sh.sh_addr == lo && sh.sh_size == hi - lo;
			text_ndx = elf_ndxscn(scn);
			text_sh = sh;
		}
		if (name && !strcmp(name, ".eh_frame"))
			eh_frame = sh.sh_addr == img_addr + sh.sh_offset;
		if (sh.sh_type == SHT_SYMTAB)
			symtab = scn;
	}
	if (!text || !eh_frame || !symtab) {
		snprintf(why, whylen, "sections: .text %s, .eh_frame %s, .symtab %s", text ? "ok" : "wrong",
			 eh_frame ? "ok" : "at the wrong address", symtab ? "ok" : "missing");
		goto out;
	}
	GElf_Shdr ssh;
	gelf_getshdr(symtab, &ssh);
	Elf_Data *data = elf_getdata(symtab, NULL);
	size_t count = ssh.sh_entsize ? ssh.sh_size / ssh.sh_entsize : 0;
	for (size_t i = 1; i < count; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym))
			break;
		const char *name = elf_strptr(e, ssh.sh_link, sym.st_name);
		unsigned long off, sz;
		if (!name || sscanf(name, "b%lx_%lx", &off, &sz) != 2 || sym.st_shndx != text_ndx ||
		    text_sh.sh_addr + sym.st_value != (uintptr_t)region + off || sym.st_size != sz) {
			snprintf(why, whylen, "symbol %zu (%s) does not match its blob", i,
				 name ? name : "?");
			goto out;
		}
	}
	n = (long)count - 1;
out:
	if (e)
		elf_end(e);
	return n;
}

/* ---- the seqlock reader ------------------------------------------------------------ */

typedef struct reader {
	pid_t pid;
	uint64_t desc; /* address of the descriptor in pid */
	/* counts */
	unsigned long snapshots, retries, reclaimed, entries_seen, failures;
	uint64_t last_ts;
	char first_failure[256];
	uint8_t *img; /* copy buffer */
	size_t img_cap;
} reader;

static TG_UNUSED int rd(const reader *r, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	return process_vm_readv(r->pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

static TG_UNUSED int read_u64(const reader *r, uint64_t addr, uint64_t *v)
{
	return rd(r, addr, v, sizeof *v);
}

static TG_UNUSED void reader_fail(reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static TG_UNUSED void reader_fail(reader *r, const char *fmt, ...)
{
	if (!r->failures++) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(r->first_failure, sizeof r->first_failure, fmt, ap);
		va_end(ap);
	}
}

typedef struct snap_entry {
	uint64_t addr;
	gdbjit_entry e;
} snap_entry;

/* One try of the protocol of docs/OUTSIDE_READER.md.  Returns 1 when a
 * snapshot was validated and its images checked, 0 to retry, -1 when the
 * target is gone. */
static TG_UNUSED int read_once(reader *r, snap_entry *ents)
{
	uint64_t s1, s2, reclaim;
	gdbjit_descriptor d;
	if (read_u64(r, r->desc + offsetof(gdbjit_descriptor, seq), &s1))
		return -1;
	if (s1 & 1)
		return 0; /* a change is under way */
	if (rd(r, r->desc, &d, sizeof d))
		return -1;
	size_t n = 0;
	for (uint64_t p = d.first_entry; p; p = ents[n - 1].e.next_entry) {
		if (n == MAX_ENTRIES)
			return 0; /* longer than any list here: torn */
		ents[n].addr = p;
		if (rd(r, p, &ents[n].e, sizeof ents[n].e))
			return 0; /* a dangling pointer: torn */
		n++;
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (read_u64(r, r->desc + offsetof(gdbjit_descriptor, seq), &s2))
		return -1;
	if (s2 != s1)
		return 0;
	/* Validated: everything below must hold. */
	if (n != d.n_entries)
		reader_fail(r, "seq %" PRIu64 ": %zu entries on the list, n_entries %" PRIu64, s1, n,
			    d.n_entries);
	if (d.timestamp_ns < r->last_ts || d.timestamp_ns > now_ns())
		reader_fail(r, "seq %" PRIu64 ": timestamp went backwards or is in the future", s1);
	r->last_ts = d.timestamp_ns;
	for (size_t i = 0; i < n; i++) {
		const gdbjit_entry *e = &ents[i].e;
		if (e->reg_seq > s1 || e->reg_seq % 2 || e->code_lo >= e->code_hi)
			reader_fail(r,
				    "seq %" PRIu64 ": entry %zu has reg_seq %" PRIu64 ", hull [%#" PRIx64
				    ", %#" PRIx64 ")",
				    s1, i, e->reg_seq, e->code_lo, e->code_hi);
		for (size_t k = 0; k < i; k++)
			if (e->code_lo < ents[k].e.code_hi && ents[k].e.code_lo < e->code_hi)
				reader_fail(r, "seq %" PRIu64 ": hulls of entries %zu and %zu overlap", s1, k,
					    i);
	}
	/* Copy the images, then ask whether any of them was freed meanwhile. */
	int copied = 1;
	size_t at = 0;
	size_t offs[MAX_ENTRIES];
	for (size_t i = 0; i < n && copied; i++) {
		size_t size = ents[i].e.symfile_size;
		if (size > ((size_t)64 << 20) || at + size > r->img_cap) {
			size_t cap = (at + size) * 2;
			uint8_t *p = size > ((size_t)64 << 20) ? NULL : realloc(r->img, cap);
			if (!p) {
				copied = 0;
				break;
			}
			r->img = p, r->img_cap = cap;
		}
		offs[i] = at;
		if (rd(r, ents[i].e.symfile_addr, r->img + at, size))
			copied = 0;
		at += size;
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (read_u64(r, r->desc + offsetof(gdbjit_descriptor, reclaim_seq), &reclaim))
		return -1;
	if (reclaim > s1) {
		r->reclaimed++;
		return 0; /* some image may be gone: retry */
	}
	if (!copied)
		reader_fail(r,
			    "seq %" PRIu64 ": an image could not be read, yet reclaim_seq %" PRIu64
			    " says nothing was freed",
			    s1, reclaim);
	for (size_t i = 0; copied && i < n; i++) {
		char why[160];
		const gdbjit_entry *e = &ents[i].e;
		if (check_image(r->img + offs[i], e->symfile_size, e->symfile_addr, e->code_lo, e->code_hi,
				why, sizeof why) < 1)
			reader_fail(r, "seq %" PRIu64 ": entry %zu: %s", s1, i, why);
	}
	r->entries_seen += n;
	return 1;
}

/* Read until *stop or the target is gone. */
static TG_UNUSED void reader_loop(reader *r, atomic_int *stop)
{
	snap_entry *ents = malloc(MAX_ENTRIES * sizeof *ents);
	if (!ents) {
		reader_fail(r, "out of memory");
		return;
	}
	while (!*stop) {
		int rc = read_once(r, ents);
		if (rc < 0)
			break;
		if (rc)
			r->snapshots++;
		else
			r->retries++;
	}
	free(ents);
}

/* ---- the writer ------------------------------------------------------------------- */

/* Publish and unpublish at random for `secs`; returns the changes made. */
static TG_UNUSED unsigned long churn(double secs, unsigned seed)
{
	ju_ctx *ctx = open_gdb_only();
	if (!ctx)
		return 0;
	static bool live[N_SLOTS];
	memset(live, 0, sizeof live);
	uint64_t end = now_ns() + (uint64_t)(secs * 1e9);
	unsigned long changes = 0;
	while (now_ns() < end) {
		seed = seed * 1103515245u + 12345u;
		unsigned op = (seed >> 16) % 100;
		size_t k = 1 + (seed >> 8) % 64;
		if (op < 2) {
			CHECK_RC(ju_unpublish_all(ctx), 0);
			memset(live, 0, sizeof live);
		} else if (op < 60) {
			size_t slots[64], n = 0;
			for (size_t j = 0; j < k; j++) {
				seed = seed * 1103515245u + 12345u;
				size_t s = (seed >> 4) % N_SLOTS;
				bool dup = live[s];
				for (size_t q = 0; q < n; q++)
					dup |= slots[q] == s;
				if (!dup)
					slots[n++] = s;
			}
			if (!n)
				continue;
			CHECK_RC(publish_slots(ctx, slots, n), 0);
			for (size_t q = 0; q < n; q++)
				live[slots[q]] = true;
		} else {
			for (size_t j = 0; j < k; j++) {
				seed = seed * 1103515245u + 12345u;
				size_t s = (seed >> 4) % N_SLOTS;
				if (!live[s])
					continue;
				CHECK_RC(ju_unpublish(ctx, region + s * SLOT), 0);
				live[s] = false;
			}
		}
		changes++;
	}
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
	return changes;
}

static TG_UNUSED void report_reader(const char *who, const reader *r)
{
	printf("%s: %lu snapshots (%lu entries), %lu retries, %lu of them after a reclaim\n", who,
	       r->snapshots, r->entries_seen, r->retries, r->reclaimed);
	CHECK(r->failures == 0, "%s: %lu failures, first: %s", who, r->failures, r->first_failure);
	CHECK(r->snapshots >= 20, "%s validated only %lu snapshots", who, r->snapshots);
}

static TG_UNUSED void *reader_thread(void *arg)
{
	void **a = arg;
	reader_loop(a[0], a[1]);
	return NULL;
}

#endif
