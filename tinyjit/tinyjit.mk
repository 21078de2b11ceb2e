# SPDX-License-Identifier: MIT
# tinyjit.mk - build, test and fuzz tinyjit; included by the top-level Makefile.
#
# Targets:
#   tinyjit         $(BUILD)/tinyjit/tinyjit
#   tinyjit-check   every tinyjit test (nonzero exit on failure)
#   fuzz-tinyjit    the libFuzzer parser target and a long differential run
#   tinyjit-aarch64 the same, cross-built for AArch64 (aarch64.mk)
#
# From the including Makefile (defaults for a standalone `make -f`):
#   CC CFLAGS BUILD LIBJU_A JU_INCLUDE
# Knobs: TJ_PUBLISH=1|0 (0 compiles publishing out, for when libjitunwind is
# not built), TJ_CLANG, TJ_OBJDUMP, CXX.
#
# Build time (tinyjit/stencils, tinyjit/gen) vs run time (tinyjit/runtime,
# tinyjit/vm, tinyjit/host): the stencils are compiled by clang-19 into
# objects, validated, and turned by tj_gen into headers that the run-time
# code includes.

CC ?= cc
CFLAGS ?= -O2 -g -Wall -Wextra
BUILD ?= build
LIBJU_A ?= $(BUILD)/libjitunwind.a
JU_INCLUDE ?= include
CXX ?= g++
TJ_CLANG ?= clang-19
TJ_OBJDUMP ?= llvm-objdump-19
TJ_PUBLISH ?= 1
TJ_LIBJU_LIBS ?= -lpthread -ldl
# warnings are on whatever CFLAGS says; WERROR=1 and SANFLAGS come from the
# top-level Makefile when it sets them
TJ_WARN := -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror)

TJ := tinyjit
TJ_B := $(BUILD)/tinyjit
TJ_BIN := $(TJ_B)/tinyjit

