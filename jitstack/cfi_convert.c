/* cfi_convert.c - decode any JIT image's CFI and re-emit it canonically
 * (see cfi_convert.h).  Formats: DWARF 4 section 6.4 (.debug_frame) and the
 * LSB's .eh_frame ("Exception Frames", 10.6.1), pointer encodings from LSB
 * 10.5.1 ("DWARF Exception Header Encoding"); the records are written and
 * the instructions walked by formats/ehframe.h.
 */
#include "cfi_convert.h"
#include "bounds.h"
#include "grow.h"

#include <stdlib.h>
#include <string.h>

#define NOT_EMITTED ((size_t)-1)

typedef struct cie {
	size_t src;
	uint64_t off;
	bool ok;
	bool signal;          /* 'S': a signal frame, the pc is not a return address */
	bool has_z;           /* FDEs carry augmentation data */
	uint8_t version, fde_enc, addr_size;
	uint64_t code_align, ra;
	int64_t data_align;
	const uint8_t *insns; /* initial instructions */
	size_t n_insns;
	uint64_t insns_addr;  /* their address (pc-relative set_loc operands) */
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
	uint8_t enc, addr_size; /* how DW_CFA_set_loc's operand is stored */
	uint64_t addr;          /* address of the first instruction byte */
	const cfi_ctx *ctx;
} insn_ctx;

/* Validate a CFA instruction list (DWARF 4 section 6.4.2), registers within
 * JS_MAX_CFA_REG, and, when out is not NULL, append it to out: bytes
 * unchanged except that DW_CFA_set_loc's operand becomes the 8-byte absolute
 * address the output CIE announces. */
static bool copy_insns(const uint8_t *p, size_t n, const insn_ctx *ic, byte_buf *out)
{
	byte_rd r = rd_make(p, n);
	/* .debug_frame's set_loc holds a target address; .eh_frame's is
	 * encoded as the FDE's pc_begin is. */
	uint8_t loc_enc = !ic->debug_frame ? ic->enc
			  : ic->addr_size == 8 ? DW_EH_PE_udata8 : DW_EH_PE_udata4;
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
		if (!ic->debug_frame && ((ic->enc & DW_EH_PE_indirect) ||
					 !apply_address(ic->enc, field, ic->ctx, &a)))
			return false;
		if (out) {
			buf_u8(out, DW_CFA_set_loc);
			buf_u64(out, a);
		}
	}
	return !r.failed;
}

/* ---- CIEs ------------------------------------------------------------------ */

/* Parse the augmentation data of an .eh_frame CIE (LSB 10.6.1.1). */
static bool parse_augmentation(byte_rd *body, const char *aug, cie *c)
{
	uint64_t alen = rd_uleb(body);
	if (body->failed || alen > rd_left(body))
		return false;
	byte_rd a = rd_make(rd_skip(body, (size_t)alen), (size_t)alen);
	for (const char *q = aug + 1; *q; q++) {
		uint64_t ignored;
		switch (*q) {
		case 'R': c->fde_enc = rd_u8(&a); break;
		case 'L': rd_u8(&a); break; /* the FDE's LSDA is skipped with its length */
		case 'P': {
			uint8_t pe = rd_u8(&a);
			if ((pe & 0x70) == DW_EH_PE_aligned || !rd_eh_value(&a, pe, &ignored))
				return false;
			break;
		}
		case 'S': c->signal = true; break;
		case 'B': /* AArch64 BTI */
		case 'G': /* MTE-tagged frames */
			break;
		default: return false; /* cannot know what follows it */
		}
	}
	return !a.failed;
}

