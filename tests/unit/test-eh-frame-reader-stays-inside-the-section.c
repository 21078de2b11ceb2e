/* SPDX-License-Identifier: MIT */
/* test-eh-frame-reader-stays-inside-the-section.c - formats/ehframe.h's
 * .eh_frame record reader.
 *
 * Sections written by the tree's own writer (eh_cie_begin, eh_fde_begin)
 * read back to the values written; hand-made records cover what the writer
 * never emits (64-bit lengths, "zPLR", text-relative pointers); hostile
 * records (cut short, lengths past the end, CIE pointers outside the
 * section or at an FDE, encodings that do not exist) are refused; and every
 * prefix of a good section reads without a field outside the prefix.
 */
#include <stdint.h>
#include <string.h>

#include "formats/bytes.h"
#include "formats/ehframe.h"
#include "unit.h"

#define SEC_ADDR 0x600000u
#define PCREL4 (DW_EH_PE_pcrel | DW_EH_PE_sdata4)

static const uint8_t cie_insns[] = { DW_CFA_def_cfa, 7, 8, DW_CFA_offset | 16, 1 };
static const uint8_t fde_insns[] = { DW_CFA_advance_loc | 1, DW_CFA_def_cfa_offset, 16 };

typedef struct written {
	size_t cie, fde, cie3, fde_abs, term, size;
} written;

/* CIE (x86-64, pcrel FDEs) + FDE, CIE version 3 ("zRS", absolute FDEs) + FDE,
 * the terminator. */
static written write_section(uint8_t *mem, size_t cap)
{
	byte_buf b;
	written w;
	buf_init(&b, mem, cap);
	w.cie = eh_cie_begin(&b, &(eh_cie){ 1, -8, 16, PCREL4, false, 0, false });
	buf_bytes(&b, cie_insns, sizeof cie_insns);
	eh_entry_end(&b, w.cie);
	w.fde = eh_fde_begin(&b, w.cie, PCREL4, SEC_ADDR, 0x401000, 0x40);
	buf_bytes(&b, fde_insns, sizeof fde_insns);
	eh_entry_end(&b, w.fde);
	w.cie3 = eh_cie_begin(&b, &(eh_cie){ 4, -8, 300, DW_EH_PE_absptr, true, 0, false });
	eh_entry_end(&b, w.cie3);
	w.fde_abs = eh_fde_begin(&b, w.cie3, DW_EH_PE_absptr, SEC_ADDR, 0x7f0000001000ull, 0x123);
	eh_entry_end(&b, w.fde_abs);
	w.term = b.len;
	buf_u32(&b, 0);
	w.size = b.len;
	CHECK(buf_ok(&b), "the test section fits");
	return w;
}

