/* SPDX-License-Identifier: MIT */
/* ch_jitdump.c - channel for perf's jitdump, jit-<pid>.dump: the code bytes,
 * names, line tables and unwind tables `perf inject --jit` turns into one ELF
 * file per blob (jitted-<pid>-<n>.so), so that perf report/script can name
 * JIT frames and -- the point -- unwind through them with `--call-graph
 * dwarf`, which otherwise stops at anonymous code.  Format and the layout of
 * perf's synthesized ELF: formats/jitdump.h.
 *
 * Per blob, in address order within a batch: DEBUG_INFO (when it has lines),
 * UNWINDING_INFO, CODE_LOAD; CLOSE when the last context closes.  What perf
 * needs, learnt from its sources (tools/perf/util/jitdump.c, genelf.c,
 * unwind-libunwind-local.c) and checked with perf 6.1 (tests/t-perf-*.sh):
 *
 *   - perf finds the file through an executable mapping of it: we map its
 *     first page PROT_READ|PROT_EXEC and keep it until the file is closed.
 *   - Timestamps are CLOCK_MONOTONIC; perf refuses the dump unless the
 *     recording used the same clock (`perf record -k 1`).
 *   - The unwind tables must be right at the addresses genelf gives the
 *     sections (.text at 0x80, .eh_frame at the next multiple of 8 after the
 *     code, .eh_frame_hdr right after it): we write the blob's FDEs with
 *     pc-relative pointers for exactly that layout.
 *   - Each CODE_LOAD becomes a mapping [code_addr, code_addr + length) of its
 *     ELF file, where the length covers the unwind tables too when
 *     mapped_size is not 0 (perf's libunwind glue reads them through that
 *     mapping).  A newer mapping that overlaps an older one cuts the older
 *     one, so a mapping reaching into a neighbour published earlier would
 *     steal the neighbour's first bytes.  We therefore never let a mapping
 *     reach the next published blob: the unwind tables are mapped only if
 *     the gap after the blob has room for them (JITs that want perf's DWARF
 *     unwinding through every blob leave the room ju_room_after reports:
 *     the salt and the tables, each rounded up to 8; a blob published with
 *     too little is logged once per context), and blobs of a batch are
 *     logged in address order so later mappings only trim earlier ones'
 *     tails.
 *   - perf names each synthesized ELF by a build-id; built with libcrypto it
 *     is the MD5 of load address and code, so identical code at the same
 *     address in two processes (two runs of a deterministic JIT) gets the
 *     same build-id, and perf's build-id cache then shows the first run's
 *     names.  We append 8 salt bytes (per process and per load) to the dumped
 *     code, when the gap after the blob has room for them: the synthesized
 *     symbol and mapping then cover 8 bytes past the blob, never executed.
 *     (Debian's perf 6.1 is built without libcrypto and uses random
 *     build-ids; the salt costs it nothing.)
 *   - DEBUG_INFO rows carry absolute code addresses; perf subtracts
 *     code_addr and adds 0x80.  perf ends the line sequence at the last row,
 *     so we add a row at the blob's end to give the last line its range.
 *   - perf built with libdw unwinding (not Debian's, which uses libunwind)
 *     was reported to want 16-byte aligned code (CPython PR #112254); the
 *     library cannot move a JIT's code, so that alignment is the JIT's.
 *     perf 6.1 with libunwind unwinds through unaligned blobs (the padded
 *     case of t-perf-inject-jit-unwinds-through-jit-frames.sh).
 *
 * One file per process, shared by every context (refcounted, behind one
 * mutex), created as safely as the perf map (ch_perfmap.c): opt.jitdump_dir
 * if given, else a new directory $JITDUMPDIR/.debug/jit/jitunwind-<date>.XXXXXX,
 * with $HOME (then ".") in place of $JITDUMPDIR when it is unset -- where
 * perf's own agents put theirs.  The directory is opened without following a
 * symbolic link at any component and then held open: the file is created
 * with openat() in it, in this process and in forked children, so a
 * directory swapped for a link later redirects nobody.  Records of a batch are built in memory and
 * appended with checked writes; a failure truncates the file back.
 *
 * The dump cannot be compacted (perf inject needs the whole time-ordered
 * log), so it is capped instead: a context whose next blob would take the
 * file past its jitdump_max_bytes (JITUNWIND_JITDUMP_MAX) logs that once and
 * dumps no more blobs; its publishes go on in the other channels.
 *
 * A forked child writes its own jit-<pid>.dump into the same directory.  At
 * fork() it only starts the file and maps it, so that perf records the
 * mapping; a context's inherited blobs are logged again, naming the child
 * (perf inject makes each load's mapping in the process its record names),
 * at that context's first publish or unpublish in the child (the blobs that
 * unpublish removes are gone by then, and not logged).  Logging copies each
 * blob's code and tables, about 1.6 us a blob, which is why it does not
 * happen in fork() itself.  (Copying the parent's file instead would copy
 * its whole history, every blob it ever published, up to the cap, into
 * every child.)  Until then, a recording of the whole process tree still
 * has the inherited code: perf copies the parent's mappings, those made from
 * the parent's dump included, into the child at its FORK event.
 */
