/* ehframe.c - parse .eh_frame records (LSB 5.0 "Exception Frames" and the
 * DWARF 4 call frame instructions, section 6.4) of a relocatable object.
 */
#include <dwarf.h>
#include <stdio.h>
#include <string.h>

#include "ehframe.h"

#define FAIL(...)                                   \
	do {                                        \
		snprintf(err, errlen, __VA_ARGS__); \
		return -1;                          \
	} while (0)

typedef struct {
	const uint8_t *p, *end;
	int bad;
} rd;

static uint64_t rd_fixed(rd *r, unsigned n)
{
	if ((size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return 0;
	}
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static uint64_t rd_uleb(rd *r)
{
	uint64_t v = 0;
	for (unsigned shift = 0; r->p < r->end && shift < 64; shift += 7) {
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

static int64_t rd_sleb(rd *r)
{
	int64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0x80;
	while (r->p < r->end && shift < 64 && (b & 0x80)) {
		b = *r->p++;
		v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
	}
	if (b & 0x80) {
		r->bad = 1;
		return 0;
	}
	if (shift < 64 && (b & 0x40))
		v |= -((int64_t)1 << shift);
	return v;
}

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
	rd r = { cie, cie + len, 0 };
	unsigned version = (unsigned)rd_fixed(&r, 1);
	const char *aug = (const char *)r.p;
	size_t auglen = strnlen(aug, (size_t)(r.end - r.p));
	r.p += auglen + 1;
	if (version != 1 && version != 3)
		FAIL("%s: CIE version %u is not 1 or 3", path, version);
	if (auglen != 2 || memcmp(aug, "zR", 2) != 0)
		FAIL("%s: CIE augmentation is '%.*s', expected \"zR\"", path, (int)auglen, aug);
	uint64_t code_align = rd_uleb(&r);
	int64_t data_align = rd_sleb(&r);
	uint64_t ra = version == 1 ? rd_fixed(&r, 1) : rd_uleb(&r);
	uint64_t auglen2 = rd_uleb(&r);
	uint64_t enc = rd_fixed(&r, 1);
	if (r.bad || auglen2 != 1)
		FAIL("%s: malformed CIE", path);
	if (code_align != 1 || data_align != -8 || ra != EH_REG_RA)
		FAIL("%s: CIE has code alignment %llu, data alignment %lld, return address column %llu; "
		     "the jitunwind API assumes 1, -8, 16",
		     path, (unsigned long long)code_align, (long long)data_align, (unsigned long long)ra);
	if (enc != (DW_EH_PE_pcrel | DW_EH_PE_sdata4))
		FAIL("%s: FDE pointer encoding 0x%02llx, expected pcrel|sdata4", path,
		     (unsigned long long)enc);
	size_t n = strip_nops(r.p, (size_t)(r.end - r.p));
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
		rd r = { base + off, base + size, 0 };
		uint64_t len = rd_fixed(&r, 4);
		if (len == 0)
			break;
		if (len == 0xffffffff || len > size - off - 4)
			FAIL("%s: .eh_frame record at 0x%zx has a bad length", o->path, off);
		const uint8_t *body = r.p, *next = r.p + len;
		uint64_t cie_ptr = rd_fixed(&r, 4);
		if (cie_ptr != 0) {
			size_t cie_off = (size_t)(body - base) - (size_t)cie_ptr;
			const eo_reloc *pr = pc_begin_reloc(o, (size_t)(r.p - base));
			/* pc_begin is S + A - P with S a section (or the function) */
			uint64_t target = pr ? pr->sym_value + (uint64_t)pr->addend : 0;
			if (pr && pr->sym_defined && pr->sym_shndx == f->shndx && target == f->value) {
				rd c = { base + cie_off, base + size, 0 };
				uint64_t clen = rd_fixed(&c, 4);
				if (c.bad || clen > size - cie_off - 4 || rd_fixed(&c, 4) != 0)
					FAIL("%s: FDE at 0x%zx points at no CIE", o->path, off);
				if (check_cie(c.p, clen - 4, o->path, err, errlen))
					return -1;
				rd_fixed(&r, 4); /* pc_begin */
				out->range = rd_fixed(&r, 4);
				uint64_t aug = rd_uleb(&r);
				if (r.bad || aug > (uint64_t)(next - r.p))
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
	rd r = { fde->insns, fde->insns + fde->len, 0 };
	while (r.p < r.end && !r.bad) {
		uint8_t op = *r.p++;
		uint64_t adv = 0, reg;
		int64_t off;
		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			adv = op & 0x3f;
			goto advance;
		case DW_CFA_offset:
			reg = op & 0x3f;
			off = (int64_t)rd_uleb(&r) * -8;
			goto offset;
		case DW_CFA_restore:
			FAIL("DW_CFA_restore is not supported in the shim's FDE");
		}
		switch (op) {
		case DW_CFA_nop: break;
		case DW_CFA_advance_loc1: adv = rd_fixed(&r, 1); goto advance;
		case DW_CFA_advance_loc2: adv = rd_fixed(&r, 2); goto advance;
		case DW_CFA_advance_loc4: adv = rd_fixed(&r, 4); goto advance;
		case DW_CFA_def_cfa:
			cur.cfa_reg = (unsigned)rd_uleb(&r);
			cur.cfa_offset = (int64_t)rd_uleb(&r);
			break;
		case DW_CFA_def_cfa_register: cur.cfa_reg = (unsigned)rd_uleb(&r); break;
		case DW_CFA_def_cfa_offset: cur.cfa_offset = (int64_t)rd_uleb(&r); break;
		case DW_CFA_offset_extended:
			reg = rd_uleb(&r);
			off = (int64_t)rd_uleb(&r) * -8;
			goto offset;
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
		default:
			FAIL("unsupported call frame instruction 0x%02x", op);
		}
		continue;
	advance:
		if (loc + adv > at)
			break;
		loc += adv;
		continue;
	offset:
		if (reg == EH_REG_RBP) {
			cur.has_fp = 1;
			cur.fp_offset = off;
		} else if (reg == EH_REG_RA) {
			cur.has_ra = 1;
			cur.ra_offset = off;
		}
	}
	if (r.bad)
		FAIL("truncated call frame instructions");
	*row = cur;
	return 0;
}
