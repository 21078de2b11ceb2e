/* SPDX-License-Identifier: MIT */
/* unit.h - the few macros the C unit tests share, and jitstack's reader
 * checks (jitstack/tests: jitdump_check.c, perfmap_check.c) with them.
 *
 * A unit program runs its checks, prints one line per failed check and a
 * summary, and exits 0 (all passed), 1 (a check failed) or 77 (cannot run
 * here, reason printed).
 */
#ifndef JU_UNIT_H
#define JU_UNIT_H

#include <stdio.h>
#include <stdlib.h>

static int unit_failures, unit_checks;

#define CHECK(cond, ...)                                                                                     \
	do {                                                                                                 \
		unit_checks++;                                                                               \
		if (!(cond)) {                                                                               \
			unit_failures++;                                                                     \
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                               \
			printf(__VA_ARGS__);                                                                 \
			printf("\n");                                                                        \
		}                                                                                            \
	} while (0)

/* Check that a library call returned `want`, printing its message if not. */
#define CHECK_RC(call, want)                                                                                 \
	do {                                                                                                 \
		int rc_ = (call);                                                                            \
		CHECK(rc_ == (want), "%s returned %d (%s: %s), want %d", #call, rc_, ju_strerror(rc_),       \
		      ju_errmsg(), (want));                                                                  \
	} while (0)

#define UNIT_SKIP(...)                                                                                       \
	do {                                                                                                 \
		printf("skip: ");                                                                            \
		printf(__VA_ARGS__);                                                                         \
		printf("\n");                                                                                \
		exit(77);                                                                                    \
	} while (0)

static inline int unit_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, unit_checks, unit_failures);
	return unit_failures ? 1 : 0;
}

#endif
