/* SPDX-License-Identifier: MIT */
/* frames.h - CPython's Python frames, read from outside the process.
 *
 * From `_PyRuntime` (a symbol every CPython exports) the reader walks the
 * interpreters, their thread states (each with the native thread id it
 * runs on) and each thread's chain of interpreter frames, from the
 * innermost (3.11: cframe->current_frame) through `previous`, and reads
 * each frame's code object: its qualified name, file and line.  An entry
 * frame (is_entry) is the first of the frames one activation of the eval
 * loop runs: where a merge with the native stack places the chain's
 * pieces.
 *
 * Which version it is: 3.13 and later begin `_PyRuntime` with
 * `_Py_DebugOffsets` (a cookie, then the version), which gives 3.13's
 * layout; 3.11 and 3.12 export `Py_Version`.  The layout of 3.11 comes
 * from the interpreter's DWARF when the caller hands it over, else from
 * layout.h's table.  Any other version (3.12, 3.14 and later, a
 * free-threaded build) gets a one-line warning and no frames.  3.13 has
 * no is_entry: its eval loop pushes a shim frame (owned by the C stack)
 * behind each activation's first frame, which marks that one.
 *
 * Everything read is untrusted: each thread's chain is bounded in depth,
 * strings and line tables in size, a walk in reads (base/bounds.h); a
 * chain that loops, or leads to memory that is unmapped or does not hold
 * what it should (a code object's type, a string's), is dropped with a
 * warning saying why, never half-shown.
 */
#ifndef JS_PY_FRAMES_H
#define JS_PY_FRAMES_H

#include "base/err.h"
#include "python/layout.h"
#include "target/mem.h"

#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct js_py_frame {
	const char *qualname, *filename; /* in the reader's strings, until the next walk */
	int line;                        /* 0: unknown */
	bool entry;                      /* the first frame of an eval loop activation */
	uint64_t addr;                   /* of its _PyInterpreterFrame */
} js_py_frame;

typedef struct js_py_thread {
	uint64_t tstate;
	uint64_t native_tid;
	size_t first, n;   /* its frames: frames[first..first+n), innermost first */
	char warning[256]; /* why its chain was dropped, "" when it was not */
} js_py_thread;

typedef struct js_py_stats {
	unsigned long reads;     /* reads of the target's memory */
	unsigned long bytes;     /* bytes they asked for */
	unsigned long code_hits; /* code objects already read in this walk */
	unsigned long code_kept; /* code objects decoded by an earlier walk, kept */
	unsigned long syscalls;  /* process_vm_readv calls they took (a live target) */
	unsigned long rereads;   /* chains read again: they changed while read (py->running) */
	unsigned long changed;   /* chains dropped: they changed at every read */
} js_py_stats;

struct js_strchunk;
struct js_py_code;
struct js_py_seen;

typedef struct js_py {
	js_mem *mem;
	bool running;      /* the threads run while they are read: check each chain (js_py_walk) */
	bool known;        /* a version whose frames are read */
	char warning[256]; /* when not: why, one line */
	char version[32];  /* "3.11.2", or "" */
	js_py_layout lay;
	uint64_t runtime;                             /* &_PyRuntime in the target */
	uint64_t code_type, unicode_type, bytes_type; /* their type objects, 0: unchecked */
	js_py_thread *threads;
	size_t n_threads, cap_threads;
	js_py_frame *frames;
	size_t n_frames, cap_frames;
	char warning_walk[256];   /* why the walk itself stopped, "" when it did not */
	struct js_strchunk *strs; /* the names, files and line tables decoded */
	size_t kept;              /* their bytes */
	struct js_py_code *codes; /* code objects decoded, by address, across walks */
	uint64_t walks;
	js_py_stats stats;
	struct js_py_seen *seen; /* the frames a read of a running thread's chain went through */
	size_t n_seen, cap_seen;
	uint64_t only_tid; /* a walk of this thread alone (js_py_walk_thread), else 0 */
	/* the thread state a walk of one thread found last, by native thread
	 * id (a slot per id modulo its size): checked by one read, else the
	 * lists are walked */
	struct {
		uint64_t tid, ts;
	} ts_memo[64];
} js_py;

/* Ready *py to read the CPython whose ELF file `elf` (held by the caller)
 * is mapped with load bias `bias` in the target read through `mem`.  `dw`
 * is that file's DWARF (or its separate debug file's), NULL when it has
 * none: then the table is used.  0, or js_fail's code when the file
 * exports no _PyRuntime.  A version not known is no failure: py->known
 * is false and py->warning says why. */
int js_py_open(js_py *py, js_mem *mem, Elf *elf, uint64_t bias, Dwarf *dw, js_err *err);

/* Read every thread's frames again (the previous walk's are forgotten;
 * the code objects it decoded are kept, each checked by one read of its
 * head, until they hold more than JS_PY_MAX_KEPT bytes).  With
 * py->running (a target that was not stopped), each thread's chain is
 * checked once read: read again, from the thread state's innermost frame
 * (the frames called since, at most JS_PY_RECHECK_FRAMES, passed over) out
 * through every frame the first read went through, each must still run
 * the same code with the same caller at the same instruction (the
 * innermost one excepted: its line is as of its read).  When not, or when
 * the first read failed, the chain is read again, up to JS_PY_REREADS
 * times, then dropped with a warning: what is shown is a chain the thread
 * had.
 * Threads whose chain could not be read carry a warning and no frames;
 * py->warning_walk says why the walk stopped early.  Never fails. */
void js_py_walk(js_py *py);

/* js_py_walk of the one thread whose native thread id is native_tid: the
 * thread states of the others are passed over (a sample of one thread).
 * py->threads holds it alone, or nothing when no thread state has that
 * id (a thread that runs no Python). */
void js_py_walk_thread(js_py *py, uint64_t native_tid);

/* Forget the decoded code objects: the next walk reads them all. */
void js_py_forget(js_py *py);

void js_py_free(js_py *py);

#endif