static void written_records_read_back(void)
{
	uint8_t mem[512];
	written w = write_section(mem, sizeof mem);
	eh_section s = { mem, w.size, SEC_ADDR, 0 };
	size_t off = 0;
	eh_rec r;
	eh_cie_info c;
	eh_fde_info f;

	CHECK(eh_next(&s, &off, &r) == 1 && r.is_cie, "first record: the CIE");
	CHECK(r.off == w.cie && r.id_off == w.cie + 4 && r.end == w.fde && off == w.fde, "CIE spans %zu..%zu",
	      r.off, r.end);
	CHECK(eh_cie_read(&s, w.cie, &c), "the CIE reads");
	CHECK(c.version == 1 && strcmp(c.aug, "zR") == 0, "version %u, augmentation %s", c.version, c.aug);
	CHECK(c.code_align == 1 && c.data_align == -8 && c.ra_reg == 16, "factors %llu %lld, ra %llu",
	      (unsigned long long)c.code_align, (long long)c.data_align, (unsigned long long)c.ra_reg);
	CHECK(c.has_z && c.aug_len == 1 && c.fde_enc == PCREL4 && c.lsda_enc == DW_EH_PE_omit && !c.signal,
	      "augmentation data: %zu bytes, fde_enc 0x%02x", c.aug_len, c.fde_enc);
	CHECK(c.insns_len >= sizeof cie_insns && memcmp(c.insns, cie_insns, sizeof cie_insns) == 0 &&
		      c.insns + c.insns_len == mem + w.fde,
	      "initial instructions as written, padding to the CIE's end");

	CHECK(eh_next(&s, &off, &r) == 1 && !r.is_cie && r.off == w.fde && r.cie_off == w.cie,
	      "second record: an FDE of the first CIE (cie_off %zu)", r.cie_off);
	CHECK(eh_fde_read(&s, &r, &c, &f), "the FDE reads");
	CHECK(f.pc_begin == 0x401000 && f.pc_range == 0x40, "pcrel pc_begin %#llx range %#llx",
	      (unsigned long long)f.pc_begin, (unsigned long long)f.pc_range);
	CHECK(f.pc_begin_off == w.fde + FDE_OFF_PC_BEGIN, "pc_begin at %zu", f.pc_begin_off);
	CHECK(f.insns == mem + w.fde + eh_fde_header_size(PCREL4) && f.insns + f.insns_len == mem + w.cie3 &&
		      memcmp(f.insns, fde_insns, sizeof fde_insns) == 0,
	      "FDE instructions as written");

	CHECK(eh_next(&s, &off, &r) == 1 && r.is_cie && r.off == w.cie3, "third record: the version 3 CIE");
	CHECK(eh_cie_read(&s, w.cie3, &c), "the version 3 CIE reads");
	CHECK(c.version == 3 && strcmp(c.aug, "zRS") == 0 && c.signal && c.ra_reg == 300 &&
		      c.code_align == 4 && c.fde_enc == DW_EH_PE_absptr,
	      "version %u, %s, ra %llu", c.version, c.aug, (unsigned long long)c.ra_reg);
	CHECK(eh_next(&s, &off, &r) == 1 && r.cie_off == w.cie3 && eh_fde_read(&s, &r, &c, &f),
	      "fourth record: an FDE of the version 3 CIE");
	CHECK(f.pc_begin == 0x7f0000001000ull && f.pc_range == 0x123, "absolute pc_begin %#llx range %#llx",
	      (unsigned long long)f.pc_begin, (unsigned long long)f.pc_range);

	CHECK(eh_next(&s, &off, &r) == 0 && off == w.term, "the terminator ends the walk");
	CHECK(!eh_cie_read(&s, w.fde, &c), "an FDE is not a CIE");
	CHECK(!eh_cie_read(&s, EH_NO_CIE, &c), "EH_NO_CIE is no CIE");
}

/* A record with a 64-bit length, its id still 4 bytes. */
static void a_64_bit_length_is_read(void)
{
	uint8_t mem[64];
	byte_buf b;
	buf_init(&b, mem, sizeof mem);
	buf_u32(&b, DWARF64_ESCAPE);
	size_t len_at = b.len;
	buf_u64(&b, 0);
	size_t id_at = b.len;
	buf_u32(&b, EH_CIE_ID);
	buf_u8(&b, 1);              /* version */
	buf_str(&b, "");            /* no augmentation */
	buf_uleb(&b, 4);            /* code alignment */
	buf_sleb(&b, -8);           /* data alignment */
	buf_u8(&b, 30);             /* return address column */
	buf_u8(&b, DW_CFA_def_cfa); /* initial instructions */
	buf_u8(&b, 31);
	buf_u8(&b, 0);
	buf_put_u64(&b, len_at, b.len - id_at);
	size_t end = b.len;
	buf_u32(&b, 0);
	eh_section s = { mem, b.len, 0, 0 };
	size_t off = 0;
	eh_rec r;
	eh_cie_info c;
	CHECK(eh_next(&s, &off, &r) == 1 && r.is_cie && r.id_off == 12 && r.end == end, "id at %zu, end %zu",
	      r.id_off, r.end);
	CHECK(eh_cie_read(&s, 0, &c) && !c.has_z && c.fde_enc == DW_EH_PE_absptr && c.ra_reg == 30 &&
		      c.insns_len == 3 && c.insns == mem + end - 3,
	      "a CIE without augmentation, %zu bytes of instructions", c.insns_len);
	CHECK(eh_next(&s, &off, &r) == 0, "then the terminator");
}

/* A CIE with augmentation `aug` and data `augdata` (its length given
 * before it), then an FDE whose pc fields are pc[npc] and augmentation
 * data fdedata[nfd].  Returns the FDE's offset. */
