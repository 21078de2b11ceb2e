/* test-a-full-disk-turns-off-only-the-file-channels.c - a perf map and a
 * jitdump that can no longer be written (ENOSPC) turn off; the channels in
 * memory keep every blob.
 *
 * SPDX-License-Identifier: MIT
 *
 * In a mount namespace of its own (root only: else skipped), a 64 KiB tmpfs
 * is mounted on /tmp, where the perf map and (JITDUMPDIR) the jitdump go.
 * 3,000 blobs are published, one at a time and in batches of 50, with every
 * channel on; the files fill up after a few hundred.  Then:
 *   - every publish succeeded;
 *   - ju_channels() no longer lists perfmap and jitdump, ju_channel_error
 *     gives JU_EIO for each and counts the blobs each missed (all those
 *     after the last one its file holds); the in-memory channels report no
 *     error; the log callback said it once per channel;
 *   - libgcc's _Unwind_Find_FDE, nongnu libunwind (when it can be loaded)
 *     and the GDB JIT interface's images (read as gdb does, and by gdb
 *     itself when it is installed) have every blob;
 *   - the perf map is well formed: whole lines for the first blobs, in
 *     order, and nothing else; the jitdump is well formed for the strict
 *     reader (tests/unit/test-jitdump-reader.h) and holds the first blobs'
 *     loads in order.
 */
#include "internal.h"
#include "test-gdb-reader.h"
#include "test-jitdump-reader.h"
#include "unit.h"

#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

enum { N = 3000, BATCH = 50 };

extern gdbjit_descriptor __jit_debug_descriptor;

static const void *(*gcc_find_fde)(void *pc, void *bases);
static int (*unw_by_ip)(void *as, uint64_t ip, void *pi, void *arg);
static void *unw_local_as;
static int warn_perfmap, warn_jitdump;

static void on_log(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level != JU_LOG_WARN)
		return;
	warn_perfmap += strstr(msg, "channel perfmap is off") != NULL;
	warn_jitdump += strstr(msg, "channel jitdump is off") != NULL;
}

/* This program's file, as the mount namespace it was started in names it
 * (small_tmp, below, leaves that namespace: in a chroot /proc then names
 * the file by its path outside the chroot, which gdb cannot open). */
static char exe[4096];

/* A private /tmp of 64 KiB: false (with errno) when this cannot be had. */
static bool small_tmp(void)
{
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = 0;
	if (unshare(CLONE_NEWNS))
		return false;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return false;
	return mount("tmpfs", "/tmp", "tmpfs", 0, "size=64k,mode=1777") == 0;
}

static void load_consumers(void)
{
	void *gcc = dlopen("libgcc_s.so.1", RTLD_NOW);
	if (!gcc || !(gcc_find_fde = (const void *(*)(void *, void *))dlsym(gcc, "_Unwind_Find_FDE")))
		UNIT_SKIP("libgcc_s.so.1 with _Unwind_Find_FDE is not available");
#if defined(__x86_64__)
	/* global, so that the channel's dlsym(RTLD_DEFAULT) finds _U_dyn_register */
	if (dlopen("libunwind.so.8", RTLD_NOW | RTLD_GLOBAL)) {
		unw_by_ip = (int (*)(void *, uint64_t, void *, void *))dlsym(RTLD_DEFAULT,
									     "_ULx86_64_get_proc_info_by_ip");
		unw_local_as = dlsym(RTLD_DEFAULT, "_ULx86_64_local_addr_space");
	}
#endif
	if (!unw_by_ip || !unw_local_as) {
		unw_by_ip = NULL;
		printf("note: nongnu libunwind not loadable; its channel is not checked\n");
	}
}

static bool libunwind_covers(uintptr_t pc)
{
	/* unw_proc_info_t is 80 bytes on x86-64 (libunwind.h); room to spare */
	uint64_t pi[32];
	void *as = *(void **)unw_local_as;
	return unw_by_ip(as, pc, pi, NULL) == 0;
}

/* The perf map: whole lines "START SIZE NAME" for blobs 0..n-1 in order.
 * Returns n, or -1 with a message. */
