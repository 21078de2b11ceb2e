# cpython.mk - the CPython integration (integrations/cpython); included by
# the top-level Makefile.
#
#   cpython        CPython 3.13 with its JIT, our patches applied: the
#                  executors published through libjitunwind; $(BUILD)/cpython/dir
#                  names its build directory (the interpreter is its `python`)
#   cpython-stock  the same JIT with only the LLVM 19 patch (nothing
#                  published): the baseline every test must fail on;
#                  $(BUILD)/cpython-stock/dir
#   cpython-fp     cpython with the frame-pointer patch (0004) configured
#                  --with-jit-frame-pointers and the interpreter compiled
#                  with frame pointers: frame-pointer walkers (perf -g,
#                  bpftrace ustack) pass through executors;
#                  $(BUILD)/cpython-fp/dir
#
# All are built once and cached outside the tree (build.sh: about 11
# CPU-minutes each), keyed by the source package and the patches.
# The interpreter is linked against libjitunwind.so of the plain build
# (build/ under SAN=1 too: a sanitized library cannot be loaded into the
# interpreter's own runs during its build) and loads the library of the
# tree it is tested with through LD_LIBRARY_PATH, so a SAN=1 check runs the
# same cached interpreter against the sanitized library.
#
# make check builds them before its traced part (tests/check.sh): CPython's
# configure probes every optional library the machine has (OpenSSL, Tk,
# SQLite, ...) and builds without the ones it lacks, so those files are no
# dependency of the project; what the build needs is in PACKAGES.
#
# SPDX-License-Identifier: MIT

CY := integrations/cpython
CY_FP_PATCH := $(CY)/patches/0004-jit-keep-the-frame-pointer-chain-through-executors.patch
CY_PATCHES := $(filter-out $(CY_FP_PATCH),$(sort $(wildcard $(CY)/patches/*.patch)))
CY_STOCK_PATCHES := $(CY)/patches/0001-jit-build-stencils-with-llvm-19.patch
CY_LINK_BUILD := $(if $(filter 1,$(SAN)),build,$(BUILD))

.PHONY: cpython cpython-stock cpython-fp cpython-link-lib
cpython-link-lib:
	@$(MAKE) --no-print-directory SAN= BUILD=$(CY_LINK_BUILD) lib
cpython: cpython-link-lib
	@sh $(CY)/build.sh $(CY_LINK_BUILD) $(BUILD)/cpython $(CY_PATCHES)
cpython-stock:
	@sh $(CY)/build.sh $(CY_LINK_BUILD) $(BUILD)/cpython-stock $(CY_STOCK_PATCHES)
cpython-fp: cpython-link-lib
	@sh $(CY)/build.sh --frame-pointers $(CY_LINK_BUILD) $(BUILD)/cpython-fp $(CY_PATCHES) $(CY_FP_PATCH)
# The tests also read the process with jitstack (its fragment is included
# after this one).
.PHONY: cpython-check-tools
cpython-check-tools: cpython cpython-stock cpython-fp $(BUILD)/jitstack/jitstack
CHECK_BUILD += cpython-check-tools

# CPython's own test suite with the JIT on, on both builds, and the test
# files and test cases whose results differ (regrtest.sh; README.md,
# "CPython's own tests"); not part of make check.  CY_REGRTEST chooses the
# tests; test_gdb and test_perf_profiler (CY_REGRTEST_HEAVY) run perf and
# gdb, under the lock every run of perf takes.  Results in
# $(BUILD)/regrtest/{cpython,cpython-stock}{,-heavy}.
CY_REGRTEST ?= test_capi.test_opt test_sys_settrace test_generators test_exceptions test_threading test_asyncio
CY_REGRTEST_HEAVY ?= test_gdb test_perf_profiler
CY_RT := sh $(CY)/regrtest.sh -b $(CY_LINK_BUILD)
.PHONY: cpython-regrtest
cpython-regrtest: cpython cpython-stock
	$(CY_RT) cpython $(BUILD)/regrtest/cpython $(CY_REGRTEST)
	$(CY_RT) cpython-stock $(BUILD)/regrtest/cpython-stock $(CY_REGRTEST)
	flock /tmp/ju-heavy.lock $(CY_RT) cpython $(BUILD)/regrtest/cpython-heavy $(CY_REGRTEST_HEAVY)
	flock /tmp/ju-heavy.lock $(CY_RT) cpython-stock $(BUILD)/regrtest/cpython-stock-heavy $(CY_REGRTEST_HEAVY)
	$(CY_RT) compare $(BUILD)/regrtest/cpython $(BUILD)/regrtest/cpython-stock
	$(CY_RT) compare $(BUILD)/regrtest/cpython-heavy $(BUILD)/regrtest/cpython-stock-heavy
