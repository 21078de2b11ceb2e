/* SPDX-License-Identifier: MIT */
/* test-jitdump-reader.h - reads a perf jitdump back against
 * formats/jitdump.h, as `perf inject --jit` would, but strictly: every
 * record must be well formed, in the order perf needs.
 *
 *   jd_dump_read   the header and every record: sizes inside the file and
 *                  consistent with their contents, known ids, timestamps
 *                  never going back, UNWINDING_INFO (and DEBUG_INFO, if any,
 *                  for the same address) right before each CODE_LOAD,
 *                  code_index counting up from 0, CLOSE only at the very end.
 *   jd_check_tables  a load's .eh_frame and .eh_frame_hdr, placed where
 *                  perf's genelf.c puts them, point at each other and at the
 *                  code correctly.
 *
 * Records are not aligned in the file; everything is copied out with memcpy.
 */
#ifndef JU_TEST_JITDUMP_READER_H
#define JU_TEST_JITDUMP_READER_H

#include "formats/jitdump.h"

#include <dwarf.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct jd_load {
	size_t off; /* of the CODE_LOAD record in the file */
	jd_code_load h;
	const char *name;
	const uint8_t *code;      /* h.code_size bytes */
	jd_code_unwinding_info u; /* the UNWINDING_INFO before it */
	const uint8_t *unwinding; /* u.unwinding_size bytes: .eh_frame, .eh_frame_hdr */
	bool has_debug;
	jd_code_debug_info d;   /* the DEBUG_INFO before it, if has_debug */
	const uint8_t *entries; /* d.nr_entry entries */
} jd_load;

typedef struct jd_dump {
	uint8_t *data;
	size_t size;
	jd_header h;
	jd_load *loads;
	size_t n_loads;
	size_t n_records;
	bool closed; /* ends with CLOSE */
} jd_dump;

static inline void jd_dump_free(jd_dump *d)
{
	free(d->data);
	free(d->loads);
	memset(d, 0, sizeof *d);
}

static inline int jd_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

/* A NUL-terminated string in [p, end), or NULL. */
static inline const char *jd_str(const uint8_t *p, const uint8_t *end)
{
	const uint8_t *z = memchr(p, 0, (size_t)(end - p));
	return z ? (const char *)p : NULL;
}

/* Check the DEBUG_INFO entries at p (record ends at end); count must match. */
static inline int jd_check_entries(const uint8_t *p, const uint8_t *end, uint64_t n, char *err, size_t len)
{
	for (uint64_t i = 0; i < n; i++) {
		if ((size_t)(end - p) < sizeof(jd_debug_entry))
			return jd_err(err, len, "debug entry %llu runs past its record",
				      (unsigned long long)i);
		p += sizeof(jd_debug_entry);
		const char *name = jd_str(p, end);
		if (!name)
			return jd_err(err, len, "debug entry %llu: file name not terminated",
				      (unsigned long long)i);
		p += strlen(name) + 1;
	}
	return 0;
}

/* The i-th debug entry of a load. */
static inline void jd_entry(const jd_load *l, uint64_t i, jd_debug_entry *e, const char **file)
{
	const uint8_t *p = l->entries;
	for (;;) {
		memcpy(e, p, sizeof *e);
		*file = (const char *)p + sizeof *e;
		if (i-- == 0)
			return;
		p += sizeof *e + strlen(*file) + 1;
	}
}

