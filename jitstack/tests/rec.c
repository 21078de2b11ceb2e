/* SPDX-License-Identifier: MIT */
/* rec.c - the workload of the LLVM JIT tests: run by lli-19 from IR
 * (clang-19 -g -O0 -S -emit-llvm), main calls recurse(5), which calls
 * itself down to leaf, which says it is ready and spins.  The marked lines
 * are the frames' expected lines (grep -n on the markers). */
#include <stdio.h>
#include <unistd.h>

volatile int sink;

void leaf(void)
{
	printf("ready %d\n", (int)getpid());
	fflush(NULL);
	/* one line, so that every pc of the loop has it */
	/* clang-format off */
	for (;;) sink++; /* line: leaf */
	/* clang-format on */
}

void recurse(int n)
{
	if (n == 0)
		leaf(); /* line: recurse calls leaf */
	else
		recurse(n - 1); /* line: recurse calls recurse */
	sink++;
}

int main(void)
{
	recurse(5); /* line: main */
	return 0;
}
