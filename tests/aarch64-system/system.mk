# SPDX-License-Identifier: MIT
# system.mk - the AArch64 system VM (tests/aarch64-system/README.md);
# included by the top-level Makefile after the other fragments.
#
#   make check-aarch64-system   boot Debian arm64 under qemu-system-aarch64
#                               and run there the cells that need a real
#                               kernel (ptrace, perf events, valgrind) and
#                               jitstack's live and record tests; writes
#                               docs/MATRIX-AARCH64.md.  Optional, not part
#                               of make check (its run time is in the README)
#   make aarch64-system-build   only the AArch64 build it runs ($(BUILD)/a64sys)
#
# What needs only the C library (tinyjit, the library's child) is the
# qemu-user build (tinyjit/aarch64.mk, tests/tests.mk); what links
# elfutils, libunwind or protobuf-c (jitstack, the matrix's remote
# unwinders, pprofdump) is cross-built against the VM's own root, which
# vm.sh builds and which serves as the sysroot.  $(BUILD)/a64sys is laid out
# like a build directory, so the matrix and jitstack's tests run in the VM
# as they do here.

A64S_B := $(BUILD)/a64sys
# vm.sh's default cache; the check target passes the one vm.sh prints
A64S_ROOT ?= $(HOME)/.cache/jitunwind/aarch64-system/root
A64S_CC = $(A64_PREFIX)gcc --sysroot=$(A64S_ROOT)
A64S_CFLAGS = -std=c11 -D_GNU_SOURCE $(JS_WARN) -O2 -g -pthread

A64S_JS_OBJS := $(JS_TOOL_SRCS:$(JS)/%.c=$(A64S_B)/obj/jitstack/%.o) $(A64S_B)/obj/profile.pb-c.o \
	$(FMT_SRCS:%.c=$(A64S_B)/obj/jitstack/%.o)
A64S_MX_FMT := $(A64S_B)/obj/fmt/formats/bytes.o $(A64S_B)/obj/fmt/formats/ehframe.o
A64S_BINS := $(A64S_B)/jitstack/jitstack $(A64S_B)/jitstack/tests/pprofdump $(A64S_B)/jitstack/tests/latethread \
	$(A64S_B)/matrix/mx-dwfl $(A64S_B)/matrix/mx-unw-ptrace $(A64S_B)/matrix/mx-fpwalk \
	$(A64S_B)/tinyjit/tinyjit $(A64S_B)/tinyjit/tinyjit-libunwind $(A64S_B)/matrix/tinyjit-llvm \
	$(A64S_B)/matrix/tinyjit-asan $(A64S_B)/matrix/tinyjit-libbacktrace \
	$(A64S_B)/tests/child $(A64S_B)/tools/reaper

$(A64S_B)/obj/jitstack/%.o: $(JS)/%.c $(JS_HDRS) | test-deps
	@mkdir -p $(dir $@)
	$(A64S_CC) $(A64S_CFLAGS) -I$(JS) -I$(JS_B) -I. -c -o $@ $<
$(A64S_B)/obj/jitstack/formats/%.o: formats/%.c $(FMT_HDRS) | test-deps
	@mkdir -p $(dir $@)
	$(A64S_CC) $(A64S_CFLAGS) -I$(JS) -I$(JS_B) -I. -c -o $@ $<
$(A64S_B)/obj/profile.pb-c.o: $(JS_PROTO_C) $(JS_PROTO_H) | test-deps
	@mkdir -p $(dir $@)
	$(A64S_CC) -std=c11 -O2 -g -I$(JS_B) -c -o $@ $<
$(A64S_B)/jitstack/jitstack: $(A64S_JS_OBJS)
	@mkdir -p $(dir $@)
	$(A64S_CC) -o $@ $^ $(JS_LIBS)
$(A64S_B)/jitstack/tests/pprofdump: $(JS)/tests/pprofdump.c $(A64S_B)/obj/profile.pb-c.o $(JS_PROTO_H)
	@mkdir -p $(dir $@)
	$(A64S_CC) -std=gnu11 $(JS_WARN) -O1 -g -I$(JS_B) -o $@ $< $(A64S_B)/obj/profile.pb-c.o -lprotobuf-c -lz

$(A64S_B)/jitstack/tests/latethread: $(JS)/tests/latethread.c | test-deps
	@mkdir -p $(dir $@)
	$(A64S_CC) -std=gnu11 $(JS_WARN) -O1 -g -fno-omit-frame-pointer -o $@ $< -pthread

$(A64S_B)/obj/matrix/%.o: $(MX)/%.c $(MX_HDRS) | test-deps
	@mkdir -p $(dir $@)
	$(A64S_CC) $(A64S_CFLAGS) -I. -I$(MX) -c -o $@ $<
$(A64S_B)/obj/fmt/formats/%.o: formats/%.c $(FMT_HDRS) | test-deps
	@mkdir -p $(dir $@)
	$(A64S_CC) $(A64S_CFLAGS) -I. -c -o $@ $<
$(A64S_B)/matrix/mx-dwfl: $(addprefix $(A64S_B)/obj/matrix/,mx-remote.o remote_dwfl.o jitimages.o) $(A64S_MX_FMT)
	@mkdir -p $(dir $@)
	$(A64S_CC) -o $@ $^ $(MX_DWFL_LIBS)
