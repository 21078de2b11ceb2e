/* SPDX-License-Identifier: MIT */
/* image.c - writes the in-memory ELF image of an arena (layout in image.h)
 * and the DWARF line units inside it.
 */
#include "image.h"
#include "cfi.h"
#include "formats/elfhdr.h"

#include <dwarf.h>
#include <elf.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- DWARF line units ---------------------------------------------------- */

/* Line program parameters (DWARF 4 section 6.2.4); GCC's usual choice. */
enum { LINE_BASE = -5, LINE_RANGE = 14, OPCODE_BASE = 13 };
static const uint8_t std_opcode_lengths[OPCODE_BASE - 1] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
/* Offset of the file name in a unit we write: unit_length 4, version 2,
 * header_length 4, six one-byte fields, the opcode lengths, and the empty
 * include_directories list. */
enum { LINE_FILE_OFF = 4 + 2 + 4 + 6 + (OPCODE_BASE - 1) + 1 };

static void lne(byte_buf *b, uint8_t op, size_t operand_len)
{
	buf_u8(b, 0); /* extended opcode */
	buf_uleb(b, 1 + operand_len);
	buf_u8(b, op);
}

/* The unit of image_write_line_unit, with files[0..n_files) in its header
 * and row i in file row_file[i] (NULL: all in files[0]). */
static void write_line_unit(byte_buf *b, const char *const *files, size_t n_files, const uint32_t *row_file,
			    const ju_line *lines, size_t n, uint64_t start, uint64_t size)
{
	size_t unit = buf_len32_begin(b);
	buf_u16(b, 4);                   /* version */
	size_t hdr = buf_len32_begin(b); /* header_length */
	buf_u8(b, 1);                    /* minimum_instruction_length */
	buf_u8(b, 1);                    /* maximum_operations_per_instruction */
	buf_u8(b, 1);                    /* default_is_stmt */
	buf_u8(b, (uint8_t)LINE_BASE);   /* line_base */
	buf_u8(b, LINE_RANGE);           /* line_range */
	buf_u8(b, OPCODE_BASE);          /* opcode_base */
	buf_bytes(b, std_opcode_lengths, sizeof std_opcode_lengths);
	buf_u8(b, 0); /* include_directories: none */
	for (size_t f = 0; f < n_files; f++) {
		buf_str(b, files[f]); /* file_names[f + 1] */
		buf_uleb(b, 0);       /*   directory index */
		buf_uleb(b, 0);       /*   modification time */
		buf_uleb(b, 0);       /*   length */
	}
	buf_u8(b, 0); /* end of file_names */
	buf_len32_end(b, hdr);

	lne(b, DW_LNE_set_address, 8);
	buf_u64(b, start);
	uint64_t addr = 0;
	int64_t line = 1;
	uint32_t file = 0; /* the file register, less one */
	for (size_t i = 0; i < n; i++) {
		if (row_file && row_file[i] != file) {
			file = row_file[i];
			buf_u8(b, DW_LNS_set_file);
			buf_uleb(b, file + 1u);
		}
		uint64_t da = lines[i].offset - addr;
		int64_t dl = (int64_t)lines[i].line - line;
		uint64_t special = (uint64_t)(dl - LINE_BASE) + LINE_RANGE * da + OPCODE_BASE;
		if (dl >= LINE_BASE && dl < LINE_BASE + LINE_RANGE && special <= 255) {
			buf_u8(b, (uint8_t)special); /* advance address and line, append a row */
		} else {
			if (dl) {
				buf_u8(b, DW_LNS_advance_line);
				buf_sleb(b, dl);
			}
			if (da) {
				buf_u8(b, DW_LNS_advance_pc);
				buf_uleb(b, da);
			}
			buf_u8(b, DW_LNS_copy);
		}
		addr = lines[i].offset;
		line = lines[i].line;
	}
	buf_u8(b, DW_LNS_advance_pc);
	buf_uleb(b, size - addr);
	lne(b, DW_LNE_end_sequence, 0);
	buf_len32_end(b, unit);
}

void image_write_line_unit(byte_buf *b, const char *file, const ju_line *lines, size_t n, uint64_t start,
			   uint64_t size)
{
	write_line_unit(b, &file, 1, NULL, lines, n, start, size);
}

const char *image_line_unit_file(const uint8_t *unit)
{
	return (const char *)unit + LINE_FILE_OFF;
}

/* The file names in the header of a unit that ends at `end`, into names
 * (when not NULL); their count, or -1. */
static long unit_files(const uint8_t *unit, const uint8_t *end, const char **names)
{
	long n = 0;
	for (const uint8_t *f = unit + LINE_FILE_OFF; f < end && *f; n++) {
		const uint8_t *nul = memchr(f, 0, (size_t)(end - f));
		if (!nul || end - nul < 4) /* the name, then three ULEBs of 0 */
			return -1;
		if (names)
			names[n] = (const char *)f;
		f = nul + 4;
	}
	return n;
}

bool image_line_unit_has_files(const uint8_t *unit, size_t len)
{
	return len >= LINE_FILE_OFF + 8 && unit_files(unit, unit + len, NULL) > 1;
}

/* The rows of image_decode_line_unit from the program at [p, end). */
static long decode_rows(const uint8_t *p, const uint8_t *end, uint64_t start, ju_line *rows,
			const char **files, const char **names, long n_names, size_t max_rows)
{
	uint64_t addr = 0;
	int64_t line = 1;
	uint64_t file = 1;
	size_t n = 0;
	byte_rd r = rd_make(p, (size_t)(end - p));
	/* Only the opcodes image_write_line_unit emits are understood. */
	while (rd_left(&r)) {
		uint8_t op = rd_u8(&r);
		if (op >= OPCODE_BASE) {
			uint8_t adj = op - OPCODE_BASE;
			addr += adj / LINE_RANGE;
			line += LINE_BASE + adj % LINE_RANGE;
		} else if (op == DW_LNS_advance_pc) {
			addr += rd_uleb(&r);
			continue;
		} else if (op == DW_LNS_advance_line) {
			line += rd_sleb(&r);
			continue;
		} else if (op == DW_LNS_set_file) { /* a guest frame's file */
			file = rd_uleb(&r);
			if (files && (file == 0 || file > (uint64_t)n_names))
				return -1;
			continue;
		} else if (op == 0) {
			uint64_t len = rd_uleb(&r); /* an extended opcode of len bytes */
			if (len == 0 || len > rd_left(&r))
				return -1;
			const uint8_t *x = rd_skip(&r, (size_t)len);
			if (x[0] == DW_LNE_end_sequence)
				return (long)n;
			if (x[0] == DW_LNE_set_address && len == 9)
				addr = load_u64(x + 1) - start;
			continue;
		} else if (op != DW_LNS_copy) {
			return -1;
		}
		if (n < max_rows && rows && line > 0 && line <= UINT32_MAX && addr <= UINT32_MAX)
			rows[n] = (ju_line){ (uint32_t)addr, (uint32_t)line };
		if (n < max_rows && files)
			files[n] = names[file - 1];
		n++;
	}
	return -1;
}

