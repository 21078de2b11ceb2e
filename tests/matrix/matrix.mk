# SPDX-License-Identifier: MIT
# matrix.mk - the unwind matrix (tests/matrix); included by the top-level
# Makefile after tinyjit.mk.
#
#   make matrix         every unwinder x every mode, the LuaJIT and CPython
#                       blocks; writes docs/MATRIX.md and $(BUILD)/matrix/matrix.json,
#                       prints the tables
#   make matrix-quick   the quick form `make demo` runs (under a minute)
#   make matrix-check   the form `make check` runs: an unexpected FAIL or an
#                       unexpected PASS fails it
#   make matrix-bench   each unwinder's cost on the probe's stack ->
#                       tests/matrix/BENCH.md
#
# MATRIX_ARGS passes options to tests/matrix/matrix.py (--help lists them),
# e.g. MATRIX_ARGS='--only gdb --keep'.

MX_B := $(BUILD)/matrix
MX := tests/matrix
MX_CFLAGS = $(ALL_CFLAGS) -I. -I$(MX)
MX_DWFL_LIBS := -ldw -lelf
MX_UNW_LIBS := -lunwind-ptrace -lunwind-generic -lelf
MX_HDRS := $(MX)/remote.h $(MX)/jitimages.h $(MX)/tracee.h $(FMT_HDRS)

# jitimages.o reads .eh_frame with formats/ (bytes, ehframe).
MX_FMT_OBJS := $(MX_B)/formats/bytes.o $(MX_B)/formats/ehframe.o
MX_TOOLS := $(MX_B)/mx-dwfl $(MX_B)/mx-unw-ptrace $(MX_B)/mx-fpwalk \
	$(MX_B)/mx-step-dwfl $(MX_B)/mx-step-unw-ptrace
# The workloads: tinyjit three ways (libgcc; nongnu libunwind linked in; LLVM
# libunwind linked ahead of libgcc_s) and the library's test children.
MX_WORKLOADS := $(TJ_BIN) $(TJ_B)/tinyjit-libunwind $(TEST_DIR)/child $(TEST_DIR)/child-nongnu \
	$(MX_B)/tinyjit-asan $(MX_B)/tinyjit-libbacktrace $(MX_B)/child-asan $(MX_B)/child-libbacktrace
ifneq ($(wildcard $(LLVM_LIBUNWIND)),)
MX_WORKLOADS += $(MX_B)/tinyjit-llvm $(TEST_DIR)/child-llvm
endif

