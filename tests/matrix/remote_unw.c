/* SPDX-License-Identifier: MIT */
/* remote_unw.c - nongnu libunwind's ptrace unwinder as a remote unwinder
 * (remote.h); live processes only.
 *
 * libunwind-ptrace does not read the target's dynamic unwind list on x86-64
 * (DESIGN.md), so out of the box JIT frames get its rbp-chain fallback.
 * With MX_JIT_IMAGES this file gives it the FDEs of the GDB JIT images: its
 * find_proc_info hook answers for JIT code with a UNW_INFO_FORMAT_IP_OFFSET
 * table built here (code offsets from the image's .text, FDE offsets from
 * its .eh_frame: the two may be far apart when the image was malloc'ed),
 * whose FDEs libunwind then reads from the image in the target.
 * The table itself lives in this process; it is served through the
 * access_mem hook at an address no x86-64 process can map.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "remote.h"

#include <errno.h>
#include <libunwind-ptrace.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "formats/gdbjit.h"
#include "jitimages.h"
#include "tracee.h"

const char mx_remote_name[] = "libunwind-ptrace";

/* libunwind's own search over a table (src/dwarf/Gfind_proc_info-lsb.c);
 * exported by libunwind-x86_64 (libunwind-aarch64) but declared in no
 * public header. */
#if defined(__aarch64__)
#define mx_search_unwind_table _Uaarch64_dwarf_search_unwind_table
#else
#define mx_search_unwind_table _Ux86_64_dwarf_search_unwind_table
#endif
extern int mx_search_unwind_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di, unw_proc_info_t *pi,
				  int need_unwind_info, void *arg);

/* Non-canonical on x86-64, above every user address on AArch64 (48-bit
 * addresses): never a target address. */
#define TABLE_BASE 0x4000000000000000ull

/* libunwind's table entry for x86-64 (struct table_entry). */
typedef struct table_entry {
	int32_t start_ip_offset;
	int32_t fde_offset;
} table_entry;

typedef struct jit_table {
	uint64_t lo, hi;  /* the image's .text: code offsets count from lo */
	uint64_t segbase; /* its .eh_frame: FDE offsets count from here */
	uint64_t addr;    /* where the table is served */
	table_entry *v;
	size_t n;
} jit_table;

struct mx_remote {
	pid_t pid;
	int attached;
	unw_addr_space_t as;
	void *upt;
	unw_accessors_t acc;
	mx_images imgs;
	int n_images;
	jit_table *tables;
	size_t n_tables;
};

/* The hooks get the UPT handle as their arg; one target per tool. */
static mx_remote *current;

/* Close r and return NULL, with a message in err (fmt NULL: already there). */
static mx_remote *fail(mx_remote *r, char *err, size_t errlen, const char *fmt, ...)
{
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	mx_close(r);
	return NULL;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
	for (size_t i = 0; i < current->n_tables; i++) {
		jit_table *t = &current->tables[i];
		size_t bytes = t->n * sizeof *t->v;
		if (addr >= t->addr && addr - t->addr < bytes) {
			if (write)
				return -UNW_EINVAL;
			*val = 0;
			memcpy(val, (uint8_t *)t->v + (addr - t->addr),
			       bytes - (addr - t->addr) < sizeof *val ? bytes - (addr - t->addr)
								      : sizeof *val);
			return 0;
		}
	}
	return _UPT_access_mem(as, addr, val, write, arg);
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need, void *arg)
{
	for (size_t i = 0; i < current->n_tables; i++) {
		jit_table *t = &current->tables[i];
		if (ip < t->lo || ip >= t->hi)
			continue;
		unw_dyn_info_t di = {
			.start_ip = t->lo,
			.end_ip = t->hi,
			.format = UNW_INFO_FORMAT_IP_OFFSET,
			.u.rti = { .segbase = t->segbase,
				   .table_len = t->n * sizeof(table_entry) / sizeof(unw_word_t),
				   .table_data = t->addr },
		};
		return mx_search_unwind_table(as, ip, &di, pi, need, arg);
	}
	return _UPT_find_proc_info(as, ip, pi, need, arg);
}

/* One table per image (libunwind's offsets are 32-bit). */
static int build_tables(mx_remote *r)
{
	r->tables = calloc(r->imgs.n ? r->imgs.n : 1, sizeof *r->tables);
	if (!r->tables)
		return -1;
	uint64_t addr = TABLE_BASE;
	for (size_t i = 0; i < r->imgs.n; i++) {
		const mx_image *img = &r->imgs.v[i];
		if (!img->n_fdes)
			continue;
		jit_table *t = &r->tables[r->n_tables++];
		t->lo = img->text_lo;
		t->hi = img->text_hi;
		t->segbase = img->eh_addr;
		t->addr = addr;
		t->v = calloc(img->n_fdes, sizeof *t->v);
		if (!t->v)
			return -1;
		for (size_t k = 0; k < img->n_fdes; k++) {
			int64_t s = (int64_t)(img->fdes[k].lo - t->lo);
			int64_t f = (int64_t)(img->fdes[k].addr - t->segbase);
			if (s != (int32_t)s || f != (int32_t)f)
				return -1;
			t->v[t->n++] = (table_entry){ (int32_t)s, (int32_t)f };
		}
		addr += (t->n * sizeof *t->v + 4095) & ~(uint64_t)4095;
	}
	return 0;
}

