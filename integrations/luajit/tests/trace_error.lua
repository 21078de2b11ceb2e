-- trace_error.lua - a Lua error thrown while a trace is on the C stack: the
-- string.rep helper that the loop's trace calls runs out of room (2^31
-- bytes) in the last iteration; pcall must catch it, every time.
local floor = math.floor
local function f(n, big)
  local s
  for i = 1, n do
    local k = 10 + floor(i / n) * big
    s = string.rep("xy", k)
  end
  return #s
end
for k = 1, 3 do
  local ok, err = pcall(f, 200, 2^30)
  print("pcall", k, ok, err)
end
print("after")
-- SPDX-License-Identifier: MIT
