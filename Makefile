# jitunwind - top-level build.
#
#   make            libjitunwind.so / .a and jitunwind.pc in $(BUILD)
#   make demo       install missing packages, build, run the demo
#   make check      install missing packages, build, run every test
#   make check SAN=1    the same under AddressSanitizer + UBSan (build-san/)
#   make install PREFIX=/usr/local DESTDIR=
#   make bench      benchmarks (results go to docs/BENCHMARKS.md by hand)
#   make fuzz       longer fuzzing runs (tinyjit's parser, jitstack's reader)
#   make matrix     the unwind matrix in full; writes docs/MATRIX.md

PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
DESTDIR ?=
VERSION := 0.1.0
SOVER   := 0

SAN    ?=
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
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) $(CFLAGS) $(SANFLAGS) -pthread
LIB_CFLAGS := $(ALL_CFLAGS) -fPIC -fvisibility=hidden -Iinclude -Isrc
LIB_LDLIBS := -ldl -pthread

LIB_SRCS := $(sort $(wildcard src/*.c))
LIB_OBJS := $(LIB_SRCS:src/%.c=$(BUILD)/obj/%.o)

LIB_SO       := $(BUILD)/libjitunwind.so
LIB_A        := $(BUILD)/libjitunwind.a
LIB_INTERNAL := $(BUILD)/libjitunwind-internal.a
PC           := $(BUILD)/jitunwind.pc

.PHONY: all lib deps test-deps fresh-deps check check-run check-fresh demo install uninstall clean bench fuzz format

all: lib
lib: $(LIB_SO) $(LIB_A) $(LIB_INTERNAL) $(PC)

$(BUILD)/obj/%.o: src/%.c $(wildcard src/*.h src/formats/*.h) include/jitunwind.h
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c -o $@ $<

$(LIB_SO): $(LIB_OBJS)
	$(CC) $(ALL_CFLAGS) -shared -Wl,-soname,libjitunwind.so.$(SOVER) -Wl,--no-undefined \
		-o $@.$(VERSION) $^ $(LIB_LDLIBS)
	ln -sf libjitunwind.so.$(VERSION) $@.$(SOVER)
	ln -sf libjitunwind.so.$(VERSION) $@

# The static library is one relocatable object whose internal (hidden)
# symbols are made local, so they cannot clash with the program's own.
$(LIB_A): $(LIB_OBJS)
	$(LD) -r -o $(BUILD)/jitunwind-all.o $^
	objcopy --localize-hidden $(BUILD)/jitunwind-all.o
	rm -f $@
	ar rcs $@ $(BUILD)/jitunwind-all.o

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
install: lib
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) $(DESTDIR)$(LIBDIR)/pkgconfig
	install -m 644 include/jitunwind.h $(DESTDIR)$(INCDIR)/
	install -m 755 $(LIB_SO).$(VERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf libjitunwind.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libjitunwind.so.$(SOVER)
	ln -sf libjitunwind.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libjitunwind.so
	install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	$(PC_SED) jitunwind.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/jitunwind.pc

uninstall:
	rm -f $(DESTDIR)$(INCDIR)/jitunwind.h $(DESTDIR)$(LIBDIR)/libjitunwind.* \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/jitunwind.pc

# ---- parts ------------------------------------------------------------------
# Each part's fragment may add its test target to CHECK_PARTS.
CHECK_PARTS := tinyjit-check
include tests/tests.mk
include tests/tools/tools.mk
include examples/examples.mk
include tinyjit/tinyjit.mk
include bench/bench.mk
-include jitstack/jitstack.mk
-include tests/matrix/matrix.mk

# make check: the library's tests, then each part's own suite; every one runs
# even if an earlier one failed, and check fails if any did.  The whole run
# is watched twice over:
#  - under the reaper, so a process the suite leaves running fails it
#    (each runner also puts every single test under one);
#  - under opentrace, which lists every file the build and the tests open;
#    scripts/check-deps.py then fails if one belongs to a package that
#    install-deps.sh does not install (so a fresh machine would lack it),
#    and shows that it would catch a package dropped from the list.
#    The list of this run joins those of earlier runs in the same build
#    directory, so an incremental check still covers the build; after
#    removing a dependency, check from a clean tree.  DEPCHECK=0 skips it.
DEPCHECK ?= 1
DEPS_DIR  := $(BUILD)/deps
CHECK_RUN := $(REAPER) -n "make check" -- $(MAKE) --no-print-directory check-run
export JU_REAPER := $(abspath $(REAPER))

check: test-deps test-tools
ifeq ($(DEPCHECK),1)
	@mkdir -p $(DEPS_DIR); rm -f $(DEPS_DIR)/run.txt; rc=0; \
	$(OPENTRACE) -o $(DEPS_DIR)/run.txt -- $(CHECK_RUN) || rc=1; \
	grep -q '^#' $(DEPS_DIR)/run.txt || { cat $(DEPS_DIR)/run.txt $(DEPS_DIR)/all.txt 2>/dev/null | \
		grep -v -e '^/tmp/' -e '^$(CURDIR)/' | sort -u > $(DEPS_DIR)/all.tmp && \
		mv $(DEPS_DIR)/all.tmp $(DEPS_DIR)/all.txt; }; \
	traces="$(DEPS_DIR)/run.txt"; [ -f $(DEPS_DIR)/all.txt ] && traces="$$traces $(DEPS_DIR)/all.txt"; \
	python3 scripts/check-deps.py $$traces; \
	r=$$?; [ $$r -eq 0 ] || [ $$r -eq 77 ] || rc=1; \
	python3 scripts/check-deps.py --drop libclang-rt-19-dev --expect-missing libclang-rt-19-dev \
		$$traces; \
	r=$$?; [ $$r -eq 0 ] || [ $$r -eq 77 ] || rc=1; \
	exit $$rc
else
	@$(CHECK_RUN)
endif

check-run: lib tests
	@rc=0; tests/run.sh $(BUILD) || rc=1; \
	for t in $(CHECK_PARTS); do $(MAKE) --no-print-directory $$t || rc=1; done; \
	exit $$rc

# The README's quick start on a fresh Debian 12 root (debootstrap, chroot):
# slow (about N minutes), so not part of check; run it before landing a
# change to dependencies or install steps.  scripts/check-fresh.sh.
check-fresh: fresh-deps test-tools
	@sh scripts/check-fresh.sh

demo: test-deps lib examples
	@examples/demo.sh $(BUILD)

# Longer fuzzing runs of every part (libFuzzer, clang-19); check runs short ones.
fuzz: test-deps fuzz-tinyjit fuzz-jitstack

# clang-format (style: .clang-format) on the C files changed since HEAD, or
# on FILES=...; hand-aligned tables (DWARF bytes, instruction encodings)
# are kept as they are written, so the tree is not reformatted wholesale.
FILES ?= $(shell git diff --name-only HEAD -- '*.c' '*.h' '*.cc' 2>/dev/null)
format:
	@$(if $(strip $(FILES)),clang-format -i $(FILES),echo "format: no changed C files")

clean:
	rm -rf build build-san
