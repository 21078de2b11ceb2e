/* SPDX-License-Identifier: MIT */
/* layout.c - CPython's field offsets, from DWARF or from a table. */
#include "python/layout.h"

#include "base/bounds.h"
#include "base/err.h"

#include <dwarf.h>
#include <string.h>

const js_py_field_name js_py_field_names[JS_PY_NFIELDS] = {
	[JS_PY_RT_INTERP_HEAD] = { "_PyRuntimeState", "interpreters.head" },
	[JS_PY_IS_NEXT] = { "PyInterpreterState", "next" },
	[JS_PY_IS_THREADS_HEAD] = { "PyInterpreterState", "threads.head" },
	[JS_PY_TS_NEXT] = { "PyThreadState", "next" },
	[JS_PY_TS_CFRAME] = { "PyThreadState", "cframe" },
	[JS_PY_TS_NATIVE_TID] = { "PyThreadState", "native_thread_id" },
	[JS_PY_CF_CURRENT_FRAME] = { "_PyCFrame", "current_frame" },
	[JS_PY_FR_CODE] = { "_PyInterpreterFrame", "f_code" },
	[JS_PY_FR_PREVIOUS] = { "_PyInterpreterFrame", "previous" },
	[JS_PY_FR_PREV_INSTR] = { "_PyInterpreterFrame", "prev_instr" },
	[JS_PY_FR_IS_ENTRY] = { "_PyInterpreterFrame", "is_entry" },
	[JS_PY_FR_OWNER] = { "_PyInterpreterFrame", "owner" },
	[JS_PY_OB_TYPE] = { "PyObject", "ob_type" },
	[JS_PY_VAR_SIZE] = { "PyVarObject", "ob_size" },
	[JS_PY_CO_FILENAME] = { "PyCodeObject", "co_filename" },
	[JS_PY_CO_QUALNAME] = { "PyCodeObject", "co_qualname" },
	[JS_PY_CO_LINETABLE] = { "PyCodeObject", "co_linetable" },
	[JS_PY_CO_FIRSTLINENO] = { "PyCodeObject", "co_firstlineno" },
	[JS_PY_CO_FIRSTTRACEABLE] = { "PyCodeObject", "_co_firsttraceable" },
	[JS_PY_CO_CODE] = { "PyCodeObject", "co_code_adaptive" },
	[JS_PY_BYTES_SVAL] = { "PyBytesObject", "ob_sval" },
	[JS_PY_STR_LENGTH] = { "PyASCIIObject", "length" },
	[JS_PY_STR_STATE] = { "PyASCIIObject", "state" },
	[JS_PY_STR_ASCII_SIZE] = { "PyASCIIObject", "" },
	[JS_PY_STR_COMPACT_SIZE] = { "PyCompactUnicodeObject", "" },
};

/* CPython 3.11 on a 64-bit machine (x86-64 and AArch64 alike): Debian
 * 12's release build and its debug build (python3.11d, --with-pydebug
 * without Py_TRACE_REFS) agree on every field here, as --check-table
 * shows against the DWARF of both. */
static const int64_t table_311[JS_PY_NFIELDS] = {
	[JS_PY_RT_INTERP_HEAD] = 0x28,
	[JS_PY_IS_NEXT] = 0x0,
	[JS_PY_IS_THREADS_HEAD] = 0x10,
	[JS_PY_TS_NEXT] = 0x8,
	[JS_PY_TS_CFRAME] = 0x38,
	[JS_PY_TS_NATIVE_TID] = 0xa0,
	[JS_PY_CF_CURRENT_FRAME] = 0x8,
	[JS_PY_FR_CODE] = 0x20,
	[JS_PY_FR_PREVIOUS] = 0x30,
	[JS_PY_FR_PREV_INSTR] = 0x38,
	[JS_PY_FR_IS_ENTRY] = 0x44,
	[JS_PY_FR_OWNER] = 0x45,
	[JS_PY_OB_TYPE] = 0x8,
	[JS_PY_VAR_SIZE] = 0x10,
	[JS_PY_CO_FILENAME] = 0x70,
	[JS_PY_CO_QUALNAME] = 0x80,
	[JS_PY_CO_LINETABLE] = 0x88,
	[JS_PY_CO_FIRSTLINENO] = 0x48,
	[JS_PY_CO_FIRSTTRACEABLE] = 0xa8,
	[JS_PY_CO_CODE] = 0xb8,
	[JS_PY_BYTES_SVAL] = 0x20,
	[JS_PY_STR_LENGTH] = 0x10,
	[JS_PY_STR_STATE] = 0x20,
	[JS_PY_STR_ASCII_SIZE] = 48,
	[JS_PY_STR_COMPACT_SIZE] = 72,
};

