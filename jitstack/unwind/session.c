/* SPDX-License-Identifier: MIT */
/* session.c - opening a target for unwinding (see session.h).
 *
 * libdwfl does the unwinding.  For a core it reads threads and memory
 * itself (dwfl_core_file_attach).  For a live process we give it our own
 * thread callbacks instead of dwfl_linux_proc_attach: that one attaches and
 * detaches every thread for every unwind and reads memory through its own
 * cache; ours use the registers captured when we stopped the thread and
 * our page cache, which a record session keeps across samples.
 */
#include "formats/clock.h"
#include "unwind/session.h"
#include "unwind/demangle.h"
#include "unwind/stack.h"
#include "target/machine.h"
#include "base/bounds.h"
#include "base/grow.h"

#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void js_warn(js_session *s, const char *fmt, ...)
{
	if (s->n_warn >= 1000)
		return;
	char buf[600] = "";
	va_list ap;
	va_start(ap, fmt);
	js_vnote(buf, sizeof buf, fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < s->n_warn; i++)
		if (!strcmp(s->warn[i], buf))
			return;
	char **w = realloc(s->warn, (s->n_warn + 1) * sizeof *w);
	if (!w)
		return;
	s->warn = w;
	if ((w[s->n_warn] = strdup(buf)))
		s->n_warn++;
}

void js_warn_jit_data(js_session *s)
{
	for (size_t i = 0; i < s->jit.n_desc; i++)
		if (s->jit.desc[i].note[0])
			js_warn(s, "JIT descriptor %#" PRIx64 ": %s", s->jit.desc[i].addr,
				s->jit.desc[i].note);
	enum { SHOWN = 5 }; /* a hostile list can hold a million bad entries */
	size_t rejected = 0, not_elf = 0, no_code = 0;
	for (size_t i = 0; i < s->jit.n_img; i++) {
		const js_image *im = s->jit.img[i];
		if (js_image_usable(im))
			continue;
		/* not failures of ours: another format (Erlang's BEAM JIT writes
		 * its own), or data for code in other images (ORC's lazy JIT) */
		if (!im->superseded && (im->out.not_elf || im->out.no_code)) {
			not_elf += im->out.not_elf;
			no_code += im->out.no_code;
			continue;
		}
		if (rejected++ >= SHOWN)
			continue;
		const char *then = im->superseded ? "" : "; frames in its code are found by frame pointers";
		js_warn(s, "JIT image %#" PRIx64 " (entry %#" PRIx64 ") %s: %s%s", im->symfile_addr,
			im->entry, im->superseded ? "not used" : "rejected", im->out.why.msg, then);
	}
	if (rejected > SHOWN)
		js_warn(s, "%zu more JIT images rejected (--images lists them)", rejected - SHOWN);
	if (not_elf)
		js_warn(s,
			"%zu JIT entries hold symbol files that are not ELF (a JIT's own format): not read",
			not_elf);
	if (no_code)
		js_warn(s, "%zu JIT image%s no code (data or debug information for other images)", no_code,
			no_code == 1 ? " holds" : "s hold");
	if (s->jit.empty)
		js_warn(s, "%lu JIT entries have no image", s->jit.empty);
	if (s->jit.over_limit)
		js_warn(s, "%lu JIT entries beyond the first %u were not read", s->jit.over_limit,
			JS_MAX_IMAGES);
	if (s->pm.bad)
		js_warn(s, "perf map %s: %lu malformed lines skipped", s->pm.path, s->pm.bad);
	if (s->pm.over_limit)
		js_warn(s, "perf map %s: %lu lines beyond the first %u were not read", s->pm.path,
			s->pm.over_limit, JS_MAX_PERFMAP_LINES);
	if (s->jd_on && s->jd.ended)
		js_warn(s, "jitdump %s is not read further, %s", s->jd.path, s->jd.why);
	if (s->jd.bad)
		js_warn(s, "jitdump %s: %lu malformed records skipped", s->jd.path, s->jd.bad);
	/* a core's dump is whole; a live writer's last record may still be
	 * on its way (stdio writes a record in pieces), and is read then */
	if (s->core && s->jd_on && s->jd.cut)
		js_warn(s, "jitdump %s: %s", s->jd.path, s->jd.cut_what);
	if (s->jd.over_limit)
		js_warn(s, "jitdump %s: %lu records over jitstack's bounds skipped", s->jd.path,
			s->jd.over_limit);
}

