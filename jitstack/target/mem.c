/* SPDX-License-Identifier: MIT */
/* mem.c - target memory of mem.h.
 *
 * Live: process_vm_readv, one remote iovec per page so that a read crossing
 * into an unmapped page fails cleanly (the syscall never splits an iovec
 * element, so a partial result means "not all mapped").  The page cache is
 * direct-mapped and tagged with a generation that js_mem_flush bumps, so a
 * flush costs nothing.
 *
 * Core: the segments' file bytes through libelf's view of the core
 * (elf_rawfile: the whole file, mapped).  Bytes a segment does not carry
 * (p_filesz < p_memsz: pages the kernel did not dump) read as EFAULT.
 */
#include "target/mem.h"
#include "target/hold.h"
#include "formats/search.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

enum { PAGE = 4096, CACHE_PAGES = 64, MAX_IOV = 64 };

typedef struct cpage {
	uint64_t tag; /* page address */
	uint64_t gen; /* valid when equal to the cache's generation */
	uint8_t bytes[PAGE];
} cpage;

typedef struct seg {
	uint64_t vaddr, filesz;
	const uint8_t *bytes;
} seg;

struct js_mem {
	bool core;
	pid_t pid;
	uint64_t gen;
	unsigned long syscalls;
	cpage *cache;
	seg *segs;
	size_t n_segs;
};

js_mem *js_mem_live(pid_t pid)
{
	js_mem *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->pid = pid;
	m->gen = 1;
	m->cache = calloc(CACHE_PAGES, sizeof *m->cache);
	if (!m->cache) {
		free(m);
		return NULL;
	}
	return m;
}

