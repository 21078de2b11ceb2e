/* SPDX-License-Identifier: MIT */
/* cfi_convert.c - decode any JIT image's CFI and re-emit it canonically
 * (see cfi_convert.h).  Formats: DWARF 4 section 6.4 (.debug_frame) and the
 * LSB's .eh_frame ("Exception Frames", 10.6.1), pointer encodings from LSB
 * 10.5.1 ("DWARF Exception Header Encoding").
 *
 * libdw's dwarf_next_cfi splits a section into its records and reads each
 * CIE's fields.  By hand stays what libdw leaves to its caller, and our
 * policy: the CIE's augmentation data (which encodings we accept), an FDE's
 * pc_begin and pc_range in the CIE's encoding (libdw does not decode them
 * there, and never resolves LuaJIT's DW_EH_PE_textrel), and the
 * instructions, walked, validated and rewritten by formats/ehframe.h.
 */
#include "jit/cfi_convert.h"
#include "base/bounds.h"
#include "base/grow.h"

#include <elf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

#define NOT_EMITTED ((size_t)-1)

typedef struct cie {
	size_t src;
	uint64_t off;
	bool ok;
	bool signal; /* 'S': a signal frame, the pc is not a return address */
	bool has_z;  /* FDEs carry augmentation data */
	uint8_t fde_enc;
	uint64_t code_align, ra;
	int64_t data_align;
	const uint8_t *insns; /* initial instructions */
	size_t n_insns;
	uint64_t insns_addr; /* their address (pc-relative set_loc operands) */
	size_t out_off;
} cie;

typedef struct fde {
	uint64_t pc, range;
	uint32_t cie, order;
	const uint8_t *insns;
	size_t n_insns;
	uint64_t insns_addr;
} fde;

enum { CIE_HASH = 8192 }; /* power of two, >= 2 * JS_MAX_CIES */

typedef struct conv {
	const cfi_src *src;
	Elf_Data *data; /* each source as libdw takes it */
	const cfi_ctx *ctx;
	cie *cies;
	size_t n_cie, cap_cie;
	uint32_t hash[CIE_HASH]; /* cie index + 1, open addressing */
	fde *fdes;
	size_t n_fde, cap_fde, cap_tomb;
	unsigned long records;
	cfi_out *out;
	bool oom;
} conv;

/* ---- pointers ------------------------------------------------------------ */

/* Add the base the application part of `enc` names to *v, a value read
 * from a field at address `field`.  Only the applications JITs use for code
 * addresses are accepted: absolute, pc-relative (LLVM, GCC) and
 * text-relative (LuaJIT). */
static bool apply_address(uint8_t enc, uint64_t field, const cfi_ctx *ctx, uint64_t *v)
{
	switch (enc & 0x70) {
	case DW_EH_PE_absptr: return true;
	case DW_EH_PE_pcrel: *v += field; return true;
	case DW_EH_PE_textrel:
		if (!ctx->text_addr)
			return false;
		*v += ctx->text_addr;
		return true;
	default: return false;
	}
}

/* Read an address encoded with `enc` from a field at address `field`. */
static bool read_address(byte_rd *r, uint8_t enc, uint64_t field, const cfi_ctx *ctx, uint64_t *v)
{
	if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect) || !rd_eh_value(r, enc, v))
		return false;
	return apply_address(enc, field, ctx, v);
}

/* Step over a ULEB128 length and that many bytes (augmentation data). */
static void skip_block(byte_rd *r)
{
	uint64_t len = rd_uleb(r);
	if (len > rd_left(r))
		r->failed = true;
	else
		rd_skip(r, (size_t)len);
}

/* ---- CFA instructions ---------------------------------------------------- */

typedef struct insn_ctx {
	bool debug_frame;
	uint8_t enc;   /* how DW_CFA_set_loc's operand is stored */
	uint64_t addr; /* address of the first instruction byte */
	const cfi_ctx *ctx;
} insn_ctx;

/* Validate a CFA instruction list (DWARF 4 section 6.4.2), registers within
 * JS_MAX_CFA_REG, and, when out is not NULL, append it to out: bytes
 * unchanged except that DW_CFA_set_loc's operand becomes the 8-byte absolute
 * address the output CIE announces. */
