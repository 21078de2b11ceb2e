/* ehframe.c - decode any JIT image's CFI and re-emit it canonically (see
 * ehframe.h).  Formats: DWARF 4 section 6.4 (.debug_frame) and the LSB's
 * .eh_frame ("Exception Frames", 10.6.1), pointer encodings from LSB
 * 10.5.1 ("DWARF Exception Header Encoding").
 */
#include "ehframe.h"
#include "bounds.h"
#include "rd.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#define CIE_ID_EH 0u
#define CIE_ID_DEBUG 0xffffffffu
#define DWARF64_ESCAPE 0xffffffffu
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

/* Read a value in the format part of a DW_EH_PE encoding. */
static bool read_format(rd *r, uint8_t enc, uint64_t *v)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: *v = rd_u64(r); break;
	case DW_EH_PE_uleb128: *v = rd_uleb(r); break;
	case DW_EH_PE_udata2: *v = rd_u16(r); break;
	case DW_EH_PE_udata4: *v = rd_u32(r); break;
	case DW_EH_PE_udata8: *v = rd_u64(r); break;
	case DW_EH_PE_sleb128: *v = (uint64_t)rd_sleb(r); break;
	case DW_EH_PE_sdata2: *v = (uint64_t)(int64_t)(int16_t)rd_u16(r); break;
	case DW_EH_PE_sdata4: *v = (uint64_t)(int64_t)(int32_t)rd_u32(r); break;
	case DW_EH_PE_sdata8: *v = rd_u64(r); break;
	default: return false;
	}
	return !r->err;
}

/* Read an address encoded with `enc` from a field at address `field`.
 * Only the applications JITs use for code addresses are accepted: absolute,
 * pc-relative (LLVM, GCC) and text-relative (LuaJIT). */
static bool read_address(rd *r, uint8_t enc, uint64_t field, const cfi_ctx *ctx, uint64_t *v)
{
	if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect) || !read_format(r, enc, v))
		return false;
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

/* ---- CFA instructions ---------------------------------------------------- */

typedef struct insn_ctx {
	bool debug_frame;
	uint8_t enc, addr_size; /* how DW_CFA_set_loc's operand is stored */
	uint64_t addr;          /* address of the first instruction byte */
	const cfi_ctx *ctx;
} insn_ctx;

static void skip_block(rd *r)
{
	uint64_t len = rd_uleb(r);
	if (len > rd_left(r))
		r->err = true;
	else
		rd_skip(r, (size_t)len);
}

/* A register operand (ULEB128), within JS_MAX_CFA_REG. */
static void rd_reg(rd *r)
{
	if (rd_uleb(r) >= JS_MAX_CFA_REG)
		r->err = true;
}

/* Validate a CFA instruction list (DWARF 4 section 6.4.2) and, when out is
 * not NULL, append it to out: bytes unchanged except that DW_CFA_set_loc's
 * operand becomes the 8-byte absolute address the output CIE announces. */
