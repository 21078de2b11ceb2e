/* SPDX-License-Identifier: MIT */
/* remote_dwfl.c - libdwfl as a remote unwinder (remote.h), live through
 * ptrace and on core files.
 *
 * Out of the box libdwfl knows only the modules it finds in the target's
 * mappings; anonymous JIT code gets its frame-pointer fallback.  With
 * MX_JIT_IMAGES each image of the GDB JIT interface becomes one more module
 * (dwfl_report_elf on a memfd holding the image), so libdwfl unwinds the JIT
 * frames with their real CFI and names them from the image's symbols: what
 * DESIGN.md says an outside reader (jitstack) can do.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "remote.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "formats/gdbjit.h"
#include "jitimages.h"

const char mx_remote_name[] = "libdwfl";

struct mx_remote {
	Dwfl *dwfl;
	pid_t pid; /* live: the process; core: its first thread, once found */
	int core_fd;
	Elf *core;
	int n_images;
	int flags;
};

static char *debuginfo_path;

/* The images are ET_REL files whose sections already carry their
 * addresses (.text: the code; the rest: where the image lives): keep them. */
static int jit_section_address(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			       const char *secname, GElf_Word shndx, const GElf_Shdr *shdr, Dwarf_Addr *addr)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)secname, (void)shndx;
	*addr = shdr->sh_addr;
	return 0;
}

/* libdwfl makes an ET_REL module span all its SHF_ALLOC sections.  The
 * image's .eh_frame lives wherever the image was allocated (the heap, far
 * from the code), so the module would cover every library in between and
 * hide them.  In our copy only .text stays allocated; libdw still reads
 * .eh_frame by name, and its absolute pointers need no layout.
 *
 * libdwfl (0.188) also lays the module's .text out at the base it is given
 * rounded up to 256 bytes, whatever the section's address (measured: a
 * .text at 0x..feda given base 0x..fe00 lands at 0x..fe00, given
 * 0x..feda at 0x..ff00).  Code that starts anywhere (LuaJIT's traces)
 * would then be named and found that far off, or not at all.  So .text
 * starts `pad` lower, at the 256-byte boundary below the code, and grows
 * by as much, and its symbols move up by `pad`: reported at that boundary,
 * .text lands at its own address (libdwfl's bias for the CFI and the
 * DWARF, whose addresses are absolute, is then 0) and the symbols at
 * theirs. */
static void pad_symbols(uint8_t *img, size_t size, const Elf64_Shdr *symtab, unsigned text, uint64_t pad)
{
	if (symtab->sh_offset > size || symtab->sh_size > size - symtab->sh_offset)
		return;
	for (size_t off = 0; off + sizeof(Elf64_Sym) <= symtab->sh_size; off += sizeof(Elf64_Sym)) {
		uint8_t *at = img + symtab->sh_offset + off;
		Elf64_Sym sym;
		memcpy(&sym, at, sizeof sym);
		if (sym.st_shndx == text) {
			sym.st_value += pad;
			memcpy(at, &sym, sizeof sym);
		}
	}
}

static void only_text_allocated(uint8_t *img, size_t size, uint64_t pad)
{
	Elf64_Ehdr eh;
	if (size < sizeof eh)
		return;
	memcpy(&eh, img, sizeof eh);
	if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > size ||
	    eh.e_shnum > (size - eh.e_shoff) / sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum)
		return;
	Elf64_Shdr strs, symtab = { 0 };
	unsigned text = 0;
	memcpy(&strs, img + eh.e_shoff + eh.e_shstrndx * sizeof strs, sizeof strs);
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		uint8_t *at = img + eh.e_shoff + i * sizeof(Elf64_Shdr);
		Elf64_Shdr sh;
		memcpy(&sh, at, sizeof sh);
		if (strs.sh_offset > size || sh.sh_name >= size - strs.sh_offset)
			continue;
		const char *name = (const char *)img + strs.sh_offset + sh.sh_name;
		size_t room = size - strs.sh_offset - sh.sh_name;
		int is_text = room > 5 && !memcmp(name, ".text", 6);
		if (sh.sh_type == SHT_SYMTAB)
			symtab = sh;
		if (is_text && !text) {
			text = i;
			sh.sh_addr -= pad;
			sh.sh_size += pad;
			memcpy(at, &sh, sizeof sh);
		} else if (sh.sh_flags & SHF_ALLOC) {
			sh.sh_flags &= ~(uint64_t)SHF_ALLOC;
			memcpy(at, &sh, sizeof sh);
		}
	}
	if (text && symtab.sh_entsize == sizeof(Elf64_Sym))
		pad_symbols(img, size, &symtab, text, pad);
}

static const Dwfl_Callbacks live_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = jit_section_address,
	.debuginfo_path = &debuginfo_path,
};

static const Dwfl_Callbacks core_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = jit_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* Close r and return NULL, with a message in err (fmt NULL: already there). */
static mx_remote *fail(mx_remote *r, char *err, size_t errlen, const char *fmt, ...)
{
	if (fmt) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	mx_close(r);
	return NULL;
}

/* ---- the descriptor, found through libdwfl's own symbol tables -------------- */

