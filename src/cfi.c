/* SPDX-License-Identifier: MIT */
/* cfi.c - the library's CIE and FDEs, from its frame descriptions, and the
 * checks on those descriptions.
 *
 * Records go through formats/ehframe.h (LSB .eh_frame: DWARF 4 section 6.4
 * with "zR" augmentation), each padded with DW_CFA_nop to 8 bytes; this file
 * holds what is the library's own: the CFA programs of each frame kind and
 * the policy on a caller's raw instructions.
 */
#include "cfi.h"

#include <stdio.h>
#include <string.h>

static uint64_t factor_code(const ju_arch *a, uint32_t bytes)
{
	return bytes / a->code_align;
}

void cfi_def_cfa(const ju_arch *a, byte_buf *b, unsigned reg, int64_t off)
{
	if (off >= 0) {
		buf_u8(b, DW_CFA_def_cfa);
		buf_uleb(b, reg);
		buf_uleb(b, (uint64_t)off);
	} else {
		buf_u8(b, DW_CFA_def_cfa_sf);
		buf_uleb(b, reg);
		buf_sleb(b, off / a->data_align);
	}
}

void cfi_def_cfa_offset(const ju_arch *a, byte_buf *b, int64_t off)
{
	if (off >= 0) {
		buf_u8(b, DW_CFA_def_cfa_offset);
		buf_uleb(b, (uint64_t)off);
	} else {
		buf_u8(b, DW_CFA_def_cfa_offset_sf);
		buf_sleb(b, off / a->data_align);
	}
}

void cfi_def_cfa_register(const ju_arch *a, byte_buf *b, unsigned reg)
{
	(void)a;
	buf_u8(b, DW_CFA_def_cfa_register);
	buf_uleb(b, reg);
}

void cfi_offset(const ju_arch *a, byte_buf *b, unsigned reg, int64_t cfa_off)
{
	int64_t factored = cfa_off / a->data_align;
	if (factored >= 0 && reg < 64) {
		buf_u8(b, DW_CFA_offset | reg);
		buf_uleb(b, (uint64_t)factored);
	} else if (factored >= 0) {
		buf_u8(b, DW_CFA_offset_extended);
		buf_uleb(b, reg);
		buf_uleb(b, (uint64_t)factored);
	} else {
		buf_u8(b, DW_CFA_offset_extended_sf);
		buf_uleb(b, reg);
		buf_sleb(b, factored);
	}
}

void cfi_advance(const ju_arch *a, byte_buf *b, uint32_t bytes)
{
	cfa_advance(b, factor_code(a, bytes));
}

void cfi_same_value(byte_buf *b, unsigned reg)
{
	buf_u8(b, DW_CFA_same_value);
	buf_uleb(b, reg);
}

void cfi_remember_state(byte_buf *b)
{
	buf_u8(b, DW_CFA_remember_state);
}

void cfi_restore_state(byte_buf *b)
{
	buf_u8(b, DW_CFA_restore_state);
}

static size_t write_cie(const ju_arch *a, byte_buf *b, const eh_cie *c)
{
	size_t cie = eh_cie_begin(b, c);
	a->cie_initial(a, b); /* initial instructions: the entry state */
	eh_entry_end(b, cie);
	return cie;
}

size_t cfi_write_cie(const ju_arch *a, byte_buf *b, cfi_enc enc)
{
	return write_cie(a, b,
			 &(eh_cie){ a->code_align, a->data_align, a->ra_reg, (uint8_t)enc, false, 0, false });
}

size_t cfi_write_cie_personality(const ju_arch *a, byte_buf *b, uint64_t personality, bool lsda)
{
	return write_cie(a, b,
			 &(eh_cie){ a->code_align, a->data_align, a->ra_reg, (uint8_t)CFI_ENC_ABS8, false,
				    personality, lsda });
}

