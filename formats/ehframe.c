/* SPDX-License-Identifier: MIT */
/* ehframe.c - .eh_frame and .eh_frame_hdr writers, DW_EH_PE values, the
 * .eh_frame record reader and the call frame instruction walker (see
 * ehframe.h).
 */
#include "ehframe.h"

size_t eh_cie_begin(byte_buf *b, const eh_cie *c)
{
	bool v1 = c->ra_reg < 256;
	char aug[8], *q = aug; /* the letters in GCC's order; their data follows in it */
	*q++ = 'z';
	if (c->personality)
		*q++ = 'P';
	if (c->lsda)
		*q++ = 'L';
	*q++ = 'R';
	if (c->signal)
		*q++ = 'S';
	*q = 0;
	size_t cie = b->len;
	buf_len32_begin(b);
	buf_u32(b, EH_CIE_ID);      /* CIE id */
	buf_u8(b, v1 ? 1 : 3);      /* version */
	buf_str(b, aug);            /* z: augmentation data follows; P, L, R, S: see eh_cie */
	buf_uleb(b, c->code_align); /* code alignment factor */
	buf_sleb(b, c->data_align); /* data alignment factor */
	if (v1)
		buf_u8(b, (uint8_t)c->ra_reg); /* return address column */
	else
		buf_uleb(b, c->ra_reg);
	buf_uleb(b, (c->personality ? 1 + 8 : 0) + (c->lsda ? 1 : 0) + 1); /* augmentation data length */
	if (c->personality) {
		buf_u8(b, DW_EH_PE_absptr); /* 'P': personality pointer encoding */
		buf_u64(b, c->personality); /*      and the pointer */
	}
	if (c->lsda)
		buf_u8(b, DW_EH_PE_absptr); /* 'L': the FDEs' LSDA pointer encoding */
	buf_u8(b, c->fde_enc);              /* 'R': FDE pc_begin encoding */
	return cie;
}

size_t eh_fde_header_size(uint8_t enc)
{
	return enc == DW_EH_PE_absptr ? 4 + 4 + 8 + 8 + 1 : 4 + 4 + 4 + 4 + 1;
}

size_t eh_fde_begin_lsda(byte_buf *b, size_t cie_off, uint8_t enc, uint64_t base, uint64_t pc, uint64_t range,
			 const uint64_t *lsda)
{
	size_t entry = b->len;
	buf_len32_begin(b);
	buf_u32(b, (uint32_t)(b->len - cie_off)); /* CIE pointer: back to its CIE */
	if (enc == DW_EH_PE_absptr) {
		buf_u64(b, pc);    /* pc_begin */
		buf_u64(b, range); /* pc_range */
	} else {
		int64_t rel = (int64_t)(pc - (base + b->len));
		if (enc != (DW_EH_PE_pcrel | DW_EH_PE_sdata4) || rel != (int32_t)rel || range > UINT32_MAX)
			b->failed = true;
		buf_u32(b, (uint32_t)(int32_t)rel); /* pc_begin, pc-relative */
		buf_u32(b, (uint32_t)range);        /* pc_range */
	}
	if (lsda) {
		buf_uleb(b, EH_FDE_LSDA_LEN); /* augmentation data length */
		buf_u64(b, *lsda);            /* 'L': the LSDA, absolute */
	} else {
		buf_uleb(b, 0); /* augmentation data length */
	}
	return entry;
}

size_t eh_fde_begin(byte_buf *b, size_t cie_off, uint8_t enc, uint64_t base, uint64_t pc, uint64_t range)
{
	return eh_fde_begin_lsda(b, cie_off, enc, base, pc, range, NULL);
}

void eh_entry_end(byte_buf *b, size_t entry)
{
	for (size_t n = b->len - entry; n & 7; n++) /* counted: a failed b stops growing */
		buf_u8(b, DW_CFA_nop);
	buf_len32_end(b, entry);
}

