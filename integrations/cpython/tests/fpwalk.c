/* fpwalk.c - _fpwalk, a CPython extension module for the frame-pointer
 * tests: walk() follows the frame-pointer chain from its own frame, as a
 * frame-pointer unwinder does (each frame's rbp points at the caller's
 * saved rbp, the return address above it), with no unwind table and
 * nothing of glibc's unwinder, and returns the return addresses it found,
 * each with the file and the symbol dladdr() gives it (None for what it
 * cannot name: a static function has no symbol, the JIT's code no file).
 * The walk stops where the chain leaves the stack: a saved rbp that is not
 * above the frame that saved it, or farther than 8 MiB.  Compiled with
 * frame pointers (the test's gcc command).
 *
 * SPDX-License-Identifier: MIT
 */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE
#include <Python.h>
#include <dlfcn.h>
#include <stdint.h>

enum { MAX_FRAMES = 128, STACK_SPAN = 8 << 20 };

static PyObject *walk(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	uintptr_t ret[MAX_FRAMES];
	int n = 0;
	uintptr_t *fp = __builtin_frame_address(0);
	while (n < MAX_FRAMES) {
		ret[n++] = fp[1];
		uintptr_t *next = (uintptr_t *)fp[0];
		if (next <= fp || (uintptr_t)next - (uintptr_t)fp > STACK_SPAN)
			break;
		fp = next;
	}
	PyObject *list = PyList_New(0);
	for (int i = 0; list != NULL && i < n; i++) {
		Dl_info info;
		const char *file = NULL, *sym = NULL;
		if (dladdr((void *)ret[i], &info) != 0) {
			file = info.dli_fname;
			sym = info.dli_sname;
		}
		PyObject *row = Py_BuildValue("(Kzz)", (unsigned long long)ret[i], file, sym);
		if (row == NULL || PyList_Append(list, row) < 0)
			Py_CLEAR(list);
		Py_XDECREF(row);
	}
	return list;
}

static PyMethodDef methods[] = {
	{ "walk", walk, METH_NOARGS, "the return addresses of the frame-pointer chain" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "_fpwalk", NULL, -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__fpwalk(void)
{
	return PyModule_Create(&module);
}