static void fp_program(const ju_arch *a, byte_buf *b, const ju_frame *f, uint64_t size)
{
	uint32_t at = 0;
	cfi_advance(a, b, f->u.fp.push_end);
	a->fp_saved(a, b);
	cfi_advance(a, b, f->u.fp.set_end - f->u.fp.push_end);
	a->fp_set(a, b);
	at = f->u.fp.set_end;
	for (size_t i = 0; i < f->u.fp.n_saved; i++) {
		const ju_saved_reg *r = &f->u.fp.saved[i];
		cfi_advance(a, b, r->saved_end - at);
		cfi_offset(a, b, r->reg, r->cfa_offset);
		at = r->saved_end;
	}
	for (size_t i = 0; i < f->u.fp.n_epilogues; i++) {
		const ju_range *e = &f->u.fp.epilogues[i];
		cfi_advance(a, b, e->start - at);
		cfi_remember_state(b);
		a->fp_restored(a, b);
		/* The epilogue popped them before the frame pointer: the caller's
		 * values are in the registers again.  Not DW_CFA_restore (see
		 * ARCHITECTURE.md). */
		for (size_t k = 0; k < f->u.fp.n_saved; k++)
			cfi_same_value(b, f->u.fp.saved[k].reg);
		at = e->start;
		if (e->end < size) {
			cfi_advance(a, b, e->end - at);
			cfi_restore_state(b);
			at = e->end;
		}
	}
}

static void region_program(const ju_arch *a, byte_buf *b, const ju_frame *f)
{
	cfi_def_cfa(a, b, a->fp_reg, f->u.region.cfa_offset);
	cfi_offset(a, b, a->fp_reg, f->u.region.fp_offset);
	cfi_offset(a, b, a->ra_reg, f->u.region.ra_offset);
	for (size_t i = 0; i < f->u.region.n_saved; i++)
		cfi_offset(a, b, f->u.region.saved[i].reg, f->u.region.saved[i].cfa_offset);
}

static int scan_insns(const ju_arch *a, const uint8_t *p, size_t n, uint64_t len, char *msg, size_t msglen,
		      struct insn_scan *out);

void cfi_memo_init(cfi_memo *m)
{
	memset(m->slot, 0, sizeof m->slot);
	m->n = 0;
	m->call = 0;
}

void cfi_memo_call(cfi_memo *m)
{
	m->call++;
}

/* The slot of the table for instructions at p, n bytes: the one holding
 * them, or the empty one where they go (the table always has one). */
static size_t memo_slot(const cfi_memo *m, const uint8_t *p, size_t n)
{
	enum { MASK = CFI_MEMO_SLOTS - 1 };
	uint64_t h = ((uint64_t)(uintptr_t)p ^ n) * 0x9e3779b97f4a7c15ull;
	size_t at = (size_t)(h >> 40) & MASK;
	for (uint8_t e; (e = m->slot[at]) && (m->entry[e - 1].p != p || m->entry[e - 1].n != n);)
		at = (at + 1) & MASK;
	return at;
}

/* scan_insns, remembered (cfi_memo): a list that passed is not read again,
 * but for its bytes when it was checked in another call; its end offset is
 * compared with each range's length, as the scan would.  A failure scans
 * again, for the message.  `m` may be NULL. */
static int scan_memo(const ju_arch *a, cfi_memo *m, const uint8_t *p, size_t n, uint64_t len, char *msg,
		     size_t msglen, struct insn_scan *out)
{
	if (!m || !n)
		return scan_insns(a, p, n, len, msg, msglen, out);
	size_t at = memo_slot(m, p, n);
	struct cfi_memo_entry *e = m->slot[at] ? &m->entry[m->slot[at] - 1] : NULL;
	if (e && (e->call == m->call || (n <= CFI_MEMO_COPY && !memcmp(e->copy, p, n)))) {
		e->call = m->call;
		*out = e->scan;
		if (out->end_loc <= len)
			return 0; /* advances only add: no offset on the way went past len */
		return scan_insns(a, p, n, len, msg, msglen, out);
	}
	int err = scan_insns(a, p, n, len, msg, msglen, out);
	if (err)
		return err;
	if (!e) {
		if (m->n == CFI_MEMO_SLOTS - 1) { /* full: start again (call numbers go on) */
			memset(m->slot, 0, sizeof m->slot);
			m->n = 0;
			at = memo_slot(m, p, n);
		}
		e = &m->entry[m->n];
		m->slot[at] = (uint8_t)++m->n;
	}
	*e = (struct cfi_memo_entry){ .p = p, .n = n, .call = m->call, .scan = *out };
	if (n <= CFI_MEMO_COPY)
		memcpy(e->copy, p, n);
	return 0;
}

/* At a range boundary, "unchanged" for every register the range before
 * gave a rule to and for the return address, in register order, but where
 * the CIE's initial instructions (written just before) gave the rule
 * again. */