#include "cfi.h"
#include "formats/clock.h"
#include "formats/jitdump.h"
#include "internal.h"
#include "ownfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define JD_SALT_SIZE 8
/* subdir(): the name exists already, try another (never returned). */
#define JU_EEXIST_RETRY (-1000)

/* The process's file. */
static struct {
	pthread_mutex_t lock;
	pid_t pid;          /* process the open fd belongs to */
	int fd;             /* -1 when closed */
	unsigned refs;      /* contexts with the channel on */
	pid_t started;      /* process whose file `dir` holds (append, never truncate) */
	pid_t finished;     /* process that ended its file with CLOSE */
	char dir[PATH_MAX]; /* "" until a directory was chosen (for messages) */
	int dirfd;          /* that directory, -1 until chosen */
	void *marker;       /* the executable mapping perf records */
	size_t marker_len;
	uint64_t next_index; /* code_index of the next CODE_LOAD */
	uint64_t salt;
	uint64_t size;       /* bytes in the file, as this process wrote them */
	pid_t begun_at_fork; /* the child whose file after_fork began */
} jd = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .dirfd = -1 };

/* A context's part. */
struct jd_state {
	pid_t logged;     /* the process whose file has this context's blobs */
	bool warned_room; /* logged that a blob left perf too little room */
	bool capped;      /* reached its jitdump_max_bytes: dumps nothing more */
	pid_t relog;      /* the forked child that has yet to log the inherited blobs */
};

/* See ch_perfmap.c: the mutex must not be copied held into a child. */
static void jd_prepare(void)
{
	pthread_mutex_lock(&jd.lock);
}
static void jd_release(void)
{
	pthread_mutex_unlock(&jd.lock);
}

__attribute__((constructor)) static void jd_init(void)
{
	pthread_atfork(jd_prepare, jd_release, jd_release);
}

/* ---- the directory and the file ------------------------------------------ */

static uint64_t new_salt(void)
{
	uint64_t s;
	if (getrandom(&s, sizeof s, GRND_NONBLOCK) == (ssize_t)sizeof s)
		return s;
	return now_ns() ^ (uint64_t)getpid() << 32 ^ (uint64_t)(uintptr_t)&s;
}

/* Make (or find) directory `name` in the one open at `at` and open it, never
 * through a symbolic link. */
