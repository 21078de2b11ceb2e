-- errors.lua - errors, pcall, coroutines and the JIT's own API around
-- compiled code: errors raised after a trace exits, error objects,
-- xpcall handlers, coroutines resumed from loops, jit.off(true) inside a
-- function (its loop must stay interpreted), jit.flush of a function and
-- a trace handler of the program's own (jit.attach); prints results.
local jutil = require "jit.util"
local stops = {}
jit.attach(function(what, tr, func)
  if what == "stop" then
    local fi = jutil.funcinfo(func)
    stops[#stops + 1] = fi.linedefined
  end
end, "trace")
local function risky(i) if i % 1000 == 999 then error({ code = i }) end return i end
local caught, sum = 0, 0
for i = 1, 20000 do
  local ok, v = pcall(risky, i)
  if ok then sum = sum + v else caught = caught + v.code end
end
print("pcall", caught, sum)
local msgs = 0
for i = 1, 3000 do
  local ok, m = xpcall(function() local t = nil; return t.x end, function(e) return "handled: " .. tostring(e):match("attempt.*") end)
  if not ok and m:find("index") then msgs = msgs + 1 end
end
print("xpcall", msgs)
local co = coroutine.wrap(function() for i = 1, 100000 do coroutine.yield(i * 2) end end)
local cs = 0
for _ = 1, 100000 do cs = (cs + co()) % 1000003 end
print("coroutines", cs)
local function interpreted(n)
  jit.off(true)
  local s = 0
  for i = 1, n do s = s + i % 11 end
  return s
end
local before = #stops
print("jit.off(true)", interpreted(100000), "traces", #stops - before)
local function flushed(n) local s = 0 for i = 1, n do s = s + i % 13 end return s end
print("flushed", flushed(10000))
jit.flush(flushed)
print("flushed again", flushed(10000))
print("own handler saw stops", #stops > 0)
-- SPDX-License-Identifier: MIT