static void same_values(const ju_arch *a, byte_buf *b, const struct insn_scan *prev)
{
	uint64_t set[2] = { prev->touched[0], prev->touched[1] };
	if (a->ra_reg < 128 && !a->ra_rule_in_cie)
		set[a->ra_reg / 64] |= (uint64_t)1 << (a->ra_reg % 64);
	else if (a->ra_reg < 128)
		set[a->ra_reg / 64] &= ~((uint64_t)1 << (a->ra_reg % 64));
	for (unsigned w = 0; w < 2; w++)
		for (uint64_t bits = set[w]; bits; bits &= bits - 1)
			cfi_same_value(b, w * 64 + (unsigned)__builtin_ctzll(bits));
}

/* Raw CFI ranges become one FDE, from the first range's start to the last
 * one's end.  Debuggers look a function's FDE up by its first instruction
 * (lldb uses that one FDE for the whole function), so one FDE per range
 * would leave all but the first range unknown to them.  Each range's
 * instructions still start from the function-entry state: at a range
 * boundary the CFA and every register the previous range gave a rule to are
 * reset; a gap between ranges gets an undefined return address, "no unwind
 * information here", as no FDE would say. */
static void cfi_ranges_program(const ju_arch *a, byte_buf *b, size_t cie_off, cfi_enc enc, uint64_t base,
			       uint64_t start, const ju_frame *f, const uint64_t *lsda, cfi_memo *memo)
{
	const ju_cfi_range *r = f->u.cfi.ranges;
	size_t n = f->u.cfi.n;
	size_t entry =
		eh_fde_begin_lsda(b, cie_off, enc, base, start + r[0].start, r[n - 1].end - r[0].start, lsda);
	uint64_t at = r[0].start; /* offset in the blob the program has reached */
	struct insn_scan prev = { 0 };
	char msg[160];
	/* the CIE's initial instructions, written at every boundary */
	uint8_t initial[32];
	byte_buf ib;
	buf_init(&ib, initial, sizeof initial);
	if (n > 1)
		a->cie_initial(a, &ib);
	for (size_t i = 0; i < n; i++) {
		if (i) {
			cfi_advance(a, b, (uint32_t)(r[i].start - at));
			/* Back to the entry state: the CIE's own initial rules, then
			 * "unchanged" for every other register the range touched.
			 * Not DW_CFA_restore: libgcc takes it as "unchanged" even for
			 * the return address (a loop: the RA becomes the pc), and
			 * lldb-16 ignores it for registers the CIE leaves alone. */
			buf_bytes(b, initial, ib.len);
			same_values(a, b, &prev);
			at = r[i].start;
		}
		struct insn_scan scan;
		if (!buf_ok(&ib) ||
		    scan_memo(a, memo, r[i].insns, r[i].len, r[i].end - r[i].start, msg, sizeof msg, &scan)) {
			b->failed = true; /* cfi_check_frame let it through: cannot happen */
			return;
		}
		buf_bytes(b, r[i].insns, r[i].len);
		at += scan.end_loc;
		prev = scan;
		if (i + 1 < n && r[i + 1].start > r[i].end) {
			cfi_advance(a, b, (uint32_t)(r[i].end - at));
			buf_u8(b, DW_CFA_undefined); /* the gap: nothing to unwind with */
			buf_uleb(b, a->ra_reg);
			at = r[i].end;
		}
	}
	eh_entry_end(b, entry);
}

void cfi_write_blob_fdes(const ju_arch *a, byte_buf *b, size_t cie_off, cfi_enc enc, uint64_t base,
			 uint64_t start, uint64_t size, const ju_frame *f, const uint64_t *lsda,
			 cfi_memo *memo)
{
	size_t entry;
	switch (f->kind) {
	case JU_FRAME_LEAF:
		entry = eh_fde_begin_lsda(b, cie_off, enc, base, start, size, lsda);
		eh_entry_end(b, entry);
		break;
	case JU_FRAME_FP:
		entry = eh_fde_begin_lsda(b, cie_off, enc, base, start, size, lsda);
		fp_program(a, b, f, size);
		eh_entry_end(b, entry);
		break;
	case JU_FRAME_REGION:
		entry = eh_fde_begin_lsda(b, cie_off, enc, base, start, size, lsda);
		region_program(a, b, f);
		eh_entry_end(b, entry);
		break;
	case JU_FRAME_CFI: cfi_ranges_program(a, b, cie_off, enc, base, start, f, lsda, memo); break;
	default: b->failed = true;
	}
}

