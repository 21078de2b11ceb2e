-- probe.lua - a hot loop that LuaJIT compiles into a trace, calling C through
-- the FFI on every iteration; the C side (ljprobe.c, libljprobe.so: LJP_LIB)
-- acts once, far into the loop, from inside the trace: it unwinds, waits for
-- a debugger, or aborts for a core (LJP_MODE).
--
--   luajit [-l jitunwind] probe.lua [ITERATIONS]
--
-- With LJP_EXPECT=FILE, LuaJIT's own trace events are written to
-- FILE.traces (tracelog.lua), for the judges.  The loop's line carries the
-- mark they expect the trace's name from.
local ffi = require "ffi"
require "tracelog"

ffi.cdef "int ljp_probe(int i);"
local P = ffi.load(assert(os.getenv("LJP_LIB"), "LJP_LIB: the path of libljprobe.so"))

local function hot(n)
  local s = 0
  for i = 1, n do s = s + P.ljp_probe(i) end --> trace: hot
  return s
end

print(hot(tonumber(arg[1]) or 20000))
-- SPDX-License-Identifier: MIT