void js_print_warnings(const js_session *s, const char *who)
{
	for (size_t i = 0; i < s->n_warn; i++)
		fprintf(stderr, "jitstack: warning: %s%s\n", who, s->warn[i]);
}

/* ---- libdwfl callbacks ---------------------------------------------------------- */

/* Our modules come from memory (JIT images, the vDSO); files are opened
 * by the path maps or NT_FILE gave. */
static int find_elf(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr base, char **file, Elf **elfp)
{
	if (js_jit_find_elf(ud, elfp) || js_memelf_find_elf(ud, elfp))
		return -1;
	return dwfl_linux_proc_find_elf(mod, ud, name, base, file, elfp);
}

/* --debuginfo-path (NULL: libdwfl's default, ":.debug:/usr/lib/debug").
 * libdwfl keeps a pointer to it in the callbacks, for the whole run. */
static char *debuginfo_path;
/* Without -s, separate debuginfo only from this machine's files (the
 * descriptor is looked for in every stripped module's). */
static bool local_debuginfo_only;

/* Is there a file named `debuglink` where dwfl_standard_find_debuginfo
 * looks for it: for each entry of the debuginfo path (a leading + or -
 * is its CRC flag), an empty one the file's directory, a relative one
 * under it, an absolute one a root above it? */
static bool debuglink_exists(const char *file, const char *debuglink)
{
	if (!file || !debuglink || !debuglink[0])
		return false;
	const char *slash = strrchr(file, '/');
	const char *dir = slash ? file : ".";
	int dlen = slash ? (int)(slash - file) : 1;
	char buf[PATH_MAX];
	for (const char *p = debuginfo_path ? debuginfo_path : ":.debug:/usr/lib/debug";; p++) {
		const char *end = strchrnul(p, ':');
		if (*p == '+' || *p == '-')
			p++;
		int elen = end > p ? (int)(end - p) : 0, n;
		if (!elen)
			n = snprintf(buf, sizeof buf, "%.*s/%s", dlen, dir, debuglink);
		else if (*p == '/')
			n = snprintf(buf, sizeof buf, "%.*s%.*s/%s", elen, p, dlen, dir, debuglink);
		else
			n = snprintf(buf, sizeof buf, "%.*s/%.*s/%s", dlen, dir, elen, p, debuglink);
		if (n > 0 && (size_t)n < sizeof buf && access(buf, R_OK) == 0)
			return true;
		if (!*end)
			return false;
		p = end;
	}
}

/* A JIT image carries its own DWARF; never look for a separate file.
 * Without -s, or without DEBUGINFOD_URLS, a module's debug file is taken
 * only from this machine: dwfl_standard_find_debuginfo (libdw 0.188) falls
 * back on debuginfod, whose first use loads libdebuginfod, libcurl and a
 * TLS library (several milliseconds, more than a whole dump, whatever
 * DEBUGINFOD_URLS says) and may ask servers, for every stripped module. */
static int find_debuginfo(Dwfl_Module *mod, void **ud, const char *modname, Dwarf_Addr base, const char *file,
			  const char *debuglink, GElf_Word crc, char **debugfile)
{
	if (js_jit_of(*ud))
		return -1;
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (local_debuginfo_only || !urls || !*urls) {
		int fd =
			dwfl_build_id_find_debuginfo(mod, ud, modname, base, file, debuglink, crc, debugfile);
		if (fd >= 0 || !debuglink_exists(file, debuglink))
			return fd;
	}
	return dwfl_standard_find_debuginfo(mod, ud, modname, base, file, debuglink, crc, debugfile);
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

/* Each thread is unwound alone (js_unwind): none is listed to libdwfl. */
static pid_t cb_next_thread(Dwfl *dwfl, void *arg, void **targ)
{
	(void)dwfl, (void)arg, (void)targ;
	return 0;
}

/* The thread of the unwind in flight, and its registers and memory. */
static bool cb_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **targ)
{
	(void)dwfl, (void)tid;
	js_session *s = arg;
	*targ = s->unwinding;
	return s->unwinding != NULL;
}

static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	(void)dwfl;
	js_session *s = arg;
	return s->unwinding ? js_unwinding_word(s->unwinding, addr, result)
			    : js_mem_word(s->mem, addr, result);
}

