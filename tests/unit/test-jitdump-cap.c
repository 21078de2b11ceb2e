/* SPDX-License-Identifier: MIT */
/* test-jitdump-cap.c - the jitdump stops growing at its cap.
 *
 *   - cap_stops_the_dump_and_says_so_once: with jitdump_max_bytes set, every
 *     publish succeeds (the unwinder still finds each blob); the dump stays
 *     within the cap, is valid for the reader, holds the first blobs in
 *     order and then none; one warning through the log callback;
 *   - the environment's JITUNWIND_JITDUMP_MAX overrides the option (K/M/G
 *     suffixes), JU_OPT_NO_ENV ignores it, malformed values fail ju_open
 *     with JU_EENV and a message naming the variable.
 */
#include "internal.h"
#include "test-jitdump-reader.h"
#include "unit.h"

#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

const void *_Unwind_Find_FDE(void *pc, void *bases);

static uint8_t *R;
static char dir[64];
static int warnings, cap_warnings;

static void count_warnings(void *arg, int level, const char *msg)
{
	(void)arg;
	if (level == JU_LOG_WARN) {
		warnings++;
		cap_warnings += strstr(msg, "cap") != NULL;
	}
}

static char names[200][16];

static ju_blob blob(size_t i)
{
	snprintf(names[i], sizeof names[i], "cap:%zu", i);
	return (ju_blob){ .sz = sizeof(ju_blob),
			  .start = R + i * 256,
			  .size = 48,
			  .name = names[i],
			  .frame = { .kind = JU_FRAME_LEAF } };
}

static long dump_size(void)
{
	char p[128];
	struct stat st;
	snprintf(p, sizeof p, "%s/jit-%d.dump", dir, (int)getpid());
	return stat(p, &st) ? -1 : (long)st.st_size;
}

/* Publish blobs one at a time and in batches; returns how many the dump
 * holds.  The dump must stay within max bytes. */
static size_t publish_under_cap(uint64_t opt_max, uint64_t max, size_t n)
{
	ju_options o = { .sz = sizeof(ju_options),
			 .channels = JU_CH_UNWINDER | JU_CH_JITDUMP,
			 .flags = JU_OPT_NO_ENV,
			 .jitdump_dir = dir,
			 .log = count_warnings,
			 .jitdump_max_bytes = opt_max };
	ju_ctx *ctx = NULL;
	o.flags = getenv("JITUNWIND_JITDUMP_MAX") ? 0 : JU_OPT_NO_ENV;
	o.channels = JU_CH_UNWINDER | JU_CH_JITDUMP;
	CHECK_RC(ju_open(&o, &ctx), 0);
	if (!ctx)
		return 0;
	warnings = cap_warnings = 0;
	for (size_t i = 0; i < n / 2; i++) {
		ju_blob b = blob(i);
		CHECK_RC(ju_publish(ctx, &b), 0);
		CHECK(dump_size() <= (long)max, "blob %zu: the dump has %ld bytes, cap %llu", i, dump_size(),
		      (unsigned long long)max);
	}
	ju_blob batch[100];
	for (size_t i = n / 2; i < n; i++)
		batch[i - n / 2] = blob(i);
	CHECK_RC(ju_publish_batch(ctx, batch, n - n / 2), 0);
	CHECK(dump_size() <= (long)max, "after the batch: the dump has %ld bytes, cap %llu", dump_size(),
	      (unsigned long long)max);
	void *bases[3];
	for (size_t i = 0; i < n; i++)
		CHECK(_Unwind_Find_FDE(R + i * 256 + 8, bases), "blob %zu is not registered", i);
	CHECK(ju_count(ctx) == n, "%zu published, want %zu", ju_count(ctx), n);
	CHECK(cap_warnings == 1 && warnings == 1, "%d warnings (%d about the cap), want one", warnings,
	      cap_warnings);
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);

	char p[128], err[200];
	snprintf(p, sizeof p, "%s/jit-%d.dump", dir, (int)getpid());
	jd_dump d;
	size_t loads = 0;
	if (jd_dump_read(p, &d, err, sizeof err)) {
		CHECK(0, "%s: %s", p, err);
	} else {
		CHECK(d.closed, "the capped dump does not end with CLOSE");
		CHECK(d.size <= max + sizeof(jd_code_close), "the dump has %zu bytes, cap %llu", d.size,
		      (unsigned long long)max);
		for (size_t i = 0; i < d.n_loads; i++)
			CHECK(!strcmp(d.loads[i].name, names[i]), "load %zu is %s, want %s", i,
			      d.loads[i].name, names[i]);
		loads = d.n_loads;
		jd_dump_free(&d);
	}
	unlink(p);
	return loads;
}

static void cap_stops_the_dump_and_says_so_once(void)
{
	size_t loads = publish_under_cap(8192, 8192, 100);
	CHECK(loads > 5 && loads < 100, "the dump holds %zu of 100 loads", loads);
	printf("a cap of 8 KiB kept %zu of 100 blobs' loads\n", loads);
}

static void environment_sets_the_cap(void)
{
	setenv("JITUNWIND_JITDUMP_MAX", "4K", 1);
	size_t loads = publish_under_cap(1 << 20, 4096, 100); /* the option is overridden */
	CHECK(loads > 0 && loads < 50, "JITUNWIND_JITDUMP_MAX=4K: %zu loads", loads);
	unsetenv("JITUNWIND_JITDUMP_MAX");

	static const char *const bad[] = {
		"0", "-1", "12Q", "K", "1KB", "4 K", "99999999999999999999", "20000000T", "lots"
	};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		setenv("JITUNWIND_JITDUMP_MAX", bad[i], 1);
		ju_options o = { .sz = sizeof(ju_options), .channels = JU_CH_UNWINDER };
		ju_ctx *c = NULL;
		CHECK_RC(ju_open(&o, &c), JU_EENV);
		CHECK(strstr(ju_errmsg(), "JITUNWIND_JITDUMP_MAX"), "%s: message: %s", bad[i], ju_errmsg());
		o.flags = JU_OPT_NO_ENV;
		CHECK_RC(ju_open(&o, &c), 0); /* ignored then */
		if (c)
			ju_close(c);
	}
	static const char *const good[] = { "1", "64k", "3M", "1g", "2T", "unlimited", "" };
	for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
		setenv("JITUNWIND_JITDUMP_MAX", good[i], 1);
		ju_options o = { .sz = sizeof(ju_options), .channels = JU_CH_UNWINDER };
		ju_ctx *c = NULL;
		CHECK_RC(ju_open(&o, &c), 0);
		if (c)
			ju_close(c);
	}
	unsetenv("JITUNWIND_JITDUMP_MAX");
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/test-jitdump-cap.XXXXXX");
	if (!mkdtemp(dir))
		UNIT_SKIP("cannot make a scratch directory");
	R = mmap(NULL, 1 << 16, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsetenv("JITUNWIND");
	unsetenv("JITUNWIND_JITDUMP_MAX");
	cap_stops_the_dump_and_says_so_once();
	environment_sets_the_cap();
	rmdir(dir);
	return unit_done("test-jitdump-cap");
}
