/* aranges.c - .debug_aranges from units' first DIEs (see aranges.h).
 * Unit headers and forms: DWARF 4 sections 7.5.1 and 7.5.4, DWARF 5
 * sections 7.5.1.1 and 7.5.6; attribute forms we cannot size end the
 * unit's scan (it simply gets no range).
 */
#include "aranges.h"
#include "bounds.h"
#include "formats/bytes.h"

#include <dwarf.h>
#include <stdbool.h>

enum { MAX_UNITS = 1000000, MAX_ATTRS = 256 };

/* Find the abbreviation `code` in the table at abbrev+off; returns a
 * reader positioned at its attribute list (after tag and children). */
static bool find_abbrev(const uint8_t *abbrev, size_t size, uint64_t off, uint64_t code, byte_rd *out)
{
	if (off >= size)
		return false;
	byte_rd r = rd_make(abbrev + off, size - off);
	for (unsigned n = 0; n < 100000 && !r.failed; n++) {
		uint64_t c = rd_uleb(&r);
		if (c == 0 || r.failed)
			return false;
		rd_uleb(&r); /* tag */
		rd_u8(&r);   /* children */
		if (c == code) {
			*out = r;
			return !r.failed;
		}
		for (unsigned a = 0; a < MAX_ATTRS && !r.failed; a++) {
			uint64_t at = rd_uleb(&r), form = rd_uleb(&r);
			if (form == DW_FORM_implicit_const)
				rd_sleb(&r);
			if (!at && !form)
				break;
		}
	}
	return false;
}

typedef struct unit {
	uint16_t version;
	uint8_t addr_size, offset_size;
} unit;

/* Read one attribute value of `form`; constants and addresses go to *v.
 * False when the form cannot be read here. */
static bool read_form(byte_rd *r, const unit *u, uint64_t form, int64_t implicit, uint64_t *v)
{
	*v = 0;
	switch (form) {
	case DW_FORM_addr: *v = u->addr_size == 8 ? rd_u64(r) : rd_u32(r); break;
	case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag: case DW_FORM_strx1: case DW_FORM_addrx1:
		*v = rd_u8(r); break;
	case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_strx2: case DW_FORM_addrx2:
		*v = rd_u16(r); break;
	case DW_FORM_strx3: case DW_FORM_addrx3: rd_skip(r, 3); break;
	case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_strx4: case DW_FORM_addrx4: case DW_FORM_ref_sup4:
		*v = rd_u32(r); break;
	case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8:
		*v = rd_u64(r); break;
	case DW_FORM_data16: rd_skip(r, 16); break;
	case DW_FORM_strp: case DW_FORM_sec_offset: case DW_FORM_line_strp: case DW_FORM_strp_sup:
	case DW_FORM_GNU_strp_alt: case DW_FORM_GNU_ref_alt:
		*v = u->offset_size == 8 ? rd_u64(r) : rd_u32(r); break;
	case DW_FORM_ref_addr:
		*v = u->version <= 2 ? (u->addr_size == 8 ? rd_u64(r) : rd_u32(r))
				     : (u->offset_size == 8 ? rd_u64(r) : rd_u32(r));
		break;
	case DW_FORM_string: return rd_cstr(r, JS_MAX_NAME * 16) != NULL;
	case DW_FORM_block1: rd_skip(r, rd_u8(r)); break;
	case DW_FORM_block2: rd_skip(r, rd_u16(r)); break;
	case DW_FORM_block4: rd_skip(r, rd_u32(r)); break;
	case DW_FORM_block: case DW_FORM_exprloc: {
		uint64_t n = rd_uleb(r);
		if (n > rd_left(r))
			return false;
		rd_skip(r, (size_t)n);
		break;
	}
	case DW_FORM_sdata: *v = (uint64_t)rd_sleb(r); break;
	case DW_FORM_udata: case DW_FORM_ref_udata: case DW_FORM_strx: case DW_FORM_addrx:
	case DW_FORM_loclistx: case DW_FORM_rnglistx: case DW_FORM_GNU_addr_index: case DW_FORM_GNU_str_index:
		*v = rd_uleb(r); break;
	case DW_FORM_flag_present: *v = 1; break;
	case DW_FORM_implicit_const: *v = (uint64_t)implicit; break;
	default: return false; /* DW_FORM_indirect and unknown forms */
	}
	return !r->failed;
}