/* ---- checks on caller input ---------------------------------------------- */

#define CHECK(cond, ...)                                                                                     \
	do {                                                                                                 \
		if (!(cond)) {                                                                               \
			snprintf(msg, msglen, __VA_ARGS__);                                                  \
			return JU_ECFI;                                                                      \
		}                                                                                            \
	} while (0)

static int check_fp(const ju_arch *a, const ju_frame *f, uint64_t size, char *msg, size_t msglen)
{
	uint32_t push = f->u.fp.push_end, set = f->u.fp.set_end;
	CHECK(push > 0, "frame pointer frame: push_end must be after the save instruction (> 0)");
	CHECK(set > push, "frame pointer frame: set_end (%u) must follow push_end (%u)", set, push);
	CHECK(set <= size, "frame pointer frame: set_end (%u) is beyond the blob (%llu bytes)", set,
	      (unsigned long long)size);
	CHECK(push % a->insn_align == 0 && set % a->insn_align == 0,
	      "frame pointer frame: offsets must be multiples of %u on %s", a->insn_align, a->name);
	CHECK(f->u.fp.n_epilogues == 0 || f->u.fp.epilogues,
	      "frame pointer frame: n_epilogues is %zu but epilogues is NULL", f->u.fp.n_epilogues);
	CHECK(f->u.fp.n_saved == 0 || f->u.fp.saved, "frame pointer frame: n_saved is %zu but saved is NULL",
	      f->u.fp.n_saved);
	CHECK(f->u.fp.n_saved <= 32, "frame pointer frame: %zu saved registers (at most 32)",
	      f->u.fp.n_saved);
	uint32_t at = set;
	uint64_t seen[2] = { 0, 0 };
	int d = -a->data_align;
	for (size_t i = 0; i < f->u.fp.n_saved; i++) {
		const ju_saved_reg *r = &f->u.fp.saved[i];
		CHECK(r->reg < a->n_regs && r->reg < 128 && r->reg != a->fp_reg && r->reg != a->ra_reg &&
			      r->reg != a->sp_reg,
		      "frame pointer frame: saved register %zu (%u) is not a callee-saved %s register", i,
		      r->reg, a->name);
		CHECK(!(seen[r->reg / 64] >> (r->reg % 64) & 1),
		      "frame pointer frame: register %u saved twice", r->reg);
		seen[r->reg / 64] |= (uint64_t)1 << (r->reg % 64);
		CHECK(r->cfa_offset < -2 * d && r->cfa_offset % d == 0,
		      "frame pointer frame: saved register %u at CFA%+d: must be below the saved frame pointer "
		      "and return address, a multiple of %d",
		      r->reg, r->cfa_offset, d);
		/* >= the one before: AArch64's stp saves two in one instruction */
		CHECK(r->saved_end > set && r->saved_end >= at && r->saved_end <= size &&
			      r->saved_end % a->insn_align == 0,
		      "frame pointer frame: saved register %zu: saved_end %u must follow set_end and the saves "
		      "before it, inside the blob",
		      i, r->saved_end);
		at = r->saved_end;
	}
	for (size_t i = 0; i < f->u.fp.n_epilogues; i++) {
		const ju_range *e = &f->u.fp.epilogues[i];
		CHECK(e->start >= at && e->start < e->end && e->end <= size,
		      "frame pointer frame: epilogue %zu [%u, %u) is out of order or outside [%u, %llu)", i,
		      e->start, e->end, at, (unsigned long long)size);
		CHECK(e->start % a->insn_align == 0 && e->end % a->insn_align == 0,
		      "frame pointer frame: epilogue %zu is not instruction aligned", i);
		at = e->end;
	}
	return 0;
}

