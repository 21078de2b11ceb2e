/* SPDX-License-Identifier: MIT */
/* pyframes.c - prints every thread's Python frames of a live CPython,
 * read from outside by jitstack's python/ reader: one line per thread
 * ("thread NATIVE-TID"), then one per frame, innermost first
 * ("  QUALNAME FILE:LINE", " [entry]" on the first frame of an eval loop
 * activation).
 *
 *   pyframes [--no-dwarf] [--no-stop [--no-check]] [--repeat N [--cold] [--each]] -p PID | --core FILE
 *   pyframes --check-table MINOR PYTHON   the table of 3.MINOR against
 *                                         PYTHON's DWARF, field by field
 *
 * The target's modules are found as jitstack finds them (target/modules.h:
 * /proc/PID/maps, or a core's NT_FILE note).  --no-dwarf takes the layout
 * from the table even where DWARF has it;
 * --no-stop reads without stopping the threads (and has the reader check
 * each chain it read: frames.h, py->running; --no-check reads as if they
 * were stopped, to show what the check catches); --repeat N walks N times
 * (warm: each walk after the first keeps the code objects decoded; --cold
 * forgets them before each)
 * and prints the cost of a walk on stderr (reads, bytes, microseconds:
 * minimum, median, maximum; chains read again and dropped); --each prints
 * the frames of every walk, each after a line "walk K".
 */
#include "base/err.h"
#include "python/frames.h"
#include "python/layout.h"
#include "target/mem.h"
#include "target/modules.h"
#include "target/proc.h"
#include "target/symfind.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char *debuginfo_path;
static const Dwfl_Callbacks offline = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

/* The DWARF of the file at path (its own or its separate debug file's). */
static Dwarf *dwarf_of(const char *path, Dwfl **dwfl)
{
	*dwfl = dwfl_begin(&offline);
	if (!*dwfl)
		return NULL;
	dwfl_report_begin(*dwfl);
	Dwfl_Module *mod = dwfl_report_offline(*dwfl, path, path, -1);
	dwfl_report_end(*dwfl, NULL, NULL);
	Dwarf_Addr bias;
	return mod ? dwfl_module_getdwarf(mod, &bias) : NULL;
}

static Elf *open_elf(const char *path, int *fd)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	return *fd < 0 ? NULL : elf_begin(*fd, ELF_C_READ_MMAP, NULL);
}

/* The target's modules as jitstack reports them (target/modules.h). */
static int find_elf(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr base, char **file, Elf **elfp)
{
	if (js_memelf_find_elf(ud, elfp))
		return -1;
	return dwfl_linux_proc_find_elf(mod, ud, name, base, file, elfp);
}

static const Dwfl_Callbacks target_callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

/* The module that defines _PyRuntime: its ELF, load bias and DWARF
 * (NULL unless use_dwarf, or when it has none). */
typedef struct python_module {
	Elf *elf;
	Dwarf_Addr bias;
	Dwarf *dw;
	bool use_dwarf;
} python_module;

static int find_runtime(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr start, void *arg)
{
	(void)ud, (void)name, (void)start;
	python_module *py = arg;
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Addr v;
	GElf_Xword size;
	if (!elf || !js_find_symbol(elf, "_PyRuntime", &v, &size))
		return DWARF_CB_OK;
	py->elf = elf;
	py->bias = bias;
	Dwarf_Addr dbias;
	py->dw = py->use_dwarf ? dwfl_module_getdwarf(mod, &dbias) : NULL;
	return DWARF_CB_ABORT;
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Every thread's frames on stdout, its warning on stderr (and as a line
 * "  warning: ..." in its place with `inline_warnings`). */
static void print(const js_py *py, bool inline_warnings)
{
	if (py->warning_walk[0])
		fprintf(stderr, "pyframes: warning: %s\n", py->warning_walk);
	for (size_t i = 0; i < py->n_threads; i++) {
		const js_py_thread *t = &py->threads[i];
		printf("thread %llu\n", (unsigned long long)t->native_tid);
		if (t->warning[0])
			fprintf(stderr, "pyframes: warning: thread %llu: %s\n",
				(unsigned long long)t->native_tid, t->warning);
		if (t->warning[0] && inline_warnings)
			printf("  warning: %s\n", t->warning);
		for (size_t j = 0; j < t->n; j++) {
			const js_py_frame *f = &py->frames[t->first + j];
			printf("  %s %s:%d%s\n", f->qualname, f->filename, f->line,
			       f->entry ? " [entry]" : "");
		}
	}
}

/* The table of 3.minor against the DWARF of the file at path. */
static int compare_table(unsigned minor, const char *path, Elf *elf, Dwarf *dw)
{
	GElf_Addr eval;
	GElf_Xword size;
	js_py_layout table, dwarf;
	char why[4096] = "";
	if (!dw || !js_find_symbol(elf, "PyEval_EvalCode", &eval, &size)) {
		fprintf(stderr, "pyframes: %s: no DWARF, or no PyEval_EvalCode\n", path);
		return 1;
	}
	if (!js_py_layout_table(minor, &table)) {
		fprintf(stderr, "pyframes: no table for 3.%u\n", minor);
		return 1;
	}
	if (js_py_layout_dwarf(dw, eval, &dwarf, why, sizeof why) != 0) {
		fprintf(stderr, "pyframes: %s: %s\n", path, why);
		return 1;
	}
	unsigned d = js_py_layout_diff(&table, &dwarf, why, sizeof why);
	for (int f = 0; f < JS_PY_NFIELDS; f++)
		printf("%s%s%s %lld %lld\n", js_py_field_names[f].type, *js_py_field_names[f].path ? "." : "",
		       js_py_field_names[f].path, (long long)table.off[f], (long long)dwarf.off[f]);
	if (d)
		fprintf(stderr, "pyframes: %u fields differ: %s\n", d, why);
	return d ? 1 : 0;
}

