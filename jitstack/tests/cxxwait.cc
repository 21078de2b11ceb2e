/* SPDX-License-Identifier: MIT */
// cxxwait.cc - a C++ program whose stack holds mangled names: it prints
// "ready" from inside ns::Worker::wait_here(int) and waits there (or
// records, with "spin", a hot loop in ns::Worker::spin_here(long)).
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace ns
{
struct Worker {
	__attribute__((noinline)) int wait_here(int depth);
	__attribute__((noinline)) long spin_here(long n);
};

int Worker::wait_here(int depth)
{
	if (depth > 0)
		return wait_here(depth - 1) + 1;
	std::printf("ready %d\n", (int)getpid());
	std::fflush(stdout);
	for (;;)
		pause();
}

long Worker::spin_here(long n)
{
	volatile long x = 0;
	for (long i = 0; i < n; i++)
		x = x + i;
	return x;
}
} // namespace ns

int main(int argc, char **argv)
{
	ns::Worker w;
	if (argc > 1 && !std::strcmp(argv[1], "spin")) {
		std::printf("ready %d\n", (int)getpid());
		std::fflush(stdout);
		for (;;)
			w.spin_here(100000000);
	}
	return w.wait_here(2);
}
