/* SPDX-License-Identifier: MIT */
/* jitmodules.h - the target's JIT code as libdwfl modules.
 *
 * Finds every definition of __jit_debug_descriptor among the target's
 * modules, reads their lists (desc.h), copies each entry's image, rewrites
 * it (jitimage.h) and reports it to libdwfl as a module at the code's
 * address, whose ELF the find_elf callback hands over from memory.
 *
 * A lazy reader (j->lazy, the default for dumps and record) copies no
 * image when it reads the lists: an entry whose code range is known
 * cheaply (the extension's code_lo/code_hi, or a foreign image's ELF and
 * section headers, two bounded reads) is kept as a deferred entry in an
 * index by address, and its image copied and rewritten only when a pc of a
 * stack falls in that range (js_jit_load_at).  An entry whose range cannot
 * be told so is copied at once, as a reader that is not lazy copies all.
 *
 * Images are cached across reads keyed by what names an entry uniquely:
 * (entry address, reg_seq) with the extension, (entry address, image
 * address, image size) without it; a record session re-reads the list only
 * when the descriptor's seq moved, and copies only new images.
 */
#ifndef JS_JITMODULES_H
#define JS_JITMODULES_H

#include "jit/desc.h"
#include "base/err.h"
#include "jit/jitimage.h"
#include "base/bounds.h"
#include "target/mem.h"

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct js_image {
	uint32_t magic; /* JS_IMAGE_MAGIC: identifies our modules' userdata */
	uint64_t entry, reg_seq, symfile_addr, symfile_size;
	uint64_t code_lo, code_hi; /* the entry's hull (extension), else the image's */
	js_img_out out;            /* the rewritten image; out.elf NULL when rejected */
	js_exports exports;        /* the symbols it defines for other images */
	uint8_t *raw;              /* the copy, kept while relocations wait for symbols that no
				    * image defines yet (out.n_undefined), or not rewritten yet */
	bool rewritten;
	char modname[96]; /* unique libdwfl module name */
	char label[40];   /* "[jit 0x...]", what output shows */
	bool live;        /* listed by the latest read */
	bool shadowed;    /* left out of the latest report (out.why says why) */
	bool superseded;  /* ... because a newer image covers its code */
	bool reported;    /* a module in the latest report */
	unsigned desc;    /* index of its descriptor */
} js_image;

/* Free an image and all it owns (its rewritten ELF, exports and copy);
 * NULL is nothing.  The one way to free a js_image, whichever reader (GDB
 * JIT list, jitdump) made it. */
static inline void js_image_free(js_image *im)
{
	if (!im)
		return;
	js_img_out_free(&im->out);
	js_exports_free(&im->exports);
	free(im->raw);
	free(im);
}

/* Does the image name and unwind its code now: rewritten, and a module? */
static inline bool js_image_usable(const js_image *im)
{
	return im->out.elf && !im->shadowed;
}

#define JS_IMAGE_MAGIC 0x4a495449u /* "JITI" */

/* A listed entry whose image is not copied yet, and its code's range. */
typedef struct js_deferred {
	uint64_t lo, hi;
	js_entry e;
	unsigned desc;
	bool taken; /* copied since (its image is in j->img now) */
} js_deferred;

typedef struct js_jit {
	js_desc desc[JS_MAX_DESCRIPTORS];
	size_t n_desc;
	js_image **img;
	size_t n_img, cap_img;
	uint16_t machine;
	uint64_t snapshot_budget_ns; /* for every descriptor's seqlock reads (0: default) */
	uint64_t changes;            /* bumped whenever the set of images changes */
	unsigned long copies, copy_bytes, rewrites, reads; /* for --stats */
	unsigned long empty, over_limit; /* entries with no image; entries past JS_MAX_IMAGES */
	js_image **dead;                 /* dropped images, freed after libdwfl let go */
	size_t n_dead, cap_dead;
	bool lazy;          /* copy images only for the pcs that need them */
	js_deferred *defer; /* the entries not copied, by lo */
	uint64_t *defer_hi; /* defer_hi[i]: the highest hi of defer[0..i] */
	size_t n_defer, n_defer_left;
	unsigned long peeks, lazy_loads; /* headers read for a range; images copied for a pc */
	/* the descriptor search (--stats): files jitstack read itself, modules
	 * libdwfl opened, and of those whose separate debuginfo was looked for */
	unsigned long desc_looked, desc_opened, desc_debuginfo;
	uint64_t desc_ns; /* its time */
} js_jit;

void js_jit_init(js_jit *j, uint16_t machine);
void js_jit_free(js_jit *j);

/* Look for __jit_debug_descriptor in every module of dwfl (not ours):
 * in each file's .dynsym (and an unstripped file's .symtab), read
 * without libdwfl; libdwfl opens only the modules that define it or may
 * define it in their separate debuginfo (the program; a module that
 * exports __jit_debug_register_code), and, when none of them does, the
 * other stripped modules for their separate debuginfo.  Returns the
 * number found. */
size_t js_jit_find_descriptors(js_jit *j, Dwfl *dwfl);

/* Read the lists and bring the images up to date; a change of the set
 * (report again) bumps j->changes.  Returns 0, or a js_exit code with *err
 * when the target's memory cannot be read (JS_EXIT_NO_PROCESS: it is gone)
 * or memory runs out. */
int js_jit_refresh(js_jit *j, js_mem *m, read_mode mode, js_err *err);

/* Copy, rewrite and keep the images of deferred entries whose code holds
 * pc (reporting them is the caller's, as after js_jit_refresh).  Returns
 * how many were added (0: none holds pc, or its copy failed a check), or
 * -1 when out of memory. */
int js_jit_load_at(js_jit *j, js_mem *m, uint64_t pc);

/* Has any extension descriptor's seq moved since the last refresh?  (An
 * error reading it counts as moved.)  Without the extension, false. */
bool js_jit_seq_moved(js_jit *j, js_mem *m);
/* Is there a descriptor without the extension (a list that can only be
 * read with the target stopped)? */
bool js_jit_has_plain(const js_jit *j);

/* Report the accepted images as modules; call between dwfl_report_begin*
 * and dwfl_report_end.  An image whose code overlaps a native module, or
 * a newer registration's image, is left out of this report (shadowed),
 * not dropped: the next report looks at it again.  Returns true when an
 * image reported before is left out now (a report that only adds must
 * then be redone in full). */
bool js_jit_report(js_jit *j, Dwfl *dwfl);
/* Does [lo, hi) overlap the loadable segments of the module's file (its
 * whole span when there is no file to read, or it has none)? */
bool js_module_maps(Dwfl_Module *mod, uint64_t lo, uint64_t hi);
/* Free the images dropped by refreshes; call after dwfl_report_end. */
void js_jit_reap(js_jit *j);

/* Replace an image's CFI by nothing (it was found to loop): its frames are
 * then unwound by frame pointers.  Report the modules again afterwards
 * (js_refresh_modules).  0, or -1 when out of memory. */
int js_jit_drop_cfi(js_jit *j, js_image *im);

/* Our image behind a module's userdata, or NULL for other modules. */
js_image *js_jit_of(void *userdata);
/* The image whose hull holds pc (accepted or not), or NULL. */
js_image *js_jit_image_at(js_jit *j, uint64_t pc);

/* find_elf for our modules: an Elf over the rewritten image in memory.
 * Returns true when the module is ours (then *elfp is set or NULL). */
bool js_jit_find_elf(void **userdata, Elf **elfp);

#endif