struct find_sym {
	const char *name;
	uint64_t addrs[8];
	int n;
};

static int find_sym_in(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr start, void *arg)
{
	(void)ud, (void)name, (void)start;
	struct find_sym *fs = arg;
	int n = dwfl_module_getsymtab(mod);
	for (int i = 1; i < n && fs->n < 8; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *s = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
		if (s && sym.st_shndx != SHN_UNDEF && !strcmp(s, fs->name)) {
			fs->addrs[fs->n++] = addr;
			break;
		}
	}
	return DWARF_CB_OK;
}

/* Reading a core's memory: its PT_LOAD segments. */
static int read_core(void *ctx, uint64_t addr, void *buf, size_t len)
{
	mx_remote *r = ctx;
	size_t n;
	if (elf_getphdrnum(r->core, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(r->core, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (addr >= ph.p_vaddr && addr - ph.p_vaddr < ph.p_filesz &&
		    len <= ph.p_filesz - (addr - ph.p_vaddr))
			return pread(r->core_fd, buf, len, (off_t)(ph.p_offset + addr - ph.p_vaddr)) ==
					       (ssize_t)len
				       ? 0
				       : -1;
	}
	return -1;
}

/* Report every image as a module; returns how many, or -1. */
static int report_images(mx_remote *r, mx_read_fn rd, void *ctx, char *err, size_t errlen)
{
	struct find_sym fs = { .name = GDBJIT_DESCRIPTOR_SYMBOL };
	dwfl_getmodules(r->dwfl, find_sym_in, &fs, 0);
	mx_images imgs = { 0 };
	int total = 0;
	dwfl_report_begin_add(r->dwfl);
	for (int d = 0; d < fs.n; d++) {
		if (mx_images_read(rd, ctx, fs.addrs[d], &imgs, err, errlen)) {
			mx_images_free(&imgs);
			dwfl_report_end(r->dwfl, NULL, NULL);
			return -1;
		}
		for (size_t i = 0; i < imgs.n; i++) {
			/* the 256-byte boundary at or below the code (see
			 * only_text_allocated); libdwfl owns fd from here on */
			GElf_Addr base = imgs.v[i].text_lo & ~(GElf_Addr)0xff;
			only_text_allocated(imgs.v[i].bytes, imgs.v[i].size, imgs.v[i].text_lo - base);
			int fd = memfd_create("jit-image", MFD_CLOEXEC);
			if (fd < 0 || write(fd, imgs.v[i].bytes, imgs.v[i].size) != (ssize_t)imgs.v[i].size) {
				snprintf(err, errlen, "memfd for a JIT image: %m");
				if (fd >= 0)
					close(fd);
				continue;
			}
			char name[64];
			snprintf(name, sizeof name, "[jit %#lx]", (unsigned long)imgs.v[i].text_lo);
			if (dwfl_report_elf(r->dwfl, name, name, fd, base, false))
				total++;
			else
				snprintf(err, errlen, "dwfl_report_elf: %s", dwfl_errmsg(-1));
		}
		mx_images_free(&imgs);
	}
	dwfl_report_end(r->dwfl, NULL, NULL);
	return total;
}

/* ---- opening ------------------------------------------------------------------ */

mx_remote *mx_open_live(pid_t pid, int flags, char *err, size_t errlen)
{
	mx_remote *r = calloc(1, sizeof *r);
	if (!r)
		return fail(r, err, errlen, "out of memory");
	r->pid = pid;
	r->core_fd = -1;
	r->n_images = -1;
	r->flags = flags;
	if (!(r->dwfl = dwfl_begin(&live_callbacks)))
		return fail(r, err, errlen, "dwfl_begin: %s", dwfl_errmsg(-1));
	dwfl_report_begin(r->dwfl);
	int rc = dwfl_linux_proc_report(r->dwfl, pid);
	dwfl_report_end(r->dwfl, NULL, NULL);
	if (rc)
		return fail(r, err, errlen, "dwfl_linux_proc_report %d: %s", (int)pid,
			    rc < 0 ? dwfl_errmsg(-1) : strerror(rc));
	if ((flags & MX_JIT_IMAGES) &&
	    (r->n_images = report_images(r, mx_read_live, &r->pid, err, errlen)) < 0)
		return fail(r, err, errlen, NULL);
	rc = dwfl_linux_proc_attach(r->dwfl, pid, (flags & MX_STOPPED) != 0);
	if (rc)
		return fail(r, err, errlen, "dwfl_linux_proc_attach %d: %s", (int)pid,
			    rc < 0 ? dwfl_errmsg(-1) : strerror(rc));
	return r;
}

static int first_thread(Dwfl_Thread *t, void *arg)
{
	*(pid_t *)arg = dwfl_thread_tid(t);
	return DWARF_CB_ABORT;
}

mx_remote *mx_open_core(const char *core, const char *exe, int flags, char *err, size_t errlen)
{
	mx_remote *r = calloc(1, sizeof *r);
	if (!r)
		return fail(r, err, errlen, "out of memory");
	r->n_images = -1;
	r->flags = flags;
	elf_version(EV_CURRENT);
	if ((r->core_fd = open(core, O_RDONLY | O_CLOEXEC)) < 0)
		return fail(r, err, errlen, "%s: %m", core);
	if (!(r->core = elf_begin(r->core_fd, ELF_C_READ_MMAP, NULL)))
		return fail(r, err, errlen, "%s: %s", core, elf_errmsg(-1));
	if (!(r->dwfl = dwfl_begin(&core_callbacks)))
		return fail(r, err, errlen, "dwfl_begin: %s", dwfl_errmsg(-1));
	dwfl_report_begin(r->dwfl);
	int rc = dwfl_core_file_report(r->dwfl, r->core, exe);
	dwfl_report_end(r->dwfl, NULL, NULL);
	if (rc < 0)
		return fail(r, err, errlen, "dwfl_core_file_report: %s", dwfl_errmsg(-1));
	if ((flags & MX_JIT_IMAGES) && (r->n_images = report_images(r, read_core, r, err, errlen)) < 0)
		return fail(r, err, errlen, NULL);
	if (dwfl_core_file_attach(r->dwfl, r->core) < 0)
		return fail(r, err, errlen, "dwfl_core_file_attach: %s", dwfl_errmsg(-1));
	dwfl_getthreads(r->dwfl, first_thread, &r->pid);
	return r;
}

int mx_n_images(const mx_remote *r)
{
	return r->n_images;
}

/* ---- unwinding ------------------------------------------------------------------ */

struct collect {
	Dwfl *dwfl;
	mx_frame *frames;
	int n, max;
	int flags;
};

/* The source file numbered `index` in cu's line table, or "??". */
static const char *file_of(Dwarf_Die *cu, Dwarf_Word index)
{
	Dwarf_Files *files;
	size_t n;
	const char *name = NULL;
	if (dwarf_getsrcfiles(cu, &files, &n) == 0 && index < n)
		name = dwarf_filesrc(files, index, NULL, NULL);
	return name ? name : "??";
}

/* The functions inlined at `at` (libdw's scopes, as eu-stack -i walks
 * them), innermost first at their lines, into f->inlined, and the line of
 * the frame's own function into f->where. */
static void name_inlines(Dwfl_Module *m, Dwarf_Addr at, mx_frame *f)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(m, at, &bias);
	Dwfl_Line *l = dwfl_module_getsrc(m, at);
	int line = 0;
	const char *file = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
	if (!cu || !file)
		return;
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(cu, at - bias, &scopes);
	size_t len = 0;
	for (int s = 0; s < n && dwarf_tag(&scopes[s]) != DW_TAG_subprogram; s++) {
		if (dwarf_tag(&scopes[s]) != DW_TAG_inlined_subroutine)
			continue; /* a lexical block */
		const char *name = dwarf_diename(&scopes[s]);
		int w = snprintf(f->inlined + len, sizeof f->inlined - len, "%#lx %s at %s:%d inlined\n",
				 (unsigned long)f->pc, name ? name : "??", file, line);
		if (w < 0 || (size_t)w >= sizeof f->inlined - len)
			break;
		len += (size_t)w;
		/* the caller's position: this inline's call */
		Dwarf_Attribute a;
		Dwarf_Word call_file = 0, call_line = 0;
		dwarf_formudata(dwarf_attr(&scopes[s], DW_AT_call_file, &a), &call_file);
		dwarf_formudata(dwarf_attr(&scopes[s], DW_AT_call_line, &a), &call_line);
		file = file_of(cu, call_file);
		line = (int)call_line;
	}
	free(scopes);
	snprintf(f->where, sizeof f->where, " at %s:%d", file, line);
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct collect *c = arg;
	Dwarf_Addr pc;
	bool activation;
	if (c->n >= c->max || !dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	mx_frame *f = &c->frames[c->n++];
	f->pc = pc;
	f->name[0] = f->where[0] = f->inlined[0] = 0;
	/* a return address names the function of its call: look up pc - 1 */
	Dwarf_Addr at = activation ? pc : pc - 1;
	Dwfl_Module *m = dwfl_addrmodule(c->dwfl, at);
	const char *name = m ? dwfl_module_addrname(m, at) : NULL;
	if (name)
		snprintf(f->name, sizeof f->name, "%s", name);
	if (m && (c->flags & MX_INLINE))
		name_inlines(m, at, f);
	return DWARF_CB_OK;
}

int mx_unwind(mx_remote *r, pid_t tid, mx_frame *frames, int max, char *err, size_t errlen)
{
	struct collect c = { r->dwfl, frames, 0, max, r->flags };
	if (dwfl_getthread_frames(r->dwfl, tid ? tid : r->pid, frame_cb, &c) != 0 && c.n == 0) {
		snprintf(err, errlen, "dwfl_getthread_frames: %s", dwfl_errmsg(-1));
		return -1;
	}
	return c.n;
}

void mx_close(mx_remote *r)
{
	if (!r)
		return;
	if (r->dwfl)
		dwfl_end(r->dwfl);
	if (r->core)
		elf_end(r->core);
	if (r->core_fd >= 0)
		close(r->core_fd);
	free(r);
}
