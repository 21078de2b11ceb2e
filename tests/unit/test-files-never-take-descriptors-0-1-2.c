/* SPDX-License-Identifier: MIT */
/* test-files-never-take-descriptors-0-1-2.c - a program that closed its
 * standard input, output and error (a daemon, CPython's test_posix) and
 * then publishes with the perf map and the jitdump on: none of the
 * library's files is at descriptor 0, 1 or 2, so the program's output
 * never goes into them, and nothing the library keeps open is there.
 *
 *   - with 0, 1 and 2 closed: ju_open, a publish to every channel, a
 *     publish that compacts the perf map (a copy put in its place), an
 *     unpublish; after each, 0, 1 and 2 are still closed (EBADF);
 *   - the results go to the descriptor the harness gave (argv, or 3
 *     kept open when the checks begin) since stdout is closed.
 */
#include "internal.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static int out = -1;

/* What is at descriptors 0, 1 and 2: "" when none is open. */
static void std_fds(char *what, size_t n)
{
	what[0] = 0;
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF)
			continue;
		char p[32], link[256] = "?";
		snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
		ssize_t len = readlink(p, link, sizeof link - 1);
		link[len > 0 ? len : 1] = 0;
		size_t at = strlen(what);
		snprintf(what + at, n - at, " %d -> %s", fd, link);
	}
}

#define CHECK_STD_CLOSED(when)                                                                               \
	do {                                                                                                 \
		char w_[1024];                                                                               \
		std_fds(w_, sizeof w_);                                                                      \
		CHECK(!w_[0], "after %s, descriptors 0-2 are open:%s", when, w_);                            \
	} while (0)

int main(void)
{
	/* stdout goes to a descriptor above 2 for the results; then 0-2 close */
	out = dup(1);
	if (out < 0 || !freopen("/dev/null", "w", stdout))
		UNIT_SKIP("cannot set up the output");
	if (dup2(out, 1) < 0)
		UNIT_SKIP("cannot set up the output");
	FILE *res = fdopen(out, "w");
	if (!res)
		UNIT_SKIP("cannot set up the output");
	char dir[] = "/tmp/ju-stdio-XXXXXX";
	if (!mkdtemp(dir))
		UNIT_SKIP("cannot make a directory");
	close(0);
	fclose(stdout); /* closes 1 */
	close(2);
	stdout = res;
	uint8_t *code =
		mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(code != MAP_FAILED, "mmap: %s", strerror(errno));
	if (code == MAP_FAILED)
		return unit_done("test-files-never-take-descriptors-0-1-2");
	ju_options o = { .sz = sizeof o, .channels = JU_CH_ALL, .flags = JU_OPT_NO_ENV, .jitdump_dir = dir };
	ju_ctx *ctx = NULL;
	CHECK_RC(ju_open(&o, &ctx), 0);
	CHECK_STD_CLOSED("ju_open");
	if (!ctx)
		return unit_done("test-files-never-take-descriptors-0-1-2");
	CHECK(ju_channels(ctx) & JU_CH_PERFMAP, "the perf map is off");
	CHECK(ju_channels(ctx) & JU_CH_JITDUMP, "the jitdump is off");
	/* enough blobs published and taken back for the perf map to be
	 * compacted (a copy in its place) at least once */
	char name[32];
	for (int i = 0; i < 4000; i++) {
		snprintf(name, sizeof name, "stdio:%d", i);
		ju_blob b = { .sz = sizeof b,
			      .start = code + (size_t)(i % 2000) * 256,
			      .size = 64,
			      .name = name,
			      .frame = { .kind = JU_FRAME_LEAF } };
		int rc = ju_publish(ctx, &b);
		CHECK(rc == 0, "publish %d: %s", i, ju_errmsg());
		if (i == 0)
			CHECK_STD_CLOSED("the first publish");
		if (rc == 0)
			CHECK_RC(ju_unpublish(ctx, b.start), 0);
	}
	CHECK_STD_CLOSED("4000 publishes and unpublishes");
	CHECK(ju_channel_error(ctx, JU_CH_PERFMAP, NULL) == 0, "the perf map failed");
	CHECK(ju_channel_error(ctx, JU_CH_JITDUMP, NULL) == 0, "the jitdump failed");
	CHECK_RC(ju_close(ctx), 0);
	CHECK_STD_CLOSED("ju_close");
	char p[128];
	snprintf(p, sizeof p, "/tmp/perf-%d.map", (int)getpid());
	unlink(p);
	snprintf(p, sizeof p, "%s/jit-%d.dump", dir, (int)getpid());
	unlink(p);
	rmdir(dir);
	return unit_done("test-files-never-take-descriptors-0-1-2");
}
