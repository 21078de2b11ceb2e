/* SPDX-License-Identifier: MIT */
/* modules.c - native modules from maps text (see modules.h).  The core
 * notes are those the Linux kernel writes (fs/binfmt_elf.c): NT_FILE is
 * {count, page_size, count x {start, end, file_ofs in pages}, names}, and
 * NT_AUXV the auxiliary vector.
 */
#include "target/modules.h"
#include "base/bounds.h"
#include "base/maps.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_MAPS_TEXT ((size_t)64 << 20)
#define MAX_VDSO_SIZE ((size_t)1 << 20)

/* Does the maps line's mapping hold no file libdwfl could read?  Shared
 * anonymous memory (/dev/zero (deleted)), SysV shared memory (/SYSV...),
 * huge pages and AIO rings are in no file, and a memfd holds an ELF file
 * only if its first page starts like one (a JIT that dlopens a memfd).
 * PHP's opcache JIT keeps its code in shared memory: reported as modules,
 * those mappings would hide the JIT images of the code in them. */
static bool not_a_file(const char *line, size_t n, js_mem *mem)
{
	js_maps_line m;
	if (n && line[n - 1] == '\n')
		n--;
	if (!js_maps_parse(line, n, &m) || !m.path_len)
		return false;
	static const char *const none[] = { "/dev/zero ", "/SYSV", "/anon_hugepage ", "/[aio] " };
	for (size_t i = 0; i < sizeof none / sizeof *none; i++) {
		size_t k = strlen(none[i]);
		if (m.path_len >= k && !memcmp(m.path, none[i], k))
			return true;
	}
	if (m.path_len < 7 || memcmp(m.path, "/memfd:", 7))
		return false;
	uint8_t magic[SELFMAG];
	return m.off != 0 || !mem || js_mem_read(mem, m.lo, magic, sizeof magic) ||
	       memcmp(magic, ELFMAG, SELFMAG);
}

/* Remove the lines of mappings that are in no file, in place. */
static size_t drop_non_files(char *text, size_t len, js_mem *mem)
{
	size_t out = 0;
	for (size_t at = 0; at < len;) {
		char *nl = memchr(text + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (text + at)) + 1 : len - at;
		if (!not_a_file(text + at, n, mem)) {
			memmove(text + out, text + at, n);
			out += n;
		}
		at += n;
	}
	return out;
}

/* Feed maps text to libdwfl, less the mappings in no file (*len is
 * updated). */
static int report_text(Dwfl *dwfl, char *text, size_t *len, js_mem *mem, js_err *err)
{
	*len = drop_non_files(text, *len, mem);
	if (!*len)
		return 0;
	FILE *f = fmemopen(text, *len, "r");
	if (!f)
		return js_fail(err, JS_EXIT_FAILURE, errno, "cannot list the modules: %s", strerror(errno));
	int r = dwfl_linux_proc_maps_report(dwfl, f);
	fclose(f);
	return r ? js_fail(err, JS_EXIT_FAILURE, r, "cannot list the modules: %s", dwfl_errmsg(-1)) : 0;
}

static void report_vdso(Dwfl *dwfl, js_memelf *vdso)
{
	if (!vdso->lo || vdso->hi <= vdso->lo)
		return;
	Dwfl_Module *mod = dwfl_report_module(dwfl, "[vdso]", vdso->lo, vdso->hi);
	if (!mod)
		return;
	void **ud;
	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*ud = vdso;
}

static char *read_all(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		if (n == cap) {
			char *p = cap < MAX_MAPS_TEXT ? realloc(buf, cap * 2) : NULL;
			if (!p) {
				free(buf);
				buf = NULL;
				errno = ENOMEM;
				break;
			}
			buf = p;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			free(buf);
			buf = NULL;
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	int e = errno;
	close(fd);
	errno = e;
	*len = n;
	return buf;
}

int js_report_proc_maps(Dwfl *dwfl, pid_t pid, js_mem *mem, js_memelf *vdso, js_err *err)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	size_t len;
	char *text = read_all(path, &len);
	int e = text ? 0 : errno ? errno : EIO;
	if (e == ENOENT || (text && !len)) { /* an exited process has no maps, or empty ones */
		free(text);
		return js_fail(err, JS_EXIT_NO_PROCESS, ENOENT, "process %d exited", (int)pid);
	}
	if (e)
		return js_fail(err, JS_EXIT_FAILURE, e, "cannot list the modules: %s: %s", path, strerror(e));
	int r = report_text(dwfl, text, &len, mem, err);
	vdso->magic = JS_MEMELF_MAGIC;
	vdso->mem = mem;
	for (char *l = text; l < text + len;) {
		char *nl = memchr(l, '\n', (size_t)(text + len - l));
		size_t n = nl ? (size_t)(nl - l) : (size_t)(text + len - l);
		js_maps_line m;
		if (n > 7 && !memcmp(l + n - 6, "[vdso]", 6) && js_maps_parse(l, n, &m) &&
		    (!vdso->lo || vdso->lo == m.lo))
			vdso->lo = m.lo, vdso->hi = m.hi;
		l += n + 1;
	}
	free(text);
	if (!r)
		report_vdso(dwfl, vdso);
	return r;
}

/* ---- cores ---------------------------------------------------------------------- */

typedef struct notes {
	const uint8_t *file; /* NT_FILE descriptor */
	size_t file_size;
	uint64_t entry, sysinfo_ehdr; /* from NT_AUXV */
} notes;