long image_decode_line_unit(const uint8_t *unit, size_t len, uint64_t start, ju_line *rows,
			    const char **files, size_t max_rows)
{
	if (len < LINE_FILE_OFF + 8)
		return -1;
	const uint8_t *end = unit + len;
	const uint8_t *p = unit + 4 + 2 + 4 + load_u32(unit + 6);
	if (p > end)
		return -1;
	const char **names = NULL;
	long n_names = 0;
	if (files) {
		n_names = unit_files(unit, p, NULL);
		names = n_names > 0 ? ju__malloc((size_t)n_names * sizeof *names) : NULL;
		if (!names)
			return -1;
		unit_files(unit, p, names);
	}
	long n = decode_rows(p, end, start, rows, files, names, n_names, max_rows);
	free(names);
	return n;
}

/* ---- ELF image ------------------------------------------------------------ */

/* Abbreviation codes.  An image whose blobs have no guest frames has the
 * first two only, so its bytes do not depend on the feature. */
enum {
	ABBREV_CU = 1,
	ABBREV_SUBPROGRAM = 2,
	ABBREV_SUBPROGRAM_KIDS = 3, /* a blob's function with guest frames inside */
	ABBREV_ABSTRACT = 4,        /* a guest function, once per unit */
	ABBREV_INLINED = 5,         /* a guest frame */
	ABBREV_INLINED_KIDS = 6,    /* a guest frame with guest frames inside */
};

static void abbrev_subprogram(byte_buf *b, uint32_t code, uint8_t children)
{
	buf_uleb(b, code);
	buf_uleb(b, DW_TAG_subprogram);
	buf_u8(b, children);
	/* clang-format off */
	buf_uleb(b, DW_AT_name);       buf_uleb(b, DW_FORM_string);
	buf_uleb(b, DW_AT_low_pc);     buf_uleb(b, DW_FORM_addr);
	buf_uleb(b, DW_AT_high_pc);    buf_uleb(b, DW_FORM_data4);
	buf_uleb(b, DW_AT_external);   buf_uleb(b, DW_FORM_flag_present);
	buf_uleb(b, 0);                buf_uleb(b, 0);
	/* clang-format on */
}

static void abbrev_inlined(byte_buf *b, uint32_t code, uint8_t children)
{
	buf_uleb(b, code);
	buf_uleb(b, DW_TAG_inlined_subroutine);
	buf_u8(b, children);
	/* clang-format off */
	buf_uleb(b, DW_AT_abstract_origin); buf_uleb(b, DW_FORM_ref4);
	buf_uleb(b, DW_AT_low_pc);          buf_uleb(b, DW_FORM_addr);
	buf_uleb(b, DW_AT_high_pc);         buf_uleb(b, DW_FORM_data4);
	buf_uleb(b, DW_AT_call_file);       buf_uleb(b, DW_FORM_udata);
	buf_uleb(b, DW_AT_call_line);       buf_uleb(b, DW_FORM_udata);
	buf_uleb(b, 0);                     buf_uleb(b, 0);
	/* clang-format on */
}

static void write_abbrevs(byte_buf *b, bool guest_frames)
{
	buf_uleb(b, ABBREV_CU);
	buf_uleb(b, DW_TAG_compile_unit);
	buf_u8(b, DW_CHILDREN_yes);
	/* clang-format off */
	buf_uleb(b, DW_AT_name);       buf_uleb(b, DW_FORM_string);
	buf_uleb(b, DW_AT_low_pc);     buf_uleb(b, DW_FORM_addr);
	buf_uleb(b, DW_AT_high_pc);    buf_uleb(b, DW_FORM_data4);  /* a length (DWARF 4) */
	buf_uleb(b, DW_AT_stmt_list);  buf_uleb(b, DW_FORM_sec_offset);
	buf_uleb(b, 0);                buf_uleb(b, 0);
	/* clang-format on */
	abbrev_subprogram(b, ABBREV_SUBPROGRAM, DW_CHILDREN_no);
	if (guest_frames) {
		abbrev_subprogram(b, ABBREV_SUBPROGRAM_KIDS, DW_CHILDREN_yes);
		buf_uleb(b, ABBREV_ABSTRACT);
		buf_uleb(b, DW_TAG_subprogram);
		buf_u8(b, DW_CHILDREN_no);
		/* clang-format off */
		buf_uleb(b, DW_AT_name);       buf_uleb(b, DW_FORM_string);
		buf_uleb(b, DW_AT_decl_file);  buf_uleb(b, DW_FORM_udata);
		buf_uleb(b, DW_AT_inline);     buf_uleb(b, DW_FORM_data1);
		buf_uleb(b, 0);                buf_uleb(b, 0);
		/* clang-format on */
		abbrev_inlined(b, ABBREV_INLINED, DW_CHILDREN_no);
		abbrev_inlined(b, ABBREV_INLINED_KIDS, DW_CHILDREN_yes);
	}
	buf_uleb(b, 0); /* end of the table */
}

static size_t cu_size(const src_rec *s)
{
	if (s->rec->info_len)
		return s->rec->info_len;
	const char *file = image_line_unit_file(s->base + s->rec->line_off);
	return 4 + 2 + 4 + 1                      /* unit header */
	       + 1 + strlen(file) + 1 + 8 + 4 + 4 /* compile unit */
	       + 1 + s->rec->name_len + 1 + 8 + 4 /* subprogram */
	       + 1;                               /* end of children */
}