/* Registers in DWARF numbering (x86-64 psABI, "DWARF Register Number
 * Mapping"): rax rdx rcx rbx rsi rdi rbp rsp r8-r15, then 16 = the return
 * address column, which holds the pc of the innermost frame. */
static bool cb_set_initial_registers(Dwfl_Thread *thread, void *targ)
{
#if defined(__x86_64__)
	const struct user_regs_struct *r = js_unwinding_regs(targ);
	Dwarf_Word d[17] = { r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi, r->rbp, r->rsp, r->r8,
			     r->r9,  r->r10, r->r11, r->r12, r->r13, r->r14, r->r15, r->rip };
	return dwfl_thread_state_registers(thread, 0, 17, d);
#elif defined(__aarch64__)
	/* AArch64 ("DWARF for the Arm 64-bit Architecture"): x0-x30 are 0-30,
	 * sp 31; the pc has no column of its own and is set apart. */
	const struct user_regs_struct *r = js_unwinding_regs(targ);
	Dwarf_Word d[32];
	for (int i = 0; i < 31; i++)
		d[i] = r->regs[i];
	d[31] = r->sp;
	if (!dwfl_thread_state_registers(thread, 0, 32, d))
		return false;
	dwfl_thread_state_register_pc(thread, r->pc);
	return true;
#else
	(void)thread, (void)targ;
	return false;
#endif
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = cb_next_thread,
	.get_thread = cb_get_thread,
	.memory_read = cb_memory_read,
	.set_initial_registers = cb_set_initial_registers,
};

/* ---- common -------------------------------------------------------------------- */

static int check_arch(js_session *s, Elf *elf, const char *what)
{
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh))
		return js_fail(&s->err, JS_EXIT_BAD_CORE, 0, "%s: not an ELF file", what);
	char buf[32], hbuf[32];
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || !js_arch_for(eh.e_machine))
		return js_fail(&s->err, JS_EXIT_ARCH, 0,
			       "%s is for %s%s; jitstack unwinds x86-64 and AArch64 (64-bit) programs", what,
			       js_machine_name(eh.e_machine, buf, sizeof buf),
			       eh.e_ident[EI_CLASS] == ELFCLASS32 ? " (32-bit)" : "");
	/* Cores of either machine are read anywhere; a live thread's registers
	 * come from ptrace in the host's own layout. */
	if (!s->core && eh.e_machine != js_host_machine())
		return js_fail(&s->err, JS_EXIT_ARCH, 0,
			       "%s is for %s: live processes are unwound on x86-64 and "
			       "AArch64 hosts, of programs of the host's own machine (this host: %s)",
			       what, js_machine_name(eh.e_machine, buf, sizeof buf),
			       js_machine_name(js_host_machine(), hbuf, sizeof hbuf));
	s->machine = eh.e_machine;
	return 0;
}

static int read_jit_descriptors(js_session *s)
{
	js_jit_init(&s->jit, s->machine);
	s->jit.lazy = !s->opt->all_images;
	if (!s->opt->no_jit)
		js_jit_find_descriptors(&s->jit, s->dwfl);
	return 0;
}

/* A core's files: from its NT_FILE note, as the kernel writes it.  A core
 * without one (qemu-user's, some dumpers') is read as eu-stack reads it:
 * libdwfl follows the dynamic linker's list in the core's memory from the
 * executable (--exe).  Returns the number of modules, or -1. */
static int report_core_native(js_session *s)
{
	if (js_report_core_files(s->dwfl, s->core_elf, s->core_exe, s->mem, &s->vdso) == 0)
		return 1;
	return dwfl_core_file_report(s->dwfl, s->core_elf, s->core_exe);
}

/* Report the native modules (from /proc/PID/maps or the core's notes). */
static int report_native(js_session *s)
{
	if (s->core && report_core_native(s) <= 0)
		return js_fail(&s->err, JS_EXIT_FAILURE, 0, "cannot list the modules: %s", dwfl_errmsg(-1));
	if (s->core)
		return 0;
	return js_report_proc_maps(s->dwfl, s->pid, s->mem, &s->vdso, &s->err);
}

