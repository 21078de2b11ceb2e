/* SPDX-License-Identifier: MIT */
/* modules.h - reporting a target's native modules (its executable, its
 * libraries, the vDSO) to libdwfl.
 *
 * Why not dwfl_linux_proc_report / dwfl_core_file_report: both report
 * segments, and from then on libdwfl rounds every module's bounds to pages
 * (dwfl_report_segment sets its segment_align).  JIT images share pages
 * all the time (LuaJIT writes a trace's image right after the previous
 * one's), and rounded, two images in one page become one lookup slot: the
 * second hides the first.  So both live processes and cores are reported
 * from "maps" text through dwfl_linux_proc_maps_report, which reports
 * modules only: /proc/PID/maps as it is, or a core's NT_FILE note turned
 * into the same text.  The vDSO, which is in no file, is reported here too
 * and loaded from the target's memory when a frame needs it.
 */
#ifndef JS_MODULES_H
#define JS_MODULES_H

#include "base/err.h"
#include "target/mem.h"

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

/* A module whose ELF image is read from the target's memory (the vDSO). */
typedef struct js_memelf {
	uint32_t magic; /* JS_MEMELF_MAGIC */
	uint64_t lo, hi;
	js_mem *mem;
	uint8_t *bytes; /* the copy, once read */
	size_t size;
	bool tried;
} js_memelf;

#define JS_MEMELF_MAGIC 0x4d454d45u /* "MEME" */

/* Report the modules of /proc/PID/maps (and the vDSO into *vdso).
 * Returns 0, or js_fail's code (JS_EXIT_NO_PROCESS: the process is gone). */
int js_report_proc_maps(Dwfl *dwfl, pid_t pid, js_mem *mem, js_memelf *vdso, js_err *err);
/* Report the modules a core's NT_FILE note lists; `exe` (may be NULL)
 * replaces the executable's path.  The vDSO from NT_AUXV.  Returns 0, or
 * -1 when the core has no usable NT_FILE note. */
int js_report_core_files(Dwfl *dwfl, Elf *core, const char *exe, js_mem *mem, js_memelf *vdso);

/* The last file of the core's NT_FILE note for which want is true, into
 * out.  false when none is (or the core has no NT_FILE note). */
bool js_core_find_file(Elf *core, bool (*want)(const char *path), char *out, size_t len);

/* find_elf for a js_memelf module: true when the userdata is one (then
 * *elfp is set, or NULL when its memory is unreadable). */
bool js_memelf_find_elf(void **userdata, Elf **elfp);
void js_memelf_free(js_memelf *m);

#endif