static int by_vaddr(const void *a, const void *b)
{
	const seg *x = a, *y = b;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

js_mem *js_mem_core(Elf *core)
{
	size_t fsize = 0, nph = 0;
	const uint8_t *file = (const uint8_t *)elf_rawfile(core, &fsize);
	if (!file || elf_getphdrnum(core, &nph))
		return NULL;
	js_mem *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	m->core = true;
	m->segs = calloc(nph ? nph : 1, sizeof *m->segs);
	if (!m->segs) {
		free(m);
		return NULL;
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(core, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		if (ph.p_offset > fsize)
			continue;
		uint64_t avail = fsize - ph.p_offset; /* a truncated core keeps what it has */
		m->segs[m->n_segs++] =
			(seg){ ph.p_vaddr, ph.p_filesz < avail ? ph.p_filesz : avail, file + ph.p_offset };
	}
	if (m->n_segs > 1)
		qsort(m->segs, m->n_segs, sizeof *m->segs, by_vaddr);
	return m;
}

js_mem *js_mem_buffer(const uint8_t *bytes, size_t size, uint64_t base)
{
	js_mem *m = calloc(1, sizeof *m);
	if (!m || !(m->segs = calloc(1, sizeof *m->segs))) {
		free(m);
		return NULL;
	}
	m->core = true; /* reads like a core: no process, nothing changes */
	m->segs[0] = (seg){ base, size, bytes };
	m->n_segs = 1;
	return m;
}

void js_mem_free(js_mem *m)
{
	if (!m)
		return;
	free(m->cache);
	free(m->segs);
	free(m);
}

bool js_mem_is_core(const js_mem *m)
{
	return m->core;
}

unsigned long js_mem_syscalls(const js_mem *m)
{
	return m->syscalls;
}

static int core_read(js_mem *m, uint64_t addr, void *buf, size_t len)
{
	uint8_t *out = buf;
	while (len) {
		/* the last segment starting at or below addr */
		size_t lo = FMT_COUNT_LE(m->segs, m->n_segs, vaddr, addr);
		const seg *s = lo ? &m->segs[lo - 1] : NULL;
		if (!s || addr - s->vaddr >= s->filesz)
			return EFAULT;
		size_t n = s->filesz - (addr - s->vaddr);
		if (n > len)
			n = len;
		memcpy(out, s->bytes + (addr - s->vaddr), n);
		out += n;
		addr += n;
		len -= n;
	}
	return 0;
}

/* One process_vm_readv of up to MAX_IOV pages' worth of [addr, addr + len)
 * into out, one iovec per page: the syscall transfers whole elements only,
 * so what it returns is the readable prefix.  *asked is what was asked. */
static ssize_t readv_pages(js_mem *m, uint64_t addr, uint8_t *out, size_t len, size_t *asked)
{
	struct iovec local[MAX_IOV], remote[MAX_IOV];
	size_t n = 0, total = 0;
	while (n < MAX_IOV && total < len) {
		size_t chunk = PAGE - (addr % PAGE);
		if (chunk > len - total)
			chunk = len - total;
		local[n] = (struct iovec){ out + total, chunk };
		remote[n] = (struct iovec){ (void *)(uintptr_t)addr, chunk };
		n++;
		total += chunk;
		addr += chunk;
	}
	m->syscalls++;
	*asked = total;
	return process_vm_readv(m->pid, local, n, remote, n, 0);
}

static int live_read(js_mem *m, uint64_t addr, void *buf, size_t len)
{
	uint8_t *out = buf;
	while (len) {
		size_t asked;
		ssize_t got = readv_pages(m, addr, out, len, &asked);
		if (got < 0)
			return errno;
		if ((size_t)got != asked)
			return EFAULT;
		out += asked;
		addr += asked;
		len -= asked;
	}
	return 0;
}

/* A long read (a JIT image of many megabytes) goes in chunks, and between
 * two jitstack may stop itself (^Z: js_hold_point). */
enum { READ_CHUNK = 1 << 20 };

int js_mem_read(js_mem *m, uint64_t addr, void *buf, size_t len)
{
	if (len && addr + len < addr)
		return EFAULT;
	if (m->core)
		return core_read(m, addr, buf, len);
	uint8_t *out = buf;
	while (len > READ_CHUNK) {
		int e = live_read(m, addr, out, READ_CHUNK);
		if (e)
			return e;
		js_hold_point();
		out += READ_CHUNK, addr += READ_CHUNK, len -= READ_CHUNK;
	}
	return live_read(m, addr, out, len);
}

int js_mem_read_u64(js_mem *m, uint64_t addr, uint64_t *v)
{
	return js_mem_read(m, addr, v, sizeof *v);
}

static const uint8_t *cached_page(js_mem *m, uint64_t page)
{
	cpage *c = &m->cache[(page / PAGE) % CACHE_PAGES];
	if (c->gen == m->gen && c->tag == page)
		return c->bytes;
	if (live_read(m, page, c->bytes, PAGE)) {
		c->gen = 0;
		return NULL;
	}
	c->tag = page;
	c->gen = m->gen;
	return c->bytes;
}

/* A missed page with the pages around it, in one process_vm_readv: the
 * aligned run of AHEAD pages holding it, which fall in distinct slots.
 * The readable prefix of the run is cached; NULL when it does not reach
 * the page (then the page alone is read). */
enum { AHEAD = 16 };
static const uint8_t *cached_run(js_mem *m, uint64_t page)
{
	cpage *c = &m->cache[(page / PAGE) % CACHE_PAGES];
	if (c->gen == m->gen && c->tag == page)
		return c->bytes;
	uint64_t first = page & ~(uint64_t)(AHEAD * PAGE - 1);
	struct iovec local[AHEAD], remote[AHEAD];
	for (size_t i = 0; i < AHEAD; i++) {
		cpage *slot = &m->cache[((first / PAGE) + i) % CACHE_PAGES];
		slot->gen = 0;
		local[i] = (struct iovec){ slot->bytes, PAGE };
		remote[i] = (struct iovec){ (void *)(uintptr_t)(first + i * PAGE), PAGE };
	}
	m->syscalls++;
	ssize_t got = process_vm_readv(m->pid, local, AHEAD, remote, AHEAD, 0);
	size_t whole = got > 0 ? (size_t)got / PAGE : 0;
	for (size_t i = 0; i < whole; i++) {
		cpage *slot = &m->cache[((first / PAGE) + i) % CACHE_PAGES];
		slot->tag = first + i * PAGE;
		slot->gen = m->gen;
	}
	return page < first + whole * PAGE ? c->bytes : cached_page(m, page);
}

int js_mem_read_cached(js_mem *m, uint64_t addr, void *buf, size_t len)
{
	if (len && addr + len < addr)
		return EFAULT;
	if (m->core)
		return core_read(m, addr, buf, len);
	uint8_t *out = buf;
	while (len) {
		uint64_t page = addr & ~(uint64_t)(PAGE - 1);
		size_t off = (size_t)(addr - page), chunk = PAGE - off < len ? PAGE - off : len;
		const uint8_t *p = cached_run(m, page);
		if (!p) /* a page not readable whole: the exact bytes, and why not */
			return live_read(m, addr, out, len);
		memcpy(out, p + off, chunk);
		out += chunk;
		addr += chunk;
		len -= chunk;
	}
	return 0;
}

size_t js_mem_copy(js_mem *m, uint64_t addr, uint8_t *buf, size_t len)
{
	if (m->core)
		return 0;
	/* the mapped prefix */
	size_t done = 0;
	while (done < len) {
		size_t asked;
		ssize_t got = readv_pages(m, addr + done, buf + done, len - done, &asked);
		if (got > 0)
			done += (size_t)got;
		if (got < 0 || (size_t)got != asked)
			break;
	}
	return done;
}

bool js_mem_word(js_mem *m, uint64_t addr, uint64_t *v)
{
	if (m->core)
		return core_read(m, addr, v, sizeof *v) == 0;
	uint64_t page = addr & ~(uint64_t)(PAGE - 1);
	size_t off = (size_t)(addr - page);
	if (off + 8 > PAGE) /* straddles two pages: rare, read directly */
		return live_read(m, addr, v, sizeof *v) == 0;
	const uint8_t *p = cached_page(m, page);
	if (!p)
		return false;
	memcpy(v, p + off, 8);
	return true;
}

void js_mem_flush(js_mem *m)
{
	m->gen++;
}
