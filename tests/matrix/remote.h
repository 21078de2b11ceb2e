/* SPDX-License-Identifier: MIT */
/* remote.h - one interface to the out-of-process unwinders the matrix drives
 * from C: libdwfl (remote_dwfl.c) and libunwind-ptrace (remote_unw.c).  Each
 * tool links exactly one of them.
 *
 * With MX_JIT_IMAGES the unwinder is also given what the target published
 * through the GDB JIT interface (jitimages.h): libdwfl gets each image as a
 * module, libunwind-ptrace gets its FDEs through find_proc_info.  Without
 * it, both see JIT code as they do out of the box: no module, no unwind
 * information, a frame-pointer guess.
 */
#ifndef MX_REMOTE_H
#define MX_REMOTE_H

#include <stdint.h>
#include <sys/types.h>

enum {
	MX_JIT_IMAGES = 1, /* read the GDB JIT interface */
	MX_STOPPED = 2,    /* the caller is the target's tracer and has it stopped */
	MX_INLINE = 4,     /* name inline frames and lines (libdwfl only) */
};

typedef struct mx_frame {
	uint64_t pc;    /* frame 0: where the thread is; others: return addresses */
	char name[128]; /* "" when the unwinder knows no name */
	/* with MX_INLINE: " at FILE:LINE" of the frame's own function, and
	 * the functions inlined at its pc, innermost first, a line each:
	 * "0xPC NAME at FILE:LINE inlined"; "" when there are none */
	char where[256];
	char inlined[1024];
} mx_frame;

typedef struct mx_remote mx_remote;

/* The unwinder's name, for messages: "libdwfl" or "libunwind-ptrace". */
extern const char mx_remote_name[];

/* A live process (attached for each unwind unless MX_STOPPED). */
mx_remote *mx_open_live(pid_t pid, int flags, char *err, size_t errlen);
/* A core file and its executable; NULL with a message where unsupported. */
mx_remote *mx_open_core(const char *core, const char *exe, int flags, char *err, size_t errlen);
/* How many JIT images were read (-1: not asked for). */
int mx_n_images(const mx_remote *r);
/* Unwinds the thread tid (0: the main thread, or the core's first thread)
 * into at most max frames; returns how many, or -1 with a message when not
 * even the first frame could be read. */
int mx_unwind(mx_remote *r, pid_t tid, mx_frame *frames, int max, char *err, size_t errlen);
void mx_close(mx_remote *r);

#endif