/* Where DW_AT_stmt_list is in a unit that write_cu or image_write_inline_cu
 * wrote: after the unit header, the abbreviation code, DW_AT_name (the
 * file), DW_AT_low_pc and DW_AT_high_pc. */
static size_t cu_stmt_list_off(const uint8_t *cu)
{
	enum { HDR = 4 + 2 + 4 + 1 + 1 };
	return HDR + strlen((const char *)cu + HDR) + 1 + 8 + 4;
}

static void write_cu(byte_buf *b, const src_rec *s, uint32_t stmt_list)
{
	const blob_rec *r = s->rec;
	if (r->info_len) { /* written when staged (image_write_inline_cu) */
		const uint8_t *cu = s->base + r->info_off;
		size_t at = b->len;
		buf_bytes(b, cu, r->info_len);
		buf_put_u32(b, at + cu_stmt_list_off(cu), stmt_list);
		return;
	}
	size_t unit = buf_len32_begin(b);
	buf_u16(b, 4); /* version */
	buf_u32(b, 0); /* debug_abbrev_offset */
	buf_u8(b, 8);  /* address_size */
	buf_uleb(b, ABBREV_CU);
	buf_str(b, image_line_unit_file(s->base + r->line_off)); /* DW_AT_name */
	buf_u64(b, r->start);                                    /* DW_AT_low_pc */
	buf_u32(b, r->size);                                     /* DW_AT_high_pc */
	buf_u32(b, stmt_list);                                   /* DW_AT_stmt_list */
	buf_uleb(b, ABBREV_SUBPROGRAM);
	buf_bytes(b, s->base + r->name_off, r->name_len + 1u); /* DW_AT_name */
	buf_u64(b, r->start);                                  /* DW_AT_low_pc */
	buf_u32(b, r->size);                                   /* DW_AT_high_pc */
	buf_u8(b, 0);                                          /* end of children */
	buf_len32_end(b, unit);
}

/* ---- guest frames (ju_inline) ---------------------------------------------- */

/* Keys i and j of a set: <0, 0, >0 as strcmp. */
typedef int key_cmp(size_t i, size_t j, const void *keys);

typedef struct by_key {
	key_cmp *cmp;
	const void *keys;
} by_key;

static int cmp_index(const void *x, const void *y, void *ctx)
{
	const by_key *k = ctx;
	size_t i = *(const uint32_t *)x, j = *(const uint32_t *)y;
	int d = k->cmp(i, j, k->keys);
	return d ? d : (i > j) - (i < j);
}

/* Number the distinct keys among n in the order of their first appearance
 * (id[i] for key i); returns how many there are, or -1 out of memory.  A
 * few keys (a JIT's usual tree) are compared pairwise; more are sorted, so
 * the largest trees stay O(n log n). */
static long number_keys(size_t n, key_cmp *cmp, const void *keys, uint32_t *id)
{
	enum { FEW = 24 };
	if (n <= FEW) {
		uint32_t first[FEW], next = 0; /* first[d]: the key where distinct key d appears */
		for (size_t i = 0; i < n; i++) {
			uint32_t d = 0;
			while (d < next && cmp(first[d], i, keys))
				d++;
			if (d == next)
				first[next++] = (uint32_t)i;
			id[i] = d;
		}
		return next;
	}
	uint32_t *order = ju__malloc(n * sizeof *order);
	if (!order)
		return -1;
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof *order, cmp_index, &(by_key){ cmp, keys });
	/* first the index where each key first appears (equal keys sort by index) */
	for (size_t k = 0; k < n; k++)
		id[order[k]] = k && !cmp(order[k - 1], order[k], keys) ? id[order[k - 1]] : order[k];
	free(order);
	uint32_t next = 0;
	for (size_t i = 0; i < n; i++)
		id[i] = id[i] == i ? next++ : id[id[i]];
	return next;
}

static int cmp_string(size_t i, size_t j, const void *keys)
{
	const char *const *s = keys;
	return strcmp(s[i], s[j]);
}

typedef struct fn_keys {
	const ju_inline *in;
	const uint32_t *file;
} fn_keys;

/* A guest function is its name and its file. */
static int cmp_function(size_t i, size_t j, const void *keys)
{
	const fn_keys *k = keys;
	int d = strcmp(k->in[i].name, k->in[j].name);
	return d ? d : (k->file[i] > k->file[j]) - (k->file[i] < k->file[j]);
}

/* The file of each line row: its innermost inline's.  The inlines over an
 * offset are a path down the tree; in pre-order that path is a stack. */
static void row_files(const ju_blob *b, inline_plan *p)
{
	const ju_inline *in = b->inlines;
	uint32_t path[JU_INLINE_DEPTH_MAX]; /* inlines, index + 1, outermost first */
	size_t depth = 0, j = 0;
	for (size_t r = 0; r < b->n_lines; r++) {
		uint32_t off = b->lines[r].offset;
		for (; j < b->n_inlines && in[j].start <= off; j++) {
			while (depth && path[depth - 1] != in[j].parent)
				depth--;
			path[depth++] = (uint32_t)j + 1;
		}
		while (depth && in[path[depth - 1] - 1].end <= off)
			depth--;
		p->row_file[r] = depth ? p->file[path[depth - 1] - 1] : 0;
	}
}

void image_plan_free(inline_plan *p)
{
	free(p->files); /* the one block the plan's arrays share */
	memset(p, 0, sizeof *p);
}

