/* SPDX-License-Identifier: MIT */
/* inl.c - the workload of the inline-frame tests: main calls outer, which
 * calls mid, which calls leaf; mid and leaf are always inlined, so one
 * physical frame (outer's) holds three functions.  lli-19 runs it from
 * clang-19 -O1 -g IR; it is also compiled natively with -O2 -g.  leaf
 * waits in pause(), or with the argument "spin" spins (a hot frame for
 * record).  n comes from argc, so that no compiler makes a constant clone
 * of outer.  The marked lines are the frames' expected lines (grep -n on
 * the markers). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

volatile int sink;
static int spin;

static inline __attribute__((always_inline)) void leaf(int n)
{
	/* one line, so that every pc of the loop has it */
	/* clang-format off */
	for (;;) if (spin) sink += n; else pause(); /* line: leaf */
	/* clang-format on */
}

static inline __attribute__((always_inline)) void mid(int n)
{
	leaf(n + 1); /* line: mid calls leaf */
}

__attribute__((noinline)) void outer(int n)
{
	mid(n + 3); /* line: outer calls mid */
}

int main(int argc, char **argv)
{
	spin = argc > 1 && !strcmp(argv[1], "spin");
	printf("ready %d\n", (int)getpid());
	fflush(NULL);
	outer(argc + 2); /* line: main calls outer */
	return 0;
}
