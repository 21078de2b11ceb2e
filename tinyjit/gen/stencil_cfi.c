/* SPDX-License-Identifier: MIT */
/* stencil_cfi.c - read the CFI of a relocatable object's .eh_frame (LSB 5.0
 * "Exception Frames", DWARF 4 call frame instructions, section 6.4) with
 * formats/ehframe.h's record reader and instruction walker.
 */
#include <stdio.h>
#include <string.h>

#include <gelf.h>

#include "formats/bytes.h"
#include "formats/ehframe.h"
#include "stencil_cfi.h"

#define FAIL(...)                                                                                            \
	do {                                                                                                 \
		snprintf(err, errlen, __VA_ARGS__);                                                          \
		return -1;                                                                                   \
	} while (0)

static size_t strip_nops(const uint8_t *p, size_t n)
{
	while (n && p[n - 1] == DW_CFA_nop)
		n--;
	return n;
}

/* The standard CIE's initial instructions, as clang and gcc emit them:
 * DW_CFA_def_cfa sp+entry, and on x86-64 DW_CFA_offset r16 at cfa-8 (the
 * call pushed the return address; on AArch64 it is still in lr). */
static size_t std_initial(const isa_ops *isa, int64_t data_align, uint8_t out[8])
{
	size_t n = 0;
	out[n++] = DW_CFA_def_cfa;
	out[n++] = (uint8_t)isa->dw_sp;
	out[n++] = (uint8_t)isa->entry_cfa_offset;
	if (isa->ra_saved_at_entry) {
		out[n++] = (uint8_t)(DW_CFA_offset | isa->dw_ra);
		out[n++] = (uint8_t)(-8 / data_align);
	}
	return n;
}

/* The CIE must be the architecture's standard one (stencil_cfi.h). */
static int check_cie(const isa_ops *isa, const eh_cie_info *c, const char *path, eh_fde *out, char *err,
		     size_t errlen)
{
	if (strcmp(c->aug, "zR") != 0)
		FAIL("%s: CIE augmentation is '%s', expected \"zR\"", path, c->aug);
	if (c->aug_len != 1)
		FAIL("%s: malformed CIE", path);
	/* x86-64 raw CFI goes to the API verbatim, so its factors must be the
	 * API's; AArch64's are rewritten (eh_fde_rebase), any will do. */
	int factors_ok = isa->machine == EM_X86_64 ? c->code_align == isa->api_code_align &&
							     c->data_align == isa->api_data_align
						   : c->code_align >= 1 && c->data_align < 0;
	if (!factors_ok || c->ra_reg != isa->dw_ra)
		FAIL("%s: CIE has code alignment %llu, data alignment %lld, return address column %llu; "
		     "the %s jitunwind API assumes %llu, %lld, %u",
		     path, (unsigned long long)c->code_align, (long long)c->data_align,
		     (unsigned long long)c->ra_reg, isa->name, (unsigned long long)isa->api_code_align,
		     (long long)isa->api_data_align, isa->dw_ra);
	/* AArch64's large code model makes clang write 8-byte pc fields */
	uint8_t enc = c->fde_enc;
	if (enc != (DW_EH_PE_pcrel | DW_EH_PE_sdata4) && enc != (DW_EH_PE_pcrel | DW_EH_PE_sdata8))
		FAIL("%s: FDE pointer encoding 0x%02x, expected pcrel|sdata4 or pcrel|sdata8", path, enc);
	out->wide_pc = enc == (DW_EH_PE_pcrel | DW_EH_PE_sdata8);
	uint8_t want[8];
	size_t nw = std_initial(isa, c->data_align, want);
	/* the rest must be padding; not strip_nops: def_cfa sp+0 ends in a 0 */
	size_t n = c->insns_len;
	if (n < nw || memcmp(c->insns, want, nw) != 0 || strip_nops(c->insns + nw, n - nw) != 0)
		FAIL("%s: CIE initial instructions are not the standard %s ones (def_cfa sp+%llu%s)", path,
		     isa->name, (unsigned long long)isa->entry_cfa_offset,
		     isa->ra_saved_at_entry ? "; return address at cfa-8" : "");
	out->isa = isa;
	out->code_align = c->code_align;
	out->data_align = c->data_align;
	return 0;
}