int image_plan_inlines(const ju_blob *b, inline_plan *p)
{
	size_t n = b->n_inlines, n_keys = 1 + 2 * n;
	memset(p, 0, sizeof *p);
	/* one block: the files, the keys (pointers), then the numbers; n is at
	 * most JU_INLINE_MAX and n_lines bounded by the blob's size, so no
	 * product here overflows */
	size_t ptrs = 2 * n_keys, nums = n_keys + 5 * n + b->n_lines;
	const char **block = ju__malloc(ptrs * sizeof(char *) + nums * sizeof(uint32_t));
	if (!block)
		return JU_ENOMEM;
	p->files = block;
	const char **key = block + n_keys;
	uint32_t *id = (uint32_t *)(block + ptrs);
	p->file = id + n_keys;
	p->call_file = p->file + n;
	p->fn = p->call_file + n;
	p->fn_first = p->fn + n;
	p->fn_off = p->fn_first + n;
	p->row_file = p->fn_off + n;
	/* the blob's file, then each inline's own and its call's */
	key[0] = b->file;
	for (size_t i = 0; i < n; i++) {
		const ju_inline *in = &b->inlines[i];
		key[1 + 2 * i] = in->file ? in->file : b->file;
		key[2 + 2 * i] = in->call_file ? in->call_file
				 : in->parent  ? key[1 + 2 * (in->parent - 1)]
					       : b->file;
	}
	long n_files = number_keys(n_keys, cmp_string, key, id), n_fns = -1;
	if (n_files >= 0) {
		for (size_t k = 0; k < n_keys; k++)
			p->files[id[k]] = key[k];
		p->n_files = (size_t)n_files;
		for (size_t i = 0; i < n; i++) {
			p->file[i] = id[1 + 2 * i];
			p->call_file[i] = id[2 + 2 * i];
		}
		n_fns = number_keys(n, cmp_function, &(fn_keys){ b->inlines, p->file }, p->fn);
	}
	if (n_fns < 0) {
		image_plan_free(p);
		return JU_ENOMEM;
	}
	p->n_fns = (size_t)n_fns;
	for (size_t i = n; i-- > 0;)
		p->fn_first[p->fn[i]] = (uint32_t)i;
	row_files(b, p);
	return 0;
}

void image_write_inline_line_unit(byte_buf *b, const ju_blob *blob, const inline_plan *p, uint64_t start)
{
	write_line_unit(b, p->files, p->n_files, p->row_file, blob->lines, blob->n_lines, start, blob->size);
}

/* The DW_TAG_inlined_subroutine tree, in the order of the array (pre-order:
 * a DIE's children follow it, and a null entry ends them). */
static void write_guest_frames(byte_buf *b, const ju_blob *blob, const inline_plan *p, uint64_t start)
{
	const ju_inline *in = blob->inlines;
	size_t n = blob->n_inlines;
	uint32_t open[JU_INLINE_DEPTH_MAX]; /* inlines (index + 1) whose children are written */
	size_t depth = 0;
	for (size_t i = 0; i < n; i++) {
		bool kids = i + 1 < n && in[i + 1].parent == i + 1;
		buf_uleb(b, kids ? ABBREV_INLINED_KIDS : ABBREV_INLINED);
		buf_u32(b, p->fn_off[p->fn[i]]);     /* DW_AT_abstract_origin */
		buf_u64(b, start + in[i].start);     /* DW_AT_low_pc */
		buf_u32(b, in[i].end - in[i].start); /* DW_AT_high_pc: a length */
		buf_uleb(b, p->call_file[i] + 1u);   /* DW_AT_call_file */
		buf_uleb(b, in[i].call_line);        /* DW_AT_call_line */
		if (kids) {
			open[depth++] = (uint32_t)i + 1;
			continue;
		}
		uint32_t next_parent = i + 1 < n ? in[i + 1].parent : 0;
		while (depth && open[depth - 1] != next_parent) {
			buf_u8(b, 0); /* end of its children */
			depth--;
		}
	}
}

void image_write_inline_cu(byte_buf *b, const ju_blob *blob, inline_plan *p, uint64_t start)
{
	size_t unit = buf_len32_begin(b);
	buf_u16(b, 4); /* version */
	buf_u32(b, 0); /* debug_abbrev_offset */
	buf_u8(b, 8);  /* address_size */
	buf_uleb(b, ABBREV_CU);
	buf_str(b, blob->file);           /* DW_AT_name */
	buf_u64(b, start);                /* DW_AT_low_pc */
	buf_u32(b, (uint32_t)blob->size); /* DW_AT_high_pc */
	buf_u32(b, 0);                    /* DW_AT_stmt_list: each image's */
	for (size_t f = 0; f < p->n_fns; f++) {
		uint32_t i = p->fn_first[f];
		p->fn_off[f] = (uint32_t)(b->len - unit); /* what DW_FORM_ref4 counts from */
		buf_uleb(b, ABBREV_ABSTRACT);
		buf_str(b, blob->inlines[i].name); /* DW_AT_name */
		buf_uleb(b, p->file[i] + 1u);      /* DW_AT_decl_file */
		buf_u8(b, DW_INL_inlined);         /* DW_AT_inline */
	}
	buf_uleb(b, ABBREV_SUBPROGRAM_KIDS);
	buf_str(b, blob->name);           /* DW_AT_name */
	buf_u64(b, start);                /* DW_AT_low_pc */
	buf_u32(b, (uint32_t)blob->size); /* DW_AT_high_pc */
	write_guest_frames(b, blob, p, start);
	buf_u8(b, 0); /* end of the subprogram's children */
	buf_u8(b, 0); /* end of the unit's children */
	buf_len32_end(b, unit);
}

/* Read back the tree that image_write_inline_cu wrote: ranges, parents and
 * names (pointing into the unit; files and calls are not read).  For the
 * perf map, which writes a blob's lines again when it compacts or forks
 * and has nothing else that holds the tree.  Returns the count, or -1 for
 * a unit this writer did not write. */