/* The [lo, hi) of a unit's first DIE, when it states one with addresses
 * (not through .debug_addr or range lists). */
static bool unit_range(byte_rd *die, byte_rd abbr, const unit *u, uint64_t *lo, uint64_t *hi)
{
	bool have_lo = false, have_hi = false, hi_is_len = false;
	for (unsigned a = 0; a < MAX_ATTRS; a++) {
		uint64_t at = rd_uleb(&abbr), form = rd_uleb(&abbr);
		int64_t implicit = form == DW_FORM_implicit_const ? rd_sleb(&abbr) : 0;
		if (abbr.failed || (!at && !form))
			break;
		uint64_t v;
		if (!read_form(die, u, form, implicit, &v))
			return false;
		if (at == DW_AT_low_pc && form == DW_FORM_addr)
			*lo = v, have_lo = true;
		else if (at == DW_AT_high_pc && form == DW_FORM_addr)
			*hi = v, have_hi = true, hi_is_len = false;
		else if (at == DW_AT_high_pc && form != DW_FORM_addrx && form != DW_FORM_GNU_addr_index)
			*hi = v, have_hi = true, hi_is_len = true; /* a constant: the length (DWARF 4) */
	}
	if (!have_lo || !have_hi)
		return false;
	if (hi_is_len)
		*hi = *lo + *hi;
	return *hi > *lo;
}

size_t js_synth_aranges(const uint8_t *info, size_t info_size, const uint8_t *abbrev, size_t abbrev_size,
			byte_buf *out)
{
	size_t covered = 0;
	size_t off = 0;
	for (unsigned n = 0; n < MAX_UNITS && info_size - off >= 11; n++) {
		byte_rd r = rd_make(info + off, info_size - off);
		uint64_t len = rd_u32(&r);
		unit u = { 0, 0, 4 };
		if (len == 0xffffffffu) {
			len = rd_u64(&r);
			u.offset_size = 8;
		}
		if (r.failed || len > rd_left(&r) || len < 7)
			break;
		size_t next = off + (size_t)(rd_pos(&r) + len);
		byte_rd body = rd_make(r.p, (size_t)len);
		u.version = rd_u16(&body);
		uint64_t abbrev_off;
		if (u.version >= 2 && u.version <= 4) {
			abbrev_off = u.offset_size == 8 ? rd_u64(&body) : rd_u32(&body);
			u.addr_size = rd_u8(&body);
		} else if (u.version == 5) {
			uint8_t type = rd_u8(&body);
			u.addr_size = rd_u8(&body);
			abbrev_off = u.offset_size == 8 ? rd_u64(&body) : rd_u32(&body);
			if (type != DW_UT_compile && type != DW_UT_partial)
				goto skip;
		} else {
			goto skip;
		}
		if (u.addr_size != 8 && u.addr_size != 4)
			goto skip;
		uint64_t code = rd_uleb(&body), lo = 0, hi = 0;
		byte_rd abbr;
		if (!body.failed && find_abbrev(abbrev, abbrev_size, abbrev_off, code, &abbr) &&
		    unit_range(&body, abbr, &u, &lo, &hi)) {
			size_t set = out->len;
			buf_u32(out, 0);                 /* unit_length, patched below */
			buf_u16(out, 2);                 /* version */
			buf_u32(out, (uint32_t)off);     /* debug_info_offset */
			buf_u8(out, 8);                  /* address_size */
			buf_u8(out, 0);                  /* segment_selector_size */
			buf_zeros(out, 4);               /* pad the tuples to 16 bytes */
			buf_u64(out, lo);                /* the unit's one range */
			buf_u64(out, hi - lo);
			buf_u64(out, 0);                 /* terminator */
			buf_u64(out, 0);
			buf_put_u32(out, set, (uint32_t)(out->len - set - 4));
			covered++;
		}
	skip:
		if (next <= off || next > info_size || off > UINT32_MAX)
			break;
		off = next;
	}
	return covered;
}