static int check_region(const ju_arch *a, const ju_frame *f, char *msg, size_t msglen)
{
	int32_t cfa = f->u.region.cfa_offset, fp = f->u.region.fp_offset, ra = f->u.region.ra_offset;
	int d = -a->data_align;
	CHECK(cfa >= 0, "region frame: cfa_offset (%d) must not be negative", cfa);
	CHECK(fp % d == 0 && ra % d == 0,
	      "region frame: fp_offset (%d) and ra_offset (%d) must be multiples of %d", fp, ra, d);
	CHECK(fp != ra, "region frame: fp_offset and ra_offset are both %d", fp);
	size_t n = f->u.region.n_saved;
	CHECK(n == 0 || f->u.region.saved, "region frame: n_saved is %zu but saved is NULL", n);
	CHECK(n <= 32, "region frame: %zu saved registers (at most 32)", n);
	uint64_t seen[2] = { 0, 0 };
	for (size_t i = 0; i < n; i++) {
		const ju_saved_reg *r = &f->u.region.saved[i];
		CHECK(r->reg < a->n_regs && r->reg < 128 && r->reg != a->fp_reg && r->reg != a->ra_reg &&
			      r->reg != a->sp_reg,
		      "region frame: saved register %zu (%u) is not a callee-saved %s register", i, r->reg,
		      a->name);
		CHECK(!(seen[r->reg / 64] >> (r->reg % 64) & 1), "region frame: register %u saved twice",
		      r->reg);
		seen[r->reg / 64] |= (uint64_t)1 << (r->reg % 64);
		CHECK(r->cfa_offset % d == 0 && r->cfa_offset != fp && r->cfa_offset != ra,
		      "region frame: saved register %u at CFA%+d: must be a multiple of %d, apart from the "
		      "saved frame pointer and return address",
		      r->reg, r->cfa_offset, d);
		CHECK(r->saved_end == 0,
		      "region frame: saved register %u has saved_end %u (the shim saved "
		      "it before the blob runs: 0)",
		      r->reg, r->saved_end);
	}
	return 0;
}

static int check_cfi(const ju_arch *a, const ju_frame *f, uint64_t size, cfi_memo *memo, char *msg,
		     size_t msglen)
{
	CHECK(f->u.cfi.n > 0 && f->u.cfi.ranges, "CFI frame: no ranges given");
	uint32_t at = 0;
	for (size_t i = 0; i < f->u.cfi.n; i++) {
		const ju_cfi_range *r = &f->u.cfi.ranges[i];
		CHECK(r->start >= at && r->start < r->end && r->end <= size,
		      "CFI frame: range %zu [%u, %u) is empty, out of order or outside the blob (%llu bytes)",
		      i, r->start, r->end, (unsigned long long)size);
		CHECK(r->len == 0 || r->insns, "CFI frame: range %zu has len %zu but insns is NULL", i,
		      r->len);
		CHECK(r->len <= 65536, "CFI frame: range %zu has %zu bytes of instructions (max 65536)", i,
		      r->len);
		char sub[160];
		struct insn_scan scan;
		if (scan_memo(a, memo, r->insns, r->len, r->end - r->start, sub, sizeof sub, &scan) < 0) {
			snprintf(msg, msglen, "CFI frame: range %zu: %s", i, sub);
			return JU_ECFI;
		}
		at = r->end;
	}
	return 0;
}

int cfi_check_frame(const ju_arch *a, const ju_frame *f, uint64_t size, cfi_memo *memo, char *msg,
		    size_t msglen)
{
	switch (f->kind) {
	case JU_FRAME_LEAF: return 0;
	case JU_FRAME_FP: return check_fp(a, f, size, msg, msglen);
	case JU_FRAME_REGION: return check_region(a, f, msg, msglen);
	case JU_FRAME_CFI: return check_cfi(a, f, size, memo, msg, msglen);
	default:
		snprintf(msg, msglen, "frame kind %d is not one of JU_FRAME_LEAF/FP/REGION/CFI",
			 (int)f->kind);
		return JU_ECFI;
	}
}

#undef CHECK

/* Does the opcode give a register a rule? */
static bool sets_rule(uint8_t op)
{
	switch (op) {
	case DW_CFA_offset:
	case DW_CFA_restore:
	case DW_CFA_register:
	case DW_CFA_offset_extended:
	case DW_CFA_val_offset:
	case DW_CFA_GNU_negative_offset_extended:
	case DW_CFA_offset_extended_sf:
	case DW_CFA_val_offset_sf:
	case DW_CFA_restore_extended:
	case DW_CFA_undefined:
	case DW_CFA_same_value:
	case DW_CFA_expression:
	case DW_CFA_val_expression: return true;
	default: return false;
	}
}

/* Check the instruction at byte `at` (read through r) and note what it
 * does: its advance in *advance, a rule given in out->touched, a state
 * remembered in *depth.  0, or -1 with a message. */
