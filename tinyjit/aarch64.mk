# SPDX-License-Identifier: MIT
# aarch64.mk - tinyjit for AArch64, cross-built on this host and run under
# qemu-user (included by tinyjit.mk; the tests are tests/run-aarch64.sh).
#
# The same VM and JIT: stencils and shim compiled by clang-19 for
# aarch64-linux-gnu, turned into headers by the host's tj_validate and
# tj_gen (both read either ISA), the rest compiled by the cross gcc and
# linked with the library's AArch64 archive (tests/tests.mk).  The cross
# tools come with the test packages, hence the order-only test-deps.
#
#   tinyjit-aarch64   $(BUILD)/aarch64/tinyjit/tinyjit and its difftest

TJ_A64_B := $(BUILD)/aarch64/tinyjit
TJ_A64_PREFIX ?= aarch64-linux-gnu-
TJ_A64_TARGET := --target=aarch64-linux-gnu
TJ_A64_LIBJU := $(BUILD)/aarch64/libjitunwind.a

# -mcmodel=large: a hole's address is materialised by movz/movk (the
# MOVW_UABS_G0..G3 relocations), so any 64-bit value fits; the small model's
# adrp would need the value within +-4 GiB of the code.  No outline atomics:
# they are calls into libgcc a copied stencil cannot make.
TJ_A64_STENCIL_CFLAGS := $(TJ_A64_TARGET) -O2 -std=c11 $(TJ_WARN) -fno-pic -mcmodel=large \
	-mno-outline-atomics -fno-stack-protector -fno-jump-tables -fno-builtin \
	-ffunction-sections -fasynchronous-unwind-tables -I$(TJ)
TJ_A64_STENCIL_ENV = TJ_CLANG='$(TJ_CLANG)' TJ_OBJDUMP='$(TJ_OBJDUMP)' \
	TJ_VALIDATE='$(TJ_B)/gen/tj_validate' TJ_GEN='$(TJ_B)/gen/tj_gen' \
	TJ_STENCIL_CFLAGS='$(TJ_A64_STENCIL_CFLAGS)'

# pressure.c fits in x19-x28; the call into the preserve_none shim leaves
# x29 the only register kept, so pressure_call.c is the probe here.  Both
# ways to ask for a reserved x29 are tried.
$(TJ_A64_B)/reserved.flag: $(TJ)/gen/check-reserved.sh $(TJ)/stencils/test/pressure_call.c $(TJ_TOOLS)
	@mkdir -p $(dir $@)
	$(TJ_A64_STENCIL_ENV) sh $(TJ)/gen/check-reserved.sh $(TJ)/stencils/test/pressure_call.c \
		$(TJ_A64_B)/check-reserved "-Xclang -mframe-pointer=reserved" "-ffixed-x29" > $@.tmp
	mv $@.tmp $@

$(TJ_A64_B)/runtime/shim.o: $(TJ)/runtime/shim.c $(TJ)/runtime/jit.h $(TJ)/vm/vm.h
	@mkdir -p $(dir $@)
	$(TJ_CLANG) $(TJ_A64_TARGET) -O2 -std=c11 -Wall -Wextra -fexceptions -fasynchronous-unwind-tables \
		-Xclang -mframe-pointer=all -I$(TJ) -c $< -o $@

$(TJ_A64_B)/stencils_fp.h: $(TJ_STENCIL_DEPS) $(TJ_TOOLS) $(TJ_A64_B)/runtime/shim.o $(TJ_A64_B)/reserved.flag
	$(TJ_A64_STENCIL_ENV) TJ_RESERVED_FLAG="$$(cat $(TJ_A64_B)/reserved.flag)" \
		sh $(TJ)/gen/build-stencils.sh fp $(TJ)/stencils/stencils.c $(TJ_A64_B)/stencils/fp $@ $(TJ_A64_B)/runtime/shim.o

$(TJ_A64_B)/stencils_nofp.h: $(TJ_STENCIL_DEPS) $(TJ_TOOLS) $(TJ_A64_B)/runtime/shim.o
	$(TJ_A64_STENCIL_ENV) sh $(TJ)/gen/build-stencils.sh nofp $(TJ)/stencils/stencils.c $(TJ_A64_B)/stencils/nofp $@ $(TJ_A64_B)/runtime/shim.o

TJ_A64_CFLAGS = -O2 -g $(TJ_WARN) -std=gnu11 -fexceptions -funwind-tables -fno-omit-frame-pointer \
	-I$(TJ) -I$(TJ_A64_B) -I$(JU_INCLUDE) -I.
TJ_A64_CORE := $(patsubst $(TJ)/%.c,$(TJ_A64_B)/obj/%.o,$(TJ_VM_SRCS) $(TJ_RT_SRCS)) \
	$(TJ_A64_B)/obj/host/hostfns.o $(TJ_A64_B)/obj/host/cxx.o $(TJ_A64_B)/runtime/shim.o
TJ_A64_OBJS := $(TJ_A64_CORE) $(TJ_A64_B)/obj/runtime/publish-1.o $(TJ_A64_B)/obj/host/main.o

$(TJ_A64_B)/obj/%.o: $(TJ)/%.c $(TJ_HDRS) | test-deps
	@mkdir -p $(dir $@)
	$(TJ_A64_PREFIX)gcc $(TJ_A64_CFLAGS) -c $< -o $@

$(TJ_A64_B)/obj/runtime/stencil_sets.o: $(TJ_A64_B)/stencils_fp.h $(TJ_A64_B)/stencils_nofp.h

$(TJ_A64_B)/obj/runtime/publish-1.o: $(TJ)/runtime/publish.c $(TJ_HDRS) $(JU_INCLUDE)/jitunwind.h | test-deps
	@mkdir -p $(dir $@)
	$(TJ_A64_PREFIX)gcc $(TJ_A64_CFLAGS) -c $< -o $@

$(TJ_A64_B)/obj/host/cxx.o: $(TJ)/host/cxx.cc $(TJ)/host/host.h | test-deps
	@mkdir -p $(dir $@)
	$(TJ_A64_PREFIX)g++ -O2 -g $(TJ_WARN) -fexceptions -fno-omit-frame-pointer -c $< -o $@

$(TJ_A64_B)/tinyjit: $(TJ_A64_OBJS) $(TJ_A64_LIBJU)
	$(TJ_A64_PREFIX)g++ $(TJ_A64_OBJS) -o $@ $(TJ_A64_LIBJU) -ldl -pthread

$(TJ_A64_B)/tests/%.o: $(TJ)/tests/%.c $(TJ)/tests/progen.h $(TJ_HDRS) | test-deps
	@mkdir -p $(dir $@)
	$(TJ_A64_PREFIX)gcc $(TJ_A64_CFLAGS) -c $< -o $@

$(TJ_A64_B)/tests/difftest: $(TJ_A64_B)/tests/difftest.o $(TJ_A64_B)/tests/progen.o $(TJ_A64_CORE)
	$(TJ_A64_PREFIX)g++ $^ -o $@

.PHONY: tinyjit-aarch64
tinyjit-aarch64: $(TJ_A64_B)/tinyjit $(TJ_A64_B)/tests/difftest
CHECK_BUILD += $(TJ_A64_B)/tinyjit $(TJ_A64_B)/tests/difftest
