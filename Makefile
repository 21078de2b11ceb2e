# SPDX-License-Identifier: MIT
# jitunwind - top-level build.
#
#   make            libjitunwind.so / .a and jitunwind.pc in $(BUILD)
#   make demo       install missing packages, build, run the demo
#   make check      install missing packages, build, run every test
#   make check SAN=1    the same under AddressSanitizer + UBSan (build-san/)
#   make install PREFIX=/usr/local DESTDIR=   the libraries, header, jitunwind.pc,
#                   jitstack and the manual pages; make uninstall removes them
#   make deb        Debian packages in $(BUILD)/deb (scripts/make-deb.sh)
#   make bench      benchmarks (results go to docs/BENCHMARKS.md by hand)
#   make fuzz       longer fuzzing runs (the API, tinyjit's parser, jitstack's reader)
#   make matrix     the unwind matrix in full; writes docs/MATRIX.md

PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
DESTDIR ?=
VERSION := 0.2.0
SOVER   := 0

SAN    ?=
export SAN
WERROR ?=
ifeq ($(SAN),1)
BUILD  ?= build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
BUILD  ?= build
SANFLAGS :=
endif

CC      ?= cc
CXX     ?= g++
CLANG   ?= clang-19
WARN    := -Wall -Wextra $(if $(filter 1,$(WERROR)),-Werror)
CFLAGS  ?= -O2 -g
# CPPFLAGS and LDFLAGS as make's conventions have them (empty unless given:
# the Debian build passes its hardening flags there)
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CPPFLAGS) $(CFLAGS) $(SANFLAGS) -pthread
LIB_CFLAGS := $(ALL_CFLAGS) -fPIC -fvisibility=hidden -Iinclude -Isrc -I.
LIB_LDLIBS := -ldl -pthread