bool js_py_layout_table(unsigned minor, js_py_layout *lay)
{
	if (minor != 11)
		return false;
	lay->major = 3;
	lay->minor = minor;
	memcpy(lay->off, table_311, sizeof lay->off);
	lay->from = "table";
	return true;
}

/* 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h): the
 * cookie, then uint64_t fields only, struct after struct; the index of
 * each field read here. */
enum {
	DO_FREE_THREADED = 2,
	DO_RT_INTERPRETERS_HEAD = 5,
	DO_IS_NEXT = 8,
	DO_IS_THREADS_HEAD = 9,
	DO_TS_NEXT = 21,
	DO_TS_CURRENT_FRAME = 23,
	DO_TS_NATIVE_THREAD_ID = 25,
	DO_FR_PREVIOUS = 29,
	DO_FR_EXECUTABLE = 30,
	DO_FR_INSTR_PTR = 31,
	DO_FR_OWNER = 33,
	DO_CO_FILENAME = 35,
	DO_CO_QUALNAME = 37,
	DO_CO_LINETABLE = 38,
	DO_CO_FIRSTLINENO = 39,
	DO_CO_CODE_ADAPTIVE = 43,
	DO_OB_TYPE = 45,
	DO_BYTES_OB_SIZE = 65,
	DO_BYTES_OB_SVAL = 66,
	DO_STR_STATE = 68,
	DO_STR_LENGTH = 69,
	DO_STR_ASCIIOBJECT_SIZE = 70,
	DO_FIELDS = 73,
};
_Static_assert(JS_PY_DEBUG_OFFSETS_313_SIZE == DO_FIELDS * 8, "3.13's _Py_DebugOffsets");

/* PyCompactUnicodeObject past PyASCIIObject since 3.12: utf8_length, utf8. */
#define COMPACT_PAST_ASCII 16

int js_py_layout_debug_offsets_313(const uint8_t *bytes, js_py_layout *lay, char *why, size_t n)
{
	uint64_t f[DO_FIELDS];
	memcpy(f, bytes, sizeof f);
	if (f[DO_FREE_THREADED]) {
		js_note(why, n, "a free-threaded build");
		return -1;
	}
	static const struct {
		enum js_py_field field;
		int index;
	} map[] = {
		{ JS_PY_RT_INTERP_HEAD, DO_RT_INTERPRETERS_HEAD },
		{ JS_PY_IS_NEXT, DO_IS_NEXT },
		{ JS_PY_IS_THREADS_HEAD, DO_IS_THREADS_HEAD },
		{ JS_PY_TS_NEXT, DO_TS_NEXT },
		{ JS_PY_TS_CFRAME, DO_TS_CURRENT_FRAME },
		{ JS_PY_TS_NATIVE_TID, DO_TS_NATIVE_THREAD_ID },
		{ JS_PY_FR_CODE, DO_FR_EXECUTABLE },
		{ JS_PY_FR_PREVIOUS, DO_FR_PREVIOUS },
		{ JS_PY_FR_PREV_INSTR, DO_FR_INSTR_PTR },
		{ JS_PY_FR_OWNER, DO_FR_OWNER },
		{ JS_PY_OB_TYPE, DO_OB_TYPE },
		{ JS_PY_VAR_SIZE, DO_BYTES_OB_SIZE },
		{ JS_PY_CO_FILENAME, DO_CO_FILENAME },
		{ JS_PY_CO_QUALNAME, DO_CO_QUALNAME },
		{ JS_PY_CO_LINETABLE, DO_CO_LINETABLE },
		{ JS_PY_CO_FIRSTLINENO, DO_CO_FIRSTLINENO },
		{ JS_PY_CO_CODE, DO_CO_CODE_ADAPTIVE },
		{ JS_PY_BYTES_SVAL, DO_BYTES_OB_SVAL },
		{ JS_PY_STR_LENGTH, DO_STR_LENGTH },
		{ JS_PY_STR_STATE, DO_STR_STATE },
		{ JS_PY_STR_ASCII_SIZE, DO_STR_ASCIIOBJECT_SIZE },
	};
	for (size_t i = 0; i < sizeof map / sizeof *map; i++) {
		if (f[map[i].index] > JS_PY_MAX_OFFSET) {
			js_note(why, n, "an offset of %llu", (unsigned long long)f[map[i].index]);
			return -1;
		}
		lay->off[map[i].field] = (int64_t)f[map[i].index];
	}
	lay->off[JS_PY_CF_CURRENT_FRAME] = -1;
	lay->off[JS_PY_FR_IS_ENTRY] = -1;
	lay->off[JS_PY_CO_FIRSTTRACEABLE] = -1;
	lay->off[JS_PY_STR_COMPACT_SIZE] = lay->off[JS_PY_STR_ASCII_SIZE] + COMPACT_PAST_ASCII;
	lay->from = "_Py_DebugOffsets";
	return 0;
}

