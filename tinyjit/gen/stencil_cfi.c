/* stencil_cfi.c - read the CFI of a relocatable object's .eh_frame (LSB 5.0
 * "Exception Frames", DWARF 4 call frame instructions, section 6.4) with
 * formats/ehframe.h's reader and instruction walker.
 */
#include <stdio.h>
#include <string.h>

#include "formats/ehframe.h"
#include "stencil_cfi.h"

#define FAIL(...)                                   \
	do {                                        \
		snprintf(err, errlen, __VA_ARGS__); \
		return -1;                          \
	} while (0)

/* The standard CIE's initial instructions, as clang and gcc emit them:
 * DW_CFA_def_cfa rsp+8; DW_CFA_offset r16 at cfa-8. */
static const uint8_t std_initial[] = { DW_CFA_def_cfa, EH_REG_RSP, 8, DW_CFA_offset | EH_REG_RA, 1 };

static size_t strip_nops(const uint8_t *p, size_t n)
{
	while (n && p[n - 1] == DW_CFA_nop)
		n--;
	return n;
}

static int check_cie(const uint8_t *cie, size_t len, const char *path, char *err, size_t errlen)
{
	byte_rd r = rd_make(cie, len);
	unsigned version = rd_u8(&r);
	const char *aug = rd_cstr(&r, 16);
	if (version != 1 && version != 3)
		FAIL("%s: CIE version %u is not 1 or 3", path, version);
	if (!aug || strcmp(aug, "zR") != 0)
		FAIL("%s: CIE augmentation is '%s', expected \"zR\"", path, aug ? aug : "(cut short)");
	uint64_t code_align = rd_uleb(&r);
	int64_t data_align = rd_sleb(&r);
	uint64_t ra = version == 1 ? rd_u8(&r) : rd_uleb(&r);
	uint64_t auglen = rd_uleb(&r);
	uint64_t enc = rd_u8(&r);
	if (r.failed || auglen != 1)
		FAIL("%s: malformed CIE", path);
	if (code_align != 1 || data_align != -8 || ra != EH_REG_RA)
		FAIL("%s: CIE has code alignment %llu, data alignment %lld, return address column %llu; "
		     "the jitunwind API assumes 1, -8, 16",
		     path, (unsigned long long)code_align, (long long)data_align, (unsigned long long)ra);
	if (enc != (DW_EH_PE_pcrel | DW_EH_PE_sdata4))
		FAIL("%s: FDE pointer encoding 0x%02llx, expected pcrel|sdata4", path,
		     (unsigned long long)enc);
	size_t n = strip_nops(r.p, rd_left(&r));
	if (n != sizeof std_initial || memcmp(r.p, std_initial, n) != 0)
		FAIL("%s: CIE initial instructions are not 'def_cfa rsp+8; offset r16 cfa-8'", path);
	return 0;
}

/* The relocation that gives the FDE at byte `off` its pc_begin. */
static const eo_reloc *pc_begin_reloc(const eo_object *o, size_t off)
{
	for (size_t i = 0; i < o->n_eh_relocs; i++)
		if (o->eh_relocs[i].offset == off)
			return &o->eh_relocs[i];
	return NULL;
}

int eh_find_fde(const eo_object *o, const eo_func *f, eh_fde *out, char *err, size_t errlen)
{
	const uint8_t *base = o->eh_frame;
	size_t size = o->eh_frame_size, off = 0;
	if (!base)
		FAIL("%s: no .eh_frame (compile with -fasynchronous-unwind-tables)", o->path);
	while (off + 4 <= size) {
		byte_rd r = rd_make(base + off, size - off);
		uint64_t len = rd_u32(&r);
		if (len == 0)
			break;
		if (len == DWARF64_ESCAPE || len > size - off - 4)
			FAIL("%s: .eh_frame record at 0x%zx has a bad length", o->path, off);
		const uint8_t *body = r.p, *next = r.p + len;
		uint64_t cie_ptr = rd_u32(&r);
		if (cie_ptr != EH_CIE_ID) {
			size_t cie_off = (size_t)(body - base) - (size_t)cie_ptr;
			const eo_reloc *pr = pc_begin_reloc(o, (size_t)(r.p - base));
			/* pc_begin is S + A - P with S a section (or the function) */
			uint64_t target = pr ? pr->sym_value + (uint64_t)pr->addend : 0;
			if (pr && pr->sym_defined && pr->sym_shndx == f->shndx && target == f->value) {
				byte_rd c = rd_make(base + cie_off, size - cie_off);
				uint64_t clen = rd_u32(&c);
				if (c.failed || clen > size - cie_off - 4 || rd_u32(&c) != EH_CIE_ID)
					FAIL("%s: FDE at 0x%zx points at no CIE", o->path, off);
				if (check_cie(c.p, clen - 4, o->path, err, errlen))
					return -1;
				rd_u32(&r); /* pc_begin */
				out->range = rd_u32(&r);
				uint64_t aug = rd_uleb(&r);
				if (r.failed || aug > (uint64_t)(next - r.p))
					FAIL("%s: malformed FDE at 0x%zx", o->path, off);
				r.p += aug;
				out->insns = r.p;
				out->len = strip_nops(r.p, (size_t)(next - r.p));
				if (out->range != f->size)
					FAIL("%s: FDE of %s covers %llu bytes, the function has %zu", o->path,
					     f->name, (unsigned long long)out->range, f->size);
				return 0;
			}
		}
		off = (size_t)(next - base);
	}
	FAIL("%s: no FDE covers %s", o->path, f->name);
}

int eh_row_at(const eh_fde *fde, uint64_t at, eh_row *row, char *err, size_t errlen)
{
	eh_row cur = { EH_REG_RSP, 8, 0, 1, 0, -8 }, saved[8];
	int depth = 0;
	uint64_t loc = 0;
	byte_rd r = rd_make(fde->insns, fde->len);
	while (rd_left(&r)) {
		cfa_insn in;
		if (!cfa_next(&r, DW_EH_PE_omit, &in) && !r.failed)
			FAIL("unsupported call frame instruction 0x%02x", in.op);
		if (r.failed)
			FAIL("truncated call frame instructions");
		int64_t off = (int64_t)in.uarg * -8; /* the data alignment check_cie wants */
		switch (in.op) {
		case DW_CFA_nop: break;
		case DW_CFA_advance_loc:
		case DW_CFA_advance_loc1:
		case DW_CFA_advance_loc2:
		case DW_CFA_advance_loc4:
			if (loc + in.advance > at)
				goto done;
			loc += in.advance;
			break;
		case DW_CFA_def_cfa:
			cur.cfa_reg = (unsigned)in.reg;
			cur.cfa_offset = (int64_t)in.uarg;
			break;
		case DW_CFA_def_cfa_register: cur.cfa_reg = (unsigned)in.reg; break;
		case DW_CFA_def_cfa_offset: cur.cfa_offset = (int64_t)in.uarg; break;
		case DW_CFA_offset:
		case DW_CFA_offset_extended:
			if (in.reg == EH_REG_RBP) {
				cur.has_fp = 1;
				cur.fp_offset = off;
			} else if (in.reg == EH_REG_RA) {
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
		case DW_CFA_restore:
			FAIL("DW_CFA_restore is not supported in the shim's FDE");
		default:
			FAIL("unsupported call frame instruction 0x%02x", in.op);
		}
	}
done:
	*row = cur;
	return 0;
}
