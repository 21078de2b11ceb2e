# SPDX-License-Identifier: MIT
# tests.mk - tinyjit's tests (included by ../tinyjit.mk).
#
#   tinyjit-check   tests/run.sh tinyjit: every driver (tinyjit/tests/run-*.sh);
#                   the closing line reads "tinyjit: N passed, N failed, N skipped"
#   tinyjit-test-env  the drivers' environment, as shell assignments (a driver
#                   run alone reads it from here)
#   fuzz-tinyjit    libFuzzer on the loader for TJ_FUZZ_TIME seconds, then a
#                   long differential run (TJ_FUZZ_SEEDS programs)

TJ_TEST_B := $(TJ_B)/tests
TJ_FUZZ_TIME ?= 300
TJ_FUZZ_SEEDS ?= 100000
TJ_SAN_CC ?= $(TJ_CLANG)
TJ_SAN_CXX ?= clang++-19
TJ_SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer

# the engine without the command line and without publishing
TJ_ENGINE_OBJS := $(filter-out $(TJ_B)/obj/runtime/publish-%.o,$(TJ_CORE_OBJS))

$(TJ_TEST_B)/reference: $(TJ)/tests/reference.c
	@mkdir -p $(dir $@)
	$(CC) -O2 $(TJ_WARN) $< -o $@

$(TJ_TEST_B)/%.o: $(TJ)/tests/%.c $(TJ)/tests/progen.h $(TJ_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(TJ_RT_CFLAGS) -c $< -o $@

$(TJ_TEST_B)/patch_test: $(TJ_TEST_B)/patch_test.o $(TJ_B)/obj/runtime/patch.o
	$(CC) $(CFLAGS) $(SANFLAGS) $^ -o $@

$(TJ_TEST_B)/difftest: $(TJ_TEST_B)/difftest.o $(TJ_TEST_B)/progen.o $(TJ_ENGINE_OBJS)
	$(CXX) $(CFLAGS) $(SANFLAGS) $^ -o $@

# libFuzzer target: the loader and what it links against, instrumented
TJ_FUZZ_SRCS := $(TJ)/tests/fuzz_parse.c $(TJ_VM_SRCS) $(TJ)/host/hostfns.c
$(TJ_TEST_B)/fuzz_parse: $(TJ_FUZZ_SRCS) $(TJ_HDRS)
	@mkdir -p $(dir $@)
	$(TJ_CLANG) -g -O1 -std=gnu11 -Wall -Wextra -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=undefined -I$(TJ) -I. $(TJ_FUZZ_SRCS) -o $@

# the sanitizer build: every C file of tinyjit instrumented (the stencils,
# being machine-code templates, are not)
TJ_SAN_B := $(TJ_TEST_B)/san
TJ_SAN_C := $(TJ_VM_SRCS) $(TJ_RT_SRCS) $(TJ_HOST_SRCS)
TJ_SAN_OBJS := $(patsubst $(TJ)/%.c,$(TJ_SAN_B)/obj/%.o,$(TJ_SAN_C)) $(TJ_SAN_B)/obj/host/cxx.o \
	$(TJ_B)/runtime/shim.o $(TJ_SAN_B)/obj/runtime/publish-$(TJ_PUBLISH).o
TJ_SAN_ENGINE := $(filter-out $(TJ_SAN_B)/obj/host/main.o $(TJ_SAN_B)/obj/runtime/publish-%.o,$(TJ_SAN_OBJS))

$(TJ_SAN_B)/obj/%.o: $(TJ)/%.c $(TJ_HDRS) $(TJ_B)/stencils_fp.h $(TJ_B)/stencils_nofp.h
	@mkdir -p $(dir $@)
	$(TJ_SAN_CC) -O1 -g -std=gnu11 -Wall -Wextra $(TJ_SAN_FLAGS) -fexceptions -funwind-tables \
		-I$(TJ) -I$(TJ_B) -I$(JU_INCLUDE) -I. -c $< -o $@

$(TJ_SAN_B)/obj/runtime/publish-%.o: $(TJ)/runtime/publish.c $(TJ_HDRS)
	@mkdir -p $(dir $@)
	$(TJ_SAN_CC) -O1 -g -std=gnu11 -Wall -Wextra $(TJ_SAN_FLAGS) $(if $(filter 0,$*),-DTJ_NO_PUBLISH) \
		-I$(TJ) -I$(TJ_B) -I$(JU_INCLUDE) -I. -c $< -o $@

$(TJ_SAN_B)/obj/host/cxx.o: $(TJ)/host/cxx.cc $(TJ)/host/host.h
	@mkdir -p $(dir $@)
	$(TJ_SAN_CXX) -O1 -g -Wall -Wextra $(TJ_SAN_FLAGS) -fexceptions -c $< -o $@

$(TJ_SAN_B)/tinyjit: $(TJ_SAN_OBJS) $(TJ_LIBJU_DEP)
	$(TJ_SAN_CXX) $(TJ_SAN_FLAGS) $(TJ_SAN_OBJS) -o $@ $(TJ_LINK_LIBJU)

$(TJ_SAN_B)/difftest: $(TJ)/tests/difftest.c $(TJ)/tests/progen.c $(TJ_SAN_ENGINE)
	$(TJ_SAN_CXX) -x c -O1 -g -std=gnu11 $(TJ_SAN_FLAGS) -I$(TJ) $(TJ)/tests/difftest.c \
		$(TJ)/tests/progen.c -x none $(TJ_SAN_ENGINE) -o $@

TJ_TEST_BINS := $(TJ_BIN) $(TJ_TEST_B)/patch_test $(TJ_TEST_B)/reference $(TJ_TEST_B)/difftest $(TJ_TEST_B)/fuzz_parse \
	$(TJ_SAN_B)/tinyjit $(TJ_SAN_B)/difftest
TJ_TEST_ENV = $(TJ_STENCIL_ENV) TJ=$(TJ_BIN) TJ_TEST_B=$(TJ_TEST_B) \
	TJ_A64_B=$(TJ_A64_B) TJ_A64_STENCIL_CFLAGS='$(TJ_A64_STENCIL_CFLAGS)'

CHECK_BUILD += $(TJ_TEST_BINS)

tinyjit-check: $(TJ_TEST_BINS)
	@$(TJ_TEST_ENV) sh tests/run.sh -b $(BUILD) tinyjit

.PHONY: tinyjit-test-env
tinyjit-test-env:
	@for v in $(TJ_TEST_ENV); do printf "export %s='%s'\n" "$${v%%=*}" "$${v#*=}"; done

fuzz-tinyjit: $(TJ_TEST_B)/fuzz_parse $(TJ_TEST_B)/difftest
	@mkdir -p $(TJ_TEST_B)/fuzz-long
	cp $(TJ)/examples/*.tj $(TJ)/tests/progs/*.tj $(TJ_TEST_B)/fuzz-long/
	$(TJ_TEST_B)/fuzz_parse -max_total_time=$(TJ_FUZZ_TIME) -max_len=8192 $(TJ_TEST_B)/fuzz-long
	$(TJ_TEST_B)/difftest --seeds $(TJ_FUZZ_SEEDS) --start 1000000
