# SPDX-License-Identifier: MIT
# tests.mk - jitstack's tests (included by ../jitstack.mk).
#
#   jitstack-check   build the tool and its test programs, run every driver
#                    (tests/run.sh jitstack); last line "jitstack: N passed, ..."
#   fuzz-jitstack    libFuzzer on the descriptor and image reader for
#                    JS_FUZZ_TIME seconds (default 300), seeded with real images

JS_TB := $(JS_B)/tests
JS_FUZZ_TIME ?= 300
JS_TEST_CFLAGS = -std=gnu11 $(JS_WARN) -O1 -g -fno-omit-frame-pointer $(SANFLAGS)

JS_TEST_PROGS := $(addprefix $(JS_TB)/,foreignjit jitobj.o jitobj-df.o jitobj-clang.o cxxwait hostile threads tomb churnjit pprofdump perfmap_check jitdump_check \
	child-localdesc child-hiddenlib relocs_check symindex_check latethread leaderexit noperf hostilestack inl pyframes pyline_check pymerge_check) $(BUILD)/bench/scalejit $(BUILD)/bench/orcjit

# A foreign JIT and the objects it loads (LLVM-style): the objects keep no
# frame pointer, so only their CFI (.eh_frame, or .debug_frame) unwinds them.
$(JS_TB)/foreignjit: $(JS)/tests/foreignjit.c $(FMT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(JS_TEST_CFLAGS) -I. -rdynamic -o $@ $< -lelf -ldl
$(JS_TB)/jitobj.o: $(JS)/tests/jitobj.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fomit-frame-pointer -c -o $@ $<
$(JS_TB)/jitobj-df.o: $(JS)/tests/jitobj.c
	@mkdir -p $(dir $@)
	$(CC) -O1 -g -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables -c -o $@ $<
# DWARF 5 as clang writes it (lli, ORC): the unit's addresses in .debug_addr
# (DW_FORM_addrx), strings through .debug_str_offsets and .debug_line_str.
$(JS_TB)/jitobj-clang.o: $(JS)/tests/jitobj.c
	@mkdir -p $(dir $@)
	clang-19 -O1 -gdwarf-5 -fomit-frame-pointer -c -o $@ $<

$(JS_TB)/cxxwait: $(JS)/tests/cxxwait.cc
	@mkdir -p $(dir $@)
	$(CXX) -O1 -g -fno-omit-frame-pointer $(SANFLAGS) -o $@ $<

$(JS_TB)/hostile: $(JS)/tests/hostile.c formats/gdbjit.h
	@mkdir -p $(dir $@)
	$(CC) $(JS_TEST_CFLAGS) -I. -rdynamic -o $@ $< -ldl -pthread

$(JS_TB)/threads: $(JS)/tests/threads.c
	@mkdir -p $(dir $@)
	$(CC) $(JS_TEST_CFLAGS) -o $@ $< -pthread

# The library's child with __jit_debug_descriptor local, as a JIT that
# defines it static or hidden has it: once stripped, only the separate
# debuginfo names it (t-descriptor-found-through-separate-debuginfo.sh).
$(JS_TB)/child-localdesc: $(TEST_DIR)/child $(LIB_A)
	@mkdir -p $(dir $@)
	objcopy --localize-symbol=__jit_debug_descriptor $(LIB_A) $@.a
	$(CXX) $(CHILD_LDFLAGS) -o $@ $(TEST_DIR)/child.o $(TEST_DIR)/child-cxx.o $@.a -ldl -pthread
# The library's child with the library linked into a shared library of
# its own whose version script exports only the API, as a library that
# links LLVM statically does: __jit_debug_descriptor and
# __jit_debug_register_code are local in it, in no .dynsym
# (t-descriptor-hidden-in-a-shared-library-is-found.sh).
$(JS_TB)/libhiddenjit.so: $(LIB_A)
	@mkdir -p $(dir $@)
	printf '{ global: ju_*; local: *; };\n' > $@.map
	$(CC) -shared $(SANFLAGS) -o $@ -Wl,--whole-archive $(LIB_A) -Wl,--no-whole-archive \
		-Wl,--version-script=$@.map -ldl -pthread
$(JS_TB)/child-hiddenlib: $(TEST_DIR)/child $(JS_TB)/libhiddenjit.so
	$(CXX) $(CHILD_LDFLAGS) -o $@ $(TEST_DIR)/child.o $(TEST_DIR)/child-cxx.o -L$(JS_TB) -lhiddenjit \
		'-Wl,-rpath,$$ORIGIN' -ldl -pthread
$(JS_TB)/latethread: $(JS)/tests/latethread.c
	@mkdir -p $(dir $@)
	$(CC) $(JS_TEST_CFLAGS) -o $@ $< -pthread
$(JS_TB)/leaderexit: $(JS)/tests/leaderexit.c
	@mkdir -p $(dir $@)
	$(CC) $(JS_TEST_CFLAGS) -o $@ $< -pthread

# inl.c optimised as a release build is: leaf and mid inlined into outer.
$(JS_TB)/inl: $(JS)/tests/inl.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fno-omit-frame-pointer $(SANFLAGS) -o $@ $<

$(JS_TB)/hostilestack: $(JS)/tests/hostilestack.c
	@mkdir -p $(dir $@)
	$(CC) $(JS_TEST_CFLAGS) -o $@ $<

$(JS_TB)/noperf: $(JS)/tests/noperf.c
	@mkdir -p $(dir $@)
	$(CC) $(JS_TEST_CFLAGS) -o $@ $<

# Programs on libjitunwind itself.
$(JS_TB)/tomb $(JS_TB)/churnjit: $(JS_TB)/%: $(JS)/tests/%.c $(LIB_A) include/jitunwind.h
	@mkdir -p $(dir $@)
	$(CC) $(JS_TEST_CFLAGS) -Iinclude -o $@ $< $(LIB_A) -ldl -pthread

$(JS_TB)/pprofdump: $(JS)/tests/pprofdump.c $(JS_B)/obj/profile.pb-c.o $(JS_PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) $(JS_TEST_CFLAGS) -I$(JS_B) -o $@ $< $(JS_B)/obj/profile.pb-c.o -lprotobuf-c -lz

# The perf map reader on its own, against hostile input and a model.
JS_PM_SRCS := $(addprefix $(JS)/,jit/perfmap.c base/err.c base/grow.c base/follow.c)
$(JS_TB)/perfmap_check: $(JS)/tests/perfmap_check.c $(JS_PM_SRCS) $(JS)/jit/perfmap.h $(JS)/base/follow.h $(JS)/base/bounds.h \
		tests/unit/unit.h
	@mkdir -p $(dir $@)
	$(CC) $(JS_TEST_CFLAGS) -D_GNU_SOURCE -DJS_PM_LEVEL0=64u -I$(JS) -I. -o $@ $< $(JS_PM_SRCS)

# The jitdump reader on its own, against hostile input and a model.
JS_JD_SRCS := $(addprefix $(JS)/,jit/jitdump.c jit/perfmap.c jit/jitimage.c jit/elfin.c jit/cfi_convert.c \
	jit/aranges.c base/err.c base/grow.c base/follow.c base/maps.c target/machine.c) $(FMT_SRCS)
$(JS_TB)/jitdump_check: $(JS)/tests/jitdump_check.c $(JS_JD_SRCS) $(JS_HDRS) tests/unit/unit.h
	@mkdir -p $(dir $@)
	$(CC) $(JS_TEST_CFLAGS) -D_GNU_SOURCE -I$(JS) -I. -o $@ $< $(JS_JD_SRCS) -ldw -lelf

# jitmodules.c and the image reader on their own: images whose DWARF
# names another's symbols, over two refreshes of a list in memory.
JS_RELOC_SRCS := $(addprefix $(JS)/,jit/jitmodules.c jit/desc.c target/mem.c target/hold.c jit/jitimage.c jit/elfin.c \
	jit/cfi_convert.c jit/aranges.c base/err.c base/grow.c target/machine.c target/symfind.c) $(FMT_SRCS)
$(JS_TB)/relocs_check: $(JS)/tests/relocs_check.c $(JS_RELOC_SRCS) $(JS_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(JS_TEST_CFLAGS) -D_GNU_SOURCE -I$(JS) -I. -o $@ $< $(JS_RELOC_SRCS) -ldw -lelf

# The symbol index against dwfl_module_addrinfo.
JS_SYMIDX_SRCS := $(addprefix $(JS)/,unwind/symindex.c base/grow.c)
$(JS_TB)/symindex_check: $(JS)/tests/symindex_check.c $(JS_SYMIDX_SRCS) $(JS)/unwind/symindex.h tests/unit/unit.h
	@mkdir -p $(dir $@)
	$(CC) $(JS_TEST_CFLAGS) -D_GNU_SOURCE -I$(JS) -I. -o $@ $< $(JS_SYMIDX_SRCS) -ldw -lelf

# The Python frame reader on its own (python/), over a live CPython.
JS_PY_SRCS := $(addprefix $(JS)/,python/frames.c python/layout.c python/linetable.c target/mem.c target/proc.c target/hold.c \
	target/symfind.c target/modules.c target/machine.c base/err.c base/grow.c base/maps.c base/follow.c)
$(JS_TB)/pyframes: $(JS)/tests/pyframes.c $(JS_PY_SRCS) $(JS_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(JS_TEST_CFLAGS) -D_GNU_SOURCE -I$(JS) -I. -o $@ $< $(JS_PY_SRCS) -ldw -lelf

# The location table reader against CPython's co_lines().
$(JS_TB)/pyline_check: $(JS)/tests/pyline_check.c $(JS)/python/linetable.c $(JS)/python/linetable.h
	@mkdir -p $(dir $@)
	$(CC) $(JS_TEST_CFLAGS) -D_GNU_SOURCE -I$(JS) -I. -o $@ $< $(JS)/python/linetable.c

# The placement of Python frames in a native stack, on cases by hand.
$(JS_TB)/pymerge_check: $(JS)/tests/pymerge_check.c $(JS)/python/merge.c $(JS)/python/merge.h $(JS)/python/frames.h
	@mkdir -p $(dir $@)
	$(CC) $(JS_TEST_CFLAGS) -D_GNU_SOURCE -I$(JS) -I. -o $@ $< $(JS)/python/merge.c

# The fuzz target and the reader it drives, instrumented (clang-19).
JS_FUZZ_SRCS := $(JS)/tests/fuzz_reader.c $(addprefix $(JS)/,jit/desc.c target/mem.c target/hold.c jit/jitimage.c jit/elfin.c \
	jit/cfi_convert.c jit/aranges.c base/err.c base/grow.c base/follow.c base/maps.c target/machine.c jit/perfmap.c jit/jitdump.c) $(FMT_SRCS)
$(JS_TB)/fuzz_reader: $(JS_FUZZ_SRCS) $(JS_HDRS)
	@mkdir -p $(dir $@)
	$(CLANG) -std=gnu11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -I$(JS) -I. -o $@ $(JS_FUZZ_SRCS) -ldw -lelf

JS_CHECK_BUILD := $(JS_BIN) $(JS_TEST_PROGS) $(JS_TB)/fuzz_reader $(TEST_DIR)/child $(A64_DIR)/child $(TJ_BIN)
CHECK_BUILD += $(JS_CHECK_BUILD)
jitstack-check: $(JS_CHECK_BUILD)
	@sh tests/run.sh -b $(BUILD) jitstack

fuzz-jitstack: $(JS_BIN) $(JS_TB)/fuzz_reader $(JS_TEST_PROGS) $(TEST_DIR)/child $(A64_DIR)/child $(TJ_BIN) $(REAPER)
	sh $(JS)/tests/fuzz-corpus.sh $(BUILD) $(JS_TB)/fuzz-corpus
	$(JS_TB)/fuzz_reader -max_total_time=$(JS_FUZZ_TIME) -rss_limit_mb=4096 \
		-artifact_prefix=$(JS_TB)/ $(JS_TB)/fuzz-corpus
