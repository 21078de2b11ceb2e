/* SPDX-License-Identifier: MIT */
/* hostilestack.c - a thread that spins with its stack and frame pointers
 * in a buffer of lies: frame-pointer links that go round in a cycle,
 * "return addresses" into the middle of its own code, into data and at
 * random.  An unwinder given such a stack must end, and soon.  Prints
 * "ready PID" and spins until killed.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, used))
enum { WORDS = 4096, TOP = 1024, CYCLE = 512 };

static uint64_t junk[WORDS];

/* rsp and rbp into junk for a while, then back: no call, no signal is
 * taken meanwhile (a handler would run on the lies). */
NOINLINE static void hostile_spin(void)
{
	__asm__ volatile("mov %%rsp, %%r12\n\t"
			 "mov %%rbp, %%r13\n\t"
			 "lea %0, %%rsp\n\t"
			 "mov %%rsp, %%rbp\n\t"
			 "mov $200000000, %%rcx\n"
			 "1:\n\t"
			 "dec %%rcx\n\t"
			 "jnz 1b\n\t"
			 "mov %%r12, %%rsp\n\t"
			 "mov %%r13, %%rbp\n\t"
			 :
			 : "m"(junk[TOP])
			 : "rcx", "r12", "r13", "memory");
}

static void fill(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (int i = TOP; i < WORDS; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		if (i % 2 == 0) /* saved rbp: the next pair, round a cycle */
			junk[i] = (uint64_t)(uintptr_t)&junk[TOP + (i - TOP + 2) % CYCLE];
		else if (i % 6 == 1)
			junk[i] = (uint64_t)(uintptr_t)hostile_spin + 5; /* inside its own code */
		else if (i % 6 == 3)
			junk[i] = (uint64_t)(uintptr_t)&junk[i]; /* data */
		else
			junk[i] = x;
	}
}

int main(void)
{
	fill();
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		hostile_spin();
}
