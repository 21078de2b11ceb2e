/* SPDX-License-Identifier: MIT */
/* pyframes.c - prints every thread's Python frames of a live CPython,
 * read from outside by jitstack's python/ reader: one line per thread
 * ("thread NATIVE-TID"), then one per frame, innermost first
 * ("  QUALNAME FILE:LINE", " [entry]" on the first frame of an eval loop
 * activation).
 *
 *   pyframes [--no-dwarf] [--no-stop] [--repeat N] -p PID
 *   pyframes --check-table MINOR PYTHON   the table of 3.MINOR against
 *                                         PYTHON's DWARF, field by field
 *
 * --no-dwarf takes the layout from the table even where DWARF has it;
 * --no-stop reads without stopping the threads; --repeat N walks N times
 * and prints the cost of a walk on stderr (reads, bytes, microseconds:
 * minimum, median, maximum).
 */
#include "base/err.h"
#include "base/maps.h"
#include "python/frames.h"
#include "python/layout.h"
#include "target/mem.h"
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

/* The file of /proc/PID/maps that exports _PyRuntime, and its load bias
 * (its mapping at offset 0 less its first PT_LOAD's page). */
static bool find_python(pid_t pid, char *path, size_t len, uint64_t *bias)
{
	char name[64], line[4096];
	snprintf(name, sizeof name, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(name, "re");
	if (!f)
		return false;
	bool found = false;
	char tried[4096] = "";
	while (!found && fgets(line, sizeof line, f)) {
		js_maps_line m;
		if (!js_maps_parse(line, strcspn(line, "\n"), &m) || m.off != 0 || m.path_len == 0 ||
		    m.path[0] != '/' || m.path_len >= len)
			continue;
		memcpy(path, m.path, m.path_len);
		path[m.path_len] = 0;
		if (strcmp(path, tried) == 0)
			continue;
		snprintf(tried, sizeof tried, "%s", path);
		js_file_look look;
		if (!js_look_in_file(path, "_PyRuntime", "Py_Version", &look) || !look.defines)
			continue;
		int fd;
		Elf *elf = open_elf(path, &fd);
		size_t n;
		GElf_Phdr ph;
		if (elf && elf_getphdrnum(elf, &n) == 0) {
			for (size_t i = 0; i < n; i++) {
				if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
					*bias = m.lo - (ph.p_vaddr & ~(uint64_t)4095);
					found = true;
					break;
				}
			}
		}
		elf_end(elf);
		if (fd >= 0)
			close(fd);
	}
	fclose(f);
	return found;
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

static void print(const js_py *py)
{
	if (py->warning_walk[0])
		fprintf(stderr, "pyframes: warning: %s\n", py->warning_walk);
	for (size_t i = 0; i < py->n_threads; i++) {
		const js_py_thread *t = &py->threads[i];
		printf("thread %llu\n", (unsigned long long)t->native_tid);
		if (t->warning[0])
			fprintf(stderr, "pyframes: warning: thread %llu: %s\n",
				(unsigned long long)t->native_tid, t->warning);
		for (size_t j = 0; j < t->n; j++) {
			const js_py_frame *f = &py->frames[t->first + j];
			printf("  %s %s:%d%s\n", f->qualname, f->filename, f->line,
			       f->entry ? " [entry]" : "");
		}
	}
}

static int check_table(unsigned minor, const char *path)
{
	int fd;
	Dwfl *dwfl;
	Elf *elf = open_elf(path, &fd);
	Dwarf *dw = elf ? dwarf_of(path, &dwfl) : NULL;
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

int main(int argc, char **argv)
{
	bool use_dwarf = true, stop = true;
	unsigned repeat = 0;
	pid_t pid = 0;
	elf_version(EV_CURRENT);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--no-dwarf"))
			use_dwarf = false;
		else if (!strcmp(argv[i], "--no-stop"))
			stop = false;
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "-p") && i + 1 < argc)
			pid = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--check-table") && i + 2 < argc)
			return check_table((unsigned)atoi(argv[i + 1]), argv[i + 2]);
		else {
			fprintf(stderr, "usage: pyframes [--no-dwarf] [--no-stop] [--repeat N] -p PID\n"
					"       pyframes --check-table MINOR PYTHON\n");
			return 2;
		}
	}
	if (pid <= 0) {
		fprintf(stderr, "pyframes: -p PID is needed\n");
		return 2;
	}
	char path[4096];
	uint64_t bias = 0;
	if (!find_python(pid, path, sizeof path, &bias)) {
		fprintf(stderr, "pyframes: process %d maps no file that exports _PyRuntime\n", (int)pid);
		return 1;
	}
	int fd;
	Dwfl *dwfl = NULL;
	Elf *elf = open_elf(path, &fd);
	Dwarf *dw = use_dwarf && elf ? dwarf_of(path, &dwfl) : NULL;
	js_mem *mem = js_mem_live(pid);
	js_proc proc = { 0 };
	js_err err = { 0 };
	js_py py;
	if (!elf || !mem || (stop && js_proc_attach(&proc, pid, &err)) ||
	    js_py_open(&py, mem, elf, bias, dw, &err)) {
		js_err_print(&err);
		return 1;
	}
	if (!py.known) {
		fprintf(stderr, "pyframes: warning: %s\n", py.warning);
	} else {
		fprintf(stderr, "pyframes: CPython %s, its layout from %s\n", py.version, py.lay.from);
		if (stop)
			js_proc_stop_all(&proc);
		uint64_t *us = calloc(repeat ? repeat : 1, sizeof *us);
		for (unsigned i = 0; i < (repeat ? repeat : 1); i++) {
			uint64_t t0 = now_us();
			js_py_walk(&py);
			us[i] = now_us() - t0;
		}
		if (stop)
			js_proc_resume_all(&proc);
		print(&py);
		if (repeat) {
			qsort(us, repeat, sizeof *us, cmp_u64);
			fprintf(stderr,
				"pyframes: a walk: %lu reads (%lu system calls), %lu bytes, %lu code objects from the walk's cache; "
				"%llu/%llu/%llu us (min/median/max of %u)\n",
				py.stats.reads, py.stats.syscalls, py.stats.bytes, py.stats.code_hits,
				(unsigned long long)us[0], (unsigned long long)us[repeat / 2],
				(unsigned long long)us[repeat - 1], repeat);
		}
		free(us);
	}
	if (stop)
		js_proc_detach(&proc);
	js_proc_free(&proc);
	js_py_free(&py);
	js_mem_free(mem);
	if (dwfl)
		dwfl_end(dwfl);
	elf_end(elf);
	close(fd);
	return 0;
}
