-- flush.lua - traces that die every way LuaJIT kills them, then a live one
-- that waits in C (ljprobe.c, as probe.lua): after it, no debugger may name
-- a dead trace.
--   old    compiled, then every trace flushed (jit.flush(): the "flush" event)
--   gone   compiled (taking old's trace number, likely its address), then
--          its function's traces flushed (jit.flush(gone): no event)
--   chunk  a loaded chunk's trace, freed by the GC with its prototype
--   hot    the trace the probe waits in
-- LJP_EXPECT as in probe.lua (tracelog.lua).
local ffi = require "ffi"
local jutil = require "jit.util"
require "tracelog"

ffi.cdef "int ljp_probe(int i);"
local P = ffi.load(assert(os.getenv("LJP_LIB"), "LJP_LIB: the path of libljprobe.so"))

local function old(n)
  local s = 0
  for i = 1, n do s = s + i % 3 end --> trace: old
  return s
end

local function gone(n)
  local s = 0
  for i = 1, n do s = s + i % 5 end --> trace: gone
  return s
end

local function hot(n)
  local s = 0
  for i = 1, n do s = s + P.ljp_probe(i) end --> trace: hot
  return s
end

old(1000)
jit.flush()
gone(1000)
jit.flush(gone)
-- the chunk and its closure live only in this call's frame
local function run_chunk()
  return assert(loadstring("local s = 0 for i = 1, 1000 do s = s + i % 7 end return s"))()
end
run_chunk()
collectgarbage()
collectgarbage()
-- which trace numbers are free now (the GC freed the chunk's trace)
local free = {}
for tr = 1, 3 do free[#free + 1] = jutil.traceinfo(tr) and "" or tostring(tr) end
print("free trace numbers before hot: " .. table.concat(free, " "))
local ju = package.loaded.jitunwind
if ju then
  local st = ju.stats()
  print(string.format("module before hot: %d published, %d unpublished", st.publishes, st.unpublishes))
end
print(hot(tonumber(arg[1]) or 20000))
-- SPDX-License-Identifier: MIT