static size_t write_pair(byte_buf *b, const char *aug, const uint8_t *augdata, size_t naug, const uint8_t *pc,
			 size_t npc, const uint8_t *fdedata, size_t nfd)
{
	size_t cie = buf_len32_begin(b);
	buf_u32(b, EH_CIE_ID);
	buf_u8(b, 1);
	buf_str(b, aug);
	buf_uleb(b, 1);
	buf_sleb(b, -8);
	buf_u8(b, 16);
	if (aug[0] == 'z') {
		buf_uleb(b, naug);
		buf_bytes(b, augdata, naug);
	}
	buf_u8(b, DW_CFA_nop);
	buf_len32_end(b, cie);
	size_t fde = buf_len32_begin(b);
	buf_u32(b, (uint32_t)(b->len - (cie + 0)));
	buf_bytes(b, pc, npc);
	if (aug[0] == 'z') {
		buf_uleb(b, nfd);
		buf_bytes(b, fdedata, nfd);
	}
	buf_u8(b, DW_CFA_advance_loc | 2);
	buf_len32_end(b, fde);
	buf_u32(b, 0);
	return fde;
}

static const uint8_t pc_udata4[] = { 0x00, 0x10, 0, 0, 0x20, 0, 0, 0 }; /* 0x1000, range 0x20 */

/* Read the pair write_pair made: the CIE's verdict, and the FDE's. */
static int read_pair(const uint8_t *mem, size_t size, uint64_t text, eh_cie_info *c, eh_fde_info *f)
{
	eh_section s = { mem, size, SEC_ADDR, text };
	size_t off = 0;
	eh_rec cie, fde;
	if (eh_next(&s, &off, &cie) != 1 || eh_next(&s, &off, &fde) != 1)
		return -1;
	if (!eh_cie_read(&s, fde.cie_off, c))
		return -2;
	return eh_fde_read(&s, &fde, c, f) ? 0 : -3;
}

static const uint8_t r_udata4_only[] = { DW_EH_PE_udata4 };

/* The writer's "zPLR" and "zPR" CIEs (a JIT blob's personality routine and
 * LSDA) read back with their pointers, as libgcc reads them. */
static void personality_cies_are_written_and_read_back(void)
{
	uint8_t mem[256] __attribute__((aligned(8)));
	byte_buf b;
	buf_init(&b, mem, sizeof mem);
	size_t plr = eh_cie_begin(&b, &(eh_cie){ .code_align = 1,
						 .data_align = -8,
						 .ra_reg = 16,
						 .fde_enc = DW_EH_PE_absptr,
						 .personality = 0x7f0012345678ull,
						 .lsda = true });
	eh_entry_end(&b, plr);
	uint64_t lsda = 0x7f00abcdef00ull;
	size_t fde = eh_fde_begin_lsda(&b, plr, DW_EH_PE_absptr, 0, 0x401000, 0x40, &lsda);
	buf_u8(&b, DW_CFA_advance_loc | 1);
	eh_entry_end(&b, fde);
	size_t pr = eh_cie_begin(&b, &(eh_cie){ .code_align = 1,
						.data_align = -8,
						.ra_reg = 16,
						.fde_enc = DW_EH_PE_absptr,
						.personality = 0x7f0012345000ull });
	eh_entry_end(&b, pr);
	size_t fde2 = eh_fde_begin(&b, pr, DW_EH_PE_absptr, 0, 0x402000, 0x10);
	eh_entry_end(&b, fde2);
	buf_u32(&b, 0);
	CHECK(buf_ok(&b), "the section fits");

	eh_section s = { mem, b.len, SEC_ADDR, 0 };
	eh_cie_info c;
	eh_fde_info f;
	uint64_t pers;
	bool ind;
	CHECK(eh_cie_read(&s, plr, &c) && !strcmp(c.aug, "zPLR") && c.pers_enc == DW_EH_PE_absptr &&
		      c.lsda_enc == DW_EH_PE_absptr && c.fde_enc == DW_EH_PE_absptr,
	      "zPLR CIE: augmentation %s", c.aug);
	CHECK(eh_cie_personality(&s, &c, &pers, &ind) && pers == 0x7f0012345678ull && !ind,
	      "zPLR personality %#llx", (unsigned long long)pers);
	size_t off = fde;
	eh_rec r;
	CHECK(eh_next(&s, &off, &r) == 1 && r.cie_off == plr && eh_fde_read(&s, &r, &c, &f) &&
		      f.pc_begin == 0x401000 && f.lsda == lsda &&
		      f.insns == mem + fde + eh_fde_header_size(DW_EH_PE_absptr) + EH_FDE_LSDA_LEN &&
		      f.insns[0] == (DW_CFA_advance_loc | 1),
	      "the FDE's LSDA %#llx and instructions after it", (unsigned long long)f.lsda);
	CHECK(eh_cie_read(&s, pr, &c) && !strcmp(c.aug, "zPR") && c.lsda_enc == DW_EH_PE_omit &&
		      eh_cie_personality(&s, &c, &pers, &ind) && pers == 0x7f0012345000ull,
	      "zPR CIE: augmentation %s, personality %#llx", c.aug, (unsigned long long)pers);
	off = fde2;
	CHECK(eh_next(&s, &off, &r) == 1 && eh_fde_read(&s, &r, &c, &f) && f.lsda == 0 &&
		      f.pc_begin == 0x402000,
	      "a zPR FDE has no LSDA");
}