long image_decode_inline_cu(const uint8_t *cu, size_t len, ju_inline *out, size_t max)
{
	byte_rd r = rd_make(cu, len);
	rd_skip(&r, 4 + 2 + 4 + 1); /* unit header */
	if (rd_uleb(&r) != ABBREV_CU)
		return -1;
	rd_skip(&r, strnlen((const char *)r.p, rd_left(&r)) + 1); /* DW_AT_name */
	uint64_t start = rd_u64(&r);                              /* DW_AT_low_pc */
	rd_skip(&r, 4 + 4);                                       /* DW_AT_high_pc, DW_AT_stmt_list */
	uint64_t code = rd_uleb(&r);
	for (; code == ABBREV_ABSTRACT; code = rd_uleb(&r)) {
		rd_skip(&r, strnlen((const char *)r.p, rd_left(&r)) + 1); /* DW_AT_name */
		rd_uleb(&r);                                              /* DW_AT_decl_file */
		rd_u8(&r);                                                /* DW_AT_inline */
	}
	if (code != ABBREV_SUBPROGRAM_KIDS)
		return -1;
	rd_skip(&r, strnlen((const char *)r.p, rd_left(&r)) + 1 + 8 + 4);
	uint32_t open[JU_INLINE_DEPTH_MAX + 1] = { 0 }; /* open[d]: the parent at depth d */
	size_t depth = 0, n = 0;
	while (rd_left(&r)) {
		code = rd_uleb(&r);
		if (code == 0) { /* the end of a parent's children */
			if (depth-- == 0)
				return (long)n;
			continue;
		}
		if (code != ABBREV_INLINED && code != ABBREV_INLINED_KIDS)
			return -1;
		uint32_t origin = rd_u32(&r);
		uint64_t low = rd_u64(&r);
		uint32_t size = rd_u32(&r);
		rd_uleb(&r); /* DW_AT_call_file */
		uint64_t call_line = rd_uleb(&r);
		if (r.failed || origin >= len || cu[origin] != ABBREV_ABSTRACT || low < start ||
		    low - start + size > UINT32_MAX)
			return -1;
		const char *name = (const char *)cu + origin + 1; /* after ABBREV_ABSTRACT */
		if (n < max)
			out[n] = (ju_inline){ .start = (uint32_t)(low - start),
					      .end = (uint32_t)(low - start + size),
					      .parent = open[depth],
					      .call_line = (uint32_t)call_line,
					      .name = name };
		n++;
		if (code == ABBREV_INLINED_KIDS) {
			if (depth == JU_INLINE_DEPTH_MAX)
				return -1;
			open[++depth] = (uint32_t)n;
		}
	}
	return -1;
}

static const char shstrtab[] = "\0.text\0.eh_frame\0.symtab\0.strtab\0.debug_abbrev\0"
			       ".debug_info\0.debug_aranges\0.debug_line\0.shstrtab";

/* One address range set per compile unit (DWARF 4 section 6.1.2). */
enum { ARANGES_SET_SIZE = 4 + 2 + 4 + 1 + 1 + 4 + 16 + 16 };

static void write_aranges(byte_buf *b, uint32_t cu_off, uint64_t start, uint64_t size)
{
	size_t set = buf_len32_begin(b);
	buf_u16(b, 2);      /* version */
	buf_u32(b, cu_off); /* debug_info_offset */
	buf_u8(b, 8);       /* address_size */
	buf_u8(b, 0);       /* segment_selector_size */
	buf_zeros(b, 4);    /* pad tuples to 16 bytes */
	buf_u64(b, start);  /* the unit's one range */
	buf_u64(b, size);
	buf_u64(b, 0); /* terminator */
	buf_u64(b, 0);
	buf_len32_end(b, set);
}

static uint32_t shname_lookup(const char *name)
{
	/* shstrtab's names are unique and none is a suffix of another */
	const char *at = memmem(shstrtab, sizeof shstrtab, name, strlen(name) + 1);
	return at ? (uint32_t)(at - shstrtab) : 0;
}

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Section sizes and offsets of an image being built. */
typedef struct layout {
	size_t off[SEC_COUNT], size[SEC_COUNT], shoff, total;
	bool guest_frames; /* a blob has them: the larger abbreviation table */
	/* Where each CIE a record names (blob_rec.cie) is, from the start of
	 * .eh_frame; 0 for the standard CIE and for personality CIEs no record
	 * of the image names (they are not written). */
	uint32_t cie_off[JU_PERSONALITY_MAX + 1];
} layout;

/* The bytes every image repeats, encoded once per architecture: its CIE
 * and the abbreviation table. */
typedef struct templates {
	const ju_arch *arch;
	uint8_t cie[64], abbrev[2][160]; /* [1]: with the guest frames' shapes */
	size_t cie_len, abbrev_len[2];
	Elf64_Shdr shdr[SEC_COUNT]; /* section headers, addresses and sizes to fill */
} templates;

static void shdr_templates(Elf64_Shdr *out);

