# SPDX-License-Identifier: MIT
# examples.mk - example programs (included by the top-level Makefile).

EX_DIR := $(BUILD)/examples

.PHONY: examples
examples: $(EX_DIR)/hello-jit

$(EX_DIR)/hello-jit: examples/hello-jit.c $(LIB_A) include/jitunwind.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O1 -fno-omit-frame-pointer -rdynamic -Iinclude -o $@ $< $(LIB_A) -ldl -pthread