int js_refresh_modules(js_session *s)
{
	dwfl_report_begin(s->dwfl);
	int rc = report_native(s);
	js_sources_report(s->src, s->n_src, s->dwfl);
	dwfl_report_end(s->dwfl, NULL, NULL);
	/* modules not reported again are gone, and their memory may hold
	 * new ones later */
	js_symindex_prune(&s->syms, s->dwfl);
	s->n_memo = 0;
	js_sources_reap(s->src, s->n_src);
	return rc;
}

/* Report the images added since the last report, keeping every module
 * as it is, unless a new image took an old one's place (then the old
 * module must go: everything is reported again). */
static int report_added(js_session *s)
{
	dwfl_report_begin_add(s->dwfl);
	bool lost = js_sources_report(s->src, s->n_src, s->dwfl);
	dwfl_report_end(s->dwfl, NULL, NULL);
	return lost ? js_refresh_modules(s) : 0;
}

int js_refresh_jit(js_session *s, read_mode mode)
{
	if (!s->jit.n_desc)
		return 0;
	uint64_t before = s->jit.changes;
	js_err why = { 0 };
	int rc = js_jit_refresh(&s->jit, s->mem, mode, &why);
	if (rc == JS_EXIT_NO_PROCESS)
		return js_fail(&s->err, rc, why.errnum, "process %d exited while its JIT descriptor was read",
			       (int)s->pid);
	if (rc) /* the run goes on without the JIT's help */
		js_warn(s, "cannot read the JIT descriptor: %s; JIT frames are unwound by frame pointers",
			why.msg);
	if (rc || s->jit.changes == before)
		return 0;
	return s->jit.n_dead ? js_refresh_modules(s) : report_added(s);
}

size_t js_load_jit_for(js_session *s, const uint64_t *pcs, size_t n)
{
	size_t added = 0;
	for (size_t i = 0; i < n && s->jit.n_defer_left; i++) {
		int k = js_jit_load_at(&s->jit, s->mem, pcs[i]);
		if (k < 0) {
			js_warn(s,
				"out of memory copying a JIT image: its frames are found by frame pointers");
			break;
		}
		added += (size_t)k;
	}
	if (added)
		report_added(s);
	return added;
}

int js_refresh_jit_stopped(js_session *s)
{
	if (!s->proc.list_only) {
		js_proc_stop_all(&s->proc);
		int rc = js_refresh_jit(s, READ_STOPPED);
		js_proc_resume_all(&s->proc);
		return rc;
	}
	js_err why = { 0 };
	if (js_proc_seize(&s->proc, &why)) {
		js_proc_detach(&s->proc);
		js_warn(s, "cannot stop the process to read its JIT list: %s", why.msg);
		return 0;
	}
	js_proc_stop_all(&s->proc);
	int rc = js_refresh_jit(s, READ_STOPPED);
	js_proc_detach(&s->proc); /* resumes them */
	return rc;
}

/* ---- the list of sources ------------------------------------------------------------ */

static void warn_msg(void *arg, const char *msg)
{
	js_warn(arg, "%s", msg);
}

/* The target as the sources see it. */
static js_source_target source_target(js_session *s)
{
	return (js_source_target){ .pid = s->pid,
				   .core = s->core,
				   .core_fd = s->core_fd,
				   .core_elf = s->core_elf,
				   .machine = s->machine,
				   .once = s->opt->for_stacks,
				   .dwfl = s->dwfl,
				   .mem = s->mem,
				   .warn = warn_msg,
				   .warn_arg = s };
}

void js_walk_sources(js_session *s, bool running, pid_t tid)
{
	const js_source_target t = source_target(s);
	js_sources_walk(s->src, s->n_src, running, tid, &t);
}

/* The sources look for their files (js_source_ops.open): every one, or
 * (again) only those of a live process that found none and were named
 * none, at most once a second (a JIT that starts writing late). */
static void open_sources(js_session *s, bool again)
{
	const js_source_target t = source_target(s);
	for (size_t i = 0; i < s->n_src; i++) {
		js_source *src = &s->src[i];
		if (!src->ops->open || src->off)
			continue;
		if (again &&
		    (s->core || src->path || js_source_on(src) || now_ns() - src->looked_ns < 1000000000u))
			continue;
		src->looked_ns = now_ns();
		src->ops->open(src, &t);
	}
}