static const templates *templates_for(const ju_arch *arch)
{
	static templates t[2];
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	for (int i = 0; i < 2; i++)
		if (__atomic_load_n(&t[i].arch, __ATOMIC_ACQUIRE) == arch)
			return &t[i];
	pthread_mutex_lock(&lock);
	int i = t[0].arch && t[0].arch != arch;
	if (t[i].arch != arch) {
		byte_buf b;
		buf_init(&b, t[i].cie, sizeof t[i].cie);
		cfi_write_cie(arch, &b, CFI_ENC_ABS8);
		t[i].cie_len = b.len;
		for (int g = 0; g < 2; g++) {
			buf_init(&b, t[i].abbrev[g], sizeof t[i].abbrev[g]);
			write_abbrevs(&b, g);
			t[i].abbrev_len[g] = b.len;
		}
		shdr_templates(t[i].shdr);
		__atomic_store_n(&t[i].arch, arch, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&lock);
	return &t[i];
}

/* Write the personality CIE of key k (blob_rec.cie) at the end of b. */
static void write_pers_cie(const templates *tp, const cie_set *cies, uint32_t k, byte_buf *b)
{
	const cie_key *key = &cies->keys[k - 1];
	cfi_write_cie_personality(tp->arch, b, key->personality, key->lsda);
}

/* Place the personality CIEs the records name after the standard one, in
 * key order (an image without personalities keeps its bytes); returns the
 * bytes they take. */
static size_t plan_cies(const templates *tp, const cie_set *cies, const src_rec *src, size_t n, layout *L)
{
	bool any = false;
	for (size_t i = 0; i < n; i++)
		if (src[i].rec->cie) {
			L->cie_off[src[i].rec->cie] = 1; /* named; placed below */
			any = true;
		}
	if (!any)
		return 0;
	size_t at = tp->cie_len;
	for (uint32_t k = 1; k <= cies->n; k++) {
		if (!L->cie_off[k])
			continue;
		uint8_t scratch[128];
		byte_buf b;
		buf_init(&b, scratch, sizeof scratch);
		write_pers_cie(tp, cies, k, &b);
		L->cie_off[k] = (uint32_t)at;
		at += b.len;
	}
	return at - tp->cie_len;
}

static void plan(const templates *tp, const cie_set *cies, const src_rec *src, size_t n, layout *L)
{
	/* cie_off is read up to the context's CIEs only (plan_cies, write_image) */
	memset(L, 0, offsetof(layout, cie_off) + (cies->n + 1) * sizeof L->cie_off[0]);
	L->size[SEC_EH_FRAME] = tp->cie_len + plan_cies(tp, cies, src, n, L) + 4;
	L->size[SEC_SYMTAB] = sizeof(Elf64_Sym);
	L->size[SEC_STRTAB] = 1;
	for (size_t i = 0; i < n; i++) {
		const blob_rec *r = src[i].rec;
		L->size[SEC_EH_FRAME] += image_slot_len(r->fde_len);
		L->size[SEC_SYMTAB] += sizeof(Elf64_Sym);
		L->size[SEC_STRTAB] += r->name_len + 1u;
		if (r->line_len) { /* guest frames come with lines */
			L->guest_frames |= r->info_len != 0;
			L->size[SEC_DEBUG_INFO] += cu_size(&src[i]);
			L->size[SEC_DEBUG_ARANGES] += ARANGES_SET_SIZE;
			L->size[SEC_DEBUG_LINE] += r->line_len;
		}
	}
	L->size[SEC_DEBUG_ABBREV] = tp->abbrev_len[L->guest_frames];
	L->size[SEC_SHSTRTAB] = sizeof shstrtab;
	static const size_t align[SEC_COUNT] = { [SEC_EH_FRAME] = 8, [SEC_SYMTAB] = 8 };
	size_t at = sizeof(Elf64_Ehdr);
	for (int s = SEC_EH_FRAME; s < SEC_COUNT; s++) {
		at = align_up(at, align[s] ? align[s] : 1);
		L->off[s] = at;
		at += L->size[s];
	}
	L->shoff = align_up(at, 8);
	L->total = L->shoff + SEC_COUNT * sizeof(Elf64_Shdr);
}

static void shdr_templates(Elf64_Shdr *out)
{
	static const struct {
		const char *name;
		uint32_t type;
		uint64_t flags, entsize, align;
	} S[SEC_COUNT] = {
		[SEC_TEXT] = { ".text", SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, 0, 16 },
		[SEC_EH_FRAME] = { ".eh_frame", SHT_PROGBITS, SHF_ALLOC, 0, 8 },
		[SEC_SYMTAB] = { ".symtab", SHT_SYMTAB, 0, sizeof(Elf64_Sym), 8 },
		[SEC_STRTAB] = { ".strtab", SHT_STRTAB, 0, 0, 1 },
		[SEC_DEBUG_ABBREV] = { ".debug_abbrev", SHT_PROGBITS, 0, 0, 1 },
		[SEC_DEBUG_INFO] = { ".debug_info", SHT_PROGBITS, 0, 0, 1 },
		[SEC_DEBUG_ARANGES] = { ".debug_aranges", SHT_PROGBITS, 0, 0, 1 },
		[SEC_DEBUG_LINE] = { ".debug_line", SHT_PROGBITS, 0, 0, 1 },
		[SEC_SHSTRTAB] = { ".shstrtab", SHT_STRTAB, 0, 0, 1 },
	};
	memset(out, 0, SEC_COUNT * sizeof *out);
	for (int s = 1; s < SEC_COUNT; s++) {
		out[s].sh_name = shname_lookup(S[s].name);
		out[s].sh_type = S[s].type;
		out[s].sh_flags = S[s].flags;
		out[s].sh_addralign = S[s].align;
		out[s].sh_entsize = S[s].entsize;
	}
	out[SEC_SYMTAB].sh_link = SEC_STRTAB;
	out[SEC_SYMTAB].sh_info = 1; /* all symbols after the null one are global */
}

static void write_shdrs(byte_buf *b, const templates *tp, const layout *L, uint64_t lo, uint64_t hi,
			uint64_t image_addr)
{
	Elf64_Shdr sh[SEC_COUNT];
	memcpy(sh, tp->shdr, sizeof sh);
	for (int s = 1; s < SEC_COUNT; s++) {
		sh[s].sh_offset = L->off[s];
		sh[s].sh_size = L->size[s];
	}
	sh[SEC_TEXT].sh_addr = lo; /* the real code: gdb/lldb load address */
	sh[SEC_TEXT].sh_offset = L->off[SEC_EH_FRAME];
	sh[SEC_TEXT].sh_size = hi - lo;
	sh[SEC_EH_FRAME].sh_addr = image_addr + L->off[SEC_EH_FRAME]; /* where the bytes are */
	buf_align(b, 8, 0);
	buf_bytes(b, sh, sizeof sh);
}

/* Within this distance of the code, every FDE offset of an arena (whose
 * span is at most 1 GiB, arena.c) fits libunwind's 32-bit table entries. */
#define NEAR_LIMIT ((uint64_t)1 << 30)

static bool is_near(const void *p, uint64_t near)
{
	uint64_t at = (uint64_t)(uintptr_t)p;
	return (at > near ? at - near : near - at) < NEAR_LIMIT;
}

/* Map len bytes at exactly `hint`, or fail, never replacing a mapping. */
static void *map_at(uint64_t hint, size_t len)
{
	if (ju__fault())
		return NULL;
	void *p = mmap((void *)(uintptr_t)hint, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if ((uint64_t)(uintptr_t)p != hint) { /* a kernel before 4.17 took it as a hint */
		munmap(p, len);
		return NULL;
	}
	return p;
}

static void *alloc_image(size_t size, image_alloc how, uint64_t near, bool *mapped)
{
	*mapped = false;
	if (!how.near_code)
		return ju__malloc(size);
	/* libunwind's remote tables hold 32-bit offsets from the code: find free
	 * pages close to it, below and above, widening the search. */
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	size_t len = align_up(size, (size_t)pg);
	uint64_t base = near & ~(pg - 1);
	for (uint64_t step = 16u << 20; step < NEAR_LIMIT; step *= 2) {
		for (int side = 0; side < 2; side++) {
			uint64_t hint = side ? base + step : base - step - len;
			if (hint > base + step || (side && hint < base))
				continue; /* wrapped around the address space */
			void *p = map_at(hint, len);
			if (p) {
				*mapped = true;
				return p;
			}
		}
	}
	/* Last, wherever the kernel likes, if that happens to be near. */
	if (ju__fault())
		return NULL;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED && is_near(p, near)) {
		*mapped = true;
		return p;
	}
	if (p != MAP_FAILED)
		munmap(p, len);
	return NULL;
}

void image_release(uint8_t *image, size_t size, bool mapped)
{
	if (!image)
		return;
	if (mapped)
		munmap(image, align_up(size, (size_t)sysconf(_SC_PAGESIZE)));
	else
		free(image);
}

static void free_image(arena *a)
{
	image_release(a->image, a->image_size, a->image_mapped);
	a->image = NULL;
}

void image_free(arena *a)
{
	free_image(a);
	if (a->side)
		for (uint32_t k = 0; k < a->n; k++)
			free(a->side[k]);
	free(a->side);
	a->side = NULL;
	free(a->recs);
	a->recs = NULL;
}

static const uint8_t *src_fde(const src_rec *s)
{
	return s->fde ? s->fde : s->base + s->rec->fde_off;
}

/* Copy a record's FDE into a slot of image_slot_len bytes (DW_CFA_nop
 * after its instructions), pointing it at the CIE at cie_off. */
static void copy_fdes(byte_buf *b, const src_rec *s, size_t cie_off)
{
	const uint8_t *p = src_fde(s), *end = p + s->rec->fde_len;
	size_t first = b->len;
	while (p + 4 <= end) {
		size_t len = 4 + (size_t)load_u32(p);
		size_t at = b->len;
		buf_bytes(b, p, len);
		if (!buf_ok(b))
			return;
		buf_put_u32(b, at + FDE_OFF_CIE_PTR, (uint32_t)(at + FDE_OFF_CIE_PTR - cie_off));
		p += len;
		if (p + 4 > end) { /* the last one takes the padding */
			size_t pad = image_slot_len(s->rec->fde_len) - (b->len - first);
			buf_zeros(b, pad);
			buf_put_u32(b, at, (uint32_t)(b->len - at - 4));
		}
	}
}

/* Lay out and write the image of n records into img (L->total bytes).
 * recs, when not NULL, receives the records with their offsets in it. */
static int write_image(const templates *tp, const cie_set *cies, const src_rec *src, size_t n,
		       const layout *L, uint8_t *img, uint64_t lo, uint64_t hi, blob_rec *recs)
{
	byte_buf b;
	buf_init(&b, img, L->total);
	elf_write_ehdr(&b, &(elf_ehdr_desc){ .type = ET_REL,
					     .machine = tp->arch->elf_machine,
					     .shoff = L->shoff,
					     .shnum = SEC_COUNT,
					     .shstrndx = SEC_SHSTRTAB });

	/* .eh_frame: the standard CIE, the personality CIEs, the FDEs */
	size_t cie = b.len;
	buf_bytes(&b, tp->cie, tp->cie_len);
	for (uint32_t k = 1; k <= cies->n; k++) {
		if (!L->cie_off[k])
			continue;
		if (b.len - cie != L->cie_off[k])
			return JU_FAIL(JU_ERANGE, "internal error: personality CIE layout mismatch");
		write_pers_cie(tp, cies, k, &b);
	}
	for (size_t i = 0; i < n; i++) {
		if (recs) {
			recs[i] = *src[i].rec;
			recs[i].flags = 0;
			recs[i].fde_off = (uint32_t)b.len;
			recs[i].fde_len = image_slot_len(src[i].rec->fde_len);
		}
		copy_fdes(&b, &src[i], cie + L->cie_off[src[i].rec->cie]);
	}
	buf_u32(&b, 0); /* terminator */

	/* .symtab and .strtab */
	buf_align(&b, 8, 0);
	buf_zeros(&b, sizeof(Elf64_Sym));
	uint32_t name = 1;
	for (size_t i = 0; i < n; i++) {
		const blob_rec *r = src[i].rec;
		Elf64_Sym sym = {
			.st_name = name,
			.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			.st_shndx = SEC_TEXT,
			.st_value = r->start - lo, /* section-relative */
			.st_size = r->size,
		};
		buf_bytes(&b, &sym, sizeof sym);
		name += r->name_len + 1u;
	}
	buf_u8(&b, 0);
	for (size_t i = 0; i < n; i++) {
		if (recs)
			recs[i].name_off = (uint32_t)b.len;
		buf_bytes(&b, src[i].base + src[i].rec->name_off, src[i].rec->name_len + 1u);
	}

	/* .debug_abbrev, .debug_info, .debug_aranges, .debug_line */
	buf_bytes(&b, tp->abbrev[L->guest_frames], tp->abbrev_len[L->guest_frames]);
	uint32_t stmt = 0;
	size_t info = b.len;
	for (size_t i = 0; i < n; i++) {
		if (!src[i].rec->line_len)
			continue;
		if (recs && src[i].rec->info_len)
			recs[i].info_off = (uint32_t)b.len;
		write_cu(&b, &src[i], stmt);
		stmt += src[i].rec->line_len;
	}
	for (size_t i = 0, cu = info; i < n; i++) {
		if (!src[i].rec->line_len)
			continue;
		write_aranges(&b, (uint32_t)(cu - info), src[i].rec->start, src[i].rec->size);
		cu += cu_size(&src[i]);
	}
	for (size_t i = 0; i < n; i++) {
		if (!src[i].rec->line_len)
			continue;
		if (recs)
			recs[i].line_off = (uint32_t)b.len;
		buf_bytes(&b, src[i].base + src[i].rec->line_off, src[i].rec->line_len);
	}
	buf_bytes(&b, shstrtab, sizeof shstrtab);
	write_shdrs(&b, tp, L, lo, hi, (uint64_t)(uintptr_t)img);

	if (!buf_ok(&b) || b.len != L->total)
		return JU_FAIL(JU_ERANGE, "internal error: arena image layout mismatch");
	return 0;
}

static void hull(const src_rec *src, size_t n, uint64_t *lo, uint64_t *hi)
{
	*lo = src[0].rec->start;
	*hi = 0;
	for (size_t i = 0; i < n; i++)
		if (src[i].rec->start + src[i].rec->size > *hi)
			*hi = src[i].rec->start + src[i].rec->size;
}

int image_build(const ju_arch *arch, const cie_set *cies, const src_rec *src, size_t n, image_alloc how,
		arena **out)
{
	const templates *tp = templates_for(arch);
	layout L;
	plan(tp, cies, src, n, &L);
	uint64_t lo, hi;
	hull(src, n, &lo, &hi);
	if (L.total > UINT32_MAX)
		return JU_FAIL(JU_ERANGE, "an arena image would exceed 4 GiB");

	arena *a = ju__calloc(1, sizeof *a);
	blob_rec *recs = ju__malloc(n * sizeof *recs);
	uint8_t *img = a && recs ? alloc_image(L.total, how, lo, &a->image_mapped) : NULL;
	if (!img) {
		free(a);
		free(recs);
		return JU_FAIL(how.near_code ? JU_ERANGE : JU_ENOMEM,
			       how.near_code ? "no free memory within 1 GiB of the code for its unwind "
					       "tables (libunwind's 32-bit offsets)"
					     : "out of memory for an arena image (%zu bytes)",
			       L.total);
	}
	a->image = img;
	a->image_size = L.total;
	a->recs = recs;
	a->n = (uint32_t)n;
	a->lo = lo;
	a->hi = hi;
	a->eh_off = (uint32_t)L.off[SEC_EH_FRAME];
	a->eh_size = (uint32_t)L.size[SEC_EH_FRAME];
	a->symtab_off = (uint32_t)L.off[SEC_SYMTAB];
	int err = write_image(tp, cies, src, n, &L, img, lo, hi, recs);
	if (err) {
		image_free(a);
		free(a);
		return err;
	}
	*out = a;
	return 0;
}

int image_build_bytes(const ju_arch *arch, const cie_set *cies, const src_rec *src, size_t n, uint8_t **image,
		      size_t *size)
{
	const templates *tp = templates_for(arch);
	layout L;
	plan(tp, cies, src, n, &L);
	uint64_t lo, hi;
	hull(src, n, &lo, &hi);
	uint8_t *img = ju__malloc(L.total);
	if (!img)
		return JU_FAIL(JU_ENOMEM, "out of memory for a gdb image (%zu bytes)", L.total);
	int err = write_image(tp, cies, src, n, &L, img, lo, hi, NULL);
	if (err) {
		free(img);
		return err;
	}
	*image = img;
	*size = L.total;
	return 0;
}

void image_tombstone(arena *a, const blob_rec *r)
{
	uint8_t *p = a->image + r->fde_off, *end = p + r->fde_len;
	while (p + 4 <= end) {
		size_t len = 4 + (size_t)load_u32(p);
		/* FDEs are 8-aligned, so this is one aligned store that unwinders
		 * reading concurrently see whole. */
		__atomic_store_n((uint64_t *)(void *)(p + FDE_ABS8_OFF_RANGE), 0, __ATOMIC_RELEASE);
		p += len;
	}
}

uint64_t image_slot_pc(const arena *a, size_t k)
{
	return __atomic_load_n(
		(const uint64_t *)(const void *)(a->image + a->recs[k].fde_off + FDE_OFF_PC_BEGIN),
		__ATOMIC_RELAXED);
}

uint64_t image_slot_range(const arena *a, size_t k)
{
	return __atomic_load_n(
		(const uint64_t *)(const void *)(a->image + a->recs[k].fde_off + FDE_ABS8_OFF_RANGE),
		__ATOMIC_RELAXED);
}

void image_reuse_slot(arena *a, size_t k, const uint8_t *fde, size_t len)
{
	uint8_t *slot = a->image + a->recs[k].fde_off;
	size_t slot_len = a->recs[k].fde_len;
	enum { BODY = FDE_ABS8_OFF_RANGE + 8 }; /* augmentation length, instructions */
	/* The slot's length and CIE pointer stay: the section keeps its shape. */
	memcpy(slot + BODY, fde + BODY, len - BODY);
	memset(slot + len, 0, slot_len - len); /* DW_CFA_nop */
	__atomic_store_n((uint64_t *)(void *)(slot + FDE_OFF_PC_BEGIN), load_u64(fde + FDE_OFF_PC_BEGIN),
			 __ATOMIC_RELEASE);
	__atomic_store_n((uint64_t *)(void *)(slot + FDE_ABS8_OFF_RANGE), load_u64(fde + FDE_ABS8_OFF_RANGE),
			 __ATOMIC_RELEASE);
}

/* ---- checks --------------------------------------------------------------- */

int image_check_lines(const char *file, const ju_line *lines, size_t n, uint64_t size, char *msg,
		      size_t msglen)
{
	(void)file;
	if (n > (1u << 24)) {
		snprintf(msg, msglen, "line table has %zu rows (max %u)", n, 1u << 24);
		return JU_ELINES;
	}
	for (size_t i = 0; i < n; i++) {
		if (lines[i].offset >= size) {
			snprintf(msg, msglen, "line row %zu: offset %u is beyond the blob (%llu bytes)", i,
				 lines[i].offset, (unsigned long long)size);
			return JU_ELINES;
		}
		if (i && lines[i].offset <= lines[i - 1].offset) {
			snprintf(msg, msglen, "line row %zu: offsets must increase (%u after %u)", i,
				 lines[i].offset, lines[i - 1].offset);
			return JU_ELINES;
		}
		if (lines[i].line == 0 || lines[i].line > INT32_MAX) {
			snprintf(msg, msglen, "line row %zu: line %u is not in 1..%d", i, lines[i].line,
				 INT32_MAX);
			return JU_ELINES;
		}
	}
	return 0;
}