void cfa_advance(byte_buf *b, uint64_t units)
{
	if (units == 0)
		return;
	if (units < 0x40) {
		buf_u8(b, (uint8_t)(DW_CFA_advance_loc | units)); /* the delta in the low 6 bits */
	} else if (units <= UINT8_MAX) {
		buf_u8(b, DW_CFA_advance_loc1);
		buf_u8(b, (uint8_t)units);
	} else if (units <= UINT16_MAX) {
		buf_u8(b, DW_CFA_advance_loc2);
		buf_u16(b, (uint16_t)units);
	} else {
		buf_u8(b, DW_CFA_advance_loc4);
		buf_u32(b, (uint32_t)units);
	}
}

void eh_hdr_begin(byte_buf *b, uint64_t hdr_addr, uint64_t eh_addr, size_t n)
{
	buf_u8(b, 1);                                              /* version */
	buf_u8(b, DW_EH_PE_pcrel | DW_EH_PE_sdata4);               /* eh_frame_ptr encoding */
	buf_u8(b, DW_EH_PE_udata4);                                /* fde_count encoding */
	buf_u8(b, DW_EH_PE_datarel | DW_EH_PE_sdata4);             /* table encoding */
	buf_u32(b, (uint32_t)(int32_t)(eh_addr - (hdr_addr + 4))); /* eh_frame_ptr */
	buf_u32(b, (uint32_t)n);                                   /* fde_count */
}

void eh_hdr_entry(byte_buf *b, uint64_t hdr_addr, uint64_t pc, uint64_t fde_addr)
{
	buf_u32(b, (uint32_t)(int32_t)(pc - hdr_addr));       /* initial location */
	buf_u32(b, (uint32_t)(int32_t)(fde_addr - hdr_addr)); /* FDE address */
}

bool rd_eh_value(byte_rd *r, uint8_t enc, uint64_t *v)
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
	return !r->failed;
}

/* ---- .eh_frame records ---------------------------------------------------------- */

/* The longest augmentation string read: every letter it can size fits. */
#define EH_MAX_AUG 16

int eh_next(const eh_section *s, size_t *off, eh_rec *r)
{
	if (*off > s->size || s->size - *off < 4)
		return 0;
	byte_rd rd = rd_make(s->data + *off, s->size - *off);
	uint64_t len = rd_u32(&rd);
	if (len == 0)
		return 0; /* the terminator */
	if (len == DWARF64_ESCAPE)
		len = rd_u64(&rd);
	if (rd.failed || len < 4 || len > rd_left(&rd))
		return -1;
	size_t id_off = *off + rd_pos(&rd);
	uint32_t id = rd_u32(&rd);
	*r = (eh_rec){
		.off = *off,
		.id_off = id_off,
		.end = id_off + (size_t)len,
		.is_cie = id == EH_CIE_ID,
		.cie_off = id == EH_CIE_ID || id > id_off ? EH_NO_CIE : id_off - id,
	};
	*off = r->end;
	return 1;
}

bool eh_augmentation_read(const char *aug, const uint8_t *data, size_t len, eh_cie_info *c)
{
	byte_rd a = rd_make(data, len);
	for (const char *q = aug + 1; *q; q++) {
		uint8_t pe;
		switch (*q) {
		case 'R': c->fde_enc = rd_u8(&a); break;
		case 'L': c->lsda_enc = rd_u8(&a); break;
		case 'P': /* the personality routine: its encoding, then the pointer */
			pe = rd_u8(&a);
			c->pers_field = a.p;
			if ((pe & 0x70) == DW_EH_PE_aligned || !rd_eh_value(&a, pe, &c->pers_raw))
				return false;
			c->pers_enc = pe;
			break;
		case 'S': c->signal = true; break;
		case 'B': /* AArch64 BTI */
		case 'G': /* MTE-tagged frames */ break;
		default: return false; /* cannot know what follows it */
		}
	}
	return !a.failed;
}

