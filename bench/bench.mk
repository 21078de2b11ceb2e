# SPDX-License-Identifier: MIT
# bench.mk - benchmarks (included by the top-level Makefile).
#   make bench        build them and run the quick set
#   make bench-full   with 1M blobs already published (a few minutes)
#   make bench-scale  jitstack against eu-stack and gdb on JIT processes of
#                     1k to 1M functions (bench/scale/run.sh; SCALE_RUNS, SCALE_NS)
#   make bench-cpython  CPython's JIT: stock, patched, frame pointers
#                     (bench/cpython/run.sh; ROUNDS, STARTS; make cpython-fp
#                     first for the frame-pointer column)

BENCH_DIR := $(BUILD)/bench

$(BENCH_DIR)/bench-publish: bench/bench-publish.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O2 -fno-omit-frame-pointer -Iinclude -I. -o $@ $< $(LIB_A) -ldl -pthread

$(BENCH_DIR)/bench-fork: bench/bench-fork.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O2 -Iinclude -I. -o $@ $< $(LIB_A) -ldl -pthread

$(BENCH_DIR)/bench-libunwind: bench/bench-libunwind.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O2 -Iinclude -o $@ $< $(LIB_A) -ldl -pthread

# The anchor: one libgcc object per function, as CPython, Julia and LLVM ORC
# register (its sections are written with formats/).
$(BENCH_DIR)/bench-anchor: bench/bench-anchor.c $(LIB_INTERNAL)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O2 -I. -o $@ $< $(LIB_INTERNAL)

# The scale targets: N functions published through the library, or in
# single-function images under the process's own descriptor (LLVM ORC's way).
$(BENCH_DIR)/scalejit: bench/scale/scalejit.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O2 -fno-omit-frame-pointer -Iinclude -o $@ $< $(LIB_A) -ldl -pthread

$(BENCH_DIR)/orcjit: bench/scale/orcjit.c $(FMT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O2 -fno-omit-frame-pointer -I. -o $@ $<

.PHONY: bench-scale bench-scale-build
bench-scale-build: $(BENCH_DIR)/scalejit $(BENCH_DIR)/orcjit
bench-scale: bench-scale-build jitstack
	sh bench/scale/run.sh $(BUILD)

.PHONY: bench bench-full bench-build
bench-build: $(BENCH_DIR)/bench-publish $(BENCH_DIR)/bench-libunwind $(BENCH_DIR)/bench-anchor \
	$(BENCH_DIR)/bench-fork
bench: test-deps lib bench-build
	JITDUMPDIR=$(BENCH_DIR) $(BENCH_DIR)/bench-publish publish --max 100000
	JITDUMPDIR=$(BENCH_DIR) $(BENCH_DIR)/bench-publish backtrace --max 100000
	JITDUMPDIR=$(BENCH_DIR) $(BENCH_DIR)/bench-publish memory --max 100000
	JITDUMPDIR=$(BENCH_DIR) $(BENCH_DIR)/bench-fork fork --max 100000
	$(BENCH_DIR)/bench-libunwind
bench-full: test-deps lib bench-build
	JITDUMPDIR=$(BENCH_DIR) $(BENCH_DIR)/bench-publish publish
	JITDUMPDIR=$(BENCH_DIR) $(BENCH_DIR)/bench-publish backtrace
	JITDUMPDIR=$(BENCH_DIR) $(BENCH_DIR)/bench-publish memory
	JITDUMPDIR=$(BENCH_DIR) $(BENCH_DIR)/bench-publish churn
	JITDUMPDIR=$(BENCH_DIR) $(BENCH_DIR)/bench-fork fork --max 100000
	JITDUMPDIR=$(BENCH_DIR) $(BENCH_DIR)/bench-fork mapsize
	$(BENCH_DIR)/bench-anchor
	$(BENCH_DIR)/bench-libunwind

.PHONY: bench-cpython
bench-cpython: cpython cpython-stock
	@BUILD=$(BUILD) sh bench/cpython/run.sh all
