/* SPDX-License-Identifier: MIT */
/* reference.c - the examples' workloads written natively in C, so the
 * example tests compare tinyjit against an independent computation.
 *
 *   reference fib N | ackermann M N | loops N | collatz N | mutual N
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t fib(int64_t n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

static int64_t ack(int64_t m, int64_t n)
{
	if (m == 0)
		return n + 1;
	if (n == 0)
		return ack(m - 1, 1);
	return ack(m - 1, ack(m, n - 1));
}

static int64_t loops(int64_t n)
{
	uint64_t acc = 0;
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < n; j++)
			acc = acc * 31 + (uint64_t)(i ^ j);
	return (int64_t)acc;
}

static int64_t collatz(int64_t n)
{
	int64_t total = 0;
	for (int64_t s = 1; s <= n; s++)
		for (int64_t x = s; x > 1; total++)
			x = x % 2 ? 3 * x + 1 : x / 2;
	return total;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int64_t a = strtoll(argv[2], NULL, 10), b = argc > 3 ? strtoll(argv[3], NULL, 10) : 0;
	const char *w = argv[1];
	int64_t r;
	if (!strcmp(w, "fib"))
		r = fib(a);
	else if (!strcmp(w, "ackermann"))
		r = ack(a, b);
	else if (!strcmp(w, "loops"))
		r = loops(a);
	else if (!strcmp(w, "collatz"))
		r = collatz(a);
	else if (!strcmp(w, "mutual"))
		r = a % 2 == 0;
	else
		return 2;
	printf("%" PRId64 "\n", r);
	return 0;
}
