/* SPDX-License-Identifier: MIT */
// cxx.cc - the C++ part of the tinyjit host (run time).
//
// probe(4) throws tj_probe_exception at the bottom of a stack of C, shim and
// JIT frames; tj_cxx_guard, just above main, catches it.  The exception
// reaches the catch only if libgcc's unwinder can step through every JIT
// frame, i.e. only if the code was published with correct CFI.
#include <cstdio>
#include <stdexcept>

#include "host.h"

namespace
{
struct tj_probe_exception : std::runtime_error {
	long long mode;
	explicit tj_probe_exception(long long m) : std::runtime_error("tinyjit probe exception"), mode(m)
	{
	}
};
} // namespace

extern "C" void tj_cxx_throw(long long mode)
{
	throw tj_probe_exception(mode);
}

extern "C" int tj_cxx_guard(int (*body)(void *), void *arg)
{
	try {
		return body(arg);
	} catch (const tj_probe_exception &e) {
		std::printf("tinyjit probe: caught C++ exception '%s' (mode %lld) near main\n", e.what(),
			    e.mode);
		std::fflush(stdout);
		return TJ_CAUGHT;
	}
}