static bool copy_insns(const uint8_t *p, size_t n, const insn_ctx *ic, byte_buf *out)
{
	byte_rd r = rd_make(p, n);
	/* .debug_frame's set_loc holds a target address (8 bytes: libdw
	 * reads CFI with the address size of the ELF class, and jitstack reads
	 * ELF64 only); .eh_frame's is encoded as the FDE's pc_begin is. */
	uint8_t loc_enc = ic->debug_frame ? DW_EH_PE_udata8 : ic->enc;
	for (unsigned count = 0; rd_left(&r); count++) {
		cfa_insn in;
		if (count == JS_MAX_CFA_INSNS || !cfa_next(&r, loc_enc, &in))
			return false; /* an opcode we cannot size: the rest is unreadable */
		if (in.reg >= JS_MAX_CFA_REG || in.reg2 >= JS_MAX_CFA_REG)
			return false;
		if (in.op != DW_CFA_set_loc) {
			if (out)
				buf_bytes(out, in.start, (size_t)(r.p - in.start));
			continue;
		}
		uint64_t a = in.loc, field = ic->addr + (uint64_t)(in.loc_at - p);
		if (!ic->debug_frame &&
		    ((ic->enc & DW_EH_PE_indirect) || !apply_address(ic->enc, field, ic->ctx, &a)))
			return false;
		if (out) {
			buf_u8(out, DW_CFA_set_loc);
			buf_u64(out, a);
		}
	}
	return !r.failed;
}

/* ---- CIEs ------------------------------------------------------------------ */

/* The address size and byte order libdw reads CFI with: those of the ELF64
 * little-endian images jitstack reads. */
static const unsigned char cfi_ident[EI_NIDENT] = { ELFMAG0,    ELFMAG1,     ELFMAG2,   ELFMAG3,
						    ELFCLASS64, ELFDATA2LSB, EV_CURRENT };

/* The augmentation data of an .eh_frame CIE (LSB 10.6.1.1), read by
 * formats/: only letters whose data it can size. */
static bool parse_augmentation(const Dwarf_CIE *d, cie *c)
{
	eh_cie_info info = { .fde_enc = DW_EH_PE_absptr, .lsda_enc = DW_EH_PE_omit };
	if (!eh_augmentation_read(d->augmentation, d->augmentation_data, d->augmentation_data_size, &info))
		return false;
	c->fde_enc = info.fde_enc;
	c->signal = info.signal;
	return true;
}

static bool parse_cie(conv *cv, cie *c)
{
	const cfi_src *s = &cv->src[c->src];
	/* dwarf_next_cfi adds 4 to the offset before it compares it with the
	 * section's size: an FDE's CIE pointer near 2^64 (a 64-bit
	 * .debug_frame record, whose pointer libdw does not check) would wrap
	 * that sum and have it read outside the section. */
	if (c->off >= s->size)
		return false;
	Dwarf_Off next;
	Dwarf_CFI_Entry e;
	if (dwarf_next_cfi(cfi_ident, &cv->data[c->src], !s->debug_frame, c->off, &next, &e) != 0 ||
	    e.CIE_id != DW_CIE_ID_64)
		return false; /* not a CIE, or one libdw cannot read */
	const Dwarf_CIE *d = &e.cie;
	const char *aug = d->augmentation;
	c->code_align = d->code_alignment_factor;
	c->data_align = d->data_alignment_factor;
	c->ra = d->return_address_register;
	c->fde_enc = DW_EH_PE_absptr;
	c->has_z = aug[0] == 'z';
	if (c->has_z && !parse_augmentation(d, c))
		return false;
	if (!c->has_z && aug[0] && strcmp(aug, "eh"))
		return false; /* an augmentation without 'z' cannot be skipped ("eh": libdw skips its pointer)
			       */
	if (c->code_align == 0 || c->ra >= JS_MAX_CFA_REG)
		return false;
	c->insns = d->initial_instructions;
	c->n_insns = (size_t)(d->initial_instructions_end - d->initial_instructions);
	c->insns_addr = s->addr + (uint64_t)(c->insns - s->data);
	insn_ctx ic = { s->debug_frame, c->fde_enc, c->insns_addr, cv->ctx };
	return copy_insns(c->insns, c->n_insns, &ic, NULL);
}

/* The CIE at offset `off` of source `si`, parsed once; NULL when out of
 * memory or over the limit. */
static cie *get_cie(conv *cv, size_t si, uint64_t off)
{
	uint64_t key = (uint64_t)si << 48 ^ off;
	uint32_t h = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 51) & (CIE_HASH - 1);
	for (unsigned probe = 0; probe < CIE_HASH; probe++, h = (h + 1) & (CIE_HASH - 1)) {
		uint32_t i = cv->hash[h];
		if (!i)
			break;
		if (cv->cies[i - 1].src == si && cv->cies[i - 1].off == off)
			return &cv->cies[i - 1];
	}
	if (cv->n_cie >= JS_MAX_CIES)
		return NULL;
	/* callers keep no cie pointer across this call */
	if (!js_grow(&cv->cies, &cv->cap_cie, cv->n_cie, sizeof *cv->cies)) {
		cv->oom = true;
		return NULL;
	}
	cie *c = &cv->cies[cv->n_cie];
	*c = (cie){ .src = si, .off = off, .out_off = NOT_EMITTED };
	c->ok = parse_cie(cv, c);
	cv->hash[h] = (uint32_t)++cv->n_cie;
	return c;
}