static inline int jd_parse(jd_dump *d, char *err, size_t len)
{
	if (d->size < sizeof d->h)
		return jd_err(err, len, "file of %zu bytes has no header", d->size);
	memcpy(&d->h, d->data, sizeof d->h);
	if (d->h.magic != JD_MAGIC || d->h.version != JD_VERSION)
		return jd_err(err, len, "magic %#x version %u", d->h.magic, d->h.version);
	if (d->h.total_size < sizeof d->h || d->h.total_size > d->size)
		return jd_err(err, len, "header total_size %u", d->h.total_size);
	uint64_t last_ts = d->h.timestamp;
	bool have_unw = false, have_dbg = false;
	jd_load cur;
	memset(&cur, 0, sizeof cur);
	size_t cap = 0;
	for (size_t off = d->h.total_size; off < d->size;) {
		jd_prefix p;
		if (d->size - off < sizeof p)
			return jd_err(err, len, "record at %zu: truncated prefix", off);
		memcpy(&p, d->data + off, sizeof p);
		if (p.total_size < sizeof p || p.total_size > d->size - off)
			return jd_err(err, len, "record at %zu: total_size %u, %zu bytes left", off,
				      p.total_size, d->size - off);
		if (d->closed)
			return jd_err(err, len, "record at %zu after CLOSE", off);
		if (p.timestamp < last_ts)
			return jd_err(err, len, "record at %zu: timestamp goes back", off);
		last_ts = p.timestamp;
		const uint8_t *rec = d->data + off, *end = rec + p.total_size;
		d->n_records++;
		switch (p.id) {
		case JD_CODE_UNWINDING_INFO:
			if (have_unw)
				return jd_err(err, len,
					      "record at %zu: a second UNWINDING_INFO before a load", off);
			if (p.total_size < sizeof cur.u)
				return jd_err(err, len, "record at %zu: short UNWINDING_INFO", off);
			memcpy(&cur.u, rec, sizeof cur.u);
			if (cur.u.unwinding_size > p.total_size - sizeof cur.u ||
			    cur.u.eh_frame_hdr_size > cur.u.unwinding_size ||
			    p.total_size - sizeof cur.u - cur.u.unwinding_size >= 8)
				return jd_err(err, len, "record at %zu: UNWINDING_INFO sizes %llu/%llu in %u",
					      off, (unsigned long long)cur.u.unwinding_size,
					      (unsigned long long)cur.u.eh_frame_hdr_size, p.total_size);
			cur.unwinding = rec + sizeof cur.u;
			have_unw = true;
			break;
		case JD_CODE_DEBUG_INFO:
			if (have_dbg)
				return jd_err(err, len, "record at %zu: a second DEBUG_INFO before a load",
					      off);
			if (p.total_size < sizeof cur.d)
				return jd_err(err, len, "record at %zu: short DEBUG_INFO", off);
			memcpy(&cur.d, rec, sizeof cur.d);
			cur.entries = rec + sizeof cur.d;
			if (jd_check_entries(cur.entries, end, cur.d.nr_entry, err, len))
				return -1;
			have_dbg = cur.has_debug = true;
			break;
		case JD_CODE_LOAD: {
			if (p.total_size < sizeof cur.h + 1)
				return jd_err(err, len, "record at %zu: short CODE_LOAD", off);
			memcpy(&cur.h, rec, sizeof cur.h);
			cur.name = jd_str(rec + sizeof cur.h, end);
			if (!cur.name)
				return jd_err(err, len, "record at %zu: name not terminated", off);
			size_t head = sizeof cur.h + strlen(cur.name) + 1;
			if (cur.h.code_size != p.total_size - head)
				return jd_err(err, len,
					      "record at %zu: code_size %llu, %zu bytes after the name", off,
					      (unsigned long long)cur.h.code_size, p.total_size - head);
			if (cur.h.code_index != d->n_loads)
				return jd_err(err, len, "record at %zu: code_index %llu, want %zu", off,
					      (unsigned long long)cur.h.code_index, d->n_loads);
			if (!have_unw)
				return jd_err(err, len, "record at %zu: CODE_LOAD %s without UNWINDING_INFO",
					      off, cur.name);
			if (have_dbg && cur.d.code_addr != cur.h.code_addr)
				return jd_err(err, len, "record at %zu: DEBUG_INFO for %#llx before %s", off,
					      (unsigned long long)cur.d.code_addr, cur.name);
			cur.code = rec + head;
			cur.off = off;
			if (d->n_loads == cap) {
				cap = cap ? 2 * cap : 16;
				jd_load *n = realloc(d->loads, cap * sizeof *n);
				if (!n)
					return jd_err(err, len, "out of memory");
				d->loads = n;
			}
			d->loads[d->n_loads++] = cur;
			memset(&cur, 0, sizeof cur);
			have_unw = have_dbg = false;
			break;
		}
		case JD_CODE_CLOSE:
			if (p.total_size != sizeof(jd_code_close))
				return jd_err(err, len, "record at %zu: CLOSE of %u bytes", off,
					      p.total_size);
			d->closed = true;
			break;
		default: return jd_err(err, len, "record at %zu: unknown id %u", off, p.id);
		}
		off += p.total_size;
	}
	if (have_unw || have_dbg)
		return jd_err(err, len, "the file ends with records for a load that never came");
	return 0;
}

/* Does /proc/self/maps show `path` mapped executable -- the marker perf
 * looks for to find a jitdump? */
static inline bool jd_marker_mapped(const char *path)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4200];
	bool found = false;
	while (f && fgets(line, sizeof line, f))
		if (strstr(line, path) && strstr(line, " r-xp "))
			found = true;
	if (f)
		fclose(f);
	return found;
}

/* The directory of this process's dump as /proc/self/maps shows it mapped
 * (its marker), in out; "" when there is none or it does not fit. */
