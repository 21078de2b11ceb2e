/* SPDX-License-Identifier: MIT */
/* layout.h - where CPython keeps what a reader of its frames needs: the
 * byte offsets of a few fields of its runtime, interpreter, thread,
 * frame, code, bytes and str structures, for one minor version.
 *
 * They come from the interpreter's DWARF (libdw: its own, or its separate
 * debug file) where it has them, else from a table per minor version
 * (js_py_layout_table).  Every entry of a table is checked against the
 * DWARF of builds that have it (tests/pyframes --check-table).
 */
#ifndef JS_PY_LAYOUT_H
#define JS_PY_LAYOUT_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One field (or a struct's size) a reader needs. */
enum js_py_field {
	JS_PY_RT_INTERP_HEAD,    /* _PyRuntimeState.interpreters.head */
	JS_PY_IS_NEXT,           /* PyInterpreterState.next */
	JS_PY_IS_THREADS_HEAD,   /* PyInterpreterState.threads.head */
	JS_PY_TS_NEXT,           /* PyThreadState.next */
	JS_PY_TS_CFRAME,         /* PyThreadState.cframe */
	JS_PY_TS_NATIVE_TID,     /* PyThreadState.native_thread_id */
	JS_PY_CF_CURRENT_FRAME,  /* _PyCFrame.current_frame */
	JS_PY_FR_CODE,           /* _PyInterpreterFrame.f_code */
	JS_PY_FR_PREVIOUS,       /* _PyInterpreterFrame.previous */
	JS_PY_FR_PREV_INSTR,     /* _PyInterpreterFrame.prev_instr */
	JS_PY_FR_IS_ENTRY,       /* _PyInterpreterFrame.is_entry */
	JS_PY_FR_OWNER,          /* _PyInterpreterFrame.owner */
	JS_PY_OB_TYPE,           /* PyObject.ob_type */
	JS_PY_VAR_SIZE,          /* PyVarObject.ob_size */
	JS_PY_CO_FILENAME,       /* PyCodeObject.co_filename */
	JS_PY_CO_QUALNAME,       /* PyCodeObject.co_qualname */
	JS_PY_CO_LINETABLE,      /* PyCodeObject.co_linetable */
	JS_PY_CO_FIRSTLINENO,    /* PyCodeObject.co_firstlineno */
	JS_PY_CO_FIRSTTRACEABLE, /* PyCodeObject._co_firsttraceable; 3.13: -1 (not told) */
	JS_PY_CO_CODE,           /* PyCodeObject.co_code_adaptive: the bytecode */
	JS_PY_BYTES_SVAL,        /* PyBytesObject.ob_sval */
	JS_PY_STR_LENGTH,        /* PyASCIIObject.length */
	JS_PY_STR_STATE,         /* PyASCIIObject.state (bit fields) */
	JS_PY_STR_ASCII_SIZE,    /* sizeof(PyASCIIObject): an ASCII string's data */
	JS_PY_STR_COMPACT_SIZE,  /* sizeof(PyCompactUnicodeObject): another's */
	JS_PY_NFIELDS
};

/* How DWARF names a field: the type (a typedef's name) and the path of
 * members from it ("" for the type's size). */
typedef struct js_py_field_name {
	const char *type, *path;
} js_py_field_name;

extern const js_py_field_name js_py_field_names[JS_PY_NFIELDS];

/* An offset of -1: the version has no such field (the comments above). */
typedef struct js_py_layout {
	unsigned major, minor;
	int64_t off[JS_PY_NFIELDS];
	const char *from; /* "DWARF", "table" or "_Py_DebugOffsets" */
} js_py_layout;

/* The table for 3.<minor>: false when there is none. */
bool js_py_layout_table(unsigned minor, js_py_layout *lay);

/* The fields from the DWARF of the compile unit holding the address
 * `inside` (a function of the interpreter's eval loop, whose unit sees
 * every structure above).  0, or -1 with why[n] saying which field is
 * missing. */
int js_py_layout_dwarf(Dwarf *dw, uint64_t inside, js_py_layout *lay, char *why, size_t n);

/* The bytes of 3.13's _Py_DebugOffsets (JS_PY_DEBUG_OFFSETS_313_SIZE, at
 * the start of _PyRuntime), read into lay.  0, or -1 with why[n]: a
 * free-threaded build (other object headers), or an offset past what the
 * reader reads at once. */
#define JS_PY_DEBUG_OFFSETS_313_SIZE (73 * 8)
int js_py_layout_debug_offsets_313(const uint8_t *bytes, js_py_layout *lay, char *why, size_t n);

/* A debug build or a layout different from the table's: the fields that
 * differ, one "NAME: table T, DWARF D" clause each, into why[n].  The
 * number of fields that differ. */
unsigned js_py_layout_diff(const js_py_layout *table, const js_py_layout *dwarf, char *why, size_t n);

#endif
