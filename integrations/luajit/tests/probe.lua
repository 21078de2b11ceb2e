-- probe.lua - a hot loop that LuaJIT compiles into a trace, calling C through
-- the FFI on every iteration; the C side (ljprobe.c, libljprobe.so: LJP_LIB)
-- acts once, far into the loop, from inside the trace: it unwinds, waits for
-- a debugger, or aborts for a core (LJP_MODE).
--
--   luajit [-l jitunwind] probe.lua [ITERATIONS]
--
-- With LJP_EXPECT=FILE, LuaJIT's own trace events are written to
-- FILE.traces ("N 0xADDR SIZE STARTLINE" at each stop), for ljjudge.py.
-- The loop's line carries the mark ljjudge.py expects the trace's name from.
local ffi = require "ffi"
local jutil = require "jit.util"

ffi.cdef "int ljp_probe(int i);"
local P = ffi.load(assert(os.getenv("LJP_LIB"), "LJP_LIB: the path of libljprobe.so"))

local expect = os.getenv("LJP_EXPECT")
if expect then
  local out = assert(io.open(expect .. ".traces", "w"))
  local starts = {}
  jit.attach(function(what, tr, func, pc)
    if what == "start" then
      starts[tr] = jutil.funcinfo(func, pc).currentline
    elseif what == "stop" then
      local code, addr = jutil.tracemc(tr)
      out:write(string.format("%d 0x%x %d %d\n", tr, addr, #code, starts[tr]))
      out:flush()
    end
  end, "trace")
end

local function hot(n)
  local s = 0
  for i = 1, n do s = s + P.ljp_probe(i) end --> trace: hot
  return s
end

print(hot(tonumber(arg[1]) or 20000))