/* ---- FDEs ------------------------------------------------------------------ */

static bool push_fde(conv *cv, const fde *f)
{
	if (!js_grow(&cv->fdes, &cv->cap_fde, cv->n_fde, sizeof *cv->fdes))
		return false;
	cv->fdes[cv->n_fde++] = *f;
	return true;
}

static bool push_tomb(conv *cv, uint64_t pc)
{
	cfi_out *o = cv->out;
	if (!js_grow(&o->tomb, &cv->cap_tomb, o->n_tomb, sizeof *o->tomb))
		return false;
	o->tomb[o->n_tomb++] = pc;
	return true;
}

/* Decode one FDE whose body after the CIE pointer is [p, end) of source
 * si, and keep it if it describes code inside the hull. */
static void parse_fde(conv *cv, size_t si, cie *c, const uint8_t *p, const uint8_t *end)
{
	const cfi_src *s = &cv->src[si];
	byte_rd r = rd_make(p, (size_t)(end - p));
	uint64_t at = s->addr + (uint64_t)(p - s->data); /* the address of pc_begin */
	uint64_t pc = 0, range = 0;
	bool ok;
	if (s->debug_frame) {
		pc = rd_u64(&r);
		range = rd_u64(&r);
		ok = !r.failed;
	} else {
		ok = read_address(&r, c->fde_enc, at, cv->ctx, &pc) &&
		     rd_eh_value(&r, c->fde_enc & 0x0f, &range);
	}
	if (ok && c->has_z)
		skip_block(&r);
	if (!ok || r.failed) {
		cv->out->n_invalid++;
		return;
	}
	if (range == 0) { /* a tombstone: the blob was unpublished */
		if (!push_tomb(cv, pc))
			cv->oom = true;
		return;
	}
	const cfi_ctx *x = cv->ctx;
	if (pc < x->lo || pc >= x->hi || range > x->hi - pc) {
		cv->out->n_outside++;
		return;
	}
	fde f = {
		pc, range, (uint32_t)(c - cv->cies), (uint32_t)cv->n_fde, r.p, rd_left(&r), at + rd_pos(&r)
	};
	insn_ctx ic = { s->debug_frame, c->fde_enc, f.insns_addr, x };
	if (!copy_insns(f.insns, f.n_insns, &ic, NULL)) {
		cv->out->n_invalid++;
		return;
	}
	if (!push_fde(cv, &f))
		cv->oom = true;
}

/* A record libdw could size but not read: is it an FDE?  libdw fails an
 * FDE only for an .eh_frame CIE pointer that points before the section;
 * its id field (after a 4- or 12-byte length) is then not 0.  The record's
 * length is checked by libdw, so its id is inside the section. */
static bool unreadable_fde(const cfi_src *s, uint64_t off)
{
	if (s->debug_frame)
		return false;
	if (load_u32(s->data + off) == DWARF64_ESCAPE)
		return load_u64(s->data + off + 12) != 0;
	return load_u32(s->data + off + 4) != 0;
}

/* Walk the records of one section. */
static void walk(conv *cv, size_t si)
{
	const cfi_src *s = &cv->src[si];
	for (Dwarf_Off off = 0; !cv->oom;) {
		if (++cv->records > JS_MAX_CFI_RECORDS) {
			cv->out->truncated = true;
			return;
		}
		Dwarf_Off next = off; /* libdw leaves it when it cannot size the record */
		Dwarf_CFI_Entry e;
		int r = dwarf_next_cfi(cfi_ident, &cv->data[si], !s->debug_frame, off, &next, &e);
		if (r == 1 && s->debug_frame && s->size >= 4 && off < s->size - 4 &&
		    load_u32(s->data + off) == 0) {
			off += 4; /* libdw ends at a zero length as at .eh_frame's terminator; in
				   * .debug_frame, which has none, it is padding */
			continue;
		}
		if (r == 1)
			return;
		if (r < 0 && next == off) {
			cv->out->truncated = true; /* cut short */
			return;
		}
		if (r < 0 && unreadable_fde(s, off))
			cv->out->n_bad_cie++;
		if (r == 0 && e.CIE_id != DW_CIE_ID_64) {
			cie *c = get_cie(cv, si, e.fde.CIE_pointer);
			if (!c || !c->ok)
				cv->out->n_bad_cie++;
			else
				parse_fde(cv, si, c, e.fde.start, e.fde.end);
		}
		off = next;
	}
}