static int subdir(int at, const char *name, const char *shown, mode_t mode, bool fresh)
{
	if (mkdirat(at, name, mode) && (fresh || errno != EEXIST))
		return JU_FAIL(errno == EEXIST ? JU_EEXIST_RETRY : JU_EIO, "cannot create %s: %s", shown,
			       strerror(errno));
	int fd = ju__fd_above_stdio(openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
	if (fd < 0 && ju__is_symlink_at(at, name))
		return JU_FAIL(JU_EPERM, "%s: %s on the way is a symbolic link; refusing to follow it", shown,
			       name);
	if (fd < 0)
		return JU_FAIL(JU_EIO, "cannot open %s: %s: %s", shown, name, strerror(errno));
	char what[PATH_MAX + 64];
	int len = snprintf(what, sizeof what, "%s, at %s,", shown, name);
	int untrusted = ju__dir_trusted(fd, what, len < (int)sizeof what ? len : (int)sizeof what - 1);
	if (untrusted) {
		close(fd);
		return untrusted;
	}
	return fd;
}

/* $base/.debug/jit/jitunwind-<date>.XXXXXX, made like perf's agents do (a
 * mkdtemp-style name, mode 0700), each step opened without following links.
 * Returns the new directory's descriptor and its path in dir. */
static int make_default_dir(char *dir)
{
	const char *base = getenv("JITDUMPDIR");
	if (!base || !*base)
		base = getenv("HOME");
	if (!base || !*base)
		base = ".";
	char date[16];
	time_t t = time(NULL);
	struct tm tm;
	if (!localtime_r(&t, &tm) || !strftime(date, sizeof date, "%Y%m%d", &tm))
		strcpy(date, "0");
	if (snprintf(dir, PATH_MAX, "%s/.debug/jit/jitunwind-%s.XXXXXX", base, date) >= PATH_MAX)
		return JU_FAIL(JU_ERANGE, "jitdump directory under %s: path too long", base);
	int fd = ju__dir_open_nofollow(base);
	const char *steps[] = { ".debug", "jit" };
	for (size_t i = 0; i < 2 && fd >= 0; i++) {
		int next = subdir(fd, steps[i], dir, 0755, false);
		close(fd);
		fd = next;
	}
	if (fd < 0)
		return fd;
	static const char letters[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	char *name = strrchr(dir, '/') + 1, *x = dir + strlen(dir) - 6;
	int got = JU_EEXIST_RETRY;
	for (int tries = 0; got == JU_EEXIST_RETRY && tries < 100; tries++) {
		uint64_t r = new_salt();
		for (int i = 0; i < 6; i++, r /= 62)
			x[i] = letters[r % 62];
		got = ju__fault() ? JU_FAIL(JU_EIO, "cannot create %s: %s", dir, strerror(EIO))
				  : subdir(fd, name, dir, 0700, true);
	}
	close(fd);
	if (got == JU_EEXIST_RETRY)
		return JU_FAIL(JU_EIO, "cannot create a directory like %s: every name taken", dir);
	return got;
}

/* The directory for this process's file, as a descriptor the caller owns:
 * the one this process (or its parent, before a fork) already uses -- held
 * open, never looked up by path again, so that swapping it for a symbolic
 * link cannot redirect a child -- or the context's, or a new default one
 * (also when this process finished its file, so that a later session gets a
 * dump of its own).  (In a directory the context names, the file is
 * jit-<pid>.dump whatever happened before: a later session appends after the
 * CLOSE, and perf injects the earlier records once more, which changes
 * nothing.) */
static int choose_dir(const struct ju_ctx *ctx, char *dir)
{
	const char *want = ctx->opt.jitdump_dir;
	bool reuse = jd.dirfd >= 0 && (want ? !strcmp(want, jd.dir) : jd.finished != getpid());
	if (reuse) {
		strcpy(dir, jd.dir);
		int fd = fcntl(jd.dirfd, F_DUPFD_CLOEXEC, 3);
		return fd >= 0 ? fd : JU_FAIL(JU_EIO, "cannot duplicate a descriptor: %s", strerror(errno));
	}
	if (!want)
		return make_default_dir(dir);
	if (strlen(want) >= PATH_MAX)
		return JU_FAIL(JU_ERANGE, "jitdump_dir is longer than %d bytes", PATH_MAX - 1);
	strcpy(dir, want);
	return ju__dir_open_nofollow(want);
}

static int append(const void *p, size_t len)
{
	int err = ju__ownfile_append(jd.fd, p, len, "the jitdump");
	if (!err)
		jd.size += len;
	return err;
}

/* Open (or, in the process that began it, reopen) this process's file,
 * refusing anything but our own regular file, write the header if the file
 * is new and map it for perf.  Called with jd.lock held. */
static int open_file(const struct ju_ctx *ctx)
{
	pid_t pid = getpid();
	char dir[PATH_MAX];
	int dirfd = choose_dir(ctx, dir);
	if (dirfd < 0)
		return dirfd;
	/* A file this process began is appended to; anything else found at the
	 * path is an earlier process's. */
	bool fresh = jd.started != pid || strcmp(dir, jd.dir);
	char name[32], path[PATH_MAX + 32];
	snprintf(name, sizeof name, JD_FILE_FMT, (int)pid);
	snprintf(path, sizeof path, "%s/%s", dir, name);
	struct stat st;
	int err = 0;
	int fd = ju__ownfile_openat(dirfd, name, path, O_RDWR, &st);
	if (fd < 0) {
		close(dirfd);
		return fd;
	}
	if (fresh && st.st_size && ftruncate(fd, 0))
		err = JU_FAIL(JU_EIO, "cannot truncate the stale %s: %s", path, strerror(errno));
	if (err) {
		close(fd);
		close(dirfd);
		return err;
	}
	jd.fd = fd;
	jd.pid = pid;
	jd.size = fresh ? 0 : (uint64_t)st.st_size;
	bool new_file = fresh || st.st_size < (off_t)sizeof(jd_header);
	if (new_file) {
		jd_header h = {
			.magic = JD_MAGIC,
			.version = JD_VERSION,
			.total_size = sizeof h,
			.elf_mach = ctx->arch->elf_machine,
			.pid = (uint32_t)pid,
			.timestamp = now_ns(),
		};
		err = append(&h, sizeof h);
	}
	long page = sysconf(_SC_PAGESIZE);
	void *m = MAP_FAILED;
	int e = EIO;
	if (!err && !ju__fault()) {
		m = mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		e = errno;
	}
	if (!err && m == MAP_FAILED)
		err = JU_FAIL(JU_EIO, "cannot map %s for perf to see (PROT_EXEC; a noexec mount?): %s", path,
			      strerror(e));
	if (err) {
		close(fd);
		close(dirfd);
		jd.fd = -1;
		return err;
	}
	jd.marker = m;
	jd.marker_len = (size_t)page;
	strcpy(jd.dir, dir);
	if (jd.dirfd >= 0)
		close(jd.dirfd);
	jd.dirfd = dirfd;
	if (new_file) /* code_index names perf's jitted-<pid>-<index>.so: unique per file */
		jd.next_index = 0;
	if (fresh) {
		jd.started = pid;
		jd.salt = new_salt();
	}
	return 0;
}

/* Drop the file: after fork() what we hold is the parent's (never written
 * again by us); at the last close it is finished with a CLOSE record. */
static int drop_file(bool finish)
{
	int err = 0;
	if (finish) {
		jd_prefix c = { JD_CODE_CLOSE, sizeof c, now_ns() };
		err = append(&c, sizeof c);
		jd.finished = jd.pid;
	}
	if (jd.marker)
		munmap(jd.marker, jd.marker_len);
	jd.marker = NULL;
	close(jd.fd);
	jd.fd = -1;
	return err;
}

/* Make sure jd.fd is this process's file. */
static int ensure_file(const struct ju_ctx *ctx)
{
	if (jd.fd >= 0 && jd.pid == getpid())
		return 0;
	if (jd.fd >= 0)
		drop_file(false);
	return open_file(ctx);
}

/* ---- records ------------------------------------------------------------- */

/* How much of the gap after a blob its synthesized mapping takes. */
typedef struct jd_plan {
	uint64_t code_size;   /* the blob, plus the salt when it fits */
	uint64_t mapped_size; /* 0 when the unwind tables do not fit */
} jd_plan;

static jd_plan plan(uint64_t size, uint64_t unwinding_size, uint64_t room)
{
	uint64_t mapped = JD_ALIGN8(unwinding_size);
	/* Mapped tables first: without them perf cannot unwind through the
	 * blob; without the salt only a libcrypto perf's build-id cache can
	 * mix up names. */
	const jd_plan options[] = {
		{ size + JD_SALT_SIZE, mapped },
		{ size, mapped },
		{ size + JD_SALT_SIZE, 0 },
	};
	for (size_t i = 0; i < 3; i++) {
		const jd_plan *p = &options[i];
		uint64_t end = p->mapped_size ? JD_ALIGN8(p->code_size) + p->mapped_size : p->code_size;
		if (end - size <= room)
			return *p;
	}
	return (jd_plan){ size, 0 };
}

/* What the fullest plan needs after the blob: the salt, then its unwind
 * tables mapped after the code. */
static uint64_t full_room(uint64_t size, uint64_t unwinding_size)
{
	return JD_ALIGN8(size + JD_SALT_SIZE) + JD_ALIGN8(unwinding_size) - size;
}

/* The blob's .eh_frame for perf's ELF whose code is code_size bytes: our CIE,
 * its FDEs pc-relative, a terminator.  Addresses handled here are the
 * blob's real ones; `bias` turns an ELF address into one. */
static void write_eh_frame(byte_buf *f, const ju_arch *arch, const blob_view *v, uint64_t code_size)
{
	uint64_t bias = v->start - JD_ELF_TEXT_ADDR;
	f->len = 0;
	size_t cie = cfi_write_cie(arch, f, CFI_ENC_PCREL4);
	cfi_reencode_fdes(f, cie, bias + JD_ELF_EH_FRAME_ADDR(code_size), v->fde, v->fde_len);
	buf_u32(f, 0);
}

/* The FDEs of an .eh_frame from write_eh_frame (CIE first, terminator last). */
static size_t count_fdes(const byte_buf *f)
{
	size_t n = 0;
	for (size_t at = 4 + load_u32(f->p); at + 4 < f->len; at += 4 + load_u32(f->p + at))
		n++;
	return n;
}

/* Pad the record that began at `rec` to a multiple of 8 bytes (perf steps
 * over records by total_size, so readers never see the padding) and set its
 * total_size. */
static void finish_record(byte_buf *out, size_t rec)
{
	while ((out->len - rec) & 7)
		buf_u8(out, 0);
	if (out->len - rec > UINT32_MAX)
		out->failed = true;
	buf_put_u32(out, rec + offsetof(jd_prefix, total_size), (uint32_t)(out->len - rec));
}

/* UNWINDING_INFO: the .eh_frame in f and an .eh_frame_hdr indexing it. */
static int write_unwinding(byte_buf *out, const byte_buf *f, const blob_view *v, jd_plan p, uint64_t ts)
{
	uint64_t bias = v->start - JD_ELF_TEXT_ADDR;
	uint64_t eh = bias + JD_ELF_EH_FRAME_ADDR(p.code_size), hdr = eh + f->len;
	size_t n = count_fdes(f), cie_len = 4 + load_u32(f->p);
	size_t rec = out->len, hsize = eh_hdr_size(n);
	jd_code_unwinding_info u = {
		.p = { JD_CODE_UNWINDING_INFO, 0, ts },
		.unwinding_size = f->len + hsize,
		.eh_frame_hdr_size = hsize,
		.mapped_size = p.mapped_size,
	};
	buf_bytes(out, &u, sizeof u);
	buf_bytes(out, f->p, f->len);
	size_t at = out->len;
	/* The FDEs of one blob follow its ranges, so they are sorted by pc. */
	eh_hdr_begin(out, hdr, eh, n);
	for (size_t fde = cie_len; fde + 4 < f->len; fde += 4 + load_u32(f->p + fde)) {
		int32_t rel = (int32_t)load_u32(f->p + fde + FDE_OFF_PC_BEGIN);
		uint64_t pc = eh + fde + FDE_OFF_PC_BEGIN + (uint64_t)(int64_t)rel;
		eh_hdr_entry(out, hdr, pc, eh + fde);
	}
	if (buf_ok(out) && out->len - at != hsize)
		return JU_FAIL(JU_ECFI, "internal error: .eh_frame_hdr of %s has %zu bytes, not %zu", v->name,
			       out->len - at, hsize);
	finish_record(out, rec);
	return 0;
}

/* DEBUG_INFO: the line rows at absolute addresses, plus one at the blob's
 * end (perf closes the sequence at the last row).  A row inside a guest
 * frame names that frame's file: perf has no inline records, but its
 * srcline of a sample is then the innermost guest line in its own file. */
static void write_debug_info(byte_buf *out, const blob_view *v, uint64_t ts)
{
	size_t rec = out->len;
	jd_code_debug_info d = {
		.p = { JD_CODE_DEBUG_INFO, 0, ts },
		.code_addr = v->start,
		.nr_entry = v->n_lines + 1,
	};
	buf_bytes(out, &d, sizeof d);
	for (size_t i = 0; i <= v->n_lines; i++) {
		size_t row = i < v->n_lines ? i : i - 1;
		const ju_line *l = &v->lines[row];
		jd_debug_entry e = {
			.addr = v->start + (i < v->n_lines ? l->offset : v->size),
			.lineno = (int32_t)l->line,
		};
		buf_bytes(out, &e, sizeof e);
		buf_str(out, v->row_file ? v->row_file[row] : v->file);
	}
	finish_record(out, rec);
}

/* Copy the code without trusting that it is readable: execute-only pages
 * exist (x86-64 protection keys, AArch64), and a blob in memory we cannot
 * read must not crash the process.  process_vm_readv on ourselves reports a
 * fault instead; where the system refuses the call, plain copying is all we
 * have. */
static bool read_code(uint8_t *dst, uint64_t src, size_t size)
{
	struct iovec local = { dst, size }, remote = { (void *)(uintptr_t)src, size };
	ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	if (n == (ssize_t)size)
		return true;
	if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
		memcpy(dst, (const void *)(uintptr_t)src, size);
		return true;
	}
	memset(dst, 0, size);
	return false;
}

/* CODE_LOAD: the name and the code as it is in memory now (zeros if it
 * cannot be read: perf names and unwinds without it), salted.  Not padded:
 * perf takes the code to be the record's last code_size bytes. */
static int write_code_load(struct ju_ctx *ctx, byte_buf *out, const blob_view *v, jd_plan p, uint64_t index,
			   uint64_t ts)
{
	uint64_t total = sizeof(jd_code_load) + v->name_len + 1 + p.code_size;
	if (total > UINT32_MAX)
		return JU_FAIL(JU_ERANGE, "%s: %llu bytes of code do not fit a jitdump record", v->name,
			       (unsigned long long)v->size);
	jd_code_load c = {
		.p = { JD_CODE_LOAD, (uint32_t)total, ts },
		.pid = (uint32_t)getpid(),
		.tid = (uint32_t)gettid(),
		.vma = v->start,
		.code_addr = v->start,
		.code_size = p.code_size,
		.code_index = index,
	};
	buf_bytes(out, &c, sizeof c);
	buf_bytes(out, v->name, v->name_len);
	buf_u8(out, 0);
	uint8_t *code = buf_reserve(out, v->size);
	if (code && !read_code(code, v->start, v->size))
		ju__log(ctx, JU_LOG_WARN, "jitdump: the code of %s at %#llx cannot be read; dumped as zeros",
			v->name, (unsigned long long)v->start);
	if (p.code_size > v->size) {
		uint64_t salt = jd.salt ^ index;
		buf_bytes(out, &salt, JD_SALT_SIZE);
	}
	return 0;
}

static uint64_t max_bytes(const struct ju_ctx *ctx)
{
	return ctx->opt.jitdump_max_bytes ? ctx->opt.jitdump_max_bytes : JU_JITDUMP_MAX_DEFAULT;
}

static int cmp_start(const void *x, const void *y)
{
	const blob_view *a = *(const blob_view *const *)x, *b = *(const blob_view *const *)y;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* All records of a batch, in address order, into out.  Called with jd.lock
 * held (code_index); the caller restores jd.next_index on failure. */
static int write_batch(struct ju_ctx *ctx, byte_buf *out, const blob_view *v, size_t n)
{
	const blob_view **sorted = ju__malloc(n * sizeof *sorted);
	if (!sorted)
		return JU_FAIL(JU_ENOMEM, "out of memory for %zu jitdump records", n);
	for (size_t i = 0; i < n; i++)
		sorted[i] = &v[i];
	qsort(sorted, n, sizeof *sorted, cmp_start);
	byte_buf f;
	buf_init_grow(&f, BUF_UNBOUNDED);
	int err = 0;
	for (size_t i = 0; i < n && !err; i++) {
		const blob_view *b = sorted[i];
		uint64_t end = b->start + b->size;
		uint64_t next = ctx->live->next_live(ctx, end);
		if (i + 1 < n && sorted[i + 1]->start < next)
			next = sorted[i + 1]->start;
		/* The tables' size does not depend on where they go. */
		write_eh_frame(&f, ctx->arch, b, b->size);
		if (!buf_ok(&f)) {
			err = JU_FAIL(JU_ENOMEM, "out of memory for the .eh_frame of %s", b->name);
			break;
		}
		uint64_t unwinding = f.len + eh_hdr_size(count_fdes(&f));
		jd_plan p = plan(b->size, unwinding, next - end);
		if (!p.mapped_size && !ctx->jd->warned_room) {
			/* perf's libunwind glue reads the tables through the mapping;
			 * without them it guesses a frame where the caller should be. */
			ctx->jd->warned_room = true;
			ju__log(ctx, JU_LOG_WARN,
				"jitdump: %s leaves %llu bytes before the next blob; perf "
				"--call-graph dwarf needs %llu to unwind through it (ju_room_after; said once)",
				b->name, (unsigned long long)(next - end),
				(unsigned long long)full_room(b->size, unwinding));
		}
		write_eh_frame(&f, ctx->arch, b, p.code_size);
		uint64_t ts = now_ns();
		size_t mark = out->len;
		if (b->n_lines)
			write_debug_info(out, b, ts);
		err = buf_ok(&f) ? write_unwinding(out, &f, b, p, ts)
				 : JU_FAIL(JU_ENOMEM, "out of memory for the .eh_frame of %s", b->name);
		if (!err)
			err = write_code_load(ctx, out, b, p, jd.next_index++, ts);
		if (!err && buf_ok(out) && jd.size + out->len > max_bytes(ctx)) {
			out->len = mark; /* none of this blob's records */
			jd.next_index--;
			ctx->jd->capped = true;
			ju__log(ctx, JU_LOG_WARN,
				"jitdump: %s would take the dump past its cap of %llu bytes "
				"(jitdump_max_bytes, JITUNWIND_JITDUMP_MAX); it and every later blob of this "
				"context are not dumped (the other channels go on; said once)",
				b->name, (unsigned long long)max_bytes(ctx));
			break;
		}
	}
	buf_free(&f);
	free(sorted);
	if (!err && (ju__fault() || !buf_ok(out)))
		err = JU_FAIL(JU_ENOMEM, "out of memory (or a record over 4 GiB) for %zu jitdump records", n);
	return err;
}

/* Bytes perf inject's synthesized ELF of the blob takes after its code (salt
 * and mapped unwind tables). */
static int jd_room_after(const struct ju_ctx *ctx, const blob_view *v, uint64_t *room)
{
	byte_buf f;
	buf_init_grow(&f, BUF_UNBOUNDED);
	write_eh_frame(&f, ctx->arch, v, v->size);
	int err = buf_ok(&f) ? 0 : JU_FAIL(JU_ENOMEM, "out of memory for the .eh_frame of %s", v->name);
	if (!err)
		*room = full_room(v->size, f.len + eh_hdr_size(count_fdes(&f)));
	buf_free(&f);
	return err;
}

/* ---- the channel -------------------------------------------------------- */

static int jd_open(struct ju_ctx *ctx)
{
	struct jd_state *s = ju__calloc(1, sizeof *s);
	if (!s)
		return JU_FAIL(JU_ENOMEM, "out of memory for the jitdump channel");
	pthread_mutex_lock(&jd.lock);
	int err = ensure_file(ctx);
	if (!err && ctx->opt.jitdump_dir && strcmp(ctx->opt.jitdump_dir, jd.dir))
		err = JU_FAIL(JU_EINVAL,
			      "this process already writes its jitdump in %s, not %s "
			      "(one jitdump per process)",
			      jd.dir, ctx->opt.jitdump_dir);
	if (!err) {
		jd.refs++;
		s->logged = jd.pid;
		ctx->jd = s;
	}
	pthread_mutex_unlock(&jd.lock);
	if (err)
		free(s);
	return err;
}

static int jd_log_blobs(struct ju_ctx *ctx, const blob_view *v, size_t n);

/* In a forked child, a context's first write to the dump logs the blobs it
 * inherited first.  A failure part way leaves the blobs logged so far in
 * the file (perf takes a load twice without harm) and is tried again. */
static int relog_inherited(struct ju_ctx *ctx)
{
	if (!ctx->jd || ctx->jd->relog != getpid())
		return 0;
	ctx->jd->relog = 0;
	int err = ctx->live->relog(ctx, jd_log_blobs);
	if (err)
		ctx->jd->relog = getpid();
	return err;
}

/* An unpublish is a context's first write too: what it still has is logged
 * (the blobs just unpublished are gone from the arenas by now). */
static void jd_blobs_gone(struct ju_ctx *ctx, size_t n, bool all)
{
	(void)n;
	(void)all;
	if (relog_inherited(ctx)) {
		ju__log(ctx, JU_LOG_WARN, "jitdump: %s", ju_errmsg());
		ju__clear_error(); /* the unpublish itself succeeds */
	}
}

static void jd_close(struct ju_ctx *ctx)
{
	pthread_mutex_lock(&jd.lock);
	/* perf reads a dump without CLOSE; all we can do is say so. */
	bool last = jd.refs && --jd.refs == 0 && jd.fd >= 0;
	if (last && drop_file(jd.pid == getpid())) {
		ju__log(ctx, JU_LOG_WARN, "jitdump: %s", ju_errmsg());
		ju__clear_error(); /* ju_close itself succeeds */
	}
	pthread_mutex_unlock(&jd.lock);
	free(ctx->jd);
	ctx->jd = NULL;
}

static int jd_log_blobs(struct ju_ctx *ctx, const blob_view *v, size_t n)
{
	int err = relog_inherited(ctx);
	if (err)
		return err;
	pthread_mutex_lock(&jd.lock);
	err = ensure_file(ctx);
	uint64_t index = jd.next_index;
	byte_buf out;
	buf_init_grow(&out, BUF_UNBOUNDED);
	if (!err && !ctx->jd->capped)
		err = write_batch(ctx, &out, v, n);
	if (!err && out.len)
		err = append(out.p, out.len);
	if (err)
		jd.next_index = index;
	pthread_mutex_unlock(&jd.lock);
	buf_free(&out);
	return err;
}

/* In a forked child (core.c holds ctx->lock): this process's own file, with
 * everything the context still has published logged again -- at its first
 * write, when this process's file is new (so fork() returns soon), else
 * now (a raw clone that published first).  Once per process, however often
 * it is called. */
static int jd_after_fork(struct ju_ctx *ctx)
{
	pid_t pid = getpid();
	if (ctx->jd->logged == pid)
		return 0;
	pthread_mutex_lock(&jd.lock);
	int err = 0;
	if (jd.fd < 0 || jd.pid != pid) {
		err = ensure_file(ctx);
		jd.begun_at_fork = err ? 0 : pid;
	}
	bool now = jd.begun_at_fork != pid;
	pthread_mutex_unlock(&jd.lock);
	if (!err && now)
		err = ctx->live->relog(ctx, jd_log_blobs);
	else if (!err)
		ctx->jd->relog = pid;
	if (!err)
		ctx->jd->logged = pid;
	return err;
}

const ju_channel_ops ju_ch_jitdump = {
	.bit = JU_CH_JITDUMP,
	.name = "jitdump",
	.open = jd_open,
	.close = jd_close,
	.log_blobs = jd_log_blobs,
	.blobs_gone = jd_blobs_gone,
	.after_fork = jd_after_fork,
	.room_after = jd_room_after,
};