static long perfmap_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		printf("FAIL cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	char line[256];
	long n = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long start, size;
		char name[64];
		blob_buf bb;
		ju_blob b = make_blob((size_t)n, &bb);
		size_t len = strlen(line);
		if (!len || line[len - 1] != '\n' || sscanf(line, "%lx %lx %63s", &start, &size, name) != 3 ||
		    start != (uintptr_t)b.start || size != b.size || strcmp(name, b.name)) {
			printf("FAIL perf map line %ld is not blob %ld's: %s\n", n + 1, n, line);
			n = -1;
			break;
		}
		n++;
	}
	fclose(f);
	return n;
}

/* The jitdump: valid for the strict reader, its loads blobs 0..n-1. */
static long jitdump_loads(const char *path)
{
	jd_dump d;
	char err[256];
	if (jd_dump_read(path, &d, err, sizeof err)) {
		printf("FAIL the jitdump is not well formed: %s\n", err);
		return -1;
	}
	long n = (long)d.n_loads;
	for (size_t i = 0; i < d.n_loads; i++) {
		blob_buf bb;
		ju_blob b = make_blob(i, &bb);
		if (d.loads[i].h.code_addr != (uintptr_t)b.start || strcmp(d.loads[i].name, b.name)) {
			printf("FAIL jitdump load %zu is %s, not blob %zu's %s\n", i, d.loads[i].name, i,
			       b.name);
			n = -1;
			break;
		}
	}
	jd_dump_free(&d);
	return n;
}

/* Every blob in the GDB JIT interface's images, as a reader gets them. */
static size_t gdb_symbols(void)
{
	reader r = { .pid = getpid(), .desc = (uintptr_t)&__jit_debug_descriptor };
	gdbjit_descriptor desc;
	size_t total = 0;
	if (rd(&r, r.desc, &desc, sizeof desc))
		return 0;
	for (uint64_t p = desc.first_entry; p;) {
		gdbjit_entry e;
		char why[160];
		if (rd(&r, p, &e, sizeof e))
			break;
		uint8_t *img = malloc(e.symfile_size);
		long k = img && !rd(&r, e.symfile_addr, img, e.symfile_size)
				 ? check_image(img, e.symfile_size, e.symfile_addr, e.code_lo, e.code_hi, why,
					       sizeof why)
				 : -1;
		CHECK(k >= 0, "GDB image at %#" PRIx64 ": %s", e.symfile_addr, k < 0 ? why : "");
		total += k > 0 ? (size_t)k : 0;
		free(img);
		p = e.next_entry;
	}
	return total;
}

/* gdb itself, attached to this process, names the first and the last blob
 * (when gdb is installed); it is given this program's file (exe). */
