-- guest.lua - a hot loop whose trace inlines a small Lua function, step,
-- which calls C through the FFI (ljprobe.c: LJP_MODE waits or aborts from
-- inside the trace, far into the loop).  The lines marked below are the
-- ones the tests expect: step's definition, the call of step in the loop,
-- and the loop's first line (where the trace starts).  With LJP_EXPECT=FILE,
-- LuaJIT's own trace events are written to FILE.traces (tracelog.lua).
--
--   luajit [-l jitunwind] guest.lua [ITERATIONS]
local ffi = require "ffi"
require "tracelog"

ffi.cdef "int ljp_probe(int i);"
local P = ffi.load(assert(os.getenv("LJP_LIB"), "LJP_LIB: the path of libljprobe.so"))

local function step(i) --> guest: step
  local r = P.ljp_probe(i)
  return r + 1
end

local function hot(n)
  local s = 0
  for i = 1, n do --> trace: hot
    s = s + step(i) --> call: step
  end
  return s
end

print(hot(tonumber(arg[1]) or 20000))
-- SPDX-License-Identifier: MIT