$(A64S_B)/matrix/mx-unw-ptrace: $(addprefix $(A64S_B)/obj/matrix/,mx-remote.o remote_unw.o jitimages.o) $(A64S_MX_FMT)
	@mkdir -p $(dir $@)
	$(A64S_CC) -o $@ $^ $(MX_UNW_LIBS)
$(A64S_B)/matrix/mx-fpwalk: $(A64S_B)/obj/matrix/mx-fpwalk.o
	@mkdir -p $(dir $@)
	$(A64S_CC) -o $@ $^

$(A64S_B)/tools/reaper: tests/tools/reaper.c | test-deps
	@mkdir -p $(dir $@)
	$(A64S_CC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -o $@ $<
# the qemu-user builds, where a build directory has them
$(A64S_B)/tinyjit/tinyjit: $(TJ_A64_B)/tinyjit
	@mkdir -p $(dir $@)
	cp $< $@
# tinyjit with nongnu libunwind linked in, and with LLVM libunwind ahead of
# libgcc_s (as tinyjit.mk and matrix.mk build them here): its host
# functions compiled against the root's libunwind.h, which gives the probe
# its libunwind modes.
A64S_TJ_OBJS := $(filter-out $(TJ_A64_B)/obj/host/hostfns.o,$(TJ_A64_OBJS)) $(A64S_B)/obj/tinyjit/hostfns.o
$(A64S_B)/obj/tinyjit/hostfns.o: $(TJ)/host/hostfns.c $(TJ_HDRS) | test-deps
	@mkdir -p $(dir $@)
	$(A64S_CC) $(TJ_A64_CFLAGS) -c -o $@ $<
$(A64S_B)/tinyjit/tinyjit-libunwind: $(A64S_TJ_OBJS) $(TJ_A64_LIBJU)
	@mkdir -p $(dir $@)
	$(A64_PREFIX)g++ --sysroot=$(A64S_ROOT) $(A64S_TJ_OBJS) -o $@ $(TJ_A64_LIBJU) -lunwind-aarch64 -lunwind -ldl -pthread
$(A64S_B)/matrix/tinyjit-llvm: $(A64S_TJ_OBJS) $(TJ_A64_LIBJU)
	@mkdir -p $(dir $@)
	$(A64_PREFIX)g++ --sysroot=$(A64S_ROOT) -o $@ -Wl,--no-as-needed $(A64S_ROOT)$(LLVM_LIBUNWIND) -Wl,--as-needed \
		$(A64S_TJ_OBJS) $(TJ_A64_LIBJU) -ldl -pthread
# ... with its host functions under AddressSanitizer (GCC's, the runtime
# from the root's libasan8), and with GCC's libbacktrace (the cross
# compiler's own), as matrix.mk builds them here
$(A64S_B)/obj/tinyjit/asan/hostfns.o: $(TJ)/host/hostfns.c $(TJ_HDRS) | test-deps
	@mkdir -p $(dir $@)
	$(A64S_CC) $(TJ_A64_CFLAGS) $(MX_ASAN) -c -o $@ $<
$(A64S_B)/matrix/tinyjit-asan: $(A64S_B)/obj/tinyjit/asan/hostfns.o $(TJ_A64_LIBJU) $(A64S_TJ_OBJS)
	@mkdir -p $(dir $@)
	$(A64_PREFIX)g++ --sysroot=$(A64S_ROOT) $(MX_ASAN) -o $@ $(filter-out $(A64S_B)/obj/tinyjit/hostfns.o,$(A64S_TJ_OBJS)) \
		$< $(TJ_A64_LIBJU) -ldl -pthread
$(A64S_B)/obj/tinyjit/libbacktrace/hostfns.o: $(TJ)/host/hostfns.c $(TJ_HDRS) | test-deps
	@mkdir -p $(dir $@)
	$(A64S_CC) $(TJ_A64_CFLAGS) -DTJ_LIBBACKTRACE -c -o $@ $<
$(A64S_B)/matrix/tinyjit-libbacktrace: $(A64S_B)/obj/tinyjit/libbacktrace/hostfns.o $(TJ_A64_LIBJU) $(A64S_TJ_OBJS)
	@mkdir -p $(dir $@)
	$(A64_PREFIX)g++ --sysroot=$(A64S_ROOT) -o $@ $(filter-out $(A64S_B)/obj/tinyjit/hostfns.o,$(A64S_TJ_OBJS)) \
		$< $(TJ_A64_LIBJU) -lbacktrace -ldl -pthread
$(A64S_B)/tests/child: $(A64_DIR)/child
	@mkdir -p $(dir $@)
	cp $< $@

.PHONY: check-aarch64-system aarch64-system-build aarch64-system-deps
aarch64-system-deps:
	@sh scripts/install-deps.sh aarch64-system
aarch64-system-build: $(A64S_BINS)

check-aarch64-system: aarch64-system-deps test-deps lib
	@root=$$(sh tests/aarch64-system/vm.sh root) && \
	$(MAKE) --no-print-directory A64S_ROOT="$$root" aarch64-system-build && \
	sh tests/aarch64-system/vm.sh boot tests/aarch64-system/inside.sh