$(MX_B)/%.o: $(MX)/%.c $(MX_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(MX_CFLAGS) -c -o $@ $<

$(MX_B)/formats/%.o: formats/%.c $(FMT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(MX_CFLAGS) -c -o $@ $<

$(MX_B)/mx-dwfl: $(MX_B)/mx-remote.o $(MX_B)/remote_dwfl.o $(MX_B)/jitimages.o $(MX_FMT_OBJS)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(MX_DWFL_LIBS)
$(MX_B)/mx-unw-ptrace: $(MX_B)/mx-remote.o $(MX_B)/remote_unw.o $(MX_B)/jitimages.o $(MX_FMT_OBJS)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(MX_UNW_LIBS)
$(MX_B)/mx-step-dwfl: $(MX_B)/mx-step.o $(MX_B)/remote_dwfl.o $(MX_B)/jitimages.o $(MX_FMT_OBJS)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(MX_DWFL_LIBS)
$(MX_B)/mx-step-unw-ptrace: $(MX_B)/mx-step.o $(MX_B)/remote_unw.o $(MX_B)/jitimages.o $(MX_FMT_OBJS)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(MX_UNW_LIBS)
$(MX_B)/mx-fpwalk: $(MX_B)/mx-fpwalk.o
	$(CC) $(ALL_CFLAGS) -o $@ $^

# tinyjit with LLVM libunwind first in the link, so _Unwind_Backtrace (probe
# mode 6) is LLVM's, as child-llvm does for the test child.
$(MX_B)/tinyjit-llvm: $(TJ_OBJS) $(TJ_LIBJU_DEP)
	@mkdir -p $(dir $@)
	$(CXX) $(CFLAGS) $(SANFLAGS) -o $@ -Wl,--no-as-needed $(LLVM_LIBUNWIND) -Wl,--as-needed \
		$(TJ_OBJS) $(TJ_LINK_LIBJU)

# tinyjit whose host functions run under AddressSanitizer: probe mode 11's
# use-after-free happens in C code called from JIT code (the JIT code and
# the rest of tinyjit are not instrumented, as in a JIT embedded in a
# sanitized program).
MX_ASAN := -fsanitize=address -fno-omit-frame-pointer
$(MX_B)/asan/hostfns.o: $(TJ)/host/hostfns.c $(TJ_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(TJ_RT_CFLAGS) $(MX_ASAN) -c -o $@ $<
$(MX_B)/tinyjit-asan: $(TJ_OBJS) $(MX_B)/asan/hostfns.o $(TJ_LIBJU_DEP)
	$(CXX) $(CFLAGS) $(MX_ASAN) -o $@ $(filter-out $(TJ_B)/obj/host/hostfns.o,$(TJ_OBJS)) \
		$(MX_B)/asan/hostfns.o $(TJ_LINK_LIBJU)

# tinyjit with GCC's libbacktrace (libgcc-12-dev ships it, with backtrace.h
# in the compiler's own include directory): probe mode 13.
$(MX_B)/libbacktrace/hostfns.o: $(TJ)/host/hostfns.c $(TJ_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(TJ_RT_CFLAGS) -DTJ_LIBBACKTRACE -c -o $@ $<
$(MX_B)/tinyjit-libbacktrace: $(TJ_OBJS) $(MX_B)/libbacktrace/hostfns.o $(TJ_LIBJU_DEP)
	$(CXX) $(CFLAGS) $(SANFLAGS) -o $@ $(filter-out $(TJ_B)/obj/host/hostfns.o,$(TJ_OBJS)) \
		$(MX_B)/libbacktrace/hostfns.o $(TJ_LINK_LIBJU) -lbacktrace

# The library's test child the same two ways (actions uaf, libbacktrace).
$(MX_B)/child-asan: tests/child.c tests/unwind_pcs.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CHILD_CFLAGS) $(MX_ASAN) -DCHILD_ASAN $(CHILD_LDFLAGS) -o $@ $< $(LIB_A) -ldl -pthread
$(MX_B)/child-libbacktrace: tests/child.c tests/unwind_pcs.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CHILD_CFLAGS) -DCHILD_LIBBACKTRACE $(CHILD_LDFLAGS) -o $@ $< $(LIB_A) -lbacktrace -ldl -pthread

MX_RUN = python3 $(MX)/matrix.py --build $(BUILD)

.PHONY: matrix matrix-quick matrix-check matrix-bench matrix-tools
# jitstack's cells run whenever its fragment is part of the build.
# The AArch64 columns run tinyjit's cross build under qemu-user (mxaarch64.py);
# the LuaJIT block the module and the workloads' C side (luajit.mk); the
# CPython block the interpreters of make cpython, cpython-stock and
# cpython-fp (cpython.mk: make check builds them; the block skips without
# them) and builds its probe, a C extension, against each itself.
matrix-tools: lib $(MX_TOOLS) $(MX_WORKLOADS) $(JS_BIN) $(TJ_A64_B)/tinyjit $(LJ_MOD) $(LJ_PROBE)

# A run narrowed by MATRIX_ARGS leaves docs/MATRIX.md as it is: the doc
# is the whole matrix's.
matrix: test-deps matrix-tools
	$(MX_RUN) --form full --selftest $(if $(MATRIX_ARGS),,--write-doc docs/MATRIX.md) $(MATRIX_ARGS)

matrix-quick: matrix-tools
	@$(MX_RUN) --form quick $(MATRIX_ARGS)

# The form `make check` runs: tests/run.sh matrix (tests/matrix/check.sh,
# which skips under SAN=1).
ifneq ($(SAN),1)
CHECK_BUILD += matrix-tools
endif
matrix-check: $(if $(filter 1,$(SAN)),,matrix-tools)
	@sh tests/run.sh -b $(BUILD) matrix

matrix-bench: test-deps matrix-tools
	$(MX_RUN) --bench $(MX)/BENCH.md $(MATRIX_ARGS)

