<?php
// A PHP program whose hot loop the opcache tracing JIT compiles: it spins
// in innermost_php, called from outer_php through middle_php.
function innermost_php($n) { $x = 0; for ($i = 0; $i < 20000000000; $i++) { $x += $i % 7; } return $x + $n; }
function middle_php($n) { return innermost_php($n) + 1; }
function outer_php($n) { return middle_php($n) + 1; }
echo "ready ", getmypid(), "\n";
outer_php(3);
// SPDX-License-Identifier: MIT
