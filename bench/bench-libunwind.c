/* SPDX-License-Identifier: MIT */
/* bench-libunwind.c - what the libunwind channel costs nongnu libunwind's
 * lookups, in one run:
 *   - a lookup (unw_get_proc_info_by_ip) of a pc in an arena published
 *     first, so at the tail of libunwind's list, with no replaced entry
 *     waiting, then right after a burst of single publishes has left the
 *     most replaced entries waiting in front of it (ch_libunwind.c,
 *     DEFER_MAX), and the ratio of the two;
 *   - single publish + unpublish at random in a 256-slot region (the churn
 *     of tests/unit/test-threads.c), per call.
 * libunwind.so.8 is loaded at run time, as the library itself finds it.
 */

#include "jitunwind.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#if defined(__x86_64__) && __has_include(<libunwind.h>)
#define UNW_LOCAL_ONLY
#include <libunwind.h>

enum { SLOT = 64, N_CHURN_SLOTS = 256, N_BURST = 600, N_LOOKUPS = 200000, N_CHURN = 100000 };

static int (*by_ip)(unw_addr_space_t, unw_word_t, unw_proc_info_t *, void *);
static unw_addr_space_t *local_as;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int publish(ju_ctx *c, uint8_t *at)
{
	ju_blob b = { .sz = sizeof(ju_blob),
		      .start = at,
		      .size = 32,
		      .name = "bench",
		      .frame = { .kind = JU_FRAME_LEAF } };
	int rc = ju_publish(c, &b);
	if (rc)
		fprintf(stderr, "ju_publish: %s\n", ju_errmsg());
	return rc;
}

/* ns per lookup of pc; -1 if libunwind does not find it every time.
 * (`phase` only keeps the compiler from folding the two callers into one.) */
static double lookup_ns(uint8_t *pc, int phase)
{
	(void)phase;
	unw_proc_info_t pi;
	int found = 0;
	double t0 = now();
	for (int k = 0; k < N_LOOKUPS; k++)
		found += by_ip(*local_as, (unw_word_t)(uintptr_t)pc, &pi, NULL) == 0;
	double t = now() - t0;
	return found == N_LOOKUPS ? t / N_LOOKUPS * 1e9 : -1;
}

/* Two names, so that callgrind counts each apart:
 *   valgrind --tool=callgrind --callgrind-out-file=cg.out build/bench/bench-libunwind
 *   callgrind_annotate --inclusive=yes cg.out | grep lookups_ */
__attribute__((noinline)) static double lookups_quiet(uint8_t *pc)
{
	return lookup_ns(pc, 0);
}

__attribute__((noinline)) static double lookups_after_burst(uint8_t *pc)
{
	return lookup_ns(pc, 1);
}

int main(void)
{
	if (!dlopen("libunwind.so.8", RTLD_NOW | RTLD_GLOBAL)) {
		printf("bench-libunwind: skipped: libunwind.so.8 is not loadable (%s)\n", dlerror());
		return 0;
	}
	by_ip = (int (*)(unw_addr_space_t, unw_word_t, unw_proc_info_t *, void *))dlsym(
		RTLD_DEFAULT, "_ULx86_64_get_proc_info_by_ip");
	local_as = dlsym(RTLD_DEFAULT, "_ULx86_64_local_addr_space");
	if (!by_ip || !local_as) {
		printf("bench-libunwind: skipped: no x86-64 unw_get_proc_info_by_ip\n");
		return 0;
	}
	size_t len = 1 << 20;
	uint8_t *code = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	ju_options o = { .sz = sizeof(ju_options), .channels = JU_CH_LIBUNWIND, .flags = JU_OPT_NO_ENV };
	ju_ctx *c;
	if (ju_open(&o, &c)) {
		fprintf(stderr, "ju_open: %s\n", ju_errmsg());
		return 1;
	}
	uint8_t *old = code, *burst = code + (256 << 10), *churn = code + (512 << 10);
	if (publish(c, old))
		return 1;
	double quiet = lookups_quiet(old + 4);
	for (int i = 0; i < N_BURST; i++)
		if (publish(c, burst + i * SLOT))
			return 1;
	double after = lookups_after_burst(old + 4);
	if (quiet < 0 || after < 0) {
		fprintf(stderr, "libunwind does not find the first blob\n");
		return 1;
	}
	printf("lookup of a pc at the tail of the list:  %6.0f ns quiet, %6.0f ns after %d single "
	       "publishes (%.2fx)\n",
	       quiet, after, N_BURST, after / quiet);

	bool published[N_CHURN_SLOTS] = { false };
	uint64_t seed = 88172645463325252ull;
	double t0 = now();
	for (int k = 0; k < N_CHURN; k++) {
		size_t i = next_rand(&seed) % N_CHURN_SLOTS;
		if (published[i]) {
			if (ju_unpublish(c, churn + i * SLOT)) {
				fprintf(stderr, "ju_unpublish: %s\n", ju_errmsg());
				return 1;
			}
		} else if (publish(c, churn + i * SLOT)) {
			return 1;
		}
		published[i] = !published[i];
	}
	printf("churn, single publish or unpublish at random in %d slots: %6.2f us per call\n", N_CHURN_SLOTS,
	       (now() - t0) / N_CHURN * 1e6);
	ju_unpublish_all(c);
	ju_close(c);
	return 0;
}
#else
int main(void)
{
	printf("bench-libunwind: skipped: built without libunwind.h, or not for x86-64\n");
	return 0;
}
#endif
