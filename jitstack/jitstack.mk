# SPDX-License-Identifier: MIT
# jitstack.mk - the jitstack tool; included by the top-level Makefile.
#
#   jitstack         $(BUILD)/jitstack/jitstack
#   jitstack-check   its tests (tests/run.sh jitstack; part of make check)
#   fuzz-jitstack    libFuzzer on the descriptor and image reader (JS_FUZZ_TIME s)
#   bench-jitstack   the benchmarks of jitstack/BENCH.md
#   bench-jitstack-record  record's modes against perf (jitstack/bench/record_modes.sh)
#   bench-jitstack-multi   record over 1, 2 and 4 processes (jitstack/bench/record_multi.sh)
#   bench-jitstack-top     the target's slowdown under top and under record (jitstack/bench/top_cost.sh)
#   bench-jitstack-python  a Python-aware sample against a native-only one (jitstack/bench/python_cost.sh)
#   bench-jitstack-hold    the longest hold of a dump's target (jitstack/bench/hold.sh)
#   bench-jitstack-php     a cold dump of PHP's opcache JIT beside eu-stack (jitstack/bench/php_desc.sh)
#   JS_DEBUG=1       error messages carry the file and line that made them

JS := jitstack
JS_B := $(BUILD)/jitstack
JS_BIN := $(JS_B)/jitstack
JS_WARN := -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror)
# JS_DEBUG=1: every error message says where in the source it was made (err.h)
JS_DEBUG ?=
JS_CFLAGS = -std=c11 -D_GNU_SOURCE $(JS_WARN) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) $(if $(filter 1,$(JS_DEBUG)),-DJS_DEBUG) \
	-I$(JS) -I$(JS_B) -I.
JS_LIBS := -ldw -lelf -lprotobuf-c -lz -liberty -lm

# out/profile.proto -> profile.pb-c.[ch] at build time (protoc-c)
JS_PROTO_C := $(JS_B)/profile.pb-c.c
JS_PROTO_H := $(JS_B)/profile.pb-c.h

# the rooms, in the order each may use the ones before it (README.md)
JS_ROOMS := base target python jit unwind out record
JS_SRCS := $(sort $(wildcard $(JS)/*.c $(JS_ROOMS:%=$(JS)/%/*.c)))
JS_TOOL_SRCS := $(JS_SRCS)
JS_OBJS := $(JS_TOOL_SRCS:$(JS)/%.c=$(JS_B)/obj/%.o) $(JS_B)/obj/profile.pb-c.o \
	$(FMT_SRCS:%.c=$(JS_B)/obj/%.o)
JS_HDRS := $(wildcard $(JS)/*.h $(JS_ROOMS:%=$(JS)/%/*.h)) $(FMT_HDRS) $(JS_PROTO_H)

$(JS_PROTO_C) $(JS_PROTO_H): $(JS)/out/profile.proto
	@mkdir -p $(JS_B)
	protoc-c --proto_path=$(JS)/out --c_out=$(JS_B) $(JS)/out/profile.proto

$(JS_B)/obj/profile.pb-c.o: $(JS_PROTO_C) $(JS_PROTO_H)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) -I$(JS_B) -c -o $@ $<

$(JS_B)/obj/%.o: $(JS)/%.c $(JS_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(JS_CFLAGS) -c -o $@ $<

$(JS_B)/obj/formats/%.o: formats/%.c $(FMT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(JS_CFLAGS) -c -o $@ $<

$(JS_BIN): $(JS_OBJS)
	$(CC) $(CFLAGS) $(SANFLAGS) $(LDFLAGS) -o $@ $^ $(JS_LIBS)

.PHONY: jitstack jitstack-check fuzz-jitstack bench-jitstack bench-jitstack-record bench-jitstack-multi \
	bench-jitstack-top bench-jitstack-php bench-jitstack-python
jitstack: $(JS_BIN)

include $(JS)/tests/tests.mk

$(JS_B)/bench/ptrace_cost: $(JS)/bench/ptrace_cost.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(JS_WARN) -O2 -o $@ $<

bench-jitstack: $(JS_BIN) $(TJ_BIN) $(JS_B)/bench/ptrace_cost $(REAPER)
	sh $(JS)/bench/run.sh $(BUILD)

bench-jitstack-record: $(JS_BIN) $(TJ_BIN) $(REAPER)
	sh $(JS)/bench/record_modes.sh $(BUILD)

bench-jitstack-multi: $(JS_BIN) $(TJ_BIN) $(REAPER)
	sh $(JS)/bench/record_multi.sh $(BUILD)

bench-jitstack-top: $(JS_BIN) $(TJ_BIN) $(REAPER)
	sh $(JS)/bench/top_cost.sh $(BUILD)

bench-jitstack-python: $(JS_BIN)
	sh $(JS)/bench/python_cost.sh $(BUILD)

$(JS_B)/bench/holdwatch: $(JS)/bench/holdwatch.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(JS_WARN) -O2 -o $@ $<

bench-jitstack-hold: $(JS_BIN) $(JS_B)/bench/holdwatch $(JS_TB)/hostile
	sh $(JS)/bench/hold.sh $(BUILD)

bench-jitstack-php: $(JS_BIN)
	sh $(JS)/bench/php_desc.sh $(BUILD)
