# SPDX-License-Identifier: MIT
# tests.mk - test programs (included by the top-level Makefile).

TEST_DIR := $(BUILD)/tests
# The child keeps frame pointers in its C frames (frame-pointer walkers must
# get through them) and exports its symbols so it can find its own extents.
CHILD_CFLAGS := $(ALL_CFLAGS) -O1 -fno-omit-frame-pointer -fexceptions -Iinclude
CHILD_LDFLAGS := -rdynamic $(SANFLAGS)
LLVM_LIBUNWIND := /usr/lib/llvm-14/lib/libunwind.so.1

UNIT_SRCS := $(sort $(wildcard tests/unit/*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(TEST_DIR)/%)

TEST_BINS := $(TEST_DIR)/child $(TEST_DIR)/child-nongnu $(TEST_DIR)/child-llvm $(TEST_DIR)/two-jits \
	$(TEST_DIR)/two-jits-shared $(TEST_DIR)/child-static-libgcc $(TEST_DIR)/fp-saved-regs \
	$(TEST_DIR)/reuse-child $(TEST_DIR)/reuse-spin $(TEST_DIR)/guest-child $(TEST_DIR)/personality \
	$(UNIT_BINS)
# AddressSanitizer has no static runtime: no -static child under SAN.
ifneq ($(SAN),1)
TEST_BINS += $(TEST_DIR)/child-static
endif

.PHONY: tests
tests: $(TEST_BINS)

$(TEST_DIR)/child: tests/child.c tests/unwind_pcs.h tests/child_cxx.cc $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CHILD_CFLAGS) -DCHILD_CXX -c -o $@.o tests/child.c
	$(CXX) -O1 -g -fno-omit-frame-pointer $(SANFLAGS) -c -o $@-cxx.o tests/child_cxx.cc
	$(CXX) $(CHILD_LDFLAGS) -o $@ $@.o $@-cxx.o $(LIB_A) -ldl -pthread

# Static links with the archive: the program's own copy of libgcc's unwinder
# (-static-libgcc -static-libstdc++: its exceptions use that copy, glibc's
# backtrace() the libgcc_s it loads), and everything static (one copy for
# both).
$(TEST_DIR)/child-static-libgcc: tests/child.c tests/unwind_pcs.h tests/child_cxx.cc $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CHILD_CFLAGS) -DCHILD_CXX -c -o $@.o tests/child.c
	$(CXX) -O1 -g -fno-omit-frame-pointer $(SANFLAGS) -c -o $@-cxx.o tests/child_cxx.cc
	$(CXX) -static-libgcc -static-libstdc++ $(CHILD_LDFLAGS) -o $@ $@.o $@-cxx.o $(LIB_A) -ldl -pthread

$(TEST_DIR)/child-static: tests/child.c tests/unwind_pcs.h tests/child_cxx.cc $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CHILD_CFLAGS) -DCHILD_CXX -DCHILD_STATIC -c -o $@.o tests/child.c
	$(CXX) -O1 -g -fno-omit-frame-pointer -c -o $@-cxx.o tests/child_cxx.cc
	$(CXX) -static -o $@ $@.o $@-cxx.o $(LIB_A) -ldl -pthread 2>&1 | \
		{ grep -v "statically linked applications requires at runtime\|in function" || true; }
	@test -x $@

# JIT code freed and its addresses reused (the stale-name tests).
$(TEST_DIR)/reuse-child: tests/reuse_child.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CHILD_CFLAGS) $(CHILD_LDFLAGS) -o $@ $< $(LIB_A) -ldl -pthread

$(TEST_DIR)/reuse-spin: tests/reuse_spin.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CHILD_CFLAGS) $(CHILD_LDFLAGS) -o $@ $< $(LIB_A) -ldl -pthread

# A blob with guest frames (inlined guest functions), for the debuggers.
$(TEST_DIR)/guest-child: tests/guest_child.c $(LIB_A) $(FMT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CHILD_CFLAGS) -I. $(CHILD_LDFLAGS) -o $@ $< $(LIB_A) -ldl -pthread

# A JIT frame that saves callee-saved registers, a C++ exception across it.
$(TEST_DIR)/fp-saved-regs: tests/fp_saved_regs.cc $(LIB_A)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -g $(WARN) $(SANFLAGS) -Iinclude -o $@ $< $(LIB_A) -ldl -pthread

# JIT frames with personality routines and LSDAs, C++ exceptions through them.
$(TEST_DIR)/personality: tests/personality.cc $(LIB_A) $(FMT_HDRS)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -g $(WARN) $(SANFLAGS) -Iinclude -I. -o $@ $< $(LIB_A) -ldl -pthread

# nongnu libunwind, linked in: memray and heaptrack do the same.
$(TEST_DIR)/child-nongnu: tests/child.c tests/unwind_pcs.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CHILD_CFLAGS) -DCHILD_NONGNU $(CHILD_LDFLAGS) -o $@ $< $(LIB_A) -lunwind -ldl -pthread

# The static library beside a second JIT that defines the GDB JIT interface
# itself (strong symbols, as LLVM ORC does); the second JIT compiles its own
# copy of the byte and ELF header writers (the archive keeps its copy local).
$(TEST_DIR)/two-jits: tests/two_jits.c tests/second_jit.c tests/second_jit.h $(LIB_A) $(FMT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iinclude -I. -Itests $(CHILD_LDFLAGS) -o $@ tests/two_jits.c tests/second_jit.c \
		formats/bytes.c formats/elfhdr.c $(LIB_A) -ldl -pthread

$(TEST_DIR)/two-jits-shared: tests/two_jits.c tests/second_jit.c tests/second_jit.h $(LIB_SO) $(FMT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iinclude -I. -Itests -DSECOND_JIT_NO_DESCRIPTOR $(CHILD_LDFLAGS) -o $@ \
		tests/two_jits.c tests/second_jit.c formats/bytes.c formats/elfhdr.c -L$(BUILD) \
		-Wl,-rpath,$(abspath $(BUILD)) -ljitunwind -ldl -pthread

# LLVM libunwind linked ahead of libgcc_s, so _Unwind_Backtrace is LLVM's.
$(TEST_DIR)/child-llvm: tests/child.c tests/unwind_pcs.h $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CHILD_CFLAGS) $(CHILD_LDFLAGS) -o $@ $< -Wl,--no-as-needed $(LLVM_LIBUNWIND) \
		-Wl,--as-needed $(LIB_A) -ldl -pthread

$(TEST_DIR)/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(FMT_HDRS) $(LIB_INTERNAL)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iinclude -Isrc -I. -Itests/unit -o $@ $< $(LIB_INTERNAL) -ldw -lelf -ldl -pthread

# The signal test's handler unwinds with nongnu libunwind too.
$(TEST_DIR)/test-signal-unwinding: tests/unit/test-signal-unwinding.c tests/unit/unit.h $(LIB_INTERNAL)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iinclude -Isrc -I. -Itests/unit -o $@ $< $(LIB_INTERNAL) -lunwind -ldl -pthread

# The library's own allocations come to the test's wrappers.
WRAP_ALLOC := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=mmap
$(TEST_DIR)/test-allocations-ask-the-fault-injector: tests/unit/test-allocations-ask-the-fault-injector.c \
		tests/unit/unit.h $(LIB_INTERNAL)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iinclude -Isrc -I. -Itests/unit -o $@ $< $(WRAP_ALLOC) $(LIB_INTERNAL) \
		-ldl -pthread

# GDB JIT interface tests that need the shared library's dynamic linking
# (the host's __jit_debug_* symbols interpose the library's): linked with
# libjitunwind.so rather than the internal archive.
GDB_SO_TESTS := $(TEST_DIR)/test-gdb-interposed $(TEST_DIR)/test-gdb-foreign-descriptor \
	$(TEST_DIR)/test-gdb-copy-relocation
$(GDB_SO_TESTS): $(TEST_DIR)/%: tests/unit/%.c tests/unit/unit.h tests/unit/test-gdb-reader.h $(LIB_SO)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iinclude -Isrc -I. -Itests/unit -o $@ $< -L$(BUILD) \
		-Wl,-rpath,$(abspath $(BUILD)) -ljitunwind -lelf -ldl -pthread
# A second JIT writing the library's own descriptor: its references bound to
# libjitunwind.so's definition.
$(TEST_DIR)/test-gdb-foreign-writer-is-flagged: tests/unit/test-gdb-foreign-writer-is-flagged.c \
		tests/unit/unit.h tests/unit/test-gdb-reader.h tests/second_jit.c tests/second_jit.h $(LIB_SO)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iinclude -Isrc -I. -Itests -Itests/unit -DSECOND_JIT_NO_DESCRIPTOR -o $@ $< \
		tests/second_jit.c formats/bytes.c formats/elfhdr.c -L$(BUILD) -Wl,-rpath,$(abspath $(BUILD)) \
		-ljitunwind -lelf -ldl -pthread
$(TEST_DIR)/test-gdb-descriptor: tests/unit/test-gdb-reader.h
$(TEST_DIR)/test-threads: tests/unwind_pcs.h
# Two copies of the library in one process: the archive linked in (exporting
# only the GDB symbols, as a library built with it would) and the shared one
# dlopened by path.
$(TEST_DIR)/test-gdb-two-copies: tests/unit/test-gdb-two-copies.c tests/unit/unit.h \
		tests/unit/test-gdb-reader.h $(LIB_A) $(LIB_SO)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iinclude -Isrc -I. -Itests/unit -DJU_SO_PATH='"$(abspath $(LIB_SO)).$(SOVER)"' \
		-o $@ $< $(LIB_A) -Wl,--export-dynamic-symbol=__jit_debug_descriptor \
		-Wl,--export-dynamic-symbol=__jit_debug_register_code -lelf -ldl -pthread

# AArch64: the library and the child cross-built and run under qemu-user
# (t-aarch64-*.sh), without sanitizers.  The cross compiler comes with the
# test packages, hence the order-only test-deps.
A64_DIR    := $(BUILD)/aarch64
A64_PREFIX ?= aarch64-linux-gnu-
A64_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -pthread
A64_OBJS   := $(patsubst %.c,$(A64_DIR)/obj/%.o,$(LIB_SRCS:src/%=%))

.PHONY: tests-aarch64
tests-aarch64: $(A64_DIR)/child $(A64_DIR)/personality
tests: tests-aarch64

$(A64_DIR)/obj/%.o: src/%.c $(wildcard src/*.h) $(FMT_HDRS) include/jitunwind.h | test-deps
	@mkdir -p $(dir $@)
	$(A64_PREFIX)gcc $(A64_CFLAGS) -fPIC -fvisibility=hidden -Iinclude -Isrc -I. -c -o $@ $<

$(A64_DIR)/obj/formats/%.o: formats/%.c $(FMT_HDRS) | test-deps
	@mkdir -p $(dir $@)
	$(A64_PREFIX)gcc $(A64_CFLAGS) -fPIC -fvisibility=hidden -I. -DBYTES_REALLOC=ju__realloc -c -o $@ $<

$(A64_DIR)/libjitunwind.a: $(A64_OBJS)
	rm -f $@
	$(A64_PREFIX)ar rcs $@ $^

$(A64_DIR)/child: tests/child.c tests/unwind_pcs.h tests/child_cxx.cc $(A64_DIR)/libjitunwind.a
	$(A64_PREFIX)gcc $(A64_CFLAGS) -O1 -fno-omit-frame-pointer -fexceptions -Iinclude -DCHILD_CXX \
		-c -o $@.o tests/child.c
	$(A64_PREFIX)g++ -O1 -g -fno-omit-frame-pointer -c -o $@-cxx.o tests/child_cxx.cc
	$(A64_PREFIX)g++ -rdynamic -o $@ $@.o $@-cxx.o $(A64_DIR)/libjitunwind.a -ldl -pthread

# tests/personality.cc's AArch64 blobs: their personality CIEs and LSDAs.
$(A64_DIR)/personality: tests/personality.cc $(A64_DIR)/libjitunwind.a $(FMT_HDRS)
	$(A64_PREFIX)g++ -std=c++17 -O2 -g $(WARN) -Iinclude -I. -o $@ $< $(A64_DIR)/libjitunwind.a -ldl -pthread

# Longer runs of the concurrency tests: `make stress` (JU_CHURN_SECONDS and
# JU_SIGNAL_SECONDS, default 600; `make check` runs them for 3 s and for
# 60 + 20 s).
.PHONY: stress
stress: $(TEST_DIR)/test-churn-under-unwinding $(TEST_DIR)/test-signal-unwinding
	JU_CHURN_SECONDS=$${JU_CHURN_SECONDS:-600} $(TEST_DIR)/test-churn-under-unwinding
	JU_SIGNAL_SECONDS=$${JU_SIGNAL_SECONDS:-600} $(TEST_DIR)/test-signal-unwinding

# The API fuzzer (libFuzzer, clang-19, ASan + UBSan): the library's sources
# built in, a model of what must be published (tests/fuzz_api.c).  `make
# check` runs it 20 s (t-api-fuzz-smoke); `make fuzz` LIB_FUZZ_TIME seconds.
LIB_FUZZ_TIME ?= 300
FUZZ_API := $(TEST_DIR)/fuzz-api
$(FUZZ_API): tests/fuzz_api.c $(LIB_SRCS) $(wildcard src/*.h) $(FMT_HDRS) include/jitunwind.h \
		tests/fuzz-api.coverage-ignore
	@mkdir -p $(dir $@)
	$(CLANG) -std=gnu11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -fsanitize=fuzzer,address,undefined \
		-fsanitize-coverage-ignorelist=tests/fuzz-api.coverage-ignore \
		-fno-sanitize-recover=undefined -Iinclude -Isrc -I. -o $@ tests/fuzz_api.c $(LIB_SRCS) -ldl -pthread
CHECK_BUILD += $(FUZZ_API)

.PHONY: fuzz-lib
fuzz-lib: $(FUZZ_API)
	@mkdir -p $(TEST_DIR)/fuzz-api-corpus
	$(FUZZ_API) -max_total_time=$(LIB_FUZZ_TIME) -rss_limit_mb=4096 -artifact_prefix=$(TEST_DIR)/ \
		$(TEST_DIR)/fuzz-api-corpus

# A JIT built against the 0.1 header and linked as a 0.1 binary was
# (against a library of 0.1's soname without symbol versions), to be run
# against this tree's library (tests/abi/old_client.c).
ABI_DIR := $(TEST_DIR)/abi
$(ABI_DIR)/stub/libjitunwind.so: tests/abi/stub_0.1.c tests/abi/0.1/jitunwind.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O1 -fPIC -shared -Itests/abi/0.1 -Wl,-soname,libjitunwind.so.$(SOVER) -o $@ $<

$(ABI_DIR)/old-client: tests/abi/old_client.c tests/abi/0.1/jitunwind.h $(ABI_DIR)/stub/libjitunwind.so
	$(CC) -std=c11 $(WARN) -O1 -g -fno-omit-frame-pointer $(SANFLAGS) -Itests/abi/0.1 -rdynamic -o $@ $< \
		-L$(ABI_DIR)/stub -ljitunwind -ldl

tests: $(ABI_DIR)/old-client $(LIB_API_SO)
