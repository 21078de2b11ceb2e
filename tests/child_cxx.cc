/* SPDX-License-Identifier: MIT */
// child_cxx.cc - the C++ ends of the child's exception test: thrown in the
// innermost frame, caught near main, crossing every JIT frame in between.
#include <stdexcept>

extern "C" __attribute__((noinline)) void cxx_throw(void)
{
	throw std::runtime_error("thrown in the innermost frame");
}

extern "C" __attribute__((noinline)) int cxx_catch(void (*fn)(void))
{
	try {
		fn();
	} catch (const std::runtime_error &) {
		return 1;
	}
	return 0;
}