static bool parse_cie(conv *cv, cie *c)
{
	const cfi_src *s = &cv->src[c->src];
	if (c->off > s->size || s->size - c->off < 8)
		return false;
	byte_rd r = rd_make(s->data + c->off, s->size - c->off);
	uint32_t len = rd_u32(&r);
	if (len < 4 || len == DWARF64_ESCAPE || len > rd_left(&r))
		return false;
	byte_rd body = rd_make(r.p, len);
	uint64_t body_addr = s->addr + c->off + 4;
	if (rd_u32(&body) != (s->debug_frame ? DEBUG_FRAME_CIE_ID : EH_CIE_ID))
		return false;
	c->version = rd_u8(&body);
	if (c->version != 1 && c->version != 3 && !(s->debug_frame && c->version == 4))
		return false;
	const char *aug = rd_cstr(&body, 16);
	if (!aug)
		return false;
	c->addr_size = 8;
	if (c->version == 4) {
		c->addr_size = rd_u8(&body);
		if ((c->addr_size != 8 && c->addr_size != 4) || rd_u8(&body) != 0)
			return false; /* segment selectors: no JIT uses them */
	}
	if (!strcmp(aug, "eh"))
		rd_skip(&body, 8); /* ancient GCC: a pointer to the EH data */
	c->code_align = rd_uleb(&body);
	c->data_align = rd_sleb(&body);
	c->ra = c->version == 1 ? rd_u8(&body) : rd_uleb(&body);
	c->fde_enc = DW_EH_PE_absptr;
	c->has_z = aug[0] == 'z';
	if (c->has_z) {
		if (!parse_augmentation(&body, aug, c))
			return false;
	} else if (aug[0] && strcmp(aug, "eh")) {
		return false; /* an augmentation without 'z' cannot be skipped */
	}
	if (body.failed || c->code_align == 0 || c->ra >= JS_MAX_CFA_REG)
		return false;
	c->insns = body.p;
	c->n_insns = rd_left(&body);
	c->insns_addr = body_addr + rd_pos(&body);
	insn_ctx ic = { s->debug_frame, c->fde_enc, c->addr_size, c->insns_addr, cv->ctx };
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

/* Decode one FDE whose body (after the CIE pointer) is [at, end) of source
 * si, and keep it if it describes code inside the hull. */
static void parse_fde(conv *cv, size_t si, cie *c, uint64_t at, uint64_t end)
{
	const cfi_src *s = &cv->src[si];
	byte_rd r = rd_make(s->data + at, (size_t)(end - at));
	uint64_t pc = 0, range = 0;
	bool ok;
	if (s->debug_frame) {
		pc = c->addr_size == 8 ? rd_u64(&r) : rd_u32(&r);
		range = c->addr_size == 8 ? rd_u64(&r) : rd_u32(&r);
		ok = !r.failed;
	} else {
		ok = read_address(&r, c->fde_enc, s->addr + at, cv->ctx, &pc) &&
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
	fde f = { pc, range, (uint32_t)(c - cv->cies), (uint32_t)cv->n_fde, r.p, rd_left(&r),
		  s->addr + at + rd_pos(&r) };
	insn_ctx ic = { s->debug_frame, c->fde_enc, c->addr_size, f.insns_addr, x };
	if (!copy_insns(f.insns, f.n_insns, &ic, NULL)) {
		cv->out->n_invalid++;
		return;
	}
	if (!push_fde(cv, &f))
		cv->oom = true;
}

/* Walk the records of one section. */
static void walk(conv *cv, size_t si)
{
	const cfi_src *s = &cv->src[si];
	uint64_t off = 0;
	while (!cv->oom && s->size >= 4 && off <= s->size - 4) {
		if (++cv->records > JS_MAX_CFI_RECORDS) {
			cv->out->truncated = true;
			return;
		}
		uint32_t len = load_u32(s->data + off);
		if (len == 0) {
			if (!s->debug_frame)
				return;     /* .eh_frame's terminator */
			off += 4;           /* .debug_frame padding */
			continue;
		}
		if (len == DWARF64_ESCAPE || len < 4 || len > s->size - off - 4) {
			cv->out->truncated = true; /* 64-bit DWARF (no JIT emits it) or cut short */
			return;
		}
		uint64_t end = off + 4 + len;
		uint32_t id = load_u32(s->data + off + 4);
		bool is_cie = id == (s->debug_frame ? DEBUG_FRAME_CIE_ID : EH_CIE_ID);
		if (!is_cie) {
			/* .eh_frame: distance back from this field; .debug_frame: offset */
			uint64_t cie_off = s->debug_frame ? id : off + 4 - id;
			cie *c = (!s->debug_frame && id > off + 4) ? NULL : get_cie(cv, si, cie_off);
			if (!c || !c->ok)
				cv->out->n_bad_cie++;
			else
				parse_fde(cv, si, c, off + 8, end);
		}
		off = end;
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
	eh_cie out = { c->code_align, c->data_align, c->ra, DW_EH_PE_absptr, c->signal };
	size_t at = eh_cie_begin(b, &out);
	const cfi_src *s = &cv->src[c->src];
	insn_ctx ic = { s->debug_frame, c->fde_enc, c->addr_size, c->insns_addr, cv->ctx };
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
	insn_ctx ic = { s->debug_frame, c->fde_enc, c->addr_size, f->insns_addr, cv->ctx };
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
	for (size_t i = 0; i < n_src; i++)
		walk(cv, i);
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