bool js_refresh_sources(js_session *s)
{
	open_sources(s, true);
	bool changed = false;
	for (size_t i = 0; i < s->n_src; i++) {
		js_source *src = &s->src[i];
		if (!src->ops->refresh || !js_source_on(src))
			continue;
		uint64_t t0 = now_ns();
		js_err why = { 0 };
		js_source_report report = JS_SOURCE_REPORT_NONE;
		int rc = src->ops->refresh(src, &report, &why);
		src->ns += now_ns() - t0;
		/* none is the usual case (a JIT that writes none) unless one was named */
		if (rc < 0 && (why.errnum != ENOENT || src->path))
			js_warn(s, "%s %s; JIT frames are not named from it", src->ops->name, why.msg);
		if (rc <= 0)
			continue;
		changed = true;
		if (!s->dwfl || report == JS_SOURCE_REPORT_NONE)
			continue;
		if (report == JS_SOURCE_REPORT_ALL) {
			js_refresh_modules(s);
			continue;
		}
		dwfl_report_begin_add(s->dwfl);
		bool lost = src->ops->report(src, s->dwfl, s->src, i);
		dwfl_report_end(s->dwfl, NULL, NULL);
		if (lost)
			js_refresh_modules(s);
	}
	return changed;
}

/* The GDB images first: the jitdump's loads give way to them, and the
 * perf map's and jitdump's --stats lines come in this order. */
static void list_sources(js_session *s)
{
	const js_source rows[] = {
		{ .ops = &js_source_gdb, .r = &s->jit },
		{ .ops = &js_source_perfmap,
		  .r = &s->pm,
		  .on = &s->pm_on,
		  .path = s->opt->perf_map,
		  .off = s->opt->no_perf_map },
		{ .ops = &js_source_jitdump,
		  .r = &s->jd,
		  .on = &s->jd_on,
		  .path = s->opt->jitdump,
		  .off = s->opt->no_jitdump },
		{ .ops = &js_source_python, .off = s->opt->no_python },
	};
	_Static_assert(sizeof rows / sizeof rows[0] <= JS_MAX_SOURCES, "room for every source");
	memcpy(s->src, rows, sizeof rows);
	s->n_src = sizeof rows / sizeof rows[0];
}

/* ---- live ------------------------------------------------------------------------ */

static int open_exe_live(js_session *s)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/exe", (int)s->pid);
	ssize_t n = readlink(path, s->exe_path, sizeof s->exe_path - 1);
	s->exe_path[n > 0 ? n : 0] = 0;
	s->exe_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s->exe_fd < 0) {
		if (errno == EACCES || errno == EPERM)
			return js_fail(&s->err, JS_EXIT_PERMISSION, errno,
				       "not allowed to read process %d's executable "
				       "(run as its user or as root)",
				       (int)s->pid);
		if (errno == EMFILE || errno == ENFILE)
			return js_fail(&s->err, JS_EXIT_FAILURE, errno,
				       "cannot open process %d's executable: %s (ulimit -n)", (int)s->pid,
				       strerror(errno));
		if (errno == ENOENT && !kill(s->pid, 0))
			return js_fail(&s->err, JS_EXIT_FAILURE, ENOENT,
				       "process %d has no executable (a kernel thread?)", (int)s->pid);
		return js_fail(&s->err, JS_EXIT_NO_PROCESS, ESRCH, "process %d exited", (int)s->pid);
	}
	s->exe_elf = elf_begin(s->exe_fd, ELF_C_READ_MMAP, NULL);
	if (!s->exe_elf)
		return js_fail(&s->err, JS_EXIT_FAILURE, 0, "%s: %s", s->exe_path, elf_errmsg(-1));
	char what[4200];
	snprintf(what, sizeof what, "process %d (%s)", (int)s->pid, s->exe_path);
	return check_arch(s, s->exe_elf, what);
}