# ---- build-time tools (run on the build machine) ----
# The generator reads the objects' .eh_frame with the tree's one reader
# (formats/, at the top of the tree).
TJ_FMT_HDRS := $(wildcard formats/*.h)
TJ_GEN_OBJS := $(addprefix $(TJ_B)/gen/,elfobj.o stencil_cfi.o isa.o disasm.o x86.o a64.o fpcheck.o) \
	$(addprefix $(TJ_B)/gen/formats/,bytes.o ehframe.o)
TJ_TOOL_CFLAGS = $(CFLAGS) $(TJ_WARN) $(SANFLAGS) -std=gnu11 -I$(TJ) -I.
TJ_TOOL_LIBS := -lelf -lcapstone

$(TJ_B)/gen/%.o: $(TJ)/gen/%.c $(wildcard $(TJ)/gen/*.h) $(TJ_FMT_HDRS) $(TJ)/runtime/stencil.h $(TJ)/vm/vm.h $(TJ)/vm/opcodes.def
	@mkdir -p $(dir $@)
	$(CC) $(TJ_TOOL_CFLAGS) -c $< -o $@

$(TJ_B)/gen/formats/%.o: formats/%.c $(TJ_FMT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(TJ_TOOL_CFLAGS) -c $< -o $@

$(TJ_B)/gen/tj_gen: $(TJ_B)/gen/tj_gen.o $(TJ_GEN_OBJS)
	$(CC) $(CFLAGS) $(SANFLAGS) $^ -o $@ $(TJ_TOOL_LIBS)

$(TJ_B)/gen/tj_validate: $(TJ_B)/gen/tj_validate.o $(TJ_GEN_OBJS)
	$(CC) $(CFLAGS) $(SANFLAGS) $^ -o $@ $(TJ_TOOL_LIBS)

# ---- stencils (build time, clang-19) ----
# -fno-pic -mcmodel=medium: holes become absolute relocations the runtime
# patches; -ffunction-sections: one section (and FDE) per stencil;
# -fasynchronous-unwind-tables: FDEs valid at every instruction (exact CFI);
# no stack protector, jump tables or builtins: they would need data or
# calls that a copied stencil cannot have.
TJ_STENCIL_CFLAGS := -O2 -std=c11 $(TJ_WARN) -fno-pic -mcmodel=medium \
	-fno-stack-protector -fcf-protection=none -fno-jump-tables -fno-builtin \
	-ffunction-sections -fasynchronous-unwind-tables -I$(TJ)
TJ_STENCIL_DEPS := $(TJ)/stencils/stencils.c $(TJ)/stencils/template.h $(TJ)/vm/ops.h \
	$(TJ)/vm/vm.h $(TJ)/vm/opcodes.def $(TJ)/vm/binops.def $(TJ)/gen/build-stencils.sh
TJ_TOOLS := $(TJ_B)/gen/tj_gen $(TJ_B)/gen/tj_validate
TJ_STENCIL_ENV = TJ_CLANG='$(TJ_CLANG)' TJ_OBJDUMP='$(TJ_OBJDUMP)' \
	TJ_VALIDATE='$(TJ_B)/gen/tj_validate' TJ_GEN='$(TJ_B)/gen/tj_gen' \
	TJ_STENCIL_CFLAGS='$(TJ_STENCIL_CFLAGS)'

# configure-style check: use -mframe-pointer=reserved only if it works
$(TJ_B)/reserved.flag: $(TJ)/gen/check-reserved.sh $(TJ)/stencils/test/pressure.c $(TJ_TOOLS)
	@mkdir -p $(dir $@)
	$(TJ_STENCIL_ENV) sh $(TJ)/gen/check-reserved.sh $(TJ)/stencils/test/pressure.c $(TJ_B)/check-reserved > $@.tmp
	mv $@.tmp $@

# the shim: the one frame that sets rbp (clang for preserve_none)
$(TJ_B)/runtime/shim.o: $(TJ)/runtime/shim.c $(TJ)/runtime/jit.h $(TJ)/vm/vm.h
	@mkdir -p $(dir $@)
	$(TJ_CLANG) -O2 -std=c11 -Wall -Wextra -fexceptions -fasynchronous-unwind-tables \
		-Xclang -mframe-pointer=all -fcf-protection=none -I$(TJ) -c $< -o $@

$(TJ_B)/stencils_fp.h: $(TJ_STENCIL_DEPS) $(TJ_TOOLS) $(TJ_B)/runtime/shim.o $(TJ_B)/reserved.flag
	$(TJ_STENCIL_ENV) TJ_RESERVED_FLAG="$$(cat $(TJ_B)/reserved.flag)" \
		sh $(TJ)/gen/build-stencils.sh fp $(TJ)/stencils/stencils.c $(TJ_B)/stencils/fp $@ $(TJ_B)/runtime/shim.o

$(TJ_B)/stencils_nofp.h: $(TJ_STENCIL_DEPS) $(TJ_TOOLS) $(TJ_B)/runtime/shim.o
	$(TJ_STENCIL_ENV) sh $(TJ)/gen/build-stencils.sh nofp $(TJ)/stencils/stencils.c $(TJ_B)/stencils/nofp $@ $(TJ_B)/runtime/shim.o

# ---- run time ----
# Host and runtime C keep frame pointers and unwind tables (and -fexceptions:
# probe's C++ exception crosses them), so every unwinder can walk them.
TJ_RT_CFLAGS = $(CFLAGS) $(TJ_WARN) $(SANFLAGS) -std=gnu11 -fexceptions -funwind-tables -fno-omit-frame-pointer \
	-I$(TJ) -I$(TJ_B) -I$(JU_INCLUDE) -I.
TJ_VM_SRCS := $(addprefix $(TJ)/vm/,parse.c verify.c interp.c vm.c)
TJ_RT_SRCS := $(addprefix $(TJ)/runtime/,jit.c inline.c patch.c rt.c stencil_sets.c)
TJ_HOST_SRCS := $(addprefix $(TJ)/host/,main.c hostfns.c)
TJ_HDRS := $(wildcard $(TJ)/vm/*.h $(TJ)/vm/*.def $(TJ)/runtime/*.h $(TJ)/host/*.h)
TJ_CORE_OBJS := $(patsubst $(TJ)/%.c,$(TJ_B)/obj/%.o,$(TJ_VM_SRCS) $(TJ_RT_SRCS)) \
	$(TJ_B)/obj/host/hostfns.o $(TJ_B)/obj/host/cxx.o $(TJ_B)/runtime/shim.o \
	$(TJ_B)/obj/runtime/publish-$(TJ_PUBLISH).o
TJ_OBJS := $(TJ_CORE_OBJS) $(TJ_B)/obj/host/main.o

ifeq ($(TJ_PUBLISH),1)
TJ_LINK_LIBJU := $(LIBJU_A) $(TJ_LIBJU_LIBS)
TJ_LIBJU_DEP := $(LIBJU_A)
else
TJ_LINK_LIBJU :=
TJ_LIBJU_DEP :=
endif

$(TJ_B)/obj/%.o: $(TJ)/%.c $(TJ_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(TJ_RT_CFLAGS) -c $< -o $@

$(TJ_B)/obj/runtime/stencil_sets.o: $(TJ_B)/stencils_fp.h $(TJ_B)/stencils_nofp.h

$(TJ_B)/obj/runtime/publish-1.o: $(TJ)/runtime/publish.c $(TJ_HDRS) $(JU_INCLUDE)/jitunwind.h
	@mkdir -p $(dir $@)
	$(CC) $(TJ_RT_CFLAGS) -c $< -o $@

$(TJ_B)/obj/runtime/publish-0.o: $(TJ)/runtime/publish.c $(TJ_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(TJ_RT_CFLAGS) -DTJ_NO_PUBLISH -c $< -o $@

$(TJ_B)/obj/host/cxx.o: $(TJ)/host/cxx.cc $(TJ)/host/host.h
	@mkdir -p $(dir $@)
	$(CXX) -O2 -g $(TJ_WARN) $(SANFLAGS) -fexceptions -fno-omit-frame-pointer -c $< -o $@

$(TJ_BIN): $(TJ_OBJS) $(TJ_LIBJU_DEP)
	$(CXX) $(CFLAGS) $(SANFLAGS) $(TJ_OBJS) -o $@ $(TJ_LINK_LIBJU)

# The same program linked with nongnu libunwind, whose _U_dyn_register the
# libunwind channel needs (it also replaces glibc's backtrace()): a separate
# binary, since each unwinder must be tested in its own process.
$(TJ_B)/tinyjit-libunwind: $(TJ_OBJS) $(TJ_LIBJU_DEP)
	$(CXX) $(CFLAGS) $(SANFLAGS) $(TJ_OBJS) -o $@ $(TJ_LINK_LIBJU) -lunwind-x86_64 -lunwind

.PHONY: tinyjit tinyjit-libunwind tinyjit-check fuzz-tinyjit bench-tinyjit
tinyjit: $(TJ_BIN)
tinyjit-libunwind: $(TJ_B)/tinyjit-libunwind

bench-tinyjit: $(TJ_BIN) $(REAPER)
	sh bench/tinyjit/run.sh $(BUILD)

include $(TJ)/aarch64.mk
include $(TJ)/tests/tests.mk