static int check_table(unsigned minor, const char *path)
{
	int fd = -1;
	Dwfl *dwfl = NULL;
	Elf *elf = open_elf(path, &fd);
	Dwarf *dw = elf ? dwarf_of(path, &dwfl) : NULL;
	int rc = compare_table(minor, path, elf, dw);
	dwfl_end(dwfl);
	elf_end(elf);
	if (fd >= 0)
		close(fd);
	return rc;
}

int main(int argc, char **argv)
{
	bool stop = true, cold = false;
	python_module pm = { .use_dwarf = true };
	unsigned repeat = 0;
	bool each = false, check = true;
	pid_t pid = 0;
	const char *core_path = NULL;
	elf_version(EV_CURRENT);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-dwarf"))
			pm.use_dwarf = false;
		else if (!strcmp(argv[i], "--no-stop"))
			stop = false;
		else if (!strcmp(argv[i], "--cold"))
			cold = true;
		else if (!strcmp(argv[i], "--each"))
			each = true;
		else if (!strcmp(argv[i], "--no-check"))
			check = false;
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "-p") && i + 1 < argc)
			pid = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--core") && i + 1 < argc)
			core_path = argv[++i];
		else if (!strcmp(argv[i], "--check-table") && i + 2 < argc)
			return check_table((unsigned)atoi(argv[i + 1]), argv[i + 2]);
		else {
			fprintf(stderr,
				"usage: pyframes [--no-dwarf] [--no-stop [--no-check]] [--repeat N [--cold] [--each]] -p PID | --core FILE\n"
				"       pyframes --check-table MINOR PYTHON\n");
			return 2;
		}
	}
	if ((pid <= 0) == !core_path) {
		fprintf(stderr, "pyframes: -p PID or --core FILE is needed\n");
		return 2;
	}
	int core_fd = -1;
	Elf *core = core_path ? open_elf(core_path, &core_fd) : NULL;
	js_mem *mem = core ? js_mem_core(core) : pid > 0 ? js_mem_live(pid) : NULL;
	js_memelf vdso = { 0 };
	js_err err = { 0 };
	Dwfl *dwfl = dwfl_begin(&target_callbacks);
	if (!mem || !dwfl) {
		fprintf(stderr, "pyframes: cannot read %s\n", core_path ? core_path : "the process");
		return 1;
	}
	dwfl_report_begin(dwfl);
	int r = core ? js_report_core_files(dwfl, core, NULL, mem, &vdso)
		     : js_report_proc_maps(dwfl, pid, mem, &vdso, &err);
	dwfl_report_end(dwfl, NULL, NULL);
	if (r) {
		if (core)
			fprintf(stderr, "pyframes: %s: no NT_FILE note\n", core_path);
		else
			js_err_print(&err);
		return 1;
	}
	dwfl_getmodules(dwfl, find_runtime, &pm, 0);
	if (!pm.elf) {
		fprintf(stderr, "pyframes: no module of the target exports _PyRuntime\n");
		return 1;
	}
	stop = stop && !core;
	js_proc proc = { 0 };
	js_py py;
	if ((stop && js_proc_attach(&proc, pid, &err)) ||
	    js_py_open(&py, mem, pm.elf, pm.bias, pm.dw, &err)) {
		js_err_print(&err);
		return 1;
	}
	if (!py.known) {
		fprintf(stderr, "pyframes: warning: %s\n", py.warning);
	} else {
		fprintf(stderr, "pyframes: CPython %s, its layout from %s\n", py.version, py.lay.from);
		py.running = !stop && check;
		unsigned long rereads = 0, changed = 0;
		if (stop)
			js_proc_stop_all(&proc);
		uint64_t *us = calloc(repeat ? repeat : 1, sizeof *us);
		for (unsigned i = 0; us && i < (repeat ? repeat : 1); i++) {
			if (cold)
				js_py_forget(&py);
			uint64_t t0 = now_us();
			js_py_walk(&py);
			us[i] = now_us() - t0;
			rereads += py.stats.rereads;
			changed += py.stats.changed;
			if (each) {
				printf("walk %u\n", i + 1);
				print(&py, true);
			}
		}
		if (stop)
			js_proc_resume_all(&proc);
		if (!each)
			print(&py, false);
		if (repeat && us) {
			qsort(us, repeat, sizeof *us, cmp_u64);
			fprintf(stderr,
				"pyframes: a %s walk: %lu reads (%lu system calls), %lu bytes, %lu code objects read "
				"again in the walk, %lu kept from the last; %llu/%llu/%llu us (min/median/max of %u); "
				"%lu chains read again, %lu dropped\n",
				cold ? "cold" : "warm", py.stats.reads, py.stats.syscalls, py.stats.bytes,
				py.stats.code_hits, py.stats.code_kept, (unsigned long long)us[0],
				(unsigned long long)us[repeat / 2], (unsigned long long)us[repeat - 1],
				repeat, rereads, changed);
		}
		free(us);
	}
	if (stop)
		js_proc_detach(&proc);
	js_proc_free(&proc);
	js_py_free(&py);
	dwfl_end(dwfl);
	js_memelf_free(&vdso);
	js_mem_free(mem);
	if (core) {
		elf_end(core);
		close(core_fd);
	}
	return 0;
}