static int check_insn(const ju_arch *a, byte_rd *r, size_t at, int *depth, struct insn_scan *out,
		      uint64_t *advance, char *msg, size_t msglen)
{
	uint8_t op = r->p[0];
	cfa_insn in;
	/* DW_CFA_set_loc depends on the pointer encoding (omitted here);
	 * vendor opcodes (DW_CFA_low_user..high_user, the GNU ones
	 * included) mean nothing to some unwinders. */
	bool known = cfa_next(r, DW_EH_PE_omit, &in);
	if (r->failed) {
		snprintf(msg, msglen, "instructions end in the middle of an operand");
		return -1;
	}
	if (!known || (in.op >= DW_CFA_low_user && in.op <= DW_CFA_high_user)) {
		snprintf(msg, msglen, "unsupported CFA opcode 0x%02x at byte %zu", op, at);
		return -1;
	}
	if (in.op == DW_CFA_remember_state)
		++*depth;
	if (in.op == DW_CFA_restore_state && --*depth < 0) {
		snprintf(msg, msglen, "DW_CFA_restore_state at byte %zu without a remember_state", at);
		return -1;
	}
	if (in.reg >= a->n_regs || in.reg2 >= a->n_regs) {
		snprintf(msg, msglen,
			 "opcode 0x%02x at byte %zu names a register that is not a %s DWARF register", op, at,
			 a->name);
		return -1;
	}
	if (sets_rule(in.op) && in.reg < 128)
		out->touched[in.reg / 64] |= (uint64_t)1 << (in.reg % 64);
	*advance = in.advance;
	return 0;
}

static int scan_insns(const ju_arch *a, const uint8_t *p, size_t n, uint64_t len, char *msg, size_t msglen,
		      struct insn_scan *out)
{
	byte_rd r = rd_make(p, n);
	uint64_t loc = 0;
	int depth = 0;
	memset(out, 0, sizeof *out);
	for (size_t at = 0; at < n; at = rd_pos(&r)) {
		uint64_t advance;
		if ((p[at] & 0xc0) == DW_CFA_advance_loc) {
			/* A third of a compiler's instructions, with an operand that
			 * needs no check but its reach: taken here, not decoded. */
			rd_u8(&r);
			advance = p[at] & 0x3f;
		} else if (check_insn(a, &r, at, &depth, out, &advance, msg, msglen)) {
			return -1;
		}
		loc += advance * a->code_align;
		if (loc > len) {
			snprintf(msg, msglen,
				 "advance at byte %zu reaches offset %llu, past the range (%llu bytes)", at,
				 (unsigned long long)loc, (unsigned long long)len);
			return -1;
		}
	}
	out->end_loc = loc;
	return 0;
}

int cfi_check_insns(const ju_arch *a, const uint8_t *p, size_t n, uint64_t len, char *msg, size_t msglen)
{
	struct insn_scan scan;
	return scan_insns(a, p, n, len, msg, msglen, &scan);
}

/* ---- re-encoding ------------------------------------------------------------ */

void cfi_reencode_fdes(byte_buf *b, size_t cie_off, uint64_t base, const uint8_t *src, size_t n)
{
	size_t at = 0;
	while (at + 4 <= n) {
		uint32_t len = load_u32(src + at);
		if (len == 0 || len > n - at - 4 || len < 4 + 16 + 1) {
			b->failed = true;
			return;
		}
		const uint8_t *fde = src + at;
		uint64_t start = load_u64(fde + FDE_OFF_PC_BEGIN);
		uint64_t size = load_u64(fde + FDE_ABS8_OFF_RANGE);
		/* cfi_write_blob_fdes' augmentation data: none, or an LSDA */
		size_t hdr = eh_fde_header_size(CFI_ENC_ABS8);
		uint8_t aug_len = fde[hdr - 1];
		if ((aug_len != 0 && aug_len != EH_FDE_LSDA_LEN) || 4 + (size_t)len < hdr + aug_len) {
			b->failed = true;
			return;
		}
		hdr += aug_len;
		size_t entry = eh_fde_begin(b, cie_off, CFI_ENC_PCREL4, base, start, size);
		buf_bytes(b, fde + hdr, 4 + len - hdr);
		eh_entry_end(b, entry);
		at += 4 + (size_t)len;
	}
}
