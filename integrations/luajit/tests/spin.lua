-- spin.lua - two loops LuaJIT compiles into traces, for profilers: `hot`
-- does ten times the iterations of `cool`, and the program runs them in
-- turn for SECONDS (default 2), then prints a checksum.
--
--   luajit [-l jitunwind] spin.lua [SECONDS]
--
-- Each loop's line carries the mark the tests take the trace's expected
-- name from (lua:FUNC@spin.lua:LINE); with LJP_EXPECT=FILE, LuaJIT's own
-- trace events are written to FILE.traces (tracelog.lua), which tell the
-- trace numbers.
require "tracelog"
local function hot(n)
  local s = 0
  for i = 1, n do s = (s * 31 + i) % 1000003 end --> trace: hot
  return s
end

local function cool(n)
  local s = 0
  for i = 1, n do s = (s * 17 + i) % 1000033 end --> trace: cool
  return s
end

local deadline = os.clock() + (tonumber(arg[1]) or 2)
local sum, rounds = 0, 0
print("spinning")
io.stdout:flush()
while os.clock() < deadline do
  sum = (sum + hot(200000) + cool(20000)) % 1000003
  rounds = rounds + 1
end
print("rounds", rounds > 0, "sum", sum >= 0)
-- SPDX-License-Identifier: MIT