static void read_notes(Elf *core, notes *n)
{
	size_t nph;
	memset(n, 0, sizeof *n);
	if (elf_getphdrnum(core, &nph))
		return;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(core, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(core, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;
		while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			const uint8_t *desc = (const uint8_t *)d->d_buf + desc_off;
			if (nh.n_type == NT_FILE) {
				n->file = desc;
				n->file_size = nh.n_descsz;
			} else if (nh.n_type == NT_AUXV) {
				for (size_t k = 0; k + 16 <= nh.n_descsz; k += 16) {
					uint64_t type, val;
					memcpy(&type, desc + k, 8);
					memcpy(&val, desc + k + 8, 8);
					if (type == AT_ENTRY)
						n->entry = val;
					else if (type == AT_SYSINFO_EHDR)
						n->sysinfo_ehdr = val;
				}
			}
		}
	}
}

/* The vDSO's extent: the core segment holding AT_SYSINFO_EHDR. */
static void core_vdso(Elf *core, uint64_t at, js_memelf *vdso)
{
	size_t nph;
	if (!at || elf_getphdrnum(core, &nph))
		return;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(core, (int)i, &ph) && ph.p_type == PT_LOAD && at >= ph.p_vaddr &&
		    at - ph.p_vaddr < ph.p_memsz) {
			vdso->lo = at;
			vdso->hi = ph.p_vaddr + ph.p_memsz;
			return;
		}
	}
}

static uint64_t name_id(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h ? h : 1;
}

int js_report_core_files(Dwfl *dwfl, Elf *core, const char *exe, js_mem *mem, js_memelf *vdso)
{
	notes n;
	read_notes(core, &n);
	vdso->magic = JS_MEMELF_MAGIC;
	vdso->mem = mem;
	core_vdso(core, n.sysinfo_ehdr, vdso);
	if (!n.file || n.file_size < 16)
		return -1;
	uint64_t count, page;
	memcpy(&count, n.file, 8);
	memcpy(&page, n.file + 8, 8);
	if (count > (n.file_size - 16) / 24)
		return -1;
	const uint8_t *ranges = n.file + 16;
	const char *name = (const char *)ranges + count * 24, *end = (const char *)n.file + n.file_size;
	/* the executable: the file whose mapping holds the entry point */
	const char *exe_name = NULL;
	const char *p = name;
	for (uint64_t i = 0; i < count && p < end; i++) {
		uint64_t r[3];
		memcpy(r, ranges + i * 24, 24);
		if (n.entry >= r[0] && n.entry < r[1])
			exe_name = p;
		const char *nul = memchr(p, 0, (size_t)(end - p));
		p = nul ? nul + 1 : end;
	}
	size_t cap = count * 64 + 1, len = 0;
	for (p = name; p < end; p++)
		cap++;
	char *text = malloc(cap + count * 4096);
	if (!text)
		return -1;
	cap += count * 4096;
	p = name;
	for (uint64_t i = 0; i < count && p < end; i++) {
		uint64_t r[3];
		memcpy(r, ranges + i * 24, 24);
		const char *nul = memchr(p, 0, (size_t)(end - p));
		if (!nul)
			break;
		const char *file = exe && exe_name && !strcmp(p, exe_name) ? exe : p;
		int w = snprintf(text + len, cap - len,
				 "%" PRIx64 "-%" PRIx64 " r-xp %08" PRIx64 " 00:00 %" PRIu64 " %s\n", r[0],
				 r[1], r[2] * page, name_id(file), file);
		if (w < 0 || (size_t)w >= cap - len)
			break;
		len += (size_t)w;
		p = nul + 1;
	}
	int rc = report_text(dwfl, text, &len, mem, NULL); /* a failure: the caller falls back */
	free(text);
	report_vdso(dwfl, vdso);
	return rc ? -1 : 0;
}

bool js_core_find_file(Elf *core, bool (*want)(const char *path), char *out, size_t len)
{
	notes n;
	read_notes(core, &n);
	if (!n.file || n.file_size < 16)
		return false;
	uint64_t count;
	memcpy(&count, n.file, 8);
	if (count > (n.file_size - 16) / 24)
		return false;
	const char *p = (const char *)n.file + 16 + count * 24, *end = (const char *)n.file + n.file_size;
	bool found = false;
	for (uint64_t i = 0; i < count && p < end; i++) {
		const char *nul = memchr(p, 0, (size_t)(end - p));
		if (!nul)
			break;
		if (want(p)) {
			snprintf(out, len, "%s", p);
			found = true; /* the last one: the newest mapping */
		}
		p = nul + 1;
	}
	return found;
}

/* ---- memory ELF ----------------------------------------------------------------- */

bool js_memelf_find_elf(void **userdata, Elf **elfp)
{
	js_memelf *m = *userdata;
	if (!m || m->magic != JS_MEMELF_MAGIC)
		return false;
	*elfp = NULL;
	if (!m->tried) {
		m->tried = true;
		size_t size = m->hi - m->lo;
		if (size && size <= MAX_VDSO_SIZE && (m->bytes = malloc(size)) &&
		    js_mem_read(m->mem, m->lo, m->bytes, size) == 0) {
			m->size = size;
		} else {
			free(m->bytes);
			m->bytes = NULL;
		}
	}
	if (m->bytes)
		*elfp = elf_memory((char *)m->bytes, m->size);
	return true;
}

void js_memelf_free(js_memelf *m)
{
	free(m->bytes);
	memset(m, 0, sizeof *m);
}