int js_open_live(js_session *s, pid_t pid, const js_opts *opt)
{
	memset(s, 0, sizeof *s);
	s->opt = opt;
	list_sources(s);
	s->exe_fd = s->core_fd = -1;
	elf_version(EV_CURRENT);
	pid_t tgid;
	int rc = js_proc_tgid(pid, &tgid, &s->err);
	if (rc)
		return rc;
	if (tgid != pid)
		js_warn(s, "%d is a thread of process %d: showing the whole process", (int)pid, (int)tgid);
	s->pid = tgid;
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/comm", (int)tgid);
	FILE *f = fopen(path, "re");
	if (f) {
		if (fgets(s->comm, sizeof s->comm, f))
			s->comm[strcspn(s->comm, "\n")] = 0;
		fclose(f);
	}
	if ((rc = open_exe_live(s)))
		return rc;
	rc = opt->no_ptrace ? js_proc_list(&s->proc, tgid, &s->err) : js_proc_attach(&s->proc, tgid, &s->err);
	if (rc)
		return rc;
	s->mem = js_mem_live(tgid);
	debuginfo_path = (char *)opt->debuginfo_path;
	local_debuginfo_only = !opt->source_all;
	s->dwfl = dwfl_begin(&callbacks);
	if (!s->mem || !s->dwfl)
		return js_fail(&s->err, JS_EXIT_FAILURE, ENOMEM, "out of memory");
	if ((rc = js_refresh_modules(s)))
		return rc;
	if (!dwfl_attach_state(s->dwfl, s->exe_elf, tgid, &thread_callbacks, s))
		return js_fail(&s->err, JS_EXIT_FAILURE, 0, "libdwfl: %s", dwfl_errmsg(-1));
	open_sources(s, false);
	return read_jit_descriptors(s);
}

/* ---- core ----------------------------------------------------------------------- */

/* The command name from NT_PRPSINFO (struct elf_prpsinfo: pr_fname). */
static void core_comm(js_session *s)
{
	size_t nph;
	if (elf_getphdrnum(s->core_elf, &nph))
		return;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(s->core_elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(s->core_elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;
		while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			enum { PR_FNAME = 40, PR_FNAME_LEN = 16 }; /* x86-64 elf_prpsinfo */
			if (nh.n_type == NT_PRPSINFO && nh.n_descsz >= PR_FNAME + PR_FNAME_LEN) {
				memcpy(s->comm, (char *)d->d_buf + desc_off + PR_FNAME, PR_FNAME_LEN);
				s->comm[PR_FNAME_LEN] = 0;
				return;
			}
		}
	}
}

/* The core's loadable segments against its size: gdb warns of a segment
 * "extending past end of file".  A core cut right after its notes (a
 * crash handler that ran out of disk) still gives each thread's
 * registers, but no memory to unwind with: that core counts as
 * unreadable.  Returns 0, or a js_exit code. */
static int check_truncation(js_session *s, const char *core)
{
	struct stat st;
	size_t n;
	if (fstat(s->core_fd, &st) || elf_getphdrnum(s->core_elf, &n))
		return 0; /* libdwfl says what it can of a core this far gone */
	size_t loads = 0, cut = 0;
	uint64_t need = 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(s->core_elf, (int)i, &ph) || ph.p_type != PT_LOAD || !ph.p_filesz)
			continue;
		loads++;
		uint64_t end = ph.p_offset + ph.p_filesz;
		if (end < ph.p_offset || end > (uint64_t)st.st_size) {
			cut++;
			need = end > need ? end : need;
		}
	}
	if (loads && cut == loads)
		return js_fail(&s->err, JS_EXIT_BAD_CORE, 0,
			       "%s is truncated: %jd bytes, and none of its %zu memory segments is in them",
			       core, (intmax_t)st.st_size, loads);
	if (cut)
		js_warn(s,
			"the core is truncated: %zu of its %zu memory segments extend past its end (%jd bytes, "
			"%" PRIu64 " needed); stacks in them cannot be read",
			cut, loads, (intmax_t)st.st_size, need);
	return 0;
}