/* Whether FDE r describes f: the relocation that gives its pc_begin (S + A
 * - P, S a section or the function) points at f. */
static bool describes(const eo_object *o, const eh_rec *r, const eo_func *f)
{
	size_t pc_begin = r->id_off + 4;
	for (size_t i = 0; i < o->n_eh_relocs; i++) {
		const eo_reloc *pr = &o->eh_relocs[i];
		if (pr->offset == pc_begin)
			return pr->sym_defined && pr->sym_shndx == f->shndx &&
			       pr->sym_value + (uint64_t)pr->addend == f->value;
	}
	return false;
}

int eh_find_fde(const eo_object *o, const eo_func *f, eh_fde *out, char *err, size_t errlen)
{
	const isa_ops *isa = isa_for(o->machine);
	if (!isa)
		FAIL("%s: no instruction-set table for ELF machine %u", o->path, o->machine);
	if (!o->eh_frame)
		FAIL("%s: no .eh_frame (compile with -fasynchronous-unwind-tables)", o->path);
	/* relocations, not the section's address, give pc_begin here */
	eh_section s = { .data = o->eh_frame, .size = o->eh_frame_size };
	size_t off = 0;
	eh_rec rec;
	int got;
	while ((got = eh_next(&s, &off, &rec)) == 1) {
		if (rec.is_cie || !describes(o, &rec, f))
			continue;
		eh_cie_info c;
		eh_fde_info fi;
		if (!eh_cie_read(&s, rec.cie_off, &c))
			FAIL("%s: FDE at 0x%zx points at no CIE it can read", o->path, rec.off);
		if (check_cie(isa, &c, o->path, out, err, errlen))
			return -1;
		if (!eh_fde_read(&s, &rec, &c, &fi))
			FAIL("%s: malformed FDE at 0x%zx", o->path, rec.off);
		out->range = fi.pc_range;
		out->insns = fi.insns;
		out->len = strip_nops(fi.insns, fi.insns_len);
		if (out->range != f->size)
			FAIL("%s: FDE of %s covers %llu bytes, the function has %zu", o->path, f->name,
			     (unsigned long long)out->range, f->size);
		return 0;
	}
	if (got < 0)
		FAIL("%s: .eh_frame record at 0x%zx has a bad length", o->path, off);
	FAIL("%s: no FDE covers %s", o->path, f->name);
}

int eh_row_at(const eh_fde *fde, uint64_t at, eh_row *row, char *err, size_t errlen)
{
	const isa_ops *isa = fde->isa;
	eh_row cur = { isa->dw_sp, (int64_t)isa->entry_cfa_offset, 0, isa->ra_saved_at_entry, 0, -8 },
	       saved[8];
	int depth = 0;
	uint64_t loc = 0;
	byte_rd r = rd_make(fde->insns, fde->len);
	while (rd_left(&r)) {
		cfa_insn in;
		if (!cfa_next(&r, DW_EH_PE_omit, &in) && !r.failed)
			FAIL("unsupported call frame instruction 0x%02x", in.op);
		if (r.failed)
			FAIL("truncated call frame instructions");
		int64_t off = (int64_t)in.uarg * fde->data_align;
		uint64_t advance = in.advance * fde->code_align;
		switch (in.op) {
		case DW_CFA_nop: break;
		case DW_CFA_advance_loc:
		case DW_CFA_advance_loc1:
		case DW_CFA_advance_loc2:
		case DW_CFA_advance_loc4:
			if (loc + advance > at)
				goto done;
			loc += advance;
			break;
		case DW_CFA_def_cfa:
			cur.cfa_reg = (unsigned)in.reg;
			cur.cfa_offset = (int64_t)in.uarg;
			break;
		case DW_CFA_def_cfa_register: cur.cfa_reg = (unsigned)in.reg; break;
		case DW_CFA_def_cfa_offset: cur.cfa_offset = (int64_t)in.uarg; break;
		case DW_CFA_offset:
		case DW_CFA_offset_extended:
			if (in.reg == isa->dw_fp) {
				cur.has_fp = 1;
				cur.fp_offset = off;
			} else if (in.reg == isa->dw_ra) {
				cur.has_ra = 1;
				cur.ra_offset = off;
			}
			break;
		case DW_CFA_remember_state:
			if (depth == 8)
				FAIL("remember_state nested too deep");
			saved[depth++] = cur;
			break;
		case DW_CFA_restore_state:
			if (depth == 0)
				FAIL("restore_state without remember_state");
			cur = saved[--depth];
			break;
		case DW_CFA_restore: FAIL("DW_CFA_restore is not supported in the shim's FDE");
		default: FAIL("unsupported call frame instruction 0x%02x", in.op);
		}
	}
done:
	*row = cur;
	return 0;
}

