# SPDX-License-Identifier: MIT
# luajit.mk - the LuaJIT integration (integrations/luajit); included by the
# top-level Makefile.
#
#   luajit          $(BUILD)/luajit/jitunwind.so, the Lua module, and the
#                   test workloads' C library (part of make check)
#   install-luajit  the module into $(LIBDIR)/lua/5.1, where Debian's
#                   luajit looks for C modules (package.cpath); part of
#                   make install when LuaJIT's headers are installed
#   bench-luajit    docs/BENCHMARKS.md's LuaJIT section
#   bench-luajit-guest  its guest frames' cost (on against off), with callgrind
#
# The module links libjitunwind.a (position-independent: the library's
# objects are built with -fPIC), so loading it needs no other file; it does
# not link LuaJIT, whose lua_* functions the running luajit provides.  Only
# luaopen_jitunwind and the GDB JIT interface's two symbols are exported
# (jitunwind.map).

LJ := integrations/luajit
LJ_B := $(BUILD)/luajit
LJ_MOD := $(LJ_B)/jitunwind.so
LJ_PROBE := $(LJ_B)/libljprobe.so
LUAJIT_CFLAGS = $(shell pkg-config --cflags luajit 2>/dev/null || echo -I/usr/include/luajit-2.1)
LJ_CFLAGS = $(ALL_CFLAGS) -fPIC -fvisibility=hidden -Iinclude -I. -I$(LJ) -I$(LJ_B) $(LUAJIT_CFLAGS)
LJ_OBJS := $(LJ_B)/obj/jitunwind.o $(LJ_B)/obj/traceframe.o $(LJ_B)/obj/bytes.o $(LJ_B)/obj/ehframe.o

.PHONY: luajit luajit-check-tools install-luajit bench-luajit bench-luajit-guest
luajit: $(LJ_MOD) $(LJ_PROBE) $(LJ_B)/test-traceframe
# The tests also read the process with jitstack and the matrix's mx-dwfl
# (paths: their fragments are included after this one).
luajit-check-tools: luajit $(BUILD)/jitstack/jitstack $(BUILD)/matrix/mx-dwfl
CHECK_BUILD += luajit-check-tools

# The policy half, jitunwind.lua, as a byte array the module loads.
$(LJ_B)/jitunwind_lua.h: $(LJ)/jitunwind.lua
	@mkdir -p $(dir $@)
	{ echo '/* generated from $< by luajit.mk: do not edit */'; \
	  echo 'static const unsigned char jitunwind_lua[] = {'; \
	  od -An -v -tx1 $< | awk '{ s = ""; for (i = 1; i <= NF; i++) s = s "0x" $$i ","; print s }'; \
	  echo '};'; } > $@.tmp && mv $@.tmp $@

$(LJ_B)/obj/jitunwind.o: $(LJ)/jitunwind.c $(LJ)/traceframe.h $(LJ_B)/jitunwind_lua.h include/jitunwind.h \
		$(FMT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LJ_CFLAGS) -c -o $@ $<
$(LJ_B)/obj/traceframe.o: $(LJ)/traceframe.c $(LJ)/traceframe.h $(FMT_HDRS) include/jitunwind.h
	@mkdir -p $(dir $@)
	$(CC) $(LJ_CFLAGS) -c -o $@ $<
$(LJ_B)/obj/bytes.o: formats/bytes.c $(FMT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LJ_CFLAGS) -c -o $@ $<
# The .eh_frame reader: LuaJIT's own FDE, for its personality routine.
$(LJ_B)/obj/ehframe.o: formats/ehframe.c $(FMT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LJ_CFLAGS) -c -o $@ $<

$(LJ_MOD): $(LJ_OBJS) $(LIB_A) $(LJ)/jitunwind.map
	$(CC) $(ALL_CFLAGS) -shared -Wl,--version-script=$(LJ)/jitunwind.map -o $@ $(LJ_OBJS) $(LIB_A) \
		-ldl -pthread

# The workloads' C side (tests/ljprobe.c), loaded with ffi.load: the
# function a trace calls, which unwinds, waits, aborts or spins.
$(LJ_PROBE): $(LJ)/tests/ljprobe.c tests/probe-frames.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O1 -fPIC -shared -fno-omit-frame-pointer -o $@ $< -ldl

# traceframe.c on hand-written trace code (tests/test-traceframe.c).
$(LJ_B)/test-traceframe: $(LJ)/tests/test-traceframe.c $(LJ)/traceframe.c $(LJ)/traceframe.h formats/bytes.c \
		$(FMT_HDRS) include/jitunwind.h
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iinclude -I. -I$(LJ) -o $@ $(LJ)/tests/test-traceframe.c $(LJ)/traceframe.c \
		formats/bytes.c

install-luajit: $(LJ_MOD)
	install -d $(DESTDIR)$(LIBDIR)/lua/5.1
	install -m 755 $(LJ_MOD) $(DESTDIR)$(LIBDIR)/lua/5.1/jitunwind.so

bench-luajit: $(LJ_MOD)
	python3 $(LJ)/bench/bench.py $(BUILD)
bench-luajit-guest: $(LJ_MOD)
	python3 $(LJ)/bench/bench.py $(BUILD) 11 guest 5