static inline void jd_marker_dir(char *out, size_t len)
{
	char want[64], line[4200];
	snprintf(want, sizeof want, "/jit-%d.dump\n", (int)getpid());
	out[0] = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof line, f)) {
		char *slash = strstr(line, want), *path = strchr(line, '/');
		if (slash && path && strstr(line, " r-xp ") && (size_t)(slash - path) < len)
			snprintf(out, len, "%.*s", (int)(slash - path), path);
	}
	if (f)
		fclose(f);
}

/* Read and check a whole dump; 0, or -1 with a message in err. */
static inline int jd_dump_read(const char *path, jd_dump *d, char *err, size_t len)
{
	memset(d, 0, sizeof *d);
	FILE *f = fopen(path, "rb");
	if (!f)
		return jd_err(err, len, "cannot open %s", path);
	size_t cap = 1 << 16;
	d->data = malloc(cap);
	size_t n;
	while (d->data && (n = fread(d->data + d->size, 1, cap - d->size, f)) > 0) {
		d->size += n;
		if (d->size == cap)
			d->data = realloc(d->data, cap *= 2);
	}
	fclose(f);
	if (!d->data)
		return jd_err(err, len, "out of memory");
	int rc = jd_parse(d, err, len);
	if (rc)
		jd_dump_free(d);
	return rc;
}

static inline uint32_t jd_u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* The tables of a load as perf's genelf.c places them, checked against each
 * other and against the code (the blob's own bytes, `blob_size` of them;
 * code_size may add salt).  On success *n_fdes is the FDE count. */
static inline int jd_check_tables(const jd_load *l, uint64_t blob_size, size_t *n_fdes, char *err, size_t len)
{
	const uint8_t *eh = l->unwinding;
	uint64_t eh_size = l->u.unwinding_size - l->u.eh_frame_hdr_size;
	const uint8_t *hdr = eh + eh_size;
	uint64_t E = JD_ELF_EH_FRAME_ADDR(l->h.code_size), H = E + eh_size;
	uint64_t text = JD_ELF_TEXT_ADDR;
	if (l->u.eh_frame_hdr_size < 12 || hdr[0] != 1 || hdr[1] != (DW_EH_PE_pcrel | DW_EH_PE_sdata4) ||
	    hdr[2] != DW_EH_PE_udata4 || hdr[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return jd_err(err, len, "%s: .eh_frame_hdr header", l->name);
	if (H + 4 + (int32_t)jd_u32(hdr + 4) != E)
		return jd_err(err, len, "%s: eh_frame_ptr does not point at .eh_frame", l->name);
	uint32_t n = jd_u32(hdr + 8);
	if (l->u.eh_frame_hdr_size != 12 + 8ull * n || n == 0)
		return jd_err(err, len, "%s: %u FDEs in a header of %llu bytes", l->name, n,
			      (unsigned long long)l->u.eh_frame_hdr_size);
	/* The CIE first: ours, "zR", pc-relative FDE pointers. */
	uint32_t cie_len = jd_u32(eh);
	if (cie_len + 4 > eh_size || jd_u32(eh + 4) != 0 || eh[8] != 1 || strcmp((const char *)eh + 9, "zR"))
		return jd_err(err, len, "%s: the CIE", l->name);
	uint64_t prev = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t loc = H + (int32_t)jd_u32(hdr + 12 + 8 * i);
		uint64_t fde = H + (int32_t)jd_u32(hdr + 16 + 8 * i);
		if (i && loc <= prev)
			return jd_err(err, len, "%s: table not sorted at %u", l->name, i);
		prev = loc;
		if (fde < E + cie_len + 4 || fde + 24 > H)
			return jd_err(err, len, "%s: table entry %u points outside .eh_frame", l->name, i);
		const uint8_t *f = eh + (fde - E);
		uint32_t flen = jd_u32(f);
		uint64_t cie = fde + 4 - jd_u32(f + 4);
		uint64_t pc = fde + 8 + (int32_t)jd_u32(f + 8), range = jd_u32(f + 12);
		if (flen + 4 > H - fde || cie != E)
			return jd_err(err, len, "%s: FDE %u length or CIE pointer", l->name, i);
		if (pc != loc)
			return jd_err(err, len, "%s: FDE %u starts at %#llx, its table entry says %#llx",
				      l->name, i, (unsigned long long)pc, (unsigned long long)loc);
		if (pc < text || pc + range > text + blob_size || range == 0)
			return jd_err(err, len,
				      "%s: FDE %u covers [%#llx, %#llx), the code is [%#llx, %#llx)", l->name,
				      i, (unsigned long long)pc, (unsigned long long)(pc + range),
				      (unsigned long long)text, (unsigned long long)(text + blob_size));
	}
	if (jd_u32(eh + eh_size - 4) != 0)
		return jd_err(err, len, "%s: .eh_frame lacks its terminator", l->name);
	*n_fdes = n;
	return 0;
}

#endif