static bool copy_insns(const uint8_t *p, size_t n, const insn_ctx *ic, jbuf *out)
{
	rd r = rd_make(p, n);
	unsigned count = 0;
	while (rd_left(&r)) {
		if (++count > JS_MAX_CFA_INSNS)
			return false;
		const uint8_t *start = r.p;
		uint8_t op = rd_u8(&r);
		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
		case DW_CFA_restore: goto copy;
		case DW_CFA_offset: rd_uleb(&r); goto copy;
		}
		switch (op) {
		case DW_CFA_nop:
		case DW_CFA_remember_state:
		case DW_CFA_restore_state:
		case DW_CFA_GNU_window_save:
			break;
		case DW_CFA_set_loc: {
			uint64_t a;
			uint64_t field = ic->addr + (uint64_t)(r.p - p);
			bool ok = ic->debug_frame ? (ic->addr_size == 8 ? (a = rd_u64(&r), true)
								  : (a = rd_u32(&r), true))
						  : read_address(&r, ic->enc, field, ic->ctx, &a);
			if (!ok || r.err)
				return false;
			if (out) {
				jbuf_u8(out, op);
				jbuf_u64(out, a);
			}
			continue;
		}
		case DW_CFA_advance_loc1: rd_skip(&r, 1); break;
		case DW_CFA_advance_loc2: rd_skip(&r, 2); break;
		case DW_CFA_advance_loc4: rd_skip(&r, 4); break;
		case DW_CFA_MIPS_advance_loc8: rd_skip(&r, 8); break;
		case DW_CFA_register:
			rd_reg(&r);
			rd_reg(&r);
			break;
		case DW_CFA_offset_extended:
		case DW_CFA_def_cfa:
		case DW_CFA_val_offset:
		case DW_CFA_GNU_negative_offset_extended:
			rd_reg(&r);
			rd_uleb(&r);
			break;
		case DW_CFA_restore_extended:
		case DW_CFA_undefined:
		case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			rd_reg(&r);
			break;
		case DW_CFA_def_cfa_offset:
		case DW_CFA_GNU_args_size:
			rd_uleb(&r);
			break;
		case DW_CFA_offset_extended_sf:
		case DW_CFA_def_cfa_sf:
		case DW_CFA_val_offset_sf:
			rd_reg(&r);
			rd_sleb(&r);
			break;
		case DW_CFA_def_cfa_offset_sf: rd_sleb(&r); break;
		case DW_CFA_def_cfa_expression: skip_block(&r); break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
			rd_reg(&r);
			skip_block(&r);
			break;
		default:
			return false; /* an opcode we cannot size: the rest is unreadable */
		}
	copy:
		if (r.err)
			return false;
		if (out)
			jbuf_bytes(out, start, (size_t)(r.p - start));
	}
	return !r.err;
}

/* ---- CIEs ------------------------------------------------------------------ */

