/* SPDX-License-Identifier: MIT */
/* jitimages.h - how the matrix's remote unwinders learn about JIT code: the
 * GDB JIT interface of another process (live, or in a core), read the way gdb
 * reads it, and what an unwinder needs from each in-memory ELF image.
 *
 * The target is stopped (or a core) while it is read, so the standard fields
 * suffice; the outside-reader extension is not needed here.  Every value read
 * from the target is untrusted: the walk, sizes and counts are bounded.
 */
#ifndef MX_JITIMAGES_H
#define MX_JITIMAGES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Reads len bytes at addr of the target; 0 on success. */
typedef int (*mx_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

typedef struct mx_sym {
	uint64_t lo, hi;
	char *name;
} mx_sym;

/* One FDE: the code it covers and where it is in the target. */
typedef struct mx_fde {
	uint64_t lo, hi;
	uint64_t addr;
} mx_fde;

typedef struct mx_image {
	uint8_t *bytes; /* a copy of the ELF image */
	size_t size;
	uint64_t text_lo, text_hi; /* .text: the JIT code it describes */
	uint64_t eh_addr;          /* .eh_frame in the target (its sh_addr) */
	mx_sym *syms;              /* functions, sorted by lo */
	size_t n_syms;
	mx_fde *fdes; /* sorted by lo; unpublished (range 0) dropped */
	size_t n_fdes;
} mx_image;

typedef struct mx_images {
	mx_image *v;
	size_t n;
} mx_images;

/* Reads every image on the list of the descriptor at desc (0 entries is not
 * an error).  Returns 0, or -1 with a message in err. */
int mx_images_read(mx_read_fn rd, void *ctx, uint64_t desc, mx_images *out, char *err, size_t errlen);
void mx_images_free(mx_images *imgs);

/* The image whose .text holds pc, and the name of the function there. */
const mx_image *mx_image_at(const mx_images *imgs, uint64_t pc);
const char *mx_image_name(const mx_images *imgs, uint64_t pc);

/* process_vm_readv on a live process; ctx points at its pid_t. */
int mx_read_live(void *ctx, uint64_t addr, void *buf, size_t len);

/* The addresses of `name` in the objects mapped into pid (from
 * /proc/PID/maps and each object's symbol tables), executable first.
 * Returns how many were found (at most max). */
int mx_find_symbol_live(pid_t pid, const char *name, uint64_t *addrs, int max);

#endif
