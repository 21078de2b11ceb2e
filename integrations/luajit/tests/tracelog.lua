-- tracelog.lua - the workloads' record of LuaJIT's own trace events, for
-- the judges (ljjudge.py, the matrix's mxluajit.py): with LJP_EXPECT=FILE,
-- "N 0xADDR SIZE STARTLINE" is written to FILE.traces when trace N stops
-- (its machine code, from jit.util, and the line it starts at).  A
-- workload requires it before it runs anything hot.
local jutil = require "jit.util"

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
-- SPDX-License-Identifier: MIT