/* A type with its typedefs and qualifiers peeled off. */
static bool peel(Dwarf_Die *die, Dwarf_Die *out)
{
	*out = *die;
	for (unsigned i = 0; i < JS_MAX_DIE_DEPTH; i++) {
		int tag = dwarf_tag(out);
		if (tag != DW_TAG_typedef && tag != DW_TAG_const_type && tag != DW_TAG_volatile_type)
			return tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
		Dwarf_Attribute a;
		if (!dwarf_attr(out, DW_AT_type, &a) || !dwarf_formref_die(&a, out))
			return false;
	}
	return false;
}

/* The member `name` of the struct `st` (one path component, n bytes). */
static bool member(Dwarf_Die *st, const char *name, size_t n, Dwarf_Die *out, int64_t *off)
{
	Dwarf_Die c;
	if (dwarf_child(st, &c) != 0)
		return false;
	do {
		const char *m = dwarf_diename(&c);
		if (dwarf_tag(&c) != DW_TAG_member || !m || strlen(m) != n || memcmp(m, name, n) != 0)
			continue;
		Dwarf_Attribute a;
		Dwarf_Word w;
		if (!dwarf_attr(&c, DW_AT_data_member_location, &a) || dwarf_formudata(&a, &w) != 0)
			return false;
		*out = c;
		*off = (int64_t)w;
		return true;
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/* The offset of `path` from the struct `st` (its size for ""). */
static bool resolve(Dwarf_Die *st, const char *path, int64_t *off)
{
	if (!*path) {
		int size = dwarf_bytesize(st);
		*off = size;
		return size > 0;
	}
	*off = 0;
	Dwarf_Die cur = *st;
	for (const char *p = path;;) {
		size_t n = strcspn(p, ".");
		Dwarf_Die m;
		int64_t o;
		if (!member(&cur, p, n, &m, &o))
			return false;
		*off += o;
		if (!p[n])
			return true;
		Dwarf_Attribute a;
		Dwarf_Die t;
		if (!dwarf_attr(&m, DW_AT_type, &a) || !dwarf_formref_die(&a, &t) || !peel(&t, &cur))
			return false;
		p += n + 1;
	}
}

/* The fields that the typedefs at the top of `unit` define. */
static void scan_unit(Dwarf_Die *unit, js_py_layout *lay, bool *found)
{
	Dwarf_Die c;
	if (dwarf_child(unit, &c) != 0)
		return;
	do {
		const char *name = dwarf_diename(&c);
		if (dwarf_tag(&c) != DW_TAG_typedef || !name)
			continue;
		Dwarf_Die st;
		for (int f = 0; f < JS_PY_NFIELDS; f++) {
			if (found[f] || strcmp(js_py_field_names[f].type, name) != 0)
				continue;
			if (peel(&c, &st) && resolve(&st, js_py_field_names[f].path, &lay->off[f]))
				found[f] = true;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

static bool all(const bool *found)
{
	for (int f = 0; f < JS_PY_NFIELDS; f++)
		if (!found[f])
			return false;
	return true;
}

/* The unit of the eval loop first: a build without link-time
 * optimisation describes every type there.  Else every unit, until each
 * field is found: Debian's release build (LTO, then dwz) keeps a type in
 * the units of a few files only, or in partial units they import. */
int js_py_layout_dwarf(Dwarf *dw, uint64_t inside, js_py_layout *lay, char *why, size_t n)
{
	bool found[JS_PY_NFIELDS] = { false };
	Dwarf_Die unit;
	if (!dw) {
		js_note(why, n, "no DWARF");
		return -1;
	}
	if (dwarf_addrdie(dw, inside, &unit))
		scan_unit(&unit, lay, found);
	Dwarf_CU *cu = NULL;
	while (!all(found) && dwarf_get_units(dw, cu, &cu, NULL, NULL, &unit, NULL) == 0)
		scan_unit(&unit, lay, found);
	for (int f = 0; f < JS_PY_NFIELDS; f++) {
		if (!found[f]) {
			js_note(why, n, "DWARF has no %s%s%s", js_py_field_names[f].type,
				*js_py_field_names[f].path ? "." : "", js_py_field_names[f].path);
			return -1;
		}
	}
	lay->from = "DWARF";
	return 0;
}

unsigned js_py_layout_diff(const js_py_layout *table, const js_py_layout *dwarf, char *why, size_t n)
{
	unsigned d = 0;
	for (int f = 0; f < JS_PY_NFIELDS; f++) {
		if (table->off[f] == dwarf->off[f])
			continue;
		js_note(why, n, "%s%s%s: table %lld, DWARF %lld", js_py_field_names[f].type,
			*js_py_field_names[f].path ? "." : "", js_py_field_names[f].path,
			(long long)table->off[f], (long long)dwarf->off[f]);
		d++;
	}
	return d;
}
