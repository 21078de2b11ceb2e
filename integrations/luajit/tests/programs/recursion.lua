-- recursion.lua - recursion and calls the JIT compiles: fib, Ackermann,
-- mutual recursion, tail calls, closures; prints results.
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local function ack(m, n)
  if m == 0 then return n + 1 end
  if n == 0 then return ack(m - 1, 1) end
  return ack(m - 1, ack(m, n - 1))
end
local is_even, is_odd
function is_even(n) if n == 0 then return true end return is_odd(n - 1) end
function is_odd(n) if n == 0 then return false end return is_even(n - 1) end
local function count_down(n, acc) if n == 0 then return acc end return count_down(n - 1, acc + n) end
local function adder(k) return function(x) return x + k end end

print("fib", fib(27))
print("ack", ack(2, 300), ack(3, 5))
local evens = 0
for i = 1, 3000 do if is_even(i % 97) then evens = evens + 1 end end
print("even", evens)
print("tail", count_down(1000000, 0))
local s = 0
for i = 1, 200000 do s = adder(i % 13)(s) % 1000003 end
print("closures", s)
-- SPDX-License-Identifier: MIT