/* The augmentation data of a "z..." CIE, after its length. */
static bool rd_augmentation(byte_rd *r, eh_cie_info *c)
{
	uint64_t len = rd_uleb(r);
	if (r->failed || len > rd_left(r))
		return false;
	c->aug_len = (size_t)len;
	return eh_augmentation_read(c->aug, rd_skip(r, c->aug_len), c->aug_len, c);
}

/* An encoding rd_eh_value can read: not omit, and a format that exists. */
static bool readable_enc(uint8_t enc)
{
	if (enc == DW_EH_PE_omit)
		return false;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_uleb128:
	case DW_EH_PE_udata2:
	case DW_EH_PE_udata4:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sleb128:
	case DW_EH_PE_sdata2:
	case DW_EH_PE_sdata4:
	case DW_EH_PE_sdata8: return true;
	default: return false;
	}
}

bool eh_cie_read(const eh_section *s, size_t off, eh_cie_info *c)
{
	size_t at = off;
	eh_rec rec;
	if (off == EH_NO_CIE || eh_next(s, &at, &rec) != 1 || !rec.is_cie)
		return false;
	byte_rd r = rd_make(s->data + rec.id_off + 4, rec.end - rec.id_off - 4);
	*c = (eh_cie_info){ .fde_enc = DW_EH_PE_absptr,
			    .lsda_enc = DW_EH_PE_omit,
			    .pers_enc = DW_EH_PE_omit };
	c->version = rd_u8(&r);
	c->aug = rd_cstr(&r, EH_MAX_AUG);
	c->code_align = rd_uleb(&r);
	c->data_align = rd_sleb(&r);
	c->ra_reg = c->version == 1 ? rd_u8(&r) : rd_uleb(&r);
	if (r.failed || (c->version != 1 && c->version != 3))
		return false;
	c->has_z = c->aug[0] == 'z';
	if (c->has_z ? !rd_augmentation(&r, c) : c->aug[0] != 0)
		return false;
	if (!readable_enc(c->fde_enc))
		return false;
	c->insns = r.p;
	c->insns_len = rd_left(&r);
	return true;
}

/* Add the base the application part of enc names to v, read from the field
 * at section offset `field`. */
static bool apply_base(const eh_section *s, uint8_t enc, size_t field, uint64_t *v)
{
	switch (enc & 0x70) {
	case DW_EH_PE_absptr: return true;
	case DW_EH_PE_pcrel: *v += s->addr + field; return true;
	case DW_EH_PE_textrel:
		if (!s->text_addr)
			return false;
		*v += s->text_addr;
		return true;
	default: return false; /* datarel, funcrel, aligned: no base for code addresses */
	}
}

bool eh_cie_personality(const eh_section *s, const eh_cie_info *c, uint64_t *addr, bool *indirect)
{
	if (c->pers_enc == DW_EH_PE_omit || !c->pers_field || c->pers_field < s->data ||
	    c->pers_field > s->data + s->size)
		return false;
	*addr = c->pers_raw;
	*indirect = c->pers_enc & DW_EH_PE_indirect;
	return apply_base(s, c->pers_enc, (size_t)(c->pers_field - s->data), addr);
}

/* The LSDA pointer of an FDE's augmentation data (CIE 'L'), at section
 * offset `field`: 0 stays "none", whatever the base. */
static bool rd_lsda(const eh_section *s, const eh_cie_info *c, byte_rd *a, size_t field, uint64_t *lsda)
{
	if (!rd_eh_value(a, c->lsda_enc, lsda))
		return false;
	return *lsda == 0 || apply_base(s, c->lsda_enc, field, lsda);
}

