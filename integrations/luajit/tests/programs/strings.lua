-- strings.lua - string work in hot loops: format, concatenation, gsub,
-- find, byte/char, rep, buffers through table.concat; prints digests.
local function digest(s)
  local h = 0
  for i = 1, #s do h = (h * 31 + s:byte(i)) % 2147483647 end
  return h
end
local parts = {}
for i = 1, 20000 do parts[#parts + 1] = string.format("%05d:%x;", i, i * 7) end
local all = table.concat(parts)
print("format", #all, digest(all))
local t = {}
for w in ("the quick brown fox jumps over the lazy dog "):rep(2000):gmatch("%a+") do t[#t + 1] = w:upper() end
print("gmatch", #t, t[1], t[#t])
local g, n = all:gsub("(%d+):(%x+)", "%2=%1")
print("gsub", n, digest(g))
local found = 0
for i = 1, 30000 do if all:find(string.format("%05d:", i), 1, true) then found = found + 1 end end
print("find", found)
local c = {}
for i = 1, 50000 do c[#c + 1] = string.char(65 + i % 26) end
print("char", digest(table.concat(c)))
local r = ""
for i = 1, 300 do r = r .. string.rep("ab", i % 7) end
print("rep", #r, digest(r))
-- SPDX-License-Identifier: MIT
