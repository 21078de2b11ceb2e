-- tables.lua - tables in hot loops: arrays, hashes, sort, insert/remove,
-- pairs, metatables with __index and __newindex; prints digests.
local a = {}
for i = 1, 100000 do a[i] = (i * 7919) % 100003 end
table.sort(a)
local s = 0
for i = 1, #a, 97 do s = (s + a[i] * i) % 1000003 end
print("sort", #a, s)
local h = {}
for i = 1, 50000 do h["k" .. (i % 5000)] = (h["k" .. (i % 5000)] or 0) + i end
local keys = {}
for k in pairs(h) do keys[#keys + 1] = k end
table.sort(keys)
print("hash", #keys, keys[1], h[keys[1]], keys[#keys], h[keys[#keys]])
local q = {}
for i = 1, 20000 do table.insert(q, 1 + (i % (#q + 1)), i) end
for i = 1, 5000 do table.remove(q, 1 + (i * 31) % #q) end
local d = 0
for i = 1, #q do d = (d * 3 + q[i]) % 1000003 end
print("insert/remove", #q, d)
local log = {}
local proxy = setmetatable({}, {
  __index = function(_, k) return k * 2 end,
  __newindex = function(t, k, v) rawset(t, k, v + 1); log[#log + 1] = k end,
})
local m = 0
for i = 1, 30000 do m = (m + proxy[i]) % 1000003 end
for i = 1, 1000 do proxy[i] = i end
print("metatables", m, #log, proxy[10], proxy[2000])
-- SPDX-License-Identifier: MIT
