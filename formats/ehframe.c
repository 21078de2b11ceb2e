/* ehframe.c - .eh_frame and .eh_frame_hdr writers, DW_EH_PE values and the
 * call frame instruction walker (see ehframe.h).
 */
#include "ehframe.h"

size_t eh_cie_begin(byte_buf *b, const eh_cie *c)
{
	bool v1 = c->ra_reg < 256;
	size_t cie = b->len;
	buf_len32_begin(b);
	buf_u32(b, EH_CIE_ID);                /* CIE id */
	buf_u8(b, v1 ? 1 : 3);                /* version */
	buf_str(b, c->signal ? "zRS" : "zR"); /* z: augmentation data follows; R: FDE pointer encoding */
	buf_uleb(b, c->code_align);           /* code alignment factor */
	buf_sleb(b, c->data_align);           /* data alignment factor */
	if (v1)
		buf_u8(b, (uint8_t)c->ra_reg); /* return address column */
	else
		buf_uleb(b, c->ra_reg);
	buf_uleb(b, 1);        /* augmentation data length */
	buf_u8(b, c->fde_enc); /* 'R': FDE pc_begin encoding */
	return cie;
}

size_t eh_fde_header_size(uint8_t enc)
{
	return enc == DW_EH_PE_absptr ? 4 + 4 + 8 + 8 + 1 : 4 + 4 + 4 + 4 + 1;
}

size_t eh_fde_begin(byte_buf *b, size_t cie_off, uint8_t enc, uint64_t base, uint64_t pc, uint64_t range)
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
	buf_uleb(b, 0); /* augmentation data length */
	return entry;
}

void eh_entry_end(byte_buf *b, size_t entry)
{
	for (size_t n = b->len - entry; n & 7; n++) /* counted: a failed b stops growing */
		buf_u8(b, DW_CFA_nop);
	buf_len32_end(b, entry);
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