bool eh_fde_read(const eh_section *s, const eh_rec *r, const eh_cie_info *c, eh_fde_info *f)
{
	size_t body = r->id_off + 4;
	byte_rd rd = rd_make(s->data + body, r->end - body);
	*f = (eh_fde_info){ .pc_begin_off = body };
	if ((c->fde_enc & DW_EH_PE_indirect) || !rd_eh_value(&rd, c->fde_enc, &f->pc_begin) ||
	    !apply_base(s, c->fde_enc, body, &f->pc_begin))
		return false;
	if (!rd_eh_value(&rd, c->fde_enc & 0x0f, &f->pc_range)) /* a size: the format only */
		return false;
	if (c->has_z) {
		uint64_t len = rd_uleb(&rd);
		if (rd.failed || len > rd_left(&rd))
			return false;
		size_t field = body + rd_pos(&rd);
		byte_rd aug = rd_make(rd_skip(&rd, (size_t)len), (size_t)len);
		if (c->lsda_enc != DW_EH_PE_omit && !rd_lsda(s, c, &aug, field, &f->lsda))
			return false;
	}
	f->insns = rd.p;
	f->insns_len = rd_left(&rd);
	return true;
}

/* ---- call frame instructions ---------------------------------------------------- */

/* An operand that is a DWARF expression: its ULEB length, then its bytes. */
static void rd_block(byte_rd *r, cfa_insn *in)
{
	uint64_t len = rd_uleb(r);
	if (len > rd_left(r)) {
		r->failed = true;
		return;
	}
	in->block_len = (size_t)len;
	in->block = rd_skip(r, in->block_len);
}

/* The opcodes whose operand is in their low six bits. */
static bool cfa_packed(byte_rd *r, uint8_t op, cfa_insn *in)
{
	in->op = op & 0xc0;
	switch (in->op) {
		/* clang-format off */
	case DW_CFA_advance_loc: in->advance = op & 0x3f; break;
	case DW_CFA_offset: in->reg = op & 0x3f; in->uarg = rd_uleb(r); break;
	case DW_CFA_restore: in->reg = op & 0x3f; break;
		/* clang-format on */
	}
	return !r->failed;
}

bool cfa_next(byte_rd *r, uint8_t loc_enc, cfa_insn *in)
{
	*in = (cfa_insn){ .start = r->p };
	uint8_t op = rd_u8(r);
	if (op & 0xc0)
		return cfa_packed(r, op, in);
	in->op = op;
	switch (op) {
	case DW_CFA_nop:
	case DW_CFA_remember_state:
	case DW_CFA_restore_state:
	case DW_CFA_GNU_window_save: break;
	case DW_CFA_set_loc:
		if (loc_enc == DW_EH_PE_omit)
			return false;
		in->loc_at = r->p;
		if (!rd_eh_value(r, loc_enc, &in->loc))
			return false;
		break;
	case DW_CFA_advance_loc1: in->advance = rd_u8(r); break;
	case DW_CFA_advance_loc2: in->advance = rd_u16(r); break;
	case DW_CFA_advance_loc4: in->advance = rd_u32(r); break;
	case DW_CFA_MIPS_advance_loc8: in->advance = rd_u64(r); break;
	case DW_CFA_register:
		in->reg = rd_uleb(r);
		in->reg2 = rd_uleb(r);
		break;
	case DW_CFA_offset_extended:
	case DW_CFA_def_cfa:
	case DW_CFA_val_offset:
	case DW_CFA_GNU_negative_offset_extended:
		in->reg = rd_uleb(r);
		in->uarg = rd_uleb(r);
		break;
	case DW_CFA_offset_extended_sf:
	case DW_CFA_def_cfa_sf:
	case DW_CFA_val_offset_sf:
		in->reg = rd_uleb(r);
		in->sarg = rd_sleb(r);
		break;
	case DW_CFA_restore_extended:
	case DW_CFA_undefined:
	case DW_CFA_same_value:
	case DW_CFA_def_cfa_register: in->reg = rd_uleb(r); break;
	case DW_CFA_def_cfa_offset:
	case DW_CFA_GNU_args_size: in->uarg = rd_uleb(r); break;
	case DW_CFA_def_cfa_offset_sf: in->sarg = rd_sleb(r); break;
	case DW_CFA_def_cfa_expression: rd_block(r, in); break;
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		in->reg = rd_uleb(r);
		rd_block(r, in);
		break;
	default: return false; /* an opcode we cannot size: the rest is unreadable */
	}
	return !r->failed;
}