# formats/: the formats the tree writes and reads by hand (bytes, LEB128,
# .eh_frame, the ELF header, the jitdump and GDB JIT layouts).  Every part
# compiles its sources with its own flags, so in the library they are hidden
# like the rest of its internals; FMT_SRCS and FMT_HDRS are for the parts.
FMT_SRCS := $(sort $(wildcard formats/*.c))
FMT_HDRS := $(wildcard formats/*.h)

# compat_v01.c: the 0.1 entry points, for binaries linked against the 0.1
# shared library; a static link always matches its header, so the archives
# leave it out.  jitunwind.map gives the shared library's symbol versions.
LIB_SO_ONLY := src/compat_v01.c
LIB_SRCS := $(filter-out $(LIB_SO_ONLY),$(sort $(wildcard src/*.c))) $(FMT_SRCS)
LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS:src/%=%))
LIB_SO_OBJS := $(LIB_OBJS) $(patsubst src/%.c,$(BUILD)/obj/%.o,$(LIB_SO_ONLY))
LIB_MAP := src/jitunwind.map

LIB_SO       := $(BUILD)/libjitunwind.so
LIB_A        := $(BUILD)/libjitunwind.a
LIB_INTERNAL := $(BUILD)/libjitunwind-internal.a
PC           := $(BUILD)/jitunwind.pc

.PHONY: all lib deps test-deps fresh-deps check check-run check-fresh demo install uninstall deb clean bench fuzz \
	format format-check abi-baseline fuzz-campaign

all: lib
lib: $(LIB_SO) $(LIB_A) $(LIB_INTERNAL) $(PC)

$(BUILD)/obj/%.o: src/%.c $(wildcard src/*.h) $(FMT_HDRS) include/jitunwind.h
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

# Inside the library, buffers grow through its fault-injecting allocator.
$(BUILD)/obj/formats/%.o: formats/%.c $(FMT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -DBYTES_REALLOC=ju__realloc -c -o $@ $<

$(LIB_SO): $(LIB_SO_OBJS) $(LIB_MAP)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -shared -Wl,-soname,libjitunwind.so.$(SOVER) -Wl,--no-undefined \
		-Wl,--version-script=$(LIB_MAP) -o $@.$(VERSION) $(LIB_SO_OBJS) $(LIB_LDLIBS)
	ln -sf libjitunwind.so.$(VERSION) $@.$(SOVER)
	ln -sf libjitunwind.so.$(VERSION) $@

# The static library is one relocatable object whose internal (hidden)
# symbols are made local, so they cannot clash with the program's own.
$(LIB_A): $(LIB_OBJS)
	$(LD) -r -o $(BUILD)/jitunwind-all.o $^
	objcopy --localize-hidden $(BUILD)/jitunwind-all.o
	rm -f $@
	ar rcs $@ $(BUILD)/jitunwind-all.o

# The ABI check (tests/abi/, t-abi-is-compatible-with-the-released-baseline):
# abidw and abidiff (libabigail 2.2) match a function to its ELF symbol by
# name, and take one of the two versions of a name the shared library has
# (0.1's and 0.2's ju_open...), so they judge this library, the shared one
# without compat_v01.o: the interface a binary built now links against.
# tests/abi/exports holds the versioned names of the shared library itself.
LIB_API_SO := $(BUILD)/abi/libjitunwind-api.so
$(LIB_API_SO): $(LIB_OBJS) $(LIB_MAP)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -shared -Wl,-soname,libjitunwind.so.$(SOVER) -Wl,--no-undefined \
		-Wl,--version-script=$(LIB_MAP) -o $@ $(LIB_OBJS) $(LIB_LDLIBS)
ABIDW_FLAGS := --headers-dir include --no-corpus-path --no-comp-dir-path
# Record the released ABI: once per release, with its node in jitunwind.map.
abi-baseline: $(LIB_API_SO)
	abidw $(ABIDW_FLAGS) $(LIB_API_SO) > tests/abi/libjitunwind.abi

# Tests reach internals (fault injection, the writers) through this one.
$(LIB_INTERNAL): $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCDIR@|$(INCDIR)|' \
	     -e 's|@VERSION@|$(VERSION)|'
$(PC): jitunwind.pc.in Makefile
	@mkdir -p $(dir $@)
	$(PC_SED) $< > $@

# ---- system packages --------------------------------------------------------
deps:
	@scripts/install-deps.sh build
test-deps:
	@scripts/install-deps.sh build test
fresh-deps:
	@scripts/install-deps.sh fresh

# ---- install ----------------------------------------------------------------
# Manual pages go to man1/ and man3/ by their suffix; the .so links among
# them name their targets as man3/PAGE.3, relative to $(MANDIR).
MAN1 := $(wildcard docs/man/*.1)
MAN3 := $(wildcard docs/man/*.3)
# What install adds, file by file: uninstall removes exactly these (and
# leaves the directories, which may have been there before).
INSTALLED = $(DESTDIR)$(INCDIR)/jitunwind.h \
	$(addprefix $(DESTDIR)$(LIBDIR)/,libjitunwind.so.$(VERSION) libjitunwind.so.$(SOVER) libjitunwind.so \
	  libjitunwind.a pkgconfig/jitunwind.pc) \
	$(DESTDIR)$(BINDIR)/jitstack \
	$(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN1))) \
	$(addprefix $(DESTDIR)$(MANDIR)/man3/,$(notdir $(MAN3))) \
	$(DESTDIR)$(LIBDIR)/lua/5.1/jitunwind.so

# The LuaJIT module goes where luajit finds C modules, when LuaJIT's headers
# are there to build it (libluajit-5.1-dev); otherwise make install says so.
install: lib jitstack
	@if pkg-config --exists luajit; then $(MAKE) --no-print-directory install-luajit; \
	 else echo "make install: LuaJIT's headers are missing (libluajit-5.1-dev): jitunwind.so not installed"; fi
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(BINDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3
	install -m 644 include/jitunwind.h $(DESTDIR)$(INCDIR)/
	install -m 755 $(LIB_SO).$(VERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf libjitunwind.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libjitunwind.so.$(SOVER)
	ln -sf libjitunwind.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libjitunwind.so
	install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	$(PC_SED) jitunwind.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/jitunwind.pc
	install -m 755 $(JS_BIN) $(DESTDIR)$(BINDIR)/
	install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(MAN3) $(DESTDIR)$(MANDIR)/man3/

uninstall:
	rm -f $(INSTALLED)

# ---- Debian packages ---------------------------------------------------------
# libjitunwind0, libjitunwind-dev and jitstack in $(BUILD)/deb, checked by
# lintian (scripts/make-deb.sh).  debian/rules builds through this Makefile
# into debian/build: build/ is neither used nor cleaned.
deb:
	@scripts/install-deps.sh build deb
	@sh scripts/make-deb.sh $(BUILD)

# ---- parts ------------------------------------------------------------------
# Each part's fragment adds what its tests need built to CHECK_BUILD; its
# tests are a suite of tests/run.sh.
CHECK_BUILD :=
include tests/tests.mk
include tests/tools/tools.mk
include examples/examples.mk
include tinyjit/tinyjit.mk
include integrations/luajit/luajit.mk
include integrations/cpython/cpython.mk
include bench/bench.mk
-include jitstack/jitstack.mk
-include tests/matrix/matrix.mk
-include tests/aarch64-system/system.mk

# make check: every suite of tests/run.sh (the library's, tinyjit's,
# jitstack's, the matrix); every test runs even if an earlier one failed,
# and check fails if any did.  tests/check.sh watches the whole run: it
# fails on a process left running and, unless DEPCHECK=0, on a file read
# from a package that install-deps.sh does not install.
DEPCHECK ?= 1
export JU_REAPER := $(abspath $(REAPER))

# The CPython builds come first, outside the traced run (cpython.mk says why).
check: test-deps test-tools
	@$(MAKE) --no-print-directory cpython cpython-stock cpython-fp
ifeq ($(DEPCHECK),1)
	@sh tests/check.sh $(BUILD) $(MAKE) --no-print-directory check-run
else
	@$(REAPER) -n "make check" -- $(MAKE) --no-print-directory check-run
endif

check-run: lib tests $(CHECK_BUILD)
	@$(TJ_TEST_ENV) sh tests/run.sh -b $(BUILD)

# The README's quick start on a fresh Debian 12 root (debootstrap, chroot):
# about 4 minutes, so not part of check; run it before landing a
# change to dependencies or install steps.  scripts/check-fresh.sh.
check-fresh: fresh-deps test-tools
	@sh scripts/check-fresh.sh

demo: test-deps lib examples tinyjit
	@examples/demo.sh $(BUILD)

# Longer fuzzing runs of every part (libFuzzer, clang-19); check runs short ones.
fuzz: test-deps fuzz-lib fuzz-tinyjit fuzz-jitstack

# Each parser for FUZZ_RUNS executions (docs/FUZZING.md has the results):
# hours, not part of check.
FUZZ_RUNS ?= 10000000
fuzz-campaign: test-deps $(BUILD)/tests/fuzz-api $(BUILD)/tinyjit/tests/fuzz_parse $(BUILD)/jitstack/tests/fuzz_reader \
		$(TEST_DIR)/child $(TJ_BIN) $(JS_TEST_PROGS) $(REAPER)
	sh jitstack/tests/fuzz-corpus.sh $(BUILD) $(BUILD)/jitstack/tests/fuzz-corpus
	sh scripts/fuzz-campaign.sh $(BUILD) $(BUILD)/fuzz-campaign $(FUZZ_RUNS)

# clang-format-19 (style: .clang-format) on every C file git tracks;
# hand-aligned tables are fenced with clang-format off/on, and
# .clang-format-ignore keeps the released 0.1 header as it was.
# format-check (in .ci/run) fails on any file left unformatted.
format: test-deps
	@sh scripts/check-format.sh --fix
format-check: test-deps
	@sh scripts/check-format.sh

clean:
	rm -rf build build-san