/* Parse the augmentation data of an .eh_frame CIE (LSB 10.6.1.1). */
static bool parse_augmentation(rd *body, const char *aug, cie *c)
{
	uint64_t alen = rd_uleb(body);
	if (body->err || alen > rd_left(body))
		return false;
	rd a = rd_make(rd_skip(body, (size_t)alen), (size_t)alen);
	for (const char *q = aug + 1; *q; q++) {
		uint64_t ignored;
		switch (*q) {
		case 'R': c->fde_enc = rd_u8(&a); break;
		case 'L': rd_u8(&a); break; /* the FDE's LSDA is skipped with its length */
		case 'P': {
			uint8_t pe = rd_u8(&a);
			if ((pe & 0x70) == DW_EH_PE_aligned || !read_format(&a, pe, &ignored))
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
	return !a.err;
}

static bool parse_cie(conv *cv, cie *c)
{
	const cfi_src *s = &cv->src[c->src];
	if (c->off > s->size || s->size - c->off < 8)
		return false;
	rd r = rd_make(s->data + c->off, s->size - c->off);
	uint32_t len = rd_u32(&r);
	if (len < 4 || len == DWARF64_ESCAPE || len > rd_left(&r))
		return false;
	rd body = rd_make(r.p, len);
	uint64_t body_addr = s->addr + c->off + 4;
	if (rd_u32(&body) != (s->debug_frame ? CIE_ID_DEBUG : CIE_ID_EH))
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
	if (body.err || c->code_align == 0 || c->ra >= JS_MAX_CFA_REG)
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
	rd r = rd_make(s->data + at, (size_t)(end - at));
	uint64_t pc = 0, range = 0;
	bool ok;
	if (s->debug_frame) {
		pc = c->addr_size == 8 ? rd_u64(&r) : rd_u32(&r);
		range = c->addr_size == 8 ? rd_u64(&r) : rd_u32(&r);
		ok = !r.err;
	} else {
		ok = read_address(&r, c->fde_enc, s->addr + at, cv->ctx, &pc) &&
		     read_format(&r, c->fde_enc & 0x0f, &range);
	}
	if (ok && c->has_z)
		skip_block(&r);
	if (!ok || r.err) {
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
		uint32_t len = ld_u32(s->data + off);
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
		uint32_t id = ld_u32(s->data + off + 4);
		bool is_cie = id == (s->debug_frame ? CIE_ID_DEBUG : CIE_ID_EH);
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
	jbuf *b = &cv->out->eh;
	size_t at = b->len;
	uint8_t version = c->ra < 256 ? 1 : 3;
	jbuf_u32(b, 0);                          /* length, patched below */
	jbuf_u32(b, CIE_ID_EH);                  /* CIE id */
	jbuf_u8(b, version);                     /* version */
	jbuf_str(b, c->signal ? "zRS" : "zR");   /* augmentation */
	jbuf_uleb(b, c->code_align);             /* code alignment factor */
	jbuf_sleb(b, c->data_align);             /* data alignment factor */
	if (version == 1)
		jbuf_u8(b, (uint8_t)c->ra);          /* return address register */
	else
		jbuf_uleb(b, c->ra);
	jbuf_uleb(b, 1);                         /* augmentation data length */
	jbuf_u8(b, DW_EH_PE_absptr);             /* 'R': FDE pointer encoding */
	const cfi_src *s = &cv->src[c->src];
	insn_ctx ic = { s->debug_frame, c->fde_enc, c->addr_size, c->insns_addr, cv->ctx };
	copy_insns(c->insns, c->n_insns, &ic, b);
	jbuf_align(b, 8, DW_CFA_nop);
	jbuf_put_u32(b, at, (uint32_t)(b->len - at - 4));
	c->out_off = at;
}

static void emit_fde(conv *cv, const fde *f, cfi_fde_out *o)
{
	jbuf *b = &cv->out->eh;
	cie *c = &cv->cies[f->cie];
	if (c->out_off == NOT_EMITTED)
		emit_cie(cv, c);
	size_t at = b->len;
	jbuf_u32(b, 0);                                  /* length, patched below */
	jbuf_u32(b, (uint32_t)(b->len - c->out_off));    /* CIE pointer: back to its CIE */
	jbuf_u64(b, f->pc);                              /* pc_begin */
	jbuf_u64(b, f->range);                           /* pc_range */
	jbuf_uleb(b, 0);                                 /* augmentation data length */
	const cfi_src *s = &cv->src[c->src];
	insn_ctx ic = { s->debug_frame, c->fde_enc, c->addr_size, f->insns_addr, cv->ctx };
	copy_insns(f->insns, f->n_insns, &ic, b);
	jbuf_align(b, 8, DW_CFA_nop);
	jbuf_put_u32(b, at, (uint32_t)(b->len - at - 4));
	*o = (cfi_fde_out){ f->pc, f->range, at };
}

int cfi_convert(const cfi_src *src, size_t n_src, const cfi_ctx *ctx, cfi_out *out)
{
	memset(out, 0, sizeof *out);
	jbuf_init(&out->eh, JS_MAX_IMAGE_SIZE * 2);
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
	jbuf_u32(&out->eh, 0); /* terminator */
	if (!jbuf_ok(&out->eh))
		rc = -1;
	free(cv->fdes);
	free(cv->cies);
	free(cv);
	return rc;
}

void cfi_out_free(cfi_out *o)
{
	jbuf_free(&o->eh);
	free(o->fde);
	free(o->tomb);
	memset(o, 0, sizeof *o);
}

size_t cfi_hdr_size(const cfi_out *o)
{
	return 4 + 4 + 4 + o->n_fde * 8;
}

void cfi_write_hdr(jbuf *b, const cfi_out *o, uint64_t hdr_addr, uint64_t eh_addr)
{
	jbuf_u8(b, 1);                                        /* version */
	jbuf_u8(b, DW_EH_PE_pcrel | DW_EH_PE_sdata4);         /* eh_frame_ptr encoding */
	jbuf_u8(b, DW_EH_PE_udata4);                          /* fde_count encoding */
	jbuf_u8(b, DW_EH_PE_datarel | DW_EH_PE_sdata4);       /* table encoding */
	jbuf_u32(b, (uint32_t)(eh_addr - (hdr_addr + 4)));    /* eh_frame_ptr */
	jbuf_u32(b, (uint32_t)o->n_fde);                      /* fde_count */
	for (size_t i = 0; i < o->n_fde; i++) {               /* table: sorted by pc */
		jbuf_u32(b, (uint32_t)(o->fde[i].pc - hdr_addr));
		jbuf_u32(b, (uint32_t)(eh_addr + o->fde[i].off - hdr_addr));
	}
}
