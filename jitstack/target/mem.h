/* mem.h - reading the target's memory: a live process through
 * process_vm_readv, or a core file's PT_LOAD segments.
 *
 * Every read can fail: the target's pointers are untrusted, a live
 * process's memory changes under us and the process may exit.  A read that
 * fails is routine in an unwind, so it costs no message: reads return 0 or
 * the errno value that says why (ESRCH when the process is gone,
 * EPERM/EACCES when we may not read it, EFAULT when the address is not
 * mapped, or not in the core), and the caller that reports the failure
 * makes the message (js_fail) with what it was reading.
 * The unwinder reads 8 bytes at a time; those go through a small page cache
 * that is flushed for every sample.
 */
#ifndef JS_MEM_H
#define JS_MEM_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct js_mem js_mem;

js_mem *js_mem_live(pid_t pid);
/* Over a core file opened with libelf (kept open by the caller). */
js_mem *js_mem_core(Elf *core);
/* Over a buffer standing for memory at [base, base+size): the fuzzer's
 * target.  The buffer is not copied. */
js_mem *js_mem_buffer(const uint8_t *bytes, size_t size, uint64_t base);
void js_mem_free(js_mem *m);

bool js_mem_is_core(const js_mem *m);
/* 0, or the errno value of the failure (errno itself is not set). */
int js_mem_read(js_mem *m, uint64_t addr, void *buf, size_t len);
int js_mem_read_u64(js_mem *m, uint64_t addr, uint64_t *v);
/* js_mem_read through the page cache: for many small reads close together
 * (a list's entries, images' headers).  The caller flushes the cache
 * (js_mem_flush) when what it reads may have changed since. */
int js_mem_read_cached(js_mem *m, uint64_t addr, void *buf, size_t len);
/* An 8-byte read through the page cache (live) or the core's bytes. */
bool js_mem_word(js_mem *m, uint64_t addr, uint64_t *v);
/* Copy up to `len` bytes of the target from `addr` (a stopped thread's
 * stack, from its stack pointer up) and serve later reads of that range
 * from the copy, until js_mem_snapshot_clear.  Stops at the first unmapped
 * page; returns the bytes copied. */
size_t js_mem_snapshot(js_mem *m, uint64_t addr, size_t len);
/* The same copy into buf, kept by the caller (live only; 0 for a core). */
size_t js_mem_copy(js_mem *m, uint64_t addr, void *buf, size_t len);
void js_mem_snapshot_clear(js_mem *m);
/* Serve reads of [addr, addr + len) from bytes (a stack copy the kernel
 * took at a sample, not copied here: valid until js_mem_snapshot_clear).
 * The thread has run on since, so the stack above the copy is not read
 * live: a read in the `reach` bytes above addr and past the copy fails and
 * counts as running off the copy's end.  Other reads (below the stack
 * pointer, other mappings) go to the target's memory. */
void js_mem_snapshot_set(js_mem *m, uint64_t addr, const uint8_t *bytes, size_t len, uint64_t reach);
/* Since js_mem_snapshot_set: the end of the highest word read from the
 * copy, as an offset from its start (0: none), and whether a read ran off
 * the copy's end. */
size_t js_mem_snapshot_used(const js_mem *m, bool *ran_off);
/* Forget cached pages: the target ran since they were read. */
void js_mem_flush(js_mem *m);
/* Counters for --stats: process_vm_readv calls made. */
unsigned long js_mem_syscalls(const js_mem *m);

#endif