static void augmentations_are_read_or_refused(void)
{
	uint8_t mem[128];
	byte_buf b;
	eh_cie_info c;
	eh_fde_info f;

	/* zPLR: personality (udata4, 4 bytes), LSDA udata4, FDEs udata4 */
	static const uint8_t plr[] = { DW_EH_PE_udata4, 1, 2, 3, 4, DW_EH_PE_udata4, DW_EH_PE_udata4 };
	static const uint8_t lsda[] = { 9, 9, 9, 9 };
	buf_init(&b, mem, sizeof mem);
	size_t fde = write_pair(&b, "zPLR", plr, sizeof plr, pc_udata4, sizeof pc_udata4, lsda, sizeof lsda);
	CHECK(read_pair(mem, b.len, 0, &c, &f) == 0, "zPLR reads");
	CHECK(c.aug_len == sizeof plr && c.lsda_enc == DW_EH_PE_udata4 && c.fde_enc == DW_EH_PE_udata4,
	      "lsda_enc 0x%02x fde_enc 0x%02x", c.lsda_enc, c.fde_enc);
	CHECK(f.pc_begin == 0x1000 && f.pc_range == 0x20 && f.insns == mem + fde + 4 + 4 + 8 + 1 + 4 &&
		      f.insns[0] == (DW_CFA_advance_loc | 2),
	      "the FDE's LSDA pointer is stepped over (pc %#llx)", (unsigned long long)f.pc_begin);
	uint64_t pers = 0;
	bool ind = true;
	CHECK(eh_cie_personality(&(eh_section){ mem, b.len, SEC_ADDR, 0 }, &c, &pers, &ind) &&
		      pers == 0x04030201 && !ind && f.lsda == 0x09090909,
	      "zPLR: personality %#llx (indirect %d), LSDA %#llx", (unsigned long long)pers, ind,
	      (unsigned long long)f.lsda);

	/* zPR with a pc-relative, indirect personality, as GCC writes it for
	 * position-independent code: the address of the pointer, based at the
	 * field */
	static const uint8_t pr[] = {
		DW_EH_PE_indirect | DW_EH_PE_pcrel | DW_EH_PE_sdata4, 0x10, 0, 0, 0, DW_EH_PE_udata4
	};
	buf_init(&b, mem, sizeof mem);
	write_pair(&b, "zPR", pr, sizeof pr, pc_udata4, sizeof pc_udata4, NULL, 0);
	CHECK(read_pair(mem, b.len, 0, &c, &f) == 0 && f.lsda == 0, "zPR reads, no LSDA");
	CHECK(eh_cie_personality(&(eh_section){ mem, b.len, SEC_ADDR, 0 }, &c, &pers, &ind) && ind &&
		      pers == SEC_ADDR + (uint64_t)(c.pers_field - mem) + 0x10,
	      "pcrel personality resolved at its field: %#llx", (unsigned long long)pers);
	buf_init(&b, mem, sizeof mem);
	write_pair(&b, "zR", r_udata4_only, 1, pc_udata4, sizeof pc_udata4, NULL, 0);
	CHECK(read_pair(mem, b.len, 0, &c, &f) == 0 &&
		      !eh_cie_personality(&(eh_section){ mem, b.len, SEC_ADDR, 0 }, &c, &pers, &ind),
	      "zR: no personality");

	/* text-relative pc_begin: only with a .text address */
	static const uint8_t textrel[] = { DW_EH_PE_textrel | DW_EH_PE_udata4 };
	buf_init(&b, mem, sizeof mem);
	write_pair(&b, "zR", textrel, 1, pc_udata4, sizeof pc_udata4, NULL, 0);
	CHECK(read_pair(mem, b.len, 0, &c, &f) == -3, "textrel without a .text address is refused");
	CHECK(read_pair(mem, b.len, 0x5000, &c, &f) == 0 && f.pc_begin == 0x6000 && f.pc_range == 0x20,
	      "textrel pc_begin %#llx", (unsigned long long)f.pc_begin);

	/* encodings with no base, no format, or none at all */
	static const uint8_t datarel[] = { DW_EH_PE_datarel | DW_EH_PE_udata4 };
	static const uint8_t indirect[] = { DW_EH_PE_indirect | DW_EH_PE_udata4 };
	static const uint8_t no_format[] = { 0x05 };
	static const uint8_t omit[] = { DW_EH_PE_omit };
	static const uint8_t aligned_p[] = { DW_EH_PE_aligned, 0, 0, 0, 0, 0, 0, 0, 0, DW_EH_PE_udata4 };
	struct {
		const char *aug;
		const uint8_t *data;
		size_t n;
		int want;
		const char *why;
	} bad[] = {
		{ "zR", datarel, 1, -3, "a data-relative pc_begin" },
		{ "zR", indirect, 1, -3, "an indirect pc_begin" },
		{ "zR", no_format, 1, -2, "format 5, which does not exist" },
		{ "zR", omit, 1, -2, "an omitted FDE encoding" },
		{ "zPR", aligned_p, sizeof aligned_p, -2, "an aligned personality pointer" },
		{ "zXR", textrel, 1, -2, "an augmentation letter it cannot size" },
		{ "eh", NULL, 0, -2, "an augmentation without z" },
		{ "zR", textrel, 0, -2, "'R' with no augmentation data" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		buf_init(&b, mem, sizeof mem);
		write_pair(&b, bad[i].aug, bad[i].data, bad[i].n, pc_udata4, sizeof pc_udata4, NULL, 0);
		int got = read_pair(mem, b.len, 0x5000, &c, &f);
		CHECK(got == bad[i].want, "%s: %d, want %d", bad[i].why, got, bad[i].want);
	}

	/* an augmentation data length past the CIE's end */
	static const uint8_t r_udata4[] = { DW_EH_PE_udata4 };
	buf_init(&b, mem, sizeof mem);
	write_pair(&b, "zR", r_udata4, 1, pc_udata4, sizeof pc_udata4, NULL, 0);
	mem[4 + 4 + 1 + 3 + 1 + 1 + 1] = 0x7f; /* after id, version, "zR", factors, ra */
	CHECK(read_pair(mem, b.len, 0, &c, &f) == -2, "augmentation data longer than the CIE is refused");
}

static void hostile_records_are_refused(void)
{
	uint8_t mem[512];
	written w = write_section(mem, sizeof mem);
	eh_section s = { mem, w.size, SEC_ADDR, 0 };
	size_t off;
	eh_rec r;
	eh_cie_info c;
	eh_fde_info f;

	/* truncated: fewer than 4 bytes is the end; a length cut short by the section is an error */
	eh_section tiny = { mem, 3, 0, 0 };
	off = 0;
	CHECK(eh_next(&tiny, &off, &r) == 0 && off == 0, "3 bytes: no record");
	eh_section cut = { mem, w.fde - 1, 0, 0 };
	off = 0;
	CHECK(eh_next(&cut, &off, &r) == -1 && off == 0, "a CIE cut one byte short");
	off = w.size + 8;
	CHECK(eh_next(&s, &off, &r) == 0, "an offset past the section");

	/* lengths past the end, or too short for the id */
	uint8_t h[32] = { 0 };
	eh_section hs = { h, sizeof h, 0, 0 };
	store_u32(h, 0x7ffffff0u);
	off = 0;
	CHECK(eh_next(&hs, &off, &r) == -1, "a 32-bit length past the end");
	store_u32(h, DWARF64_ESCAPE);
	store_u64(h + 4, UINT64_MAX);
	off = 0;
	CHECK(eh_next(&hs, &off, &r) == -1, "a 64-bit length of 2^64-1");
	store_u64(h + 4, UINT64_MAX - 11);
	off = 0;
	CHECK(eh_next(&hs, &off, &r) == -1, "a 64-bit length that would wrap the end");
	store_u32(h, DWARF64_ESCAPE);
	eh_section h8 = { h, 8, 0, 0 };
	off = 0;
	CHECK(eh_next(&h8, &off, &r) == -1, "a 64-bit length cut short");
	store_u32(h, 3);
	off = 0;
	CHECK(eh_next(&hs, &off, &r) == -1, "a length of 3 holds no id");

	/* CIE pointers: before the section, at an FDE, into the middle of a record */
	uint8_t m[512];
	memcpy(m, mem, w.size);
	eh_section ms = { m, w.size, SEC_ADDR, 0 };
	store_u32(m + w.fde + 4, (uint32_t)(w.fde + 4 + 1));
	off = w.fde;
	CHECK(eh_next(&ms, &off, &r) == 1 && r.cie_off == EH_NO_CIE && !eh_cie_read(&ms, r.cie_off, &c),
	      "a CIE pointer one byte before the section");
	store_u32(m + w.fde + 4, 0xffffffffu);
	off = w.fde;
	CHECK(eh_next(&ms, &off, &r) == 1 && r.cie_off == EH_NO_CIE, "a CIE pointer of 2^32-1");
	store_u32(m + w.fde_abs + 4, (uint32_t)(w.fde_abs + 4 - w.fde));
	off = w.fde_abs;
	CHECK(eh_next(&ms, &off, &r) == 1 && r.cie_off == w.fde && !eh_cie_read(&ms, r.cie_off, &c),
	      "a CIE pointer at an FDE");
	store_u32(m + w.fde_abs + 4, (uint32_t)(w.fde_abs + 4 - (w.cie + 2)));
	off = w.fde_abs;
	CHECK(eh_next(&ms, &off, &r) == 1 && r.cie_off == w.cie + 2 && !eh_cie_read(&ms, r.cie_off, &c),
	      "a CIE pointer into the middle of a CIE");

	/* a CIE version the format does not have */
	memcpy(m, mem, w.size);
	m[w.cie + 8] = 2;
	CHECK(!eh_cie_read(&ms, w.cie, &c), "CIE version 2");
	/* an unterminated augmentation string */
	memcpy(m, mem, w.size);
	memset(m + w.cie + 9, 'z', w.fde - w.cie - 9);
	CHECK(!eh_cie_read(&ms, w.cie, &c), "an augmentation string without its NUL");

	/* an FDE whose pc_range is cut off by its own length */
	memcpy(m, mem, w.size);
	store_u32(m + w.fde, 8); /* CIE pointer and pc_begin only */
	off = w.fde;
	CHECK(eh_next(&ms, &off, &r) == 1 && r.end == w.fde + 12 && eh_cie_read(&ms, r.cie_off, &c) &&
		      !eh_fde_read(&ms, &r, &c, &f),
	      "an FDE without room for pc_range");
}

/* Every prefix of a good section: the walk ends, and whatever it reads lies
 * inside the prefix. */
static void every_prefix_reads_inside_itself(void)
{
	uint8_t mem[512];
	written w = write_section(mem, sizeof mem);
	int outside = 0, walks_ended = 0;
	for (size_t n = 0; n <= w.size; n++) {
		eh_section s = { mem, n, SEC_ADDR, 0 };
		size_t off = 0, steps = 0;
		eh_rec r;
		int got;
		while ((got = eh_next(&s, &off, &r)) == 1 && steps++ < 64) {
			eh_cie_info c;
			eh_fde_info f;
			if (r.end > n)
				outside++;
			size_t cie = r.is_cie ? r.off : r.cie_off;
			if (!eh_cie_read(&s, cie, &c))
				continue;
			if (c.insns + c.insns_len > mem + n ||
			    (const uint8_t *)c.aug + strlen(c.aug) >= mem + n)
				outside++;
			if (!r.is_cie && eh_fde_read(&s, &r, &c, &f) && f.insns + f.insns_len > mem + r.end)
				outside++;
		}
		walks_ended += steps < 64;
	}
	CHECK(outside == 0, "%d fields outside their prefix", outside);
	CHECK(walks_ended == (int)w.size + 1, "%d of %zu walks ended", walks_ended, w.size + 1);
}

int main(void)
{
	written_records_read_back();
	a_64_bit_length_is_read();
	augmentations_are_read_or_refused();
	personality_cies_are_written_and_read_back();
	hostile_records_are_refused();
	every_prefix_reads_inside_itself();
	return unit_done("test-eh-frame-reader-stays-inside-the-section");
}
