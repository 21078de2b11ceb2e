-- ffi.lua - FFI work in hot loops: struct arrays, pointer arithmetic,
-- 64-bit integers, calls into libc; prints digests.
local ffi = require "ffi"
ffi.cdef [[
typedef struct { int32_t x, y; double w; } point;
size_t strlen(const char *s);
int abs(int x);
]]
local n = 100000
local pts = ffi.new("point[?]", n)
for i = 0, n - 1 do pts[i].x = i % 1000; pts[i].y = (i * 37) % 1000; pts[i].w = i / 7 end
local sx, sw = 0, 0
for i = 0, n - 1 do sx = sx + pts[i].x * pts[i].y; sw = sw + pts[i].w end
print("structs", sx, string.format("%.3f", sw))
local p = ffi.cast("int32_t *", pts)
local t = 0
for i = 0, 2 * n - 1, 2 do t = t + p[i] end
print("pointers", t)
local acc = 0ULL
for i = 1, 200000 do acc = acc * 6364136223846793005ULL + 1442695040888963407ULL end
print("uint64", tostring(acc))
local l = 0
local s = "hello, luajit"
for i = 1, 100000 do l = l + tonumber(ffi.C.strlen(s)) + ffi.C.abs(-i % 3) end
print("libc", l)
-- SPDX-License-Identifier: MIT