static void gdb_names(void)
{
	blob_buf b0, bn;
	ju_blob first = make_blob(0, &b0), last = make_blob(N - 1, &bn);
	char pid[16], ex0[64], exn[64];
	snprintf(pid, sizeof pid, "%d", (int)getpid());
	snprintf(ex0, sizeof ex0, "info symbol %p", (void *)first.start);
	snprintf(exn, sizeof exn, "info symbol %p", (void *)((uint8_t *)last.start + last.size - 1));
	int fd[2];
	if (pipe(fd))
		return;
	pid_t child = fork();
	if (child == 0) {
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		if (exe[0])
			execlp("gdb", "gdb", "-nx", "-batch", exe, "-p", pid, "-ex", ex0, "-ex", exn,
			       (char *)NULL);
		else
			execlp("gdb", "gdb", "-nx", "-batch", "-p", pid, "-ex", ex0, "-ex", exn,
			       (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	char out[16384];
	size_t got = 0;
	ssize_t r;
	while (got < sizeof out - 1 && (r = read(fd[0], out + got, sizeof out - 1 - got)) > 0)
		got += (size_t)r;
	out[got] = 0;
	close(fd[0]);
	int st;
	waitpid(child, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
		printf("note: gdb is not installed; gdb itself not asked\n");
		return;
	}
	char want0[64], wantn[64];
	snprintf(want0, sizeof want0, "%s in section", first.name);
	snprintf(wantn, sizeof wantn, "%s + %zu in section", last.name, (size_t)last.size - 1);
	CHECK(strstr(out, want0) && strstr(out, wantn),
	      "gdb does not name the first and last blobs (%s, %s):\n%s", want0, wantn, out);
}

int main(void)
{
	if (geteuid() != 0)
		UNIT_SKIP("a private tmpfs on /tmp needs root (unshare, mount)");
	if (!small_tmp())
		UNIT_SKIP("cannot mount a private tmpfs on /tmp: %s", strerror(errno));
	load_consumers();
	elf_version(EV_CURRENT);
	region = mmap(NULL, REGION_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (region == MAP_FAILED)
		UNIT_SKIP("cannot reserve address space");
	CHECK(mkdir("/tmp/jd", 0700) == 0, "mkdir /tmp/jd: %s", strerror(errno));
	ju_options o = { .sz = sizeof(ju_options),
			 .channels = JU_CH_UNWINDER | JU_CH_GDB | JU_CH_PERFMAP | JU_CH_JITDUMP |
				     (unw_by_ip ? JU_CH_LIBUNWIND : 0),
			 .flags = JU_OPT_NO_ENV | JU_OPT_STRICT,
			 .jitdump_dir = "/tmp/jd",
			 .log = on_log };
	ju_ctx *ctx = NULL;
	CHECK_RC(ju_open(&o, &ctx), 0);
	if (!ctx)
		return unit_done("test-a-full-disk-turns-off-only-the-file-channels");
	uint32_t on = ju_channels(ctx);
	static blob_buf bb[N];
	static ju_blob b[N];
	for (size_t i = 0; i < N; i++)
		b[i] = make_blob(i, &bb[i]);
	size_t failed = 0;
	for (size_t i = 0; i < N / 2; i++)
		failed += ju_publish(ctx, &b[i]) != 0;
	for (size_t i = N / 2; i < N; i += BATCH)
		failed += ju_publish_batch(ctx, &b[i], BATCH) != 0;
	CHECK(failed == 0, "%zu publishes failed: %s", failed, ju_errmsg());
	CHECK(ju_count(ctx) == N, "%zu blobs published, want %d", ju_count(ctx), N);

	uint32_t files = JU_CH_PERFMAP | JU_CH_JITDUMP;
	CHECK(ju_channels(ctx) == (on & ~files), "channels on: %#x, want %#x", ju_channels(ctx), on & ~files);
	CHECK(warn_perfmap == 1 && warn_jitdump == 1, "warnings: perfmap %d, jitdump %d, want one each",
	      warn_perfmap, warn_jitdump);
	for (uint32_t ch = 1; ch < JU_CH_ALL; ch <<= 1) {
		size_t missed = 99;
		int err = ju_channel_error(ctx, ch, &missed);
		if (ch & files)
			CHECK(err == JU_EIO, "ju_channel_error(%s) = %d, want JU_EIO", ju_channel_name(ch),
			      err);
		else
			CHECK(err == 0 && missed == 0, "ju_channel_error(%s) = %d, %zu missed",
			      ju_channel_name(ch), err, missed);
	}
	CHECK_RC(ju_channel_error(ctx, files, NULL), JU_EINVAL);
	CHECK_RC(ju_channel_error(NULL, JU_CH_PERFMAP, NULL), JU_EINVAL);

	size_t gcc = 0, lu = 0;
	for (size_t i = 0; i < N; i++) {
		uintptr_t pc = (uintptr_t)b[i].start + b[i].size / 2;
		uintptr_t bases[3];
		gcc += gcc_find_fde((void *)pc, bases) != NULL;
		lu += unw_by_ip && libunwind_covers(pc);
	}
	CHECK(gcc == N, "libgcc finds %zu of %d blobs", gcc, N);
	CHECK(!unw_by_ip || lu == N, "libunwind finds %zu of %d blobs", lu, N);
	size_t syms = gdb_symbols();
	CHECK(syms == N, "the GDB images hold %zu of %d blobs", syms, N);
	gdb_names();

	char path[128];
	snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
	long pm = perfmap_lines(path);
	size_t missed;
	CHECK(ju_channel_error(ctx, JU_CH_PERFMAP, &missed) == JU_EIO && pm > 0 && (size_t)pm + missed == N,
	      "the perf map holds %ld blobs and missed %zu, of %d", pm, missed, N);
	snprintf(path, sizeof path, "/tmp/jd/jit-%d.dump", (int)getpid());
	long jd = jitdump_loads(path);
	CHECK(ju_channel_error(ctx, JU_CH_JITDUMP, &missed) == JU_EIO && jd > 0 && (size_t)jd + missed == N,
	      "the jitdump holds %ld blobs and missed %zu, of %d", jd, missed, N);
	printf("the perf map holds %ld blobs, the jitdump %ld; the in-memory channels all %d\n", pm, jd, N);

	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
	return unit_done("test-a-full-disk-turns-off-only-the-file-channels");
}
