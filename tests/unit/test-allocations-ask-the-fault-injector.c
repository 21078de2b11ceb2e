/* SPDX-License-Identifier: MIT */
/* test-allocations-ask-the-fault-injector.c - every allocation and mmap the
 * library makes asks ju__fault() first, so fault injection
 * (test-fault-injection.c) reaches every error path.
 *
 * The program is linked with --wrap for malloc, calloc, realloc, strdup and
 * mmap: the library's own calls (not libc's internal ones) come here.  While
 * the library runs with the countdown far away, each of them must find the
 * countdown lower than at the allocation before it: at least one fault check
 * came in between, the one that allocation would have failed on.
 */
#include "internal.h"
#include "unit.h"

#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void ju__fault_after(long n);
long ju__fault_remaining(void);

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);

static bool armed;
static long last; /* the countdown at the last allocation */
static int allocations, unasked;
static const char *unasked_what;

static void seen(const char *what)
{
	if (!armed)
		return;
	long now = ju__fault_remaining();
	allocations++;
	if (now == last) {
		unasked++;
		unasked_what = what;
	}
	last = now;
}

void *__wrap_malloc(size_t n)
{
	seen("malloc");
	return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t size)
{
	seen("calloc");
	return __real_calloc(n, size);
}
void *__wrap_realloc(void *p, size_t n)
{
	seen("realloc");
	return __real_realloc(p, n);
}
char *__wrap_strdup(const char *s)
{
	seen("strdup");
	return __real_strdup(s);
}
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	seen("mmap");
	return __real_mmap(addr, len, prot, flags, fd, off);
}

static void arm(void)
{
	ju__fault_after(LONG_MAX);
	last = LONG_MAX;
	allocations = unasked = 0;
	armed = true;
}

static void disarm(const char *what)
{
	armed = false;
	ju__fault_after(0);
	CHECK(allocations > 0, "%s made no allocation this test could see", what);
	CHECK(unasked == 0, "%s: %d of %d allocations did not ask the fault injector (the last: %s)", what,
	      unasked, allocations, unasked_what);
	printf("%s: %d allocations, each asked first\n", what, allocations);
}

int main(void)
{
	char dir[4096];
	if (!getcwd(dir, sizeof dir))
		UNIT_SKIP("no working directory");
	uint8_t *R = __real_mmap(NULL, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static const ju_line rows[] = { { 0, 1 }, { 8, 2 } };
	enum { N = 300 };
	static ju_blob b[N];
	static char names[N][16];
	for (size_t i = 0; i < N; i++) {
		snprintf(names[i], sizeof names[i], "aa:%zu", i);
		b[i] = (ju_blob){ .sz = sizeof(ju_blob),
				  .start = R + 64 * i,
				  .size = 32,
				  .name = names[i],
				  .frame = { .kind = JU_FRAME_FP, .u.fp = { 1, 4, NULL, 0 } },
				  .file = "aa.src",
				  .lines = rows,
				  .n_lines = 2 };
	}

	ju_options o = {
		.sz = sizeof(ju_options), .channels = JU_CH_ALL, .flags = JU_OPT_NO_ENV, .jitdump_dir = dir
	};
	ju_ctx *ctx = NULL;
	arm();
	int rc = ju_open(&o, &ctx);
	disarm("ju_open (every channel, a jitdump directory)");
	CHECK_RC(rc, 0);
	if (!ctx)
		return unit_done("test-allocations-ask-the-fault-injector");

	arm(); /* a batch big enough that the staging buffer grows */
	CHECK_RC(ju_publish_batch(ctx, b, N / 2), 0);
	disarm("a batch of 150 blobs with lines");
	arm();
	for (size_t i = N / 2; i < N; i++)
		CHECK_RC(ju_publish(ctx, &b[i]), 0);
	disarm("150 single publishes");
	arm();
	for (size_t i = 0; i < N; i += 2)
		CHECK_RC(ju_unpublish(ctx, b[i].start), 0);
	disarm("unpublishing every other blob");
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
	char map[64];
	snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)getpid());
	unlink(map);
	return unit_done("test-allocations-ask-the-fault-injector");
}