/* ---- output ------------------------------------------------------------------ */

static int by_pc(const void *a, const void *b)
{
	const fde *x = a, *y = b;
	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* A CIE with the input's parameters and initial instructions, "zR" with
 * absolute 8-byte FDE pointers (and 'S' kept: libdw then does not treat
 * the pc as a return address). */
static void emit_cie(conv *cv, cie *c)
{
	byte_buf *b = &cv->out->eh;
	/* no personality: libdwfl unwinds, it never runs a handler */
	eh_cie out = { .code_align = c->code_align,
		       .data_align = c->data_align,
		       .ra_reg = c->ra,
		       .fde_enc = DW_EH_PE_absptr,
		       .signal = c->signal };
	size_t at = eh_cie_begin(b, &out);
	const cfi_src *s = &cv->src[c->src];
	insn_ctx ic = { s->debug_frame, c->fde_enc, c->insns_addr, cv->ctx };
	copy_insns(c->insns, c->n_insns, &ic, b);
	eh_entry_end(b, at);
	c->out_off = at;
}

static void emit_fde(conv *cv, const fde *f, cfi_fde_out *o)
{
	byte_buf *b = &cv->out->eh;
	cie *c = &cv->cies[f->cie];
	if (c->out_off == NOT_EMITTED)
		emit_cie(cv, c);
	size_t at = eh_fde_begin(b, c->out_off, DW_EH_PE_absptr, 0, f->pc, f->range);
	const cfi_src *s = &cv->src[c->src];
	insn_ctx ic = { s->debug_frame, c->fde_enc, f->insns_addr, cv->ctx };
	copy_insns(f->insns, f->n_insns, &ic, b);
	eh_entry_end(b, at);
	*o = (cfi_fde_out){ f->pc, f->range, at };
}

int cfi_convert(const cfi_src *src, size_t n_src, const cfi_ctx *ctx, cfi_out *out)
{
	memset(out, 0, sizeof *out);
	buf_init_grow(&out->eh, JS_MAX_IMAGE_SIZE * 2);
	conv *cv = calloc(1, sizeof *cv);
	if (!cv)
		return -1;
	cv->src = src;
	cv->ctx = ctx;
	cv->out = out;
	cv->data = calloc(n_src ? n_src : 1, sizeof *cv->data);
	if (!cv->data) {
		free(cv);
		return -1;
	}
	for (size_t i = 0; i < n_src; i++) {
		/* libdw only reads through d_buf */
		cv->data[i] = (Elf_Data){ .d_buf = (void *)src[i].data,
					  .d_size = src[i].size,
					  .d_type = ELF_T_BYTE };
		walk(cv, i);
	}
	int rc = cv->oom ? -1 : 0;
	if (!rc && cv->n_fde) {
		qsort(cv->fdes, cv->n_fde, sizeof *cv->fdes, by_pc);
		out->fde = malloc(cv->n_fde * sizeof *out->fde);
		if (!out->fde)
			rc = -1;
	}
	uint64_t prev_end = 0;
	for (size_t i = 0; !rc && i < cv->n_fde; i++) {
		const fde *f = &cv->fdes[i];
		if (out->n_fde && f->pc < prev_end) {
			out->n_overlap++; /* the earlier FDE (or .eh_frame's) wins */
			continue;
		}
		emit_fde(cv, f, &out->fde[out->n_fde++]);
		prev_end = f->pc + f->range;
	}
	buf_u32(&out->eh, 0); /* terminator */
	if (!buf_ok(&out->eh))
		rc = -1;
	free(cv->fdes);
	free(cv->cies);
	free(cv->data);
	free(cv);
	return rc;
}

void cfi_out_free(cfi_out *o)
{
	buf_free(&o->eh);
	free(o->fde);
	free(o->tomb);
	memset(o, 0, sizeof *o);
}

size_t cfi_hdr_size(const cfi_out *o)
{
	return eh_hdr_size(o->n_fde);
}

void cfi_write_hdr(byte_buf *b, const cfi_out *o, uint64_t hdr_addr, uint64_t eh_addr)
{
	eh_hdr_begin(b, hdr_addr, eh_addr, o->n_fde);
	for (size_t i = 0; i < o->n_fde; i++) /* sorted by pc */
		eh_hdr_entry(b, hdr_addr, o->fde[i].pc, eh_addr + o->fde[i].off);
}