static void put_reg_op(byte_buf *b, uint8_t op, uint64_t reg)
{
	buf_u8(b, op);
	buf_uleb(b, reg);
}

int eh_fde_rebase(const eh_fde *fde, uint8_t *out, size_t cap, size_t *len, char *err, size_t errlen)
{
	const isa_ops *isa = fde->isa;
	if (fde->code_align == isa->api_code_align && fde->data_align == isa->api_data_align &&
	    isa->machine == EM_X86_64) {
		if (fde->len > cap)
			FAIL("%zu bytes of call frame instructions, more than %zu", fde->len, cap);
		memcpy(out, fde->insns, fde->len);
		*len = fde->len;
		return 0;
	}
	byte_buf b;
	buf_init(&b, out, cap);
	byte_rd r = rd_make(fde->insns, fde->len);
	while (rd_left(&r)) {
		cfa_insn in;
		if (!cfa_next(&r, DW_EH_PE_omit, &in) || r.failed)
			FAIL("call frame instruction 0x%02x cannot be read", in.op);
		int64_t off = (int64_t)in.uarg * fde->data_align;
		uint64_t bytes = in.advance * fde->code_align;
		switch (in.op) {
		case DW_CFA_nop: break;
		case DW_CFA_advance_loc:
		case DW_CFA_advance_loc1:
		case DW_CFA_advance_loc2:
		case DW_CFA_advance_loc4:
			if (bytes % isa->api_code_align)
				FAIL("an advance of %llu bytes is not a multiple of %llu",
				     (unsigned long long)bytes, (unsigned long long)isa->api_code_align);
			cfa_advance(&b, bytes / isa->api_code_align);
			break;
		case DW_CFA_def_cfa:
			put_reg_op(&b, DW_CFA_def_cfa, in.reg);
			buf_uleb(&b, in.uarg);
			break;
		case DW_CFA_def_cfa_register: put_reg_op(&b, DW_CFA_def_cfa_register, in.reg); break;
		case DW_CFA_def_cfa_offset:
			buf_u8(&b, DW_CFA_def_cfa_offset);
			buf_uleb(&b, in.uarg);
			break;
		case DW_CFA_offset:
		case DW_CFA_offset_extended:
			if (off % isa->api_data_align || off / isa->api_data_align < 0)
				FAIL("register %llu saved at CFA%+lld: not a multiple of %lld",
				     (unsigned long long)in.reg, (long long)off,
				     (long long)isa->api_data_align);
			if (in.reg < 0x40)
				buf_u8(&b, (uint8_t)(DW_CFA_offset | in.reg));
			else
				put_reg_op(&b, DW_CFA_offset_extended, in.reg);
			buf_uleb(&b, (uint64_t)(off / isa->api_data_align));
			break;
		case DW_CFA_restore:
		case DW_CFA_restore_extended:
		case DW_CFA_same_value: put_reg_op(&b, DW_CFA_same_value, in.reg); break;
		case DW_CFA_undefined: put_reg_op(&b, DW_CFA_undefined, in.reg); break;
		case DW_CFA_remember_state:
		case DW_CFA_restore_state: buf_u8(&b, in.op); break;
		default: FAIL("call frame instruction 0x%02x is not supported", in.op);
		}
	}
	if (!buf_ok(&b))
		FAIL("the rewritten call frame instructions need more than %zu bytes", cap);
	*len = b.len;
	return 0;
}