int js_open_core(js_session *s, const char *core, const char *exe, const js_opts *opt)
{
	memset(s, 0, sizeof *s);
	s->opt = opt;
	list_sources(s);
	s->core = true;
	s->exe_fd = s->core_fd = -1;
	elf_version(EV_CURRENT);
	/* O_NONBLOCK: a FIFO given for a core must not block us in open() */
	s->core_fd = open(core, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (s->core_fd < 0)
		return js_fail(&s->err,
			       errno == EACCES || errno == EPERM ? JS_EXIT_PERMISSION : JS_EXIT_BAD_CORE,
			       errno, "cannot open %s: %s", core, strerror(errno));
	struct stat st;
	if (fstat(s->core_fd, &st) || !S_ISREG(st.st_mode))
		return js_fail(&s->err, JS_EXIT_BAD_CORE, 0, "%s is not a core file (not a regular file)",
			       core);
	s->core_elf = elf_begin(s->core_fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	if (!s->core_elf || elf_kind(s->core_elf) != ELF_K_ELF || !gelf_getehdr(s->core_elf, &eh))
		return js_fail(&s->err, JS_EXIT_BAD_CORE, 0, "%s is not a core file (not ELF)", core);
	if (eh.e_type != ET_CORE)
		return js_fail(&s->err, JS_EXIT_BAD_CORE, 0, "%s is an ELF %s, not a core file", core,
			       eh.e_type == ET_EXEC  ? "executable"
			       : eh.e_type == ET_DYN ? "shared object"
			       : eh.e_type == ET_REL ? "object file"
						     : "file");
	char what[4200];
	snprintf(what, sizeof what, "core %s", core);
	int rc = check_arch(s, s->core_elf, what);
	if (rc || (rc = check_truncation(s, core)))
		return rc;
	/* maps text names files by absolute path (libdwfl skips others) */
	char exe_abs[PATH_MAX];
	if (exe && (access(exe, R_OK) || !realpath(exe, exe_abs)))
		return js_fail(&s->err, errno == EACCES ? JS_EXIT_PERMISSION : JS_EXIT_USAGE, errno,
			       "--exe %s: %s", exe, strerror(errno));
	if (exe && (stat(exe_abs, &st) || !S_ISREG(st.st_mode))) /* libdwfl would block on a FIFO */
		return js_fail(&s->err, JS_EXIT_USAGE, 0, "--exe %s: not a regular file", exe);
	if (exe)
		exe = exe_abs;
	snprintf(s->exe_path, sizeof s->exe_path, "%s", exe ? exe : "");
	core_comm(s);
	debuginfo_path = (char *)opt->debuginfo_path;
	local_debuginfo_only = !opt->source_all;
	s->dwfl = dwfl_begin(&callbacks);
	s->mem = js_mem_core(s->core_elf);
	if (!s->dwfl || !s->mem)
		return js_fail(&s->err, s->dwfl ? JS_EXIT_BAD_CORE : JS_EXIT_FAILURE, 0,
			       "%s: cannot read its segments", core);
	dwfl_report_begin(s->dwfl);
	s->core_exe = exe ? s->exe_path : NULL;
	int n = report_core_native(s);
	dwfl_report_end(s->dwfl, NULL, NULL);
	if (n <= 0)
		js_warn(s,
			"the core has no NT_FILE note and its modules cannot be found%s: frames are found by "
			"frame pointers",
			exe ? "" : " without --exe");
	s->pid = dwfl_core_file_attach(s->dwfl, s->core_elf);
	if (s->pid < 0) {
		const char *why = dwfl_errmsg(-1);
		return js_fail(&s->err, JS_EXIT_BAD_CORE, 0,
			       "%s: no thread state in it (a truncated core?)%s%s", core, why ? ": " : "",
			       why ? why : "");
	}
	read_jit_descriptors(s);
	open_sources(s, false);
	if (!opt->for_stacks) { /* a dump reads them for its stacks */
		js_refresh_sources(s);
	}
	return js_refresh_jit(s, READ_CORE);
}

void js_close(js_session *s)
{
	if (!s->core && s->proc.n)
		js_proc_detach(&s->proc);
	if (s->dwfl)
		dwfl_end(s->dwfl); /* before the images its modules point into */
	js_sources_free(s->src, s->n_src);
	js_memelf_free(&s->vdso);
	js_proc_free(&s->proc);
	js_mem_free(s->mem);
	if (s->exe_elf)
		elf_end(s->exe_elf);
	if (s->core_elf)
		elf_end(s->core_elf);
	if (s->exe_fd >= 0)
		close(s->exe_fd);
	if (s->core_fd >= 0)
		close(s->core_fd);
	for (size_t i = 0; i < s->n_warn; i++)
		free(s->warn[i]);
	free(s->warn);
	free(s->memo);
	js_symindex_free(&s->syms);
	free(s->names);
	js_htab_free(&s->names_index);
	js_strs_free(&s->inl_kept);
	js_strs_free(&s->inl_scratch);
	js_htab_free(&s->unit_depth);
	js_demangle_free(s);
	memset(s, 0, sizeof *s);
}