static int read_images(mx_remote *r, char *err, size_t errlen)
{
	uint64_t desc[8];
	int n = mx_find_symbol_live(r->pid, GDBJIT_DESCRIPTOR_SYMBOL, desc, 8);
	r->n_images = 0;
	for (int d = 0; d < n; d++) {
		mx_images one;
		if (mx_images_read(mx_read_live, &r->pid, desc[d], &one, err, errlen)) {
			mx_images_free(&one);
			return -1;
		}
		mx_image *v = realloc(r->imgs.v, (r->imgs.n + one.n + 1) * sizeof *v);
		if (!v) {
			mx_images_free(&one);
			return -1;
		}
		r->imgs.v = v;
		memcpy(v + r->imgs.n, one.v, one.n * sizeof *v);
		r->imgs.n += one.n;
		free(one.v);
	}
	r->n_images = (int)r->imgs.n;
	if (build_tables(r)) {
		snprintf(err, errlen, "a JIT image too large for libunwind's 32-bit table");
		return -1;
	}
	return 0;
}

/* Seize the target and stop it (tracee.h); PTRACE_DETACH lets it go on. */
static int attach(pid_t pid)
{
	if (ptrace(PTRACE_SEIZE, pid, 0, 0))
		return -1;
	return mx_stop_tracee(pid);
}

mx_remote *mx_open_live(pid_t pid, int flags, char *err, size_t errlen)
{
	mx_remote *r = calloc(1, sizeof *r);
	if (!r)
		return fail(r, err, errlen, "out of memory");
	r->pid = pid;
	r->n_images = -1;
	current = r;
	if (!(flags & MX_STOPPED)) {
		if (attach(pid))
			return fail(r, err, errlen, "ptrace attach %d: %m", (int)pid);
		r->attached = 1;
	}
	if ((flags & MX_JIT_IMAGES) && read_images(r, err, errlen))
		return fail(r, err, errlen, NULL);
	r->acc = _UPT_accessors;
	r->acc.access_mem = access_mem;
	r->acc.find_proc_info = find_proc_info;
	if (!(r->as = unw_create_addr_space(&r->acc, 0)))
		return fail(r, err, errlen, "unw_create_addr_space failed");
	/* the target moves between unwinds when a tracer single-steps it */
	unw_set_caching_policy(r->as, UNW_CACHE_NONE);
	if (!(r->upt = _UPT_create(pid)))
		return fail(r, err, errlen, "_UPT_create failed");
	return r;
}

mx_remote *mx_open_core(const char *core, const char *exe, int flags, char *err, size_t errlen)
{
	(void)core, (void)exe, (void)flags;
	snprintf(err, errlen, "libunwind-ptrace reads live processes only");
	return NULL;
}

int mx_n_images(const mx_remote *r)
{
	return r->n_images;
}

int mx_unwind(mx_remote *r, pid_t tid, mx_frame *frames, int max, char *err, size_t errlen)
{
	(void)tid; /* _UPT_create bound the handle to the main thread */
	unw_cursor_t c;
	unw_flush_cache(r->as, 0, 0);
	int rc = unw_init_remote(&c, r->as, r->upt);
	if (rc < 0) {
		snprintf(err, errlen, "unw_init_remote: %s", unw_strerror(rc));
		return -1;
	}
	int n = 0;
	do {
		unw_word_t ip, off;
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0)
			break;
		mx_frame *f = &frames[n++];
		f->pc = ip;
		f->name[0] = 0;
		unw_word_t at = n == 1 ? ip : ip - 1;
		const char *jit = mx_image_name(&r->imgs, at);
		if (jit)
			snprintf(f->name, sizeof f->name, "%s", jit);
		else if (unw_get_proc_name(&c, f->name, sizeof f->name, &off) < 0)
			f->name[0] = 0;
	} while (n < max && unw_step(&c) > 0);
	return n;
}

void mx_close(mx_remote *r)
{
	if (!r)
		return;
	if (r->upt)
		_UPT_destroy(r->upt);
	if (r->as)
		unw_destroy_addr_space(r->as);
	if (r->attached)
		ptrace(PTRACE_DETACH, r->pid, 0, 0);
	for (size_t i = 0; i < r->n_tables; i++)
		free(r->tables[i].v);
	free(r->tables);
	mx_images_free(&r->imgs);
	if (current == r)
		current = NULL;
	free(r);
}
